"""The referee of the emulator's controllers: the same Workflows, played
as flux-dws plays them, on the emulator's DWS/nnf-sos model and on the
real DWS, nnf-sos and nnf-dm managers (doc/guide/emulator.rst, "The real
controllers as referee").

    a = play(Side("emulator", admin_kubeconfig_a))
    b = play(Side("real", admin_kubeconfig_b, lustre_root=...))
    for line in compare(a, b):
        print(line, "" if accepted(line) else "(new)")

``play`` runs every scenario of ``SCENARIOS`` against one API server on
which one set of controllers runs, as the workload manager does (create
the Workflow, read its DirectiveBreakdowns, fill the Servers from them
and the job's computes with flux-dws' own allocation code, fill the
Computes, ask for each state in turn, Teardown, delete), and returns a
*transcript*: per scenario, per step, what flux-dws sees there (the
Workflow's state, status, message and drivers once the step settles, the
DirectiveBreakdowns' storage and compute constraints, the Workflow's
env, the ClientMounts made, the PersistentStorageInstance, the words of
a refusal) with what differs from run to run abstracted (the Workflow's
uid ``<uid>``, the LustreFileSystem's mount root ``<lus>``), and how long
each step took to settle (``seconds``: compared by order of magnitude).

``compare(a, b)`` gives every difference, one line each
(``scenario/step: key: emulator=... real=...``); ``accepted(line)``
names the entry of ``ACCEPTED`` (a difference that stays, with its
reason) that covers a line.  t/python/emulator/test_ctlreferee.py fails
on a line no entry covers; ``python -m flux_dws.referee.ctlreferee``
starts both sides (two control planes) and prints the lines.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flux_dws.libdws.breakdown import RabbitMap, allocation_sets
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.wfstates import DATA_IN, POST_RUN, PRE_RUN, PROPOSAL, STATES, TEARDOWN

__all__ = ["ACCEPTED", "SCENARIOS", "Side", "accepted", "compare", "play"]

G, V = "dataworkflowservices.github.io", "v1alpha7"
FINALIZER = "flux-framework.readthedocs.io/workflow"
NS = "default"
SETTLE_TIMEOUT = 60.0
Transcript = dict[str, dict[str, dict[str, Any]]]


@dataclass
class Side:
    """One API server and the controllers on it."""

    name: str
    kubeconfig: str | Path
    lustre_root: str = "/lus/global"   # its LustreFileSystem's mount root


@dataclass(frozen=True)
class Scenario:
    name: str
    directives: list[str]
    hosts: str
    last: str = TEARDOWN              # the last state asked for
    computes: bool = True
    allocations: Callable[[dict[str, int]], dict[str, int]] | None = None
    user: int = 0                     # the Workflow's userID and groupID
    #: the state in which its user container fails: on the real side by
    #: its command, on the emulator's by a ``container`` fault given for it
    #: (the emulator runs no command)
    fails_at: str = ""


def _kind_map() -> dict[str, str]:
    """compute -> rabbit of the kind system both sides run."""
    from flux_dws.dwsim.systems import load_system

    return {c: r.name for r in load_system("kind").rabbits for c, _ in r.computes}


def _fewer(counts: dict[str, int]) -> dict[str, int]:
    return {r: max(1, n - 1) for r, n in counts.items()}


SCENARIOS: list[Scenario] = [
    Scenario("xfs", ["#DW jobdw type=xfs capacity=10GiB name=scratch"], "compute-[01-02]"),
    Scenario("gfs2", ["#DW jobdw type=gfs2 capacity=20GiB name=shared"], "compute-[01-04]"),
    Scenario("raw", ["#DW jobdw type=raw capacity=5GiB name=rawdisk"], "compute-01"),
    # one rabbit's computes: the mock rabbits share one host, where two
    # rabbits' Lustre mounts would be one path (RealControllers' files)
    Scenario("lustre", ["#DW jobdw type=lustre capacity=100GiB name=lus"],
             "compute-[01-03]"),
    Scenario("staged", ["#DW jobdw type=xfs capacity=10GiB name=scratch",
                        "#DW copy_in source=<lus>/in/ destination=$DW_JOB_scratch/",
                        "#DW copy_out source=$DW_JOB_scratch/ destination=<lus>/out/"],
             "compute-[01-02]"),
    Scenario("persistent-create", ["#DW create_persistent type=xfs capacity=10GiB name=keep"],
             "compute-01", computes=False),
    Scenario("persistent-use", ["#DW persistentdw name=keep"], "compute-01"),
    Scenario("persistent-destroy", ["#DW destroy_persistent name=keep"], "compute-01",
             computes=False),
    Scenario("proposal-error", ["#DW jobdw type=xfs capacity=1GiB name=aa",
                                "#DW copy_in source=/nowhere/x destination=$DW_JOB_aa/"],
             "compute-01", last=PROPOSAL),
    Scenario("refused-type", ["#DW jobdw type=zfs capacity=1GiB name=aa"], "compute-01",
             last=PROPOSAL),
    Scenario("refused-short-name", ["#DW jobdw type=xfs capacity=1GiB name=x"], "compute-01",
             last=PROPOSAL),
    Scenario("too-few-allocations", ["#DW jobdw type=xfs capacity=1GiB name=aa"],
             # Servers with fewer allocations than computes on a rabbit
             "compute-[01-03]", allocations=_fewer, last=PRE_RUN),
]

#: the user of the container scenarios: nnf-sos runs a container as the
#: Workflow's user, and never as root
CONTAINER_USER = 1000
GFS2 = "#DW jobdw type=gfs2 capacity=10GiB name=scratch"


def _container(profile: str) -> list[str]:
    return [GFS2, f"#DW container name=app profile={profile} DW_JOB_scratch=scratch"]


#: user containers (flux_dws.realstack.containers' profiles): the real
#: side needs rabbits that run Pods (PodNodes, with mpi-operator); both()
#: plays them apart (containers())
CONTAINER_SCENARIOS: list[Scenario] = [
    Scenario("container", _container("flux-dws-write"), "compute-[01-04]",
             user=CONTAINER_USER),
    Scenario("container-mpi", _container("flux-dws-mpi-once"), "compute-[01-04]",
             user=CONTAINER_USER),
    Scenario("container-fail", _container("flux-dws-fail"), "compute-[01-02]",
             user=CONTAINER_USER, fails_at=POST_RUN),
]

# The differences that stay (fnmatch patterns on compare()'s lines), each
# with why; a line no entry covers is a new difference.
ACCEPTED: list[tuple[str, str]] = [
    ("*/PreRun: clientmounts: *",
     "the real nnf-sos mounts gfs2 and Lustre, and a staged file system, on the rabbits "
     "too (ClientMounts in the rabbits' namespaces); the emulator keeps that side as the "
     "servers' NnfAccess alone.  flux-dws reads no ClientMount, so what it sees is the "
     "same"),
    ("*: seconds: emulator=\"<1 s\" real=\"1-10 s\"",
     "the real managers take 1 to 5 s for a step here, PreRun and PostRun most often "
     "(controller-runtime requeues, nnf-sos' batching of Servers updates); the emulator's "
     "latency model "
     "answers at once unless asked for site latencies (--latency)"),
    ("container-mpi/PreRun: seconds: emulator=\"<1 s\" real=\">=10 s\"",
     "an MPIJob starts in 10-20 s on the real side: mpi-operator's Pods, the launcher's "
     "init container that tries mpirun to every worker (ssh, a try a second) before the "
     "launcher runs, nnf-sos waiting for the MPIJob to run; the emulator's latency model "
     "starts a workload at once unless asked for site latencies (--latency)"),
    ("*: seconds: emulator=\"1-10 s\" real=\"<1 s\"",
     "a loaded machine, not the model: the emulator's controllers run in the test's own "
     "Python, which shares the CPU with whatever else runs (CI's sharness beside it), so a "
     "step they answer at once can settle a second late; seen once in CI, on the staged "
     "scenario's Proposal"),
]


def accepted(line: str) -> str | None:
    """The reason of the ACCEPTED entry that covers ``line``, or None."""
    for pattern, reason in ACCEPTED:
        if fnmatch.fnmatchcase(line, pattern):
            return reason
    return None


class _Wlm:
    """The workload manager's calls, as the kubernetes client makes them."""

    def __init__(self, side: Side) -> None:
        from kubernetes import client, config

        api_client = config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(side.kubeconfig))
        self.side = side
        self.api: Any = client.CustomObjectsApi(api_client)
        self.exc: Any = client.exceptions.ApiException

    def get(self, plural: str, name: str, ns: str = NS) -> dict[str, Any]:
        out: dict[str, Any] = self.api.get_namespaced_custom_object(G, V, ns, plural, name)
        return out

    def items(self, plural: str, **kw: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self.api.list_cluster_custom_object(G, V, plural,
                                                                        **kw)["items"]
        return out

    def patch(self, plural: str, name: str, body: dict[str, Any]) -> None:
        self.api.patch_namespaced_custom_object(G, V, NS, plural, name, body)

    def create(self, name: str, directives: list[str], user: int = 0) -> str | None:
        """None, or the refusal's message."""
        try:
            self.api.create_namespaced_custom_object(G, V, NS, "workflows", {
                "apiVersion": f"{G}/{V}", "kind": "Workflow",
                "metadata": {"name": name, "finalizers": [FINALIZER]},
                "spec": {"desiredState": PROPOSAL, "dwDirectives": directives,
                         "wlmID": "flux", "jobID": "1", "userID": user, "groupID": user}})
        except self.exc as exc:
            return _message(exc)
        return None

    def settle(self, name: str, state: str) -> tuple[dict[str, Any], float]:
        """The Workflow once in ``state`` and ready or in error (or as it
        is after SETTLE_TIMEOUT), and the seconds it took."""
        t0 = time.monotonic()
        while True:
            wf = self.get("workflows", name)
            st = wf.get("status") or {}
            if st.get("state") == state and (st.get("ready") or st.get("status") == "Error"):
                return wf, time.monotonic() - t0
            if time.monotonic() - t0 > SETTLE_TIMEOUT:
                return wf, math.inf
            time.sleep(0.05)

    def delete(self, name: str) -> float:
        """Delete as flux-dws does (then drop its finalizer); seconds until gone."""
        t0 = time.monotonic()
        try:
            self.api.delete_namespaced_custom_object(G, V, NS, "workflows", name)
        except self.exc as exc:
            if exc.status != 404:
                raise
        while time.monotonic() - t0 < SETTLE_TIMEOUT:
            try:
                md = self.get("workflows", name)["metadata"]
            except self.exc as exc:
                if exc.status == 404:
                    return time.monotonic() - t0
                raise
            fins = md.get("finalizers") or []
            if FINALIZER in fins:
                try:
                    self.patch("workflows", name, {"metadata": {
                        "resourceVersion": md["resourceVersion"],
                        "finalizers": [f for f in fins if f != FINALIZER]}})
                except self.exc as exc:
                    if exc.status not in (404, 409):
                        raise
            time.sleep(0.05)
        return math.inf


def _message(exc: Any) -> str:
    """An API error's Status message (or its code and reason)."""
    try:
        return str(json.loads(exc.body)["message"])
    except (TypeError, ValueError, KeyError):
        return f"{exc.status} {exc.reason}"


def _seconds(s: float) -> str:
    """Order of magnitude: what compares between two machines' runs."""
    if s == math.inf:
        return "never"
    return "<1 s" if s < 1 else "1-10 s" if s < 10 else ">=10 s"


def _abstract(value: Any, uid: str, name: str, side: Side) -> Any:
    text = json.dumps(value, sort_keys=True)
    if uid:
        text = text.replace(uid, "<uid>")
    text = re.sub(re.escape(name) + r"(?![0-9])", "<name>", text)
    text = text.replace(side.lustre_root.rstrip("/"), "<lus>")
    return json.loads(text)


def _workflow_view(wf: dict[str, Any]) -> dict[str, Any]:
    st = wf.get("status") or {}
    return {"state": st.get("state"), "status": st.get("status"),
            "ready": bool(st.get("ready")), "message": st.get("message") or "",
            "drivers": sorted(f"{d.get('driverID')}:{d.get('watchState')}:"
                              f"{'done' if d.get('completed') else 'waiting'}"
                              for d in st.get("drivers") or [])}


def _breakdowns(w: _Wlm, wf: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for ref in (wf.get("status") or {}).get("directiveBreakdowns") or []:
        dbd = w.get("directivebreakdowns", ref["name"], ref.get("namespace", NS))
        st = dbd.get("status") or {}
        storage = st.get("storage") or {}
        out.append({
            "ready": bool(st.get("ready")),
            "lifetime": storage.get("lifetime"),
            "allocationSets": [{k: a.get(k) for k in ("label", "allocationStrategy",
                                                      "minimumCapacity", "constraints")}
                               for a in storage.get("allocationSets") or []],
            "compute": st.get("compute")})
    return out


def _clientmounts(w: _Wlm, name: str) -> list[str]:
    out = []
    for cm in w.items("clientmounts",
                      label_selector=f"dataworkflowservices.github.io/workflow.name={name}"):
        for m in cm["spec"].get("mounts") or []:
            out.append(f"{cm['metadata']['namespace']} {m.get('type')} "
                       f"{m.get('mountPath')} {m.get('targetType')}")
    return sorted(out)


def _play_one(w: _Wlm, sc: Scenario, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    directives = [d.replace("<lus>", w.side.lustre_root.rstrip("/")) for d in sc.directives]
    refused = w.create(name, directives, sc.user)
    if refused is not None:
        yield "create", {"refused": refused.replace(name, "<name>")}
        return
    wf, took = w.settle(name, PROPOSAL)
    uid = wf["metadata"]["uid"]
    yield PROPOSAL, _abstract({**_workflow_view(wf), "breakdowns": _breakdowns(w, wf),
                                 "seconds": _seconds(took)}, uid, name, w.side)
    if sc.last == PROPOSAL or wf["status"].get("status") == "Error":
        yield "delete", {"seconds": _seconds(_teardown_and_delete(w, name))}
        return
    counts = RabbitMap(_kind_map()).counts(sc.hosts)
    if sc.allocations:
        counts = sc.allocations(counts)
    for ref in wf["status"].get("directiveBreakdowns") or []:
        storage = (w.get("directivebreakdowns", ref["name"]).get("status") or {}).get("storage")
        if storage:
            w.patch("servers", storage["reference"]["name"],
                    {"spec": {"allocationSets": allocation_sets(storage, counts)}})
    for state in STATES[STATES.index(PROPOSAL) + 1:]:
        if state == DATA_IN and sc.computes:
            w.patch("computes", name, {"data": [{"name": h} for h in Hostlist(sc.hosts)]})
        try:
            w.patch("workflows", name, {"spec": {"desiredState": state}})
        except w.exc as exc:
            yield state, _abstract({"refused": _message(exc)}, uid, name, w.side)
            break
        wf, took = w.settle(name, state)
        seen = {**_workflow_view(wf), "seconds": _seconds(took)}
        if state == PRE_RUN:
            seen["env"] = wf["status"].get("env") or {}
            seen["clientmounts"] = _clientmounts(w, name)
        yield state, _abstract(seen, uid, name, w.side)
        if state == sc.last or wf["status"].get("status") == "Error":
            break
    yield "delete", {"seconds": _seconds(_teardown_and_delete(w, name))}


def _teardown_and_delete(w: _Wlm, name: str) -> float:
    wf = w.get("workflows", name)
    if (wf.get("status") or {}).get("state") != TEARDOWN:
        w.patch("workflows", name, {"spec": {"desiredState": TEARDOWN}})
        w.settle(name, TEARDOWN)
    return w.delete(name)


def play(side: Side, scenarios: list[Scenario] | None = None,
         prefix: str = "ref") -> Transcript:
    """Every scenario on ``side``, in order (persistent-use needs
    persistent-create before it); its transcript."""
    w = _Wlm(side)
    lus = Path(side.lustre_root)
    if lus.is_dir():   # the real side copies real files
        (lus / "in").mkdir(exist_ok=True)
        (lus / "in" / "data").write_text("payload\n")
    out: Transcript = {}
    for i, sc in enumerate(scenarios or SCENARIOS):
        name = f"fluxjob-{prefix}-{i}"
        steps: dict[str, dict[str, Any]] = {}
        for step, seen in _play_one(w, sc, name):
            steps[step] = seen
        if sc.name.startswith("persistent-"):
            steps["psi"] = _psi(w)
        out[sc.name] = steps
    return out


def _psi(w: _Wlm) -> dict[str, Any]:
    try:
        psi = w.get("persistentstorageinstances", "keep")
    except w.exc as exc:
        return {"exists": False} if exc.status == 404 else {"error": exc.status}
    return {"exists": True, "state": (psi.get("status") or {}).get("state"),
            "fsType": psi["spec"].get("fsType")}


def _flat(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for k in sorted(value):
            yield from _flat(f"{prefix}.{k}" if prefix else k, value[k])
    else:
        yield prefix, value


def compare(a: Transcript, b: Transcript, names: tuple[str, str] = ("emulator", "real")
            ) -> list[str]:
    """Every difference between two transcripts, one line each."""
    out = []
    known = [s.name for s in [*SCENARIOS, *CONTAINER_SCENARIOS]]
    for sc in [*(n for n in known if n in a or n in b),
               *sorted(n for n in {*a, *b} if n not in known)]:
        sa, sb = a.get(sc, {}), b.get(sc, {})
        for step in list(dict.fromkeys([*sa, *sb])):
            fa, fb = dict(_flat("", sa.get(step, {}))), dict(_flat("", sb.get(step, {})))
            if step not in sa or step not in sb:
                out.append(f"{sc}/{step}: step: {names[0]}={step in sa} "
                           f"{names[1]}={step in sb}")
                continue
            for key in list(dict.fromkeys([*fa, *fb])):
                va, vb = fa.get(key, "<absent>"), fb.get(key, "<absent>")
                if va != vb:
                    out.append(f"{sc}/{step}: {key}: {names[0]}={json.dumps(va)} "
                               f"{names[1]}={json.dumps(vb)}")
    return out


def both(work: Path) -> tuple[Transcript, Transcript]:
    """The transcripts of the emulator's controllers (attached to one real
    control plane, nnf-sos' example storage profile made their default, as
    on the other side) and of the real ones (on another)."""
    from flux_dws.emulator.attached import Attached
    from flux_dws.realstack import nnf
    from flux_dws.realstack.controlplane import ControlPlane

    build = nnf.build()
    with ControlPlane(work / "emulator") as cp:
        cp.install_crds()
        with Attached(cp.admin_kubeconfig, system="kind"):
            cp.apply(nnf.storage_profile(build))
            emu = play(Side("emulator", cp.admin_kubeconfig))
    with ControlPlane(work / "real") as cp, \
            nnf.RealControllers(cp, work / "real" / "nnf", nnf=build) as rc:
        real = play(Side("real", cp.admin_kubeconfig, lustre_root=str(rc.lustre_root)))
    return emu, real


def containers(work: Path) -> tuple[Transcript, Transcript]:
    """The transcripts of CONTAINER_SCENARIOS: the emulator's controllers
    (as in both()) and the real ones on rabbits that run Pods (PodNodes,
    with the MPI image and mpi-operator), the same profiles on each."""
    from flux_dws.emulator.attached import Attached
    from flux_dws.emulator.faults import Fault
    from flux_dws.realstack import containers as profiles
    from flux_dws.realstack import nnf
    from flux_dws.realstack.controlplane import ControlPlane
    from flux_dws.realstack.nodes import PodNodes

    build = nnf.build()
    mine = profiles.profiles(CONTAINER_USER, CONTAINER_USER)
    with ControlPlane(work / "emulator") as cp:
        cp.install_crds()
        with Attached(cp.admin_kubeconfig, system="kind") as att:
            cp.apply(nnf.storage_profile(build))
            for obj in mine:
                cp.apply(obj)
            assert att.controllers is not None
            for i, sc in enumerate(CONTAINER_SCENARIOS):
                if sc.fails_at:
                    att.controllers.faults.add(Fault(
                        kind="container", state=sc.fails_at, workflow=f"fluxjob-ctr-{i}",
                        message="Job has reached the specified backoff limit"))
            emu = play(Side("emulator", cp.admin_kubeconfig), CONTAINER_SCENARIOS, "ctr")
    with ControlPlane(work / "real") as cp:
        rabbits = sorted({r for r in _kind_map().values()})
        nodes = PodNodes(cp, rabbits, work / "real" / "nodes", mpi=True)
        with nnf.RealControllers(cp, work / "real" / "nnf", nnf=build, nodes=nodes) as rc:
            for obj in mine:
                cp.apply(obj)
            real = play(Side("real", cp.admin_kubeconfig, lustre_root=str(rc.lustre_root)),
                        CONTAINER_SCENARIOS, "ctr")
    return emu, real


def main() -> int:
    """Both sides on two control planes; print the transcripts' differences."""
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(prog="python -m flux_dws.referee.ctlreferee",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="FILE", help="write both transcripts to FILE")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="flux-dws-ctlreferee."))
    emu, real = both(work)
    if args.json:
        Path(args.json).write_text(json.dumps({"emulator": emu, "real": real}, indent=1))
    lines = compare(emu, real)
    for line in lines:
        why = accepted(line)
        print(line if why is None else f"{line}   [accepted: {why}]")
    new = [x for x in lines if accepted(x) is None]
    print(f"{len(lines)} differences, {len(new)} not accepted")
    return 1 if new else 0


if __name__ == "__main__":
    raise SystemExit(main())
