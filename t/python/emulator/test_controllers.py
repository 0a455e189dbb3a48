"""Workflows driven through every state by the emulated DWS and nnf-sos
(the kind system), with the WLM side done by flux-dws' own libdws code."""

from __future__ import annotations

import json
import time

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import (
    NNF,
    NV,
    STATES,
    G,
    V,
    advance,
    ask_setup,
    controllers_passed,
    eventually,
    fill_servers,
    finish,
    new_workflow,
    remove_finalizer,
    wait,
)

from flux_dws.dwsim.gotime import parse_microtime
from flux_dws.emulator import Emulator
from flux_dws.emulator.faults import Fault


def test_xfs_workflow_through_every_state(kind):
    api = kind.custom_objects_api()
    core = kind.core_v1_api()
    new_workflow(api, "fluxjob-1", ["#DW jobdw type=xfs capacity=10GiB name=scratch"])
    wf = wait(api, "fluxjob-1", "Proposal")
    assert wf["status"]["env"]["DW_WORKFLOW_NAME"] == "fluxjob-1"
    assert wf["status"]["elapsedTimeLastState"].endswith("s")
    dbd = api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns", "fluxjob-1-0")
    assert dbd["status"]["storage"]["allocationSets"][0]["minimumCapacity"] == 10 << 30
    fill_servers(api, "fluxjob-1", "compute-[01-02]")
    advance(api, "fluxjob-1", "Setup")
    srv = api.get_namespaced_custom_object(G, V, "default", "servers", "fluxjob-1-0")
    assert srv["status"]["ready"] is True
    api.patch_namespaced_custom_object(G, V, "default", "computes", "fluxjob-1",
                                       {"data": [{"name": "compute-01"}, {"name": "compute-02"}]})
    advance(api, "fluxjob-1", "DataIn")
    wf = advance(api, "fluxjob-1", "PreRun")
    uid = wf["metadata"]["uid"]
    assert wf["status"]["env"]["DW_JOB_scratch"] == f"/mnt/nnf/{uid}-0"
    assert wf["status"]["env"]["DW_JOBS"] == f"scratch:/mnt/nnf/{uid}-0"
    cms = api.list_cluster_custom_object(
        G, V, "clientmounts", label_selector="dataworkflowservices.github.io/workflow.name="
                                             "fluxjob-1")["items"]
    assert sorted(c["metadata"]["namespace"] for c in cms) == ["compute-01", "compute-02"]
    assert all(c["status"]["mounts"][0]["state"] == "mounted" for c in cms)
    advance(api, "fluxjob-1", "PostRun")
    cm = api.get_namespaced_custom_object(G, V, "compute-01", "clientmounts",
                                          cms[0]["metadata"]["name"])
    assert cm["spec"]["desiredState"] == "unmounted"
    advance(api, "fluxjob-1", "DataOut")
    advance(api, "fluxjob-1", "Teardown")
    assert api.list_cluster_custom_object(
        "nnf.cray.hpe.com", "v1alpha11", "nnfstorages")["items"] == []
    assert api.list_cluster_custom_object(G, V, "clientmounts")["items"] == []
    # the breakdown and Servers stay until the Workflow is deleted, as in nnf-sos
    assert api.get_namespaced_custom_object(G, V, "default", "servers", "fluxjob-1-0")
    assert api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns",
                                            "fluxjob-1-0")
    api.delete_namespaced_custom_object(G, V, "default", "workflows", "fluxjob-1")
    remove_finalizer(api, "fluxjob-1")
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            api.get_namespaced_custom_object(G, V, "default", "workflows", "fluxjob-1")
        except ApiException as exc:
            assert exc.status == 404
            break
        time.sleep(0.02)
    else:
        raise AssertionError("the workflow was never deleted")
    assert api.list_namespaced_custom_object(G, V, "default", "computes")["items"] == []
    assert api.list_namespaced_custom_object(G, V, "default", "servers")["items"] == []
    assert api.list_namespaced_custom_object(G, V, "default", "directivebreakdowns")[
        "items"] == []
    del core


