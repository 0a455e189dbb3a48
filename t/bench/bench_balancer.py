"""A site's control plane (issue 77, item 3): what a fault of one of two
API servers behind a balancer costs the dws service.

    PYTHONPATH=src/python:build/src/python python t/bench/bench_balancer.py [--jobs N]

Two kube-apiservers on one etcd behind Debian's haproxy
(flux_dws.realstack.controlplane, ``apiservers=2, balancer=True``), the
emulator's controllers attached as API clients, the dws service (through
the harness) as user flux.  Per fault, N jobs (default 20) run, 4 at a
time, and the fault comes when a quarter of them have ended:

  none        no fault: the baseline
  kill        one API server killed for good (SIGKILL)
  restart     each API server restarted, one after the other
  balancer    haproxy restarted

Printed per fault: the run's seconds, the fault's own (a restart waits
for the server to answer again), the time to recover after it (until
every watch of the service has been started again and the service has
written once more, from the audit log; 0 when both came during the
fault), the service's requests in the 10 s after the fault (beside
10 s of the baseline), its write retries, watch reconnects and re-lists
during the run, and the jobs failed (the goal: none).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
FAULTS = ("none", "kill", "restart", "balancer")
AT_ONCE = 4
WINDOW = 10.0  # seconds after the fault whose requests are counted


def _stamp(ev: dict[str, Any]) -> float:
    return datetime.fromisoformat(ev["requestReceivedTimestamp"].replace("Z", "+00:00")) \
        .timestamp()


def act(cp: Any, fault: str, took: list[tuple[float, float]]) -> None:
    """The fault itself; when it began and how long it took go in ``took``."""
    from flux_dws.realstack import controlplane as cpl

    t0 = time.time()
    if fault == "kill":
        cp.kill(cpl.APISERVER)
    elif fault == "restart":
        cp.restart(cpl.APISERVER)
        cp.restart(f"{cpl.APISERVER}-2")
    elif fault == "balancer":
        cp.restart(cpl.BALANCER)
    took.append((t0, time.time() - t0))


def run(fault: str, jobs: int, workdir: Path) -> dict[str, Any]:
    from bench_requests import run_jobs

    from flux_dws.emulator.attached import Attached
    from flux_dws.harness import Harness, RemoteEmulator
    from flux_dws.realstack import controlplane as cpl

    with cpl.ControlPlane(workdir / fault, apiservers=2, balancer=True, audit=True) as cp:
        cp.install_crds()
        cp.apply_rbac()
        with Attached(cp.admin_kubeconfig, system="kind"), \
                Harness(system="kind",
                        emulator=RemoteEmulator(cp.flux_kubeconfig,  # type: ignore[arg-type]
                                                cp.admin_kubeconfig)) as h:
            h.wait_for(lambda: all(h.fluxion.rabbit_up(r.name) for r in h.system.rabbits),
                       what="rabbits up", timeout=300.0)
            svc = h.service
            assert svc is not None
            h.wait(h.submit([XFS]), timeout=300.0)  # the watches are up and quiet
            w0 = {w["kind"]: w for w in svc.kube.watch_states()}
            retries0 = svc.kube.pool.retries
            t0 = time.monotonic()
            took: list[tuple[float, float]] = []
            faulting: list[threading.Thread] = []

            def at(done: int) -> None:
                if done == jobs // 4:
                    # the fault on a thread of its own: the jobs go on meanwhile
                    faulting.append(threading.Thread(target=act, args=(cp, fault, took)))
                    faulting[0].start()
            failed = run_jobs(h, jobs, AT_ONCE, at)
            for t in faulting:
                t.join()
            fault_at, fault_took = took[0]
            h.wait_for(lambda: not h.workflows(), what="every Workflow deleted",
                       timeout=300.0)
            seconds = time.monotonic() - t0
            w1 = {w["kind"]: w for w in svc.kube.watch_states()}
            retries = svc.kube.pool.retries - retries0
        ours = cp.audit_events(cpl.FLUX_USER)
        after = [e for e in ours if _stamp(e) >= fault_at]
        window = [e for e in after if _stamp(e) < fault_at + WINDOW]
        writes = [e for e in after if e["verb"] in ("create", "patch", "update", "delete")]
        # recovered: every watch started again after the fault (its watch
        # request received after it) and a write answered
        rewatch: dict[str, float] = {}
        for e in after:
            if e["verb"] == "watch":
                res = (e.get("objectRef") or {}).get("resource", "")
                rewatch.setdefault(res, _stamp(e))
        first_write = _stamp(writes[0]) if writes else fault_at
        recover = max(0.0, max([first_write, *rewatch.values()]) - fault_at - fault_took) \
            if fault != "none" else 0.0
    return {"fault": fault, "jobs": jobs, "seconds": seconds, "failed": failed,
            "took": fault_took,
            "recover": recover, "window": len(window), "retries": retries,
            "reconnects": sum(w1[k]["reconnects"] - w0[k]["reconnects"] for k in w0),
            "lists": sum(w1[k]["lists"] - w0[k]["lists"] for k in w0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--faults", default=",".join(FAULTS))
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if args.jobs < 4:
        ap.error("--jobs must be 4 or more (the fault comes when a quarter have ended)")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from goals import Goals

    goals = Goals("balancer")
    with tempfile.TemporaryDirectory(prefix="bench-balancer.") as tmp:
        for fault in args.faults.split(","):
            f = run(fault, args.jobs, Path(tmp))
            print(f"balancer {fault}: {f['jobs']} jobs in {f['seconds']:.1f} s, "
                  f"the fault {f['took']:.2f} s, recovered {f['recover']:.2f} s after it, "
                  f"{f['window']} requests in the "
                  f"{WINDOW:.0f} s after the fault, {f['retries']} write retries, "
                  f"{f['reconnects']} watch reconnects, {f['lists']} re-lists, "
                  f"{f['failed']} failed")
            goals.at_most(f"failed jobs, {fault}", f["failed"], 0)
    return goals.status()


if __name__ == "__main__":
    sys.exit(main())
