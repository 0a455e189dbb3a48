"""Issue 14: where a WLM's own tests found the emulator differing from DWS
and nnf-sos.  Each test drives the emulator through the Kubernetes API as a
WLM (or a site's test) would and waits on watches."""

from __future__ import annotations

import json

import pytest
from t.python.emulator.conftest import G, V, fill_servers, new_workflow
from t.python.emulator.watching import gone, until

from flux_dws.cli import rabbitmapping
from flux_dws.emulator import Emulator
from flux_dws.emulator.faults import Fault


@pytest.fixture
def kind():
    with Emulator(system="kind", latency="zero") as emu:
        yield emu


def links(st):
    return {c["name"]: c["status"] for c in st["status"]["access"]["computes"]}


# --- 1. Storage status: Live is the rabbit's truth ----------------------------

def test_testing_edits_vanish_when_storage_goes_live(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"mode": "Testing"}})
    api.patch_namespaced_custom_object_status(G, V, "default", "storages", "kind-worker2", {
        "status": {"status": "Degraded", "capacity": 1, "access": {"computes": [
            {"name": "compute-01", "status": "Ready"},
            {"name": "compute-02", "status": "Disabled"},
            {"name": "compute-03", "status": "Ready"}]}}})
    st = until(api, "storages", "kind-worker2", lambda o: links(o)["compute-02"] == "Disabled")
    assert st["status"]["status"] == "Degraded"      # Testing: the edit stands
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"mode": "Live"}})
    st = until(api, "storages", "kind-worker2",
               lambda o: set(links(o).values()) == {"Ready"})
    assert st["status"]["status"] == "Ready"
    assert st["status"]["capacity"] == 39582418599936
    assert st["status"]["access"]["servers"] == [{"name": "kind-worker2", "status": "Ready"}]


def test_disabled_shows_in_testing_mode(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"mode": "Testing", "state": "Disabled"}})
    st = until(api, "storages", "kind-worker3", lambda o: o["status"]["status"] == "Disabled")
    assert st["status"]["message"] == "Storage node manually disabled"
    # enabled again while still in Testing: nnf-sos leaves the status alone ...
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"state": "Enabled"}})
    # ... until the Storage is Live again
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"mode": "Live"}})
    st = until(api, "storages", "kind-worker3", lambda o: o["status"]["status"] == "Ready")
    assert st["status"]["message"] == "" and st["status"]["rebootRequired"] is False


def test_health_changed_in_testing_mode_shows_once_live(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"mode": "Testing"}})
    until(api, "storages", "kind-worker2", lambda o: o["spec"]["mode"] == "Testing")
    st = kind.controllers.health.set_health("kind-worker2", links={"compute-03": "Offline"})
    assert links(st)["compute-03"] == "Ready"         # Testing: untouched
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"mode": "Live"}})
    until(api, "storages", "kind-worker2", lambda o: links(o)["compute-03"] == "Offline")


def test_live_status_edit_is_undone(kind):
    """A status written by hand in Live mode is rebuilt at once."""
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object_status(G, V, "default", "storages", "kind-worker3", {
        "status": {"access": {"computes": [{"name": "compute-04", "status": "Disabled"}]}}})
    until(api, "storages", "kind-worker3", lambda o: links(o) == {"compute-04": "Ready"})


# --- 3. Servers status before Setup ends --------------------------------------

def workflow_until(api, name, state, ready=True):
    return until(api, "workflows", name, lambda o: (o.get("status") or {}).get("state") == state
                 and bool(o["status"].get("ready")) == ready)


