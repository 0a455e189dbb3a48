"""Container workflows through the emulated nnf-sos (P4): pinned profiles,
token secrets, the port manager, Jobs/MPIJobs, timeouts and failures."""

from __future__ import annotations

import base64

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import (
    NNF,
    NV,
    G,
    V,
    advance,
    eventually,
    fill_servers,
    finish,
    new_workflow,
    port_manager,
    to,
    wait,
)

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL
from flux_dws.dwsim import tokens
from flux_dws.emulator.faults import Fault
from flux_dws.emulator.nnf_container import count_containers, interpret_requires


def res(group, plural):
    return BY_GROUP_PLURAL[(group, plural)]
GFS2 = "#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2"
FOREVER = "#DW container name=cont profile=example-forever DW_JOB_foo_local_storage=my-gfs2"
MPI = "#DW container name=mpic profile=example-mpi DW_JOB_foo_local_storage=my-gfs2"


def jobs(kind, wf):
    return sorted(o["metadata"]["name"] for o in kind.store.list_objects(
        res("batch", "jobs"), "default",
        f"dataworkflowservices.github.io/workflow.name={wf}"))


def add_profile(api, name, **data):
    base = {"retryLimit": 6, "storages": [{"name": "DW_JOB_foo_local_storage",
                                           "optional": False}],
            "spec": {"containers": [{"name": "app", "image": "alpine"}]}}
    base.update(data)
    api.create_namespaced_custom_object(NNF, NV, "nnf-system", "nnfcontainerprofiles", {
        "apiVersion": f"{NNF}/{NV}", "kind": "NnfContainerProfile",
        "metadata": {"name": name}, "data": base})


def test_helpers():
    assert interpret_requires("copy-offload") == ["copy-offload", "container-auth"]
    assert interpret_requires("user-container-auth,copy-offload") == [
        "container-auth", "copy-offload"]
    assert interpret_requires("something-else") == []
    assert count_containers({"spec": {"containers": [{}, {}]}}) == 2
    assert count_containers({"mpiSpec": {"launcher": {"containers": [{}]},
                                         "worker": {"containers": [{}, {}]}}}) == 1


def test_non_mpi_containers_run_and_finish(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "ct", [GFS2, FOREVER])
    wait(api, "ct", "Proposal")
    pinned = api.get_namespaced_custom_object(NNF, NV, "default", "nnfcontainerprofiles",
                                              "ct-1")
    assert pinned["data"]["pinned"] is True
    assert pinned["metadata"]["ownerReferences"][0]["name"] == "ct"
    api.delete_namespaced_custom_object(G, V, "default", "workflows", "ct")
    from flux_dws.cli.demo import remove_finalizer
    remove_finalizer(api, "ct")
    eventually(lambda: not kind.store.list_objects(
        res(NNF, "nnfcontainerprofiles"), "default"))

    wf = to(api, "ct2", [GFS2, FOREVER], "PreRun")
    env = wf["status"]["env"]
    assert env["NNF_CONTAINER_SUBDOMAIN"] == "ct2"
    assert env["NNF_CONTAINER_DOMAIN"] == "default.svc.cluster.local"
    assert env["NNF_CONTAINER_HOSTNAMES"] == "kind-worker2,kind-worker3"
    assert "NNF_CONTAINER_PORTS" not in env  # the profile asks for no ports
    assert jobs(kind, "ct2") == ["ct2-kind-worker2", "ct2-kind-worker3"]
    job = api.get_namespaced_custom_object("batch", "v1", "default", "jobs", "ct2-kind-worker3")
    labels = job["metadata"]["labels"]
    assert labels["nnf.cray.hpe.com/container"] == "ct2"
    assert labels["nnf.cray.hpe.com/pinned_container_profile_name"] == "ct2-1"
    assert labels["nnf.cray.hpe.com/directive_index"] == "1"
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.io/hostname": "kind-worker3"}
    assert pod["restartPolicy"] == "Never" and pod["subdomain"] == "ct2"
    assert pod["securityContext"]["runAsUser"] == 1000
    assert job["spec"]["backoffLimit"] == 6
    assert job["status"]["ready"] == 1
    svc = kind.store.get(res("", "services"), "default", "ct2")
    assert svc["spec"]["clusterIP"] == "None"
    pods = kind.core_v1_api().list_namespaced_pod(
        "default", label_selector="dataworkflowservices.github.io/workflow.name=ct2").items
    assert len(pods) == 2 and {p.status.phase for p in pods} == {"Running"}
    advance(api, "ct2", "PostRun")
    job = api.get_namespaced_custom_object("batch", "v1", "default", "jobs", "ct2-kind-worker3")
    assert {c["type"] for c in job["status"]["conditions"]} == {"Complete",
                                                                 "SuccessCriteriaMet"}
    advance(api, "ct2", "DataOut")
    advance(api, "ct2", "Teardown")
    assert jobs(kind, "ct2") == []
    finish(api, "ct2")


