"""The service's link to Flux: everything it sends to or gets from Flux.

Two links exist: ``fluxlink.FluxLink`` on a real broker (a broker module
or a stand-alone process) and ``flux_dws.harness.HarnessLink`` in tests.
The service never knows which one it has (one code path: doc/guide/service.rst).

Every method is called on the reactor thread, except ``post``, the one
way in from other threads.  Nothing here may block: answers come back
through callbacks, on the reactor thread.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

#: (ok, errnum, errstr, payload) of an RPC
RpcCallback = Callable[[bool, int, str, Any], None]


class ResourceFollow(Protocol):
    """What ``Link.watch_resources`` hands back: the follow of Flux's
    resources for rabbit health, until stopped."""

    def stop(self, timeout: float = 5.0) -> None:
        """End the follow and wait for it (up to ``timeout`` seconds)."""

    def reconfigure(self, config: Mapping[str, Any], drain_queues: list[str] | None) -> None:
        """A reloaded broker config: resource.exclude and the drain queues
        (node properties), applied to what is posted from now on."""


@dataclass
class Request:
    """A ``dws.*`` request: what the engine sees of it, and the message."""

    topic: str
    payload: Any
    userid: int
    msg: Any


@dataclass
class JobInfo:
    ok: bool
    errstr: str = ""
    jobspec: Any = None
    userid: int | None = None
    R: Any = None


class Link(ABC):
    @abstractmethod
    def serve(self, service: str, handler: Callable[[Request], None],
              guest_methods: Collection[str] = ()) -> None:
        """Take the requests of ``service`` (``dws``); answer each with
        respond or respond_error.  Only the instance owner's requests
        reach the handler, except those to ``guest_methods`` (e.g.
        ``rabbits`` for ``dws.rabbits``), which any user may send; the
        broker answers the others EPERM."""

    @abstractmethod
    def respond(self, msg: Any, payload: Any) -> None: ...

    @abstractmethod
    def respond_error(self, msg: Any, errnum: int, errstr: str) -> None: ...

    @abstractmethod
    def rpc(self, topic: str, payload: Any, nodeid: int,
            callback: RpcCallback | None) -> None: ...

    @abstractmethod
    def job_info(self, jobid: int, want_R: bool, callback: Callable[[JobInfo], None]) -> None:
        """The job's jobspec and owner (and its R if asked)."""

    @abstractmethod
    def kvs_commit(self, jobid: int, put: dict[str, Any], link: dict[str, str],
                   callback: Callable[[bool, str], None]) -> None:
        """One transaction in the job's KVS directory: keys put, then
        symlinks ``key -> target`` (both relative to the job's directory)."""

    @abstractmethod
    def active_jobs(self, callback: Callable[[list[dict[str, Any]] | None], None]) -> None:
        """The active jobs (at least all with a dw attribute), each
        ``{"id", "state", "dependencies", "rabbit"}`` (state DEPEND, SCHED,
        RUN or CLEANUP; rabbit: it has the ``rabbit_workflow`` memo), or
        None when they cannot be listed: after a restart the engine finds
        among them the requests the old service lost, and the Workflows
        of jobs that ended while it was away."""

    @abstractmethod
    def watch_resources(self, post: Callable[[dict[str, Any]], None], fluxion: bool,
                        drain_queues: list[str] | None) -> ResourceFollow:
        """Follow Flux's resources for rabbit health: post the engine's
        journal, graph, flux-config and fluxion-restart events (from any
        thread, through ``post``) until it is stopped (service/resource_journal.py)."""

    @abstractmethod
    def post(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the reactor thread soon (safe from any thread)."""

    @abstractmethod
    def timer_start(self, key: str, after: float, fn: Callable[[], None]) -> None:
        """One-shot timer; starting a key that runs replaces it."""

    @abstractmethod
    def timer_stop(self, key: str) -> None: ...

    @abstractmethod
    def log(self, level: str, message: str) -> None:
        """level: err, warning, info or debug."""

    # ``then``: called (on the reactor thread) once the answer has come,
    # whatever it was (the service's dws.watch_test waits for it)

    def memo(self, jobid: int, memo: dict[str, Any],
             then: Callable[[], None] | None = None) -> None:
        self.rpc("job-manager.memo", {"id": jobid, "memo": memo}, 0,
                 self._log_failure("memo", then))

    def raise_exception(self, jobid: int, type_: str, severity: int, note: str,
                        then: Callable[[], None] | None = None) -> None:
        self.rpc("job-manager.raise",
                 {"id": jobid, "type": type_, "severity": severity, "note": note}, 0,
                 self._log_failure(f"raise {type_}", then))

    def post_event(self, jobid: int, name: str, context: dict[str, Any],
                   then: Callable[[], None] | None = None) -> None:
        """An entry of flux-dws' own in the job's eventlog (the explanation
        beside an exception note), through flux-core's post-event service."""
        self.rpc("job-manager.post-event.post", {"id": jobid, "name": name, "context": context},
                 0, self._log_failure(f"post-event {name}", then))

    def drain(self, targets: str, reason: str, then: Callable[[], None] | None = None) -> None:
        self.rpc("resource.drain", {"targets": targets, "mode": "update", "reason": reason}, 0,
                 self._log_failure(f"drain {targets}", then))

    def _log_failure(self, what: str, then: Callable[[], None] | None = None) -> RpcCallback:
        def cb(ok: bool, errnum: int, errstr: str, payload: Any) -> None:
            if not ok:
                self.log("err", f"{what}: {errstr or errnum}")
            if then is not None:
                then()
        return cb
