"""Rabbit health end to end: the real service (engine, kube layer) against
the emulator, with the harness' flux-core resource module and Fluxion.

Every wait is on a condition (harness.wait_for runs it after each reactor
callback), never a sleep.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from typing import Any

import pytest

from flux_dws.harness import Harness, jobspec
from flux_dws.libdws.rabbitconf import parse

G, V = "dataworkflowservices.github.io", "v1alpha7"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
R2, R3 = "kind-worker2", "kind-worker3"  # R2: compute-[01-03], R3: compute-04


def ready(h: Harness) -> None:
    h.wait_for(lambda: h.fluxion.rabbit_up(R2) and h.fluxion.rabbit_up(R3), what="rabbits up")


def systemstatus(h: Harness) -> dict[str, str]:
    obj = h.emulator.custom_objects_api().get_namespaced_custom_object(
        G, V, "default", "systemstatuses", "default")
    return dict((obj.get("data") or {}).get("nodes") or {})


def patch_storage(h: Harness, name: str, body: dict[str, Any]) -> None:
    h.emulator.custom_objects_api().patch_namespaced_custom_object(
        G, V, "default", "storages", name, body)


def flushed(h: Harness) -> None:
    """Wait until the health flush armed by the last change has run and the
    RPCs it sent (drains, Fluxion) have been delivered: a no-drain check
    before then would pass whatever the flush was going to do."""
    h.wait_for(lambda: not h.link.timer_pending("health-flush"), what="the health flush")
    h.reactor.call(lambda: None)  # queued behind the flush's RPCs


def wait_sent(h: Harness, what: str, n: int) -> None:
    h.wait_for(lambda: h.fluxion.calls[what] >= n, what=f"{n} {what}")


def compute(h: Harness, name: str) -> dict[str, Any]:
    """The dws.rabbits view of one compute (read on the reactor thread)."""
    for r in h.rabbits_now()["rabbits"]:
        for c in r["computes"]:
            if c["name"] == name:
                return dict(c)
    raise KeyError(name)


@pytest.fixture
def h() -> Iterator[Harness]:
    with Harness(system="kind") as harness:
        ready(harness)
        yield harness


def test_startup_applies_every_rabbit_once(h: Harness) -> None:
    # Fluxion is asked what it has (every ssd down, as dws2jgf writes them),
    # then told what differs: the 4 ssds of the two up rabbits
    assert h.fluxion.calls == {"find": 1, "set_status": 4, "remove_property": 1}
    h.wait_for(lambda: len(systemstatus(h)) == 4, what="SystemStatus written")
    assert set(systemstatus(h).values()) == {"Enabled"}
    view = h.rabbits()
    assert view["ready"] and view["fluxion"] is True
    assert [r["fluxion"] for r in view["rabbits"]] == ["up", "up"]
    assert view["sent"]["systemstatus"] == 1


def test_startup_rpcs_keep_to_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a window of one RPC, the start-up's set_status calls go one at a
    time, in order, and all of them still reach Fluxion."""
    from flux_dws.harness.link import HarnessLink
    from flux_dws.service import core

    monkeypatch.setattr(core, "RPC_WINDOW", 1)
    under_way, most = 0, 0
    plain_rpc = HarnessLink.rpc

    def counting_rpc(self: HarnessLink, topic: str, payload: Any, nodeid: int,
                     callback: Any) -> None:
        nonlocal under_way, most
        under_way += 1
        most = max(most, under_way)

        def answered(*args: Any) -> None:
            nonlocal under_way
            under_way -= 1
            if callback is not None:
                callback(*args)

        plain_rpc(self, topic, payload, nodeid, answered)

    monkeypatch.setattr(HarnessLink, "rpc", counting_rpc)
    with Harness(system="kind") as h:
        ready(h)
        # the property's removal is the start-up's last call, after the
        # set_status that brought the rabbits up: wait for it
        h.wait_for(lambda: h.fluxion.calls["remove_property"] > 0, what="remove_property")
        assert h.fluxion.calls == {"find": 1, "set_status": 4, "remove_property": 1}
        assert h.status()["service"]["rpcs_waiting"] == 0  # all sent: none left behind
    assert most == 1


