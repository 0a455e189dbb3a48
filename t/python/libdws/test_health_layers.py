"""Rabbit health (src/common/libdws/health/) is one concern per file, in
one-way layers: each file includes only the headers of the files below
it, so no two files call each other (-Werror=implicit-function-declaration
makes an include the only way to call across files; the public API,
health.h, may be called from anywhere).  A function's prefix names its
file, and doc/guide/rabbit-health.rst lists every file."""

from __future__ import annotations

import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
HEALTH = TOP / "src" / "common" / "libdws" / "health"
GUIDE = TOP / "doc" / "guide" / "rabbit-health.rst"

# bottom first; health.h is the public API (its types are in state.h's
# reach, its functions callable from any layer)
LAYERS = [
    "storageview",
    "state",
    "table",
    "link",
    "batch",
    "arm",
    "hold",
    "property",
    "systemstatus",
    "drain",
    "fluxion",
    "ssd",
    "storage",
    "topology",
    "graph",
    "resource",
    "alloc",
    "pick",
    "result",
    "view",
    "flush",
    "health",
]
INCLUDE = re.compile(r'^#include "(\w+)\.h"', re.M)
# a function defined outside any static scope: "type name (" at column 0
DEFINITION = re.compile(r"^(?!static\b|typedef\b)[a-z][\w\s\*]*?\b(\w+) \(", re.M)


def health_files() -> list[Path]:
    return sorted(HEALTH.glob("*.[ch]"))


def test_every_health_file_is_a_layer() -> None:
    stems = {p.stem for p in health_files()}
    odd = stems ^ set(LAYERS)
    assert not odd, f"files not in a layer, or layers without files: {odd}"


def test_each_file_includes_only_layers_below_it() -> None:
    bad = []
    for path in health_files():
        level = LAYERS.index(path.stem)
        for inc in INCLUDE.findall(path.read_text()):
            if inc not in LAYERS or inc == "health":
                continue  # a libdws header outside health/, or the public API
            if inc == path.stem and path.suffix == ".c":
                continue  # its own header
            if LAYERS.index(inc) >= level:
                bad.append(f"{path.name} includes {inc}.h")
    assert not bad, "includes against the layers: " + ", ".join(bad)


def test_each_function_prefix_names_its_file() -> None:
    """batch_* lives in batch.c, storage_* in storage.c; the public API
    (dws_health_*) may live in any file."""
    bad = []
    for path in HEALTH.glob("*.c"):
        for name in DEFINITION.findall(path.read_text()):
            if name.startswith("dws_health_"):
                continue
            if not name.startswith(path.stem + "_"):
                bad.append(f"{name} in {path.name}")
    assert not bad, "functions named for another file: " + ", ".join(sorted(bad))


def test_a_file_with_internal_functions_has_its_own_header() -> None:
    for path in HEALTH.glob("*.c"):
        names = [n for n in DEFINITION.findall(path.read_text())
                 if not n.startswith("dws_health_")]
        if names:
            assert (HEALTH / f"{path.stem}.h").exists(), f"{path.name} has no header"
            assert f'#include "{path.stem}.h"' in path.read_text(), \
                f"{path.name} does not include {path.stem}.h"


def test_state_has_types_only() -> None:
    code = re.sub(r"/\*.*?\*/", "", (HEALTH / "state.h").read_text(), flags=re.S)
    decls = re.findall(r"^\w[\w\s\*]*\b(\w+)\s*\([^)]*\)\s*;", code, flags=re.M)
    assert not decls, f"state.h declares functions: {decls}"


def test_only_storageview_walks_a_storage_object() -> None:
    """A Storage is parsed once (storageview.c); the rest read the view."""
    fields = ('"spec"', '"annotations"', '"rebootRequired"', '"access"', '"devices"')
    bad = [f"{p.name}: {f}" for p in health_files() if p.stem != "storageview"
           for f in fields if f in re.sub(r"/\*.*?\*/", "", p.read_text(), flags=re.S)]
    assert not bad, "Storage fields read outside storageview.c: " + ", ".join(bad)


def test_the_guide_lists_every_file() -> None:
    shown = re.findall(r"^\s{3}(\w+)\.[ch]\s", GUIDE.read_text(), flags=re.M)
    assert shown == list(reversed(LAYERS)), f"the guide's picture lists {shown}"
