"""nnf-sos: a rabbit's Storage status from its health inputs (§6).

``storage_status`` computes ``status`` for a Storage labelled
``dataworkflowservices.github.io/storage=Rabbit`` in mode Live:
spec.state Disabled wins; then fencing (Degraded + rebootRequired), a
NotReady Kubernetes node (Offline), a drain taint (Drained), else the node
manager's own status.  Compute entries carry each PCIe link's status.
``reconcile`` is nnf-sos' Storage controller step: from a Storage and its
rabbit's ``RabbitHealth`` (the NnfNode and Kubernetes Node nnf-sos reads),
the status it writes back, in Live and in Testing mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flux_dws.jsondata import copy_json

STORAGE_TYPE_LABEL = "dataworkflowservices.github.io/storage"
DISABLED_MESSAGE = "Storage node manually disabled"


def storage_status(spec: dict[str, Any], name: str, capacity: int, computes: dict[str, str],
                   node_status: str = "Ready", k8s_ready: bool = True,
                   fenced: bool = False, drain_taint: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {
        "type": "NVMe",
        "capacity": capacity,
        "access": {"protocol": "PCIe",
                   "servers": [{"name": name, "status": node_status}],
                   "computes": [{"name": c, "status": s} for c, s in computes.items()]},
        "devices": [],
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
    Kubernetes Node say: the truth nnf-sos rebuilds a Live Storage from."""

    capacity: int
    computes: dict[str, str]               # compute -> PCIe link status
    node_status: str = "Ready"
    k8s_ready: bool = True
    fenced: bool = False
    drain_taint: str | None = None
    devices: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_status(cls, status: dict[str, Any]) -> RabbitHealth:
        """The health a Storage's (seeded or last Live) status shows."""
        access = status.get("access") or {}
        servers = access.get("servers") or [{}]
        return cls(capacity=int(status.get("capacity") or 0),
                   computes={c["name"]: c.get("status", "Ready")
                             for c in access.get("computes") or [] if "name" in c},
                   node_status=str(servers[0].get("status") or "Ready"),
                   devices=[dict(d) for d in status.get("devices") or []])


def reconcile(labels: dict[str, str], spec: dict[str, Any], status: dict[str, Any],
              name: str, health: RabbitHealth) -> tuple[dict[str, Any], bool]:
    """nnf-sos' Storage controller: the new status, and whether the rabbit's
    fencing is cleared (a re-enable clears it on the NnfNode).

    Only Storage labelled ``…/storage=Rabbit`` is touched.  ``spec.state:
    Disabled`` reports Disabled in any mode; in ``Testing`` mode nothing else
    is touched (whoever set the mode owns the status).  In ``Live`` mode the
    whole status is rebuilt from the rabbit: type, capacity, access (server
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
    new["capacity"] = health.capacity
    new["access"] = {"protocol": "PCIe",
                     "servers": [{"name": name, "status": health.node_status}],
                     "computes": [{"name": c, "status": s} for c, s in health.computes.items()]}
    new["devices"] = copy_json(health.devices)
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
