"""copy_in / copy_out through the emulated nnf-sos and nnf-dm (P3)."""

from __future__ import annotations

import time

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

from flux_dws.emulator.faults import Fault
from flux_dws.emulator.nnf_datamovement import split_staging

NNF, NV = "nnf.cray.hpe.com", "v1alpha11"
JOBDW_XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
COPY_IN = "#DW copy_in source=/lus/global/input destination=$DW_JOB_scratch/"


def dms(api, wf):
    items = api.list_cluster_custom_object(
        NNF, NV, "nnfdatamovements",
        label_selector=f"dataworkflowservices.github.io/workflow.name={wf}")["items"]
    return sorted(items, key=lambda d: (d["metadata"]["namespace"], d["metadata"]["name"]))


def to_setup(api, name, directives, hosts="compute-[01-04]"):
    new_workflow(api, name, directives)
    wait(api, name, "Proposal")
    fill_servers(api, name, hosts)
    advance(api, name, "Setup")


def test_split_staging():
    assert split_staging("$DW_JOB_my_fs/a/b") == ("my-fs", "/a/b")
    assert split_staging("$DW_JOB_scratch/") == ("scratch", "/")
    assert split_staging("$DW_PERSISTENT_proj") == ("proj", "")
    assert split_staging("/lus/global/x") == ("", "/lus/global/x")


def test_copy_in_xfs_one_movement_per_allocation(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "dm1", [JOBDW_XFS, COPY_IN])
    wf = wait(api, "dm1", "Proposal")
    pinned = api.get_namespaced_custom_object(NNF, NV, "default", "nnfdatamovementprofiles",
                                              "dm1-1")
    assert pinned["data"]["pinned"] is True and pinned["data"]["default"] is False
    assert pinned["metadata"]["ownerReferences"][0]["name"] == "dm1"
    assert pinned["metadata"]["labels"]["dataworkflowservices.github.io/owner.name"] == "dm1"
    fill_servers(api, "dm1", "compute-[01-04]")
    advance(api, "dm1", "Setup")
    storage = api.get_namespaced_custom_object(NNF, NV, "default", "nnfstorages", "dm1-0")
    assert storage["spec"]["fileSystemType"] == "xfs" and storage["status"]["ready"]
    assert {n["name"]: n["count"] for n in storage["spec"]["allocationSets"][0]["nodes"]} == \
        {"kind-worker2": 3, "kind-worker3": 1}
    advance(api, "dm1", "DataIn")
    got = dms(api, "dm1")
    assert [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in got] == [
        ("kind-worker2", "dm1-1-0"), ("kind-worker2", "dm1-1-1"), ("kind-worker2", "dm1-1-2"),
        ("kind-worker3", "dm1-1-0")]
    uid = wf["metadata"]["uid"]
    first = got[0]
    labels = first["metadata"]["labels"]
    assert labels["nnf.cray.hpe.com/teardown_state"] == "DataIn"
    assert labels["dm.cray.hpe.com/initiator"] == "copy_in"
    assert labels["nnf.cray.hpe.com/directive_index"] == "1"
    assert labels["dataworkflowservices.github.io/owner.kind"] == "Workflow"
    assert first["spec"]["source"] == {"path": "/lus/global/input", "storageReference": {
        "kind": "LustreFileSystem", "name": "lushtx", "namespace": "default"}}
    assert first["spec"]["destination"]["path"] == f"/mnt/nnf/{uid}-0/kind-worker2-0/"
    assert first["spec"]["destination"]["storageReference"] == {
        "kind": "NnfStorage", "name": "dm1-0", "namespace": "default"}
    assert first["spec"]["profileReference"]["name"] == "dm1-1"
    assert first["spec"]["userId"] == 1000
    assert all(d["status"]["state"] == "Finished" and d["status"]["status"] == "Success"
               for d in got)
    for s in ("PreRun", "PostRun", "DataOut", "Teardown"):
        advance(api, "dm1", s)
    assert dms(api, "dm1") == []  # Teardown deletes them
    finish(api, "dm1")
    with pytest.raises(ApiException):
        api.get_namespaced_custom_object(NNF, NV, "default", "nnfdatamovementprofiles", "dm1-1")


