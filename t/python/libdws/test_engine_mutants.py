"""Decisions of the dws engine (src/common/libdws/engine/) that neither the
C tests nor the other cffi tests held: a mutation run (t/mutants/run.py,
``--seed 76 --sample 160`` over the decision files) changed each and
nothing failed.  Each test drives the engine through its public interface
only, events in and actions out, as the service does: a fake API server
(``Sim``) keeps the Workflows the engine creates and applies its merge
patches to them, answers its Kubernetes writes and RPCs, and moves a
Workflow on by completing the state it was asked for, as
src/common/libdws/test/engine.c's K8S does.

The tests after "seed 77" do the same for a second sample (``--seed 77``),
run once the first ones were written.  t/mutants/seed76-survivors.jsonl
and seed77-survivors.jsonl list each run's survivors, one a line: each
with the test here that kills it ("test"), or why it cannot change what
the engine does ("why": an equivalent mutant).
"""

from __future__ import annotations

import copy
import json
from collections import deque
from typing import Any

from t.python.libdws.test_rules_rare import merge  # the API server's merge patch

from flux_dws.libdws.engine import HEALTH_FLUSH_TIMER, Engine

Event = dict[str, Any]
Action = dict[str, Any]

USER = 1000
#: rabbit1 serves c1 and c2 (chassis0), rabbit2 serves c3 and c4 (chassis1)
SYSCONF = {
    "metadata": {"name": "default"},
    "spec": {
        "storageNodes": [
            {
                "type": "Rabbit",
                "name": "rabbit1",
                "computesAccess": [{"name": "c1", "index": 0}, {"name": "c2", "index": 1}],
            },
            {
                "type": "Rabbit",
                "name": "rabbit2",
                "computesAccess": [{"name": "c3", "index": 0}, {"name": "c4", "index": 1}],
            },
        ]
    },
}
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
LUSTRE = "#DW jobdw type=lustre capacity=10GiB name=lus"
PERSISTENT = "#DW persistentdw name=proj"
DEPENDENCY = "job-manager.dws.dependency"
RESOURCE_UPDATE = "job-manager.dws.resource-update"
STORAGE_LABEL = "dataworkflowservices.github.io/storage=Rabbit"


def nodes(count: int) -> list[dict[str, Any]]:
    """A jobspec's resources: `count` nodes alone (-N), one task each."""
    task = {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}
    return [{"type": "node", "count": count, "with": [task]}]


def logs(actions: list[Action]) -> list[str]:
    return [a["message"] for a in actions if a.get("action") == "log"]


def rpcs(actions: list[Action], topic: str) -> list[dict[str, Any]]:
    return [a["payload"] for a in actions if a.get("action") == "rpc" and a["topic"] == topic]


def workflow_creates(actions: list[Action]) -> list[str]:
    return [
        a["name"]
        for a in actions
        if a.get("action") == "k8s" and a.get("op") == "create" and a.get("kind") == "Workflow"
    ]


def xfs_storage(jobid: int) -> dict[str, Any]:
    """An xfs DirectiveBreakdown's storage: 10 GiB per compute."""
    return {
        "lifetime": "job",
        "allocationSets": [
            {
                "allocationStrategy": "AllocatePerCompute",
                "minimumCapacity": 10 << 30,
                "label": "xfs",
                "constraints": {"labels": [STORAGE_LABEL]},
            }
        ],
        "reference": {"kind": "Servers", "name": f"fluxjob-{jobid}", "namespace": "default"},
    }


def raises(actions: list[Action]) -> list[tuple[str, str]]:
    return [(a["type"], a["note"]) for a in actions if a.get("action") == "raise"]


