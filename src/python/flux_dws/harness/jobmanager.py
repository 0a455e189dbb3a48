"""An emulated Flux job manager with the dws jobtap plugin, for the harness.

It moves jobs through RFC 21's states (DEPEND, SCHED, RUN, CLEANUP,
INACTIVE) the way flux-core's job manager does for what flux-dws touches:
dependencies, prolog and epilog actions, exceptions, jobspec updates,
posted events, memos, the job's KVS directory.  What the dws jobtap
plugin decides comes from the same libdws machine the C plugin uses
(``flux_dws.libdws.jobsm``); this module only carries its actions out.  A
first-fit scheduler hands out compute nodes of the emulated system.

Everything runs on the harness reactor thread; the test-facing methods of
``Harness`` hop onto it.
"""

from __future__ import annotations

import bisect
import errno
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flux_dws.harness.fake_resource import FakeFluxion, FakeResources
from flux_dws.harness.reactor import Reactor
from flux_dws.jobrecord import MEMO_WORKFLOW
from flux_dws.libdws.breakdown import BreakdownError, jobspec_node_count
from flux_dws.libdws.dataout import SERVICES as DATAOUT_SERVICES
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.jobsm import (
    ACTIONS,
    DEPENDENCY_METHOD,
    SERVICES,
    TOPIC_PREFIX,
    JobMachine,
    unrouted,
    validate_jobspec,
)
from flux_dws.service.link import JobInfo, RpcCallback

ACTIVE = ("DEPEND", "SCHED", "RUN", "CLEANUP")


@dataclass
class Job:
    id: int
    userid: int
    jobspec: dict[str, Any]
    machine: JobMachine
    runtime: float
    state: str = "NEW"
    nodes: int = 1
    deps: set[str] = field(default_factory=set)
    prologs: set[str] = field(default_factory=set)
    epilogs: set[str] = field(default_factory=set)
    hosts: list[str] = field(default_factory=list)
    lustre: dict[str, int] = field(default_factory=dict)  # {rabbit: GiB} of a top-level ssd
    ssds: dict[str, str] = field(default_factory=dict)  # {rabbit: ssd path} node-local
    started: bool = False
    finished: bool = False   # finish posted
    released: bool = False   # release final=true posted: no process is left
    freed: bool = False
    fatal: bool = False
    eventlog: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)
    memo: dict[str, Any] = field(default_factory=dict)
    kvs: dict[str, Any] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] | None = None
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    #: raises of the plugin's machine posted to the reactor, not yet done
    raising: int = 0
    timers: dict[str, int] = field(default_factory=dict)

    def events(self) -> list[str]:
        return [name for _, name, _ in self.eventlog]

    def event_time(self, name: str) -> float | None:
        """When the job's first ``name`` event was posted, or None."""
        return next((float(t) for t, n, _ in self.eventlog if n == name), None)

    def kvs_get(self, key: str) -> Any:
        """A key of the job's KVS directory, following symlinks."""
        seen = 0
        while key in self.links and seen < 8:
            key, seen = self.links[key], seen + 1
        return self.kvs.get(key)


