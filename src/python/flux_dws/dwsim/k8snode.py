"""A rabbit's Kubernetes Node, as nnf-sos reads it (§6).

nnf-sos' Storage controller reads two things of the core ``Node`` named
after the rabbit: its ``Ready`` condition (not True: the Storage is
Offline) and its taints (any key starting ``cray.nnf.node.drain``: the
Storage is Drained, "Kubernetes node is tainted with <key>").  The ``nnf``
CLI's ``rabbit drain`` (nnf-sos ``tools/nnf``) taints the Node with
``cray.nnf.node.drain=true`` for both NoSchedule and NoExecute and
annotates the rabbit's Storage with ``drain_date`` and ``drain_reason``;
``rabbit undrain`` removes the taints of that key and both annotations.

``node_object`` is the Node a cluster starts with (the ``cray.nnf.node``
label and NoSchedule taint nnf-sos puts on rabbit nodes, Ready);
``node_state`` is what nnf-sos reads of one; ``with_ready`` and
``with_drain_taint`` are the Node after a change, as the kubelet or an
administrator makes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flux_dws.dwsim.storage import DRAIN_TAINT_PREFIX
from flux_dws.jsondata import copy_json

#: the key and value the ``nnf`` CLI's ``rabbit drain`` taints a Node with
DRAIN_TAINT_KEY = DRAIN_TAINT_PREFIX
DRAIN_TAINT_VALUE = "true"
DRAIN_EFFECTS = ("NoSchedule", "NoExecute")
#: what nnf-sos labels and taints every rabbit node with (not a drain)
RABBIT_NODE_KEY = "cray.nnf.node"


def node_object(rabbit: str) -> dict[str, Any]:
    """The Node a cluster starts with for ``rabbit``: Ready, labelled and
    tainted ``cray.nnf.node=true`` (NoSchedule) as nnf-sos does."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": rabbit, "labels": {RABBIT_NODE_KEY: "true"}},
            "spec": {"taints": [{"key": RABBIT_NODE_KEY, "value": "true",
                                 "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                                       "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status"}]}}


def _taints(node: Mapping[str, Any]) -> list[dict[str, Any]]:
    spec = node.get("spec") if isinstance(node.get("spec"), dict) else {}
    taints = (spec or {}).get("taints")
    return [t for t in taints if isinstance(t, dict)] if isinstance(taints, list) else []


def node_state(node: Mapping[str, Any]) -> tuple[bool, str | None]:
    """What nnf-sos reads of a Node: whether its Ready condition is True,
    and the key of its first drain taint (None: none)."""
    status = node.get("status") if isinstance(node.get("status"), dict) else {}
    conditions = (status or {}).get("conditions")
    ready = any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
                for c in conditions or [] if isinstance(conditions, list))
    taint = next((t["key"] for t in _taints(node)
                  if isinstance(t.get("key"), str)
                  and t["key"].startswith(DRAIN_TAINT_PREFIX)), None)
    return ready, taint


def with_ready(node: Mapping[str, Any], ready: bool) -> dict[str, Any]:
    """The Node with its Ready condition True or False (the kubelet's
    heartbeat, or its absence)."""
    new = copy_json(dict(node))
    status = new.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or []
                  if isinstance(c, dict) and c.get("type") != "Ready"]
    conditions.append({"type": "Ready", "status": "True" if ready else "Unknown",
                       "reason": "KubeletReady" if ready else "NodeStatusUnknown",
                       "message": "kubelet is posting ready status" if ready
                       else "Kubelet stopped posting node status."})
    status["conditions"] = conditions
    return new


def with_drain_taint(node: Mapping[str, Any], key: str | None) -> dict[str, Any]:
    """The Node without its drain taints (every key starting
    DRAIN_TAINT_PREFIX) and, if ``key``, tainted ``key=true`` for both
    NoSchedule and NoExecute, as ``nnf rabbit drain`` does for its key."""
    new = copy_json(dict(node))
    taints = [t for t in _taints(new)
              if not (isinstance(t.get("key"), str) and t["key"].startswith(DRAIN_TAINT_PREFIX))]
    if key:
        taints += [{"key": key, "value": DRAIN_TAINT_VALUE, "effect": e} for e in DRAIN_EFFECTS]
    new.setdefault("spec", {})["taints"] = taints
    return new
