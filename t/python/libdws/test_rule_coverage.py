"""The decider's rules are named once, in order, and each step says which
rule chose it (issue 76): the list the engine gives, the record's why,
and the coverage check (t/scripts/rule_coverage.py) that fails when a
rule is fired by no test."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from flux_dws.libdws.engine import RULE_WHY, RULES, Engine

TOP = Path(__file__).resolve().parents[3]
RULES_H = TOP / "src" / "common" / "libdws" / "engine" / "rules.h"


def load_coverage() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("rule_coverage",
                                                  TOP / "t" / "scripts" / "rule_coverage.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_rule_is_named_once_with_words_for_people() -> None:
    assert len(RULES) == len(set(RULES)) > 100
    assert all(re.fullmatch(r"[a-z][a-z0-9-]+", r) for r in RULES)
    assert all(RULE_WHY[r] for r in RULES)
    # spelled once: each NAME appears in rules.h's lists and nowhere else
    # in the engine but where it is chosen
    names = re.findall(r"^\s*X \((\w+),", RULES_H.read_text(), re.M)
    assert [n.lower().replace("_", "-") for n in names] == list(RULES)


def test_the_look_rules_come_first_in_the_order_settle_tries_them() -> None:
    """The look rules, then pre-staging's wing, each in the order tried,
    each guard named for its rule."""
    text = RULES_H.read_text()
    start = text.index("#define DWS_ENGINE_LOOK_RULES")
    look = text[start:text.index("#define DWS_ENGINE_PRESTAGE_RULES")]
    rows = re.findall(r"X \((\w+), (look_\w+),", look)
    order = [name.lower().replace("_", "-") for name, _ in rows]
    assert len(order) > 15 and order == list(RULES[:len(order)])
    # pre-staging's wing comes next, consulted by the one look rule PRESTAGE
    start = text.index("#define DWS_ENGINE_PRESTAGE_RULES")
    wing = re.findall(r"X \((\w+), (look_\w+),",
                      text[start:text.index("#define DWS_ENGINE_RULES(X)")])
    assert "prestage" in order and len(wing) >= 6
    assert [n.lower().replace("_", "-") for n, _ in wing] == list(
        RULES[len(order):len(order) + len(wing)])
    rows += wing
    # each guard is named for its rule
    for name, guard in rows:
        assert guard == "look_" + name.lower()


def test_the_coverage_check_fails_on_a_planted_dead_rule(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    cov = load_coverage()
    counts = tmp_path / "counts.jsonl"
    every = {r: 1 for r in RULES}
    counts.write_text(json.dumps({"source": "a", "counts": every}) + "\n")
    assert cov.main([str(counts)]) == 0  # type: ignore[attr-defined]
    dead = dict(every, **{RULES[3]: 0})
    counts.write_text(json.dumps({"source": "a", "counts": dead}) + "\n")
    assert cov.main([str(counts)]) == 1  # type: ignore[attr-defined]
    assert RULES[3] in capsys.readouterr().err
    # fired in another run: covered
    counts.write_text(json.dumps({"source": "a", "counts": dead}) + "\n"
                      + json.dumps({"source": "b", "counts": {RULES[3]: 2}}) + "\n")
    assert cov.main([str(counts)]) == 0  # type: ignore[attr-defined]
    # a rule the counts never knew (an older run) is not covered
    counts.write_text(json.dumps({"source": "a", "counts": {RULES[0]: 1}}) + "\n")
    assert cov.main([str(counts)]) == 1  # type: ignore[attr-defined]
    assert cov.main([str(tmp_path / "none.jsonl")]) == 1  # type: ignore[attr-defined]


def test_an_engine_counts_the_rules_of_its_steps() -> None:
    e = Engine({"owner": 0})
    e.trace(True)
    task = {"type": "slot", "count": 1, "label": "task",
            "with": [{"type": "core", "count": 1}]}
    acts = e.event({"type": "request", "topic": "dws.create", "msgid": 1, "userid": 0,
                    "now": 1.0,
                    "payload": {"jobid": 42, "resources": [{"type": "node", "count": 1,
                                                            "with": [task]}],
                                "userid": 1000, "failure_tolerance": 0,
                                "dw_directives": "#DW jobdw type=xfs capacity=10GiB name=s"}})
    assert [a.get("kind") for a in acts] == ["Workflow"], acts
    fired = Counter({k: v for k, v in e.rules_fired().items() if v})
    assert fired == Counter({"create": 1}), fired
    trace = e.take_trace()
    assert [(t["id"], t["rule"], t["step"]) for t in trace] == [(42, "create", "send-create")]
    assert "news=create" in trace[0]["facts"]
    assert e.take_trace() == []
    e.trace(False)
