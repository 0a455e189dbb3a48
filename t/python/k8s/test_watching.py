"""The watches against the emulator (sync, events, bookmarks, 410, dropped
streams, several kinds, barriers) and on canned streams: the watch's own
line reader, the object slice of a watch line, an ERROR event."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from flux_dws.apiserver import api_resources as res
from flux_dws.jsondata import DecodedObject
from flux_dws.k8s.kinds import Kinds
from flux_dws.k8s.settings import KubeSettings
from flux_dws.k8s.watching import (
    RETRYING,
    WATCHING,
    KindWatch,
    WatchSpec,
    _event_object,
    _watch_lines,
)

from .conftest import (
    STORAGE,
    WAIT,
    WF,
    G,
    LogSignal,
    Recorder,
    V,
    k8s,
    storage,
    store_create,
    watch_connected,
)

WORKFLOW = res.BY_KIND[(G, "Workflow")]


def store_state(emu):
    """name -> resourceVersion of the emulator's Storages."""
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
            for o in emu.store.list_objects(STORAGE, "default")}


class Mirror:
    """What the engine would know of one kind: the last sync plus the events since."""

    def __init__(self, events: Recorder, kind: str) -> None:
        self.events, self.kind = events, kind

    def state(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for e in list(self.events.events):
            if e.get("kind") != self.kind:
                continue
            if e["type"] == "sync":
                out = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                       for o in e["objects"]}
            elif e["type"] == "watch":
                md = e["object"]["metadata"]
                if e["event"] == "DELETED":
                    out.pop(md["name"], None)
                else:
                    out[md["name"]] = md["resourceVersion"]
        return out


# --- watches ------------------------------------------------------------------


def test_sync_then_watch_events(emulator, layer, events):
    store_create(emulator, "s1")
    store_create(emulator, "s2")
    layer.start_watches(["Storage"])
    i, sync = events.sync("Storage")
    assert sync == {"type": "sync", "kind": "Storage", "objects": sync["objects"]}
    assert sorted(o["metadata"]["name"] for o in sync["objects"]) == ["s1", "s2"]
    watch_connected(emulator)

    layer.submit(k8s("create", body=storage("s3"), token="c"))
    layer.submit(k8s("patch", name="s3", body={"metadata": {"labels": {"x": "1"}}},
                     token="p"))
    layer.submit(k8s("delete", name="s3", token="d"))
    assert events.result("c")["ok"] and events.result("p")["ok"]
    assert events.result("d") == {"type": "k8s-result", "token": "d", "ok": True,
                                  "code": 200, "message": "", "object": None}
    events.wait_for(lambda e: e["type"] == "watch" and e["event"] == "DELETED")
    seen = [(e["event"], e["object"]["metadata"]["name"]) for e in events.of("watch", i)]
    assert seen == [("ADDED", "s3"), ("MODIFIED", "s3"), ("DELETED", "s3")]
    for e in events.of("watch", i):
        assert set(e) == {"type", "kind", "event", "object"} and e["kind"] == "Storage"
        assert isinstance(e["object"], dict)  # raw JSON, not a client model
    modified = events.of("watch", i)[1]["object"]
    assert modified["metadata"]["labels"] == {"x": "1"}
    assert len(events.of("sync")) == 1


def test_watch_namespace_and_label_selector(emulator, layer, events):
    store_create(emulator, "a", role="x")
    store_create(emulator, "b", role="y")
    emulator.store.create(res.BY_KIND[("", "Namespace")], "", {"metadata": {"name": "other"}})
    emulator.store.create(STORAGE, "other", storage("c", role="x"))
    layer.start_watches([WatchSpec("Storage", namespace="default", label_selector="role=x")])
    _, sync = events.sync("Storage")
    assert [o["metadata"]["name"] for o in sync["objects"]] == ["a"]
    watch_connected(emulator)
    emulator.store.create(STORAGE, "other", storage("d", role="x"))
    store_create(emulator, "e", role="y")
    store_create(emulator, "f", role="x")
    _, ev = events.wait_for(lambda e: e["type"] == "watch")
    assert ev["object"]["metadata"]["name"] == "f"
    assert len(events.of("watch")) == 1


