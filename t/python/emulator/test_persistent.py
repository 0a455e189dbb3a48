"""Persistent storage through the emulated nnf-sos: create, use, destroy."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import (
    G,
    V,
    advance,
    eventually,
    fill_servers,
    finish,
    new_workflow,
    wait,
)


def psi(api, name):
    return api.get_namespaced_custom_object(G, V, "default", "persistentstorageinstances", name)


def test_persistent_lifecycle(kind):
    api = kind.custom_objects_api()
    # create
    new_workflow(api, "mk", ["#DW create_persistent type=lustre capacity=1TiB name=proj"])
    wait(api, "mk", "Proposal")
    p = psi(api, "proj")
    assert p["spec"]["fsType"] == "lustre" and p["status"]["state"] == "Creating"
    dbd = api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns", "mk-0")
    assert dbd["status"]["storage"]["lifetime"] == "persistent"
    assert dbd["status"]["storage"]["reference"]["name"] == "proj"
    fill_servers(api, "mk", "compute-[01-04]")
    advance(api, "mk", "Setup")
    assert psi(api, "proj")["status"]["state"] == "Active"
    for s in ("DataIn", "PreRun", "PostRun", "DataOut", "Teardown"):
        advance(api, "mk", s)
    finish(api, "mk")
    p = psi(api, "proj")  # it outlives the workflow that made it
    assert not p["metadata"].get("ownerReferences")
    assert api.get_namespaced_custom_object(G, V, "default", "servers", "proj")

    # use
    new_workflow(api, "use", ["#DW persistentdw name=proj"])
    wait(api, "use", "Proposal")
    dbd = api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns", "use-0")
    assert "storage" not in dbd["status"]  # the WLM allocates nothing for it
    sets = api.get_namespaced_custom_object(G, V, "default", "servers", "proj")["spec"][
        "allocationSets"]
    assert len(sets) >= 2  # a Lustre file system: OSTs, MDTs, ...
    # one constraint per set of the PSI's Servers; physical even for Lustre
    assert dbd["status"]["compute"]["constraints"]["location"] == [
        {"access": [{"type": "physical", "priority": "mandatory"}],
         "reference": {"kind": "Servers", "name": "proj", "namespace": "default",
                       "fieldPath": f"servers.spec.allocationSets[{k}]"}}
        for k in range(len(sets))]
    advance(api, "use", "Setup")
    assert psi(api, "proj")["spec"]["consumerReferences"] == [
        {"kind": "Workflow", "name": "use-0", "namespace": "default"}]
    api.patch_namespaced_custom_object(G, V, "default", "computes", "use",
                                       {"data": [{"name": "compute-01"}]})
    advance(api, "use", "DataIn")
    wf = advance(api, "use", "PreRun")
    assert wf["status"]["env"]["DW_PERSISTENT_proj"].startswith("/mnt/nnf/")
    assert "DW_PERSISTENT_" in wf["status"]["env"]  # nnf-sos' quirk

    # destroy while in use fails; after the consumer leaves it works
    new_workflow(api, "rm", ["#DW destroy_persistent name=proj"])
    wait(api, "rm", "Proposal")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "rm",
                                       {"spec": {"desiredState": "Teardown"}})
    wf = wait(api, "rm", "Teardown", want="Error")
    assert wf["status"]["message"] == ("DW Directive 0: User error: persistent storage cannot be"
                                       " deleted while in use")
    for s in ("PostRun", "DataOut", "Teardown"):
        advance(api, "use", s)
    assert psi(api, "proj")["spec"]["consumerReferences"] == []
    finish(api, "rm")
    new_workflow(api, "rm2", ["#DW destroy_persistent name=proj"])
    wait(api, "rm2", "Proposal")
    advance(api, "rm2", "Teardown")
    with pytest.raises(ApiException) as exc:
        psi(api, "proj")
    assert exc.value.status == 404
    assert api.list_namespaced_custom_object(G, V, "default", "servers")["items"] == []
    # its pinned profile went with it (owned by the PSI)
    eventually(lambda: not api.list_namespaced_custom_object(
        "nnf.cray.hpe.com", "v1alpha11", "default", "nnfstorageprofiles")["items"])


def test_persistentdw_needs_an_instance(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "w", ["#DW persistentdw name=nope"])
    wf = wait(api, "w", "Proposal", want="Error")
    assert wf["status"]["message"] == ("DW Directive 0: User error: PersistentStorageInstance"
                                       " 'nope' not found")


def test_destroy_of_someone_elses_storage(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "mk", ["#DW create_persistent type=xfs capacity=10GiB name=mine"])
    wait(api, "mk", "Proposal")
    fill_servers(api, "mk", "compute-01")
    advance(api, "mk", "Setup")
    for s in ("DataIn", "PreRun", "PostRun", "DataOut", "Teardown"):
        advance(api, "mk", s)
    api.create_namespaced_custom_object(G, V, "default", "workflows", {
        "apiVersion": f"{G}/{V}", "kind": "Workflow", "metadata": {"name": "thief"},
        "spec": {"desiredState": "Proposal", "dwDirectives": ["#DW destroy_persistent name=mine"],
                 "wlmID": "flux", "jobID": "f9", "userID": 4242, "groupID": 4242}})
    wait(api, "thief", "Proposal")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "thief",
                                       {"spec": {"desiredState": "Teardown"}})
    wf = wait(api, "thief", "Teardown", want="Error")
    assert "user ID does not match existing persistent storage" in wf["status"]["message"]


def make_persistent(api, name, directive):
    new_workflow(api, name, [directive])
    wait(api, name, "Proposal")
    fill_servers(api, name, "compute-01")
    advance(api, name, "Setup")
    for s in ("DataIn", "PreRun", "PostRun", "DataOut", "Teardown"):
        advance(api, name, s)
    finish(api, name)


def other_user(api, name, directives, uid=4242):
    api.create_namespaced_custom_object(G, V, "default", "workflows", {
        "apiVersion": f"{G}/{V}", "kind": "Workflow", "metadata": {"name": name},
        "spec": {"desiredState": "Proposal", "dwDirectives": directives,
                 "wlmID": "flux", "jobID": "f9", "userID": uid, "groupID": uid}})


def test_ignore_uid_lets_others_use_but_not_destroy(kind):
    api = kind.custom_objects_api()
    make_persistent(api, "mk", "#DW create_persistent type=lustre capacity=1TiB name=shared")
    other_user(api, "o1", ["#DW persistentdw name=shared"])
    wf = wait(api, "o1", "Proposal", want="Error")
    assert wf["status"]["message"] == ("DW Directive 0: User error: User ID does not match"
                                       " existing persistent storage")
    # nnf-sos' debug message names both user IDs (#609)
    assert [d["error"] for d in wf["status"]["drivers"] if d.get("error")] == [
        "user error: existing persistent storage user ID 1000 does not match user ID 4242"]
    api.patch_namespaced_custom_object(G, V, "default", "persistentstorageinstances", "shared", {
        "metadata": {"annotations": {"dataworkflowservices.github.io/ignore-uid": "True"}}})
    other_user(api, "o2", ["#DW persistentdw name=shared"])
    wait(api, "o2", "Proposal")
    advance(api, "o2", "Setup")
    assert psi(api, "shared")["spec"]["consumerReferences"] == [
        {"kind": "Workflow", "name": "o2-0", "namespace": "default"}]
    advance(api, "o2", "Teardown")
    other_user(api, "o3", ["#DW destroy_persistent name=shared"])
    wait(api, "o3", "Proposal")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "o3",
                                       {"spec": {"desiredState": "Teardown"}})
    wf = wait(api, "o3", "Teardown", want="Error")
    assert wf["status"]["message"] == ("DW Directive 0: User error: user ID does not match"
                                       " existing persistent storage")


@pytest.mark.parametrize("state", ["Degraded", "Creating"])
def test_persistentdw_of_an_instance_that_is_not_active(kind, state):
    api = kind.custom_objects_api()
    make_persistent(api, "mk", "#DW create_persistent type=xfs capacity=10GiB name=flaky")
    api.patch_namespaced_custom_object_status(G, V, "default", "persistentstorageinstances",
                                              "flaky", {"status": {"state": state}})
    new_workflow(api, "u", ["#DW persistentdw name=flaky"])
    wait(api, "u", "Proposal")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "u",
                                       {"spec": {"desiredState": "Setup"}})
    wf = wait(api, "u", "Setup", want="Error")
    assert wf["status"]["message"] == "DW Directive 0: User error: PersistentStorage is not active"


def test_persistent_instance_that_vanished_before_setup(kind):
    """Gone between Proposal and Setup: Major, a TransientCondition."""
    api = kind.custom_objects_api()
    make_persistent(api, "mk", "#DW create_persistent type=xfs capacity=10GiB name=brief")
    new_workflow(api, "u", ["#DW persistentdw name=brief"])
    wait(api, "u", "Proposal")
    api.patch_namespaced_custom_object(G, V, "default", "persistentstorageinstances", "brief",
                                       {"metadata": {"finalizers": None}})
    api.delete_namespaced_custom_object(G, V, "default", "persistentstorageinstances", "brief")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "u",
                                       {"spec": {"desiredState": "Setup"}})
    wf = wait(api, "u", "Setup", want="TransientCondition")
    assert wf["status"]["message"] == ("DW Directive 0: User error: PersistentStorage 'brief'"
                                       " not found")


def test_standalone_mgt_pool_label(kind):
    api = kind.custom_objects_api()
    api.create_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "nnf-system",
                                        "nnfstorageprofiles", {
        "apiVersion": "nnf.cray.hpe.com/v1alpha11", "kind": "NnfStorageProfile",
        "metadata": {"name": "mgtpool"},
        "data": {"default": False, "lustreStorage": {
            "combinedMgtMdt": False,
            "mgtOptions": {"standaloneMgtPoolName": "pool1", "capacity": "1GiB"}}}})
    new_workflow(api, "mgt", ["#DW create_persistent type=lustre name=mgt1 profile=mgtpool"])
    wait(api, "mgt", "Proposal")
    p = psi(api, "mgt1")
    assert p["metadata"]["labels"]["nnf.cray.hpe.com/standalone_mgt"] == "pool1"
    fill_servers(api, "mgt", "compute-01")
    advance(api, "mgt", "Setup")
    for s in ("DataIn", "PreRun", "PostRun", "DataOut", "Teardown"):
        advance(api, "mgt", s)
    finish(api, "mgt")
    labels = psi(api, "mgt1")["metadata"]["labels"]
    # the owner and index labels go with the workflow; the pool label stays
    assert labels["nnf.cray.hpe.com/standalone_mgt"] == "pool1"
    assert "dataworkflowservices.github.io/owner.name" not in labels
    assert "nnf.cray.hpe.com/directive_index" not in labels


@pytest.mark.parametrize(("directive", "message"), [
    ("#DW create_persistent type=xfs name=nocap",
     "DW Directive 0: User error: creating persistent storage requires 'capacity' argument"),
    ("#DW create_persistent type=lustre name=mgt2 profile=mgtpool capacity=1GiB",
     "DW Directive 0: User error: creating persistent MGT does not accept 'capacity'"
     " argument"),
])
def test_create_persistent_capacity_rule(kind, directive, message):
    api = kind.custom_objects_api()
    api.create_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "nnf-system",
                                        "nnfstorageprofiles", {
        "apiVersion": "nnf.cray.hpe.com/v1alpha11", "kind": "NnfStorageProfile",
        "metadata": {"name": "mgtpool"},
        "data": {"default": False, "lustreStorage": {
            "mgtOptions": {"standaloneMgtPoolName": "pool1", "capacity": "1GiB"}}}})
    new_workflow(api, "cap", [directive])
    wf = wait(api, "cap", "Proposal", want="Error")
    assert wf["status"]["message"] == message
    finish(api, "cap")
    # nothing of the refused storage is left behind
    assert not api.list_namespaced_custom_object(G, V, "default",
                                                 "persistentstorageinstances")["items"]


def test_unfinished_create_persistent_goes_with_its_workflow(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "half", ["#DW create_persistent type=xfs capacity=10GiB name=halfway"])
    wait(api, "half", "Proposal")
    assert psi(api, "halfway")["status"]["state"] == "Creating"
    advance(api, "half", "Teardown")  # Setup never ran: the storage was never made
    # nnf-sos does not release it (its owner stays) ...
    assert psi(api, "halfway")["metadata"]["ownerReferences"][0]["kind"] == \
        "DirectiveBreakdown"
    finish(api, "half")

    def gone():  # ... and it goes with the workflow's breakdown
        try:
            psi(api, "halfway")
        except ApiException as exc:
            return exc.status == 404
        return False
    eventually(gone)
    with pytest.raises(ApiException):
        api.get_namespaced_custom_object(G, V, "default", "servers", "halfway")


def storage_profile(api, ns, name):
    return api.get_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", ns,
                                            "nnfstorageprofiles", name)


def test_profiles_are_pinned(kind):
    api = kind.custom_objects_api()
    api.create_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "nnf-system",
                                        "nnfstorageprofiles", {
        "apiVersion": "nnf.cray.hpe.com/v1alpha11", "kind": "NnfStorageProfile",
        "metadata": {"name": "custom"},
        "data": {"xfsStorage": {"variableOverride": {"$MOUNT_PATH": "/p/$USERID/$JOBID"}}}})
    make_persistent(api, "mk", "#DW create_persistent type=xfs capacity=10GiB name=pp"
                               " profile=custom")
    pinned = storage_profile(api, "default", "pp")
    assert pinned["data"]["pinned"] is True and pinned["data"]["default"] is False
    assert pinned["metadata"]["ownerReferences"][0]["kind"] == "PersistentStorageInstance"
    # the site changes its profile: storage already made keeps its own copy
    api.patch_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "nnf-system",
                                       "nnfstorageprofiles", "custom", {"data": {"xfsStorage": {
                                           "variableOverride": {"$MOUNT_PATH": "/other"}}}})
    new_workflow(api, "use", ["#DW persistentdw name=pp",
                              "#DW jobdw type=xfs capacity=1GiB name=scratch"])
    wait(api, "use", "Proposal")
    job = storage_profile(api, "default", "use-1")
    assert job["data"]["pinned"] is True
    assert job["metadata"]["ownerReferences"][0] == {
        "apiVersion": f"{G}/{V}", "kind": "DirectiveBreakdown", "name": "use-1",
        "uid": api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns",
                                                "use-1")["metadata"]["uid"],
        "controller": True, "blockOwnerDeletion": True}
    servers = api.get_namespaced_custom_object(G, V, "default", "servers", "use-1")
    assert servers["metadata"]["ownerReferences"][0]["kind"] == "DirectiveBreakdown"
    fill_servers(api, "use", "compute-01")
    advance(api, "use", "Setup")
    labels = api.get_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "default",
                                              "nnfstorages", "use-1")["metadata"]["labels"]
    assert labels["nnf.cray.hpe.com/pinned_storage_profile_name"] == "use-1"
    assert labels["nnf.cray.hpe.com/pinned_storage_profile_namespace"] == "default"
    api.patch_namespaced_custom_object(G, V, "default", "computes", "use",
                                       {"data": [{"name": "compute-01"}]})
    advance(api, "use", "DataIn")
    wf = advance(api, "use", "PreRun")
    # the persistent storage's pinned profile gives its mount path
    assert wf["status"]["env"]["DW_PERSISTENT_pp"] == "/p/1000/f1"  # $USERID, $JOBID
    finish(api, "use")
    # the job's pinned profile goes with the workflow; the persistent one stays
    with pytest.raises(ApiException):
        storage_profile(api, "default", "use-1")
    assert storage_profile(api, "default", "pp")


def test_breakdown_error_is_in_its_status(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "bad", ["#DW jobdw type=xfs capacity=1GiB name=aa profile=missing"])
    wf = wait(api, "bad", "Proposal", want="Error")
    assert wf["status"]["message"] == ("DW Directive 0: User error: Unable to find"
                                       " NnfStorageProfile: missing")
    dbd = api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns", "bad-0")
    assert dbd["status"]["ready"] is False
    assert dbd["status"]["error"]["userMessage"] == "Unable to find NnfStorageProfile: missing"
    assert dbd["status"]["error"]["type"] == "User"
    finish(api, "bad")
