"""The dws service as a site runs it: on a real kube-apiserver, connected
as user flux with only the workload manager roles DWS and nnf-sos ship
(t/k8s/rbac), plus, where a request needs more, the extra Role flux-dws
ships (etc/k8s/flux-dws-extra-role.yaml, doc/guide/admin.rst "Kubernetes
rights flux-dws needs").  No controllers run: the objects the service lists
(SystemConfiguration, Storages, Nodes, a PersistentStorageInstance) are
made as admin.  Each extra right is tested both ways: granted, the request
works; not granted, it fails with one error naming the missing right and
nothing is left half-written."""

from __future__ import annotations

import errno
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from t.python.realk8s import EXTRA_ROLE, seeded_controlplane, wait_rbac

from flux_dws.apiserver import api_resources
from flux_dws.harness import Harness, RemoteEmulator
from flux_dws.realstack.controlplane import ControlPlane

DWS = api_resources.DWS
V = api_resources.DWS_VERSIONS[0]
R2, R3 = "kind-worker2", "kind-worker3"
TAINT = "cray.nnf.node.drain"
PSI = "cp-shared"


@pytest.fixture(scope="module")
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    with seeded_controlplane(tmp_path_factory.mktemp("realk8s-svc")) as plane:
        yield plane


def grant_extra(cp: ControlPlane, granted: bool) -> None:
    """The extra Role bound to flux, or not; returns once RBAC says so."""
    if granted:
        cp.apply_files([EXTRA_ROLE])
    else:
        cp.delete({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "flux-dws-extra"}})
    wait_rbac(cp, granted, "patch", "nodes")
    wait_rbac(cp, granted, "patch", "persistentstorageinstances", DWS, "default")


@pytest.fixture
def h(cp: ControlPlane, caplog: pytest.LogCaptureFixture) -> Iterator[Harness]:
    caplog.set_level(logging.INFO)
    with Harness(system="kind", emulator=RemoteEmulator(cp.flux_kubeconfig)) as harness:  # type: ignore[arg-type]
        harness.wait_for(lambda: harness.fluxion.rabbit_up(R2)
                         and harness.fluxion.rabbit_up(R3), what="rabbits up")
        yield harness
    # whatever the test did, the service never met a right it lacks unasked
    forbidden = [r.getMessage() for r in caplog.records
                 if "forbidden" in r.getMessage().lower()
                 and "nodes" not in r.getMessage()
                 and "persistentstorageinstances" not in r.getMessage()]
    assert forbidden == []


def storage(cp: ControlPlane, name: str) -> dict[str, Any]:
    status, body = cp.request("GET", f"/apis/{DWS}/{V}/namespaces/default/storages/{name}")
    assert status == 200, body
    out: dict[str, Any] = body
    return out


def drain_annotations(cp: ControlPlane, name: str) -> dict[str, str]:
    ann = storage(cp, name)["metadata"].get("annotations") or {}
    return {k: v for k, v in ann.items() if "drain" in k}


def taints(cp: ControlPlane, name: str) -> list[tuple[str, str]]:
    status, body = cp.request("GET", f"/api/v1/nodes/{name}")
    assert status == 200, body
    return [(t["key"], t["effect"]) for t in body["spec"].get("taints") or []]


def psi(cp: ControlPlane, owner: int) -> dict[str, Any]:
    return {"apiVersion": f"{DWS}/{V}", "kind": "PersistentStorageInstance",
            "metadata": {"name": PSI, "namespace": "default"},
            "spec": {"name": PSI, "fsType": "xfs", "userID": owner, "state": "Active",
                     "dwDirective": f"#DW create_persistent type=xfs capacity=1TiB name={PSI}",
                     "consumerReferences": []},
            "status": {"state": "Active"}}


def test_startup_sync_as_flux(cp: ControlPlane, h: Harness,
                              caplog: pytest.LogCaptureFixture) -> None:
    """Connect, list and watch every kind, write SystemStatus: the WLM roles do."""
    view = h.rabbits()
    assert view["ready"] and [r["name"] for r in view["rabbits"]] == [R2, R3]
    assert all(r["up"] for r in view["rabbits"])
    h.wait_for(lambda: h.rabbits_now()["sent"]["systemstatus"] >= 1,
               what="SystemStatus written")
    status, body = cp.request("GET", f"/apis/{DWS}/{V}/namespaces/default/systemstatuses/"
                                     "default")
    assert status == 200
    assert set(body["data"]["nodes"]) == {"compute-01", "compute-02", "compute-03",
                                          "compute-04"}
    assert "service" in h.status()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize("granted", [True, False], ids=["granted", "not-granted"])
