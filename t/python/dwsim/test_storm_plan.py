"""dwsim.storage: the storm plan ends where it began; health checks."""

from __future__ import annotations

import collections
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws.dwsim import storage


def targets_of(layout: list[int]) -> list[storage.StormTarget]:
    """Rabbit r<i> with layout[i] computes: its node target, then its links."""
    out: list[storage.StormTarget] = []
    for i, n in enumerate(layout):
        out.append((f"r{i}", None))
        out.extend((f"r{i}", f"c{i}-{j}") for j in range(n))
    return out


@given(layout=st.lists(st.integers(0, 4), min_size=1, max_size=5),
       events=st.integers(2, 300), seed=st.integers(0, 2**32))
def test_plan_returns_to_the_start(layout, events, seed):
    targets = targets_of(layout)
    if events % 2 and not any(layout):
        with pytest.raises(ValueError, match="odd number of events"):
            storage.storm_plan(targets, events, random.Random(seed))
        return
    steps = list(storage.storm_plan(targets, events, random.Random(seed)))
    assert len(steps) == events  # one Storage update each
    counts: collections.Counter[storage.StormTarget] = collections.Counter()
    for i, step in enumerate(steps):
        assert len({t[0] for t in step}) == 1, "a step changes one rabbit"
        assert len(set(step)) == len(step)
        assert len(step) == (2 if i == 0 and events % 2 else 1)
        assert all(t in targets for t in step)
        counts.update(step)
    assert all(n % 2 == 0 for n in counts.values()), counts


def test_plan_is_reproducible_and_varied():
    targets = targets_of([3, 1, 0])
    a = list(storage.storm_plan(targets, 50, random.Random(7)))
    assert a == list(storage.storm_plan(targets, 50, random.Random(7)))
    assert a != list(storage.storm_plan(targets, 50, random.Random(8)))
    assert len({t for step in a for t in step}) > 3  # not the same pair back and forth


@pytest.mark.parametrize(("targets", "events", "match"), [
    (targets_of([1]), 1, "at least 2 events"),
    (targets_of([1]), 0, "at least 2 events"),
    ([], 4, "at least one rabbit"),
    (targets_of([0, 0]), 3, "odd number of events"),
])
def test_impossible_plans_are_refused_at_once(targets, events, match):
    with pytest.raises(ValueError, match=match):
        storage.storm_plan(targets, events, random.Random(1))


def test_flipped():
    assert storage.flipped("Ready") == "Offline"
    assert storage.flipped("Offline") == "Ready"
    assert storage.flipped("Failed") == "Ready"


def test_checks():
    assert storage.check_status("Offline", "x") == "Offline"
    with pytest.raises(ValueError, match=r"link c1: 'offline' is not a status \(one of"):
        storage.check_status("offline", "link c1")
    assert storage.check_drain_taint("cray.nnf.node.drain") == "cray.nnf.node.drain"
    assert storage.check_drain_taint("cray.nnf.node.drain.x") == "cray.nnf.node.drain.x"
    for bad in ("", "node.kubernetes.io/unschedulable", "cray.nnf.node.drain=x", 5):
        with pytest.raises(ValueError, match="not a drain taint key"):
            storage.check_drain_taint(bad)


def test_reset_keeps_capacity_and_devices():
    h = storage.RabbitHealth(capacity=10, computes={"a": "Offline", "b": "Fenced"},
                             node_status="Failed", k8s_ready=False, fenced=True,
                             drain_taint="cray.nnf.node.drain", devices=[{"slot": "1"}])
    h.reset()
    assert h == storage.RabbitHealth(capacity=10, computes={"a": "Ready", "b": "Ready"},
                                     devices=[{"slot": "1"}])
