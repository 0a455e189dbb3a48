"""atheris target: sequences of dws service events into the engine (libdws
engine.h through flux_dws.libdws.engine).  Events are built from the wire of
doc/guide/service.rst: requests, Workflow syncs and watch events (from a
small fake API server that applies the engine's own creates and patches),
answers to the engine's Kubernetes calls, RPCs and job-info reads, its
timers, orphans; then some are mutated (a field deleted or replaced) and
some are arbitrary JSON.  Only a list of known actions or EngineError may
come out, and a refused event must leave the engine unchanged."""

import base64
import copy
import json
import sys
from typing import Any

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws import engine, wfstates
    from flux_dws.libdws.engine import Engine, EngineError

FIN = "flux-framework.readthedocs.io/workflow"
CONFIGS: list[dict[str, Any]] = [
    {},
    {"owner": 0, "setup_timeout": 60, "prerun_timeout": 30, "postrun_timeout": 20,
     "teardown_after": 5, "tc_timeout": 3},
    {"drain_compute_nodes": False, "save_datamovements": 2, "min_allocation_size": 1,
     "restrict_persistent_creation": False, "presets": {"p": "#DW jobdw type=xfs "
                                                             "capacity=1GiB name=p"}},
    {"policy": {"maximums": {"xfs": 20, "lustre": 1}}, "namespace": "ns"},
]
DWS = ["#DW jobdw type=xfs capacity=10GiB name=s",
       "#DW jobdw type=lustre capacity=1TiB name=l",
       ["#DW jobdw type=gfs2 capacity=2GiB name=g", "#DW persistentdw name=p"],
       "#DW create_persistent type=xfs capacity=1GiB name=c", "p", "", 5]
NODELISTS = [["c1"], ["c[1-2]"], ["c1", "c3"], ["c[1-4]"], ["rabbit1", "c2"], ["x[1-"]]
SYSCONF = {"metadata": {"name": "default"}, "spec": {"storageNodes": [
    {"type": "Rabbit", "name": "rabbit1",
     "computesAccess": [{"name": "c1", "index": 0}, {"name": "c2", "index": 1}]},
    {"type": "Rabbit", "name": "rabbit2",
     "computesAccess": [{"name": "c3", "index": 0}, {"name": "c4", "index": 1}]}]}}
STATES = list(wfstates.STATES)
STATUSES = ["Completed", "DriverWait", "Running", "TransientCondition", "Error"]
RESULTS = [(True, 200), (True, 201), (False, 404), (False, 409), (False, 422),
           (False, 500), (False, 0)]
MOUNTED = {"spec": {"node": "c1"}, "status": {"allReady": True,
                                              "mounts": [{"state": "mounted"}]}}
UNMOUNTED = {"spec": {"node": "c3"}, "status": {"mounts": [{"state": "unmounted"}]}}
NOT_READY = {"metadata": {"namespace": "c2"}, "status": {"allReady": False}}
SERVERS = {"spec": {"allocationSets": [{"label": "xfs", "storage": [
    {"name": "rabbit1", "allocationCount": 1}, {"name": "rabbit2", "allocationCount": 1}]}]},
    "status": {"allocationSets": [{"storage": {"rabbit1": {"allocationSize": 1,
                                                           "ready": True}}}]}}
DMS = [{"status": {"status": "Failed"}}, {"status": {"status": "Success"}}]
VALUES: list[Any] = [None, True, False, 0, -1, 1 << 62, 1.5, "", "x", "Error", [], {},
                     [None], {"a": None}]
ACTIONS = set(engine.ACTIONS)  # wire.h's list: every action the shells carry out
OPS = {"create", "patch", "json-patch", "delete", "get", "list", "log"}
KINDS = {"Workflow", "Computes", "Servers", "DirectiveBreakdown", "ClientMount", "Storage",
         "SystemStatus", "SystemConfiguration", "NnfDataMovement", "Secret", "Pod"}


# Every choice is one small ConsumeIntInRange (one byte, taken from the end
# of the input): a seed is the list of choices, reversed.


def pick(fdp: Any, seq: list[Any]) -> Any:
    return seq[fdp.ConsumeIntInRange(0, len(seq) - 1)]


