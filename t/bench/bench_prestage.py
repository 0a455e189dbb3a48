"""Storage staged before the nodes (issue 46): what a site gains.

The same workload runs twice through the harness (the real dws service
and libdws job machines, the emulated job manager's first-fit scheduler
and the DWS/NNF emulator of the kind system: 4 computes, 2 rabbits of 36
ssd vertices; ``--type xfs``: below), once with ``rabbit.prestage =
"never"`` (today: nodes
first, then Setup and DataIn in the prolog) and once with ``"always"``:
N one-node rabbit jobs with a Lustre ``jobdw`` and a ``copy_in`` whose
data movement the emulator makes last D seconds (``flux-dws fault delay
--kind datamovement --state DataIn``), submitted together with a backlog
of M plain jobs waiting for the same nodes.

    PYTHONPATH=src/python:build/src/python python t/bench/bench_prestage.py \\
        [--type lustre|xfs] [--jobs N] [--plain M] [--datain D] [--runtime S]

``--type xfs`` (issue 54) runs node-local storage instead, on the
rzadams system (8 rabbits of 16 computes, 36 ssd vertices each): the
rabbit jobs cycle through 1 node, one chassis (16) and two chassis (32),
each with an xfs ``jobdw`` and a ``copy_in`` into it, and the plain jobs
behind them ask for 16 nodes each.  Pre-staged, each is set up on whole
chassis and its jobspec then holds the scheduler to them.

It prints, last, one line:

    prestage: N jobs, DataIn D s, node-seconds held before start A (today)
    vs B (prestaged), backlog drained in X s vs Y s, stuck G, leaked H

node-seconds held before start: per rabbit job, from its ``alloc`` (its
nodes are its) to its ``start`` (its tasks run), times its nodes, summed.
backlog drained: from the first submission to the last job's ``clean``.
stuck: jobs not inactive in time; leaked: Workflows left, ssd vertices
still down in Fluxion and holds still listed 30 s after the last job
ended.  Goals: B per job no more than PreRun's own time plus 1 s per node
(the line before the last gives both: the medians of the prestaged run's
jobs), Y below X, G = H = 0; for ``--type xfs`` the issue's: B no more
than A / 5, Y no more than X, G = H = 0.  Each goal is printed met or
missed after the line (``goals.py``); it exits 1, naming the goals, when
one is missed.

``--node-wait W`` (xfs) runs the pre-staged workload a third time with
``rabbit.prestage_node_wait = W``: the jobs whose chassis stay busy that
long are let go of them and staged again with their nodes; it prints how
many were given up and what that run's nodes were held before start
(the cost: their Setup and DataIn in the prolog again), with stuck and
leaked (goals: 0).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from goals import Goals

STAGED = ["#DW jobdw type=lustre capacity=10GiB name=lus",
          "#DW copy_in source=/lus/global/in destination=$DW_JOB_lus/"]
XFS = ["#DW jobdw type=xfs capacity=10GiB name=scratch",
       "#DW copy_in source=/p/lslide/in destination=$DW_JOB_scratch/"]
XFS_NODES = (1, 16, 32)  # one node, one chassis, two chassis of rzadams
XFS_PLAIN_NODES = 16
WAIT = 900.0  # seconds any one wait may take before the run is called stuck


def run(mode: str, jobs: int, plain: int, datain: float, runtime: float,
        kind: str = "lustre", node_wait: float | None = None) -> dict[str, Any]:
    from flux_dws.emulator.faults import Fault
    from flux_dws.harness import Harness
    out: dict[str, Any] = {}
    system = "rzadams" if kind == "xfs" else "kind"
    config: dict[str, Any] = {"prestage": mode}
    if node_wait is not None:
        config["prestage_node_wait"] = node_wait
    with Harness(system=system, config=config, ssds_per_rabbit=36) as h:
        assert h.emulator.controllers is not None
        h.emulator.controllers.faults.add(Fault(kind="datamovement", state="DataIn",
                                                severity="delay", seconds=datain))
        t0 = time.monotonic()
        if kind == "xfs":
            rabbit = [h.submit(XFS, nodes=XFS_NODES[i % len(XFS_NODES)], runtime=runtime)
                      for i in range(jobs)]
            others = [h.submit(None, nodes=XFS_PLAIN_NODES, runtime=runtime)
                      for _ in range(plain)]
        else:
            rabbit = [h.submit(STAGED, nodes=1, runtime=runtime) for _ in range(jobs)]
            others = [h.submit(None, nodes=1, runtime=runtime) for _ in range(plain)]
        stuck = 0
        for jobid in rabbit + others:
            try:
                h.wait(jobid, timeout=WAIT)
            except TimeoutError:
                stuck += 1
        drained = time.monotonic() - t0
        held, per_job, prolog, failed = 0.0, [], [], 0
        for jobid in rabbit:
            job = h.reactor.call(lambda j=jobid: h.jm.jobs[j])
            failed += bool(job.exceptions)
            alloc, start = job.event_time("alloc"), job.event_time("start")
            if alloc is None or start is None:
                continue
            held += (start - alloc) * job.nodes
            per_job.append((start - alloc) / job.nodes)
            begin, end = job.event_time("prolog-start"), job.event_time("prolog-finish")
            if begin is not None and end is not None:
                prolog.append(end - begin)

        wfs, down, holds = h.left_behind()
        if wfs or down or holds:
            print(f"{mode}: leaked Workflows {wfs}, ssds down {down}, holds {holds}", flush=True)
        given_up = sum("let go of its chassis: its pre-staged storage is torn down" in m
                       for _, m in h.link.logs)
        out.update(drained=drained, held=held, stuck=stuck + failed, given_up=given_up,
                   leaked=len(wfs) + len(down) + holds,
                   per_job=statistics.median(per_job) if per_job else 0.0,
                   prolog=statistics.median(prolog) if prolog else 0.0)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--type", choices=("lustre", "xfs"), default="lustre",
                   help="the rabbit jobs' storage (lustre)")
    p.add_argument("--jobs", type=int, default=50, help="rabbit jobs with a copy_in (50)")
    p.add_argument("--plain", type=int, default=50, help="plain jobs behind them (50)")
    p.add_argument("--datain", type=float, default=10.0, help="seconds DataIn lasts (10)")
    p.add_argument("--runtime", type=float, default=0.2, help="seconds each job runs (0.2)")
    p.add_argument("--node-wait", type=float, default=None,
                   help="xfs: a third run with rabbit.prestage_node_wait this short, to"
                        " count what giving pre-staged jobs up costs")
    args = p.parse_args([] if argv is None else argv)
    today = run("never", args.jobs, args.plain, args.datain, args.runtime, args.type)
    staged = run("always", args.jobs, args.plain, args.datain, args.runtime, args.type)
    for name, r in (("today", today), ("prestaged", staged)):
        print(f"{name}: node-seconds held before start per job (median) {r['per_job']:.3f},"
              f" its prolog (PreRun{', Setup, DataIn' if name == 'today' else ''})"
              f" {r['prolog']:.3f} s, backlog drained in {r['drained']:.1f} s", flush=True)
    print(f"prestage: {args.jobs} jobs, DataIn {args.datain:g} s, node-seconds held before"
          f" start {today['held']:.1f} (today) vs {staged['held']:.1f} (prestaged),"
          f" backlog drained in {today['drained']:.1f} s vs {staged['drained']:.1f} s,"
          f" stuck {today['stuck'] + staged['stuck']},"
          f" leaked {today['leaked'] + staged['leaked']}"
          + (" (xfs: 1, 16 and 32 nodes)" if args.type == "xfs" else ""))
    goals = (check_xfs if args.type == "xfs" else check)(today, staged)
    if args.node_wait is not None:
        short = run("always", args.jobs, args.plain, args.datain, args.runtime, args.type,
                    args.node_wait)
        print(f"prestage_node_wait {args.node_wait:g} s: given up {short['given_up']} of"
              f" {args.jobs} jobs (staged again with their nodes), node-seconds held before"
              f" start {short['held']:.1f} (against {staged['held']:.1f} with none given up,"
              f" {today['held']:.1f} today), backlog drained in {short['drained']:.1f} s,"
              f" stuck {short['stuck']}, leaked {short['leaked']}", flush=True)
        goals.equal("node wait run: stuck", short["stuck"], 0)
        goals.equal("node wait run: leaked", short["leaked"], 0)
    return goals.status()


def check(today: dict[str, Any], staged: dict[str, Any]) -> Goals:
    """The docstring's goals against the two runs' figures (``run``'s)."""
    goals = Goals("bench_prestage")
    goals.at_most("prestaged: node-seconds held before start per job (median), against"
                  " its PreRun prolog (median) + 1 s per node", round(staged["per_job"], 3),
                  round(staged["prolog"] + 1.0, 3), " s")
    goals.check("backlog drained sooner prestaged than today", staged["drained"] <
                today["drained"], f"{staged['drained']:.1f} s vs {today['drained']:.1f} s")
    goals.equal("stuck (jobs not inactive in time, or failed)",
                today["stuck"] + staged["stuck"], 0)
    goals.equal("leaked (Workflows, ssds down, holds)", today["leaked"] + staged["leaked"], 0)
    return goals


def check_xfs(today: dict[str, Any], staged: dict[str, Any]) -> Goals:
    """Issue 54's goals for node-local storage: B <= A / 5, Y <= X."""
    goals = Goals("bench_prestage --type xfs")
    goals.at_most("prestaged: node-seconds held before start, against a fifth of today's",
                  round(staged["held"], 1), round(today["held"] / 5, 1))
    goals.at_most("backlog drained prestaged, against today", round(staged["drained"], 1),
                  round(today["drained"], 1), " s")
    goals.equal("stuck (jobs not inactive in time, or failed)",
                today["stuck"] + staged["stuck"], 0)
    goals.equal("leaked (Workflows, ssds down, holds)", today["leaked"] + staged["leaked"], 0)
    return goals


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
