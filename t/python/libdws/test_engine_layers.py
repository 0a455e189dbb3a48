"""The dws engine (src/common/libdws/engine/) is built in one-way layers
(state.h, the service
guide): each engine file includes only the headers of the layers below
it, so no two files call each other and a reader knows which file may
call which.  The compiler (-Werror=implicit-function-declaration) turns
an include into the only way to call across files, so the includes are
the call graph.  The files stand in rooms by role (ROOMS: the decider,
the verbs, the views, the shapes; the spine at engine/'s root), each
room a band of the layers, so the rooms too include only downward."""

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
    "job",
    "advance",
    "datain",
    "workflow",
    "admit",
    "prestage",
    "release",
    "fault",
    "progress",
    "rabbitdf",
    "rabbitdrain",
    "status",
    "jobview",
    "persistent",
    "request",
    "verbtable",
    "engine",
]
# the rooms of engine/ (its folders) and their files; the rest stands at
# its root: the spine (engine, request, verbtable, advance, job, rabbits)
# and the words every room reads (state.h, rules.h, limits)
ROOMS = {
    "shapes": {"answer", "hosts", "token", "wfstate", "wfview", "psi", "pending", "act"},
    "decider": {"sidestate", "phase", "decide", "why"},
    "verbs": {"datain", "workflow", "admit", "prestage", "release", "fault", "progress"},
    "views": {"rabbitdf", "rabbitdrain", "status", "jobview", "persistent"},
}
INCLUDE = re.compile(r'^#include "([\w/]+)\.h"', re.M)


def engine_files() -> list[Path]:
    return sorted(ENGINE.rglob("*.[ch]"))


def room_of(path: Path) -> str:
    """A file's room: its folder under engine/, "" at the root."""
    rel = path.relative_to(ENGINE).parent.as_posix()
    return "" if rel == "." else rel


def engine_includes(path: Path) -> list[str]:
    """The engine headers a file includes, by stem ("engine/<room>/x.h"
    from another room, "x.h" from its own; libdws' other headers aside)."""
    stems = []
    for inc in INCLUDE.findall(path.read_text()):
        if inc.startswith("engine/"):
            stems.append(inc.rsplit("/", 1)[-1])
        elif "/" not in inc and (path.parent / f"{inc}.h").exists():
            stems.append(inc)
    return stems


def test_every_engine_file_is_a_layer() -> None:
    stems = {p.stem for p in engine_files()}
    # engine.h is the public API (of the top layer)
    odd = stems ^ set(LAYERS)
    assert not odd, f"files not in a layer, or layers without files: {odd}"


def test_each_file_includes_only_layers_below_it() -> None:
    bad = []
    for path in engine_files():
        level = LAYERS.index(path.stem)
        for inc in engine_includes(path):
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
        room = next((r for r, files in ROOMS.items() if stem in files), "")
        c = ENGINE / room / f"{stem}.c"
        assert (ENGINE / room / f"{stem}.h").exists(), f"{stem}.c has no header of its own"
        assert f'#include "{stem}.h"' in c.read_text(), f"{stem}.c does not include {stem}.h"


def test_engine_state_has_types_only() -> None:
    text = (ENGINE / "state.h").read_text()
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    # a function declaration: a name followed by "(" at the top level
    decls = re.findall(r"^\w[\w\s\*]*\b(\w+)\s*\([^)]*\)\s*;", code, flags=re.M)
    assert not decls, f"state.h declares functions: {decls}"


def test_the_service_guide_shows_the_same_layers() -> None:
    text = GUIDE.read_text()
    # a file at the root 5 spaces in, one in a room 7 (under its room's name)
    shown = re.findall(r"^ {5}(?: {2})?(\w+)\.[ch]\s", text, flags=re.M)
    assert shown == list(reversed(LAYERS)), f"the guide's picture lists {shown}"


# a function defined outside any static scope: "type name (" at column 0
DEFINITION = re.compile(r"^(?!static\b|typedef\b)[a-z][\w\s\*]*?\b(\w+) \(", re.M)


def test_each_function_prefix_names_its_file() -> None:
    """act_* lives in act.c, workflow_* in workflow.c: a name says where
    to look.  The public API (dws_*, engine.h) may live in any layer."""
    bad = []
    for path in ENGINE.rglob("*.c"):
        for name in DEFINITION.findall(path.read_text()):
            if name.startswith("dws_") or name == path.stem:
                continue
            if not name.startswith(path.stem + "_"):
                bad.append(f"{name} in {path.name}")
    assert not bad, "functions named for another file: " + ", ".join(sorted(bad))


def test_each_file_stands_in_its_room() -> None:
    bad = [f"{p.relative_to(ENGINE)} (its room: {room or 'the root'})"
           for p in engine_files()
           for room in [next((r for r, files in ROOMS.items() if p.stem in files), "")]
           if room_of(p) != room]
    assert not bad, "engine files out of their rooms: " + ", ".join(bad)


def test_each_room_is_a_band_of_the_layers() -> None:
    """A room's files are next to each other in the layers, so an include
    that runs down the layers runs down the rooms too: no room includes a
    room above it, and two rooms never include each other."""
    for room, files in ROOMS.items():
        at = sorted(LAYERS.index(f) for f in files)
        span = LAYERS[at[0]:at[-1] + 1]
        assert at == list(range(at[0], at[0] + len(at))), \
            f"{room}/ is not one band of the layers: {span}"


def test_a_room_includes_another_by_its_path() -> None:
    """From another room a header is named "engine/<room>/x.h", so the
    include says where the file stands; within a room, "x.h"."""
    bad = []
    for path in engine_files():
        for inc in INCLUDE.findall(path.read_text()):
            if inc.startswith("engine/"):
                target = ENGINE / f"{inc.removeprefix('engine/')}.h"
                if not target.exists():
                    bad.append(f"{path.relative_to(ENGINE)}: {inc}.h does not exist")
                elif target.parent == path.parent:
                    bad.append(f"{path.relative_to(ENGINE)}: {inc}.h is in its own room")
    assert not bad, ", ".join(bad)
