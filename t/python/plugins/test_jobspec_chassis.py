"""--coral2-chassis / --coral2-rabbit-cores jobspec rewrite (no Flux needed)."""

from __future__ import annotations

import copy

import pytest

from flux_dws.jobspec_chassis import (
    ChassisError,
    check_options,
    has_scheduling,
    rewrite_jobspec,
    rewrite_resources,
)

SLOT = {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}


def node(count, **extra):
    return {"type": "node", "count": count, "exclusive": True, "with": [copy.deepcopy(SLOT)],
            **extra}


def jobspec(count=4):
    return {
        "version": 1,
        "resources": [node(count)],
        "tasks": [{"command": ["hostname"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": {"duration": 0}},
    }


def test_chassis_wraps_the_node_request():
    out = rewrite_resources([node(4)], 2)
    assert out == [{"type": "chassis", "count": 2, "with": [node(2)]}]


def test_one_chassis_keeps_every_node_in_it():
    assert rewrite_resources([node(3)], 1) == [{"type": "chassis", "count": 1, "with": [node(3)]}]


def test_rewrite_does_not_touch_its_input():
    js = jobspec(6)
    before = copy.deepcopy(js)
    out = rewrite_jobspec(js, 3)
    assert js == before
    assert out["resources"][0]["with"][0]["count"] == 2
    assert out["tasks"] == before["tasks"]
    assert "allow_rabbits" not in out["attributes"]["system"]


def test_rabbit_cores_adds_a_storage_node_and_allows_rabbits():
    out = rewrite_jobspec(jobspec(4), 2, rabbit_cores=8)
    assert out["resources"] == [{
        "type": "chassis", "count": 2, "with": [
            node(2),
            {"type": "storage_node", "count": 1,
             "with": [{"type": "core", "count": 8, "exclusive": True}]},
        ],
    }]
    assert out["attributes"]["system"]["allow_rabbits"] is True
    assert out["attributes"]["system"]["duration"] == 0


def test_rabbit_cores_creates_attributes_when_absent():
    js = {"resources": [node(2)]}
    assert rewrite_jobspec(js, 1, 2)["attributes"] == {"system": {"allow_rabbits": True}}


def test_other_top_level_resources_are_kept_in_place():
    other = {"type": "switch", "count": 1}
    out = rewrite_resources([other, node(4)], 4)
    assert out[0] == other
    assert out[1]["type"] == "chassis" and out[1]["with"][0]["count"] == 1


@pytest.mark.parametrize("resources, words", [
    ([SLOT], "found 0 node requests"),
    ([node(2), node(2)], "found 2 node requests"),
    ([node({"min": 2, "max": 4})], "requires a fixed node count"),
    ([node(5)], "the node count 5 is not a multiple of 2"),
    ("node", "resources must be a list"),
])
def test_rewrite_refuses_what_it_cannot_spread(resources, words):
    with pytest.raises(ChassisError, match=words) as info:
        rewrite_resources(resources, 2)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("--coral2-chassis")


@pytest.mark.parametrize("chassis", [0, -1, True, "2", 2.0])
def test_chassis_must_be_a_positive_integer(chassis):
    with pytest.raises(ChassisError, match="--coral2-chassis must be a positive integer"):
        rewrite_resources([node(4)], chassis)
    with pytest.raises(ChassisError, match="--coral2-chassis must be a positive integer"):
        check_options(chassis, None, "4")


def test_chassis_error_is_a_value_error():
    # flux-core's CLI reports a plugin's ValueError as one "ERROR:" line.
    assert issubclass(ChassisError, ValueError)


@pytest.mark.parametrize("chassis, cores, nodes, words", [
    (2, None, None, "--coral2-chassis requires -N, --nodes"),
    (2, None, "5", "--coral2-chassis=2: the node count 5 is not a multiple of 2"),
    (2, None, "2-4", "requires a fixed node count, not -N 2-4"),
    (None, 4, "4", "--coral2-rabbit-cores requires --coral2-chassis"),
    (None, 0, "4", "--coral2-rabbit-cores must be a positive integer, not 0"),
    (2, -3, "4", "--coral2-rabbit-cores must be a positive integer, not -3"),
])
def test_check_options_refuses(chassis, cores, nodes, words):
    with pytest.raises(ChassisError) as info:
        check_options(chassis, cores, nodes)
    assert words in str(info.value)


@pytest.mark.parametrize("chassis, cores, nodes", [
    (None, None, None), (2, None, "4"), (4, 1, 8), (1, None, "7"),
])
def test_check_options_accepts(chassis, cores, nodes):
    check_options(chassis, cores, nodes)


def test_has_scheduling():
    assert has_scheduling({"version": 1, "scheduling": {"graph": {}}})
    assert not has_scheduling({"version": 1, "execution": {}})
    assert not has_scheduling(None)
    assert has_scheduling(None, {"resource": {"scheduling": "/etc/flux/jgf.json"}})
    assert not has_scheduling({"version": 1}, {"resource": {"path": "R.json"}})
    assert not has_scheduling({}, {"resource": "odd"})
