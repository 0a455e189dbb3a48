"""flux dws2jgf at El Capitan scale, and at 1/4 and 1/16 of it.

Input: computes elcap[1001-12136] with 96 cores and 4 GPUs each, 696
rabbits of 16 computes, 30,659,987,046,400 bytes per rabbit, 36 chunks.
The command runs as a subprocess (as a site runs it) writing to /dev/null;
wall time and peak RSS come from the child's rusage.  Goal on a 2-core
machine: at most 1.5 s and 150 MB for the full size, growing linearly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from flux_dws.libdws.resource_config import R_from_config

CAPACITY = 30659987046400


def system(n_rabbits: int) -> tuple[str, dict[str, object]]:
    n = n_rabbits * 16
    R = R_from_config([{"hosts": f"elcap[1001-{1000 + n}]", "cores": "0-95", "gpus": "0-3"}])
    computes: dict[str, str] = {}
    rabbits: dict[str, object] = {}
    for i in range(n_rabbits):
        lo = 1001 + 16 * i
        name = f"elcap{201 + i}"
        rabbits[name] = {"capacity": CAPACITY, "hostlist": f"elcap[{lo}-{lo + 15}]"}
        computes.update({f"elcap{h}": name for h in range(lo, lo + 16)})
    return R, {"computes": computes, "rabbits": rabbits}


def run_once(R: str, mapping_path: str) -> tuple[float, float, int]:
    cmd = [sys.executable, "-m", "flux_dws.cli.dws2jgf", "--cluster-name", "elcap",
           mapping_path]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as inp:
        inp.write(R.encode())
        inp.seek(0)
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=inp, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"dws2jgf failed with exit {proc.returncode}")
        size = os.fstat(out.fileno()).st_size
    return wall, usage.ru_maxrss / 1024, size


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        for n_rabbits, label in ((44, "1/16"), (174, "1/4"), (696, "full")):
            R, mapping = system(n_rabbits)
            path = Path(d) / f"map{n_rabbits}.json"
            path.write_text(json.dumps(mapping))
            best = min(run_once(R, str(path)) for _ in range(3))
            wall, rss, size = best
            print(f"dws2jgf {label} ({n_rabbits * 16} computes) wall: {wall:.3f} s")
            print(f"dws2jgf {label} peak RSS: {rss:.1f} MB")
            print(f"dws2jgf {label} output: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
