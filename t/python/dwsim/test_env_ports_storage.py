"""nnf-sos PreRun environment, port manager and Storage health."""

from __future__ import annotations

import pytest

from flux_dws.dwsim import env, ports, storage

WF = {"metadata": {"uid": "3e92c060-aaaa"}, "spec": {"jobID": "f1", "userID": 1001,
                                                      "groupID": 1002}}


def test_default_and_override_paths():
    assert env.mount_path(WF, {}, "xfs", 0) == "/mnt/nnf/3e92c060-aaaa-0"
    assert env.mount_path(WF, {}, "xfs", 1, prefix="/x/") == "/x/3e92c060-aaaa-1"
    prof = {"lustreStorage": {"clientOptions": {"variableOverride": {
        "$MOUNT_PATH": "/lus/$USERID/$JOBID-$DIRECTIVE_INDEX"}}}}
    assert env.mount_path(WF, prof, "lustre", 2) == "/lus/1001/f1-2"
    prof = {"gfs2Storage": {"variableOverride": {"$MOUNT_PATH": "/g/$WORKFLOW_UID/$GROUPID"}}}
    assert env.mount_path(WF, prof, "gfs2", 0) == "/g/3e92c060-aaaa/1002"


def test_storage_env():
    e = env.add_storage_env({}, "#DW jobdw type=xfs capacity=1GiB name=my-fs", "/p0")
    e = env.add_storage_env(e, "#DW jobdw type=xfs capacity=1GiB name=two", "/p1")
    e = env.add_storage_env(e, "#DW persistentdw name=pers", "/p2")
    e = env.add_storage_env(e, "#DW copy_in source=a destination=b", "/ignored")
    assert e == {"DW_JOB_my_fs": "/p0", "DW_JOB_XFS": "/p0", "DW_JOB_two": "/p1",
                 "DW_JOBS": "my-fs:/p0,two:/p1", "DW_PERSISTENT_pers": "/p2",
                 "DW_PERSISTENT_": "/p2", "DW_PERSISTENTS": "pers:/p2"}
    assert env.add_storage_env(e, "#DW jobdw type=xfs capacity=1GiB name=two", "/p1") == e


def test_ports():
    cfg = ports.expand_ports([5000, "5002-5004", "6000"])
    assert cfg == [5000, 5002, 5003, 5004, 6000]
    allocs = [{"ports": [5000, 5002], "status": "InUse"}, {"ports": [5003], "status": "Cooldown",
                                                          "timeUnallocated": 100.0}]
    assert ports.allocate(cfg, allocs, 2) == [5004, 6000]
    assert ports.allocate(cfg, allocs, 3) is None
    assert ports.expire(allocs, now=130.0, cooldown=60) == allocs
    assert ports.expire(allocs, now=160.0, cooldown=60) == allocs[:1]
    assert ports.expire(allocs, now=100.0, cooldown=0) == allocs[:1]
    for bad in (["5-3"], ["x"], [True], ["a-b"]):
        with pytest.raises(ports.PortConfigError):
            ports.expand_ports(bad)


def test_free_entries_are_taken_over():
    cfg = [5000, 5001, 5002]
    allocs = [{"ports": [5000], "status": "InUse"}, {"ports": [5001], "status": "Free"},
              {"ports": [5002], "status": "Free"}]
    got = ports.allocate(cfg, allocs, 1)
    assert got == [5001]  # a Free entry's ports are free
    assert ports.reuse_free(allocs, got) == [allocs[0], allocs[2]]
    assert ports.reuse_free(allocs, []) == allocs


def test_storage_status_precedence():
    comp = {"c1": "Ready", "c2": "Offline"}
    s = storage.storage_status({}, "r1", 100, comp)
    assert s["status"] == "Ready" and s["access"]["computes"][1] == {"name": "c2",
                                                                     "status": "Offline"}
    assert storage.storage_status({"state": "Disabled"}, "r1", 1, {}, fenced=True)[
        "message"] == "Storage node manually disabled"
    s = storage.storage_status({}, "r1", 1, {}, fenced=True, k8s_ready=False)
    assert (s["status"], s["rebootRequired"]) == ("Degraded", True)
    assert storage.storage_status({}, "r1", 1, {}, k8s_ready=False)["status"] == "Offline"
    s = storage.storage_status({}, "r1", 1, {}, drain_taint="cray.nnf.node.drain")
    assert s["message"] == "Kubernetes node is tainted with cray.nnf.node.drain"
    assert storage.storage_status({}, "r1", 1, {}, node_status="Failed")["status"] == "Failed"


RABBIT = {"dataworkflowservices.github.io/storage": "Rabbit"}


def _health(**kw):
    return storage.RabbitHealth(capacity=100, computes={"c1": "Ready", "c2": "Offline"}, **kw)


def test_reconcile_live_rebuilds_everything():
    edited = {"status": "Ready", "capacity": 1, "message": "m",
              "access": {"computes": [{"name": "c1", "status": "Disabled"}]}}
    new, unfenced = storage.reconcile(RABBIT, {"mode": "Live"}, edited, "r1", _health())
    assert new["capacity"] == 100 and not unfenced
    assert new["access"]["computes"] == [{"name": "c1", "status": "Ready"},
                                         {"name": "c2", "status": "Offline"}]
    assert new["message"] == "m"  # nnf-sos keeps a message no condition replaced


def test_reconcile_testing_only_reports_disabled():
    edited = {"status": "Ready", "access": {"computes": [{"name": "c1", "status": "Disabled"}]}}
    new, _ = storage.reconcile(RABBIT, {"mode": "Testing"}, edited, "r1", _health())
    assert new == edited
    new, _ = storage.reconcile(RABBIT, {"mode": "Testing", "state": "Disabled"}, edited, "r1",
                               _health())
    assert new["status"] == "Disabled" and new["access"] == edited["access"]


def test_reconcile_reenable_clears_fencing_and_message():
    old = {"status": "Disabled", "message": "Storage node manually disabled",
           "rebootRequired": True}
    new, unfenced = storage.reconcile(RABBIT, {"mode": "Live"}, old, "r1", _health(fenced=True))
    assert unfenced and new["status"] == "Ready" and new["message"] == ""
    assert new["rebootRequired"] is False
    new, unfenced = storage.reconcile(RABBIT, {"mode": "Live"}, {"status": "Ready"}, "r1",
                                      _health(fenced=True))
    assert not unfenced and new["status"] == "Degraded" and new["rebootRequired"] is True


def test_reconcile_ignores_storage_not_labelled_rabbit():
    new, _ = storage.reconcile({}, {"state": "Disabled"}, {"status": "Ready"}, "r1", _health())
    assert new == {"status": "Ready"}
