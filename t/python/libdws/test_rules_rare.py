"""The decider's rare rules (engine/rules.h), each fired by the inputs
that reach it and held to the step it exists for: the engine alone, fed
events as the service feeds them (doc/guide/service.rst), with a fake
API server that keeps the Workflows the engine creates and applies its
patches, as src/common/libdws/test/engine.c does.  Each test names the
rule it fires and checks what follows it (the actions, the exception or
its absence, the job's record); the harness's share of the rare rules is
t/python/service/test_rules_rare.py.

After every event the last SystemConfiguration is fed again: every job
is looked at with nothing new, and none may take a step (issue 64).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from flux_dws.libdws.engine import Engine

NOW = 1700000000.0
LABEL = "dataworkflowservices.github.io/workflow.name"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
TASK = {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}
#: rabbit1 serves c1 and c2, rabbit2 serves c3 and c4
SYSCONF = {"metadata": {"name": "default"}, "spec": {"storageNodes": [
    {"type": "Rabbit", "name": "rabbit1",
     "computesAccess": [{"name": "c1", "index": 0}, {"name": "c2", "index": 1}]},
    {"type": "Rabbit", "name": "rabbit2",
     "computesAccess": [{"name": "c3", "index": 0}, {"name": "c4", "index": 1}]}]}}
EPILOG_REMOVE = "job-manager.dws.epilog-remove"
RESOURCE_UPDATE = "job-manager.dws.resource-update"


def merge(dst: dict[str, Any], patch: dict[str, Any]) -> None:
    """RFC 7386 merge patch."""
    for k, v in patch.items():
        if v is None:
            dst.pop(k, None)
        elif isinstance(v, dict):
            if not isinstance(dst.get(k), dict):
                dst[k] = {}
            merge(dst[k], v)
        else:
            dst[k] = copy.deepcopy(v)


def breakdown(jobid: int, gib: int = 10) -> dict[str, Any]:
    """The job's DirectiveBreakdown: xfs of `gib` per compute."""
    return {"kind": "DirectiveBreakdown",
            "metadata": {"name": f"fluxjob-{jobid}-0", "namespace": "default"},
            "status": {"ready": True, "storage": {
                "allocationSets": [{"label": "xfs", "allocationStrategy": "AllocatePerCompute",
                                    "minimumCapacity": gib << 30}],
                "reference": {"kind": "Servers", "name": f"fluxjob-{jobid}",
                              "namespace": "default"}}}}


def mounted(*nodes: str) -> dict[str, Any]:
    """A ClientMount list: each of `nodes` still mounts."""
    return {"items": [{"spec": {"node": n}, "status": {"mounts": [{"state": "mounted"}]}}
                      for n in nodes]}


