"""The service's --namespace moves the Workflows (and what DWS makes for
them) only: SystemConfiguration, Storage and SystemStatus stay in DWS'
"default", where the service must still watch and patch them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from flux_dws.harness import Harness

G, V = "dataworkflowservices.github.io", "v1alpha7"
NS = "flux-jobs"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
STAGED = [XFS, "#DW copy_in source=/lus/global/in destination=$DW_JOB_scratch/",
          "#DW copy_out source=$DW_JOB_scratch/ destination=/lus/global/out"]


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness(system="kind", namespace=NS)
    harness.emulator.start()
    # a site makes the namespace before it points the service at it
    client.CoreV1Api(harness.emulator.api_client()).create_namespace(
        {"metadata": {"name": NS}})
    with harness:
        yield harness
        assert harness.reactor.errors == []


def test_jobs_run_with_workflows_in_another_namespace(h: Harness) -> None:
    h.wait_for(lambda: h.fluxion.rabbit_up("kind-worker2"), what="rabbit health from Storage")
    jobid = h.submit(STAGED, nodes=2)
    h.wait_event(jobid, "memo")
    (wf,) = h.workflows()
    assert wf["metadata"]["namespace"] == NS
    job = h.wait(jobid)
    assert not job.fatal, job.exceptions
    assert job.env and job.env["DW_JOB_scratch"].startswith("/mnt/nnf/")
    h.wait_for(lambda: not h.workflows(), what="the Workflow deleted")


def test_system_objects_are_read_and_patched_in_default(h: Harness) -> None:
    # the compute-to-rabbit map (SystemConfiguration) and rabbit health
    # (Storage) came from default; SystemStatus is patched there too
    h.wait_for(lambda: h.rabbits_now().get("ready") is True, what="rabbit health ready")
    h.wait_for(lambda: h.rabbits_now()["sent"]["systemstatus"] >= 1, what="SystemStatus")
    status = h.emulator.custom_objects_api().get_namespaced_custom_object(
        G, V, "default", "systemstatuses", "default")
    assert set((status.get("data") or {}).get("nodes") or {}) == {
        "compute-01", "compute-02", "compute-03", "compute-04"}
    assert not [line for _, line in h.link.logs if "not found" in line]
