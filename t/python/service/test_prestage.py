"""Storage set up and filled before the nodes (issue 46), through the
harness: a pre-staged job waits in DEPEND on dws-prestage while its
Workflow goes through Setup and DataIn with its Lustre held in (fake)
Fluxion; it gets nodes only then.  Failures before the nodes end the job
without nodes; restarts keep the hold.
"""

from __future__ import annotations

import errno
from typing import Any

from t.python.service.harnesshelp import cleared, fault, held, phase, state

from flux_dws.dwsim.systems import load_system
from flux_dws.emulator.driver import RESOURCE
from flux_dws.harness import Harness
from flux_dws.libdws.jobsm import DEPENDENCY_METHOD, PRESTAGE_DEPENDENCY

LUSTRE = "#DW jobdw type=lustre capacity=10GiB name=lus"
COPY_IN = "#DW copy_in source=/lus/global/in destination=$DW_JOB_lus/"
STAGED = [LUSTRE, COPY_IN]
YES = {"dw_prestage": "yes"}


def engine_job(h: Harness, jobid: int) -> dict[str, Any] | None:
    for j in h.status_now().get("jobs", []):
        if j["id"] == jobid:
            return j  # type: ignore[no-any-return]
    return None


def deps(h: Harness, jobid: int) -> set[str]:
    return h.reactor.call(lambda: set(h.jm.jobs[jobid].deps))


def down(h: Harness) -> set[str]:
    return {p for p, st in h.fluxion.status.items() if st == "down"}


def prestage_release(jobid: int) -> tuple[str, dict[str, Any]]:
    """What the service sends to let a pre-staged job go: the one
    dependency method of the waits it owns (as for dws-limit)."""
    return (f"job-manager.dws.{DEPENDENCY_METHOD}",
            {"id": jobid, "name": PRESTAGE_DEPENDENCY, "add": False})


def drop_prestage_releases(h: Harness, count: int = 1) -> list[tuple[str, Any]]:
    """The service's first `count` removals of dws-prestage are lost on
    their way (a reload, a restart); the list it returns gets each
    (topic, payload) then."""
    real_rpc = h.link.rpc
    dropped: list[tuple[str, Any]] = []

    def drop(topic: str, payload: Any, *args: object, **kw: object) -> None:
        if (len(dropped) < count and isinstance(payload, dict)
                and payload.get("name") == PRESTAGE_DEPENDENCY):
            dropped.append((topic, payload))
            return
        real_rpc(topic, payload, *args, **kw)  # type: ignore[arg-type]

    h.link.rpc = drop  # type: ignore[method-assign]
    return dropped


def test_prestaged_job_waits_in_depend_through_datain_then_runs() -> None:
    with Harness() as h:
        fault(h, state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=2, system=YES)
        h.wait_for(lambda: phase(h, jobid) == "datain", what="the Workflow in DataIn")
        # in DEPEND on our dependency alone, no nodes, its ssd held down
        assert state(h, jobid) == "DEPEND"
        assert deps(h, jobid) == {"dws-prestage"}
        assert h.job(jobid).hosts == []
        h.wait_for(lambda: bool(held(h, jobid)), what="the hold applied")
        paths = held(h, jobid)
        assert paths <= down(h)
        view = engine_job(h, jobid)
        assert view is not None
        # the Workflow carries the choice and the ssd (a restart picks it up)
        wf = [o for o in h.emulator.store.list_objects(RESOURCE["workflow"], None)
              if o["metadata"]["name"] == f"fluxjob-{jobid}"]
        ann = wf[0]["metadata"]["annotations"]
        assert "flux-dws.io/prestage" in ann and "held" in ann["flux-dws.io/prestage"]
        # DataIn completes: the job is let go, gets its nodes and runs
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions == []
        assert len(job.hosts) == 2
        events = job.events()
        assert events.index("dependency-remove") < events.index("alloc")
        # the jobspec asks for nodes alone: its storage never was the scheduler's
        assert "ssd" not in str(job.jobspec["resources"])
        h.wait_for(lambda: engine_job(h, jobid) is None, what="the Workflow gone")
        h.wait_for(lambda: not (paths & down(h)), what="its ssd up again")
        assert cleared(h) == {}


