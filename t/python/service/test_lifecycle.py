"""The dws service end to end through the harness: every #DW kind.

Each test submits jobs to the emulated job manager, which drives the real
service (engine + kube layer) against the emulator, and checks what a Flux
user and admin would see: eventlog, memos, environment, KVS, exceptions,
and that nothing is left in Kubernetes afterwards.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from t.python.service.harnesshelp import gone, settled

from flux_dws.emulator.driver import RESOURCE
from flux_dws.harness import Harness
from flux_dws.libdws.explain import EVENT as EXPLAIN_EVENT
from flux_dws.libdws.explain import KVS_KEY as EXPLAIN_KEY
from flux_dws.libdws.explain import explain

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


@pytest.fixture
def h() -> Iterator[Harness]:
    with Harness() as harness:
        yield harness
        assert harness.reactor.errors == []


def test_xfs_lifecycle(h: Harness) -> None:
    jobid = h.submit(XFS, nodes=2)
    job = h.wait(jobid)
    assert job.exceptions == []
    ev = job.events()
    # the dependency holds the job until Proposal; prolog and epilog bracket it
    assert ev.index("dependency-add") < ev.index("jobspec-update") < ev.index("dependency-remove")
    assert ev.index("prolog-start") < ev.index("dws_environment") < ev.index("prolog-finish")
    assert ev.index("start") < ev.index("finish") < ev.index("epilog-start") \
        < ev.index("epilog-finish") < ev.index("clean")
    # the jobspec asks Fluxion for rabbit storage
    res = job.jobspec["resources"]
    assert res[0]["type"] == "slot" and res[0]["label"] == "rabbit" and res[0]["count"] == 2
    assert {"type": "ssd", "count": 10, "exclusive": True} in res[0]["with"]
    # what the job gets
    assert job.env is not None and job.env["DW_JOB_scratch"].startswith("/mnt/nnf/")
    assert job.env["DW_WORKFLOW_NAME"] == f"fluxjob-{jobid}"
    assert job.memo == {"rabbit_workflow": f"fluxjob-{jobid}", "rabbits": "kind-worker2"}
    # KVS: data.dws.*, and the reference's keys as links to them
    wf = job.kvs_get("rabbit_workflow")
    assert wf["metadata"]["name"] == f"fluxjob-{jobid}"
    assert job.kvs_get("data.dws.workflow") == wf
    for state in ("proposal", "setup", "datain", "prerun", "postrun", "dataout"):
        assert isinstance(job.kvs_get(f"rabbit_{state}_timing"), str), state
        assert job.links[f"rabbit_{state}_timing"] == f"data.dws.timing.{state}"
    gone(h, jobid)
    assert settled(h) == {}


def test_jobs_without_dw_are_left_alone(h: Harness) -> None:
    jobid = h.submit(None, nodes=1)
    job = h.wait(jobid)
    assert "dependency-add" not in job.events() and job.memo == {}
    assert h.status()["jobs"] == []


@pytest.mark.parametrize("dw", [
    "#DW jobdw type=gfs2 capacity=20GiB name=gfsdata",
    "#DW jobdw type=raw capacity=5GiB name=rawdata",
    "#DW jobdw type=lustre capacity=100GiB name=lusdata",
    ["#DW jobdw type=xfs capacity=1GiB name=first",
     "#DW jobdw type=gfs2 capacity=1GiB name=second"],
    "#DW jobdw type=xfs capacity=10GiB name=stage\n"
    "#DW copy_in source=/lus/global/in destination=$DW_JOB_stage/\n"
    "#DW copy_out source=$DW_JOB_stage/ destination=/lus/global/out",
], ids=["gfs2", "raw", "lustre", "two-directives", "copy-in-out"])
def test_each_kind(h: Harness, dw: object) -> None:
    jobid = h.submit(dw, nodes=3)
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    assert job.env and any(k.startswith("DW_JOB_") for k in job.env)
    gone(h, jobid)
    assert settled(h) == {}


def test_persistent_storage(h: Harness) -> None:
    create = h.submit("#DW create_persistent type=xfs capacity=10GiB name=p1", nodes=1)
    assert h.wait(create).exceptions == []
    use = h.submit("#DW persistentdw name=p1", nodes=2)
    job = h.wait(use)
    assert job.exceptions == [] and job.env and "DW_PERSISTENT_p1" in job.env
    destroy = h.submit("#DW destroy_persistent name=p1", nodes=1)
    assert h.wait(destroy).exceptions == []
    assert settled(h) == {}


def test_create_persistent_restricted_to_the_owner(h: Harness) -> None:
    jobid = h.submit("#DW create_persistent type=xfs capacity=10GiB name=p2", nodes=1,
                     userid=h.owner + 1)
    job = h.wait(jobid)
    assert job.exceptions[0]["type"] == "dws-create"
    assert "only the instance owner may create persistent storage" in job.exceptions[0]["note"]
    assert h.workflows() == []


def test_container_gets_the_workflow_token(h: Harness) -> None:
    dw = ["#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2 requires=user-container-auth",
          "#DW container name=mpic profile=example-mpi DW_JOB_foo_local_storage=my-gfs2"]
    jobid = h.submit(dw, nodes=2)
    job = h.wait(jobid)
    assert job.exceptions == [], job.exceptions
    assert job.env is not None and job.env.get("DW_WORKFLOW_TOKEN", "").count(".") == 2
    gone(h, jobid)


def test_invalid_directive_reaches_the_user_unchanged(h: Harness) -> None:
    jobid = h.submit("#DW jobdw type=xfs capacity=10GiB", nodes=1)
    job = h.wait(jobid)
    exc = job.exceptions[0]
    assert exc["type"] == "dws-create" and exc["severity"] == 0
    assert exc["note"].startswith("DWS workflow interactions failed: ")
    assert 'admission webhook "vworkflow.kb.io" denied the request' in exc["note"]
    assert h.workflows() == []


def test_dws_error_note_says_what_to_do(h: Harness) -> None:
    """The note is DWS' words whole, as the reference writes it; the plain
    sentence of explain.h is beside it, in the job's eventlog and KVS."""
    jobid = h.submit("#DW persistentdw name=nosuch", nodes=1)
    job = h.wait(jobid)
    (exc,) = [e for e in job.exceptions if e["severity"] == 0]
    words = ("DWS/Rabbit interactions failed: workflow hit an error: DW Directive 0: User error:"
             " PersistentStorageInstance 'nosuch' not found")
    sentence = ("No persistent storage named 'nosuch' exists."
                " Check the name, or create it first with a #DW create_persistent job.")
    assert exc["note"] == words
    want = {"type": exc["type"], "note": words, "explanation": sentence}
    assert [ctx for _, name, ctx in job.eventlog if name == EXPLAIN_EVENT] == [want]
    assert {k: job.kvs[EXPLAIN_KEY][k] for k in want} == want
    assert settled(h) == {}


