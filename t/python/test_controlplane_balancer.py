"""A site's control plane (issue 77, item 3): two kube-apiservers on one
etcd behind a real TCP balancer (Debian's haproxy), the dws service's
kubeconfig (user flux, the WLM roles alone) and the controllers' pointing
at the balancer.  One API server killed for good mid-job, both restarted
one after the other during a 50-job run, the balancer itself restarted:
no job lost, stuck or failed, nothing left behind, and each watch resumes
from its resourceVersion (a reconnect, not a list) where the server it
lands on still has that revision (here, always: both read one etcd).

The controllers are the emulator's, attached as API clients
(flux_dws.emulator.attached); what a site's figures are (time to recover,
requests during recovery): t/bench/bench_balancer.py and the service
guide, "Several API servers behind a balancer"."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from t.python.realk8s import require_balancer, require_binaries, until

from flux_dws.harness import Harness, RemoteEmulator
from flux_dws.realstack.controlplane import APISERVER, BALANCER, FLUX_USER, ControlPlane

attached = pytest.importorskip(
    "flux_dws.emulator.attached",
    reason="no flux_dws.emulator.attached: the emulator's controllers cannot run"
           " against an API server in this tree")

R2, R3 = "kind-worker2", "kind-worker3"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
SECOND = f"{APISERVER}-2"
JOB_TIMEOUT = 600.0   # a bound for a loaded machine; a job here takes about a second
HELD = 3600.0         # a runtime the test ends with finish()

pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    require_balancer()
    workdir: Path = tmp_path_factory.mktemp("realk8s-lb")
    with ControlPlane(workdir, require_binaries(), apiservers=2, balancer=True,
                      audit=True) as plane:
        plane.install_crds()
        plane.apply_rbac()
        yield plane


@pytest.fixture(scope="module")
def h(cp: ControlPlane) -> Iterator[Harness]:
    with attached.Attached(cp.admin_kubeconfig, system="kind"), \
            Harness(system="kind",
                    emulator=RemoteEmulator(cp.flux_kubeconfig,  # type: ignore[arg-type]
                                            cp.admin_kubeconfig)) as harness:
        harness.wait_for(lambda: harness.fluxion.rabbit_up(R2)
                         and harness.fluxion.rabbit_up(R3), what="rabbits up",
                         timeout=JOB_TIMEOUT)
        yield harness


@pytest.fixture
def both_up(cp: ControlPlane) -> Iterator[None]:
    """Every server of the plane running after the test, whatever it stopped."""
    yield
    for name in [*cp.apiservers, BALANCER]:
        if not cp.running(name):
            cp.start_again(name)


def watches(h: Harness) -> dict[str, dict[str, Any]]:
    assert h.service is not None
    return {w["kind"]: w for w in h.service.kube.watch_states()}


def relisted_for_cause(caplog: pytest.LogCaptureFixture) -> int:
    """The lists a watch was told to make: a 410 (its revision gone) or
    the watchdog's heal.  Any other list after a reconnect is a fault."""
    return sum(1 for r in caplog.records
               if r.name.startswith("flux_dws") and "listing again" in r.getMessage())


def run_all(h: Harness, jobs: list[int]) -> None:
    for j in jobs:
        job = h.wait(j, timeout=JOB_TIMEOUT)
        assert not job.fatal, (j, job.exceptions)
        assert "start" in job.events(), (j, job.events())
    assert h.left_behind(timeout=JOB_TIMEOUT) == ([], [], 0)
    assert [m for level, m in h.link.logs if level in ("err",)] == []


def flux_requests(cp: ControlPlane, since: str = "") -> Counter[str]:
    """The API server each of flux's requests since ``since`` (an audit
    timestamp) went to."""
    return Counter(e["apiserver"] for e in cp.audit_events(FLUX_USER)
                   if e.get("requestReceivedTimestamp", "") > since)


def last_stamp(cp: ControlPlane) -> str:
    events = cp.audit_events()
    return str(events[-1]["requestReceivedTimestamp"]) if events else ""


def test_jobs_run_through_the_balancer_on_both_servers(cp: ControlPlane, h: Harness) -> None:
    since = last_stamp(cp)
    run_all(h, [h.submit(XFS, nodes=2) for _ in range(4)])
    # the balancer spreads the service's connections over both servers
    served = flux_requests(cp, since)
    assert served[APISERVER] > 0 and served[SECOND] > 0, served


@pytest.mark.parametrize("victim", [APISERVER, SECOND])
def test_an_api_server_killed_for_good_mid_job(cp: ControlPlane, h: Harness, victim: str,
                                               both_up: None,
                                               caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    held = [h.submit(XFS, nodes=1, runtime=HELD) for _ in range(2)]
    for j in held:
        h.wait_event(j, "start", timeout=JOB_TIMEOUT)
    before = watches(h)
    cp.kill(victim)
    since = last_stamp(cp)
    # the jobs running go on to their end, new ones run start to end
    fresh = [h.submit(XFS, nodes=2) for _ in range(3)]
    for j in held:
        h.finish(j)
    run_all(h, held + fresh)
    after = watches(h)
    assert all(w["state"] == "watching" for w in after.values()), after
    # the watches on the killed server reconnected to the other, from
    # their resourceVersion: no list beyond those a 410 or a heal asked for
    assert sum(w["reconnects"] for w in after.values()) > \
        sum(w["reconnects"] for w in before.values())
    relists = sum(after[k]["lists"] - before[k]["lists"] for k in before)
    assert relists <= relisted_for_cause(caplog), (before, after)
    # nothing of flux's went to the dead server after it died
    served = flux_requests(cp, since)
    assert served[victim] == 0 and sum(served.values()) > 0, served


def test_both_restarted_one_after_the_other_during_50_jobs(cp: ControlPlane, h: Harness,
                                                           both_up: None) -> None:
    jobs = [h.submit(XFS, nodes=1) for _ in range(50)]

    def ended(n: int) -> None:
        h.wait_for(lambda: sum(h.jm.jobs[j].state == "INACTIVE" for j in jobs) >= n,
                   timeout=JOB_TIMEOUT, what=f"{n} of the 50 jobs ended")
    ended(10)
    cp.restart(APISERVER)
    ended(25)
    cp.restart(SECOND)
    run_all(h, jobs)


def test_the_balancer_restarted_mid_run(cp: ControlPlane, h: Harness, both_up: None) -> None:
    held = h.submit(XFS, nodes=2, runtime=HELD)
    h.wait_event(held, "start", timeout=JOB_TIMEOUT)
    jobs = [h.submit(XFS, nodes=1) for _ in range(6)]
    cp.restart(BALANCER)
    h.finish(held)
    run_all(h, [held, *jobs])
    until("every watch watching again",
          lambda: all(w["state"] == "watching" for w in watches(h).values()),
          timeout=JOB_TIMEOUT)
