"""The dws service under load, through the flux-less harness (issue goals:
1,000 jobs with one xfs jobdw each, 200 in flight, zero-latency emulator:
our reaction time per transition (watch event in -> next write out) p99
<= 20 ms; the service's CPU <= 5 ms per job lifecycle; RSS <= 200 MB with
1,000 live jobs; start-up with El Capitan and 1,000 live Workflows <= 2 s
to serving).

The emulator runs as a subprocess on the El Capitan system description
(11,136 computes, 696 rabbits), so this process holds the service (engine,
kube layer, watch and writer threads) and the emulated job manager; its
CPU time is reported per job as an upper bound of the service's own.

Each goal is printed met or missed after the figures (``goals.py``), with
the invariants: the 1,000 jobs complete without an exception, the
restarted service finds the 1,000 live Workflows, no job is stuck and
nothing is left behind (Workflows, ssd vertices down, holds).  It exits 1,
naming them, when a goal is missed.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from goals import Goals

from flux_dws.emulator import start_subprocess
from flux_dws.harness import Harness, RemoteEmulator

N = 1000
IN_FLIGHT = 200
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def lifecycle(h: Harness) -> dict[str, Any]:
    """N jobs, IN_FLIGHT at a time; their figures."""
    stats0 = h.reactor.call(lambda: h.service.stats.as_dict())  # type: ignore[union-attr]
    t0, cpu0 = time.monotonic(), _cpu()
    done = stuck = 0
    live: list[int] = []
    submitted = 0
    while done + stuck < N:
        while submitted < N and len(live) < IN_FLIGHT:
            live.append(h.submit(XFS, nodes=1))
            submitted += 1
        first = live.pop(0)
        try:
            h.wait(first, timeout=300)
            done += 1
        except TimeoutError:
            stuck += 1
    wall, cpu = time.monotonic() - t0, _cpu() - cpu0
    try:
        h.wait_for(lambda: not h.service.engine.status()["jobs"], 300,  # type: ignore[union-attr]
                   "every Workflow deleted")
    except TimeoutError:
        pass  # counted by left_behind at the end
    st = h.reactor.call(lambda: h.service.stats.as_dict())  # type: ignore[union-attr]
    failed = [j for j in h.jm.jobs.values() if j.exceptions]
    print(f"lifecycle jobs: {N} ({IN_FLIGHT} in flight), {done - len(failed)} completed,"
          f" {len(failed)} with an exception"
          + (f" (e.g. {failed[0].exceptions[0]})" if failed else "") + f", {stuck} stuck")
    print(f"lifecycle throughput: {N / wall:.1f} jobs/s")
    print(f"lifecycle wall: {wall:.2f} s")
    print(f"reaction p50 (watch event in -> write out): {st['reaction_ms_p50']} ms")
    print(f"reaction p99: {st['reaction_ms_p99']} ms")
    print(f"engine time per job: {(st['engine_ms'] - stats0['engine_ms']) / N:.3f} ms")
    print(f"process CPU per job (service + job manager + k8s client): "
          f"{cpu * 1000 / N:.2f} ms")
    return {"failed": len(failed), "stuck": stuck, "reaction_p99": st["reaction_ms_p99"],
            "cpu_ms": cpu * 1000 / N}


def live_jobs(h: Harness) -> tuple[list[int], float]:
    """N jobs left running; (their ids, the process's RSS then)."""
    ids = [h.submit(XFS, nodes=1, runtime=3600) for _ in range(N)]
    for jobid in ids:
        h.wait_event(jobid, "start", timeout=300)
    rss = _rss_mb()
    print(f"RSS with {N} live jobs: {rss:.0f} MB")
    return ids, rss


def startup(h: Harness) -> tuple[float, int]:
    """The service restarted with the live jobs: (seconds to serving, the
    live Workflows it found)."""
    h.stop_service()
    t0 = time.monotonic()
    h.start_service()
    h.wait_for(lambda: h.service.engine.status()["synced"]  # type: ignore[union-attr]
               and h.service.engine.status()["computes"] > 0,  # type: ignore[union-attr]
               60, "the service to sync")
    st: dict[str, Any] = h.status()
    ready = time.monotonic() - t0
    print(f"start-up to serving, El Capitan + {len(st['jobs'])} live Workflows: {ready:.2f} s")
    return ready, len(st["jobs"])


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        kc = Path(tmp) / "kubeconfig"
        proc = start_subprocess(kc, "--system", "elcap", "--latency", "zero", timeout=120)
        try:
            h = Harness(system="elcap", emulator=RemoteEmulator(kc))  # type: ignore[arg-type]
            with h:
                fig = lifecycle(h)
                ids, fig["rss"] = live_jobs(h)
                fig["startup"], fig["found"] = startup(h)
                for jobid in ids:
                    h.cancel(jobid)
                for jobid in ids:
                    try:
                        h.wait(jobid, timeout=300)
                    except TimeoutError:
                        fig["stuck"] += 1
                wfs, down, holds = h.left_behind()
                fig["leaked"] = len(wfs) + len(down) + holds
                print(f"left behind: Workflows {len(wfs)}, ssds down {len(down)},"
                      f" holds {holds}")
        finally:
            proc.terminate()
            proc.wait(30)
    return check(fig).status()


def check(fig: dict[str, Any]) -> Goals:
    """The docstring's goals against ``main``'s figures."""
    goals = Goals("bench_service")
    goals.at_most("reaction p99 (watch event in -> write out)", fig["reaction_p99"], 20.0,
                  " ms")
    goals.at_most("process CPU per job (an upper bound of the service's)",
                  round(fig["cpu_ms"], 2), 5.0, " ms")
    goals.at_most(f"RSS with {N} live jobs", round(fig["rss"]), 200, " MB")
    goals.at_most(f"start-up to serving, El Capitan + {N} live Workflows",
                  round(fig["startup"], 2), 2.0, " s")
    goals.equal("live Workflows the restarted service found", fig["found"], N)
    goals.equal("lifecycle jobs with an exception", fig["failed"], 0)
    goals.equal("stuck (jobs not inactive in time)", fig["stuck"], 0)
    goals.equal("leaked (Workflows, ssds down, holds)", fig["leaked"], 0)
    return goals


if __name__ == "__main__":
    sys.exit(main())