def test_bookmarks_move_the_resource_version_silently(emulator, make_layer, events):
    log = logging.getLogger("flux_dws.test.kube.bookmarks")
    log.setLevel(logging.DEBUG)
    signal = LogSignal("bookmark")
    log.addHandler(signal)
    try:
        layer = make_layer(log=log)
        layer.start_watches(["Storage"])
        events.sync("Storage")
        # other kinds move the global resourceVersion; a Storage bookmark
        # carries it (one: as from the watch cache, a bookmark only says news)
        emulator.store.create(WORKFLOW, "default", {
            "metadata": {"name": "w"}, "spec": {"desiredState": "Proposal", "dwDirectives": [],
                                                 "wlmID": "flux", "jobID": "1", "userID": 1,
                                                 "groupID": 1}})
        want = str(emulator.store.rv)
        assert signal.wait(1), "no bookmarks"
        # the watch logs a bookmark, then takes its resourceVersion (a
        # bookmark of an earlier one may come first)
        deadline = time.monotonic() + WAIT
        while layer.watches["Storage"].resource_version != want \
                and time.monotonic() < deadline:
            signal.wait(signal.count + 1, timeout=0.05)
        assert layer.watches["Storage"].resource_version == want
        assert [e["type"] for e in events.events] == ["sync"]
    finally:
        log.removeHandler(signal)


def test_410_relists_without_replay(emulator, layer, events):
    store_create(emulator, "s1")
    store_create(emulator, "s2")
    layer.start_watches(["Storage"])
    i1, _ = events.sync("Storage")
    watch_connected(emulator)
    store_create(emulator, "s3")
    events.wait_for(lambda e: e["type"] == "watch", i1)

    emulator.expire_watches(1)
    emulator.drop_watches()
    i2, sync2 = events.sync("Storage", i1 + 1)
    assert emulator.api_faults.expire == 0  # the reconnect got its 410
    assert {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
            for o in sync2["objects"]} == store_state(emulator)
    assert sync2["objects"] == emulator.store.list_objects(STORAGE, "default")
    watch_connected(emulator)
    store_create(emulator, "s4")
    j, ev = events.wait_for(lambda e: e["type"] == "watch", i2)
    assert ev["object"]["metadata"]["name"] == "s4"
    assert j == i2 + 1  # nothing replayed between the new sync and s4
    assert layer.watches["Storage"].syncs == 2


def test_410_after_compaction(emulator, layer, events):
    layer.start_watches(["Storage"])
    i1, _ = events.sync("Storage")
    watch_connected(emulator)
    emulator.api_fault(503, method="GET", path=r"storages\?.*watch=", count=1000)
    emulator.drop_watches()
    assert emulator.api_faults.wait(lambda f: f.failed >= 1)  # it tried, and failed
    store_create(emulator, "late")
    emulator.store.compact()  # the watch's resourceVersion is now too old
    emulator.clear_api_faults()
    _, sync2 = events.sync("Storage", i1 + 1)
    assert [o["metadata"]["name"] for o in sync2["objects"]] == ["late"]
    assert events.of("watch") == []


def test_dropped_watch_reconnects_without_losing_events(emulator, layer, events):
    for n in range(5):
        store_create(emulator, f"old{n}")
    layer.start_watches(["Storage"])
    events.sync("Storage")
    watch_connected(emulator)
    # hold the reconnect off while the objects change
    emulator.api_fault(503, method="GET", path=r"storages\?.*watch=", count=1000)
    assert emulator.drop_watches() == 1
    assert emulator.api_faults.wait(lambda f: f.failed >= 1)
    api = emulator.custom_objects_api()
    for n in range(20):
        api.create_namespaced_custom_object(G, V, "default", "storages", storage(f"new{n}"))
    for n in range(0, 20, 3):
        api.patch_namespaced_custom_object(G, V, "default", "storages", f"new{n}",
                                           {"metadata": {"labels": {"p": "1"}}})
    for n in range(3):
        api.delete_namespaced_custom_object(G, V, "default", "storages", f"old{n}")
    last = api.patch_namespaced_custom_object(G, V, "default", "storages", "old4",
                                              {"metadata": {"labels": {"last": "1"}}})
    emulator.clear_api_faults()
    rv = last["metadata"]["resourceVersion"]
    events.wait_for(lambda e: e["type"] == "watch"
                    and e["object"]["metadata"]["resourceVersion"] == rv)
    assert Mirror(events, "Storage").state() == store_state(emulator)
    assert len(events.of("sync")) == 1  # reconnected from its resourceVersion, no re-list
    assert layer.watches["Storage"].reconnects >= 1