def test_rabbit_down_and_back_and_its_jobs(h: Harness) -> None:
    h.emulator.controllers.health.set_health(R3, status="Offline")
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 down in Fluxion")
    # a 3-node rabbit job fits behind R2
    small = h.wait(h.submit(XFS, nodes=3))
    assert not small.fatal and sorted(small.hosts) == ["compute-01", "compute-02", "compute-03"]
    assert h.fluxion.hosts_with("badrabbit") == {"compute-04"}
    assert h.fluxion.calls["set_status"] == 6  # 4 at start-up + R3's 2 ssds
    view = h.rabbits()
    r3 = view["rabbits"][1]
    assert (r3["up"], r3["fluxion"], r3["why"]) == (False, "down", "Storage status Offline")
    # a 4-node rabbit job needs compute-04, whose rabbit is down: it waits
    jobid = h.submit(XFS, nodes=4)
    h.wait_for(lambda: h.jm.jobs[jobid].state == "SCHED" and "ssd" in str(
        h.jm.jobs[jobid].jobspec["resources"]), what="job rewritten, waiting")
    h.emulator.controllers.health.set_health(R3, status="Ready")
    h.wait_for(lambda: h.fluxion.rabbit_up(R3), what="R3 up again")
    job = h.wait(jobid)
    assert not job.fatal, job.exceptions
    assert "compute-04" in job.hosts
    assert h.fluxion.hosts_with("badrabbit") == set()


def test_link_down_drains_and_back_undrains(h: Harness) -> None:
    h.emulator.controllers.health.set_health(R2, links={"compute-02": "Offline"})
    h.wait_for(lambda: "compute-02" in h.jm.drained, what="compute-02 drained")
    assert h.jm.drained == {"compute-02": "rabbit kind-worker2 link Offline"}
    assert h.fluxion.rabbit_up(R2), "one link down leaves the rabbit up"
    h.wait_for(lambda: h.fluxion.hosts_with("badrabbit") == {"compute-02"}, what="badrabbit")
    h.emulator.controllers.health.set_health(R2, links={"compute-02": "Ready"})
    h.wait_for(lambda: not h.jm.drained, what="compute-02 undrained")
    h.wait_for(lambda: not h.fluxion.hosts_with("badrabbit"), what="badrabbit removed")


def test_admin_drain_is_kept_and_admin_undrain_stands(h: Harness) -> None:
    h.reactor.call(lambda: h.jm.resources.admin_drain("compute-03", "bad DIMM"))
    h.emulator.controllers.health.set_health(R2, links={"compute-03": "Fenced"})
    h.wait_for(lambda: h.fluxion.hosts_with("badrabbit") == {"compute-03"}, what="badrabbit")
    h.emulator.controllers.health.set_health(R2, links={"compute-03": "Ready"})
    h.wait_for(lambda: not h.fluxion.hosts_with("badrabbit"), what="badrabbit removed")
    flushed(h)
    assert h.jm.drained == {"compute-03": "bad DIMM"}, "an admin's drain is never undrained"
    # an admin undrains a node whose link is still down: it stays undrained
    h.emulator.controllers.health.set_health(R2, links={"compute-01": "Offline"})
    h.wait_for(lambda: "compute-01" in h.jm.drained, what="compute-01 drained")
    h.reactor.call(lambda: h.jm.resources.rpc("resource.undrain", {"targets": "compute-01"},
                                              lambda *a: None))
    h.wait_for(lambda: compute(h, "compute-01")["drained"] is None,
               what="the service to see the undrain")
    # another Storage update of that rabbit, with compute-01 still Offline:
    # its flush drains compute-02 and must leave compute-01 alone
    h.emulator.controllers.health.set_health(R2, links={"compute-01": "Offline",
                                                 "compute-02": "Offline"})
    h.wait_for(lambda: compute(h, "compute-02")["link"] == "Offline", what="the update")
    flushed(h)
    assert h.jm.drained == {"compute-02": "rabbit kind-worker2 link Offline",
                            "compute-03": "bad DIMM"}


def test_disabled_by_admin_then_enabled(h: Harness) -> None:
    patch_storage(h, R2, {"spec": {"state": "Disabled"}, "metadata": {"annotations": {
        "disable_reason": "replacing a drive", "disable_date": "2026-11-23T10:00:00Z"}}})
    h.wait_for(lambda: not h.fluxion.rabbit_up(R2), what="R2 down")
    r2 = h.rabbits()["rabbits"][0]
    assert r2["why"] == "disabled: replacing a drive"
    assert r2["storage"]["state"] == "Disabled"
    flushed(h)
    assert not h.jm.drained, "a disabled rabbit drains nothing"
    patch_storage(h, R2, {"spec": {"state": "Enabled"}})
    h.wait_for(lambda: h.fluxion.rabbit_up(R2), what="R2 up")


