"""nnf-sos: a rabbit's Storage status from its health inputs (§6).

``storage_status`` computes ``status`` for a Storage labelled
``dataworkflowservices.github.io/storage=Rabbit`` in mode Live:
spec.state Disabled wins; then fencing (Degraded + rebootRequired), a
NotReady Kubernetes node (Offline), a drain taint (Drained), else the node
manager's own status.  Compute entries carry each PCIe link's status.
``reconcile`` is nnf-sos' Storage controller step: from a Storage and its
rabbit's ``RabbitHealth`` (the NnfNode and Kubernetes Node nnf-sos reads),
the status it writes back, in Live and in Testing mode.
``storm_plan`` decides a burst of health flips that ends where it began.
``fenced_computes`` and ``fence_error`` are nnf-sos' NnfAccess check that
fails a Workflow whose computes are fenced (nnf-sos #573).

Capacity, as nnf-sos reports it: ``status.devices`` lists the rabbit's NVMe
drives (slot, model, serial number, firmware, capacity, wear level, status;
a drive that is not Ready shows its slot and status only, capacity 0), and
``status.capacity`` is the rabbit's *free* bytes (DWS #284): the Ready
drives' capacity less what allocations hold on it.  The total is the sum of
``status.devices[].capacity``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from flux_dws.dwsim import resource_error as rerr
from flux_dws.jsondata import copy_json

STORAGE_TYPE_LABEL = "dataworkflowservices.github.io/storage"
DISABLED_MESSAGE = "Storage node manually disabled"
# DWS' ResourceStatus enum (a Storage's status.status and its servers' and
# computes' status)
RESOURCE_STATUSES = ("Starting", "Ready", "Disabled", "NotPresent", "Offline", "Failed",
                     "Degraded", "Drained", "Fenced", "Unknown")
STATES = ("Enabled", "Disabled")   # Storage spec.state
MODES = ("Live", "Testing")        # Storage spec.mode
# nnf-sos reports a rabbit Drained for a taint whose key starts so (§6)
DRAIN_TAINT_PREFIX = "cray.nnf.node.drain"
#: NVMe drives per emulated rabbit unless its system says otherwise
DRIVES_PER_RABBIT = 16
DRIVE_MODEL = "flux-dws emulated NVMe SSD"
DRIVE_FIRMWARE = "EMU00001"


def nvme_devices(rabbit: str, total: int, drives: int = DRIVES_PER_RABBIT) -> list[dict[str, Any]]:
    """A rabbit's ``status.devices``: ``drives`` Ready NVMe drives of equal
    size whose capacities add up to ``total`` bytes exactly (the last one
    takes the remainder).  ValueError if drives < 1 or total < 0."""
    if drives < 1:
        raise ValueError(f"a rabbit needs at least one drive, not {drives}")
    if total < 0:
        raise ValueError(f"capacity {total} is negative")
    size = total // drives
    return [{"slot": str(i), "model": DRIVE_MODEL, "serialNumber": f"{rabbit}-nvme{i:02d}",
             "firmwareVersion": DRIVE_FIRMWARE,
             "capacity": size + (total - size * drives if i == drives - 1 else 0),
             "wearLevel": 0, "status": "Ready"} for i in range(drives)]


def devices_total(devices: Sequence[dict[str, Any]]) -> int:
    """The bytes a Storage's ``status.devices`` hold: the sum of their
    capacities (nnf-sos reports 0 for a drive that is not Ready)."""
    return sum(d["capacity"] for d in devices
               if isinstance(d.get("capacity"), int) and not isinstance(d["capacity"], bool)
               and d["capacity"] > 0)


def reported_devices(devices: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The devices as nnf-sos writes them into a Storage: a drive that is not
    Ready keeps its slot and status, its model, serial number, firmware and
    wear level are empty and its capacity 0."""
    out = []
    for d in devices:
        d = copy_json(d)
        if d.get("status", "Ready") != "Ready":
            d.update(model="", serialNumber="", firmwareVersion="", capacity=0)
            d.pop("wearLevel", None)
        out.append(d)
    return out


def check_status(value: object, what: str) -> str:
    """``value`` if it is a ResourceStatus, else ValueError naming ``what``."""
    if not isinstance(value, str) or value not in RESOURCE_STATUSES:
        raise ValueError(f"{what}: {value!r} is not a status (one of"
                         f" {', '.join(RESOURCE_STATUSES)})")
    return value


def check_drain_taint(value: object) -> str:
    """A drain taint key (``cray.nnf.node.drain...``), else ValueError."""
    if not isinstance(value, str) or not value.startswith(DRAIN_TAINT_PREFIX) \
            or len(value) > 253 or any(c.isspace() or c == "=" for c in value):
        raise ValueError(f"drain taint: {value!r} is not a drain taint key (nnf-sos only"
                         f" counts keys starting with {DRAIN_TAINT_PREFIX})")
    return value


