"""Rabbit health at El Capitan size: start-up apply and a storm of Storage events.

The system: 696 rabbits, 16 computes each (11,136 computes, elcap[1001-12136]),
36 ssd vertices per rabbit in the Fluxion graph (25,056), every broker online.
The dws service's engine (libdws through cffi, as the service runs it) is fed
the events the service would feed it; the Fluxion RPCs, drains and SystemStatus
patches it returns are counted, not sent, so the figures are the decisions'
own cost (the service's Flux and Kubernetes I/O runs on other threads).

1. Start-up: SystemConfiguration, graph, journal, then the Storage list (all
   Ready); the flush.  Printed: wall time from the Storage list to the flush's
   actions, and what they are.
2. Storm: 10,000 Storage watch events over 2 s of simulated arrival time
   (random rabbit; random status and link flips), the flush timer honoured on
   the simulated clock; the storm ends with 20 rabbits down and 20 links
   down, everything else as before.  Printed: RPCs sent against actual
   changes at the end, wall time to process, and settle time (last event to
   the last flush done, simulated clock + processing).
"""

from __future__ import annotations

import random
import time
from typing import Any

from flux_dws.engine import Engine

RABBITS = 696
PER = 16
SSDS = 36


def rabbit(i: int) -> str:
    return f"elcap{201 + i}"


def compute(i: int, k: int) -> str:
    return f"elcap{1001 + i * PER + k}"


def storage(i: int, status: str = "Ready", links: dict[int, str] | None = None) -> dict[str, Any]:
    links = links or {}
    return {"metadata": {"name": rabbit(i)}, "spec": {"state": "Enabled", "mode": "Live"},
            "status": {"status": status, "message": "", "access": {"computes": [
                {"name": compute(i, k), "status": links.get(k, "Ready")} for k in range(PER)]}}}


def count(actions: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for a in actions:
        key = a.get("topic") or a.get("kind") or a["action"]
        out[key] = out.get(key, 0) + 1
    return out


def startup(e: Engine) -> tuple[float, dict[str, int]]:
    sysconf = {"metadata": {"name": "default"}, "spec": {"storageNodes": [
        {"name": rabbit(i), "computesAccess": [{"name": compute(i, k), "index": k}
                                               for k in range(PER)]}
        for i in range(RABBITS)]}}
    e.event({"type": "sync", "kind": "SystemConfiguration", "objects": [sysconf], "now": 0})
    graph = {"ssds": {rabbit(i): [f"/elcap/chassis{i}/ssd{k}" for k in range(SSDS)]
                      for i in range(RABBITS)},
             "nodes": {compute(i, k): f"/elcap/chassis{i}/{compute(i, k)}"
                       for i in range(RABBITS) for k in range(PER)}}
    e.event({"type": "graph", "graph": graph, "now": 0})
    n = RABBITS * PER
    e.event({"type": "journal", "synced": True, "now": 0, "events": [
        {"name": "restart", "context": {"ranks": f"0-{n - 1}", "online": f"0-{n - 1}",
                                        "nodelist": f"elcap[1001-{1000 + n}]"}}]})
    objs = [storage(i) for i in range(RABBITS)]
    t0 = time.perf_counter()
    e.event({"type": "sync", "kind": "Storage", "objects": objs, "now": 0})
    actions = e.event({"type": "timer", "key": "health-flush", "now": 0.02})
    return time.perf_counter() - t0, count(actions)


def storm(e: Engine, events: int = 10_000, span: float = 2.0, seed: int = 1) -> None:
    rng = random.Random(seed)
    now = 1.0
    due: float | None = None
    sent: dict[str, int] = {}
    flushes = 0
    flush_wall = 0.0

    def take(actions: list[dict[str, Any]]) -> None:
        nonlocal due
        for a in actions:
            if a["action"] == "timer-start" and a["key"] == "health-flush":
                due = now + a["after"] if due is None else min(due, now + a["after"])
        for k, v in count([a for a in actions if a["action"] != "timer-start"
                           and a["action"] != "log"]).items():
            sent[k] = sent.get(k, 0) + v

    def flush_until(t: float) -> None:
        nonlocal due, flushes, flush_wall, now
        while due is not None and due <= t:
            now, due = due, None
            t0 = time.perf_counter()
            take(e.event({"type": "timer", "key": "health-flush", "now": now}))
            flush_wall += time.perf_counter() - t0
            flushes += 1

    # the final state: 20 rabbits down, 20 links down elsewhere
    down = set(rng.sample(range(RABBITS), 20))
    link_down = {i: rng.randrange(PER) for i in rng.sample(
        [i for i in range(RABBITS) if i not in down], 20)}
    final = {i: storage(i, "Offline" if i in down else "Ready",
                        {link_down[i]: "Offline"} if i in link_down else None)
             for i in set(down) | set(link_down)}
    plan: list[dict[str, Any]] = []
    for _ in range(events - len(final)):
        i = rng.randrange(RABBITS)
        plan.append(storage(i, rng.choice(["Ready", "Ready", "Offline", "Failed"]),
                            {rng.randrange(PER): rng.choice(["Ready", "Offline"])}))
    touched = {ev["metadata"]["name"] for ev in plan}
    # everything the storm touched goes back to its final state at the end
    for name in sorted(touched):
        i = int(name[5:]) - 201
        if i not in final:
            plan.append(storage(i))
    plan.extend(final.values())
    step = span / len(plan)
    t0 = time.perf_counter()
    for k, obj in enumerate(plan):
        now = 1.0 + k * step
        flush_until(now)
        take(e.event({"type": "watch", "kind": "Storage", "event": "MODIFIED", "object": obj,
                      "now": now}))
    wall = time.perf_counter() - t0
    last = now
    t1 = time.perf_counter()
    flush_until(float("inf"))
    settle_work = time.perf_counter() - t1
    settle = (now - last) + settle_work
    actual = len(down) * SSDS  # set_status for the rabbits down at the end
    print(f"storm: {len(plan)} Storage events over {span:.1f} s (simulated), "
          f"{flushes} flushes; engine wall time {wall:.2f} s "
          f"({wall / len(plan) * 1e6:.0f} us/event, flushes {flush_wall:.2f} s)")
    print(f"storm: sent {sent}")
    set_status = sent.get("sched-fluxion-resource.set_status", 0)
    print(f"storm: at the end 20 rabbits down ({actual} set_status), 20 links down"
          f" (drains, badrabbit) -- set_status sent {set_status}"
          f" (the rest: flips that lasted past a 20 ms flush window)")
    print(f"storm: settle after the last event: {settle * 1000:.1f} ms"
          f" (flush delay 20 ms + {settle_work * 1000:.1f} ms of work)")


def main() -> None:
    e = Engine({"namespace": "default"})
    wall, actions = startup(e)
    print(f"start-up: {RABBITS} rabbits, {RABBITS * PER} computes, {RABBITS * SSDS} ssd vertices")
    print(f"start-up: Storage list to every action out: {wall * 1000:.0f} ms")
    print(f"start-up: actions {actions}")
    again = e.event({"type": "timer", "key": "health-flush", "now": 0.5})
    print(f"start-up: a second flush with nothing changed sends {len(again)} actions")
    storm(e)


if __name__ == "__main__":
    main()