def test_mpi_with_ports_and_token(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "mp", [GFS2.replace("name=my-gfs2", "name=my-gfs2"
                                          " requires=user-container-auth"), MPI])
    wf = wait(api, "mp", "Proposal")
    assert wf["status"]["requires"] == ["container-auth"]
    fill_servers(api, "mp", "compute-[01-04]")
    wf = advance(api, "mp", "Setup")
    assert wf["status"]["workflowToken"] == {"secretName": "mp-token",
                                             "secretNamespace": "default"}
    core = kind.core_v1_api()
    key_secret = core.read_namespaced_secret("mp-token-server", "default")
    token_secret = core.read_namespaced_secret("mp-token", "default")
    pem = base64.b64decode(key_secret.data["token.key"])
    assert pem.startswith(b"-----BEGIN EC PRIVATE KEY-----")
    claims = tokens.verify_token(base64.b64decode(token_secret.data["token"]).decode(),
                                 tokens.key_from_pem(pem))
    assert claims["sub"] == "user-container"
    pm = port_manager(api)
    (alloc,) = pm["status"]["allocations"]
    assert alloc["status"] == "InUse" and alloc["ports"] == [5000]
    assert pm["spec"]["allocations"][0]["requester"]["name"] == "mp"
    api.patch_namespaced_custom_object(G, V, "default", "computes", "mp",
                                       {"data": [{"name": "compute-01"}, {"name": "compute-04"}]})
    advance(api, "mp", "DataIn")
    wf = advance(api, "mp", "PreRun")
    env = wf["status"]["env"]
    assert env["NNF_CONTAINER_PORTS"] == "5000"
    assert env["NNF_CONTAINER_PORTS_example_mpi"] == "5000"
    assert env["NNF_CONTAINER_HOSTNAMES"] == "mp-launcher,mp-worker-0,mp-worker-1"
    assert env["NNF_CONTAINER_LAUNCHER"] == "kind-worker2"
    mpijob = api.get_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs",
                                              "mp")
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    advance(api, "mp", "PostRun")
    advance(api, "mp", "DataOut")
    advance(api, "mp", "Teardown")
    pm = port_manager(api)
    assert pm["spec"]["allocations"] == []
    assert pm["status"]["allocations"] == []  # kind's portsCooldownInSeconds is 0
    finish(api, "mp")


def test_copy_offload_requires(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "co", ["#DW jobdw type=gfs2 capacity=10GiB name=my-storage"
                             " requires=copy-offload",
                             "#DW container name=cont profile=copy-offload-default"
                             " DW_JOB_my_storage=my-storage DW_GLOBAL_lus=/lus/global"])
    wf = wait(api, "co", "Proposal")
    assert wf["status"]["requires"] == ["copy-offload", "container-auth"]
    finish(api, "co")


def test_copy_offload_without_tls_secret(kind):
    api = kind.custom_objects_api()
    kind.core_v1_api().delete_namespaced_secret("nnf-dm-usercontainer-server-tls", "default")
    new_workflow(api, "notls", ["#DW jobdw type=gfs2 capacity=10GiB name=scr"
                                " requires=copy-offload"])
    wf = wait(api, "notls", "Proposal", want="Error")
    assert wf["status"]["message"] == "DW Directive 0: Internal error: "
    assert "the administrator must configure the user container TLS secret" in \
        wf["status"]["drivers"][0]["error"]


