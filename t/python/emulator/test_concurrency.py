"""The emulator's controllers on several worker threads (emulator.workqueue):
one key's reconciles never overlap, different keys' run at once, a failing
reconcile stops nothing else, shutdown is bounded, and the writes a
reconcile fans out all happen, their first error raised."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator

import pytest
from t.python.emulator.conftest import G, V, eventually, finish, new_workflow, to, wait

from flux_dws.apiserver.store import ApiError
from flux_dws.emulator import Emulator
from flux_dws.emulator.driver import RESOURCE
from flux_dws.emulator.workqueue import FanOut, Workers, WorkQueue

WAIT = 10.0  # seconds any one wait of these tests may take


class Recorder:
    """fn for Workers: counts each key's runs and any overlap of one key's;
    a key in ``hold`` waits (bounded) until released."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: Counter[str] = Counter()
        self.runs: Counter[str] = Counter()
        self.overlaps: list[str] = []
        self.entered: dict[str, threading.Event] = {}
        self.hold: dict[str, threading.Event] = {}

    def entered_event(self, key: str) -> threading.Event:
        with self.lock:
            return self.entered.setdefault(key, threading.Event())

    def __call__(self, key: str) -> None:
        with self.lock:
            self.running[key] += 1
            if self.running[key] > 1:
                self.overlaps.append(key)
            self.runs[key] += 1
        self.entered_event(key).set()
        try:
            held = self.hold.get(key)
            if held is not None:
                assert held.wait(WAIT), f"{key} never released"
        finally:
            with self.lock:
                self.running[key] -= 1


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def workers(recorder: Recorder) -> Iterator[Workers[str]]:
    w: Workers[str] = Workers(recorder, 4, name="test-workers").start()
    yield w
    for ev in recorder.hold.values():
        ev.set()
    assert w.stop(WAIT)


def test_queue_hands_a_key_to_one_taker_and_again_after_done():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("a")  # queued once
    assert q.queued() == 1
    assert q.get() == "a"
    q.add("a")  # asked for again while it runs: not handed out meanwhile
    assert (q.queued(), q.processing()) == (0, 1)
    q.add("b")
    assert q.get() == "b"
    q.done("b")
    q.done("a")  # now it is queued again
    assert q.queued() == 1
    assert q.get() == "a"
    q.done("a")
    assert (q.queued(), q.processing()) == (0, 0)


def test_one_keys_reconciles_never_overlap_others_run_meanwhile(workers, recorder):
    recorder.hold["a"] = threading.Event()
    workers.add("a")
    assert recorder.entered_event("a").wait(WAIT)
    recorder.entered["a"] = threading.Event()  # the second run's
    workers.add("a")   # while a runs: waits for it, though three workers are idle
    workers.add("b")   # another key runs at once
    assert recorder.entered_event("b").wait(WAIT)
    assert workers.queue.queued() == 0 and recorder.runs["a"] == 1
    recorder.hold["a"].set()
    assert recorder.entered_event("a").wait(WAIT)
    eventually(lambda: recorder.runs["a"] == 2, WAIT, "a's second reconcile")
    assert recorder.overlaps == []


