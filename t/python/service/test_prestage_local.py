"""Node-local storage (xfs, gfs2, raw) set up and filled before the nodes
(issue 54), through the harness (kind: compute-[01-03] behind
kind-worker2, compute-04 behind kind-worker3; rzadams: 8 rabbits of 16).
The job's nodes are split evenly over chassis; its storage is set up on
those rabbits (k allocations each) and held down in (fake) Fluxion while
it waits in DEPEND; when its data is in, its jobspec asks for
chassis(c){node(k)} with a hostlist constraint naming those chassis'
computes, so its nodes come from them alone.
"""

from __future__ import annotations

from typing import Any

from t.python.service.harnesshelp import cleared, fault, held, phase, state

from flux_dws.emulator.driver import RESOURCE
from flux_dws.harness import Harness
from flux_dws.jobview import job_text
from flux_dws.libdws.jobsm import DEPENDENCY_METHOD, PRESTAGE_DEPENDENCY

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
COPY_IN = "#DW copy_in source=/lus/global/in destination=$DW_JOB_scratch/"
STAGED = [XFS, COPY_IN]
YES = {"dw_prestage": "yes"}


def events(h: Harness, jobid: int, name: str) -> list[dict[str, Any]]:
    return [ctx for _, n, ctx in h.job(jobid).eventlog if n == name]


def chassis_of(h: Harness, hosts: list[str]) -> dict[str, int]:
    """The job's nodes per rabbit."""
    out: dict[str, int] = {}
    for host in hosts:
        rabbit = h.jm.rabbit_of[host]
        out[rabbit] = out.get(rabbit, 0) + 1
    return out


def servers_counts(h: Harness, jobid: int) -> dict[str, int]:
    """The allocation count per rabbit of the job's Servers (its one set)."""
    obj = h.emulator.store.get(RESOURCE["servers"], "default", f"fluxjob-{jobid}-0")
    sets = obj["spec"]["allocationSets"]
    return {s["name"]: s["allocationCount"] for s in sets[0]["storage"]}


def prestaged_on(h: Harness, jobid: int, nodes: int) -> dict[str, int]:
    """The job waits in DataIn with no node; its storage is set up on whole
    chassis: the Servers' counts per rabbit, an even split of its nodes."""
    h.wait_for(lambda: phase(h, jobid) == "datain", what="DataIn before the nodes")
    assert state(h, jobid) == "DEPEND" and not events(h, jobid, "alloc")
    counts = servers_counts(h, jobid)
    assert sum(counts.values()) == nodes and len(set(counts.values())) == 1, counts
    assert held(h, jobid), "its ssd is held in Fluxion"
    view = h.ask("dws.job", payload={"jobid": jobid})
    assert view["prestage"]["chassis"]["counts"] == counts, view
    return counts


def test_a_node_local_job_gets_the_nodes_of_the_chassis_its_storage_is_on() -> None:
    with Harness(config={"prestage": "always"}) as h:
        fault(h, state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=2)
        counts = prestaged_on(h, jobid, 2)
        assert len(counts) == 1  # 2 nodes: one chassis of 2
        text = job_text(h.ask("dws.job", payload={"jobid": jobid}))
        assert "on kind-worker2 (2 nodes): its nodes come from compute-[01-03] alone" in text, \
            text
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions == [], job.exceptions
        assert chassis_of(h, job.hosts) == counts, (job.hosts, counts)
        update = events(h, jobid, "jobspec-update")[-1]
        assert update["resources"][0]["type"] == "chassis" and update["resources"][0]["count"] == 1
        assert "hostlist" in str(update["attributes.system.constraints"])
        removed = [e for e in events(h, jobid, "dependency-remove")
                   if e.get("description") == PRESTAGE_DEPENDENCY]
        assert removed, "let go by the service"
        assert cleared(h) == {}


