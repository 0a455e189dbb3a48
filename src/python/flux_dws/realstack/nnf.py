"""The real DWS, nnf-sos and nnf-dm controllers on a real control plane.

    with ControlPlane(workdir) as cp:
        with RealControllers(cp, workdir / "nnf", system="kind") as rc:
            ...   # the dws service, as user flux, talks to the same API server

``RealControllers`` runs the upstream managers that ``t/nnf/build.sh``
builds from ``../shared/nnf`` as a site runs them, but as plain processes
(no kubelet, no pods): DWS' webhook (``--mode=webhook``, registered with
the API server by URL with a certificate made here) and controller (kind
mode: it readies the computes' ClientMounts), the nnf-sos storage
controller, and per rabbit one nnf-sos node controller (``--mock``, kind
mode) and one nnf-dm node manager (with MPI nodes: nnf-dm as upstream
deploys it, in Pods, flux_dws.realstack.nnfdm).  It installs what they need before
they start, each from their own trees where they ship it: their CRDs
(``config/crd/bases``), the DWDirectiveRule (nnf-sos ``config/dws``), the
workload manager roles (``config/rbac``, named as their kustomizations
name them), the storage profile (nnf-sos ``config/examples``, made the
default), and, where no kubelet writes them, a Ready Node and a manager
Pod per rabbit (``real_nodes=True``: the Nodes are the kubelets' of
flux_dws.realstack.nodes, started first).  What upstream does not ship is written here and said so:
the SystemConfiguration (from the emulator's system description), a
LustreFileSystem whose mount root is a directory of ``workdir``, a data
movement profile that copies with ``cp`` (upstream's runs ``mpirun dcp``,
which needs worker pods: with MPI nodes it is upstream's), a stub MPIJob
CRD (nnf-sos lists MPIJobs when it deletes a Workflow; with MPI nodes
mpi-operator installs the real one) and the NnfDataMovementManager object
nnf-sos looks for (nnf-dm's own manager waits on a DaemonSet; with MPI
nodes it is nnf-dm's own, flux_dws.realstack.nnfdm).  Why each is
needed: doc/guide/development.rst, "The real controllers".

The rabbits' file systems (``MOCK_FILE_SYSTEM_PATH``: a directory per
allocation) and their mounts (``SERVER_MOUNT_PREFIX``: links to them)
are in a directory of ``/tmp`` made for the run (``files``; removed by
``stop``): nnf-dm runs its profile's commands through ``bash -c`` with
the paths unquoted, so they must have no blank (a test's workdir may).

A rabbit is a host of its own: each rabbit's node managers (nnf-sos'
and nnf-dm's) run in a mount namespace of their own (``nsenter`` into
one made by ``unshare --mount``, kept by a bind mount in ``files/ns``)
where ``files/mnt``, the rabbits' one SERVER_MOUNT_PREFIX, is that
rabbit's own directory (``files/<rabbit>/mnt``).  Without it the rabbits
of one Lustre file system make the same mount path, and the second
fails ("file exists").  Where namespaces cannot be made (not root, no
``unshare``) the managers share the host's, and say so in their log
directory (``namespaces``): every shape but Lustre across rabbits works.

DWS' webhook serves on port 9443 of every address (controller-runtime's
default; no flag moves it), so one ``RealControllers`` runs at a time on
a machine: ``start`` takes ``PORT_LOCK`` (waiting ``LOCK_TIMEOUT`` at
most) and ``stop`` gives it back.

``pause(name)``/``resume(name)`` stop and continue one manager
(SIGSTOP/SIGCONT): a test holds a Workflow in the state that manager
moves, and releases it.  ``restart(name)`` starts it again.
"""

from __future__ import annotations

import atexit
import base64
import copy
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import yaml

from flux_dws.apiserver import tls
from flux_dws.libdws.wfstates import PROPOSAL
from flux_dws.realstack import images, nnfdm
from flux_dws.realstack.controlplane import (
    ControlPlane,
    ControlPlaneError,
    hold_lock,
    stop_process,
)
from flux_dws.realstack.nodes import PodNodes

__all__ = ["LOCK_TIMEOUT", "NnfBuild", "NnfUnavailable", "RealControllers", "build",
           "source_dir", "storage_profile"]

