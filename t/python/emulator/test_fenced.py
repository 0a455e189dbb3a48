"""Degraded rabbits and fenced computes as nnf-sos reports them (issue 43):
the fault CLI makes each case, and a Workflow whose computes are fenced
fails with nnf-sos' words (nnf-sos #573)."""

from __future__ import annotations

from t.python.emulator.conftest import G, V, advance, finish, to, wait
from t.python.emulator.test_rabbit_faults import links, ok

from flux_dws.dwsim import storage as nnf_storage

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
FENCED_02 = ("DW Directive 0: Internal error: Workflow failed: compute nodes [compute-02]"
             " were fenced during the job")


def test_fault_cli_makes_each_case(kind):
    # Degraded and still usable (a RAID rebuild): no reboot required
    st = ok(kind, "health", "kind-worker2", "--status", "Degraded")["status"]
    assert (st["status"], st["rebootRequired"]) == ("Degraded", False)
    # fenced by a STONITH event: Degraded, and the rabbit needs a reboot
    st = ok(kind, "health", "kind-worker2", "--reset", "--fenced")["status"]
    assert (st["status"], st["rebootRequired"]) == ("Degraded", True)
    assert st["message"] == "Storage node requires reboot to recover from STONITH event"
    # a fenced compute: its entry in the rabbit's Storage
    obj = ok(kind, "health", "kind-worker2", "--reset", "--link", "compute-02=Fenced")
    assert obj["status"]["status"] == "Ready"
    assert links(obj) == {"compute-01": "Ready", "compute-02": "Fenced", "compute-03": "Ready"}


def test_fence_error_words():
    err = nnf_storage.fence_error(["compute-02", "compute-03"])
    assert (err.severity, err.type) == ("Fatal", "Internal")
    assert err.driver_message == ("Internal error: Workflow failed: compute nodes"
                                  " [compute-02 compute-03] were fenced during the job")
    assert err.driver_error == ("internal error: compute nodes have been fenced:"
                                " [compute-02 compute-03]")
    storages = [{"status": {"access": {"computes": [{"name": "c2", "status": "Fenced"},
                                                    {"name": "c1", "status": "Offline"}]}}},
                {"status": {"access": {"computes": [{"name": "c3", "status": "Fenced"}]}}},
                {}]
    assert nnf_storage.fenced_computes(storages, ["c3", "c1", "c2", "c4"]) == ["c3", "c2"]


def test_prerun_fails_on_a_fenced_compute(kind):
    api = kind.custom_objects_api()
    to(api, "w", [XFS], "DataIn", hosts="compute-[01-02]")
    kind.controllers.health.set_health("kind-worker2", links={"compute-02": "Fenced"})
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "PreRun"}})
    wf = wait(api, "w", "PreRun", want="Error")
    assert wf["status"]["message"] == FENCED_02
    access = api.get_namespaced_custom_object("nnf.cray.hpe.com", "v1alpha11", "default",
                                              "nnfaccesses", "w-0-computes")
    assert access["status"]["error"]["severity"] == "Fatal"
    assert access["status"]["error"]["debugMessage"] == ("compute nodes have been fenced:"
                                                         " [compute-02]")
    finish(api, "w")


def test_fenced_during_the_job_fails_postrun(kind):
    api = kind.custom_objects_api()
    to(api, "w", [XFS], "PreRun", hosts="compute-[01-02]")
    kind.controllers.health.set_health("kind-worker2", links={"compute-02": "Fenced"})
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "PostRun"}})
    wf = wait(api, "w", "PostRun", want="Error")
    assert wf["status"]["message"] == FENCED_02
    finish(api, "w")


def test_a_degraded_rabbit_is_used(kind):
    api = kind.custom_objects_api()
    kind.controllers.health.set_health("kind-worker2", status="Degraded")
    wf = to(api, "w", [XFS], "Teardown", hosts="compute-[01-02]")
    assert wf is not None and wf["status"]["status"] == "Completed"
    finish(api, "w")


def test_unfenced_compute_runs_again(kind):
    api = kind.custom_objects_api()
    kind.controllers.health.set_health("kind-worker2", links={"compute-02": "Fenced"})
    kind.controllers.health.set_health("kind-worker2", links={"compute-02": "Ready"})
    wf = to(api, "w", [XFS], "PostRun", hosts="compute-[01-02]")
    assert wf is not None and wf["status"]["ready"]
    advance(api, "w", "Teardown")
    finish(api, "w")
