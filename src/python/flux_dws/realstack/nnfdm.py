"""nnf-dm as upstream deploys it, on the nodes that run Pods (issue 78).

    for obj in deployment(tree, image, rabbit_mnt):
        plane.apply(obj)
    ...                   # until ready(plane)

Where the rabbits run Pods with the MPI image (``PodNodes(mpi=True)``),
RealControllers runs no nnf-dm process of its own: what nnf-dm's
``config/`` deploys, from the release's own tree, is applied as its
kustomizations name it (prefix ``nnf-dm-``, namespace ``nnf-dm-system``):
its ServiceAccounts and roles, the worker's sshd ConfigMap, the manager's
Deployment (``--controller=manager``) and the NnfDataMovementManager.  The
manager then makes what it makes on a site: the ssh key Secret, the
``nnf-dm-controller-manager`` Deployment (``--controller=default``: the
data movements of Lustre across rabbits), the ``dm`` Service and the
``nnf-dm-worker`` DaemonSet, a Pod per rabbit whose ``manager`` container
(``--controller=node``) runs the data movement profile's commands (mpirun
and dcp) and whose ``worker`` container runs sshd.  Every Pod reaches the
API server as in a cluster (flux_dws.realstack.podnet).

What differs from a site, each for a reason:

- the image: flux_dws.realstack.images' nnf-dm (the manager on the MPI
  image, with a stand-in for mpifileutils' dcp, which nothing here
  serves), for the manager and the worker;
- the manager's Deployment tolerates every taint: the only nodes here are
  the rabbits, which nnf-sos taints;
- the NnfDataMovementManager's hostPath and mountPath are the rabbits'
  SERVER_MOUNT_PREFIX, where the data movements' paths are (a site's is
  /mnt/nnf), and its Pods mount kind mode's /mnt/nnf too, where those
  paths' links lead;
- ENVIRONMENT=kind, as nnf-dm's ``config/kind`` overlay sets it;
- the global Lustre file systems' PersistentVolumeClaims, which nnf-dm's
  workers mount (``<fs>-nnf-dm-system-readwritemany-pvc``): on a site the
  lustre-fs-operator makes them, with a PersistentVolume of the Lustre
  CSI driver; here each is bound to a hostPath PersistentVolume of its
  LustreFileSystem's mount root, a directory of the host (no
  lustre-fs-operator runs, no Lustre client).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from flux_dws.realstack.controlplane import ControlPlane

__all__ = ["MANAGER", "NAMESPACE", "PREFIX", "deployment", "ready"]

PREFIX = "nnf-dm-"
NAMESPACE = "nnf-dm-system"
MANAGER = "nnf-dm-manager-controller-manager"   # nnf-sos' DataMovementManagerName
#: nnf-dm's config/rbac, as far as its managers need it
RBAC = ("service_account.yaml", "role.yaml", "role_binding.yaml",
        "leader_election_role.yaml", "leader_election_role_binding.yaml")


def _docs(path: Path) -> Iterator[dict[str, Any]]:
    for doc in yaml.safe_load_all(path.read_text()):
        if doc:
            yield doc


def kustomized(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as nnf-dm's config/default kustomization names it: the
    prefix on every name and on what names refer to, the ``system``
    namespace made nnf-dm-system."""
    doc = copy.deepcopy(doc)
    meta = doc["metadata"]
    meta["name"] = PREFIX + meta["name"]
    if doc["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
        meta["namespace"] = NAMESPACE
    annotations = meta.get("annotations") or {}
    if "kubernetes.io/service-account.name" in annotations:
        annotations["kubernetes.io/service-account.name"] = \
            PREFIX + annotations["kubernetes.io/service-account.name"]
        annotations["kubernetes.io/service-account.namespace"] = NAMESPACE
    if "roleRef" in doc:
        doc["roleRef"]["name"] = PREFIX + doc["roleRef"]["name"]
    for subject in doc.get("subjects") or []:
        if subject.get("kind") == "ServiceAccount":
            subject["name"] = PREFIX + subject["name"]
            subject["namespace"] = NAMESPACE
    return doc


def _container_image(container: dict[str, Any], image: str) -> None:
    container["image"] = image
    container["imagePullPolicy"] = "Never"


def lustre_volume(fs: str, mount_root: Path) -> list[dict[str, Any]]:
    """The PersistentVolume and its claim that stand for the global Lustre
    file system ``fs`` in nnf-dm's namespace (the module's text)."""
    pvc = f"{fs}-{NAMESPACE}-readwritemany-pvc"
    pv = f"{fs}-{NAMESPACE}-readwritemany-pv"
    size = {"storage": "1Gi"}
    return [
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv},
         "spec": {"capacity": size, "accessModes": ["ReadWriteMany"],
                  "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                  "hostPath": {"path": str(mount_root), "type": "Directory"},
                  "claimRef": {"namespace": NAMESPACE, "name": pvc}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": pvc, "namespace": NAMESPACE},
         "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                  "volumeName": pv, "resources": {"requests": size}}}]


def deployment(tree: Path, image: str, rabbit_mnt: Path, kind_file_systems: str,
               lustre: dict[str, Path]) -> list[dict[str, Any]]:
    """What nnf-dm's ``config/`` deploys, from its ``tree``, with
    ``image``, for rabbits whose SERVER_MOUNT_PREFIX is ``rabbit_mnt``,
    whose kind mode file systems are at ``kind_file_systems``, and the
    global Lustre file systems ``lustre`` (name: mount root; the module's
    text), in the order to apply it."""
    out: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}]
    for fs, root in lustre.items():
        out.extend(lustre_volume(fs, root))
    for name in RBAC:
        out.extend(kustomized(d) for d in _docs(tree / "config" / "rbac" / name))
    out.extend(kustomized(d) for d in _docs(tree / "config" / "manager" /
                                            "worker-sshd-config.yaml"))
    for doc in _docs(tree / "config" / "manager" / "manager.yaml"):
        if doc["kind"] == "Namespace":
            continue
        doc = kustomized(doc)
        if doc["kind"] == "Deployment":
            spec = doc["spec"]["template"]["spec"]
            spec["serviceAccountName"] = PREFIX + spec["serviceAccountName"]
            spec["tolerations"] = [{"operator": "Exists"}]
            for c in spec["containers"]:
                _container_image(c, image)
                c.setdefault("env", []).append({"name": "ENVIRONMENT", "value": "kind"})
        elif doc["kind"] == "NnfDataMovementManager":
            spec = doc["spec"]
            spec["hostPath"] = spec["mountPath"] = str(rabbit_mnt)
            pod = spec["podSpec"]
            pod.setdefault("volumes", []).append(
                {"name": "kind-file-systems",
                 "hostPath": {"path": kind_file_systems, "type": "Directory"}})
            for c in pod["containers"]:
                _container_image(c, image)
                c.setdefault("volumeMounts", []).append(
                    {"name": "kind-file-systems", "mountPath": kind_file_systems})
        out.append(doc)
    return out


def ready(plane: ControlPlane, nnf_api: str) -> bool:
    """The NnfDataMovementManager (of ``nnf_api``, group/version) says its
    worker DaemonSet is ready."""
    status, body = plane.request(
        "GET", f"/apis/{nnf_api}/namespaces/{NAMESPACE}/nnfdatamovementmanagers/{MANAGER}")
    return status == 200 and bool((body.get("status") or {}).get("ready"))
