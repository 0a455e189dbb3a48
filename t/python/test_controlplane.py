"""The real control plane (flux_dws.realstack.controlplane): etcd and
kube-apiserver built from Go modules start and stop cleanly, serve the
emulator's kinds as CRDs, and give user flux exactly what the WLM roles
(t/k8s/rbac, DWS' and nnf-sos' workload-manager roles) allow."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from t.python.realk8s import can, require_binaries, seeded_controlplane

from flux_dws.apiserver import api_resources
from flux_dws.realstack.controlplane import ControlPlane, ControlPlaneError

DWS = api_resources.DWS
NNF = api_resources.NNF
V = api_resources.DWS_VERSIONS[0]


@pytest.fixture(scope="module")
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    with seeded_controlplane(tmp_path_factory.mktemp("realk8s")) as plane:
        yield plane


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_start_and_stop_leave_nothing(tmp_path: Path) -> None:
    plane = ControlPlane(tmp_path, require_binaries())
    with plane:
        pids = plane.pids()
        assert len(pids) == 2 and all(alive(p) for p in pids)
        status, body = plane.request("GET", "/readyz")
        assert status == 200, body
        status, body = plane.request("GET", "/version")
        assert status == 200 and body["gitVersion"].startswith("v1."), body
        port = int(plane.url.rsplit(":", 1)[1])
        assert plane.started_in > 0
    assert not any(alive(p) for p in pids)
    with socket.socket() as s:  # the port is free again
        s.bind(("127.0.0.1", port))
    assert plane.log("kube-apiserver").stat().st_size > 0
    assert plane.log("etcd").exists()
    for name in ("admin.kubeconfig", "flux.kubeconfig"):
        assert (tmp_path / name).stat().st_mode & 0o077 == 0


def test_restart_pause_and_compaction(tmp_path: Path) -> None:
    """The faults t3602 holds: a server restarted keeps the data, a held
    etcd answers nothing until resumed, and after a compaction and an API
    server restart a watch from an older resourceVersion is told 410."""
    def configmap(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default"}, "data": {"k": name}}

    with ControlPlane(tmp_path, require_binaries()) as cp:
        old = cp.apply(configmap("first"))["metadata"]["resourceVersion"]
        cp.apply(configmap("second"))
        assert cp.compact() > int(old)
        cp.restart("kube-apiserver")
        status, body = cp.request(
            "GET", f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={old}"
                   "&timeoutSeconds=2")
        # the watch cache answers it as the stream's one ERROR event
        assert status == 200 and body["type"] == "ERROR"
        assert body["object"]["code"] == 410 and body["object"]["reason"] == "Expired"
        cp.restart("etcd")
        status, body = cp.request("GET", "/api/v1/namespaces/default/configmaps/first")
        assert status == 200 and body["data"] == {"k": "first"}
        cp.pause("etcd")
        try:
            # a quorum read reaches etcd: held, it does not come back in time
            with pytest.raises(OSError):
                cp.request("GET", "/api/v1/namespaces/default/configmaps/first", timeout=2)
        finally:
            cp.resume("etcd")
        status, _ = cp.request("GET", "/api/v1/namespaces/default/configmaps/first")
        assert status == 200


def test_a_failed_start_quotes_the_log(tmp_path: Path) -> None:
    bins = require_binaries()
    # an etcd that refuses its flags: the error says so, with its log
    bad = tmp_path / "etcd"
    bad.write_text("#!/bin/sh\necho 'etcd: no such flag' >&2\nexit 3\n")
    bad.chmod(0o755)
    plane = ControlPlane(tmp_path / "w", type(bins)(bins.kube_apiserver, bad))
    with pytest.raises(ControlPlaneError, match=r"etcd exited with 3(.|\n)*no such flag"):
        plane.start()
    plane.stop()
    assert plane.pids() == []


def test_crds_are_served(cp: ControlPlane) -> None:
    for r in api_resources.custom_resources():
        for v in r.versions:
            path = f"/apis/{r.group}/{v}/" + (f"namespaces/default/{r.plural}"
                                               if r.namespaced else r.plural)
            status, body = cp.request("GET", path)
            assert status == 200, (path, body)
    status, body = cp.request("GET", f"/apis/{DWS}/{V}/namespaces/default/storages")
    assert sorted(o["metadata"]["name"] for o in body["items"]) == ["kind-worker2",
                                                                    "kind-worker3"]
    # the seed's status went through the status subresource
    assert body["items"][0]["status"]["access"]["servers"][0]["status"] == "Ready"


def test_workflow_status_is_not_a_subresource(cp: ControlPlane) -> None:
    """Workflow has no status subresource (DWS' CRD): flux writes its status with the
    object, as the service does for nothing but the controllers do."""
    wf = {"apiVersion": f"{DWS}/{V}", "kind": "Workflow",
          "metadata": {"name": "cp-status", "namespace": "default"},
          "spec": {"desiredState": "Proposal", "dwDirectives": []},
          "status": {"state": "Proposal"}}
    out = cp.apply(wf)
    assert out["status"] == {"state": "Proposal"}
    cp.delete(wf)


# (verb, group, resource, subresource, namespace or None for cluster scope, allowed)
WLM_RIGHTS: list[tuple[str, str, str, str, Any, bool]] = [
    ("create", DWS, "workflows", "", "default", True),
    ("delete", DWS, "workflows", "", "default", True),
    ("patch", DWS, "workflows", "", "default", True),
    ("watch", DWS, "workflows", "", None, True),
    ("patch", DWS, "computes", "", "default", True),
    ("patch", DWS, "servers", "", "default", True),
    ("create", DWS, "servers", "", "default", False),
    ("delete", DWS, "servers", "", "default", False),
    ("get", DWS, "servers", "status", "default", True),
    ("patch", DWS, "servers", "status", "default", False),
    ("list", DWS, "directivebreakdowns", "", "default", True),
    ("patch", DWS, "directivebreakdowns", "", "default", False),
    ("list", DWS, "clientmounts", "", None, True),
    ("patch", DWS, "clientmounts", "", "default", False),
    ("patch", DWS, "storages", "", "default", True),  # nnf-sos' role adds it to DWS'
    ("create", DWS, "storages", "", "default", False),
    ("patch", DWS, "storages", "status", "default", False),
    ("patch", DWS, "systemstatuses", "", "default", True),
    ("create", DWS, "systemstatuses", "", "default", False),
    ("list", DWS, "systemconfigurations", "", "default", True),
    ("patch", DWS, "systemconfigurations", "", "default", False),
    ("list", DWS, "persistentstorageinstances", "", "default", True),
    ("patch", DWS, "persistentstorageinstances", "", "default", False),
    ("list", DWS, "dwdirectiverules", "", "dws-system", False),
    ("list", NNF, "nnfdatamovements", "", None, True),
    ("create", NNF, "nnfdatamovements", "", "default", False),
    ("list", NNF, "nnfstorages", "", "default", False),
    ("list", NNF, "nnfstorageprofiles", "", "nnf-system", False),
    ("get", "", "secrets", "", "default", True),
    ("create", "", "secrets", "", "default", False),
    ("list", "", "pods", "", "default", True),
    ("get", "", "pods", "log", "default", True),
    ("get", "", "pods", "log", "kind-worker2", False),  # the coregrp Role is default's
    ("create", "", "pods", "", "default", False),
    ("get", "", "nodes", "", None, False),
    ("patch", "", "nodes", "", None, False),
    ("create", "", "events", "", "default", False),
]


@pytest.mark.parametrize(("verb", "group", "resource", "sub", "ns", "allowed"), WLM_RIGHTS)
def test_flux_has_the_wlm_rights_only(cp: ControlPlane, verb: str, group: str, resource: str,
                                      sub: str, ns: Any, allowed: bool) -> None:
    assert can(cp, verb, resource, group, ns, sub) is allowed


def test_flux_requests_allowed_and_forbidden(cp: ControlPlane) -> None:
    """What the table says, through real requests with flux's token."""
    base = f"/apis/{DWS}/{V}/namespaces/default"
    wf = {"apiVersion": f"{DWS}/{V}", "kind": "Workflow",
          "metadata": {"name": "cp-flux", "namespace": "default"},
          "spec": {"desiredState": "Proposal", "dwDirectives": [], "jobID": "f1",
                   "userID": 1000, "groupID": 1000, "wlmID": "flux"}}
    status, body = cp.request("POST", f"{base}/workflows", wf, user="flux")
    assert status == 201, body
    status, body = cp.request("PATCH", f"{base}/workflows/cp-flux",
                              {"metadata": {"annotations": {"a": "b"}}}, user="flux",
                              content_type="application/merge-patch+json")
    assert status == 200, body
    status, body = cp.request("DELETE", f"{base}/workflows/cp-flux", user="flux")
    assert status == 200, body
    status, body = cp.request("GET", f"{base}/storages", user="flux")
    assert status == 200 and len(body["items"]) == 2
    status, body = cp.request("DELETE", f"{base}/storages/kind-worker2", user="flux")
    assert status == 403
    assert body["reason"] == "Forbidden"
    assert 'User "flux" cannot delete resource "storages"' in body["message"]
    status, body = cp.request("GET", "/api/v1/nodes/kind-worker2", user="flux")
    assert status == 403 and 'cannot get resource "nodes"' in body["message"]
    status, body = cp.request("GET", f"{base}/storages", token="not-a-token")
    assert status == 401