def test_datain_failure_ends_the_job_before_any_node() -> None:
    with Harness() as h:
        fault(h, state="DataIn", severity="Fatal", message="copy failed")
        jobid = h.submit(STAGED, nodes=2, system=YES)
        job = h.wait(jobid)
        assert job.hosts == []
        assert any("copy failed" in (e.get("note") or "") for e in job.exceptions)
        assert "alloc" not in job.events()
        assert cleared(h) == {}
        h.wait_for(lambda: not h.rabbits_now().get("holds"), what="no hold left")


def test_cancel_while_prestaging_tears_down_and_frees_the_ssd() -> None:
    with Harness() as h:
        fault(h, state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: bool(held(h, jobid)), what="the hold applied")
        paths = held(h, jobid)
        h.cancel(jobid)
        job = h.wait(jobid)
        assert job.hosts == [] and "alloc" not in job.events()
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        assert cleared(h) == {}
        h.wait_for(lambda: not (paths & down(h)), what="its ssd up again")


def test_node_local_storage_with_lustre_refuses_the_opt_in_with_the_reason() -> None:
    """Node-local storage follows the job's chassis, Lustre the rabbits with
    room: a job with both is not pre-staged (node-local alone is:
    test_prestage_local.py)."""
    with Harness() as h:
        jobid = h.submit(["#DW jobdw type=xfs capacity=10GiB name=xfs", LUSTRE], nodes=1,
                         system=YES)
        job = h.wait(jobid)
        notes = " ".join(e.get("note") or "" for e in job.exceptions)
        assert "dw_prestage=yes" in notes and "its node-local storage and its Lustre" in notes, \
            notes
        assert cleared(h) == {}


def test_a_bad_dw_prestage_is_refused_at_create() -> None:
    with Harness() as h:
        jobid = h.submit(STAGED, nodes=1, system={"dw_prestage": "maybe"})
        job = h.wait(jobid)
        notes = " ".join(e.get("note") or "" for e in job.exceptions)
        assert 'dw_prestage must be "yes" or "no", got "maybe"' in notes, notes


def test_site_default_copy_in_prestages_only_jobs_with_copy_in() -> None:
    with Harness(config={"prestage": "copy-in"}) as h:
        plain = h.wait(h.submit([LUSTRE], nodes=1))
        assert plain.exceptions == [] and "dws-prestage" not in str(plain.eventlog)
        staged = h.wait(h.submit(STAGED, nodes=1))
        assert staged.exceptions == [] and "dws-prestage" in str(staged.eventlog)
        opted_out = h.wait(h.submit(STAGED, nodes=1, system={"dw_prestage": "no"}))
        assert "dws-prestage" not in str(opted_out.eventlog)
        assert cleared(h) == {}


def test_prestage_max_jobs_sends_the_rest_the_usual_way() -> None:
    with Harness(config={"prestage": "always", "prestage_max_jobs": 1}) as h:
        fault(h, state="DataIn", severity="stall")
        first = h.submit(STAGED, nodes=1)
        h.wait_for(lambda: phase(h, first) == "datain", what="the first in DataIn")
        second = h.submit(STAGED, nodes=1)
        # not pre-staged: it gets its nodes and waits in its prolog instead
        h.wait_for(lambda: state(h, second) == "RUN", what="the second allocated")
        assert state(h, first) == "DEPEND"
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        assert h.wait(first).exceptions == [] and h.wait(second).exceptions == []
        assert cleared(h) == {}


def every_rabbit_down(h: Harness) -> list[str]:
    """Every rabbit's Storage Offline, and its ssd down in Fluxion: the
    rabbits' names, sorted."""
    rabbits = sorted(h.fluxion.ssds)
    for r in rabbits:
        h.emulator.controllers.health.set_health(r, status="Offline")  # type: ignore[union-attr]
    h.wait_for(lambda: not any(h.fluxion.rabbit_up(r) for r in rabbits),
               what="every rabbit down in Fluxion")
    return rabbits


def test_service_restart_while_prestaging_keeps_the_hold_and_goes_on() -> None:
    with Harness() as h:
        fault(h, state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: bool(held(h, jobid)), what="the hold applied")
        paths = held(h, jobid)
        h.stop_service()
        h.start_service()
        h.wait_for(lambda: held(h, jobid) == paths, what="the same hold after the restart")
        assert state(h, jobid) == "DEPEND"
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions == [] and len(job.hosts) == 1
        assert cleared(h) == {}