class Dws:
    """An engine and a fake API server; `acts` are the last event's actions
    and `trace` the (rule, step) of each step it took."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.engine = Engine({"owner": 0, **(config or {})})
        self.engine.trace(True)
        self.now = NOW
        self.wfs: dict[str, dict[str, Any]] = {}
        self.acts: list[dict[str, Any]] = []
        self.trace: list[tuple[str, str]] = []
        self.sysconf: dict[str, Any] | None = None
        self.feed({"type": "sync", "kind": "SystemConfiguration", "objects": [SYSCONF]})
        self.feed({"type": "sync", "kind": "Workflow", "objects": []})

    # --- feeding ------------------------------------------------------------

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        if event.get("kind") == "SystemConfiguration":
            self.sysconf = copy.deepcopy(event)
        self.acts = self.engine.event({**event, "now": self.now})
        self.trace = [(t["rule"], t["step"]) for t in self.engine.take_trace()]
        for a in self.acts:
            name = a.get("name", "")
            if a.get("action") != "k8s" or a.get("kind") != "Workflow":
                continue
            if a["op"] == "create" and name not in self.wfs:
                self.wfs[name] = {**copy.deepcopy(a["body"]), "status": {}}
            elif a["op"] == "patch" and name in self.wfs:
                merge(self.wfs[name], a["body"])
        if self.sysconf is not None:  # looked at again with nothing new: no step
            again = self.engine.event(self.sysconf)
            assert again == [], f"looked at again after {event}, acted: {again}"
            assert self.engine.take_trace() == []
        return self.acts

    def request(self, topic: str, payload: dict[str, Any], msgid: int = 9
                ) -> list[dict[str, Any]]:
        return self.feed({"type": "request", "userid": 0, "topic": topic, "msgid": msgid,
                          "payload": payload})

    def create(self, jobid: int, nodes: int = 1, msgid: int = 1) -> list[dict[str, Any]]:
        return self.request("dws.create", {
            "jobid": jobid, "userid": 1000, "dw_directives": XFS, "failure_tolerance": 0,
            "resources": [{"type": "node", "count": nodes, "with": [TASK]}]}, msgid)

    def setup(self, jobid: int, nodes: list[str]) -> list[dict[str, Any]]:
        return self.request("dws.setup", {"jobid": jobid, "R": {"version": 1, "execution": {
            "R_lite": [], "nodelist": nodes, "starttime": 0, "expiration": 0}}}, 2)

    def post_run(self, jobid: int, started: bool, msgid: int = 3) -> list[dict[str, Any]]:
        return self.request("dws.post_run", {"jobid": jobid, "run_started": started}, msgid)

    def result(self, token: str, ok: bool = True, code: int = 200, message: str = "",
               obj: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return self.feed({"type": "k8s-result", "token": token, "ok": ok, "code": code,
                          "message": message, "object": copy.deepcopy(obj)})

    def timer(self, key: str) -> list[dict[str, Any]]:
        return self.feed({"type": "timer", "key": key})

    def wf(self, jobid: int) -> dict[str, Any]:
        return self.wfs[f"fluxjob-{jobid}"]

    def watch(self, kind: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
        return self.feed({"type": "watch", "kind": "Workflow", "event": kind,
                          "object": copy.deepcopy(obj)})

    def status(self, jobid: int, state: str, ready: bool, status: str,
               extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The Workflow shows this status (a MODIFIED event)."""
        self.wf(jobid)["status"] = {"state": state, "ready": ready, "status": status,
                                    "elapsedTimeLastState": "1s", **(extra or {})}
        return self.watch("MODIFIED", self.wf(jobid))

    def complete(self, jobid: int, extra: dict[str, Any] | None = None
                 ) -> list[dict[str, Any]]:
        """The Workflow completes the state it was asked for."""
        return self.status(jobid, self.wf(jobid)["spec"]["desiredState"], True, "Completed",
                           extra)

    def deleted(self, jobid: int) -> list[dict[str, Any]]:
        """The Workflow is gone (a DELETED event): deleted by us, or
        outside Flux with our finalizer stripped."""
        return self.watch("DELETED", self.wfs.pop(f"fluxjob-{jobid}"))

    # --- a job on its happy path --------------------------------------------

    def to(self, jobid: int, target: str, nodes: tuple[str, ...] = ("c1",)) -> None:
        """Drive the job until its Workflow was asked for `target`
        ("Proposal": Proposal done and its resources sent)."""
        order = ["Proposal", "Setup", "DataIn", "PreRun", "PostRun"]
        self.create(jobid, len(nodes))
        self.result(f"create:{jobid}", code=201, obj=self.wf(jobid))
        self.complete(jobid, {"directiveBreakdowns": [{"name": f"fluxjob-{jobid}-0",
                                                       "namespace": "default"}]})
        self.result(f"breakdown:{jobid}", obj=breakdown(jobid))
        if order.index(target) >= 1:
            self.setup(jobid, list(nodes))
            self.result(f"hosts:{jobid}", obj=self.wf(jobid))
            self.result(f"servers:{jobid}")
        if order.index(target) >= 2:
            self.complete(jobid, {"computes": {"name": f"fluxjob-{jobid}",
                                               "namespace": "default"}})
            self.result(f"computes:{jobid}")
        if order.index(target) >= 3:
            self.complete(jobid)
        if order.index(target) >= 4:
            self.complete(jobid, {"env": {"DW_JOB_scratch": "/mnt/nnf/x"}})
            self.post_run(jobid, True)
        assert self.wf(jobid)["spec"]["desiredState"] == target, self.wf(jobid)["spec"]

    # --- looking ------------------------------------------------------------

    def find(self, **fields: Any) -> list[dict[str, Any]]:
        """The last event's actions with these fields."""
        return [a for a in self.acts if all(a.get(k) == v for k, v in fields.items())]

    def jobs(self) -> dict[int, dict[str, Any]]:
        return {j["id"]: j for j in self.engine.status()["jobs"]}

    def fired(self, rule: str) -> int:
        return self.engine.rules_fired()[rule]