def test_container_data_when_no_containers_are_created(kind):
    api = kind.custom_objects_api()
    add_profile(api, "nocontainer", createContainer=False)
    wf = to(api, "nc", [GFS2, "#DW container name=cont profile=nocontainer"
                              " DW_JOB_foo_local_storage=my-gfs2"], "PreRun")
    assert jobs(kind, "nc") == []
    cd = api.get_namespaced_custom_object(NNF, NV, "default", "nnfcontainerdata", "nc-1")
    (vol,) = cd["data"]["volumes"]
    assert vol["name"] == "DW_JOB_foo_local_storage" and vol["command"] == "jobdw"
    assert vol["directiveIndex"] == 0 and vol["mountPath"] == wf["status"]["env"][
        "DW_JOB_my_gfs2"]
    assert wf["status"]["env"]["NNF_CONTAINER_HOSTNAMES"] == "kind-worker2,kind-worker3"
    advance(api, "nc", "PostRun")
    advance(api, "nc", "Teardown")
    with pytest.raises(ApiException):
        api.get_namespaced_custom_object(NNF, NV, "default", "nnfcontainerdata", "nc-1")
    finish(api, "nc")


@pytest.mark.parametrize("state, before, timeout, text", [
    ("PreRun", "DataIn", "preRunTimeoutSeconds", "failed to start after 1 seconds"),
    ("PostRun", "PreRun", "postRunTimeoutSeconds", "failed to complete after 1 seconds"),
])
def test_containers_time_out(kind, state, before, timeout, text):
    """Containers that never start (PreRun) or ignore shutdown (PostRun)."""
    api = kind.custom_objects_api()
    add_profile(api, "quick", **{timeout: 1})
    kind.controllers.faults.add(Fault(kind="container", state=state, severity="stall"))
    to(api, "to", [GFS2, "#DW container name=cont profile=quick"
                         " DW_JOB_foo_local_storage=my-gfs2"], before)
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "to",
                                       {"spec": {"desiredState": state}})
    wf = wait(api, "to", state, want="Error", timeout=10)
    assert wf["status"]["message"] == f"DW Directive 1: Internal error: user container(s) {text}"
    eventually(lambda: all(
        any(c["reason"] == "DeadlineExceeded" for c in j["status"].get("conditions", []))
        for j in kind.store.list_objects(res("batch", "jobs"), "default")))
    finish(api, "to")


def test_failing_containers(kind):
    api = kind.custom_objects_api()
    kind.controllers.faults.add(Fault(kind="container", state="PostRun", workflow="f1",
                                      message="exit status 3"))
    to(api, "f1", [GFS2, FOREVER], "PreRun")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "f1",
                                       {"spec": {"desiredState": "PostRun"}})
    wf = wait(api, "f1", "PostRun", want="Error")
    # non-MPI failures carry no user message in nnf-sos
    assert wf["status"]["message"] == "DW Directive 1: Internal error: "
    # Kubernetes lists FailureTarget before Failed; nnf-sos reports the first
    (driver,) = [d for d in wf["status"]["drivers"] if d["status"] == "Error"]
    assert driver["error"] == ("internal error: container job FailureTarget"
                               " (BackoffLimitExceeded): exit status 3")
    finish(api, "f1")

    kind.controllers.faults.add(Fault(kind="container", state="PostRun", workflow="f2"))
    to(api, "f2", [GFS2, MPI], "PreRun")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "f2",
                                       {"spec": {"desiredState": "PostRun"}})
    wf = wait(api, "f2", "PostRun", want="Error")
    assert wf["status"]["message"] == ("DW Directive 1: Internal error: user container(s)"
                                       " failed to run successfully after 7 attempts")
    finish(api, "f2")