def test_a_held_vertex_a_job_had_is_picked_again() -> None:
    with Harness() as h:
        fault(h, state="DataIn", severity="stall")
        # Fluxion gave every vertex of the first rabbit to some job already
        first = sorted(h.fluxion.ssds)[0]
        h.fluxion.allocated = set(h.fluxion.ssds[first])
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: phase(h, jobid) == "datain", what="DataIn")
        paths = held(h, jobid)
        assert paths and not (paths & h.fluxion.allocated)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        assert h.wait(jobid).exceptions == []
        assert cleared(h) == {}


def test_a_rabbit_that_never_allocates_fails_the_job_by_setup_timeout() -> None:
    """The rules of today's Setup: Lustre cannot lose a rabbit, so its
    Setup timeout fails the job -- here before it ever had a node."""
    with Harness(config={"setup_timeout": 2}) as h:
        for rabbit in h.fluxion.ssds:
            fault(h, kind="allocation", rabbit=rabbit, state="Setup", severity="stall")
        jobid = h.submit(STAGED, nodes=1, system=YES)
        job = h.wait(jobid)
        assert job.hosts == [] and "alloc" not in job.events()
        assert [e["type"] for e in job.exceptions] == ["dws-timeout"], job.exceptions
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        assert cleared(h) == {}
        h.wait_for(lambda: not h.rabbits_now().get("holds"), what="no hold left")


def test_a_failed_find_is_asked_again_and_the_job_goes_on() -> None:
    """Fluxion cannot say whether the held ssd is free: the hold is picked
    again after PRESTAGE_RETRY (10 s), never trusted unverified."""
    with Harness() as h:
        fault(h, state="DataIn", severity="stall")
        h.fluxion.allocated_find_fails = 1
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: phase(h, jobid) == "datain", timeout=60, what="DataIn, after a retry")
        assert h.fluxion.allocated_find_fails == 0
        assert bool(held(h, jobid))
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        assert h.wait(jobid).exceptions == []
        assert cleared(h) == {}


def test_a_prestage_removal_lost_to_a_jobtap_reload_is_sent_again() -> None:
    """The plugin was reloaded while the service's removal of dws-prestage
    was on its way (lost with no plugin loaded): the job sat in DEPEND on
    dws-prestage.  The reloaded plugin's dws.create again brings the
    resources again, then the removal again."""
    with Harness() as h:
        dropped = drop_prestage_releases(h)
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: bool(dropped), what="the first dws-prestage removal (dropped)")
        assert dropped == [prestage_release(jobid)]
        view = engine_job(h, jobid)
        assert view is not None and view["phase"] == "datain-done", view
        assert state(h, jobid) == "DEPEND" and deps(h, jobid) == {"dws-prestage"}
        h.reload_jobtap(jobid)
        job = h.wait(jobid)
        assert job.exceptions == [] and len(job.hosts) == 1
        events = job.events()
        assert events.count("dependency-remove") >= 2  # dws-create, dws-prestage
        assert events.index("dependency-remove") < events.index("alloc")
        assert cleared(h) == {}


