"""The service's link in the harness: Flux's message semantics, in process.

Requests to ``dws.*`` reach the service only while it serves; a request
sent to no service is answered ENOSYS, as the broker does.  A request the
service took and never answered (the service was stopped meanwhile) is
never answered, also as on a broker.  Every delivery is posted to the
reactor, never called inline, so ordering is that of a message queue;
requests and their answers are messages (``Reactor.post_message``): they
do not queue behind the events the service's threads posted.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from flux_dws.harness.reactor import Reactor
from flux_dws.service.link import JobInfo, Link, Request, ResourceFollow, RpcCallback
from flux_dws.service.resource_journal import JournalReader, exclude_of

if TYPE_CHECKING:
    from flux_dws.harness.jobmanager import JobManager

log = logging.getLogger("flux_dws.harness")


class Reply:
    """The harness' message handle: answering it calls back the sender."""

    def __init__(self, callback: RpcCallback, link: HarnessLink, generation: int) -> None:
        self.callback = callback
        self.link = link
        self.generation = generation
        self.answered = False

    def answer(self, ok: bool, errnum: int, errstr: str, payload: Any) -> None:
        if self.answered or self.generation != self.link.generation:
            return  # answered already, or by a service since stopped
        self.answered = True
        self.link.reactor.post_message(lambda: self.callback(ok, errnum, errstr, payload))


class HarnessLink(Link):
    def __init__(self, reactor: Reactor, jobmanager: JobManager, owner: int = 0) -> None:
        self.reactor = reactor
        self.jm = jobmanager
        self.owner = owner
        self._handler: Callable[[Request], None] | None = None
        self._guest_topics: set[str] = set()
        self._timers: dict[str, int] = {}
        self.generation = 0
        self.logs: list[tuple[str, str]] = []

    # --- the dws service side ---------------------------------------------

    def serve(self, service: str, handler: Callable[[Request], None],
              guest_methods: Collection[str] = ()) -> None:
        self._handler = handler
        self._guest_topics = {f"{service}.{m}" for m in guest_methods}

    def unserve(self) -> None:
        """The service went away: later requests get ENOSYS, pending ones
        no answer; its timers die with it."""
        self._handler = None
        self.generation += 1
        for handle in self._timers.values():
            self.reactor.cancel(handle)
        self._timers.clear()

    def request(self, topic: str, payload: Any, userid: int, callback: RpcCallback) -> None:
        """The job manager's side: send a dws.* request (from any thread:
        it is delivered on the reactor)."""
        reply = Reply(callback, self, self.generation)

        def deliver() -> None:
            if self._handler is None:
                reply.answer(False, errno.ENOSYS, f"No service matching {topic} is registered",
                             None)
                return
            if userid != self.owner and topic not in self._guest_topics:
                # the broker's answer to a user's request for an owner's handler
                reply.answer(False, errno.EPERM, "Request requires owner credentials", None)
                return
            self._handler(Request(topic, payload, userid, reply))

        self.reactor.post_message(deliver)

    def respond(self, msg: Any, payload: Any) -> None:
        msg.answer(True, 0, "", payload)

    def respond_error(self, msg: Any, errnum: int, errstr: str) -> None:
        msg.answer(False, errnum, errstr, None)

    def rpc(self, topic: str, payload: Any, nodeid: int, callback: RpcCallback | None) -> None:
        gen = self.generation

        def answer(ok: bool, errnum: int, errstr: str, body: Any) -> None:
            if callback is not None and gen == self.generation:
                self.reactor.post(lambda: callback(ok, errnum, errstr, body))

        self.reactor.post(lambda: self.jm.rpc(topic, payload, answer))

    def job_info(self, jobid: int, want_R: bool, callback: Callable[[JobInfo], None]) -> None:
        gen = self.generation

        def run() -> None:
            info = self.jm.job_info(jobid, want_R)
            if gen == self.generation:
                callback(info)

        self.reactor.post(run)

    def kvs_commit(self, jobid: int, put: dict[str, Any], link: dict[str, str],
                   callback: Callable[[bool, str], None]) -> None:
        def run() -> None:
            ok, err = self.jm.kvs_commit(jobid, put, link)
            callback(ok, err)

        self.reactor.post(run)

    def watch_resources(self, post: Callable[[dict[str, Any]], None], fluxion: bool,
                        drain_queues: list[str] | None) -> ResourceFollow:
        follow = _HarnessFollow(self, post, JournalReader(fluxion, self.jm.exclude,
                                                          drain_queues))
        self.reactor.post(lambda: self.jm.resources.journal(follow.consumer))
        if self.jm.fluxion is not None:
            self.jm.fluxion.watch_restarts(follow.restarted)
        return follow

    def post(self, fn: Callable[[], None]) -> None:
        gen = self.generation

        def run() -> None:
            if gen == self.generation:
                fn()

        self.reactor.post(run)

    def timer_start(self, key: str, after: float, fn: Callable[[], None]) -> None:
        self.timer_stop(key)

        def fire() -> None:
            self._timers.pop(key, None)
            fn()

        self._timers[key] = self.reactor.call_later(after, fire)

    def timer_pending(self, key: str) -> bool:
        """Whether the service's timer ``key`` is armed (tests: on the reactor)."""
        return key in self._timers

    def timer_stop(self, key: str) -> None:
        handle = self._timers.pop(key, None)
        if handle is not None:
            self.reactor.cancel(handle)

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))
        log.log({"err": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO}.get(
            level, logging.DEBUG), "dws: %s", message)

    def active_jobs(self, callback: Callable[[list[dict[str, Any]] | None], None]) -> None:
        gen = self.generation

        def run() -> None:
            jobs = self.jm.active_dw_jobs()
            if gen == self.generation:
                callback(jobs)

        self.reactor.post(run)