@pytest.fixture
def dws() -> Iterator[Dws]:
    yield Dws()


# --- vanished-failed --------------------------------------------------------------


def test_a_failed_jobs_workflow_deleted_before_its_epilog_is_forgotten(dws: Dws) -> None:
    """vanished-failed: the job failed (its exception raised, Teardown
    asked) and its Workflow is deleted outside Flux before the epilog
    began.  There is nothing left to tear down and no epilog to release:
    the job is forgotten with no second exception (a job in use whose
    Workflow is deleted gets one: deleted-outside), and its dws.post_run,
    when it comes, releases the epilog at once."""
    dws.to(10, "DataIn")
    dws.status(10, "DataIn", False, "Error", {"message": "disk died"})
    (exc,) = dws.find(action="raise")
    assert exc["note"] == "DWS/Rabbit interactions failed: workflow hit an error: disk died"
    assert dws.find(op="patch", kind="Workflow", body={"spec": {"desiredState": "Teardown"}})
    dws.deleted(10)
    assert dws.trace == [("vanished-failed", "forget")]
    assert dws.acts == [], "no exception, no epilog-remove, no create again"
    assert 10 not in dws.jobs()
    dws.post_run(10, False)
    assert dws.find(action="respond", msgid=3)
    assert dws.find(action="rpc", topic=EPILOG_REMOVE, payload={"id": 10})
    assert dws.fired("vanished-failed") == 1 and dws.fired("deleted-outside") == 0


# --- aborted-early ------------------------------------------------------------------


@pytest.mark.parametrize("aborted", [True, False])
def test_dws_abort_before_the_workflow_exists_ends_the_epilog_there(dws: Dws,
                                                                    aborted: bool) -> None:
    """aborted-early: the job was cancelled while its Workflow's create was
    out (dws.post_run, run_started false: Teardown once it exists), then
    the job manager ended the epilog itself (dws.abort, its epilog timed
    out).  No Workflow exists to read, so nothing is listed; the epilog is
    marked ended: Teardown and the deletion follow the create, but no
    epilog-remove is ever sent (without the abort, the deletion sends
    it)."""
    sent: list[dict[str, Any]] = []
    dws.create(12)
    assert dws.find(action="k8s", op="create", name="fluxjob-12")
    dws.post_run(12, False)
    assert dws.trace[-1] == ("epilog-before-created", "teardown-later")
    if aborted:
        dws.request("dws.abort", {"jobid": 12}, msgid=10)
        assert dws.trace == [("aborted-early", "abort-noted")]
        assert dws.acts == [{"action": "respond", "msgid": 10, "payload": {"success": True}}], \
            "answered; no ClientMount or Servers list (no Workflow to read)"
    dws.result("create:12", code=201, obj=dws.wf(12))
    sent += dws.acts
    (patch,) = dws.find(op="patch", kind="Workflow", name="fluxjob-12")
    assert patch["body"]["spec"] == {"desiredState": "Teardown"}, "no PostRun: Teardown"
    assert not dws.find(kind="ClientMount") and not dws.find(kind="Servers")
    dws.complete(12)
    sent += dws.acts
    assert dws.find(op="delete", kind="Workflow", name="fluxjob-12")
    dws.result("delete:12")
    dws.deleted(12)
    sent += dws.acts
    assert 12 not in dws.jobs()
    removes = [a for a in sent if a.get("topic") == EPILOG_REMOVE]
    assert len(removes) == (0 if aborted else 1), removes
    assert dws.fired("aborted-early") == (1 if aborted else 0)


# --- failed-again ----------------------------------------------------------------


