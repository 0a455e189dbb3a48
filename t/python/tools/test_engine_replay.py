"""The engine's record and replay tools (t/bench/engine_record.py,
bench_engine_replay.py): what an engine is fed is written as it was given,
and a replay answers it as the engine did."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from flux_dws.libdws import engine as engine_mod

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


EVENTS = [
    {"type": "sync", "kind": "Workflow", "objects": [], "now": 10.0},
    {"type": "request", "topic": "dws.create", "msgid": "m1", "userid": 0, "now": 11.0,
     "payload": {"jobid": 1234, "dw_directives": "#DW jobdw type=xfs capacity=1GiB name=x",
                 "resources": [{"type": "node", "count": 1}], "userid": 0, "groupid": 0}},
    {"type": "timer", "key": "setup:1234", "now": 12.0},
    {"type": "no-such-event"},
]


def test_a_recording_replays_to_the_same_answers(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    record = load("engine_record")
    replay = load("bench_engine_replay")
    for attr in ("__init__", "reconfig", "event"):
        monkeypatch.setattr(engine_mod.Engine, attr, getattr(engine_mod.Engine, attr))
    record._install(tmp_path / "in")
    (tmp_path / "in").mkdir()
    record._current.update(test="t::case", count=0)
    engine = engine_mod.Engine({"owner": 0})
    answers = []
    for ev in EVENTS:
        try:
            answers.append(json.dumps(engine.event(ev)))
        except engine_mod.EngineError as e:
            answers.append(str(e))
    lines = [json.loads(x) for x in (tmp_path / "in" / "t_case.1.jsonl").read_text()
             .splitlines()]
    assert [x["op"] for x in lines] == ["create"] + ["event"] * len(EVENTS)
    assert json.loads(lines[0]["config"]) == {"owner": 0}
    assert [json.loads(x["event"]) for x in lines[1:]] == EVENTS

    fig = replay.replay(tmp_path / "in", tmp_path / "out")
    assert fig["recordings"] == 1 and fig["events"] == len(EVENTS)
    out = (tmp_path / "out" / "t_case.1.jsonl").read_text().splitlines()
    assert out[0] == '"created"'
    # each event: its actions, then the records it changed
    got = [out[1 + 2 * i] for i in range(len(EVENTS))]
    for want, line in zip(answers[:-1], got[:-1], strict=True):
        assert json.loads(line) == json.loads(want)
    assert json.loads(got[-1]) == {"error": answers[-1]}
    assert any(a["action"] == "k8s" for a in json.loads(got[1]))  # the create went out
