"""The dws service's fault paths through the harness.

Every test ends with the job INACTIVE, excepted with a note saying why
(or completed), and no Workflow or child object left behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from t.python.service.harnesshelp import cleared, fault, settled

from flux_dws.emulator.driver import RESOURCE
from flux_dws.harness import Harness
from flux_dws.libdws.explain import EVENT as EXPLAIN_EVENT
from flux_dws.libdws.explain import KVS_KEY as EXPLAIN_KEY
from flux_dws.libdws.explain import explain

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
GFS2 = "#DW jobdw type=gfs2 capacity=10GiB name=scratch"
#: DataIn and DataOut have drivers only with data movement
STAGED = [XFS, "#DW copy_in source=/lus/global/in destination=$DW_JOB_scratch/",
          "#DW copy_out source=$DW_JOB_scratch/ destination=/lus/global/out"]


def note_is(job: Any, exc: dict[str, Any], original: str) -> bool:
    """The note is the engine's text exactly (the reference's); the plain
    sentence libdws' explain table gives it is beside it: an eventlog entry
    of its own after the exception, and the job's KVS record."""
    sentence = explain(original)
    want = {"type": exc["type"], "note": original, "explanation": sentence}
    names = [name for _, name, _ in job.eventlog]
    posted = [ctx for _, name, ctx in job.eventlog if name == EXPLAIN_EVENT]
    kept = job.kvs.get(EXPLAIN_KEY) or {}
    return exc["note"] == original and sentence is not None and posted == [want] \
        and names.index(EXPLAIN_EVENT) > names.index("exception") \
        and {k: kept.get(k) for k in want} == want


def fatal(job_exceptions: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in job_exceptions if e["severity"] == 0]


@pytest.fixture
def h() -> Iterator[Harness]:
    with Harness() as harness:
        yield harness
        assert harness.reactor.errors == []


# --- cancel in every state ---------------------------------------------------


@pytest.mark.parametrize("where", ["depend", "sched", "prolog", "run", "epilog"])
def test_cancel_in_every_state(h: Harness, where: str) -> None:
    if where == "depend":
        fault(h, state="Proposal", severity="stall")
        jobid = h.submit(XFS, nodes=1)
        h.wait_event(jobid, "memo")  # the Workflow exists
    elif where == "sched":
        blocker = h.submit(None, nodes=4, runtime=60)
        h.wait_event(blocker, "start")
        jobid = h.submit(XFS, nodes=1)
        h.wait_event(jobid, "dependency-remove")
        assert h.job(jobid).state == "SCHED"
    elif where == "prolog":
        fault(h, state="Setup", severity="stall")
        jobid = h.submit(XFS, nodes=1)
        h.wait_event(jobid, "prolog-start")
    elif where == "run":
        jobid = h.submit(XFS, nodes=1, runtime=60)
        h.wait_event(jobid, "start")
    else:
        fault(h, state="DataOut", severity="stall")
        jobid = h.submit(STAGED, nodes=1)
        h.wait_event(jobid, "epilog-start")
    h.cancel(jobid)
    job = h.wait(jobid)
    assert job.exceptions[0]["type"] == "cancel"
    if where == "sched":
        h.cancel(blocker)
    assert cleared(h) == {}


def test_cancel_twice_and_before_the_workflow_exists(h: Harness) -> None:
    # The API server answers the Workflow's create 429 (retry after 2 s), so
    # the job is cancelled, twice, while its Workflow does not exist yet:
    # dws.post_run (run_started false) reaches the service with the create
    # still in flight, and the Workflow must go to Teardown once it exists.
    refused = h.emulator.api_fault(429, method="POST", path=r"/workflows(\?|$)",
                                   retry_after=2.0)
    jobid = h.submit(XFS, nodes=1)
    assert h.emulator.api_faults.wait(lambda f: refused.hits == 1, 10)
    assert not _workflow_exists(h, jobid)
    h.cancel(jobid)
    h.cancel(jobid)
    h.wait_event(jobid, "epilog-start")
    assert not _workflow_exists(h, jobid)  # the epilog began before the Workflow
    job = h.wait(jobid)
    assert [e["type"] for e in fatal(job.exceptions)] == ["cancel", "cancel"]
    assert job.events().count("epilog-start") == 1
    assert "start" not in job.events()
    # the Workflow was made after all (the retried create), then torn down
    assert job.memo.get("rabbit_workflow") == f"fluxjob-{jobid}"
    assert settled(h) == {}


