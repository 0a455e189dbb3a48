"""ClientMounts and the emulated clientmountd (P6): failures on named
computes, slow mounts, unmount skipping of unreachable computes, retries;
the fault CLI's new kinds."""

from __future__ import annotations

import json
import time

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import (
    G,
    V,
    advance,
    controllers_passed,
    eventually,
    fill_servers,
    finish,
    new_workflow,
    next_event,
    store_events,
    wait,
)

from flux_dws.cli.main import main
from flux_dws.dwsim.gotime import parse_microtime
from flux_dws.emulator.faults import Fault


@pytest.fixture
def kind(kind):
    """conftest's kind system, retrying failed reconciles after 0.1 s."""
    kind.controllers.retry_seconds = 0.1
    return kind

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def to_prerun(api, name, hosts=("compute-01", "compute-02")):
    new_workflow(api, name, [XFS])
    wait(api, name, "Proposal")
    fill_servers(api, name, "compute-[01-04]")
    advance(api, name, "Setup")
    api.patch_namespaced_custom_object(G, V, "default", "computes", name,
                                       {"data": [{"name": h} for h in hosts]})
    advance(api, name, "DataIn")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", name,
                                       {"spec": {"desiredState": "PreRun"}})


def clientmount(api, compute, name):
    return api.get_namespaced_custom_object(G, V, compute, "clientmounts",
                                            f"default-{name}-0-computes")


def test_mount_failure_on_one_compute(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="clientmount", compute="compute-02",
                                      message="mount: /mnt/nnf: no such device"))
    to_prerun(api, "cm1")
    wf = wait(api, "cm1", "PreRun", want="TransientCondition")
    # as nnf-sos reports it: no user message, the node in the debug text
    assert wf["status"]["message"] == "DW Directive 0: Internal error: "
    (driver,) = [d for d in wf["status"]["drivers"] if d["status"] == "TransientCondition"]
    assert driver["error"] == ("internal error: Node: compute-02: mount/unmount failed:"
                               " unable to mount file system: mount: /mnt/nnf: no such device")
    assert clientmount(api, "compute-01", "cm1")["status"]["allReady"] is True
    bad = clientmount(api, "compute-02", "cm1")["status"]
    assert bad["allReady"] is False and bad["error"]["severity"] == "Major"
    # the environment is published before the mounts finish, as nnf-sos does
    assert "DW_JOB_scratch" in wf["status"]["env"]
    kind.controllers.faults.clear()  # the node recovers: the retry mounts it
    wait(api, "cm1", "PreRun")
    assert clientmount(api, "compute-02", "cm1")["status"]["allReady"] is True
    finish(api, "cm1")


def test_once_fault_clears_by_itself(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="clientmount", compute="compute-01", once=True))
    to_prerun(api, "cm2")
    wait(api, "cm2", "PreRun")  # the TransientCondition clears on the retry
    finish(api, "cm2")


def test_slow_mounts(kind):
    kind.controllers.clientmountd.delay = 0.4
    api = kind.custom_objects_api()
    events = store_events(kind)
    to_prerun(api, "slow")
    wait(api, "slow", "PreRun")
    seen = []  # (kind, ...) in commit order until the Workflow was ready in PreRun
    while True:
        ev = next_event(events, lambda ev: True)
        plural, obj = ev.key[1], ev.obj
        st = obj.get("status") or {}
        if plural == "workflows" and ev.key[3] == "slow" and st.get("state") == "PreRun":
            seen.append(("wf", st.get("status"), bool(st.get("ready"))))
            if st.get("ready"):
                break
        elif plural == "clientmounts" and ev.key[3].startswith("default-slow-"):
            seen.append(("cm", ev.key[2], st.get("allReady")))
    # PreRun waited in DriverWait, and was ready only after both computes mounted
    assert ("wf", "DriverWait", False) in seen
    ready_at = len(seen) - 1
    for compute in ("compute-01", "compute-02"):
        assert any(e == ("cm", compute, True) for e in seen[:ready_at]), seen
    advance(api, "slow", "PostRun")
    finish(api, "slow")