class Sim:
    """One engine and the API server, job manager and Fluxion around it."""

    def __init__(self, **config: Any) -> None:
        self.engine = Engine({"owner": 0, **config})
        self.wfs: dict[str, dict[str, Any]] = {}
        self.acts: list[Action] = []  # the last event's actions
        self.seen: list[Action] = []  # every action since the last take_seen ()
        self.now: float | None = None  # the clock each event carries (None: none)

    def feed(self, event: Event) -> list[Action]:
        if self.now is not None and "now" not in event:
            event = {**event, "now": self.now}
        self.acts = self.engine.event(event)
        self.seen += self.acts
        for a in self.acts:
            if a.get("action") != "k8s" or a.get("kind") != "Workflow":
                continue
            if a["op"] == "create" and a["name"] not in self.wfs:
                self.wfs[a["name"]] = {**copy.deepcopy(a["body"]), "status": {}}
            elif a["op"] == "patch" and a["name"] in self.wfs:
                merge(self.wfs[a["name"]], a["body"])
        return self.acts

    def take_seen(self) -> list[Action]:
        seen, self.seen = self.seen, []
        return seen

    def wf(self, jobid: int) -> dict[str, Any]:
        return self.wfs[f"fluxjob-{jobid}"]

    def lists(self) -> None:
        """The first Workflow list (none) and the SystemConfiguration."""
        self.feed({"type": "sync", "kind": "Workflow", "objects": []})
        self.feed({"type": "sync", "kind": "SystemConfiguration", "objects": [SYSCONF]})

    def create(self, jobid: int, dw: list[str], count: int = 1, **payload: Any) -> list[Action]:
        return self.feed(
            {
                "type": "request",
                "userid": 0,
                "topic": "dws.create",
                "msgid": jobid,
                "groupid": 100,
                "payload": {
                    "jobid": jobid,
                    "userid": USER,
                    "resources": nodes(count),
                    "dw_directives": dw,
                    **payload,
                },
            }
        )

    def request(self, topic: str, msgid: int, **payload: Any) -> list[Action]:
        return self.feed(
            {"type": "request", "userid": 0, "topic": topic, "msgid": msgid, "payload": payload}
        )

    def setup(self, jobid: int, hosts: list[str]) -> list[Action]:
        """dws.setup with the job's R (RFC 20) naming `hosts`."""
        execution = {"R_lite": [], "nodelist": hosts, "starttime": 0, "expiration": 0}
        return self.request("dws.setup", 2, jobid=jobid, R={"version": 1, "execution": execution})

    def answer_all(self) -> None:
        """Answer the last event's writes and RPCs, and those of the
        events that answers bring, until none is left."""
        todo = deque(self.answers(self.acts))
        while todo:
            todo.extend(self.answers(self.feed(todo.popleft())))

    def result(self, token: str, obj: Any = None, code: int = 200) -> list[Action]:
        return self.feed(
            {
                "type": "k8s-result",
                "token": token,
                "ok": True,
                "code": code,
                "message": "",
                "object": copy.deepcopy(obj),
            }
        )

    def complete(self, jobid: int, **status: Any) -> list[Action]:
        """The Workflow completes the state it was asked for."""
        w = self.wf(jobid)
        w["status"] = {
            "state": w["spec"]["desiredState"],
            "ready": True,
            "status": "Completed",
            "elapsedTimeLastState": "1s",
            **status,
        }
        return self.feed(
            {"type": "watch", "kind": "Workflow", "event": "MODIFIED", "object": copy.deepcopy(w)}
        )

    def through_proposal(
        self,
        jobid: int,
        dw: list[str],
        storage: dict[str, Any] | None,
        count: int = 1,
        **payload: Any,
    ) -> list[Action]:
        """Created, Proposal complete, its DirectiveBreakdown (with
        `storage`, or none) read: the actions of that read."""
        self.create(jobid, dw, count, **payload)
        self.result(f"create:{jobid}", self.wf(jobid), 201)
        name = f"fluxjob-{jobid}-0"
        self.complete(jobid, directiveBreakdowns=[{"name": name, "namespace": "default"}])
        status: dict[str, Any] = {"ready": True}
        if storage is not None:
            status["storage"] = storage
        bd = {
            "kind": "DirectiveBreakdown",
            "metadata": {"name": name, "namespace": "default"},
            "status": status,
        }
        return self.result(f"breakdown:{jobid}", bd)

    def rabbits(self) -> None:
        """What rabbit health needs to place storage before the nodes: four
        online nodes, the Fluxion graph (two 100 GiB ssd vertices behind
        each rabbit), the rabbits' Storage Ready."""
        self.feed(
            {
                "type": "journal",
                "synced": False,
                "events": [
                    {
                        "timestamp": 1.0,
                        "name": "restart",
                        "context": {"ranks": "0-3", "online": "0-3", "nodelist": "c[1-4]"},
                    }
                ],
            }
        )
        self.feed(
            {
                "type": "graph",
                "graph": {
                    "ssds": {
                        "rabbit1": ["/c/chassis0/ssd0", "/c/chassis0/ssd1"],
                        "rabbit2": ["/c/chassis1/ssd0", "/c/chassis1/ssd1"],
                    },
                    "nodes": {
                        "c1": "/c/chassis0/c1",
                        "c2": "/c/chassis0/c2",
                        "c3": "/c/chassis1/c3",
                        "c4": "/c/chassis1/c4",
                    },
                    "ssd_gib": {"rabbit1": 100, "rabbit2": 100},
                },
            }
        )
        self.feed({"type": "flux-config", "exclude": None, "drainable": None})
        self.feed({"type": "journal", "events": [], "synced": True})

        def storage(name: str, computes: list[str]) -> dict[str, Any]:
            return {
                "kind": "Storage",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"state": "Enabled", "mode": "Live"},
                "status": {
                    "status": "Ready",
                    "capacity": 200 << 30,
                    "access": {
                        "servers": [{"name": name, "status": "Ready"}],
                        "computes": [{"name": c, "status": "Ready"} for c in computes],
                    },
                },
            }

        self.feed(
            {
                "type": "sync",
                "kind": "Storage",
                "objects": [storage("rabbit1", ["c1", "c2"]), storage("rabbit2", ["c3", "c4"])],
            }
        )

    def answers(self, actions: list[Action]) -> list[Event]:
        """Every write and RPC answered, as it asked (Fluxion's find for
        held vertices that are down: none)."""
        out: list[Event] = []
        for a in actions:
            token = a.get("token")
            if not token:
                continue
            if a.get("action") == "k8s":
                obj = self.wfs.get(a["name"]) if a.get("kind") == "Workflow" else None
                out.append(
                    {
                        "type": "k8s-result",
                        "token": token,
                        "ok": True,
                        "code": 200,
                        "message": "",
                        "object": copy.deepcopy(obj),
                    }
                )
            elif a.get("action") == "rpc":
                payload = {"R": None} if a["topic"].endswith(".find") else {}
                out.append(
                    {
                        "type": "rpc-result",
                        "token": token,
                        "ok": True,
                        "errnum": 0,
                        "errstr": "",
                        "payload": payload,
                    }
                )
        return out

    def settle(self, jobid: int, until: str) -> None:
        """Answer everything, flush rabbit health, and complete each state
        the job's Workflow is asked for, until it has completed `until`."""
        todo = deque(self.answers(self.acts))
        flushed = False
        for _ in range(500):
            if todo:
                todo.extend(self.answers(self.feed(todo.popleft())))
                flushed = False
                continue
            if not flushed:
                todo.extend(self.answers(self.feed({"type": "timer", "key": HEALTH_FLUSH_TIMER})))
                flushed = True
                continue
            w = self.wf(jobid)
            status = w.get("status", {})
            if status.get("state") == until and status.get("ready"):
                return
            if status.get("state") == w["spec"]["desiredState"] and status.get("ready"):
                raise AssertionError(f"fluxjob-{jobid} stopped in {status.get('state')}")
            todo.extend(self.answers(self.complete(jobid)))
            flushed = False
        raise AssertionError(f"fluxjob-{jobid} did not settle")


# --- [rabbit.limits] -------------------------------------------------------


def test_a_job_within_its_limits_has_its_workflow_created_at_once() -> None:
    """A dws.create within every limit of its user is not held: its
    Workflow is created with no dws-limit added and no wait logged, and
    its request is answered by the create's answer."""
    sim = Sim(limits={"max_user_jobs": 2, "users": {}})
    sim.lists()
    sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": []})
    acts = sim.create(101, [XFS])
    assert workflow_creates(acts) == ["fluxjob-101"]
    assert rpcs(acts, DEPENDENCY) == []
    assert not [m for m in logs(acts) if "waits" in m], logs(acts)
    assert not [a for a in acts if a.get("action") == "respond"], "answered before its create"
    acts = sim.result("create:101", sim.wf(101), 201)
    assert {"action": "respond", "msgid": 101, "payload": {"success": True}} in acts


