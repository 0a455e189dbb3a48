"""The dws jobtap plugin's job state machine (flux_dws.libdws.jobsm), walked
through whole job lifecycles by a small job-manager double that carries
out the actions the way the C adapter does (an exception it raises runs
the exception callback at once, as flux_jobtap_raise_exception does)."""

from __future__ import annotations

import copy
import errno
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flux_dws.errors import DwsError
from flux_dws.libdws.explain import EVENT as EXPLAIN_EVENT
from flux_dws.libdws.explain import explain
from flux_dws.libdws.jobsm import (
    DEPENDENCY,
    EPILOG,
    NOTE_PREFIX,
    PROLOG,
    JobMachine,
    JobMachineError,
    JobspecError,
    check_jobspec,
    validate_jobspec,
)

DW = "#DW jobdw type=xfs capacity=1GiB name=x"
RESOURCES = [{"type": "node", "count": 2, "with": [{"type": "slot", "count": 1}]}]
NEW_RESOURCES = [{"type": "slot", "count": 2, "label": "rabbit"}]
EXCLUDE = {"not": [{"hostlist": ["rabbit1"]}]}
VARS = {"DW_JOB_x": "/mnt/nnf/x", "DW_WORKFLOW_NAME": "fluxjob-42"}
JOBID = 42
ACTIONS = {"dependency-add", "dependency-remove", "subscribe", "rpc", "lookup-R",
           "prolog-start", "prolog-finish", "epilog-start", "epilog-finish", "timer-start",
           "timer-stop", "raise", "jobspec-update", "post-event", "respond", "respond-error",
           "log"}


