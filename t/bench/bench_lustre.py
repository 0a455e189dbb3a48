"""Lustre placement on El Capitan's graph: spread (issue 27) against today.

100 Lustre jobs of 1-64 nodes and 10-500 TiB (seeded, reproducible) arrive
one after the other on El Capitan's graph (696 rabbits ``elcap[201-896]``
of 30,659,987,046,400 bytes cut into 36 ssd vertices of 793 GiB, 16
computes each); up to 40 run at once, each finishing at a random point of
the stream (so free space is fragmented as on a busy machine).  A job that
does not fit waits until enough have finished; a job that could not fit
even on an empty machine is refused.

* spread (``[rabbit.lustre] spread = true``): the jobspec rewrite of libdws
  (``node(N), ssd(K)``); Fluxion 0.54's match of that form is *simulated*
  as t3300 and doc/guide/lustre-placement.rst saw it behave: nodes first
  fit, then the free ssd vertices taken rabbit by rabbit in graph order
  (whole rabbits first, the remainder on the next); the job's R is built
  from that and the Servers allocation sets come from libdws
  (``flux_dws.libdws.lustre.allocation_sets``) exactly as the service makes them.
* today (the off switch): the node-local rewrite (``slot(N){node, ssd(G)}``,
  G = ceil(C / N) GiB per node) on the job's own chassis, and the Servers
  sets of ``flux_dws.libdws.breakdown.allocation_sets`` (weighted by node counts).
  A job is refused when its own rabbits' drives can never hold it.

Imbalance of a job = the largest over the smallest OST capacity per rabbit
(1.0 for a job on one rabbit).  The last line is the headline.

``--fluxion``: the same stream against a real Fluxion (FLUX_URI) loaded with
El Capitan's graph instead of the simulation: ``sched-fluxion-resource.match
allocate`` of the rewritten jobspec, ``cancel`` to release.  Recipe (one
broker; the other 11,135 nodes are marked up by this script):

    flux dws2jgf --cluster-name elcap --from-config res.toml elcap.json >R.json
      (res.toml: hosts = "elcap[1001-12136]", cores = "0"; elcap.json the
       rabbitmapping of etc/systems/elcap.yaml)
    flux start -s1 --test-hosts=elcap1001 --config-path=conf ...
      (conf: [resource] noverify, path = R.json; [sched-fluxion-resource]
       match-format = "rv1")
    PYTHONPATH=src/python:build/src/python:/opt/flux/lib/flux/python3.11 \
        FLUX_URI=... python t/bench/bench_lustre.py --fluxion R.json
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

from flux_dws.dwsim import breakdown as nnf
from flux_dws.libdws import lustre
from flux_dws.libdws.breakdown import allocation_sets

GiB = 1 << 30
TiB = 1 << 40
RABBITS = 696
PER = 16
CHUNKS = 36
CAPACITY = 30659987046400
VERTEX_GIB = CAPACITY // CHUNKS // GiB  # 793
JOBS = 100
RUNNING = 40


def imbalance(sets: list[dict[str, Any]]) -> tuple[float, int]:
    per: dict[str, int] = {}
    for s in sets:
        if s["label"] == "ost":
            for e in s["storage"]:
                per[e["name"]] = per.get(e["name"], 0) + s["allocationSize"] * e["allocationCount"]
    return max(per.values()) / min(per.values()), len(per)


class Machine:
    def __init__(self) -> None:
        self.free_nodes = [PER] * RABBITS        # free computes per chassis
        self.free_vtx = [CHUNKS] * RABBITS       # free ssd vertices per chassis
        self.held: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}

    def release(self, job: int) -> None:
        nodes, vtx = self.held.pop(job)
        for c, n in nodes:
            self.free_nodes[c] += n
        for c, v in vtx:
            self.free_vtx[c] += v

    def take_nodes(self, n: int) -> list[tuple[int, int]] | None:
        out, left = [], n
        for c in range(RABBITS):
            if left == 0:
                break
            k = min(left, self.free_nodes[c])
            if k:
                out.append((c, k))
                left -= k
        return out if left == 0 else None

    def spread(self, job: int, n: int, gib: int) -> dict[str, int] | None:
        """node(n), ssd(gib): nodes first fit, then vertices rabbit by rabbit."""
        nodes = self.take_nodes(n)
        need = -(-gib // VERTEX_GIB)
        if nodes is None or sum(self.free_vtx) < need:
            return None
        vtx = []
        for c in range(RABBITS):
            if need == 0:
                break
            k = min(need, self.free_vtx[c])
            if k:
                vtx.append((c, k))
                need -= k
        for c, k in nodes:
            self.free_nodes[c] -= k
        for c, k in vtx:
            self.free_vtx[c] -= k
        self.held[job] = (nodes, vtx)
        return {f"elcap{201 + c}": k * VERTEX_GIB for c, k in vtx}

    def local(self, job: int, n: int, gib_per_node: int) -> dict[str, int] | None:
        """slot(n){node, ssd(G)}: each node's G GiB on its own chassis."""
        v = -(-gib_per_node // VERTEX_GIB)  # exclusive vertices per node
        out, left = [], n
        for c in range(RABBITS):
            if left == 0:
                break
            k = min(left, self.free_nodes[c], self.free_vtx[c] // v)
            if k:
                out.append((c, k))
                left -= k
        if left:
            return None
        for c, k in out:
            self.free_nodes[c] -= k
            self.free_vtx[c] -= k * v
        self.held[job] = (out, [(c, k * v) for c, k in out])
        return {f"elcap{201 + c}": k for c, k in out}


class RealFluxion:
    """The Machine interface over a running Fluxion (sched-fluxion-resource)."""

    def __init__(self, graph_R: str) -> None:
        import flux  # type: ignore[import-not-found]

        self.h = flux.Flux()
        R = json.load(open(graph_R))
        paths = [v["metadata"]["paths"]["containment"] for v in R["scheduling"]["graph"]["nodes"]
                 if v["metadata"]["type"] in ("ssd", "node")]
        for i in range(0, len(paths), 2000):
            fs = [self.h.rpc("sched-fluxion-resource.set_status",
                             {"resource_path": p, "status": "up"}) for p in paths[i:i + 2000]]
            for f in fs:
                f.get()
        self.held: set[int] = set()
        self.base = 1 << 40

    def _match(self, job: int, resources: list[dict[str, Any]]) -> dict[str, Any] | None:
        spec = {"version": 1, "resources": resources,
                "tasks": [{"command": ["true"], "slot": "task", "count": {"per_slot": 1}}],
                "attributes": {"system": {"duration": 0}}}
        try:
            r = self.h.rpc("sched-fluxion-resource.match", {
                "cmd": "allocate", "jobid": self.base + job, "jobspec": json.dumps(spec)}).get()
        except OSError:
            return None
        self.held.add(job)
        R: dict[str, Any] = json.loads(r["R"])
        return R

    def release(self, job: int) -> None:
        self.held.discard(job)
        self.h.rpc("sched-fluxion-resource.cancel", {"jobid": self.base + job}).get()

    @staticmethod
    def node(n: int) -> dict[str, Any]:
        return {"type": "node", "count": n, "with": [
            {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}]}

    def spread(self, job: int, n: int, gib: int) -> dict[str, int] | None:
        R = self._match(job, [self.node(n), {"type": "ssd", "count": gib, "exclusive": True}])
        return None if R is None else lustre.reserved_of_R(R)

    def local(self, job: int, n: int, gib_per_node: int) -> dict[str, int] | None:
        slot = {"type": "slot", "count": n, "label": "rabbit", "with": [
            {"type": "node", "count": 1, "with": [{"type": "slot", "count": 1, "label": "task",
                                                   "with": [{"type": "core", "count": 1}]}]},
            {"type": "ssd", "count": gib_per_node, "exclusive": True}]}
        R = self._match(job, [slot])
        if R is None:
            return None
        counts: dict[str, int] = {}
        paths = {v["metadata"]["paths"]["containment"]: v["metadata"]
                 for v in R["scheduling"]["graph"]["nodes"]}
        for path, md in paths.items():
            if md["type"] == "node":
                rabbit = paths[path.rsplit("/", 1)[0]]["properties"]["rabbit"]
                counts[rabbit] = counts.get(rabbit, 0) + 1
        return counts

    def clear(self) -> None:
        for job in list(self.held):
            self.release(job)


def run(mode: str, jobs: list[tuple[int, int]], seed: int,
        conf: dict[str, Any] | None = None,
        real: RealFluxion | None = None) -> tuple[float, float, int, int]:
    rnd = random.Random(seed)
    m: Any = real if real is not None else Machine()
    running: list[int] = []
    worst, rabbits, placed, refused = 1.0, 0, 0, 0
    for j, (n, tib) in enumerate(jobs):
        sets = nnf.storage_breakdown(f"#DW jobdw type=lustre capacity={tib}TiB name=l", {})
        if mode == "spread":
            possible = -(-tib * 1024 * 33 // 32 // VERTEX_GIB) <= RABBITS * CHUNKS
        else:
            per_node = -(-tib * 1024 // n)
            possible = -(-per_node // VERTEX_GIB) * min(n, PER) <= CHUNKS
        if not possible:
            refused += 1
            continue
        while True:
            if mode == "spread":
                res, spread = lustre.rewrite(
                    [{"type": "node", "count": n}],
                    [{"status": {"ready": True, "storage": {"allocationSets": sets}}}],
                    {"spread": True, **(conf or {})})
                assert spread and res is not None
                got = m.spread(j, n, res[1]["count"])
            else:
                got = m.local(j, n, -(-tib * 1024 // n) + 8)
            if got is not None:
                break
            if not running:
                break
            m.release(running.pop(rnd.randrange(len(running))))
        if got is None:
            refused += 1
            continue
        if mode == "spread":
            out = lustre.allocation_sets(sets, got)
        else:
            out = allocation_sets({"allocationSets": sets}, got)
        r, k = imbalance(out)
        worst = max(worst, r)
        rabbits += k
        placed += 1
        running.append(j)
        if len(running) > RUNNING:
            m.release(running.pop(rnd.randrange(len(running))))
    if real is not None:
        real.clear()
    return worst, rabbits / max(placed, 1), placed, refused


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    real = RealFluxion(argv[1]) if argv[:1] == ["--fluxion"] else None
    rnd = random.Random(27)
    jobs = [(rnd.randint(1, 64), rnd.randint(10, 500)) for _ in range(JOBS)]
    print(f"Fluxion: {'real (FLUX_URI)' if real else 'simulated packing'}")
    w_old, u_old, p_old, r_old = run("today", jobs, 1, real=real)
    w_pk, u_pk, p_pk, r_pk = run("spread", jobs, 1, real=real)
    whole = {"whole_rabbit_gib": CHUNKS * VERTEX_GIB}
    w_new, u_new, p_new, r_new = run("spread", jobs, 1, whole, real=real)
    print(f"today (spread = false): {p_old} jobs placed, {r_old} refused (their own rabbits"
          f" can never hold them), max imbalance {w_old:.2f}, mean rabbits {u_old:.1f}")
    print(f"spread, packed (whole_rabbit_gib = 0): {p_pk} placed, {r_pk} refused,"
          f" max imbalance {w_pk:.2f}, mean rabbits {u_pk:.1f}")
    print(f"spread, whole rabbits (whole_rabbit_gib = {CHUNKS * VERTEX_GIB}): {p_new} placed,"
          f" {r_new} refused")
    print(f"lustre: {JOBS} jobs, max imbalance {w_new:.2f} (today {w_old:.2f}),"
          f" mean rabbits per job {u_new:.1f} (today {u_old:.1f}), refused {r_new}")


if __name__ == "__main__":
    main()
