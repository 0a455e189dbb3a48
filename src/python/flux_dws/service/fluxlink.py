"""The service's link on a real Flux broker (flux-core Python bindings).

Used both when the service is a broker module (``flux module load dws.py``)
and when it runs stand-alone (``flux python dws.py``): only the handle
differs.  Other threads reach the reactor through a pipe watched by the
reactor (``post``); nothing here waits for an answer.
"""

from __future__ import annotations

import errno
import json
import os
import syslog
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Collection
from typing import Any

from flux_dws.jobrecord import MEMO_WORKFLOW
from flux_dws.service import reactorgc
from flux_dws.service.link import JobInfo, Link, Request, ResourceFollow, RpcCallback

#: RFC 21 state bits as job-list reports them
#: job-info.lookup's FLUX_JOB_LOOKUP_CURRENT (flux-core's job.h): the jobspec
#: with its jobspec-update events applied
LOOKUP_CURRENT = 2
_STATES = {2: "DEPEND", 4: "PRIORITY", 8: "SCHED", 16: "RUN", 32: "CLEANUP"}
#: how long the reactor runs posted events (watch events, Kubernetes
#: answers) before it lets the broker dispatch the messages that wait
POSTED_SLICE_S = 0.02
#: the longest the reactor goes without looking whether garbage is due
GC_EVERY_S = 1.0
_LEVELS = {"err": syslog.LOG_ERR, "warning": syslog.LOG_WARNING, "info": syslog.LOG_INFO,
           "debug": syslog.LOG_DEBUG}


