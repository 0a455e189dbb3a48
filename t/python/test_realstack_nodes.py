"""Nodes that run Pods on the real control plane (issue 78, item 1):
flux_dws.realstack.nodes starts kube-controller-manager, kube-scheduler
and per rabbit a containerd and a kubelet; the images are made here.

- a DaemonSet (the controller-manager) puts a Pod on each rabbit, a Job
  (the scheduler) runs to completion, their output read through a
  hostPath;
- a Pod off the host network gets an address on its node's bridge and no
  route off it;
- a kubelet stopped takes its Node to NotReady within the grace period,
  and back to Ready when it goes on (what makes a rabbit Offline);
- on the real nnf-sos the rabbits are these Nodes: nnf-sos labels and
  taints them as on a site, and their Storages are Ready;
- the host as it was after (test_realstack_nodes_killed.py: after a test
  process killed with a Pod running).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from t.python.realk8s import require_binaries, require_nodes

from flux_dws.realstack import controlplane as cpl
from flux_dws.realstack import images
from flux_dws.realstack.hostguard import HostState
from flux_dws.realstack.nodes import PodNodes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

RABBITS = ["kind-worker2", "kind-worker3"]
WAIT = 120.0


def until(cond: Any, what: str, timeout: float = WAIT) -> Any:
    """Poll cond() until it is true (bounded): its value."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(0.2)


def busybox(command: str, out: Path) -> dict[str, Any]:
    """A Pod template's spec: busybox running ``command`` with ``/out`` the
    host's ``out``, tolerating the rabbits' taints."""
    return {"restartPolicy": "Never", "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "c", "image": images.BUSYBOX, "imagePullPolicy": "Never",
                            "command": ["sh", "-c", command],
                            "env": [{"name": "NODE", "valueFrom": {
                                "fieldRef": {"fieldPath": "spec.nodeName"}}}],
                            "volumeMounts": [{"name": "out", "mountPath": "/out"}]}],
            "volumes": [{"name": "out", "hostPath": {"path": str(out),
                                                     "type": "DirectoryOrCreate"}}]}


@pytest.fixture(scope="module")
def before() -> HostState:
    return HostState.read()


@pytest.fixture(scope="module")
def nodes(before: HostState, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[PodNodes]:
    bins, nbins = require_binaries(), require_nodes()
    workdir = tmp_path_factory.mktemp("nodes")
    with cpl.ControlPlane(workdir / "cp", bins) as cp, \
            PodNodes(cp, RABBITS, workdir / "nodes", nbins) as pn:
        until(lambda: cp.request("GET", "/api/v1/namespaces/default/serviceaccounts/"
                                 "default")[0] == 200, "the default ServiceAccount")
        yield pn
    assert before.differences(HostState.read()) == []


def test_a_daemonset_and_a_job_run_on_the_rabbits(nodes: PodNodes) -> None:
    cp = nodes.plane
    assert nodes.root is not None
    out = nodes.root / "out-1"
    status, body = cp.request("POST", "/apis/apps/v1/namespaces/default/daemonsets", {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "each"},
        "spec": {"selector": {"matchLabels": {"app": "each"}},
                 "template": {"metadata": {"labels": {"app": "each"}},
                              "spec": {**busybox("echo $NODE > /out/ds-$NODE; sleep 3600",
                                                 out), "restartPolicy": "Always"}}}})
    assert status == 201, body
    until(lambda: out.is_dir() and sorted(p.name for p in out.iterdir()) ==
          [f"ds-{r}" for r in RABBITS], "a DaemonSet Pod on each rabbit")
    assert (out / "ds-kind-worker3").read_text() == "kind-worker3\n"
    status, body = cp.request("POST", "/apis/batch/v1/namespaces/default/jobs", {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "twice"},
        "spec": {"completions": 2, "parallelism": 2,
                 "template": {"spec": busybox("echo done > /out/job-$HOSTNAME", out)}}})
    assert status == 201, body
    job = until(lambda: (lambda b: b if b.get("status", {}).get("succeeded") == 2
                         or b.get("status", {}).get("failed") else None)(
        cp.request("GET", "/apis/batch/v1/namespaces/default/jobs/twice")[1]),
        "the Job's end")
    assert job["status"].get("succeeded") == 2, job["status"]
    assert len(list(out.glob("job-*"))) == 2
    # deleted, its Pods go (the garbage collector) and the DaemonSet's stop
    for path in ("/apis/apps/v1/namespaces/default/daemonsets/each",
                 "/apis/batch/v1/namespaces/default/jobs/twice"):
        status, _ = cp.request("DELETE", path + "?propagationPolicy=Foreground")
        assert status == 200
    until(lambda: cp.request("GET", "/api/v1/namespaces/default/pods")[1]["items"] == [],
          "every Pod gone")


