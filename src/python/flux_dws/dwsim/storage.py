"""nnf-sos: a rabbit's Storage status from its health inputs (§6).

``storage_status`` computes ``status`` for a Storage labelled
``dataworkflowservices.github.io/storage=Rabbit`` in mode Live:
spec.state Disabled wins; then fencing (Degraded + rebootRequired), a
NotReady Kubernetes node (Offline), a drain taint (Drained), else the node
manager's own status.  Compute entries carry each PCIe link's status.
"""

from __future__ import annotations

from typing import Any


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
        status.update(status="Disabled", message="Storage node manually disabled")
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