def test_lustre_and_persistent(kind):
    api = kind.custom_objects_api()
    # a persistent Lustre file system, made by a workflow of its own ...
    new_workflow(api, "mk", ["#DW create_persistent type=lustre capacity=1TiB name=proj"])
    wait(api, "mk", "Proposal")
    fill_servers(api, "mk", "compute-01")
    for state in STATES[1:]:
        advance(api, "mk", state)
    finish(api, "mk")

    def psi():
        return api.get_namespaced_custom_object(G, V, "default", "persistentstorageinstances",
                                                "proj")
    assert psi()["status"]["state"] == "Active"
    # ... used by a job that also has a Lustre file system of its own
    new_workflow(api, "fluxjob-2", ["#DW jobdw type=lustre capacity=1TiB name=lus",
                                    "#DW copy_in source=/lus/global/in destination=$DW_JOB_lus/",
                                    "#DW persistentdw name=proj"])
    wait(api, "fluxjob-2", "Proposal")
    fill_servers(api, "fluxjob-2", "compute-[01-04]")
    srv = api.get_namespaced_custom_object(G, V, "default", "servers", "fluxjob-2-0")
    labels = [s["label"] for s in srv["spec"]["allocationSets"]]
    assert labels == ["ost", "mgtmdt"]
    advance(api, "fluxjob-2", "Setup")
    assert psi()["spec"]["consumerReferences"] == [
        {"kind": "Workflow", "name": "fluxjob-2-2", "namespace": "default"}]
    api.patch_namespaced_custom_object(G, V, "default", "computes", "fluxjob-2",
                                       {"data": [{"name": "compute-01"}]})
    advance(api, "fluxjob-2", "DataIn")
    env = advance(api, "fluxjob-2", "PreRun")["status"]["env"]
    assert "DW_JOB_lus" in env and "DW_PERSISTENT_proj" in env
    finish(api, "fluxjob-2")
    # the job is gone; the persistent file system stays, with no consumer
    assert psi()["status"]["state"] == "Active"
    assert not psi()["spec"].get("consumerReferences")


def test_admission_refusals(kind):
    api = kind.custom_objects_api()
    with pytest.raises(ApiException) as exc:
        new_workflow(api, "bad", ["#DW jobdw type=zfs capacity=1GiB name=aa"])
    assert exc.value.status == 403
    assert json.loads(exc.value.body)["message"] == (
        'admission webhook "vworkflow.kb.io" denied the request: argument \'type\' invalid'
        " string 'zfs'")
    new_workflow(api, "w", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wait(api, "w", "Proposal")
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                           {"spec": {"desiredState": "PreRun"}})
    assert exc.value.status == 403 and "states cannot be skipped" in exc.value.body
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                           {"spec": {"userID": 1}})
    assert "Spec.UserID: Forbidden: field is immutable" in exc.value.body


def test_proposal_errors_reach_the_workflow(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "w", ["#DW jobdw type=xfs capacity=1GiB name=aa",
                            "#DW copy_in source=/nowhere/x destination=$DW_JOB_aa/"])
    wf = wait(api, "w", "Proposal", want="Error")
    assert wf["status"]["message"] == ("DW Directive 0: User error: global Lustre file system"
                                       " containing '/nowhere/x' not found")
    assert wf["status"]["ready"] is False
    advance_to_teardown = api.patch_namespaced_custom_object(
        G, V, "default", "workflows", "w", {"spec": {"desiredState": "Teardown"}})
    assert advance_to_teardown["spec"]["desiredState"] == "Teardown"
    wait(api, "w", "Teardown")


def test_bad_servers_fail_setup(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "w", ["#DW jobdw type=xfs capacity=10GiB name=aa"])
    wait(api, "w", "Proposal")
    api.patch_namespaced_custom_object(G, V, "default", "servers", "w-0", {"spec": {
        "allocationSets": [{"label": "xfs", "allocationSize": 1,
                            "storage": [{"name": "kind-worker2", "allocationCount": 1}]}]}})
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "Setup"}})
    wf = wait(api, "w", "Setup", want="Error")
    assert wf["status"]["message"] == ("DW Directive 0: WLM error: storage directive"
                                       " requirements were not satisfied")


