"""A pytest plugin that records what every engine is fed, to replay it.

    FLUX_DWS_ENGINE_RECORD=DIR python -m pytest -p engine_record \\
        -o pythonpath=t/bench t/python/service

Each Engine made while a test runs gets a file in DIR named for the test
and the engine's number in it: one JSON line per call, ``{"op": "create",
"config": TEXT}``, ``{"op": "reconfig", "config": TEXT}`` or ``{"op":
"event", "event": TEXT}``, TEXT being the exact JSON text libdws was given.
``bench_engine_replay.py`` feeds the lines to another build's engine and
writes what it answers, so two engines' answers to the same inputs can be
compared byte for byte (a refactor of the engine that must change nothing
a user sees) and timed (its CPU per event).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import IO, Any

import pytest

from flux_dws.libdws import engine as engine_mod

_current = {"test": "no-test", "count": 0}


def _open(directory: Path) -> IO[str]:
    _current["count"] += 1
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", _current["test"])[-150:]
    return open(directory / f"{name}.{_current['count']}.jsonl", "w", encoding="utf-8")


def _install(directory: Path) -> None:
    cls = engine_mod.Engine
    init, reconfig, event = cls.__init__, cls.reconfig, cls.event
    text_of = engine_mod._event_text

    def rec_init(self: Any, config: dict[str, Any] | None = None) -> None:
        self._record = _open(directory)
        line = {"op": "create", "config": None if config is None else json.dumps(config)}
        self._record.write(json.dumps(line) + "\n")
        init(self, config)

    def rec_reconfig(self: Any, config: dict[str, Any]) -> None:
        self._record.write(json.dumps({"op": "reconfig", "config": json.dumps(config)}) + "\n")
        reconfig(self, config)

    def rec_event(self: Any, ev: dict[str, Any]) -> list[dict[str, Any]]:
        text = text_of(ev).decode("utf-8", "surrogatepass")
        self._record.write(json.dumps({"op": "event", "event": text}) + "\n")
        self._record.flush()
        return event(self, ev)

    cls.__init__ = rec_init  # type: ignore[method-assign]
    cls.reconfig = rec_reconfig  # type: ignore[method-assign]
    cls.event = rec_event  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    where = os.environ.get("FLUX_DWS_ENGINE_RECORD")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        _install(Path(where))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _current["test"] = item.nodeid
    _current["count"] = 0