def _moving(obj: Any) -> bool:
    """The tests' rule of an object that must still change: label moving=yes."""
    return (obj.get("metadata", {}).get("labels") or {}).get("moving") == "yes"


def _s1_labels(sync: dict[str, Any]) -> dict[str, str]:
    return next(o["metadata"].get("labels") or {} for o in sync["objects"]
                if o["metadata"]["name"] == "s1")


def test_a_deaf_watch_with_objects_to_change_is_listed_again(emulator, make_layer, events):
    """A stream that is open but delivers nothing (its events lost on the
    way) is healed by the watchdog: silent past watch_silence while an
    object must still change, the watch lists again and the change comes
    in that list."""
    layer = make_layer({"watch_silence": 0.3})
    store_create(emulator, "s1", moving="yes")
    layer.start_watches([WatchSpec("Storage", unsettled=_moving)])
    events.sync("Storage")
    watch_connected(emulator)
    emulator.mute_watches()
    api = emulator.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "s1",
                                       {"metadata": {"labels": {"moving": "no"}}})
    assert emulator.api_faults.wait(lambda f: f.muted_events >= 1), "the change was not lost"
    events.wait_for(lambda e: e["type"] == "sync"
                    and _s1_labels(e) == {"moving": "no"})
    assert not events.of("watch")  # the muted stream said nothing: the list healed it
    w = layer.watches["Storage"]
    assert w.heals >= 1 and w.syncs == 1 + w.heals
    view = w.view(time.monotonic())
    assert view["heals"] == w.heals and view["unsettled"] == 0
    assert "silent for" in view["last_error"] and "still to change" in view["last_error"]
    # settled now: silence is no longer a reason to list
    assert not w.check_silence(time.monotonic() + 3600)


def test_a_silent_watch_is_listed_again_only_while_something_must_change(
        emulator, make_layer, events):
    layer = make_layer({"watch_silence": 3600})  # the watchdog thread stays out of it
    store_create(emulator, "s1")
    layer.start_watches([WatchSpec("Storage", unsettled=_moving)])
    events.sync("Storage")
    watch_connected(emulator)
    w = layer.watches["Storage"]
    now = time.monotonic()
    assert w.view(now)["state"] == WATCHING and w.view(now)["unsettled"] == 0
    assert not w.check_silence(now + 7200)  # silent, but nothing must change
    api = emulator.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "s1",
                                       {"metadata": {"labels": {"moving": "yes"}}})
    events.wait_for(lambda e: e["type"] == "watch")
    assert w.view(time.monotonic())["unsettled"] == 1
    assert not w.check_silence(time.monotonic() + 60)  # not silent long enough
    assert w.check_silence(time.monotonic() + 7200)
    assert not w.check_silence(time.monotonic() + 7200)  # one heal at a time
    i, sync = events.sync("Storage", 1)
    assert _s1_labels(sync) == {"moving": "yes"} and w.heals == 1
    # a watch without the rule is never healed for silence
    layer2 = make_layer({"watch_silence": 3600})
    layer2.start_watches(["Storage"])
    events.wait_for(lambda e: e["type"] == "sync", i + 1)
    assert not layer2.watches["Storage"].check_silence(time.monotonic() + 7200)
    states = layer.watch_states()
    assert [s["kind"] for s in states] == ["Storage"]
    assert set(states[0]) == {"kind", "state", "resource_version", "heard_s", "unsettled",
                              "lists", "reconnects", "heals", "last_error"}