def test_an_older_services_prestage_remove_still_lets_the_job_go() -> None:
    """A flux-dws service older than the plugin removes dws-prestage with
    job-manager.dws.prestage-remove {id}: the plugin still serves it.  The
    dependency method refuses dws-prestage added (the plugin adds it with
    the resource-update, before dws-create goes)."""
    with Harness() as h:
        dropped = drop_prestage_releases(h, count=1000)  # as if it never sent one
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: bool(dropped), what="the service's dws-prestage removal (dropped)")
        assert state(h, jobid) == "DEPEND" and deps(h, jobid) == {"dws-prestage"}
        answers: list[tuple[str, bool, int, str]] = []

        def send(topic: str, payload: dict[str, Any]) -> None:
            def answer(ok: bool, errnum: int, errstr: str, _: Any) -> None:
                answers.append((topic, ok, errnum, errstr))
            h.reactor.call(lambda: h.jm.rpc(topic, payload, answer))

        send(f"job-manager.dws.{DEPENDENCY_METHOD}",
             {"id": jobid, "name": PRESTAGE_DEPENDENCY, "add": True})
        h.wait_for(lambda: len(answers) == 1, what="the addition answered")
        assert answers[0] == (f"job-manager.dws.{DEPENDENCY_METHOD}", False, errno.EINVAL,
                              "dws.dependency: dws-prestage is added by the plugin with the"
                              " resource-update ('prestage': true), not by this method")
        assert state(h, jobid) == "DEPEND" and deps(h, jobid) == {"dws-prestage"}
        send("job-manager.dws.prestage-remove", {"id": jobid})
        h.wait_for(lambda: len(answers) == 2, what="prestage-remove answered")
        assert answers[1] == ("job-manager.dws.prestage-remove", True, 0, "")
        job = h.wait(jobid)
        assert job.exceptions == [] and len(job.hosts) == 1
        events = job.events()
        assert events.count("dependency-remove") == 2  # dws-create, dws-prestage
        assert events.index("dependency-remove") < events.index("alloc")
        assert cleared(h) == {}


def test_a_job_waiting_for_room_goes_on_when_a_rabbit_comes_back() -> None:
    """Every rabbit down: the job waits for room, with the reason shown.
    A rabbit back (its Storage Ready, then Fluxion's word that its ssd is
    up) lets it go on at once: its retry timer is kept from firing here,
    so only the room path can have picked."""
    with Harness() as h:
        real_timer_start = h.link.timer_start
        swallowed: list[str] = []

        def no_retry(key: str, after: float, fn: Any) -> None:
            if key.startswith("prestage:"):
                swallowed.append(key)
                return
            real_timer_start(key, after, fn)

        h.link.timer_start = no_retry  # type: ignore[method-assign]
        rabbits = every_rabbit_down(h)
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: bool(swallowed), what="the job waiting for room (its retry timer)")
        assert set(swallowed) == {f"prestage:{jobid}"}
        assert any("waits for its rabbit storage: 16 GiB of rabbit ssd wanted, 0 GiB free" in m
                   for _, m in h.link.logs), h.link.logs
        assert held(h, jobid) == set() and state(h, jobid) == "DEPEND"
        h.emulator.controllers.health.set_health(rabbits[0], status="Ready")  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions == [] and len(job.hosts) == 1
        assert set(swallowed) == {f"prestage:{jobid}"}  # never fired: room picked
        assert cleared(h) == {}


def test_waiting_jobs_get_room_in_submission_order_and_never_share_a_vertex() -> None:
    """One ssd vertex per rabbit, every rabbit down, two jobs waiting.  A
    rabbit back: the job submitted first holds its vertex, the other keeps
    waiting (a vertex picked for a job whose hold is not applied yet is
    not free).  The second rabbit back: the other job holds that one."""
    with Harness(ssds_per_rabbit=1) as h:
        fault(h, state="DataIn", severity="stall")
        rabbits = every_rabbit_down(h)
        first = h.submit(STAGED, nodes=1, system=YES)
        second = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: sum("waits for its rabbit storage" in m for _, m in h.link.logs) == 2,
                   what="both jobs waiting for room")
        h.emulator.controllers.health.set_health(rabbits[0], status="Ready")  # type: ignore[union-attr]
        h.wait_for(lambda: phase(h, first) == "datain", what="the first job in DataIn")
        assert held(h, first) == set(h.fluxion.ssds[rabbits[0]])
        holds = h.rabbits_now().get("holds", [])
        assert [x["job"] for x in holds] == [first], holds
        assert phase(h, second) == "proposed" and state(h, second) == "DEPEND"
        h.emulator.controllers.health.set_health(rabbits[1], status="Ready")  # type: ignore[union-attr]
        h.wait_for(lambda: phase(h, second) == "datain", what="the second job in DataIn")
        assert held(h, second) == set(h.fluxion.ssds[rabbits[1]])
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        for jobid in (first, second):
            assert h.wait(jobid).exceptions == []
        assert cleared(h) == {}