def test_drain_needs_node_rights(cp: ControlPlane, h: Harness, granted: bool) -> None:
    grant_extra(cp, granted)
    before = taints(cp, R3)
    got = h.ask("dws.drain", payload={"rabbits": R3, "reason": "firmware update"})
    if granted:
        assert got == {"success": True, "rabbits": [R3]}, got
        assert drain_annotations(cp, R3)["drain_reason"] == "firmware update"
        assert taints(cp, R3) == [*before, (TAINT, "NoSchedule"), (TAINT, "NoExecute")]
        got = h.ask("dws.undrain", payload={"rabbits": R3})
        assert got == {"success": True, "rabbits": [R3]}, got
        assert taints(cp, R3) == before
        assert drain_annotations(cp, R3) == {}
        return
    assert got["errnum"] == errno.EIO, got
    assert got["error"] == (
        f'dws.drain: rabbit {R3}: reading its Kubernetes Node: nodes "{R3}" is forbidden:'
        f' User "flux" cannot get resource "nodes" in API group "" at the cluster scope;'
        f" its drain annotations were taken back"), got
    assert ("err", f'drain rabbit {R3}: reading its Kubernetes Node: nodes "{R3}" is'
                   f' forbidden: User "flux" cannot get resource "nodes" in API group ""'
                   f" at the cluster scope") in h.link.logs
    # nothing half-written: the Storage's drain annotations are gone again,
    # the Node untouched
    assert drain_annotations(cp, R3) == {}
    assert taints(cp, R3) == before


@pytest.mark.parametrize("granted", [True, False], ids=["granted", "not-granted"])
def test_persistent_share_needs_psi_patch(cp: ControlPlane, h: Harness,
                                          granted: bool) -> None:
    grant_extra(cp, granted)
    cp.seed([psi(cp, h.owner)])
    try:
        # seed writes the PSI, then its status: the share's patch names the
        # version the service saw last, so the barrier makes that the status
        # write's (else the patch may race it: "changed meanwhile; try again")
        assert h.ask("dws.watch_test") == {}
        h.wait_for(lambda: any(p["name"] == PSI for p in h._engine_now(
            "dws.persistent-list").get("persistent") or []), what="the PSI seen")
        got = h.ask("dws.persistent-share", payload={"name": PSI})
        status, body = cp.request(
            "GET", f"/apis/{DWS}/{V}/namespaces/default/persistentstorageinstances/{PSI}")
        assert status == 200, body
        ann = body["metadata"].get("annotations") or {}
        if granted:
            assert got == {"success": True, "name": PSI, "shared": True, "changed": True}, got
            assert ann == {f"{DWS}/ignore-uid": "true"}
            return
        assert got["errnum"] == errno.EIO, got
        assert got["error"] == (
            f"dws.persistent-share: cannot annotate '{PSI}': persistentstorageinstances."
            f'{DWS} "{PSI}" is forbidden: User "flux" cannot patch resource'
            f' "persistentstorageinstances" in API group "{DWS}" in the namespace "default"'
        ), got
        assert ann == {}
    finally:
        cp.delete(psi(cp, h.owner))


def test_undrain_without_node_rights_writes_nothing(cp: ControlPlane, h: Harness) -> None:
    """Drained with the extra Role, which is then taken away: the undrain
    fails on the Node and leaves the drain whole (Storage and Node)."""
    grant_extra(cp, True)
    before = taints(cp, R3)
    got = h.ask("dws.drain", payload={"rabbits": R3, "reason": "cabling"})
    assert got == {"success": True, "rabbits": [R3]}, got
    drained = (drain_annotations(cp, R3), taints(cp, R3))
    grant_extra(cp, False)
    got = h.ask("dws.undrain", payload={"rabbits": R3})
    assert got["errnum"] == errno.EIO, got
    assert got["error"] == (
        f'dws.undrain: rabbit {R3}: reading its Kubernetes Node: nodes "{R3}" is forbidden:'
        f' User "flux" cannot get resource "nodes" in API group "" at the cluster scope'), got
    assert (drain_annotations(cp, R3), taints(cp, R3)) == drained
    grant_extra(cp, True)
    got = h.ask("dws.undrain", payload={"rabbits": R3})
    assert got == {"success": True, "rabbits": [R3]}, got
    assert (drain_annotations(cp, R3), taints(cp, R3)) == ({}, before)


def test_rabbitmapping_as_flux(cp: ControlPlane, capsys: pytest.CaptureFixture[str]) -> None:
    """The admin guide's `flux rabbitmapping -k KUBECONFIG` with flux's rights."""
    from flux_dws.cli import rabbitmapping

    assert rabbitmapping.main(["-k", str(cp.flux_kubeconfig)]) == 0
    mapping = json.loads(capsys.readouterr().out)
    assert set(mapping["rabbits"]) == {R2, R3}
