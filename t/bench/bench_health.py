"""Rabbit health at El Capitan size: start-up apply and a storm of Storage events.

The system: 696 rabbits, 16 computes each (11,136 computes, elcap[1001-12136]),
36 ssd vertices per rabbit in the Fluxion graph (25,056), every broker online.
The dws service's engine (libdws through cffi, as the service runs it) is fed
the events the service would feed it; the Fluxion RPCs, drains and SystemStatus
patches it returns are counted, not sent, so the figures are the decisions'
own cost (the service's Flux and Kubernetes I/O runs on other threads).

1. Start-up: SystemConfiguration, graph, journal, the engine's find and
   Fluxion's answer (every ssd down, as flux dws2jgf writes them: 25,753
   JGF vertices, handed to the engine as the service does; timed), then the
   Storage list (all Ready); the flush.  Printed: wall time from the Storage list to
   the flush's actions, and what they are.
2. Storm: 10,000 Storage watch events over 2 s of simulated arrival time
   (random rabbit; random status and link flips), the flush timer honoured on
   the simulated clock; the storm ends with 20 rabbits down and 20 links
   down, everything else as before.  Printed: RPCs sent against actual
   changes at the end, wall time to process, and settle time (last event to
   the last flush done, simulated clock + processing).
   The storm again with JOBS (5,000) rabbit jobs running (their Workflows
   in PreRun, none pre-staged): every rabbit-health input may send jobs
   waiting for room to pick again, and with none waiting the job table
   must not cost a thing per event.  Printed: the same wall time.
3. Restarts: a new engine (the service restarted) against a Fluxion that
   has every ssd as Storage says, then with 20 rabbits changed while the
   service was away; a Fluxion restart (its graph back with every ssd down)
   with 20 rabbits down.  Printed: set_status sent for each.

Goals, each printed met or missed after the figures (``goals.py``; it
exits 1, naming them, when one is missed): the start-up apply sends a
set_status for every ssd vertex (Fluxion has them all down) and a second
flush nothing; the storm sends at least the set_status of the 20 rabbits
down at its end, and the engine's view ends with those 20 rabbits down and
those 20 links down, nothing else; with 5,000 jobs running the storm costs
no more than 1.5 times its engine time without them (the job table is not
walked per event: walked, it cost twice); restarts send 0, 720 (20 x 36)
and 24,336 (676 x 36) set_status.
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from goals import Goals

from flux_dws.libdws.engine import Engine

RABBITS = 696
PER = 16
SSDS = 36
JOBS = 5_000


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


def ssd_path(i: int, k: int) -> str:
    return f"/elcap/chassis{i}/ssd{k}"


def find_answer(down_rabbits: set[int]) -> dict[str, Any]:
    """Fluxion's answer to find status=down (JGF): the down ssd vertices
    with their chassis and the cluster."""
    if not down_rabbits:
        return {"R": None}
    nodes: list[dict[str, Any]] = [{"id": "0", "metadata": {
        "type": "cluster", "paths": {"containment": "/elcap"}}}]
    for i in sorted(down_rabbits):
        nodes.append({"id": str(len(nodes)), "metadata": {
            "type": "chassis", "paths": {"containment": f"/elcap/chassis{i}"}}})
        nodes.extend({"id": str(len(nodes) + k), "metadata": {
            "type": "ssd", "rank": -1, "exclusive": True, "size": 1024,
            "paths": {"containment": ssd_path(i, k)}}} for k in range(SSDS))
    return {"R": {"graph": {"nodes": nodes, "edges": []}}}


def answer_find(e: Engine, answer: dict[str, Any], now: float) -> float:
    """Flush (the engine asks Fluxion find status=down), then hand it the
    answer as the service does; the seconds that took."""
    asked = [a for a in e.event({"type": "timer", "key": "health-flush", "now": now})
             if a.get("topic") == "sched-fluxion-resource.find"]
    t0 = time.perf_counter()
    e.event({"type": "rpc-result", "token": asked[0]["token"], "ok": True, "errnum": 0,
             "errstr": "", "payload": answer, "now": now})
    return time.perf_counter() - t0


def startup(e: Engine, fluxion_down: set[int] | None = None,
            storage_down: set[int] | None = None) -> tuple[float, dict[str, int]]:
    """The service starting; Fluxion has the rabbits ``fluxion_down`` down
    (default: all), Storage the rabbits ``storage_down`` (default: none)."""
    fluxion_down = set(range(RABBITS)) if fluxion_down is None else fluxion_down
    storage_down = storage_down or set()
    sysconf = {"metadata": {"name": "default"}, "spec": {"storageNodes": [
        {"name": rabbit(i), "computesAccess": [{"name": compute(i, k), "index": k}
                                               for k in range(PER)]}
        for i in range(RABBITS)]}}
    e.event({"type": "sync", "kind": "SystemConfiguration", "objects": [sysconf], "now": 0})
    graph = {"ssds": {rabbit(i): [ssd_path(i, k) for k in range(SSDS)]
                      for i in range(RABBITS)},
             "nodes": {compute(i, k): f"/elcap/chassis{i}/{compute(i, k)}"
                       for i in range(RABBITS) for k in range(PER)}}
    e.event({"type": "graph", "graph": graph, "now": 0})
    n = RABBITS * PER
    e.event({"type": "journal", "synced": True, "now": 0, "events": [
        {"name": "restart", "context": {"ranks": f"0-{n - 1}", "online": f"0-{n - 1}",
                                        "nodelist": f"elcap[1001-{1000 + n}]"}}]})
    answer_find(e, find_answer(fluxion_down), 0.01)
    objs = [storage(i, "Offline" if i in storage_down else "Ready") for i in range(RABBITS)]
    t0 = time.perf_counter()
    e.event({"type": "sync", "kind": "Storage", "objects": objs, "now": 0})
    actions = e.event({"type": "timer", "key": "health-flush", "now": 0.02})
    return time.perf_counter() - t0, count(actions)


def running_jobs(e: Engine, n: int) -> None:
    """n rabbit jobs, each on one compute, their Workflows done with PreRun
    (the first Workflow list a restarted service reads)."""
    wfs = [{"metadata": {"name": f"fluxjob-{1000 + j}", "namespace": "default",
                         "annotations": {"flux-dws.io/hosts": compute(j % RABBITS, j % PER)}},
            "spec": {"wlmID": "flux", "jobID": 1000 + j, "userID": 1000, "groupID": 1000,
                     "desiredState": "PreRun",
                     "dwDirectives": ["#DW jobdw type=xfs capacity=100GiB name=scratch"]},
            "status": {"state": "PreRun", "ready": True, "status": "Completed", "message": ""}}
           for j in range(n)]
    e.event({"type": "sync", "kind": "Workflow", "objects": wfs, "now": 0.5})


def storm(e: Engine, events: int = 10_000, span: float = 2.0, seed: int = 1,
          label: str = "storm") -> dict[str, Any]:
    """The storm on ``e``; its figures (wall time, set_status sent, the
    rabbits and links down at the end: wanted and in the engine's view)."""
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
    print(f"{label}: {len(plan)} Storage events over {span:.1f} s (simulated), "
          f"{flushes} flushes; engine wall time {wall:.2f} s "
          f"({wall / len(plan) * 1e6:.0f} us/event, flushes {flush_wall:.2f} s)")
    set_status = sent.get("sched-fluxion-resource.set_status", 0)
    view = e.event({"type": "request", "topic": "dws.rabbits", "msgid": 1, "userid": 0,
                    "payload": {}})[0]["payload"]["rabbits"]
    figures = {"wall": wall, "set_status": set_status, "actual": actual,
               "down": sorted(rabbit(i) for i in down),
               "down_seen": sorted(r["name"] for r in view if not r["up"]),
               "links": sorted(compute(i, k) for i, k in link_down.items()),
               "links_seen": sorted(c["name"] for r in view for c in r["computes"]
                                    if c["link"] != "Ready")}
    if label != "storm":
        return figures
    print(f"storm: sent {sent}")
    print(f"storm: at the end 20 rabbits down ({actual} set_status), 20 links down"
          f" (drains, badrabbit) -- set_status sent {set_status}"
          f" (the rest: flips that lasted past a 20 ms flush window)")
    print(f"storm: settle after the last event: {settle * 1000:.1f} ms"
          f" (the armed flush fired {(now - last) * 1000:.1f} ms after it,"
          f" then {settle_work * 1000:.1f} ms of work)")
    return figures


def find_cost() -> None:
    e = Engine({"namespace": "default"})
    startup(e)
    e.event({"type": "fluxion-restart", "now": 1})
    answer = find_answer(set(range(RABBITS)))
    took = answer_find(e, answer, 1.01)
    print(f"Fluxion's find answer, every ssd down ({len(answer['R']['graph']['nodes'])}"
          f" vertices): into the engine in {took * 1000:.0f} ms")


def restarts() -> list[int]:
    """set_status sent: service restart with nothing changed, with 20
    rabbits changed; Fluxion restart with 20 rabbits down."""
    twenty = set(range(0, RABBITS, RABBITS // 20))
    twenty = set(sorted(twenty)[:20])
    _, sent = startup(Engine({"namespace": "default"}), fluxion_down=set())
    counts = [sent.get("sched-fluxion-resource.set_status", 0)]
    print(f"service restart, nothing changed: set_status {counts[-1]}")
    _, sent = startup(Engine({"namespace": "default"}), fluxion_down=set(),
                      storage_down=twenty)
    counts.append(sent.get("sched-fluxion-resource.set_status", 0))
    print(f"service restart, 20 rabbits went down meanwhile: set_status "
          f"{counts[-1]} (20 x {SSDS})")
    e = Engine({"namespace": "default"})
    startup(e, storage_down=twenty)
    e.event({"type": "fluxion-restart", "now": 1})
    answer_find(e, find_answer(set(range(RABBITS))), 1.01)
    sent = count(e.event({"type": "timer", "key": "health-flush", "now": 1.02}))
    counts.append(sent.get("sched-fluxion-resource.set_status", 0))
    print(f"Fluxion restart, 20 rabbits down: set_status "
          f"{counts[-1]} ({RABBITS - 20} up x {SSDS})")
    return counts


def main() -> int:
    e = Engine({"namespace": "default"})
    wall, actions = startup(e)
    print(f"start-up: {RABBITS} rabbits, {RABBITS * PER} computes, {RABBITS * SSDS} ssd vertices")
    print(f"start-up: Storage list to every action out: {wall * 1000:.0f} ms")
    print(f"start-up: actions {actions}")
    again = e.event({"type": "timer", "key": "health-flush", "now": 0.5})
    print(f"start-up: a second flush with nothing changed sends {len(again)} actions")
    alone = storm(e)
    busy = Engine({"namespace": "default"})
    startup(busy)
    running_jobs(busy, JOBS)
    crowded = storm(busy, label=f"storm, {JOBS} jobs running")
    sent = restarts()
    find_cost()
    return check(actions, len(again), alone, crowded, sent).status()


def check(actions: dict[str, int], again: int, alone: dict[str, Any],
          crowded: dict[str, Any], restarted: list[int]) -> Goals:
    """The docstring's goals against what ``main`` measured."""
    goals = Goals("bench_health")
    goals.equal("start-up: set_status (every ssd vertex, Fluxion has them down)",
                actions.get("sched-fluxion-resource.set_status", 0), RABBITS * SSDS)
    goals.equal("start-up: a second flush with nothing changed: actions", again, 0)
    for label, fig in (("storm", alone), (f"storm, {JOBS} jobs running", crowded)):
        goals.at_least(f"{label}: set_status sent (20 rabbits down at the end)",
                       fig["set_status"], fig["actual"])
        for what, key in (("rabbits", "down"), ("links", "links")):
            want, seen = set(fig[key]), set(fig[f"{key}_seen"])
            goals.check(f"{label}: the engine's view ends with the {len(want)} {what} down"
                        " the storm left down, no other", seen == want,
                        f"{len(seen)} down" + "".join(
                            f", {', '.join(sorted(names))} {why}" for names, why in (
                                (want - seen, "not down"), (seen - want, "down too"))
                            if names))
    goals.at_most(f"storm, {JOBS} jobs running: engine time against the storm's without jobs",
                  round(crowded["wall"] / alone["wall"], 2), 1.5, "x")
    goals.equal("restarts: set_status (service, nothing changed; service, 20 rabbits"
                " changed; Fluxion, 20 rabbits down)", restarted,
                [0, 20 * SSDS, (RABBITS - 20) * SSDS])
    return goals


if __name__ == "__main__":
    sys.exit(main())
