"""Breakdown rewrite and Servers allocation for an El Capitan-size job.

An 11,136-node job (``elcap[1001-12136]``) on a 696-rabbit system
(``elcap[201-896]``, 16 computes per rabbit) with an xfs and a lustre
directive (default profile: ost, mdt, mgt): the jobspec rewrite, the
per-rabbit node counts from the job's hosts, and the Servers
allocationSets of both breakdowns, per call in µs through the Python API.
The headline figure is what Proposal plus Setup cost flux-dws per job: one
rewrite plus, for each breakdown, the allocation sets from the job's hosts.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable
from typing import Any

from flux_dws.dwsim import breakdown as nnf
from flux_dws.libdws.breakdown import RabbitMap, allocation_sets, rabbit_counts, rewrite_resources

N, PER = 11136, 16
HOSTS = [f"elcap{1001 + i}" for i in range(N)]
NODELIST = "elcap[1001-12136]"  # as R's nodelist carries it
MAP = {h: f"elcap{201 + i // PER}" for i, h in enumerate(HOSTS)}


def per_call_us(fn: Callable[[], Any], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> None:
    xfs = nnf.storage_breakdown("#DW jobdw type=xfs capacity=100GiB name=xx", {})
    lus = nnf.storage_breakdown("#DW jobdw type=lustre capacity=2PiB name=ll", {})
    bds = [{"status": {"ready": True, "storage": {"allocationSets": s}}} for s in (xfs, lus)]
    storages = [bd["status"]["storage"] for bd in bds]
    resources = [{"type": "node", "count": N, "with": [
        {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 96}]}]}]

    t = per_call_us(lambda: rewrite_resources(resources, bds), 2000)
    print(f"jobspec rewrite (2 breakdowns, 4 allocation sets): {t:.1f} µs")
    t = per_call_us(lambda: RabbitMap({"computes": MAP}), 5)
    print(f"prepare the rabbit map (once per service start): {t:.0f} µs")
    rmap = RabbitMap({"computes": MAP})
    t = per_call_us(lambda: rmap.counts(NODELIST), 50)
    print(f"rabbit node counts from the job's 11,136 hosts (hostlist, prepared map): {t:.0f} µs")
    t = per_call_us(lambda: rabbit_counts(HOSTS, MAP), 5)
    print(f"rabbit node counts from 11,136 host names and a fresh mapping: {t:.0f} µs")
    counts = rmap.counts(NODELIST)
    assert len(counts) == 696
    for name, storage in (("xfs", storages[0]), ("lustre", storages[1])):
        t = per_call_us(lambda s=storage: allocation_sets(s, counts), 200)
        print(f"Servers allocationSets from counts, {name} on 696 rabbits: {t:.0f} µs")
        t = per_call_us(lambda s=storage: rmap.allocation_sets(s, NODELIST), 200)
        print(f"Servers allocationSets from the hostlist, {name} on 696 rabbits: {t:.0f} µs")

    def setup_two_step() -> None:
        c = rmap.counts(NODELIST)
        for s in storages:
            allocation_sets(s, c)

    def proposal_and_setup() -> None:
        rewrite_resources(resources, bds)
        for s in storages:
            rmap.allocation_sets(s, NODELIST)

    t = per_call_us(setup_two_step, 50)
    print(f"Setup, counts then both allocations: {t:.0f} µs")
    t = per_call_us(proposal_and_setup, 50)
    print("breakdown rewrite plus Servers allocation for an 11,136-node job on a 696-rabbit"
          f" system (per call): {t:.0f} µs")


if __name__ == "__main__":
    main()