def test_two_chassis_of_sixteen() -> None:
    """32 nodes on rzadams (16 per rabbit): two chassis of 16."""
    with Harness(system="rzadams", config={"prestage": "always"}, ssds_per_rabbit=36) as h:
        fault(h, state="DataIn", severity="stall")
        jobid = h.submit([XFS, "#DW copy_in source=/p/lslide/in destination=$DW_JOB_scratch/"],
                         nodes=32)
        counts = prestaged_on(h, jobid, 32)
        assert sorted(counts.values()) == [16, 16], counts
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions == [] and chassis_of(h, job.hosts) == counts
        assert cleared(h) == {}


def test_nodes_that_cannot_be_split_evenly_are_not_prestaged() -> None:
    """kind's chassis hold 3 and 1 computes: 4 nodes cannot be 2 of 2.
    Asked for, pre-staging is refused with the reason; so is a job whose
    nodes need more ssd vertices (one each) than a rabbit has."""
    with Harness() as h:
        jobid = h.submit(STAGED, nodes=4, system=YES)
        job = h.wait(jobid)
        assert job.exceptions, "refused"
        assert "cannot be split evenly over the 2 chassis" in job.exceptions[0]["note"], \
            job.exceptions
        jobid = h.submit(STAGED, nodes=3, system=YES)  # 2 vertices per rabbit here
        job = h.wait(jobid)
        assert job.exceptions and "0 rabbits of the Fluxion graph could hold that" in \
            job.exceptions[0]["note"], job.exceptions
        assert cleared(h) == {}


def test_it_waits_for_its_chassis_while_other_nodes_are_free() -> None:
    """Its chassis busy, another free: it waits for its own, then runs
    there."""
    with Harness(config={"prestage": "always"}, ssds_per_rabbit=4) as h:
        fault(h, state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=3)  # kind-worker2's 3 computes, a vertex each
        counts = prestaged_on(h, jobid, 3)
        assert counts == {"kind-worker2": 3}
        busy = h.submit(None, nodes=1, runtime=3600)
        h.wait_for(lambda: state(h, busy) == "RUN", what="a plain job running")
        if chassis_of(h, h.job(busy).hosts) != {"kind-worker2": 1}:
            other = h.submit(None, nodes=1, runtime=3600)  # compute-04 was taken first
            h.wait_for(lambda: state(h, other) == "RUN", what="a second plain job running")
            h.finish(busy)
            h.wait(busy)
            busy = other
        assert chassis_of(h, h.job(busy).hosts) == {"kind-worker2": 1}
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait_for(lambda: state(h, jobid) == "SCHED", what="let go to the scheduler")
        assert not events(h, jobid, "alloc")  # compute-04 is free: not its chassis
        h.finish(busy)
        job = h.wait(jobid)
        assert job.exceptions == [] and chassis_of(h, job.hosts) == counts
        assert cleared(h) == {}


def test_datain_failure_and_cancel_end_it_before_any_node() -> None:
    with Harness(config={"prestage": "always"}) as h:
        fault(h, kind="datamovement", state="DataIn", severity="Fatal", message="disk died",
              once=True)
        failed = h.submit(STAGED, nodes=2)
        job = h.wait(failed)
        assert job.exceptions and "disk died" in job.exceptions[0]["note"], job.exceptions
        assert not events(h, failed, "alloc")
        fault(h, state="DataIn", severity="stall")
        cancelled = h.submit(STAGED, nodes=2)
        prestaged_on(h, cancelled, 2)
        h.cancel(cancelled)
        job = h.wait(cancelled)
        assert [e["type"] for e in job.exceptions] == ["cancel"]
        assert not events(h, cancelled, "alloc")
        assert cleared(h) == {}


def test_a_service_restart_keeps_its_chassis() -> None:
    with Harness(config={"prestage": "always"}) as h:
        fault(h, state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=2)
        counts = prestaged_on(h, jobid, 2)
        paths = held(h, jobid)
        h.restart_service()
        h.wait_for(lambda: phase(h, jobid) == "datain", what="taken up again in DataIn")
        h.wait_for(lambda: held(h, jobid) == paths, what="the same ssd held again")
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions == [] and chassis_of(h, job.hosts) == counts
        assert cleared(h) == {}


