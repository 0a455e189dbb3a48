"""The dws service's Kubernetes layer: watches and a writer pool, no decisions.

It does I/O only and hands every outcome back as an event dict through
``post(event)``: flux_dws.k8s.events says their shapes.

Watches (``KindWatch``, one daemon thread per kind): list (paged with
``limit``/``continue``), post ``sync``, then watch from the list's
resourceVersion with bookmarks.  BOOKMARKs only move the resourceVersion.
A 410 Gone (an ERROR event or an HTTP 410) makes a fresh list and a new
``sync`` (never a watch from 0: that would replay ADDED for everything); a
dropped stream or any other error reconnects from the last resourceVersion
after a back-off (0.1 s doubling to 10 s, reset once a stream delivers);
the server-side ``timeoutSeconds`` (60 s) ends streams regularly.  Warnings
go to the logger, not to the engine.

Writes and reads (``WriterPool``): ``k8s`` actions go to one of N workers
(default 16) by hash(kind, namespace, name), so calls on one object run in
submission order (op ``log`` reads a Pod's log: ``{"log": text}``).
``submit`` never blocks (unbounded per-worker queues; ``pending()`` counts
queued and running calls).  Retries happen here and
nowhere else (the client's own urllib3 retries are switched off): 429
(after its Retry-After when given), 500-599 and transport errors (refused
or dropped connections, timeouts, TLS errors) are retried after 0.05 s
doubling to 5 s, at most 8 attempts and 60 s in all (all configurable),
then reported with the last code (0 when no answer came).  Every other
answer is final.  Because a lost answer is retried, a create may report 409
AlreadyExists for an object its first attempt made, and a delete 404.

A delete that finds nothing (404) is reported ``ok: true, code: 404``: the
object is gone, which is what was asked.

Barriers (the service's ``dws.watch_test``): ``watch_barrier`` lists every
watched kind and calls back once each watch has posted what its list
shows; ``writes_barrier`` calls back once every action submitted before has
been carried out and its result posted.

Errors: flux_dws.k8s.errors; settings and their config keys: flux_dws.k8s.settings;
raw API calls: flux_dws.k8s.api.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from flux_dws.jsondata import DecodedObject
from flux_dws.k8s import crd
from flux_dws.k8s.api import Api, read_answer
from flux_dws.k8s.errors import TRANSPORT_ERRORS, KubeError, describe, retry_after, status_message
from flux_dws.k8s.events import Post
from flux_dws.k8s.kinds import ALL_KINDS, KindInfo, Kinds
from flux_dws.k8s.settings import KubeSettings

__all__ = ["KindWatch", "KubeLayer", "WatchSpec", "WriterPool"]


OPS = ("create", "patch", "json-patch", "delete", "get", "list", "log")


@dataclass(frozen=True)
class WatchSpec:
    """What to watch: a kind, optionally one namespace and a label selector."""

    kind: str
    namespace: str | None = None
    label_selector: str | None = None


# --- helpers ---------------------------------------------------------------------


def _watch_lines(resp: Any) -> Iterator[bytes]:
    """The non-empty lines of a streaming watch answer (one event each).  A
    last line without its newline is an event cut off when the stream
    was: it is dropped, and the watch resumes from the event before it."""
    parts: list[bytes] = []
    for chunk in resp.stream(None, decode_content=False):
        start = 0
        while (nl := chunk.find(b"\n", start)) >= 0:
            parts.append(chunk[start:nl])
            line = b"".join(parts)
            parts.clear()
            if line.strip():
                yield line
            start = nl + 1
        if start < len(chunk):
            parts.append(chunk[start:])


def _event_object(line: bytes, ev: dict[str, Any]) -> Any:
    """A watch event's object, as a DecodedObject when the line has the
    form every API server writes (``{"type":T,"object":{...}}``, object
    last), so its text can be handed on; else as decoded."""
    obj = ev.get("object")
    if not isinstance(obj, dict) or len(ev) != 2 or not isinstance(ev.get("type"), str):
        return obj
    head = b'{"type":' + json.dumps(ev["type"]).encode() + b',"object":'
    end = line.rfind(b"}")
    if not line.startswith(head) or end <= len(head):
        return obj
    return DecodedObject(obj, line[len(head):end])


def _hang_up(resp: Any) -> None:
    """Shut the socket under a streaming answer (unblocks its reader)."""
    sock = getattr(getattr(resp, "connection", None), "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _Gate:
    """``post`` until closed; nothing passes once ``close`` has returned."""

    def __init__(self, post: Post) -> None:
        self._post = post
        self._lock = threading.Lock()
        self.open = True

    def __call__(self, event: dict[str, Any]) -> None:
        with self._lock:
            if self.open:
                self._post(event)

    def run(self, fn: Callable[[], None]) -> None:
        """Call fn (which posts) unless closed."""
        with self._lock:
            if self.open:
                fn()

    def close(self) -> None:
        with self._lock:
            self.open = False


def _rv_int(rv: Any) -> int | None:
    try:
        return int(rv) if isinstance(rv, str) and rv else None
    except ValueError:
        return None


def _rv_of(obj: Any) -> tuple[str | None, int | None]:
    """("namespace/name", resourceVersion as an integer) of an object."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        return None, None
    return f"{meta.get('namespace') or ''}/{meta['name']}", _rv_int(meta.get("resourceVersion"))


