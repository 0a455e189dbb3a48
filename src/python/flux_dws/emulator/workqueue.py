"""Reconciles on a pool of worker threads, each key's one at a time.

``Workers(fn, n)`` is controller-runtime's ``MaxConcurrentReconciles``
over client-go's work queue: ``add(key)`` asks for ``fn(key)``; ``n``
threads take keys in the order they were asked for, so reconciles of
different keys run at once while one key's never overlap.  A key asked for
again while it is queued is queued once; asked for while its reconcile
runs, it is queued again when that ends (its reconcile then sees what the
request was about).  ``fn`` handles its own errors (the controllers
requeue what failed for the API server's trouble, in one place); one it
lets through is logged, and that worker goes on with the next key.
``stop`` drops what is queued and waits a bounded time for the
reconciles under way.

``FanOut(n)`` runs one function over many items on up to ``n`` threads of
its own and gives the results in the items' order (``n == 1``: in the
caller's thread, in order): the writes of one reconcile that do not
depend on each other, such as a ClientMount per compute node, go to the
API server at once instead of one after the other.  Each thread keeps its
own kept-alive connection (remote.RemoteStore: one per thread).

The in-process store gains nothing from threads (a reconcile there is CPU
under one interpreter lock), so ``Controllers`` defaults to one worker and
no fan-out; ``Attached`` (controllers over HTTPS) asks for more.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

__all__ = ["FanOut", "WorkQueue", "Workers"]

log = logging.getLogger("flux_dws.emulator")

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
R = TypeVar("R")


class WorkQueue(Generic[K]):
    """Keys waiting for a reconcile; a key is handed to one taker at a time.

    ``dirty``: keys asked for and not yet handed out (queued, or waiting for
    their running reconcile to end); ``processing``: keys handed out and not
    yet ``done``.  A key is in the deque only when dirty and not processing.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: collections.deque[K] = collections.deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._shut = False

    def add(self, key: K) -> None:
        with self._cond:
            if self._shut or key in self._dirty:
                return
            self._dirty.add(key)
            if key in self._processing:
                return  # queued again by done()
            self._queue.append(key)
            self._cond.notify()

    def get(self) -> K | None:
        """The next key (now being processed), or None once shut down."""
        with self._cond:
            while not self._queue and not self._shut:
                self._cond.wait()
            if self._shut:
                return None
            key = self._queue.popleft()
            self._dirty.discard(key)
            self._processing.add(key)
            return key

    def done(self, key: K) -> None:
        """The reconcile of key ended: a request that came meanwhile queues it."""
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty and not self._shut:
                self._queue.append(key)
                self._cond.notify()

    def shut_down(self) -> None:
        """Drop what is queued; get() returns None from now on."""
        with self._cond:
            self._shut = True
            self._queue.clear()
            self._dirty.clear()
            self._cond.notify_all()

    def queued(self) -> int:
        with self._cond:
            return len(self._queue)

    def processing(self) -> int:
        with self._cond:
            return len(self._processing)


class Workers(Generic[K]):
    """``n`` threads running ``fn(key)`` for the keys of a WorkQueue."""

    def __init__(self, fn: Callable[[K], object], n: int = 1,
                 name: str = "emulator-controllers") -> None:
        if n < 1:
            raise ValueError(f"workers: at least 1, not {n}")
        self.fn = fn
        self.n = n
        self.name = name
        self.queue: WorkQueue[K] = WorkQueue()
        self._threads: list[threading.Thread] = []

    def start(self) -> Workers[K]:
        for i in range(self.n):
            t = threading.Thread(target=self._run, daemon=True,
                                 name=self.name if self.n == 1 else f"{self.name}-{i}")
            t.start()
            self._threads.append(t)
        return self

    def add(self, key: K) -> None:
        self.queue.add(key)

    def _run(self) -> None:
        while True:
            key = self.queue.get()
            if key is None:
                return
            try:
                self.fn(key)
            except Exception:
                log.exception("reconcile %s", key)
            finally:
                self.queue.done(key)

    def stop(self, timeout: float = 5.0) -> bool:
        """Drop what is queued, wait up to ``timeout`` seconds in all for
        the reconciles under way; whether every worker ended."""
        self.queue.shut_down()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads
                       if t is not threading.current_thread())


class FanOut:
    """``map(fn, items)`` on up to ``n`` threads (module docstring)."""

    def __init__(self, n: int = 1, name: str = "emulator-fanout") -> None:
        if n < 1:
            raise ValueError(f"fan-out: at least 1 thread, not {n}")
        self.n = n
        self.name = name
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._stopped = False

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._stopped:
                raise RuntimeError("fan-out stopped")
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.n, thread_name_prefix=self.name)
            return self._pool

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """[fn(item) for item in items], fn running on up to n threads at
        once.  Every call ends before map returns; the first exception (in
        the items' order) is then raised.  fn must not use this FanOut."""
        todo = list(items)
        if self.n == 1 or len(todo) < 2:
            return [fn(item) for item in todo]
        pool = self._executor()
        futures: list[Future[R]] = [pool.submit(fn, item) for item in todo]
        error: BaseException | None = None
        out: list[R] = []
        for f in futures:
            exc = f.exception()  # waits for it
            if exc is not None:
                error = error or exc
            else:
                out.append(f.result())
        if error is not None:
            raise error
        return out

    def stop(self) -> None:
        """No new maps; the calls not started are dropped (a map waiting on
        them gets CancelledError)."""
        with self._lock:
            self._stopped = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
