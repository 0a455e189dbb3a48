"""A pre-staged node-local job whose nodes do not come within
rabbit.prestage_node_wait (issue 54): it is let go of its chassis (the
jobtap plugin's prestage-unpin: the usual ssd resources again, the pin's
hostlist out of its constraints), its storage is torn down, and its
Workflow is created again: Setup and DataIn with its nodes, as for a job
that was never pre-staged.  Through the harness (kind: compute-[01-03]
behind kind-worker2, compute-04 behind kind-worker3).
"""

from __future__ import annotations

from typing import Any

import pytest
from t.python.service.harnesshelp import cleared, fault, phase, state
from t.python.service.test_prestage_local import STAGED, chassis_of, events, prestaged_on

from flux_dws.emulator.driver import RESOURCE
from flux_dws.harness import Harness
from flux_dws.jobview import job_text
from flux_dws.libdws.jobsm import PRESTAGE_UNPIN_METHOD
from flux_dws.service.core import Service

WAIT = 0.5  # rabbit.prestage_node_wait, seconds
GIVEN_UP = "flux-dws.io/prestage-given-up"


def harness(**config: Any) -> Harness:
    return Harness(config={"prestage": "always", "prestage_node_wait": WAIT, **config},
                   ssds_per_rabbit=4)


def busy_on_its_chassis(h: Harness) -> int:
    """A plain job on one of kind-worker2's computes (the first fit may
    take compute-04: a second one then, the first let go)."""
    busy = h.submit(None, nodes=1, runtime=3600)
    h.wait_for(lambda: state(h, busy) == "RUN", what="a plain job running")
    if chassis_of(h, h.job(busy).hosts) != {"kind-worker2": 1}:
        other = h.submit(None, nodes=1, runtime=3600)
        h.wait_for(lambda: state(h, other) == "RUN", what="a second plain job running")
        h.finish(busy)
        h.wait(busy)
        busy = other
    assert chassis_of(h, h.job(busy).hosts) == {"kind-worker2": 1}
    return busy


def staged_behind_a_busy_chassis(h: Harness, runtime: float = 0.0
                                 ) -> tuple[int, dict[str, int], int]:
    """A 3-node xfs job pre-staged on kind-worker2 (its DataIn stalled
    until the test clears the faults) and a plain job on one of that
    chassis' computes: (its id, its nodes per rabbit, the plain job's id)."""
    fault(h, state="DataIn", severity="stall")
    jobid = h.submit(STAGED, nodes=3, runtime=runtime)
    counts = prestaged_on(h, jobid, 3)
    assert counts == {"kind-worker2": 3}
    return jobid, counts, busy_on_its_chassis(h)


def unpin_answer_lost(h: Harness) -> list[str]:
    """The jobtap plugin applies the first prestage-unpin, and its answer
    is lost (the old service goes before it comes): the list says when it
    was sent."""
    real_rpc = h.link.rpc
    unanswered: list[str] = []

    def unanswering(topic: str, payload: Any, nodeid: int, callback: Any) -> None:
        if topic.endswith("." + PRESTAGE_UNPIN_METHOD) and not unanswered:
            unanswered.append(topic)
            callback = None
        real_rpc(topic, payload, nodeid, callback)

    h.link.rpc = unanswering  # type: ignore[method-assign]
    return unanswered


def logged(h: Harness, text: str) -> bool:
    return any(text in m for _, m in h.link.logs)


def test_nodes_that_do_not_come_in_time_get_their_storage_the_usual_way() -> None:
    with harness() as h:
        jobid, _, busy = staged_behind_a_busy_chassis(h, runtime=3600)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_event(jobid, "start")
        text = job_text(h.ask("dws.job", payload={"jobid": jobid}))
        assert "not pre-staged: given up: its nodes did not come within" in text, text
        assert phase(h, jobid) == "running"
        h.finish(jobid)
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        # 2 of kind-worker2's and compute-04: not the chassis it was held to
        assert chassis_of(h, job.hosts) == {"kind-worker2": 2, "kind-worker3": 1}, job.hosts
        _, pin, unpin = events(h, jobid, "jobspec-update")  # resource-update, pin, unpin
        assert pin["resources"][0]["type"] == "chassis"
        assert unpin["resources"][0]["type"] != "chassis"
        assert '"ssd"' in str(unpin["resources"]).replace("'", '"'), unpin
        assert "hostlist" in str(pin["attributes.system.constraints"])
        assert "hostlist" not in str(unpin.get("attributes.system.constraints", {}))
        assert logged(h, "did not come within 0.5 s of its data being in on compute-[01-03]"
                      " (rabbit.prestage_node_wait)"), h.link.logs
        assert logged(h, "creating its Workflow again")
        h.finish(busy)
        assert cleared(h) == {}