def test_injected_faults(kind):
    api = kind.custom_objects_api()
    ctl = kind.controllers
    ctl.faults.add(Fault(workflow="w", state="Proposal", severity="Major",
                         message="PersistentStorage 'p' not found", type="User"))
    new_workflow(api, "w", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wf = wait(api, "w", "Proposal", want="TransientCondition")
    assert wf["status"]["message"] == "DW Directive 0: User error: PersistentStorage 'p' not found"
    ctl.enqueue("default", "w")  # reconciled again, the fault still there
    controllers_passed(api)
    assert api.get_namespaced_custom_object(G, V, "default", "workflows", "w")["status"][
        "status"] == "TransientCondition"  # it persists while the condition does
    ctl.faults.clear()  # the condition goes away: the next reconcile completes the state
    ctl.enqueue("default", "w")
    wait(api, "w", "Proposal")
    ctl.faults.add(Fault(state="Setup", severity="stall"))
    fill_servers(api, "w", "compute-01")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "Setup"}})
    controllers_passed(api)  # Setup was reconciled, and stalled
    wf = api.get_namespaced_custom_object(G, V, "default", "workflows", "w")
    assert wf["status"]["state"] == "Setup" and wf["status"]["status"] == "DriverWait"
    with pytest.raises(ValueError):
        ctl.faults.add(Fault(severity="Catastrophic"))


def _servers_ready(api, name):
    st = api.get_namespaced_custom_object(G, V, "default", "servers", name).get("status") or {}
    return {r: v["ready"] for aset in st.get("allocationSets") or []
            for r, v in aset["storage"].items()}


def test_forced_setup_with_a_late_rabbit(kind):
    """An allocation fault keeps kind-worker3's allocation late: Setup waits
    ("allocation set not ready"), its Servers say which rabbit is late; the
    WLM drops compute-04 (behind it) and forces Setup ready; PreRun mounts
    compute-[01-03] and gives compute-04, were it there, nothing to mount."""
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="allocation", rabbit="kind-worker3",
                                      severity="stall"))
    ask_setup(api, "late", ["#DW jobdw type=xfs capacity=1GiB name=aa"], "compute-[01-04]")
    wait(api, "late", "Setup", want="DriverWait")
    controllers_passed(api)
    wf = api.get_namespaced_custom_object(G, V, "default", "workflows", "late")
    assert (wf["status"]["ready"], wf["status"]["message"]) == (
        False, "DW Directive 0: allocation set not ready")
    assert _servers_ready(api, "late-0") == {"kind-worker2": True, "kind-worker3": False}
    # the WLM: compute-04 given up, the other three in Computes, forceReady
    api.patch_namespaced_custom_object(G, V, "default", "computes", "late", {
        "data": [{"name": c} for c in ("compute-01", "compute-02", "compute-03", "compute-04")]})
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "late",
                                       {"spec": {"forceReady": True}})
    wf = wait(api, "late", "Setup")
    assert wf["status"]["message"] == "Forced Ready"
    assert [d["completed"] for d in wf["status"]["drivers"] if d["watchState"] == "Setup"] \
        == [False]
    wf = advance(api, "late", "DataIn")
    assert wf["spec"]["forceReady"] is False  # reset at the transition
    wf = advance(api, "late", "PreRun")
    mounts = {cm["metadata"]["namespace"]: len(cm["spec"]["mounts"])
              for cm in api.list_cluster_custom_object(G, V, "clientmounts")["items"]}
    assert mounts == {"compute-01": 1, "compute-02": 1, "compute-03": 1, "compute-04": 0}
    assert "DW_JOB_aa" in wf["status"]["env"]
    finish(api, "late")