def test_a_second_failure_is_logged_not_raised_again(dws: Dws) -> None:
    """failed-again: the job failed (Setup's Error: its exception raised,
    Teardown asked), then the Teardown patch fails too.  A job has one
    fatal exception: the second failure is logged, with its own words,
    and raises nothing; the job stays failed, on its way to Teardown."""
    dws.to(11, "Setup")
    dws.status(11, "Setup", False, "Error", {"message": "no space"})
    assert [a["note"] for a in dws.find(action="raise")] == [
        "DWS/Rabbit interactions failed: workflow hit an error: no space"]
    assert dws.find(op="patch", kind="Workflow", token="state:11")
    dws.result("state:11", ok=False, code=500, message="etcdserver: request timed out")
    assert dws.trace == [("failed-again", "fail-again")]
    assert not dws.find(action="raise") and not dws.find(action="post-event")
    assert dws.find(action="log", level="err", message=(
        "fluxjob-11: DWS/Rabbit interactions failed: cannot move workflow fluxjob-11 to"
        " Teardown: etcdserver: request timed out"))
    job = dws.jobs()[11]
    assert job["failed_job"] is True and job["desired"] == "Teardown", job
    assert dws.fired("failed") == 1 and dws.fired("failed-again") == 1


# --- create-failed ---------------------------------------------------------------


def test_a_create_no_request_waits_for_fails_the_job_itself(dws: Dws) -> None:
    """create-failed: the Workflow vanished while the job waited in
    Proposal and is created again; that create fails.  Its dws.create was
    answered long ago, so no request can carry the failure to the job
    manager: the engine raises the job's exception itself (with its
    explanation) and forgets it; the epilog is released when it comes.
    A first create that fails is told to the request that waits for it
    instead (create-failed-forget), and raises nothing."""
    dws.create(13)
    dws.result("create:13", code=201, obj=dws.wf(13))
    assert dws.find(action="respond", msgid=1, payload={"success": True})
    dws.complete(13, {"directiveBreakdowns": [{"name": "fluxjob-13-0"}]})
    dws.deleted(13)
    assert dws.find(action="log", level="warning", message=(
        "fluxjob-13: Workflow deleted outside Flux while the job waited; creating it again"))
    assert dws.find(action="k8s", op="create", name="fluxjob-13")
    dws.result("create:13", ok=False, code=422,
               message='admission webhook "vworkflow.kb.io" denied the request: no')
    assert dws.trace == [("create-failed", "raise")]
    note = ("DWS/Rabbit interactions failed: cannot create workflow fluxjob-13: admission"
            ' webhook "vworkflow.kb.io" denied the request: no')
    assert dws.find(action="raise", id=13, type="exception", severity=0, note=note)
    (explained,) = dws.find(action="post-event", id=13, name="dws-explanation")
    assert explained["context"]["note"] == note and explained["context"]["explanation"]
    assert not dws.find(action="respond"), "no request waits"
    assert 13 not in dws.jobs()
    dws.post_run(13, False)
    assert dws.find(action="rpc", topic=EPILOG_REMOVE, payload={"id": 13})

    # the first create fails: its request says so, the jobtap plugin raises
    dws.create(14, msgid=7)
    dws.result("create:14", ok=False, code=422, message="denied")
    assert dws.trace == [("create-failed-forget", "forget")]
    assert dws.find(action="respond", msgid=7, payload={"success": False, "errstr": "denied"})
    assert not dws.find(action="raise")
    assert dws.fired("create-failed") == 1


# --- prestage-timer-weigh --------------------------------------------------------


