"""t/bench/goals.py and the goals of bench_health, bench_jobview,
bench_service and bench_prestage (issue 51: benchmarks that cannot fail):
each benchmark's ``check`` turns its figures into goals met or missed, and
its exit status is 1, naming the goal, when one is missed.  The figures
here are made up: nothing is timed in the test suite, only the logic that
judges a benchmark's own measurements."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load(name: str) -> ModuleType:
    """t/bench/NAME.py as its benchmark runs it (t/bench on sys.path)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_under_test_{name}",
                                                  BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


goals_mod = load("goals")


def status_and_missed(goals: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = goals.status()
    out = capsys.readouterr()
    return rc, out.err


# --- goals.py ----------------------------------------------------------------

def test_every_goal_met_is_exit_status_0(capsys: pytest.CaptureFixture[str]) -> None:
    g = goals_mod.Goals("bench_x")
    assert g.at_most("p99", 20.0, 20.0, " ms") and g.at_least("rate", 50, 50)
    assert g.equal("stuck", 0, 0) and g.check("drained sooner", True, "1 s vs 2 s")
    assert g.status() == 0
    out = capsys.readouterr()
    assert "goal met: p99 <= 20 ms (seen: 20 ms)" in out.out
    assert "bench_x: all 4 goals met" in out.out and out.err == ""


def test_a_goal_missed_is_exit_status_1_and_named(capsys: pytest.CaptureFixture[str]) -> None:
    g = goals_mod.Goals("bench_x")
    g.at_most("p99", 20.5, 20.0, " ms")
    g.equal("stuck", 0, 0)
    g.at_least("rate", 49.9, 50, " jobs/s")
    g.equal("leaked", 3, 0)
    rc, err = status_and_missed(g, capsys)
    assert rc == 1
    assert err.splitlines() == ["bench_x: failed: 3 of 4 goals missed:",
                                "  p99 <= 20 ms (seen: 20.5 ms)",
                                "  rate >= 50 jobs/s (seen: 49.9 jobs/s)",
                                "  leaked = 0 (seen: 3)"]


# --- bench_prestage -------------------------------------------------------------

PRESTAGE_TODAY = {"drained": 30.0, "held": 500.0, "stuck": 0, "leaked": 0, "per_job": 10.4,
                  "prolog": 10.3}
PRESTAGE_STAGED = {"drained": 20.0, "held": 10.0, "stuck": 0, "leaked": 0, "per_job": 0.4,
                   "prolog": 0.2}


@pytest.mark.parametrize("today, staged, missed", [
    ({}, {}, None),
    ({}, {"per_job": 1.3}, "prestaged: node-seconds held before start per job"),
    ({}, {"drained": 30.0}, "backlog drained sooner prestaged than today"),
    ({"stuck": 1}, {}, "stuck (jobs not inactive in time, or failed) = 0 (seen: 1)"),
    ({}, {"leaked": 2}, "leaked (Workflows, ssds down, holds) = 0 (seen: 2)"),
])
def test_prestage_goals(today: dict[str, Any], staged: dict[str, Any], missed: str | None,
                        capsys: pytest.CaptureFixture[str]) -> None:
    bench = load("bench_prestage")
    rc, err = status_and_missed(bench.check({**PRESTAGE_TODAY, **today},
                                            {**PRESTAGE_STAGED, **staged}), capsys)
    assert rc == (0 if missed is None else 1)
    if missed is not None:
        assert "bench_prestage: failed: 1 of 4 goals missed:" in err and missed in err


@pytest.mark.parametrize("today, staged, missed", [
    ({}, {}, None),
    ({}, {"held": 101.0}, "node-seconds held before start, against a fifth of today's"),
    ({}, {"drained": 30.5}, "backlog drained prestaged, against today"),
    ({}, {"drained": 30.0}, None),  # no more than today: met
    ({"stuck": 1}, {}, "stuck (jobs not inactive in time, or failed) = 0 (seen: 1)"),
])
def test_prestage_xfs_goals(today: dict[str, Any], staged: dict[str, Any],
                            missed: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    """--type xfs: issue 54's goals, B <= A / 5 and Y <= X."""
    bench = load("bench_prestage")
    rc, err = status_and_missed(bench.check_xfs({**PRESTAGE_TODAY, **today},
                                                {**PRESTAGE_STAGED, **staged}), capsys)
    assert rc == (0 if missed is None else 1)
    if missed is not None:
        assert "bench_prestage --type xfs: failed: 1 of 4 goals missed:" in err and missed in err


# --- bench_service --------------------------------------------------------------

SERVICE = {"reaction_p99": 12.5, "cpu_ms": 4.2, "rss": 180.0, "startup": 1.1, "found": 1000,
           "failed": 0, "stuck": 0, "leaked": 0}


@pytest.mark.parametrize("change, missed", [
    ({}, None),
    ({"reaction_p99": 21.0}, "reaction p99 (watch event in -> write out) <= 20 ms"),
    ({"cpu_ms": 5.01}, "process CPU per job (an upper bound of the service's) <= 5 ms"),
    ({"rss": 201.0}, "RSS with 1000 live jobs <= 200 MB (seen: 201 MB)"),
    ({"startup": 2.5}, "start-up to serving, El Capitan + 1000 live Workflows <= 2 s"),
    ({"found": 999}, "live Workflows the restarted service found = 1000 (seen: 999)"),
    ({"failed": 1}, "lifecycle jobs with an exception = 0 (seen: 1)"),
    ({"stuck": 1}, "stuck (jobs not inactive in time) = 0 (seen: 1)"),
    ({"leaked": 1}, "leaked (Workflows, ssds down, holds) = 0 (seen: 1)"),
])
def test_service_goals(change: dict[str, Any], missed: str | None,
                       capsys: pytest.CaptureFixture[str]) -> None:
    bench = load("bench_service")
    rc, err = status_and_missed(bench.check({**SERVICE, **change}), capsys)
    assert rc == (0 if missed is None else 1)
    if missed is not None:
        assert "bench_service: failed: 1 of 8 goals missed:" in err and missed in err


# --- bench_health ---------------------------------------------------------------

def storm(**change: Any) -> dict[str, Any]:
    down = [f"elcap{201 + i}" for i in range(20)]
    links = [f"elcap{2001 + i}" for i in range(20)]
    return {"wall": 3.0, "set_status": 2000, "actual": 720, "down": down,
            "down_seen": list(down), "links": links, "links_seen": list(links), **change}


HEALTH_SENT = [0, 720, 24336]


@pytest.mark.parametrize("actions, again, alone, crowded, sent, missed", [
    ({}, 0, {}, {}, HEALTH_SENT, None),
    ({"sched-fluxion-resource.set_status": 25055}, 0, {}, {}, HEALTH_SENT,
     "start-up: set_status (every ssd vertex, Fluxion has them down) = 25056 (seen: 25055)"),
    ({}, 1, {}, {}, HEALTH_SENT,
     "start-up: a second flush with nothing changed: actions = 0 (seen: 1)"),
    ({}, 0, {"set_status": 700}, {}, HEALTH_SENT,
     "storm: set_status sent (20 rabbits down at the end) >= 720 (seen: 700)"),
    ({}, 0, {"down_seen": [f"elcap{201 + i}" for i in range(19)]}, {}, HEALTH_SENT,
     "storm: the engine's view ends with the 20 rabbits down the storm left down, no other"
     " (seen: 19 down, elcap220 not down)"),
    ({}, 0, {}, {"links_seen": [f"elcap{2001 + i}" for i in range(21)]}, HEALTH_SENT,
     "storm, 5000 jobs running: the engine's view ends with the 20 links down the storm"
     " left down, no other (seen: 21 down, elcap2021 down too)"),
    ({}, 0, {}, {"wall": 4.6}, HEALTH_SENT,
     "storm, 5000 jobs running: engine time against the storm's without jobs <= 1.5x"
     " (seen: 1.53x)"),
    ({}, 0, {}, {}, [0, 721, 24336], "restarts: set_status"),
])
def test_health_goals(actions: dict[str, int], again: int, alone: dict[str, Any],
                      crowded: dict[str, Any], sent: list[int], missed: str | None,
                      capsys: pytest.CaptureFixture[str]) -> None:
    bench = load("bench_health")
    started = {"sched-fluxion-resource.set_status": 25056,
               "sched-fluxion-resource.remove_property": 1, **actions}
    rc, err = status_and_missed(bench.check(started, again, storm(**alone), storm(**crowded),
                                            sent), capsys)
    assert rc == (0 if missed is None else 1)
    if missed is not None:
        assert "bench_health: failed: 1 of 10 goals missed:" in err and missed in err


# --- bench_jobview --------------------------------------------------------------

def jobview_args(**change: Any) -> dict[str, Any]:
    dms = [{"name": f"dm-{r}"} for r in range(696)]
    args: dict[str, Any] = {
        "active_ms": 25.0, "ended_ms": 5.0, "asked": True,
        "view": {"datamovements": dms, "hosts": "elcap[1001-12136]"},
        "jobs": {"jobs": [{"id": 123456789}]},
        "printed": "job 123456789\n  computes elcap[1001-12136]\n",
        "stored": {"datamovements": dms}, "stored_printed": "  copy_in /lus/global/in\n",
        "e2e": {"datamovements": [{"name": "dm-0"}]}}
    return {**args, **change}


@pytest.mark.parametrize("change, missed", [
    ({}, None),
    ({"active_ms": 100.5}, "flux dws job, El Capitan-size active job: engine + command"
                           " <= 100 ms (seen: 100.5 ms)"),
    ({"ended_ms": 101.0}, "El Capitan-size ended job: KVS record + command <= 100 ms"),
    ({"asked": False}, "dws.job asks for the job's NnfDataMovements (seen: not asked)"),
    ({"view": {"datamovements": [], "hosts": "elcap[1001-12136]"}},
     "dws.job's answer: NnfDataMovements = 696 (seen: 0)"),
    ({"printed": "job 123456789\n"}, "flux dws job prints the job's computes (seen: missing)"),
    ({"stored": {}}, "the KVS record's view: NnfDataMovements = 696 (seen: 0)"),
    ({"stored_printed": ""}, "flux dws job prints the ended job's copy_in (seen: missing)"),
    ({"jobs": {"jobs": []}}, "dws.jobs lists the job = [123456789] (seen: [])"),
    ({"e2e": {}}, "dws.job end to end lists the copy_in's NnfDataMovements (seen: 0)"),
])
def test_jobview_goals(change: dict[str, Any], missed: str | None,
                       capsys: pytest.CaptureFixture[str]) -> None:
    bench = load("bench_jobview")
    rc, err = status_and_missed(bench.check(**jobview_args(**change)), capsys)
    assert rc == (0 if missed is None else 1)
    if missed is not None:
        assert "bench_jobview: failed: 1 of 10 goals missed:" in err and missed in err


@pytest.mark.parametrize("staged, rc", [({}, 0), ({"drained": 31.0}, 1)])
def test_prestage_main_exits_with_its_goals(staged: dict[str, Any], rc: int,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """main() (what run.py and the script's exit status use) is the goals'
    status: the two runs' figures are made up here."""
    bench = load("bench_prestage")
    runs = {"never": PRESTAGE_TODAY, "always": {**PRESTAGE_STAGED, **staged}}
    monkeypatch.setattr(bench, "run", lambda mode, *_: runs[mode])
    assert bench.main(["--jobs", "2"]) == rc
    out = capsys.readouterr()
    assert "prestage: 2 jobs, DataIn 10 s" in out.out
    assert ("backlog drained sooner" in out.err) == bool(rc)


# --- bench_scale ----------------------------------------------------------------

def test_scale_err_lines_other_than_the_injected_faults_are_stray() -> None:
    """bench_scale exits 1 on an err-level line that no injected fault
    explains (issue 51: "no error line besides the injected faults")."""
    from collections import Counter

    bench = load("bench_scale")
    injected = ("fluxjob-N: DWS/Rabbit interactions failed: workflow hit an error: DW Directive"
                f" 0: Internal error: {bench.CHAOS_MARK}drive failed")
    lost = ("fluxjob-N: DWS/Rabbit interactions failed: workflow hit an error: DW Directive"
            " 0: User error: PersistentStorageInstance 'bench-pN' not found")
    assert bench.stray_errors(Counter({injected: 3})) == Counter()
    assert bench.stray_errors(Counter({injected: 3, lost: 2})) == Counter({lost: 2})
    assert bench.stray_errors(Counter()) == Counter()