def test_a_watch_that_cannot_connect_says_why(emulator, make_layer, events):
    log = logging.getLogger("flux_dws.test.kube.retrying")
    signal = LogSignal("retrying in")  # logged once its state says so
    log.addHandler(signal)
    try:
        layer = make_layer({"watch_backoff_initial": 3600}, log=log)
        emulator.api_fault(500, method="GET", path="storages", count=1)
        layer.start_watches(["Storage"])
        assert signal.wait(1), "the watch did not retry"
        view = layer.watches["Storage"].view(time.monotonic())
        assert view["state"] == RETRYING and view["last_error"].startswith("500 ")
    finally:
        log.removeHandler(signal)


def test_watch_errors_back_off_and_recover(emulator, make_layer, events):
    layer = make_layer({"watch_backoff_initial": 0.01})
    emulator.api_fault(500, method="GET", path="storages", count=3)  # the list fails 3 times
    layer.start_watches(["Storage"])
    _, sync = events.sync("Storage")
    assert sync["objects"] == []
    assert emulator.api_faults.failed == 3
    watch_connected(emulator)
    store_create(emulator, "s1")
    events.wait_for(lambda e: e["type"] == "watch")


def test_several_kinds(emulator, layer, events):
    layer.start_watches(["Workflow", "Storage", "Secret", "NnfDataMovement", "Computes"])
    for kind in ("Workflow", "Storage", "Secret", "NnfDataMovement", "Computes"):
        events.sync(kind)
    watch_connected(emulator, 5)
    layer.submit(k8s("create", "Secret", body={"metadata": {"name": "sec"},
                                               "data": {"k": "dg=="}}, token="s"))
    assert events.result("s")["object"]["data"] == {"k": "dg=="}
    _, ev = events.wait_for(lambda e: e["type"] == "watch")
    assert ev["kind"] == "Secret" and ev["object"]["metadata"]["name"] == "sec"
    with pytest.raises(ValueError, match="watched twice"):
        layer.start_watches(["Storage"])
    with pytest.raises(ValueError, match="unknown kind"):
        layer.start_watches(["Pods"])


# --- barriers (dws.watch_test) ------------------------------------------------


def test_watch_barrier_waits_for_what_the_server_had(emulator, layer, events):
    store_create(emulator, "old")
    store_create(emulator, "doomed")
    layer.start_watches(["Storage", "Workflow"])
    events.sync("Storage")
    events.sync("Workflow")
    for n in range(30):
        store_create(emulator, f"s{n}")
    emulator.store.patch(STORAGE, "default", "old", "merge",
                         {"metadata": {"labels": {"x": "1"}}})
    emulator.store.delete(STORAGE, "default", "doomed")
    seen: list[list[dict]] = []
    done = threading.Event()

    def cb(error):
        assert error is None
        with events.cond:
            seen.append(list(events.events))
        done.set()

    layer.watch_barrier(cb)
    assert done.wait(10)
    got = seen[0]
    added = {e["object"]["metadata"]["name"] for e in got
             if e["type"] == "watch" and e["event"] == "ADDED"}
    assert added >= {f"s{n}" for n in range(30)}
    assert any(e["type"] == "watch" and e["event"] == "MODIFIED"
               and e["object"]["metadata"]["name"] == "old" for e in got)
    assert any(e["type"] == "watch" and e["event"] == "DELETED"
               and e["object"]["metadata"]["name"] == "doomed" for e in got)


def test_watch_barrier_caught_up_at_once_and_a_deletion_only(emulator, layer, events):
    store_create(emulator, "a")
    layer.start_watches(["Storage"])
    events.sync("Storage")
    answers: list = []
    done = threading.Event()
    layer.watch_barrier(lambda e: (answers.append(e), done.set()))
    assert done.wait(10) and answers == [None]
    emulator.store.delete(STORAGE, "default", "a")
    done.clear()
    n = len(events)
    layer.watch_barrier(lambda e: (answers.append((e, len(events))), done.set()))
    assert done.wait(10)
    assert events.of("watch", n)[-1]["event"] == "DELETED"
    assert answers[1][0] is None and answers[1][1] > n