def jobspec(dw: Any = DW, **system: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {"system": dict(system)}
    if dw is not None:
        attrs["system"]["dw"] = dw
    return {"version": 1, "resources": copy.deepcopy(RESOURCES), "attributes": attrs}



def explanation(type_: str, note: str) -> tuple[str, dict[str, str]]:
    """The eventlog entry that carries a note's plain sentence (explain.h):
    the note itself stays the reference's, exactly."""
    sentence = explain(note)
    assert sentence, f"explain.h knows {note!r}"
    return (EXPLAIN_EVENT, {"type": type_, "note": note, "explanation": sentence})


class Job:
    """The job manager's view of one job, driven by its JobMachine."""

    def __init__(self, spec: dict[str, Any] | None = None,
                 config: dict[str, Any] | None = None) -> None:
        self.sm = JobMachine(config)
        self.jobspec = spec if spec is not None else jobspec()
        self.state = "NEW"
        self.deps: set[str] = set()
        self.prologs: dict[str, int | None] = {}
        self.epilogs: dict[str, int | None] = {}
        self.subscribed = False
        self.rpcs: list[dict[str, Any]] = []        # every rpc action, in order
        self.outstanding: list[dict[str, Any]] = []
        self.R_lookup = False
        self.timers: dict[str, float] = {}
        self.exceptions: list[tuple[str, str]] = []
        self.eventlog: list[tuple[str, Any]] = []
        self.replies: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []

    # -- feeding events --------------------------------------------------
    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        actions = self.sm.event(event)
        for a in actions:
            self.carry_out(a)
        return actions

    def carry_out(self, a: dict[str, Any]) -> None:
        kind = a["action"]
        assert kind in ACTIONS
        if kind == "dependency-add":
            assert a["name"] not in self.deps
            self.deps.add(a["name"])
        elif kind == "dependency-remove":
            self.deps.remove(a["name"])
        elif kind == "subscribe":
            self.subscribed = True
        elif kind == "rpc":
            assert a["topic"] == f"dws.{a['tag']}"
            self.rpcs.append(a)
            self.outstanding.append(a)
        elif kind == "lookup-R":
            self.R_lookup = True
        elif kind == "prolog-start":
            assert self.prologs.get(a["name"], 0) is not None, "prolog started twice"
            self.prologs[a["name"]] = None
        elif kind == "prolog-finish":
            assert self.prologs[a["name"]] is None, "prolog finished twice"
            self.prologs[a["name"]] = a["status"]
        elif kind == "epilog-start":
            assert a["name"] not in self.epilogs, "epilog started twice"
            self.epilogs[a["name"]] = None
        elif kind == "epilog-finish":
            assert self.epilogs[a["name"]] is None, "epilog finished twice"
            self.epilogs[a["name"]] = a["status"]
        elif kind == "timer-start":
            self.timers[a["key"]] = a["after"]
        elif kind == "timer-stop":
            del self.timers[a["key"]]
        elif kind == "raise":
            assert a["severity"] == 0
            self.exceptions.append((a["type"], a["note"]))
            self.feed({"type": "exception", "exc_type": a["type"], "severity": 0,
                       "note": a["note"]})
        elif kind == "jobspec-update":
            for key, value in a["update"].items():
                *path, last = key.split(".")
                d = self.jobspec
                for p in path:
                    d = d.setdefault(p, {})
                d[last] = value
        elif kind == "post-event":
            self.eventlog.append((a["name"], a["context"]))
        elif kind in ("respond", "respond-error"):
            self.replies.append(a)
        elif kind == "log":
            self.logs.append(a)

    # -- the job manager's side -----------------------------------------
    def depend(self) -> list[dict[str, Any]]:
        self.state = "DEPEND"
        return self.feed({"type": "depend", "id": JOBID, "userid": 1000,
                          "jobspec": self.jobspec})

    def run(self) -> list[dict[str, Any]]:
        assert not self.deps
        self.state = "RUN"
        return self.feed({"type": "run"})

    def give_R(self) -> list[dict[str, Any]]:
        assert self.R_lookup
        self.R_lookup = False
        return self.feed({"type": "R", "R": {"version": 1, "execution": {"R_lite": []}}})

    def start(self) -> None:
        self.eventlog.append(("start", {}))
        self.feed({"type": "start"})

    def finish(self) -> None:
        self.feed({"type": "finish"})
        self.state = "CLEANUP"

    def cleanup(self) -> None:
        self.state = "CLEANUP"
        self.feed({"type": "cleanup"})

    def exception(self, exc_type: str = "cancel", severity: int = 0) -> list[dict[str, Any]]:
        self.exceptions.append((exc_type, ""))
        return self.feed({"type": "exception", "exc_type": exc_type, "severity": severity})

    def respond(self, tag: str, ok: bool = True, errstr: str = "",
                errnum: int = 0) -> list[dict[str, Any]]:
        rpc = next(r for r in self.outstanding if r["tag"] == tag)
        self.outstanding.remove(rpc)
        ev: dict[str, Any] = {"type": "rpc-response", "tag": tag, "ok": ok}
        if ok:
            ev["payload"] = {"success": True}
        else:
            ev.update(errnum=errnum or errno.EIO, errstr=errstr)
        return self.feed(ev)

    def fire_timer(self) -> list[dict[str, Any]]:
        del self.timers["epilog-timeout"]
        return self.feed({"type": "timer", "key": "epilog-timeout", "state": self.state})

    # -- the dws service's callbacks -------------------------------------
    def resource_update(self, **payload: Any) -> list[dict[str, Any]]:
        payload = {"id": JOBID, "resources": NEW_RESOURCES, "exclude": None, **payload}
        return self.feed({"type": "resource-update", "payload": payload, "state": self.state,
                          "jobspec": self.jobspec})

    def prolog_remove(self, variables: Any = None) -> list[dict[str, Any]]:
        return self.feed({"type": "prolog-remove",
                          "payload": {"id": JOBID, "variables": variables or VARS}})

    def epilog_remove(self) -> list[dict[str, Any]]:
        return self.feed({"type": "epilog-remove", "payload": {"id": JOBID},
                          "state": self.state})

    # -- checks ------------------------------------------------------------
    def topics(self) -> list[str]:
        return [r["topic"] for r in self.rpcs]

    def post_run_started(self) -> bool:
        post_run = [r for r in self.rpcs if r["tag"] == "post_run"]
        assert len(post_run) == 1
        started: bool = post_run[0]["payload"]["run_started"]
        return started

    def released(self) -> bool:
        """Every prolog and epilog started has finished."""
        return None not in self.prologs.values() and None not in self.epilogs.values()


def scheduled(config: dict[str, Any] | None = None) -> Job:
    job = Job(config=config)
    job.depend()
    job.respond("create")
    job.resource_update()
    job.state = "SCHED"
    return job


def running(config: dict[str, Any] | None = None) -> Job:
    job = scheduled(config)
    job.run()
    job.give_R()
    job.respond("setup")
    job.prolog_remove()
    job.start()
    return job


def test_validate_jobspec() -> None:
    validate_jobspec(jobspec())
    validate_jobspec(jobspec([DW, "#DW copy_in source=a destination=b"],
                             dw_failure_tolerance=2))
    validate_jobspec(jobspec(None, dw_failure_tolerance="nonsense"))
    for bad in (5, None, [DW, 1], {"a": DW}):
        with pytest.raises(JobspecError) as exc:
            validate_jobspec({"attributes": {"system": {"dw": bad}}})
        assert str(exc.value) == ("Malformed #DW directives: dw must be a string or a list of"
                                  " strings")
    for tol in (-1, "1", 1.5, True):
        # job.validate leaves the tolerance to depend: a dws-create exception
        validate_jobspec(jobspec(dw_failure_tolerance=tol))
    with pytest.raises(JobspecError, match="jobspec must be an object"):
        validate_jobspec([])  # type: ignore[arg-type]
    with pytest.raises(JobspecError, match="not JSON"):
        validate_jobspec({"x": object()})
    assert issubclass(JobspecError, DwsError)


def test_check_jobspec() -> None:
    """What the rabbit validator plugin refuses at submission."""
    check_jobspec(jobspec())
    check_jobspec(jobspec(dw_failure_tolerance=0))
    check_jobspec(jobspec(dw_failure_tolerance=2))
    check_jobspec(jobspec(None, dw_failure_tolerance=-1))
    with pytest.raises(JobspecError, match="dw must be a string or a list of strings"):
        check_jobspec(jobspec(5, dw_failure_tolerance=-1))
    for tol in (-1, "1", 1.5, True, None):
        with pytest.raises(JobspecError) as exc:
            check_jobspec(jobspec(dw_failure_tolerance=tol))
        assert str(exc.value) == "dw_failure_tolerance must be a positive integer"
    with pytest.raises(JobspecError, match="jobspec must be an object"):
        check_jobspec([])  # type: ignore[arg-type]


@pytest.mark.parametrize("tol", [-1, -7, "two", 1.5, True, None])
def test_bad_tolerance_goes_to_the_service(tol: Any) -> None:
    """The reference's order: the dws-create dependency, dws.create with the
    tolerance as given, the service's refusal as the dws-create exception
    with its words, and the epilog any failed create gets."""
    job = Job(jobspec(dw_failure_tolerance=tol))
    job.depend()
    assert job.deps == {DEPENDENCY}
    assert job.topics() == ["dws.create"]
    assert job.rpcs[0]["payload"]["failure_tolerance"] == tol
    job.outstanding.clear()
    job.feed({"type": "rpc-response", "tag": "create", "ok": True,
              "payload": {"success": False,
                          "errstr": "dw_failure_tolerance must be a positive integer"}})
    # the reference's words exactly; explain.h's plain sentence beside them
    note = NOTE_PREFIX + "dw_failure_tolerance must be a positive integer"
    assert job.exceptions == [("dws-create", note)]
    assert job.eventlog == [explanation("dws-create", note)]
    job.cleanup()
    assert job.epilogs == {EPILOG: None} and not job.post_run_started()
    job.respond("post_run")
    job.epilog_remove()
    assert job.epilogs == {EPILOG: 0} and job.released()


PDW = "#DW persistentdw name=keep"


def waiting_job(dw: Any = PDW, deps: int = 1) -> Job:
    """A job submitted with `deps` other dependencies (added before its
    depend, as flux-core's dependency-after does)."""
    job = Job(jobspec(dw))
    assert job.feed({"type": "create"}) == [{"action": "subscribe"}]
    for i in range(deps):
        assert job.feed({"type": "dependency-add", "name": f"after-success=f{i}"}) == []
    return job


def test_persistent_storage_waits_for_the_other_dependencies() -> None:
    job = waiting_job(deps=2)
    job.depend()
    assert job.deps == {DEPENDENCY} and job.rpcs == []
    assert job.logs[-1]["message"] == ("job 42 uses persistent storage and waits for 2 other"
                                       " dependencies: dws.create is sent once they are"
                                       " removed")
    assert job.sm.state()["create_deferred"] is True
    job.feed({"type": "dependency-add", "name": DEPENDENCY})  # ours: not counted
    job.feed({"type": "dependency-remove", "name": "after-success=f1", "jobspec": job.jobspec})
    assert job.rpcs == []
    with pytest.raises(JobMachineError, match="'jobspec' must be an object"):
        job.feed({"type": "dependency-remove", "name": "after-success=f0"})
    job.feed({"type": "dependency-remove", "name": "after-success=f0", "jobspec": job.jobspec})
    assert job.topics() == ["dws.create"]
    assert job.rpcs[0]["payload"]["dw_directives"] == PDW
    job.respond("create")
    job.resource_update()
    assert job.deps == set()


@pytest.mark.parametrize("dw", ["#DW destroy_persistent name=keep", [DW, "site-preset"]])
def test_destroy_persistent_and_presets_wait_too(dw: Any) -> None:
    job = waiting_job(dw)
    job.depend()
    assert job.rpcs == [] and job.deps == {DEPENDENCY}


@pytest.mark.parametrize(("dw", "deps"), [(DW, 1), (PDW, 0),
                                          ("#DW create_persistent type=lustre name=keep", 1)])
def test_create_at_depend_otherwise(dw: str, deps: int) -> None:
    job = waiting_job(dw, deps)
    job.depend()
    assert job.topics() == ["dws.create"]


def test_cancelled_while_waiting() -> None:
    job = waiting_job()
    job.depend()
    job.exception("cancel")
    job.feed({"type": "dependency-remove", "name": "after-success=f0", "jobspec": job.jobspec})
    job.cleanup()
    job.feed({"type": "free"})
    assert job.rpcs == [] and job.epilogs == {}


def test_reload_while_waiting() -> None:
    sm = JobMachine()
    spec = jobspec(PDW)
    acts = sm.event({"type": "reload", "id": JOBID, "userid": 1000, "jobspec": spec,
                     "state": "DEPEND", "other_dependencies": 1})
    assert acts == [{"action": "subscribe"}]
    assert sm.event({"type": "depend", "id": JOBID, "userid": 1000, "jobspec": spec}) == []
    acts = sm.event({"type": "dependency-remove", "name": "after-success=f0", "jobspec": spec})
    assert [a.get("topic") for a in acts] == ["dws.create"]


def test_config() -> None:
    assert JobMachine().state()["epilog_timeout"] == 0
    assert JobMachine({"epilog-timeout": 9.5}).state()["epilog_timeout"] == 9.5
    with pytest.raises(JobMachineError, match="epilog-timeout must be a number of seconds"):
        JobMachine({"epilog-timeout": "1m"})


def test_lifecycle() -> None:
    job = Job(config={"epilog-timeout": 60.0})
    acts = job.depend()
    assert acts[-1]["payload"] == {"jobid": JOBID, "userid": 1000, "dw_directives": DW,
                                   "resources": RESOURCES, "failure_tolerance": 0}
    assert job.deps == {DEPENDENCY} and job.subscribed
    assert job.respond("create") == []
    job.resource_update(exclude=EXCLUDE)
    assert job.deps == set()
    assert job.jobspec["resources"] == NEW_RESOURCES
    assert job.jobspec["attributes"]["system"]["constraints"] == EXCLUDE
    assert job.replies == [{"action": "respond", "payload": {}}]
    job.state = "SCHED"
    job.run()
    assert job.prologs == {PROLOG: None} and job.R_lookup
    acts = job.give_R()
    assert acts[0]["payload"]["R"]["version"] == 1
    job.respond("setup")
    job.prolog_remove()
    assert job.prologs == {PROLOG: 0}
    assert job.eventlog == [("dws_environment", {"variables": VARS})]
    job.start()
    job.finish()
    assert job.epilogs == {EPILOG: None} and job.timers == {"epilog-timeout": 60.0}
    job.cleanup()
    job.respond("post_run")
    job.epilog_remove()
    assert job.epilogs == {EPILOG: 0} and job.timers == {}
    assert job.topics() == ["dws.create", "dws.setup", "dws.post_run"]
    assert job.post_run_started() is True
    assert job.exceptions == [] and job.logs == [] and job.released() and not job.deps
    assert [r["action"] for r in job.replies] == ["respond"] * 3
    assert job.sm.state()["pending"] == {"create": 0, "setup": 0, "post_run": 0,
                                         "teardown": 0, "abort": 0}


def test_no_dw_is_inert() -> None:
    job = Job(jobspec(None))
    assert job.depend() == []
    job.run()
    job.start()
    job.exception()
    job.finish()
    job.cleanup()
    assert job.rpcs == [] and job.prologs == {} and job.epilogs == {}
    acts = job.epilog_remove()
    assert acts == [{"action": "respond-error", "errnum": errno.EINVAL,
                     "errstr": "dws.epilog-remove: job 42 has no #DW directives"}]


@pytest.mark.parametrize("phase", ["depend", "sched", "prolog", "setup", "running", "epilog"])
def test_cancel(phase: str) -> None:
    """A cancel in each phase releases everything, and Teardown is asked
    for (post_run, then teardown for a cancel inside the epilog)."""
    job = Job()
    job.depend()
    if phase != "depend":
        job.respond("create")
        job.resource_update()
        job.state = "SCHED"
    if phase in ("prolog", "setup", "running", "epilog"):
        job.run()
    if phase in ("setup", "running", "epilog"):
        job.give_R()
    if phase in ("running", "epilog"):
        job.respond("setup")
        job.prolog_remove()
        job.start()
    if phase == "epilog":
        job.finish()
    job.exception("cancel")
    if phase in ("prolog", "setup"):
        assert job.prologs == {PROLOG: 1}
    if phase == "prolog":
        assert job.give_R() == []          # no Setup for a cancelled job
        assert job.prolog_remove() == [{"action": "respond", "payload": {}}]
    if phase == "running":
        # flux-core: CLEANUP at the exception, finish once the tasks are gone
        job.cleanup()
        assert job.epilogs == {} and "dws.post_run" not in job.topics()
        job.finish()
    job.cleanup()
    if phase != "epilog":
        job.exception("cancel")            # a cancel inside the epilog
    assert job.topics()[-1] == "dws.teardown"
    assert job.post_run_started() is (phase in ("running", "epilog"))
    job.epilog_remove()
    assert job.released()
    assert job.epilogs == {EPILOG: 0}
    assert job.deps == ({DEPENDENCY} if phase == "depend" else set())
    assert "dws.setup" not in job.topics() or phase != "prolog"


def release(job: Job, final: bool = True) -> list[dict[str, Any]]:
    return job.feed({"type": "release", "final": final})


def free(job: Job) -> list[dict[str, Any]]:
    return job.feed({"type": "free"})


@pytest.mark.parametrize("exc_type", ["cancel", "timeout", "node-failure", "lost-shell",
                                      "exec"])
def test_running_job_ends_epilog_after_finish(exc_type: str) -> None:
    """However a running job ends, dws.post_run waits for finish: CLEANUP
    comes first (at the exception), while the tasks are still killed."""
    job = running()
    job.exception(exc_type)
    job.cleanup()
    release(job, final=False)
    assert job.epilogs == {} and "dws.post_run" not in job.topics()
    job.finish()
    assert job.epilogs == {EPILOG: None} and job.post_run_started() is True
    release(job)
    free(job)
    job.respond("post_run")
    job.epilog_remove()
    assert job.released() and job.topics().count("dws.post_run") == 1


def test_final_release_without_finish() -> None:
    """An exec service may end a started job with a final release and no
    finish; with final=true no process is left, so the epilog starts."""
    job = running({"epilog-timeout": 10})
    job.exception("cancel")
    job.cleanup()
    acts = release(job)
    assert [a["action"] for a in acts] == ["epilog-start", "timer-start", "rpc"]
    assert job.post_run_started() is True
    job.finish()  # too late: nothing more
    assert job.topics().count("dws.post_run") == 1


def test_free_without_finish_or_release() -> None:
    """The exec service gave the job up: free is the last chance to tear
    the Workflow down; it starts the epilog and says why."""
    job = running()
    job.exception("cancel")
    job.cleanup()
    acts = free(job)
    assert acts[0]["action"] == "log" and acts[0]["level"] == "warning"
    assert "resources freed with no finish or final release" in acts[0]["message"]
    assert job.epilogs == {EPILOG: None} and job.post_run_started() is True


def test_never_started_job_epilog_at_cleanup() -> None:
    """No start event: nothing of the job ever ran; cleanup starts it."""
    job = scheduled()
    job.run()
    job.give_R()
    job.exception("cancel")
    job.cleanup()
    assert job.epilogs == {EPILOG: None} and job.post_run_started() is False
    free(job)
    assert job.topics().count("dws.post_run") == 1


def test_reload_after_cancel_before_finish() -> None:
    """Reloaded in CLEANUP with start posted and no finish: the epilog is
    still to come, from finish."""
    job = running()
    job.exception("cancel")
    job.cleanup()
    job.sm = JobMachine()
    acts = job.feed({"type": "reload", "id": JOBID, "userid": 1000, "jobspec": job.jobspec,
                     "state": "CLEANUP", "start_posted": True, "finish_posted": False})
    assert acts == [{"action": "subscribe"}]
    job.cleanup()
    assert job.epilogs == {}
    job.finish()
    assert job.epilogs == {EPILOG: None} and job.post_run_started() is True


def test_epilog_timeout() -> None:
    job = running({"epilog-timeout": 5})
    job.finish()
    job.fire_timer()
    # the raised dws-epilog-timeout ran the exception callback: abort
    assert job.exceptions == [("dws-epilog-timeout", "DWS epilog timed out")]
    assert explanation("dws-epilog-timeout", "DWS epilog timed out") in job.eventlog
    assert job.topics()[-1] == "dws.abort"
    assert job.epilogs == {EPILOG: 1} and job.timers == {}
    job.respond("abort", ok=False, errstr="workflow gone")
    assert job.logs == [{"action": "log", "level": "err",
                         "message": "dws.abort failed for job 42: workflow gone"}]
    assert job.epilog_remove() == [{"action": "respond", "payload": {}}]
    job.respond("post_run")
    assert job.released()


def test_create_failures() -> None:
    job = Job()
    job.depend()
    job.respond("create", ok=False, errnum=errno.ENOSYS, errstr="Function not implemented")
    note = (NOTE_PREFIX + "dws.create RPC could not be sent. Admins: is the flux-coral2-dws"
            " service loaded?")
    assert job.exceptions == [("dws-create", note)]
    assert job.eventlog == [explanation("dws-create", note)]
    job.cleanup()
    job.respond("post_run", ok=False, errstr="no workflow")
    assert job.exceptions[-1] == ("dws-epilog", NOTE_PREFIX + "no workflow")
    assert job.epilogs == {EPILOG: 1} and job.released()
    assert job.deps == {DEPENDENCY}   # flux-core drops it with the cancelled job


def test_setup_failure() -> None:
    job = scheduled()
    job.run()
    job.give_R()
    job.respond("setup", ok=False, errstr="workflows not found")
    assert job.exceptions == [("dws-setup", NOTE_PREFIX + "workflows not found")]
    assert job.prologs == {PROLOG: 1}
    job.cleanup()
    assert job.post_run_started() is False


def test_resource_update_errmsg_and_repeat() -> None:
    job = Job(jobspec(constraints={"properties": ["pbatch"]}, allow_rabbits=True))
    job.depend()
    job.resource_update(exclude=EXCLUDE)
    assert job.jobspec["attributes"]["system"]["constraints"] == {
        "or": [{"properties": ["rabbit"]}, {"and": [{"properties": ["pbatch"]}, EXCLUDE]}]}
    job.state = "SCHED"
    before = copy.deepcopy(job.jobspec)
    assert job.resource_update(exclude=EXCLUDE) == [{"action": "respond", "payload": {}}]
    assert job.jobspec == before

    job = Job()
    job.depend()
    job.resource_update(errmsg="Proposal failed")
    assert job.exceptions == [("dws", NOTE_PREFIX + "Proposal failed")]
    assert job.replies == [{"action": "respond", "payload": {}}]


def test_prestaged_resource_update_holds_dws_prestage_until_prestage_remove() -> None:
    job = Job()
    job.depend()
    job.resource_update(prestage=True)
    # dws-prestage is held before dws-create goes: never without one of ours
    assert job.deps == {"dws-prestage"}
    assert job.replies[-1] == {"action": "respond", "payload": {}}
    acts = job.feed({"type": "prestage-remove", "payload": {"id": JOBID}, "state": "DEPEND"})
    assert job.deps == set()
    assert acts[-1] == {"action": "respond", "payload": {}}
    # a repeat after the job left DEPEND changes nothing
    job.state = "PRIORITY"
    acts = job.feed({"type": "prestage-remove", "payload": {"id": JOBID}, "state": "PRIORITY"})
    assert acts == [{"action": "respond", "payload": {}}]


PIN_RESOURCES = [{"type": "chassis", "count": 1,
                  "with": [{"type": "node", "count": 2, "with": []}]}]
PIN = {"hostlist": ["compute-[01-03]"]}


def _let_go(job: Job, state: str, **pin: Any) -> list[dict[str, Any]]:
    return job.feed({"type": "dependency", "state": state, "jobspec": job.jobspec,
                     "payload": {"id": JOBID, "name": "dws-prestage", "add": False, **pin}})


def test_a_prestage_removal_with_a_pin_updates_the_jobspec_first() -> None:
    """Node-local storage set up before the nodes: the removal's resources
    and constraint (and-ed with the job's own) are applied, then the
    dependency goes; a repeat past DEPEND changes nothing."""
    job = Job()
    job.depend()
    job.resource_update(prestage=True, exclude=EXCLUDE)
    acts = _let_go(job, "DEPEND", resources=PIN_RESOURCES, constraint=PIN)
    kinds = [a["action"] for a in acts]
    assert kinds.index("jobspec-update") < kinds.index("dependency-remove"), kinds
    assert job.jobspec["resources"] == PIN_RESOURCES
    assert job.jobspec["attributes"]["system"]["constraints"] == {"and": [EXCLUDE, PIN]}
    assert job.deps == set()
    before = copy.deepcopy(job.jobspec)
    job.state = "SCHED"
    assert _let_go(job, "SCHED", resources=PIN_RESOURCES, constraint=PIN) == \
        [{"action": "respond", "payload": {}}]
    assert job.jobspec == before


@pytest.mark.parametrize("pin", [{"resources": PIN_RESOURCES}, {"constraint": PIN},
                                  {"resources": {}, "constraint": PIN},
                                  {"resources": PIN_RESOURCES, "constraint": []}])
def test_a_prestage_removal_with_half_a_pin_is_malformed(pin: dict[str, Any]) -> None:
    job = Job()
    job.depend()
    job.resource_update(prestage=True)
    acts = _let_go(job, "DEPEND", **pin)
    assert acts[0] == {"action": "respond-error", "errnum": errno.EPROTO,
                       "errstr": "received malformed dws.dependency RPC: 'resources' (a list)"
                                 " and 'constraint' (an object) come together"}
    assert job.deps == {"dws-prestage"}  # not let go


@pytest.mark.parametrize(("method", "payload", "what"), [
    ("resource-update", {"id": JOBID, "resources": [], "prestage": "yes"},
     "'prestage' must be a boolean"),
    ("prestage-remove", {"id": "x"}, "'id' must be an integer"),
    ("resource-update", None, "the payload is not an object"),
    ("resource-update", {"resources": []}, "'id' must be an integer"),
    ("resource-update", {"id": JOBID, "errmsg": ["x"]}, "'errmsg' must be a string"),
    ("resource-update", {"id": JOBID}, "'resources' must be a list"),
    ("resource-update", {"id": JOBID, "resources": [], "exclude": 3},
     "'exclude' must be an object or null"),
    ("prolog-remove", [], "the payload is not an object"),
    ("prolog-remove", {"id": "42", "variables": {}}, "'id' must be an integer"),
    ("prolog-remove", {"id": JOBID}, "'variables' must be an object"),
    ("prolog-remove", {"id": JOBID, "variables": {"A": None}}, "variable 'A' must be a string"),
    ("epilog-remove", "x", "the payload is not an object"),
    ("epilog-remove", {"id": None}, "'id' must be an integer"),
])
def test_malformed(method: str, payload: Any, what: str) -> None:
    job = Job()
    job.depend()
    event: dict[str, Any] = {"type": method, "state": "DEPEND", "jobspec": job.jobspec}
    if payload is not None:
        event["payload"] = payload
    acts = job.feed(event)
    assert acts == [
        {"action": "respond-error", "errnum": errno.EPROTO,
         "errstr": f"received malformed dws.{method} RPC: {what}"},
        {"action": "raise", "type": "dws", "severity": 0,
         "note": f"{NOTE_PREFIX}received malformed dws.{method} RPC"},
        {"action": "post-event", "name": EXPLAIN_EVENT,
         "context": explanation("dws", f"{NOTE_PREFIX}received malformed dws.{method} RPC")[1]},
        {"action": "log", "level": "err",
         "message": f"job 42: received malformed dws.{method} RPC ({what}): coral2_dws module"
                    " and dws_jobtap plugin versions may be out of sync"}]


def test_wrong_state() -> None:
    job = Job()
    job.depend()
    job.state = "SCHED"
    acts = job.resource_update()
    assert acts == [{"action": "respond-error", "errnum": errno.EINVAL,
                     "errstr": "dws.resource-update: job 42 is in state SCHED, not DEPEND"}]
    job = running()
    assert job.epilog_remove()[0]["errnum"] == errno.EINVAL


def test_reload_mid_epilog() -> None:
    job = running({"epilog-timeout": 30})
    job.finish()
    # `flux jobtap remove dws; flux jobtap load dws-jobtap.so`: a new machine
    job.sm = JobMachine({"epilog-timeout": 30})
    acts = job.feed({"type": "reload", "id": JOBID, "userid": 1000, "jobspec": job.jobspec,
                     "state": "CLEANUP", "start_posted": True, "prolog_active": False,
                     "epilog_active": True})
    # dws.post_run is asked again: an epilog-remove the service sent while
    # no plugin was loaded is lost, and the service sends it again
    assert acts == [{"action": "subscribe"},
                    {"action": "timer-start", "key": "epilog-timeout", "after": 30.0},
                    {"action": "rpc", "topic": "dws.post_run", "tag": "post_run",
                     "payload": {"jobid": JOBID, "run_started": True}}]
    job.cleanup()
    job.epilog_remove()
    assert job.released() and job.timers == {}


def test_reload_lost_prolog() -> None:
    job = scheduled()
    job.run()
    job.give_R()
    job.sm = JobMachine()
    job.feed({"type": "reload", "id": JOBID, "userid": 1000, "jobspec": job.jobspec,
              "state": "RUN"})
    # the reference finished the prolog again with a junk flag; here: answer only
    assert job.prolog_remove() == [{"action": "respond", "payload": {}}]


def test_bad_events() -> None:
    sm = JobMachine()
    with pytest.raises(JobMachineError, match="no depend or reload event"):
        sm.event({"type": "run"})
    with pytest.raises(JobMachineError, match="unknown event type 'nope'"):
        sm.event({"type": "nope"})
    with pytest.raises(JobMachineError, match="an event must be an object"):
        sm.event([])  # type: ignore[arg-type]
    with pytest.raises(JobMachineError, match="not JSON"):
        sm.event({"type": "run", "x": {1, 2}})
    sm.event({"type": "depend", "id": 1, "userid": 2, "jobspec": jobspec()})
    before = sm.state()
    with pytest.raises(JobMachineError, match=r"no dws\.setup RPC is outstanding"):
        sm.event({"type": "rpc-response", "tag": "setup", "ok": True})
    assert sm.state() == before


EVENTS = st.one_of(
    st.sampled_from([
        {"type": "depend", "id": JOBID, "userid": 1, "jobspec": jobspec()},
        {"type": "depend", "id": JOBID, "userid": 1, "jobspec": jobspec(None)},
        {"type": "reload", "id": JOBID, "userid": 1, "jobspec": jobspec(), "state": "RUN",
         "prolog_active": True},
        {"type": "reload", "id": JOBID, "userid": 1, "jobspec": jobspec(), "state": "NEW"},
        {"type": "reload", "id": JOBID, "userid": 1, "jobspec": jobspec(),
         "state": "CLEANUP", "start_posted": True},
        {"type": "reload", "id": JOBID, "userid": 1, "jobspec": jobspec(),
         "state": "CLEANUP", "start_posted": True, "finish_posted": True},
        {"type": "run"}, {"type": "start"}, {"type": "finish"}, {"type": "cleanup"},
        {"type": "release", "final": True}, {"type": "release", "final": False},
        {"type": "free"},
        {"type": "R", "R": {}}, {"type": "R", "error": "x"},
        {"type": "exception", "exc_type": "cancel", "severity": 0},
        {"type": "exception", "exc_type": "dws-epilog-timeout", "severity": 0},
        {"type": "timer", "key": "epilog-timeout", "state": "CLEANUP"},
        {"type": "resource-update", "state": "DEPEND", "jobspec": jobspec(),
         "payload": {"id": JOBID, "resources": [], "exclude": EXCLUDE}},
        {"type": "prolog-remove", "payload": {"id": JOBID, "variables": {}}},
        {"type": "epilog-remove", "state": "CLEANUP", "payload": {"id": JOBID}},
    ]),
    st.builds(lambda tag, ok: {"type": "rpc-response", "tag": tag, "ok": ok, "errstr": "e"},
              st.sampled_from(["create", "setup", "post_run", "teardown", "abort", "x"]),
              st.booleans()),
    st.dictionaries(st.sampled_from(["type", "id", "payload", "state", "tag", "ok"]),
                    st.one_of(st.none(), st.integers(), st.text(max_size=5),
                              st.sampled_from(["depend", "R", "prolog-remove", "timer"]))),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENTS, max_size=25))
