"""A pre-staged job's DataIn bounded by its progress (issue 54, part 3):
with rabbit.datain_stall_timeout set, a copy that moves runs as long as
it needs, one that does not move for the bound fails the job before any
node is spent, and ``flux dws job`` shows how far it is and the time left.
"""

from __future__ import annotations

import time
from typing import Any

from t.python.service.harnesshelp import cleared, fault, phase

from flux_dws.harness import Harness

STAGED = ["#DW jobdw type=lustre capacity=10GiB name=lus",
          "#DW copy_in source=/lus/global/in destination=$DW_JOB_lus/"]
STALL = 1.0


def _harness(**config: Any) -> Harness:
    return Harness(config={"prestage": "always", "datain_stall_timeout": STALL, **config})


def _prestage_view(h: Harness, jobid: int) -> dict[str, Any]:
    jobs = h.ask("dws.jobs", payload={"all_users": True})["jobs"]
    job = next((j for j in jobs if j["id"] == jobid), {})
    return job.get("prestage") or {}  # type: ignore[no-any-return]


def _allocated(h: Harness, jobid: int) -> bool:
    return any(name == "alloc" for _, name, _ in h.job(jobid).eventlog)


def test_a_datain_that_does_not_move_fails_the_job_before_any_node() -> None:
    with _harness() as h:
        fault(h, kind="datamovement", state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=1)
        job = h.wait(jobid)
        assert [e["type"] for e in job.exceptions] == ["dws-timeout"], job.exceptions
        note = job.exceptions[0]["note"]
        assert "DataIn made no progress for" in note, note
        assert "rabbit.datain_stall_timeout 1 s; 0 of 1 data movements finished" in note, note
        assert not _allocated(h, jobid)
        assert cleared(h) == {}


def test_a_datain_that_moves_runs_past_the_bound_and_shows_its_progress() -> None:
    """Each copy takes four times the bound; it moves every quarter of its
    length: never a bound without progress, so the job runs."""
    with _harness() as h:
        fault(h, kind="datamovement", state="DataIn", severity="delay", seconds=4 * STALL)
        jobid = h.submit(STAGED, nodes=1)
        h.wait_for(lambda: phase(h, jobid) == "datain", what="DataIn")
        # the view is asked of the service (not a reactor predicate): polled,
        # bounded by the copy's own length
        deadline = time.monotonic() + 30
        seen: dict[str, Any] = {}
        while not (seen.get("percent", 0) > 0 and "left" in seen):
            assert time.monotonic() < deadline, f"no progress shown: {seen}"
            time.sleep(0.05)
            seen = _prestage_view(h, jobid).get("datain") or {}
        assert seen["dms"] == 1 and seen["finished"] == 0 and seen["left"] > 0
        assert "Copied" in seen["last"]
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert cleared(h) == {}


def test_a_copy_that_stops_moving_fails_a_bound_after_its_last_move() -> None:
    with _harness() as h:
        fault(h, kind="datamovement", state="DataIn", severity="stall", seconds=2 * STALL)
        jobid = h.submit(STAGED, nodes=1)
        job = h.wait(jobid)
        assert [e["type"] for e in job.exceptions] == ["dws-timeout"], job.exceptions
        note = job.exceptions[0]["note"]
        assert "DataIn made no progress for" in note and ": Copied " in note, note
        assert not _allocated(h, jobid)
        assert cleared(h) == {}


def test_without_the_bound_a_stalled_datain_is_left_to_the_user() -> None:
    with Harness(config={"prestage": "always"}) as h:
        fault(h, kind="datamovement", state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=1)
        h.wait_for(lambda: phase(h, jobid) == "datain", what="DataIn")
        assert "datain" in _prestage_view(h, jobid)  # shown, not bounded
        h.cancel(jobid)
        job = h.wait(jobid)
        assert [e["type"] for e in job.exceptions] == ["cancel"], job.exceptions
        assert cleared(h) == {}


def test_a_progress_list_that_keeps_failing_ends_the_job_too() -> None:
    """The NnfDataMovement list fails every time (Kubernetes 500): nothing
    is recorded as moved, so the bound ends the job, before any node, as a
    copy that does not move would; a copy that moves meanwhile is not seen
    (the job is failed on what can be seen).  Failing for good: longer
    than the reads' retry deadline (60 s by default)."""
    with Harness(config={"prestage": "always", "datain_stall_timeout": STALL},
                 kube={"retry_deadline": 2.0}) as h:
        fault(h, kind="datamovement", state="DataIn", severity="delay", seconds=60)
        h.emulator.api_fault(500, method="GET", path="nnfdatamovements", count=100000)
        jobid = h.submit(STAGED, nodes=1)
        job = h.wait(jobid)
        h.emulator.clear_api_faults()
        assert [e["type"] for e in job.exceptions] == ["dws-timeout"], job.exceptions
        note = job.exceptions[0]["note"]
        assert "DataIn made no progress for" in note, note
        assert "its NnfDataMovements could not be listed: " in note, note
        assert not _allocated(h, jobid)
        assert cleared(h) == {}


def test_in_the_prolog_a_datain_that_does_not_move_fails_the_job() -> None:
    """Not pre-staged: its DataIn runs in its prolog, with its nodes, and
    the same rule bounds it (a site may then drop prolog_timeout's fixed
    bound); its nodes go back."""
    with Harness(config={"datain_stall_timeout": STALL}) as h:
        fault(h, kind="datamovement", state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=1)
        job = h.wait(jobid)
        assert [e["type"] for e in job.exceptions] == ["dws-timeout"], job.exceptions
        assert "DataIn made no progress for" in job.exceptions[0]["note"]
        assert _allocated(h, jobid)  # the usual way: nodes first
        assert cleared(h) == {}


def test_in_the_prolog_a_datain_that_moves_runs_past_the_bound() -> None:
    with Harness(config={"datain_stall_timeout": STALL}) as h:
        fault(h, kind="datamovement", state="DataIn", severity="delay", seconds=4 * STALL)
        jobid = h.submit(STAGED, nodes=1)
        h.wait_for(lambda: phase(h, jobid) == "datain", what="DataIn")
        deadline = time.monotonic() + 30
        seen: dict[str, Any] = {}
        while not seen.get("percent", 0) > 0:
            assert time.monotonic() < deadline, f"no progress shown: {seen}"
            time.sleep(0.05)
            seen = h.ask("dws.job", payload={"jobid": jobid}).get("datain") or {}
        assert seen["dms"] == 1
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert cleared(h) == {}
