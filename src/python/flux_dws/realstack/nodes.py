"""Nodes that run Pods, for the real control plane: the rabbits as a site
has them (issue 78).

    with ControlPlane(workdir) as cp:
        with PodNodes(cp, ["kind-worker2", "kind-worker3"]) as nodes:
            ...   # a Pod, a Job or a DaemonSet on them runs for real

``PodNodes`` starts what a control plane needs to run Pods beside the API
server, kube-controller-manager (Jobs, DaemonSets, the garbage collector,
the ServiceAccounts and the root CA each namespace gets, the node
lifecycle) and kube-scheduler, then per node a containerd and a kubelet
(built by ``t/k8s/build.sh`` at the API server's version; containerd,
runc and the CNI plugins are Debian's).  The kubelet registers its Node
plainly: nnf-sos labels and taints the rabbits itself, as it does on a
site.  Its images are made here (flux_dws.realstack.images: no registry
is reachable) and imported into each node's containerd; a Pod names them
with ``imagePullPolicy: Never``.

What had to be set on these machines (hybrid cgroup v1, no
CAP_SYS_RESOURCE, no registry, a host shared with other tests):

- runc, not crun; the kubelet's ``failCgroupV1: false`` and
  ``oomScoreAdj: 0``, containerd's ``restrict_oom_score_adj``;
- a containerd per kubelet, each with its root, state and socket in the
  node's directory, and a cgroup root per kubelet (two kubelets on one
  containerd kill each other's pods);
- the kubelet serves on 127.0.0.1 and reports the host's address (it
  refuses a loopback node IP): ``kubectl logs`` through the API server
  does not reach it; a Pod's output is read through a hostPath;
- a bridge per node, and the DNS names of a cluster's pods
  (flux_dws.realstack.podnet): a Pod off the host network reaches the
  pods of every node and nothing off the machine;
- everything else a kubelet changes on the host is put back by the host
  guard (flux_dws.realstack.hostguard), even when the test is killed.

The nodes' directories are in a directory of ``/tmp`` made for the run
(a test's workdir may hold a blank, which mount options do not take);
its path is in ``workdir/nodes-dir``, and ``stop`` removes it.

One ``PodNodes`` runs at a time on a machine (the host guard reads the
host as it was before the first kubelet; a second set of nodes started
meanwhile would take the first's changes for the host's): ``start`` takes
``NODES_LOCK`` (waiting ``LOCK_TIMEOUT`` at most), ``stop`` gives it back.
A harness that runs the real controllers too starts the nodes first, so
the two locks are always taken in one order (this one, then nnf's).

``NodesUnavailable`` (a ControlPlaneUnavailable) says why nodes cannot run
here: not root, a package or a build missing.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from flux_dws.apiserver.kubeconfig import kubeconfig, write
from flux_dws.realstack import images, podnet
from flux_dws.realstack.controlplane import (
    ControlPlane,
    ControlPlaneError,
    ControlPlaneUnavailable,
    binaries,
    free_port,
    hold_lock,
    log_tail,
    stop_process,
)
from flux_dws.realstack.hostguard import CGROUP_ROOT, HostGuard
from flux_dws.realstack.mpioperator import MPIOperator, mpi_operator_build

__all__ = ["NODE_ROLE_BINDING", "NodeBinaries", "NodesUnavailable", "PodNodes",
           "node_binaries"]

#: every Node Ready after its kubelet starts: a bound against a hang
START_TIMEOUT = 300.0
#: the kubelet posts its status this often; the node lifecycle controller
#: takes a node whose kubelet went quiet for the grace period as Unknown
#: (NotReady): a rabbit Offline within seconds, not the default 50
STATUS_EVERY = "2s"
GRACE_PERIOD = "12s"
CNI_PLUGINS = Path("/usr/lib/cni")
NODE_ROLE_BINDING = "flux-dws:kubelets"
NODES_LOCK = Path("/tmp/flux-dws-nodes.lock")
LOCK_TIMEOUT = 1800.0       # another run's nodes are up


class NodesUnavailable(ControlPlaneUnavailable):
    """Nodes cannot run Pods here: the reason why."""


@dataclass(frozen=True)
class NodeBinaries:
    kubelet: Path
    controller_manager: Path
    scheduler: Path
    containerd: Path
    ctr: Path
    runc: Path


def node_binaries() -> NodeBinaries:
    """What nodes need, or NodesUnavailable saying what is missing."""
    if os.geteuid() != 0:
        raise NodesUnavailable("a kubelet needs root (cgroups, mounts, network namespaces)")
    where = binaries().kube_apiserver.parent
    built = [where / c for c in ("kubelet", "kube-controller-manager", "kube-scheduler")]
    for p in built:
        if not os.access(p, os.X_OK):
            raise NodesUnavailable(f"{p.name} is not built (no {p}; run t/k8s/build.sh)")
    found: list[Path] = []
    for cmd, pkg in (("containerd", "containerd"), ("ctr", "containerd"), ("runc", "runc")):
        w = shutil.which(cmd) or shutil.which(cmd, path="/usr/sbin:/sbin")
        if not w:
            raise NodesUnavailable(f"no {cmd} (Debian's {pkg}: scripts/setup.sh installs it)")
        found.append(Path(w))
    for plugin in ("bridge", "host-local", "loopback"):
        if not os.access(CNI_PLUGINS / plugin, os.X_OK):
            raise NodesUnavailable(f"no CNI plugin {CNI_PLUGINS / plugin} (Debian's "
                                   "containernetworking-plugins: scripts/setup.sh installs it)")
    if not os.access(images.BUSYBOX_BINARY, os.X_OK):
        raise NodesUnavailable(f"no {images.BUSYBOX_BINARY} (Debian's busybox-static: "
                               "scripts/setup.sh installs it)")
    if not (CGROUP_ROOT / "memory").is_dir() and not (CGROUP_ROOT / "cgroup.controllers").exists():
        raise NodesUnavailable(f"no cgroup file system at {CGROUP_ROOT}")
    return NodeBinaries(*built, *found)


def images_cache() -> Path:
    env = os.environ.get("FLUX_DWS_IMAGES_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "flux-dws" / "images"


class _Node:
    """One node: its containerd and its kubelet."""

    def __init__(self, name: str, index: int, root: Path, run_id: str) -> None:
        self.name = name
        self.root = root / name
        self.cgroup = f"flux-dws-{run_id}-{index}"
        self.index = index
        self.sock = self.root / "containerd" / "containerd.sock"
        self.containerd: subprocess.Popen[bytes] | None = None
        self.kubelet: subprocess.Popen[bytes] | None = None
        self.kubelet_argv: list[str] = []

    def containerd_config(self) -> str:
        c = self.root / "containerd"
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        return f"""version = 2
root = "{c / 'root'}"
state = "{c / 'state'}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "{self.sock}"
[ttrpc]
  address = "{self.sock}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{c / 'opt'}"
