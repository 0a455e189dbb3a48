"""A single-threaded reactor for the flux-less harness: callables and timers.

It plays the part of the Flux reactor: everything the service and the
emulated job manager do runs on its one thread, in the order posted.
Messages (a dws.* request, its answer) are the exception: as the broker
dispatches messages between the service's slices of posted events, a
message runs before the callables already posted (``post_message``).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger("flux_dws.harness")


def _wake() -> None:
    """What post_message queues to wake the reactor (runs nothing)."""


class Reactor:
    def __init__(self, name: str = "harness-reactor") -> None:
        self._q: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._messages: deque[Callable[[], None]] = deque()  # append/popleft: atomic
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._seq = itertools.count()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._stopping = False
        self.errors: list[BaseException] = []
        #: called after every callback (the harness wakes waiters with it)
        self.after_each: Callable[[], None] = lambda: None

    def start(self) -> Reactor:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        self._q.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)

    def on_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def post(self, fn: Callable[[], None]) -> None:
        self._q.put(fn)

    def post_message(self, fn: Callable[[], None]) -> None:
        """From any thread: run ``fn`` ahead of what is posted and not run
        yet (``post``), after the callable running now: a message waits
        for one posted event at most, not for a backlog of them."""
        self._messages.append(fn)
        self._q.put(_wake)

    def call_later(self, after: float, fn: Callable[[], None]) -> int:
        """Run ``fn`` after ``after`` seconds; returns a handle for cancel()."""
        handle = next(self._seq)
        when = time.monotonic() + max(0.0, after)
        self.post(lambda: heapq.heappush(self._timers, (when, handle, fn)))
        return handle

    def cancel(self, handle: int) -> None:
        self._cancelled.add(handle)

    def call(self, fn: Callable[[], T], timeout: float = 30.0) -> T:
        """Run ``fn`` on the reactor thread and return its result (from
        another thread)."""
        if self.on_thread():
            return fn()
        done = threading.Event()
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # handed back to the caller
                box["error"] = exc
            finally:
                done.set()

        run.quiet = True  # type: ignore[attr-defined]
        self.post(run)
        if not done.wait(timeout):
            raise TimeoutError("the harness reactor did not answer")
        if "error" in box:
            raise box["error"]
        value: T = box["value"]
        return value

    def _run(self) -> None:
        while not self._stopping:
            timeout = None
            if self._timers:
                timeout = max(0.0, self._timers[0][0] - time.monotonic())
            try:
                fn = self._q.get(timeout=timeout)
            except queue.Empty:
                fn = None
                if not self._timers:
                    continue
            while self._messages:
                self._guard(self._messages.popleft())
            if fn is not None and fn is not _wake:
                self._guard(fn)
            now = time.monotonic()
            while self._timers and self._timers[0][0] <= now:
                _, handle, tfn = heapq.heappop(self._timers)
                if handle in self._cancelled:
                    self._cancelled.discard(handle)
                    continue
                self._guard(tfn)

    def _guard(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as exc:  # a bug: keep it for the test, keep serving
            log.exception("harness reactor callback failed")
            self.errors.append(exc)
        if not getattr(fn, "quiet", False):
            # a look from another thread (call) changes nothing: waking the
            # waiters for it would have them look again, and again
            self.after_each()