class FluxLink(Link):
    def __init__(self, handle: Any, module_name: str | None = None) -> None:
        """``module_name``: set when this is a broker module; the broker
        already routes ``<module_name>.*`` to it, so that service is not
        registered again."""
        import flux.constants

        self.module_name = module_name
        self.h = handle
        self._flux_constants = flux.constants
        self._watchers: list[Any] = []
        self._timers: dict[str, Any] = {}
        self._queue: deque[Callable[[], None]] = deque()
        self._lock = threading.Lock()
        self._rfd, self._wfd = os.pipe()
        os.set_blocking(self._rfd, False)
        os.set_blocking(self._wfd, False)
        w = self.h.fd_watcher_create(self._rfd, self._drain_posted,
                                     events=flux.constants.FLUX_POLLIN)
        w.start()
        self._watchers.append(w)
        # garbage (flux futures among it) is collected here, never in a
        # watch or writer thread (reactorgc.py says why)
        reactorgc.hold()
        gc_timer = self.h.timer_watcher_create(
            GC_EVERY_S, lambda *_: reactorgc.collect_due(), repeat=GC_EVERY_S)
        gc_timer.start()
        self._watchers.append(gc_timer)
        self.config_reload: Callable[[dict[str, Any]], str | None] | None = None

    def close(self) -> None:
        for w in self._watchers:
            w.stop()
        for t in self._timers.values():
            t.stop()
        self._timers.clear()
        reactorgc.release()
        os.close(self._rfd)
        os.close(self._wfd)

    # --- requests -----------------------------------------------------------

    def serve(self, service: str, handler: Callable[[Request], None],
              guest_methods: Collection[str] = ()) -> None:
        c = self._flux_constants

        owner = int(self.h.attr_get("security.owner"))

        def on_request(h: Any, mtype: int, msg: Any, arg: Any) -> None:
            topic = msg.topic
            if topic == f"{service}.config-reload":
                if int(msg.userid) != owner:  # the broker's, from its owner alone
                    self.respond_error(msg, errno.EPERM, "Request requires owner credentials")
                    return
                self._on_config_reload(msg)
                return
            try:
                payload = msg.payload
            except (ValueError, TypeError, OSError):
                payload = None  # empty or not JSON: the engine names the problem
            self._guard(lambda: handler(Request(topic, payload, int(msg.userid), msg)),
                        f"request {topic}")

        if service != self.module_name:
            self.h.service_register(service).get()
        # the exact topic too: a broker module already has a built-in
        # config-reload handler, and the exact match added last is the one
        # the broker's dispatch picks over it and over the glob
        for topic in (f"{service}.*", f"{service}.config-reload"):
            w = self.h.msg_watcher_create(on_request, c.FLUX_MSGTYPE_REQUEST, topic)
            w.start()
            self._watchers.append(w)
        # the broker lets other users' requests through to these alone (the
        # handlers above take the owner's only)
        for method in guest_methods:
            w = self.h.msg_watcher_create(on_request, c.FLUX_MSGTYPE_REQUEST,
                                          f"{service}.{method}", rolemask=c.FLUX_ROLE_USER)
            w.start()
            self._watchers.append(w)

    def _on_config_reload(self, msg: Any) -> None:
        conf = msg.payload if isinstance(msg.payload, dict) else {}
        error = self.config_reload(conf) if self.config_reload else None
        if error:
            self.respond_error(msg, errno.EINVAL, error)
        else:
            self.respond(msg, None)

    def respond(self, msg: Any, payload: Any) -> None:
        try:
            self.h.respond(msg, payload)
        except OSError as exc:
            self.log("err", f"respond to {msg.topic}: {exc.strerror}")

    def respond_error(self, msg: Any, errnum: int, errstr: str) -> None:
        try:
            self.h.flux_respond_error(msg.handle, errnum, errstr.encode())
        except OSError as exc:
            self.log("err", f"respond to {msg.topic}: {exc.strerror}")

    # --- RPCs -------------------------------------------------------------------

    def rpc(self, topic: str, payload: Any, nodeid: int, callback: RpcCallback | None) -> None:
        try:
            future = self.h.rpc(topic, payload, nodeid)
        except OSError as exc:
            if callback is not None:
                callback(False, exc.errno or errno.EIO, str(exc.strerror), None)
            return

        def then(f: Any) -> None:
            try:
                body = f.get()
            except OSError as exc:
                if callback is not None:
                    callback(False, exc.errno or errno.EIO,
                             f.error_string() or str(exc.strerror), None)
                return
            except Exception as exc:  # an answer the bindings cannot decode
                if callback is not None:
                    callback(False, errno.EPROTO, f"{topic}: {exc}", None)
                return
            if callback is not None:
                callback(True, 0, "", body)

        future.then(then)

    def job_info(self, jobid: int, want_R: bool, callback: Callable[[JobInfo], None]) -> None:
        box: dict[str, Any] = {}

        def got_userid(ok: bool, errnum: int, errstr: str, body: Any) -> None:
            if not ok:
                callback(JobInfo(False, errstr))
                return
            box["userid"] = (body or {}).get("job", {}).get("userid")
            keys = ["jobspec", "R"] if want_R else ["jobspec"]
            # the jobspec as it is now, as the harness's job manager gives
            # it: with its jobspec-update events (flux-accounting's
            # mf_priority sets the default bank so, at job.new)
            self.rpc("job-info.lookup", {"id": jobid, "keys": keys, "flags": LOOKUP_CURRENT},
                     0, got_jobspec)

        def got_jobspec(ok: bool, errnum: int, errstr: str, body: Any) -> None:
            if not ok:
                callback(JobInfo(False, errstr))
                return
            values = {}
            for key in ("jobspec", "R"):
                value = (body or {}).get(key)
                if isinstance(value, str):
                    try:
                        value = json.loads(value)
                    except ValueError:
                        callback(JobInfo(False, f"the job's {key} is not JSON"))
                        return
                values[key] = value
            callback(JobInfo(True, jobspec=values["jobspec"], userid=box.get("userid"),
                             R=values["R"]))

        self.rpc("job-list.list-id", {"id": jobid, "attrs": ["userid"]}, 0, got_userid)

    def kvs_commit(self, jobid: int, put: dict[str, Any], link: dict[str, str],
                   callback: Callable[[bool, str], None]) -> None:
        import flux.job
        import flux.kvs

        jobdir = flux.job.JobID(jobid).kvs
        txn = flux.kvs.KVSTxn(self.h, jobdir)
        for key, value in put.items():
            txn.put(key, value)
        for key, target in link.items():
            txn.symlink(key, f"{jobdir}.{target}")
        try:
            future = txn.commit_async()
        except OSError as exc:
            callback(False, str(exc.strerror))
            return

        def then(f: Any) -> None:
            try:
                f.get()
            except OSError as exc:
                callback(False, str(exc.strerror))
                return
            except Exception as exc:  # every commit is answered (dws.watch_test waits)
                callback(False, str(exc))
                return
            callback(True, "")

        future.then(then)

    def active_jobs(self, callback: Callable[[list[dict[str, Any]] | None], None]) -> None:
        def got(ok: bool, errnum: int, errstr: str, body: Any) -> None:
            if not ok:
                self.log("warning", f"cannot list active jobs: {errstr}")
                callback(None)
                return
            out = []
            for j in (body or {}).get("jobs", []):
                state = _STATES.get(j.get("state"))
                if state is not None:
                    user = (j.get("annotations") or {}).get("user") or {}
                    out.append({"id": j["id"], "state": state,
                                "dependencies": j.get("dependencies") or [],
                                "rabbit": MEMO_WORKFLOW in user})
            callback(out)

        # job-list cannot filter on the dw attribute; the engine ignores the
        # jobs it has no Workflow or dws-create dependency for (rabbit: the
        # job has the memo its Workflow's creation posts)
        self.rpc("job-list.list", {"max_entries": 0,
                                   "attrs": ["state", "dependencies", "annotations"],
                                   "constraint": {"states": ["depend", "sched", "run",
                                                             "cleanup"]}}, 0, got)

    def watch_resources(self, post: Callable[[dict[str, Any]], None], fluxion: bool,
                        drain_queues: list[str] | None) -> ResourceFollow:
        from flux_dws.service.resource_journal import ResourceWatch

        def log(level: str, message: str) -> None:  # from the watch thread
            self.post(lambda: self.log(level, message))

        try:
            uri = self.h.attr_get("local-uri")
        except OSError:
            uri = None
        watch = ResourceWatch(post, log, fluxion, drain_queues, uri=uri)
        watch.start()
        return watch

    # --- reactor --------------------------------------------------------------

    def post(self, fn: Callable[[], None]) -> None:
        # Only the post that finds the queue empty writes a wake-up byte:
        # the reactor empties the queue (under the lock) after reading the
        # pipe, so a later post either is taken by that same drain or finds
        # the queue empty and wakes it again (a drain that stops at the end
        # of its slice with the queue not empty writes the byte itself,
        # after its own reads).  So the pipe holds a byte or
        # two, never fills, and a write never blocks a watch thread (nor
        # deadlocks the reactor thread posting to itself).
        with self._lock:
            wake = not self._queue
            self._queue.append(fn)
        if wake:
            try:
                os.write(self._wfd, b"x")
            except BlockingIOError:
                pass  # the write end is non-blocking; a full pipe already wakes it

    def _drain_posted(self, h: Any, watcher: Any, fd: int, revents: int, arg: Any) -> None:
        # One slice of the queue at a time: back in the reactor the broker
        # dispatches the requests that came meanwhile (dws.status, a
        # job's dws.create), so a request waits for one slice, not for a
        # backlog of thousands of watch events (flux-coral2 #466).  What
        # is left is still queued: a wake-up byte brings us back to it.
        try:
            while os.read(self._rfd, 4096):
                pass
        except BlockingIOError:
            pass
        deadline = time.monotonic() + POSTED_SLICE_S
        more = True
        while more and time.monotonic() < deadline:
            with self._lock:
                fn = self._queue.popleft() if self._queue else None
            if fn is None:
                more = False
            else:
                self._guard(fn, "posted event")
        reactorgc.collect_due()
        if more:
            with self._lock:
                more = bool(self._queue)  # posts that find it non-empty do not wake
        if more:
            try:
                os.write(self._wfd, b"x")
            except BlockingIOError:
                pass

    def timer_start(self, key: str, after: float, fn: Callable[[], None]) -> None:
        self.timer_stop(key)

        def fire(h: Any, watcher: Any, revents: int, arg: Any) -> None:
            self._timers.pop(key, None)
            self._guard(fn, f"timer {key}")

        t = self.h.timer_watcher_create(after, fire)
        t.start()
        self._timers[key] = t

    def timer_stop(self, key: str) -> None:
        t = self._timers.pop(key, None)
        if t is not None:
            t.stop()

    def _guard(self, fn: Callable[[], None], what: str) -> None:
        """Run a callback; a bug in it is logged, and the service keeps
        serving (an exception escaping into the reactor would stop it)."""
        try:
            fn()
        except Exception:
            self.log("err", f"{what}: internal error: {traceback.format_exc()}")

    def log(self, level: str, message: str) -> None:
        self.h.log(_LEVELS.get(level, syslog.LOG_INFO), message)