[{cri}]
  sandbox_image = "{images.PAUSE}"
  restrict_oom_score_adj = true
  [{cri}.containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false
  [{cri}.cni]
    bin_dir = "{CNI_PLUGINS}"
    conf_dir = "{self.root / 'cni'}"
"""

    def kubelet_config(self, port: int, healthz: int, dns: str) -> dict[str, Any]:
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
            "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": False}},
            "authorization": {"mode": "AlwaysAllow"},
            "address": "127.0.0.1", "port": port,
            "healthzBindAddress": "127.0.0.1", "healthzPort": healthz, "readOnlyPort": 0,
            "cgroupDriver": "cgroupfs", "cgroupRoot": f"/{self.cgroup}",
            "failCgroupV1": False, "failSwapOn": False, "oomScoreAdj": 0,
            "containerRuntimeEndpoint": f"unix://{self.sock}",
            "podLogsDir": str(self.root / "pod-logs"),
            # the pods' names: the pod network's DNS on the node's bridge
            # (the host's resolver is not theirs: nothing is asked off it)
            "resolvConf": "", "clusterDNS": [dns], "clusterDomain": podnet.CLUSTER_DOMAIN,
            "nodeStatusUpdateFrequency": STATUS_EVERY,
            # a test machine's disk and memory are the host's: never evict
            "evictionHard": {}, "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "serializeImagePulls": False,
        }


class PodNodes:
    """kube-controller-manager, kube-scheduler and a node (containerd and
    kubelet) per name, on ``plane`` (see the module's text)."""

    def __init__(self, plane: ControlPlane, names: list[str], workdir: Path | None = None,
                 bins: NodeBinaries | None = None, mpi: bool = False) -> None:
        if not names:
            raise ValueError("PodNodes needs at least one node name")
        self.plane = plane
        self.names = list(names)
        self.workdir = Path(workdir or plane.workdir / "nodes")
        self.bins = bins
        self.mpi = mpi
        self.root: Path | None = None
        self.guard: HostGuard | None = None
        self.nodes: dict[str, _Node] = {}
        self._procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self._lock: IO[bytes] | None = None
        self.enter: Callable[[str, Path], list[str]] | None = None
        self.network: podnet.PodNetwork | None = None
        self.mpi_operator: MPIOperator | None = None

    def __enter__(self) -> PodNodes:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- lifecycle ---------------------------------------------------------

    def take_lock(self) -> None:
        """NODES_LOCK, for this run (start takes it when it is not yet)."""
        if self._lock is None:
            self._lock = hold_lock(NODES_LOCK, LOCK_TIMEOUT, "another run's nodes held the lock")

    def start(self, timeout: float = START_TIMEOUT,
              enter: Callable[[str, Path], list[str]] | None = None,
              extra_images: list[images.Image] | None = None) -> PodNodes:
        """The controllers, then the nodes; return when every Node is Ready
        (ControlPlaneError with the log's tail when one is not).  ``enter``:
        what runs a node's containerd and kubelet where its rabbit runs
        (RealControllers' mount namespace per rabbit): (name, cwd) -> argv."""
        self.enter = enter
        bins = self.bins or node_binaries()
        mpi_build = mpi_operator_build() if self.mpi else None
        try:
            made = images.build(images_cache())
            if self.mpi:
                mpi = images.build_mpi(images_cache())
                made[mpi.ref] = mpi
        except images.ImagesUnavailable as exc:
            raise NodesUnavailable(str(exc)) from exc
        made.update((i.ref, i) for i in extra_images or [])
        self.workdir.mkdir(parents=True, exist_ok=True)
        atexit.register(self.stop)
        self.take_lock()
        self.root = Path(tempfile.mkdtemp(prefix="flux-dws-nodes.", dir="/tmp"))
        (self.workdir / "nodes-dir").write_text(f"{self.root}\n")
        self.guard = HostGuard.start(self.root)
        run_id = self.root.name.split(".")[-1].lower()
        self._bind_node_role()
        self._start_controllers(bins)
        host, port = self.plane.url.removeprefix("https://").rsplit(":", 1)
        self.network = podnet.PodNetwork(self.names, run_id, self._pods, (host, int(port)))
        self.network.start()
        if self.mpi:
            self.mpi_operator = MPIOperator(self.plane, self.root, self._spawn_operator,
                                            self.log, mpi_build)
            self.mpi_operator.start()
        for i, name in enumerate(self.names):
            node = self.nodes[name] = _Node(name, i, self.root, run_id)
            self._start_node(bins, node, made)
        deadline = time.monotonic() + timeout
        for name in self.names:
            self._wait_ready(name, deadline)
        return self

    def stop(self) -> None:
        """Every process stopped, the host put back (HostLeftChanged if the
        guard could not), the nodes' directory removed."""
        atexit.unregister(self.stop)
        for node in self.nodes.values():
            for p in (node.kubelet, node.containerd):
                if p is not None:
                    stop_process(p)
        while self._procs:
            stop_process(self._procs.pop()[1])
        operator, self.mpi_operator = self.mpi_operator, None
        if operator is not None:
            operator.stop()
        network, self.network = self.network, None
        if network is not None:
            network.stop()
        guard, self.guard = self.guard, None
        try:
            if guard is not None:
                guard.stop()
        finally:
            if self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)
            lock, self._lock = self._lock, None
            if lock is not None:
                lock.close()

    # --- faults --------------------------------------------------------------

    def pause(self, name: str) -> None:
        """Stop node ``name``'s kubelet (SIGSTOP): its Node goes Unknown
        (NotReady) after the grace period; its pods run on."""
        self._kubelet(name).send_signal(signal.SIGSTOP)

    def resume(self, name: str) -> None:
        self._kubelet(name).send_signal(signal.SIGCONT)

    def _kubelet(self, name: str) -> subprocess.Popen[bytes]:
        node = self.nodes.get(name)
        if node is None or node.kubelet is None:
            raise ValueError(f"no node {name!r}; the nodes: {', '.join(self.names)}")
        return node.kubelet

    def log(self, name: str) -> Path:
        """A process's log: kube-controller-manager, kube-scheduler,
        <node>/kubelet, <node>/containerd."""
        return self.workdir / f"{name.replace('/', '-')}.log"

    def pod_logs(self) -> dict[str, str]:
        """Every container's output the kubelets wrote, by its path under
        podLogsDir (<namespace>_<pod>_<uid>/<container>/<n>.log): what
        ``kubectl logs`` would show, which reaches no kubelet here (the
        module's text)."""
        out: dict[str, str] = {}
        for node in self.nodes.values():
            logs = node.root / "pod-logs"
            for f in sorted(logs.glob("*/*/*.log")) if logs.is_dir() else []:
                out[str(f.relative_to(logs))] = f.read_text(errors="replace")
        return out

    # --- the inside --------------------------------------------------------

    def _spawn(self, name: str, argv: list[str], cwd: Path,
               env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        node = name.split("/")[0] if "/" in name else None
        if node is not None and self.enter is not None:
            argv = [*self.enter(node, cwd), *argv]
        logf = self.log(name).open("ab")
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf,
                                 stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                 start_new_session=True)
        finally:
            logf.close()
        assert self.guard is not None
        self.guard.note_pid(p.pid)
        return p

    def _spawn_operator(self, name: str, argv: list[str],
                        env: dict[str, str]) -> subprocess.Popen[bytes]:
        p = self._spawn(name, argv, self.workdir, env)
        self._procs.append((name, p))
        return p

    def _pods(self, namespace: str) -> list[dict[str, Any]]:
        """A namespace's Pods (the pod network's DNS asks)."""
        status, body = self.plane.request("GET", f"/api/v1/namespaces/{namespace}/pods",
                                          timeout=5.0)
        return list(body.get("items") or []) if status == 200 else []

    def _bind_node_role(self) -> None:
        """The kubelets' user (group system:nodes, the control plane's token
        file) gets what a kubelet may do: the system:node role."""
        self.plane.apply({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": NODE_ROLE_BINDING},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "system:node"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                          "name": "system:nodes"}]})

    def _start_controllers(self, bins: NodeBinaries) -> None:
        pki = self.plane.workdir / "pki"
        admin = str(self.plane.admin_kubeconfig)
        self._procs.append(("kube-controller-manager", self._spawn(
            "kube-controller-manager",
            [str(bins.controller_manager), f"--kubeconfig={admin}", "--secure-port=0",
             "--leader-elect=false", f"--service-account-private-key-file={pki / 'sa-key.pem'}",
             f"--root-ca-file={pki / 'ca.pem'}", "--controllers=*",
             f"--node-monitor-grace-period={GRACE_PERIOD}", "--node-monitor-period=1s",
             "--v=1"], self.workdir)))
        self._procs.append(("kube-scheduler", self._spawn(
            "kube-scheduler",
            [str(bins.scheduler), f"--kubeconfig={admin}", "--secure-port=0",
             "--leader-elect=false", "--v=1"], self.workdir)))

    def _start_node(self, bins: NodeBinaries, node: _Node, made: dict[str, images.Image]) -> None:
        assert self.guard is not None
        for d in ("containerd", "cni", "cni-ipam", "kubelet", "pod-logs"):
            (node.root / d).mkdir(parents=True, exist_ok=True)
        cfg = node.root / "containerd.toml"
        cfg.write_text(node.containerd_config())
        assert self.network is not None
        (node.root / "cni" / "10-flux-dws.conflist").write_text(
            json.dumps(self.network.cni_config(node.index, node.root / "cni-ipam")))
        # the cgroup root, in each hierarchy, before the kubelet checks it
        self.guard.note_cgroup(node.cgroup)
        for h in CGROUP_ROOT.iterdir():
            if h.is_dir() and not h.is_symlink():
                (h / node.cgroup).mkdir(exist_ok=True)
        node.containerd = self._spawn(f"{node.name}/containerd",
                                      [str(bins.containerd), "--config", str(cfg)], node.root)
        self._wait_socket(node)
        for image in made.values():
            r = subprocess.run([str(bins.ctr), "-a", str(node.sock), "-n", "k8s.io", "images",
                                "import", str(image.archive)],
                               capture_output=True, text=True, timeout=600, check=False)
            if r.returncode:
                raise ControlPlaneError(f"{node.name}: importing {image.ref} failed: "
                                        f"{r.stderr.strip()}")
        kcfg = node.root / "kubelet.yaml"
        kcfg.write_text(json.dumps(node.kubelet_config(
            free_port(), free_port(), self.network.dns_address(node.index))))
        kubecfg = node.root / "kubelet.kubeconfig"
        write(kubecfg, kubeconfig(self.plane.url, self.plane.ca_pem, self.plane.node_token,
                                  name="flux-dws-node"))
        node.kubelet_argv = [str(bins.kubelet), f"--config={kcfg}", f"--kubeconfig={kubecfg}",
                             f"--root-dir={node.root / 'kubelet'}",
                             f"--hostname-override={node.name}", "--v=1"]
        node.kubelet = self._spawn(f"{node.name}/kubelet", node.kubelet_argv, node.root)

    def _wait_socket(self, node: _Node) -> None:
        deadline = time.monotonic() + 60
        while not node.sock.exists():
            assert node.containerd is not None
            if node.containerd.poll() is not None or time.monotonic() > deadline:
                raise ControlPlaneError(f"{node.name}: containerd did not start; "
                                        f"{self.log(node.name + '/containerd')} ends:\n"
                                        f"{log_tail(self.log(node.name + '/containerd'))}")
            time.sleep(0.05)

    def ready(self, name: str) -> bool:
        """Node ``name``'s Ready condition is True."""
        status, body = self.plane.request("GET", f"/api/v1/nodes/{name}")
        if status != 200:
            return False
        return any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in body.get("status", {}).get("conditions", []))

    def _wait_ready(self, name: str, deadline: float) -> None:
        node = self.nodes[name]
        while not self.ready(name):
            assert node.kubelet is not None
            if node.kubelet.poll() is not None or time.monotonic() > deadline:
                log = self.log(f"{name}/kubelet")
                how = "exited" if node.kubelet.poll() is not None else "running"
                raise ControlPlaneError(f"node {name} not Ready (its kubelet {how}); "
                                        f"{log} ends:\n{log_tail(log)}")
            time.sleep(0.2)

