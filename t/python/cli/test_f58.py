"""Job ids as flux-core prints them: "ƒ" in a UTF-8 locale unless
FLUX_F58_FORCE_ASCII is set, else "f" (flux-core's fluid.c); plain "f"
wherever the id is a name or a wire value."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flux_dws import textfmt
from flux_dws.cli.jobs import jobs_lines
from flux_dws.cli.rabbits import held_line
from flux_dws.cli.status import format_status
from flux_dws.jobview import job_text
from flux_dws.libdws import engine

JOBID = 1234567  # 7Kze in base58
ROOT = Path(__file__).resolve().parents[3]
LOCALE_VARS = ("LC_ALL", "LC_CTYPE", "LANG", "FLUX_F58_FORCE_ASCII", "PYTHONUTF8",
               "PYTHONCOERCECLOCALE")
#: (environment, the prefix flux-core's rule gives): UTF-8 locales, C and
#: POSIX (which Python coerces to C.UTF-8 for itself), a locale not
#: installed (setlocale falls back to C), and the variable, set empty too
CASES = [
    ({"LANG": "C.UTF-8"}, "ƒ"),
    ({"LC_ALL": "C.UTF-8"}, "ƒ"),
    ({"LC_CTYPE": "C.UTF-8", "LANG": "C"}, "ƒ"),
    ({"LANG": "C"}, "f"),
    ({"LC_ALL": "C"}, "f"),
    ({"LC_ALL": "POSIX"}, "f"),
    ({"LANG": "C.UTF-8", "LC_ALL": "C"}, "f"),
    ({"LANG": "xx_YY.UTF-8"}, "f"),
    ({}, "f"),
    ({"LANG": "C.UTF-8", "FLUX_F58_FORCE_ASCII": "1"}, "f"),
    ({"LC_ALL": "C.UTF-8", "FLUX_F58_FORCE_ASCII": ""}, "f"),
]


def clean_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LOCALE_VARS}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src/python"),
                                                    str(ROOT / "build/src/python"),
                                                    env.get("PYTHONPATH")) if p)
    return {**env, **extra}


def printed_by_python(env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-c", "from flux_dws.textfmt import f58; "
                          f"print(f58({JOBID}))"], env=clean_env(env), capture_output=True,
                         check=True)
    return out.stdout.decode("utf-8").strip()


@pytest.mark.parametrize(("env", "prefix"), CASES, ids=lambda v: str(v))
def test_prefix_follows_the_locale_and_the_variable(env: dict[str, str], prefix: str) -> None:
    assert printed_by_python(env) == prefix + "7Kze"


@pytest.mark.skipif(shutil.which("flux") is None, reason="flux-core is not installed")
@pytest.mark.parametrize(("env", "prefix"), CASES, ids=lambda v: str(v))
def test_same_as_flux_job_id(env: dict[str, str], prefix: str) -> None:
    flux = subprocess.run(["flux", "job", "id", "--to=f58", str(JOBID)], env=clean_env(env),
                          capture_output=True, check=True).stdout.decode("utf-8").strip()
    assert flux == printed_by_python(env) == prefix + "7Kze"


def test_plain_stays_ascii(monkeypatch: pytest.MonkeyPatch) -> None:
    utf8(monkeypatch)
    assert textfmt.f58(JOBID) == "ƒ7Kze"
    assert engine.f58(JOBID) == "f7Kze"  # Workflow names, dependencies, JSON


def utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as if in a UTF-8 locale the user chose."""
    monkeypatch.delenv("FLUX_F58_FORCE_ASCII", raising=False)
    monkeypatch.setattr(textfmt.locale, "nl_langinfo", lambda _: "UTF-8")
    monkeypatch.setattr(textfmt, "python_chose_utf8", lambda: False)


def ascii_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    utf8(monkeypatch)
    monkeypatch.setenv("FLUX_F58_FORCE_ASCII", "1")


def view(**kw: Any) -> dict[str, Any]:
    return {"id": JOBID, "f58": engine.f58(JOBID), "userid": 1000, "phase": "running",
            "workflow": f"fluxjob-{JOBID}", "state": "PreRun", "desired": "PreRun",
            "ready": True, "status": "Completed", **kw}


@pytest.mark.parametrize(("setup", "prefix"), [(utf8, "ƒ"), (ascii_forced, "f")])
def test_every_command_prints_the_rule(setup: Any, prefix: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    setup(monkeypatch)
    shown = prefix + "7Kze"
    # flux dws jobs, flux dws job
    assert jobs_lines([view()], 0.0)[1].split()[0] == shown
    text = job_text(view(record_keys=["data.dws.workflow"]))
    assert text.startswith(f"job {shown}: owner uid 1000, Workflow fluxjob-{JOBID}")
    assert f"record (flux job info {shown} KEY):" in text
    # flux dws status
    assert format_status({"jobs": [view()]}).splitlines()[2].split()[0] == shown
    # flux dws rabbits -v
    assert held_line({"job": JOBID, "ssds": ["a/ssd0"], "down": True}, 0.0, 1) \
        == f"  held by {shown}: 1 ssd, down"
