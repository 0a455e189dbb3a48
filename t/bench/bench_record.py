"""How big a job's KVS record grows, its why with it (issue 76, item 2: a
job's record stays small; say how big for a job with 3 restarts).

    PYTHONPATH=src/python:build/src/python python t/bench/bench_record.py

One xfs job with a copy_in runs through the harness (the real dws
service and libdws job machines on the emulated kind system), held by an
emulator fault in DataIn, in PostRun and in Teardown in turn; at each
hold the service is killed and started again (3 restarts), then the
fault is cleared.  The job's record (``data.dws.job``, what ``flux dws
job`` reads once the job has ended) is read at each hold and at the
end: its size as JSON, its ``why`` (the steps with their rules, our own
key) apart.  A goal: the record stays within 16 KiB, its why within
``WHY_MAX_STEPS`` (64) steps.  A restarted service writes the record
anew: the why it carries is the steps since the restart (the engine
reads no KVS), each state's rule as the restarted service saw it asked.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from goals import Goals

from flux_dws.emulator.faults import Fault
from flux_dws.harness import Harness
from flux_dws.libdws.engine import RECORD_KEY

STAGED_IN = ["#DW jobdw type=xfs capacity=10GiB name=scratch",
             "#DW copy_in source=/lus/global/in destination=$DW_JOB_scratch/"]
WHY_MAX_STEPS = 64
RECORD_GOAL = 16 * 1024


def record(h: Harness, jobid: int) -> dict[str, Any] | None:
    rec = h.reactor.call(lambda: json.loads(json.dumps(h.jm.jobs[jobid].kvs.get(RECORD_KEY))))
    return rec if isinstance(rec, dict) else None


def state_now(h: Harness, jobid: int) -> str | None:
    for j in h.status_now().get("jobs", []):
        if j["id"] == jobid:
            return j.get("state")  # type: ignore[no-any-return]
    return None


def at(h: Harness, jobid: int, state: str) -> Callable[[], bool]:
    """Whether the job's Workflow state is `state` now."""
    return lambda: state_now(h, jobid) == state


def sizes(rec: dict[str, Any]) -> tuple[int, int, int]:
    """(the record's bytes, its why's bytes, the why's steps)"""
    why = rec.get("why") or {}
    return (len(json.dumps(rec, separators=(",", ":"))),
            len(json.dumps(why, separators=(",", ":"))), len(why.get("steps", [])))


HOLDS = ("DataIn", "PostRun", "Teardown")


def held_job(h: Harness) -> tuple[Any, int]:
    """The emulator's controllers, the job submitted to be held in each of
    HOLDS (a stall fault each, cleared by the caller in turn)."""
    controllers = h.emulator.controllers
    assert controllers is not None
    for state in HOLDS:
        controllers.faults.add(Fault(state=state, severity="stall"))
    return controllers, h.submit(STAGED_IN, nodes=1, runtime=0.0)


def without_restarts() -> tuple[str, int, int, int] | None:
    """The same job through the same holds, the service never restarted."""
    with Harness() as h:
        controllers, jobid = held_job(h)
        for state in HOLDS:
            h.wait_for(at(h, jobid, state), what=f"{state} asked",
                       timeout=60)
            controllers.clear_faults(state=state)
        h.wait(jobid)
        rec = record(h, jobid)
    return ("the job ended, no restart", *sizes(rec)) if rec is not None else None


def main() -> int:
    goals = Goals("record")
    seen: list[tuple[str, int, int, int]] = []
    if (plain := without_restarts()) is not None:
        seen.append(plain)
    with Harness() as h:
        controllers, jobid = held_job(h)
        for restart, state in enumerate(HOLDS, 1):
            h.wait_for(at(h, jobid, state), what=f"{state} asked",
                       timeout=60)
            h.restart_service()
            h.wait_for(at(h, jobid, state), what=f"{state} taken up",
                       timeout=60)
            deadline = time.monotonic() + 10
            while (rec := record(h, jobid)) is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if rec is not None:
                seen.append((f"restart {restart} in {state}", *sizes(rec)))
            controllers.clear_faults(state=state)
        result = h.wait(jobid)
        rec = record(h, jobid)
        if rec is not None:
            seen.append(("the job ended", *sizes(rec)))
        ok = not result.exceptions
    for what, total, why, steps in seen:
        print(f"record after {what}: {total} bytes, its why {why} bytes in {steps} steps")
    most = max((s[1] for s in seen), default=0)
    goals.check("the job ran through 3 restarts of the service with no exception", ok,
                "no exception" if ok else "an exception")
    goals.check("a record was read without restarts, at each restart and at the end",
                len(seen) == 5, f"{len(seen)} of 5")
    goals.at_most("the job's record", most, RECORD_GOAL, " bytes")
    goals.at_most("the steps of its why", max((s[3] for s in seen), default=0), WHY_MAX_STEPS)
    return goals.status()


if __name__ == "__main__":
    sys.exit(main())
