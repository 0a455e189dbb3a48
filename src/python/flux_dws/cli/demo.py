"""``flux-dws demo``: Flux jobs with #DW directives on an emulated Rabbit system.

By default: starts the emulator (in this process), the dws service and an
emulated Flux job manager running the dws jobtap plugin's decisions (the
flux-less harness, flux_dws.harness), submits a batch of jobs with #DW
directives of every kind (one invalid, one cancelled while it runs) and
prints the service's live view (what ``flux dws status`` shows), then each
job's timeline, environment and outcome, and a summary.

``--workflow-only``: walk one Workflow through every state with the
official Kubernetes client, as flux-dws drives it (breakdowns to Servers,
Computes after Setup), printing each state with DWS' time for it.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from flux_dws.dwsim.systems import SystemError_, load_system
from flux_dws.emulator import Emulator
from flux_dws.jobrecord import timing_link
from flux_dws.libdws.breakdown import RabbitMap, allocation_sets
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.wfstates import PRE_RUN, PROPOSAL, SETUP, STATES

G, V = "dataworkflowservices.github.io", "v1alpha7"
FINALIZER = "flux-framework.readthedocs.io/workflow"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="walk a Workflow through every state on the emulator")
    p.add_argument("--system", default="kind", help="emulated system (default kind)")
    p.add_argument("--latency", default="demo",
                   help="latency model: zero, demo (default), realistic or a YAML file")
    p.add_argument("--nodes", type=int, default=2,
                   help="compute nodes of the --workflow-only job (default 2; at most the"
                        " system's computes)")
    p.add_argument("-d", "--directive", action="append", metavar="DW",
                   help="#DW directive (repeatable; default an xfs and a copy_in)")
    p.add_argument("--workflow-only", action="store_true",
                   help="walk one Workflow with the Kubernetes client instead of running jobs")
    p.set_defaults(func=run)


class DemoError(Exception):
    pass


def _wait(api: Any, name: str, state: str, timeout: float = 60.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        wf: dict[str, Any] = api.get_namespaced_custom_object(G, V, "default", "workflows", name)
        st = wf.get("status") or {}
        if st.get("state") == state:
            if st.get("ready"):
                return wf
            if st.get("status") == "Error":
                raise DemoError(f"{state}: {st.get('message')}")
        time.sleep(0.02)
    raise DemoError(f"{state} did not complete in {timeout:.0f} s")


def walk(api: Any, directives: list[str], hosts: list[str], mapping: dict[str, str],
         name: str = "fluxjob-1", env: dict[str, str] | None = None
         ) -> list[tuple[str, str, float, str]]:
    """Drive one Workflow through every state; [(state, DWS time, wall s,
    what nnf-sos holds for it then)].

    The environment published at PreRun is copied into ``env``.
    """
    api.create_namespaced_custom_object(G, V, "default", "workflows", {
        "apiVersion": f"{G}/{V}", "kind": "Workflow",
        "metadata": {"name": name, "finalizers": [FINALIZER]},
        "spec": {"desiredState": PROPOSAL, "dwDirectives": directives, "wlmID": "flux",
                 "jobID": "f1", "userID": 1000, "groupID": 1000}})
    out = []
    for state in STATES:
        t0 = time.monotonic()
        if state != PROPOSAL:
            api.patch_namespaced_custom_object(G, V, "default", "workflows", name,
                                               {"spec": {"desiredState": state}})
        wf = _wait(api, name, state)
        out.append((state, wf["status"].get("elapsedTimeLastState", ""), time.monotonic() - t0,
                    _children(api, name)))
        if state == PROPOSAL:  # what flux-dws does before Setup
            counts = RabbitMap(mapping).counts(Hostlist(hosts).encode())
            for ref in wf["status"].get("directiveBreakdowns", []):
                dbd = api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns",
                                                       ref["name"])
                storage = dbd.get("status", {}).get("storage")
                if storage:
                    api.patch_namespaced_custom_object(
                        G, V, "default", "servers", storage["reference"]["name"],
                        {"spec": {"allocationSets": allocation_sets(storage, counts)}})
        if state == SETUP:
            api.patch_namespaced_custom_object(G, V, "default", "computes", name,
                                               {"data": [{"name": h} for h in hosts]})
        if state == PRE_RUN and env is not None:
            env.update(wf["status"].get("env", {}))
    api.delete_namespaced_custom_object(G, V, "default", "workflows", name)
    remove_finalizer(api, name)
    return out


CHILDREN = (("nnf.cray.hpe.com", "v1alpha11", "nnfstorages", "NnfStorage"),
            (G, V, "clientmounts", "ClientMount"),
            ("nnf.cray.hpe.com", "v1alpha11", "nnfdatamovements", "NnfDataMovement"))


def _children(api: Any, name: str) -> str:
    """'2 ClientMount (mounted), 4 NnfDataMovement (Success)': the workflow's
    nnf-sos objects and where they stand."""
    parts = []
    for group, version, plural, kind in CHILDREN:
        items = api.list_cluster_custom_object(
            group, version, plural,
            label_selector=f"dataworkflowservices.github.io/workflow.name={name}")["items"]
        if not items:
            continue
        states = sorted({str((o.get("status") or {}).get("status")
                             or o.get("spec", {}).get("desiredState") or
                             ("ready" if (o.get("status") or {}).get("ready") else "pending"))
                         for o in items})
        parts.append(f"{len(items)} {kind} ({', '.join(states)})")
    return "; ".join(parts)


def remove_finalizer(api: Any, name: str) -> None:
    """Drop flux's finalizer (the controllers may be changing theirs meanwhile)."""
    from kubernetes.client.exceptions import ApiException

    for _ in range(50):
        try:
            wf = api.get_namespaced_custom_object(G, V, "default", "workflows", name)
        except ApiException as exc:
            if exc.status == 404:
                return
            raise
        md = wf["metadata"]
        fins = [f for f in md.get("finalizers") or [] if f != FINALIZER]
        try:
            api.patch_namespaced_custom_object(G, V, "default", "workflows", name, {
                "metadata": {"finalizers": fins or None,
                             "resourceVersion": md["resourceVersion"]}})
            return
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise
    raise DemoError(f"could not remove the finalizer of {name}")


