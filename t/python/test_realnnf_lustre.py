"""Lustre across rabbits on the real controllers (issue 77, item 2): each
rabbit's node managers run in a mount namespace of their own
(flux_dws.realstack.nnf), as a rabbit is a host of its own, so a Lustre
file system on both rabbits of the kind system is set up, mounted on each
rabbit at the one path nnf-sos gives it, used and torn down; nothing of
the namespaces is left on the host after.  Both release sets.

Not here: copy_in/copy_out to a Lustre jobdw.  nnf-sos hands them to
nnf-dm's data movement manager (an NnfDataMovement in nnf-dm-system, run
by ``mpirun dcp`` on nnf-dm's worker pods), which needs Pods (issue 78);
the rabbits' node managers move only what is in their own namespace.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from t.python.realk8s import require_binaries
from t.python.test_realnnf_persistent import JOB_TIMEOUT, fatal_note, release_build

from flux_dws.harness import Harness, RemoteEmulator
from flux_dws.realstack import controlplane as cpl
from flux_dws.realstack import nnf

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def mounts_under(top: Path) -> list[str]:
    """The host's mounts under ``top`` (this run's files: another run's
    controllers, a sharness script beside this test, have their own)."""
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f
                if line.split()[4].startswith(f"{top}/") or line.split()[4] == str(top)]


@pytest.fixture(scope="module", params=["2026-03", "2026-05"])
def stack(request: Any, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[tuple[nnf.RealControllers, Harness]]:
    if os.geteuid() != 0:
        pytest.skip("a mount namespace per rabbit needs root")
    bins = require_binaries()
    build = release_build(request.param)
    workdir: Path = tmp_path_factory.mktemp(f"realnnf-lus-{request.param}")
    with cpl.ControlPlane(workdir / "cp", bins) as cp, \
            nnf.RealControllers(cp, workdir / "nnf", system="kind", nnf=build) as rc:
        cp.apply_files([cpl.k8s_dir() / "rbac" / "flux-bindings.yaml"])
        assert (workdir / "nnf" / "namespaces").read_text().startswith(
            "one mount namespace per rabbit: kind-worker2, kind-worker3")
        with Harness(system="kind",
                     emulator=RemoteEmulator(cp.flux_kubeconfig,  # type: ignore[arg-type]
                                             cp.admin_kubeconfig)) as h:
            h.wait_for(lambda: all(h.fluxion.rabbit_up(r.name) for r in h.system.rabbits),
                       what="rabbits up", timeout=JOB_TIMEOUT)
            files = rc.files
            assert mounts_under(files) != []  # the namespaces' files, while they run
            yield rc, h
    # the namespaces' mounts gone with the controllers
    assert mounts_under(files) == []


def test_lustre_over_both_rabbits(stack: tuple[nnf.RealControllers, Harness]) -> None:
    rc, h = stack
    files = rc.files
    job = h.submit("#DW jobdw type=lustre capacity=200GiB name=wide", nodes=4,
                   runtime=3600.0)
    h.wait_event(job, "start", timeout=JOB_TIMEOUT)
    # each rabbit mounted the Lustre at the one path, in its own directory
    mounts = {r: sorted(p.name for p in (files / r / "mnt").iterdir()) for r in rc.rabbits}
    assert all(len(m) == 1 for m in mounts.values()), mounts
    assert len({m[0] for m in mounts.values()}) == 1, mounts
    assert list((files / "mnt").iterdir()) == []  # the host's view: neither
    h.finish(job)
    assert fatal_note(h, job) == ""
    assert h.left_behind(timeout=JOB_TIMEOUT) == ([], [], 0)
    assert all(list((files / r / "mnt").iterdir()) == [] for r in rc.rabbits)