def found_waiting_for_create(sim: Sim, jobid: int) -> list[Action]:
    """After a restart the job manager lists the job waiting on
    dws-create with no Workflow: its jobspec is read, and answered."""
    sim.lists()
    acts = sim.feed(
        {
            "type": "orphans",
            "complete": True,
            "jobs": [{"id": jobid, "state": "DEPEND", "dependencies": ["dws-create"]}],
        }
    )
    assert {"action": "job-info", "id": jobid, "token": f"job-info:{jobid}", "R": False} in acts
    return sim.feed(
        {
            "type": "job-info",
            "token": f"job-info:{jobid}",
            "ok": True,
            "userid": USER,
            "jobspec": {"resources": nodes(1), "attributes": {"system": {"dw": XFS}}},
        }
    )


def test_a_job_found_before_the_persistent_storage_is_listed_waits_for_the_list() -> None:
    """What a user's persistent storage holds counts against its limits:
    a job found waiting for its Workflow before the PSI list has come is
    held (dws-limit, "not listed yet"), not created; once the list comes
    and the user has room, its Workflow is created."""
    sim = Sim(limits={"max_user_gib": 15, "users": {}})
    acts = found_waiting_for_create(sim, 830)
    assert workflow_creates(acts) == []
    assert (
        "fluxjob-830: waits for its user's rabbit storage: the persistent storage is not listed yet"
    ) in logs(acts)
    assert rpcs(acts, DEPENDENCY) == [{"id": 830, "name": "dws-limit", "add": True}]
    acts = sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": []})
    assert workflow_creates(acts) == ["fluxjob-830"]


def test_a_persistent_storage_listed_late_can_hold_a_found_job_back() -> None:
    """The user's 10 GiB of persistent storage, listed after the job was
    found, leaves no room for the job's 10 GiB under max_user_gib 15: it
    is never created, and says why."""
    sim = Sim(limits={"max_user_gib": 15, "users": {}})
    assert workflow_creates(found_waiting_for_create(sim, 831)) == []
    psi = {
        "metadata": {"name": "proj"},
        "spec": {
            "userID": USER,
            "fsType": "lustre",
            "dwDirective": "#DW create_persistent type=lustre capacity=10GiB name=proj",
        },
    }
    acts = sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": [psi]})
    assert workflow_creates(acts) == []
    view = sim.engine.status()["jobs"]
    assert [j["phase"] for j in view if j["id"] == 831] == ["waiting-limit"]


# --- pre-staging ------------------------------------------------------------


def test_prestage_max_jobs_sends_the_next_job_the_usual_way() -> None:
    """rabbit.prestage_max_jobs = 1: with one job holding storage ahead of
    its nodes, the next is not pre-staged: its resources go to the
    scheduler without the prestage flag, and the log says how many hold."""
    sim = Sim(prestage="always", prestage_max_jobs=1)
    sim.lists()
    acts = sim.through_proposal(950, [PERSISTENT], None)
    assert "fluxjob-950: pre-staged: Setup and DataIn before its nodes" in logs(acts)
    acts = sim.result("prestage:950", sim.wf(950))
    assert [p.get("prestage") for p in rpcs(acts, RESOURCE_UPDATE)] == [True]
    acts = sim.through_proposal(951, [PERSISTENT], None)
    assert (
        "fluxjob-951: not pre-staged: 1 jobs hold 0 GiB ahead of their nodes"
        " (rabbit.prestage_max_jobs 1, prestage_max_gib 0)"
    ) in logs(acts)
    (update,) = rpcs(acts, RESOURCE_UPDATE)
    assert update["id"] == 951 and "prestage" not in update


def test_a_prestaged_job_found_running_after_a_restart_has_its_R_read() -> None:
    """A pre-staged job whose DataIn is done is let go to the scheduler;
    if it got its nodes while no service watched (its dws.setup lost),
    the restarted service finds it in RUN and reads its R to go on."""
    sim = Sim(prestage="always")
    sim.lists()
    sim.through_proposal(952, [PERSISTENT], None)
    sim.result("prestage:952", sim.wf(952))
    sim.complete(952)  # Setup
    acts = sim.complete(952)  # DataIn
    assert {"id": 952, "name": "dws-prestage", "add": False} in rpcs(acts, DEPENDENCY)

    again = Sim(prestage="always")
    again.feed({"type": "sync", "kind": "Workflow", "objects": [sim.wf(952)]})
    again.feed({"type": "sync", "kind": "SystemConfiguration", "objects": [SYSCONF]})
    acts = again.feed(
        {"type": "orphans", "complete": True, "jobs": [{"id": 952, "state": "RUN", "rabbit": True}]}
    )
    assert {"action": "job-info", "id": 952, "token": "job-info:952", "R": True} in acts


def lustre_sets(jobid: int) -> dict[str, Any]:
    """A Lustre DirectiveBreakdown's storage (OSTs across servers, an MGT/MDT)."""
    return {
        "lifetime": "job",
        "allocationSets": [
            {
                "allocationStrategy": "AllocateAcrossServers",
                "minimumCapacity": 10 << 30,
                "label": "ost",
                "constraints": {"labels": [STORAGE_LABEL], "scale": 5},
            },
            {
                "allocationStrategy": "AllocateAcrossServers",
                "minimumCapacity": 5 << 30,
                "label": "mgtmdt",
                "constraints": {
                    "labels": [STORAGE_LABEL],
                    "colocation": [{"type": "exclusive", "key": "lustre-mgt"}],
                },
            },
        ],
        "reference": {"kind": "Servers", "name": f"fluxjob-{jobid}-0", "namespace": "default"},
    }


