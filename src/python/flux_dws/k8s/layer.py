"""The dws service's Kubernetes layer: watches and a writer pool, no decisions.

``KubeLayer`` connects (the kubeconfig, a server that answers, the API
versions it serves: kinds.py), starts one list+watch thread per kind
(watching.py) and a pool of writers for the engine's ``k8s`` actions
(writing.py), and hands every outcome back as an event through ``post``
(events.py); settings.py lists its config keys.  It does I/O only.

A watchdog thread (started with the watches) asks each watch every few
seconds whether it has been silent too long while objects it knows must
still change (``KindWatch.check_silence``: it then lists again);
``watch_states`` is what each watch is doing, for ``flux dws status``.

Barriers (the service's ``dws.watch_test``): ``watch_barrier`` lists every
watched kind and calls back once each watch has posted what its list
shows; ``writes_barrier`` calls back once every action submitted before has
been carried out and its result posted.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from flux_dws.k8s import crd
from flux_dws.k8s.api import Api, read_answer
from flux_dws.k8s.errors import KubeError, describe, retry_after, status_message
from flux_dws.k8s.events import Post
from flux_dws.k8s.kinds import ALL_KINDS, Kinds
from flux_dws.k8s.settings import KubeSettings
from flux_dws.k8s.watching import KindWatch, WatchSpec
from flux_dws.k8s.writing import WriterPool

__all__ = ["KubeLayer"]


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
        # the default logger keeps the name it had in service/kube.py, which
        # a site's logging configuration may name
        self.log = log or logging.getLogger("flux_dws.service.kube")
        self.settings = KubeSettings.from_config(config)
        self._gate = _Gate(post)
        self.api_client: Any = None
        self.api: Api | None = None
        self.kinds: Kinds | None = None
        self.pool: WriterPool | None = None
        self.watches: dict[str, KindWatch] = {}
        self._watchdog_stop = threading.Event()
        self._watchdog: threading.Thread | None = None

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
        self.pool = WriterPool(self.api, kinds, self._gate, self.log, self.settings,
                               self._written)
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
                          self.settings, spec.namespace, spec.label_selector, spec.unsettled)
            self.watches[spec.kind] = w
            w.start()
        if self._watchdog is None and self.watches:
            self._watchdog = threading.Thread(target=self._watch_dog, name="kube-watchdog",
                                              daemon=True)
            self._watchdog.start()

    def _watch_dog(self) -> None:
        """Every few seconds (a quarter of ``watch_silence``, at most 5 s):
        each silent watch that must hear something is listed again."""
        every = min(self.settings.watch_silence / 4, 5.0)
        while not self._watchdog_stop.wait(every):
            now = time.monotonic()
            for w in list(self.watches.values()):
                w.check_silence(now)

    def _written(self, kind: str, op: str, namespace: str | None, name: str | None,
                 obj: Any) -> None:
        """A write that succeeded: the watch of its kind must hear of it."""
        w = self.watches.get(kind)
        if w is not None:
            w.wrote(op, namespace, name, obj)

    def watch_states(self) -> list[dict[str, Any]]:
        """What each watch is doing (``KindWatch.view``), by kind."""
        now = time.monotonic()
        return [w.view(now) for _, w in sorted(self.watches.items())]

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
        self._watchdog_stop.set()
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
