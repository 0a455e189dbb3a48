"""A Workflow watch that stays open and hears nothing (the emulator's
mute-watches: a deaf connection) does not stop the queue: the service's
watchdog lists the Workflows again once the watch has been silent for
watch_silence while a Workflow is still to move, and the jobs go on.
Every wait is on a condition; the fault holds until the test clears it."""

from __future__ import annotations

from t.python.service.harnesshelp import settled

from flux_dws.harness import Harness

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def test_jobs_go_on_while_every_watch_is_deaf() -> None:
    with Harness(kube={"watch_silence": 0.5}) as h:
        h.emulator.mute_watches()
        jobs = [h.submit(XFS, nodes=1) for _ in range(3)]
        for jobid in jobs:
            # each step waits for a heal (a list after 0.5 s of silence):
            # about 6 s here, a bound for a loaded machine
            job = h.wait(jobid, timeout=120.0)
            assert job.exceptions == [], job.exceptions
        assert h.emulator.api_faults.muted_events > 0  # the watches heard nothing
        watches = {w["kind"]: w for w in h.status()["service"]["watches"]}
        assert watches["Workflow"]["heals"] >= 1
        assert "still to change" in watches["Workflow"]["last_error"]
        h.emulator.mute_watches(False)
        assert settled(h) == {}
        assert h.reactor.errors == []
