"""The dws service shell: events in to the engine, actions out to the world.

One reactor thread owns the engine.  Kubernetes watch threads and the
writer pool hand their results to it through ``Link.post``; requests,
RPC answers and timers arrive on it already.  Each event goes through
``Engine.event`` and the actions that come back are carried out here, in
order, without blocking: Kubernetes calls go to the kube layer's threads,
Flux messages to the link.
"""

from __future__ import annotations

import errno
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from flux_dws.k8s.watching import WatchSpec
from flux_dws.libdws.engine import ACTIONS, HEALTH_FLUSH_TIMER, RECORD_KEY, Engine, EngineError
from flux_dws.libdws.engine import GUEST_METHODS as engine_guest_methods
from flux_dws.libdws.engine import METHODS as engine_methods
from flux_dws.libdws.wfstates import workflow_unsettled
from flux_dws.service.link import JobInfo, Link, Request, ResourceFollow
from flux_dws.users import passwd, user_name

#: Where DWS keeps its system objects (SystemConfiguration, Storage,
#: SystemStatus), whatever namespace the Workflows are made in.
SYSTEM_NAMESPACE = "default"
#: Kubernetes kinds the service watches besides the Workflows (which it
#: watches in its own namespace): (kind, namespace)
WATCHED_SYSTEM = (("SystemConfiguration", SYSTEM_NAMESPACE), ("Storage", SYSTEM_NAMESPACE))
#: Kinds it watches in the Workflows' namespace besides them: the
#: PersistentStorageInstances (``flux dws persistent``, the owner named
#: beside a refused persistentdw), which nnf-sos makes where the Workflow is
WATCHED_BESIDE_WORKFLOWS = ("PersistentStorageInstance",)
_WRITES = frozenset(("create", "patch", "json-patch", "delete"))
#: dws.* methods any user may call (the engine's table): rabbit health,
#: which says no more than flux resource tells every user of nodes (drains
#: and their reasons) and lets users see why their rabbit jobs wait
#: (flux-coral2 #229).  The rest (the jobtap plugin's requests, status,
#: config) stay the owner's.
GUEST_METHODS = engine_guest_methods
#: the barrier request (answered by the shell, not the engine)
WATCH_TEST = "dws.watch_test"
#: a configuration reload (the broker's module protocol; answered by the link)
CONFIG_RELOAD = "dws.config-reload"
#: Every dws.<name> method the service answers: the engine's and the
#: shell's own.  Tests go through this list (a guest is refused every one
#: but GUEST_METHODS), so a new method is covered where it is added.
METHODS: tuple[str, ...] = engine_methods + tuple(
    t.removeprefix("dws.") for t in (WATCH_TEST, CONFIG_RELOAD))
#: RPCs (Fluxion set_status, drains) sent and not answered at most; the rest
#: wait in order.  The first start-up on El Capitan marks 25,056 ssd
#: vertices up one RPC each: all at once, their futures and messages were
#: 50 MB of the service's peak RSS (doc/guide/service.rst).
RPC_WINDOW = 256
#: how many times a job's KVS write is sent before it is given up: a commit
#: is idempotent, and one that fails for a passing reason (a chaos run at
#: El Capitan scale saw one "File exists" among thousands) must not lose
#: the job's record
KVS_TRIES = 3


class Kube(Protocol):
    def submit(self, action: dict[str, Any],
               sent: Callable[[], None] | None = None) -> None: ...
    def start_watches(self, specs: list[WatchSpec]) -> None: ...
    def stop(self, timeout: float = 5.0) -> None: ...
    def pending(self) -> int: ...
    def oldest_pending(self) -> float | None: ...
    def watch_barrier(self, done: Callable[[str | None], None]) -> None: ...
    def watch_states(self) -> list[dict[str, Any]]: ...
    def writes_barrier(self, done: Callable[[], None]) -> None: ...