def _workflow_exists(h: Harness, jobid: int) -> bool:
    return any(o["metadata"]["name"] == f"fluxjob-{jobid}"
               for o in h.emulator.store.list_objects(RESOURCE["workflow"], None))


# --- DWS errors and TransientCondition ----------------------------------------


@pytest.mark.parametrize("state", ["Proposal", "Setup", "DataIn", "PreRun", "PostRun",
                                   "DataOut"])
def test_workflow_error_in_each_state(h: Harness, state: str) -> None:
    fault(h, state=state, severity="Fatal", message=f"disk died in {state}")
    jobid = h.submit(STAGED, nodes=1)
    job = h.wait(jobid)
    (exc,) = [e for e in job.exceptions if e["type"] == "exception"]
    assert exc["severity"] == 0
    assert exc["note"].startswith("DWS/Rabbit interactions failed: workflow hit an error:")
    assert f"disk died in {state}" in exc["note"]
    assert cleared(h) == {}


def test_transient_condition_too_long() -> None:
    with Harness(config={"tc_timeout": 0.3}) as h:
        fault(h, state="DataIn", severity="Major", message="flaky link")
        jobid = h.submit(STAGED, nodes=1)
        job = h.wait(jobid)
        (exc,) = fatal(job.exceptions)
        assert "TransientCondition for more than 0.3 s" in exc["note"]
        assert "flaky link" in exc["note"]
        assert cleared(h) == {}


def test_transient_condition_that_clears_is_forgiven() -> None:
    with Harness(config={"tc_timeout": 30}) as h:
        fault(h, state="DataIn", severity="Major", message="blip", once=True)
        jobid = h.submit(STAGED, nodes=1)
        job = h.wait(jobid)
        assert job.exceptions == []
        assert settled(h) == {}


# --- timeouts and the failure tolerance ------------------------------------------


def test_setup_timeout_fails_the_job() -> None:
    with Harness(config={"setup_timeout": 0.3}) as h:
        fault(h, state="Setup", severity="stall")
        jobid = h.submit(XFS, nodes=2, tolerance=1)
        job = h.wait(jobid)
        (exc,) = fatal(job.exceptions)
        assert exc["type"] == "dws-timeout"
        assert note_is(job, exc, "File system creation took too long")
        assert cleared(h) == {}


def test_setup_stall_within_the_tolerance_runs() -> None:
    """Setup never finishes, the job tolerates losing its one compute: the
    compute is given up, DWS goes on without it (forceReady), the job runs
    and ends cleanly (issue 33.3: it stayed in its prolog for ever)."""
    with Harness(config={"setup_timeout": 0.3}) as h:
        fault(h, state="Setup", severity="stall")
        jobid = h.submit(XFS, nodes=1, tolerance=1)
        job = h.wait(jobid)
        assert [(e["type"], e["severity"]) for e in job.exceptions] == [
            ("dws-node-failure", 1)]
        assert "start" in job.events()
        finish = [c for _, n, c in job.eventlog if n == "epilog-finish"]
        assert finish == [{"description": "dws-epilog", "status": 0}]
        assert cleared(h) == {}


def test_late_rabbit_only_its_computes_are_given_up() -> None:
    """kind-worker3's allocation never gets ready: compute-04, behind it, is
    given up; compute-[01-03] mount the file system and the job runs."""
    with Harness(config={"setup_timeout": 0.3}) as h:
        fault(h, kind="allocation", rabbit="kind-worker3", severity="stall")
        jobid = h.submit(XFS, nodes=4, tolerance=1, runtime=60)
        h.wait_event(jobid, "start")
        mounted = sorted(cm["metadata"]["namespace"] for cm in h.emulator.store.list_objects(
            RESOURCE["clientmount"], None) if (cm["spec"].get("mounts") or []))
        assert mounted == ["compute-01", "compute-02", "compute-03"]
        h.cancel(jobid)
        job = h.wait(jobid)
        first = job.exceptions[0]
        assert (first["type"], first["severity"], first["note"]) == (
            "dws-node-failure", 1, "compute-04")
        assert job.env is not None and "DW_JOB_scratch" in job.env
        assert cleared(h) == {}