def test_copy_out_lustre_one_movement_in_dm_namespace(kind):
    api = kind.custom_objects_api()
    to_setup(api, "dm2", ["#DW jobdw type=lustre capacity=100GiB name=lus",
                          "#DW copy_out source=$DW_JOB_lus/out destination=/lus/global/out"])
    for s in ("DataIn", "PreRun", "PostRun"):
        advance(api, "dm2", s)
    assert dms(api, "dm2") == []
    wf = advance(api, "dm2", "DataOut")
    (dm,) = dms(api, "dm2")
    assert (dm["metadata"]["namespace"], dm["metadata"]["name"]) == ("nnf-dm-system", "dm2-1")
    assert dm["spec"]["source"]["path"] == f"/mnt/nnf/{wf['metadata']['uid']}-0/out"
    assert dm["spec"]["destination"]["path"] == "/lus/global/out"
    assert dm["metadata"]["labels"]["dm.cray.hpe.com/initiator"] == "copy_out"
    assert dm["metadata"]["labels"]["nnf.cray.hpe.com/teardown_state"] == "DataOut"
    finish(api, "dm2")


def test_copy_into_persistent_storage(kind):
    api = kind.custom_objects_api()
    to_setup(api, "mk", ["#DW create_persistent type=lustre capacity=1TiB name=proj"])
    for s in ("DataIn", "PreRun", "PostRun", "DataOut", "Teardown"):
        advance(api, "mk", s)
    finish(api, "mk")
    to_setup(api, "use", ["#DW persistentdw name=proj",
                          "#DW copy_in source=/lus/global/in destination=$DW_PERSISTENT_proj/x"])
    advance(api, "use", "DataIn")
    (dm,) = dms(api, "use")
    assert dm["metadata"]["namespace"] == "nnf-dm-system"
    assert dm["spec"]["destination"]["storageReference"]["name"] == "proj"
    finish(api, "use")


def test_failed_data_movement_fails_the_state(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="datamovement", workflow="bad", state="DataIn",
                                      message="dcp: No such file or directory"))
    to_setup(api, "bad", [JOBDW_XFS, COPY_IN])
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "bad",
                                       {"spec": {"desiredState": "DataIn"}})
    wf = wait(api, "bad", "DataIn", want="Error")
    assert wf["status"]["message"] == (
        "DW Directive 1: Internal error: data movement operation failed during 'DataIn',"
        " message: dcp: No such"
        " file or directory")
    assert {d["status"]["status"] for d in dms(api, "bad")} == {"Failed"}
    finish(api, "bad")
    assert dms(api, "bad") == []


def test_stalled_data_movement_is_cancelled_by_teardown(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="datamovement", severity="stall"))
    to_setup(api, "slow", [JOBDW_XFS, COPY_IN])
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "slow",
                                       {"spec": {"desiredState": "DataIn"}})
    wait(api, "slow", "DataIn", want="DriverWait")
    eventually(lambda: len(dms(api, "slow")) == 4
               and all(d["status"]["state"] == "Running" for d in dms(api, "slow")))
    advance(api, "slow", "Teardown")  # legal mid-DataIn
    assert dms(api, "slow") == []
    finish(api, "slow")


def test_cancel_ends_a_movement_cancelled(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="datamovement", severity="stall"))
    to_setup(api, "cx", [JOBDW_XFS, COPY_IN])
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "cx",
                                       {"spec": {"desiredState": "DataIn"}})
    eventually(lambda: len(dms(api, "cx")) == 4)
    for d in dms(api, "cx"):
        api.patch_namespaced_custom_object(NNF, NV, d["metadata"]["namespace"],
                                           "nnfdatamovements", d["metadata"]["name"],
                                           {"spec": {"cancel": True}})
    eventually(lambda: {d["status"].get("status") for d in dms(api, "cx")} == {"Cancelled"})
    wf = wait(api, "cx", "DataIn", want="Error")
    assert "data movement operation failed during 'DataIn'" in wf["status"]["message"]
    finish(api, "cx")


def test_slow_data_movement_finishes(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="datamovement", severity="delay", seconds=0.3))
    to_setup(api, "dly", [JOBDW_XFS, COPY_IN])
    t0 = time.monotonic()
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "dly",
                                       {"spec": {"desiredState": "DataIn"}})
    wait(api, "dly", "DataIn", timeout=10)
    assert time.monotonic() - t0 >= 0.3  # the data movement took the delay
    assert {d["status"].get("status") for d in dms(api, "dly")} == {"Success"}
    finish(api, "dly")


