"""The emulator restarted from its saved state in the middle of a job: the
workflow goes on (the service-restart fault path a WLM must survive)."""

from __future__ import annotations

import pytest
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

from flux_dws.emulator import Emulator

NNF, NV = "nnf.cray.hpe.com", "v1alpha11"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def test_restart_during_data_movement(tmp_path):
    db = tmp_path / "emu.db"
    with Emulator(system="kind", state=db, latency={"DataMovement": 60}) as emu:
        api = emu.custom_objects_api()
        new_workflow(api, "r", [XFS, "#DW copy_in source=/lus/global/a"
                                     " destination=$DW_JOB_scratch/"])
        wait(api, "r", "Proposal")
        fill_servers(api, "r", "compute-[01-04]")
        advance(api, "r", "Setup")
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "r",
                                           {"spec": {"desiredState": "DataIn"}})
        wait(api, "r", "DataIn", want="DriverWait")
        eventually(lambda: len(api.list_cluster_custom_object(
            NNF, NV, "nnfdatamovements")["items"]) == 4)
    # nnf-dm goes on after the restart (here with no more delay)
    with Emulator(system="kind", state=db, latency="zero") as emu:
        api = emu.custom_objects_api()
        wf = wait(api, "r", "DataIn")
        assert wf["status"]["ready"]
        dms = api.list_cluster_custom_object(NNF, NV, "nnfdatamovements")["items"]
        assert {d["status"]["status"] for d in dms} == {"Success"}
        api.patch_namespaced_custom_object(G, V, "default", "computes", "r",
                                           {"data": [{"name": "compute-01"}]})
        advance(api, "r", "PreRun")
        advance(api, "r", "Teardown")


@pytest.mark.parametrize("slow", ["ClientMount", "Container"])
def test_restart_during_mounts_or_container_start(tmp_path, slow):
    db = tmp_path / "emu.db"
    gfs2 = "#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2"
    cont = ("#DW container name=cont profile=example-forever"
            " DW_JOB_foo_local_storage=my-gfs2")
    with Emulator(system="kind", state=db, latency={slow: 60}) as emu:
        api = emu.custom_objects_api()
        new_workflow(api, "c", [gfs2, cont])
        wait(api, "c", "Proposal")
        fill_servers(api, "c", "compute-[01-04]")
        advance(api, "c", "Setup")
        api.patch_namespaced_custom_object(G, V, "default", "computes", "c",
                                           {"data": [{"name": "compute-01"},
                                                     {"name": "compute-04"}]})
        advance(api, "c", "DataIn")
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "c",
                                           {"spec": {"desiredState": "PreRun"}})
        wait(api, "c", "PreRun", want="DriverWait")
        if slow == "Container":  # the Jobs exist but their pods are not up
            eventually(lambda: len(api.list_namespaced_custom_object(
                "batch", "v1", "default", "jobs")["items"]) == 2)
    with Emulator(system="kind", state=db, latency="zero") as emu:
        api = emu.custom_objects_api()
        wait(api, "c", "PreRun")  # the mounts or the containers finish starting
        jobs = api.list_namespaced_custom_object("batch", "v1", "default", "jobs")["items"]
        assert sorted(j["metadata"]["name"] for j in jobs) == ["c-kind-worker2",
                                                               "c-kind-worker3"]
        assert all(j["status"]["ready"] == 1 for j in jobs)
        advance(api, "c", "PostRun")
        advance(api, "c", "Teardown")


def test_restart_keeps_its_identity(tmp_path):
    """With --state the restarted API server is the same server to its
    clients: the CA they trust and the token in their kubeconfig still work
    (a client kept from before the restart talks to the new process)."""
    from kubernetes import client, config

    db = tmp_path / "emu.db"
    kc = tmp_path / "kubeconfig"
    with Emulator(system="kind", state=db, kubeconfig=kc) as emu:
        port, token, ca = emu.port, emu.token, emu.certs.ca_pem
        kept = client.CustomObjectsApi(config.new_client_from_config(str(kc)))
        new_workflow(kept, "before", [XFS])
    with Emulator(system="kind", state=db, kubeconfig=kc, port=port) as emu:
        assert (emu.token, emu.certs.ca_pem) == (token, ca)
        wf = kept.get_namespaced_custom_object(G, V, "default", "workflows", "before")
        assert wf["metadata"]["name"] == "before"
    # without a state file each start is a new server, as before
    with Emulator(system="kind") as a, Emulator(system="kind") as b:
        assert a.token != b.token and a.certs.ca_pem != b.certs.ca_pem


@pytest.mark.parametrize("at", ["Proposal", "Setup", "PreRun", "Teardown", "deleted"])
def test_restart_keeps_a_created_persistent_storage(tmp_path, at):
    """A PersistentStorageInstance made by a create_persistent Workflow
    outlives it whenever the API server restarts during that Workflow."""
    db = tmp_path / "emu.db"
    states = ["Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut", "Teardown"]
    with Emulator(system="kind", state=db, latency="zero") as emu:
        api = emu.custom_objects_api()
        new_workflow(api, "mk", ["#DW create_persistent type=lustre capacity=1TiB name=proj"])
        wait(api, "mk", "Proposal")
        fill_servers(api, "mk", "compute-[01-04]")
        last = "Teardown" if at == "deleted" else at
        for s in states[1:states.index(last) + 1]:
            advance(api, "mk", s)
        if at == "deleted":
            finish(api, "mk")
    with Emulator(system="kind", state=db, latency="zero") as emu:
        api = emu.custom_objects_api()
        if at != "deleted":
            for s in states[states.index(at) + 1:]:
                advance(api, "mk", s)
            finish(api, "mk")
        p = api.get_namespaced_custom_object(G, V, "default", "persistentstorageinstances",
                                             "proj")
        assert not p["metadata"].get("ownerReferences")
        assert p["status"]["state"] == "Active"