def test_testing_mode_status_by_hand(h: Harness) -> None:
    patch_storage(h, R3, {"spec": {"mode": "Testing"}})
    h.emulator.custom_objects_api().patch_namespaced_custom_object_status(
        G, V, "default", "storages", R3, {"status": {"status": "Failed"}})
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 down by hand")
    h.emulator.controllers.health.set_health(R3, status="Ready")  # ignored in Testing mode
    assert h.rabbits()["rabbits"][1]["storage"]["status"] == "Failed"


def test_fenced_rabbit(h: Harness) -> None:
    h.emulator.controllers.health.set_health(R3, fenced=True)
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 fenced: down")
    r3 = h.rabbits()["rabbits"][1]
    assert r3["why"] == ("Storage status Degraded, reboot required: Storage node requires"
                         " reboot to recover from STONITH event")
    assert r3["storage"]["reboot_required"] is True


def test_degraded_rabbit_stays_up(h: Harness) -> None:
    h.emulator.controllers.health.set_health(R3, status="Degraded")
    h.wait_for(lambda: h.rabbits_now()["rabbits"][1]["storage"]["status"] == "Degraded",
               what="the service to see R3 Degraded")
    flushed(h)
    assert h.fluxion.rabbit_up(R3), "a Degraded rabbit without rebootRequired stays up"
    r3 = h.rabbits()["rabbits"][1]
    assert r3["up"] is True and r3["note"] == "Storage status Degraded, still usable"
    assert not h.jm.drained


def test_fenced_compute_drained_then_undrained(h: Harness) -> None:
    reason = "rabbit kind-worker2 fenced this node: rabbit jobs fail here until it is unfenced"
    h.emulator.controllers.health.set_health(R2, links={"compute-02": "Fenced"})
    h.wait_for(lambda: h.jm.drained == {"compute-02": reason}, what="compute-02 drained")
    assert compute(h, "compute-02")["fenced"] is True
    h.emulator.controllers.health.set_health(R2, links={"compute-02": "Ready"})
    h.wait_for(lambda: not h.jm.drained, what="compute-02 undrained")
    assert compute(h, "compute-02")["fenced"] is False


def test_brokers_lost_and_back_in_systemstatus(h: Harness) -> None:
    h.wait_for(lambda: len(systemstatus(h)) == 4, what="SystemStatus written")
    h.reactor.call(lambda: h.jm.resources.set_online("compute-[03-04]", False))
    h.wait_for(lambda: systemstatus(h).get("compute-03") == "Disabled"
               and systemstatus(h).get("compute-04") == "Disabled", what="Disabled")
    h.reactor.call(lambda: h.jm.resources.set_online("compute-04", True))
    h.wait_for(lambda: systemstatus(h).get("compute-04") == "Enabled", what="Enabled again")
    assert systemstatus(h)["compute-03"] == "Disabled"
    assert h.rabbits()["sent"]["systemstatus"] == 3


def test_unmount_drain_disables_until_undrained(h: Harness) -> None:
    h.reactor.call(lambda: h.jm.resources.admin_drain("compute-01", "failed to unmount rabbit"))
    h.wait_for(lambda: systemstatus(h).get("compute-01") == "Disabled", what="Disabled")
    h.reactor.call(lambda: h.jm.resources.rpc("resource.undrain", {"targets": "compute-01"},
                                              lambda *a: None))
    h.wait_for(lambda: systemstatus(h).get("compute-01") == "Enabled", what="Enabled")


def test_unmount_drain_over_an_admin_drain_disables(h: Harness) -> None:
    """The service's drain after a failed unmount (mode=update) keeps an
    admin's earlier reason, yet the node cannot take part: Disabled; an
    admin drain alone leaves it Enabled (its mounts still go normally)."""
    h.wait_for(lambda: len(systemstatus(h)) == 4, what="SystemStatus written")
    h.reactor.call(lambda: h.jm.resources.admin_drain("compute-02", "bad DIMM"))
    h.wait_for(lambda: h.jm.drained.get("compute-02") == "bad DIMM", what="the admin drain")
    assert h.rabbits()["sent"]["systemstatus"] == 1  # only the start-up's: still Enabled
    assert systemstatus(h)["compute-02"] == "Enabled"
    h.reactor.call(lambda: h.jm.resources.rpc(
        "resource.drain", {"targets": "compute-02", "mode": "update",
                           "reason": "failed to unmount rabbit"}, lambda *a: None))
    h.wait_for(lambda: systemstatus(h).get("compute-02") == "Disabled", what="Disabled")
    c2 = h.rabbits()["rabbits"][0]["computes"][1]
    assert (c2["drained"], c2["unmount_drained"]) == ("bad DIMM", True)
    h.reactor.call(lambda: h.jm.resources.rpc("resource.undrain", {"targets": "compute-02"},
                                              lambda *a: None))
    h.wait_for(lambda: systemstatus(h).get("compute-02") == "Enabled", what="Enabled")


