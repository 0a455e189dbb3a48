"""Rabbit health controls, vanishing workflows and the fault CLI."""

from __future__ import annotations

import json

import pytest
from t.python.emulator.conftest import G, V, controllers_passed, eventually, new_workflow, wait

from flux_dws.cli.main import main


def storage(api, name):
    return api.get_namespaced_custom_object(G, V, "default", "storages", name)


def test_disable_and_enable_a_rabbit(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"state": "Disabled"}})
    eventually(lambda: storage(api, "kind-worker2")["status"]["status"] == "Disabled")
    assert storage(api, "kind-worker2")["status"]["message"] == "Storage node manually disabled"
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"state": "Enabled"}})
    eventually(lambda: storage(api, "kind-worker2")["status"]["status"] == "Ready")


def test_health_changes(kind):
    api = kind.custom_objects_api()
    kind.controllers.health.set_health("kind-worker2", links={"compute-02": "Offline"})
    st = storage(api, "kind-worker2")["status"]
    assert {c["name"]: c["status"] for c in st["access"]["computes"]} == {
        "compute-01": "Ready", "compute-02": "Offline", "compute-03": "Ready"}
    assert st["status"] == "Ready"
    kind.controllers.health.set_health("kind-worker3", status="Offline")
    assert storage(api, "kind-worker3")["status"]["status"] == "Offline"
    kind.controllers.health.set_health("kind-worker3", status="Ready", fenced=True)
    st = storage(api, "kind-worker3")["status"]
    assert st["status"] == "Degraded" and st["rebootRequired"] is True
    with pytest.raises(ValueError, match="has no compute 'compute-09'"):
        kind.controllers.health.set_health("kind-worker3", links={"compute-09": "Offline"})


@pytest.mark.parametrize(("health", "after"), [
    ({}, "Ready"),
    ({"fenced": True}, "Ready"),  # nnf-sos clears the NnfNode's fencing on re-enable
    ({"k8s_ready": False}, "Offline"),
    ({"status": "Offline"}, "Offline"),
    ({"drain_taint": "cray.nnf.node.drain"}, "Drained"),
])
def test_enable_recomputes_health(kind, health, after):
    api = kind.custom_objects_api()
    kind.controllers.health.set_health("kind-worker3", **health)
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"state": "Disabled"}})
    eventually(lambda: storage(api, "kind-worker3")["status"]["status"] == "Disabled")
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"state": "Enabled"}})
    eventually(lambda: storage(api, "kind-worker3")["status"]["status"] == after)


def test_set_health_without_servers_entry(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object_status(G, V, "default", "storages", "kind-worker3",
                                              {"status": {"access": {"servers": []}}})
    st = kind.controllers.health.set_health("kind-worker3")["status"]
    assert st["status"] == "Ready" and st["access"]["servers"][0]["status"] == "Ready"


def test_testing_mode_leaves_status_alone(kind):
    """In Testing mode nnf-sos leaves the status to whoever writes it, except
    that spec.state Disabled still shows (test_fidelity has the watch-based
    checks of both modes)."""
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"mode": "Testing"}})
    kind.controllers.health.set_health("kind-worker3", status="Offline")
    controllers_passed(api)  # the Storage changes were reconciled
    assert storage(api, "kind-worker3")["status"]["status"] == "Ready"


def test_workflow_vanishes(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "w", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wait(api, "w", "Proposal")
    kind.controllers.vanish("default", "w")
    assert api.list_namespaced_custom_object(G, V, "default", "workflows")["items"] == []
    assert api.list_namespaced_custom_object(G, V, "default", "directivebreakdowns")[
        "items"] == []


def test_fault_cli(kind, capsys):
    kc = str(kind.kubeconfig)
    assert main(["fault", "--kubeconfig", kc, "add", "--state", "Proposal", "--severity",
                 "Fatal", "--type", "User", "--message", "no rabbits for you"]) == 0
    assert json.loads(capsys.readouterr().out)["message"] == "no rabbits for you"
    api = kind.custom_objects_api()
    new_workflow(api, "w", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wf = wait(api, "w", "Proposal", want="Error")
    assert wf["status"]["message"] == "DW Directive 0: User error: no rabbits for you"
    assert main(["fault", "--kubeconfig", kc, "list"]) == 0
    assert len(json.loads(capsys.readouterr().out)["faults"]) == 1
    assert main(["fault", "--kubeconfig", kc, "clear"]) == 0
    capsys.readouterr()
    assert main(["fault", "--kubeconfig", kc, "health", "kind-worker2", "--link",
                 "compute-01=Offline"]) == 0
    capsys.readouterr()
    assert main(["fault", "--kubeconfig", kc, "stall", "--state", "Setup"]) == 0
    assert main(["fault", "--kubeconfig", kc, "vanish", "w"]) == 0
    with pytest.raises(SystemExit, match="has no compute 'nope'"):
        main(["fault", "--kubeconfig", kc, "health", "kind-worker2", "--link", "nope=Offline"])
    assert main(["fault", "--kubeconfig", kc, "health", "kind-worker2", "--link", "bad"]) == 2
    with pytest.raises(SystemExit, match="cannot read kubeconfig"):
        main(["fault", "--kubeconfig", "/nonexistent", "list"])


def test_faults_need_controllers(emu, capsys):
    with pytest.raises(SystemExit, match="runs no controllers"):
        main(["fault", "--kubeconfig", str(emu.kubeconfig), "list"])
