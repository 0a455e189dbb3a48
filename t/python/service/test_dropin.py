"""What the reference keeps of a job, end to end through the harness:
rabbit_datamovements (save_datamovements) and rabbit_container_log."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from typing import Any

import pytest
from t.python.service.harnesshelp import gone, settled

from flux_dws.harness import Harness
from flux_dws.harness.link import Reply
from flux_dws.libdws import engine
from flux_dws.libdws.jobsm import SERVICES
from flux_dws.service import core
from flux_dws.service.link import Request

GFS2 = "#DW jobdw type=gfs2 capacity=10GiB name=shared"
COPY_IN = "#DW copy_in source=/lus/global/in destination=$DW_JOB_shared/"
COPY_OUT = "#DW copy_out source=$DW_JOB_shared/out destination=/lus/global/out"
MPI = ["#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2 requires=user-container-auth",
       "#DW container name=mpic profile=example-mpi DW_JOB_foo_local_storage=my-gfs2"]


@pytest.fixture
def h() -> Iterator[Harness]:
    with Harness(config={"save_datamovements": 2}) as harness:
        yield harness
        assert harness.reactor.errors == []


def test_rabbit_datamovements_keeps_the_last_n(h: Harness) -> None:
    # two computes behind one rabbit, gfs2: one NnfDataMovement per
    # allocation and directive, copy_in's at DataIn, copy_out's at DataOut
    jobid = h.submit([GFS2, COPY_IN, COPY_OUT], nodes=2)
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    dms = job.kvs_get("rabbit_datamovements")
    assert job.links["rabbit_datamovements"] == "data.dws.datamovements"
    assert isinstance(dms, list) and len(dms) == 2
    for dm in dms:
        assert dm["kind"] == "NnfDataMovement"
        assert dm["metadata"]["labels"]["dataworkflowservices.github.io/workflow.name"] == \
            f"fluxjob-{jobid}"
        assert dm["status"]["status"] == "Success"
    # the most recent ones: copy_out's (made at DataOut), newest first
    stamps = [dm["metadata"]["creationTimestamp"] for dm in dms]
    assert stamps == sorted(stamps, reverse=True)
    assert all(dm["spec"]["destination"]["path"].startswith("/lus/global/out") for dm in dms)
    gone(h, jobid)
    assert settled(h) == {}


def test_no_datamovements_saved_by_default() -> None:
    with Harness() as h:
        jobid = h.submit([GFS2, COPY_IN], nodes=1)
        job = h.wait(jobid)
        assert job.exceptions == []
        assert "rabbit_datamovements" not in job.links
        assert "rabbit_container_log" not in job.links


def test_rabbit_container_log_is_the_launchers(h: Harness) -> None:
    jobid = h.submit(MPI, nodes=2)
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    assert job.links["rabbit_container_log"] == "data.dws.container_log"
    text = job.kvs_get("rabbit_container_log")
    lines = text.splitlines()
    assert lines[0].startswith("flux-dws emulator: container example-mpi"
                               " (ghcr.io/nearnodeflash/nnf-mfu:latest) started in pod"
                               f" fluxjob-{jobid}-launcher-")
    assert lines[1] == "+ mpirun dcmp $(DW_JOB_foo_local_storage)/0 $(DW_JOB_foo_local_storage)/1"
    assert lines[-1] == "flux-dws emulator: container example-mpi exited with status 0"
    assert job.kvs_get("rabbit_datamovements") == []  # no data movement: an empty list
    gone(h, jobid)
    assert settled(h) == {}


def test_container_log_of_a_cancelled_job(h: Harness) -> None:
    """Cancelled while it runs: the log (of a container still running) is
    read before Teardown deletes the Pods."""
    jobid = h.submit(MPI, nodes=1, runtime=3600)
    h.wait(jobid, "RUN")
    h.wait_event(jobid, "start")
    h.cancel(jobid)
    job = h.wait(jobid)
    lines = job.kvs_get("rabbit_container_log").splitlines()
    assert lines[0].startswith("flux-dws emulator: container example-mpi")
    gone(h, jobid)


# --- dws.watch_test: a barrier for tests and admins --------------------------

R3 = "kind-worker3"  # compute-04's rabbit


def test_watch_test_answers_the_owner_an_empty_object(h: Harness) -> None:
    assert h.ask("dws.watch_test") == {}
    assert h.ask("dws.watch_test") == {}  # again: nothing pending, at once
    guest = h.ask("dws.watch_test", userid=h.owner + 1)
    assert guest["errnum"] == errno.EPERM


# --- who may ask: the service's own list ---------------------------------------


def test_the_method_lists_come_from_the_engine_table() -> None:
    assert set(engine.METHODS) <= set(core.METHODS)
    assert set(core.GUEST_METHODS) == set(engine.GUEST_METHODS) == {
        "rabbits", "jobs", "job", "persistent-list", "persistent-share", "persistent-unshare"}
    assert {"create", "setup", "post_run", "teardown", "abort", "status", "watch_test",
            "config-reload"} <= set(core.METHODS)
    assert SERVICES == ("resource-update", "prolog-remove", "epilog-remove", "prestage-remove",
                        "prestage-unpin")


def test_a_guest_is_refused_every_method_but_the_guests(h: Harness) -> None:
    guest = h.owner + 1
    for method in core.METHODS:
        answer = h.ask(f"dws.{method}", userid=guest)
        if method in core.GUEST_METHODS:
            assert "errnum" not in answer, (method, answer)
        else:
            assert answer.get("errnum") == errno.EPERM, (method, answer)
    assert h.workflows() == []


def test_the_service_refuses_a_guest_what_the_broker_let_through(h: Harness) -> None:
    # as if the broker had let every request in: the service's own methods
    # and the engine's (by the sender's userid, whatever the payload says)
    guest = h.owner + 1
    got: dict[str, tuple[bool, int]] = {}
    served = [m for m in core.METHODS if f"dws.{m}" != core.CONFIG_RELOAD]  # the link's
    for method in served:
        def cb(ok: bool, errnum: int, errstr: str, body: Any, m: str = method) -> None:
            got[m] = (ok, errnum)
        req = Request(f"dws.{method}", {"jobid": 9, "userid": h.owner, "resources": [],
                                        "dw_directives": "#DW jobdw type=xfs capacity=1GiB "
                                                         "name=x"},
                      guest, Reply(cb, h.link, h.link.generation))
        h.reactor.call(lambda r=req: h.service._request(r))
    h.wait_for(lambda: len(got) == len(served), what="every answer")
    # the guest methods answer (dws.job of a job with no Workflow: ENOENT)
    assert {m: a for m, a in got.items() if a != (False, errno.EPERM)} == \
        {**{m: (True, 0) for m in core.GUEST_METHODS}, "job": (False, errno.ENOENT)}
    assert h.workflows() == []


def test_the_job_manager_serves_the_plugin_services_alone(h: Harness) -> None:
    got: dict[str, tuple[bool, int]] = {}
    for method in (*SERVICES, "depend", "bogus"):
        def answer(ok: bool, errnum: int, errstr: str, body: Any, m: str = method) -> None:
            got[m] = (ok, errnum)
        h.reactor.call(lambda m=method, a=answer: h.jm.rpc(f"job-manager.dws.{m}",
                                                             {"id": 1}, a))
    h.wait_for(lambda: len(got) == len(SERVICES) + 2, what="every answer")
    for method in SERVICES:  # no such job: answered by the plugin's words
        assert got[method] == (False, errno.ENOENT), (method, got[method])
    assert got["depend"] == got["bogus"] == (False, errno.ENOSYS)


def test_watch_test_follows_a_rabbit_change_through_fluxion(h: Harness) -> None:
    h.wait_for(lambda: h.fluxion.rabbit_up(R3), what="R3 up")
    h.emulator.controllers.health.set_health(R3, status="Offline", links={"compute-04": "Offline"})
    # no waiting: once answered, the Storage event has been seen, the health
    # batch flushed, and Fluxion and the resource module have answered
    assert h.ask("dws.watch_test") == {}
    assert not h.fluxion.rabbit_up(R3)
    assert h.fluxion.hosts_with("badrabbit") == {"compute-04"}
    assert "compute-04" in h.reactor.call(lambda: h.jm.resources.drained())
    view = h.rabbits()
    assert [r["up"] for r in view["rabbits"]] == [True, False]
    h.emulator.controllers.health.set_health(R3, reset=True)
    assert h.ask("dws.watch_test") == {}
    assert h.fluxion.rabbit_up(R3)
    assert "compute-04" not in h.reactor.call(lambda: h.jm.resources.drained())


def test_watch_test_after_a_workflow_vanished(h: Harness) -> None:
    jobid = h.submit("#DW jobdw type=xfs capacity=10GiB name=scratch", nodes=1, runtime=3600)
    h.wait_event(jobid, "start")
    assert h.emulator.controllers is not None
    h.emulator.controllers.vanish("default", f"fluxjob-{jobid}")
    assert h.ask("dws.watch_test") == {}
    notes = [e["note"] for e in h.job(jobid).exceptions]
    assert any("was deleted outside of Flux" in n for n in notes), notes
    h.wait(jobid)


def test_watch_test_when_a_list_fails_says_why(h: Harness) -> None:
    # the watches' own first lists done, so the faults meet the barrier's
    assert h.ask("dws.watch_test") == {}
    h.emulator.api_fault(500, method="GET", path=r"\?limit=", count=3)
    got = h.ask("dws.watch_test")
    assert got["errnum"] == errno.EIO
    assert got["error"].startswith("dws.watch_test: cannot list "), got
    h.emulator.clear_api_faults()
    assert h.ask("dws.watch_test") == {}