def test_a_long_data_movement_reports_its_progress(kind):
    # nnf-dm reports dcp's progress lines in commandStatus while it runs
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="datamovement", severity="delay", seconds=2.0))
    to_setup(api, "prg", [JOBDW_XFS, COPY_IN])
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "prg",
                                       {"spec": {"desiredState": "DataIn"}})
    seen: list[int] = []

    def moving() -> bool:
        found = dms(api, "prg")
        if not found:  # nnf-sos has not made it yet
            return False
        cs = (found[0].get("status") or {}).get("commandStatus") or {}
        if "lastMessage" in cs:
            seen.append(cs["progress"])
        return len(set(seen)) >= 2

    eventually(moving, timeout=10, what="two progress reports")
    assert seen == sorted(seen) and 0 < seen[-1] < 100, seen
    cs = dms(api, "prg")[0]["status"]["commandStatus"]
    assert cs["command"] == "mpirun dcp" and cs["elapsedTime"].endswith("s")
    assert cs["lastMessage"].startswith("Copied ") and cs["lastMessageTime"]
    wait(api, "prg", "DataIn", timeout=10)
    assert {d["status"]["commandStatus"]["progress"] for d in dms(api, "prg")} == {100}
    finish(api, "prg")


def test_lustre_vanishing_after_proposal(kind):
    """The staging path's file system is gone by DataIn: nnf-sos' text."""
    api = kind.custom_objects_api()
    to_setup(api, "gone", [JOBDW_XFS, COPY_IN])
    api.delete_namespaced_custom_object("lus.cray.hpe.com", "v1beta1", "default",
                                        "lustrefilesystems", "lushtx")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "gone",
                                       {"spec": {"desiredState": "DataIn"}})
    wf = wait(api, "gone", "DataIn", want="Error")
    assert wf["status"]["message"] == ("DW Directive 1: User error: Staging parameter"
                                       " '/lus/global/input' is invalid")
    finish(api, "gone")


def test_no_data_movement_manager_waits_then_recovers(kind):
    api = kind.custom_objects_api()
    mgr = api.get_namespaced_custom_object(NNF, NV, "nnf-dm-system", "nnfdatamovementmanagers",
                                           "nnf-dm-manager-controller-manager")
    api.delete_namespaced_custom_object(NNF, NV, "nnf-dm-system", "nnfdatamovementmanagers",
                                        "nnf-dm-manager-controller-manager")
    kind.controllers.retry_seconds = 0.2
    to_setup(api, "nomgr", [JOBDW_XFS, COPY_IN])
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "nomgr",
                                       {"spec": {"desiredState": "DataIn"}})
    wf = wait(api, "nomgr", "DataIn", want="DriverWait")
    eventually(lambda: "data movement readiness" in api.get_namespaced_custom_object(
        G, V, "default", "workflows", "nomgr")["status"]["message"])
    for k in ("resourceVersion", "uid", "creationTimestamp", "generation"):
        mgr["metadata"].pop(k, None)
    api.create_namespaced_custom_object(NNF, NV, "nnf-dm-system", "nnfdatamovementmanagers",
                                        mgr)
    wf = wait(api, "nomgr", "DataIn")
    assert wf["status"]["ready"]
    finish(api, "nomgr")


def test_missing_default_dm_profile(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(NNF, NV, "nnf-system", "nnfdatamovementprofiles",
                                       "default", {"data": {"default": False}})
    new_workflow(api, "nop", [JOBDW_XFS, COPY_IN])
    wf = wait(api, "nop", "Proposal", want="Error")
    assert wf["status"]["message"] == ("DW Directive 1: Internal error: Unable to find a"
                                       " default NnfDataMovementProfile to use")
    new_workflow(api, "named", [JOBDW_XFS, "#DW copy_in source=/lus/global/input"
                                " destination=$DW_JOB_scratch/ profile=nosuch"])
    wf = wait(api, "named", "Proposal", want="Error")
    assert wf["status"]["message"] == ("DW Directive 1: User error: Unable to find"
                                       " NnfDataMovementProfile: nosuch")


def test_rabbits_stay_mounted_until_copy_offload_ends(kind):
    """PostRun: computes unmount, the job's movements end, then the rabbits unmount."""
    api = kind.custom_objects_api()
    to_setup(api, "g", ["#DW jobdw type=gfs2 capacity=10GiB name=gfs"])
    api.patch_namespaced_custom_object(G, V, "default", "computes", "g",
                                       {"data": [{"name": "compute-01"}]})
    wf = advance(api, "g", "DataIn")
    advance(api, "g", "PreRun")
    md = wf["metadata"]
    labels = {"dataworkflowservices.github.io/owner.kind": "Workflow",
              "dataworkflowservices.github.io/owner.name": "g",
              "dataworkflowservices.github.io/owner.namespace": "default",
              "dataworkflowservices.github.io/owner.uid": md["uid"],
              "dataworkflowservices.github.io/workflow.name": "g",
              "dataworkflowservices.github.io/workflow.namespace": "default",
              "nnf.cray.hpe.com/teardown_state": "PostRun"}
    api.create_namespaced_custom_object(NNF, NV, "kind-worker2", "nnfdatamovements", {
        "apiVersion": f"{NNF}/{NV}", "kind": "NnfDataMovement",
        "metadata": {"name": "offload-g", "labels": labels},
        "spec": {"source": {"path": "/a"}, "destination": {"path": "/b"}}})
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "g",
                                       {"spec": {"desiredState": "PostRun"}})
    wait(api, "g", "PostRun", want="DriverWait")

    def access(target):
        return api.get_namespaced_custom_object(NNF, NV, "default", "nnfaccesses",
                                                f"g-0-{target}")["status"]["state"]
    # DriverWait comes with the state change; the driver's message after it
    eventually(lambda: api.get_namespaced_custom_object(G, V, "default", "workflows", "g")[
        "status"]["message"] == "DW Directive 0: pending data movement",
        what="PostRun waits for the movement")
    assert (access("computes"), access("servers")) == ("unmounted", "mounted")
    api.patch_namespaced_custom_object_status(NNF, NV, "kind-worker2", "nnfdatamovements",
                                              "offload-g", {"status": {
                                                  "state": "Finished", "status": "Success"}})
    wait(api, "g", "PostRun")
    assert access("servers") == "unmounted"
    finish(api, "g")


