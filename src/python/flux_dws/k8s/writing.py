"""Writes and reads: ``k8s`` actions carried out by a pool of writer threads.

``WriterPool``: ``k8s`` actions go to one of N workers (default 16) by
hash(kind, namespace, name), so calls on one object run in submission
order (op ``log`` reads a Pod's log: ``{"log": text}``).  ``submit``
never blocks (unbounded per-worker queues; ``pending()`` counts queued
and running calls).  Retries happen here and nowhere else (the client's
own urllib3 retries are switched off): 429 (after its Retry-After when
given), 500-599 and transport errors (refused or dropped connections,
timeouts, TLS errors) are retried after 0.05 s doubling to 5 s, at most 8
attempts and 60 s in all (all configurable, settings.py), then reported
with the last code (0 when no answer came).  Every other answer is final.
Because a lost answer is retried, a create may report 409 AlreadyExists
for an object its first attempt made, and a delete 404.

A delete that finds nothing (404) is reported ``ok: true, code: 404``: the
object is gone, which is what was asked.

Barriers (the service's ``dws.watch_test``, through
``KubeLayer.writes_barrier``): ``barrier`` calls back once every action
submitted before has been carried out and its result posted.

``written(kind, op, namespace, name, object)`` is told of every write
that succeeded, before its result is posted (the layer tells the watch
of that kind what it must hear of: watching.py).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes.client.exceptions import ApiException

from flux_dws.k8s.api import Api
from flux_dws.k8s.errors import TRANSPORT_ERRORS, describe, retry_after, status_message
from flux_dws.k8s.events import Post
from flux_dws.k8s.kinds import KindInfo
from flux_dws.k8s.settings import KubeSettings

__all__ = ["OPS", "WRITES", "WriterPool", "Written"]

OPS = ("create", "patch", "json-patch", "delete", "get", "list", "log")
#: the ops that change an object
WRITES = frozenset(("create", "patch", "json-patch", "delete"))
#: told of a write that succeeded: (kind, op, namespace, name, answer's object)
Written = Callable[[str, str, "str | None", "str | None", Any], None]


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
    """``k8s`` actions carried out by N threads, in order per object (see the module docstring)."""

    def __init__(self, api: Api, kinds: Mapping[str, KindInfo], post: Post,
                 log: logging.Logger, settings: KubeSettings,
                 written: Written | None = None) -> None:
        self.api = api
        self._written = written
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
        if op == "create":
            assert ns is not None
            if isinstance(body, dict) and "apiVersion" not in body:
                # the engine does not know which version the cluster serves
                body = {"apiVersion": k.api_version, "kind": k.kind, **body}
            return api.create(k, ns, body)
        assert name is not None
        if op == "get":
            return api.get(k, ns, name)
        if op == "log":
            assert ns is not None
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
        if ok and op in WRITES and self._written is not None:
            self._written(info.kind, op, ns, name, obj)
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
            deadline = s.log_retry_deadline if a.get("op") == "log" else s.retry_deadline
            if attempt >= s.retry_attempts or time.monotonic() - start + wait > deadline:
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
