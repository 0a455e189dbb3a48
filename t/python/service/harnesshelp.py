"""Helpers for the service tests: what is left behind, and waiting for it."""

from __future__ import annotations

import pwd
from typing import Any

from flux_dws.emulator.driver import RESOURCE
from flux_dws.emulator.faults import Fault
from flux_dws.harness import Harness
from flux_dws.libdws.jobsm import LIMIT_DEPENDENCY

LABEL = "dataworkflowservices.github.io/workflow.name"
#: what a job's Workflow brings with it (jobdw storage; persistent storage
#: outlives its workflow on purpose and is not counted)
KINDS = ("workflow", "computes", "servers", "clientmount", "nnfstorage", "access", "breakdown",
         "dm")


def leftovers(h: Harness) -> dict[str, int]:
    """{kind: count} of objects of any fluxjob-* Workflow still in the store."""
    out: dict[str, int] = {}
    store = h.emulator.store
    for kind in KINDS:
        n = 0
        for obj in store.list_objects(RESOURCE[kind], None):
            md = obj.get("metadata", {})
            name = md.get("name", "") if kind == "workflow" else \
                (md.get("labels") or {}).get(LABEL, "")
            if name.startswith("fluxjob-"):
                n += 1
        if n:
            out[kind] = n
    return out


def gone(h: Harness, jobid: int, timeout: float = 30.0) -> None:
    """Wait until the job's Workflow is deleted (the epilog ends first)."""
    name = f"fluxjob-{jobid}"

    def absent() -> bool:
        return all(o["metadata"]["name"] != name
                   for o in h.emulator.store.list_objects(RESOURCE["workflow"], None))

    h.wait_for(absent, timeout, f"workflow {name} to be deleted")


def settled(h: Harness, timeout: float = 30.0) -> dict[str, int]:
    """Wait until no fluxjob Workflow is left, then what else is left."""
    h.wait_for(lambda: not any(o["metadata"]["name"].startswith("fluxjob-")
                               for o in h.emulator.store.list_objects(RESOURCE["workflow"], None)),
               timeout, "every fluxjob Workflow to be deleted")
    return leftovers(h)


def cleared(h: Harness, timeout: float = 30.0) -> dict[str, int]:
    """Clear the emulator's injected faults (so stuck Teardowns can end),
    then ``settled``."""
    assert h.emulator.controllers is not None
    h.emulator.controllers.faults.clear()
    return settled(h, timeout)


def fault(h: Harness, **kw: object) -> None:
    """Set an emulator fault (emulator.faults.Fault's fields)."""
    assert h.emulator.controllers is not None
    h.emulator.controllers.faults.add(Fault(**kw))  # type: ignore[arg-type]


def phase(h: Harness, jobid: int) -> str | None:
    """The job's engine phase now (None: the engine has no such job)."""
    for j in h.status_now().get("jobs", []):
        if j["id"] == jobid:
            return j.get("phase")  # type: ignore[no-any-return]
    return None


def state(h: Harness, jobid: int) -> str:
    """The job's state in the harness's job manager now."""
    return h.reactor.call(lambda: h.jm.jobs[jobid].state)


def held(h: Harness, jobid: int) -> set[str]:
    """The ssd vertices the engine holds for the job, once Fluxion applied them."""
    for x in h.rabbits_now().get("holds", []):
        if x["job"] == jobid and x["applied"]:
            return set(x["paths"])
    return set()


# --- [rabbit.limits] ------------------------------------------------------------


def user_name(uid: int) -> str:
    """The name [rabbit.limits]' messages give a user (its uid without one)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def engine_view(h: Harness, jobid: int) -> dict[str, Any]:
    """The job's line of dws.jobs (every user's), or {}."""
    jobs = h.ask("dws.jobs", payload={"all_users": True})["jobs"]
    return next((j for j in jobs if j["id"] == jobid), {})


def waits_on_limit(h: Harness, jobid: int) -> None:
    """Wait until the job holds dws-limit."""
    h.wait_for(lambda: LIMIT_DEPENDENCY in h.jm.jobs[jobid].deps, 30,
               f"job {jobid} to wait on {LIMIT_DEPENDENCY}")


def has_workflow(h: Harness, jobid: int) -> bool:
    """Whether the job's Workflow exists."""
    return any(w["metadata"]["name"] == f"fluxjob-{jobid}" for w in h.workflows())
