"""The engine <-> shell wire: wire.h's lists, the service's handlers, the
events the shell writes and the service guide agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flux_dws.libdws import engine
from flux_dws.service import core

TOP = Path(__file__).resolve().parents[3]
GUIDE = (TOP / "doc/guide/service.rst").read_text()
SHELL = TOP / "src/python/flux_dws/service"


def test_lists_come_from_the_header():
    header = (TOP / "src/common/libdws/wire/wire.h").read_text()
    events = header[header.index("DWS_WIRE_EVENTS(X)"):header.index("DWS_WIRE_ACTIONS(X)")]
    actions = header[header.index("DWS_WIRE_ACTIONS(X)"):header.index("enum dws_wire_event")]
    assert engine.EVENTS == tuple(re.findall(r'X \(\w+, "([a-z0-9-]+)"\)', events))
    assert engine.ACTIONS == tuple(re.findall(r'X \(\w+, "([a-z0-9-]+)"\)', actions))
    assert engine.HEALTH_FLUSH_TIMER == "health-flush"
    assert len(set(engine.EVENTS)) == len(engine.EVENTS)
    assert len(set(engine.ACTIONS)) == len(engine.ACTIONS)


def test_every_action_has_one_handler_and_no_handler_is_stale():
    handlers = {name[len("_do_"):].replace("_", "-")
                for name in vars(core.Service) if name.startswith("_do_")}
    assert set(engine.ACTIONS) == handlers


def test_a_missing_handler_fails_when_the_service_is_made(monkeypatch):
    monkeypatch.setattr(core, "ACTIONS", (*engine.ACTIONS, "teleport"))
    svc = object.__new__(core.Service)
    with pytest.raises(TypeError, match=r"no handler for the engine's actions \['teleport'\]"):
        svc.action_handlers()


def test_every_event_and_action_has_its_line_in_the_service_guide():
    typed = set()
    for alts in re.findall(r'``\{"type": ((?:"[a-z0-9-]+"\|?)+)', GUIDE):
        typed |= set(re.findall(r'"([a-z0-9-]+)"', alts))
    acted = set(re.findall(r'``\{"action": "([a-z0-9-]+)"', GUIDE))
    assert set(engine.EVENTS) <= typed, set(engine.EVENTS) - typed
    assert set(engine.ACTIONS) <= acted, set(engine.ACTIONS) - acted
    assert typed <= set(engine.EVENTS), typed - set(engine.EVENTS)
    assert acted <= set(engine.ACTIONS), acted - set(engine.ACTIONS)


def test_every_event_the_shell_writes_is_on_the_wire():
    written = set()
    for path in (*SHELL.glob("*.py"), TOP / "src/python/flux_dws/harness/link.py"):
        written |= set(re.findall(r'"type": "([a-z0-9-]+)"', path.read_text()))
    assert written, "no event literal found: the pattern no longer matches the shell"
    assert written <= set(engine.EVENTS), written - set(engine.EVENTS)


def test_the_engine_names_an_unknown_event_type():
    with pytest.raises(engine.EngineError, match="unknown event type 'teleport'"):
        engine.Engine().event({"type": "teleport"})
