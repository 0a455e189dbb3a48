"""PBS_cray_atom: what the hook costs a job start and end.

Goal: the hook's own work per event (its requests over the socket) stays
in the low milliseconds, negligible next to ATOM's work (up to 300 s, the
specification's alarm), and a 400 retry costs about three requests.
Measured through the PBS stand-in against the ATOM emulator on a UNIX
socket; every run compiles the hook afresh in a new namespace, as
pbs_python does, and the no-socket case shows that fixed cost.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from flux_dws.pbs.atom_emulator import Action, AtomEmulator
from flux_dws.pbs.harness import run_hook

RUNS = 200


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    d = Path(tempfile.mkdtemp(prefix="atombench", dir="/tmp"))
    try:
        with AtomEmulator(str(d / "atomd.sock")) as atom:
            config = json.dumps({"unix_socket_file": atom.socket_path})
            begin, end, retry = [], [], []
            for i in range(RUNS):
                jobid = f"{i}.bench"
                t0 = time.perf_counter()
                run_hook("execjob_begin", jobid=jobid, config=config)
                t1 = time.perf_counter()
                run_hook("execjob_end", jobid=jobid, config=config)
                t2 = time.perf_counter()
                begin.append(t1 - t0)
                end.append(t2 - t1)
            for i in range(RUNS // 4):
                atom.fault("POST", Action.status(400))
                t0 = time.perf_counter()
                run_hook("execjob_begin", jobid=f"r{i}.bench", config=config)
                retry.append(time.perf_counter() - t0)
            missing = json.dumps({"unix_socket_file": str(d / "none.sock")})
            skip = []
            for _ in range(RUNS):
                t0 = time.perf_counter()
                run_hook("execjob_begin", config=missing)
                skip.append(time.perf_counter() - t0)
        print(f"execjob_begin (POST) median: {_median_ms(begin):.2f} ms")
        print(f"execjob_end (DELETE) median: {_median_ms(end):.2f} ms")
        print(f"execjob_begin with 400 retry (POST, DELETE, POST) median:"
              f" {_median_ms(retry):.2f} ms")
        print(f"non-ATOM node (no socket) median: {_median_ms(skip):.2f} ms")
        print(f"POST over the socket (begin minus no-socket):"
              f" {_median_ms(begin) - _median_ms(skip):.2f} ms")
    finally:
        shutil.rmtree(d, ignore_errors=True)
