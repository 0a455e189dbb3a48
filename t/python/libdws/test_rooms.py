"""libdws' modules sit in rooms that say what they hold: no module at the
top of src/common/libdws/, every subdirectory a room that
doc/guide/libdws.rst ("Rooms") lists with its purpose, each room's
modules named there, a file including only its own room and the rooms
listed before it, and meson.build building every module of every room."""

import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
LIBDWS = TOP / "src" / "common" / "libdws"
GUIDE = TOP / "doc" / "guide" / "libdws.rst"

# the files the top of libdws keeps: the umbrella header and the build
TOP_FILES = {"dws.h", "meson.build"}
# rooms whose files another guide lists (each with its own test)
LISTED_ELSEWHERE = {
    "health": "rabbit-health.rst (test_health_layers.py)",
    "engine": "service.rst (test_engine_layers.py)",
    "test": "one file per module (test/meson.build)",
}
INCLUDE = re.compile(r'^#include\s+"(\w+)/\w+\.h"', re.M)


def guide_rooms(text: str) -> dict[str, str]:
    """{room: its paragraph}, in the order of the guide's "Rooms" section."""
    section = re.search(r"^Rooms\n=+\n(.*?)(?=^\S[^\n]*\n=+\n)", text, re.M | re.S)
    assert section, "doc/guide/libdws.rst has no Rooms section"
    entries = re.findall(r"^``(\w+)/``\n((?:   .*\n)+)", section.group(1), re.M)
    return {room: " ".join(body.split()) for room, body in entries}


def layout_violations(top: set[str], rooms: dict[str, set[str]],
                      guide: dict[str, str]) -> list[str]:
    """What is wrong with a tree: `top` the file names at the top, `rooms`
    {subdirectory: its file names}, `guide` the guide's rooms."""
    bad = [f"{name} at the top of libdws" for name in sorted(top - TOP_FILES)]
    bad += [f"{room}/ is not a room of the guide" for room in sorted(set(rooms) - set(guide))]
    bad += [f"the guide's {room}/ does not exist" for room in sorted(set(guide) - set(rooms))]
    for room, names in sorted(rooms.items()):
        if room not in guide:
            continue
        if not guide[room].strip():
            bad.append(f"{room}/ has no purpose in the guide")
        if room in LISTED_ELSEWHERE:
            continue
        for stem in sorted({Path(n).stem for n in names if n.endswith((".c", ".h"))}):
            if f"``{stem}``" not in guide[room]:
                bad.append(f"{room}/{stem} is not named in the guide's {room}/")
    return bad


def include_violations(files: dict[str, str], order: list[str]) -> list[str]:
    """Includes of a room listed after the including file's room, in
    `files` {"room/name": text}."""
    bad = []
    for path, text in sorted(files.items()):
        room = path.split("/")[0]
        if room == "test":
            continue  # the tests include whatever they test
        for inc in INCLUDE.findall(text):
            if inc in order and order.index(inc) > order.index(room):
                bad.append(f"{path} includes {inc}/ (listed after {room}/)")
    return bad


def tree() -> tuple[set[str], dict[str, set[str]]]:
    top = {p.name for p in LIBDWS.iterdir() if p.is_file()}
    rooms = {d.name: {p.name for p in d.iterdir() if p.is_file()}
             for d in LIBDWS.iterdir() if d.is_dir()}
    return top, rooms


def test_the_guide_lists_the_rooms() -> None:
    rooms = guide_rooms(GUIDE.read_text())
    assert {"util", "parse", "placement", "jobtap", "health", "engine"} <= set(rooms), rooms


def test_every_module_sits_in_a_room_the_guide_lists() -> None:
    top, rooms = tree()
    bad = layout_violations(top, rooms, guide_rooms(GUIDE.read_text()))
    assert not bad, "; ".join(bad)


def test_each_room_includes_only_rooms_listed_before_it() -> None:
    order = list(guide_rooms(GUIDE.read_text()))
    files = {f"{p.parent.name}/{p.name}": p.read_text()
             for p in LIBDWS.glob("*/*.[ch]")}
    bad = include_violations(files, order)
    assert not bad, "includes against the rooms' order: " + ", ".join(bad)


def test_meson_builds_every_module_of_every_room() -> None:
    text = (LIBDWS / "meson.build").read_text()
    listed = set(re.findall(r"'(\w+/\w+\.c)'", text))
    present = {f"{p.parent.name}/{p.name}" for p in LIBDWS.glob("*/*.c")
               if p.parent.name != "test"}
    assert listed == present, f"not built: {present - listed}; gone: {listed - present}"


def test_the_guards_find_a_planted_misplacement() -> None:
    guide = {"util": "helpers: ``error``", "parse": "the parser ``directive``",
             "test": "the tests"}
    top = {"dws.h", "meson.build", "stray.c"}
    rooms = {"util": {"error.c", "error.h"}, "parse": {"directive.c", "ruleset.c"},
             "test": {"error.c"}, "misc": {"x.c"}}
    assert layout_violations(top, rooms, guide) == [
        "stray.c at the top of libdws",
        "misc/ is not a room of the guide",
        "parse/ruleset is not named in the guide's parse/",
    ]
    files = {"util/error.c": '#include "parse/directive.h"\n#include "error.h"\n',
             "parse/directive.c": '#include "util/error.h"\n',
             "test/error.c": '#include "parse/directive.h"\n'}
    assert include_violations(files, ["util", "parse", "test"]) == [
        "util/error.c includes parse/ (listed after util/)",
    ]
