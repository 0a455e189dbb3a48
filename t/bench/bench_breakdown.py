"""Breakdown rewrite and Servers allocation for an El Capitan-size job.

An 11,136-node job on a 696-rabbit system (16 computes per rabbit) with an
xfs and a lustre directive (profile with combined MGT/MDT): the jobspec
rewrite, the per-rabbit node counts from the job's hosts, and the Servers
allocationSets of both breakdowns, per call in µs through the Python API.
"""

from __future__ import annotations

import timeit

from flux_dws.breakdown import RabbitMap, allocation_sets, rewrite_resources
from flux_dws.dwsim import breakdown as nnf
from flux_dws.hostlist import Hostlist

N, PER = 11136, 16
HOSTS = [f"elcap{1001 + i}" for i in range(N)]
MAP = {h: f"elcap{201 + i // PER}" for i, h in enumerate(HOSTS)}
PROFILE = {"lustreStorage": {"combinedMgtMdt": True, "ostOptions": {"scale": 5}}}


def per_call_us(fn: object, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6  # type: ignore[arg-type]


def main() -> None:
    xfs = nnf.storage_breakdown("#DW jobdw type=xfs capacity=100GiB name=xx", {})
    lus = nnf.storage_breakdown("#DW jobdw type=lustre capacity=2PiB name=ll", PROFILE)
    bds = [{"status": {"storage": {"allocationSets": xfs}}},
           {"status": {"storage": {"allocationSets": lus}}}]
    resources = [{"type": "node", "count": N, "with": [
        {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 96}]}]}]
    t = per_call_us(lambda: rewrite_resources(resources, bds), 2000)
    print(f"jobspec rewrite (2 breakdowns): {t:.1f} µs")
    t_map = per_call_us(lambda: RabbitMap({"computes": MAP}), 5)
    print(f"prepare the rabbit map (once per service start): {t_map:.0f} µs")
    rmap = RabbitMap({"computes": MAP})
    nodelist = Hostlist(HOSTS).encode()  # as R's nodelist carries it
    t_counts = per_call_us(lambda: rmap.counts(nodelist), 50)
    print(f"rabbit node counts from the job's 11,136 hosts: {t_counts:.0f} µs")
    counts = rmap.counts(nodelist)
    assert len(counts) == 696
    for name, sets in (("xfs", xfs), ("lustre", lus)):
        t = per_call_us(lambda s=sets: allocation_sets({"allocationSets": s}, counts), 200)
        print(f"Servers allocationSets, {name} on 696 rabbits: {t:.0f} µs")
    def setup() -> None:
        c = rmap.counts(nodelist)
        for s in (xfs, lus):
            allocation_sets({"allocationSets": s}, c)
    total = per_call_us(setup, 20)
    print(f"counts + both allocations (what dws.setup does): {total:.0f} µs")


if __name__ == "__main__":
    main()