def test_a_stalled_setup_has_made_its_storage(kind):
    """A driver stall at Setup holds nnf-sos' finish, not its start: the
    NnfStorage exists, no allocation is ready; forced ready, PreRun gives
    the computes nothing to mount and completes."""
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(workflow="st", state="Setup", severity="stall"))
    ask_setup(api, "st", ["#DW jobdw type=gfs2 capacity=1GiB name=aa"], "compute-[01-02]")
    controllers_passed(api)
    storage = api.get_namespaced_custom_object(NNF, NV, "default", "nnfstorages", "st-0")
    assert storage["status"]["ready"] is False
    assert _servers_ready(api, "st-0") == {"kind-worker2": False}
    api.patch_namespaced_custom_object(G, V, "default", "computes", "st", {
        "data": [{"name": "compute-01"}]})
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "st",
                                       {"spec": {"forceReady": True}})
    wait(api, "st", "Setup")
    advance(api, "st", "DataIn")
    advance(api, "st", "PreRun")
    mounts = {cm["metadata"]["namespace"]: len(cm["spec"]["mounts"])
              for cm in api.list_cluster_custom_object(G, V, "clientmounts")["items"]}
    assert mounts == {"compute-01": 0}
    finish(api, "st")


@pytest.mark.parametrize(("fault", "message"), [
    ({"kind": "allocation", "severity": "stall"}, "an allocation fault needs a rabbit"),
    ({"kind": "allocation", "rabbit": "r", "severity": "Fatal"},
     "an allocation fault is a stall or a delay, not 'Fatal'"),
    ({"kind": "allocation", "rabbit": 3, "severity": "stall"}, "rabbit must be a string"),
])
def test_bad_allocation_faults(fault, message):
    with pytest.raises(ValueError, match=message):
        Fault(**fault)


def test_a_delayed_allocation_gets_ready(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="allocation", rabbit="kind-worker2",
                                      severity="delay", seconds=0.5))
    t0 = time.monotonic()
    ask_setup(api, "dl", ["#DW jobdw type=xfs capacity=1GiB name=aa"], "compute-01")
    wait(api, "dl", "Setup")
    assert time.monotonic() - t0 >= 0.4
    assert _servers_ready(api, "dl-0") == {"kind-worker2": True}
    finish(api, "dl")


def test_once_delay_fault_delays_despite_other_events(kind):
    api = kind.custom_objects_api()
    ctl = kind.controllers
    ctl.faults.add(Fault(workflow="d", state="Proposal", severity="delay", seconds=0.6,
                         once=True))
    t0 = time.monotonic()
    new_workflow(api, "d", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    time.sleep(0.1)
    # unrelated changes wake the controller before the delay is over
    for i in range(3):
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "d",
                                           {"metadata": {"labels": {"poke": str(i)}}})
        time.sleep(0.05)
    wait(api, "d", "Proposal")
    assert time.monotonic() - t0 >= 0.55
    assert ctl.faults.items == []  # used up once it had delayed


def test_driver_bug_shows_as_transient_condition(kind, monkeypatch, caplog):
    api = kind.custom_objects_api()
    ctl = kind.controllers
    ctl.retry_seconds = 0.1
    calls = []

    def broken(wf, d):
        calls.append(d.index)
        raise KeyError("lustreStorage")
    monkeypatch.setattr(ctl.drivers["jobdw"], "proposal", broken)
    new_workflow(api, "bug", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wf = wait(api, "bug", "Proposal", want="TransientCondition")
    assert wf["status"]["message"] == "DW Directive 0: Internal error: "
    (d,) = [d for d in wf["status"]["drivers"] if d["watchState"] == "Proposal"]
    assert d["error"] == "internal error: KeyError: 'lustreStorage'"
    assert "nnf driver default/bug Proposal directive 0" in caplog.text
    monkeypatch.undo()  # the bug is fixed: the retry completes the state
    wait(api, "bug", "Proposal", timeout=15)


def test_status_times_must_be_rfc3339(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "t", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wait(api, "t", "Proposal")
    # a client writing garbage into status (a Workflow has no status
    # subresource) gets the CRD's date-time format error, as from a cluster
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "t",
                                           {"status": {"desiredStateChange": "yesterday"}})
    assert exc.value.status == 422
    assert ('status.desiredStateChange: Invalid value: "yesterday": status.desiredStateChange'
            ' in body must be of type date-time: "yesterday"') in json.loads(
                exc.value.body)["message"]
    # any RFC 3339 form is accepted and read
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "t", {
        "status": {"desiredStateChange": "2026-11-22T10:00:00.123456789+01:00"}})
    fill_servers(api, "t", "compute-01")
    advance(api, "t", "Setup")


