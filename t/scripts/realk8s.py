"""Run a real control plane for a sharness script until SIGTERM.

    python realk8s.py DIR [--controllers nnf [--nodes [--mpi]]] [--lustre-root PATH]

kube-apiserver and etcd (flux_dws.realstack.controlplane, built by
t/k8s/build.sh) with, by default, the emulator's kinds as CRDs and the WLM
roles of t/k8s/rbac bound to user ``flux`` (the emulator's controllers
attach later: attach_controllers).  With ``--controllers nnf``: the real
DWS, nnf-sos and nnf-dm managers instead (flux_dws.realstack.nnf, built by
t/nnf/build.sh), their CRDs and their WLM roles, bound to ``flux`` by
t/k8s/rbac/flux-bindings.yaml; copy_in sources and copy_out destinations
live under ``--lustre-root`` (the LustreFileSystem's mount root; DIR/lus
by default).  With ``--nodes`` as well: the rabbits are Nodes that run
Pods (flux_dws.realstack.nodes: a kubelet and containerd each, in the
rabbit's mount namespace; root and t/k8s/build.sh's kubelet needed), as
a user container needs; DIR/kind-file-systems names the directory that
is every rabbit's /mnt/nnf (nnf-sos' kind-mode file systems).  With
``--mpi`` too: the nodes run MPIJobs (mpi-operator, built by t/mpi/build.sh,
and the MPI image: flux_dws.realstack.mpioperator, images).
Writes DIR/admin.kubeconfig, DIR/flux.kubeconfig, then DIR/ready (the
seconds it took).  Exit status 77 and the reason on stderr when the
binaries are not built (the script skips, or fails under
FLUX_DWS_REQUIRE_REALK8S=1).  SIGUSR1/SIGUSR2 with DIR/signal naming a
manager (or etcd, kube-apiserver): pause/resume it, SIGHUP restarts it
(t/sharness.d: nnf_manager); SIGHUP with "history" compacts etcd.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from pathlib import Path
from typing import Any


def main() -> int:
    from flux_dws.dwsim.systems import load_system
    from flux_dws.realstack import controlplane as cp
    from flux_dws.realstack import nnf
    from flux_dws.realstack import nodes as pod_nodes
    from flux_dws.realstack.mpioperator import mpi_operator_build
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--controllers", choices=("emulator", "nnf"), default="emulator")
    ap.add_argument("--lustre-root")
    ap.add_argument("--nodes", action="store_true")
    ap.add_argument("--mpi", action="store_true")
    args = ap.parse_args()
    if args.nodes and args.controllers != "nnf":
        ap.error("--nodes runs the rabbits of --controllers nnf")
    if args.mpi and not args.nodes:
        ap.error("--mpi runs MPIJobs on the --nodes")
    workdir = Path(args.dir).resolve()
    try:
        bins = cp.binaries()
        nnf_build = nnf.build() if args.controllers == "nnf" else None
        node_bins = pod_nodes.node_binaries() if args.nodes else None
        if args.mpi:
            mpi_operator_build()
    except (cp.ControlPlaneUnavailable, nnf.NnfUnavailable) as exc:
        print(f"realk8s: {exc}", file=sys.stderr)
        return 77
    done = threading.Event()

    def stop_starting(*_: Any) -> None:
        # stopped while starting (its script gave up on it: another run
        # holds the real controllers' port, say): what started is stopped
        # on the way out, the ExitStack's
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, stop_starting)
    signal.signal(signal.SIGINT, stop_starting)
    with contextlib.ExitStack() as stack:
        plane = stack.enter_context(cp.ControlPlane(workdir / "cp", bins))
        if nnf_build is None:
            plane.install_crds()
            plane.apply_rbac()
        else:
            rabbits = [r.name for r in load_system("kind").rabbits]
            nodes = (pod_nodes.PodNodes(plane, rabbits, workdir / "nodes", node_bins,
                                        mpi=args.mpi)
                     if node_bins is not None else None)
            rc = stack.enter_context(nnf.RealControllers(
                plane, workdir / "nnf", nnf=nnf_build,
                lustre_root=args.lustre_root or workdir / "lus", nodes=nodes))
            plane.apply_files([cp.k8s_dir() / "rbac" / "flux-bindings.yaml"])
            _signals(plane, rc, workdir / "signal")
            if nodes is not None:
                # where a test reads what the user containers wrote
                (workdir / "kind-file-systems").write_text(f"{rc.kind_file_systems}\n")
        for name in ("admin", "flux"):
            src = getattr(plane, f"{name}_kubeconfig")
            (workdir / f"{name}.kubeconfig").write_bytes(Path(src).read_bytes())
        (workdir / "ready").write_text(f"{plane.started_in:.1f}\n")
        signal.signal(signal.SIGTERM, lambda *_: done.set())
        signal.signal(signal.SIGINT, lambda *_: done.set())
        done.wait()
    return 0


def _signals(plane: Any, rc: Any, order: Path) -> None:
    """The test's hold on one manager or server: DIR/signal names it, a
    signal acts; DIR/signal.done (the same words) says it is done.  The
    name ``etcd`` or ``kube-apiserver`` is the control plane's server,
    ``history`` (restart only) compacts etcd's history."""
    def act(verb: str) -> None:
        name = order.read_text().split()[-1]
        said = f"{verb} {name}"
        try:
            if name == "history":
                plane.compact()
            elif name in ("etcd", "kube-apiserver"):
                getattr(plane, verb)(name)
            else:
                getattr(rc, verb)(name)
        except Exception as exc:  # the test reads why; the stack runs on
            said = f"error: {verb} {name}: {exc}"
        done = order.with_suffix(".done")
        done.with_suffix(".tmp").write_text(f"{said}\n")
        done.with_suffix(".tmp").rename(done)
    signal.signal(signal.SIGUSR1, lambda *_: act("pause"))
    signal.signal(signal.SIGUSR2, lambda *_: act("resume"))
    signal.signal(signal.SIGHUP, lambda *_: act("restart"))


if __name__ == "__main__":
    sys.exit(main())