def test_stalled_mount_reaches_the_child_timeout(kind):
    kind.controllers.child_timeout = 0.5
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="clientmount", compute="compute-02",
                                      severity="stall"))
    to_prerun(api, "stuck")
    wf = wait(api, "stuck", "PreRun", want="TransientCondition")
    (driver,) = [d for d in wf["status"]["drivers"] if d["status"] == "TransientCondition"]
    assert driver["error"] == ("internal error: Node: compute-02: ClientMount has not been"
                               " reconciled after 0.5 seconds")
    finish(api, "stuck")


def statuses_until_ready(events, name, state):
    """Every (status, message) the workflow showed in ``state``, in order, until
    it was ready there (``events``: a store event queue taken before)."""
    seen = []
    while True:
        ev = next_event(events, lambda ev: ev.key[1] == "workflows" and ev.key[3] == name,
                        what=f"{name} ready in {state}")
        st = ev.obj.get("status") or {}
        if st.get("state") != state:
            continue
        if (st.get("status"), st.get("message")) not in seen:
            seen.append((st.get("status"), st.get("message")))
        if st.get("ready"):
            return seen


def test_waits_show_nnf_sos_reasons(kind):
    kind.controllers.clientmountd.delay = 0.3
    api = kind.custom_objects_api()
    events = store_events(kind)
    to_prerun(api, "why")
    seen = statuses_until_ready(events, "why", "PreRun")
    assert ("DriverWait", "DW Directive 0: pending mount") in seen
    wait(api, "why", "PreRun")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "why",
                                       {"spec": {"desiredState": "PostRun"}})
    seen = statuses_until_ready(events, "why", "PostRun")
    assert ("DriverWait", "DW Directive 0: pending unmount") in seen
    wf = wait(api, "why", "PostRun")
    assert wf["status"]["message"] == ""  # nothing pending once ready
    finish(api, "why")


def test_long_job_slow_unmount_is_not_a_timeout(kind):
    # the job ran longer than the child timeout and the unmount takes a while:
    # clientmountd answered these ClientMounts at mount, so nnf-sos just waits
    kind.controllers.child_timeout = 0.3
    kind.controllers.clientmountd.delay = 0.2
    api = kind.custom_objects_api()
    to_prerun(api, "long")
    wait(api, "long", "PreRun")
    time.sleep(0.4)  # the job runs longer than the child timeout
    events = store_events(kind)
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "long",
                                       {"spec": {"desiredState": "PostRun"}})
    seen = statuses_until_ready(events, "long", "PostRun")
    assert all(status != "TransientCondition" for status, _ in seen), seen
    wait(api, "long", "PostRun")
    finish(api, "long")


def test_unmount_stall_waits_without_limit(kind):
    kind.controllers.child_timeout = 0.2
    api = kind.custom_objects_api()
    to_prerun(api, "hang")
    wait(api, "hang", "PreRun")
    kind.controllers.faults.add(Fault(kind="clientmount", compute="compute-01",
                                      severity="stall"))
    events = store_events(kind)
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "hang",
                                       {"spec": {"desiredState": "PostRun"}})
    time.sleep(0.6)  # three child timeouts: the passing time is what is tested
    kind.controllers.faults.clear()
    kind.controllers.clientmountd.settle("compute-01", "default-hang-0-computes")
    seen = statuses_until_ready(events, "hang", "PostRun")
    # it waited for the unmount, never timed out, and completed once answered
    assert ("DriverWait", "DW Directive 0: pending unmount") in seen, seen
    assert all(status != "TransientCondition" for status, _ in seen), seen
    assert seen[-1] == ("Completed", ""), seen
    wait(api, "hang", "PostRun")
    finish(api, "hang")


def test_unmount_skips_offline_computes(kind):
    api = kind.custom_objects_api()
    to_prerun(api, "off")
    wait(api, "off", "PreRun")
    kind.controllers.health.set_health("kind-worker2", links={"compute-02": "Offline"})
    kind.controllers.faults.add(Fault(kind="clientmount", compute="compute-02",
                                      severity="stall"))
    advance(api, "off", "PostRun")  # compute-02 cannot answer; nnf-sos skips it
    assert clientmount(api, "compute-01", "off")["spec"]["desiredState"] == "unmounted"
    assert clientmount(api, "compute-02", "off")["spec"]["desiredState"] == "mounted"
    finish(api, "off")