def test_forced_setup_refused_fails_the_job() -> None:
    """The forceReady patch is refused (the Workflow would never finish
    Setup): the job fails at once and its Workflow is torn down, instead
    of waiting in its prolog for ever."""
    with Harness(config={"setup_timeout": 1.0}) as h:
        fault(h, state="Setup", severity="stall")
        jobid = h.submit(XFS, nodes=1, tolerance=1)
        name = f"fluxjob-{jobid}"

        def in_setup() -> bool:
            return any(o["metadata"]["name"] == name and o["spec"]["desiredState"] == "Setup"
                       for o in h.emulator.store.list_objects(RESOURCE["workflow"], None))

        h.wait_for(in_setup, what="Setup asked")
        refused = h.emulator.api_fault(422, method="PATCH", path=rf"/workflows/{name}(\?|$)",
                                       message="forceReady refused")
        job = h.wait(jobid)
        assert refused.hits == 1
        assert [(e["type"], e["severity"], e["note"]) for e in job.exceptions] == [
            ("dws-node-failure", 1, "compute-01"),
            ("dws-timeout", 0, "File system creation took too long: DWS refused forceReady"
                               " after giving up compute-01: forceReady refused")]
        assert note_is(job, job.exceptions[1], job.exceptions[1]["note"])
        assert "start" not in job.events()
        assert cleared(h) == {}


@pytest.mark.parametrize("stall", [False, True])
def test_tiny_setup_timeout_within_the_tolerance_runs_the_job(stall: bool) -> None:
    """flux-coral2's own test: a 1-node job tolerating 1 lost node, with
    setup_timeout = 0.0001.  The timer fires once, mid-Setup (storage
    creation takes 0.3 s in the "fast" latency model) or before DWS even
    entered it: the node is given up, forceReady asked, and the job runs
    and ends cleanly; no second timeout of Setup, even when the nnf
    drivers never finish Setup (stall)."""
    with Harness(latency="fast", config={"setup_timeout": 0.0001}) as h:
        if stall:
            fault(h, state="Setup", severity="stall")
        jobid = h.submit(XFS, nodes=1, tolerance=1)
        job = h.wait(jobid)
        assert [(e["type"], e["severity"], e["note"]) for e in job.exceptions] == [
            ("dws-node-failure", 1, "compute-01")]
        assert "start" in job.events()
        assert cleared(h) == {}


def test_prerun_timeout_within_the_tolerance_drops_the_node() -> None:
    with Harness(config={"prerun_timeout": 0.3}) as h:
        fault(h, kind="clientmount", compute="compute-02", severity="stall")
        jobid = h.submit(GFS2, nodes=3, tolerance=1)
        job = h.wait(jobid)
        assert [(e["type"], e["severity"], e["note"]) for e in job.exceptions] == [
            ("dws-node-failure", 1, "compute-02")]
        assert "start" in job.events()
        assert cleared(h) == {}


def test_prerun_timeout_over_the_tolerance_fails_the_job() -> None:
    with Harness(config={"prerun_timeout": 0.3}) as h:
        fault(h, kind="clientmount", compute="compute-02", severity="stall")
        fault(h, kind="clientmount", compute="compute-03", severity="stall")
        jobid = h.submit(GFS2, nodes=3, tolerance=1)
        job = h.wait(jobid)
        (exc,) = fatal(job.exceptions)
        assert exc["type"] == "dws-timeout"
        assert note_is(job, exc, "timed out waiting for mounts")
        assert "start" not in job.events()
        assert cleared(h) == {}


def test_postrun_timeout_drains_and_tears_down() -> None:
    with Harness(config={"postrun_timeout": 0.3}) as h:
        fault(h, state="PostRun", severity="stall")
        jobid = h.submit(XFS, nodes=1)
        job = h.wait(jobid)
        (exc,) = fatal(job.exceptions)
        assert exc["type"] == "rabbit-timeout"
        assert note_is(job, exc, "unmounts timed out, skipping data movement")
        assert cleared(h) == {}


