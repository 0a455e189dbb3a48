"""HTTP-level faults of the emulator's API server (for clients' error paths).

- A rule: the next ``count`` requests whose method is ``method`` (``*``: any)
  and whose request target (path and query) matches the regular expression
  ``path`` (``re.search``) get HTTP ``status`` (with ``Retry-After:
  retry_after`` when given, as a 429 from API priority and fairness has) or,
  with ``drop``, have their connection closed without an answer; with
  ``hold`` (seconds), are carried out as usual and only their answer waits
  (up to ``hold``, or until ``release()`` or ``clear()``): a write that is made while its
  client is gone by the time the answer comes (a service restarted between
  a create and its answer).  ``skip``: the first ``skip`` matching requests
  pass untouched (the second write to one object fails, not the first).
- ``drop_watches()``: every open watch stream is cut (no final chunk), as
  when an API server or a load balancer goes away; clients must reconnect.
- ``expire_watches(n)``: the next ``n`` watches that name a resourceVersion
  get ``410 Gone`` (an ERROR event, as from the watch cache), whatever the
  history holds; clients must re-list.
- ``mute_watches(True)``: every watch stream, open or opened later, stays
  open and sends nothing (its events are lost, no bookmark goes out) until
  ``mute_watches(False)`` or ``clear()``: a connection that is up but deaf,
  which only a client that lists again recovers from.

Requests to ``/_emulator/...`` are never affected.  The server calls
``take``, ``watch_opened``/``watch_closed`` and ``take_expired``; tests call
the rest (``Emulator.api_faults``) or ``POST /_emulator/api-faults``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

STATUS_REASONS = {429: "TooManyRequests", 500: "InternalError", 502: "BadGateway",
                  503: "ServiceUnavailable", 504: "GatewayTimeout"}


@dataclass
class ApiFault:
    """The next ``count`` matching requests fail with ``status`` (or are
    dropped, or carried out with their answer held)."""

    status: int = 503
    method: str = "*"
    path: str = ""
    count: int = 1
    retry_after: float | None = None
    drop: bool = False
    message: str = ""
    hold: float = 0.0
    skip: int = 0
    hits: int = 0
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _released: threading.Event = field(init=False, repr=False, compare=False,
                                       default_factory=threading.Event)

    def __post_init__(self) -> None:
        if not isinstance(self.status, int) or not 400 <= self.status <= 599:
            raise ValueError(f"status must be an HTTP error code (400-599), not {self.status!r}")
        if not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"count must be a positive integer, not {self.count!r}")
        if self.retry_after is not None and (not isinstance(self.retry_after, (int, float))
                                             or self.retry_after < 0):
            raise ValueError(f"retry_after must be a number >= 0, not {self.retry_after!r}")
        if not isinstance(self.skip, int) or self.skip < 0:
            raise ValueError(f"skip must be an integer >= 0, not {self.skip!r}")
        if not isinstance(self.hold, (int, float)) or self.hold < 0:
            raise ValueError(f"hold must be a number of seconds >= 0, not {self.hold!r}")
        if self.hold and self.drop:
            raise ValueError("a held answer cannot also be dropped")
        if not isinstance(self.method, str) or not isinstance(self.path, str):
            raise ValueError("method and path must be strings")
        self.method = self.method.upper()
        try:
            self._regex = re.compile(self.path)
        except re.error as exc:
            raise ValueError(f"path is not a regular expression: {exc}") from None
        if not self.message:
            self.message = f"injected fault: HTTP {self.status}"

    def matches(self, method: str, target: str) -> bool:
        return (self.method in ("*", method)) and self._regex.search(target) is not None

    def release(self) -> None:
        """Let the answers it holds go now."""
        self._released.set()

    def wait_released(self) -> None:
        """Hold an answer (the server's side): until release() or ``hold``."""
        self._released.wait(self.hold)

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        out["retryAfter"] = out.pop("retry_after")
        return out

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> ApiFault:
        known = {"status", "method", "path", "count", "retryAfter", "drop", "message", "hold",
                 "skip"}
        unknown = set(body) - known
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
        args = dict(body)
        if "retryAfter" in args:
            args["retry_after"] = args.pop("retryAfter")
        if not isinstance(args.get("drop", False), bool):
            raise ValueError("drop must be true or false")
        return cls(**args)


class ApiFaults:
    """The API faults in force and the open watch streams (thread-safe)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.rules: list[ApiFault] = []
        self.held: list[ApiFault] = []  # rules that held an answer: clear() lets them go
        self.expire = 0            # watches with a resourceVersion still to answer 410
        self.muted = False         # watch streams send nothing (mute_watches)
        self.muted_events = 0      # watch events lost to it so far
        self.dropped = 0           # watch streams cut so far
        self.failed = 0            # requests answered by a rule so far
        self._watches: dict[int, Callable[[], None]] = {}
        self._next_watch = 0

    # --- for tests and the admin endpoint ----------------------------------

    def add(self, fault: ApiFault) -> ApiFault:
        with self.cond:
            self.rules.append(fault)
            self.cond.notify_all()
        return fault

    def clear(self) -> None:
        with self.cond:
            for fault in self.held:
                fault.release()
            self.held.clear()
            self.rules.clear()
            self.expire = 0
            self.muted = False
            self.cond.notify_all()

    def mute_watches(self, on: bool) -> None:
        if not isinstance(on, bool):
            raise ValueError(f"muteWatches must be true or false, not {on!r}")
        with self.cond:
            self.muted = on
            self.cond.notify_all()

    def expire_watches(self, count: int = 1) -> None:
        if not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be an integer >= 0, not {count!r}")
        with self.cond:
            self.expire += count

    def drop_watches(self) -> int:
        """Cut every open watch stream now; returns how many."""
        with self.cond:
            cuts = list(self._watches.values())
            self._watches.clear()
            self.dropped += len(cuts)
            self.cond.notify_all()
        for cut in cuts:
            cut()
        return len(cuts)

    def open_watches(self) -> int:
        with self.cond:
            return len(self._watches)

    def wait(self, predicate: Callable[[ApiFaults], bool], timeout: float = 10.0) -> bool:
        """Wait (up to timeout) until predicate(self) holds, e.g. a watch is open."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def to_json(self) -> dict[str, Any]:
        with self.cond:
            return {"faults": [f.to_json() for f in self.rules], "expireWatches": self.expire,
                    "muteWatches": self.muted, "mutedEvents": self.muted_events,
                    "openWatches": len(self._watches), "droppedWatches": self.dropped,
                    "failedRequests": self.failed}

    # --- for the server ------------------------------------------------------

    def take(self, method: str, target: str) -> ApiFault | None:
        """The rule that answers this request (its count used), if any."""
        if not self.rules:  # unlocked fast path: a stale read only delays a new rule
            return None
        with self.cond:
            for fault in self.rules:
                if fault.matches(method, target):
                    if fault.skip > 0:
                        fault.skip -= 1
                        continue
                    fault.count -= 1
                    fault.hits += 1
                    if fault.hold and fault not in self.held:
                        self.held.append(fault)
                    self.failed += 1
                    if fault.count <= 0:
                        self.rules.remove(fault)
                    self.cond.notify_all()
                    return fault
        return None

    def take_expired(self) -> bool:
        """Whether this watch (from a resourceVersion) must get 410."""
        if not self.expire:
            return False
        with self.cond:
            if self.expire <= 0:
                return False
            self.expire -= 1
            self.cond.notify_all()
            return True

    def silenced(self, events: int) -> bool:
        """Whether a watch stream must hold its tongue now (its ``events``
        are then counted as lost)."""
        if not self.muted:
            return False
        with self.cond:
            self.muted_events += events
            self.cond.notify_all()
        return True

    def watch_opened(self, cut: Callable[[], None]) -> int:
        with self.cond:
            self._next_watch += 1
            self._watches[self._next_watch] = cut
            self.cond.notify_all()
            return self._next_watch

    def watch_closed(self, handle: int) -> None:
        with self.cond:
            if self._watches.pop(handle, None) is not None:
                self.cond.notify_all()
