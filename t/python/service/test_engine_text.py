"""The engine is handed each object's text as the API server sent it
(DecodedObject), not the same object encoded again: a DecodedObject is a
dict and copies plain, the engine's text is built around it, and an
event that is not an object is refused."""

from __future__ import annotations

import json

import pytest
from t.python.k8s.conftest import WF

from flux_dws.jsondata import DecodedObject, copy_json
from flux_dws.libdws.engine import Engine, EngineError, _event_text


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