def test_teardown_after_skips_data_movement() -> None:
    with Harness(config={"teardown_after": 0.3}) as h:
        fault(h, state="DataOut", severity="stall")
        jobid = h.submit(STAGED, nodes=1)
        job = h.wait(jobid)
        assert [(e["type"], e["severity"]) for e in job.exceptions] == [
            ("teardown-timeout", 1)]
        assert cleared(h) == {}


def test_epilog_timeout_aborts() -> None:
    with Harness(epilog_timeout=0.3) as h:
        fault(h, state="PostRun", severity="stall")
        jobid = h.submit(XFS, nodes=1)
        job = h.wait(jobid)
        assert job.exceptions[0]["type"] == "dws-epilog-timeout"
        finish = [c for _, n, c in job.eventlog if n == "epilog-finish"]
        assert finish == [{"description": "dws-epilog", "status": 1}]
        assert cleared(h) == {}


# --- the service itself ------------------------------------------------------------


def test_service_absent_gives_the_hint(h: Harness) -> None:
    h.stop_service()
    jobid = h.submit(XFS, nodes=1)
    job = h.wait(jobid)
    assert job.exceptions[0]["type"] == "dws-create"
    assert "is the flux-coral2-dws service loaded?" in job.exceptions[0]["note"]


@pytest.mark.parametrize("stop_at", ["dependency-add", "alloc", "prolog-start", "start",
                                     "epilog-start"])
def test_service_restart_mid_job(h: Harness, stop_at: str) -> None:
    fault(h, state="DataIn", severity="delay", seconds=0.3)
    fault(h, state="DataOut", severity="delay", seconds=0.3)
    jobid = h.submit(STAGED, nodes=1, runtime=0.3)
    h.wait_event(jobid, stop_at)
    h.restart_service()
    job = h.wait(jobid)
    assert fatal(job.exceptions) == []
    assert job.env is not None and "DW_JOB_scratch" in job.env
    assert cleared(h) == {}


def test_lost_create_is_recovered_after_restart(h: Harness) -> None:
    h.stop_service()
    # a service that takes the request and dies before answering
    h.reactor.call(lambda: h.link.serve("dws", lambda req: None))
    jobid = h.submit(XFS, nodes=1)
    h.wait_event(jobid, "dependency-add")
    h.restart_service()
    job = h.wait(jobid)
    assert job.exceptions == [] and job.env is not None
    assert settled(h) == {}


def test_workflow_deleted_while_waiting_is_created_again(h: Harness) -> None:
    blocker = h.submit(None, nodes=4, runtime=60)
    h.wait_event(blocker, "start")
    jobid = h.submit(XFS, nodes=1)
    h.wait_event(jobid, "dependency-remove")
    h.emulator.controllers.vanish("default", f"fluxjob-{jobid}")  # type: ignore[union-attr]
    h.cancel(blocker)
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    assert job.env is not None
    assert settled(h) == {}


def test_workflow_deleted_while_running(h: Harness) -> None:
    jobid = h.submit(XFS, nodes=1, runtime=60)
    h.wait_event(jobid, "start")
    h.emulator.controllers.vanish("default", f"fluxjob-{jobid}")  # type: ignore[union-attr]
    job = h.wait(jobid)
    (exc,) = fatal(job.exceptions)
    assert "was deleted outside of Flux" in exc["note"]
    assert settled(h) == {}


# --- bad requests ------------------------------------------------------------------