def test_service_restart_rebuilds_and_reapplies(h: Harness) -> None:
    h.emulator.controllers.health.set_health(R3, status="Offline")
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 down")
    before = dict(h.fluxion.calls)
    h.restart_service()
    # the new service asks Fluxion what it has: every ssd is as Storage says,
    # so none is sent again (the two node properties are, one RPC each)
    wait_sent(h, "find", before["find"] + 1)
    h.wait_for(lambda: h.rabbits_now().get("ready") is True
               and h.rabbits_now()["sent"]["remove_property"] == 1
               and all(r["fluxion"] != "pending" for r in h.rabbits_now()["rabbits"]),
               what="ready, Fluxion's answer applied")
    assert h.fluxion.calls["set_status"] == before["set_status"]
    assert [r["fluxion"] for r in h.rabbits()["rabbits"]] == ["up", "down"]
    assert not h.fluxion.rabbit_up(R3) and h.fluxion.rabbit_up(R2)
    assert h.fluxion.hosts_with("badrabbit") == {"compute-04"}
    # a service restart while a rabbit changes: the change is not lost, and
    # it is all that is sent
    h.stop_service()
    h.emulator.controllers.health.set_health(R3, status="Ready")
    h.start_service()
    h.wait_for(lambda: h.fluxion.rabbit_up(R3), what="R3 up after the restart")
    assert h.fluxion.calls["set_status"] == before["set_status"] + 2


def test_fluxion_restart_gets_everything_again(h: Harness) -> None:
    h.emulator.controllers.health.set_health(R2, links={"compute-01": "Offline"})
    h.wait_for(lambda: h.fluxion.hosts_with("badrabbit") == {"compute-01"}, what="badrabbit")
    h.reactor.call(h.fluxion.restart)
    h.wait_for(lambda: h.fluxion.rabbit_up(R2) and h.fluxion.rabbit_up(R3)
               and h.fluxion.hosts_with("badrabbit") == {"compute-01"},
               what="Fluxion's state back after its restart")


def test_fluxion_restart_sends_only_what_it_lacks(h: Harness) -> None:
    h.emulator.controllers.health.set_health(R3, status="Offline")
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 down")
    before = dict(h.fluxion.calls)
    h.reactor.call(h.fluxion.restart)  # it comes back with every ssd down
    h.wait_for(lambda: h.fluxion.rabbit_up(R2), what="R2 up again")
    h.wait_for(lambda: h.rabbits_now().get("ready") is True, what="ready")
    assert h.fluxion.calls["find"] == before["find"] + 1
    assert h.fluxion.calls["set_status"] == before["set_status"] + 2, "R2's 2 ssds only"
    assert not h.fluxion.rabbit_up(R3)


def test_fluxion_unknown_state_sends_everything() -> None:
    with Harness(system="kind") as h:
        ready(h)
        before = dict(h.fluxion.calls)
        h.fluxion.away = True  # it restarts, and the find that follows fails
        h.reactor.call(h.fluxion.restart)
        h.wait_for(lambda: any("Fluxion's ssd statuses are unknown (No service matching"
                               in m for _, m in h.link.logs), what="the warning")
        h.fluxion.away = False
        # every ssd is sent (the first tries failed while away, then retried)
        h.wait_for(lambda: h.fluxion.rabbit_up(R2) and h.fluxion.rabbit_up(R3),
                   timeout=30, what="every ssd sent")
        assert h.fluxion.calls["set_status"] == before["set_status"] + 4


def test_fluxion_failure_is_retried() -> None:
    with Harness(system="kind") as h:
        ready(h)
        h.fluxion.away = True
        h.emulator.controllers.health.set_health(R3, status="Offline")
        h.wait_for(lambda: any("ssd update for kind-worker3 failed" in m
                               for _, m in h.link.logs), what="the failure logged")
        h.fluxion.away = False
        h.wait_for(lambda: not h.fluxion.rabbit_up(R3), timeout=30, what="retried")


