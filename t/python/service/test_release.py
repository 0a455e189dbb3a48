"""Compute nodes back to Flux once PostRun is done (issue 38), through the
harness: release_computes = "after-unmount", the ssd holds in (fake)
Fluxion, DataOut and Teardown after the job's end, their KVS record,
restarts, and the failure paths.
"""

from __future__ import annotations

from typing import Any, Callable

from t.python.service.harnesshelp import cleared, fault

from flux_dws.apiserver.store import ApiError
from flux_dws.emulator.driver import RESOURCE as RESOURCES
from flux_dws.harness import Harness

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
STAGED = [XFS, "#DW copy_out source=$DW_JOB_scratch/ destination=/lus/global/out"]
EARLY = {"release_computes": "after-unmount"}


def clear(h: Harness) -> None:
    assert h.emulator.controllers is not None
    h.emulator.controllers.clear_faults()


def engine_job(h: Harness, jobid: int) -> dict[str, Any] | None:
    for j in h.status_now().get("jobs", []):
        if j["id"] == jobid:
            return j  # type: ignore[no-any-return]
    return None


def phase(h: Harness, jobid: int) -> str | None:
    j = engine_job(h, jobid)
    return None if j is None else j.get("phase")  # type: ignore[no-any-return]


def down(h: Harness) -> set[str]:
    return {p for p, st in h.fluxion.status.items() if st == "down"}


def held_paths(h: Harness, jobid: int) -> set[str]:
    R = h.jm.R_kvs(h.jm.jobs[jobid])
    return {n["metadata"]["paths"]["containment"] for n in R["scheduling"]["graph"]["nodes"]
            if n["metadata"]["type"] == "ssd"}


#: the engine's phases in which a released job's hold may end
TEARING_DOWN = (None, "teardown", "torn-down", "deleting")


class HoldWatch:
    """Samples after every reactor callback (as ``wait_for`` predicates
    run) whether a released job's held ssds are all down in Fluxion, and
    remembers every sample, before its Workflow reaches Teardown, where
    one was up."""

    def __init__(self, h: Harness, jobid: int, held: set[str]) -> None:
        self.h, self.jobid, self.held = h, jobid, held
        self.up: list[tuple[str | None, set[str]]] = []
        self.samples = 0

    def sample(self) -> None:
        p = phase(self.h, self.jobid)
        if p in TEARING_DOWN:
            return
        self.samples += 1
        up = self.held - down(self.h)
        if up:
            self.up.append((p, up))

    def until(self, cond: Callable[[], bool]) -> Callable[[], bool]:
        """A predicate for ``wait_for``: a sample, then ``cond`` (or true
        at once when a held ssd is up, to fail without waiting)."""
        def pred() -> bool:
            self.sample()
            return bool(self.up) or cond()
        return pred


def hold_applied(h: Harness, jobid: int, held: set[str]) -> bool:
    """The engine holds ``held`` for the job and Fluxion has them down."""
    return any(x["job"] == jobid and set(x["paths"]) == held and x["applied"]
               for x in h.rabbits_now().get("holds", []))


def released_in_dataout(h: Harness) -> tuple[int, set[str]]:
    """A 4-node job released after PostRun, its DataOut stalled: its id
    and the ssd vertex paths it holds."""
    fault(h, state="DataOut", severity="stall")
    jobid = h.submit(STAGED, nodes=4)
    h.wait(jobid)
    h.wait_for(lambda: phase(h, jobid) == "dataout", what="dataout")
    return jobid, held_paths(h, jobid)


