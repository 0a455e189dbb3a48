"""``flux dws jobs``: its table under -o (presets and {field}s) and
--no-header, from a hand-written dws.jobs answer; the default table's
words are tested in test_jobview.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from t.python.cli.test_garbage import assert_clear_error, run_main
from t.python.cli.test_jobview import MOUNT_NOTE, service_answer

from flux_dws.cli import jobs
from flux_dws.cli import main as flux_dws
from flux_dws.libdws.explain import explain_note
from flux_dws.textfmt import f58


class Handle:
    """What ``flux dws jobs`` uses of a handle for active jobs only."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.calls: list[tuple[str, Any]] = []

    def rpc(self, topic: str, payload: Any) -> Handle:
        self.calls.append((topic, payload))
        return self

    def get(self) -> Any:
        return copy.deepcopy(self.answer)


ANSWER = {"success": True, "jobs": [
    service_answer(id=1234, userid=4_000_000_000),
    service_answer(id=99, phase="teardown", state="Teardown", error=explain_note(MOUNT_NOTE),
                   workflow="fluxjob-99", userid=4_000_000_000)]}


def run(argv: list[str], monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> Any:
    monkeypatch.setattr(jobs, "open_flux", lambda: Handle(ANSWER))
    return run_main(flux_dws.main, ["jobs", *argv], monkeypatch, capfd)


def test_default_and_long(monkeypatch: pytest.MonkeyPatch,
                          capfd: pytest.CaptureFixture[str]) -> None:
    out = run([], monkeypatch, capfd)
    assert out.rc == 0
    lines = out.out.splitlines()
    assert lines == jobs.jobs_lines(ANSWER["jobs"], 0.0)  # oldest first
    assert lines[0] == "JOBID USER       PHASE    STATE            DIRECTIVES         RABBITS  " \
                       "    TIME  ERROR"
    assert lines[1].startswith(f"{f58(99)}   4000000000 teardown Teardown Running")
    out = run(["-o", "long"], monkeypatch, capfd)
    lines = out.out.splitlines()
    assert lines[0].split()[6:] == ["WORKFLOW", "TIME", "ERROR"]
    at = lines[0].index("WORKFLOW")
    assert lines[1][at:].split()[:2] == ["fluxjob-99", "1m05s"]
    assert lines[2][at:].split()[:2] == ["fluxjob-1234", "1m05s"]


def test_fields_and_no_header(monkeypatch: pytest.MonkeyPatch,
                              capfd: pytest.CaptureFixture[str]) -> None:
    out = run(["--no-header", "-o", "{id:>6} {id.f58} {userid} {phase}"], monkeypatch, capfd)
    assert (out.rc, out.out.splitlines()) == (0, [
        f"    99 {f58(99)} 4000000000 teardown", f"  1234 {f58(1234)} 4000000000 datain"])
    # the error column is last and whole on a pipe as on a terminal (60 characters at most)
    out = run(["-o", "{id} {error}"], monkeypatch, capfd)
    assert out.out.splitlines()[1].startswith("99 The rabbit file system could not be mounted")
    out = run(["-n", "5", "--format", "{id}"], monkeypatch, capfd)  # -n is --count here
    assert out.out.splitlines() == ["JOBID", "99", "1234"]


@pytest.mark.parametrize(("argv", "names"), [
    (["-o", "{jobid}"], "unknown field 'jobid'"),
    (["-o", "{id.dec}"], "unknown field 'id.dec'"),
    (["-o", "deps"], "unknown format 'deps'"),
    (["-o", "{id} {time:%H}"], "field 'time'"),
    (["--json", "--format=long"], "not allowed with argument --json"),
])
def test_bad_formats(argv: list[str], names: str, monkeypatch: pytest.MonkeyPatch,
                     capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    out = run_main(flux_dws.main, ["jobs", *argv], monkeypatch, capfd)
    assert out.rc == 2
    assert_clear_error(out, names)


def test_help(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    out = run_main(flux_dws.main, ["jobs", "--format=help"], monkeypatch, capfd)
    assert out.rc == 0 and out.out == jobs.TABLE.help_text() + "\n"
    assert "  id.f58      JOBID       the job id, in f58 as flux-core prints it" in out.out
