"""Run a real control plane for a sharness script until SIGTERM.

    python realk8s.py DIR

kube-apiserver and etcd (flux_dws.harness.controlplane, built by
t/k8s/build.sh), the emulator's kinds as CRDs, the WLM roles of t/k8s/rbac
bound to user ``flux``.  Writes DIR/admin.kubeconfig, DIR/flux.kubeconfig,
then DIR/ready (the seconds it took).  Exit status 77 and the reason on
stderr when the binaries are not built (the script skips, or fails under
FLUX_DWS_REQUIRE_REALK8S=1).
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path


def main() -> int:
    from flux_dws.harness import controlplane as cp

    workdir = Path(sys.argv[1]).resolve()
    try:
        bins = cp.binaries()
    except cp.ControlPlaneUnavailable as exc:
        print(f"realk8s: {exc}", file=sys.stderr)
        return 77
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    with cp.ControlPlane(workdir / "cp", bins) as plane:
        plane.install_crds()
        plane.apply_rbac()
        for name in ("admin", "flux"):
            src = getattr(plane, f"{name}_kubeconfig")
            (workdir / f"{name}.kubeconfig").write_bytes(Path(src).read_bytes())
        (workdir / "ready").write_text(f"{plane.started_in:.1f}\n")
        done.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