def test_unreachable_computes_follow_storage_changes(kind):
    """The answer is cached between Storage changes, never past one."""
    ctl = kind.controllers
    assert ctl.unreachable_computes() == frozenset()
    assert ctl.unreachable_computes() is ctl.unreachable_computes()  # cached
    ctl.health.set_health("kind-worker2", links={"compute-02": "Offline"})
    eventually(lambda: ctl.unreachable_computes() == {"compute-02"}, what="compute-02 Offline")
    ctl.health.set_health("kind-worker2", links={"compute-02": "Ready"})
    eventually(lambda: ctl.unreachable_computes() == frozenset(), what="compute-02 Ready")


def test_fault_cli_kinds(kind, capsys):
    kc = str(kind.kubeconfig)
    assert main(["fault", "--kubeconfig", kc, "add", "--kind", "clientmount", "--compute",
                 "compute-03", "--message", "ENODEV"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "clientmount" and out["compute"] == "compute-03"
    assert main(["fault", "--kubeconfig", kc, "delay", "--kind", "datamovement", "--seconds",
                 "2"]) == 0
    assert json.loads(capsys.readouterr().out)["severity"] == "delay"
    assert main(["fault", "--kubeconfig", kc, "stall", "--kind", "container", "--state",
                 "PreRun"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit, match="a clientmount fault needs a compute"):
        main(["fault", "--kubeconfig", kc, "add", "--kind", "clientmount"])
    with pytest.raises(SystemExit, match=r"^2$"):  # refused before the emulator is asked
        main(["fault", "--kubeconfig", kc, "delay", "--seconds", "0"])
    assert "--seconds: must be more than 0" in capsys.readouterr().err
    assert main(["fault", "--kubeconfig", kc, "list"]) == 0
    assert len(json.loads(capsys.readouterr().out)["faults"]) == 3


@pytest.mark.parametrize("body, why", [
    ({"kind": "disk"}, "kind must be one of"),
    ({"index": "x"}, "index must be a directive index"),
    ({"index": -1}, "index must be a directive index"),
    ({"once": "yes"}, "once must be true or false"),
    ({"seconds": "5"}, "seconds must be a number"),
    ({"type": "Cosmic"}, "type must be Internal, User or WLM"),
    ({"bogus": 1}, "unexpected keyword"),
    ({"workflow": 7}, "workflow must be a string"),
])
def test_bad_faults_are_refused(kind, body, why):
    from flux_dws.cli.fault import _call
    with pytest.raises(SystemExit, match=why):
        _call(str(kind.kubeconfig), "POST", "/_emulator/faults", body)
    assert kind.controllers.faults.items == []


def test_nnf_accesses_mirror_the_mounts(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="clientmount", compute="compute-02",
                                      message="ENODEV"))
    new_workflow(api, "ac", ["#DW jobdw type=gfs2 capacity=10GiB name=gfs"])
    wait(api, "ac", "Proposal")
    fill_servers(api, "ac", "compute-[01-04]")
    advance(api, "ac", "Setup")
    api.patch_namespaced_custom_object(G, V, "default", "computes", "ac",
                                       {"data": [{"name": "compute-01"}, {"name": "compute-02"}]})
    advance(api, "ac", "DataIn")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "ac",
                                       {"spec": {"desiredState": "PreRun"}})
    wait(api, "ac", "PreRun", want="TransientCondition")

    def access(target):
        return api.get_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "default",
                                                "nnfaccesses", f"ac-0-{target}")
    acc = access("computes")
    assert acc["spec"]["target"] == "single" and acc["spec"]["teardownState"] == "PostRun"
    assert acc["spec"]["clientReference"] == {"kind": "Computes", "name": "ac",
                                              "namespace": "default"}
    assert acc["status"]["ready"] is False
    assert "Node: compute-02" in acc["status"]["error"]["debugMessage"]
    assert access("servers")["status"] == {"state": "mounted", "ready": True}
    kind.controllers.faults.clear()
    wait(api, "ac", "PreRun")
    assert access("computes")["status"] == {"state": "mounted", "ready": True}
    advance(api, "ac", "PostRun")
    assert access("computes")["status"]["state"] == "unmounted"
    assert access("servers")["status"]["state"] == "unmounted"
    advance(api, "ac", "Teardown")
    assert api.list_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "default",
                                             "nnfaccesses")["items"] == []
    finish(api, "ac")


