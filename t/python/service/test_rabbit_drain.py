"""dws.drain and dws.undrain end to end: the real service (engine, kube
layer) against the emulator, with the harness' Fluxion.

A drain writes what the nnf CLI's ``rabbit drain`` writes (the Node's
taints, the Storage's drain_date/drain_reason), nnf-sos reports the
Storage Drained, and rabbit health takes the rabbit's ssds down in
Fluxion; a drain made the nnf CLI's way reads the same.  Every wait is on
a condition, never a sleep.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from typing import Any

import pytest

from flux_dws.harness import Harness

G, V = "dataworkflowservices.github.io", "v1alpha7"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
R2, R3 = "kind-worker2", "kind-worker3"  # R2: compute-[01-03], R3: compute-04
TAINT = "cray.nnf.node.drain"


@pytest.fixture
def h() -> Iterator[Harness]:
    with Harness(system="kind") as harness:
        harness.wait_for(lambda: harness.fluxion.rabbit_up(R2) and harness.fluxion.rabbit_up(R3),
                         what="rabbits up")
        yield harness


def storage(h: Harness, name: str) -> dict[str, Any]:
    return dict(h.emulator.custom_objects_api().get_namespaced_custom_object(
        G, V, "default", "storages", name))


def taints(h: Harness, name: str) -> list[tuple[str, str]]:
    node = h.emulator.core_v1_api().read_node(name)
    return [(t.key, t.effect) for t in node.spec.taints or []]


def view(h: Harness, name: str) -> dict[str, Any]:
    return next(r for r in h.rabbits_now()["rabbits"] if r["name"] == name)


def test_drain_and_undrain_a_rabbit(h: Harness) -> None:
    got = h.ask("dws.drain", payload={"rabbits": R3, "reason": "firmware update"})
    assert got == {"success": True, "rabbits": [R3]}, got
    ann = storage(h, R3)["metadata"]["annotations"]
    assert ann["drain_reason"] == "firmware update"
    assert ann["flux-dws.io/drained-by"] == str(h.owner)
    assert ann["drain_date"].endswith("Z") and len(ann["drain_date"]) == 20
    assert taints(h, R3) == [("cray.nnf.node", "NoSchedule"), (TAINT, "NoSchedule"),
                             (TAINT, "NoExecute")]
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 down in Fluxion")
    r = view(h, R3)
    assert r["up"] is False and r["storage"]["status"] == "Drained"
    assert r["why"] == f"drained {ann['drain_date']}: firmware update"
    assert r["storage"]["drain_reason"] == "firmware update"
    assert r["storage"]["drained_by"] == str(h.owner)
    assert h.fluxion.rabbit_up(R2) and storage(h, R2)["status"]["status"] == "Ready"
    # a job that needs compute-04 waits; one behind R2 runs
    small = h.wait(h.submit(XFS, nodes=3))
    assert not small.fatal and sorted(small.hosts) == ["compute-01", "compute-02", "compute-03"]

    got = h.ask("dws.undrain", payload={"rabbits": R3})
    assert got == {"success": True, "rabbits": [R3]}, got
    assert taints(h, R3) == [("cray.nnf.node", "NoSchedule")]
    assert "drain_reason" not in (storage(h, R3)["metadata"].get("annotations") or {})
    h.wait_for(lambda: h.fluxion.rabbit_up(R3), what="R3 up again")
    r = view(h, R3)
    assert r["up"] is True and "drain_reason" not in r["storage"]


def test_a_running_job_keeps_its_storage(h: Harness) -> None:
    jobid = h.submit(XFS, nodes=1, runtime=600.0)
    job = h.wait_event(jobid, "start")  # its tasks run: h.finish ends them
    rabbit = R3 if job.hosts == ["compute-04"] else R2
    assert h.ask("dws.drain", payload={"rabbits": rabbit, "reason": "x"})["success"]
    h.wait_for(lambda: not h.fluxion.rabbit_up(rabbit), what="its rabbit down in Fluxion")
    assert h.job(jobid).state == "RUN" and not h.job(jobid).fatal
    assert jobid in view(h, rabbit)["jobs"]
    h.finish(jobid)
    done = h.wait(jobid)
    assert not done.fatal, done


def test_drain_made_with_the_nnf_cli_shows(h: Harness) -> None:
    """The nnf CLI's writes (no flux-dws annotation) read as a drain, and
    dws.undrain undoes them."""
    custom, core = h.emulator.custom_objects_api(), h.emulator.core_v1_api()
    custom.patch_namespaced_custom_object(G, V, "default", "storages", R2, {
        "metadata": {"annotations": {"drain_date": "2026-11-26T04:00:00",
                                     "drain_reason": "none"}}})
    core.patch_node(R2, {"spec": {"taints": [
        {"key": "cray.nnf.node", "value": "true", "effect": "NoSchedule"},
        {"key": TAINT, "value": "true", "effect": "NoSchedule"},
        {"key": TAINT, "value": "true", "effect": "NoExecute"}]}})
    h.wait_for(lambda: not h.fluxion.rabbit_up(R2), what="R2 down in Fluxion")
    r = view(h, R2)
    assert r["why"] == "drained 2026-11-26T04:00:00: none"
    assert r["storage"]["drained_by"] is None  # the nnf CLI says not who
    assert h.ask("dws.undrain", payload={"rabbits": "kind-worker[2-3]"})["success"]
    h.wait_for(lambda: h.fluxion.rabbit_up(R2), what="R2 up again")


def test_drain_survives_a_service_restart(h: Harness) -> None:
    assert h.ask("dws.drain", payload={"rabbits": R3, "reason": "bad drive"})["success"]
    h.wait_for(lambda: not h.fluxion.rabbit_up(R3), what="R3 down")
    h.restart_service()
    h.wait_for(lambda: h.rabbits_now()["ready"], what="health ready again")
    assert view(h, R3)["up"] is False
    assert view(h, R3)["storage"]["drain_reason"] == "bad drive"
    assert not h.fluxion.rabbit_up(R3)


@pytest.mark.parametrize("topic,payload,words", [
    ("dws.drain", {"rabbits": "nosuch", "reason": "x"}, "unknown rabbit: nosuch"),
    ("dws.drain", {"rabbits": "kind-worker[2-3],nosuch[1-2]", "reason": "x"},
     "unknown rabbits: nosuch[1-2]"),
    ("dws.drain", {"rabbits": "kind-worker[3-", "reason": "x"}, "rabbits:"),
    ("dws.drain", {"rabbits": "", "reason": "x"}, "rabbits must be a hostlist"),
    ("dws.drain", {"rabbits": 3, "reason": "x"}, "rabbits must be a hostlist"),
    ("dws.drain", {"rabbits": R3}, "reason must be one line"),
    ("dws.drain", {"rabbits": R3, "reason": ""}, "reason must be one line"),
    ("dws.drain", {"rabbits": R3, "reason": "   "}, "reason must be one line"),
    ("dws.drain", {"rabbits": R3, "reason": "two\nlines"}, "reason must be one line"),
    ("dws.drain", {"rabbits": R3, "reason": "x" * 201}, "reason must be one line"),
    ("dws.undrain", {"rabbits": R3, "reason": "x"}, "takes no reason"),
])
def test_bad_requests_change_nothing(h: Harness, topic: str, payload: dict[str, Any],
                                     words: str) -> None:
    got = h.ask(topic, payload=payload)
    assert got.get("errnum") == errno.EINVAL, got
    assert words in got["error"] and "\n" not in got["error"], got
    assert "drain_reason" not in (storage(h, R3)["metadata"].get("annotations") or {})
    assert taints(h, R3) == [("cray.nnf.node", "NoSchedule")]


def test_only_the_owner_may_drain(h: Harness) -> None:
    guest = h.owner + 1
    for topic in ("dws.drain", "dws.undrain"):
        got = h.ask(topic, userid=guest, payload={"rabbits": R3, "reason": "x"})
        assert got["errnum"] == errno.EPERM, got
    assert taints(h, R3) == [("cray.nnf.node", "NoSchedule")]


def test_a_failed_write_is_reported(h: Harness) -> None:
    h.emulator.core_v1_api().delete_node(R3)
    got = h.ask("dws.drain", payload={"rabbits": R3, "reason": "x"})
    assert got["errnum"] == errno.EIO, got
    assert got["error"] == ("dws.drain: rabbit kind-worker3: reading its Kubernetes Node:"
                            " not found; its drain annotations were taken back"), got
    # the annotations written first were taken back, as the nnf CLI does
    assert "drain_reason" not in (storage(h, R3)["metadata"].get("annotations") or {})


# --- a failed taint write, a failed rollback -------------------------------------

FORBIDDEN = 'nodes "kind-worker3" is forbidden'
STORAGE_PATH = rf"/storages/{R3}(\?|$)"


def _drain_annotated(h: Harness) -> bool:
    return "drain_reason" in (storage(h, R3)["metadata"].get("annotations") or {})


def test_a_failed_taint_is_taken_back_and_named(h: Harness) -> None:
    h.emulator.api_fault(403, method="PATCH", path=rf"/nodes/{R3}(\?|$)", message=FORBIDDEN)
    got = h.ask("dws.drain", payload={"rabbits": R3, "reason": "x"})
    assert got["errnum"] == errno.EIO, got
    assert got["error"] == (f"dws.drain: rabbit {R3}: tainting its Kubernetes Node: {FORBIDDEN};"
                            " its drain annotations were taken back"), got
    assert not _drain_annotated(h)
    assert taints(h, R3) == [("cray.nnf.node", "NoSchedule")]


def test_a_failed_rollback_is_tried_again(h: Harness) -> None:
    h.emulator.api_fault(403, method="PATCH", path=rf"/nodes/{R3}(\?|$)", message=FORBIDDEN)
    # the annotations' write passes, the first rollback fails
    rollback = h.emulator.api_fault(409, method="PATCH", path=STORAGE_PATH, skip=1, count=1,
                                    message="the object has been modified")
    got = h.ask("dws.drain", payload={"rabbits": R3, "reason": "x"})
    assert rollback.hits == 1
    assert got["error"] == (f"dws.drain: rabbit {R3}: tainting its Kubernetes Node: {FORBIDDEN};"
                            " its drain annotations were taken back"), got
    assert not _drain_annotated(h)


def test_a_rollback_that_keeps_failing_names_the_half_drained_rabbit(h: Harness) -> None:
    h.emulator.api_fault(403, method="PATCH", path=rf"/nodes/{R3}(\?|$)", message=FORBIDDEN)
    rollback = h.emulator.api_fault(409, method="PATCH", path=STORAGE_PATH, skip=1, count=10,
                                    message="the object has been modified")
    got = h.ask("dws.drain", payload={"rabbits": R3, "reason": "bad drive"})
    assert rollback.hits == 3, rollback.hits
    assert got["errnum"] == errno.EIO, got
    assert got["error"] == (
        f"dws.drain: rabbit {R3}: tainting its Kubernetes Node: {FORBIDDEN};"
        " taking its drain annotations back failed 3 times (the object has been modified):"
        f" its Storage says drained, its Node is not tainted; 'flux dws undrain {R3}'"
        " clears them"), got
    assert any(lvl == "err" and "its Node is not tainted" in m for lvl, m in h.link.logs)
    assert _drain_annotated(h) and taints(h, R3) == [("cray.nnf.node", "NoSchedule")]
    h.emulator.clear_api_faults()
    assert h.ask("dws.undrain", payload={"rabbits": R3})["success"]
    assert not _drain_annotated(h)
