"""One timer thread for the emulator's controllers.

Waits, retries, latency and the emulated daemons (clientmountd, nnf-dm,
the container cluster) all ask for "call this in N seconds".  A
``threading.Timer`` per request made one thread per pending wait: 1,000
workflows waiting on ClientMounts held 1,000 sleeping threads.  Here a
single thread sleeps until the earliest deadline of a heap and runs what is
due in order; callbacks must not block (they are short store operations).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("flux_dws.emulator")


class TimerThread:
    """Call functions after a delay, from one daemon thread."""

    def __init__(self, name: str = "emulator-timers",
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        self._heap: list[tuple[float, int, Callable[[], Any]]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopped = False
        self._on_error = on_error
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def call_later(self, seconds: float, fn: Callable[[], Any]) -> None:
        """Run ``fn`` once ``seconds`` (>= 0) have passed; ignored after stop()."""
        due = time.monotonic() + max(0.0, seconds)
        with self._cond:
            if self._stopped:
                return
            if not self._thread.is_alive() and self._thread.ident is None:
                self._thread.start()  # started by the first request
            heapq.heappush(self._heap, (due, next(self._seq), fn))
            if self._heap[0][2] is fn:
                self._cond.notify()

    def pending(self) -> int:
        with self._cond:
            return len(self._heap)

    def stop(self, timeout: float = 5.0) -> None:
        """Drop what is pending and end the thread."""
        with self._cond:
            self._stopped = True
            self._heap.clear()
            self._cond.notify()
        if self._thread.ident is not None and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (
                        not self._heap or self._heap[0][0] > time.monotonic()):
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(wait)
                if self._stopped:
                    return
                _, _, fn = heapq.heappop(self._heap)
            try:
                fn()
            except Exception as exc:  # a callback's bug must not stop every timer
                if self._on_error is not None:
                    self._on_error(exc)
                else:
                    log.exception("timer callback")
