"""t/mutants/run.py's pytest runs import the mutant's build: the tree's
Python and build come first on PYTHONPATH, and an editable install of
flux-dws in the venv (meson-python's finder, which answers ``import
flux_dws`` from its own checkout before PYTHONPATH) is told to step aside.
Without that, every pytest run of a mutation run tested the checkout the
venv was installed from, not the mutant."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "mutants_run_env", Path(__file__).resolve().parents[2] / "mutants" / "run.py"
)
assert _spec is not None and _spec.loader is not None
mutants = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutants)


class EditableFinder:
    """What meson-python's editable loader puts on sys.meta_path."""

    def __init__(self, build_path: str) -> None:
        self._build_path = build_path

    def find_spec(self, *args: object) -> None:
        return None


def test_the_tree_comes_first_and_outside_paths_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = mutants.TOP / "src" / "python"
    monkeypatch.setenv("PYTHONPATH", f"/opt/flux/lib/python3.11/site-packages:{inside}")
    env = mutants.pytest_env(tmp_path / "tree", tmp_path / "tree" / "build")
    assert env["PYTHONPATH"].split(":") == [
        str(tmp_path / "tree" / "src/python"),
        str(tmp_path / "tree" / "build" / "src/python"),
        "/opt/flux/lib/python3.11/site-packages",
    ]


def test_every_editable_finder_is_told_to_step_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MESONPY_EDITABLE_SKIP", "/elsewhere/build")
    finders = [EditableFinder("/checkout/build/cp311"), EditableFinder("/checkout/build/cp311")]
    monkeypatch.setattr(sys, "meta_path", [*finders, *sys.meta_path])
    env = mutants.pytest_env(tmp_path, tmp_path / "build")
    skip = env["MESONPY_EDITABLE_SKIP"].split(":")
    assert skip[:2] == ["/elsewhere/build", "/checkout/build/cp311"]
    assert skip.count("/checkout/build/cp311") == 1


def test_imported_from_names_where_the_extension_comes_from(tmp_path: Path) -> None:
    pkg = tmp_path / "tree" / "flux_dws"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_libdws.py").write_text("")
    # the venv's own editable install (if any) stays aside in both
    skip = ":".join(str(f._build_path) for f in sys.meta_path if hasattr(f, "_build_path"))
    env = {"PYTHONPATH": str(tmp_path / "tree"), "MESONPY_EDITABLE_SKIP": skip}
    assert mutants.imported_from(env, tmp_path) == (pkg / "_libdws.py").resolve()
    env = {"PYTHONPATH": str(tmp_path / "none"), "MESONPY_EDITABLE_SKIP": skip}
    assert mutants.imported_from(env, tmp_path) != (pkg / "_libdws.py").resolve()
