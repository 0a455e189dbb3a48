"""pods/NAME/log: what the emulated kubelet serves of a container's output
(the dws service saves a container job's launcher log as
rabbit_container_log), through the official client as the service reads it."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import advance, eventually, to

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL

POD = BY_GROUP_PLURAL[("", "pods")]
MPI = "#DW container name=mpic profile=example-mpi DW_JOB_foo_local_storage=my-gfs2"
GFS2_AUTH = "#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2"
FOREVER = "#DW container name=cont profile=example-forever DW_JOB_foo_local_storage=my-gfs2"
LABEL = "dataworkflowservices.github.io/workflow.name"


def make_pod(emu, ns="default", name="p", containers=("a", "b"), phase="Running"):
    core = emu.core_v1_api()
    core.create_namespaced_pod(ns, client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(containers=[client.V1Container(name=c, image="busybox")
                                          for c in containers])))
    if phase:
        emu.store.patch(POD, ns, name, "merge", {"status": {"phase": phase}}, "status")
    return core


def status_message(exc: ApiException) -> str:
    import json
    return str(json.loads(exc.body)["message"])


def test_read_namespaced_pod_log(emulator):
    core = make_pod(emulator)
    emulator.store.append_pod_log("default", "p", "a", "one\ntwo\nthree")
    emulator.store.append_pod_log("default", "p", "a", "four")
    emulator.store.append_pod_log("default", "p", "b", "other")
    assert core.read_namespaced_pod_log("p", "default", container="a") == \
        "one\ntwo\nthree\nfour\n"
    assert core.read_namespaced_pod_log("p", "default", container="a", tail_lines=2) == \
        "three\nfour\n"
    assert core.read_namespaced_pod_log("p", "default", container="a", tail_lines=0) == ""
    assert core.read_namespaced_pod_log("p", "default", container="a", tail_lines=9,
                                        limit_bytes=5) == "one\nt"
    assert core.read_namespaced_pod_log("p", "default", container="b") == "other\n"
    # the raw answer is text/plain, as the service reads it
    resp = core.read_namespaced_pod_log("p", "default", container="b",
                                        _preload_content=False)
    assert resp.status == 200 and resp.headers["Content-Type"] == "text/plain"
    assert resp.data == b"other\n"


def test_pod_log_errors(emulator):
    core = make_pod(emulator)
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log("p", "default")
    assert exc.value.status == 400
    assert status_message(exc.value) == \
        "a container name must be specified for pod p, choose one of: [a b]"
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log("p", "default", container="zz")
    assert exc.value.status == 400
    assert status_message(exc.value) == "container zz is not valid for pod p"
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log("nope", "default", container="a")
    assert exc.value.status == 404
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log("p", "default", container="a", tail_lines=-1)
    assert exc.value.status == 422
    make_pod(emulator, name="q", containers=("only",), phase=None)
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log("q", "default")
    assert exc.value.status == 400
    assert "is waiting to start: ContainerCreating" in status_message(exc.value)


def test_single_container_needs_no_name_and_logs_go_with_the_pod(emulator):
    core = make_pod(emulator, name="solo", containers=("main",))
    emulator.store.append_pod_log("default", "solo", "main", "hello")
    assert core.read_namespaced_pod_log("solo", "default") == "hello\n"
    emulator.store.delete(POD, "default", "solo")
    assert emulator.store._pod_logs == {}
    make_pod(emulator, name="solo", containers=("main",))
    assert core.read_namespaced_pod_log("solo", "default") == ""  # a new Pod, a new log


def test_mpi_launcher_logs_what_it_runs(kind):
    api = kind.custom_objects_api()
    core = kind.core_v1_api()
    to(api, "ml", [GFS2_AUTH, MPI], "PreRun", hosts="compute-01")
    pods = core.list_namespaced_pod("default", label_selector=f"{LABEL}=ml").items
    launcher = [p for p in pods
                if p.metadata.labels.get("training.kubeflow.org/job-role") == "launcher"]
    assert len(launcher) == 1 and len(pods) == 2
    name = launcher[0].metadata.name
    assert [c.name for c in launcher[0].spec.containers] == ["example-mpi"]
    text = core.read_namespaced_pod_log(name, "default", container="example-mpi")
    assert text == (f"flux-dws emulator: container example-mpi"
                    f" (ghcr.io/nearnodeflash/nnf-mfu:latest) started in pod {name} on"
                    f" kind-worker2\n"
                    f"+ mpirun dcmp $(DW_JOB_foo_local_storage)/0"
                    f" $(DW_JOB_foo_local_storage)/1\n")
    advance(api, "ml", "PostRun")
    text = core.read_namespaced_pod_log(name, "default", container="example-mpi",
                                        tail_lines=1)
    assert text == "flux-dws emulator: container example-mpi exited with status 0\n"
    advance(api, "ml", "DataOut")
    advance(api, "ml", "Teardown")
    eventually(lambda: not core.list_namespaced_pod(
        "default", label_selector=f"{LABEL}=ml").items, what="the pods to go at Teardown")


def test_job_pod_logs_its_command(kind):
    api = kind.custom_objects_api()
    core = kind.core_v1_api()
    to(api, "jl", [GFS2_AUTH, FOREVER], "PreRun", hosts="compute-01")
    (pod,) = core.list_namespaced_pod("default", label_selector=f"{LABEL}=jl").items
    assert core.read_namespaced_pod_log(pod.metadata.name, "default").splitlines()[1] == \
        "+ /bin/sh -c while true; do date && sleep 5; done"