@pytest.mark.parametrize("dw,message", [
    (5, "Malformed #DW directives"),
    (["#DW jobdw type=xfs capacity=1GiB name=a", 7], "Malformed #DW directives"),
])
def test_bad_dw_refused_at_submit(h: Harness, dw: object, message: str) -> None:
    from flux_dws.libdws.jobsm import JobspecError

    with pytest.raises(JobspecError, match=message):
        h.submit(dw, nodes=1)


@pytest.mark.parametrize("tol", [-1, "two"])
def test_bad_tolerance_is_a_dws_create_exception(h: Harness, tol: object) -> None:
    """Accepted at submission, as the reference does, and refused by the
    service in the reference's order: the dws-create dependency, the
    service's refusal of dws.create as the dws-create exception with the
    reference's words, then the epilog of any failed create (dws.post_run,
    answered); no Workflow."""
    jobid = h.submit(XFS, nodes=1, tolerance=tol)
    job = h.wait(jobid)
    assert [e["type"] for e in job.exceptions] == ["dws-create"]
    note = job.exceptions[0]["note"]
    words = "DWS workflow interactions failed: dw_failure_tolerance must be a positive integer"
    assert note == words
    # raised by the jobtap machine: its sentence in the eventlog only
    assert [ctx for _, name, ctx in job.eventlog if name == EXPLAIN_EVENT] == [
        {"type": "dws-create", "note": words, "explanation": explain(words)}]
    events = job.events()
    assert "prolog-start" not in events
    order = [events.index(n) for n in ("dependency-add", "exception", "epilog-start",
                                       "epilog-finish")]
    assert order == sorted(order), events
    finish = [ctx for _, name, ctx in job.eventlog if name == "epilog-finish"]
    assert finish == [{"description": "dws-epilog", "status": 0}]
    assert h.workflows() == []