def test_post_run_timeout_zero_does_not_wait(kind):
    api = kind.custom_objects_api()
    add_profile(api, "nowait", postRunTimeoutSeconds=0)
    kind.controllers.faults.add(Fault(kind="container", state="PostRun", severity="stall"))
    to(api, "nw", [GFS2, "#DW container name=cont profile=nowait"
                         " DW_JOB_foo_local_storage=my-gfs2"], "PostRun")
    finish(api, "nw")


def test_empty_or_unknown_computes(kind):
    api = kind.custom_objects_api()
    to(api, "e1", [GFS2, FOREVER], "DataIn", computes=False)
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "e1",
                                       {"spec": {"desiredState": "PreRun"}})
    wf = wait(api, "e1", "PreRun", want="Error")
    assert wf["status"]["message"] == (
        "DW Directive 1: WLM error: unable to create/update Container Jobs: wlm error: error"
        " obtaining the target NNF nodes for containers: the Computes resources does not"
        " specify any compute nodes")
    finish(api, "e1")
    new_workflow(api, "e2", [GFS2, FOREVER])
    wait(api, "e2", "Proposal")
    fill_servers(api, "e2", "compute-01")
    advance(api, "e2", "Setup")
    # a node the cluster knows (it has a namespace) but no rabbit serves
    kind.core_v1_api().create_namespace({"metadata": {"name": "compute-99"}})
    api.patch_namespaced_custom_object(G, V, "default", "computes", "e2",
                                       {"data": [{"name": "compute-99"}]})
    advance(api, "e2", "DataIn")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "e2",
                                       {"spec": {"desiredState": "PreRun"}})
    wf = wait(api, "e2", "PreRun", want="Error")
    assert "supplied compute node 'compute-99' not found in SystemConfiguration" in \
        wf["status"]["message"]


def test_port_exhaustion_and_cooldown(kind):
    api = kind.custom_objects_api()
    # 5 s: timeUnallocated has whole seconds, as a metav1.Time does, so a
    # cooldown of 1 s could pass before a test under load looks
    api.patch_namespaced_custom_object(G, V, "default", "systemconfigurations", "default",
                                       {"spec": {"ports": [6000],
                                                 "portsCooldownInSeconds": 5}})
    to(api, "p1", [GFS2, MPI], "Setup", computes=False)
    new_workflow(api, "p2", [GFS2, MPI])
    wait(api, "p2", "Proposal")
    fill_servers(api, "p2", "compute-01")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "p2",
                                       {"spec": {"desiredState": "Setup"}})
    wf = wait(api, "p2", "Setup", want="Error")
    assert wf["status"]["message"] == ("DW Directive 1: Internal error: could not request ports"
                                       " for container workflow: InsufficientResources")
    finish(api, "p2")  # its request goes; a waiting request would get the port next
    advance(api, "p1", "Teardown")
    pm = port_manager(api)
    assert [a["status"] for a in pm["status"]["allocations"]] == ["Cooldown"]
    # the cooldown passes and the port is free again
    eventually(lambda: port_manager(api)["status"]["allocations"] == [], timeout=20)
    finish(api, "p1")
    to(api, "p3", [GFS2, MPI], "Setup", computes=False)
    assert [a["ports"] for a in port_manager(api)["status"]["allocations"]
            if a["requester"]["name"] == "p3"] == [[6000]]
    finish(api, "p3")


def test_port_manager_without_system_configuration(kind):
    api = kind.custom_objects_api()
    new_workflow(api, "ic", [GFS2, MPI])
    wait(api, "ic", "Proposal")
    fill_servers(api, "ic", "compute-01")
    kind.store.delete(res(G, "systemconfigurations"), "default", "default")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "ic",
                                       {"spec": {"desiredState": "Setup"}})
    wf = wait(api, "ic", "Setup", want="Error")
    assert wf["status"]["message"] == ("DW Directive 1: User error: could not request ports for"
                                       " container workflow: Invalid NnfPortManager"
                                       " configuration")
    assert port_manager(api)["status"]["status"] == "SystemConfigurationNotFound"
