"""DWS Workflow admission and controller logic (spec §2.4A, §4.1-§4.3)."""

from __future__ import annotations

import copy
import datetime as dt

import pytest

from flux_dws.dwsim import workflow as wfm
from flux_dws.dwsim.fielderr import AdmissionError
from flux_dws.libdws.directives import default_ruleset

NOW = dt.datetime(2026, 11, 22, 12, 0, 0, tzinfo=dt.timezone.utc)
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
PREFIX = 'admission webhook "vworkflow.kb.io" denied the request: '


def new_wf(directives=(XFS,), **spec):
    wf = {"apiVersion": "dataworkflowservices.github.io/v1alpha7", "kind": "Workflow",
          "metadata": {"name": "fluxjob-1", "namespace": "default", "uid": "u-1"},
          "spec": {"desiredState": "Proposal", "dwDirectives": list(directives),
                   "wlmID": "flux", "jobID": "f1", "userID": 1000, "groupID": 1000,
                   "forceReady": False}}
    wf["spec"].update(spec)
    return wf


def test_create_registers_drivers_and_env():
    wf = wfm.admit_create(new_wf([XFS, "#DW copy_in source=/a destination=$DW_JOB_scratch/"]),
                          default_ruleset())
    st = wf["status"]
    assert st["env"] == {"DW_WORKFLOW_NAME": "fluxjob-1", "DW_WORKFLOW_NAMESPACE": "default"}
    assert [(d["dwdIndex"], d["watchState"]) for d in st["drivers"]] == [
        (0, "Proposal"), (0, "Setup"), (0, "PreRun"), (0, "PostRun"), (0, "Teardown"),
        (1, "Proposal"), (1, "DataIn"), (1, "Teardown")]
    assert st["drivers"][0] == {"driverID": "nnf", "taskID": "", "dwdIndex": 0,
                                "watchState": "Proposal", "lastHB": 0, "completed": False,
                                "status": "Pending"}
    assert st["ready"] is False and "state" not in st


@pytest.mark.parametrize(("wf", "message"), [
    (new_wf(desiredState="Setup"),
     'Spec.DesiredState: Invalid value: "Setup": desired state must start in Proposal'),
    (new_wf(hurry=True), "Spec.Hurry: Forbidden: the hurry flag may not be set on creation"),
    ({**new_wf(), "status": {"state": "Proposal"}},
     "Status.State: Forbidden: the status state may not be set on creation"),
    (new_wf(["#DW jobdw type=zfs capacity=1GiB name=aa"]), "argument 'type' invalid string 'zfs'"),
])
def test_create_refusals(wf, message):
    with pytest.raises(AdmissionError) as exc:
        wfm.admit_create(wf, default_ruleset())
    assert str(exc.value) == PREFIX + message


def test_create_without_rules_or_directives():
    with pytest.raises(AdmissionError, match="unable to find ruleset in namespace: dws-system"):
        wfm.admit_create(new_wf(), None)
    assert wfm.admit_create(new_wf([]), None)["status"]["drivers"] == []


def at_state(state, ready=True):
    wf = wfm.admit_create(new_wf(), default_ruleset())
    wf["spec"]["desiredState"] = state
    wf["status"].update(state=state, ready=ready)
    return wf


def moved(wf, **spec):
    new = copy.deepcopy(wf)
    new["spec"].update(spec)
    return new


def test_legal_updates():
    created = wfm.admit_create(new_wf(), default_ruleset())
    wfm.admit_update(created, moved(created))  # first update by DWS
    proposal = at_state("Proposal")
    wfm.admit_update(proposal, moved(proposal, desiredState="Setup"))
    wfm.admit_update(at_state("Setup", ready=False), moved(at_state("Setup", False),
                                                          desiredState="Teardown", hurry=True))
    wfm.admit_update(proposal, moved(proposal, forceReady=True))


