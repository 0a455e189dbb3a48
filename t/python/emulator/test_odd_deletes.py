"""A WLM (or an admin) deleting objects at odd times: the real system's
errors and recoveries, never a crash."""

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

from flux_dws.emulator.faults import Fault


@pytest.fixture
def kind(kind):
    """conftest's kind system, retrying failed reconciles after 0.1 s."""
    kind.controllers.retry_seconds = 0.1
    return kind

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


@pytest.mark.parametrize("plural", ["servers", "directivebreakdowns"])
def test_allocation_objects_deleted_before_setup(kind, plural):
    api = kind.custom_objects_api()
    new_workflow(api, "w", [XFS])
    wait(api, "w", "Proposal")
    fill_servers(api, "w", "compute-01")
    saved = api.get_namespaced_custom_object(G, V, "default", plural, "w-0")
    servers = api.get_namespaced_custom_object(G, V, "default", "servers", "w-0")
    api.delete_namespaced_custom_object(G, V, "default", plural, "w-0")
    if plural == "directivebreakdowns":
        # the Servers belong to the breakdown: garbage collection takes them too
        eventually(lambda: not api.list_namespaced_custom_object(G, V, "default", "servers")[
            "items"])
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "Setup"}})
    wf = wait(api, "w", "Setup", want="DriverWait")
    eventually(lambda: api.get_namespaced_custom_object(G, V, "default", "workflows", "w")[
        "status"]["message"] == "DW Directive 0: Internal error: could not read allocation"
                                " request")
    wf = api.get_namespaced_custom_object(G, V, "default", "workflows", "w")
    (driver,) = [d for d in wf["status"]["drivers"] if d["watchState"] == "Setup"]
    kind_name = "Servers" if plural == "servers" else "DirectiveBreakdown"
    assert driver["error"] == f"internal error: unable to get {kind_name}: default/w-0"
    # put it back (a Minor error is retried): Setup completes
    for k in ("resourceVersion", "uid", "creationTimestamp", "generation"):
        saved["metadata"].pop(k, None)
    status = saved.pop("status", None)
    api.create_namespaced_custom_object(G, V, "default", plural, saved)
    if status:  # what nnf-sos' breakdown controller fills in again
        api.patch_namespaced_custom_object_status(G, V, "default", plural, "w-0",
                                                  {"status": status})
    if plural == "directivebreakdowns":  # ... with its Servers
        dbd = api.get_namespaced_custom_object(G, V, "default", plural, "w-0")
        for k in ("resourceVersion", "uid", "creationTimestamp", "generation"):
            servers["metadata"].pop(k, None)
        servers["metadata"]["ownerReferences"][0]["uid"] = dbd["metadata"]["uid"]
        servers.pop("status", None)
        api.create_namespaced_custom_object(G, V, "default", "servers", servers)
    wait(api, "w", "Setup")
    finish(api, "w")


def test_clientmount_deleted_during_prerun_is_made_again(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="clientmount", compute="compute-01",
                                      severity="stall", once=True))
    new_workflow(api, "cm", [XFS])
    wait(api, "cm", "Proposal")
    fill_servers(api, "cm", "compute-01")
    advance(api, "cm", "Setup")
    api.patch_namespaced_custom_object(G, V, "default", "computes", "cm",
                                       {"data": [{"name": "compute-01"}]})
    advance(api, "cm", "DataIn")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "cm",
                                       {"spec": {"desiredState": "PreRun"}})
    wait(api, "cm", "PreRun", want="DriverWait")
    # DriverWait can be written before the driver has made its ClientMount
    mounts = ("compute-01", "clientmounts")
    eventually(lambda: any(m["metadata"]["name"] == "default-cm-0-computes" for m in
                           api.list_namespaced_custom_object(G, V, *mounts)["items"]),
               what="the stalled ClientMount exists")
    api.delete_namespaced_custom_object(G, V, *mounts, "default-cm-0-computes")
    wait(api, "cm", "PreRun")  # the driver asks for the mount again; it works this time
    assert api.get_namespaced_custom_object(G, V, "compute-01", "clientmounts",
                                            "default-cm-0-computes")["status"]["allReady"]
    finish(api, "cm")


def test_workflow_deleted_mid_data_movement(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="datamovement", severity="stall"))
    new_workflow(api, "dm", [XFS, "#DW copy_in source=/lus/global/a destination=$DW_JOB_scratch/"])
    wait(api, "dm", "Proposal")
    fill_servers(api, "dm", "compute-[01-04]")
    advance(api, "dm", "Setup")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "dm",
                                       {"spec": {"desiredState": "DataIn"}})
    wait(api, "dm", "DataIn", want="DriverWait")
    from flux_dws.cli.demo import remove_finalizer
    api.delete_namespaced_custom_object(G, V, "default", "workflows", "dm")
    remove_finalizer(api, "dm")

    def nothing_left():
        for group, plural in (("nnf.cray.hpe.com", "nnfdatamovements"),
                              ("nnf.cray.hpe.com", "nnfstorages"), (G, "servers"),
                              (G, "directivebreakdowns"),
                              ("nnf.cray.hpe.com", "nnfdatamovementprofiles")):
            items = api.list_cluster_custom_object(
                group, "v1alpha11" if group.startswith("nnf") else V, plural,
                label_selector="dataworkflowservices.github.io/workflow.name=dm")["items"]
            if items:
                return False
        try:
            api.get_namespaced_custom_object(G, V, "default", "workflows", "dm")
        except ApiException as exc:
            return exc.status == 404
        return False
    eventually(nothing_left)


def test_computes_emptied_during_prerun(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "ce", [XFS])
    wait(api, "ce", "Proposal")
    fill_servers(api, "ce", "compute-01")
    advance(api, "ce", "Setup")
    advance(api, "ce", "DataIn")
    wf = advance(api, "ce", "PreRun")  # no computes: nothing to mount, as nnf-sos
    assert "DW_JOB_scratch" in wf["status"]["env"]
    finish(api, "ce")