def test_any_sequence(events: list[dict[str, Any]]) -> None:
    """Any event sequence: well-formed actions, holds started and finished
    at most once, a refused event changes nothing, and once the job
    started its epilog (and dws.post_run) comes only from finish, a final
    release or free -- never while its processes may run."""
    sm = JobMachine({"epilog-timeout": 1})
    started: dict[str, int] = {}
    finished: dict[str, int] = {}
    for event in events:
        before = sm.state()
        try:
            actions = sm.event(event)
        except JobMachineError:
            assert sm.state() == before
            continue
        if event.get("type") == "reload":
            for flag, name in (("prolog_active", PROLOG), ("epilog_active", EPILOG)):
                started[name] = started.get(name, 0) + bool(event.get(flag))
        for a in actions:
            assert a["action"] in ACTIONS
            if a["action"] == "epilog-start" and before["start_posted"]:
                assert event["type"] in ("finish", "release", "free"), event
                assert event["type"] != "release" or event["final"] is True
            if a["action"] == "rpc" and a["tag"] == "post_run" and before["start_posted"]:
                assert event["type"] in ("finish", "release", "free"), event
            if a["action"] in ("prolog-start", "epilog-start"):
                started[a["name"]] = started.get(a["name"], 0) + 1
            if a["action"] in ("prolog-finish", "epilog-finish"):
                finished[a["name"]] = finished.get(a["name"], 0) + 1
                assert finished[a["name"]] <= started.get(a["name"], 0)
    assert all(n <= 1 for n in started.values())