def test_nodes_that_come_in_time_keep_their_storage() -> None:
    with harness(prestage_node_wait=3600) as h:
        jobid, counts, busy = staged_behind_a_busy_chassis(h)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: state(h, jobid) == "SCHED", what="let go to the scheduler")
        text = job_text(h.ask("dws.job", payload={"jobid": jobid}))
        assert "given up after 1h00m without its nodes" in text, text
        h.finish(busy)
        job = h.wait(jobid)
        assert job.exceptions == [] and chassis_of(h, job.hosts) == counts
        assert len(events(h, jobid, "jobspec-update")) == 2  # resource-update, pin
        assert not logged(h, "letting it go of its chassis")
        assert cleared(h) == {}


def test_an_older_plugin_keeps_it_waiting_for_its_chassis() -> None:
    """A jobtap plugin without prestage-unpin answers ENOSYS: the storage
    set up on its chassis is kept and the job runs there when they free."""
    with harness() as h:
        fault(h, state="DataIn", severity="stall")
        real_rpc = h.link.rpc

        def old_plugin(topic: str, payload: Any, *args: object, **kw: object) -> None:
            if topic.endswith("." + PRESTAGE_UNPIN_METHOD):
                topic = topic + "-unknown"  # the job manager: no such service
            real_rpc(topic, payload, *args, **kw)  # type: ignore[arg-type]

        h.link.rpc = old_plugin  # type: ignore[method-assign]
        jobid = h.submit(STAGED, nodes=3)
        counts = prestaged_on(h, jobid, 3)
        busy = busy_on_its_chassis(h)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: logged(h, "cannot let it go of its chassis"),
                   what="the plugin's refusal")
        assert phase(h, jobid) == "datain-done" and state(h, jobid) == "SCHED"
        h.finish(busy)
        job = h.wait(jobid)
        assert job.exceptions == [] and chassis_of(h, job.hosts) == counts
        assert cleared(h) == {}


def test_cancel_while_its_storage_is_torn_down() -> None:
    """Its new nodes came (its prolog waits for the old storage's Teardown):
    a cancel ends it, nothing is created again, nothing leaks."""
    with harness() as h:
        jobid, _, busy = staged_behind_a_busy_chassis(h)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        fault(h, state="Teardown", severity="stall")  # its old storage stays in Teardown
        h.wait_for(lambda: phase(h, jobid) == "teardown", what="its storage given up")
        h.cancel(jobid)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert [e["type"] for e in job.exceptions] == ["cancel"], job.exceptions
        h.finish(busy)
        assert cleared(h) == {}


def test_a_service_restart_while_its_storage_is_torn_down() -> None:
    with harness() as h:
        jobid, _, busy = staged_behind_a_busy_chassis(h)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        fault(h, state="Teardown", severity="stall")
        h.wait_for(lambda: phase(h, jobid) == "teardown", what="its storage given up")
        h.restart_service()
        h.wait_for(lambda: phase(h, jobid) == "teardown", what="taken up in Teardown")
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert chassis_of(h, job.hosts) == {"kind-worker2": 2, "kind-worker3": 1}
        h.finish(busy)
        assert cleared(h) == {}


def test_a_service_restart_before_the_plugin_answers() -> None:
    """Given up (written on its Workflow) but the unpin lost with the old
    service: the new one takes the Workflow up and asks again."""
    with harness() as h:
        fault(h, state="DataIn", severity="stall")
        real_rpc = h.link.rpc
        lost: list[str] = []

        def losing(topic: str, payload: Any, *args: object, **kw: object) -> None:
            if topic.endswith("." + PRESTAGE_UNPIN_METHOD) and not lost:
                lost.append(topic)  # the old service goes before it is sent
                return
            real_rpc(topic, payload, *args, **kw)  # type: ignore[arg-type]

        h.link.rpc = losing  # type: ignore[method-assign]
        jobid = h.submit(STAGED, nodes=3)
        prestaged_on(h, jobid, 3)
        busy = busy_on_its_chassis(h)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: bool(lost), what="the unpin lost")
        wf = h.emulator.store.get(RESOURCE["workflow"], "default", f"fluxjob-{jobid}")
        assert "did not come within" in wf["metadata"]["annotations"][GIVEN_UP]
        h.restart_service()
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert chassis_of(h, job.hosts) == {"kind-worker2": 2, "kind-worker3": 1}
        h.finish(busy)
        assert cleared(h) == {}


