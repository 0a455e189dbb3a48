"""t/mutants/run_mutmut.py: the scratch tree mutmut runs in, its
configuration and the counts of mutmut's verdicts."""

from __future__ import annotations

import configparser
import importlib.util
import os
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "mutants_mutmut", Path(__file__).resolve().parents[2] / "mutants" / "run_mutmut.py")
assert _spec is not None and _spec.loader is not None
mm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mm)


def test_shadow_links_the_checkout_and_copies_the_package(tmp_path: Path) -> None:
    top = tmp_path / "checkout"
    (top / "src/python/flux_dws/libdws/__pycache__").mkdir(parents=True)
    (top / "src/python/flux_dws/libdws/engine.py").write_text("x = 1\n")
    (top / "src/python/flux_dws/libdws/__pycache__/engine.pyc").write_text("")
    (top / "etc/systems").mkdir(parents=True)
    run_dir = mm.shadow(top, tmp_path / "work")
    assert (run_dir / "flux_dws/libdws/engine.py").read_text() == "x = 1\n"
    assert not (run_dir / "flux_dws/libdws/engine.py").is_symlink()
    assert not (run_dir / "flux_dws/libdws/__pycache__").exists()
    # dwsim/systems.py finds <top>/etc/systems as parents[4] of itself
    systems = run_dir / "mutants/flux_dws/dwsim/systems.py"
    assert (systems.parents[4] / "etc").resolve() == (top / "etc").resolve()
    assert not (run_dir.parent / "src").exists()


def test_config_names_the_files_and_tests() -> None:
    cp = configparser.ConfigParser()
    cp.read_string(mm.config(["flux_dws/libdws/engine.py", "flux_dws/libdws/_ffi.py"],
                             [Path("/top/t/python/libdws")], 5.0))
    s = cp["mutmut"]
    assert s["source_paths"] == "flux_dws"
    assert s["only_mutate"].split() == ["flux_dws/libdws/engine.py", "flux_dws/libdws/_ffi.py"]
    assert s["pytest_add_cli_args_test_selection"].split() == ["/top/t/python/libdws"]
    assert float(s["timeout_multiplier"]) == 5.0


def test_python_path_leaves_the_checkouts_package_off(tmp_path: Path) -> None:
    top = tmp_path / "top"
    environ = {"PYTHONPATH": os.pathsep.join([str(top / "src/python"), "/opt/flux/python"])}
    assert mm.python_path(top, environ).split(os.pathsep) == [
        str(top), str(top / "build/src/python"), "/opt/flux/python"]


def test_verdicts_and_summary() -> None:
    text = """\
    flux_dws.libdws.engine.x_f58__mutmut_1: killed
    flux_dws.libdws.engine.x_f58__mutmut_2: survived
    flux_dws.libdws.engine.xǁEngineǁstatus__mutmut_1: no tests
    flux_dws.libdws.engine.xǁEngineǁstatus__mutmut_2: suspicious
    not a result line
"""
    by = mm.verdicts(text)
    assert by["survived"] == ["flux_dws.libdws.engine.x_f58__mutmut_2"]
    assert by["no tests"] == ["flux_dws.libdws.engine.xǁEngineǁstatus__mutmut_1"]
    assert mm.summary(by) == ("mutmut: 4 mutants: 1 killed, 1 survived, 1 no tests,"
                              " 0 timeout, 1 other")
