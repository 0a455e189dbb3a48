"""A rabbit's Kubernetes Node in the emulator, and a drain made the ``nnf``
CLI's way (nnf-sos tools/nnf: ``rabbit drain`` taints the Node
``cray.nnf.node.drain=true`` NoSchedule + NoExecute and annotates the
Storage ``drain_date``/``drain_reason``; ``rabbit undrain`` undoes both):
nnf-sos' Storage controller then reports Drained, and Ready again."""

from __future__ import annotations

from kubernetes import client
from t.python.emulator.conftest import G, V, eventually

from flux_dws.dwsim import k8snode

TAINT = k8snode.DRAIN_TAINT_KEY


def status_of(api, name):
    return (api.get_namespaced_custom_object(G, V, "default", "storages", name)
            .get("status") or {})


def nnf_drain(core, custom, name, reason, date="2026-11-26T04:00:00"):
    """What ``nnf rabbit drain NAME --reason REASON`` does."""
    custom.patch_namespaced_custom_object(G, V, "default", "storages", name, {
        "metadata": {"annotations": {"drain_date": date, "drain_reason": reason}}})
    node = core.read_node(name)
    existing = [{"key": t.key, "value": t.value or "", "effect": t.effect}
                for t in node.spec.taints or [] if t.key != TAINT]
    core.patch_node(name, {"spec": {"taints": [
        *existing, {"key": TAINT, "value": "true", "effect": "NoSchedule"},
        {"key": TAINT, "value": "true", "effect": "NoExecute"}]}})


def nnf_undrain(core, custom, name):
    """What ``nnf rabbit undrain NAME`` does."""
    node = core.read_node(name)
    remaining = [{"key": t.key, "value": t.value or "", "effect": t.effect}
                 for t in node.spec.taints or [] if t.key != TAINT]
    core.patch_node(name, {"spec": {"taints": remaining or None}})
    custom.patch_namespaced_custom_object(G, V, "default", "storages", name, {
        "metadata": {"annotations": {"drain_date": None, "drain_reason": None}}})


def test_every_rabbit_has_a_ready_node(kind):
    core = kind.core_v1_api()
    nodes = {n.metadata.name: n for n in core.list_node().items}
    assert {"kind-worker2", "kind-worker3"} <= set(nodes)
    n = nodes["kind-worker2"]
    assert [(t.key, t.effect) for t in n.spec.taints] == [("cray.nnf.node", "NoSchedule")]
    assert any(c.type == "Ready" and c.status == "True" for c in n.status.conditions)


def test_nnf_cli_drain_and_undrain_show_in_the_storage(kind):
    core, custom = kind.core_v1_api(), kind.custom_objects_api()
    nnf_drain(core, custom, "kind-worker2", "firmware update")
    eventually(lambda: status_of(custom, "kind-worker2").get("status") == "Drained",
               what="Storage Drained")
    assert status_of(custom, "kind-worker2")["message"] == \
        "Kubernetes node is tainted with cray.nnf.node.drain"
    ann = custom.get_namespaced_custom_object(G, V, "default", "storages",
                                              "kind-worker2")["metadata"]["annotations"]
    assert ann == {"drain_date": "2026-11-26T04:00:00", "drain_reason": "firmware update"}
    assert status_of(custom, "kind-worker3")["status"] == "Ready"
    # the rabbit's own taint stays through drain and undrain
    nnf_undrain(core, custom, "kind-worker2")
    eventually(lambda: status_of(custom, "kind-worker2").get("status") == "Ready",
               what="Storage Ready again")
    keys = [t.key for t in core.read_node("kind-worker2").spec.taints]
    assert keys == ["cray.nnf.node"]
    meta = custom.get_namespaced_custom_object(G, V, "default", "storages",
                                               "kind-worker2")["metadata"]
    assert "drain_reason" not in (meta.get("annotations") or {})


def test_fault_health_writes_the_node(kind):
    """``flux-dws fault health --drain-taint``/``--k8s-not-ready`` go through
    the Node, so kubectl sees what nnf-sos reads."""
    core, custom = kind.core_v1_api(), kind.custom_objects_api()
    kind.controllers.health.set_health("kind-worker3", k8s_ready=False)
    node = core.read_node("kind-worker3")
    assert [c.status for c in node.status.conditions if c.type == "Ready"] == ["Unknown"]
    assert status_of(custom, "kind-worker3")["status"] == "Offline"
    kind.controllers.health.set_health("kind-worker3", k8s_ready=True,
                                       drain_taint="cray.nnf.node.drain.csi")
    assert status_of(custom, "kind-worker3")["message"] == \
        "Kubernetes node is tainted with cray.nnf.node.drain.csi"
    assert {(t.key, t.effect) for t in core.read_node("kind-worker3").spec.taints} == {
        ("cray.nnf.node", "NoSchedule"), ("cray.nnf.node.drain.csi", "NoSchedule"),
        ("cray.nnf.node.drain.csi", "NoExecute")}
    kind.controllers.health.set_health("kind-worker3", reset=True)
    assert status_of(custom, "kind-worker3")["status"] == "Ready"
    assert [t.key for t in core.read_node("kind-worker3").spec.taints] == ["cray.nnf.node"]


def test_a_node_deleted_by_hand_is_read_as_before(kind):
    """Without a Node (a state saved before Nodes were seeded) the health
    flags alone decide, as before."""
    core, custom = kind.core_v1_api(), kind.custom_objects_api()
    core.delete_node("kind-worker3")
    kind.controllers.health.set_health("kind-worker3", drain_taint="cray.nnf.node.drain")
    assert status_of(custom, "kind-worker3")["status"] == "Drained"
    kind.controllers.health.set_health("kind-worker3", drain_taint="")
    assert status_of(custom, "kind-worker3")["status"] == "Ready"
    assert isinstance(core, client.CoreV1Api)
