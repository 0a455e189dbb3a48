"""The kube layer keeps each object's text as the API server sent it
(DecodedObject), so the engine is not handed the same object encoded
again: the watch's own line reader, the object slice of a watch line, an
ERROR event, and the engine's text built around such an object."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from flux_dws.engine import Engine, EngineError, _event_text
from flux_dws.jsondata import DecodedObject, copy_json
from flux_dws.k8s.kinds import Kinds
from flux_dws.k8s.settings import KubeSettings
from flux_dws.k8s.watching import KindWatch, _event_object, _watch_lines

from .conftest import k8s, storage

WF = {"apiVersion": "dataworkflowservices.github.io/v1alpha7", "kind": "Workflow",
      "metadata": {"name": "fluxjob-1", "namespace": "default", "resourceVersion": "7",
                   "labels": {"ünï": "cödé"}},
      "spec": {"desiredState": "Proposal", "dwDirectives": ["#DW jobdw type=xfs"]},
      "status": {"state": "Proposal", "ready": True, "message": "a \"quoted\" word"}}


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


def test_decoded_object_is_a_dict_and_copies_plain():
    obj = DecodedObject(dict(WF), json.dumps(WF).encode())
    assert obj == WF and isinstance(obj, dict)
    copy = copy_json({"o": obj})
    assert copy == {"o": WF} and type(copy["o"]) is dict and copy["o"] is not obj


def test_engine_is_handed_the_text():
    obj = DecodedObject(dict(WF), json.dumps(WF, ensure_ascii=False).encode())
    event = {"type": "watch", "kind": "Workflow", "event": "MODIFIED", "object": obj,
             "now": 1.5}
    text = _event_text(event)
    assert obj.text in text and json.loads(text) == {**event, "object": WF}
    assert json.loads(_event_text({"object": obj})) == {"object": WF}
    # the engine takes it as it takes the same event decoded
    plain = {**event, "object": copy_json(obj)}
    assert Engine({"owner": 0}).event(event) == Engine({"owner": 0}).event(plain)
    # what is not JSON is refused as before, naming the event
    with pytest.raises(EngineError, match="event: not JSON"):
        _event_text({"object": obj, "bad": object()})


@pytest.mark.parametrize("event", [5, [], None, "watch"])
def test_engine_refuses_an_event_that_is_not_an_object(event):
    # found by fuzz_engine: an int event raised AttributeError, not EngineError
    with pytest.raises(EngineError):
        Engine({"owner": 0}).event(event)


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


def test_results_and_watch_events_carry_the_server_text(emulator, layer, events):
    layer.start_watches(["Storage"])
    i, _ = events.sync("Storage")
    layer.submit(k8s("create", body=storage("t1"), token="c"))
    layer.submit(k8s("get", name="t1", token="g"))
    for token in ("c", "g"):
        obj = events.result(token)["object"]
        assert isinstance(obj, DecodedObject) and json.loads(obj.text) == obj
    _, ev = events.wait_for(lambda e: e["type"] == "watch", i)
    assert isinstance(ev["object"], DecodedObject)
    assert json.loads(ev["object"].text) == ev["object"]