DWS_API = "dataworkflowservices.github.io/v1alpha7"
NNF_API = "nnf.cray.hpe.com/v1alpha11"
LUS_API = "lus.cray.hpe.com/v1beta1"
WEBHOOK_PORT = 9443          # controller-runtime's, fixed in DWS' main.go
LOCK_TIMEOUT = 1800.0        # another run's controllers hold the port
# every manager up, every rabbit's Storage Ready: 20-40 s on a quiet
# 2-core machine; a busy CI run (four yes loops) took over 120 s.  A bound
# against a hang, not a figure
READY_TIMEOUT = 600.0
DRIVER = "nnf"               # the DWDirectiveRule's name, nnf-sos' DWS_DRIVER_ID
POD_NAMESPACE = "nnf-system"
DWS_NAMESPACE = "dws-system"
DM_NAMESPACE = nnfdm.NAMESPACE
#: nnf-sos' kind mode's file systems (its default MOCK_FILE_SYSTEM_PATH),
#: in a rabbit's namespace where kubelets run the rabbits' Pods
KIND_FILE_SYSTEMS = "/mnt/nnf"
MANAGERS = ("dws-manager", "nnf-sos-manager", "nnf-dm-manager", "clientmountd")


class NnfUnavailable(Exception):
    """The NNF source or its build is not there: the reason why."""


@dataclass(frozen=True)
class NnfBuild:
    """A build directory of t/nnf/build.sh: bin/ and the unpacked src/."""

    root: Path

    def bin(self, name: str) -> Path:
        return self.root / "bin" / name

    def tree(self, project: str) -> Path:
        """The unpacked tree of ``dws``, ``nnf-sos``, ``nnf-dm`` or
        ``lustre-fs-operator``."""
        found = sorted((self.root / "src").glob(f"{project}-[v0-9]*"))
        if not found:
            raise NnfUnavailable(f"no {project} tree in {self.root / 'src'}")
        return found[0]


def source_dir() -> Path:
    """Where the NNF source tarballs are: FLUX_DWS_NNF_SRC, else the
    ``shared/nnf`` beside this clone (as build.sh's NNF_SRC)."""
    env = os.environ.get("FLUX_DWS_NNF_SRC") or os.environ.get("NNF_SRC")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[5] / "shared" / "nnf"


def build() -> NnfBuild:
    """The build of the real controllers: FLUX_DWS_NNF_DIR (a directory
    build.sh printed), else the build cache entry of the source's
    SHA256SUMS.  NnfUnavailable with the reason when there is none."""
    env = os.environ.get("FLUX_DWS_NNF_DIR")
    if env:
        root = Path(env)
    else:
        sums = source_dir() / "SHA256SUMS"
        if not sums.is_file():
            raise NnfUnavailable(f"no NNF source ({sums} is missing)")
        cache = Path(os.environ.get("FLUX_DWS_NNF_CACHE")
                     or Path.home() / ".cache" / "flux-dws" / "nnf")
        root = cache / hashlib.sha256(sums.read_bytes()).hexdigest()[:16]
    missing = [m for m in MANAGERS if not (root / "bin" / m).is_file()]
    if missing:
        raise NnfUnavailable(f"not built: {', '.join(missing)} missing in {root / 'bin'} "
                             "(run t/nnf/build.sh)")
    return NnfBuild(root)


def storage_profile(nnf: NnfBuild) -> dict[str, Any]:
    """nnf-sos' example storage profile (config/examples), as the
    default: the one nnf-sos pins for a directive that names none."""
    doc = next(_docs(nnf.tree("nnf-sos") / "config/examples/nnf_nnfstorageprofile.yaml"))
    doc["metadata"].update(name="default", namespace=POD_NAMESPACE)
    doc["data"]["default"] = True
    return doc


def _docs(path: Path) -> Iterator[dict[str, Any]]:
    for doc in yaml.safe_load_all(path.read_text()):
        if doc:
            yield doc


@dataclass
class _Proc:
    name: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    popen: subprocess.Popen[bytes] | None = None


