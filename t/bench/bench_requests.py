"""What the dws service costs the API server, on the emulator and on the
real stack (issue 77, item 4): the requests it sends per job, by verb and
resource, and those refused.

    PYTHONPATH=src/python:build/src/python python t/bench/bench_requests.py \\
        [--jobs N] [--at-once K] [--stack emulator|real|both]

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

``--stack real``: the same jobs on a real kube-apiserver (t/k8s/build.sh)
with the real DWS, nnf-sos and nnf-dm managers (t/nnf/build.sh; the
release set of FLUX_DWS_NNF_DIR, else March's), the service connected as
user flux.  The requests are read from kube-apiserver's audit log (every
request at the Metadata level: the verb, the resource, the answer's code;
a patch's type is not in it, so patches are "patch"), the service's and
the controllers' apart; it prints also the watches the service holds and
kube-apiserver's CPU seconds per job (the controllers' requests too, ~120
a job: most of the server's work).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
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


def run_jobs(h: Any, jobs: int, at_once: int,
             after_each: Callable[[int], None] | None = None) -> int:
    """Run ``jobs`` xfs jobs through harness ``h``, ``at_once`` in flight;
    ``after_each(done)`` after each ends.  Returns how many failed."""
    live: list[int] = []
    failed = submitted = done = 0
    while done < jobs:
        while submitted < jobs and len(live) < at_once:
            live.append(h.submit([XFS]))
            submitted += 1
        failed += bool(h.wait(live.pop(0), timeout=600.0).fatal)
        done += 1
        if after_each is not None:
            after_each(done)
    return failed


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
            run_jobs(h, jobs, at_once)
            h.wait_for(lambda: not h.workflows(), what="every Workflow deleted", timeout=60.0)
            snapshot = Counter(counts)
    finally:
        undo()
    return {"jobs": jobs, "counts": snapshot}


def _cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _audit_key(ev: dict[str, Any]) -> tuple[str, str, int]:
    ref = ev.get("objectRef") or {}
    resource = ref.get("resource", ev.get("requestURI", "?"))
    if ref.get("subresource"):
        resource += f"/{ref['subresource']}"
    return ev["verb"], resource, int((ev.get("responseStatus") or {}).get("code", 0))


def run_real(jobs: int, at_once: int, workdir: Path) -> dict[str, Any]:
    """``run`` on a real kube-apiserver with the real controllers, counted
    from its audit log."""
    from flux_dws.harness import Harness, RemoteEmulator
    from flux_dws.realstack import controlplane as cpl
    from flux_dws.realstack import nnf

    wd = workdir / f"real-{at_once}"
    with cpl.ControlPlane(wd / "cp", audit=True) as plane, \
            nnf.RealControllers(plane, wd / "nnf", system="kind"):
        plane.apply_files([cpl.k8s_dir() / "rbac" / "flux-bindings.yaml"])
        with Harness(system="kind",
                     emulator=RemoteEmulator(plane.flux_kubeconfig,  # type: ignore[arg-type]
                                             plane.admin_kubeconfig)) as h:
            h.wait_for(lambda: all(h.fluxion.rabbit_up(r.name) for r in h.system.rabbits),
                       what="rabbits up", timeout=300.0)
            warm = h.submit([XFS])
            h.wait(warm, timeout=600.0)
            h.wait_for(lambda: not h.workflows(), what="the first Workflow deleted",
                       timeout=300.0)
            since = plane.audit_events()[-1]["requestReceivedTimestamp"]
            cpu0 = _cpu_seconds(plane.pid(cpl.APISERVER))
            failed = run_jobs(h, jobs, at_once)
            h.wait_for(lambda: not h.workflows(), what="every Workflow deleted",
                       timeout=300.0)
            cpu = _cpu_seconds(plane.pid(cpl.APISERVER)) - cpu0
            assert h.service is not None
            held = sorted(w["kind"] for w in h.service.kube.watch_states())
        events = [e for e in plane.audit_events()
                  if e.get("requestReceivedTimestamp", "") > since]
    ours: Counter[tuple[str, str, int]] = Counter()
    theirs = 0
    for ev in events:
        if ev.get("user", {}).get("username") == cpl.FLUX_USER:
            ours[_audit_key(ev)] += 1
        elif not ev.get("user", {}).get("username", "").startswith("system:apiserver"):
            theirs += 1
    return {"jobs": jobs, "counts": ours, "controllers": theirs, "cpu": cpu,
            "watches": held, "failed": failed}


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
    wf_patches = sum(n for (v, k), n in by.items()
                     if k in ("Workflow", "workflows") and "patch" in v) / jobs
    bad = sum(refused.values()) / jobs
    print(f"requests {label} per job: {total:.2f}")
    if "cpu" in fig:
        lists: Counter[str] = Counter()
        for (v, r, _), n in fig["counts"].items():
            if v == "list":
                lists[r] += n
        print(f"requests {label}: watches held {len(fig['watches'])} "
              f"({', '.join(fig['watches'])}), lists during the run "
              f"{sum(lists.values())} ({', '.join(f'{r} {n}' for r, n in sorted(lists.items()))})")
        print(f"requests {label}: the controllers' requests per job "
              f"{fig['controllers'] / jobs:.1f}")
        print(f"requests {label}: kube-apiserver CPU per job {fig['cpu'] / jobs * 1000:.0f} ms")
        print(f"requests {label}: failed jobs {fig['failed']}")
    print(f"requests {label} Workflow patches per job: {wf_patches:.2f}")
    print(f"requests {label} refused per job: {bad:.2f}")
    return total, wf_patches, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--at-once", type=int, default=0,
                    help="jobs in flight (default: 1, then all at once)")
    ap.add_argument("--stack", choices=("emulator", "real", "both"), default="emulator",
                    help="the emulator's API server, the real one with the real "
                         "controllers, or both side by side")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
    from goals import Goals

    goals = Goals("requests")
    shapes = [args.at_once] if args.at_once else [1, args.jobs]
    stacks = ["emulator", "real"] if args.stack == "both" else [args.stack]
    with tempfile.TemporaryDirectory(prefix="bench-requests.") as tmp:
        for stack in stacks:
            for k in shapes:
                label = f"{stack} ({k} at once)"
                fig = run(args.jobs, k) if stack == "emulator" \
                    else run_real(args.jobs, k, Path(tmp))
                total, patches, bad = report(fig, label)
                goals.at_most(f"requests per job, {label}", total, 12)
                goals.at_most(f"Workflow patches per job, {label}", patches, 7)
                goals.at_most(f"refused requests per job, {label}", bad, 0)
    return goals.status()


if __name__ == "__main__":
    sys.exit(main())