def test_watch_410_sends_nothing_new(h: Harness) -> None:
    before = dict(h.fluxion.calls)
    n = h.rabbits()["sent"]
    h.emulator.expire_watches()
    h.emulator.controllers.health.set_health(R2, status="Ready")  # an event after the 410
    h.emulator.controllers.health.set_health(R3, status="Offline")
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 down after the 410")
    assert h.fluxion.calls["set_status"] == before["set_status"] + 2
    assert h.rabbits()["sent"]["remove_property"] == n["remove_property"]


def test_storm_settles_with_no_extra_rpcs(h: Harness) -> None:
    before = dict(h.fluxion.calls)
    for i in range(200):
        h.emulator.controllers.health.set_health(R2, links={"compute-01": "Offline" if i % 2 == 0
                                                      else "Ready"},
                                          status="Offline" if i % 3 == 0 else "Ready")
    h.emulator.controllers.health.set_health(R2, links={"compute-01": "Ready"}, status="Ready")
    h.emulator.controllers.health.set_health(R3, status="Offline")  # a last, real change
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="the last change applied")
    extra = {k: h.fluxion.calls[k] - before.get(k, 0) for k in h.fluxion.calls}
    # R3's 2 ssds + 1 set_property, plus whatever R2's flapping caught mid-way
    assert extra["set_status"] >= 2
    assert extra["set_status"] <= 2 + 2 * 2 * 50, extra
    assert h.fluxion.rabbit_up(R2)
    assert h.fluxion.hosts_with("badrabbit") == {"compute-04"}


def test_drains_off_keeps_jobs_off_with_badrabbit() -> None:
    with Harness(system="kind", config={"drain_compute_nodes": False}) as h:
        ready(h)
        h.emulator.controllers.health.set_health(R2, links={"compute-01": "Offline"})
        h.wait_for(lambda: h.fluxion.hosts_with("badrabbit") == {"compute-01"},
                   what="badrabbit")
        flushed(h)
        assert not h.jm.drained
        jobid = h.submit(XFS, nodes=1)
        job = h.wait(jobid)
        assert not job.fatal, job.exceptions
        assert job.hosts != ["compute-01"]
        cons = job.jobspec["attributes"]["system"]["constraints"]
        assert cons == {"not": [{"properties": ["badrabbit"]}]}


def test_excluded_nodes_are_left_alone() -> None:
    h = Harness(system="kind")
    h.jm.exclude = "3"  # compute-04
    with h:
        ready(h)
        h.emulator.controllers.health.set_health(R3, links={"compute-04": "Offline"},
                                                 status="Offline")
        h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 down")
        flushed(h)
        assert not h.jm.drained
        assert h.fluxion.hosts_with("badrabbit") == set()
        c4 = h.rabbits()["rabbits"][1]["computes"][0]
        assert (c4["excluded"], c4["systemstatus"], c4["badrabbit"]) == (True, None, False)


def test_drain_queues_limit_drains() -> None:
    """Drain queues name node properties: no [queues] table is needed."""
    h = Harness(system="kind", config={"drain_queues": ["debug"]})
    h.jm.resources.R["execution"]["properties"] = {"debug": "0"}  # compute-01
    with h:
        ready(h)
        h.emulator.controllers.health.set_health(R2, links={"compute-01": "Offline",
                                                     "compute-02": "Offline"})
        h.wait_for(lambda: h.fluxion.hosts_with("badrabbit") == {"compute-01", "compute-02"},
                   what="badrabbit on both")
        h.wait_for(lambda: "compute-01" in h.jm.drained, what="compute-01 drained")
        flushed(h)
        assert list(h.jm.drained) == ["compute-01"]


def test_config_reload_reaches_rabbit_health() -> None:
    """flux config reload: the new drain queues and resource.exclude are
    applied to rabbit health's drains, not only to the engine's [rabbit]
    (issue 24.3)."""
    h = Harness(system="kind", config={"drain_queues": ["debug"]})
    h.jm.resources.R["execution"]["properties"] = {"debug": "0", "batch": "1-3"}
    with h:
        ready(h)
        assert h.service is not None
        svc = h.service
        h.reactor.call(lambda: svc.reconfig(
            parse({"drain_queues": ["batch"]}), {"resource": {"exclude": "compute-04"}}))
        h.emulator.controllers.health.set_health(R2, links={"compute-02": "Offline"})
        h.emulator.controllers.health.set_health(R3, links={"compute-04": "Offline"})
        h.wait_for(lambda: "compute-02" in h.jm.drained,
                   what="compute-02 (batch, not debug) drained after the reload")
        h.wait_for(lambda: compute(h, "compute-04")["link"] == "Offline", what="the update")
        flushed(h)
        assert list(h.jm.drained) == ["compute-02"], "compute-04 is excluded by the reload"
        assert compute(h, "compute-04")["excluded"] is True


