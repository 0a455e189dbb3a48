"""t/mutants/run.py: the mutation run names each mutant's line, and
universalmutator's mutants of a C file are what it tries."""

from __future__ import annotations

import importlib.util
import shutil
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