def test_presets_and_maximums_from_config() -> None:
    config = {"presets": {"small": XFS}, "policy": {"maximums": {"xfs": 5}}}
    with Harness(config=config) as h:
        jobid = h.submit("small", nodes=1)
        job = h.wait(jobid)
        assert job.exceptions[0]["type"] == "dws-create"
        assert "Requested a total of 10 GiB of xfs storage per node but max is 5 GiB" \
            in job.exceptions[0]["note"]
        ok = h.submit("#DW jobdw type=xfs capacity=4GiB name=small", nodes=1)
        assert h.wait(ok).exceptions == []


def test_many_jobs_at_once(h: Harness) -> None:
    ids = [h.submit(XFS, nodes=1) for _ in range(20)]
    for jobid in ids:
        assert h.wait(jobid, timeout=60).exceptions == []
    assert settled(h) == {}
    h.wait_for(lambda: not h.service.engine.status()["jobs"], what="the engine to forget")


def test_status_reports_jobs_and_service(h: Harness) -> None:
    jobid = h.submit(XFS, nodes=1, runtime=30)
    h.wait_event(jobid, "start")
    st = h.status()
    assert st["success"] is True and st["workflows"] == [jobid]
    (entry,) = st["jobs"]
    assert entry["desired"] == "PreRun" and entry["ready"] is True
    assert entry["phase"] == "running"  # PreRun done: the job runs
    assert st["service"]["events"] > 0 and st["computes"] == 4
    # the job got to PreRun: Proposal and Setup ending are watch events that
    # caused writes, so reactions were measured (as the writes went out)
    svc = st["service"]
    assert svc["reactions"] >= 2 and svc["reaction_ms_p99"] >= svc["reaction_ms_p50"] >= 0
    # its two waits: watch events for the reactor, those writes for a writer
    for wait in ("reactor_wait", "writer_wait"):
        assert svc[f"{wait}_ms_p99"] >= svc[f"{wait}_ms_p50"] >= 0
    # the load figures (what each counts: test_status_load_figures_count_what_waits)
    assert set(svc) >= {"events_behind", "k8s_pending", "k8s_oldest_pending_s", "flux_pending",
                        "rpcs_waiting", "watches"}
    assert (svc["k8s_oldest_pending_s"] is None) == (svc["k8s_pending"] == 0)
    # each watch's state: all four watching, the Workflows' with its rule
    watches = {w["kind"]: w for w in svc["watches"]}
    assert set(watches) == {"Workflow", "PersistentStorageInstance", "SystemConfiguration",
                            "Storage"}
    assert {w["state"] for w in watches.values()} == {"watching"}
    assert watches["Workflow"]["lists"] == 1 and watches["Workflow"]["heals"] == 0
    assert int(watches["Workflow"]["resource_version"]) > 0
    h.cancel(jobid)
    h.wait(jobid)