class JobManager:
    def __init__(self, reactor: Reactor, computes: list[str], owner: int = 0,
                 epilog_timeout: float = 0.0) -> None:
        self.reactor = reactor
        self.free = list(computes)
        self.owner = owner
        self.jobs: dict[int, Job] = {}
        self.queue: list[int] = []
        self.resources = FakeResources(computes)
        self.fluxion: FakeFluxion | None = None
        self.rabbit_of: dict[str, str] = {}
        #: free GiB of ssd per rabbit, in graph order: Fluxion's part for a
        #: top-level ssd request (the spread Lustre form), packed rabbit by
        #: rabbit as Fluxion 0.54 packs it
        self.ssd_free: dict[str, int] = {}
        #: ssd vertices active node-local rabbit jobs have (_take_ssds)
        self.ssd_taken: set[str] = set()
        self.exclude: str | None = None      # resource.exclude
        self.request: Callable[[str, Any, int, RpcCallback], None] = self._no_service
        self._ids = itertools.count(1000)
        self.epilog_timeout = epilog_timeout
        self.plugin_logs: list[tuple[str, str]] = []
        #: job-manager.dws.dataout-begin/-end as the service sent them
        self.dataout: list[tuple[str, Any]] = []

    @staticmethod
    def _no_service(topic: str, payload: Any, userid: int, cb: RpcCallback) -> None:
        cb(False, errno.ENOSYS, f"No service matching {topic} is registered", None)

    # --- submission ---------------------------------------------------------

    def submit(self, jobspec: dict[str, Any], userid: int, runtime: float) -> int:
        validate_jobspec(jobspec)  # job.validate: bad dw is refused here
        jobid = next(self._ids)
        job = Job(jobid, userid, jobspec,
                  JobMachine({"epilog-timeout": self.epilog_timeout}), runtime)
        try:  # the rewrite for rabbit storage keeps the node count
            job.nodes = jobspec_node_count(jobspec.get("resources"))
        except BreakdownError:
            job.nodes = 1  # a shape without nodes: one node, as a scheduler would
        self.jobs[jobid] = job
        self._post(job, "submit", {"userid": userid, "urgency": 16})
        self._post(job, "validate", {})
        job.state = "DEPEND"
        self._feed(job, {"type": "depend", "id": jobid, "userid": userid, "jobspec": jobspec})
        self._leave_depend(job)
        return jobid

    def reload_jobtap(self, jobid: int) -> None:
        """``flux jobtap remove`` then ``load`` of the dws plugin, for one
        job: a new machine told what the job manager knows of it (the
        reload event), then, for a DEPEND job, job.state.depend again, as
        flux-core calls it for every such job on a load."""
        job = self.jobs[jobid]
        job.machine = JobMachine({"epilog-timeout": self.epilog_timeout})
        names = job.events()
        self._feed(job, {"type": "reload", "id": jobid, "userid": job.userid,
                         "jobspec": job.jobspec, "state": job.state,
                         "start_posted": "start" in names, "finish_posted": "finish" in names,
                         "prolog_active": bool(job.prologs), "epilog_active": bool(job.epilogs),
                         "other_dependencies": len({d for d in job.deps
                                                    if not d.startswith("dws-")})})
        if job.state == "DEPEND":
            self._feed(job, {"type": "depend", "id": jobid, "userid": job.userid,
                             "jobspec": job.jobspec})

    def cancel(self, jobid: int, note: str = "") -> None:
        self.raise_exception(jobid, "cancel", 0, note)

    def finish(self, jobid: int, status: int = 0) -> None:
        """The job's tasks exit now with ``status`` (a job submitted with a
        long runtime is held running until a test lets it go)."""
        job = self.jobs[jobid]
        handle = job.timers.pop("run", None)
        if handle is not None:
            self.reactor.cancel(handle)
        self._finish(job, status)

    # --- the job manager's own transitions ------------------------------------

    def _post(self, job: Job, name: str, context: dict[str, Any]) -> None:
        job.eventlog.append((time.time(), name, context))

    def _state(self, job: Job, state: str) -> None:
        job.state = state
        self._post(job, "state", {"state": state})

    def _leave_depend(self, job: Job) -> None:
        if job.state == "DEPEND" and not job.deps and not job.fatal:
            self._state(job, "SCHED")
            # Fluxion's queue: by priority (all alike here), then submission
            bisect.insort(self.queue, job.id)
            self._schedule()

    def _nodes(self, job: Job) -> int:
        return job.nodes

    @property
    def drained(self) -> dict[str, str]:
        return self.resources.drained()

    def _fits(self, job: Job, host: str) -> bool:
        """Fluxion's part: a job with ssd requests avoids rabbits that are
        down (and fits nowhere without the dws2jgf graph, as with
        --disable-fluxion), and every job honours its property constraints."""
        if self.fluxion is None:
            return True
        props = set(self.fluxion.properties.get(self.fluxion.node_paths.get(host, ""), {}))
        constraint = (job.jobspec.get("attributes", {}).get("system", {})
                      .get("constraints"))
        if constraint and not _satisfies(constraint, props, host):
            return False
        rabbit = self.rabbit_of.get(host)
        if '"ssd"' in json.dumps(job.jobspec.get("resources")):
            if not self.fluxion.graph:
                return False  # R without the dws2jgf graph has no ssd to match
            if rabbit:
                return self._free_ssd(rabbit) is not None
        return True

    def _chassis_hosts(self, job: Job, usable: list[str]) -> list[str]:
        """A job asking for chassis(c){node(k)}: k of the usable hosts from
        each of the first c chassis that have k (in the order of the free
        hosts), as Fluxion matches it; [] when c chassis do not have k
        each.  Any other job: the usable hosts."""
        top = (job.jobspec.get("resources") or [{}])[0]
        if top.get("type") != "chassis":
            return usable
        c, k = top.get("count", 1), (top.get("with") or [{}])[0].get("count", 1)
        by_chassis: dict[str, list[str]] = {}
        for h in usable:
            by_chassis.setdefault(self.rabbit_of.get(h, ""), []).append(h)
        full = [hosts[:k] for hosts in by_chassis.values() if len(hosts) >= k]
        return [h for hosts in full[:c] for h in hosts] if len(full) >= c else []

    def _free_ssd(self, rabbit: str) -> str | None:
        """An ssd vertex of the rabbit that is up and no active job has:
        Fluxion matches only those (a rabbit that is down has none; a
        vertex held down after its job ended is skipped)."""
        assert self.fluxion is not None
        for path in self.fluxion.ssds.get(rabbit, []):
            if self.fluxion.status.get(path) == "up" and path not in self.ssd_taken:
                return path
        return None

    def _take_ssds(self, job: Job) -> None:
        """A node-local rabbit job's ssd vertices: one per rabbit of its
        computes (what R's scheduling graph lists)."""
        if self.fluxion is None or not self.fluxion.graph or self._top_ssd(job) \
                or "dw" not in job.jobspec.get("attributes", {}).get("system", {}):
            return
        for rabbit in sorted({self.rabbit_of[h] for h in job.hosts if h in self.rabbit_of}):
            path = self._free_ssd(rabbit)
            if path is not None:
                job.ssds[rabbit] = path
                self.ssd_taken.add(path)


    def _schedule(self) -> None:
        while self.queue:
            job = self.jobs[self.queue[0]]
            n = self._nodes(job)
            drained = self.drained
            usable = self._chassis_hosts(job, [h for h in self.free
                                               if h not in drained and self._fits(job, h)])
            if n > len(usable):
                return
            want = self._top_ssd(job)
            if want > sum(self.ssd_free.values()):
                return
            self.queue.pop(0)
            for rabbit in self.ssd_free:
                take = min(want, self.ssd_free[rabbit])
                if take:
                    job.lustre[rabbit] = take
                    self.ssd_free[rabbit] -= take
                    want -= take
            job.hosts = usable[:n]
            for h in job.hosts:
                self.free.remove(h)
            self._take_ssds(job)
            self._post(job, "alloc", {})
            self._state(job, "RUN")
            self._feed(job, {"type": "run"})
            self._maybe_start(job)

    @staticmethod
    def _top_ssd(job: Job) -> int:
        return sum(int(r.get("count", 0)) for r in job.jobspec.get("resources") or []
                   if isinstance(r, dict) and r.get("type") == "ssd")

    def R_kvs(self, job: Job) -> dict[str, Any]:
        """The R the scheduler wrote to the KVS: with a scheduling graph of
        the job's ssd vertices (the job manager's own copy is redacted)."""
        R = self.R(job)
        if job.lustre and self.fluxion is not None and self.fluxion.graph:
            nodes: list[dict[str, Any]] = []
            for v in self.fluxion.graph["graph"]["nodes"]:
                md = v["metadata"]
                if md["type"] == "chassis" and md["properties"]["rabbit"] in job.lustre:
                    path = md["paths"]["containment"]
                    nodes.append(v)
                    nodes.append({"id": str(1000000 + len(nodes)), "metadata": {
                        "type": "ssd", "size": job.lustre[md["properties"]["rabbit"]],
                        "exclusive": True, "paths": {"containment": f"{path}/ssd0"}}})
            R["scheduling"] = {"graph": {"nodes": nodes, "edges": []}}
        elif self.fluxion is not None and self.fluxion.graph and self._top_ssd(job) == 0 \
                and "dw" in job.jobspec.get("attributes", {}).get("system", {}):
            # node-local storage: an ssd vertex on each rabbit of the job's
            # computes (this scheduler places none itself; real Fluxion
            # lists the ones it allocated)
            R["scheduling"] = {"graph": {"edges": [], "nodes": [
                {"id": str(2000000 + i), "metadata": {
                    "type": "ssd", "exclusive": True, "paths": {"containment": path}}}
                for i, (_, path) in enumerate(sorted(job.ssds.items()))]}}
        return R

    def R(self, job: Job) -> dict[str, Any]:
        return {"version": 1, "execution": {
            "R_lite": [{"rank": f"0-{len(job.hosts) - 1}", "children": {"core": "0"}}],
            "nodelist": [Hostlist(job.hosts).encode()], "starttime": 0, "expiration": 0}}

    def _maybe_start(self, job: Job) -> None:
        if job.state != "RUN" or job.prologs:
            return
        if job.fatal:
            self._cleanup(job)
            return
        job.started = True
        self._post(job, "start", {})
        self._feed(job, {"type": "start"})
        job.timers["run"] = self.reactor.call_later(job.runtime, lambda: self._finish(job, 0))

    def _finish(self, job: Job, status: int) -> None:
        """The job's tasks are gone: finish, then the exec system's final
        release (flux-core's job-exec sends both, in that order)."""
        job.timers.pop("run", None)
        if job.state not in ("RUN", "CLEANUP") or not job.started or job.finished:
            return
        job.finished = True
        self._post(job, "finish", {"status": status})
        self._feed(job, {"type": "finish"})
        if job.state == "RUN":
            self._cleanup(job)
        job.released = True
        self._post(job, "release", {"ranks": "all", "final": True})
        self._feed(job, {"type": "release", "final": True})
        self._maybe_inactive(job)

    def _cleanup(self, job: Job) -> None:
        if job.state in ("CLEANUP", "INACTIVE"):
            return
        if job.id in self.queue:
            self.queue.remove(job.id)
        self._state(job, "CLEANUP")
        self._feed(job, {"type": "cleanup"})
        self._maybe_inactive(job)

    def _maybe_inactive(self, job: Job) -> None:
        # as flux-core: free once the exec system released the job and no
        # epilog is pending, clean once the resources are free
        if job.state != "CLEANUP" or job.epilogs or (job.started and not job.released):
            return
        if job.hosts and not job.freed:
            job.freed = True
            self._post(job, "free", {})
            self._feed(job, {"type": "free"})
            if job.epilogs:
                return
        self._post(job, "clean", {})
        self._state(job, "INACTIVE")
        for handle in job.timers.values():
            self.reactor.cancel(handle)
        job.timers.clear()
        self.free.extend(job.hosts)
        for rabbit, gib in job.lustre.items():
            self.ssd_free[rabbit] += gib
        job.lustre.clear()
        # freed with the job (a vertex held down stays unmatched by status)
        self.ssd_taken.difference_update(job.ssds.values())
        self._schedule()

    def raise_exception(self, jobid: int, type_: str, severity: int, note: str) -> bool:
        job = self.jobs.get(jobid)
        if job is None or job.state == "INACTIVE":
            return False
        exc = {"type": type_, "severity": severity, "note": note}
        job.exceptions.append(exc)
        self._post(job, "exception", exc)
        first_fatal = severity == 0 and not job.fatal
        if severity == 0:
            job.fatal = True  # before the plugin reacts: a finished prolog must not start it
        self._feed(job, {"type": "exception", "exc_type": type_, "severity": severity,
                         "note": note})
        if not first_fatal:
            return True
        if job.state in ("DEPEND", "SCHED"):
            self._cleanup(job)
        elif job.state == "RUN":
            if job.started:
                # as flux-core: CLEANUP at once, finish once the exec
                # system has killed the tasks
                handle = job.timers.pop("run", None)
                if handle is not None:
                    self.reactor.cancel(handle)
                self._cleanup(job)
                self.reactor.post(lambda: self._finish(job, 9))
            else:
                self._maybe_start(job)
        return True

    # --- the plugin's actions ------------------------------------------------

    def _feed(self, job: Job, event: dict[str, Any],
              reply: RpcCallback | None = None) -> None:
        for a in job.machine.event(event):
            self._act(job, a, reply)

    def _act(self, job: Job | None, a: dict[str, Any], reply: RpcCallback | None) -> None:
        """Carry out one jobsm action: ``_act_<name>`` (names from jobsm.h's
        one table, flux_dws.libdws.jobsm.ACTIONS; every one has a method)."""
        getattr(self, _handler_name(a["action"]))(job, a, reply)

    def _act_dependency_add(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        job.deps.add(a["name"])
        self._post(job, "dependency-add", {"description": a["name"]})

    def _act_dependency_remove(self, job: Job, a: dict[str, Any],
                               reply: RpcCallback | None) -> None:
        if a["name"] in job.deps:
            job.deps.discard(a["name"])
            self._post(job, "dependency-remove", {"description": a["name"]})
            self._leave_depend(job)

    def _act_subscribe(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        pass  # the harness delivers every event to every machine

    def _act_rpc(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        tag = a.get("tag", "")

        def answer(ok: bool, errnum: int, errstr: str, payload: Any) -> None:
            if job.state != "INACTIVE":
                self._feed(job, {"type": "rpc-response", "tag": tag, "ok": ok,
                                 "errnum": errnum, "errstr": errstr, "payload": payload})

        self.request(a["topic"], a["payload"], self.owner, answer)

    def _act_raise(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        def raise_later() -> None:
            job.raising -= 1
            self.raise_exception(job.id, a["type"], a.get("severity", 0), a.get("note", ""))

        job.raising += 1
        self.reactor.post(raise_later)

    def _act_prolog_start(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        job.prologs.add(a["name"])
        self._post(job, "prolog-start", {"description": a["name"]})

    def _act_prolog_finish(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        if a["name"] in job.prologs:
            job.prologs.discard(a["name"])
            self._post(job, "prolog-finish", {"description": a["name"],
                                              "status": a.get("status", 0)})
            self._maybe_start(job)

    def _act_epilog_start(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        job.epilogs.add(a["name"])
        self._post(job, "epilog-start", {"description": a["name"]})

    def _act_epilog_finish(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        if a["name"] in job.epilogs:
            job.epilogs.discard(a["name"])
            self._post(job, "epilog-finish", {"description": a["name"],
                                              "status": a.get("status", 0)})
            self.reactor.post(lambda: self._maybe_inactive(job))

    def _act_lookup_r(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        self.reactor.post(lambda: self._feed(job, {"type": "R", "R": self.R(job)}))

    def _act_post_event(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        ctx = a.get("context", {})
        if job.raising:
            # flux_jobtap_raise_exception posts at once, this event after
            # it: here the raise waits for the reactor, so this does too
            self.reactor.post(lambda: self._post(job, a["name"], ctx))
            return
        self._post(job, a["name"], ctx)
        if a["name"] == "dws_environment":
            job.env = dict(ctx.get("variables", {}))

    def _act_jobspec_update(self, job: Job, a: dict[str, Any],
                            reply: RpcCallback | None) -> None:
        update = a["update"]
        for key, value in update.items():
            _set_dotted(job.jobspec, key, value)
        self._post(job, "jobspec-update", update)
        if job.state == "SCHED":
            # flux-core sends a job in SCHED back through PRIORITY: its
            # alloc request goes again, in its place in the queue
            self.reactor.post(self._schedule)

    def _act_respond(self, job: Job | None, a: dict[str, Any],
                     reply: RpcCallback | None) -> None:
        if reply is not None:
            reply(True, 0, "", a.get("payload", {}))

    def _act_respond_error(self, job: Job | None, a: dict[str, Any],
                           reply: RpcCallback | None) -> None:
        if reply is not None:
            reply(False, a.get("errnum", errno.EINVAL), a.get("errstr", ""), None)

    def _act_timer_start(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        key = a["key"]

        def fire() -> None:
            job.timers.pop(key, None)
            self._feed(job, {"type": "timer", "key": key, "state": job.state})

        job.timers[key] = self.reactor.call_later(a["after"], fire)

    def _act_timer_stop(self, job: Job, a: dict[str, Any], reply: RpcCallback | None) -> None:
        handle = job.timers.pop(a["key"], None)
        if handle is not None:
            self.reactor.cancel(handle)

    def _act_log(self, job: Job | None, a: dict[str, Any], reply: RpcCallback | None) -> None:
        self.plugin_logs.append((a.get("level", "info"), a.get("message", "")))

    # --- what the service reaches -----------------------------------------------

    def rpc(self, topic: str, payload: Any, answer: RpcCallback) -> None:
        method = topic[len(TOPIC_PREFIX):] if topic.startswith(TOPIC_PREFIX) else None
        if method in DATAOUT_SERVICES:
            # dws-jobtap.so holds the released job's after* dependents
            # (libdws dataout.h); the harness has no dependents to hold,
            # so it records what the service told it
            self.dataout.append((method, payload))
            answer(True, 0, "", {})
        elif method is not None:
            # the plugin registers these alone (the reference's three, and
            # prestage-remove kept for an older flux-dws service) and
            # flux-dws' own dependency method (dws-limit, dws-prestage)
            if method not in SERVICES and method != DEPENDENCY_METHOD:
                answer(False, errno.ENOSYS, f"No service matching {topic} is registered", None)
                return
            jobid = payload.get("id") if isinstance(payload, dict) else None
            job = self.jobs.get(jobid) if isinstance(jobid, int) else None
            active = job is not None and job.state != "INACTIVE"
            if job is None or not active or not has_dw(job.jobspec):
                # no machine to ask: jobsm decides the answer, as in dws-jobtap.so
                for a in unrouted(method, payload, active,
                                  job is not None and has_dw(job.jobspec)):
                    self._act(None, a, answer)
                return
            self._feed(job, {"type": method, "payload": payload, "state": job.state,
                             "jobspec": job.jobspec}, reply=answer)
        elif topic == "job-manager.memo":
            job = self.jobs.get(payload.get("id"))
            if job is None:
                answer(False, errno.ENOENT, "unknown job", None)
                return
            for k, v in payload.get("memo", {}).items():
                if v is None:
                    job.memo.pop(k, None)
                else:
                    job.memo[k] = v
            self._post(job, "memo", payload.get("memo", {}))
            answer(True, 0, "", {})
        elif topic == "job-manager.post-event.post":
            job = self.jobs.get(payload.get("id"))
            if job is None or job.state == "INACTIVE":
                answer(False, errno.ENOENT, f"No such job {payload.get('id')}", None)
                return
            self._post(job, payload["name"], payload.get("context", {}))
            answer(True, 0, "", {})
        elif topic == "job-manager.raise":
            ok = self.raise_exception(payload["id"], payload["type"], payload["severity"],
                                      payload.get("note", ""))
            answer(ok, 0 if ok else errno.ENOENT, "" if ok else "unknown job", {})
        elif topic in ("resource.drain", "resource.undrain"):
            self.resources.rpc(topic, payload, answer)
            self._schedule()  # an undrain may let a job run
        elif topic.startswith("sched-fluxion-resource.") and self.fluxion is not None:
            self.fluxion.rpc(topic, payload, answer)
            self._schedule()  # an ssd up or a property gone may let a job run
        else:
            answer(False, errno.ENOSYS, f"No service matching {topic} is registered", None)

    def job_info(self, jobid: int, want_R: bool = False) -> JobInfo:
        job = self.jobs.get(jobid)
        if job is None:
            return JobInfo(False, f"unknown job {jobid}")
        if want_R and not job.hosts:
            return JobInfo(False, f"job {jobid} has no R")
        return JobInfo(True, jobspec=job.jobspec, userid=job.userid,
                       R=self.R_kvs(job) if want_R else None)

    def kvs_commit(self, jobid: int, put: dict[str, Any], link: dict[str, str]
                   ) -> tuple[bool, str]:
        job = self.jobs.get(jobid)
        if job is None:
            return False, f"unknown job {jobid}"
        job.kvs.update(put)
        job.links.update(link)
        return True, ""

    def active_dw_jobs(self) -> list[dict[str, Any]]:
        """What job-list tells of active jobs with a dw attribute."""
        return [{"id": j.id, "state": j.state, "dependencies": sorted(j.deps),
                 "rabbit": MEMO_WORKFLOW in j.memo}
                for j in self.jobs.values() if j.state in ACTIVE
                and "dw" in j.jobspec.get("attributes", {}).get("system", {})]


def _satisfies(constraint: Any, props: set[str], host: str) -> bool:
    """RFC 31 properties/hostlist/not/and/or, as Fluxion evaluates them on
    a node."""
    if not isinstance(constraint, dict):
        return True
    for op, arg in constraint.items():
        if op == "properties":
            if not all((p[1:] not in props) if p.startswith("^") else (p in props)
                       for p in arg):
                return False
        elif op == "hostlist":
            if not any(host in Hostlist(h) for h in arg):
                return False
        elif op == "not":
            if all(_satisfies(c, props, host) for c in arg):
                return False
        elif op == "and":
            if not all(_satisfies(c, props, host) for c in arg):
                return False
        elif op == "or":
            if not any(_satisfies(c, props, host) for c in arg):
                return False
    return True


def _set_dotted(obj: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    for p in parts[:-1]:
        obj = obj.setdefault(p, {})
    obj[parts[-1]] = value


def _handler_name(action: str) -> str:
    return "_act_" + action.replace("-", "_").lower()


# every action jobsm can return has its method (checked at import, not at
# the first job that needs it)
_missing = [a for a in ACTIONS if not hasattr(JobManager, _handler_name(a))]
if _missing:
    raise ImportError(f"the harness' job manager cannot carry out {_missing}")


def has_dw(jobspec: dict[str, Any]) -> bool:
    return "dw" in ((jobspec.get("attributes") or {}).get("system") or {})