class Stats:
    """What the service measures of itself (``flux dws status``, benchmarks)."""

    def __init__(self, keep: int = 100_000) -> None:
        self.events = 0
        self.actions = 0
        self.engine_seconds = 0.0
        # per event kind ("watch Workflow", "k8s-result", "rpc-result", ...):
        # [events, engine seconds], so an admin sees where the time goes
        self.by_kind: dict[str, list[float]] = {}
        # watch event in -> each write it causes sent (appended by writers),
        # and its two waits: for the reactor (watch event posted -> fed to
        # the engine) and for a writer (write queued -> sent); the rest of
        # a reaction is the engine and carrying out the actions before it
        self.reactions: deque[float] = deque(maxlen=keep)
        self.reactor_waits: deque[float] = deque(maxlen=keep)
        self.writer_waits: deque[float] = deque(maxlen=keep)

    def count(self, event: Mapping[str, Any], seconds: float, actions: int) -> None:
        kind = str(event.get("type"))
        if kind == "watch":
            kind = f"watch {event.get('kind')}"
        entry = self.by_kind.setdefault(kind, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds
        self.events += 1
        self.actions += actions
        self.engine_seconds += seconds

    def as_dict(self) -> dict[str, Any]:
        r, rw, ww = (sorted(d) for d in (self.reactions, self.reactor_waits,
                                         self.writer_waits))

        def pct(r: list[float], p: float) -> float | None:
            return round(r[min(len(r) - 1, int(p * len(r)))] * 1000, 3) if r else None

        return {"events": self.events, "actions": self.actions,
                "engine_ms": round(self.engine_seconds * 1000, 3),
                "reaction_ms_p50": pct(r, 0.50), "reaction_ms_p99": pct(r, 0.99),
                "reactions": len(r),
                "reactor_wait_ms_p50": pct(rw, 0.50), "reactor_wait_ms_p99": pct(rw, 0.99),
                "writer_wait_ms_p50": pct(ww, 0.50), "writer_wait_ms_p99": pct(ww, 0.99),
                "by_event": {k: {"events": int(n), "engine_ms": round(sec * 1000, 3)}
                             for k, (n, sec) in sorted(self.by_kind.items())}}


class Service:
    def __init__(self, link: Link, config: dict[str, Any],
                 kube_factory: Callable[[Callable[[dict[str, Any]], None]], Kube],
                 namespace: str = "default") -> None:
        self.link = link
        self.engine = Engine({**config, "namespace": namespace})
        # each step the engine takes goes to the debug log with its rule
        self.engine.trace(True)
        self.namespace = namespace
        self._owner = config.get("owner", 0)
        self.stats = Stats()
        self._msgs: dict[int, Any] = {}
        self._msgid = 0
        self._gids: dict[int, int] = {}
        self._names: dict[int, str] = {}  # uid -> user name, where passwd has one
        # uid -> user name, read on watch threads
        self._user_names: dict[int, str] = {}
        self._looking_up: set[int] = set()
        # events waiting, in order, for their owner's group (uid or None)
        self._held: deque[tuple[dict[str, Any], int | None]] = deque()
        self._fluxion = config.get("fluxion", True) is not False
        self._drain_queues = config.get("drain_queues") or None
        self._resources: ResourceFollow | None = None
        self._timers: set[str] = set()        # timers running (started by the engine)
        self._flux_seq = 0                    # Flux calls sent so far
        self._flux_open: set[int] = set()     # ... and not answered yet
        self._flux_waits: list[tuple[int, Callable[[], None]]] = []
        self._rpcs_sent = 0                   # RPCs under way (at most RPC_WINDOW)
        self._rpcs_waiting: deque[Callable[[], None]] = deque()  # ... and beyond it
        self._kvs_seq = 0                     # KVS writes sent so far
        # (job, key) -> the last write that put it, while one is under way:
        # a write sent again leaves out the keys a later write has put
        self._kvs_latest: dict[tuple[int, str], int] = {}
        # events posted from other threads and not fed yet ("events behind")
        self._posted = 0
        self._posted_lock = threading.Lock()
        self._fed_posted = 0
        self._reaction_from: float | None = None  # the watch event being applied
        self.kube = kube_factory(self.post_event)
        self._handlers = self.action_handlers()

    # --- lifecycle ------------------------------------------------------

    def start(self) -> None:
        """Take dws.* requests and start the watches (on the reactor thread)."""
        self.link.serve("dws", self._request, GUEST_METHODS)
        self.kube.start_watches([WatchSpec("Workflow", self.namespace,
                                           unsettled=workflow_unsettled)]
                                + [WatchSpec(kind, self.namespace)
                                   for kind in WATCHED_BESIDE_WORKFLOWS]
                                + [WatchSpec(kind, ns) for kind, ns in WATCHED_SYSTEM])
        self._resources = self.link.watch_resources(self.post_event, self._fluxion,
                                                    self._drain_queues)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the threads (resource follow, watches, writers), waiting
        for them up to ``timeout`` seconds in all."""
        deadline = time.monotonic() + timeout
        if self._resources is not None:
            self._resources.stop(timeout)
            self._resources = None
        self.kube.stop(max(0.0, deadline - time.monotonic()))

    def reconfig(self, config: dict[str, Any], flux_config: Mapping[str, Any]) -> None:
        """A ``flux config reload``, checked whole by the caller: the
        [rabbit] table (``config``) to the engine, and the broker config's
        resource.exclude with the new drain queues to the
        resource follow, so that rabbit health drains by the new ones too."""
        self.engine.reconfig({**config, "namespace": self.namespace})
        self._owner = config.get("owner", self._owner)
        self._drain_queues = config.get("drain_queues") or None
        if self._resources is not None:
            self._resources.reconfigure(flux_config, self._drain_queues)

    # --- events in ------------------------------------------------------

    def post_event(self, event: dict[str, Any]) -> None:
        """From any thread: feed ``event`` to the engine on the reactor thread."""
        t_in = time.monotonic()
        if event.get("kind") in WATCHED_BESIDE_WORKFLOWS and event.get("type") in ("sync",
                                                                                  "watch"):
            # on the watch thread: a passwd lookup may wait on NSS
            event["owners"] = self._owner_names(event)
        with self._posted_lock:
            self._posted += 1
        self.link.post(lambda: self._feed_posted(event, t_in))

    def _owner_names(self, event: dict[str, Any]) -> dict[str, str]:
        """{"<uid>": user name} for the spec.userID of the objects of a PSI
        sync or watch event (uids without a passwd entry left out), so that
        the engine names a storage's owner in plain words."""
        objects = event.get("objects") if event.get("type") == "sync" else [event.get("object")]
        names: dict[str, str] = {}
        for obj in objects if isinstance(objects, list) else []:
            spec = obj.get("spec") if isinstance(obj, dict) else None
            uid = spec.get("userID") if isinstance(spec, dict) else None
            if not isinstance(uid, int) or isinstance(uid, bool) or uid < 0:
                continue
            name = self._user_names.get(uid)
            if name is None:  # not known yet (a user added later is found)
                name = user_name(uid)
                if name is None:
                    continue
                self._user_names[uid] = name
            names[str(uid)] = name
        return names

    def _feed_posted(self, event: dict[str, Any], t_in: float) -> None:
        self._fed_posted += 1
        self.feed(event, t_in)

    def load(self) -> dict[str, Any]:
        """How far behind the service is (``flux dws status``): events
        posted by the watch and writer threads and not fed to the engine
        yet, Kubernetes writes queued or under way and the age of the
        oldest, Flux calls not answered yet."""
        with self._posted_lock:
            behind = self._posted - self._fed_posted
        oldest = self.kube.oldest_pending()
        return {"events_behind": behind, "k8s_pending": self.kube.pending(),
                "k8s_oldest_pending_s": None if oldest is None else round(oldest, 3),
                "flux_pending": len(self._flux_open), "rpcs_waiting": len(self._rpcs_waiting),
                "watches": self.kube.watch_states()}

    def feed(self, event: dict[str, Any], t_in: float | None = None) -> None:
        """Feed one event to the engine and carry out its actions.  ``t_in``:
        when a watch event came in (the reaction figure: from then until
        each write it causes is sent)."""
        event["now"] = time.time()
        t0 = time.monotonic()
        try:
            actions = self.engine.event(event)
        except EngineError as exc:
            self.link.log("err", f"dropped a malformed {event.get('type')} event: {exc}")
            return
        self.stats.count(event, time.monotonic() - t0, len(actions))
        for t in self.engine.take_trace():  # which rule moved which job
            self.link.log("debug", f"job {t['id']}: {t['rule']}: {t['step']} ({t['facts']})")
        self._reaction_from = t_in if event.get("type") == "watch" else None
        if self._reaction_from is not None:
            self.stats.reactor_waits.append(t0 - self._reaction_from)
        try:
            # the jobs' records first: in place before the actions they
            # come with (the epilog-remove that ends a job)
            for jobid, record in self.engine.take_records().items():
                self._do_kvs({"id": jobid, "put": {RECORD_KEY: record}, "link": {}}, event)
            self._apply(actions, event)
        finally:
            self._reaction_from = None

    def _request(self, req: Request) -> None:
        if req.topic == WATCH_TEST:
            if req.userid != self._owner:  # the engine decides its own methods
                self.link.respond_error(req.msg, errno.EPERM,
                                        "Request requires owner credentials")
                return
            self._watch_test(req)
            return
        self._msgid += 1
        self._msgs[self._msgid] = req.msg
        event: dict[str, Any] = {"type": "request", "topic": req.topic, "msgid": self._msgid,
                                 "userid": req.userid, "payload": req.payload}
        if req.topic == "dws.status":  # the engine answers it whole, with these
            event["service"] = {**self.stats.as_dict(), **self.load()}
        uid = req.payload.get("userid") if isinstance(req.payload, dict) else None
        wants_gid = req.topic == "dws.create" and isinstance(uid, int) \
            and not isinstance(uid, bool)
        self._in_order(event, uid if wants_gid else None)

    # --- dws.watch_test: a barrier ------------------------------------------
    #
    # Answered (an empty object) once (1) the watches have posted, and the
    # engine has processed, every change the API server had made to the
    # watched kinds when the request came (the kube layer lists them and
    # waits for its watches to reach the lists); (2) rabbit health's batch
    # of changes, if one waits for its flush timer, has been flushed; (3)
    # every Kubernetes call submitted by then (those events' and the
    # flush's) has been answered and its answer processed by the engine;
    # (4) every Flux RPC (job-manager.dws.*, memo, exception, drain,
    # Fluxion) and KVS commit sent by then has been answered.  What those
    # answers cause in turn is sent, not waited for.  A failed list answers
    # EIO with its message.  Owner only (the broker refuses others).

    def _watch_test(self, req: Request) -> None:
        msg = req.msg

        def listed(error: str | None) -> None:  # a kube thread
            self.link.post(lambda: caught_up(error))

        def caught_up(error: str | None) -> None:
            if error is not None:
                self.link.respond_error(msg, errno.EIO, f"{WATCH_TEST}: {error}")
                return
            if HEALTH_FLUSH_TIMER in self._timers:
                self._timers.discard(HEALTH_FLUSH_TIMER)
                self.link.timer_stop(HEALTH_FLUSH_TIMER)
                self.feed({"type": "timer", "key": HEALTH_FLUSH_TIMER})
            self.kube.writes_barrier(lambda: self.link.post(written))

        def written() -> None:
            self._flux_barrier(lambda: self.link.respond(msg, {}))

        self.kube.watch_barrier(listed)

    def _flux_call(self) -> Callable[[], None]:
        """Count a Flux call sent; the function returned says it was answered."""
        self._flux_seq += 1
        seq = self._flux_seq
        self._flux_open.add(seq)

        def answered() -> None:
            self._flux_open.discard(seq)
            if self._flux_waits:
                oldest = min(self._flux_open, default=None)
                ready = [fn for upto, fn in self._flux_waits if oldest is None or oldest > upto]
                self._flux_waits = [(u, fn) for u, fn in self._flux_waits
                                    if not (oldest is None or oldest > u)]
                for fn in ready:
                    fn()

        return answered

    def _flux_barrier(self, fn: Callable[[], None]) -> None:
        """fn() once every Flux call sent so far has been answered."""
        if not self._flux_open:
            fn()
            return
        self._flux_waits.append((self._flux_seq, fn))

    # The Workflow's groupID comes from the owner's passwd entry.  A passwd
    # lookup may wait on NSS (LDAP, sssd), so it runs on a thread of its
    # own; requests behind one that waits for it wait too, so the engine
    # still sees them in the order they came.

    def _in_order(self, event: dict[str, Any], uid: int | None) -> None:
        """Feed ``event`` in turn; with ``uid``, once that owner's group is
        known (it is then the event's "groupid")."""
        if uid is not None and uid not in self._gids and uid not in self._looking_up:
            self._looking_up.add(uid)
            threading.Thread(target=self._look_up_gid, args=(uid,), name="dws-passwd",
                             daemon=True).start()
        self._held.append((event, uid))
        self._release()

    def _look_up_gid(self, uid: int) -> None:
        entry = passwd(uid)
        # no passwd entry: DWS only needs a number
        gid, name = (entry.pw_gid, entry.pw_name) if entry is not None else (uid, None)

        def known() -> None:
            self._gids[uid] = gid
            if name is not None:  # [rabbit.limits] by name, and its messages
                self._names[uid] = name
            self._looking_up.discard(uid)
            self._release()

        self.link.post(known)

    def _release(self) -> None:
        while self._held:
            event, uid = self._held[0]
            if uid is not None:
                if uid not in self._gids:
                    return
                event["groupid"] = self._gids[uid]
                if uid in self._names:
                    event["username"] = self._names[uid]
            self._held.popleft()
            self.feed(event)

    # --- actions out ------------------------------------------------------

    def action_handlers(self) -> dict[str, Callable[[dict[str, Any], dict[str, Any]], None]]:
        """The handler of each of the engine's actions (wire.h's list), by
        name: the "respond-error" action is carried out by _do_respond_error.
        A name without its method fails here, when the service is made,
        not when the engine first asks for it."""
        missing = [a for a in ACTIONS if not hasattr(self, _handler_name(a))]
        if missing:
            raise TypeError(f"the service has no handler for the engine's actions {missing}")
        return {a: getattr(self, _handler_name(a)) for a in ACTIONS}

    def _apply(self, actions: list[dict[str, Any]], event: dict[str, Any]) -> None:
        for a in actions:
            handler = self._handlers.get(a["action"])
            if handler is None:  # a libdws newer than this shell
                self.link.log("err", f"engine asked for an unknown action {a['action']!r}")
                continue
            handler(a, event)

    def _do_respond(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        msg = self._msgs.pop(a["msgid"], None)
        if msg is None:
            return
        self.link.respond(msg, a["payload"])

    def _do_respond_error(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        msg = self._msgs.pop(a["msgid"], None)
        if msg is not None:
            self.link.respond_error(msg, a["errnum"], a["errstr"])

    def _do_active_jobs(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        self.link.active_jobs(lambda jobs: self.feed({"type": "orphans", "jobs": jobs or [],
                                                      "complete": jobs is not None}))

    def _do_k8s(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        t_in = self._reaction_from
        if t_in is None or a.get("op") not in _WRITES:
            self.kube.submit(a)
            return
        reactions, writer_waits = self.stats.reactions, self.stats.writer_waits
        queued = time.monotonic()

        def sent() -> None:  # a writer thread (deque.append is atomic)
            now = time.monotonic()
            reactions.append(now - t_in)
            writer_waits.append(now - queued)

        self.kube.submit(a, sent)

    def _do_rpc(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        token = a.get("token")
        topic = a["topic"]

        answered = self._flux_call()  # counted from now: barriers wait for it

        def done(ok: bool, errnum: int, errstr: str, payload: Any) -> None:
            answered()
            self._rpcs_sent -= 1
            if self._rpcs_waiting:
                self._rpcs_waiting.popleft()()
            if token is not None:
                self.feed({"type": "rpc-result", "token": token, "ok": ok, "errnum": errnum,
                           "errstr": errstr, "payload": payload})
            elif not ok:
                self.link.log("warning", f"{topic}: {errstr or errnum}")

        def send() -> None:
            self._rpcs_sent += 1
            self.link.rpc(topic, a["payload"], a.get("nodeid", 0), done)

        if self._rpcs_sent < RPC_WINDOW and not self._rpcs_waiting:
            send()
        else:
            self._rpcs_waiting.append(send)

    def _do_memo(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        self.link.memo(a["id"], a["memo"], self._flux_call())

    def _do_raise(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        self.link.raise_exception(a["id"], a["type"], a["severity"], a["note"],
                                  self._flux_call())

    def _do_post_event(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        # sent after the raise on the same connection: the entry follows
        # the exception in the job's eventlog
        self.link.post_event(a["id"], a["name"], a["context"], self._flux_call())

    def _do_kvs(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        jobid = a["id"]
        answered = self._flux_call()
        self._kvs_seq += 1
        seq = self._kvs_seq
        keys = [*a["put"], *a["link"]]
        for key in keys:
            self._kvs_latest[(jobid, key)] = seq
        tries = 1

        def mine(key: str) -> bool:  # no later write has put it
            return self._kvs_latest.get((jobid, key)) == seq

        def done(ok: bool, errstr: str) -> None:
            nonlocal tries
            put = {k: v for k, v in a["put"].items() if mine(k)}
            link = {k: v for k, v in a["link"].items() if mine(k)}
            if not ok and tries < KVS_TRIES and (put or link):
                tries += 1
                self.link.log("warning", f"job {jobid}: KVS write failed ({errstr}):"
                                         f" sending it again ({tries} of {KVS_TRIES})")
                self.link.kvs_commit(jobid, put, link, done)
                return
            for key in keys:
                if mine(key):
                    del self._kvs_latest[(jobid, key)]
            answered()
            if not ok and (put or link):
                self.link.log("err", f"job {jobid}: KVS write failed {tries} times,"
                                     f" given up: {errstr}")

        self.link.kvs_commit(jobid, a["put"], a["link"], done)

    def _do_job_info(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        token = a["token"]

        def done(info: JobInfo) -> None:
            ev: dict[str, Any] = {"type": "job-info", "token": token, "ok": info.ok,
                                  "errstr": info.errstr, "jobspec": info.jobspec,
                                  "userid": info.userid, "R": info.R}
            self._in_order(ev, info.userid if isinstance(info.userid, int) else None)

        self.link.job_info(a["id"], bool(a.get("R")), done)

    def _do_timer_start(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        key = a["key"]

        def fire() -> None:
            self._timers.discard(key)
            self.feed({"type": "timer", "key": key})

        self._timers.add(key)
        self.link.timer_start(key, a["after"], fire)

    def _do_timer_stop(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        self._timers.discard(a["key"])
        self.link.timer_stop(a["key"])

    def _do_drain(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        self.link.drain(a["targets"], a["reason"], self._flux_call())

    def _do_log(self, a: dict[str, Any], event: dict[str, Any]) -> None:
        self.link.log(a["level"], a["message"])


def _handler_name(action: str) -> str:
    return "_do_" + action.replace("-", "_")
