"""The incumbent's incidents, replayed against the dws service (issue 44).

Through the flux-less harness (the real service: engine, kube layer,
watch and writer threads; the emulated job manager and Fluxion) on the
emulator's El Capitan system (11,136 computes, 696 rabbits) at zero
latency, run as a subprocess:

- flux-coral2 #439: Tuolumne's -N560 --coral2-chassis=70 job wasted
  minutes in its prolog.  Here a 560-node and a 1,120-node xfs job (the
  harness packs nodes: 35 and 70 rabbits, 560 and 1,120 ClientMounts):
  printed, the time from the service seeing PreRun done (its timeline in
  the job's KVS) to the dws_environment event in the job's eventlog.
- flux-coral2 #466: about 750 gfs2 jobs submitted at once hung the
  service until the systemd watchdog killed it.  Here 750 gfs2 jobs (4
  nodes, 100 GiB each) are submitted in one go while a second thread asks
  ``dws.status`` every 0.2 s; printed: the slowest and the p99 answer, how
  many jobs completed, and whether the service was restarted (never).
- flux-coral2 #470: a storm of 410 Gone on the watches.  While 200 xfs
  jobs run, 20 gusts 0.25 s apart each cut every open watch stream and
  make the next watch from a resourceVersion answer 410 Gone (the
  emulator's API faults, ``flux-dws fault expire-watches`` and
  ``drop-watches``).  Printed: the lists each watch made (one per 410 at
  most: no re-list storm), the jobs completed, and how long after the last
  gust the last job ended (bounded catch-up).  The 410s go to whichever
  watch reconnects first, so one watch may take two in a gust.

    PYTHONPATH=src/python:build/src/python python t/bench/bench_incidents.py

It prints one line per incident last; exits 1 when a job is stuck or
failed, or the watches listed more often than they were given 410 Gone.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from flux_dws.emulator import start_subprocess
from flux_dws.harness import Harness, RemoteEmulator

GFS2 = "#DW jobdw type=gfs2 capacity=100GiB name=shared"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def _p99(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * 0.99))] if xs else 0.0


def _storm(kubeconfig: Path, watches: int) -> None:
    """One gust: the next ``watches`` watches from a resourceVersion get 410
    Gone, then every open watch stream is cut (flux-dws fault, the
    emulator's API faults), so each watch reconnects into a 410."""
    for argv in (["expire-watches", "--count", str(watches)], ["drop-watches"]):
        subprocess.run([sys.executable, "-m", "flux_dws", "fault", "--kubeconfig",
                        str(kubeconfig), *argv], check=True, stdout=subprocess.DEVNULL)


def incident_466(h: Harness) -> bool:
    """750 gfs2 jobs at once; dws.status keeps answering."""
    stop = threading.Event()
    waits: list[float] = []

    def ask() -> None:
        while not stop.is_set():
            t0 = time.monotonic()
            h.status()
            waits.append(time.monotonic() - t0)
            stop.wait(0.2)

    sampler = threading.Thread(target=ask, name="bench-status", daemon=True)
    sampler.start()
    starts = h.services_started
    t0 = time.monotonic()
    ids = [h.submit(GFS2, nodes=4) for _ in range(750)]
    stuck = 0
    for jobid in ids:
        try:
            h.wait(jobid, timeout=900)
        except TimeoutError:
            stuck += 1
    wall = time.monotonic() - t0
    stop.set()
    sampler.join(10)
    failed = sum(1 for j in ids if h.job(j).exceptions)
    print(f"#466: 750 gfs2 jobs submitted at once: {750 - stuck - failed} completed,"
          f" {failed} failed, {stuck} stuck in {wall:.1f} s; dws.status answered"
          f" {len(waits)} times, slowest {max(waits, default=0) * 1000:.0f} ms,"
          f" p99 {_p99(waits) * 1000:.0f} ms; service restarts {h.services_started - starts}",
          flush=True)
    return stuck == 0 and failed == 0


def incident_470(h: Harness, kubeconfig: Path) -> bool:
    """A storm of 410 Gone on every watch while jobs run."""
    svc = h.service
    assert svc is not None
    watches: dict[str, Any] = svc.kube.watches  # type: ignore[attr-defined]
    before = {k: w.syncs for k, w in watches.items()}
    ids = [h.submit(XFS, nodes=1, runtime=5.0) for _ in range(200)]
    gusts = 20
    for _ in range(gusts):
        _storm(kubeconfig, len(watches))
        time.sleep(0.25)  # the storm's pace, not a synchronisation
    t_last = time.monotonic()
    stuck = 0
    for jobid in ids:
        try:
            h.wait(jobid, timeout=600)
        except TimeoutError:
            stuck += 1
    caught_up = time.monotonic() - t_last
    failed = sum(1 for j in ids if h.job(j).exceptions)
    lists = {k: w.syncs - before[k] for k, w in watches.items()}
    given = gusts * len(watches)  # 410s handed out, to whichever watch came first
    total = sum(lists.values())
    print(f"#470: {gusts} gusts of 410 Gone on every watch during 200 xfs jobs:"
          f" {200 - stuck - failed} completed, {failed} failed, {stuck} stuck; {total} lists for"
          f" {given} 410s ({', '.join(f'{k} {v}' for k, v in sorted(lists.items()))});"
          f" last job ended {caught_up:.1f} s after the last gust", flush=True)
    return stuck == 0 and failed == 0 and total <= given


def incident_439(h: Harness) -> bool:
    """The service's time from PreRun done to dws_environment posted."""
    ok = True
    for nodes in (560, 1120):
        jobid = h.submit(XFS, nodes=nodes, runtime=0.0)
        job = h.wait(jobid, timeout=600)
        when = {name: t for t, name, _ in job.eventlog}
        done = (job.kvs_get("data.dws.timeline.prerun") or {}).get("done")
        if job.exceptions or "dws_environment" not in when or not isinstance(done, float):
            print(f"#439: the {nodes}-node job did not run: {job.exceptions or job.events()}")
            ok = False
            continue
        chassis = -(-nodes // 16)
        print(f"#439: a {nodes}-node xfs job on {chassis} rabbits: PreRun done seen to"
              f" dws_environment posted {(when['dws_environment'] - done) * 1000:.1f} ms",
              flush=True)
    return ok


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        kc = Path(tmp) / "kubeconfig"
        proc = start_subprocess(kc, "--system", "elcap", "--latency", "zero", timeout=120)
        try:
            h = Harness(system="elcap", emulator=RemoteEmulator(kc))  # type: ignore[arg-type]
            with h:
                ok = incident_439(h)
                ok = incident_466(h) and ok
                ok = incident_470(h, kc) and ok
        finally:
            proc.terminate()
            proc.wait(30)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