def test_prestaging_is_weighed_again_by_its_timer_until_the_graph_is_known() -> None:
    """prestage-timer-weigh: pre-staging is wanted (rabbit.prestage =
    "always") but rabbit health does not know the Fluxion graph and the
    instance's nodes yet (no input of it came: just after a start), so
    the job waits, holding nothing, its resources not sent.  Its timer
    weighs it again every PRESTAGE_RETRY (10 s), and the wait goes on
    while the graph stays unknown; 60 s after its Proposal it is judged
    without them: not pre-staged, its resources sent the usual way, its
    record saying why."""
    dws = Dws({"prestage": "always"})
    dws.to(15, "Proposal")
    assert dws.trace[-1] == ("prestage-wanted", "prestage-weigh")
    assert dws.acts == [{"action": "timer-start", "key": "prestage:15", "after": 10.0}]
    for waited in (10, 20, 30, 40, 50):
        dws.now = NOW + waited
        dws.timer("prestage:15")
        assert dws.trace == [("prestage-timer-weigh", "prestage-weigh")]
        assert dws.acts == [{"action": "timer-start", "key": "prestage:15", "after": 10.0}], \
            f"still unknown after {waited} s: it waits on"
    dws.now = NOW + 60
    dws.timer("prestage:15")
    assert dws.trace == [("prestage-timer-weigh", "prestage-weigh"),
                         ("prestage-unfit", "prestage-unfit"), ("resources", "send-resources")]
    (update,) = dws.find(action="rpc", topic=RESOURCE_UPDATE)
    assert not update["payload"].get("prestage"), "not pre-staged: nodes first"
    assert not dws.find(action="timer-start")
    record = dws.engine.take_records()[15]
    assert record["prestage_not"] == ("the Fluxion graph and the instance's nodes were not"
                                      " known within 60 s of its Proposal")
    assert dws.fired("prestage-timer-weigh") == 6 and dws.fired("room-reweigh") == 0


def test_a_rabbit_health_input_weighs_it_again_before_its_timer() -> None:
    """room-reweigh, beside prestage-timer-weigh (the harness fires it only
    when a job's Proposal ends before rabbit health has heard of the
    graph): any input of rabbit health (here a Storage list) may make the
    graph known, so a job waiting for it is weighed again at once, once
    per input, without waiting for its timer; still unknown, it waits on,
    and its timer still weighs it."""
    dws = Dws({"prestage": "always"})
    dws.to(17, "Proposal")
    assert dws.acts == [{"action": "timer-start", "key": "prestage:17", "after": 10.0}]
    dws.now = NOW + 3
    dws.feed({"type": "sync", "kind": "Storage", "objects": []})
    assert dws.trace == [("room-reweigh", "prestage-weigh")]
    assert dws.find(action="timer-start", key="prestage:17")
    assert not dws.find(action="rpc", topic=RESOURCE_UPDATE)
    dws.now = NOW + 13
    dws.timer("prestage:17")
    assert dws.trace == [("prestage-timer-weigh", "prestage-weigh")]
    assert dws.fired("room-reweigh") == 1


# --- postrun-error-late ------------------------------------------------------------


@pytest.mark.parametrize("moved_on", [True, False])
def test_a_postrun_error_read_after_teardown_began_fails_without_draining(moved_on: bool
                                                                          ) -> None:
    """postrun-error-late: PostRun went to Error, and which computes still
    mount is read to drain exactly those (postrun-error).  While the read
    is out, teardown_after expires: DataOut is skipped and Teardown asked.
    The read's answer then finds PostRun no longer waited for: the job
    fails with PostRun's error, and nothing is drained (without the
    expiry, the compute still mounted is: postrun-error-drain)."""
    dws = Dws({"teardown_after": 5})
    dws.to(16, "PostRun", ("c1", "c3"))
    dws.status(16, "PostRun", False, "Error", {"message": "unmount failed on c3"})
    assert dws.trace[-1] == ("postrun-error", "postrun-failed")
    assert dws.find(op="list", kind="ClientMount", label_selector=f"{LABEL}=fluxjob-16",
                    token="postrun-failed:16")
    if moved_on:
        dws.now = NOW + 5
        dws.timer("teardown_after:16")
        assert dws.find(action="raise", type="teardown-timeout", severity=1)
        assert dws.find(op="patch", kind="Workflow", token="state:16")
        assert dws.wf(16)["spec"]["desiredState"] == "Teardown"
    dws.result("postrun-failed:16", obj=mounted("c3"))
    note = "DWS/Rabbit interactions failed: workflow hit an error: unmount failed on c3"
    assert dws.find(action="raise", type="exception", severity=0, note=note)
    drains = dws.find(action="drain")
    if moved_on:
        assert dws.trace[0] == ("postrun-error-late", "fail")
        assert drains == [], "PostRun no longer waited for: nothing drained"
        assert not dws.find(kind="Workflow", op="patch"), "Teardown was asked already"
    else:
        assert dws.trace[0] == ("postrun-error-drain", "drain-fail")
        assert [d["targets"] for d in drains] == ["c3"], drains
    assert dws.fired("postrun-error-late") == (1 if moved_on else 0)