def test_a_restart_after_the_plugin_let_it_go_before_its_nodes_are_read() -> None:
    """The plugin let it go (the unpin applied) but its answer was lost with
    the old service, and the job got nodes off its chassis.  The new service
    asks again: "in state RUN: it has its nodes".  Its hosts, read from R
    after that answer (held here until it came), decide: not those of its
    chassis, the storage is torn down and set up again for them (before, the
    storage was kept and the job failed at its Computes)."""
    with harness() as h:
        jobid, _, busy = staged_behind_a_busy_chassis(h)
        real_info = h.link.job_info
        unanswered = unpin_answer_lost(h)
        held: list[Any] = []
        holding_r = [True]

        def holding(job: int, want_r: bool, callback: Any) -> None:
            if job == jobid and want_r and holding_r[0]:
                held.append(lambda: real_info(job, want_r, callback))
                return
            real_info(job, want_r, callback)

        h.link.job_info = holding  # type: ignore[method-assign]
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: state(h, jobid) == "RUN", what="its nodes, the unpin applied")
        assert unanswered and chassis_of(h, h.job(jobid).hosts) == {"kind-worker2": 2,
                                                                    "kind-worker3": 1}
        h.restart_service()
        h.wait_for(lambda: logged(h, "it has its nodes"), what="the unpin asked again, refused")
        h.wait_for(lambda: bool(held), what="its R read")
        holding_r[0] = False
        for read in held:
            h.reactor.call(read)
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert logged(h, "are not those of its chassis: its pre-staged storage is torn down")
        h.finish(busy)
        assert cleared(h) == {}