class _HarnessFollow:
    """The harness' resource follow: the journal of its resource module and
    its Fluxion's restarts (all on the reactor thread)."""

    def __init__(self, link: HarnessLink, post: Callable[[dict[str, Any]], None],
                 reader: JournalReader) -> None:
        self.link, self.post, self.reader = link, post, reader
        self.generation = link.generation
        self.active = True

    def alive(self) -> bool:
        return self.active and self.generation == self.link.generation

    def consumer(self, resp: dict[str, Any]) -> None:
        if self.alive():
            self._emit(self.reader.answer(resp))

    def restarted(self) -> None:
        if self.alive() and self.reader.fluxion:
            self.post({"type": "fluxion-restart"})

    def reconfigure(self, config: Mapping[str, Any], drain_queues: list[str] | None) -> None:
        self._emit(self.reader.reconfigure(exclude_of(config), drain_queues))

    def stop(self, timeout: float = 5.0) -> None:
        self.active = False

    def _emit(self, events: list[dict[str, Any]]) -> None:
        for ev in events:
            self.post(ev)
        while self.reader.errors:
            self.link.log("err", f"rabbit health: {self.reader.errors.pop(0)}")


class ServiceLink(Link):
    """The harness link as one service sees it.  Once the harness has
    stopped that service (``HarnessLink.unserve``), nothing it still does
    reaches anyone and nothing more reaches it, as for a module unloaded
    from a broker: what its threads finish meanwhile (a write whose answer
    comes late) is dropped, not fed to the dead service's engine."""

    def __init__(self, link: HarnessLink) -> None:
        self.link = link
        self.generation = link.generation

    def alive(self) -> bool:
        return self.generation == self.link.generation

    def serve(self, service: str, handler: Callable[[Request], None],
              guest_methods: Collection[str] = ()) -> None:
        if self.alive():
            self.link.serve(service, handler, guest_methods)

    def respond(self, msg: Any, payload: Any) -> None:
        self.link.respond(msg, payload)

    def respond_error(self, msg: Any, errnum: int, errstr: str) -> None:
        self.link.respond_error(msg, errnum, errstr)

    def rpc(self, topic: str, payload: Any, nodeid: int, callback: RpcCallback | None) -> None:
        if self.alive():
            self.link.rpc(topic, payload, nodeid, callback)

    def job_info(self, jobid: int, want_R: bool, callback: Callable[[JobInfo], None]) -> None:
        if self.alive():
            self.link.job_info(jobid, want_R, callback)

    def kvs_commit(self, jobid: int, put: dict[str, Any], link: dict[str, str],
                   callback: Callable[[bool, str], None]) -> None:
        if self.alive():
            self.link.kvs_commit(jobid, put, link, callback)

    def active_jobs(self, callback: Callable[[list[dict[str, Any]] | None], None]) -> None:
        if self.alive():
            self.link.active_jobs(callback)

    def watch_resources(self, post: Callable[[dict[str, Any]], None], fluxion: bool,
                        drain_queues: list[str] | None) -> ResourceFollow:
        return self.link.watch_resources(post, fluxion, drain_queues)

    def post(self, fn: Callable[[], None]) -> None:
        self.link.post(lambda: fn() if self.alive() else None)

    def timer_start(self, key: str, after: float, fn: Callable[[], None]) -> None:
        if self.alive():
            self.link.timer_start(key, after, fn)

    def timer_pending(self, key: str) -> bool:
        return self.link.timer_pending(key)

    def timer_stop(self, key: str) -> None:
        if self.alive():
            self.link.timer_stop(key)

    def log(self, level: str, message: str) -> None:
        self.link.log(level, message)