def test_servers_status_lists_slow_rabbits_until_allocated(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "w", ["#DW jobdw type=xfs capacity=10GiB name=scratch"])
    srv = until(api, "servers", "w-0", lambda o: "status" in o)
    assert srv["status"]["ready"] is False and srv["status"]["lastUpdate"]
    workflow_until(api, "w", "Proposal")
    fill_servers(api, "w", "compute-[01,04]")
    srv = until(api, "servers", "w-0", lambda o: o["status"].get("allocationSets"))
    assert srv["status"]["ready"] is False
    assert srv["status"]["allocationSets"] == [{"label": "xfs", "storage": {
        "kind-worker2": {"allocationSize": 0, "ready": False},
        "kind-worker3": {"allocationSize": 0, "ready": False}}}]
    # storage that takes a while: Setup is under way, nothing allocated yet
    kind.controllers.faults.add(Fault(state="Setup", severity="delay", seconds=0.5))
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "Setup"}})
    workflow_until(api, "w", "Setup", ready=False)
    srv = api.get_namespaced_custom_object(G, V, "default", "servers", "w-0")
    assert {k: v["allocationSize"] for k, v in
            srv["status"]["allocationSets"][0]["storage"].items()} == {
        "kind-worker2": 0, "kind-worker3": 0}
    workflow_until(api, "w", "Setup")
    srv = api.get_namespaced_custom_object(G, V, "default", "servers", "w-0")
    assert srv["status"]["ready"] is True
    sizes = srv["status"]["allocationSets"][0]["storage"]
    assert all(v["allocationSize"] >= 10 << 30 and v["ready"] for v in sizes.values())
    # Teardown deletes the NnfStorage: the allocations read 0 again, ready stays
    for state in ("DataIn", "PreRun", "PostRun", "DataOut", "Teardown"):
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                           {"spec": {"desiredState": state}})
        workflow_until(api, "w", state)
    srv = until(api, "servers", "w-0", lambda o: all(
        v["allocationSize"] == 0 for v in o["status"]["allocationSets"][0]["storage"].values()))
    assert srv["status"]["ready"] is True


# --- 5. PreRun needs the storage it mounts -------------------------------------

@pytest.mark.parametrize("fs", ["xfs", "gfs2"])
def test_prerun_without_nnfstorage_never_becomes_ready(kind, fs):
    api = kind.custom_objects_api()
    new_workflow(api, "w", [f"#DW jobdw type={fs} capacity=10GiB name=scratch"])
    workflow_until(api, "w", "Proposal")
    fill_servers(api, "w", "compute-01")
    kind.controllers.faults.add(Fault(state="Setup", severity="Fatal", message="no storage"))
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "Setup"}})
    until(api, "workflows", "w", lambda o: o["status"].get("status") == "Error")
    # the WLM gives up on Setup's storage and forces the state ready
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"forceReady": True}})
    workflow_until(api, "w", "Setup")
    api.patch_namespaced_custom_object(G, V, "default", "computes", "w",
                                       {"data": [{"name": "compute-01"}]})
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "DataIn"}})
    workflow_until(api, "w", "DataIn")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "PreRun"}})
    wf = until(api, "workflows", "w", lambda o: o["status"].get("state") == "PreRun"
               and o["status"].get("message"))
    assert wf["status"]["status"] == "DriverWait"
    assert wf["status"]["ready"] is False
    assert wf["status"]["message"] == "DW Directive 0: Internal error: "
    drv = next(d for d in wf["status"]["drivers"] if d["watchState"] == "PreRun")
    assert drv["error"] == 'internal error: nnfstorages.nnf.cray.hpe.com "w-0" not found'
    acc = until(api, "nnfaccesses", "w-0-computes", lambda o: "status" in o,
                group="nnf.cray.hpe.com")
    assert acc["status"]["ready"] is False
    assert acc["status"]["error"]["severity"] == "Minor"
    assert acc["status"]["error"]["debugMessage"] == \
        'nnfstorages.nnf.cray.hpe.com "w-0" not found'
    assert api.list_cluster_custom_object(G, V, "clientmounts")["items"] == []
    # the WLM's way out is Teardown, which works
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                       {"spec": {"desiredState": "Teardown"}})
    workflow_until(api, "w", "Teardown")


# --- 2. NnfSystemStorage -------------------------------------------------------

NNF_G, NNF_V = "nnf.cray.hpe.com", "v1alpha11"
PROFILE = {"kind": "NnfStorageProfile", "name": "default", "namespace": "nnf-system"}


def new_system_storage(api, name, version=NNF_V, **spec):
    return api.create_namespaced_custom_object(NNF_G, version, "default", "nnfsystemstorages", {
        "apiVersion": f"{NNF_G}/{version}", "kind": "NnfSystemStorage",
        "metadata": {"name": name}, "spec": {"storageProfile": PROFILE, **spec}})


