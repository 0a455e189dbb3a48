"""The flux-less harness: the real dws service, an emulated job manager.

    with Harness(system="kind") as h:          # emulator + service + job manager
        jobid = h.submit("#DW jobdw type=xfs capacity=10GiB name=scratch", nodes=2)
        job = h.wait(jobid)                    # until INACTIVE
        assert job.env["DW_JOB_scratch"]

The service is the same code a broker runs (``flux_dws.service.core``),
talking to Kubernetes (the embedded emulator by default) through the same
kube layer; only its link differs (``HarnessLink`` instead of
``FluxLink``).  The job manager plays flux-core's part and the dws jobtap
plugin's, through the libdws machine the C plugin shares.
``restart_service()`` kills the service mid-flight (pending requests go
unanswered, and what its threads finish afterwards reaches no one, as on a
broker) and starts a fresh one.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from flux_dws.dwsim.systems import load_system
from flux_dws.emulator import Emulator
from flux_dws.harness.fake_resource import FakeFluxion
from flux_dws.harness.jobmanager import Job, JobManager
from flux_dws.harness.link import HarnessLink, ServiceLink
from flux_dws.harness.reactor import Reactor
from flux_dws.k8s.layer import KubeLayer
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.rabbitconf import parse
from flux_dws.service.core import Service

__all__ = ["Harness", "Job", "RemoteEmulator"]

log = logging.getLogger("flux_dws.harness")

TASK = {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}


class RemoteEmulator:
    """An emulator the harness did not start (a subprocess, e.g. on El
    Capitan's system for a benchmark): what the harness needs of it, its
    kubeconfig; it has no controllers to reach into and is not stopped."""

    def __init__(self, kubeconfig: Path, reader: Path | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.reader = reader or kubeconfig
        self.controllers = None
        self.server = object()

    def custom_objects_api(self) -> Any:
        """A client of its API server, from ``reader`` (default: the
        service's kubeconfig; what the harness lists Workflows with:
        ``left_behind``.  A benchmark that counts the service's requests
        by user reads as another)."""
        from kubernetes import client, config

        return client.CustomObjectsApi(
            config.new_client_from_config(str(self.reader)))  # type: ignore[no-untyped-call]


def jobspec(dw: Any, nodes: int = 1, tolerance: Any = None,
            system: dict[str, Any] | None = None) -> dict[str, Any]:
    """A jobspec as ``flux submit -N nodes -S dw=...`` makes it."""
    attrs: dict[str, Any] = dict(system or {})
    if dw is not None:
        attrs["dw"] = dw
    if tolerance is not None:
        attrs["dw_failure_tolerance"] = tolerance
    return {"version": 1,
            "resources": [{"type": "node", "count": nodes, "with": [TASK]}],
            "tasks": [{"command": ["true"], "slot": "task", "count": {"per_slot": 1}}],
            "attributes": {"system": attrs}}


class Harness:
    def __init__(self, system: str = "kind", latency: str = "zero",
                 config: dict[str, Any] | None = None, *, emulator: Emulator | None = None,
                 epilog_timeout: float = 0.0, kube: dict[str, Any] | None = None,
                 owner: int | None = None, fluxion: bool = True,
                 namespace: str = "default", ssds_per_rabbit: int = 2) -> None:
        self.system = load_system(system)
        self._own_emulator = emulator is None
        self.emulator = emulator or Emulator(system=system, latency=latency,
                                             bookmark_interval=1.0)
        self.config = dict(config or {})
        self.use_fluxion = fluxion  # False: the service runs with --disable-fluxion
        self.namespace = namespace  # the service's --namespace (the Workflows')
        self.kube_settings = dict(kube or {})
        self.owner = os.getuid() if owner is None else owner
        self.reactor = Reactor()
        self.jm = JobManager(self.reactor, list(self.system.computes), self.owner,
                             epilog_timeout)
        self.fluxion = FakeFluxion(self.system, ssds_per_rabbit, jgf=fluxion)
        self.jm.fluxion = self.fluxion
        self.jm.rabbit_of = {c: r.name for r in self.system.rabbits for c, _ in r.computes}
        self.jm.ssd_free = {r.name: r.capacity >> 30 for r in self.system.rabbits}
        self.jm.resources.R = {"version": 1, "execution": {
            "R_lite": [{"rank": f"0-{len(self.system.computes) - 1}",
                        "children": {"core": "0"}}],
            "nodelist": [str(Hostlist(self.system.computes))], "properties": {},
            "starttime": 0, "expiration": 0}}
        if self.fluxion.graph:
            self.jm.resources.R["scheduling"] = self.fluxion.graph
        self.link = HarnessLink(self.reactor, self.jm, self.owner)
        self.jm.request = self.link.request
        self.service: Service | None = None
        self._waiters: list[tuple[Callable[[], bool], threading.Event]] = []
        self.reactor.after_each = self._wake
        self.services_started = 0

    # --- lifecycle ----------------------------------------------------------

    def __enter__(self) -> Harness:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> Harness:
        if self._own_emulator and self.emulator.server is None:
            self.emulator.start()
        self.reactor.start()
        self.start_service()
        return self

    def stop(self) -> None:
        self.stop_service()
        self.reactor.stop()
        if self._own_emulator:
            self.emulator.stop()

    def start_service(self, config: dict[str, Any] | None = None) -> Service:
        """A fresh service (new engine, new watches) on the harness link."""
        if config is not None:
            self.config = dict(config)
        cfg = parse(self.config)
        cfg["owner"] = self.owner
        cfg["fluxion"] = self.use_fluxion

        def factory(post: Callable[[dict[str, Any]], None]) -> KubeLayer:
            kube = KubeLayer(str(self.emulator.kubeconfig), post,
                             logging.getLogger("flux_dws.kube"), {**cfg, **self.kube_settings})
            kube.connect()
            return kube

        def make() -> Service:
            # its own view of the link: once stopped, it neither acts nor
            # hears (what its threads finish late is dropped, as on a broker)
            svc = Service(ServiceLink(self.link), cfg, factory, namespace=self.namespace)
            svc.start()
            return svc

        self.service = self.reactor.call(make)
        self.services_started += 1
        return self.service

    def stop_service(self) -> None:
        """Kill the service: it stops serving at once; nothing it had in
        flight is answered."""
        svc, self.service = self.service, None
        if svc is None:
            return
        self.reactor.call(self.link.unserve)
        svc.stop()

    def restart_service(self, config: dict[str, Any] | None = None) -> Service:
        self.stop_service()
        return self.start_service(config)

    # --- jobs ---------------------------------------------------------------

    def submit(self, dw: Any, nodes: int = 1, *, tolerance: Any = None, runtime: float = 0.0,
               userid: int | None = None, system: dict[str, Any] | None = None) -> int:
        spec = jobspec(dw, nodes, tolerance, system)
        uid = self.owner if userid is None else userid
        return self.reactor.call(lambda: self.jm.submit(spec, uid, runtime))

    def cancel(self, jobid: int) -> None:
        self.reactor.call(lambda: self.jm.cancel(jobid))

    def reload_jobtap(self, jobid: int) -> None:
        """The dws jobtap plugin removed and loaded again (JobManager.reload_jobtap)."""
        self.reactor.call(lambda: self.jm.reload_jobtap(jobid))

    def finish(self, jobid: int, status: int = 0) -> None:
        """A running job's tasks exit now (submit it with a long runtime to
        hold it running while a test looks)."""
        self.reactor.call(lambda: self.jm.finish(jobid, status))

    def raise_exception(self, jobid: int, type_: str, severity: int = 0,
                        note: str = "") -> None:
        self.reactor.call(lambda: self.jm.raise_exception(jobid, type_, severity, note))

    def job(self, jobid: int) -> Job:
        return self.reactor.call(lambda: self.jm.jobs[jobid])

    def status(self) -> dict[str, Any]:
        """What ``dws.status`` answers."""
        return self.ask("dws.status")

    def rabbits(self) -> dict[str, Any]:
        """What ``dws.rabbits`` answers."""
        return self.ask("dws.rabbits")

    def rabbits_now(self) -> dict[str, Any]:
        """The dws.rabbits view read from the engine now, not through a
        request: for ``wait_for`` predicates, which run on the reactor
        thread and must not wait for it."""
        return self._engine_now("dws.rabbits")

    def status_now(self) -> dict[str, Any]:
        """The dws.status view read from the engine now, as rabbits_now."""
        return self._engine_now("dws.status")

    def _engine_now(self, topic: str) -> dict[str, Any]:
        if not self.reactor.on_thread():  # the engine is the reactor's alone
            return self.reactor.call(lambda: self._engine_now(topic))
        svc = self.service
        if svc is None:
            return {}
        actions = svc.engine.event({"type": "request", "topic": topic, "msgid": 0,
                                    "userid": self.owner, "payload": {}})
        payload: dict[str, Any] = actions[0]["payload"]
        return payload

    def ask(self, topic: str, userid: int | None = None,
            payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """The answer to a request (``payload``, default {}) from ``userid``
        (default: the owner), or ``{"error": errstr, "errnum": N}``."""
        box: dict[str, Any] = {}
        done = threading.Event()
        uid = self.owner if userid is None else userid

        def cb(ok: bool, errnum: int, errstr: str, payload: Any) -> None:
            box.update((payload or {}) if ok else {"error": errstr, "errnum": errnum})
            done.set()

        self.link.request(topic, payload or {}, uid, cb)
        if not done.wait(30):
            raise TimeoutError(f"{topic} did not answer")
        return box

    # --- waiting ------------------------------------------------------------

    def _wake(self) -> None:
        """After every reactor callback, on the reactor thread: release the
        waiters whose condition now holds."""
        if not self._waiters:
            return
        still = []
        for predicate, done in self._waiters:
            if predicate():
                done.set()
            else:
                still.append((predicate, done))
        self._waiters = still

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0,
                 what: str = "condition") -> None:
        """Wait until ``predicate()`` holds.  It is evaluated on the reactor
        thread after each callback there (so it sees a consistent state and
        costs no thread switch per event)."""
        done = threading.Event()
        entry = (predicate, done)

        def register() -> None:
            if predicate():
                done.set()
            else:
                self._waiters.append(entry)

        self.reactor.call(register)
        if not done.wait(timeout):
            self.reactor.call(lambda: self._waiters.remove(entry)
                              if entry in self._waiters else None)
            if not done.is_set():
                raise TimeoutError(f"timed out waiting for {what}")

    def wait(self, jobid: int, state: str = "INACTIVE", timeout: float = 30.0) -> Job:
        order = ["NEW", "DEPEND", "SCHED", "RUN", "CLEANUP", "INACTIVE"]
        want = order.index(state)
        self.wait_for(lambda: order.index(self.jm.jobs[jobid].state) >= want, timeout,
                      f"job {jobid} to reach {state}")
        return self.job(jobid)

    def wait_event(self, jobid: int, name: str, timeout: float = 30.0) -> Job:
        self.wait_for(lambda: name in self.jm.jobs[jobid].events(), timeout,
                      f"job {jobid} event {name}")
        return self.job(jobid)

    def left_behind(self, timeout: float = 30.0) -> tuple[list[str], list[str], int]:
        """What the jobs left once every one has ended: the Workflows, the
        ssd vertices down in Fluxion and the holds the service lists,
        waited for (they go a moment after the last job: rabbit health
        sends its set_status in batches) up to ``timeout`` seconds."""
        def now() -> tuple[list[str], list[str], int]:
            wfs = [w["metadata"]["name"] for w in self.workflows()]
            down = self.reactor.call(
                lambda: sorted(p for p, st in self.fluxion.status.items() if st == "down"))
            return wfs, down, len(self.rabbits_now().get("holds") or [])

        gone_by = time.monotonic() + timeout
        wfs, down, holds = now()
        while (wfs or down or holds) and time.monotonic() < gone_by:
            time.sleep(0.2)
            wfs, down, holds = now()
        return wfs, down, holds

    def workflows(self) -> list[dict[str, Any]]:
        """The Workflows in the emulator now (in the service's namespace)."""
        api = self.emulator.custom_objects_api()
        out: list[dict[str, Any]] = api.list_namespaced_custom_object(
            "dataworkflowservices.github.io", "v1alpha7", self.namespace, "workflows")["items"]
        return out