def test_pods_reach_each_other_by_name_across_nodes_the_api_and_nothing_else(
        nodes: PodNodes, before: HostState) -> None:
    cp = nodes.plane
    assert nodes.root is not None
    out = nodes.root / "out-2"

    def pod(name: str, node: str, command: str, **spec: Any) -> None:
        status, body = cp.request("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {**busybox(command, out), "nodeName": node, **spec}})
        assert status == 201, body

    def phase(name: str) -> str:
        return str(cp.request("GET", f"/api/v1/namespaces/default/pods/{name}")[1]
                   .get("status", {}).get("phase"))

    # a server on the second node, named as mpi-operator names its workers
    # (hostname.subdomain), answering one connection
    pod("srv", RABBITS[1], "echo hello from $(hostname) | nc -l -p 7000",
        hostname="srv", subdomain="net")
    until(lambda: phase("srv") == "Running", "the server running")
    # the client on the first: its address and routes, the server by name
    # (its listen may follow its start: tries, 100 at most)
    pod("cli", RABBITS[0],
        "ip -4 addr show eth0 > /out/addr; ip route > /out/route; "
        "ip route get 198.51.100.1 > /out/off 2>&1; "
        # the API server as in a cluster: its Service, the Pod's token
        "wget -q -O /out/api --no-check-certificate --header \"Authorization: Bearer "
        "$(cat /var/run/secrets/kubernetes.io/serviceaccount/token)\" "
        "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api; "
        "for i in $(seq 100); do nc srv.net.default.svc.cluster.local 7000 > /out/got "
        "&& [ -s /out/got ] && break; sleep 0.2; done")
    until(lambda: phase("cli") in ("Succeeded", "Failed"), "the client's end")
    assert phase("cli") == "Succeeded"
    assert "inet 10.244.0." in (out / "addr").read_text()
    assert (out / "got").read_text() == "hello from srv\n"
    # a route to the pods of every node through the bridge, none other
    routes = sorted((out / "route").read_text().splitlines())
    assert [r.split()[:3] for r in routes] == [["10.244.0.0/16", "via", "10.244.0.1"],
                                               ["10.244.0.0/24", "dev", "eth0"],
                                               ["10.96.0.0/16", "via", "10.244.0.1"]], routes
    assert json.loads((out / "api").read_text())["kind"] == "APIVersions"
    assert "unreachable" in (out / "off").read_text()
    # the host forwards on the bridges only
    assert HostState.read().sysctls["net.ipv4.ip_forward"] == \
        before.sysctls["net.ipv4.ip_forward"]
    until(lambda: phase("srv") == "Succeeded", "the server's end")
    for name in ("srv", "cli"):
        assert cp.request("DELETE", f"/api/v1/namespaces/default/pods/{name}")[0] == 200
    assert nodes.network is not None and nodes.network.dns.questions > 0


def test_a_stopped_kubelet_takes_its_node_not_ready(nodes: PodNodes) -> None:
    nodes.pause(RABBITS[1])
    try:
        until(lambda: not nodes.ready(RABBITS[1]), "the Node NotReady")
        assert nodes.ready(RABBITS[0])
    finally:
        nodes.resume(RABBITS[1])
    until(lambda: nodes.ready(RABBITS[1]), "the Node Ready again")


def test_nnf_sos_labels_and_taints_the_rabbit_nodes(nodes: PodNodes) -> None:
    from t.python.test_realnnf_persistent import release_build

    from flux_dws.realstack import nnf

    build = release_build("2026-03")
    cp = nodes.plane
    with nnf.RealControllers(cp, cp.workdir.parent / "nnf", system="kind", nnf=build,
                             real_nodes=True):
        def marked() -> bool:
            items = cp.request("GET", "/api/v1/nodes")[1]["items"]
            return all(n["metadata"]["labels"].get("cray.nnf.node") == "true"
                       and {"key": "cray.nnf.node", "value": "true", "effect": "NoSchedule"}
                       in (n["spec"].get("taints") or []) for n in items)
        until(marked, "each rabbit labelled and tainted by nnf-sos")
        storages = cp.request("GET", "/apis/dataworkflowservices.github.io/v1alpha7/"
                              "namespaces/default/storages")[1]["items"]
        assert sorted((s["metadata"]["name"], s["status"]["status"]) for s in storages) == \
            [(r, "Ready") for r in RABBITS]
