"""The DWS Workflow: admission webhooks and the DWS controller step.

Implements the controller, the legal transitions, the mutating webhook and
the validating webhook (doc/guide/emulator.rst, Controllers), after
DWS' api/v1alpha7/workflow_webhook.go and controllers/workflow_controller.go.
Objects are plain dicts as the Kubernetes API holds them; functions return
new dicts and never mutate their arguments.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from flux_dws.dwsim import fielderr, gotime
from flux_dws.jsondata import copy_json
from flux_dws.libdws.directives import DirectiveError, Ruleset
from flux_dws.libdws.wfstates import PROPOSAL, STATES, TEARDOWN

FINALIZER = "dataworkflowservices.github.io/workflow"
WORKFLOW_LABELS = (
    "dataworkflowservices.github.io/workflow.name",
    "dataworkflowservices.github.io/workflow.namespace",
    "dataworkflowservices.github.io/workflow.uid",
)

# Driver status -> priority when the controller summarises drivers.
_PRIORITY = {"Error": 4, "TransientCondition": 3, "Completed": 1}


def _priority(status: str) -> int:
    return _PRIORITY.get(status, 2)  # Pending, Queued, Running, DriverWait


def state_index(state: str) -> int:
    return STATES.index(state) if state in STATES else -1


# --- admission -------------------------------------------------------------


def admit_create(wf: dict[str, Any], rules: Ruleset | None) -> dict[str, Any]:
    """Both webhooks on CREATE: returns the mutated Workflow or raises
    AdmissionError.  ``rules`` None means no DWDirectiveRule exists.
    """
    spec = wf.get("spec", {})
    status = wf.get("status") or {}
    state = spec.get("desiredState")
    if state != PROPOSAL:
        raise fielderr.AdmissionError(fielderr.invalid(
            "Spec.DesiredState", state, "desired state must start in Proposal"))
    if spec.get("hurry"):
        raise fielderr.AdmissionError(fielderr.forbidden(
            "Spec.Hurry", "the hurry flag may not be set on creation"))
    if status.get("state"):
        raise fielderr.AdmissionError(fielderr.forbidden(
            "Status.State", "the status state may not be set on creation"))
    directives = spec.get("dwDirectives") or []
    matches: list[dict[str, Any]] = []
    if directives:
        if rules is None:
            raise fielderr.AdmissionError("unable to find ruleset in namespace: dws-system")
        try:
            matches = rules.validate(directives)
        except DirectiveError as exc:
            raise fielderr.AdmissionError(str(exc)) from None
    out = copy_json(wf)
    st = out.setdefault("status", {})
    drivers: list[dict[str, Any]] = st.setdefault("drivers", []) or []
    st["drivers"] = drivers
    for m in matches:
        registered = {d["watchState"] for d in drivers
                      if d["dwdIndex"] == m["index"] and d["driverID"] == m["driverLabel"]}
        for s in m["watchStates"]:
            if s in registered:
                continue
            registered.add(s)
            drivers.append({"driverID": m["driverLabel"], "taskID": "", "dwdIndex": m["index"],
                            "watchState": s, "lastHB": 0, "completed": False,
                            "status": "Pending"})
    env = st.setdefault("env", {}) or {}
    st["env"] = env
    env["DW_WORKFLOW_NAME"] = out["metadata"]["name"]
    env["DW_WORKFLOW_NAMESPACE"] = out["metadata"].get("namespace", "default")
    st.setdefault("ready", False)
    return out


_IMMUTABLE = (("wlmID", "WLMID"), ("jobID", "JobID"), ("userID", "UserID"),
              ("groupID", "GroupID"), ("dwDirectives", "DWDirectives"))


def admit_update(old: dict[str, Any], new: dict[str, Any]) -> None:
    """The validating webhook on UPDATE; raises AdmissionError."""
    ospec, nspec = old.get("spec", {}), new.get("spec", {})
    ostat, nstat = old.get("status") or {}, new.get("status") or {}
    desired = nspec.get("desiredState")
    if nspec.get("hurry") and desired != TEARDOWN:
        raise fielderr.AdmissionError(fielderr.invalid(
            "Spec.Hurry", True, "the hurry flag may be set only in Teardown"))
    for key, name in _IMMUTABLE:
        if ospec.get(key) != nspec.get(key):
            raise fielderr.AdmissionError(fielderr.forbidden(f"Spec.{name}", "field is immutable"))
    old_state = ostat.get("state") or ""
    if old_state == "" and desired == PROPOSAL:
        return
    odrivers = ostat.get("drivers") or []
    for i, d in enumerate(nstat.get("drivers") or []):
        path = f"Status.Drivers[{i}]"
        before = odrivers[i] if i < len(odrivers) else None
        if d.get("watchState") != old_state:
            if before != d:
                raise fielderr.AdmissionError(fielderr.internal(
                    path, "driver entry for non-current state cannot be changed"))
            continue
        if d.get("completed"):
            if d.get("status") != "Completed":
                raise fielderr.AdmissionError(fielderr.internal(
                    path, "driver cannot be completed without status=Completed"))
            if d.get("error"):
                raise fielderr.AdmissionError(fielderr.internal(
                    path, "driver cannot be completed when error is present"))
        elif before is not None and before.get("completed"):
            raise fielderr.AdmissionError(fielderr.internal(
                path, "driver cannot change from completed state"))
    if desired == TEARDOWN or desired == old_state:
        return
    if state_index(old_state) > state_index(desired):
        raise fielderr.AdmissionError(fielderr.invalid(
            "Spec.DesiredState", desired, "DesiredState cannot progress backwards"))
    if state_index(old_state) + 1 != state_index(desired):
        raise fielderr.AdmissionError(fielderr.invalid(
            "Spec.DesiredState", desired, "states cannot be skipped"))
    if not ostat.get("ready"):
        raise fielderr.AdmissionError(fielderr.invalid(
            "Status.State", old_state, "current desired state not yet achieved"))


# --- the controller --------------------------------------------------------


@dataclass
class Step:
    """What one reconcile decided.

    ``workflow`` is the updated object to write (None: nothing to write);
    ``ensure_computes`` asks for the Computes object of the workflow (DWS
    creates it in Proposal and records it in status.computes);
    ``delete_computes`` asks for the Computes children to be deleted, after
    which the finalizer may go (``remove_finalizer``).
    """

    workflow: dict[str, Any] | None = None
    ensure_computes: bool = False
    delete_computes: bool = False
    remove_finalizer: bool = False
    notes: list[str] = field(default_factory=list)


def computes_for(wf: dict[str, Any]) -> dict[str, Any]:
    """The Computes object DWS creates for a Workflow (§1.4, §1.13)."""
    md = wf["metadata"]
    labels = {
        WORKFLOW_LABELS[0]: md["name"],
        WORKFLOW_LABELS[1]: md.get("namespace", "default"),
        WORKFLOW_LABELS[2]: md.get("uid", ""),
        "dataworkflowservices.github.io/owner.kind": "Workflow",
        "dataworkflowservices.github.io/owner.name": md["name"],
        "dataworkflowservices.github.io/owner.namespace": md.get("namespace", "default"),
        "dataworkflowservices.github.io/owner.uid": md.get("uid", ""),
    }
    return {
        "apiVersion": "dataworkflowservices.github.io/v1alpha7",
        "kind": "Computes",
        "metadata": {
            "name": md["name"], "namespace": md.get("namespace", "default"), "labels": labels,
            "ownerReferences": [{"apiVersion": wf.get("apiVersion", ""), "kind": "Workflow",
                                 "name": md["name"], "uid": md.get("uid", ""),
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "data": [],
    }


def reconcile(wf: dict[str, Any], now: dt.datetime, computes_exist: bool = False) -> Step:
    """One pass of the DWS workflow controller (§4.1)."""
    md = wf.get("metadata", {})
    finalizers = md.get("finalizers") or []
    if md.get("deletionTimestamp"):
        if FINALIZER not in finalizers or len(finalizers) != 1:
            return Step()
        if computes_exist:
            return Step(delete_computes=True)
        return Step(remove_finalizer=True)
    out = copy_json(wf)
    if FINALIZER not in finalizers:
        out["metadata"]["finalizers"] = [*finalizers, FINALIZER]
        return Step(workflow=out)
    spec = out["spec"]
    st = out.setdefault("status", {})
    if st.get("state") != spec.get("desiredState"):
        spec["forceReady"] = False
        st["state"] = spec["desiredState"]
        st["ready"] = False
        st["status"] = "DriverWait"
        st["message"] = ""
        st["desiredStateChange"] = gotime.microtime(now)
        return Step(workflow=out)
    step = Step()
    if spec["desiredState"] == PROPOSAL:
        ref = {"kind": "Computes", "name": md["name"], "namespace": md.get("namespace", "default")}
        if not computes_exist:
            step.ensure_computes = True
        if st.get("computes") != ref:
            st["computes"] = ref
            step.workflow = out
            return step
    if st.get("ready"):
        return step
    before = copy_json(st)
    st["ready"] = True
    st["status"] = "Completed"
    st["message"] = ""
    drivers = [d for d in st.get("drivers") or [] if d.get("watchState") == st["state"]]
    drivers.sort(key=lambda d: _priority(d.get("status", "")), reverse=True)
    if drivers:
        top = _priority(drivers[0].get("status", ""))
        for d in drivers:
            if not d.get("completed"):
                st["ready"] = False
            if _priority(d.get("status", "")) < top:
                break
            if d.get("message"):
                st["message"] = f"DW Directive {d['dwdIndex']}: {d['message']}"
            if d.get("status") in ("TransientCondition", "Error", "Completed"):
                st["status"] = d["status"]
            else:
                st["status"] = "DriverWait"
    if spec.get("forceReady"):
        st["ready"] = True
        st["status"] = "Completed"
        st["message"] = "Forced Ready"
    if st["ready"]:
        st["readyChange"] = gotime.microtime(now)
        start = gotime.parse_microtime(st["desiredStateChange"])
        st["elapsedTimeLastState"] = gotime.elapsed(start, now)
    if st != before:
        step.workflow = out
    return step
