"""The dws engine (src/common/libdws/engine/) is built in one-way layers
(state.h, the service
guide): each engine file includes only the headers of the layers below
it, so no two files call each other and a reader knows which file may
call which.  The compiler (-Werror=implicit-function-declaration) turns
an include into the only way to call across files, so the includes are
the call graph."""

from __future__ import annotations

import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
ENGINE = TOP / "src" / "common" / "libdws" / "engine"
GUIDE = TOP / "doc" / "guide" / "service.rst"

# bottom first
LAYERS = [
    "limits",
    "rules",
    "state",
    "answer",
    "hosts",
    "token",
    "wfstate",
    "wfview",
    "psi",
    "pending",
    "act",
    "sidestate",
    "phase",
    "decide",
    "why",
    "rabbits",
    "rabbitdrain",
    "rabbitdf",
    "job",
    "advance",
    "datain",
    "workflow",
    "admit",
    "prestage",
    "release",
    "fault",
    "progress",
    "status",
    "jobview",
    "persistent",
    "request",
    "verbs",
    "engine",
]
INCLUDE = re.compile(r'^#include "(\w+)\.h"', re.M)


def engine_files() -> list[Path]:
    return sorted(ENGINE.glob("*.[ch]"))


def test_every_engine_file_is_a_layer() -> None:
    stems = {p.stem for p in engine_files()}
    # engine.h is the public API (of the top layer)
    odd = stems ^ set(LAYERS)
    assert not odd, f"files not in a layer, or layers without files: {odd}"


def test_each_file_includes_only_layers_below_it() -> None:
    bad = []
    for path in engine_files():
        level = LAYERS.index(path.stem)
        for inc in INCLUDE.findall(path.read_text()):
            if inc not in LAYERS:
                continue  # a libdws header outside the engine
            if inc == "engine":
                continue  # the public API's types (engine.h), no engine functions
            if inc == path.stem and path.suffix == ".c":
                continue  # its own header
            if LAYERS.index(inc) >= level:
                bad.append(f"{path.name} includes {inc}.h")
    assert not bad, "includes against the layers: " + ", ".join(bad)


def test_each_layer_has_its_own_header_included_by_its_file() -> None:
    for stem in LAYERS[:-1]:
        if stem in ("state", "rules"):
            continue  # types and lists only, no .c
        c = ENGINE / f"{stem}.c"
        assert (ENGINE / f"{stem}.h").exists(), f"{stem}.c has no header of its own"
        assert f'#include "{stem}.h"' in c.read_text(), f"{stem}.c does not include {stem}.h"


def test_engine_state_has_types_only() -> None:
    text = (ENGINE / "state.h").read_text()
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    # a function declaration: a name followed by "(" at the top level
    decls = re.findall(r"^\w[\w\s\*]*\b(\w+)\s*\([^)]*\)\s*;", code, flags=re.M)
    assert not decls, f"state.h declares functions: {decls}"


def test_the_service_guide_shows_the_same_layers() -> None:
    text = GUIDE.read_text()
    shown = re.findall(r"^\s{5}(\w+)\.[ch]\s", text, flags=re.M)
    assert shown == list(reversed(LAYERS)), f"the guide's picture lists {shown}"


# a function defined outside any static scope: "type name (" at column 0
DEFINITION = re.compile(r"^(?!static\b|typedef\b)[a-z][\w\s\*]*?\b(\w+) \(", re.M)


def test_each_function_prefix_names_its_file() -> None:
    """act_* lives in act.c, workflow_* in workflow.c: a name says where
    to look.  The public API (dws_*, engine.h) may live in any layer."""
    bad = []
    for path in ENGINE.glob("*.c"):
        for name in DEFINITION.findall(path.read_text()):
            if name.startswith("dws_") or name == path.stem:
                continue
            if not name.startswith(path.stem + "_"):
                bad.append(f"{name} in {path.name}")
    assert not bad, "functions named for another file: " + ", ".join(sorted(bad))
