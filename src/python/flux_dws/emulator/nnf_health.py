"""nnf-sos' Storage controller for the emulator: rabbit health.

Each rabbit's health (its node manager's view: node status, each
compute's PCIe link, fencing, its Kubernetes node and drain taint) is
kept here, first read from the Storage status the system seeded or a
restart found.  ``reconcile`` is nnf-sos' Storage controller
(dwsim.storage.reconcile decides): Disabled shows in any mode, and in
Live mode the status is rebuilt from the rabbit.  ``set_health`` is what
the rabbit's node manager and Kubernetes report, ``set_storage`` what an
administrator does with kubectl, ``storm`` a burst of Storage updates
(``flux-dws fault health|storage|storm``).

A rabbit's free space (its Storage's ``status.capacity``) is its drives'
less what the NnfStorages of anyone (Flux's jobs, persistent storage, an
NnfSystemStorage) hold on it, counted as the Servers controller counts
allocations (nnf_servers.allocated); ``allocations_changed`` recounts it
after an NnfStorage changed and updates the Storages whose figure moved.

The Kubernetes side (is the rabbit's node Ready, is it tainted for a
drain) lives on the rabbit's core ``Node`` object when the cluster has one
(dwsim.k8snode; seeded for every rabbit): ``reconcile`` reads it, as
nnf-sos does, so a drain made by hand (the ``nnf`` CLI's taint, kubectl)
shows in the Storage, and ``set_health`` writes its ``k8s_ready`` and
``drain_taint`` there.  A state saved before Nodes were seeded has none:
those two then live in the rabbit's health alone.

Every read-modify-write of a rabbit's health and of its Storage runs
under one lock (the controllers' worker and the admin endpoints' threads),
so a Storage never ends written from a stale health.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
import threading
import time
from collections.abc import Mapping
from typing import Any

from flux_dws.apiserver.store import ApiError, StoreApi
from flux_dws.dwsim import k8snode
from flux_dws.dwsim import storage as nnf_storage_status
from flux_dws.dwsim.storage import (
    RabbitHealth,
    StormTarget,
    check_drain_taint,
    check_status,
    flipped,
    storm_plan,
)
from flux_dws.emulator.driver import RESOURCE
from flux_dws.emulator.nnf_servers import NNF_STORAGE, allocated
from flux_dws.jsondata import copy_json
from flux_dws.libdws.hostlist import Hostlist, HostlistError


def rabbit_usage(nnf_storages: list[Mapping[str, Any]]) -> dict[str, int]:
    """Per rabbit, the bytes these NnfStorages hold on it (their ready
    allocations, as nnf_servers.allocated counts them)."""
    used: dict[str, int] = {}
    for nst in nnf_storages:
        for per in allocated(dict(nst)).values():
            for rabbit, size in per.items():
                used[rabbit] = used.get(rabbit, 0) + size
    return used


class RabbitHealthController:
    """The rabbits' health and their Storage objects."""

    MAX_STORM = 1_000_000

    def __init__(self, store: StoreApi) -> None:
        self.store = store
        self._lock = threading.RLock()
        self._usage = rabbit_usage(store.view(NNF_STORAGE, None))
        self._health: dict[str, RabbitHealth] = {}
        for o in store.view(RESOURCE["storage"], "default"):
            self._rabbit(o["metadata"]["name"], o.get("status") or {})

    def _rabbit(self, name: str, status: Mapping[str, Any]) -> RabbitHealth:
        """The rabbit's health (its node manager's truth), first read from the
        Storage status the system seeded or a restart found."""
        health = self._health.get(name)
        if health is None:
            health = self._health[name] = RabbitHealth.from_status(dict(status), name)
            health.used = self._usage.get(name, 0)
        return health

    def allocations_changed(self) -> list[str]:
        """Some NnfStorage changed: count what every rabbit holds again and
        reconcile the Storage of each rabbit whose figure moved.  Returns
        those rabbits."""
        with self._lock:
            was, self._usage = self._usage, rabbit_usage(self.store.view(NNF_STORAGE, None))
            moved = sorted(r for r in set(was) | set(self._usage)
                           if was.get(r, 0) != self._usage.get(r, 0))
            for name in moved:
                health = self._health.get(name)
                if health is not None:
                    health.used = self._usage.get(name, 0)
                self.reconcile("default", name)
            return moved

    def reconcile(self, ns: str, name: str) -> bool:
        """nnf-sos' Storage controller (dwsim.storage.reconcile): Disabled shows
        in any mode; in Live mode the status is rebuilt from the rabbit.
        Whether it wrote the Storage."""
        with self._lock:
            try:
                obj = self.store.get(RESOURCE["storage"], ns, name)
            except ApiError:
                return False
            if obj["metadata"].get("deletionTimestamp"):
                return False
            status = obj.get("status") or {}
            health = self._rabbit(name, status)
            node = self._node(name)
            if node is not None:
                health.k8s_ready, health.drain_taint = k8snode.node_state(node)
            new, unfenced = nnf_storage_status.reconcile(
                obj["metadata"].get("labels") or {}, obj.get("spec") or {}, status, name,
                health)
            if unfenced:
                health.fenced = False  # a re-enable clears the NnfNode's fencing
            if new == status:
                return False
            self.store.patch(RESOURCE["storage"], ns, name, "merge", {"status": new}, "status")
            return True

    def _node(self, name: str) -> dict[str, Any] | None:
        """The rabbit's Kubernetes Node, or None when the cluster has none."""
        try:
            return self.store.get(RESOURCE["node"], "", name)
        except ApiError as exc:
            if exc.code != 404:
                raise
            return None

    def _set_node(self, name: str, k8s_ready: bool | None, drain_taint: str | None) -> None:
        """Write a changed Ready condition or drain taint to the rabbit's
        Node (if it has one): what the kubelet or an administrator does."""
        node = self._node(name)
        if node is None:
            return
        new = node
        if k8s_ready is not None and k8snode.node_state(node)[0] != k8s_ready:
            new = k8snode.with_ready(new, k8s_ready)
        if drain_taint is not None and k8snode.node_state(node)[1] != (drain_taint or None):
            new = k8snode.with_drain_taint(new, drain_taint or None)
        if new is node:
            return
        if new.get("spec") != node.get("spec"):
            self.store.patch(RESOURCE["node"], "", name, "merge", {"spec": new["spec"]})
        if new.get("status") != node.get("status"):
            self.store.patch(RESOURCE["node"], "", name, "merge", {"status": new["status"]},
                             "status")

    def _rabbit_storage(self, name: str, rabbit: bool = True) -> dict[str, Any]:
        """The Storage ``default/name`` (404 naming the rabbit if there is
        none; 400 if ``rabbit`` and it is not labelled a rabbit's)."""
        try:
            obj = self.store.get(RESOURCE["storage"], "default", name)
        except ApiError as exc:
            if exc.code != 404:
                raise
            raise ApiError(404, "NotFound", f"no rabbit '{name}' (no Storage default/{name})"
                           ) from None
        labels = obj["metadata"].get("labels") or {}
        if rabbit and labels.get(nnf_storage_status.STORAGE_TYPE_LABEL) != "Rabbit":
            raise ValueError(f"Storage '{name}' is not a rabbit's (no label"
                             f" {nnf_storage_status.STORAGE_TYPE_LABEL}=Rabbit): nnf-sos"
                             f" ignores it")
        return obj

    def set_health(self, name: str, status: str | None = None,
                   links: dict[str, str] | None = None, fenced: bool | None = None,
                   k8s_ready: bool | None = None, drain_taint: str | None = None,
                   reset: bool = False) -> dict[str, Any]:
        """Change a rabbit's health as its node manager and Kubernetes would
        report it, and return its Storage, which shows it unless it is in
        Testing mode (Disabled still shows the rest in Live mode).

        Each argument given sets what it names; what is not given keeps its
        value (None: unchanged; ``drain_taint=""`` removes the taint).
        ``reset`` first makes the rabbit fully healthy (node status and every
        link Ready, not fenced, Kubernetes node Ready, no taint); the other
        arguments then apply.  ValueError for an unknown compute or a bad
        value, before anything changes."""
        with self._lock:
            obj = self._rabbit_storage(name)
            health = self._rabbit(name, obj.get("status") or {})
            if status is not None:
                check_status(status, "node status")
            links = dict(links or {})
            for compute, link in links.items():
                if compute not in health.computes:
                    raise ValueError(f"rabbit '{name}' has no compute '{compute}'")
                check_status(link, f"link {compute}")
            if drain_taint:
                check_drain_taint(drain_taint)
            if reset:
                health.reset()
                self._set_node(name, True, "")
            self._set_node(name, k8s_ready, drain_taint)
            health.computes.update(links)
            if status is not None:
                health.node_status = status
            if fenced is not None:
                health.fenced = fenced
            if k8s_ready is not None:
                health.k8s_ready = k8s_ready
            if drain_taint is not None:
                health.drain_taint = drain_taint or None
            self.reconcile("default", name)
            return self.store.get(RESOURCE["storage"], "default", name)

    def set_storage(self, name: str, state: str | None = None, mode: str | None = None,
                    reason: str | None = None, status: str | None = None,
                    links: dict[str, str] | None = None) -> dict[str, Any]:
        """What an administrator does to a Storage with kubectl, and return it.

        ``state``/``mode`` patch its spec; ``state="Disabled"`` with a
        ``reason`` also sets the annotations ``disable_reason`` and
        ``disable_date`` (now, UTC) as flux's dws.abort does;
        ``state="Enabled"`` removes them.  ``status`` and ``links`` write
        ``status.status`` and ``status.access.computes[].status`` by hand,
        which only sticks in Testing mode: they need the Storage in Testing
        mode, already or by this call.  nnf-sos then reconciles the Storage
        (Disabled shows in any mode; Live rebuilds it).  ValueError for a bad
        value, before anything changes."""
        with self._lock:
            obj = self._rabbit_storage(name, rabbit=False)
            spec = obj.get("spec") or {}
            if state is not None and state not in nnf_storage_status.STATES:
                raise ValueError(f"state: {state!r} is not Enabled or Disabled")
            if mode is not None and mode not in nnf_storage_status.MODES:
                raise ValueError(f"mode: {mode!r} is not Live or Testing")
            if reason is not None and (state != "Disabled" or not reason):
                raise ValueError("a reason goes with state Disabled, and is not empty")
            if status is not None:
                check_status(status, "status")
            links = dict(links or {})
            current = copy_json((obj.get("status") or {}).get("access", {}).get("computes")
                                or [])
            listed = {c.get("name") for c in current if isinstance(c, dict)}
            for compute, link in links.items():
                if compute not in listed:
                    raise ValueError(f"Storage '{name}' lists no compute '{compute}'")
                check_status(link, f"link {compute}")
            final_mode = mode or spec.get("mode") or "Live"
            if (status is not None or links) and final_mode != "Testing":
                raise ValueError(f"Storage '{name}' is in mode {final_mode}: nnf-sos rebuilds"
                                 f" its status from the rabbit, so a status written by hand"
                                 f" needs mode Testing (add --mode Testing)")
            patch: dict[str, Any] = {}
            if state is not None or mode is not None:
                patch["spec"] = {k: v for k, v in (("state", state), ("mode", mode))
                                 if v is not None}
            if state == "Disabled" and reason:
                date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                patch["metadata"] = {"annotations": {"disable_reason": reason,
                                                     "disable_date": date}}
            elif state == "Enabled":
                notes = dict(obj["metadata"].get("annotations") or {})
                for k in ("disable_reason", "disable_date"):
                    notes.pop(k, None)
                # an empty map is no map (the API server omits it)
                patch["metadata"] = {"annotations": {"disable_reason": None,
                                                     "disable_date": None} if notes else None}
            if patch:
                self.store.patch(RESOURCE["storage"], "default", name, "merge", patch)
            if status is not None or links:
                for c in current:
                    if isinstance(c, dict) and c.get("name") in links:
                        c["status"] = links[c["name"]]
                new: dict[str, Any] = {}
                if status is not None:
                    new["status"] = status
                if links:
                    new["access"] = {"computes": current}
                self.store.patch(RESOURCE["storage"], "default", name, "merge",
                                 {"status": new}, "status")
            self.reconcile("default", name)
            return self.store.get(RESOURCE["storage"], "default", name)

    def storm(self, rabbits: str = "all", events: int = 0,
              seed: int | None = None) -> dict[str, Any]:
        """A burst of ``events`` Storage updates, as fast as the store takes
        them: each flips a random rabbit's node status or one of its computes'
        links between its value and Ready/Offline (dwsim.storage.storm_plan),
        and the last leaves every rabbit as it was.  ``rabbits``: a hostlist
        or ``all`` (every Live rabbit; those in Testing mode, whose status
        nnf-sos leaves alone, are skipped -- and refused when named).
        Returns what it did: the updates made, the wall time, the seed."""
        if isinstance(events, bool) or not isinstance(events, int):
            raise ValueError(f"events: {events!r} is not an integer")
        if events < 2:
            raise ValueError(f"a storm needs at least 2 events (a change and its undoing),"
                             f" not {events}")
        if events > self.MAX_STORM:
            raise ValueError(f"events: at most {self.MAX_STORM} per storm, not {events}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed: {seed!r} is not an integer")
        if seed is None:
            seed = random.SystemRandom().randrange(1 << 32)
        with self._lock:
            names, skipped = self._storm_rabbits(rabbits)
            targets: list[StormTarget] = []
            before: dict[str, RabbitHealth] = {}
            for n in names:
                health = self._rabbit(n, self.store.get(RESOURCE["storage"], "default", n)
                                      .get("status") or {})
                before[n] = copy.deepcopy(health)
                targets.append((n, None))
                targets.extend((n, c) for c in health.computes)
            plan = storm_plan(targets, events, random.Random(seed))
            updates, touched = 0, set()
            start = time.monotonic()
            for step in plan:
                rabbit = step[0][0]
                health, was = self._health[rabbit], before[rabbit]
                for _, compute in step:
                    if compute is None:
                        health.node_status = flipped(was.node_status) \
                            if health.node_status == was.node_status else was.node_status
                    else:
                        orig = was.computes[compute]
                        health.computes[compute] = flipped(orig) \
                            if health.computes[compute] == orig else orig
                touched.add(rabbit)
                updates += self.reconcile("default", rabbit)
            seconds = time.monotonic() - start
        return {"events": events, "updates": updates, "seconds": round(seconds, 6),
                "seed": seed, "rabbits": sorted(touched), "skipped": skipped}

    def _storm_rabbits(self, rabbits: str) -> tuple[list[str], dict[str, str]]:
        """The rabbits a storm may flip, and those ``all`` skips (and why)."""
        if not isinstance(rabbits, str) or not rabbits:
            raise ValueError(f"rabbits: {rabbits!r} is neither 'all' nor a hostlist")
        if rabbits == "all":
            candidates = sorted(o["metadata"]["name"] for o in
                                self.store.view(RESOURCE["storage"], "default"))
        else:
            try:
                candidates = list(dict.fromkeys(Hostlist(rabbits)))
            except HostlistError as exc:
                raise ValueError(f"rabbits: {exc}") from None
        names, skipped = [], {}
        for n in candidates:
            try:
                obj = self._rabbit_storage(n)
            except ValueError as exc:
                if rabbits != "all":
                    raise
                skipped[n] = str(exc)
                continue
            why = ""
            if (obj.get("spec") or {}).get("mode", "Live") != "Live":
                why = (f"Storage '{n}' is in mode Testing: nnf-sos leaves its status alone"
                       f" (use fault storage --status)")
            elif obj["metadata"].get("deletionTimestamp"):
                why = f"Storage '{n}' is being deleted"
            if why and rabbits != "all":
                raise ValueError(why)
            if why:
                skipped[n] = why
            else:
                names.append(n)
        if not names:
            raise ValueError("no rabbit to storm" + (f": {'; '.join(skipped.values())}"
                                                     if skipped else ""))
        return names, skipped