@pytest.mark.parametrize("topic,payload,message", [
    ("dws.create", {}, "jobid must be a non-negative integer"),
    ("dws.create", {"jobid": "x"}, "jobid must be a non-negative integer"),
    ("dws.create", {"jobid": 1}, "userid must be a non-negative integer"),
    ("dws.create", {"jobid": 1, "userid": 0, "resources": [], "dw_directives": "#DW jobdw",
                    "failure_tolerance": -2}, "dw_failure_tolerance must be a positive integer"),
    ("dws.create", {"jobid": 1, "userid": 0, "resources": 3, "dw_directives": "x"},
     "resources must be the jobspec resources"),
    ("dws.create", {"jobid": 1, "userid": 0, "resources": []}, "dw_directives is missing"),
    ("dws.create", {"jobid": 1, "userid": 0, "resources": [], "dw_directives": 7},
     "Malformed #DW directives"),
    ("dws.create", {"jobid": 1, "userid": 0, "resources": [], "dw_directives": ""},
     "no #DW directive found"),
    ("dws.setup", {"jobid": 1}, "R must be an object"),
    ("dws.setup", {"jobid": 1, "R": {}}, "R has no execution.nodelist"),
    ("dws.setup", {"jobid": 1, "R": {"execution": {"nodelist": ["a[1-"]}}}, "nodelist[0]"),
    ("dws.post_run", {"jobid": 1}, "run_started must be a boolean"),
    ("dws.teardown", {"jobid": -1}, "jobid must be a non-negative integer"),
    ("dws.abort", [], "the payload must be a JSON object"),
    ("dws.create", None, "the payload must be a JSON object"),
])
def test_malformed_requests_are_refused(h: Harness, topic: str, payload: object,
                                        message: str) -> None:
    import threading

    box: dict[str, object] = {}
    done = threading.Event()

    def cb(ok: bool, errnum: int, errstr: str, body: object) -> None:
        box.update(ok=ok, errstr=errstr, body=body)
        done.set()

    h.reactor.call(lambda: h.link.request(topic, payload, h.owner, cb))
    assert done.wait(10)
    body = box["body"]
    assert isinstance(body, dict) and body["success"] is False
    assert message in body["errstr"]
    # and the service keeps serving
    jobid = h.submit(XFS, nodes=1)
    assert h.wait(jobid).exceptions == []


def _blackhole(h: Harness) -> None:
    """The service takes requests and dies before answering any."""
    h.reactor.call(lambda: h.link.serve("dws", lambda req: None))


def test_lost_setup_is_recovered_after_restart(h: Harness) -> None:
    blocker = h.submit(None, nodes=4, runtime=60)
    h.wait_event(blocker, "start")
    jobid = h.submit(XFS, nodes=1)
    h.wait_event(jobid, "dependency-remove")
    _blackhole(h)
    h.cancel(blocker)
    h.wait_event(jobid, "prolog-start")
    h.restart_service()
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    assert job.env is not None
    assert settled(h) == {}


def test_lost_post_run_is_recovered_after_restart(h: Harness) -> None:
    jobid = h.submit(XFS, nodes=1, runtime=0.2)
    h.wait_event(jobid, "start")
    _blackhole(h)
    h.wait_event(jobid, "epilog-start")
    h.restart_service()
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    assert settled(h) == {}


def _cancelled_with_no_service(h: Harness) -> int:
    """A running rabbit job cancelled while no service is loaded, in its epilog."""
    jobid = h.submit(XFS, nodes=1, runtime=60)
    h.wait_event(jobid, "start")
    h.stop_service()
    h.cancel(jobid)
    h.wait_event(jobid, "epilog-start")
    return jobid


def test_epilog_waits_for_a_service_being_reloaded(h: Harness) -> None:
    # a job that finishes while no service runs (its epilog's dws.post_run
    # answered ENOSYS) waits in its epilog; the next service carries it on
    jobid = _cancelled_with_no_service(h)
    waits = f"job {jobid}: no dws service was loaded to take its dws.post_run"
    h.wait_for(lambda: any(waits in m for _, m in h.jm.plugin_logs), what="post_run refused")
    assert h.job(jobid).state == "CLEANUP" and h.job(jobid).epilogs
    h.start_service()
    job = h.wait(jobid)
    assert [e["type"] for e in fatal(job.exceptions)] == ["cancel"]
    assert settled(h) == {}


def test_workflow_of_a_job_that_ended_while_away_is_torn_down(h: Harness) -> None:
    # found by bench_scale --chaos: a job that ends while no service runs
    # left its Workflow forever.  A job's epilog waits for the service now;
    # one ends without it when an administrator gives the epilog up
    # (dws-epilog-timeout: dws.abort finds no service, the epilog ends)
    jobid = _cancelled_with_no_service(h)
    h.raise_exception(jobid, "dws-epilog-timeout")
    job = h.wait(jobid)
    assert [e["type"] for e in fatal(job.exceptions)] == ["cancel", "dws-epilog-timeout"]
    assert h.emulator.store.get(RESOURCE["workflow"], "default", f"fluxjob-{jobid}")
    h.start_service()
    assert settled(h) == {}