def test_a_lustre_job_asking_to_be_prestaged_is_prestaged_when_fluxion_has_room() -> None:
    """dw_prestage=yes for a Lustre job the Fluxion graph can hold: it is
    pre-staged, the GiB its Lustre holds recorded on its Workflow, and its
    resources go to the scheduler with the prestage flag."""
    sim = Sim(fluxion=True)
    sim.lists()
    sim.rabbits()
    acts = sim.through_proposal(960, [LUSTRE], lustre_sets(960), prestage="yes")
    assert (
        "fluxjob-960: pre-staged: Setup and DataIn before its nodes (its Lustre held in Fluxion)"
    ) in logs(acts)
    note = json.loads(sim.wf(960)["metadata"]["annotations"]["flux-dws.io/prestage"])
    assert note["gib"] > 0
    acts = sim.result("prestage:960", sim.wf(960))
    assert [p.get("prestage") for p in rpcs(acts, RESOURCE_UPDATE)] == [True]


def test_node_local_storage_prestaged_pins_the_job_to_its_chassis() -> None:
    """xfs for 2 nodes, pre-staged: its storage is set up on one rabbit
    (both allocations on rabbit1, its two vertices held in Fluxion); when
    its DataIn is done, dws-prestage is removed with the jobspec that
    holds its nodes to that chassis: chassis(1){node(2)} and a hostlist
    constraint naming rabbit1's computes."""
    sim = Sim(fluxion=True, prestage="always")
    sim.lists()
    sim.rabbits()
    breakdown = {
        "lifetime": "job",
        "allocationSets": [
            {
                "allocationStrategy": "AllocatePerCompute",
                "minimumCapacity": 10 << 30,
                "label": "xfs",
                "constraints": {"labels": [STORAGE_LABEL]},
            }
        ],
        "reference": {"kind": "Servers", "name": "fluxjob-970", "namespace": "default"},
    }
    sim.through_proposal(970, [XFS], breakdown, count=2)
    sim.take_seen()
    sim.settle(970, until="DataIn")
    seen = sim.take_seen()
    servers = [a["body"] for a in seen if a.get("kind") == "Servers" and a.get("op") == "patch"]
    assert [s["spec"]["allocationSets"][0]["storage"] for s in servers] == [
        [{"name": "rabbit1", "allocationCount": 2}]
    ]
    (released,) = [p for p in rpcs(seen, DEPENDENCY) if p["name"] == "dws-prestage"]
    assert released == {
        "id": 970,
        "name": "dws-prestage",
        "add": False,
        "resources": [{"type": "chassis", "count": 1, "with": nodes(2)}],
        "constraint": {"hostlist": ["c[1-2]"]},
    }


# --- seed 77: a second sample, after the tests above -----------------------


def test_a_create_over_a_gib_limit_alone_is_refused_with_the_reason() -> None:
    """A job asking for more GiB than its user may ever hold is refused
    at its dws.create, the reason in the answer: it could never go."""
    sim = Sim(limits={"max_user_gib": 5, "users": {}})
    sim.lists()
    sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": []})
    acts = sim.create(102, [XFS])
    assert workflow_creates(acts) == []
    (answer,) = [a for a in acts if a.get("msgid") == 102]
    assert answer["payload"] == {
        "success": False,
        "errstr": "Requested a total of 10 GiB of rabbit storage but max_user_gib is 5 GiB"
        " (user 1000)",
    }


def test_a_psi_its_workflow_still_owns_is_counted_once() -> None:
    """Persistent storage a job is still creating (its PSI owned by the
    job's Workflow) counts against its user through that job alone: with
    10 GiB being created and max_user_gib 16, a 5 GiB job goes at once."""
    sim = Sim(limits={"max_user_gib": 16, "users": {}}, restrict_persistent_creation=False)
    sim.lists()
    sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": []})
    create = "#DW create_persistent type=lustre capacity=10GiB name=proj"
    assert workflow_creates(sim.create(103, [create])) == ["fluxjob-103"]
    sim.result("create:103", sim.wf(103), 201)
    psi = {
        "metadata": {
            "name": "proj",
            "ownerReferences": [{"kind": "Workflow", "name": "fluxjob-103"}],
        },
        "spec": {"userID": USER, "fsType": "lustre", "dwDirective": create},
    }
    sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": [psi]})
    acts = sim.create(104, ["#DW jobdw type=xfs capacity=5GiB name=scratch"])
    assert workflow_creates(acts) == ["fluxjob-104"], logs(acts)


def test_only_a_job_listed_holding_dws_limit_has_it_removed_after_a_restart() -> None:
    """After a restart the job manager's list says which waits a job
    holds: a job with a Workflow that holds dws-limit has it removed; one
    that holds only other waits (dws-prestage) gets no removal of a
    dws-limit it never had."""
    sim = Sim(prestage="always")
    sim.lists()
    for jobid in (953, 954):
        sim.through_proposal(jobid, [PERSISTENT], None)
        sim.result(f"prestage:{jobid}", sim.wf(jobid))
    again = Sim(prestage="always")
    again.feed({"type": "sync", "kind": "Workflow", "objects": [sim.wf(953), sim.wf(954)]})
    again.feed({"type": "sync", "kind": "SystemConfiguration", "objects": [SYSCONF]})
    acts = again.feed(
        {
            "type": "orphans",
            "complete": True,
            "jobs": [
                {"id": 953, "state": "DEPEND", "dependencies": ["dws-prestage"]},
                {"id": 954, "state": "DEPEND", "dependencies": ["dws-prestage", "dws-limit"]},
            ],
        }
    )
    limit = [p for p in rpcs(acts, DEPENDENCY) if p["name"] == "dws-limit"]
    assert limit == [{"id": 954, "name": "dws-limit", "add": False}]


def test_a_pick_leaves_room_for_the_jobs_ahead_and_says_why_it_waits() -> None:
    """A job ahead (submitted first, its ssd to come with its nodes) asks
    for all four vertices: a pre-staged job behind it takes none of them,
    and says at its first try why it waits."""
    sim = Sim(fluxion=True, prestage="always")
    sim.lists()
    sim.rabbits()
    sim.through_proposal(100, [XFS], xfs_storage(100), count=4, prestage="no")
    sim.through_proposal(101, [XFS], xfs_storage(101), count=2, prestage="yes")
    acts = sim.result("prestage:101", sim.wf(101))
    assert (
        "fluxjob-101: waits for its rabbit storage: 2 ssd vertices wanted on 1 rabbits, 4 of"
        " the 4 free vertices kept for the jobs ahead of it that get their ssd with their nodes"
    ) in logs(acts)
    assert "held" not in sim.wf(101)["metadata"]["annotations"]["flux-dws.io/prestage"]