def test_post_run_waits_for_copy_offload_movements(kind):
    """A movement the job's copy-offload server made (labelled for PostRun)."""
    api = kind.custom_objects_api()
    to_setup(api, "off", [JOBDW_XFS])
    api.patch_namespaced_custom_object(G, V, "default", "computes", "off",
                                       {"data": [{"name": "compute-01"}]})
    wf = advance(api, "off", "DataIn")
    advance(api, "off", "PreRun")
    uid = wf["metadata"]["uid"]
    labels = {"dataworkflowservices.github.io/owner.kind": "Workflow",
              "dataworkflowservices.github.io/owner.name": "off",
              "dataworkflowservices.github.io/owner.namespace": "default",
              "dataworkflowservices.github.io/owner.uid": uid,
              "dataworkflowservices.github.io/workflow.name": "off",
              "dataworkflowservices.github.io/workflow.namespace": "default",
              "nnf.cray.hpe.com/teardown_state": "PostRun"}
    api.create_namespaced_custom_object(NNF, NV, "kind-worker2", "nnfdatamovements", {
        "apiVersion": f"{NNF}/{NV}", "kind": "NnfDataMovement",
        "metadata": {"name": "offload-1", "labels": labels},
        "spec": {"source": {"path": "/a"}, "destination": {"path": "/b"}}})
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "off",
                                       {"spec": {"desiredState": "PostRun"}})
    wait(api, "off", "PostRun", want="DriverWait")
    api.patch_namespaced_custom_object_status(NNF, NV, "kind-worker2", "nnfdatamovements",
                                              "offload-1", {"status": {
                                                  "state": "Finished", "status": "Failed",
                                                  "message": "dcp failed"}})
    wf = wait(api, "off", "PostRun", want="Error")
    assert wf["status"]["message"] == "DW Directive 0: Internal error: data movement failed"
    finish(api, "off")


def test_a_held_data_movement_moves_until_released(kind):
    """A hold (flux-dws fault hold): the copies run and report progress,
    never past 99 %, however long; they finish when released (flux-dws
    fault release), and only then."""
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="datamovement", severity="hold", seconds=0.4))
    to_setup(api, "held", [JOBDW_XFS, COPY_IN])
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "held",
                                       {"spec": {"desiredState": "DataIn"}})

    def progress() -> list[int]:
        return [((d.get("status") or {}).get("commandStatus") or {}).get("progress", 0)
                for d in dms(api, "held")]

    # past the time its progress moves as over: held at 99 %, still Running
    eventually(lambda: len(progress()) == 4 and min(progress()) == 99, timeout=30)
    assert {d["status"]["state"] for d in dms(api, "held")} == {"Running"}
    wf = api.get_namespaced_custom_object(G, V, "default", "workflows", "held")
    assert wf["status"]["state"] == "DataIn" and wf["status"]["ready"] is False
    assert kind.controllers.dmworker.release() == 4
    wait(api, "held", "DataIn", timeout=10)
    assert {d["status"].get("status") for d in dms(api, "held")} == {"Success"}
    assert kind.controllers.dmworker.release() == 0  # nothing held any more
    finish(api, "held")


@pytest.mark.parametrize("fields, says", [
    ({"kind": "driver", "severity": "hold"}, "a hold is a datamovement fault"),
    ({"kind": "datamovement", "severity": "hold", "seconds": -1}, "a hold's seconds"),
])
def test_a_hold_refused(fields, says):
    with pytest.raises(ValueError, match=says):
        Fault(**fields)
