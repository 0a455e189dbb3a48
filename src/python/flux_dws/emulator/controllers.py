"""DWS and nnf-sos controllers for the emulator: Workflows move for real.

The decisions are dwsim's pure functions; the nnf-sos drivers live in one
module per family of #DW commands (emulator/driver.py says what a driver
is): nnf_storage (jobdw, create_persistent, persistentdw,
destroy_persistent, with the compute nodes' clientmountd),
nnf_datamovement (copy_in, copy_out, with the nnf-dm workers) and
nnf_container (container); rabbit health (nnf-sos' Storage controller) is
nnf_health.  This module is the core: it reads the store,
runs DWS' admission and controller step, walks each state's nnf drivers in
directive order, and writes back.  Worker threads (``workers``, one by
default) reconcile Workflows from a queue fed by store events (a Workflow,
or an object labelled with a Workflow's name and namespace) and by timers
(latency, waits, retries); each key (a Workflow, a Storage, ...) is
reconciled by one worker at a time (emulator.workqueue).  ``fanout``
threads make the independent writes of one reconcile (the ClientMount of
each compute node) at once.  Both matter over HTTPS (emulator.attached);
in-process, one thread of each is as fast.

- Admission: DWS' mutating and validating webhooks on Workflow create and
  update (403 with DWS' texts).
- DWS controller: finalizer, state copy, Computes, driver aggregation,
  forceReady, timestamps (dwsim.workflow.reconcile).
- nnf: Proposal checks the whole workflow (dwsim.proposal) before any
  driver; a driver error stops the state's drivers at that directive, as
  nnf-sos does; Minor and Major errors are retried after a back-off
  (a TransientCondition clears when its cause does).
- Latency: ``latency[state] = seconds`` before a state's drivers run.
- Faults (``faults.add``): per workflow, state and directive, a driver
  error of any severity (Minor -> DriverWait, Major -> TransientCondition,
  Fatal -> Error), a stall, or a delay (both hold the driver's finish: a
  storage directive's Setup has made its NnfStorage); per rabbit, Setup
  allocations late; per compute, ClientMount failures or stalls; per
  workflow and directive, data-movement failures or stalls.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL, DWS, NNF
from flux_dws.apiserver.store import ApiError, Event, StoreApi
from flux_dws.dwsim import proposal as nnf_proposal
from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim import walk as nnf_walk
from flux_dws.dwsim import workflow as dws
from flux_dws.dwsim.fielderr import AdmissionError
from flux_dws.emulator import latency as latency_model
from flux_dws.emulator import nnf_servers, profile_webhooks
from flux_dws.emulator.driver import (
    RESOURCE,
    Directive,
    Driver,
    Wait,
    create_quiet,
    delete_quiet,
    exists,
)
from flux_dws.emulator.faults import Faults
from flux_dws.emulator.nnf_cluster import ContainerCluster
from flux_dws.emulator.nnf_container import ContainerDriver
from flux_dws.emulator.nnf_datamovement import DataMovementDriver, DataMovementWorker
from flux_dws.emulator.nnf_health import RabbitHealthController
from flux_dws.emulator.nnf_ports import PortManager
from flux_dws.emulator.nnf_storage import ClientMountDaemon, StorageDriver
from flux_dws.emulator.nnf_systemstorage import SystemStorageController, owner_of
from flux_dws.emulator.timers import TimerThread
from flux_dws.emulator.workqueue import FanOut, Workers
from flux_dws.jsondata import copy_json
from flux_dws.libdws.directives import DirectiveError, Ruleset, parse_directive
from flux_dws.libdws.wfstates import PROPOSAL, SETUP

log = logging.getLogger("flux_dws.emulator")
NNF_FINALIZER = "nnf.cray.hpe.com/nnf_workflow"
#: seconds before a reconcile that failed for the API server's trouble (a
#: 5xx, a 429, a connection cut by its restart) is tried again
RETRY_AFTER = 1.0
T = TypeVar("T")
R = TypeVar("R")


class Controllers:
    def __init__(self, store: StoreApi, latency: dict[str, float] | None = None,
                 workers: int = 1, fanout: int = 1) -> None:
        self.store = store
        self.latency = latency_model.check(dict(latency or {}))
        self.faults = Faults()
        self._workers: Workers[tuple[str, str]] = Workers(self._reconcile_key, workers)
        self._fanout = FanOut(fanout)
        self._timers = TimerThread()
        self._stopping = threading.Event()
        self._ruleset: tuple[tuple[tuple[str, str], ...], Ruleset] | None = None
        self.retry_seconds = 1.0   # back-off before a Minor/Major error is retried
        self.clientmountd = ClientMountDaemon(self, delay=self.latency.get("ClientMount", 0.0))
        self.dmworker = DataMovementWorker(self, self.latency.get("DataMovement", 0.0))
        self.cluster = ContainerCluster(self, self.latency.get("Container", 0.0))
        self.ports = PortManager(self)
        self.systemstorage = SystemStorageController(
            store, self.after, lambda ns, name: self.enqueue("systemstorage:" + ns, name),
            alloc_delay=self.latency.get(SETUP, 0.0), retry=self.retry_seconds)
        self.child_timeout = 300.0  # NNF_CHILD_RESOURCE_TIMEOUT_SECONDS
        # per rabbit: what nnf-sos reads (NnfNode, k8s Node), from the seeded status
        self._unreachable: tuple[tuple[int, int], frozenset[str]] | None = None
        self.health = RabbitHealthController(store)
        self._driver_list: list[Driver] = [StorageDriver(self), DataMovementDriver(self),
                                           ContainerDriver(self)]
        self.drivers = {c: d for d in self._driver_list for c in d.commands}
        store.admission[(DWS, "workflows")] = self._admit
        profile_webhooks.install(store)
        store.subscribe(self._on_event)

    # --- plumbing ------------------------------------------------------------

    def start(self) -> Controllers:
        self._workers.start()
        self.after(0, self._resume)
        for key in self._workflow_keys():
            self.enqueue(*key)
        return self

    def _workflow_keys(self) -> list[tuple[str, str]]:
        return [(wf["metadata"]["namespace"], wf["metadata"]["name"])
                for wf in self.store.view(RESOURCE["workflow"], None)]

    def clear_faults(self, state: str | None = None, severity: str | None = None) -> None:
        """Drop every injected fault (or those of one Workflow ``state``, of
        one ``severity``) and look at every Workflow and ClientMount again:
        what a stall held (it
        is never retried by itself) goes on now, as it would once a site
        fixed the cause.  (``flux-dws fault clear`` only drops them: what a
        stall held moves on at its object's next change.)"""
        self.faults.clear(state, severity)
        for key in self._workflow_keys():
            self.enqueue(*key)
        self.after(0, self._kick_clientmounts)

    def _kick_clientmounts(self) -> None:
        for cm in self.store.list_objects(RESOURCE["clientmount"], None):
            st, desired = cm.get("status") or {}, cm["spec"].get("desiredState")
            if not st.get("allReady") or any(m.get("state") != desired
                                             for m in st.get("mounts") or []):
                self.clientmountd.kick(cm["metadata"]["namespace"], cm["metadata"]["name"])

    def _resume(self) -> None:
        """After a restart from saved state: what the node daemons, nnf-dm and
        the container cluster were doing goes on (their timers died)."""
        self.ports.reconcile()
        self.systemstorage.enqueue_all()
        self._kick_clientmounts()
        for dm in self.store.list_objects(RESOURCE["dm"], None):
            if (dm.get("status") or {}).get("state") != "Finished":
                self.dmworker.resume(dm)
        self.cluster.resume()

    def stop(self) -> None:
        """Stop the timers and the workers (what is queued is dropped; the
        reconciles under way get 5 s to end)."""
        self._stopping.set()
        self._timers.stop()
        self._fanout.stop()
        self._workers.stop(5.0)

    def enqueue(self, ns: str, name: str) -> None:
        self._workers.add((ns, name))

    def fan_out(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """[fn(item) for item in items] on the fan-out threads (all of them
        run; the first exception, in the items' order, is raised)."""
        return self._fanout.map(fn, items)

    def _later(self, seconds: float, ns: str, name: str) -> None:
        self._timers.call_later(seconds, lambda: self.enqueue(ns, name))

    def _on_event(self, ev: Event) -> None:
        group, plural, ns, name = ev.key
        if (group, plural) == (DWS, "workflows"):
            self.enqueue(ns, name)
        elif (group, plural) == (DWS, "storages") and ev.type != "DELETED":
            self.enqueue("storage:" + ns, name)
            self.systemstorage.enqueue_all()  # excludeDisabledRabbits may change
        elif (group, plural) == ("", "nodes"):
            # nnf-sos' Storage controller watches the rabbits' Nodes
            self.enqueue("storage:default", name)
        elif (group, plural) == (NNF, "nnfsystemstorages") and ev.type != "DELETED":
            self.enqueue("systemstorage:" + ns, name)
        elif (group, plural) in ((DWS, "servers"), (NNF, "nnfstorages")):
            # nnf-sos' Servers controller watches both (same name); a deleted
            # NnfStorage sets its Servers' allocations back to 0
            if plural == "nnfstorages" or ev.type != "DELETED":
                self.enqueue("servers:" + ns, name)
            if plural == "nnfstorages":  # the rabbits' free space may move
                self.enqueue("capacity:", "")
            self._enqueue_owner(ev)
        elif (group, plural) in ((NNF, "nnfportmanagers"), (DWS, "systemconfigurations")):
            if ev.type != "DELETED":
                self.enqueue("portmanager:", "")
        else:
            if (group, plural) == ("nnf.cray.hpe.com", "nnfdatamovements") \
                    and ev.type == "MODIFIED" and (ev.obj.get("spec") or {}).get("cancel") \
                    and (ev.obj.get("status") or {}).get("state") != "Finished":
                self.after(0, lambda: self.dmworker.finish(ns, name, None))
            self._enqueue_owner(ev)

    def _enqueue_owner(self, ev: Event) -> None:
        """A child the nnf drivers wait on (ClientMount, data movement, ...):
        its workflow looks again."""
        labels = (ev.obj.get("metadata") or {}).get("labels") or {}
        owner = owner_of(labels)
        if owner is not None:  # a child of an NnfSystemStorage
            self.enqueue("systemstorage:" + owner[0], owner[1])
        wf_name = labels.get(dws.WORKFLOW_LABELS[0])
        wf_ns = labels.get(dws.WORKFLOW_LABELS[1])
        if wf_name and wf_ns:
            self.enqueue(wf_ns, wf_name)

    def _reconcile_key(self, key: tuple[str, str]) -> None:
        """One reconcile of a queued key, on a worker; what failed for the
        API server's trouble is requeued here (the one place for retries)."""
        if self._stopping.is_set():
            return
        try:
            if key[0].startswith("storage:"):
                self.health.reconcile(key[0][len("storage:"):], key[1])
            elif key[0].startswith("systemstorage:"):
                self.systemstorage.reconcile(key[0][len("systemstorage:"):], key[1])
            elif key[0].startswith("servers:"):
                nnf_servers.reconcile(self.store, key[0][len("servers:"):], key[1])
            elif key[0] == "portmanager:":
                self.ports.reconcile()
            elif key[0] == "capacity:":
                self.health.allocations_changed()
            else:
                self.reconcile(*key)
        except ApiError as exc:
            if exc.code in (404, 409):
                # the object changed or went while we looked: look again
                log.debug("reconcile %s/%s: %s", *key, exc)
                if exc.code == 409:
                    self.enqueue(*key)
                return
            log.exception("reconcile %s/%s", *key)
            if exc.code == 429 or exc.code >= 500:  # the server's trouble: again
                self._later(RETRY_AFTER, *key)
        except Exception:
            # a transport error (an API server restarting mid-request):
            # tried again, as controller-runtime requeues a failed key,
            # not left until the object changes again
            log.exception("reconcile %s/%s", *key)
            self._later(RETRY_AFTER, *key)

    # --- admission -------------------------------------------------------------

    def _rules(self) -> Ruleset | None:
        """The DWDirectiveRules of dws-system, compiled once per version."""
        objs = self.store.list_objects(RESOURCE["rules"], "dws-system")
        if not objs:
            return None
        version = tuple((o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in objs)
        if self._ruleset is None or self._ruleset[0] != version:
            self._ruleset = (version, Ruleset(objs))
        return self._ruleset[1]

    def _admit(self, op: str, old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
        try:
            if op == "CREATE":
                return dws.admit_create(new, self._rules())
            assert old is not None
            dws.admit_update(old, new)
            return new
        except AdmissionError as exc:
            raise ApiError(403, "Forbidden", str(exc)) from None
        except DirectiveError as exc:  # the rules themselves are broken
            raise ApiError(500, "InternalError", f"DWDirectiveRule: {exc}") from None

    # --- reconcile -------------------------------------------------------------

    def reconcile(self, ns: str, name: str) -> None:
        st = self.store
        try:
            wf = st.get(RESOURCE["workflow"], ns, name)
        except ApiError:
            return
        now = dt.datetime.now(dt.timezone.utc)
        md = wf["metadata"]
        if md.get("deletionTimestamp"):
            if NNF_FINALIZER in (md.get("finalizers") or []):
                self._delete(wf)  # the change requeues this workflow
                return
        elif NNF_FINALIZER not in (md.get("finalizers") or []):
            st.patch(RESOURCE["workflow"], ns, name, "merge", {"metadata": {
                "finalizers": [*(md.get("finalizers") or []), NNF_FINALIZER],
                "resourceVersion": md["resourceVersion"]}})
            return
        computes = exists(self.store, RESOURCE["computes"], ns, name)
        step = dws.reconcile(wf, now, computes_exist=computes)
        if step.ensure_computes:
            create_quiet(self.store, RESOURCE["computes"], ns, dws.computes_for(wf))
        if step.delete_computes:
            delete_quiet(self.store, RESOURCE["computes"], ns, name)
            self.enqueue(ns, name)
        if step.remove_finalizer:
            fins = [f for f in md.get("finalizers") or [] if f != dws.FINALIZER]
            st.patch(RESOURCE["workflow"], ns, name, "merge", {"metadata": {
                "finalizers": fins or None, "resourceVersion": md["resourceVersion"]}})
            return
        if step.workflow is not None:
            st.replace(RESOURCE["workflow"], ns, name, step.workflow)
            return
        if not md.get("deletionTimestamp"):
            self._drive(wf, now)

    def vanish(self, ns: str, name: str) -> None:
        """Delete a workflow behind the WLM's back (finalizers ignored)."""
        wf = self.store.get(RESOURCE["workflow"], ns, name)
        for driver in self._driver_list:
            driver.delete(wf)
        self.store.patch(RESOURCE["workflow"], ns, name, "merge",
                         {"metadata": {"finalizers": None}})
        try:
            self.store.delete(RESOURCE["workflow"], ns, name)
        except ApiError as exc:
            if exc.code != 404:
                raise
        delete_quiet(self.store, RESOURCE["computes"], ns, name)

    # --- the nnf driver -----------------------------------------------------

    def _drive(self, wf: dict[str, Any], now: dt.datetime) -> None:
        spec, status = wf["spec"], wf.get("status") or {}
        state = status.get("state")
        if state != spec.get("desiredState") or status.get("ready"):
            return
        drivers = status.get("drivers") or []
        mine = [i for i, d in enumerate(drivers)
                if d["watchState"] == state and d["driverID"] == "nnf" and not d["completed"]]
        if not mine:
            return
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        waited = self._waited(status, now)
        delay = latency_model.state_delay(self.latency, state, self._fs_types(wf, drivers, mine))
        if delay and waited < delay:
            # the latency holds the drivers' finish, not their start: nnf-sos
            # makes a Setup's NnfStorage at once and its allocations get
            # ready later, so a WLM that forces Setup ready early (forceReady
            # at a tiny setup_timeout) finds the storage made, as on Rabbit
            self._start_early(wf, state, [drivers[i]["dwdIndex"] for i in mine])
            self._later(delay - waited, ns, name)
            return
        new = copy_json(wf)
        ndrivers = new["status"]["drivers"]
        walk = nnf_walk.Walk(state, _micro(now), self.retry_seconds)
        for i in mine:
            outcome = self._outcome(new, state, ndrivers[i]["dwdIndex"], waited)
            ndrivers[i], go_on = walk.feed(ndrivers[i], outcome)
            if not go_on:
                break
        for seconds in walk.requeue:
            self._later(seconds, ns, name)
        if new != wf:  # an unchanged write would only wake us again
            self.store.replace(RESOURCE["workflow"], ns, name, new)

    def _start_early(self, wf: dict[str, Any], state: str, indexes: list[int]) -> None:
        """The starts of the pending drivers, in directive order, while the
        state's latency holds their finish; a start that fails stops there
        (the driver's full run, after the latency, reports it)."""
        for index in indexes:
            if self.faults.driver_error_set(wf["metadata"]["name"], state, index):
                return  # an injected error fails this driver before its start
            try:
                self._run_driver(wf, state, index, start_only=True)
            except (rerr.ResourceError, DirectiveError, Wait):
                return

    def _outcome(self, wf: dict[str, Any], state: str, index: int,
                 waited: float) -> nnf_walk.Outcome:
        """Run directive ``index``'s driver for ``state`` (unless an injected
        fault says otherwise) and say what happened, for the walk."""
        md = wf["metadata"]
        fault = self.faults.take(md["name"], state, index, waited)
        held: nnf_walk.Outcome | None = None
        if fault is not None:
            held = nnf_walk.fault_outcome(fault.severity, fault.seconds, waited, fault.message,
                                          fault.type)
            if held is not None and held.kind not in ("stall", "delay"):
                return held
        try:
            # a stall or a delay holds the driver's finish, not its start
            # (a storage directive's Setup has made its NnfStorage)
            self._run_driver(wf, state, index, start_only=held is not None)
        except Wait as w:  # nnf-sos shows why it waits: "DW Directive 0: pending mount"
            return nnf_walk.Outcome("wait", reason=w.reason, after=w.after)
        except rerr.ResourceError as err:
            return nnf_walk.Outcome("error", error=err)
        except (ApiError, OSError):
            # a conflict, a vanished object, or the API server out of reach
            # mid-request (a transport error: controller-runtime requeues
            # the key): the worker looks again
            raise
        except Exception as exc:
            # nnf-sos turns a plain error into an Internal ResourceError; so do
            # we, so the workflow shows it instead of staying Running silently
            log.exception("nnf driver %s/%s %s directive %d", md["namespace"], md["name"],
                          state, index)
            return nnf_walk.Outcome("bug", error=rerr.internal(
                "", f"{type(exc).__name__}: {exc}", severity="Major"))
        return held or nnf_walk.DONE

    def _fs_types(self, wf: dict[str, Any], drivers: list[dict[str, Any]],
                  mine: list[int]) -> set[str]:
        """File-system types of the directives whose drivers are about to run."""
        if not any("/" in k for k in self.latency):
            return set()
        texts = wf["spec"].get("dwDirectives") or []
        out = set()
        for i in mine:
            try:
                command, args = _parse(texts[drivers[i]["dwdIndex"]])
            except (DirectiveError, IndexError):
                continue
            fs = dict(args).get("type", "")
            if command == "persistentdw":
                entry = self.store.objects.get((RESOURCE["psi"].group, RESOURCE["psi"].plural,
                                                wf["metadata"]["namespace"],
                                                dict(args).get("name", "")))
                psi = entry.obj if entry is not None else {}
                fs = str((psi.get("spec") or {}).get("fsType", ""))
            if fs:
                out.add(fs)
        return out

    def waited(self, wf: dict[str, Any]) -> float:
        """Seconds since the workflow's current state was asked for."""
        return self._waited(wf.get("status") or {}, dt.datetime.now(dt.timezone.utc))

    @staticmethod
    def _waited(status: dict[str, Any], now: dt.datetime) -> float:
        """Seconds since the current state was asked for."""
        from flux_dws.dwsim.gotime import parse_microtime

        started = status.get("desiredStateChange")
        if not started:
            return 0.0
        try:
            return (now - parse_microtime(started)).total_seconds()
        except (TypeError, ValueError):
            return 0.0  # a client wrote garbage there: count from now

    def directives(self, wf: dict[str, Any]) -> list[Directive]:
        out = []
        for index, text in enumerate(wf["spec"].get("dwDirectives") or []):
            try:
                command, args = _parse(text)
            except DirectiveError:
                continue  # admission refused it already
            out.append(Directive(index, command, dict(args), text))
        return out

    def _run_driver(self, wf: dict[str, Any], state: str, index: int,
                    start_only: bool = False) -> None:
        """Directive ``index``'s driver for ``state``; ``start_only``: only
        the start of a driver that has one (``<state>_start``)."""
        directive = wf["spec"]["dwDirectives"][index]
        command, args = _parse(directive)
        d = Directive(index, command, dict(args), directive)
        if state == PROPOSAL and not start_only:
            nnf_proposal.validate_workflow(wf, self._cluster(wf["metadata"]["namespace"]))
        driver = self.drivers.get(command)
        method = f"{state.lower()}_start" if start_only else state.lower()
        handler = getattr(driver, method, None) if driver is not None else None
        if handler is not None:
            handler(wf, d)

    # --- what drivers share ------------------------------------------------------

    def _cluster(self, ns: str) -> nnf_proposal.Cluster:
        st = self.store
        return nnf_proposal.Cluster(
            psis={o["metadata"]["name"]: o for o in st.list_objects(RESOURCE["psi"], ns)},
            lustre_roots=[o.get("spec", {}).get("mountRoot", "")
                          for o in st.list_objects(RESOURCE["lustre"], None)],
            container_profiles={o["metadata"]["name"]: o
                                for o in st.list_objects(RESOURCE["cprofile"], "nnf-system")},
        )

    def storage_profile(self, name: str | None) -> dict[str, Any]:
        """The data of the named NnfStorageProfile, or of the default one."""
        profiles = self.store.list_objects(RESOURCE["profile"], "nnf-system")
        if name:
            for p in profiles:
                if p["metadata"]["name"] == name:
                    data: dict[str, Any] = p.get("data") or {}
                    return data
            raise rerr.user(f"Unable to find NnfStorageProfile: {name}")
        defaults = [p for p in profiles if (p.get("data") or {}).get("default")]
        if not defaults:
            raise rerr.internal("Unable to find a default NnfStorageProfile to use")
        if len(defaults) > 1:
            names = " ".join(sorted(p["metadata"]["name"] for p in defaults))
            raise rerr.internal(f"More than one default NnfStorageProfile found; unable to"
                                f" pick one: [{names}]")
        chosen: dict[str, Any] = defaults[0].get("data") or {}
        return chosen

    def computes(self, wf: dict[str, Any]) -> list[str]:
        """The compute names of the Workflow's Computes object, in order."""
        try:
            c = self.store.get(RESOURCE["computes"], wf["metadata"]["namespace"],
                               wf["metadata"]["name"])
        except ApiError:
            return []
        return [d["name"] for d in c.get("data") or [] if isinstance(d, dict) and "name" in d]

    def unreachable_computes(self) -> frozenset[str]:
        """Computes whose link is Offline or Fenced in a Storage, or Disabled in
        SystemStatus: nnf-sos skips their ClientMounts when unmounting.
        Asked at every unmount; worked out again only when a Storage or a
        SystemStatus changed (696 Storages of 16 links each on El Capitan)."""
        versions = (self.store.kind_version(RESOURCE["storage"]),
                    self.store.kind_version(RESOURCE["sysstatus"]))
        cached = self._unreachable
        if cached is not None and cached[0] == versions:
            return cached[1]
        out = set()
        for s in self.store.view(RESOURCE["storage"], "default"):
            for c in (s.get("status") or {}).get("access", {}).get("computes") or []:
                if c.get("status") in ("Offline", "Fenced"):
                    out.add(c.get("name"))
        for ss in self.store.view(RESOURCE["sysstatus"], None):
            for n, st in ((ss.get("data") or {}).get("nodes") or {}).items():
                if st == "Disabled":
                    out.add(n)
        answer = frozenset(out)
        self._unreachable = (versions, answer)
        return answer

    def after(self, seconds: float, fn: Callable[[], Any]) -> None:
        """Run fn on the timer thread (errors are logged)."""
        def run() -> None:
            if self._stopping.is_set():
                return
            try:
                fn()
            except ApiError as exc:
                if exc.code not in (404, 409):
                    log.exception("timer")
                if exc.code == 429 or exc.code >= 500:  # the server's trouble: again
                    self._timers.call_later(RETRY_AFTER, run)
            except OSError:
                # the API server out of reach mid-request: again, as a
                # failed reconcile is
                log.exception("timer")
                self._timers.call_later(RETRY_AFTER, run)
            except Exception:
                log.exception("timer")
        self._timers.call_later(seconds, run)

    def _delete(self, wf: dict[str, Any]) -> None:
        """nnf's part of a Workflow deletion: each driver's objects, then its finalizer."""
        md = wf["metadata"]
        if NNF_FINALIZER not in (md.get("finalizers") or []):
            return
        for driver in self._driver_list:
            driver.delete(wf)
        fins = [f for f in md["finalizers"] if f != NNF_FINALIZER]
        self.store.patch(RESOURCE["workflow"], md["namespace"], md["name"], "merge", {"metadata": {
            "finalizers": fins or None, "resourceVersion": md["resourceVersion"]}})


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A directive's command and arguments (bare keys get ""), parsed once."""
    command, args = parse_directive(text)
    return command, tuple((k, v or "") for k, v in args)


def _micro(t: dt.datetime) -> str:
    from flux_dws.dwsim.gotime import microtime
    return microtime(t)


def seed_system(store: StoreApi, system: str) -> int:
    """Load the objects a fresh cluster for ``system`` holds; returns how many."""
    from flux_dws.dwsim.systems import load_system, seed_objects

    by_kind = {(r.group, r.kind): r for r in BY_GROUP_PLURAL.values()}
    objs = seed_objects(load_system(system))
    for obj in objs:
        store.load(by_kind[(obj["apiVersion"].rpartition("/")[0], obj["kind"])], obj)
    return len(objs)