def test_released_job_ends_while_dataout_runs_and_holds_its_ssds() -> None:
    with Harness(config=EARLY) as h:
        fault(h, state="DataOut", severity="stall")
        jobid = h.submit(STAGED, nodes=4)
        job = h.wait(jobid)  # INACTIVE with its Workflow still in DataOut
        assert job.exceptions == []
        assert "epilog-finish" in job.events()
        h.wait_for(lambda: phase(h, jobid) == "dataout", what="the engine in dataout")
        st = engine_job(h, jobid)
        assert st is not None and st["released"] is True and st["held_ssds"] == 2
        held = held_paths(h, jobid)
        assert held and held <= down(h), (held, down(h))
        # the next job gets the same computes meanwhile
        nxt = h.wait(h.submit(None, nodes=4))
        assert nxt.exceptions == [] and sorted(nxt.hosts) == sorted(job.hosts)
        assert phase(h, jobid) == "dataout" and held <= down(h)
        # DataOut ends: Teardown, the record, the ssds up again
        clear(h)
        h.wait_for(lambda: engine_job(h, jobid) is None, what="the Workflow gone")
        kvs = h.jm.jobs[jobid].kvs
        assert kvs["data.dws.dataout"]["state"] == "complete"
        # the jobtap plugin was told, to hold the job's dependents meanwhile
        assert h.reactor.call(lambda: list(h.jm.dataout)) == [
            ("dataout-begin", {"id": jobid}), ("dataout-end", {"id": jobid, "ok": True})]
        assert kvs["data.dws.teardown"]["state"] == "complete"
        h.wait_for(lambda: not (held & down(h)), what="the held ssds up again")
        assert cleared(h) == {}


def test_after_teardown_by_default_and_by_attribute() -> None:
    with Harness(config=EARLY) as h:
        fault(h, state="DataOut", severity="delay", seconds=0.3)
        jobid = h.submit(STAGED, nodes=1,
                         system={"dw_release_computes": "after-teardown"})
        job = h.wait(jobid)
        # ended only after Teardown: the record is there at its end
        assert job.kvs["data.dws.teardown"]["state"] == "complete"
        assert h.fluxion.calls["set_status"] == 4  # start-up only: nothing held
    with Harness() as h:
        jobid = h.submit(STAGED, nodes=1)
        job = h.wait(jobid)
        assert job.kvs["data.dws.teardown"]["state"] == "complete"


def test_a_bad_dw_release_computes_is_a_dws_create_exception() -> None:
    with Harness() as h:
        job = h.wait(h.submit(XFS, nodes=1, system={"dw_release_computes": "soon"}))
        (exc,) = job.exceptions
        assert exc["type"] == "dws-create" and exc["severity"] == 0
        assert 'dw_release_computes must be "after-unmount" or "after-teardown"' in exc["note"]


def test_failed_copy_out_after_release_is_recorded_not_raised() -> None:
    with Harness(config=EARLY) as h:
        fault(h, state="DataOut", severity="stall")
        jobid = h.submit(STAGED, nodes=1)
        h.wait(jobid)  # released: DataOut written, then the epilog ended
        fault(h, state="DataOut", severity="Fatal")
        h.emulator.controllers.clear_faults("DataOut", "stall")  # type: ignore[union-attr]
        h.wait_for(lambda: "data.dws.dataout" in h.jm.jobs[jobid].kvs, what="DataOut failed")
        assert h.job(jobid).exceptions == []  # nothing can reach an inactive job
        h.wait_for(lambda: "data.dws.teardown" in h.jm.jobs[jobid].kvs, what="Teardown")
        rec = h.jm.jobs[jobid].kvs["data.dws.dataout"]
        assert rec["state"] == "failed" and rec["error"]
        (_, end), = [d for d in h.reactor.call(lambda: list(h.jm.dataout))
                     if d[0] == "dataout-end"]
        assert end == {"id": jobid, "ok": False, "error": rec["error"]}
        assert any("owner uid" in m and "computes released" in m
                   for lvl, m in h.link.logs if lvl == "err"), h.link.logs
        assert cleared(h) == {}


def desired_state(h: Harness, name: str) -> str | None:
    """The Workflow's desiredState in the API server, None before it exists."""
    try:
        wf = h.emulator.store.get(RESOURCES["workflow"], "default", name)
    except ApiError:
        return None
    return wf["spec"]["desiredState"]  # type: ignore[no-any-return]


