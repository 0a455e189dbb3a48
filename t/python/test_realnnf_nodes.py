"""The real controllers with the rabbits as Nodes that run Pods
(RealControllers(nodes=PodNodes(...)), issue 78): each rabbit's kubelet
and containerd run in that rabbit's mount namespace, as its node
managers do (a rabbit is a host of its own), so a Pod's hostPath is what
its rabbit sees: the rabbits' one SERVER_MOUNT_PREFIX is each rabbit's
own directory, and /mnt/nnf (nnf-sos' kind-mode file systems, which it
mounts into a user container) is the directory every rabbit shares, as
a kind cluster mounts one on each node.  nnf-sos labels and taints the
rabbits, their Storages are Ready; nothing of the namespaces is left.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from t.python.realk8s import require_binaries, require_nodes
from t.python.test_realnnf_lustre import mounts_under
from t.python.test_realnnf_persistent import release_build
from t.python.test_realstack_nodes import busybox, until

from flux_dws.realstack import controlplane as cpl
from flux_dws.realstack import nnf
from flux_dws.realstack.nodes import PodNodes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def rc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[nnf.RealControllers]:
    bins, nbins = require_binaries(), require_nodes()
    build = release_build("2026-03")
    workdir: Path = tmp_path_factory.mktemp("realnnf-nodes")
    with cpl.ControlPlane(workdir / "cp", bins) as cp:
        nodes = PodNodes(cp, ["kind-worker2", "kind-worker3"], workdir / "nodes", nbins)
        with nnf.RealControllers(cp, workdir / "nnf", system="kind", nnf=build,
                                 nodes=nodes) as controllers:
            assert (workdir / "nnf" / "namespaces").read_text().startswith(
                "one mount namespace per rabbit: kind-worker2, kind-worker3")
            files = controllers.files
            yield controllers
    assert mounts_under(files) == []
    assert not files.exists()


def test_the_rabbits_are_the_kubelets_nodes(rc: nnf.RealControllers) -> None:
    cp = rc.plane
    nodes = cp.request("GET", "/api/v1/nodes")[1]["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == rc.rabbits
    until(lambda: all(n["metadata"]["labels"].get("cray.nnf.node") == "true"
                      for n in cp.request("GET", "/api/v1/nodes")[1]["items"]),
          "each rabbit labelled by nnf-sos")
    storages = cp.request("GET", "/apis/dataworkflowservices.github.io/v1alpha7/"
                          "namespaces/default/storages")[1]["items"]
    assert sorted((s["metadata"]["name"], s["status"]["status"]) for s in storages) == \
        [(r, "Ready") for r in rc.rabbits]


def test_a_pods_host_paths_are_what_its_rabbit_sees(rc: nnf.RealControllers) -> None:
    cp = rc.plane
    for r in rc.rabbits:
        spec = busybox("echo $NODE > /out/mounts-$NODE; echo $NODE > /kind/from-$NODE",
                       rc.files / "mnt")
        spec["nodeName"] = r
        spec["containers"][0]["volumeMounts"].append({"name": "kind", "mountPath": "/kind"})
        spec["volumes"].append({"name": "kind", "hostPath": {"path": nnf.KIND_FILE_SYSTEMS,
                                                             "type": "Directory"}})
        status, body = cp.request("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"where-{r}"},
            "spec": spec})
        assert status == 201, body
    for r in rc.rabbits:
        until(lambda r=r: cp.request("GET", f"/api/v1/namespaces/default/pods/where-{r}")[1]
              .get("status", {}).get("phase") in ("Succeeded", "Failed"), f"where-{r}'s end")
        phase = cp.request("GET", f"/api/v1/namespaces/default/pods/where-{r}")[1]["status"]
        assert phase["phase"] == "Succeeded", phase
    # the one SERVER_MOUNT_PREFIX: each rabbit's own; the host's: neither
    for r in rc.rabbits:
        assert sorted(p.name for p in (rc.files / r / "mnt").iterdir()) == [f"mounts-{r}"]
    assert list((rc.files / "mnt").iterdir()) == []
    # /mnt/nnf: the one directory both rabbits see
    assert sorted(p.name for p in rc.kind_file_systems.iterdir()) == \
        [f"from-{r}" for r in rc.rabbits]
    for r in rc.rabbits:
        assert cp.request("DELETE", f"/api/v1/namespaces/default/pods/where-{r}")[0] == 200
        (rc.files / r / "mnt" / f"mounts-{r}").unlink()
        (rc.kind_file_systems / f"from-{r}").unlink()


def test_the_storage_controller_knows_the_rabbits_as_loopback(rc: nnf.RealControllers
                                                              ) -> None:
    """With nodes, nnf-sos' storage controller POSTs a shutdown to user
    containers by their rabbit's name: in its mount namespace each name
    is 127.0.0.1 (never the host's resolver), the host's /etc/hosts left
    as is; and the site's TLS Secret for authenticating containers is
    there."""
    keep = rc.files / "ns" / "nnf-sos-storage"
    for r in rc.rabbits:
        seen = subprocess.run(["nsenter", f"--mount={keep}", "getent", "hosts", r],
                              capture_output=True, text=True, timeout=30, check=False)
        assert seen.stdout.split()[0] == "127.0.0.1", seen
        assert r not in Path("/etc/hosts").read_text()
    status, secret = rc.plane.request(
        "GET", "/api/v1/namespaces/default/secrets/nnf-dm-usercontainer-server-tls")
    assert status == 200 and sorted(secret["data"]) == ["ca.crt", "tls.crt", "tls.key"]
