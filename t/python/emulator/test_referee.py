"""The referee (flux_dws.referee.referee): its normalising and comparing,
and two emulators agreeing on every scenario (what it reports then is the
emulator against itself: nothing)."""

from __future__ import annotations

import json
import threading

from flux_dws.cli.main import main
from flux_dws.emulator import Emulator
from flux_dws.referee import referee


def _transcript(name, scen, steps):
    return {"target": name, "scenarios": {scen: [[s, o] for s, o in steps]}}


def test_norm_abstracts_what_differs_between_runs():
    n = referee.Norm({"ref-abc-crud": "<ns>"})
    obj = {"metadata": {"name": "w", "namespace": "ref-abc-crud",
                        "uid": "0f8fad5b-d9cb-469f-a165-70867728950e",
                        "resourceVersion": "41", "creationTimestamp": "2026-11-26T14:00:00Z",
                        "managedFields": [{"manager": "x"}]}}
    out = n.value(obj)
    assert out["metadata"] == {"name": "w", "namespace": "<ns>", "uid": "uid#1",
                               "resourceVersion": "rv#1", "creationTimestamp": "<time>",
                               "managedFields": "<present>"}
    assert n.rv("41") == "rv#1" and n.rv("45") == "rv#2"
    assert n.text("too old resource version: 3 (45)") == "too old resource version: <rv>"
    assert n.text("at 2026-11-26T14:00:00.123Z") == "at <time.frac>"


def test_list_resource_version_is_a_relation():
    n = referee.Norm({})
    body = {"kind": "WorkflowList", "metadata": {"resourceVersion": "50"},
            "items": [{"metadata": {"resourceVersion": "40"}}]}
    assert n.value(body)["metadata"] == {"resourceVersion": ">= newest item"}
    body["metadata"]["resourceVersion"] = "30"
    assert n.value(body)["metadata"] == {"resourceVersion": "< newest item"}


def test_compare_names_scenario_step_and_path():
    a = _transcript("emulator", "crud", [("get", {"code": 404, "status": {"message": "x"}}),
                                         ("only-a", {"code": 200})])
    b = _transcript("real", "crud", [("get", {"code": 404, "status": {"message": "y"}}),
                                     ("skipped", {"unreachable": "no hook"})])
    assert referee.compare(a, b) == [
        'crud/get: status.message: emulator="x" real="y"',
        "crud/only-a: only in emulator",
        "crud/skipped: only in real"]
    assert referee.unreachable(b) == ["crud/skipped: no hook"]


def test_unreachable_steps_are_not_compared():
    a = _transcript("a", "s", [("x", {"unreachable": "no hook"})])
    b = _transcript("b", "s", [("x", {"code": 200})])
    assert referee.compare(a, b) == []


def test_accepted_matches_scenario_step_and_path_globs():
    table = (referee.Accepted("forbidden/*: code", "no RBAC"),)
    assert referee.accepted("forbidden/list-secrets: code: a=200 b=403", table) == table[0]
    assert referee.accepted("crud/get: code: a=200 b=404", table) is None


def test_accepted_entries_are_in_the_emulator_guide():
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[3] / "doc" / "guide" / "emulator.rst").read_text()
    for entry in referee.ACCEPTED:
        assert f"``{entry.where}``" in guide, entry.where


def test_two_emulators_agree(tmp_path):
    """Every scenario, played against two emulators at once: no difference
    (the transcripts abstract all that differs from run to run)."""
    out: dict[str, dict] = {}
    with Emulator(bookmark_interval=60.0) as e1, Emulator(bookmark_interval=60.0) as e2:
        runs = [threading.Thread(target=lambda n=n, e=e: out.__setitem__(
            n, referee.run(referee.emulator_target(e, n)))) for n, e in (("a", e1), ("b", e2))]
        for t in runs:
            t.start()
        for t in runs:
            t.join(120)
    assert set(out) == {"a", "b"}
    assert all("<scenario failed>" not in dict(map(tuple, steps))
               for steps in out["a"]["scenarios"].values())
    assert referee.compare(out["a"], out["b"]) == []
    assert sum(len(s) for s in out["a"]["scenarios"].values()) >= 130
    # the command line reads them back and agrees
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(out["a"]))
    pb.write_text(json.dumps(out["b"]))
    assert main(["referee", "diff", str(pa), str(pb)]) == 0
    out["b"]["scenarios"]["crud"][0][1]["code"] = 500
    pb.write_text(json.dumps(out["b"]))
    assert main(["referee", "diff", str(pa), str(pb)]) == 1