def dataout_answer_held(h: Harness, nodes: int) -> tuple[int, Any]:
    """A job through PostRun (stalled until the API server holds the
    answers to its Workflow's patches, DataOut's first): its id and the
    held answers' fault (``release()`` lets them go)."""
    fault(h, state="PostRun", severity="stall")
    jobid = h.submit(STAGED, nodes=nodes)
    name = f"fluxjob-{jobid}"
    h.wait_for(lambda: desired_state(h, name) == "PostRun", what="PostRun written")
    held_answer = h.emulator.api_fault(method="PATCH", path=f"/workflows/{name}$", hold=600.0)
    h.emulator.controllers.clear_faults("PostRun")  # type: ignore[union-attr]
    return jobid, held_answer


def test_copy_out_failed_before_its_patch_answered_is_the_released_jobs() -> None:
    """DataOut fails before its patch is answered (the answer held here):
    the Workflow seen in DataOut with the held ssds shows the patch landed
    (a restart would take the job up released), so the computes go back
    first and the failure is the released job's, whichever of the answer
    and the watch event comes first: no exception, the failure recorded
    for flux dws wait, the epilog ended once."""
    with Harness(config=EARLY) as h:
        fault(h, state="DataOut", severity="Fatal")
        jobid, held_answer = dataout_answer_held(h, nodes=1)
        h.wait_for(lambda: "data.dws.dataout" in h.jm.jobs[jobid].kvs,
                   what="DataOut's failure recorded")
        held_answer.release()
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert h.jm.jobs[jobid].kvs["data.dws.dataout"]["state"] == "failed"
        assert any("computes released" in m for _, m in h.link.logs)
        assert sum("epilog-finish" in e for e in job.events()) == 1
        assert cleared(h) == {}


def test_a_restart_before_the_dataout_patch_answers_ends_the_epilog() -> None:
    """The computes go back only once DataOut, with the held ssds, is on the
    Workflow: the DataOut patch is carried out but its answer held, and the
    service restarted then.  The job is still in CLEANUP (before, its epilog
    ended first, and a restart in between tore down a job whose data was
    never copied out); the new service takes the Workflow up released and
    ends the epilog once."""
    with Harness(config=EARLY) as h:
        fault(h, state="DataOut", severity="stall")
        jobid, held_answer = dataout_answer_held(h, nodes=4)
        h.wait_for(lambda: held_answer.hits >= 1, what="the DataOut patch sent")
        wf = h.emulator.store.get(RESOURCES["workflow"], "default", f"fluxjob-{jobid}")
        assert wf["spec"]["desiredState"] == "DataOut"
        assert "flux-dws.io/held-ssds" in wf["metadata"]["annotations"]
        assert h.job(jobid).state == "CLEANUP"  # its epilog waits for the answer
        h.restart_service()
        held_answer.release()
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert sum("epilog-finish" in e for e in job.events()) == 1
        assert any("released, but its epilog is active: ending it" in m
                   for _, m in h.link.logs)
        h.wait_for(lambda: phase(h, jobid) == "dataout", what="DataOut goes on")
        clear(h)
        h.wait_for(lambda: engine_job(h, jobid) is None, what="the Workflow gone")
        assert cleared(h) == {}


def test_service_restart_during_dataout_keeps_the_hold() -> None:
    with Harness(config=EARLY) as h:
        jobid, held = released_in_dataout(h)
        h.restart_service()
        watch = HoldWatch(h, jobid, held)
        h.wait_for(watch.until(lambda: phase(h, jobid) == "dataout"),
                   what="picked up in dataout")
        st = engine_job(h, jobid)
        assert st is not None and st["released"] is True
        # DataOut stays stalled until the restarted engine holds the ssds
        # again and Fluxion has them down: sampled all the while
        h.wait_for(watch.until(lambda: hold_applied(h, jobid, held)), timeout=10,
                   what="the hold applied again after the restart")
        assert watch.up == [], watch.up
        # ... and on to Teardown: not one sample with a held ssd up
        clear(h)
        h.wait_for(watch.until(lambda: engine_job(h, jobid) is None),
                   what="the Workflow gone")
        assert watch.up == [], watch.up
        assert watch.samples > 1
        h.wait_for(lambda: not (held & down(h)), what="the held ssds up again")
        assert cleared(h) == {}