DEMO_JOBS: list[tuple[str, object, int]] = [
    ("xfs scratch", "#DW jobdw type=xfs capacity=10GiB name=scratch", 2),
    ("gfs2 + copy in/out", ["#DW jobdw type=gfs2 capacity=20GiB name=shared",
                            "#DW copy_in source=/lus/global/in destination=$DW_JOB_shared/",
                            "#DW copy_out source=$DW_JOB_shared/ destination=/lus/global/out"],
     3),
    ("lustre", "#DW jobdw type=lustre capacity=100GiB name=lus", 4),
    ("container", ["#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2"
                   " requires=user-container-auth",
                   "#DW container name=mpic profile=example-mpi"
                   " DW_JOB_foo_local_storage=my-gfs2"], 2),
    ("invalid #DW", "#DW jobdw type=xfs capacity=10GiB", 1),
    ("cancelled while running", "#DW jobdw type=raw capacity=5GiB name=rawdisk", 1),
]


def _timeline(job: Any) -> list[str]:
    t0 = job.eventlog[0][0] if job.eventlog else 0.0
    out = []
    for t, name, ctx in job.eventlog:
        if name == "state":
            continue
        detail = ctx.get("description") or ctx.get("type") or ""
        if name == "exception":
            detail = f"{ctx.get('type')} (severity {ctx.get('severity')}): {ctx.get('note')}"
        out.append(f"      +{t - t0:7.3f} s  {name} {detail}".rstrip())
    return out


def owner_view(h: Any, ids: dict[int, str]) -> None:
    """What ``flux dws job`` shows the owners of a job that succeeded and
    of one that failed, both ended: from their KVS record, as the command
    reads it without the service."""
    import json

    from flux_dws.jobrecord import KVS_PREFIX, stored_view
    from flux_dws.jobview import job_text

    shown = [next(j for j, w in ids.items() if w.startswith("gfs2")),
             next(j for j, w in ids.items() if w.startswith("invalid"))]
    for jobid in shown:
        job = h.job(jobid)
        record: dict[str, Any] = {k: v for k, v in job.kvs.items() if k.startswith(KVS_PREFIX)}
        record["jobspec"] = job.jobspec
        record["eventlog"] = "".join(json.dumps({"timestamp": t, "name": name,
                                                 "context": ctx}) + "\n"
                                     for t, name, ctx in job.eventlog)
        failed = any(e["severity"] == 0 for e in job.exceptions)
        view = stored_view(jobid, record, job={"result": "FAILED" if failed else "COMPLETED"})
        print(f"\n== flux dws job {jobid} ({ids[jobid]}), as its owner sees it")
        print(job_text(view))