def test_many_keys_many_requests_no_overlap_each_request_seen(workers, recorder):
    """Each add after a key's run began is followed by another run of it."""
    keys = [f"k{i}" for i in range(20)]
    version: Counter[str] = Counter()
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def fn(key: str) -> None:
        with lock:
            seen[key] = version[key]
        recorder(key)

    workers.fn = fn

    def adder(part: list[str]) -> None:
        for _ in range(50):
            for k in part:
                with lock:
                    version[k] += 1
                workers.add(k)

    threads = [threading.Thread(target=adder, args=(keys[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    eventually(lambda: workers.queue.queued() == 0 and workers.queue.processing() == 0
               and all(seen.get(k) == version[k] for k in keys), WAIT,
               "every key reconciled after its last request")
    assert recorder.overlaps == []


def test_an_error_in_one_reconcile_stops_no_worker(caplog):
    done = threading.Event()
    ran: list[str] = []

    def fn(key: str) -> None:
        ran.append(key)
        if key == "bad":
            raise RuntimeError("a bug in one reconcile")
        if key == "good":
            done.set()

    w: Workers[str] = Workers(fn, 1).start()  # one worker: the same one goes on
    try:
        w.add("bad")
        w.add("good")
        assert done.wait(WAIT)
        assert ran == ["bad", "good"]
        assert "a bug in one reconcile" in caplog.text
    finally:
        assert w.stop(WAIT)


def test_stop_is_bounded_with_a_reconcile_stuck_and_drops_the_queue(recorder):
    recorder.hold["stuck"] = threading.Event()
    w: Workers[str] = Workers(recorder, 1).start()
    w.add("stuck")
    assert recorder.entered_event("stuck").wait(WAIT)
    w.add("later")
    assert w.stop(0.05) is False   # gave up waiting for the stuck reconcile
    recorder.hold["stuck"].set()
    assert w.stop(WAIT) is True    # it ended, and took nothing else
    assert recorder.runs == Counter(stuck=1)
    w.add("after")                 # ignored once stopped
    assert w.queue.queued() == 0


def test_fan_out_keeps_order_runs_at_once_and_raises_the_first_error():
    fan = FanOut(4)
    try:
        barrier = threading.Barrier(4, timeout=WAIT)   # only passes if all four run at once

        def meet(i: int) -> int:
            barrier.wait()
            return i * i

        assert fan.map(meet, range(4)) == [0, 1, 4, 9]
        finished: list[int] = []

        def fail_odd(i: int) -> int:
            if i % 2:
                raise ValueError(f"item {i}")
            finished.append(i)
            return i

        with pytest.raises(ValueError, match="item 1"):
            fan.map(fail_odd, range(8))
        assert sorted(finished) == [0, 2, 4, 6]  # the others ran all the same
    finally:
        fan.stop()


def test_fan_out_of_one_runs_in_the_callers_thread_in_order():
    fan = FanOut(1)
    me = threading.current_thread()
    assert fan.map(lambda i: (i, threading.current_thread() is me), range(3)) == [
        (0, True), (1, True), (2, True)]


# --- the controllers themselves on four workers and four fan-out threads ---------

@pytest.fixture
def kind4() -> Iterator[Emulator]:
    with Emulator(system="kind", latency="zero", workers=4, fanout=4) as emu:
        yield emu


def test_a_held_workflow_holds_no_other(kind4, monkeypatch):
    """One Workflow's reconcile held: another goes through Proposal
    meanwhile, and the held one's next reconciles wait for it."""
    ctl = kind4.controllers
    api = kind4.custom_objects_api()
    release = threading.Event()
    entered = threading.Event()
    lock = threading.Lock()
    running: Counter[str] = Counter()
    overlaps: list[str] = []
    real = ctl.reconcile

    def reconcile(ns: str, name: str) -> None:
        with lock:
            running[name] += 1
            if running[name] > 1:
                overlaps.append(name)
        try:
            if name == "held" and not release.is_set():
                entered.set()
                assert release.wait(WAIT)
            real(ns, name)
        finally:
            with lock:
                running[name] -= 1

    monkeypatch.setattr(ctl, "reconcile", reconcile)
    new_workflow(api, "held", [])
    assert entered.wait(WAIT)
    # changes to the held one queue it again; it does not run twice at once
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "held",
                                       {"metadata": {"labels": {"poke": "1"}}})
    new_workflow(api, "free", [])
    wait(api, "free", "Proposal")
    wf = api.get_namespaced_custom_object(G, V, "default", "workflows", "held")
    assert not (wf.get("status") or {}).get("ready")
    release.set()
    wait(api, "held", "Proposal")
    assert overlaps == []


def test_a_failing_reconcile_is_tried_again_while_others_go_on(kind4, monkeypatch):
    ctl = kind4.controllers
    api = kind4.custom_objects_api()
    calls: Counter[str] = Counter()
    real = ctl.reconcile

    def reconcile(ns: str, name: str) -> None:
        calls[name] += 1
        if name == "flaky" and calls[name] == 1:
            raise ConnectionResetError("the API server went away mid-request")
        real(ns, name)

    monkeypatch.setattr(ctl, "reconcile", reconcile)
    new_workflow(api, "flaky", [])
    new_workflow(api, "steady", [])
    wait(api, "steady", "Proposal")
    wait(api, "flaky", "Proposal")   # requeued after RETRY_AFTER, not dropped
    assert calls["flaky"] >= 2


def test_clientmounts_of_many_computes_fanned_out(kind4):
    """A PreRun on four computes on the fan-out: every ClientMount made and
    mounted, and every one removed at Teardown."""
    api = kind4.custom_objects_api()
    to(api, "wide", ["#DW jobdw type=xfs capacity=10GiB name=scratch"], "PreRun")
    sel = "dataworkflowservices.github.io/workflow.name=wide"
    cms = api.list_cluster_custom_object(G, V, "clientmounts", label_selector=sel)["items"]
    assert sorted(c["metadata"]["namespace"] for c in cms) == [
        "compute-01", "compute-02", "compute-03", "compute-04"]
    assert all(c["status"]["allReady"] for c in cms)
    finish(api, "wide")
    assert api.list_cluster_custom_object(G, V, "clientmounts", label_selector=sel)[
        "items"] == []


def test_a_consumer_reference_written_on_a_stale_read_is_refused(kind4):
    """Two persistentdw Setups at once each add their reference to the
    same PersistentStorageInstance: a write on a version another has
    changed meanwhile gets 409 (the reconcile runs again), never losing
    the other's reference."""
    api = kind4.custom_objects_api()
    to(api, "mk", ["#DW create_persistent type=xfs capacity=10GiB name=keep"], "Teardown",
       hosts="compute-01", computes=False)
    finish(api, "mk")
    ctl = kind4.controllers
    store = kind4.store
    psi = store.get(RESOURCE["psi"], "default", "keep")
    storage = ctl.drivers["persistentdw"]

    class Stale:
        """The store, but the instance read as it was before another's write."""

        objects = store.objects

        def get(self, r, ns, name):
            return psi if r is RESOURCE["psi"] else store.get(r, ns, name)

        def __getattr__(self, attr):
            return getattr(store, attr)

    def wf(name: str) -> dict:
        return {"metadata": {"name": name, "namespace": "default"}}

    storage._consume(wf("one"), 0, "keep", add=True)   # changes the instance
    real_store = ctl.store
    ctl.store = Stale()
    try:
        with pytest.raises(ApiError) as exc:
            storage._consume(wf("two"), 0, "keep", add=True)
        assert exc.value.code == 409
    finally:
        ctl.store = real_store
    storage._consume(wf("two"), 0, "keep", add=True)   # the reconcile again
    refs = store.get(RESOURCE["psi"], "default", "keep")["spec"]["consumerReferences"]
    assert [r["name"] for r in refs] == ["one-0", "two-0"]