def nss_until(api, name, cond):
    return until(api, "nnfsystemstorages", name, lambda o: cond(o.get("status") or {}),
                 group=NNF_G)


@pytest.mark.parametrize("version", ["v1alpha11", "v1alpha10"])
def test_system_storage_reserves_capacity(kind, version, capsys):
    api = kind.custom_objects_api()
    obj = new_system_storage(api, "sys", version, capacity=1 << 40)
    assert obj["spec"]["computesTarget"] == "all" and obj["spec"]["shared"] is True
    assert obj["spec"]["type"] == "raw"
    st = nss_until(api, "sys", lambda s: s.get("ready"))
    assert "error" not in st["status"]
    assert "nnf.cray.hpe.com/nnf_system_storage" in st["metadata"]["finalizers"]
    srv = api.get_namespaced_custom_object(G, V, "default", "servers", "sys")
    assert srv["spec"]["allocationSets"] == [{"label": "system-storage",
                                              "allocationSize": 1 << 40, "storage": [
        {"name": "kind-worker2", "allocationCount": 1},
        {"name": "kind-worker3", "allocationCount": 1}]}]
    labels = srv["metadata"]["labels"]
    assert labels["dataworkflowservices.github.io/owner.kind"] == "NnfSystemStorage"
    assert labels["nnf.cray.hpe.com/job_id"] == "SystemStorage"
    assert srv["metadata"]["ownerReferences"][0]["kind"] == "NnfSystemStorage"
    srv = until(api, "servers", "sys", lambda o: o.get("status", {}).get("ready"))
    assert srv["status"]["allocationSets"][0]["storage"]["kind-worker3"][
        "allocationSize"] == 1 << 40
    comp = api.get_namespaced_custom_object(G, V, "default", "computes", "sys")
    assert [c["name"] for c in comp["data"]] == [
        "compute-01", "compute-02", "compute-03", "compute-04"]
    acc = api.get_namespaced_custom_object(NNF_G, NNF_V, "default", "nnfaccesses", "sys")
    assert acc["spec"]["target"] == "shared" and acc["status"]["ready"] is True
    nst = api.get_namespaced_custom_object(NNF_G, NNF_V, "default", "nnfstorages", "sys")
    assert nst["spec"]["fileSystemType"] == "raw" and nst["status"]["ready"] is True
    # a WLM's free-capacity tool sees the reservation
    assert rabbitmapping.main(["--kubeconfig", str(kind.kubeconfig)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rabbits"]["kind-worker2"]["capacity"] == 39582418599936 - (1 << 40)
    # deletion cleans up
    api.delete_namespaced_custom_object(NNF_G, version, "default", "nnfsystemstorages", "sys")
    gone(api, "nnfsystemstorages", "sys", group=NNF_G)
    for group, plural in ((G, "servers"), (G, "computes"), (NNF_G, "nnfstorages"),
                          (NNF_G, "nnfaccesses")):
        assert api.list_namespaced_custom_object(
            group, V if group == G else NNF_V, "default", plural)["items"] == []


def test_system_storage_selection(kind):
    api = kind.custom_objects_api()
    new_system_storage(api, "odd", shared=False, computesTarget="odd",
                       excludeComputes=["compute-02"])
    nss_until(api, "odd", lambda s: s.get("ready"))
    srv = api.get_namespaced_custom_object(G, V, "default", "servers", "odd")
    assert [e["allocationCount"] for e in srv["spec"]["allocationSets"][0]["storage"]] == [8, 8]
    comp = api.get_namespaced_custom_object(G, V, "default", "computes", "odd")
    assert comp["data"] == []  # compute-02 (index 1) excluded; no other odd index
    new_system_storage(api, "pat", shared=False, computesTarget="pattern",
                       computesPattern=[0, 4], includeRabbits=["kind-worker3"])
    nss_until(api, "pat", lambda s: s.get("ready"))
    srv = api.get_namespaced_custom_object(G, V, "default", "servers", "pat")
    assert srv["spec"]["allocationSets"][0]["storage"] == [
        {"name": "kind-worker3", "allocationCount": 2}]
    comp = api.get_namespaced_custom_object(G, V, "default", "computes", "pat")
    assert comp["data"] == [{"name": "compute-04"}]
    acc = api.get_namespaced_custom_object(NNF_G, NNF_V, "default", "nnfaccesses", "pat")
    assert acc["spec"]["target"] == "single"


def test_system_storage_excludes_disabled_rabbits(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"state": "Disabled"}})
    until(api, "storages", "kind-worker3", lambda o: o["status"]["status"] == "Disabled")
    new_system_storage(api, "sys", excludeDisabledRabbits=True)
    nss_until(api, "sys", lambda s: s.get("ready"))
    srv = api.get_namespaced_custom_object(G, V, "default", "servers", "sys")
    assert [e["name"] for e in srv["spec"]["allocationSets"][0]["storage"]] == ["kind-worker2"]
    # the rabbit comes back: nnf-sos re-reads every NnfSystemStorage
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"state": "Enabled"}})
    until(api, "servers", "sys",
          lambda o: len(o["spec"]["allocationSets"][0]["storage"]) == 2)


