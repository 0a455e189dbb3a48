"""flux-dws status and version --module-path: output and error paths."""

from __future__ import annotations

import pytest

from flux_dws.cli.main import main
from flux_dws.cli.status import format_status
from flux_dws.textfmt import f58


def test_status_outside_flux_says_why(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    assert main(["status"]) == 1
    err = capsys.readouterr().err
    assert "flux-dws status:" in err and "FLUX_URI is not set" in err


def test_sync_outside_flux_says_why(monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    assert main(["sync"]) == 1
    err = capsys.readouterr().err
    assert "flux-dws sync:" in err and "FLUX_URI is not set" in err


def test_status_table() -> None:
    st = {"synced": True, "rabbits": 2, "computes": 4,
          "service": {"events": 9, "k8s_pending": 3, "reaction_ms_p50": 1.5,
                      "reaction_ms_p99": 7.0, "reactor_wait_ms_p50": 0.2,
                      "reactor_wait_ms_p99": 1.0, "writer_wait_ms_p50": 0.5,
                      "writer_wait_ms_p99": 4.25, "events_behind": 12,
                      "k8s_oldest_pending_s": 0.25, "flux_pending": 4,
                      "rpcs_waiting": 2,
                      "watches": [{"kind": "Storage", "state": "watching",
                                   "resource_version": "812", "heard_s": 0.43, "unsettled": 0,
                                   "lists": 1, "reconnects": 6, "heals": 0,
                                   "last_error": None},
                                  {"kind": "Workflow", "state": "retrying",
                                   "resource_version": "", "heard_s": 130.0, "unsettled": 2,
                                   "lists": 2, "reconnects": 0, "heals": 1,
                                   "last_error": "503 busy"}]},
          "jobs": [{"id": 7, "workflow": "fluxjob-7", "phase": "datain", "desired": "DataIn",
                    "state": "Setup",
                    "ready": True, "status": "Completed", "message": "", "hosts": "c[1-2]",
                    "timers": ["setup"]},
                   {"id": 5, "workflow": "fluxjob-5", "desired": "PreRun", "state": "PreRun",
                    "ready": True, "status": "Completed", "message": ""},
                   {"id": 9, "workflow": "fluxjob-9", "desired": "Setup", "state": "Setup",
                    "ready": False, "status": "Error", "message": "disk died"}]}
    out = format_status(st).splitlines()
    assert out[0] == "synced: yes; 2 rabbits, 4 computes; 3 jobs"
    assert out[1] == ("events 9, reaction p50/p99 1.5/7.0 ms (waiting for the reactor"
                      " 0.2/1.0 ms, for a writer 0.5/4.25 ms)")
    assert out[2] == ("load: events behind 12, k8s writes pending 3 (oldest 0.250 s),"
                      " flux calls pending 4 (2 RPCs waiting to be sent)")
    assert out[3] == ("watch Storage: watching at resourceVersion 812, heard 0.4 s ago,"
                      " 0 unsettled; lists 1, reconnects 6, heals 0")
    assert out[4] == ("watch Workflow: retrying at resourceVersion -, heard 130.0 s ago,"
                      " 2 unsettled; lists 2, reconnects 0, heals 1; last error: 503 busy")
    rows = out[6:]
    assert [r.split()[0] for r in rows] == [f58(5), f58(7), f58(9)]  # by job id
    assert "PreRun ready" in rows[0]
    assert "Setup -> DataIn" in rows[1] and "c[1-2]" in rows[1] and "setup" in rows[1]
    assert rows[1].split()[2] == "datain" and rows[0].split()[2] == "-"  # the phase
    assert "Setup Error" in rows[2] and rows[2].endswith("disk died")
    assert format_status({"synced": False}) == "synced: no (starting); 0 rabbits, 0 computes;" \
        " 0 jobs"


def test_module_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version", "--module-path"]) == 0
    path = capsys.readouterr().out.strip()
    assert path.endswith("dws.py")
    with open(path) as fh:
        assert "def mod_main" in fh.read()


def test_status_shows_released_jobs_and_their_held_ssds() -> None:
    st = {"synced": True, "rabbits": 2, "computes": 4, "jobs": [
        {"id": 5, "workflow": "fluxjob-5", "phase": "dataout", "state": "DataOut",
         "desired": "DataOut", "status": "Running", "released": True, "held_ssds": 4,
         "phase_seconds": 42.2, "timers": [], "message": ""},
        {"id": 6, "workflow": "fluxjob-6", "phase": "running", "state": "PreRun",
         "desired": "PreRun", "status": "Completed", "timers": [], "message": ""}]}
    out = format_status(st).splitlines()
    assert out[0] == ("synced: yes; 2 rabbits, 4 computes; 2 jobs, 1 with computes released"
                      " (4 ssds held)")
    assert out[2].endswith("[computes released, 4 ssds held, dataout for 42s] ")
    assert "released" not in out[3]