@dataclass(eq=False)
class _Barrier:
    """A list a watch must catch up with: its names, its newest object's
    resourceVersion, its own."""

    done: Callable[[str | None], None]
    names: set[str]
    newest: int
    list_rv: int


# --- watches -----------------------------------------------------------------


class KindWatch:
    """One kind's list+watch loop in a daemon thread (see the module docstring)."""

    def __init__(self, api: Api, info: KindInfo, post: Post, log: logging.Logger,
                 settings: KubeSettings, namespace: str | None = None,
                 label_selector: str | None = None) -> None:
        self.api = api
        self.info = info
        self.kind = info.kind
        self.namespace = namespace
        self.label_selector = label_selector
        self.settings = settings
        self.resource_version = ""
        self.syncs = 0           # lists posted so far
        self.reconnects = 0      # streams opened after the first
        self._post = post
        self._log = log
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._resp: Any = None
        self._delivered = False  # the current (or last) stream delivered something
        # what has been posted, for barriers: objects' resourceVersions and the
        # highest resourceVersion delivered (events, bookmarks, lists)
        self._known: dict[str, int] = {}
        self._seen = -1
        self._barriers: list[_Barrier] = []
        self._thread = threading.Thread(target=self._run, name=f"kube-watch-{info.kind}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to end (does not wait): the open stream is cut."""
        self._stopping.set()
        with self._lock:
            resp = self._resp
        if resp is not None:
            _hang_up(resp)

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _emit(self, event: dict[str, Any]) -> None:
        if not self._stopping.is_set():
            self._post(event)

    # --- barriers: "has everything the API server had at a list been posted?"

    def _delivered_to(self, etype: str, obj: Any = None, objects: Any = None,
                      rv: str | None = None) -> None:
        """Record what was just posted (or, for a BOOKMARK, reached) and
        release the barriers it satisfies (on the watch thread)."""
        n = _rv_int(rv)
        with self._lock:
            if etype == "SYNC":
                self._known = {k: v for k, v in (_rv_of(o) for o in objects or ())
                               if k is not None and v is not None}
                self._seen = n if n is not None else -1
            else:
                if etype in ("ADDED", "MODIFIED", "DELETED"):
                    key, orv = _rv_of(obj)
                    if key is not None:
                        if etype == "DELETED":
                            self._known.pop(key, None)
                        elif orv is not None:
                            self._known[key] = orv
                if n is not None and n > self._seen:
                    self._seen = n
            ready = [b for b in self._barriers if self._caught_up(b)]
            self._barriers = [b for b in self._barriers if b not in ready]
        for b in ready:
            b.done(None)

    def _caught_up(self, b: _Barrier) -> bool:
        if self._seen < b.newest:
            return False
        # known to us, absent from the list and older than it: deleted before
        # the list, and that DELETED event is still to come
        return all(key in b.names or rv > b.list_rv for key, rv in self._known.items())

    def when_caught_up(self, objects: list[dict[str, Any]], list_rv: str,
                       done: Callable[[str | None], None]) -> None:
        """Call ``done(None)`` once every change that the list (``objects`` at
        ``list_rv``, made by the caller after this watch started) shows has
        been posted: at once if it has, else from the watch thread when it
        has.  resourceVersions are compared as integers (etcd revisions, as
        on every Kubernetes and in the emulator); when one is not,
        ``done(None)`` is called at once."""
        lrv = _rv_int(list_rv)
        pairs = [_rv_of(o) for o in objects]
        if lrv is None or any(k is None or v is None for k, v in pairs):
            done(None)
            return
        b = _Barrier(done, {k for k, _ in pairs if k is not None},
                     max([v for _, v in pairs if v is not None], default=-1), lrv)
        with self._lock:
            if not self._caught_up(b):
                self._barriers.append(b)
                return
        done(None)

    def _run(self) -> None:
        s = self.settings
        backoff = s.watch_backoff_initial
        need_list = True
        progress = False  # did anything arrive since the last list?
        streams = 0
        while not self._stopping.is_set():
            failed: str | None = None
            self._delivered = False
            try:
                if need_list:
                    objects, rv = self.api.list_all(self.info, self.namespace,
                                                    self.label_selector, s.list_limit)
                    self.resource_version = rv
                    self.syncs += 1
                    self._emit({"type": "sync", "kind": self.kind, "objects": objects})
                    self._delivered_to("SYNC", objects=objects, rv=rv)
                    need_list, progress = False, False
                    backoff = s.watch_backoff_initial
                streams += 1
                if streams > 1:
                    self.reconnects += 1
                if self._stream():
                    progress = True
                    backoff = s.watch_backoff_initial
                    continue
                failed = "the watch ended at once with nothing"
            except ApiException as exc:
                if self._stopping.is_set():
                    break
                if self._delivered:
                    progress, backoff = True, s.watch_backoff_initial
                if exc.status == 410:
                    need_list = True
                    self._log.info("watch %s: %s; listing again", self.kind,
                                   status_message(exc))
                    if progress:
                        progress = False
                        continue  # a re-list at once; a 410 right after a list waits
                failed = f"{exc.status} {status_message(exc)}"
            except Exception as exc:  # transport errors and anything unexpected
                if self._stopping.is_set():
                    break
                if self._delivered:
                    progress, backoff = True, s.watch_backoff_initial
                failed = describe(exc)
            self._log.warning("watch %s: %s; retrying in %.1f s", self.kind, failed, backoff)
            if self._stopping.wait(backoff):
                break
            backoff = min(backoff * 2, s.watch_backoff_max)

    def _stream(self) -> bool:
        """One watch request from self.resource_version; True when it delivered
        (an event, a bookmark, or a normal end after a while).

        The stream is read here rather than through the client's Watch:
        each line is decoded once, its object's text is kept for the engine
        (DecodedObject), and an ERROR event is raised as an ApiException
        with its code (410: list again) whatever the client version does."""
        s = self.settings
        kw: dict[str, Any] = {
            "watch": True, "resource_version": self.resource_version,
            "allow_watch_bookmarks": True, "timeout_seconds": s.watch_timeout,
            "_preload_content": False,
            "_request_timeout": (s.connect_timeout, s.watch_timeout + 30)}
        if self.label_selector:
            kw["label_selector"] = self.label_selector
        started = time.monotonic()
        self._delivered = False
        resp = self.api.lister(self.info, self.namespace)(**kw)
        with self._lock:
            self._resp = resp
        if self._stopping.is_set():
            _hang_up(resp)
        try:
            for line in _watch_lines(resp):
                if self._stopping.is_set():
                    break
                try:
                    ev = json.loads(line)
                except ValueError:
                    self._log.warning("watch %s: skipped an event that is not JSON: %.80r",
                                      self.kind, line)
                    continue
                if not isinstance(ev, dict):
                    continue
                self._delivered = True
                etype = ev.get("type")
                obj = _event_object(line, ev)
                if not isinstance(obj, dict):
                    continue
                if etype == "ERROR":
                    code = obj.get("code")
                    raise ApiException(status=code if isinstance(code, int) else 0,
                                       reason=f"{obj.get('reason')}: {obj.get('message')}")
                meta = obj.get("metadata")
                rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
                if etype in ("ADDED", "MODIFIED", "DELETED"):
                    self._emit({"type": "watch", "kind": self.kind, "event": etype,
                                "object": obj})
                elif etype == "BOOKMARK":
                    self._log.debug("watch %s: bookmark at %s", self.kind, rv)
                if isinstance(rv, str) and rv:
                    self.resource_version = rv
                self._delivered_to(str(etype), obj=obj, rv=rv if isinstance(rv, str) else None)
        finally:
            with self._lock:
                self._resp = None
            resp.close()
            resp.release_conn()
        return self._delivered or time.monotonic() - started >= 1.0


# --- writes ----------------------------------------------------------------------


class _BadAction(Exception):
    pass


class _Queued:
    """A ``k8s`` action in a worker's queue: when it was submitted (for the
    oldest-pending-write figure) and what to call once it is sent."""

    __slots__ = ("action", "sent", "since")

    def __init__(self, action: Mapping[str, Any], sent: Callable[[], None] | None) -> None:
        self.action = action
        self.since = time.monotonic()
        self.sent = sent


class _Worker:
    def __init__(self, index: int) -> None:
        self.queue: collections.deque[_Queued | _Marker] = collections.deque()
        self.cond = threading.Condition(threading.Lock())
        self.thread: threading.Thread | None = None
        self.index = index
        self.busy_since: float | None = None  # the action being carried out


class _Marker:
    """A place in every worker's queue: ``done`` once all have reached it."""

    def __init__(self, workers: int, done: Callable[[], None]) -> None:
        self.left = workers
        self.lock = threading.Lock()
        self.done = done

    def arrive(self) -> None:
        with self.lock:
            self.left -= 1
            last = self.left == 0
        if last:
            self.done()


class WriterPool:
    """``k8s`` actions carried out by N threads, in order per object (see above)."""

    def __init__(self, api: Api, kinds: Mapping[str, KindInfo], post: Post,
                 log: logging.Logger, settings: KubeSettings) -> None:
        self.api = api
        self.kinds = kinds
        self.settings = settings
        self._post = post
        self._log = log
        self._workers = [_Worker(i) for i in range(settings.writers)]
        self._lock = threading.Lock()
        self._pending = 0
        self._closing = False
        self._drain = False
        self._abort = threading.Event()   # cuts retry waits short (stop without drain)
        self.calls = 0                    # attempts made (for status output)
        self.retries = 0                  # of which retries

    def start(self) -> None:
        for w in self._workers:
            w.thread = threading.Thread(target=self._run, args=(w,), daemon=True,
                                        name=f"kube-writer-{w.index}")
            w.thread.start()

    def pending(self) -> int:
        """Actions queued or being carried out."""
        return self._pending

    def oldest_pending(self) -> float | None:
        """Seconds since the oldest action queued or being carried out was
        submitted (None: nothing pending).  Each worker's queue is in
        submission order, so only its head and its current action count."""
        now, oldest = time.monotonic(), None
        for w in self._workers:
            with w.cond:
                since = [q.since for q in w.queue if isinstance(q, _Queued)][:1]
                if w.busy_since is not None:
                    since.append(w.busy_since)
            for t in since:
                oldest = t if oldest is None else min(oldest, t)
        return None if oldest is None else now - oldest

    def submit(self, action: Mapping[str, Any], sent: Callable[[], None] | None = None) -> None:
        """Queue a ``k8s`` action (never blocks); ``sent()`` is called from
        the worker just before its first request goes out."""
        name = action.get("name")
        if name is None and action.get("op") == "create":
            body = action.get("body")
            meta = body.get("metadata") if isinstance(body, dict) else None
            name = meta.get("name") if isinstance(meta, dict) else None
        key = (str(action.get("kind")), str(action.get("namespace")), str(name))
        w = self._workers[hash(key) % len(self._workers)]
        with self._lock:
            if self._closing:
                self._log.warning("k8s %s %s %s after stop: dropped", action.get("op"),
                                  action.get("kind"), name)
                return
            self._pending += 1
        with w.cond:
            w.queue.append(_Queued(action, sent))
            w.cond.notify()

    def barrier(self, done: Callable[[], None]) -> None:
        """Call ``done()`` (from a worker) once every action submitted before
        has been carried out and its result posted."""
        marker = _Marker(len(self._workers), done)
        for w in self._workers:
            with w.cond:
                w.queue.append(marker)
                w.cond.notify()

    def stop(self, drain: bool = False) -> None:
        """Ask the workers to end (does not wait; see ``join``).

        drain=False: queued actions are dropped (a warning counts them) and
        retry waits are cut short; drain=True: every queued action is
        carried out first, retries included."""
        with self._lock:
            self._closing = True
            self._drain = drain
        if not drain:
            self._abort.set()
        for w in self._workers:
            with w.cond:
                w.cond.notify_all()

    def join(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        for w in self._workers:
            if w.thread is not None:
                w.thread.join(None if deadline is None
                              else max(0.0, deadline - time.monotonic()))
        return not any(w.thread is not None and w.thread.is_alive() for w in self._workers)

    def _run(self, w: _Worker) -> None:
        while True:
            with w.cond:
                while not w.queue and not self._closing:
                    w.cond.wait()
                if self._closing and not self._drain and w.queue:
                    dropped = sum(1 for a in w.queue if not isinstance(a, _Marker))
                    w.queue.clear()
                    with self._lock:
                        self._pending -= dropped
                    self._log.warning("kube writer %d: %d queued action(s) dropped at stop",
                                      w.index, dropped)
                if not w.queue:
                    return
                item = w.queue.popleft()
                if isinstance(item, _Queued):
                    w.busy_since = item.since
            if isinstance(item, _Marker):
                item.arrive()
                continue
            try:
                self._execute(item.action, item.sent)
            except Exception:  # a bug of ours: keep the worker alive
                self._log.exception("k8s action %r failed", item.action)
            finally:
                with w.cond:
                    w.busy_since = None
                with self._lock:
                    self._pending -= 1

    # --- one action ----------------------------------------------------------

    def _parse(self, a: Mapping[str, Any]) -> tuple[str, KindInfo, str | None, str | None,
                                                   Any, str | None]:
        op, kind = a.get("op"), a.get("kind")
        if op not in OPS:
            raise _BadAction(f"unknown op {op!r}")
        if not isinstance(kind, str) or kind not in self.kinds:
            raise _BadAction(f"kind {kind!r} is not served by this cluster"
                             if isinstance(kind, str) else f"bad kind {kind!r}")
        info = self.kinds[kind]
        ns, name, body, sel = a.get("namespace"), a.get("name"), a.get("body"), \
            a.get("label_selector")
        if ns is not None and not isinstance(ns, str):
            raise _BadAction(f"bad namespace {ns!r}")
        if ns is None and info.namespaced and op != "list":
            raise _BadAction(f"{op} {kind} needs a namespace")
        if op in ("patch", "json-patch", "delete", "get", "log") and not (isinstance(name, str)
                                                                   and name):
            raise _BadAction(f"{op} {kind} needs a name")
        if op in ("create", "patch") and not isinstance(body, dict):
            raise _BadAction(f"{op} {kind} needs an object as body")
        if op == "json-patch" and not isinstance(body, list):
            raise _BadAction(f"json-patch {kind} needs a list of operations as body")
        if op == "log":
            tail = a.get("tail_lines")
            if kind != "Pod":
                raise _BadAction(f"log of a {kind}: only Pods have logs")
            if not isinstance(a.get("container", ""), str) or (
                    tail is not None and (isinstance(tail, bool) or not isinstance(tail, int)
                                          or tail < 0)):
                raise _BadAction("log needs a container name and tail_lines >= 0, if given")
        if sel is not None and not isinstance(sel, str):
            raise _BadAction(f"bad label_selector {sel!r}")
        return op, info, ns, name, body, sel

    def _call(self, op: str, k: KindInfo, ns: str | None, name: str | None, body: Any,
              sel: str | None, a: Mapping[str, Any]) -> tuple[int, Any]:
        api = self.api
        if op == "list":
            items, _ = api.list_all(k, ns, sel, self.settings.list_limit)
            return 200, {"items": items}
        assert ns is not None
        if op == "create":
            if isinstance(body, dict) and "apiVersion" not in body:
                # the engine does not know which version the cluster serves
                body = {"apiVersion": k.api_version, "kind": k.kind, **body}
            return api.create(k, ns, body)
        assert name is not None
        if op == "get":
            return api.get(k, ns, name)
        if op == "log":
            return api.pod_log(ns, name, a.get("container"), a.get("tail_lines"))
        if op == "delete":
            code, _ = api.delete(k, ns, name)
            return code, None
        return api.patch(k, ns, name, body, json_patch=op == "json-patch")

    def _execute(self, a: Mapping[str, Any], sent: Callable[[], None] | None = None) -> None:
        token = a.get("token")
        try:
            op, info, ns, name, body, sel = self._parse(a)
        except _BadAction as exc:
            self._finish(a, token, False, 0, f"invalid k8s action: {exc}", None)
            return
        if sent is not None:
            sent()
        ok, code, message, obj = self._with_retries(
            lambda: self._call(op, info, ns, name, body, sel, a), a)
        if not ok and op == "delete" and code == 404:
            ok = True  # already gone: what was asked
        self._finish(a, token, ok, code, message, obj)

    def _with_retries(self, fn: Callable[[], tuple[int, Any]],
                      a: Mapping[str, Any]) -> tuple[bool, int, str, Any]:
        s = self.settings
        start = time.monotonic()
        delay = min(s.retry_initial, s.retry_max)
        attempt = 0
        while True:
            attempt += 1
            with self._lock:
                self.calls += 1
            wait: float | None = None
            try:
                code, obj = fn()
                return True, code, "", obj
            except ApiException as exc:
                code, message = int(exc.status or 0), status_message(exc)
                transient = (code == 429 or 500 <= code <= 599
                             or (code == 0 and "SSLError" in str(exc.reason)))
                if code == 429:
                    wait = retry_after(exc)
            except TRANSPORT_ERRORS as exc:
                code, message, transient = 0, describe(exc), True
            except Exception as exc:  # the client refused the call (bad body, ...)
                return False, 0, describe(exc), None
            if not transient:
                return False, code, message, None
            wait = delay if wait is None else wait
            if attempt >= s.retry_attempts or time.monotonic() - start + wait > s.retry_deadline:
                self._log.warning("k8s %s %s %s/%s: giving up after %d attempt(s): %s %s",
                                  a.get("op"), a.get("kind"), a.get("namespace"),
                                  a.get("name"), attempt, code, message)
                return False, code, message, None
            if self._abort.wait(wait):
                return False, code, message, None
            with self._lock:
                self.retries += 1
            delay = min(delay * 2, s.retry_max)

    def _finish(self, a: Mapping[str, Any], token: Any, ok: bool, code: int, message: str,
                obj: Any) -> None:
        if token is not None:
            self._post({"type": "k8s-result", "token": token, "ok": ok, "code": code,
                        "message": message, "object": obj})
        elif not ok:
            self._log.warning("k8s %s %s %s/%s failed: %s %s", a.get("op"), a.get("kind"),
                              a.get("namespace"), a.get("name"), code, message)


# --- the layer ---------------------------------------------------------------------


class KubeLayer:
    """The Kubernetes side of the dws service: ``connect``, ``start_watches``,
    ``submit``, ``stop``.

    Nothing is posted once ``stop`` has returned.  ``stop()`` drops queued
    actions and the result of the call in flight (which still finishes its
    current HTTP attempt, up to ``request_timeout``); ``stop(drain=True)``
    carries out and reports every queued action first.  Watches end at once
    (their streams are cut; a list in progress finishes first)."""

    def __init__(self, kubeconfig: str | os.PathLike[str] | None, post: Post,
                 log: logging.Logger | None = None,
                 config: Mapping[str, Any] | None = None, *,
                 context: str | None = None) -> None:
        self.kubeconfig = None if kubeconfig is None else os.fspath(kubeconfig)
        self.context = context
        self.log = log or logging.getLogger("flux_dws.service.kube")
        self.settings = KubeSettings.from_config(config)
        self._gate = _Gate(post)
        self.api_client: Any = None
        self.api: Api | None = None
        self.kinds: Kinds | None = None
        self.pool: WriterPool | None = None
        self.watches: dict[str, KindWatch] = {}

    def connect(self) -> Kinds:
        """Build the client, check the server answers, probe the API versions
        and start the writer pool.  KubeError when any of that fails."""
        from kubernetes import config as kconfig
        from kubernetes.config.config_exception import ConfigException

        if self.api_client is not None:
            raise RuntimeError("KubeLayer.connect() twice")
        path = self.kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        cfg = client.Configuration()
        try:
            kconfig.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=path, context=self.context,
                                     client_configuration=cfg, persist_config=False)
        except (ConfigException, OSError, ValueError, TypeError, KeyError,
                AttributeError) as exc:
            raise KubeError(f"cannot reach Kubernetes: invalid kubeconfig {path}: "
                            f"{describe(exc)}") from None
        except Exception as exc:  # yaml errors and the like
            raise KubeError(f"cannot reach Kubernetes: invalid kubeconfig {path}: "
                            f"{describe(exc)}") from None
        cfg.retries = False  # retries happen in WriterPool and KindWatch only
        # The kubeconfig loader's token hook sets cfg.host again before every
        # request, and the host setter re-reads the proxy environment each time
        # (about 0.2 ms a call) unless the proxy was assigned: assigning it
        # keeps the proxy already resolved for this host (the pools are made
        # once anyway).
        cfg.proxy = cfg.proxy
        cfg.connection_pool_maxsize = max(cfg.connection_pool_maxsize or 0,
                                          self.settings.writers + 16)
        api_client: Any = client.ApiClient(cfg)
        server = cfg.host
        try:
            kinds = self._probe(api_client, server)
        except crd.CRDVersionError as exc:
            api_client.close()
            raise KubeError(f"cannot reach Kubernetes: {server}: {exc}") from None
        except ApiException as exc:
            api_client.close()
            raise KubeError(f"cannot reach Kubernetes: {server}: {exc.status} "
                            f"{status_message(exc)}") from None
        except Exception as exc:
            api_client.close()
            raise KubeError(f"cannot reach Kubernetes: {server}: {describe(exc)}") from None
        if kinds.nnf_version is None:
            self.log.warning("%s serves no NNF API (%s): NnfDataMovement is unavailable",
                             server, crd.NNF_GROUP)
        self.api_client = api_client
        self.api = Api(api_client, self.settings.request_timeout)
        self.kinds = kinds
        self.pool = WriterPool(self.api, kinds, self._gate, self.log, self.settings)
        self.pool.start()
        return kinds

    def _probe(self, api_client: Any, server: str) -> Kinds:
        """Check the server answers and probe the API versions.  A 429 or
        5xx answer (the server is there but busy, or its backends are
        restarting) is retried with the writers' backoff until
        retry_deadline: a service (re)loaded during a burst of them starts
        instead of failing the module load.  A server that cannot be
        reached fails at once (rc1 is not held up by a cluster that is down)."""
        s = self.settings
        start, delay = time.monotonic(), min(s.retry_initial, s.retry_max)
        while True:
            try:
                read_answer(client.VersionApi(api_client).get_code(
                    _preload_content=False,
                    _request_timeout=(s.connect_timeout, s.connect_timeout)))
                return Kinds.probe(client.CustomObjectsApi(api_client), s.dws_api_version,
                                   s.nnf_api_version)
            except ApiException as exc:
                code = int(exc.status or 0)
                wait = (retry_after(exc) if code == 429 else None) or delay
                if not (code == 429 or 500 <= code <= 599) \
                        or time.monotonic() - start + wait > s.retry_deadline:
                    raise
                self.log.warning("connecting to %s: %d %s; retrying in %.2f s", server, code,
                                 status_message(exc), wait)
            time.sleep(wait)
            delay = min(delay * 2, s.retry_max)

    def start_watches(self, specs: Iterable[WatchSpec | str]) -> None:
        """Start a list+watch thread per spec (one per kind).  A kind the
        cluster does not serve (NnfDataMovement without NNF) is skipped with
        a warning; an unknown kind or a second watch of a kind is a ValueError."""
        if self.api is None or self.kinds is None:
            raise RuntimeError("KubeLayer.connect() first")
        wanted = [WatchSpec(s) if isinstance(s, str) else s for s in specs]
        for spec in wanted:
            if spec.kind not in ALL_KINDS:
                raise ValueError(f"unknown kind {spec.kind!r}")
            if spec.kind in self.watches or [x.kind for x in wanted].count(spec.kind) > 1:
                raise ValueError(f"{spec.kind} is watched twice")
        for spec in wanted:
            if spec.kind not in self.kinds:
                self.log.warning("not watching %s: the cluster does not serve it", spec.kind)
                continue
            w = KindWatch(self.api, self.kinds[spec.kind], self._gate, self.log,
                          self.settings, spec.namespace, spec.label_selector)
            self.watches[spec.kind] = w
            w.start()

    def submit(self, action: Mapping[str, Any], sent: Callable[[], None] | None = None) -> None:
        """Queue a ``k8s`` action; never blocks.  Its outcome comes back as
        a ``k8s-result`` event when it has a token (else failures are
        logged); ``sent()`` is called when its first request goes out."""
        if self.pool is None:
            raise RuntimeError("KubeLayer.connect() first")
        self.pool.submit(action, sent)

    def pending(self) -> int:
        return 0 if self.pool is None else self.pool.pending()

    def oldest_pending(self) -> float | None:
        """Age in seconds of the oldest write not yet carried out."""
        return None if self.pool is None else self.pool.oldest_pending()

    def watch_barrier(self, done: Callable[[str | None], None]) -> None:
        """Call ``done(None)`` once every watch has posted every change the
        API server had made to its kind when this was called (each kind is
        listed now, on a thread; a watch is caught up with the list when it
        has delivered the newest resourceVersion listed and the deletion of
        every object it knew that the list lacks).  ``done(message)`` if a
        list fails.  ``done`` is called from another thread (posting is
        what it may do), and not at all once ``stop`` has begun."""
        watches = list(self.watches.values())
        if self.api is None or not watches:
            self._gate.run(lambda: done(None))
            return
        api, limit = self.api, self.settings.list_limit
        lock = threading.Lock()
        state: dict[str, Any] = {"left": len(watches), "error": None}

        def one(error: str | None) -> None:
            with lock:
                if error and state["error"] is None:
                    state["error"] = error
                state["left"] -= 1
                last = state["left"] == 0
            if last:
                self._gate.run(lambda: done(state["error"]))

        def lists() -> None:
            for w in watches:
                try:
                    objects, rv = api.list_all(w.info, w.namespace, w.label_selector, limit)
                except ApiException as exc:
                    one(f"cannot list {w.kind}: {exc.status} {status_message(exc)}")
                    continue
                except Exception as exc:
                    one(f"cannot list {w.kind}: {describe(exc)}")
                    continue
                w.when_caught_up(objects, rv, one)

        threading.Thread(target=lists, name="kube-barrier", daemon=True).start()

    def writes_barrier(self, done: Callable[[], None]) -> None:
        """Call ``done()`` (from a worker thread) once every action submitted
        before has been carried out and its result posted."""
        if self.pool is None:
            self._gate.run(done)
            return
        self.pool.barrier(lambda: self._gate.run(done))

    def stop(self, timeout: float = 5.0, drain: bool = False) -> None:
        """End the watches and the writers and join them (up to timeout)."""
        deadline = time.monotonic() + timeout
        for w in self.watches.values():
            w.stop()
        if not drain:
            self._gate.close()
        if self.pool is not None:
            self.pool.stop(drain)
        for w in self.watches.values():
            if not w.join(max(0.0, deadline - time.monotonic())):
                self.log.warning("watch %s did not end in time", w.kind)
        if self.pool is not None and not self.pool.join(max(0.0, deadline - time.monotonic())):
            self.log.warning("kube writers did not end in time (%d pending)",
                             self.pool.pending())
        self._gate.close()
        if self.api is not None:
            self.api.api_client.close()
            self.api = None
