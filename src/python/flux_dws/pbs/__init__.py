"""Test tools for the PBS_cray_atom hook: an ATOM emulator and a harness
that runs the hook the way PBS does (see doc/guide/pbs-atom-hook.rst)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def hook_dir() -> Path:
    """Where the hook files are: the source tree's src/pbs, or the package."""
    src = Path(__file__).resolve().parents[3] / "pbs"
    if (src / "PBS_cray_atom.PY").is_file():
        return src
    return Path(str(resources.files("flux_dws").joinpath("pbs/hook")))