def test_fluxion_restart_during_dataout_applies_the_hold_again() -> None:
    with Harness(config=EARLY) as h:
        _, held = released_in_dataout(h)
        h.reactor.call(h.fluxion.restart)  # every ssd down, as in the JGF
        # health brings the healthy rabbits' ssds up again, but not the held ones
        h.wait_for(lambda: down(h) == held, what="only the held ssds down")
        clear(h)
        h.wait_for(lambda: not down(h), what="all up after Teardown")


def test_rabbit_down_and_up_during_dataout_keeps_the_hold() -> None:
    with Harness(config=EARLY) as h:
        jobid, held = released_in_dataout(h)
        assert h.emulator.controllers is not None
        rabbit = "kind-worker2"
        ssds = set(h.fluxion.ssds[rabbit])
        others = ssds - held
        assert held & ssds and others, (held, ssds)  # one held, one free
        assert not (others & down(h))
        watch = HoldWatch(h, jobid, held)
        h.wait_for(watch.until(lambda: hold_applied(h, jobid, held)), what="the hold")
        # down: its free ssd too, not just the held one
        h.emulator.controllers.health.set_health(rabbit, status="Offline")
        h.wait_for(watch.until(lambda: ssds <= down(h)), what="all its ssds down")
        # up again: its free ssd comes back, the held one stays down
        h.emulator.controllers.health.set_health(rabbit, status="Ready")
        h.wait_for(watch.until(lambda: not (others & down(h))), what="its free ssd up")
        h.wait_for(watch.until(lambda: hold_applied(h, jobid, held)), what="still held")
        assert watch.up == [] and held <= down(h), watch.up
        clear(h)
        h.wait_for(watch.until(lambda: engine_job(h, jobid) is None),
                   what="the Workflow gone")
        assert watch.up == [], watch.up
        h.wait_for(lambda: not down(h), what="all up after Teardown")


def test_postrun_error_drains_only_who_did_not_unmount() -> None:
    with Harness(config={"postrun_timeout": 0.5}) as h:
        fault(h, kind="clientmount", compute="compute-02", state="PostRun",
              severity="stall")
        jobid = h.submit(XFS, nodes=4, runtime=0.1)
        job = h.wait(jobid)
        assert [e["type"] for e in job.exceptions if e["severity"] == 0] == ["rabbit-timeout"]
        drained = h.reactor.call(lambda: dict(h.jm.drained))
        assert list(drained) == ["compute-02"], drained
        reason = drained["compute-02"]
        assert reason.startswith("failed to unmount rabbit kind-worker2 (job f"), reason
        clear(h)
        assert cleared(h) == {}


def test_teardown_after_skips_a_released_jobs_dataout() -> None:
    # teardown_after keeps its meaning: DataOut is given up, the job (already
    # inactive) cannot take the exception, so the record says why
    with Harness(config={**EARLY, "teardown_after": 0.5}) as h:
        jobid, held = released_in_dataout(h)
        h.wait_for(lambda: engine_job(h, jobid) is None, what="the Workflow gone")
        job = h.jm.jobs[jobid]
        assert job.exceptions == []
        rec = job.kvs["data.dws.dataout"]
        assert rec["state"] == "skipped" and "teardown_after expired" in rec["error"]
        assert job.kvs["data.dws.teardown"]["state"] == "complete"
        h.wait_for(lambda: not (held & down(h)), what="the held ssds up again")
        assert any("teardown_after expired" in m for lvl, m in h.link.logs
                   if lvl == "warning"), h.link.logs
        clear(h)
        assert cleared(h) == {}