def test_a_job_that_destroys_persistent_storage_is_not_prestaged() -> None:
    """prestage = "always" still sends a job that destroys persistent
    storage the usual way: its resources go without the prestage flag."""
    sim = Sim(prestage="always")
    sim.lists()
    psi = {
        "metadata": {"name": "proj"},
        "spec": {
            "userID": USER,
            "fsType": "lustre",
            "dwDirective": "#DW create_persistent type=lustre capacity=10GiB name=proj",
        },
    }
    sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": [psi]})
    acts = sim.through_proposal(955, ["#DW destroy_persistent name=proj"], None)
    assert not [m for m in logs(acts) if "pre-staged" in m], logs(acts)
    (update,) = rpcs(acts, RESOURCE_UPDATE)
    assert "prestage" not in update


def test_prestage_copy_in_prestages_the_jobs_that_copy_in_and_never_none() -> None:
    """rabbit.prestage = "copy-in" pre-stages a job with a copy_in and not
    one without; "never" pre-stages neither."""
    copy_in = "#DW copy_in source=/lus/in destination=$DW_PERSISTENT_proj/"
    for mode, want in (("copy-in", {956: True, 957: None}), ("never", {956: None, 957: None})):
        sim = Sim(prestage=mode)
        sim.lists()
        got: dict[int, Any] = {}
        for jobid, dw in ((956, [PERSISTENT, copy_in]), (957, [PERSISTENT])):
            acts = sim.through_proposal(jobid, dw, None)
            if any(a.get("token") == f"prestage:{jobid}" for a in acts):
                acts = sim.result(f"prestage:{jobid}", sim.wf(jobid))
            (update,) = rpcs(acts, RESOURCE_UPDATE)
            got[jobid] = update.get("prestage")
        assert got == want, mode


def test_a_prestaged_lustre_job_given_its_nodes_records_them_and_goes_on() -> None:
    """A pre-staged Lustre job whose data is in gets its nodes: its
    hosts and the rabbits its Lustre holds are recorded on its Workflow,
    and its Computes are filled with its nodes."""
    sim = Sim(fluxion=True)
    sim.lists()
    sim.rabbits()
    sim.through_proposal(961, [LUSTRE], lustre_sets(961), prestage="yes")
    sim.settle(961, until="DataIn")
    sim.setup(961, ["c1"])
    ann = sim.wf(961)["metadata"]["annotations"]
    assert ann["flux-dws.io/hosts"] == "c1"
    assert json.loads(ann["flux-dws.io/lustre-rabbits"]) == {"rabbit1": 100}
    acts = sim.result("hosts:961", sim.wf(961))
    computes = [a["body"] for a in acts if a.get("kind") == "Computes"]
    assert computes == [{"data": [{"name": "c1"}]}]


def test_the_rabbits_a_lustre_holds_are_written_again_if_the_workflow_lost_them() -> None:
    """The hosts of a pre-staged Lustre job go on its Workflow with the
    rabbits its Lustre holds; a Workflow seen with the hosts but without
    those rabbits (the annotation removed) has them written again."""
    sim = Sim(fluxion=True)
    sim.lists()
    sim.rabbits()
    sim.through_proposal(962, [LUSTRE], lustre_sets(962), prestage="yes")
    sim.settle(962, until="DataIn")
    sim.setup(962, ["c1"])
    wf = sim.wf(962)
    del wf["metadata"]["annotations"]["flux-dws.io/lustre-rabbits"]
    sim.feed({"type": "watch", "kind": "Workflow", "event": "MODIFIED", "object": wf})
    acts = sim.result("hosts:962", wf)
    again = [a["body"] for a in acts if a.get("token") == "hosts:962"]
    assert again == [
        {
            "metadata": {
                "annotations": {
                    "flux-dws.io/hosts": "c1",
                    "flux-dws.io/lustre-rabbits": '{"rabbit1":100}',
                }
            }
        }
    ]


def test_a_chassis_pin_that_no_longer_fits_the_job_is_logged_and_dropped() -> None:
    """A pre-staged node-local job whose recorded split does not fit its
    nodes (its Workflow's annotation says 3 per chassis, the job has 2)
    is let go without the pin, the reason logged."""
    sim = Sim(fluxion=True, prestage="always")
    sim.lists()
    sim.rabbits()
    sim.through_proposal(971, [XFS], xfs_storage(971), count=2)
    sim.settle(971, until="Setup")
    wf = copy.deepcopy(sim.wf(971))
    note = json.loads(wf["metadata"]["annotations"]["flux-dws.io/prestage"])
    note["split"]["per"] = 3
    wf["metadata"]["annotations"]["flux-dws.io/prestage"] = json.dumps(note)
    again = Sim(fluxion=True, prestage="always")
    again.wfs = {"fluxjob-971": wf}
    again.feed({"type": "sync", "kind": "Workflow", "objects": [wf]})
    again.feed({"type": "sync", "kind": "SystemConfiguration", "objects": [SYSCONF]})
    again.rabbits()
    again.settle(971, until="DataIn")
    seen = again.take_seen()
    assert (
        "fluxjob-971: cannot hold it to its chassis: 1 chassis of 3 nodes are not the job's 2 nodes"
    ) in logs(seen)
    released = [p for p in rpcs(seen, DEPENDENCY) if p["name"] == "dws-prestage"]
    assert released == [{"id": 971, "name": "dws-prestage", "add": False}]


