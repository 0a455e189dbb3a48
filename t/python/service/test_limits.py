"""[rabbit.limits] end to end through the harness: a job over its user's
limit waits in DEPEND on dws-limit with no Workflow, and goes, in
submission order, when the user's other jobs free enough; a job alone over
max_user_gib is refused at dws.create; persistent storage counts against
its owner; a service restart keeps the waiting jobs waiting."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from t.python.service.harnesshelp import (
    engine_view,
    gone,
    has_workflow,
    settled,
    user_name,
    waits_on_limit,
)

from flux_dws.harness import Harness
from flux_dws.libdws.jobsm import DEPENDENCY, LIMIT_DEPENDENCY

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
LONG = 3600.0  # a runtime that holds the job running until h.finish


def _started(h: Harness, jobid: int) -> None:
    """The job runs (its prolog is over): h.finish can end it."""
    h.wait_event(jobid, "start")


def _one_running_one_waiting(h: Harness) -> tuple[int, int]:
    """Under max_user_jobs = 1: job a running (held by LONG), job b waiting
    on dws-limit."""
    a = h.submit(XFS, nodes=1, runtime=LONG)
    _started(h, a)
    b = h.submit(XFS, nodes=1)
    waits_on_limit(h, b)
    return a, b


def _persistent(h: Harness, name: str) -> None:
    """Persistent storage of 10 GiB, its creating job gone: it counts
    against its owner alone."""
    create = h.submit(f"#DW create_persistent type=xfs capacity=10GiB name={name}", nodes=1)
    assert h.wait(create).exceptions == []
    gone(h, create)
    h.wait_for(lambda: create not in h.status_now().get("workflows", []), 30,
               f"the service to forget job {create}")


def _destroy_lets_go(h: Harness, name: str, jobid: int) -> None:
    """Destroying the persistent storage lets the waiting job go."""
    destroy = h.submit(f"#DW destroy_persistent name={name}", nodes=1)
    assert h.wait(destroy).exceptions == []
    assert h.wait(jobid).exceptions == []
    assert settled(h) == {}


@pytest.fixture
def jobs1() -> Iterator[Harness]:
    with Harness(config={"limits": {"max_user_jobs": 1, "users": {}}}) as harness:
        yield harness
        assert harness.reactor.errors == []


def test_a_job_over_max_user_jobs_waits_then_goes(jobs1: Harness) -> None:
    h = jobs1
    a, b = _one_running_one_waiting(h)
    job = h.job(b)
    assert job.state == "DEPEND" and job.deps == {DEPENDENCY, LIMIT_DEPENDENCY}
    assert not has_workflow(h, b)
    view = engine_view(h, b)
    assert view["phase"] == "waiting-limit"
    assert view["waiting"] == f"max_user_jobs 1: user {user_name(h.owner)} holds 10 GiB in 1 job"
    h.finish(a)
    job = h.wait(b)
    assert job.exceptions == [], job.exceptions
    assert h.job(a).exceptions == []
    # dws-limit was removed once its Workflow existed, before dws-create
    names = [(n, c.get("description")) for _, n, c in job.eventlog
             if n in ("dependency-add", "dependency-remove")]
    assert names.index(("dependency-remove", LIMIT_DEPENDENCY)) \
        < names.index(("dependency-remove", DEPENDENCY))
    gone(h, b)
    assert settled(h) == {}


def test_waiting_jobs_go_in_submission_order(jobs1: Harness) -> None:
    h = jobs1
    a = h.submit(XFS, nodes=1, runtime=LONG)
    _started(h, a)
    b = h.submit(XFS, nodes=1, runtime=LONG)
    c = h.submit(XFS, nodes=1)
    waits_on_limit(h, b)
    waits_on_limit(h, c)
    h.finish(a)
    _started(h, b)
    assert h.job(c).state == "DEPEND" and LIMIT_DEPENDENCY in h.job(c).deps
    assert engine_view(h, c)["phase"] == "waiting-limit"
    h.finish(b)
    assert h.wait(c).exceptions == []
    assert settled(h) == {}


def test_a_cancelled_waiting_job_ends_without_a_workflow(jobs1: Harness) -> None:
    h = jobs1
    a, b = _one_running_one_waiting(h)
    h.cancel(b)
    job = h.wait(b)
    assert not has_workflow(h, b)
    assert [e["type"] for e in job.exceptions] == ["cancel"]
    assert engine_view(h, b) == {}
    h.finish(a)
    assert h.wait(a).exceptions == []
    assert settled(h) == {}


def test_a_restarted_service_keeps_them_waiting(jobs1: Harness) -> None:
    h = jobs1
    a, b = _one_running_one_waiting(h)
    h.restart_service()
    h.wait_for(lambda: h.status_now().get("synced") is True, 30, "the Workflow list")
    h.wait_for(lambda: any(j["id"] == b and j["phase"] == "waiting-limit"
                           for j in h.status_now().get("jobs", [])), 30,
               f"job {b} waiting again")
    assert engine_view(h, b)["waiting"].startswith("max_user_jobs 1: ")
    assert not has_workflow(h, b) and h.job(b).state == "DEPEND"
    h.finish(a)
    assert h.wait(b).exceptions == []
    assert settled(h) == {}


def test_a_job_alone_over_max_user_gib_is_refused() -> None:
    with Harness(config={"limits": {"max_user_gib": 15, "users": {}}}) as h:
        jobid = h.submit(XFS, nodes=2)  # 2 x 10 GiB
        job = h.wait(jobid)
        assert [e["type"] for e in job.exceptions] == ["dws-create"]
        assert job.exceptions[0]["note"].endswith(
            "Requested a total of 20 GiB of rabbit storage but max_user_gib is 15 GiB"
            f" (user {user_name(h.owner)})")
        assert not has_workflow(h, jobid)


def test_a_users_own_limits_override_the_top_level() -> None:
    me = user_name(os.getuid())
    limits = {"max_user_gib": 5, "users": {me: {"max_user_gib": 100}}}
    with Harness(config={"limits": limits}, owner=os.getuid()) as h:
        jobid = h.submit(XFS, nodes=2)
        assert h.wait(jobid).exceptions == []
        assert settled(h) == {}


def test_persistent_storage_counts_against_its_owner() -> None:
    with Harness(config={"limits": {"max_user_gib": 15, "users": {}}}) as h:
        _persistent(h, "p1")
        jobid = h.submit(XFS, nodes=1)  # 10 GiB more than the 10 the PSI holds
        waits_on_limit(h, jobid)
        assert engine_view(h, jobid)["waiting"] == \
            f"max_user_gib 15: user {user_name(h.owner)} holds 10 GiB in 0 jobs"
        _destroy_lets_go(h, "p1", jobid)


def test_cancelled_while_the_service_is_away(jobs1: Harness) -> None:
    # its dws.post_run is lost: the restarted service finds it in CLEANUP
    # holding dws-limit, with no Workflow, and releases its epilog
    h = jobs1
    a, b = _one_running_one_waiting(h)
    h.stop_service()
    h.cancel(b)
    h.wait(b, "CLEANUP")
    h.start_service()
    job = h.wait(b)
    assert not has_workflow(h, b)
    assert [e["type"] for e in job.exceptions] == ["cancel"]
    h.finish(a)
    assert h.wait(a).exceptions == []
    assert settled(h) == {}


def test_limits_configured_by_a_reload_watch_the_persistent_storage() -> None:
    with Harness() as h:
        _persistent(h, "p2")
        svc = h.service
        assert svc is not None
        config = {**h.config, "owner": h.owner, "limits": {"max_user_gib": 15, "users": {}}}
        h.reactor.call(lambda: svc.reconfig(config, {}))
        jobid = h.submit(XFS, nodes=1)
        waits_on_limit(h, jobid)
        assert engine_view(h, jobid)["waiting"] == \
            f"max_user_gib 15: user {user_name(h.owner)} holds 10 GiB in 0 jobs"
        _destroy_lets_go(h, "p2", jobid)


def test_limits_raised_by_a_reload_let_a_waiting_job_go() -> None:
    # nothing its user holds changes: the new limits alone let it go, at
    # the next event the engine sees (here a dws.jobs request)
    with Harness(config={"limits": {"max_user_jobs": 1, "users": {}}}) as h:
        a = h.submit(XFS, nodes=1, runtime=LONG)
        _started(h, a)
        b = h.submit(XFS, nodes=1)
        waits_on_limit(h, b)
        svc = h.service
        assert svc is not None
        config = {**h.config, "owner": h.owner, "limits": {"max_user_jobs": 2, "users": {}}}
        h.reactor.call(lambda: svc.reconfig(config, {}))
        engine_view(h, b)
        assert h.wait(b).exceptions == []
        h.finish(a)
        assert h.wait(a).exceptions == []
        assert settled(h) == {}


# --- every wait survives every restart -----------------------------------------


def _blocker_gone_while_away(h: Harness, a: int) -> None:
    """Job a ends while no service watches, its Workflow gone with it (the
    old service deleted it and went away before it let the waiting job go;
    here: deleted for it)."""
    h.stop_service()
    assert h.emulator.controllers is not None
    h.emulator.controllers.vanish("default", f"fluxjob-{a}")
    h.wait_for(lambda: not has_workflow(h, a), 30, f"job {a}'s Workflow to go")
    h.finish(a)
    h.wait(a, "CLEANUP")


@pytest.mark.parametrize("how", ["blocker-gone", "limit-raised"])
def test_a_waiting_job_goes_when_its_blocker_ended_while_away(jobs1: Harness,
                                                               how: str) -> None:
    # the restarted service finds b holding dws-limit with nothing in its
    # way: it creates b's Workflow and removes dws-limit once it exists
    h = jobs1
    a, b = _one_running_one_waiting(h)
    if how == "blocker-gone":
        _blocker_gone_while_away(h, a)
        h.start_service()
    else:
        h.restart_service({**h.config, "limits": {"max_user_jobs": 2, "users": {}}})
    job = h.wait(b)
    assert job.exceptions == [], job.exceptions
    assert LIMIT_DEPENDENCY not in job.deps
    if how == "limit-raised":
        h.finish(a)
        assert h.wait(a).exceptions == []
    assert settled(h) == {}


def _restart_with_the_answer_lost(h: Harness, held: Any) -> None:
    """The service goes away with the held answer in flight: it reaches no
    one; a fresh service starts."""
    h.reactor.call(h.link.unserve)
    held.release()
    h.restart_service()


def test_a_restart_between_the_create_and_its_answer(jobs1: Harness) -> None:
    # b's Workflow is made as a lets it go, and the service restarts before
    # the create's answer: the next one takes the Workflow up (no second
    # one), removes dws-limit, and counts b against its user
    h = jobs1
    a = h.submit(XFS, nodes=1, runtime=LONG)
    _started(h, a)
    b = h.submit(XFS, nodes=1, runtime=LONG)
    waits_on_limit(h, b)
    held = h.emulator.api_fault(method="POST", path=r"/workflows(\?|$)", hold=30.0)
    h.finish(a)
    h.wait_for(lambda: held.hits == 1 and has_workflow(h, b), 30,
               f"job {b}'s Workflow made, its answer held")
    _restart_with_the_answer_lost(h, held)
    _started(h, b)
    assert LIMIT_DEPENDENCY not in h.job(b).deps
    assert h.job(b).memo.get("rabbit_workflow") == f"fluxjob-{b}"
    assert [w["metadata"]["name"] for w in h.workflows()] == [f"fluxjob-{b}"]
    c = h.submit(XFS, nodes=1)
    waits_on_limit(h, c)
    assert engine_view(h, c)["waiting"] == \
        f"max_user_jobs 1: user {user_name(h.owner)} holds 10 GiB in 1 job"
    h.finish(b)
    assert h.wait(b).exceptions == []
    assert h.wait(c).exceptions == []
    assert settled(h) == {}


def test_a_job_taken_up_after_a_restart_counts_its_gib() -> None:
    with Harness(config={"limits": {"max_user_gib": 25, "users": {}}}) as h:
        a = h.submit(XFS, nodes=2, runtime=LONG)  # 2 x 10 GiB
        _started(h, a)
        h.restart_service()
        b = h.submit(XFS, nodes=1)
        waits_on_limit(h, b)
        assert engine_view(h, b)["waiting"] == \
            f"max_user_gib 25: user {user_name(h.owner)} holds 20 GiB in 1 job"
        h.finish(a)
        assert h.wait(a).exceptions == []
        assert h.wait(b).exceptions == []
        assert settled(h) == {}


def test_a_limit_removal_lost_to_a_jobtap_reload_is_sent_again(jobs1: Harness) -> None:
    # the plugin was reloaded as the service removed dws-limit (lost with
    # no plugin loaded): the reloaded plugin's dws.create again brings it
    h = jobs1
    a, b = _one_running_one_waiting(h)
    real_rpc = h.link.rpc
    dropped: list[Any] = []

    def drop_limit_removal(topic: str, payload: Any, *args: Any, **kw: Any) -> None:
        if topic.endswith(".dependency") and payload.get("add") is False and not dropped:
            dropped.append(payload)
            return
        real_rpc(topic, payload, *args, **kw)

    h.link.rpc = drop_limit_removal  # type: ignore[method-assign]
    h.finish(a)
    h.wait_for(lambda: bool(dropped) and DEPENDENCY not in h.jm.jobs[b].deps, 30,
               f"job {b} past dws-create, its dws-limit removal lost")
    assert h.job(b).state == "DEPEND" and h.job(b).deps == {LIMIT_DEPENDENCY}
    h.reload_jobtap(b)
    job = h.wait(b)
    assert job.exceptions == [], job.exceptions
    assert settled(h) == {}


def test_a_job_whose_storage_is_torn_down_no_longer_holds_its_gib() -> None:
    """Teardown done, its Workflow being deleted (held there: the deletes
    fail until the test clears the fault), a job's GiB no longer count:
    a job that fits beside the rest goes at once."""
    with Harness(config={"limits": {"max_user_gib": 25, "users": {}}},
                 kube={"retry_attempts": 1_000_000, "retry_deadline": 86400.0,
                       "retry_max": 0.2}) as h:
        a = h.submit(XFS, nodes=2, runtime=LONG)  # 2 x 10 GiB
        _started(h, a)
        h.emulator.api_fault(503, method="DELETE", path=f"/workflows/fluxjob-{a}$",
                             count=1_000_000)
        h.finish(a)
        # each ask is a round trip through the service (no sleep); the phase
        # stays "deleting" while the deletes fail
        asks = 0
        while engine_view(h, a).get("phase") != "deleting":
            asks += 1
            assert asks < 5000, f"job {a} never reached the deleting phase"
        b = h.submit(XFS, nodes=1)  # 10 GiB: 30 if a's 20 still counted
        # its create decided (read from the engine: its Workflow's create may
        # wait behind a's failing delete, on the same writer)
        asks = 0
        while (phase := engine_view(h, b).get("phase")) in (None, ""):
            asks += 1
            assert asks < 5000, f"job {b} never got a phase"
        assert phase != "waiting-limit" and LIMIT_DEPENDENCY not in h.jm.jobs[b].deps
        assert engine_view(h, a).get("phase") == "deleting"  # still there, the whole time
        h.emulator.clear_api_faults()
        assert h.wait(a).exceptions == []
        assert h.wait(b).exceptions == []
        assert settled(h) == {}
