"""t/mutants/run.py: the mutation run names each mutant's line, and
universalmutator's mutants of a C file are what it tries."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "mutants_run", Path(__file__).resolve().parents[2] / "mutants" / "run.py")
assert _spec is not None and _spec.loader is not None
mutants = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutants)

SOURCE = """\
int f (int a)
{
    if (a > 1)
        return 2;
    return 0;
}
"""


def test_changed_line_names_the_line_and_both_texts() -> None:
    mutant = SOURCE.replace("if (a > 1)", "if (a >= 1)")
    assert mutants.changed_line(SOURCE, mutant) == (3, "if (a > 1)", "if (a >= 1)")


def test_changed_line_of_a_deleted_line() -> None:
    mutant = SOURCE.replace("        return 2;\n", "")
    line, was, now = mutants.changed_line(SOURCE, mutant)
    assert (line, was, now) == (4, "return 2;", "")


@pytest.mark.skipif(shutil.which("mutate") is None, reason="universalmutator is not installed")
def test_generate_writes_each_files_mutants(tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "f.c").write_text(SOURCE)
    out = mutants.generate(tmp_path / "tree", ["f.c"], tmp_path / "mutants")
    assert out, "no mutant of a file with a comparison and two returns"
    assert {rel for rel, _ in out} == {"f.c"}
    for _, m in out:
        line, was, now = mutants.changed_line(SOURCE, m.read_text())
        assert line >= 1 and was != now


def test_remake_finds_a_moved_line_nearest_its_old_number(tmp_path: Path) -> None:
    (tmp_path / "f.c").write_text(SOURCE.replace("int f", "/* new */\nint g (void);\nint f")
                                  + SOURCE.replace("int f", "int h"))
    rec = {"file": "f.c", "line": 3, "original": "if (a > 1)", "mutated": "if (a >= 1)"}
    rel, line, text = mutants.remake(tmp_path, rec, ["f.c"])
    assert (rel, line) == ("f.c", 5)  # the first of two, nearest line 3
    assert text.splitlines()[4] == "    if (a >= 1)"  # the line's indent kept
    assert text.count("if (a > 1)") == 1


def test_remake_of_an_inserted_line_goes_before_its_line(tmp_path: Path) -> None:
    (tmp_path / "f.c").write_text(SOURCE)
    rec = {"file": "f.c", "line": 4, "original": "", "mutated": "break;",
           "before": "return 2;"}
    _, line, text = mutants.remake(tmp_path, rec, ["f.c"])
    assert line == 4
    assert text.splitlines()[3:5] == ["        break;", "        return 2;"]


def test_remake_follows_code_to_the_one_file_it_moved_to(tmp_path: Path) -> None:
    (tmp_path / "old.c").write_text("int f (void);\n")
    (tmp_path / "new.c").write_text(SOURCE)
    (tmp_path / "other.c").write_text("int k;\n")
    rec = {"file": "old.c", "line": 9, "original": "return 0;", "mutated": "return 1;"}
    rel, line, _ = mutants.remake(tmp_path, rec, ["new.c", "old.c", "other.c"])
    assert (rel, line) == ("new.c", 5)


def test_remake_gives_up_where_nothing_or_two_files_match(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text(SOURCE)
    (tmp_path / "b.c").write_text(SOURCE)
    rec = {"file": "gone.c", "line": 3, "original": "if (a > 1)", "mutated": "if (a)"}
    assert mutants.remake(tmp_path, rec, ["a.c", "b.c"]) is None
    rec = {"file": "a.c", "line": 3, "original": "if (b > 1)", "mutated": "if (b)"}
    assert mutants.remake(tmp_path, rec, ["a.c"]) is None
    assert mutants.remake(tmp_path, {"file": "a.c", "line": 4, "original": "",
                                     "mutated": "break;"}, ["a.c"]) is None


def test_replay_makes_each_survivor_once(tmp_path: Path) -> None:
    import json
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "f.c").write_text(SOURCE)
    rec = {"file": "f.c", "line": 3, "original": "if (a > 1)", "mutated": "if (a >= 1)"}
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in [
        {**rec, "result": "survived"}, {**rec, "result": "survived"},
        {**rec, "mutated": "if (a < 1)", "result": "killed by C tests"},
        {"file": "f.c", "line": 1, "original": "gone", "mutated": "x"}]))
    made, lost = mutants.replay(tmp_path / "tree", results, ["f.c"], tmp_path / "mutants")
    assert [rel for rel, _ in made] == ["f.c"]
    assert "if (a >= 1)" in made[0][1].read_text()
    assert [r["original"] for r in lost] == ["gone"]


def test_object_of_names_mesons_object_of_a_libdws_source(tmp_path: Path) -> None:
    assert mutants.object_of(tmp_path, "src/common/libdws/engine/decider/decide.c") == (
        tmp_path / "src/common/libdws/libdws.a.p/engine_decider_decide.c.o")


def compiled(tmp_path: Path, name: str, text: str) -> Path:
    """text compiled as the build does (optimised, with debug information)
    into tmp_path/name/f.o: one source name, as a mutant keeps its file's."""
    d = tmp_path / name
    d.mkdir()
    (d / "f.c").write_text(text)
    subprocess.run(["cc", "-O2", "-g", "-c", "f.c", "-o", "f.o"], cwd=d, check=True)
    return d / "f.o"


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("objcopy") is None,
                    reason="no C compiler or objcopy")
def test_code_of_is_the_same_for_a_mutant_that_moves_only_columns(tmp_path: Path) -> None:
    """A mutant the compiler makes the same code of (spaces added, a
    second return after the first) is equivalent; one that changes
    a comparison is not, though its line and length are kept."""
    (tmp_path / "out").mkdir()
    original = mutants.code_of(compiled(tmp_path, "a", SOURCE), tmp_path / "out")
    spaced = SOURCE.replace("return 2;", "return  2 ;")
    assert mutants.code_of(compiled(tmp_path, "b", spaced), tmp_path / "out") == original
    dead = SOURCE.replace("    return 0;\n", "    return 0;\n    return 0;\n")
    assert mutants.code_of(compiled(tmp_path, "c", dead), tmp_path / "out") == original
    changed = SOURCE.replace("if (a > 1)", "if (a < 1)")
    assert mutants.code_of(compiled(tmp_path, "d", changed), tmp_path / "out") != original