def test_datain_progress_of_one_data_movement_is_its_percent() -> None:
    """A pre-staged job's DataIn is read while it moves: with one data
    movement 40% done, dws.job shows DataIn 40% done."""
    sim = Sim(prestage="always", datain_stall_timeout=60)
    sim.now = 1000.0
    sim.lists()
    sim.through_proposal(958, [PERSISTENT], None)
    sim.result("prestage:958", sim.wf(958))
    acts = sim.complete(958)  # Setup: DataIn asked, its progress read from now on
    assert {"action": "timer-start", "key": "datain:958", "after": 15.0} in acts
    sim.now = 1010.0
    sim.feed({"type": "timer", "key": "datain:958"})
    moving = {"status": {"state": "Running", "commandStatus": {"progress": 40}}}
    sim.result("datain:958", {"items": [moving]})
    sim.request("dws.job", 7, jobid=958)
    (answer,) = sim.result("jobview:958", {"items": []})
    datain = answer["payload"]["prestage"]["datain"]
    assert (datain["percent"], datain["dms"], datain["finished"]) == (40.0, 1, 0)


def test_setup_timeout_within_the_tolerance_gives_the_slow_hosts_up() -> None:
    """dw_failure_tolerance 2, Setup times out with one slow rabbit: its
    one compute of the job is given up (dws-node-failure), the job goes
    on, no dws-timeout."""
    sim = Sim(setup_timeout=60)
    sim.lists()
    sim.through_proposal(400, [XFS], xfs_storage(400), count=2, failure_tolerance=2)
    sim.setup(400, ["c1", "c3"])
    sim.answer_all()
    acts = sim.feed({"type": "timer", "key": "setup:400"})
    assert [a["token"] for a in acts] == ["setup-timeout:400"]
    servers = {
        "spec": {
            "allocationSets": [
                {
                    "label": "xfs",
                    "storage": [
                        {"name": "rabbit1", "allocationCount": 1},
                        {"name": "rabbit2", "allocationCount": 1},
                    ],
                }
            ]
        },
        "status": {
            "allocationSets": [
                {"storage": {"rabbit1": {"allocationSize": 10 << 30, "ready": True}}}
            ]
        },
    }
    acts = sim.result("setup-timeout:400", {"items": [servers]})
    assert raises(acts) == [("dws-node-failure", "c3")]


def test_a_transient_condition_that_clears_stops_its_timer_from_time_zero() -> None:
    """A Workflow in TransientCondition starts the tc timer; out of it
    again, the timer stops: from the engine's first instant (time 0) as
    at any other."""
    sim = Sim(tc_timeout=10)
    sim.now = 0.0
    sim.lists()
    sim.through_proposal(981, [XFS], xfs_storage(981))
    sim.setup(981, ["c1"])
    sim.answer_all()
    wf = sim.wf(981)
    wf["status"] = {"state": "Setup", "ready": False, "status": "TransientCondition"}
    acts = sim.feed({"type": "watch", "kind": "Workflow", "event": "MODIFIED", "object": wf})
    assert {"action": "timer-start", "key": "tc:981", "after": 10.0} in acts
    wf["status"] = {"state": "Setup", "ready": False, "status": "DriverWait"}
    acts = sim.feed({"type": "watch", "kind": "Workflow", "event": "MODIFIED", "object": wf})
    assert {"action": "timer-stop", "key": "tc:981"} in acts


def test_a_computes_write_answered_404_is_made_again_at_the_next_sighting() -> None:
    """The Computes not there yet (404): once the Workflow is seen again,
    the engine fills them again."""
    sim = Sim()
    sim.lists()
    sim.through_proposal(982, [XFS], xfs_storage(982))
    sim.setup(982, ["c1"])
    sim.answer_all()
    acts = sim.complete(982, computes={"name": "fluxjob-982", "namespace": "default"})
    assert [a["token"] for a in acts if a.get("kind") == "Computes"] == ["computes:982"]
    sim.feed(
        {"type": "k8s-result", "token": "computes:982", "ok": False, "code": 404,
         "message": "computes.dataworkflowservices.github.io not found", "object": None}
    )  # fmt: skip
    acts = sim.feed(
        {"type": "watch", "kind": "Workflow", "event": "MODIFIED", "object": sim.wf(982)}
    )
    assert [a["token"] for a in acts if a.get("kind") == "Computes"] == ["computes:982"]


def torn_down_after_setup_timeout(sim: Sim, jobid: int) -> None:
    """The job's Setup times out with no tolerance: dws-timeout, then the
    reads before Teardown (its data movements) and the Teardown patch."""
    sim.through_proposal(jobid, [XFS], xfs_storage(jobid))
    sim.setup(jobid, ["c1"])
    sim.answer_all()
    sim.feed({"type": "timer", "key": f"setup:{jobid}"})
    acts = sim.result(f"setup-timeout:{jobid}", {"items": []})
    assert ("dws-timeout", "File system creation took too long") in raises(acts)
    sim.answer_all()
    assert sim.wf(jobid)["spec"]["desiredState"] == "Teardown"


def test_a_late_read_answer_does_not_keep_the_epilog_unmarked() -> None:
    """A job failed before its epilog: Teardown asked once its data
    movements are read.  A second answer to that read (a late one, from
    before a restart) changes nothing: the epilog that begins later is
    still marked on the Workflow."""
    sim = Sim(save_datamovements=1, setup_timeout=60)
    sim.lists()
    torn_down_after_setup_timeout(sim, 983)
    sim.result("dm:983", {"items": []})
    acts = sim.request("dws.post_run", 4, jobid=983, run_started=False)
    marks = [a["body"] for a in acts if a.get("token") == "annotate:983"]
    assert marks == [{"metadata": {"annotations": {"flux-dws.io/epilog": "active"}}}]


def test_a_finalizer_removal_whose_test_fails_is_not_an_error() -> None:
    """The finalizer's removal tests that it is where the Workflow was
    seen with it; a 409 (it moved) waits for the Workflow to change, and
    is no error to log."""
    sim = Sim(save_datamovements=1, setup_timeout=60)
    sim.lists()
    torn_down_after_setup_timeout(sim, 984)
    sim.request("dws.post_run", 4, jobid=984, run_started=False)
    sim.answer_all()
    acts = sim.complete(984)
    assert [a["op"] for a in acts if a.get("token") == "finalizer:984"] == ["json-patch"]
    acts = sim.feed(
        {"type": "k8s-result", "token": "finalizer:984", "ok": False, "code": 409,
         "message": "the test operation failed", "object": None}
    )  # fmt: skip
    assert [a for a in acts if a.get("level") == "err"] == []