def test_a_plugin_that_ignores_the_pin_gets_a_clear_error() -> None:
    """A dws jobtap plugin older than the service lets the job go without
    holding it to its chassis: nodes of another chassis are refused with
    the reason, not left to fail their mounts."""
    with Harness(config={"prestage": "always"}) as h:
        fault(h, state="DataIn", severity="stall")
        real_rpc = h.link.rpc

        def old_plugin(topic: str, payload: Any, *args: object, **kw: object) -> None:
            if topic.endswith(f".{DEPENDENCY_METHOD}") and isinstance(payload, dict):
                payload = {k: v for k, v in payload.items()
                           if k not in ("resources", "constraint")}
            real_rpc(topic, payload, *args, **kw)  # type: ignore[arg-type]

        h.link.rpc = old_plugin  # type: ignore[method-assign]
        jobid = h.submit(STAGED, nodes=2)
        assert prestaged_on(h, jobid, 2) == {"kind-worker2": 2}
        # two of kind-worker2's computes busy: unpinned, it gets compute-04
        busy = h.submit(None, nodes=2, runtime=3600)
        h.wait_for(lambda: state(h, busy) == "RUN", what="a plain job running")
        assert "compute-04" not in h.job(busy).hosts  # first fit: compute-0[1-3]
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions, "refused"
        assert "not those its storage was set up for" in job.exceptions[0]["note"], \
            job.exceptions
        h.finish(busy)
        assert cleared(h) == {}


def test_its_rabbit_going_down_before_its_nodes_fails_it_with_no_node_spent() -> None:
    """Node-local storage serves its own chassis alone: a rabbit of it going
    down while the job has no node fails the job (nothing can be given up
    within a tolerance), and its storage is torn down."""
    with Harness(config={"prestage": "always"}) as h:
        fault(h, state="DataIn", severity="stall")
        jobid = h.submit(STAGED, nodes=2)
        (rabbit,) = prestaged_on(h, jobid, 2)
        h.emulator.controllers.health.set_health(rabbit, status="Offline")  # type: ignore[union-attr]
        job = h.wait(jobid)
        assert job.exceptions and f"rabbit {rabbit} went down while the job's node-local" in \
            job.exceptions[0]["note"], job.exceptions
        assert not events(h, jobid, "alloc")
        h.emulator.controllers.health.set_health(rabbit, status="Ready")  # type: ignore[union-attr]
        assert cleared(h) == {}


def test_under_the_site_default_a_job_that_cannot_be_placed_is_told_why() -> None:
    """prestage = "always": a job whose nodes cannot be split goes the usual
    way, and its view says why it was not pre-staged."""
    with Harness(config={"prestage": "always"}) as h:
        jobid = h.submit(STAGED, nodes=4, runtime=3600)
        h.wait_for(lambda: state(h, jobid) == "RUN", what="nodes first")
        view = h.ask("dws.job", payload={"jobid": jobid})
        assert "cannot be split evenly" in view["prestage_not"], view
        assert "not pre-staged: its 4 nodes cannot be split evenly" in job_text(view)
        h.wait_event(jobid, "start")
        h.finish(jobid)
        assert h.wait(jobid).exceptions == []
        assert cleared(h) == {}


def test_gfs2_and_raw_are_prestaged_as_xfs_is() -> None:
    """gfs2 with a copy_in; raw alone (DWS moves no data into raw storage)."""
    with Harness(config={"prestage": "always"}) as h:
        jobs = [h.submit(["#DW jobdw type=gfs2 capacity=10GiB name=local",
                          "#DW copy_in source=/lus/global/in destination=$DW_JOB_local/"],
                         nodes=2),
                h.submit(["#DW jobdw type=raw capacity=10GiB name=local"], nodes=2)]
        for jobid in jobs:
            job = h.wait(jobid)
            assert job.exceptions == [], job.exceptions
            assert chassis_of(h, job.hosts) == {"kind-worker2": 2}
            assert any(e.get("description") == PRESTAGE_DEPENDENCY
                       for e in events(h, jobid, "dependency-remove"))
        assert cleared(h) == {}
