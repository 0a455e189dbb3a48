"""flux dws job, jobs and wait: a bad job id gets one line naming it and
exit status 1, before the broker is asked anything."""

from __future__ import annotations

from typing import Any

import pytest

from flux_dws import fluxutil
from flux_dws.cli.main import main


def flux_or_skip() -> None:
    try:
        fluxutil.import_flux()
    except fluxutil.FluxUnavailable as exc:
        pytest.skip(str(exc))


class NoBroker:
    """A handle that must not be used: a malformed id is refused first."""

    def rpc(self, *_: Any, **__: Any) -> Any:
        raise AssertionError("the command asked the broker")


@pytest.mark.parametrize("command", ["job", "wait", "jobs"])
@pytest.mark.parametrize("jobid", ["-5", "abc", "18446744073709551616", "", " ", "ƒ", "f",
                                   "fxyz0", "1.5", "99999999999999999999999"])
def test_malformed_job_id(command: str, jobid: str, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    flux_or_skip()
    monkeypatch.setenv("FLUX_URI", "local:///nonexistent")
    monkeypatch.setattr(f"flux_dws.cli.{command}.open_flux", lambda: NoBroker())
    assert main([command, jobid]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"flux-dws {command}: malformed job id '{jobid}'\n"
