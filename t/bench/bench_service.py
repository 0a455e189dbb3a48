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
"""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path
from typing import Any

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


def lifecycle(h: Harness) -> None:
    stats0 = h.reactor.call(lambda: h.service.stats.as_dict())  # type: ignore[union-attr]
    t0, cpu0 = time.monotonic(), _cpu()
    done = 0
    live: list[int] = []
    submitted = 0
    while done < N:
        while submitted < N and len(live) < IN_FLIGHT:
            live.append(h.submit(XFS, nodes=1))
            submitted += 1
        first = live.pop(0)
        h.wait(first, timeout=300)
        done += 1
    wall, cpu = time.monotonic() - t0, _cpu() - cpu0
    h.wait_for(lambda: not h.service.engine.status()["jobs"], 300,  # type: ignore[union-attr]
               "every Workflow deleted")
    st = h.reactor.call(lambda: h.service.stats.as_dict())  # type: ignore[union-attr]
    failed = [j for j in h.jm.jobs.values() if j.exceptions]
    if failed:  # a lifecycle whose jobs failed measured nothing
        raise SystemExit(f"bench_service: {len(failed)} of {N} jobs failed, e.g."
                         f" {failed[0].exceptions[0]}")
    print(f"lifecycle jobs: {N} ({IN_FLIGHT} in flight), all completed, no exception")
    print(f"lifecycle throughput: {N / wall:.1f} jobs/s")
    print(f"lifecycle wall: {wall:.2f} s")
    print(f"reaction p50 (watch event in -> write out): {st['reaction_ms_p50']} ms")
    print(f"reaction p99: {st['reaction_ms_p99']} ms")
    print(f"engine time per job: {(st['engine_ms'] - stats0['engine_ms']) / N:.3f} ms")
    print(f"process CPU per job (service + job manager + k8s client): "
          f"{cpu * 1000 / N:.2f} ms")


def live_jobs(h: Harness) -> list[int]:
    ids = [h.submit(XFS, nodes=1, runtime=3600) for _ in range(N)]
    for jobid in ids:
        h.wait_event(jobid, "start", timeout=300)
    print(f"RSS with {N} live jobs: {_rss_mb():.0f} MB")
    return ids


def startup(h: Harness) -> None:
    h.stop_service()
    t0 = time.monotonic()
    h.start_service()
    h.wait_for(lambda: h.service.engine.status()["synced"]  # type: ignore[union-attr]
               and h.service.engine.status()["computes"] > 0,  # type: ignore[union-attr]
               60, "the service to sync")
    st: dict[str, Any] = h.status()
    ready = time.monotonic() - t0
    print(f"start-up to serving, El Capitan + {len(st['jobs'])} live Workflows: {ready:.2f} s")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kc = Path(tmp) / "kubeconfig"
        proc = start_subprocess(kc, "--system", "elcap", "--latency", "zero", timeout=120)
        try:
            h = Harness(system="elcap", emulator=RemoteEmulator(kc))  # type: ignore[arg-type]
            with h:
                lifecycle(h)
                ids = live_jobs(h)
                startup(h)
                for jobid in ids:
                    h.cancel(jobid)
                for jobid in ids:
                    h.wait(jobid, timeout=300)
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
