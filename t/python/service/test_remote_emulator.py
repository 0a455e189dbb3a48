"""A harness on an emulator it did not start (RemoteEmulator, as
bench_service runs one on El Capitan's system): it lists the Workflows
through the emulator's kubeconfig, so left_behind counts what a run
leaves (issue 51: bench_service checks nothing is left behind)."""

from __future__ import annotations

from pathlib import Path

from flux_dws.emulator import start_subprocess
from flux_dws.harness import Harness, RemoteEmulator

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def test_a_remote_emulators_workflows_are_listed_and_none_left(tmp_path: Path) -> None:
    kc = tmp_path / "kubeconfig"
    proc = start_subprocess(kc, "--system", "kind", "--latency", "zero", timeout=60)
    try:
        with Harness(system="kind", emulator=RemoteEmulator(kc)) as h:  # type: ignore[arg-type]
            jobid = h.submit(XFS, nodes=1, runtime=3600)
            h.wait_event(jobid, "start", timeout=60)
            assert [w["metadata"]["name"] for w in h.workflows()] == [f"fluxjob-{jobid}"]
            h.cancel(jobid)
            h.wait(jobid, timeout=60)
            assert h.left_behind() == ([], [], 0)
    finally:
        proc.terminate()
        proc.wait(30)