def test_latency_preset():
    with Emulator(system="kind", latency={"Proposal": 0.5}) as emu:
        api = emu.custom_objects_api()
        t0 = time.monotonic()
        new_workflow(api, "w", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
        wf = wait(api, "w", "Proposal")
        assert time.monotonic() - t0 >= 0.45
        st = wf["status"]
        took = parse_microtime(st["readyChange"]) - parse_microtime(st["desiredStateChange"])
        assert took.total_seconds() >= 0.45 and st["elapsedTimeLastState"].endswith("ms")
    with pytest.raises(ValueError, match="unknown latency preset"):
        Emulator(system="kind", latency="warp")


def test_demo_command(capsys):
    from flux_dws.cli.main import main
    assert main(["demo", "--workflow-only", "--latency", "zero", "--nodes", "3"]) == 0
    out = capsys.readouterr().out
    for state in ("Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut", "Teardown"):
        assert f"   {state}" in out
    assert "DW_JOB_scratch=/mnt/nnf/" in out and "job on compute-[01-03]" in out


def test_demo_jobs(capsys):
    """The README's main job: a batch of #DW jobs through the dws service."""
    from flux_dws.cli.main import main
    assert main(["demo", "--latency", "zero"]) == 0
    out = capsys.readouterr().out
    assert "4 completed, 2 failed as expected" in out
    assert "Workflows left in Kubernetes: 0" in out
    assert "DW_WORKFLOW_TOKEN=" in out and "dws_environment" in out
    assert "missing required argument" in out and "cancelled by the demo" in out


def test_demo_errors(capsys):
    from flux_dws.cli.main import main
    assert main(["demo", "--system", "nosuch"]) == 1
    assert "unknown system 'nosuch'" in capsys.readouterr().err
    assert main(["demo", "--workflow-only", "--latency", "zero",
                 "-d", "#DW jobdw type=xfs capacity=1GiB name=aa",
                 "-d", "#DW copy_in source=/elsewhere destination=$DW_JOB_aa/"]) == 1
    assert "global Lustre file system containing '/elsewhere' not found" in \
        capsys.readouterr().err


def test_default_storage_profile_must_be_unique(kind):
    api = kind.custom_objects_api()
    profiles = api.list_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "nnf-system",
                                                 "nnfstorageprofiles")["items"]
    (default,) = [p for p in profiles if p["data"].get("default")]
    api.create_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "nnf-system",
                                        "nnfstorageprofiles", {
        "apiVersion": "nnf.cray.hpe.com/v1alpha11", "kind": "NnfStorageProfile",
        "metadata": {"name": "also-default"}, "data": {"default": True}})
    new_workflow(api, "two", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wf = wait(api, "two", "Proposal", want="Error")
    names = " ".join(sorted(["also-default", default["metadata"]["name"]]))
    assert wf["status"]["message"] == ("DW Directive 0: Internal error: More than one default"
                                       f" NnfStorageProfile found; unable to pick one: [{names}]")
    for name in ("also-default", default["metadata"]["name"]):
        api.delete_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "nnf-system",
                                            "nnfstorageprofiles", name)
    new_workflow(api, "none", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wf = wait(api, "none", "Proposal", want="Error")
    assert wf["status"]["message"] == ("DW Directive 0: Internal error: Unable to find a default"
                                       " NnfStorageProfile to use")


def test_force_ready_mid_setup_while_its_latency_holds():
    """flux-coral2 at a tiny setup_timeout: forceReady lands while Setup's
    latency still holds nnf-sos' drivers.  nnf-sos made the NnfStorage at
    Setup's start (only its allocations are late), so the forced Setup has
    its storage: DWS marks Setup ready ("Forced Ready"), the Setup driver
    stays incomplete, and PreRun with the compute left out of Computes
    completes with nothing to mount."""
    with Emulator(system="kind", latency={"Setup": 30.0}) as emu:
        api = emu.custom_objects_api()
        ask_setup(api, "quick", ["#DW jobdw type=xfs capacity=1GiB name=aa"], "compute-01")
        wait(api, "quick", "Setup", want="DriverWait")

        def storage_made():
            try:
                api.get_namespaced_custom_object(NNF, NV, "default", "nnfstorages", "quick-0")
            except ApiException as exc:
                assert exc.status == 404
                return False
            return True
        eventually(storage_made, what="the NnfStorage made at Setup's start")
        assert _servers_ready(api, "quick-0") == {"kind-worker2": False}
        # the WLM: compute-01 given up (out of Computes), Setup forced ready
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "quick",
                                           {"spec": {"forceReady": True}})
        wf = wait(api, "quick", "Setup")
        assert wf["status"]["message"] == "Forced Ready"
        assert [d["completed"] for d in wf["status"]["drivers"]
                if d["watchState"] == "Setup"] == [False]
        api.patch_namespaced_custom_object(G, V, "default", "computes", "quick", {"data": []})
        advance(api, "quick", "DataIn")
        wf = advance(api, "quick", "PreRun")
        assert wf["status"]["message"] == ""
        assert api.list_cluster_custom_object(G, V, "clientmounts")["items"] == []
        finish(api, "quick")


