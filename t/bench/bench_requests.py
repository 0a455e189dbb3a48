"""What the dws service costs the API server, on the emulator (issue 77,
item 4): the requests it sends per job, by verb and resource, and those
refused.

    PYTHONPATH=src/python:build/src/python python t/bench/bench_requests.py \\
        [--jobs N] [--at-once K]

N plain xfs jobs (default 20) run through the harness (the real dws
service and libdws job machines on the emulated kind system), K at a time
(default 1; 20 for a burst).  Every request the emulator's API server
serves is counted by method, resource and answer, but the watches and
lists the service holds whatever the jobs (counted apart: they do not
grow with jobs), and the emulator's own admin calls.  It prints one line
per (verb, resource), per job, then the total per job and the refused
(an answer of 400 or more) per job; a goal (issue 77): no refused request
in a clean run, at most 7 Workflow patches and 12 requests per job.
Requests the emulator's controllers make go to the store directly, not
through the server: only the workload manager's are counted.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections import Counter
from typing import Any

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def _verb(method: str, watch: bool, named: bool, ctype: str) -> str:
    if watch:
        return "watch"
    if method == "GET":
        return "get" if named else "list"
    if method == "PATCH":
        return "json-patch" if "json-patch" in ctype else "merge-patch"
    return {"POST": "create", "PUT": "update", "DELETE": "delete"}.get(method, method.lower())


def count_requests() -> tuple[Counter[tuple[str, str, int]], Any]:
    """Count the API server's requests (verb, resource, code) from now;
    returns the counter and a function that undoes the counting."""
    from flux_dws.apiserver import server

    counts: Counter[tuple[str, str, int]] = Counter()
    lock = threading.Lock()
    dispatch, send = server.Handler._dispatch, server.Handler._send

    def counted_dispatch(self: Any, method: str) -> None:
        path, _ = server.split_target(self.path)
        self._counted = None
        if path.startswith(("/api/", "/apis/")):
            try:
                r, _, name, sub, watch = server.route(path)
                q = dict(server.split_target(self.path)[1])
                watch = watch or q.get("watch") in ("1", "true")
                ctype = self.headers.get("Content-Type", "") or ""
                self._counted = (_verb(method, watch, name is not None, ctype),
                                 r.kind + (f"/{sub}" if sub else ""))
            except Exception:  # not a resource: not counted
                self._counted = None
        dispatch(self, method)

    def counted_send(self: Any, code: int, body: bytes, ctype: str = "application/json") -> None:
        key = getattr(self, "_counted", None)
        if key is not None:
            with lock:
                counts[(key[0], key[1], code)] += 1
            self._counted = None
        send(self, code, body, ctype)

    server.Handler._dispatch = counted_dispatch  # type: ignore[method-assign]
    server.Handler._send = counted_send  # type: ignore[method-assign]

    def undo() -> None:
        server.Handler._dispatch = dispatch  # type: ignore[method-assign]
        server.Handler._send = send  # type: ignore[method-assign]
    return counts, undo


def run(jobs: int, at_once: int) -> dict[str, Any]:
    from flux_dws.harness import Harness

    counts, undo = count_requests()
    try:
        with Harness(system="kind", latency="zero") as h:
            warm = h.submit([XFS])  # the watches and lists start, then are not counted
            h.wait(warm, timeout=120.0)
            h.wait_for(lambda: not h.workflows(), what="the first Workflow deleted",
                       timeout=60.0)
            counts.clear()
            live: list[int] = []
            submitted = done = 0
            while done < jobs:
                while submitted < jobs and len(live) < at_once:
                    live.append(h.submit([XFS]))
                    submitted += 1
                h.wait(live.pop(0), timeout=120.0)
                done += 1
            h.wait_for(lambda: not h.workflows(), what="every Workflow deleted", timeout=60.0)
            snapshot = Counter(counts)
    finally:
        undo()
    return {"jobs": jobs, "counts": snapshot}


def report(fig: dict[str, Any], label: str) -> tuple[float, float, float]:
    jobs = fig["jobs"]
    by: Counter[tuple[str, str]] = Counter()
    refused: Counter[tuple[str, str, int]] = Counter()
    for (verb, kind, code), n in fig["counts"].items():
        if verb in ("watch", "list"):
            continue  # held whatever the jobs
        by[(verb, kind)] += n
        if code >= 400:
            refused[(verb, kind, code)] += n
    for (verb, kind), n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"requests {label}: {verb} {kind}: {n / jobs:.2f} per job")
    for (verb, kind, code), n in sorted(refused.items()):
        print(f"requests {label}: refused {verb} {kind} {code}: {n / jobs:.2f} per job")
    total = sum(by.values()) / jobs
    wf_patches = sum(n for (v, k), n in by.items() if k == "Workflow" and "patch" in v) / jobs
    bad = sum(refused.values()) / jobs
    print(f"requests {label} per job: {total:.2f}")
    print(f"requests {label} Workflow patches per job: {wf_patches:.2f}")
    print(f"requests {label} refused per job: {bad:.2f}")
    return total, wf_patches, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--at-once", type=int, default=0,
                    help="jobs in flight (default: 1, then all at once)")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
    from goals import Goals

    goals = Goals("requests")
    shapes = [args.at_once] if args.at_once else [1, args.jobs]
    for k in shapes:
        total, patches, bad = report(run(args.jobs, k), f"({k} at once)")
        goals.at_most(f"requests per job ({k} at once)", total, 12)
        goals.at_most(f"Workflow patches per job ({k} at once)", patches, 7)
        goals.at_most(f"refused requests per job ({k} at once)", bad, 0)
    return goals.status()


if __name__ == "__main__":
    sys.exit(main())
