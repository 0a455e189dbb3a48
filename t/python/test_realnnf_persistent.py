"""Persistent storage shared by its owner, on the real controllers of both
release sets (issue 77, item 1): nnf-sos v0.1.34 (May 2026) refuses a
persistentdw of another user's PersistentStorageInstance in its own
words until the owner runs ``flux dws persistent share``
(dws.persistent-share: the ignore-uid annotation, written by the
service as user flux), then lets that user in; v0.1.32 (March) checks
no owner, so the job runs on it either way.

The service runs through the harness (its jobs may be any user's) as
user flux with the workload manager's roles and flux-dws' extra Role
(patching a PSI is not in the WLM roles); the controllers are the real
DWS, nnf-sos and nnf-dm (flux_dws.realstack.nnf).  Skipped where they are
not built, failed then under FLUX_DWS_REQUIRE_REALK8S=1.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from t.python.realk8s import EXTRA_ROLE, require_binaries, wait_rbac

from flux_dws.harness import Harness, RemoteEmulator
from flux_dws.realstack import controlplane as cpl
from flux_dws.realstack import nnf

IGNORE_UID = "dataworkflowservices.github.io/ignore-uid"
SHARE = "dws.persistent-share"
REFUSED = ("DWS/Rabbit interactions failed: workflow hit an error: DW Directive 0: User error:"
           " User ID does not match existing persistent storage")
JOB_TIMEOUT = 600.0

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def release_build(release: str) -> nnf.NnfBuild:
    """The build of ``release``: 2026-03 as nnf.build() finds it, 2026-05
    from FLUX_DWS_NNF_DIR_2026_05 or the cache entry of its source."""
    env = dict(os.environ)
    try:
        if release == "2026-05":
            if os.environ.get("FLUX_DWS_NNF_DIR_2026_05"):
                os.environ["FLUX_DWS_NNF_DIR"] = os.environ["FLUX_DWS_NNF_DIR_2026_05"]
            else:
                os.environ.pop("FLUX_DWS_NNF_DIR", None)
                os.environ["FLUX_DWS_NNF_SRC"] = str(nnf.source_dir() / release)
        return nnf.build()
    except nnf.NnfUnavailable as exc:
        if os.environ.get("FLUX_DWS_REQUIRE_REALK8S") == "1" \
                and (nnf.source_dir() / "SHA256SUMS").is_file():
            pytest.fail(f"{exc} (FLUX_DWS_REQUIRE_REALK8S=1)")
        pytest.skip(str(exc))
    finally:
        os.environ.clear()
        os.environ.update(env)


@pytest.fixture(scope="module", params=["2026-03", "2026-05"])
def h(request: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Harness]]:
    release: str = request.param
    bins = require_binaries()
    build = release_build(release)
    workdir: Path = tmp_path_factory.mktemp(f"realnnf-psi-{release}")
    with cpl.ControlPlane(workdir / "cp", bins) as cp, \
            nnf.RealControllers(cp, workdir / "nnf", system="kind", nnf=build):
        cp.apply_files([cpl.k8s_dir() / "rbac" / "flux-bindings.yaml", EXTRA_ROLE])
        wait_rbac(cp, True, "patch", "persistentstorageinstances",
                  "dataworkflowservices.github.io", "default")
        with Harness(system="kind",
                     emulator=RemoteEmulator(cp.flux_kubeconfig,  # type: ignore[arg-type]
                                             cp.admin_kubeconfig)) as harness:
            harness.wait_for(lambda: all(harness.fluxion.rabbit_up(r.name)
                                         for r in harness.system.rabbits),
                             what="rabbits up", timeout=JOB_TIMEOUT)
            yield release, harness


def fatal_note(h: Harness, jobid: int) -> str:
    job = h.wait(jobid, timeout=JOB_TIMEOUT)
    notes = [e["note"] for e in job.exceptions if e["severity"] == 0]
    return notes[0] if notes else ""


def test_another_users_persistentdw_and_share(h: tuple[str, Harness]) -> None:
    release, hh = h
    other = hh.owner + 1
    create = hh.submit("#DW create_persistent type=xfs capacity=10GiB name=proj", nodes=1)
    assert fatal_note(hh, create) == ""

    # not shared yet: refused in nnf-sos' words by v0.1.34; v0.1.32
    # checked no owner (validatePersistentInstanceDirective), so it runs
    unshared = hh.submit("#DW persistentdw name=proj", nodes=1, userid=other)
    assert fatal_note(hh, unshared) == (REFUSED if release == "2026-05" else "")

    # the owner shares it: the annotation is written on both
    ok = hh.ask(SHARE, payload={"name": "proj"})
    assert ok == {"success": True, "name": "proj", "shared": True, "changed": True}, ok
    psi = hh.emulator.custom_objects_api().get_namespaced_custom_object(
        "dataworkflowservices.github.io", "v1alpha7", "default",
        "persistentstorageinstances", "proj")
    assert psi["metadata"]["annotations"][IGNORE_UID] == "true"

    # shared: the other user's job runs to its end on both
    use = hh.submit("#DW persistentdw name=proj", nodes=1, userid=other)
    assert fatal_note(hh, use) == ""
    assert "start" in hh.job(use).events()

    destroy = hh.submit("#DW destroy_persistent name=proj", nodes=1)
    assert fatal_note(hh, destroy) == ""
    assert hh.left_behind(timeout=JOB_TIMEOUT) == ([], [], 0)