class RealControllers:
    """The upstream managers on ``plane`` for ``system`` (see the module)."""

    def __init__(self, plane: ControlPlane, workdir: str | os.PathLike[str],
                 system: str = "kind", nnf: NnfBuild | None = None,
                 lustre_root: str | os.PathLike[str] | None = None,
                 real_nodes: bool = False, nodes: PodNodes | None = None) -> None:
        from flux_dws.dwsim.systems import load_system

        self.plane = plane
        self.workdir = Path(workdir)
        self.nnf = nnf
        self.system = load_system(system)
        self.lustre_root = Path(lustre_root) if lustre_root else self.workdir / "lus"
        # the rabbits' Nodes are a kubelet's (flux_dws.realstack.nodes,
        # started before): none is made here, none readied by hand
        # ``nodes``, not started: started here once the rabbits' mount
        # namespaces are made, each rabbit's kubelet and containerd in its
        # rabbit's (a Pod's hostPath is what that rabbit sees)
        self.nodes = nodes
        self.real_nodes = real_nodes or nodes is not None
        self.files = Path()       # the rabbits' file trees (start makes it)
        self.started_in = 0.0
        self._procs: dict[str, _Proc] = {}
        self._lock: IO[bytes] | None = None
        self._namespaces: dict[str, Path] = {}  # rabbit: the file keeping its namespace
        self._ns_mounted = False                # files/ns, bound on itself
        # the storage controller's, where /etc/hosts names the rabbits
        # loopback (with nodes only: _make_storage_namespace)
        self._storage_ns: Path | None = None
        # nnf-dm as upstream deploys it, in Pods, where the nodes run the
        # MPI image (flux_dws.realstack.nnfdm); its image, once made
        self.dm_pods = nodes is not None and nodes.mpi
        self.dm_image: images.Image | None = None

    # --- lifecycle ----------------------------------------------------------

    def __enter__(self) -> RealControllers:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def kind_file_systems(self) -> Path:
        """What each rabbit sees at /mnt/nnf where kubelets run its Pods."""
        return self.files / "kind-fs"

    @property
    def rabbits(self) -> list[str]:
        return [r.name for r in self.system.rabbits]

    def start(self) -> RealControllers:
        """Install what the managers need, start them, and return once
        every rabbit's Storage says Ready (ControlPlaneError with the
        managers' logs' tails if not within READY_TIMEOUT)."""
        nnf = self.nnf or build()
        self.nnf = nnf
        t0 = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        atexit.register(self.stop)
        if self.nodes is not None:
            self.nodes.take_lock()   # the nodes' lock first, always (nodes.py)
        self._take_port()
        self.files = Path(tempfile.mkdtemp(prefix="flux-dws-rabbits."))
        self._make_namespaces()
        if self.nodes is not None:
            extra = []
            if self.dm_pods:
                from flux_dws.realstack.nodes import images_cache
                try:
                    self.dm_image = images.build_nnf_dm(images_cache(), nnf.bin("nnf-dm-manager"))
                except images.ImagesUnavailable as exc:
                    raise NnfUnavailable(str(exc)) from exc
                extra.append(self.dm_image)
            self.nodes.start(enter=self._enter, extra_images=extra)
        self.install()
        self._start_webhook()
        self._define_managers()
        for name in self._procs:
            if name != "dws-webhook":
                self._spawn(name)
        self._wait(self._storages_ready, "every rabbit's Storage Ready", t0)
        if self.dm_pods:
            self._wait(lambda: nnfdm.ready(self.plane, NNF_API),
                       "nnf-dm's worker DaemonSet ready (its NnfDataMovementManager)", t0)
        self.started_in = time.monotonic() - t0
        return self

    def stop(self) -> None:
        """Stop every manager (controlplane.stop_process: a paused one
        too), remove the rabbits' file trees, release the port."""
        atexit.unregister(self.stop)
        for proc in reversed(list(self._procs.values())):
            self._end(proc)
        try:
            if self.nodes is not None:
                self.nodes.stop()
        finally:
            self._remove_namespaces()
        if self.files != Path():
            shutil.rmtree(self.files, ignore_errors=True)
            self.files = Path()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def pause(self, name: str) -> None:
        """Hold ``name`` (SIGSTOP): what it moves waits until resume."""
        os.killpg(self._running(name).pid, signal.SIGSTOP)

    def resume(self, name: str) -> None:
        os.killpg(self._running(name).pid, signal.SIGCONT)

    def restart(self, name: str) -> None:
        """Stop ``name`` and start it again, as a pod's restart would."""
        self._end(self._manager(name))
        self._spawn(name)

    def _manager(self, name: str) -> _Proc:
        proc = self._procs.get(name)
        if proc is None:
            raise ValueError(f"no manager {name!r}; the managers: "
                             f"{', '.join(self._procs) or '(none started)'}")
        return proc

    def _running(self, name: str) -> subprocess.Popen[bytes]:
        popen = self._manager(name).popen
        if popen is None:
            raise ValueError(f"manager {name!r} is not running")
        return popen

    def log(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def managers(self) -> list[str]:
        """The names of the managers run here as processes."""
        return list(self._procs)

    # --- what the managers need -----------------------------------------------

    def crds(self) -> list[dict[str, Any]]:
        """Their CRDs as their trees ship them, and the stub MPIJob (where
        the nodes run no mpi-operator, which installs the real one)."""
        assert self.nnf is not None
        out: list[dict[str, Any]] = []
        for project in ("dws", "nnf-sos", "lustre-fs-operator"):
            for path in sorted((self.nnf.tree(project) / "config" / "crd" / "bases")
                               .glob("*.yaml")):
                out.extend(_docs(path))
        if self.nodes is not None and self.nodes.mpi:
            return out
        out.append({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "mpijobs.kubeflow.org"},
            "spec": {"group": "kubeflow.org", "scope": "Namespaced",
                     "names": {"kind": "MPIJob", "listKind": "MPIJobList",
                               "plural": "mpijobs", "singular": "mpijob"},
                     "versions": [{"name": "v2beta1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object",
                                       "x-kubernetes-preserve-unknown-fields": True}}}]}})
        return out

    def rbac(self) -> list[dict[str, Any]]:
        """The workload manager roles, named as their kustomizations
        prefix them (``dws-``, ``nnf-``; nnf-sos' namespaced one in
        ``default``, where flux-dws makes its Workflows)."""
        assert self.nnf is not None
        out = []
        for project, prefix, rel in (
                ("dws", "dws-", "config/rbac/workload_manager_role.yaml"),
                ("nnf-sos", "nnf-", "config/rbac/workload_manager_nnf_role.yaml"),
                ("nnf-sos", "nnf-", "config/rbac-ns/workload_manager_nnf_role_ns.yaml")):
            for doc in _docs(self.nnf.tree(project) / rel):
                doc["metadata"]["name"] = prefix + doc["metadata"]["name"]
                if doc["kind"] == "Role":
                    doc["metadata"]["namespace"] = "default"
                out.append(doc)
        return out

    def objects(self) -> list[dict[str, Any]]:
        """What the managers read and no manager makes, in order."""
        assert self.nnf is not None
        sos = self.nnf.tree("nnf-sos")
        out: list[dict[str, Any]] = []
        for ns in (DWS_NAMESPACE, POD_NAMESPACE, DM_NAMESPACE):
            out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        # the Pod admission needs the namespace's ServiceAccount, which
        # kube-controller-manager (not run here) would make
        out.append({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": "default", "namespace": POD_NAMESPACE}})
        for doc in _docs(sos / "config" / "dws" / "nnf-ruleset.yaml"):
            doc["metadata"]["namespace"] = DWS_NAMESPACE
            out.append(doc)
        out.append(storage_profile(self.nnf))
        out.append(self.datamovement_profile())
        for doc in _docs(sos / "config" / "ports" / "port_manager.yaml"):
            doc["metadata"].update(name="nnf-" + doc["metadata"]["name"],
                                   namespace=POD_NAMESPACE)
            out.append(doc)
        for fs in self.system.lustre:
            out.append({"apiVersion": LUS_API, "kind": "LustreFileSystem",
                        "metadata": {"name": fs["name"], "namespace": "default"},
                        "spec": {"name": fs["name"][:8],
                                 "mgsNids": fs.get("mgsNids") or "1.2.3.4@tcp",
                                 "mountRoot": str(self.lustre_root)}})
        # after the LustreFileSystems, which nnf-dm's workers mount
        out.extend(self._datamovement_manager())
        out.append({"apiVersion": DWS_API, "kind": "SystemConfiguration",
                    "metadata": {"name": "default", "namespace": "default"},
                    "spec": {"storageNodes": [
                        {"type": "Rabbit", "name": r.name,
                         "computesAccess": [{"name": c, "index": i} for c, i in r.computes]}
                        for r in self.system.rabbits],
                        "externalComputeNodes": [{"name": c}
                                                 for c in self.system.external_computes],
                        "ports": self.system.ports,
                        "portsCooldownInSeconds": self.system.ports_cooldown}})
        for r in self.rabbits:
            if not self.real_nodes:
                out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": r}})
            out.append({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": f"nnf-node-manager-{r}",
                                     "namespace": POD_NAMESPACE},
                        "spec": {"schedulerName": "none",
                                 "tolerations": [{"operator": "Exists"}],
                                 "containers": [{"name": "manager", "image": "none"}]}})
        return out

    def _datamovement_manager(self) -> list[dict[str, Any]]:
        """nnf-dm's deployment (flux_dws.realstack.nnfdm) where it runs
        in Pods, else the NnfDataMovementManager nnf-sos looks for."""
        assert self.nnf is not None
        if self.dm_pods:
            assert self.dm_image is not None
            return nnfdm.deployment(self.nnf.tree("nnf-dm"), self.dm_image.ref,
                                    self.files / "mnt", KIND_FILE_SYSTEMS,
                                    {fs["name"]: self.lustre_root for fs in self.system.lustre})
        return [{"apiVersion": NNF_API, "kind": "NnfDataMovementManager",
                 "metadata": {"name": nnfdm.MANAGER, "namespace": DM_NAMESPACE},
                 "spec": {"selector": {"matchLabels": {"cray.nnf.node": "true"}},
                          "hostPath": "/mnt/nnf", "mountPath": "/mnt/nnf",
                          "updateStrategy": {"type": "RollingUpdate"},
                          "podSpec": {"containers": [{"name": "worker", "image": "none"}]}}}]

    def datamovement_profile(self) -> dict[str, Any]:
        """Upstream's example profile, its commands run without MPI: the
        copy on the rabbit's own host as root, then the files given to
        the job's user (upstream: mpirun dcp on worker pods)."""
        assert self.nnf is not None
        path = self.nnf.tree("nnf-sos") / "config/examples/nnf_nnfdatamovementprofile.yaml"
        doc = copy.deepcopy(next(_docs(path)))
        doc["metadata"].update(name="default", namespace=POD_NAMESPACE)
        if self.dm_pods:
            # its commands as they are: mpirun and dcp in nnf-dm's Pods
            doc["data"]["default"] = True
            return doc
        doc["data"].update({
            "default": True, "slots": 0, "maxSlots": 0, "progressIntervalSeconds": 0,
            "setprivCommand": "",
            "command": "cp -r $SRC $DEST && chown -R $UID:$GID $DEST",
            "statCommand": "HF=$HOSTFILE $SETPRIV stat -L -c '%F' $PATH",
            "mkdirCommand": "HF=$HOSTFILE $SETPRIV mkdir -p $PATH"})
        return doc

    def install(self) -> None:
        """CRDs, then RBAC and the objects above, as admin."""
        self.plane.install_crd_objects(self.crds())
        for obj in self.rbac():
            self.plane.apply(obj)
        self.lustre_root.mkdir(parents=True, exist_ok=True)
        for obj in self.objects():
            self.plane.apply(obj)
        if self._storage_ns is not None:
            self.plane.apply(self.user_container_tls())
        for r in self.rabbits if not self.real_nodes else []:
            self._node_ready(r)

    def user_container_tls(self) -> dict[str, Any]:
        """What a site's administrator makes for user containers that
        authenticate (``requires=user-container-auth``, copy-offload;
        nnf-dm's docs): the Secret ``nnf-dm-usercontainer-server-tls`` in
        ``default``, a certificate for the rabbits' names.  nnf-sos mounts
        it into such containers and checks its certificate's chain when
        it sends them shutdown (hence only with the storage controller's
        hosts file: _make_storage_namespace)."""
        certs = tls.generate(["127.0.0.1", *self.rabbits])

        def b64(pem: bytes) -> str:
            return base64.b64encode(pem).decode()
        return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                "metadata": {"name": "nnf-dm-usercontainer-server-tls", "namespace": "default"},
                "data": {"tls.crt": b64(certs.cert_pem), "tls.key": b64(certs.key_pem),
                         "ca.crt": b64(certs.ca_pem)}}

    def _node_ready(self, rabbit: str) -> None:
        """What a kubelet would post: the Node's Ready condition."""
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status, body = self.plane.request(
            "PATCH", f"/api/v1/nodes/{rabbit}/status",
            {"status": {"conditions": [{"type": "Ready", "status": "True",
                                        "reason": "KubeletReady",
                                        "message": "kubelet is posting ready status",
                                        "lastHeartbeatTime": now,
                                        "lastTransitionTime": now}]}},
            content_type="application/merge-patch+json")
        if status != 200:
            raise ControlPlaneError(f"node {rabbit} status: {status} {body}")

    # --- the managers -----------------------------------------------------------

    def _env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("KUBERNETES_SERVICE_", "NNF_", "DWS_"))}
        env.update(KUBECONFIG=str(self.plane.admin_kubeconfig), ENVIRONMENT="kind")
        env.update(extra)
        return env

    def _start_webhook(self) -> None:
        """DWS' Workflow webhooks: served with a certificate made here,
        registered by URL, and waited for until the API server calls
        them (the controllers' first writes go through them)."""
        assert self.nnf is not None
        certs = tls.generate(["127.0.0.1"])
        tmp = self.workdir / "webhook-tmp"
        serving = tmp / "k8s-webhook-server" / "serving-certs"
        serving.mkdir(parents=True, exist_ok=True)
        (serving / "tls.crt").write_bytes(certs.cert_pem)
        (serving / "tls.key").write_bytes(certs.key_pem)
        self._procs["dws-webhook"] = _Proc(
            "dws-webhook", [str(self.nnf.bin("dws-manager")), "--mode=webhook",
                            "--metrics-bind-address=0", "--health-probe-bind-address=0"],
            self._env(TMPDIR=str(tmp), POD_NAMESPACE=DWS_NAMESPACE), self.workdir)
        self._spawn("dws-webhook")
        ca = base64.b64encode(certs.ca_pem).decode()
        manifests = self.nnf.tree("dws") / "config" / "webhook" / "manifests.yaml"
        for doc in _docs(manifests):
            doc["metadata"]["name"] = "dws-" + doc["metadata"]["name"]
            for hook in doc.get("webhooks", []):
                path = hook["clientConfig"]["service"]["path"]
                hook["clientConfig"] = {"url": f"https://127.0.0.1:{WEBHOOK_PORT}{path}",
                                        "caBundle": ca}
            self.plane.apply(doc)
        self._wait(self._webhook_called, "DWS' webhook called by the API server",
                   time.monotonic())

    def _webhook_called(self) -> bool:
        """A dry-run Workflow with a directive no rule knows: DWS' own
        words come back once the API server calls the webhook."""
        probe = {"apiVersion": DWS_API, "kind": "Workflow",
                 "metadata": {"name": "flux-dws-webhook-probe", "namespace": "default"},
                 "spec": {"desiredState": PROPOSAL, "wlmID": "flux", "jobID": "0",
                          "userID": 0, "groupID": 0,
                          "dwDirectives": ["#DW flux-dws-probe"]}}
        status, body = self.plane.request(
            "POST", "/apis/dataworkflowservices.github.io/v1alpha7/namespaces/default/"
                    "workflows?dryRun=All", probe)
        return status in (400, 403) and "invalid directive" in json.dumps(body)

    def _define_managers(self) -> None:
        assert self.nnf is not None
        dws, sos, dm = (str(self.nnf.bin(b)) for b in
                        ("dws-manager", "nnf-sos-manager", "nnf-dm-manager"))
        off = ["--metrics-bind-address=0", "--health-probe-bind-address=0"]
        rabbit_mnt = self.files / "mnt"
        self._procs["dws-controller"] = _Proc(
            "dws-controller", [dws, "--mode=controller", *off], self._env(), self.workdir)
        storage_ns = (["nsenter", f"--mount={self._storage_ns}", "--", "env",
                       f"--chdir={self.workdir}"] if self._storage_ns else [])
        self._procs["nnf-sos-storage"] = _Proc(
            "nnf-sos-storage", [*storage_ns, sos, "--controller=storage", *off],
            self._env(DWS_DRIVER_ID=DRIVER, ENABLE_WEBHOOKS="false",
                      NNF_STORAGE_PROFILE_NAMESPACE=POD_NAMESPACE,
                      NNF_DM_PROFILE_NAMESPACE=POD_NAMESPACE,
                      NNF_CONTAINER_PROFILE_NAMESPACE=POD_NAMESPACE,
                      NNF_PORT_MANAGER_NAME="nnf-port-manager",
                      NNF_PORT_MANAGER_NAMESPACE=POD_NAMESPACE,
                      COMPUTE_MOUNT_PREFIX="/mnt/nnf",
                      SERVER_MOUNT_PREFIX=str(rabbit_mnt)),
            self.workdir)
        for r in self.rabbits:
            home, fs = self.workdir / r, self.files / r
            for sub in ("ec", "fence/requests", "fence/responses"):
                (home / sub).mkdir(parents=True, exist_ok=True)
            fs.mkdir(parents=True, exist_ok=True)
            self._procs[f"nnf-sos-node-{r}"] = _Proc(
                f"nnf-sos-node-{r}",
                [*self._enter(r, home / "ec"), sos, "--controller=node", "--mock", *off],
                self._env(RABBIT_NODE="0", NNF_NODE_NAME=r, NNF_POD_NAMESPACE=POD_NAMESPACE,
                          NNF_POD_NAME=f"nnf-node-manager-{r}",
                          MOCK_FILE_SYSTEM_PATH=(KIND_FILE_SYSTEMS if self.nodes is not None
                                                 and r in self._namespaces else str(fs)),
                          NNF_FENCE_REQUEST_DIR=str(home / "fence/requests"),
                          NNF_FENCE_RESPONSE_DIR=str(home / "fence/responses")),
                home / "ec")
            if self.dm_pods:
                continue
            self._procs[f"nnf-dm-{r}"] = _Proc(
                f"nnf-dm-{r}", [*self._enter(r, home), dm, "--controller=node", *off],
                self._env(NNF_NODE_NAME=r), home)

    # --- a mount namespace per rabbit ----------------------------------------

    def _make_namespaces(self) -> None:
        """One mount namespace per rabbit in which files/mnt is the
        rabbit's own directory (see the module); none where they cannot
        be made."""
        self._namespaces = {}
        why = ""
        if os.geteuid() != 0:
            why = "not root"
        elif not (shutil.which("unshare") and shutil.which("nsenter")):
            why = "no unshare or nsenter (util-linux)"
        ns_dir = self.files / "ns"
        if not why:
            (self.files / "mnt").mkdir()
            ns_dir.mkdir()
            # a namespace is kept by a bind mount of its file, which must
            # be on a mount that does not propagate
            why = _run(["mount", "--bind", str(ns_dir), str(ns_dir)])
            self._ns_mounted = not why
            why = why or _run(["mount", "--make-private", str(ns_dir)])
        for r in self.rabbits if not why else []:
            own = self.files / r / "mnt"
            own.mkdir(parents=True)
            keep = ns_dir / r
            keep.touch()
            # where kubelets run the rabbits' Pods, the rabbits' file
            # systems are at /mnt/nnf, where nnf-sos' kind mode makes them
            # and mounts them into a user container: every one of the
            # workflow's, on every rabbit (a kind cluster mounts one host
            # directory there on each of its nodes: so does this, on a
            # tmpfs over /mnt of the rabbit's own, the host's left as is)
            fs = self.kind_file_systems
            fs.mkdir(exist_ok=True)
            # (and files/mnt shared in it: nnf-dm's worker Pods mount it
            # with HostToContainer propagation, which the kubelet allows
            # only from a shared or slave mount)
            kind = (f' && mount --make-shared "$2"'
                    f' && mount -t tmpfs -o mode=755 flux-dws-rabbit /mnt'
                    f' && mkdir {KIND_FILE_SYSTEMS} && mount --bind "$3" {KIND_FILE_SYSTEMS}'
                    if self.nodes is not None else "")
            why = _run(["unshare", f"--mount={keep}", "--propagation", "private",
                        "sh", "-c", f'mount --bind "$1" "$2"{kind}', "sh",
                        str(own), str(self.files / "mnt"), str(fs)])
            if why:
                break
            self._namespaces[r] = keep
        if not why and self.nodes is not None:
            why = self._make_storage_namespace(ns_dir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "namespaces").write_text(
            f"one mount namespace per rabbit: {', '.join(self._namespaces)}\n" if not why
            else f"the rabbits share the host's mount namespace: {why}\n")
        if why:
            self._remove_namespaces()

    def _make_storage_namespace(self, ns_dir: Path) -> str:
        """With user containers (nodes), nnf-sos' storage controller POSTs
        ``https://<rabbit>:<port>/shutdown`` to them at PostRun, by the
        rabbit's name, which the host's resolver would look up off this
        machine: it runs in a mount namespace of its own whose /etc/hosts
        names every rabbit 127.0.0.1 (no Pod's port is published there:
        the POST is refused, which nnf-sos takes as a container already
        gone).  "" when made, else why not."""
        hosts = self.files / "hosts"
        hosts.write_text("127.0.0.1\tlocalhost " + " ".join(self.rabbits) + "\n"
                         "::1\tlocalhost\n")
        keep = ns_dir / "nnf-sos-storage"
        keep.touch()
        why = _run(["unshare", f"--mount={keep}", "--propagation", "private",
                    "mount", "--bind", str(hosts), "/etc/hosts"])
        if not why:
            self._storage_ns = keep
        return why

    def _enter(self, rabbit: str, cwd: Path) -> list[str]:
        """What runs a rabbit's manager in its namespace, in ``cwd``
        (nsenter would start it in /, where the rabbits' managers would
        share one mock.db), by exec: the manager keeps the pid it is
        paused and stopped by."""
        keep = self._namespaces.get(rabbit)
        # env --chdir, not nsenter --wd: a directory opened before the
        # namespace is entered is not reachable in it (getwd fails)
        return ["nsenter", f"--mount={keep}", "--", "env", f"--chdir={cwd}"] if keep else []

    def _remove_namespaces(self) -> None:
        for keep in [*self._namespaces.values(), *filter(None, [self._storage_ns])]:
            _run(["umount", str(keep)])
        self._namespaces = {}
        self._storage_ns = None
        if self._ns_mounted:  # (os.path.ismount misses a bind on its own file system)
            _run(["umount", str(self.files / "ns")])
            self._ns_mounted = False

    def _storages_ready(self) -> bool:
        status, body = self.plane.request(
            "GET", "/apis/dataworkflowservices.github.io/v1alpha7/namespaces/default/storages")
        if status != 200:
            return False
        ready = {s["metadata"]["name"] for s in body.get("items", [])
                 if (s.get("status") or {}).get("status") == "Ready"}
        return set(self.rabbits) <= ready

    def _take_port(self) -> None:
        lockdir = Path(os.environ.get("FLUX_DWS_NNF_CACHE")
                       or Path.home() / ".cache" / "flux-dws" / "nnf")
        lockdir.mkdir(parents=True, exist_ok=True)
        lock = hold_lock(lockdir / f"port-{WEBHOOK_PORT}.lock", LOCK_TIMEOUT,
                         f"port {WEBHOOK_PORT} is held by other real controllers")
        self._lock = lock
        # the lock says no other harness has it; a manager a killed run
        # left behind may still listen there
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("", WEBHOOK_PORT))
            except OSError as exc:
                lock.close()
                self._lock = None
                raise ControlPlaneError(
                    f"port {WEBHOOK_PORT} is taken ({exc.strerror}): a dws-manager of a "
                    f"run that was killed? (fuser -n tcp {WEBHOOK_PORT})") from None

    def _spawn(self, name: str) -> None:
        proc = self._procs[name]
        logf = self.log(name).open("ab")
        try:
            proc.popen = subprocess.Popen(proc.argv, env=proc.env, cwd=proc.cwd,
                                          stdin=subprocess.DEVNULL, stdout=logf,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            logf.close()

    def _end(self, proc: _Proc) -> None:
        if proc.popen is not None:
            stop_process(proc.popen)
        proc.popen = None

    def _wait(self, ready: Callable[[], bool], what: str, t0: float) -> None:
        while not ready():
            dead = [p.name for p in self._procs.values()
                    if p.popen is not None and p.popen.poll() is not None]
            if dead or time.monotonic() - t0 > READY_TIMEOUT:
                why = f"{', '.join(dead)} exited" if dead else \
                    f"not within {READY_TIMEOUT:.0f} s"
                tails = "\n".join(f"--- {n}:\n{_tail(self.log(n))}"
                                  for n in (dead or list(self._procs)))
                raise ControlPlaneError(f"{what}: {why}\n{tails}")
            time.sleep(0.2)


def _run(argv: list[str]) -> str:
    """Run a short command (bounded); "" when it worked, else why not."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{argv[0]}: {exc}"
    if done.returncode != 0:
        return f"{' '.join(argv)}: {done.stderr.strip() or done.returncode}"
    return ""


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
