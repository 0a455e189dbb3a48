"""``flux-dws demo``: walk a Workflow through every state on an emulated system.

Starts the emulator (in this process) on a system description, creates a
Workflow for a job's #DW directives with the official Kubernetes client,
and drives it as flux-dws does: the breakdowns become Servers allocations
(libdws), the job's compute nodes go into Computes, and each desiredState
is set once the previous state is ready.  Every state is printed with the
time DWS reports for it (status.elapsedTimeLastState).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from flux_dws.breakdown import RabbitMap, allocation_sets
from flux_dws.dwsim.systems import SystemError_, load_system
from flux_dws.emulator import Emulator
from flux_dws.hostlist import Hostlist

G, V = "dataworkflowservices.github.io", "v1alpha7"
STATES = ["Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut", "Teardown"]
FINALIZER = "flux-framework.readthedocs.io/workflow"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="walk a Workflow through every state on the emulator")
    p.add_argument("--system", default="kind", help="emulated system (default kind)")
    p.add_argument("--latency", default="demo",
                   help="latency model: zero, demo (default), realistic or a YAML file")
    p.add_argument("--nodes", type=int, default=2, help="compute nodes of the job (default 2)")
    p.add_argument("-d", "--directive", action="append", metavar="DW",
                   help="#DW directive (repeatable; default an xfs and a copy_in)")
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
        "spec": {"desiredState": "Proposal", "dwDirectives": directives, "wlmID": "flux",
                 "jobID": "f1", "userID": 1000, "groupID": 1000}})
    out = []
    for state in STATES:
        t0 = time.monotonic()
        if state != "Proposal":
            api.patch_namespaced_custom_object(G, V, "default", "workflows", name,
                                               {"spec": {"desiredState": state}})
        wf = _wait(api, name, state)
        out.append((state, wf["status"].get("elapsedTimeLastState", ""), time.monotonic() - t0,
                    _children(api, name)))
        if state == "Proposal":  # what flux-dws does before Setup
            counts = RabbitMap(mapping).counts(Hostlist(hosts).encode())
            for ref in wf["status"].get("directiveBreakdowns", []):
                dbd = api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns",
                                                       ref["name"])
                storage = dbd.get("status", {}).get("storage")
                if storage:
                    api.patch_namespaced_custom_object(
                        G, V, "default", "servers", storage["reference"]["name"],
                        {"spec": {"allocationSets": allocation_sets(storage, counts)}})
        if state == "Setup":
            api.patch_namespaced_custom_object(G, V, "default", "computes", name,
                                               {"data": [{"name": h} for h in hosts]})
        if state == "PreRun" and env is not None:
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


def run(args: argparse.Namespace) -> int:
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