def test_drain_queue_no_node_has_drains_nothing_and_says_so() -> None:
    with Harness(system="kind", config={"drain_queues": ["nosuch"]}) as h:
        ready(h)
        h.wait_for(lambda: any('no node has the property "nosuch"' in m
                               for _, m in h.link.logs), what="the error logged")
        h.emulator.controllers.health.set_health(R2, links={"compute-01": "Offline"})
        h.wait_for(lambda: h.fluxion.hosts_with("badrabbit") == {"compute-01"},
                   what="badrabbit")
        assert not h.jm.drained


def test_without_fluxion_alloc_rabbit_and_badrabbit() -> None:
    with Harness(system="kind", fluxion=False) as h:
        h.wait_for(lambda: h.fluxion.calls["remove_property"] == 2, what="start-up")
        assert h.fluxion.calls["set_status"] == 0
        h.emulator.controllers.health.set_health(R3, status="Offline")
        h.wait_for(lambda: h.fluxion.hosts_with("badrabbit") == {"compute-04"},
                   what="badrabbit without Fluxion")
        jobid = h.submit(XFS, nodes=2, runtime=60)
        h.wait_event(jobid, "start")
        h.wait_for(lambda: h.fluxion.hosts_with("alloc_rabbit") == {"compute-01", "compute-02",
                                                                    "compute-03"},
                   what="alloc_rabbit on the job's rabbit")
        # as flux-coral2 v0.36.0: the resources as submitted (no ssd: the
        # rabbits are not in Fluxion's graph), the bad rabbit's node not given
        assert h.job(jobid).jobspec["resources"] == jobspec(XFS, 2)["resources"]
        assert "compute-04" not in h.job(jobid).hosts
        view = h.rabbits()
        assert view["rabbits"][0]["jobs"] == [jobid]
        assert view["fluxion"] is False and view["rabbits"][0]["fluxion"] is None
        cons = h.job(jobid).jobspec["attributes"]["system"]["constraints"]
        assert cons == {"and": [{"not": [{"properties": ["badrabbit"]}]},
                                {"not": [{"properties": ["alloc_rabbit"]}]}]}
        h.cancel(jobid)
        h.wait(jobid)
        h.wait_for(lambda: not h.fluxion.hosts_with("alloc_rabbit"), what="alloc_rabbit gone")


def test_rabbits_view_lists_jobs(h: Harness) -> None:
    jobid = h.submit(XFS, nodes=1, runtime=60)
    h.wait_event(jobid, "start")
    view = h.rabbits()
    assert view["rabbits"][0]["jobs"] == [jobid]
    h.cancel(jobid)
    h.wait(jobid)
    h.wait_for(lambda: h.rabbits_now()["rabbits"][0]["jobs"] == [], what="job gone from view")


def test_rabbits_view_space_follows_allocations(h: Harness) -> None:
    """capacity is the rabbit's total (its Storage's drives), free its
    Storage's status.capacity, used the difference: a job's xfs is used
    while it runs and free again after its Teardown."""
    total = 39582418599936  # etc/systems/kind.yaml
    padded = 10 * (1 << 30)  # capacity=10GiB, the default profile pads nothing

    def space() -> tuple[int, int | None, int | None]:
        r = h.rabbits_now()["rabbits"][0]
        return r["capacity"], r["free"], r["used"]

    h.wait_for(lambda: space() == (total, total, 0), what="kind-worker2 all free")
    jobid = h.submit(XFS, nodes=1, runtime=60)
    h.wait_event(jobid, "start")
    h.wait_for(lambda: space() == (total, total - padded, padded), what="the xfs used")
    assert h.rabbits()["rabbits"][1]["free"] == total  # kind-worker3 untouched
    h.cancel(jobid)
    h.wait(jobid)
    h.wait_for(lambda: space() == (total, total, 0), what="the xfs freed")


def test_any_user_may_see_rabbit_health_but_not_the_rest(h: Harness) -> None:
    guest = h.owner + 1
    view = h.ask("dws.rabbits", userid=guest)
    assert view["ready"] and [r["name"] for r in view["rabbits"]] == [R2, R3]
    denied = h.ask("dws.status", userid=guest)
    assert denied["errnum"] == errno.EPERM, denied
    assert "error" not in h.ask("dws.status")
