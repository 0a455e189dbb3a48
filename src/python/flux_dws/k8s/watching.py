"""Watches: one kind's list+watch loop in a daemon thread, and what to watch.

``KindWatch`` (one daemon thread per kind): list (paged with
``limit``/``continue``), post ``sync``, then watch from the list's
resourceVersion with bookmarks.  BOOKMARKs only move the resourceVersion.
A 410 Gone (an ERROR event or an HTTP 410) makes a fresh list and a new
``sync`` (never a watch from 0: that would replay ADDED for everything); a
dropped stream or any other error reconnects from the last resourceVersion
after a back-off (0.1 s doubling to 10 s, reset once a stream delivers);
the server-side ``timeoutSeconds`` (60 s) ends streams regularly.  Warnings
go to the logger, not to the engine.  The stream is read by its own line
reader (``_watch_lines``), each event's object keeping its text
(``_event_object``).

A watch that hears nothing is not trusted while it has objects that must
change (``WatchSpec.unsettled``: a Workflow DWS is still to move): silent
(no object event and no list) for ``watch_silence`` seconds with such
objects known, it is healed (``check_silence``, called by the layer's
watchdog): its stream is cut and it lists again, as after a 410, so a
connection that is open but delivers nothing (or a server that lost its
events) cannot stop the queue.  ``view`` is a watch's state for ``flux
dws status``: listing, watching or retrying, its resourceVersion, the
seconds since it last heard of an object, its lists, reconnects, heals
and last error.

Barriers (the service's ``dws.watch_test``, through
``KubeLayer.watch_barrier``): ``when_caught_up`` calls back once the
watch has posted what a list of its kind shows.

``WatchSpec`` is what to watch: a kind, optionally one namespace and a
label selector.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException

from flux_dws.jsondata import DecodedObject
from flux_dws.k8s.api import Api
from flux_dws.k8s.errors import describe, status_message
from flux_dws.k8s.events import Post
from flux_dws.k8s.kinds import KindInfo
from flux_dws.k8s.settings import KubeSettings

__all__ = ["LISTING", "RETRYING", "STOPPED", "WATCHING", "KindWatch", "WatchSpec"]

#: what a watch is doing (``KindWatch.view``)
LISTING, WATCHING, RETRYING, STOPPED = "listing", "watching", "retrying", "stopped"


@dataclass(frozen=True)
class WatchSpec:
    """What to watch: a kind, optionally one namespace and a label selector;
    ``unsettled(obj)``: whether an object of it must still change (the
    watch is then not trusted when silent: see the module docstring)."""

    kind: str
    namespace: str | None = None
    label_selector: str | None = None
    unsettled: Callable[[Any], bool] | None = None


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


class KindWatch:
    """One kind's list+watch loop in a daemon thread (see the module docstring)."""

    def __init__(self, api: Api, info: KindInfo, post: Post, log: logging.Logger,
                 settings: KubeSettings, namespace: str | None = None,
                 label_selector: str | None = None,
                 unsettled: Callable[[Any], bool] | None = None) -> None:
        self.api = api
        self.info = info
        self.kind = info.kind
        self.namespace = namespace
        self.label_selector = label_selector
        self.settings = settings
        self.resource_version = ""
        self.syncs = 0           # lists posted so far
        self.reconnects = 0      # streams opened after the first
        self.heals = 0           # lists made because it was silent (check_silence)
        self.state = LISTING
        self.last_error: str | None = None
        self._unsettled_rule = unsettled
        self._unsettled: set[str] = set()  # objects known that must still change
        self._heard = time.monotonic()     # its last list or object event
        self._heal: str | None = None      # why it must list again (check_silence)
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
        rule = self._unsettled_rule
        with self._lock:
            if etype == "SYNC":
                self._heard = time.monotonic()
                self._known = {k: v for k, v in (_rv_of(o) for o in objects or ())
                               if k is not None and v is not None}
                self._seen = n if n is not None else -1
                self._unsettled = set() if rule is None else {
                    key for key, o in ((_rv_of(o)[0], o) for o in objects or ())
                    if key is not None and rule(o)}
            else:
                if etype in ("ADDED", "MODIFIED", "DELETED"):
                    self._heard = time.monotonic()
                    key, orv = _rv_of(obj)
                    if key is not None:
                        if etype == "DELETED":
                            self._known.pop(key, None)
                        elif orv is not None:
                            self._known[key] = orv
                        if etype != "DELETED" and rule is not None and rule(obj):
                            self._unsettled.add(key)
                        else:
                            self._unsettled.discard(key)
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

    # --- the watchdog's side: a silent watch is listed again

    def wrote(self, op: str, namespace: str | None, name: str | None, obj: Any) -> None:
        """A write of ours to an object of this kind succeeded (a writer
        thread): when the object must still change (its answer says so)
        or was deleted (its DELETED is to come), this watch must hear of
        it -- unless it already has (it knows that version, or a newer
        one; a deleted object it no longer knows).  So a watch deaf from
        its start still knows the Workflows the service made are in flight."""
        rule = self._unsettled_rule
        if rule is None or (self.namespace is not None and namespace != self.namespace):
            return  # (an object this watch does not see is not its to hear of)
        key, rv = _rv_of(obj)
        if key is None and name:
            key = f"{namespace or ''}/{name}"
        if key is None:
            return
        with self._lock:
            known = self._known.get(key)
            expect = known is not None if op == "delete" else (
                isinstance(obj, dict) and rule(obj) and (known is None or rv is None
                                                         or rv > known))
            if expect:
                if not self._unsettled:
                    # its silence counts from when it began to expect
                    # something, not from an idle hour before
                    self._heard = time.monotonic()
                self._unsettled.add(key)

    def check_silence(self, now: float) -> bool:
        """Heal this watch (cut its stream, list again) when it is watching
        and has heard of no object for ``watch_silence`` seconds while it
        knows objects that must still change.  Called by the layer's
        watchdog thread; True when it healed."""
        with self._lock:
            silent = now - self._heard
            if (self.state != WATCHING or not self._unsettled or self._heal is not None
                    or silent < self.settings.watch_silence):
                return False
            why = (f"silent for {silent:.0f} s with {len(self._unsettled)} "
                   f"{self.kind} object(s) still to change")
            self._heal = why
            resp = self._resp
        self._log.warning("watch %s: %s; listing again", self.kind, why)
        if resp is not None:
            _hang_up(resp)
        return True

    def _take_heal(self) -> bool:
        """Whether the watchdog asked for a list (its ask is taken)."""
        with self._lock:
            if self._heal is None:
                return False
            self.last_error, self._heal = self._heal, None
            self.heals += 1
            return True

    def view(self, now: float) -> dict[str, Any]:
        """This watch's state, for ``flux dws status``."""
        with self._lock:
            return {"kind": self.kind, "state": self.state,
                    "resource_version": self.resource_version,
                    "heard_s": round(now - self._heard, 3), "unsettled": len(self._unsettled),
                    "lists": self.syncs, "reconnects": self.reconnects, "heals": self.heals,
                    "last_error": self.last_error}

    def _set_state(self, state: str, error: str | None = None) -> None:
        with self._lock:
            self.state = state
            if error is not None:
                self.last_error = error

    def _run(self) -> None:
        s = self.settings
        backoff = s.watch_backoff_initial
        need_list = True
        progress = False  # did anything arrive since the last list?
        streams = 0
        while not self._stopping.is_set():
            failed: str | None = None
            self._delivered = False
            if self._take_heal():
                need_list, progress = True, False
            try:
                if need_list:
                    self._set_state(LISTING)
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
                self._set_state(WATCHING)
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
            with self._lock:
                healing = self._heal is not None
            if healing:
                continue  # cut by the watchdog: list again at once
            self._set_state(RETRYING, failed)
            self._log.warning("watch %s: %s; retrying in %.1f s", self.kind, failed, backoff)
            if self._stopping.wait(backoff):
                break
            backoff = min(backoff * 2, s.watch_backoff_max)
        self._set_state(STOPPED)

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
        # The stream's connection is closed when it ends, never handed back
        # to the pool: a stream that ends normally goes back to it (urllib3
        # releases it at the last chunk), and the next watch would go out
        # on it again -- to a server that is shutting down and ends every
        # watch at once, for ever (an API server restarted in place, a
        # proxy), however often it reconnects.  A new connection each time
        # costs a TLS handshake a minute per kind.
        conn = getattr(resp, "connection", None)
        with self._lock:
            self._resp = resp
            cut = self._heal is not None  # the watchdog asked before it could cut it
        if cut or self._stopping.is_set():
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
            if conn is not None:
                conn.close()
            resp.close()
            resp.release_conn()
        return self._delivered or time.monotonic() - started >= 1.0