@pytest.mark.parametrize(("spec", "severity", "text"), [
    ({"includeRabbits": ["kind-worker2"], "excludeRabbits": ["kind-worker3"]}, "Fatal",
     "IncludeRabbits and ExcludeRabbits can not be used together"),
    ({"includeComputes": ["compute-01"], "excludeComputes": ["compute-02"]}, "Fatal",
     "IncludeComputes and ExcludeComputes can not be used together"),
    ({"excludeRabbits": ["kind-worker2", "kind-worker3"]}, "Minor",
     "no Rabbits available for NnfStorage 'default/bad': all Rabbits are disabled or"
     " excluded"),
    ({"storageProfile": {"kind": "NnfStorageProfile", "name": "nope",
                         "namespace": "nnf-system"}}, "Minor",
     "could not get StorageProfile 'nnf-system/nope': "),
    ({"storageProfile": {"kind": "Servers", "name": "x"}}, "Fatal",
     "StorageProfile is not of kind 'NnfStorageProfile'"),
])
def test_system_storage_errors(kind, spec, severity, text):
    api = kind.custom_objects_api()
    new_system_storage(api, "bad", **spec)
    st = nss_until(api, "bad", lambda s: s.get("error"))
    assert st["status"]["ready"] is False
    err = st["status"]["error"]
    assert err["severity"] == severity and err["type"] == "Internal"
    assert err["debugMessage"].startswith(text)


# --- 4. Default latency ---------------------------------------------------------

def test_default_latency_is_fast_but_not_zero(capsys):
    """Against the default emulator a WLM sees every state take a while (so
    its short timeouts can fire): Setup and PostRun longest."""
    from flux_dws.cli.main import main
    from flux_dws.dwsim.gotime import parse_microtime
    from flux_dws.emulator import latency as lat
    assert lat.load(lat.DEFAULT) == lat.FAST
    assert max(lat.FAST, key=lambda k: lat.FAST[k]).startswith("Setup")
    assert lat.FAST["PostRun"] == max(lat.FAST[s] for s in ("DataIn", "PreRun", "PostRun",
                                                             "DataOut", "Teardown"))
    with pytest.raises(SystemExit):
        main(["emulator", "--help"])
    assert "fast (default" in " ".join(capsys.readouterr().out.split())
    with Emulator(system="kind") as emu:
        assert emu.controllers is not None and emu.controllers.latency == lat.FAST
        api = emu.custom_objects_api()
        new_workflow(api, "w", ["#DW jobdw type=xfs capacity=1GiB name=scratch"])
        workflow_until(api, "w", "Proposal")
        fill_servers(api, "w", "compute-01")
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "w",
                                           {"spec": {"desiredState": "Setup"}})
        workflow_until(api, "w", "Setup", ready=False)   # a WLM can see it still working
        wf = workflow_until(api, "w", "Setup")
        took = parse_microtime(wf["status"]["readyChange"]) - parse_microtime(
            wf["status"]["desiredStateChange"])
        assert took.total_seconds() >= lat.FAST["Setup"]