def run_jobs(args: argparse.Namespace) -> int:
    from flux_dws.cli.status import format_status
    from flux_dws.harness import Harness
    system = load_system(args.system)
    print(f"emulated system {system.name}: {len(system.rabbits)} rabbits,"
          f" {len(system.computes)} computes; latency model {args.latency}")
    print("the dws service and an emulated Flux job manager (dws jobtap plugin decisions)"
          " run in this process\n")
    with Harness(system=args.system, latency=args.latency) as h:
        ids: dict[int, str] = {}
        t0 = time.monotonic()
        for what, dw, nodes in DEMO_JOBS:
            runtime = 30.0 if what.startswith("cancelled") else 0.5
            jobid = h.submit(dw, nodes=min(nodes, len(system.computes)), runtime=runtime)
            ids[jobid] = what
            print(f"submitted job {jobid}: {what} on {nodes} node(s)")
        cancel = next(j for j, w in ids.items() if w.startswith("cancelled"))
        h.wait_event(cancel, "start", timeout=120)
        print("\n== flux dws status (while the jobs run)")
        print(format_status(h.status()))
        h.reactor.call(lambda: h.jm.cancel(cancel, "cancelled by the demo"))
        for jobid in ids:
            h.wait(jobid, timeout=300)
        h.wait_for(lambda: not h.service.engine.status()["jobs"],  # type: ignore[union-attr]
                   120, "every Workflow to be deleted")
        wall = time.monotonic() - t0
        ok = 0
        for jobid, what in ids.items():
            job = h.job(jobid)
            fatal = [e for e in job.exceptions if e["severity"] == 0]
            outcome = "completed" if not fatal else f"failed: {fatal[0]['note']}"
            ok += not fatal
            print(f"\n== job {jobid} ({what}): {outcome}")
            print("   timeline:")
            print("\n".join(_timeline(job)))
            if job.env:
                print("   environment:")
                for k in sorted(job.env):
                    v = job.env[k]
                    print(f"      {k}={v if len(v) < 70 else v[:67] + '...'}")
            timings = {s.lower(): job.kvs_get(timing_link(s))
                       for s in STATES if timing_link(s) in job.links}
            if timings:
                print("   DWS time per state (KVS rabbit_<state>_timing): "
                      + ", ".join(f"{k} {v}" for k, v in timings.items()))
        owner_view(h, ids)
        left = h.workflows()
        st = h.reactor.call(lambda: h.service.stats.as_dict())  # type: ignore[union-attr]
        print(f"\n== summary: {len(ids)} jobs in {wall:.2f} s; {ok} completed,"
              f" {len(ids) - ok} failed as expected (invalid #DW, cancel);"
              f" Workflows left in Kubernetes: {len(left)};"
              f" service reaction p50/p99 {st['reaction_ms_p50']}/{st['reaction_ms_p99']} ms")
        expected_ok = len(ids) - 2
        if ok != expected_ok or left:
            print("UNEXPECTED outcome", file=sys.stderr)
            return 1
    return 0


def check_nodes(nodes: int, system_name: str) -> None:
    """Refuse a node count the system cannot give, naming the range."""
    system = load_system(system_name)
    most = len(system.computes)
    if not 1 <= nodes <= most:
        raise DemoError(f"--nodes must be 1 to {most} (system {system.name} has {most}"
                        f" computes), got {nodes}")


def run(args: argparse.Namespace) -> int:
    try:
        check_nodes(args.nodes, args.system)
    except (SystemError_, DemoError, ValueError) as exc:
        print(f"flux-dws demo: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, DemoError) else 1
    if not args.workflow_only:
        try:
            return run_jobs(args)
        except (SystemError_, TimeoutError, ValueError) as exc:
            print(f"flux-dws demo: {exc}", file=sys.stderr)
            return 1
    directives = args.directive or [
        "#DW jobdw type=xfs capacity=10GiB name=scratch",
        "#DW copy_in source=/lus/global/input destination=$DW_JOB_scratch/",
    ]
    try:
        system = load_system(args.system)
        with Emulator(system=args.system, latency=args.latency) as emu:
            mapping = {c: r.name for r in system.rabbits for c, _ in r.computes}
            hosts = system.computes[:args.nodes]
            print(f"emulated system {system.name}: {len(system.rabbits)} rabbits,"
                  f" {len(system.computes)} computes; API {emu.url}")
            print(f"job on {Hostlist(hosts).encode()} with:")
            for d in directives:
                print(f"   {d}")
            env: dict[str, str] = {}
            for state, dws_time, wall, held in walk(emu.custom_objects_api(), directives,
                                                    hosts, mapping, env=env):
                print(f"   {state:<9} ready  (DWS {dws_time or '-'}, wall {wall:.3f} s)"
                      + (f"  {held}" if held else ""))
            print("environment the job got at PreRun:")
            for k in sorted(env):
                print(f"   {k}={env[k]}")
            print("workflow deleted; rabbit storage released")
    except (SystemError_, DemoError, ValueError) as exc:
        print(f"flux-dws demo: {exc}", file=sys.stderr)
        return 1
    return 0