@pytest.mark.parametrize(("state", "ready", "change", "message"), [
    ("Setup", True, {"desiredState": "Proposal"},
     'Spec.DesiredState: Invalid value: "Proposal": DesiredState cannot progress backwards'),
    ("Proposal", True, {"desiredState": "DataIn"},
     'Spec.DesiredState: Invalid value: "DataIn": states cannot be skipped'),
    ("Proposal", False, {"desiredState": "Setup"},
     'Status.State: Invalid value: "Proposal": current desired state not yet achieved'),
    ("Setup", True, {"hurry": True},
     "Spec.Hurry: Invalid value: true: the hurry flag may be set only in Teardown"),
    ("Setup", True, {"jobID": "f2"}, "Spec.JobID: Forbidden: field is immutable"),
    ("Setup", True, {"userID": 7}, "Spec.UserID: Forbidden: field is immutable"),
    ("Setup", True, {"dwDirectives": []}, "Spec.DWDirectives: Forbidden: field is immutable"),
])
def test_illegal_updates(state, ready, change, message):
    old = at_state(state, ready)
    with pytest.raises(AdmissionError) as exc:
        wfm.admit_update(old, moved(old, **change))
    assert str(exc.value) == PREFIX + message


def test_driver_integrity():
    old = at_state("Proposal", ready=False)
    new = copy.deepcopy(old)
    new["status"]["drivers"][1]["status"] = "Running"  # a Setup driver
    with pytest.raises(AdmissionError, match=r"Status.Drivers\[1\]: Internal error: driver entry"
                                             " for non-current state cannot be changed"):
        wfm.admit_update(old, new)
    new = copy.deepcopy(old)
    new["status"]["drivers"][0].update(completed=True, status="Running")
    with pytest.raises(AdmissionError, match="cannot be completed without status=Completed"):
        wfm.admit_update(old, new)
    new["status"]["drivers"][0].update(status="Completed", error="boom")
    with pytest.raises(AdmissionError, match="cannot be completed when error is present"):
        wfm.admit_update(old, new)
    done = copy.deepcopy(old)
    done["status"]["drivers"][0].update(completed=True, status="Completed")
    undone = copy.deepcopy(done)
    undone["status"]["drivers"][0].update(completed=False, status="Running")
    with pytest.raises(AdmissionError, match="driver cannot change from completed state"):
        wfm.admit_update(done, undone)


def run_until_quiet(wf, now=NOW, computes=True):
    for _ in range(10):
        step = wfm.reconcile(wf, now, computes_exist=computes)
        if step.workflow is None:
            return wf, step
        wf = step.workflow
    raise AssertionError("controller never settled")


def test_controller_walks_a_state():
    wf = wfm.admit_create(new_wf(), default_ruleset())
    step = wfm.reconcile(wf, NOW)
    assert step.workflow["metadata"]["finalizers"] == [wfm.FINALIZER]
    wf, step = run_until_quiet(step.workflow, computes=False)
    st = wf["status"]
    assert st["state"] == "Proposal" and st["ready"] is False
    assert st["status"] == "DriverWait" and st["message"] == ""
    assert st["desiredStateChange"] == "2026-11-22T12:00:00.000000Z"
    assert st["computes"] == {"kind": "Computes", "name": "fluxjob-1", "namespace": "default"}
    # the nnf driver finishes Proposal
    wf["status"]["drivers"][0].update(completed=True, status="Completed")
    later = NOW + dt.timedelta(seconds=1, microseconds=250)
    wf, _ = run_until_quiet(wf, later)
    st = wf["status"]
    assert st["ready"] is True and st["status"] == "Completed"
    assert st["elapsedTimeLastState"] == "1.00025s"
    assert st["readyChange"] == "2026-11-22T12:00:01.000250Z"