def test_all_starts_then_finishes_in_directive_order(kind):
    """Two file systems mount side by side; neither driver completes before
    the one ahead of it (nnf-sos: every start, then every finish)."""
    api = kind.custom_objects_api()
    new_workflow(api, "two", [XFS, "#DW jobdw type=xfs capacity=10GiB name=other"])
    wait(api, "two", "Proposal")
    fill_servers(api, "two", "compute-[01-04]")
    advance(api, "two", "Setup")
    api.patch_namespaced_custom_object(G, V, "default", "computes", "two",
                                       {"data": [{"name": "compute-01"}]})
    advance(api, "two", "DataIn")
    kind.controllers.faults.add(Fault(state="PreRun", index=0, severity="stall"))
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "two",
                                       {"spec": {"desiredState": "PreRun"}})
    # directive 1 mounts although directive 0 has not finished ...
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            cm = api.get_namespaced_custom_object(G, V, "compute-01", "clientmounts",
                                                  "default-two-1-computes")
            if (cm.get("status") or {}).get("allReady"):
                break
        except ApiException:  # not made yet
            pass
        time.sleep(0.02)
    else:
        raise AssertionError("directive 1 never mounted")
    controllers_passed(api)  # the mount was reconciled into the Workflow
    wf = api.get_namespaced_custom_object(G, V, "default", "workflows", "two")
    prerun = {d["dwdIndex"]: d for d in wf["status"]["drivers"] if d["watchState"] == "PreRun"}
    # ... but does not complete ahead of it
    assert [prerun[0]["completed"], prerun[1]["completed"]] == [False, False]
    assert prerun[1]["status"] == "Running"
    kind.controllers.faults.clear()
    kind.controllers.enqueue("default", "two")
    wf = wait(api, "two", "PreRun")
    assert all(d["completed"] for d in wf["status"]["drivers"] if d["watchState"] == "PreRun")
    finish(api, "two")


def test_slow_mounts_of_two_directives_overlap(kind):
    kind.controllers.clientmountd.delay = 0.5
    api = kind.custom_objects_api()
    new_workflow(api, "par", [XFS, "#DW jobdw type=xfs capacity=10GiB name=other"])
    wait(api, "par", "Proposal")
    fill_servers(api, "par", "compute-[01-04]")
    advance(api, "par", "Setup")
    api.patch_namespaced_custom_object(G, V, "default", "computes", "par",
                                       {"data": [{"name": "compute-01"}]})
    advance(api, "par", "DataIn")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "par",
                                       {"spec": {"desiredState": "PreRun"}})
    wf = wait(api, "par", "PreRun")
    st = wf["status"]
    took = (parse_microtime(st["readyChange"])
            - parse_microtime(st["desiredStateChange"])).total_seconds()
    assert 0.45 <= took < 0.95  # one mount delay, not two in a row
    finish(api, "par")


def test_post_run_unmounts_one_directive_after_another(kind):
    """nnf-sos' PostRun start waits for the unmount: directive 1 does not
    begin to unmount while directive 0 is still unmounting."""
    api = kind.custom_objects_api()
    new_workflow(api, "seq", [XFS, "#DW jobdw type=xfs capacity=10GiB name=other"])
    wait(api, "seq", "Proposal")
    fill_servers(api, "seq", "compute-[01-04]")
    advance(api, "seq", "Setup")
    api.patch_namespaced_custom_object(G, V, "default", "computes", "seq",
                                       {"data": [{"name": "compute-01"}]})
    advance(api, "seq", "DataIn")
    advance(api, "seq", "PreRun")
    kind.controllers.faults.add(Fault(kind="clientmount", compute="compute-01",
                                      severity="stall"))
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "seq",
                                       {"spec": {"desiredState": "PostRun"}})
    eventually(lambda: api.get_namespaced_custom_object(
        G, V, "compute-01", "clientmounts", "default-seq-0-computes")["spec"][
        "desiredState"] == "unmounted", what="the first unmount")
    controllers_passed(api)  # PostRun was reconciled with the first still mounted
    second = api.get_namespaced_custom_object(G, V, "compute-01", "clientmounts",
                                              "default-seq-1-computes")
    assert second["spec"]["desiredState"] == "mounted"
    kind.controllers.faults.clear()
    kind.controllers.clientmountd.settle("compute-01", "default-seq-0-computes")
    wait(api, "seq", "PostRun")
    finish(api, "seq")