# --- seed 78 -------------------------------------------------------------------
# a third sample (t/mutants/seed78-survivors.jsonl), of engine/decider/,
# engine/verbs/ and engine/request.c once they stood in rooms


def test_a_job_in_the_first_bucket_counts_against_prestage_max_jobs() -> None:
    """Every job of the job table is counted, the first of its buckets as
    well (job 62 hashes to bucket 0 of 64): with it holding storage ahead
    of its nodes and prestage_max_jobs 1, the next is not pre-staged."""
    sim = Sim(prestage="always", prestage_max_jobs=1)
    sim.lists()
    sim.through_proposal(62, [PERSISTENT], None)
    sim.result("prestage:62", sim.wf(62))
    acts = sim.through_proposal(951, [PERSISTENT], None)
    assert (
        "fluxjob-951: not pre-staged: 1 jobs hold 0 GiB ahead of their nodes"
        " (rabbit.prestage_max_jobs 1, prestage_max_gib 0)"
    ) in logs(acts)


def test_a_waiting_job_that_fits_stays_behind_an_older_one_that_waits() -> None:
    """Waiting jobs go in submission order.  max_user_gib 25; a 10 GiB
    persistent storage and a 10 GiB job held: an older job of 20 GiB and a
    younger one of 10 GiB wait.  Once the persistent storage is gone the
    younger one would fit, the older one still not: the younger stays."""
    proj = {
        "metadata": {"name": "proj"},
        "spec": {
            "userID": USER,
            "fsType": "lustre",
            "dwDirective": "#DW create_persistent type=lustre capacity=10GiB name=proj",
        },
    }
    sim = Sim(limits={"max_user_gib": 25, "users": {}})
    sim.lists()
    sim.feed({"type": "orphans", "complete": True, "jobs": []})
    sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": [proj]})
    assert workflow_creates(sim.create(201, [XFS])) == ["fluxjob-201"]
    sim.result("create:201", sim.wf(201), 201)
    assert workflow_creates(sim.create(202, ["#DW jobdw type=xfs capacity=20GiB name=s"])) == []
    assert workflow_creates(sim.create(203, [XFS])) == []
    acts = sim.feed({"type": "sync", "kind": "PersistentStorageInstance", "objects": []})
    assert workflow_creates(acts) == []
    phases = {j["id"]: j["phase"] for j in sim.engine.status()["jobs"]}
    assert (phases[202], phases[203]) == ("waiting-limit", "waiting-limit")


def test_datain_progress_written_as_a_real_number_is_read() -> None:
    """A data movement's progress written as a real number (62.5) is read
    as its whole percent, not as nothing done."""
    sim = Sim(prestage="always", datain_stall_timeout=60)
    sim.now = 1000.0
    sim.lists()
    sim.through_proposal(963, [PERSISTENT], None)
    sim.result("prestage:963", sim.wf(963))
    sim.complete(963)  # Setup: DataIn asked, its progress read from now on
    sim.now = 1010.0
    sim.feed({"type": "timer", "key": "datain:963"})
    moving = {"status": {"state": "Running", "commandStatus": {"progress": 62.5}}}
    sim.result("datain:963", {"items": [moving]})
    sim.request("dws.job", 7, jobid=963)
    (answer,) = sim.result("jobview:963", {"items": []})
    assert answer["payload"]["prestage"]["datain"]["percent"] == 62.0


def test_a_workflow_found_with_its_prestaging_given_up_says_why() -> None:
    """After a restart, a job's Workflow made again once its pre-staging
    was given up (its annotation says why, no pre-staging record) is
    taken up as a job of the usual way, and its view says why."""
    sim = Sim(prestage="always")
    sim.lists()
    sim.create(964, [XFS])
    wf = copy.deepcopy(sim.wf(964))
    wf["metadata"].setdefault("annotations", {})["flux-dws.io/prestage-given-up"] = (
        "its rabbit went down")
    again = Sim(prestage="always")
    again.feed({"type": "sync", "kind": "Workflow", "objects": [wf]})
    again.feed({"type": "sync", "kind": "SystemConfiguration", "objects": [SYSCONF]})
    again.request("dws.job", 8, jobid=964)
    (answer,) = again.result("jobview:964", {"items": []})
    assert answer["payload"]["prestage_not"] == "given up: its rabbit went down"


def test_dws_ready_is_answered_to_its_request() -> None:
    """dws.ready (the jobtap plugin's poll after a restart) is answered to
    the request that asked, with whether rabbit health is applied."""
    sim = Sim()
    acts = sim.request("dws.ready", 31)
    (answer,) = [a for a in acts if a.get("action") == "respond"]
    assert answer["msgid"] == 31
    assert answer["payload"]["success"] is True and "ready" in answer["payload"]


def test_dws_released_lists_no_job_whose_computes_were_not_released() -> None:
    """dws.released names the jobs whose computes went back before their
    DataOut ended: a job still in Proposal is not one."""
    sim = Sim()
    sim.lists()
    sim.create(970, [XFS])
    acts = sim.request("dws.released", 32)
    (answer,) = [a for a in acts if a.get("action") == "respond"]
    assert answer["msgid"] == 32 and answer["payload"]["jobs"] == [], answer


def held_until_found(sim: Sim, jobid: int) -> None:
    """A pre-staged job's record answered, and every write and RPC after it
    as asked, until its ssd vertices are held and Fluxion's find for them
    is out (held back, unanswered)."""
    token = f"prestage-find:{jobid}"
    find: Action | None = None
    todo = deque(sim.answers(sim.result(f"prestage:{jobid}", sim.wf(jobid))))
    for _ in range(100):
        if not todo:
            if find is not None:
                break
            todo.extend(sim.answers(sim.feed({"type": "timer", "key": HEALTH_FLUSH_TIMER})))
            continue
        acts = sim.feed(todo.popleft())
        find = next((a for a in acts if a.get("token") == token), find)
        todo.extend(sim.answers([a for a in acts if a.get("token") != token]))
    assert find is not None, "no find for the held ssd vertices"