def test_a_driver_error_fault_skips_the_early_start():
    """An injected driver error fails the driver before its start: while
    Setup's latency holds, no NnfStorage is made; the error shows once the
    latency has passed."""
    with Emulator(system="kind", latency={"Setup": 0.5}) as emu:
        api = emu.custom_objects_api()
        emu.controllers.faults.add(Fault(workflow="bad", state="Setup", severity="Fatal",
                                         message="injected"))
        ask_setup(api, "bad", ["#DW jobdw type=xfs capacity=1GiB name=aa"], "compute-01")
        wf = wait(api, "bad", "Setup", want="Error")
        assert "injected" in wf["status"]["message"]
        with pytest.raises(ApiException) as got:
            api.get_namespaced_custom_object(NNF, NV, "default", "nnfstorages", "bad-0")
        assert got.value.status == 404
        finish(api, "bad")


class _CutOnce:
    """The controllers' store, whose first Workflow replace is cut as by an
    API server restarting mid-request (what RemoteStore raises then)."""

    def __init__(self, store):
        self._store = store
        self.cuts = 0

    def __getattr__(self, name):
        return getattr(self._store, name)

    def replace(self, resource, *args, **kw):
        from flux_dws.emulator.driver import RESOURCE

        if resource is RESOURCE["workflow"] and self.cuts == 0:
            self.cuts += 1
            raise ConnectionResetError("the API server went away mid-request")
        return self._store.replace(resource, *args, **kw)


def test_a_reconcile_cut_by_a_transport_error_is_tried_again(kind):
    """As controller-runtime requeues a failed key: found with the
    controllers attached to kube-apiserver, whose restart cut a Workflow's
    update and left the job in PostRun for good."""
    cut = _CutOnce(kind.controllers.store)
    kind.controllers.store = cut
    api = kind.custom_objects_api()
    new_workflow(api, "fluxjob-cut", ["#DW jobdw type=xfs capacity=10GiB name=scratch"])
    wf = wait(api, "fluxjob-cut", "Proposal")
    assert cut.cuts == 1 and wf["status"]["ready"] is True