def test_status_load_figures_count_what_waits(h: Harness) -> None:
    """flux dws status' load: each figure made to count something, seen
    in the dws.status answer (or in load() while the reactor is held), then
    back to nothing."""
    svc = h.service
    assert svc is not None

    def load() -> dict[str, Any]:
        out: dict[str, Any] = h.status()["service"]
        return out

    # Flux calls sent and not answered: the job manager keeps its memo answers
    held: list[Callable[[], None]] = []
    real_rpc = h.jm.rpc

    def rpc(topic: str, payload: Any, answer: Any) -> None:
        if topic == "job-manager.memo":
            held.append(lambda: real_rpc(topic, payload, answer))
        else:
            real_rpc(topic, payload, answer)

    h.reactor.call(lambda: setattr(h.jm, "rpc", rpc))
    jobid = h.submit(XFS, nodes=1, runtime=3600)
    h.wait_event(jobid, "start")
    assert held
    assert load()["flux_pending"] == len(held)

    def answer_held() -> None:
        h.jm.rpc = real_rpc
        for fn in held:
            fn()

    h.reactor.call(answer_held)
    h.wait_for(lambda: svc.load()["flux_pending"] == 0, what="the memos answered")
    assert load()["flux_pending"] == 0

    # a Kubernetes write under way: the emulator holds the Workflow's move
    # to PostRun (its admission runs under the store's lock: nothing else
    # touches the store until the gate opens)
    store = h.emulator.store
    kind = ("dataworkflowservices.github.io", "workflows")
    webhook = store.admission[kind]
    gate, entered = threading.Event(), threading.Event()

    def hold(op: str, old: Any, new: dict[str, Any]) -> dict[str, Any]:
        if op == "UPDATE" and new["spec"].get("desiredState") == "PostRun":
            entered.set()
            gate.wait(10)
        return webhook(op, old, new)

    store.admission[kind] = hold
    try:
        h.cancel(jobid)
        assert entered.wait(10)
        busy = load()
        assert busy["k8s_pending"] >= 1 and busy["k8s_oldest_pending_s"] >= 0.0
    finally:
        store.admission[kind] = webhook
        gate.set()
    h.wait(jobid)
    gone(h, jobid)
    h.wait_for(lambda: svc.kube.pending() == 0, what="the writes done")
    assert load()["k8s_pending"] == 0 and load()["k8s_oldest_pending_s"] is None

    # events posted by other threads and not fed yet: the reactor held
    # while three (harmless: a Storage as it is) are posted
    storage = store.list_objects(RESOURCE["storage"], "default")[0]
    started, release = threading.Event(), threading.Event()

    def block() -> None:
        started.set()
        release.wait(10)

    h.reactor.post(block)
    assert started.wait(10)
    before = svc.load()["events_behind"]
    for _ in range(3):
        svc.post_event({"type": "watch", "kind": "Storage", "event": "MODIFIED",
                        "object": storage})
    behind = svc.load()["events_behind"]
    release.set()
    assert behind >= before + 3 and behind >= 3
    h.wait_for(lambda: svc.load()["events_behind"] == 0, what="the events fed")
    assert load()["events_behind"] == 0


@pytest.mark.parametrize("userid", [0, 424242], ids=["in-passwd", "no-passwd-entry"])
def test_workflow_group_from_passwd(h: Harness, userid: int) -> None:
    import pwd

    jobid = h.submit(XFS, nodes=1, userid=userid)
    job = h.wait(jobid)
    assert job.exceptions == []
    spec = job.kvs_get("rabbit_workflow")["spec"]
    want = pwd.getpwuid(userid).pw_gid if userid == 0 else userid
    assert (spec["userID"], spec["groupID"]) == (userid, want)


@pytest.mark.parametrize("how", ["cancel", "timeout", "node-failure"])
def test_running_job_unmounts_after_finish(h: Harness, how: str) -> None:
    """A running job that ends by an exception reaches CLEANUP before its
    tasks are gone (as in flux-core); its epilog, and so dws.post_run and
    the unmount, start only after finish."""
    jobid = h.submit(XFS, nodes=1, runtime=600.0)
    h.wait_event(jobid, "start")
    h.raise_exception(jobid, how)
    job = h.wait(jobid)
    events = job.events()
    assert events.index("finish") < events.index("epilog-start"), events
    assert events.index("release") < events.index("free") < events.index("clean"), events
    assert "epilog-finish" in events
    gone(h, jobid)