def test_its_nodes_decide_once_the_rabbit_map_comes_after_a_restart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As above, and the restarted service's SystemConfiguration held back
    until the unpin's refusal is logged and the job's R is read: its nodes
    are known, the map is not, so nothing is decided (no storage kept on a
    guess); the map comes, and the job is looked at: not its chassis, torn
    down and set up again for its nodes."""
    with harness() as h:
        jobid, _, busy = staged_behind_a_busy_chassis(h)
        real_info, real_feed = h.link.job_info, Service.feed
        unanswered = unpin_answer_lost(h)
        maps: list[tuple[Service, dict[str, Any]]] = []
        holding_map = [False]
        r_read: list[int] = []

        def reading(job: int, want_r: bool, callback: Any) -> None:
            def answered(*args: Any, **kw: Any) -> None:
                callback(*args, **kw)
                if job == jobid and want_r:
                    r_read.append(job)  # the service has taken its R

            real_info(job, want_r, answered)

        def feeding(svc: Service, event: dict[str, Any], t_in: float | None = None) -> None:
            if holding_map[0] and event.get("kind") == "SystemConfiguration":
                maps.append((svc, event))
                return
            real_feed(svc, event, t_in)

        h.link.job_info = reading  # type: ignore[method-assign]
        monkeypatch.setattr(Service, "feed", feeding)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: state(h, jobid) == "RUN", what="its nodes, the unpin applied")
        assert unanswered
        holding_map[0] = True
        h.restart_service()
        h.wait_for(lambda: logged(h, "it has its nodes"), what="the unpin asked again, refused")
        h.wait_for(lambda: bool(r_read), what="its R read")
        h.wait_for(lambda: bool(maps), what="the new service's SystemConfiguration, held")
        h.reactor.call(lambda: None)  # what the R's answer posted is taken first
        assert not logged(h, "are not those of its chassis")
        assert not logged(h, "are those of its chassis")
        holding_map[0] = False
        for svc, event in maps:
            h.reactor.call(lambda svc=svc, event=event: real_feed(svc, event))
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert logged(h, "are not those of its chassis: its pre-staged storage is torn down")
        h.finish(busy)
        assert cleared(h) == {}


def test_its_nodes_on_its_chassis_before_the_unpin_keep_its_storage() -> None:
    """Given up, but its nodes came on its chassis before the plugin saw the
    unpin (held here until the job runs): "it has its nodes", and they are
    those its storage was set up for: kept, not torn down."""
    with harness() as h:
        jobid, counts, busy = staged_behind_a_busy_chassis(h)
        real_rpc = h.link.rpc
        held: list[Any] = []

        def holding(topic: str, payload: Any, nodeid: int, callback: Any) -> None:
            if topic.endswith("." + PRESTAGE_UNPIN_METHOD) and not held:
                held.append(lambda: real_rpc(topic, payload, nodeid, callback))
                return
            real_rpc(topic, payload, nodeid, callback)

        h.link.rpc = holding  # type: ignore[method-assign]
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: bool(held), what="the unpin sent")
        h.finish(busy)
        h.wait_for(lambda: state(h, jobid) == "RUN", what="its nodes, on its chassis")
        h.reactor.call(held[0])
        job = h.wait(jobid)
        assert job.exceptions == [] and chassis_of(h, job.hosts) == counts
        assert logged(h, "are those of its chassis: its pre-staged storage is kept")
        assert not logged(h, "creating its Workflow again")
        assert len(events(h, jobid, "jobspec-update")) == 2  # resource-update, pin
        assert cleared(h) == {}


def test_its_view_while_given_up_and_after() -> None:
    with harness() as h:
        jobid, _, busy = staged_behind_a_busy_chassis(h, runtime=3600)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        fault(h, state="Teardown", severity="stall")
        h.wait_for(lambda: phase(h, jobid) == "teardown", what="its storage given up")
        view = h.ask("dws.job", payload={"jobid": jobid})
        assert "did not come within" in view["prestage"]["given_up"], view
        text = job_text(view)
        assert "pre-staging given up: its nodes did not come within 0.5 s" in text, text
        assert "torn down and set up again the usual way when its nodes come" in text
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_event(jobid, "start")
        wf = h.emulator.store.get(RESOURCE["workflow"], "default", f"fluxjob-{jobid}")
        assert GIVEN_UP in wf["metadata"]["annotations"]  # its new Workflow says so too
        assert "flux-dws.io/prestage" not in wf["metadata"]["annotations"]
        h.finish(jobid)
        h.finish(busy)
        assert cleared(h) == {}


def test_a_restart_while_its_new_workflow_waits_for_nodes() -> None:
    """Given up and created again, it still waits for nodes: a restarted
    service takes the new Workflow up as one of the usual way (its
    resources sent, nothing weighed or pre-staged again)."""
    with harness() as h:
        jobid, _, busy = staged_behind_a_busy_chassis(h)
        other = h.submit(None, nodes=1, runtime=3600)  # compute-04: 2 nodes free of 4
        h.wait_for(lambda: state(h, other) == "RUN", what="compute-04 taken")
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: logged(h, "creating its Workflow again, to wait for its nodes"),
                   what="created again, without nodes")
        h.wait_for(lambda: phase(h, jobid) == "proposed", what="its new Proposal done")
        h.restart_service()
        h.wait_for(lambda: phase(h, jobid) == "proposed", what="taken up in Proposal")
        h.finish(other)
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert len(events(h, jobid, "jobspec-update")) == 3  # resource-update, pin, unpin
        assert sum("pre-staged: Setup and DataIn" in m for _, m in h.link.logs) == 1
        h.finish(busy)
        assert cleared(h) == {}


def test_a_give_up_kubernetes_refuses_to_record_keeps_its_storage() -> None:
    """The patch that records the give-up is refused (403): nothing is asked of
    the plugin; the job keeps its storage and runs on its chassis."""
    with harness(prestage_node_wait=2) as h:
        jobid, counts, busy = staged_behind_a_busy_chassis(h)
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: state(h, jobid) == "SCHED", what="let go to the scheduler")
        h.emulator.api_fault(403, method="PATCH", path="/workflows/", count=1)
        h.wait_for(lambda: logged(h, "cannot record that its pre-staging is given up"),
                   what="the refused patch logged")
        h.finish(busy)
        job = h.wait(jobid)
        assert job.exceptions == [] and chassis_of(h, job.hosts) == counts
        assert len(events(h, jobid, "jobspec-update")) == 2  # resource-update, pin
        assert cleared(h) == {}