def test_a_prestage_removal_lost_to_a_service_restart_is_sent_again() -> None:
    """The service went away with its dws-prestage removal unsent: the next one
    takes the Workflow up in DataIn, done, and lets the job go."""
    with Harness() as h:
        dropped = drop_prestage_releases(h)
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: bool(dropped), what="the first dws-prestage removal (dropped)")
        assert dropped == [prestage_release(jobid)]
        assert state(h, jobid) == "DEPEND" and deps(h, jobid) == {"dws-prestage"}
        h.restart_service()
        job = h.wait(jobid)
        assert job.exceptions == [] and len(job.hosts) == 1
        assert cleared(h) == {}


def test_a_restart_between_a_prestaged_create_and_its_answer() -> None:
    """The Workflow of a job that asked for pre-staging is made and the
    service restarts before the create's answer: the next one takes it up,
    pre-stages it (one Workflow) and the job runs."""
    with Harness() as h:
        held_answer = h.emulator.api_fault(method="POST", path=r"/workflows(\?|$)", hold=30.0)
        jobid = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: held_answer.hits == 1 and any(
            w["metadata"]["name"] == f"fluxjob-{jobid}" for w in h.workflows()), 30,
            "the Workflow made, its answer held")
        h.reactor.call(h.link.unserve)
        held_answer.release()
        h.restart_service()
        job = h.wait(jobid)
        assert job.exceptions == [] and len(job.hosts) == 1
        assert job.memo.get("rabbit_workflow") == f"fluxjob-{jobid}"
        assert "dws-prestage" in [c.get("description") for _, n, c in job.eventlog
                                  if n == "dependency-add"]
        assert cleared(h) == {}


def test_a_pick_leaves_room_for_a_node_local_job_ahead_of_it() -> None:
    """One ssd vertex per rabbit; every node busy.  An xfs job queued
    first needs one vertex with its nodes: the pre-staged Lustre jobs
    behind it may hold only the other, so the second of them waits with
    the reason.  Were both held, the xfs job would fit nowhere once the
    nodes came back, Fluxion's first-come queue would wait on it, and the
    pre-staged jobs behind it would never get their nodes."""
    with Harness(ssds_per_rabbit=1) as h:
        fault(h, state="DataIn", severity="stall")
        nodes = len(h.system.computes)
        busy = h.submit(None, nodes=nodes, runtime=3600)
        h.wait_for(lambda: state(h, busy) == "RUN", what="every node busy")
        xfs = h.submit("#DW jobdw type=xfs capacity=10GiB name=scratch", nodes=1)
        h.wait_for(lambda: state(h, xfs) == "SCHED", what="the xfs job queued")
        first = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: phase(h, first) == "datain", what="the first pre-staged in DataIn")
        second = h.submit(STAGED, nodes=1, system=YES)
        h.wait_for(lambda: any("kept for the jobs ahead of it" in m for _, m in h.link.logs),
                   what="the second waiting for room")
        assert held(h, second) == set()
        view = next(j for j in h.ask("dws.jobs", payload={"all_users": True})["jobs"]
                    if j["id"] == second)
        assert "kept for the jobs ahead" in view["prestage"]["waiting"], view
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.finish(busy)
        for jobid in (xfs, first, second):
            assert h.wait(jobid).exceptions == []
        assert cleared(h) == {}


def test_prestage_max_gib_counts_the_whole_vertices_held() -> None:
    """A 10 GiB Lustre holds a whole vertex (far more than 10 GiB): the
    bound counts what is held, so a second job does not fit under a bound
    of one vertex and a few GiB, and goes the usual way."""
    # the harness's system, one vertex per rabbit: each its rabbit's capacity
    vertex = min(r.capacity >> 30 for r in load_system("kind").rabbits)
    with Harness(ssds_per_rabbit=1,
                 config={"prestage": "always", "prestage_max_gib": vertex + 5}) as h:
        fault(h, state="DataIn", severity="stall")
        first = h.submit(STAGED, nodes=1)
        h.wait_for(lambda: phase(h, first) == "datain", what="the first in DataIn")
        second = h.submit(STAGED, nodes=1)
        h.wait_for(lambda: state(h, second) == "RUN", what="the second allocated")
        assert any(f"1 jobs hold {vertex} GiB ahead of their nodes" in m
                   for _, m in h.link.logs), h.link.logs
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        assert h.wait(first).exceptions == [] and h.wait(second).exceptions == []
        assert cleared(h) == {}