def test_ssd_vertices_found_free_are_the_jobs_on_its_chassis() -> None:
    """Fluxion's find says the ssd vertices held for a node-local pre-staged
    job are free: it holds them, on its chassis (the log says so), not
    for a Lustre."""
    sim = Sim(fluxion=True, prestage="always")
    sim.lists()
    sim.rabbits()
    sim.through_proposal(976, [XFS], xfs_storage(976), count=2)
    held_until_found(sim, 976)
    acts = sim.feed({"type": "rpc-result", "token": "prestage-find:976", "ok": True,
                     "errnum": 0, "errstr": "", "payload": {"R": None}})
    said = [m for m in logs(acts) if "rabbit ssd for" in m]
    assert said == ["fluxjob-976: holds 20 GiB of rabbit ssd for 2 nodes on each of 1 rabbits;"
                    " its nodes will be those rabbits' computes (c[1-2])"], logs(acts)


def test_ssd_vertices_found_taken_are_picked_again_not_kept() -> None:
    """Fluxion's find says one of the ssd vertices held for a pre-staged
    job is a running job's: the job picks others, and does not take the
    vertices it held as its own."""
    sim = Sim(fluxion=True, prestage="always")
    sim.lists()
    sim.rabbits()
    sim.through_proposal(971, [XFS], xfs_storage(971), count=2)
    held_until_found(sim, 971)
    held = json.loads(sim.wf(971)["metadata"]["annotations"]["flux-dws.io/prestage"])["held"]
    vertex = {"id": "0", "metadata": {"type": "ssd", "paths": {"containment": held[0]}}}
    acts = sim.feed({"type": "rpc-result", "token": "prestage-find:971", "ok": True,
                     "errnum": 0, "errstr": "", "payload": {"R": {"graph": {"nodes": [vertex]}}}})
    assert "fluxjob-971: 1 of the ssd vertices held for it were a job's: picking others" in (
        logs(acts))
    assert not [m for m in logs(acts) if "rabbit ssd for" in m], logs(acts)


def test_the_record_names_the_rule_that_asked_each_state() -> None:
    """The job's record says which rule asked for each state it reached:
    Setup by every Servers filled, DataIn by the Computes filled; and a
    step taken once its nodes are known reads them (" hosts")."""
    sim = Sim()
    sim.lists()
    sim.through_proposal(972, [XFS], xfs_storage(972))
    sim.answer_all()
    sim.setup(972, ["c1"])
    sim.settle(972, "DataIn")
    why = sim.engine.take_records()[972]["why"]
    assert why["states"]["Setup"] == "servers-written", why["states"]
    assert why["states"]["DataIn"] == "computes-written", why["states"]
    assert "Teardown" not in why["states"]
    after_setup = [s for s in why["steps"] if s.split()[1] == "computes-written"]
    assert after_setup and " hosts" in after_setup[0], why["steps"]


def test_a_job_asking_for_more_nodes_than_the_instance_has_is_not_prestaged() -> None:
    """A job of 6 nodes on an instance of 4 cannot hold storage for its
    nodes ahead of them: it is not pre-staged, and the log says why."""
    sim = Sim(fluxion=True, prestage="always")
    sim.lists()
    sim.rabbits()
    acts = sim.through_proposal(973, [PERSISTENT], None, count=6)
    assert "fluxjob-973: not pre-staged: it asks for 6 nodes, the instance has 4" in logs(acts)


def test_a_prestaged_job_released_early_reads_its_R_before_it_is_released() -> None:
    """release_computes after-unmount, a pre-staged job: once PostRun is
    done its R is read for the ssds to hold.  Its pre-staging's ssds are
    held already, but until R answers nothing is released: a sighting of
    its Workflow meanwhile moves nothing."""
    sim = Sim(fluxion=True, prestage="always", release_computes="after-unmount")
    sim.lists()
    sim.rabbits()
    sim.through_proposal(974, [XFS], xfs_storage(974), count=2)
    sim.settle(974, until="DataIn")
    sim.setup(974, ["c1", "c2"])
    sim.settle(974, until="PreRun")
    sim.request("dws.post_run", 4, jobid=974, run_started=True)
    sim.take_seen()
    sim.settle(974, until="PostRun")
    assert {"action": "job-info", "id": 974, "token": "job-info:974", "R": True} in (
        sim.take_seen())
    acts = sim.feed({"type": "watch", "kind": "Workflow", "event": "MODIFIED",
                     "object": copy.deepcopy(sim.wf(974))})
    assert acts == [], acts
    (job,) = sim.engine.status()["jobs"]
    assert job["phase"] == "releasing" and job["epilog"] is True


def test_nodes_that_came_before_the_unpin_keep_the_storage_of_their_chassis() -> None:
    """A pre-staged job held to its chassis whose nodes do not come within
    prestage_node_wait is let go of its chassis; the jobtap plugin answers
    EBUSY (its nodes came first): once they are known, those of its
    chassis, its storage is kept, and the log names them."""
    sim = Sim(fluxion=True, prestage="always", prestage_node_wait=30)
    sim.lists()
    sim.rabbits()
    sim.through_proposal(975, [XFS], xfs_storage(975), count=2)
    sim.settle(975, until="DataIn")
    todo = deque(sim.feed({"type": "timer", "key": "node_wait:975"}))
    unpin: Action | None = None
    while todo:  # the given-up note written; the unpin held back
        a = todo.popleft()
        if a.get("token") == "prestage-unpin:975":
            unpin = a
            continue
        for event in sim.answers([a]):
            todo.extend(sim.feed(event))
    assert unpin is not None and unpin["topic"] == "job-manager.dws.prestage-unpin"
    sim.feed({"type": "rpc-result", "token": "prestage-unpin:975", "ok": False, "errnum": 16,
              "errstr": "the job has its nodes", "payload": None})
    acts = sim.setup(975, ["c1", "c2"])
    assert ("fluxjob-975: its nodes c[1-2] are those of its chassis: its pre-staged storage"
            " is kept") in logs(acts), logs(acts)
