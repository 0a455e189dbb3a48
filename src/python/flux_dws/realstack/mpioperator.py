"""Kubeflow's mpi-operator on the real control plane: what runs the MPIJobs
nnf-sos makes for an MPI container profile (issue 78).

    op = MPIOperator(plane, workdir, spawn)
    op.start()      # its CRD, its namespace, the operator; once it leads
    op.stop()

``t/mpi/build.sh`` builds it from the Go module proxy (v0.6.0: t/mpi/go.mod
says why that version) with the MPIJob CRD its module ships beside it
(``mpijobs-crd.yaml``, never kept in this repository).  It runs as a plain
process, as the cluster's admin, in a network namespace of its own
(flux_dws.realstack.netns: it serves a health check on port 8080 of every
address, which no flag moves), and takes its leader Lease in
``mpi-operator``, the namespace upstream deploys it in.  For an MPIJob it
makes the workers' Pods (hostname ``<job>-worker-<i>``, subdomain
``<job>``, a headless Service ``<job>``), an ssh key Secret, a hostfile
ConfigMap and the launcher's Job; the nodes' pod network gives the names
(flux_dws.realstack.podnet).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from flux_dws.realstack.controlplane import (
    ControlPlane,
    ControlPlaneError,
    ControlPlaneUnavailable,
    build_hash,
    cache_dir,
    log_tail,
)
from flux_dws.realstack.netns import PrivateNet

__all__ = ["LOCK_NAMESPACE", "MPIOperator", "MPIOperatorBuild", "mpi_operator_build"]

LOCK_NAMESPACE = "mpi-operator"
LEASE = "mpi-operator"
#: the operator leads (its Lease taken): seconds on a quiet machine
START_TIMEOUT = 120.0


class MPIOperatorBuild:
    def __init__(self, binary: Path, crd: Path) -> None:
        self.binary = binary
        self.crd = crd


def mpi_dir() -> Path:
    return Path(__file__).resolve().parents[4] / "t" / "mpi"


def mpi_operator_build() -> MPIOperatorBuild:
    """What t/mpi/build.sh built, or ControlPlaneUnavailable saying why
    there is nothing."""
    try:
        dest = cache_dir() / f"mpi-{build_hash(mpi_dir())}"
    except OSError as exc:
        raise ControlPlaneUnavailable(f"no t/mpi to build mpi-operator from: {exc}") from None
    b = MPIOperatorBuild(dest / "bin" / "mpi-operator", dest / "mpijobs-crd.yaml")
    if not (os.access(b.binary, os.X_OK) and b.crd.is_file()):
        raise ControlPlaneUnavailable(f"mpi-operator is not built (no {b.binary} or {b.crd}; "
                                      "run t/mpi/build.sh)")
    return b


def crd_object(path: Path) -> dict[str, Any]:
    """The CRD as its module ships it, less what a server fills in
    (``creationTimestamp: null``, which the API server warns about)."""
    crd = yaml.safe_load(path.read_text())
    crd.get("metadata", {}).pop("creationTimestamp", None)
    crd.pop("status", None)
    return dict(crd)


class MPIOperator:
    """The operator of ``build`` on ``plane``; ``spawn(name, argv, env)``
    starts a process the caller stops (and its host guard knows)."""

    def __init__(self, plane: ControlPlane, workdir: Path,
                 spawn: Callable[[str, list[str], dict[str, str]], subprocess.Popen[bytes]],
                 log: Callable[[str], Path], build: MPIOperatorBuild | None = None) -> None:
        self.plane = plane
        self.workdir = workdir
        self.spawn = spawn
        self.log = log
        self.build = build
        self.net: PrivateNet | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = START_TIMEOUT) -> None:
        build = self.build or mpi_operator_build()
        self.plane.install_crd_objects([crd_object(build.crd)])
        self.plane.apply({"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": LOCK_NAMESPACE}})
        port = int(self.plane.url.rsplit(":", 1)[1])
        self.net = PrivateNet(self.workdir / "mpi-operator.netns", port)
        self.net.start()
        # $KUBECONFIG would win over --kubeConfig
        env = {k: v for k, v in os.environ.items()
               if k != "KUBECONFIG" and not k.startswith("KUBERNETES_SERVICE_")}
        self.proc = self.spawn("mpi-operator", self.net.enter(
            [str(build.binary), f"--kubeConfig={self.plane.admin_kubeconfig}",
             f"--lock-namespace={LOCK_NAMESPACE}", "--threadiness=2", "-v=2"]), env)
        deadline = time.monotonic() + timeout
        while not self.leads():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                how = "exited" if self.proc.poll() is not None else "running"
                raise ControlPlaneError(f"mpi-operator does not lead (it is {how}); "
                                        f"{self.log('mpi-operator')} ends:\n"
                                        f"{log_tail(self.log('mpi-operator'))}")
            time.sleep(0.2)

    def leads(self) -> bool:
        status, body = self.plane.request(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/{LOCK_NAMESPACE}/leases/{LEASE}")
        return status == 200 and bool((body.get("spec") or {}).get("holderIdentity"))

    def stop(self) -> None:
        """After its process is stopped (the caller's): the namespace."""
        net, self.net = self.net, None
        if net is not None:
            net.stop()
