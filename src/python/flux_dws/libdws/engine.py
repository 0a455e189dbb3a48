"""The dws service's decisions (libdws engine.h), one call per event.

    engine = Engine({"setup_timeout": 300, "owner": 0})
    actions = engine.event({"type": "request", "topic": "dws.create", ...})

Events and actions are plain JSON-like dicts; their wire is described in
doc/guide/service.rst, and every name on it is listed once, in libdws'
wire.h: ``EVENTS``, ``ACTIONS``, ``HEALTH_FLUSH_TIMER`` and ``NOTE_PREFIX``
are read from there.  A malformed event raises EngineError and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from flux_dws.errors import DwsError
from flux_dws.jsondata import DecodedObject
from flux_dws.libdws import _ffi

__all__ = ["ACTIONS", "EVENTS", "GUEST_METHODS", "HEALTH_FLUSH_TIMER", "METHODS", "NOTE_PREFIX",
           "PHASES", "PHASE_IDS", "RECORD_KEY", "RULES", "RULE_WHY", "Engine", "EngineError",
           "f58"]


def _names(name: Any, count: Any) -> tuple[str, ...]:
    return tuple(_ffi.ffi.string(name(i)).decode() for i in range(count()))


#: Every event type the engine takes, from wire.h's one list.
EVENTS: tuple[str, ...] = _names(_ffi.lib.dws_wire_event_name, _ffi.lib.dws_wire_event_count)
#: Every action the engine (and rabbit health) returns, from wire.h's one list;
#: the service carries each out through its table of handlers.
ACTIONS: tuple[str, ...] = _names(_ffi.lib.dws_wire_action_name, _ffi.lib.dws_wire_action_count)
#: The key of rabbit health's flush timer, which dws.watch_test fires at once.
HEALTH_FLUSH_TIMER: str = _ffi.ffi.string(_ffi.lib.dws_wire_health_flush_timer()).decode()
#: What the note of every exception the engine raises starts with.
NOTE_PREFIX: str = _ffi.ffi.string(_ffi.lib.DWS_WIRE_NOTE_PREFIX).decode()

#: Every dws.<name> method the engine answers, from engine/request.c's one
#: table (a method added there is served, refused to guests and tested
#: with no name written twice) ...
METHODS: tuple[str, ...] = tuple(
    _ffi.ffi.string(_ffi.lib.dws_engine_method_name(i)).decode()
    for i in range(_ffi.lib.dws_engine_method_count()))
#: ... and those of them open to every user (the rest are the owner's).
GUEST_METHODS: tuple[str, ...] = tuple(
    m for i, m in enumerate(METHODS) if _ffi.lib.dws_engine_method_guest(i))


#: The phase words ``flux dws job`` and ``flux dws jobs`` print, from libdws'
#: one list (engine.h): the engine's job phases, then a record reader's own
#: ("inactive", ...); PHASE_IDS maps each word's C name to it
#: (``PHASE_IDS["INACTIVE"]``).
PHASES: tuple[str, ...] = _names(_ffi.lib.dws_engine_phase_name, _ffi.lib.dws_engine_phase_count)
PHASE_IDS: dict[str, str] = dict(zip(
    _names(_ffi.lib.dws_engine_phase_id, _ffi.lib.dws_engine_phase_count), PHASES, strict=True))
#: The key of a job's record in its KVS directory: the view ``dws.job``
#: answers, written by the engine each time it changes (engine.h).
RECORD_KEY: str = _ffi.ffi.string(_ffi.lib.dws_engine_record_key()).decode()

#: The decider's rules (engine/rules.h), in its order: the word each step's
#: rule is recorded by in a job's record ("why") and the service's debug log,
#: and RULE_WHY, its words for people (``flux dws job``).
RULES: tuple[str, ...] = _names(_ffi.lib.dws_engine_rule_name, _ffi.lib.dws_engine_rule_count)
RULE_WHY: dict[str, str] = dict(zip(
    RULES, _names(_ffi.lib.dws_engine_rule_why, _ffi.lib.dws_engine_rule_count), strict=True))
#: Each rule's steps over every Engine destroyed, while a test run counts
#: them (t/python/conftest.py, where FLUX_DWS_RULE_COUNTS names a file:
#: t/scripts/rule_coverage.py); None, the default: not counted.
RULES_FIRED: Counter[str] | None = None


def _destroy(h: Any) -> None:
    if RULES_FIRED is not None:
        for i, name in enumerate(RULES):
            RULES_FIRED[name] += int(_ffi.lib.dws_engine_rule_fired(h, i))
    _ffi.lib.dws_engine_destroy(h)


class EngineError(DwsError):
    """An event or a configuration the engine cannot take."""


class Engine:
    """One engine per service: the state of every job it drives."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        err = _ffi.new_error()
        text = _ffi.json_arg(config, "config", EngineError) if config is not None else _ffi.ffi.NULL
        h = _ffi.lib.dws_engine_create_json(text, err)
        if h == _ffi.ffi.NULL:
            _ffi.raise_error(err, EngineError)
        self._h = _ffi.ffi.gc(h, _destroy)

    def reconfig(self, config: dict[str, Any]) -> None:
        """Take a new configuration (the old one stays on error)."""
        err = _ffi.new_error()
        text = _ffi.json_arg(config, "config", EngineError)
        if _ffi.lib.dws_engine_reconfig_json(self._h, text, err) < 0:
            _ffi.raise_error(err, EngineError)

    def event(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Feed one event; the actions to carry out, in order.  An
        ``object`` that is a DecodedObject goes in as the text it was
        decoded from."""
        err = _ffi.new_error()
        p = _ffi.lib.dws_engine_event_json(self._h, _event_text(event), err)
        if p == _ffi.ffi.NULL:
            _ffi.raise_error(err, EngineError)
        actions: list[dict[str, Any]] = _ffi.take_json(p, err)
        return actions

    def take_records(self) -> dict[int, dict[str, Any]]:
        """The job records (RECORD_KEY) changed by the events fed since the
        last call, by job id: the service writes them before it carries
        out the actions of the event."""
        err = _ffi.new_error()
        out: dict[str, Any] = _ffi.take_json(
            _ffi.lib.dws_engine_take_records_json(self._h, err), err)
        return {int(k): v for k, v in out.items()}

    def rules_fired(self) -> dict[str, int]:
        """How many steps each rule (RULES) chose in this engine."""
        return {name: int(_ffi.lib.dws_engine_rule_fired(self._h, i))
                for i, name in enumerate(RULES)}

    def trace(self, on: bool) -> None:
        """Keep each step taken (take_trace) or not (the default)."""
        _ffi.lib.dws_engine_trace(self._h, 1 if on else 0)

    def take_trace(self) -> list[dict[str, Any]]:
        """The steps taken since the last call while tracing, in order:
        ``{"id", "rule", "step", "facts"}`` each."""
        err = _ffi.new_error()
        out: list[dict[str, Any]] = _ffi.take_json(
            _ffi.lib.dws_engine_take_trace_json(self._h, err), err)
        return out

    def status(self) -> dict[str, Any]:
        """The engine's view of its jobs (what ``dws.status`` answers)."""
        err = _ffi.new_error()
        out: dict[str, Any] = _ffi.take_json(_ffi.lib.dws_engine_status_json(self._h, err), err)
        return out


def _event_text(event: dict[str, Any]) -> bytes:
    # anything but an object goes in as it is: the engine names what is wrong
    obj = event.get("object") if isinstance(event, dict) else None
    if not isinstance(obj, DecodedObject):
        return _ffi.json_arg(event, "event", EngineError)
    rest = _ffi.json_arg({k: v for k, v in event.items() if k != "object"}, "event",
                         EngineError)
    # '{...}' + the object as the last member; its text was decoded, so it
    # is JSON (and JSON text holds no NUL)
    return b"".join((rest[:-1], b',"object":' if len(rest) > 2 else b'"object":', obj.text,
                     b"}"))


def f58(jobid: int) -> str:
    """A job id in Flux's plain f58 form ("f" + base58), as Workflows carry it."""
    if not 0 <= jobid < 1 << 64:
        raise EngineError(f"job id out of range: {jobid}")
    return _ffi.take_string(_ffi.lib.dws_f58_plain(jobid))