def test_controller_reports_the_most_important_driver():
    wf = at_state("Setup", ready=False)
    wf["metadata"]["finalizers"] = [wfm.FINALIZER]
    wf["status"]["desiredStateChange"] = "2026-11-22T12:00:00.000000Z"
    d = wf["status"]["drivers"][1]
    d.update(status="TransientCondition", message="User error: PersistentStorage 'p' not found")
    wf, _ = run_until_quiet(wf)
    assert wf["status"]["status"] == "TransientCondition"
    assert wf["status"]["message"] == "DW Directive 0: User error: PersistentStorage 'p' not found"
    assert wf["status"]["ready"] is False
    wf["status"]["drivers"][1].update(status="Error", message="Internal error: boom")
    wf, _ = run_until_quiet(wf)
    assert (wf["status"]["status"], wf["status"]["message"]) == (
        "Error", "DW Directive 0: Internal error: boom")


def test_force_ready_and_reset_on_transition():
    wf = at_state("Setup", ready=False)
    wf["metadata"]["finalizers"] = [wfm.FINALIZER]
    wf["status"]["desiredStateChange"] = "2026-11-22T12:00:00.000000Z"
    wf["spec"]["forceReady"] = True
    wf, _ = run_until_quiet(wf)
    assert wf["status"]["ready"] and wf["status"]["message"] == "Forced Ready"
    wf["spec"]["desiredState"] = "DataIn"
    wf, _ = run_until_quiet(wf)
    # no DataIn drivers for a lone jobdw: ready at once, forceReady reset
    assert wf["spec"]["forceReady"] is False
    assert wf["status"]["state"] == "DataIn" and wf["status"]["ready"] is True
    assert wf["status"]["message"] == ""


@pytest.mark.parametrize("state", ["Setup", "DataIn", "PreRun"])
@pytest.mark.parametrize("driver_status", ["Running", "TransientCondition", "Error"])
def test_force_ready_leaves_the_drivers_incomplete(state, driver_status):
    """DWS' rule (workflow_controller.go): forceReady makes the current
    state ready, Completed, "Forced Ready", whatever its drivers say (an
    Error too); the nnf drivers of that state stay incomplete."""
    wf = wfm.admit_create(new_wf([XFS, "#DW copy_in source=/a destination=$DW_JOB_scratch/"]),
                          default_ruleset())
    wf["metadata"]["finalizers"] = [wfm.FINALIZER]
    wf["spec"]["desiredState"] = state
    wf["status"].update(state=state, ready=False,
                        desiredStateChange="2026-11-22T12:00:00.000000Z")
    mine = [d for d in wf["status"]["drivers"] if d["watchState"] == state]
    assert mine, f"a driver watches {state}"
    for d in mine:
        d.update(status=driver_status, message="late")
    wf, _ = run_until_quiet(wf)
    assert wf["status"]["ready"] is False
    wf["spec"]["forceReady"] = True
    wf, _ = run_until_quiet(wf)
    st = wf["status"]
    assert (st["ready"], st["status"], st["message"]) == (True, "Completed", "Forced Ready")
    assert st["elapsedTimeLastState"]
    assert all(not d["completed"] for d in st["drivers"] if d["watchState"] == state)


def test_deletion_waits_for_other_finalizers():
    wf = at_state("Teardown")
    wf["metadata"]["deletionTimestamp"] = "2026-11-22T12:00:00Z"
    wf["metadata"]["finalizers"] = [wfm.FINALIZER, "flux-framework.readthedocs.io/workflow"]
    step = wfm.reconcile(wf, NOW, computes_exist=True)
    assert not (step.delete_computes or step.remove_finalizer or step.workflow)
    wf["metadata"]["finalizers"] = [wfm.FINALIZER]
    assert wfm.reconcile(wf, NOW, computes_exist=True).delete_computes
    assert wfm.reconcile(wf, NOW, computes_exist=False).remove_finalizer


def test_computes_object():
    c = wfm.computes_for(new_wf() | {"metadata": {"name": "w", "namespace": "ns", "uid": "u"}})
    assert c["metadata"]["name"] == "w" and c["data"] == []
    assert c["metadata"]["labels"]["dataworkflowservices.github.io/workflow.name"] == "w"
    assert c["metadata"]["ownerReferences"][0]["uid"] == "u"
