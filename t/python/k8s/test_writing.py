"""The writer pool against the emulator: order per object, results, invalid
actions, retries (429, 5xx, dropped connections, Retry-After, attempts and
deadline), the oldest pending write, stop (prompt, draining, dropping) and
the writes barrier."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from flux_dws.k8s import crd

from .conftest import STORAGE, G, k8s, storage, store_create

FAST = {"retry_initial": 0.01, "retry_max": 0.05}


# --- order and results --------------------------------------------------------


def test_writes_to_one_object_land_in_order(emulator, layer, events):
    names = [f"o{n}" for n in range(4)]
    for name in names:
        store_create(emulator, name)
    for i in range(200):
        for name in names:
            layer.submit(k8s("patch", name=name, token=f"{name}/{i}",
                             body={"metadata": {"annotations": {"n": str(i)}}}))
    for name in names:
        events.result(f"{name}/199")
    results = events.of("k8s-result")
    assert len(results) == 800 and all(r["ok"] for r in results)
    for name in names:
        mine = [r for r in results if r["token"].startswith(f"{name}/")]
        assert [r["token"] for r in mine] == [f"{name}/{i}" for i in range(200)]
        assert [r["object"]["metadata"]["annotations"]["n"] for r in mine] == \
            [str(i) for i in range(200)]
        obj = emulator.store.get(STORAGE, "default", name)
        assert obj["metadata"]["annotations"] == {"n": "199"}
    assert layer.pending() == 0


def test_create_then_patch_share_a_worker(emulator, make_layer, events):
    layer = make_layer({"writers": 8})
    for n in range(50):
        layer.submit(k8s("create", body=storage(f"s{n}")))          # name only in the body
        layer.submit(k8s("patch", name=f"s{n}", token=f"p{n}",
                         body={"metadata": {"labels": {"ok": "1"}}}))
    for n in range(50):
        assert events.result(f"p{n}")["ok"], events.result(f"p{n}")


def test_delete_of_a_missing_object_is_ok_404(emulator, layer, events):
    layer.submit(k8s("delete", name="nothing", token="d"))
    r = events.result("d")
    assert r == {"type": "k8s-result", "token": "d", "ok": True, "code": 404,
                 "message": 'storages.dataworkflowservices.github.io "nothing" not found',
                 "object": None}


def test_invalid_actions(emulator, make_layer, events, monkeypatch):
    monkeypatch.setattr(crd, "probe_nnf_version", _no_nnf)
    layer = make_layer()
    assert "NnfDataMovement" not in layer.kinds and "Workflow" in layer.kinds
    layer.submit(k8s("frobnicate", token="op"))
    layer.submit(k8s("get", "NnfDataMovement", name="x", token="nnf"))
    layer.submit(k8s("get", "Bogus", name="x", token="kind"))
    layer.submit(k8s("patch", name="x", body=[], token="body"))
    layer.submit(k8s("get", token="noname"))
    layer.submit(k8s("get", name="x", namespace=None, token="nons"))
    for token, text in [("op", "unknown op"), ("nnf", "not served"), ("kind", "not served"),
                        ("body", "needs an object"), ("noname", "needs a name"),
                        ("nons", "needs a namespace")]:
        r = events.result(token)
        assert (r["ok"], r["code"], r["object"]) == (False, 0, None)
        assert r["message"].startswith("invalid k8s action: ") and text in r["message"], r
    layer.start_watches(["Storage", "NnfDataMovement"])  # skipped with a warning
    assert list(layer.watches) == ["Storage"]


def _no_nnf(api, preferred=None):
    raise crd.CRDVersionError("no served version of nnf.cray.hpe.com")


def test_failure_without_token_is_logged(emulator, layer, events, caplog):
    caplog.set_level(logging.WARNING, "flux_dws.test.kube")
    layer.submit(k8s("patch", name="missing", body={"metadata": {"labels": {"a": "b"}}}))
    layer.submit(k8s("get", name="missing", token="after"))  # same object: runs after
    events.result("after")
    assert any("patch Storage default/missing failed: 404" in r.getMessage()
               for r in caplog.records)
    assert events.of("k8s-result") == [events.result("after")]


# --- retries ------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_are_retried(emulator, make_layer, events, status):
    layer = make_layer(FAST)
    store_create(emulator, "s")
    emulator.api_fault(status, method="PATCH", path="/storages/s", count=3,
                       retry_after=0 if status == 429 else None)
    layer.submit(k8s("patch", name="s", body={"metadata": {"labels": {"a": "b"}}}, token="t"))
    r = events.result("t")
    assert (r["ok"], r["code"]) == (True, 200)
    assert emulator.api_faults.failed == 3 and layer.pool.retries == 3


def test_dropped_connections_are_retried(emulator, make_layer, events):
    layer = make_layer(FAST)
    emulator.api_fault(method="POST", path="/storages", count=2, drop=True)
    layer.submit(k8s("create", body=storage("s"), token="t"))
    r = events.result("t")
    assert (r["ok"], r["code"]) == (True, 201)
    assert emulator.api_faults.failed == 2


def test_retry_after_is_honoured(emulator, make_layer, events):
    layer = make_layer(FAST)
    emulator.api_fault(429, method="GET", path="/storages/s", retry_after=1)
    store_create(emulator, "s")
    start = time.monotonic()
    layer.submit(k8s("get", name="s", token="t"))
    assert events.result("t")["ok"]
    assert time.monotonic() - start >= 1.0  # FAST alone would have retried after 0.01 s


def test_retries_exhausted(emulator, make_layer, events):
    layer = make_layer({**FAST, "retry_attempts": 3})
    store_create(emulator, "s")
    emulator.api_fault(503, method="GET", path="/storages/s", count=100, message="busy")
    layer.submit(k8s("get", name="s", token="t"))
    r = events.result("t")
    assert r == {"type": "k8s-result", "token": "t", "ok": False, "code": 503,
                 "message": "busy", "object": None}
    assert emulator.api_faults.failed == 3
    emulator.clear_api_faults()
    emulator.api_fault(method="GET", path="/storages/s", count=100, drop=True)
    layer.submit(k8s("get", name="s", token="drop"))
    r = events.result("drop")
    assert (r["ok"], r["code"]) == (False, 0) and r["message"], r


def test_retry_deadline(emulator, make_layer, events):
    layer = make_layer({"retry_initial": 0.2, "retry_deadline": 0.5, "retry_attempts": 100})
    emulator.api_fault(500, method="GET", path="/storages/s", count=100)
    start = time.monotonic()
    layer.submit(k8s("get", name="s", token="t"))
    r = events.result("t")
    assert (r["ok"], r["code"]) == (False, 500)
    assert time.monotonic() - start < 2.0
    assert emulator.api_faults.failed == 2  # waits 0.2 then 0.4: past the deadline


def test_a_pod_log_read_gives_up_at_its_own_deadline(emulator, make_layer, events):
    """A log read (a kubelet the API server cannot reach: 500 each time)
    is given up at log_retry_deadline, not at retry_deadline: Teardown
    waits for it."""
    layer = make_layer({"retry_initial": 0.2, "retry_deadline": 60.0,
                        "log_retry_deadline": 0.5, "retry_attempts": 100})
    emulator.api_fault(500, method="GET", path="/pods/p/log", count=100)
    layer.submit(k8s("log", "Pod", name="p", container="a", token="t"))
    r = events.result("t")
    assert (r["ok"], r["code"]) == (False, 500)
    assert emulator.api_faults.failed == 2  # waits 0.2 then 0.4: past 0.5


# --- load, stop and the writes barrier ----------------------------------------


def hold_storage_writes(emulator):
    """Hold every Storage write in the emulator's admission until ``gate``
    is set (10 s at most); ``entered`` is set once a write is held."""
    gate = threading.Event()
    entered = threading.Event()

    def hold(op, old, new):
        entered.set()
        gate.wait(10)
        return new

    emulator.store.admission[(G, "storages")] = hold
    return gate, entered


def test_oldest_pending_and_sent(emulator, make_layer, events):
    """The load figures of ``flux dws status``: the age of the oldest write
    not carried out (the one being carried out counts), and ``sent`` called
    as a write goes out, before its answer."""
    layer = make_layer({"writers": 1})
    gate, entered = hold_storage_writes(emulator)
    assert layer.oldest_pending() is None
    sent: list[str] = []
    layer.submit(k8s("create", body=storage("held"), token="t1"), lambda: sent.append("t1"))
    layer.submit(k8s("create", body=storage("queued"), token="t2"), lambda: sent.append("t2"))
    assert entered.wait(10)
    assert sent == ["t1"]  # the first is out, the second still queued
    first = layer.oldest_pending()
    assert first is not None and first >= 0.0 and layer.pending() == 2
    assert events.of("k8s-result") == []
    gate.set()
    assert events.result("t1")["ok"] and events.result("t2")["ok"]
    flushed = threading.Event()
    layer.writes_barrier(flushed.set)
    assert flushed.wait(10)
    assert sent == ["t1", "t2"]
    assert layer.pending() == 0 and layer.oldest_pending() is None
    layer.stop()


def test_stop_during_a_retry_wait(emulator, make_layer, events):
    layer = make_layer({"retry_initial": 30.0, "retry_max": 30.0})
    emulator.api_fault(503, method="GET", path="/storages/s", count=10)
    layer.submit(k8s("get", name="s", token="t"))
    assert emulator.api_faults.wait(lambda f: f.failed == 1)
    start = time.monotonic()
    layer.stop()
    assert time.monotonic() - start < 1.0
    assert events.of("k8s-result") == []  # not posted once stop began


def test_stop_drains_when_asked(emulator, make_layer, events):
    layer = make_layer()
    gate = threading.Event()
    emulator.store.admission[(G, "storages")] = lambda op, old, new: (gate.wait(10), new)[1]
    for n in range(20):
        layer.submit(k8s("create", body=storage(f"s{n}"), token=f"t{n}"))
    assert layer.pending() > 0
    gate.set()
    layer.stop(drain=True, timeout=10)
    assert sorted(r["token"] for r in events.of("k8s-result")) == sorted(
        f"t{n}" for n in range(20))
    assert layer.pending() == 0


def test_stop_drops_queued_actions(emulator, make_layer, events):
    layer = make_layer({"writers": 1})
    gate, entered = hold_storage_writes(emulator)
    for n in range(20):
        layer.submit(k8s("create", body=storage(f"s{n}"), token=f"t{n}"))
    assert entered.wait(10)
    joining = threading.Event()
    real_join = layer.pool.join

    def join(timeout=None):
        joining.set()  # stop() has signalled everything and now waits
        return real_join(timeout)

    layer.pool.join = join
    stopper = threading.Thread(target=layer.stop, kwargs={"timeout": 10})
    stopper.start()
    assert joining.wait(10)
    gate.set()
    stopper.join(10)
    assert not stopper.is_alive()
    assert events.of("k8s-result") == [] and layer.pending() == 0
    assert len(emulator.store.list_objects(STORAGE, "default")) == 1  # only the one in flight


def test_writes_barrier_waits_for_every_result(emulator, layer, events):
    for n in range(8):
        store_create(emulator, f"w{n}")
    for n in range(8):
        for k in range(3):
            layer.submit(k8s("patch", name=f"w{n}", token=f"p{n}.{k}",
                             body={"metadata": {"labels": {"k": str(k)}}}))
    results: list[int] = []
    done = threading.Event()

    def cb():
        results.append(len(events.of("k8s-result")))
        done.set()

    layer.writes_barrier(cb)
    assert done.wait(10)
    assert results == [24]
    assert layer.pending() == 0
