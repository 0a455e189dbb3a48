"""Compute nodes back while DataOut runs (issue 38): what a site gains.

The same workload runs twice through the harness (the real dws service
and libdws job machines, the emulated job manager's first-fit scheduler
and the DWS/NNF emulator of the kind system: 4 computes), once with
``release_computes = "after-teardown"`` (the reference's behaviour) and
once with ``"after-unmount"``: N rabbit jobs of one node with a copy_out
whose DataOut the emulator makes last D seconds (``flux-dws fault delay
--state DataOut``), submitted together with a backlog of M plain jobs
waiting for the same nodes.

    PYTHONPATH=src/python:build/src/python python t/bench/bench_release.py \\
        [--jobs N] [--plain M] [--dataout D] [--runtime S]

It prints, last, one line:

    release: N jobs, DataOut D s, node-seconds held after finish A
    (after-teardown) vs B (after-unmount), backlog drained in X s vs Y s,
    stuck S, leaked L

node-seconds held after finish: per rabbit job, from its ``finish`` event
(its tasks are done) to its ``free`` (its nodes go back), times its nodes,
summed.  backlog drained: from the first submission to the last job's
``clean``.  stuck: jobs not inactive, and rabbit jobs whose DataOut and
Teardown records never came; leaked: Workflows left and ssd vertices still
down in Fluxion 30 s after the last Teardown record.  Goals: B at most 1
node-second per node beyond PostRun (a line before the last gives B per
job and PostRun's own time), Y well below X, S = L = 0: it exits 1
when S or L is not 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

STAGED = ["#DW jobdw type=xfs capacity=10GiB name=scratch",
          "#DW copy_out source=$DW_JOB_scratch/ destination=/lus/global/out"]
WAIT = 600.0  # seconds any one wait may take before the run is called stuck


def run(mode: str, jobs: int, plain: int, dataout: float,
        runtime: float) -> dict[str, Any]:
    from flux_dws.emulator.faults import Fault
    from flux_dws.harness import Harness
    out: dict[str, Any] = {}
    # 36 ssd vertices a rabbit, as flux dws2jgf makes the kind system's
    with Harness(config={"release_computes": mode}, ssds_per_rabbit=36) as h:
        assert h.emulator.controllers is not None
        h.emulator.controllers.faults.add(Fault(state="DataOut", severity="delay",
                                                seconds=dataout))
        t0 = time.monotonic()
        rabbit = [h.submit(STAGED, nodes=1, runtime=runtime) for _ in range(jobs)]
        others = [h.submit(None, nodes=1, runtime=runtime) for _ in range(plain)]
        stuck = 0
        for jobid in rabbit + others:
            try:
                h.wait(jobid, timeout=WAIT)
            except TimeoutError:
                stuck += 1
        drained = time.monotonic() - t0
        # the released jobs' DataOut and Teardown go on after their end
        for jobid in rabbit:
            try:
                h.wait_for(lambda j=jobid: "data.dws.teardown" in h.jm.jobs[j].kvs,
                           timeout=WAIT, what=f"job {jobid}'s Teardown record")
            except TimeoutError:
                stuck += 1
        held, postrun, per_job = 0.0, [], []
        for jobid in rabbit:
            job = h.reactor.call(lambda j=jobid: h.jm.jobs[j])
            finish, free = job.event_time("finish"), job.event_time("free")
            start = job.event_time("epilog-start")
            end = job.event_time("epilog-finish")
            if finish is None or free is None:
                continue
            held += (free - finish) * job.nodes
            per_job.append((free - finish) / job.nodes)
            if start is not None and end is not None:
                postrun.append(end - start)
        # the last Workflows go and the last holds are lifted a moment
        # after the last record (h.left_behind waits for them)
        wfs, down, _ = h.left_behind()
        if wfs or down:
            print(f"{mode}: leaked Workflows {wfs}, ssds down {down}", flush=True)
        leaked = len(wfs) + len(down)
        out.update(drained=drained, held=held, stuck=stuck, leaked=leaked,
                   per_job=statistics.median(per_job) if per_job else 0.0,
                   epilog=statistics.median(postrun) if postrun else 0.0)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=50, help="rabbit jobs with a copy_out (50)")
    p.add_argument("--plain", type=int, default=50, help="plain jobs behind them (50)")
    p.add_argument("--dataout", type=float, default=10.0, help="seconds DataOut lasts (10)")
    p.add_argument("--runtime", type=float, default=0.2, help="seconds each job runs (0.2)")
    args = p.parse_args([] if argv is None else argv)
    late = run("after-teardown", args.jobs, args.plain, args.dataout, args.runtime)
    early = run("after-unmount", args.jobs, args.plain, args.dataout, args.runtime)
    for name, r in (("after-teardown", late), ("after-unmount", early)):
        print(f"{name}: node-seconds held after finish per job (median) "
              f"{r['per_job']:.3f}, epilog (PostRun and the release) {r['epilog']:.3f} s, "
              f"backlog drained in {r['drained']:.1f} s", flush=True)
    print(f"release: {args.jobs} jobs, DataOut {args.dataout:g} s, node-seconds held after"
          f" finish {late['held']:.1f} (after-teardown) vs {early['held']:.1f}"
          f" (after-unmount), backlog drained in {late['drained']:.1f} s vs"
          f" {early['drained']:.1f} s, stuck {late['stuck'] + early['stuck']},"
          f" leaked {late['leaked'] + early['leaked']}")
    stuck, leaked = late["stuck"] + early["stuck"], late["leaked"] + early["leaked"]
    if stuck or leaked:
        print(f"bench_release: failed: stuck {stuck}, leaked {leaked} (both must be 0)",
              file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