def test_watch_barrier_reports_a_failed_list(emulator, layer, events):
    layer.start_watches(["Storage"])
    events.sync("Storage")
    # a list (limit=, no watch=) fails: the barrier says so, the watch goes on
    emulator.api_fault(500, method="GET", path=r"storages\?limit=", count=1)
    answers: list = []
    done = threading.Event()
    layer.watch_barrier(lambda e: (answers.append(e), done.set()))
    assert done.wait(30)
    assert answers == ["cannot list Storage: 500 injected fault"] or \
        answers[0].startswith("cannot list Storage: 500"), answers


# --- the stream's text (DecodedObject) ----------------------------------------


class FakeResponse:
    """A streaming answer: its chunks, as urllib3's stream() gives them."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.closed = self.released = False

    def stream(self, amt: Any = None, decode_content: bool = False) -> Any:
        yield from self.chunks

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        self.released = True


def line_of(etype: str, obj: Any) -> bytes:
    return json.dumps({"type": etype, "object": obj}, separators=(",", ":")).encode()


def test_watch_lines_across_and_within_chunks():
    a, b, c = line_of("ADDED", WF), line_of("MODIFIED", WF), line_of("DELETED", WF)
    chunks = [a[:10], a[10:30], a[30:] + b"\n" + b[:5], b[5:] + b"\n\n" + c + b"\n",
              b'{"type":"ADDED","obj']  # cut off with the stream: dropped
    assert list(_watch_lines(FakeResponse(chunks))) == [a, b, c]
    assert list(_watch_lines(FakeResponse([]))) == []
    assert list(_watch_lines(FakeResponse([b"  \n", b"x\ny"]))) == [b"x"]


@pytest.mark.parametrize("etype", ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"])
def test_event_object_keeps_the_object_text(etype):
    line = line_of(etype, WF)
    obj = _event_object(line, json.loads(line))
    assert isinstance(obj, DecodedObject) and obj == WF
    assert json.loads(obj.text) == WF
    # what a Go API server writes, non-ASCII as UTF-8 and a space before the end
    line = json.dumps({"type": etype, "object": WF}, separators=(",", ":"),
                      ensure_ascii=False).encode()[:-1] + b" }"
    obj = _event_object(line, json.loads(line))
    assert isinstance(obj, DecodedObject) and json.loads(obj.text) == WF


@pytest.mark.parametrize("line", [
    json.dumps({"object": WF, "type": "ADDED"}).encode(),             # object first
    json.dumps({"type": "ADDED", "object": WF}).encode(),             # spaces after colons
    json.dumps({"type": "ADDED", "object": WF, "x": 1}, separators=(",", ":")).encode(),
    b'{"type":"ADDED","object":[1,2]}',                               # not an object
    b'{"type":1,"object":{"a":1}}',                                    # type not a string
])
def test_event_object_other_forms_are_decoded_objects_only(line):
    ev = json.loads(line)
    obj = _event_object(line, ev)
    assert obj == ev["object"] and not isinstance(obj, DecodedObject)


class FakeApi:
    """Answers the watch request with one canned stream."""

    def __init__(self, resp: FakeResponse) -> None:
        self.resp = resp
        self.kw: dict[str, Any] = {}

    def lister(self, info: Any, ns: Any) -> Any:
        def call(**kw: Any) -> FakeResponse:
            self.kw = kw
            return self.resp
        return call


def one_stream(chunks: list[bytes]) -> tuple[KindWatch, list[dict[str, Any]], FakeResponse]:
    posted: list[dict[str, Any]] = []
    resp = FakeResponse(chunks)
    w = KindWatch(FakeApi(resp), Kinds("v1alpha7", None)["Workflow"], posted.append,
                  logging.getLogger("test"), KubeSettings())
    w.resource_version = "5"
    return w, posted, resp


def test_stream_posts_decoded_objects_and_follows_the_resource_version(caplog):
    bookmark = {"kind": "Workflow", "metadata": {"resourceVersion": "9"}}
    w, posted, resp = one_stream([line_of("ADDED", WF) + b"\n", b"not json\n",
                                  line_of("BOOKMARK", bookmark) + b"\n"])
    with caplog.at_level(logging.WARNING):
        assert w._stream() is True
    assert [(e["event"], e["object"]) for e in posted] == [("ADDED", WF)]
    assert isinstance(posted[0]["object"], DecodedObject)
    assert w.resource_version == "9"
    assert "skipped an event that is not JSON" in caplog.text
    assert resp.closed and resp.released
    assert w.api.kw["watch"] is True and w.api.kw["resource_version"] == "5"
    assert w.api.kw["_preload_content"] is False and w.api.kw["allow_watch_bookmarks"]


@pytest.mark.parametrize("status", [{"code": 410, "reason": "Expired", "message": "too old"},
                                    {"code": 500, "reason": "InternalError", "message": "x"},
                                    {"reason": "Odd", "message": "no code"}])
def test_stream_raises_an_error_event(status):
    error = {"kind": "Status", "status": "Failure", **status}
    w, posted, resp = one_stream([line_of("ADDED", WF) + b"\n",
                                  line_of("ERROR", error) + b"\n", line_of("ADDED", WF) + b"\n"])
    with pytest.raises(ApiException) as exc:
        w._stream()
    assert exc.value.status == status.get("code", 0)
    assert exc.value.reason == f"{status['reason']}: {status['message']}"
    assert len(posted) == 1 and resp.closed and resp.released


def test_what_the_layer_wrote_must_be_heard_of(emulator, make_layer, events):
    """A watch deaf from its start still knows what the service wrote is in
    flight: an object written unsettled (or deleted) that the watch has
    not heard of counts as unsettled, so its silence is healed; a version
    it already knows, or a deletion of what it no longer knows, does not."""
    layer = make_layer({"watch_silence": 3600})
    layer.start_watches([WatchSpec("Storage", unsettled=_moving)])
    events.sync("Storage")
    watch_connected(emulator)
    emulator.mute_watches()
    w = layer.watches["Storage"]
    layer.submit(k8s("create", body=storage("s1", moving="yes"), token="c"))
    assert events.result("c")["ok"]
    assert w.view(time.monotonic())["unsettled"] == 1  # told by the writer, not the watch
    assert w.check_silence(time.monotonic() + 7200)
    _, sync = events.sync("Storage", 1)
    assert _s1_labels(sync) == {"moving": "yes"}
    # known now (the list): an older answer is not news, a deletion is
    w.wrote("patch", "default", "s1", {"metadata": {"name": "s1", "namespace": "default",
                                                    "resourceVersion": "1",
                                                    "labels": {"moving": "yes"}}})
    w.wrote("patch", "default", "s9", None)  # no answer, not a rule's object: nothing
    w.wrote("delete", "default", "gone", None)  # never known: nothing to hear
    assert w.view(time.monotonic())["unsettled"] == 1
    # a watch of one namespace hears nothing of another's objects
    ns_layer = make_layer({"watch_silence": 3600})
    start = len(events)
    ns_layer.start_watches([WatchSpec("Storage", "default", unsettled=_moving)])
    events.sync("Storage", start)  # its own list: s1, moving
    ns_watch = ns_layer.watches["Storage"]
    assert ns_watch.view(time.monotonic())["unsettled"] == 1
    ns_watch.wrote("create", "other", "s2", {"metadata": {"name": "s2", "namespace": "other",
                                                          "labels": {"moving": "yes"}}})
    assert ns_watch.view(time.monotonic())["unsettled"] == 1
    emulator.mute_watches(False)


def test_silence_counts_from_when_something_is_expected(emulator, make_layer, events):
    """A watch quiet for an hour with nothing to hear of is not healed the
    moment the service writes: its silence counts from that write."""
    layer = make_layer({"watch_silence": 60})
    layer.start_watches([WatchSpec("Storage", unsettled=_moving)])
    events.sync("Storage")
    w = layer.watches["Storage"]
    w._heard -= 3600  # an idle hour
    w.wrote("create", "default", "s1", storage("s1", moving="yes"))
    now = time.monotonic()
    assert w.view(now)["heard_s"] < 60
    assert not w.check_silence(now)
    assert w.check_silence(now + 61)