def storage_status(spec: dict[str, Any], name: str, capacity: int, computes: dict[str, str],
                   node_status: str = "Ready", k8s_ready: bool = True,
                   fenced: bool = False, drain_taint: str | None = None,
                   devices: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """A Storage status; ``capacity`` is the free bytes, ``devices`` the
    drives (reported as nnf-sos does, see reported_devices)."""
    status: dict[str, Any] = {
        "type": "NVMe",
        "capacity": capacity,
        "access": {"protocol": "PCIe",
                   "servers": [{"name": name, "status": node_status}],
                   "computes": [{"name": c, "status": s} for c, s in computes.items()]},
        "devices": reported_devices(devices),
        "rebootRequired": False,
        "message": "",
    }
    if spec.get("state") == "Disabled":
        status.update(status="Disabled", message=DISABLED_MESSAGE)
    elif fenced:
        status.update(status="Degraded", rebootRequired=True,
                      message="Storage node requires reboot to recover from STONITH event")
    elif not k8s_ready:
        status.update(status="Offline", message="Kubernetes node is offline")
    elif drain_taint:
        status.update(status="Drained", message=f"Kubernetes node is tainted with {drain_taint}")
    else:
        status["status"] = node_status
    return status



@dataclass
class RabbitHealth:
    """What a rabbit's node manager (its NnfNode ``nnf-nlc``) and its
    Kubernetes Node say: the truth nnf-sos rebuilds a Live Storage from.

    ``capacity`` is the rabbit's total bytes, ``used`` what allocations
    (anyone's NnfStorage: Flux's jobs, persistent storage, an
    NnfSystemStorage) hold on it; ``devices`` its drives.  Without devices
    the rabbit has DRIVES_PER_RABBIT drives sharing ``capacity``."""

    capacity: int
    computes: dict[str, str]               # compute -> PCIe link status
    node_status: str = "Ready"
    k8s_ready: bool = True
    fenced: bool = False
    drain_taint: str | None = None
    devices: list[dict[str, Any]] = field(default_factory=list)
    used: int = 0

    @classmethod
    def from_status(cls, status: dict[str, Any], name: str = "rabbit") -> RabbitHealth:
        """The health a Storage's (seeded or last Live) status shows: its total
        is its devices' (``status.capacity`` is free space), or, for a status
        that lists no device (a state saved before devices were reported),
        ``status.capacity`` on DRIVES_PER_RABBIT drives."""
        access = status.get("access") or {}
        servers = access.get("servers") or [{}]
        devices = [dict(d) for d in status.get("devices") or [] if isinstance(d, dict)]
        if not devices:
            devices = nvme_devices(name, max(0, int(status.get("capacity") or 0)))
        return cls(capacity=devices_total(devices),
                   computes={c["name"]: c.get("status", "Ready")
                             for c in access.get("computes") or [] if "name" in c},
                   node_status=str(servers[0].get("status") or "Ready"),
                   devices=devices)

    def drives(self, name: str) -> list[dict[str, Any]]:
        """Its drives: ``devices``, or DRIVES_PER_RABBIT sharing ``capacity``."""
        return self.devices or nvme_devices(name, self.capacity)

    def free(self, name: str) -> int:
        """``status.capacity``: the Ready drives' bytes less ``used`` (>= 0)."""
        return max(0, devices_total(reported_devices(self.drives(name))) - self.used)

    def reset(self) -> None:
        """Fully healthy: node manager Ready, every link Ready, not fenced,
        Kubernetes node Ready, no drain taint (capacity, devices stay)."""
        self.node_status = "Ready"
        self.computes = {c: "Ready" for c in self.computes}
        self.k8s_ready, self.fenced, self.drain_taint = True, False, None


def reconcile(labels: dict[str, str], spec: dict[str, Any], status: dict[str, Any],
              name: str, health: RabbitHealth) -> tuple[dict[str, Any], bool]:
    """nnf-sos' Storage controller: the new status, and whether the rabbit's
    fencing is cleared (a re-enable clears it on the NnfNode).

    Only Storage labelled ``…/storage=Rabbit`` is touched.  ``spec.state:
    Disabled`` reports Disabled in any mode; in ``Testing`` mode nothing else
    is touched (whoever set the mode owns the status).  In ``Live`` mode the
    whole status is rebuilt from the rabbit: type, capacity (free bytes:
    the Ready drives' less ``health.used``), access (server
    and every compute's link), devices, then the overall status -- unless
    disabled.  Re-enabling (status still Disabled) clears ``rebootRequired``
    and ``message`` and the fencing; otherwise, as in nnf-sos, a message
    stays until a new condition replaces it.
    """
    new = copy_json(status)
    if labels.get(STORAGE_TYPE_LABEL) != "Rabbit":
        return new, False
    disabled = spec.get("state") == "Disabled"
    if disabled:
        new.update(status="Disabled", message=DISABLED_MESSAGE)
    if spec.get("mode", "Live") != "Live":
        return new, False
    new["type"] = "NVMe"
    new["capacity"] = health.free(name)
    new["access"] = {"protocol": "PCIe",
                     "servers": [{"name": name, "status": health.node_status}],
                     "computes": [{"name": c, "status": s} for c, s in health.computes.items()]}
    new["devices"] = reported_devices(health.drives(name))
    new.setdefault("rebootRequired", False)
    new.setdefault("message", "")
    if disabled:
        return new, False
    fenced, unfenced = health.fenced, False
    if new.get("status") == "Disabled":
        unfenced, fenced = fenced, False
        new.update(rebootRequired=False, message="")
    if fenced:
        new.update(status="Degraded", rebootRequired=True,
                   message="Storage node requires reboot to recover from STONITH event")
    elif not health.k8s_ready:
        new.update(status="Offline", message="Kubernetes node is offline")
    elif health.drain_taint:
        new.update(status="Drained", message=f"Kubernetes node is tainted with"
                                             f" {health.drain_taint}")
    else:
        new["status"] = health.node_status
    return new, unfenced


def fenced_computes(storages: Iterable[Mapping[str, Any]], clients: Sequence[str]) -> list[str]:
    """The computes of ``clients`` (in their order) that a rabbit's Storage
    lists with status Fenced: nnf-sos' detectFencedComputes, which reads
    the Storage of each compute's rabbit."""
    fenced = set()
    for s in storages:
        for c in ((s.get("status") or {}).get("access") or {}).get("computes") or []:
            if isinstance(c, dict) and c.get("status") == "Fenced":
                fenced.add(c.get("name"))
    return [c for c in clients if c in fenced]


def go_list(names: Sequence[str]) -> str:
    """A Go []string as fmt's %v prints it: ``[a b]``."""
    return "[" + " ".join(names) + "]"


def fence_error(fenced: Sequence[str]) -> rerr.ResourceError:
    """nnf-sos' error for an NnfAccess whose computes are fenced: Fatal,
    its words (so the WLM stops waiting and ends the job)."""
    return rerr.internal(f"Workflow failed: compute nodes {go_list(fenced)} were fenced"
                         f" during the job",
                         f"compute nodes have been fenced: {go_list(fenced)}")


# What a storm flips: (rabbit, None) is the rabbit's node manager status,
# (rabbit, compute) that compute's PCIe link.
StormTarget = tuple[str, Optional[str]]


def flipped(original: str) -> str:
    """What a storm flips a status to: Offline from Ready, else Ready."""
    return "Offline" if original == "Ready" else "Ready"


def storm_plan(targets: Sequence[StormTarget], events: int,
               rng: random.Random) -> Iterator[list[StormTarget]]:
    """The ``events`` steps of a storm, each a list of targets to toggle
    between their value before the storm and ``flipped`` of it, all of one
    rabbit (one Storage update).  Every step but one toggles a single
    target; when ``events`` is odd the first step toggles two targets of one
    rabbit (parity: single toggles cannot end where they began in an odd
    number of steps).  Every target ends toggled an even number of times,
    so after the last step everything is as before the storm.  ValueError
    (raised at once) if events < 2 or no plan exists."""
    if events < 2:
        raise ValueError(f"a storm needs at least 2 events (a change and its undoing),"
                         f" not {events}")
    if not targets:
        raise ValueError("a storm needs at least one rabbit")
    by_rabbit: dict[str, list[StormTarget]] = {}
    for t in targets:
        by_rabbit.setdefault(t[0], []).append(t)
    pairs = [ts for ts in by_rabbit.values() if len(ts) >= 2]
    if events % 2 and not pairs:
        raise ValueError(f"an odd number of events ({events}) needs a rabbit with a compute"
                         f" (one update then changes two things)")
    return _storm_steps(list(targets), events, pairs, rng)


def _storm_steps(targets: list[StormTarget], events: int, pairs: list[list[StormTarget]],
                 rng: random.Random) -> Iterator[list[StormTarget]]:
    toggled: list[StormTarget] = []      # the targets away from their value, ...
    where: dict[StormTarget, int] = {}   # ... and where each is in that list

    def toggle(t: StormTarget) -> None:
        i = where.pop(t, None)
        if i is None:
            where[t] = len(toggled)
            toggled.append(t)
            return
        last = toggled.pop()
        if i < len(toggled):
            toggled[i] = last
            where[last] = i

    left = events
    if events % 2:
        step = rng.sample(rng.choice(pairs), 2)
        for t in step:
            toggle(t)
        left -= 1
        yield step
    # invariant: len(toggled) <= left, of the same parity
    while left:
        t = rng.choice(toggled) if len(toggled) == left else rng.choice(targets)
        toggle(t)
        left -= 1
        yield [t]