def test_lost_epilog_release_is_sent_again_after_restart(h: Harness) -> None:
    # the service deleted the Workflow, then died before its epilog-remove
    # reached the job manager: the job waited in CLEANUP for good.  The
    # drop is in place before the job starts (epilog-remove is the job's
    # last message), and the service keeps its link meanwhile: unserving it
    # would also drop the watch events already posted to it, which no real
    # service loses without losing the rest of its state too.
    real_rpc = h.link.rpc
    dropped: list[str] = []

    def drop_epilog_remove(topic: str, *args: object, **kw: object) -> None:
        if topic == "job-manager.dws.epilog-remove":
            dropped.append(topic)
            return
        real_rpc(topic, *args, **kw)  # type: ignore[arg-type]

    h.link.rpc = drop_epilog_remove  # type: ignore[method-assign]
    jobid = h.submit(XFS, nodes=1, runtime=0.2)
    h.wait_event(jobid, "epilog-start")
    settled(h)
    h.wait_for(lambda: bool(dropped), what="the epilog-remove to be sent (and dropped)")
    assert h.job(jobid).state == "CLEANUP"
    h.link.rpc = real_rpc  # type: ignore[method-assign]
    h.restart_service()
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions


# --- the API server misbehaving -------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 503])
def test_api_errors_on_writes_are_retried(h: Harness, status: int) -> None:
    h.emulator.api_fault(status, method="PATCH", path="/workflows/", count=3,
                         retry_after=0.05 if status == 429 else None)
    h.emulator.api_fault(status, method="POST", path="/workflows", count=2)
    jobid = h.submit(XFS, nodes=1)
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    assert settled(h) == {}


def test_dropped_connections_are_retried(h: Harness) -> None:
    h.emulator.api_fault(method="PATCH", path="/servers/", count=2, drop=True)
    jobid = h.submit(XFS, nodes=1)
    assert h.wait(jobid).exceptions == []
    assert settled(h) == {}


def test_api_refusing_for_good_fails_the_job_cleanly() -> None:
    # refusing for longer than the writers' retry deadline (60 s by default)
    with Harness(kube={"retry_deadline": 3.0}) as h:
        h.emulator.api_fault(500, method="PATCH", path="/computes/", count=1000,
                             message="etcd is down")
        jobid = h.submit(XFS, nodes=1)
        job = h.wait(jobid, timeout=120)
        (exc,) = fatal(job.exceptions)
        assert "cannot fill the Computes" in exc["note"] and "etcd is down" in exc["note"]
        h.emulator.clear_api_faults()
        assert settled(h) == {}
        assert h.reactor.errors == []


def test_watches_dropped_and_expired_mid_job(h: Harness) -> None:
    fault(h, state="DataIn", severity="delay", seconds=0.3)
    fault(h, state="DataOut", severity="delay", seconds=0.3)
    jobid = h.submit(STAGED, nodes=1, runtime=0.3)
    h.wait_event(jobid, "prolog-start")
    h.emulator.expire_watches(2)
    assert h.emulator.drop_watches() >= 1
    h.wait_event(jobid, "start")
    h.emulator.drop_watches()
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    assert cleared(h) == {}


def test_workflow_deleted_after_setup_arrived_is_created_again(h: Harness) -> None:
    # Setup is held by a stall so the Workflow vanishes after dws.setup
    # recorded the hosts but before Setup ran: it must come back with them
    fault(h, state="Setup", severity="stall", once=False)
    jobid = h.submit(XFS, nodes=1)
    h.wait_event(jobid, "prolog-start")
    h.wait_for(lambda: any(
        w["spec"]["desiredState"] == "Setup" for w in
        h.emulator.store.list_objects(RESOURCE["workflow"], None)), what="Setup asked for")
    h.emulator.controllers.faults.clear()  # type: ignore[union-attr]
    h.emulator.controllers.vanish("default", f"fluxjob-{jobid}")  # type: ignore[union-attr]
    job = h.wait(jobid)
    # past Proposal the job cannot get its storage back: it fails, says why, leaks nothing
    (exc,) = fatal(job.exceptions)
    # vanish removes the finalizers, then deletes: the engine may see the
    # deletion start ("is being deleted") or its end ("was deleted")
    assert "deleted outside of Flux" in exc["note"], exc["note"]
    assert settled(h) == {}