# --- requests that reach no machine (one code path: plugin and harness) -------


def test_action_names_come_from_one_table() -> None:
    from flux_dws.libdws.jobsm import ACTIONS

    assert "respond-error" in ACTIONS and "dependency-add" in ACTIONS
    assert len(set(ACTIONS)) == len(ACTIONS) == 17


@pytest.mark.parametrize(("payload", "active", "has_dw", "errnum", "errstr"), [
    (None, False, False, errno.EPROTO,
     "received malformed dws.epilog-remove RPC: the payload is not an object"),
    ([1], True, True, errno.EPROTO,
     "received malformed dws.epilog-remove RPC: the payload is not an object"),
    ({"id": "x"}, True, True, errno.EPROTO,
     "received malformed dws.epilog-remove RPC: 'id' must be a job id (an integer >= 0)"),
    ({"id": -3}, True, True, errno.EPROTO,
     "received malformed dws.epilog-remove RPC: 'id' must be a job id (an integer >= 0)"),
    ({"id": 7}, False, True, errno.ENOENT, "dws.epilog-remove: job 7 is not active"),
    ({"id": 7}, True, False, errno.EINVAL, "dws.epilog-remove: job 7 has no #DW directives"),
])
def test_unrouted(payload: Any, active: bool, has_dw: bool, errnum: int, errstr: str) -> None:
    from flux_dws.libdws.jobsm import unrouted

    acts = unrouted("epilog-remove", payload, active, has_dw)
    assert acts[0] == {"action": "respond-error", "errnum": errnum, "errstr": errstr}
    if errnum == errno.EPROTO:  # the version-skew hint goes to the log
        assert acts[1]["action"] == "log" and "may be out of sync" in acts[1]["message"]
    else:
        assert len(acts) == 1


def test_unrouted_for_a_job_with_a_machine_is_a_bad_call() -> None:
    from flux_dws.libdws.jobsm import JobMachineError, unrouted

    with pytest.raises(JobMachineError, match="its machine answers"):
        unrouted("prolog-remove", {"id": 7}, True, True)


def test_harness_answers_unrouted_requests_as_the_plugin_does() -> None:
    """The harness' job manager no longer answers ENOENT for everything:
    jobsm decides, as in dws-jobtap.so (issue 24.4)."""
    from flux_dws.harness import Harness
    with Harness() as h:
        box: list[tuple[bool, int, str]] = []
        for payload in ([], {"id": 424242}):
            h.reactor.call(lambda p=payload: h.jm.rpc(  # type: ignore[misc]
                "job-manager.dws.prolog-remove", p,
                lambda ok, errnum, errstr, body: box.append((ok, errnum, errstr))))
        assert box == [
            (False, errno.EPROTO,
             "received malformed dws.prolog-remove RPC: the payload is not an object"),
            (False, errno.ENOENT, "dws.prolog-remove: job 424242 is not active")]
