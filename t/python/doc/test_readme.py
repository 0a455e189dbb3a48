"""The README's table says what is where in a line a reader takes in at
once (issue 45): each row under 400 characters, the detail in the guide
the row names.  The libdws paths it names exist."""

import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
README = TOP / "README.md"
LIMIT = 400


def test_every_table_row_is_short() -> None:
    rows = [line for line in README.read_text().splitlines() if line.startswith("|")]
    assert len(rows) > 10, "the README has no table"
    long = [f"{row[:40]}... ({len(row)})" for row in rows if len(row) >= LIMIT]
    assert not long, f"rows of {LIMIT} characters or more: {long}"


def expand(path: str) -> list[str]:
    """`a/{b,c}.c` and `a/b.[ch]` as the paths they stand for."""
    m = re.search(r"\{([\w,/]+)\}|\[(\w+)\]", path)
    if not m:
        return [path]
    parts = m.group(1).split(",") if m.group(1) else list(m.group(2))
    return [p for part in parts
            for p in expand(path[:m.start()] + part + path[m.end():])]


def test_the_libdws_paths_it_names_exist() -> None:
    text = README.read_text()
    paths = [p for named in re.findall(r"`(src/common/libdws/[^`]*)`", text)
             for p in expand(named)]
    assert paths, "the README names no libdws path"
    missing = [p for p in paths if not (TOP / p).exists()]
    assert not missing, f"named but absent: {missing}"
