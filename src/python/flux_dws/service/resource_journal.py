"""The Flux side of rabbit health: what the engine needs to know of Flux.

``JournalReader`` turns the answers of flux-core's ``resource.journal``
stream into engine events (doc/guide/service.rst):

    {"type": "journal", "events": [...], "synced": B}   online/offline/drain/undrain
    {"type": "graph", "graph": {"ssds": {...}, "nodes": {...}}}   (Fluxion mode)
    {"type": "flux-config", "exclude": S|None, "drainable": S|None}

The first answers replay the journal (the instance's hosts by rank, which
are online, every drain and its reason, and R); an answer with no events
ends the replay.  R is reduced here to what the engine needs (the graph's
paths, the hosts whose properties include a drain queue), so the engine never sees a
100-MB R, and it is decoded lean (resourcegraph.decode_lean: the cores,
GPUs and edges of its graph are dropped as they are read).
``ResourceWatch`` reads the stream on a thread with its own Flux handle,
so neither that R nor the graph scan ever blocks the service's reactor;
it also asks Fluxion for its graph's uptime every
``poll_interval`` seconds and reports a restart (uptime went back, or
Fluxion came back after being away), after which the engine asks Fluxion
which ssd vertices it has down (on the service's own handle, so the answer
follows every set_status sent before it) and sends only what differs.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.rabbitconf import ConfigError, check_drain_properties
from flux_dws.resourcegraph import ResourceError, decode_lean, drainable_hosts, graph_index

#: seconds by which the graph's load time may move between two polls
#: without being a reload (graph-uptime is whole seconds; RPC latency)
UPTIME_SLACK = 2.0



def graph_reloaded(loaded: float | None, uptime: float, now: float) -> tuple[bool, float]:
    """Whether Fluxion reloaded its graph since the last poll, and when (by
    ``now``'s clock) the graph was loaded.  ``loaded`` is the last poll's
    answer (None: the first poll), ``uptime`` stats-get's graph-uptime.  A
    load time later than the last by more than UPTIME_SLACK is a reload,
    even one that happened while the old uptime was still short (which a
    smaller uptime alone would miss); otherwise the earliest is kept, as
    graph-uptime is whole seconds."""
    at = now - uptime
    if loaded is None:
        return False, at
    if at > loaded + UPTIME_SLACK:
        return True, at
    return False, min(loaded, at)


Post = Callable[[dict[str, Any]], None]
Log = Callable[[str, str], None]


def decode_journal_answer(text: str | bytes | None) -> tuple[dict[str, Any], str | None]:
    """A resource.journal answer decoded, and None; or {} and the error
    naming what is wrong.  The first answer carries R: its graph is cut
    down as it is decoded (resourcegraph.decode_lean; whole, it may be a
    million vertices)."""
    if not text:
        return {}, None
    try:
        resp = decode_lean(text)
    except ValueError as exc:
        return {}, f"resource.journal answer is not JSON: {exc}"
    if not isinstance(resp, dict):
        return {}, f"resource.journal answer is not a JSON object: {type(resp).__name__}"
    return resp, None


def journal_ended(errnum: int | None, state: str | None, text: str) -> tuple[str, str]:
    """The level and line to log when the resource.journal stream ends
    (``errnum``, ``text``: its error; ``state``: the broker's state, None
    if it could not be read).  ENODATA is the stream's normal end: the
    resource module went away.  When the instance is shutting down
    (flux-core's rc3 unloads the resource module before a service loaded
    by hand, which the broker unloads last) that is no error; while the
    instance runs it is one: rabbit health stops following Flux."""
    if errnum == errno.ENODATA and state != "run":
        return "info", ("rabbit health: resource.journal ended as the instance shuts down"
                        f" (broker state {state or 'unknown'}); no longer following it")
    return "err", f"rabbit health: resource.journal ended: {text}"


class JournalReader:
    """resource.journal answers in, engine events out (no I/O)."""

    def __init__(self, fluxion: bool, exclude: str | None = None,
                 drain_queues: list[str] | None = None) -> None:
        self.fluxion = fluxion
        self.exclude = exclude
        self.drain_queues = drain_queues
        self.hosts: list[str] = []
        self.synced = False
        self.errors: list[str] = []
        #: R's execution.properties once R came (all a reconfigure needs of
        #: it: R itself may be 100 MB)
        self._properties: dict[str, Any] | None = None

    def answer(self, resp: Mapping[str, Any]) -> list[dict[str, Any]]:
        events = resp.get("events")
        if not isinstance(events, list):
            self.errors.append("resource.journal answered without an events array")
            return []
        out: list[dict[str, Any]] = []
        for ev in events:
            if isinstance(ev, dict) and ev.get("name") == "restart":
                nodelist = (ev.get("context") or {}).get("nodelist")
                if isinstance(nodelist, str):
                    self.hosts = list(Hostlist(nodelist))
        if not events:
            self.synced = True
        out.append({"type": "journal", "events": events, "synced": self.synced})
        R = resp.get("R")
        if isinstance(R, dict):
            out.extend(self._resources(R))
        return out

    def _resources(self, R: Mapping[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.fluxion:
            index = graph_index(R)
            if not index["ssds"]:
                self.errors.append("no rabbit ssd vertices in R's scheduling graph: Fluxion"
                                   " is not told which rabbits are up (was R made with"
                                   " flux dws2jgf?)")
            out.append({"type": "graph", "graph": index})
        props = (R.get("execution") or {}).get("properties")
        self._properties = props if isinstance(props, dict) else {}
        out.append(self._flux_config())
        return out

    def reconfigure(self, exclude: str | None,
                    drain_queues: list[str] | None) -> list[dict[str, Any]]:
        """A ``flux config reload``: the new resource.exclude and drain
        queues; the flux-config event they make, once R has come (before,
        the R answer makes it with these)."""
        self.exclude, self.drain_queues = exclude, drain_queues
        return [self._flux_config()] if self._properties is not None else []

    def _flux_config(self) -> dict[str, Any]:
        R = {"execution": {"properties": self._properties or {}}}
        try:
            # the service refused a configuration where no node has any of
            # them; an R that says otherwise is said, not hidden
            check_drain_properties(self.drain_queues, self._properties)
            drainable = drainable_hosts(self.drain_queues, R, self.hosts)
        except (ConfigError, ResourceError) as exc:
            self.errors.append(f"{exc}; no compute node will be drained")
            drainable = ""
        return {"type": "flux-config", "exclude": self.exclude, "drainable": drainable}


def exclude_of(config: Mapping[str, Any]) -> str | None:
    """resource.exclude from the broker's configuration, or None."""
    ex = (config.get("resource") or {}).get("exclude")
    return ex if isinstance(ex, str) and ex else None


class ResourceWatch:
    """A thread with its own Flux handle following resource.journal and
    Fluxion's uptime; events go to ``post`` (the service's, thread-safe)."""

    def __init__(self, post: Post, log: Log, fluxion: bool, drain_queues: list[str] | None,
                 uri: str | None = None, poll_interval: float = 10.0) -> None:
        self.post = post
        self.log = log
        self.fluxion = fluxion
        self.drain_queues = drain_queues
        self.uri = uri
        self.poll_interval = poll_interval
        self._rfd, self._wfd = os.pipe()
        self._thread = threading.Thread(target=self._run, name="dws-resources", daemon=True)
        self._uptime: float | None = None  # when Fluxion loaded its graph
        self._fluxion_away = False
        # The reader is the watch thread's, but a reload reconfigures it from
        # the service's reactor: each side makes and posts its events under
        # this lock, so a reload's flux-config is never overtaken by one made
        # from the old configuration.
        self._lock = threading.Lock()
        self._reader: JournalReader | None = None
        self._pending: tuple[str | None, list[str] | None] | None = None

    def reconfigure(self, config: Mapping[str, Any], drain_queues: list[str] | None) -> None:
        """Apply a reloaded broker config (any thread)."""
        args = (exclude_of(config), drain_queues)
        with self._lock:
            if self._reader is None:
                self._pending = args  # the thread has not read config.get yet
                return
            for ev in self._reader.reconfigure(*args):
                self.post(ev)
            self._report(self._reader)

    def _report(self, reader: JournalReader) -> None:
        while reader.errors:
            self.log("err", f"rabbit health: {reader.errors.pop(0)}")

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        try:
            os.write(self._wfd, b"x")
        except OSError:
            return
        self._thread.join(timeout=timeout)
        os.close(self._rfd)
        os.close(self._wfd)

    def _run(self) -> None:
        import flux
        import flux.constants

        try:
            h = flux.Flux(self.uri) if self.uri else flux.Flux()
            config = h.rpc("config.get").get() or {}
        except OSError as exc:
            self.log("err", f"rabbit health: cannot reach Flux: {exc}")
            return
        reader = JournalReader(self.fluxion, exclude_of(config), self.drain_queues)
        with self._lock:
            if self._pending is not None:
                reader.reconfigure(*self._pending)  # no R yet: no event
            self._reader = reader
        c = flux.constants

        def on_journal(f: Any) -> None:
            try:
                text = f.get_str()
            except OSError as exc:
                self.log(*journal_ended(exc.errno, broker_state(), str(exc)))
                h.reactor_stop()
                return
            f.reset()
            resp, error = decode_journal_answer(text)
            if error is not None:
                self.log("err", f"rabbit health: {error}")
                return
            with self._lock:
                for ev in reader.answer(resp):
                    self.post(ev)
                self._report(reader)

        def broker_state() -> str | None:
            # on this thread's own handle: the service's reactor never waits
            try:
                return str((h.rpc("state-machine.get").get() or {}).get("state"))
            except (OSError, AttributeError):
                return None

        def on_stats(f: Any) -> None:
            try:
                uptime = float((f.get() or {}).get("graph-uptime", 0))
            except OSError:
                self._fluxion_away = True
                return
            reloaded, self._uptime = graph_reloaded(self._uptime, uptime, time.monotonic())
            restarted = self._fluxion_away or reloaded
            self._fluxion_away = False
            if restarted:
                self.post({"type": "fluxion-restart"})

        def poll(h_: Any, w: Any, revents: int, arg: Any) -> None:
            h.rpc("sched-fluxion-resource.stats-get").then(on_stats)

        def stop(h_: Any, w: Any, fd: int, revents: int, arg: Any) -> None:
            h.reactor_stop()

        h.rpc("resource.journal", {}, flags=c.FLUX_RPC_STREAMING).then(on_journal)
        watchers = [h.fd_watcher_create(self._rfd, stop, events=c.FLUX_POLLIN)]
        if self.fluxion:
            h.rpc("sched-fluxion-resource.stats-get").then(on_stats)
            watchers.append(h.timer_watcher_create(self.poll_interval, poll,
                                                   repeat=self.poll_interval))
        for w in watchers:
            w.start()
        h.reactor_run()
        for w in watchers:
            w.stop()