def flag(fdp: Any) -> bool:
    return bool(fdp.ConsumeIntInRange(0, 1) == 1)


def merge(dst: dict[str, Any], patch: dict[str, Any]) -> None:
    for k, v in patch.items():
        if v is None:
            dst.pop(k, None)
        elif isinstance(v, dict) and isinstance(dst.get(k), dict):
            merge(dst[k], v)
        else:
            dst[k] = copy.deepcopy(v)


def breakdown(name: str, kind: int) -> dict[str, Any]:
    sets = [[{"label": "xfs", "allocationStrategy": "AllocatePerCompute",
              "minimumCapacity": 10 << 30}],
            [{"label": "ost", "allocationStrategy": "AllocateAcrossServers",
              "minimumCapacity": 1 << 40},
             {"label": "mgtmdt", "allocationStrategy": "AllocateSingleServer",
              "minimumCapacity": 1 << 30}],
            [{"label": "xfs", "allocationStrategy": "AllocateSingleServer",
              "minimumCapacity": 1}]]
    status: dict[str, Any] = {"ready": True}
    if kind < len(sets):
        status["storage"] = {"allocationSets": sets[kind],
                             "reference": {"kind": "Servers", "name": name}}
    return {"metadata": {"name": name}, "status": status}


class World:
    """What the shell around the engine would know: the Workflows (a fake
    API server applying the engine's creates and merge patches), the
    tokens of calls not answered yet and the timers running."""

    def __init__(self) -> None:
        self.wfs: dict[str, dict[str, Any]] = {}
        self.calls: list[dict[str, Any]] = []
        self.timers: list[str] = []
        self.msgid = 0

    def apply(self, actions: list[dict[str, Any]]) -> None:
        for a in actions:
            kind = a.get("action")
            if kind in ("k8s", "rpc", "job-info") and "token" in a:
                self.calls.append(a)
            elif kind == "timer-start":
                self.timers.append(a["key"])
            elif kind == "timer-stop" and a["key"] in self.timers:
                self.timers.remove(a["key"])
            if kind != "k8s" or a.get("kind") != "Workflow":
                continue
            name = a.get("name", "")
            if a["op"] == "create" and name not in self.wfs and isinstance(a.get("body"), dict):
                self.wfs[name] = {**copy.deepcopy(a["body"]), "status": {}}
            elif a["op"] == "patch" and name in self.wfs:
                merge(self.wfs[name], a["body"])
            elif a["op"] == "delete":
                self.wfs.pop(name, None)

    # --- event builders ---------------------------------------------------

    def request(self, fdp: Any) -> dict[str, Any]:
        self.msgid += 1
        job = fdp.ConsumeIntInRange(1, 3)
        which = fdp.ConsumeIntInRange(0, 6)
        payload: dict[str, Any] = {"jobid": job}
        topic = ["dws.create", "dws.setup", "dws.post_run", "dws.teardown", "dws.abort",
                 "dws.status", "dws.other"][which]
        if which == 0:
            payload.update(userid=pick(fdp, [0, 1000]),
                           resources=[{"type": "node", "count": fdp.ConsumeIntInRange(1, 4)}],
                           dw_directives=pick(fdp, DWS),
                           failure_tolerance=fdp.ConsumeIntInRange(0, 2))
        elif which == 1:
            payload["R"] = {"version": 1, "execution": {"R_lite": [],
                                                        "nodelist": pick(fdp, NODELISTS)}}
        elif which == 2:
            payload["run_started"] = flag(fdp)
        return {"type": "request", "topic": topic, "msgid": self.msgid, "userid": 1000,
                "now": 1700000000 + self.msgid, "payload": payload}

    def workflow(self, fdp: Any) -> dict[str, Any] | None:
        names = sorted(self.wfs)
        if names and fdp.ConsumeIntInRange(0, 3):
            wf = copy.deepcopy(self.wfs[pick(fdp, names)])
        else:
            # one a restarted engine finds: our annotations, any desiredState
            job = fdp.ConsumeIntInRange(1, 3)
            ann: dict[str, Any] = {"flux-dws.io/resources": '[{"type":"node","count":1}]',
                                   "flux-dws.io/failure-tolerance": "1"}
            if flag(fdp):
                ann["flux-dws.io/hosts"] = "c[1,3]"
            if flag(fdp):
                ann["flux-dws.io/epilog"] = "active"
            wf = {"metadata": {"name": f"fluxjob-{job}", "finalizers": [FIN],
                               "annotations": ann},
                  "spec": {"desiredState": pick(fdp, STATES), "wlmID": "flux",
                           "userID": 1000, "groupID": 1000, "dwDirectives": [DWS[0]]}}
        name = wf["metadata"]["name"]
        want = wf.get("spec", {}).get("desiredState", "Proposal")
        status: dict[str, Any] = {
            "state": want if fdp.ConsumeIntInRange(0, 3) else pick(fdp, STATES),
            "ready": fdp.ConsumeIntInRange(0, 3) > 0, "status": pick(fdp, STATUSES),
            "message": "m", "elapsedTimeLastState": "1s",
            "directiveBreakdowns": [{"name": f"{name}-0", "namespace": "default"}],
            "computes": {"name": name, "namespace": "default"},
            "env": {"DW_JOB_s": "/mnt/s"}}
        if flag(fdp):
            status["workflowToken"] = {"secretName": f"{name}-token"}
        wf["status"] = status
        if name in self.wfs:
            self.wfs[name]["status"] = copy.deepcopy(status)
        if fdp.ConsumeIntInRange(0, 7) == 0:
            wf["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        return wf

    def watch(self, fdp: Any) -> dict[str, Any]:
        wf = self.workflow(fdp)
        what = pick(fdp, ["MODIFIED", "MODIFIED", "ADDED", "DELETED"])
        if what == "DELETED" and wf is not None:
            self.wfs.pop(wf["metadata"]["name"], None)
        return {"type": "watch", "kind": "Workflow", "event": what, "object": wf}

    def sync(self, fdp: Any) -> dict[str, Any]:
        if flag(fdp):
            return {"type": "sync", "kind": "SystemConfiguration", "objects": [SYSCONF]}
        return {"type": "sync", "kind": "Workflow",
                "objects": [copy.deepcopy(w) for w in self.wfs.values()]}

    def answer(self, fdp: Any) -> dict[str, Any]:
        if not self.calls:
            return {"type": "k8s-result", "token": f"state:{fdp.ConsumeIntInRange(0, 3)}",
                    "ok": True, "code": 200, "message": "", "object": None}
        call = self.calls.pop(fdp.ConsumeIntInRange(0, len(self.calls) - 1))
        ok, code = pick(fdp, RESULTS)
        token = call["token"]
        if call["action"] == "rpc":
            return {"type": "rpc-result", "token": token, "ok": ok, "errnum": 0 if ok else 5,
                    "errstr": "" if ok else "EIO", "payload": None}
        if call["action"] == "job-info":
            spec = {"resources": [{"type": "node", "count": 1}],
                    "attributes": {"system": {"dw": pick(fdp, DWS),
                                              "dw_failure_tolerance": 1}}}
            return {"type": "job-info", "token": token, "ok": ok, "errstr": "ENOENT",
                    "userid": 1000, "jobspec": spec,
                    "R": {"execution": {"nodelist": pick(fdp, NODELISTS)}}}
        obj: Any = None
        kind, op = call.get("kind"), call.get("op")
        if kind == "DirectiveBreakdown":
            obj = breakdown(call.get("name", "b"), fdp.ConsumeIntInRange(0, 3))
        elif kind == "Secret":
            tok = pick(fdp, ["secret", "\u00e9\u0000x", "!!"])
            obj = {"data": {"token": base64.b64encode(tok.encode()).decode()
                            if tok != "!!" else tok}}
        elif op == "list":
            pools: dict[str, list[Any]] = {"ClientMount": [MOUNTED, UNMOUNTED, NOT_READY],
                                           "Servers": [SERVERS], "NnfDataMovement": DMS}
            pool = pools.get(kind or "", [])
            obj = {"items": [p for p in pool if flag(fdp)]}
        elif kind == "Workflow" and call.get("name") in self.wfs:
            obj = copy.deepcopy(self.wfs[call["name"]])
        return {"type": "k8s-result", "token": token, "ok": ok, "code": code,
                "message": "" if ok else "denied", "object": obj}

    def timer(self, fdp: Any) -> dict[str, Any]:
        if self.timers and fdp.ConsumeIntInRange(0, 3):
            key = self.timers.pop(fdp.ConsumeIntInRange(0, len(self.timers) - 1))
        else:
            key = f"{pick(fdp, ['setup', 'prerun', 'postrun', 'tc', 'x'])}:" \
                  f"{fdp.ConsumeIntInRange(0, 3)}"
        return {"type": "timer", "key": key}

    def orphans(self, fdp: Any) -> dict[str, Any]:
        jobs: list[Any] = []
        for _ in range(fdp.ConsumeIntInRange(0, 3)):
            job = fdp.ConsumeIntInRange(1, 3)
            if fdp.ConsumeIntInRange(0, 3) == 0:
                jobs.append(job)
            else:
                jobs.append({"id": job, "state": pick(fdp, ["DEPEND", "RUN", "CLEANUP"]),
                             "dependencies": pick(fdp, [["dws-create"], []])})
        return {"type": "orphans", "jobs": jobs}


def mutate(fdp: Any, event: Any) -> Any:
    """Delete or replace one value somewhere in the event."""
    root = copy.deepcopy(event)
    node = root
    for _ in range(fdp.ConsumeIntInRange(0, 4)):
        if isinstance(node, dict) and node:
            child = node[pick(fdp, sorted(node))]
        elif isinstance(node, list) and node:
            child = pick(fdp, node)
        else:
            break
        if not isinstance(child, (dict, list)):
            break
        node = child
    if isinstance(node, dict) and node:
        key = pick(fdp, sorted(node))
        if flag(fdp):
            del node[key]
        else:
            node[key] = pick(fdp, [*VALUES, fdp.ConsumeUnicodeNoSurrogates(20)])
    elif isinstance(node, list) and node:
        node[fdp.ConsumeIntInRange(0, len(node) - 1)] = pick(fdp, VALUES)
    return root


def raw(fdp: Any) -> Any:
    text = fdp.ConsumeUnicodeNoSurrogates(200)
    try:
        return json.loads(text)
    except ValueError:
        return {"type": text}


def check(actions: Any, event: Any) -> None:
    if not isinstance(actions, list):
        raise RuntimeError(f"not a list of actions: {actions!r}")
    for a in actions:
        if not isinstance(a, dict) or a.get("action") not in ACTIONS:
            raise RuntimeError(f"unknown action {a!r} for {event!r}")
        if a["action"] == "k8s" and (a.get("op") not in OPS or a.get("kind") not in KINDS):
            raise RuntimeError(f"bad k8s action {a!r} for {event!r}")
        if a["action"] == "k8s" and a["op"] in ("create", "patch", "json-patch") \
                and "body" not in a:
            raise RuntimeError(f"a {a['op']} without a body {a!r} for {event!r}")


def run(fdp: Any, observe: Any = None) -> None:
    engine = Engine(pick(fdp, CONFIGS))
    world = World()
    builders = [world.request, world.request, world.watch, world.watch, world.sync,
                world.answer, world.answer, world.answer, world.timer, world.orphans]
    for _ in range(fdp.ConsumeIntInRange(0, 64)):
        how = fdp.ConsumeIntInRange(0, len(builders) + 1)
        if how < len(builders):
            event: Any = builders[how](fdp)
        elif how == len(builders):
            event = mutate(fdp, pick(fdp, builders)(fdp))
        else:
            event = raw(fdp)
        before = engine.status()
        try:
            actions = engine.event(event)
        except EngineError:
            if engine.status() != before:
                raise RuntimeError(f"a refused event changed the engine: {event!r}") from None
            continue
        check(actions, event)
        world.apply(actions)
        if observe:
            observe(actions)


def test_one(data: bytes) -> None:
    run(atheris.FuzzedDataProvider(data))


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()
