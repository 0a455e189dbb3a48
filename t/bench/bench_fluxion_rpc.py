"""What sending rabbit health to Fluxion costs, under a real broker.

bench_health.py times the decisions; this times the sending they lead to.
Fluxion has no bulk ``set_status`` (one RPC per ssd vertex), so the
question is what 25,056 of them (El Capitan's start-up on a fresh graph)
cost through the Python bindings the service uses, pipelined as the
service sends them (every request out, then the answers as they come).

Needs flux-core and Fluxion on PATH; prints why it is skipped otherwise.
A 4-broker instance runs Fluxion on the kind system's flux dws2jgf graph
(72 ssd vertices).  The vertices are cycled through so every RPC changes
a vertex's status (Fluxion's mark is a no-op for an unchanged one), and
half of them are ``up`` (each makes Fluxion reconsider its blocked jobs:
there are none here).  Also timed: Fluxion's ``find status=down`` answer
(the service's question at start and after a Fluxion restart).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
RPCS = 25_056

# runs inside the instance with the broker's Python
CLIENT = r"""
import json, sys, time
import flux

n = int(sys.argv[1])
h = flux.Flux()
R = json.load(open(sys.argv[2]))
paths = [v["metadata"]["paths"]["containment"] for v in R["scheduling"]["graph"]["nodes"]
         if v["metadata"]["type"] == "ssd"]

def find():
    t0 = time.perf_counter()
    h.rpc("sched-fluxion-resource.find", {"criteria": "status=down", "format": "jgf"}).get()
    return time.perf_counter() - t0

print(f"SSDS {len(paths)}")
print(f"FIND_ALL_DOWN {find():.6f}")
left = [n]
failed = [0]

def then(f):
    try:
        f.get()
    except OSError:
        failed[0] += 1
    left[0] -= 1
    if left[0] == 0:
        h.reactor_stop()

t0 = time.perf_counter()
for i in range(n):
    # up, then down, ...: each RPC changes its vertex
    status = "up" if (i // len(paths)) % 2 == 0 else "down"
    h.rpc("sched-fluxion-resource.set_status",
          {"resource_path": paths[i % len(paths)], "status": status}).then(then)
sent = time.perf_counter() - t0
h.reactor_run()
total = time.perf_counter() - t0
print(f"SENT {sent:.6f}")
print(f"TOTAL {total:.6f}")
print(f"FAILED {failed[0]}")
t0 = time.perf_counter()
for p in paths:
    h.rpc("sched-fluxion-resource.set_status", {"resource_path": p, "status": "up"}).get()
print(f"SEQUENTIAL {len(paths)} {time.perf_counter() - t0:.6f}")
print(f"FIND_NONE_DOWN {find():.6f}")
"""


def main() -> None:
    flux = shutil.which("flux")
    if flux is None:
        print("bench_fluxion_rpc: skipped: flux-core is not installed (no 'flux' on PATH)")
        return
    with tempfile.TemporaryDirectory(prefix="bench-fluxion-") as tmp:
        d = Path(tmp)
        R = d / "R.json"
        env = dict(os.environ)
        env["PYTHONPATH"] = f"{TOP / 'src/python'}:{TOP / 'build/src/python'}:" + \
            env.get("PYTHONPATH", "")
        with R.open("w") as out:
            subprocess.run([sys.executable, "-m", "flux_dws", "dws2jgf", "--cluster-name",
                            "kind", "--from-config",
                            str(TOP / "t/data/rabbitmapping/kind-resource.toml"),
                            str(TOP / "t/data/rabbitmapping/kind.json")],
                           stdout=out, check=True, env=env)
        (d / "conf").mkdir()
        (d / "conf/instance.toml").write_text(
            f'[resource]\nnoverify = true\npath = "{R}"\n'
            '[sched-fluxion-resource]\nmatch-format = "rv1"\n')
        (d / "client.py").write_text(CLIENT)
        run = subprocess.run(
            [flux, "start", "-s4", "--test-hosts=compute-[01-04]", f"--config-path={d / 'conf'}",
             "sh", "-c",
             'flux module stats sched-fluxion-resource >/dev/null 2>&1'
             ' || { echo "NOFLUXION"; exit 0; };'
             f' flux python {d / "client.py"} {RPCS} {R}'],
            capture_output=True, text=True, env=env)
        out = dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
        if "NOFLUXION" in run.stdout:
            print("bench_fluxion_rpc: skipped: Fluxion (sched-fluxion-resource) is not loaded")
            return
        if run.returncode != 0 or "TOTAL" not in out:
            print(f"bench_fluxion_rpc: failed: {run.stdout[-800:]}{run.stderr[-800:]}")
            sys.exit(1)
    total = float(out["TOTAL"])
    seq_n, seq_t = out["SEQUENTIAL"].split()
    print(f"Fluxion set_status, {RPCS} RPCs pipelined over {out['SSDS']} ssd vertices: "
          f"{total:.2f} s ({total / RPCS * 1e6:.0f} us each, {RPCS / total:,.0f}/s; "
          f"sending took {float(out['SENT']):.2f} s; {out['FAILED']} failed)")
    print(f"Fluxion set_status one at a time: {seq_n} in {float(seq_t) * 1000:.0f} ms "
          f"({float(seq_t) / int(seq_n) * 1e6:.0f} us each)")
    print(f"Fluxion find status=down: {float(out['FIND_ALL_DOWN']) * 1000:.1f} ms with every "
          f"ssd down, {float(out['FIND_NONE_DOWN']) * 1000:.1f} ms with none")


if __name__ == "__main__":
    main()
