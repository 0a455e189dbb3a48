"""Jobs through every Workflow state on a real kube-apiserver, the dws
service connected as user flux with only the workload manager roles
(t/k8s/rbac): what the service writes and reads for xfs, gfs2, Lustre and
raw jobdw and for persistent storage (create, use, destroy) is all the
roles allow.  The controllers are the emulator's, run as API clients of
that server (flux_dws.emulator.attached: the real DWS and nnf-sos cannot
be built here, issue 52); with its admission webhooks registered, as a
site's DWS registers its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from t.python.realk8s import require_binaries

from flux_dws.harness import Harness, RemoteEmulator
from flux_dws.realstack.controlplane import ControlPlane

attached = pytest.importorskip(
    "flux_dws.emulator.attached",
    reason="no flux_dws.emulator.attached: the emulator's controllers cannot run"
           " against an API server in this tree")

R2, R3 = "kind-worker2", "kind-worker3"
JOBS = ["#DW jobdw type=xfs capacity=10GiB name=scratch",
        "#DW jobdw type=gfs2 capacity=10GiB name=shared",
        "#DW jobdw type=lustre capacity=100GiB name=lus",
        "#DW jobdw type=raw capacity=10GiB name=rawdev",
        "#DW create_persistent type=xfs capacity=10GiB name=keep",
        "#DW persistentdw name=keep",
        "#DW destroy_persistent name=keep"]


@pytest.fixture(scope="module")
def h(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    workdir: Path = tmp_path_factory.mktemp("realk8s-life")
    with ControlPlane(workdir, require_binaries()) as cp:
        cp.install_crds()
        cp.apply_rbac()
        with attached.Attached(cp.admin_kubeconfig, system="kind"), \
                Harness(system="kind",
                        emulator=RemoteEmulator(cp.flux_kubeconfig)) as harness:  # type: ignore[arg-type]
            harness.wait_for(lambda: harness.fluxion.rabbit_up(R2)
                             and harness.fluxion.rabbit_up(R3), what="rabbits up")
            yield harness


@pytest.mark.parametrize("dw", JOBS)
def test_a_job_runs_as_flux(h: Harness, dw: str) -> None:
    nodes = 1 if "persistent" in dw else 2
    job = h.wait(h.submit(dw, nodes=nodes), timeout=120)
    assert not job.fatal, job.exceptions
    assert "start" in job.events()
    assert h.left_behind() == ([], [], 0)
    assert [m for level, m in h.link.logs if level in ("err", "warning")] == []
