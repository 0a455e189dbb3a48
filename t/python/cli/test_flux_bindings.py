"""Finding flux-core's Python bindings from a venv: flux(1) gives a venv's
flux-dws (FLUX_EXEC_PATH_PREPEND) no Python path, so fluxutil asks flux
where they are; a failed import names the module that is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flux_dws import fluxutil

ROOT = Path(__file__).resolve().parents[3]
HAVE_FLUX = shutil.which("flux") is not None


def flux_or_skip() -> None:
    try:
        fluxutil.import_flux()
    except fluxutil.FluxUnavailable as exc:
        pytest.skip(str(exc))


def test_a_missing_dependency_of_the_bindings_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    real = fluxutil.importlib.import_module

    def no_ply(name: str) -> Any:
        if name == "flux.job":
            raise ModuleNotFoundError("No module named 'ply'", name="ply")
        return real(name)

    flux_or_skip()
    monkeypatch.setattr(fluxutil.importlib, "import_module", no_ply)
    with pytest.raises(fluxutil.FluxUnavailable, match="no module named 'ply'"):
        fluxutil.import_flux()


def bare_python(code: str, path: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a Python that has flux_dws but not flux-core's bindings
    on its path (as a venv's flux-dws), with PATH ``path``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLUX_")}
    env["PYTHONPATH"] = f"{ROOT}/src/python:{ROOT}/build/src/python"
    env["PATH"] = path
    return subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, check=False, timeout=60)


IMPORT = ("import sys\n"
          "sys.path = [p for p in sys.path if not __import__('os').path.isdir("
          "__import__('os').path.join(p, 'flux', 'job'))]\n"
          "from flux_dws.fluxutil import FluxUnavailable, import_flux\n"
          "try:\n    import_flux()\nexcept FluxUnavailable as e:\n"
          "    print(e); sys.exit(1)\n"
          "import flux.job\nprint(flux.__file__)\n")


@pytest.mark.skipif(not HAVE_FLUX, reason="flux-core is not installed")
def test_bindings_found_through_flux() -> None:
    flux = shutil.which("flux")
    assert flux is not None
    where = fluxutil.flux_python_path(flux)
    assert where is not None and os.path.isdir(os.path.join(where, "flux"))
    p = bare_python(IMPORT, f"{os.path.dirname(flux)}:/usr/bin:/bin")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip() == os.path.join(where, "flux", "__init__.py")


def test_no_bindings_and_no_flux_says_so(tmp_path: Path) -> None:
    p = bare_python(IMPORT, str(tmp_path))
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.strip() == ("the flux Python bindings are not installed (no module named"
                                " 'flux' in this Python's path, nor a 'flux' command on PATH"
                                " to ask where they are)")
