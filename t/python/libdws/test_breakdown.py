"""Jobspec rewrite from DirectiveBreakdowns (flux_dws.libdws.breakdown.rewrite_resources)."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from t.python.libdws.breakdown_data import GiB, load, storage_sets

from flux_dws.dwsim import breakdown as nnf
from flux_dws.errors import DwsError
from flux_dws.libdws.breakdown import BreakdownError, rewrite_resources

TASKS = [{"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}]


def nodes(n: int) -> list[dict[str, Any]]:
    return [{"type": "node", "count": n, "with": TASKS}]


def chassis(c: int, m: int, extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    return [{"type": "chassis", "count": c,
             "with": [{"type": "node", "count": m, "with": TASKS}, *(extra or [])]}]


def dbd(*sets: dict[str, Any]) -> dict[str, Any]:
    return {"status": {"ready": True, "storage": {"allocationSets": list(sets)}}}


def ssd_of(resources: list[Any] | None) -> int:
    assert resources is not None
    top = next(r for r in resources if r["type"] != "storage_node")
    ssd = top["with"][-1]
    assert ssd["type"] == "ssd" and ssd["exclusive"] is True
    count: int = ssd["count"]
    return count


def test_spec_example() -> None:
    """flux-dws-integration.rst, Proposal: node(2) + xfs 10GiB."""
    xfs = nnf.storage_breakdown("#DW jobdw type=xfs capacity=10GiB name=aa", {})
    assert rewrite_resources(nodes(2), [dbd(*xfs)]) == [
        {"type": "slot", "count": 2, "label": "rabbit", "with": [
            {"type": "node", "count": 1, "with": TASKS},
            {"type": "ssd", "count": 10, "exclusive": True}]}]


# (breakdown file, per-node GiB for a 4-node job): every rounding rule by hand
CASES = [
    ("xfs", 11),                  # 10 GiB + 300 MiB padding -> 10.29 -> 11
    ("gfs2", 100),
    ("raw", 1024),
    ("lustre_external_mgs", 4 + 64),   # ost 10 GiB/4 = 2.5 -> 3 -> min 4; mdt 256/4
    ("lustre_combined", 256 + 4),      # ost 1 TiB/4; mgtmdt 5 GiB/4 = 1.25 -> 2 -> 4
    ("lustre_default", 256 + 4 + 4),   # ost; mdt and mgt 5 GiB/4 -> 4 each
    ("mgt_pool", 4),                   # create_persistent standalone MGT
]


@pytest.mark.parametrize(("name", "gib"), CASES)
def test_breakdown_files(name: str, gib: int) -> None:
    bd = load(name)
    out = rewrite_resources(nodes(4), [bd])
    assert out == [{"type": "slot", "count": 4, "label": "rabbit", "with": [
        {"type": "node", "count": 1, "with": TASKS},
        {"type": "ssd", "count": gib, "exclusive": True}]}]
    # the whole object, its status, or the status with extra fields: same result
    assert rewrite_resources(nodes(4), [bd["status"]]) == out


@pytest.mark.parametrize(("name", "directive", "profile"), [
    ("xfs", "#DW jobdw type=xfs capacity=10GiB name=scratch",
     {"xfsStorage": {"allocationPadding": "300MiB"}}),
    ("lustre_default", "#DW jobdw type=lustre capacity=1TiB name=lus", {}),
    ("lustre_combined", "#DW jobdw type=lustre capacity=1TiB name=lus",
     {"lustreStorage": {"combinedMgtMdt": True, "ostOptions": {"scale": 5}}}),
    ("lustre_external_mgs", "#DW jobdw type=lustre capacity=10GiB name=lus",
     {"lustreStorage": {"mgtOptions": {"externalMgs": "10.1.1.1@tcp"},
                        "mdtOptions": {"capacity": "256GiB", "count": 1},
                        "ostOptions": {"count": 2}}}),
])
def test_data_files_match_the_emulated_nnf_sos(name: str, directive: str,
                                               profile: dict[str, Any]) -> None:
    """The hand-written breakdowns are what the emulated nnf-sos makes."""
    want = storage_sets(load(name))
    assert nnf.storage_breakdown(directive, profile) == want


def test_several_directives_add_up() -> None:
    bds = [load("xfs"), load("lustre_default"), load("persistentdw")]
    assert ssd_of(rewrite_resources(nodes(4), bds)) == 11 + 264
    # order does not matter
    assert ssd_of(rewrite_resources(nodes(4), bds[::-1])) == 11 + 264


def test_chassis_and_slot_forms() -> None:
    out = rewrite_resources(chassis(2, 2, [{"type": "storage_node", "count": 1}]),
                            [load("lustre_default")])
    # 4 nodes: 264 GiB per node, 2 nodes per chassis
    assert out == [{"type": "chassis", "count": 2, "with": [
        {"type": "node", "count": 2, "with": TASKS},
        {"type": "storage_node", "count": 1},
        {"type": "ssd", "count": 528, "exclusive": True}]}]
    slot = [{"type": "slot", "count": 2, "label": "task",
             "with": [{"type": "node", "count": 2, "with": TASKS}]}]
    assert ssd_of(rewrite_resources(slot, [load("lustre_default")])) == 528


def test_min_allocation_is_a_parameter() -> None:
    sets = nnf.storage_breakdown("#DW jobdw type=raw capacity=1GiB name=aa", {})
    assert ssd_of(rewrite_resources(nodes(1), [dbd(*sets)], min_allocation_gib=0)) == 1
    assert ssd_of(rewrite_resources(nodes(1), [dbd(*sets)])) == 4
    assert ssd_of(rewrite_resources(nodes(1), [dbd(*sets)], min_allocation_gib=32)) == 32


def test_left_alone() -> None:
    assert rewrite_resources(nodes(1), [load("persistentdw")]) is None
    assert rewrite_resources(nodes(1), []) is None
    assert rewrite_resources([{"type": "slot", "count": 1, "with": TASKS[0]["with"]}],
                             [load("persistentdw")]) is None
    done = rewrite_resources(nodes(3), [load("xfs")])
    assert rewrite_resources(done, [load("xfs")]) is None, "the rewrite is idempotent"


def test_inputs_are_not_modified() -> None:
    res, bds = nodes(2), [load("lustre_default")]
    before = copy.deepcopy((res, bds))
    rewrite_resources(res, bds)
    assert (res, bds) == before


XFS = {"label": "xfs", "allocationStrategy": "AllocatePerCompute", "minimumCapacity": GiB}


@pytest.mark.parametrize(("resources", "message"), [
    ([{"type": "slot", "count": 1, "with": [{"type": "core", "count": 1}]}],
     r"resources\[0\] \(slot\) holds no node: rabbit storage needs a jobspec that requests"),
    ([{"type": "core", "count": 1}], r"resources\[0\] is 'core'"),
    ([{"type": "node", "count": {"min": 1, "max": 2}}],
     r"resources\[0\] \(node\): count ranges are not supported"),
    (chassis(1, 2) + chassis(1, 2), r"single top-level node, slot or chassis entry .*found 2"),
    ([{"type": "chassis", "count": 2, "with": [{"type": "node", "count": 1},
                                               {"type": "gpu", "count": 1}]}],
     "may contain only node and storage_node entries, not 'gpu'"),
    ([], "must be a non-empty list"),
    ({"type": "node"}, "must be a non-empty list"),
    ([{"type": "node", "count": 2**40}], "count 1099511627776 is too large"),
])
def test_bad_jobspecs(resources: Any, message: str) -> None:
    with pytest.raises(BreakdownError, match=message):
        rewrite_resources(resources, [dbd(XFS)])


@pytest.mark.parametrize(("breakdowns", "message"), [
    ([dbd({**XFS, "allocationStrategy": "AllocateSingleServer"})],
     "breakdown 0: allocation set 0: label 'xfs' has strategy AllocateSingleServer, expected"
     " AllocatePerCompute"),
    ([load("persistentdw"), dbd(XFS, {**XFS, "label": "zfs"})],
     "breakdown 1: allocation set 1: unknown label 'zfs'"),
    ([{**load("xfs"), "status": {"ready": False}}],
     "breakdown 'fluxjob-1234-0' is not ready"),
    ([{k: v for k, v in load("xfs").items() if k != "status"}],
     "breakdown 'fluxjob-1234-0' has no status yet"),
    ([dbd({**XFS, "minimumCapacity": 0})], "integer minimumCapacity >= 1"),
    ([dbd({**XFS, "minimumCapacity": 1.5})], "integer minimumCapacity >= 1"),
    ({"a": 1}, "breakdowns must be a list"),
])
def test_bad_breakdowns(breakdowns: Any, message: str) -> None:
    with pytest.raises(BreakdownError, match=message):
        rewrite_resources(nodes(2), breakdowns)


@pytest.mark.parametrize("minimum", [-1, True, 2**63, "4", 4.0])
def test_bad_minimum(minimum: Any) -> None:
    with pytest.raises(BreakdownError, match="min_allocation_gib must be an integer"):
        rewrite_resources(nodes(2), [dbd(XFS)], minimum)


def test_errors_are_dws_errors() -> None:
    with pytest.raises(DwsError):
        rewrite_resources(nodes(2), [dbd({"label": "xfs"})])
    with pytest.raises(BreakdownError, match="breakdowns: not JSON"):
        rewrite_resources(nodes(2), [{1, 2}])


caps = st.integers(1, 2**50)
LUSTRE = [("ost", "AllocateAcrossServers"), ("mdt", "AllocateAcrossServers"),
          ("mgtmdt", "AllocateAcrossServers"), ("mgt", "AllocateSingleServer")]
PER_COMPUTE = [("xfs", "AllocatePerCompute"), ("gfs2", "AllocatePerCompute"),
               ("raw", "AllocatePerCompute")]
sets_st = st.lists(st.tuples(st.sampled_from(LUSTRE + PER_COMPUTE), caps), min_size=1,
                   max_size=6)


@given(st.integers(1, 5000), sets_st, st.integers(0, 64))
def test_per_node_gib_rules(n: int, sets: list[Any], minimum: int) -> None:
    """Each set reserves at least its share, rounded up to whole GiB, and at
    least the minimum; nothing more than one GiB of rounding per set."""
    bsets = [{"label": lab, "allocationStrategy": strat, "minimumCapacity": cap}
             for (lab, strat), cap in sets]
    gib = ssd_of(rewrite_resources(nodes(n), [dbd(*bsets)], minimum))
    want = 0
    for (lab, _), cap in sets:
        share = cap if (lab, _) in PER_COMPUTE else math.ceil(cap / n)
        want += max(minimum, math.ceil(share / GiB))
    assert gib == want
    for (lab, strat), cap in sets:  # the reservation covers each request
        need = cap if (lab, strat) in PER_COMPUTE else cap / n
        assert gib * GiB >= need


@given(st.integers(1, 64), st.integers(1, 64), sets_st)
def test_chassis_is_node_form_times_nodes_per_chassis(c: int, m: int, sets: list[Any]) -> None:
    bsets = [{"label": lab, "allocationStrategy": strat, "minimumCapacity": cap}
             for (lab, strat), cap in sets]
    flat = ssd_of(rewrite_resources(nodes(c * m), [dbd(*bsets)]))
    assert ssd_of(rewrite_resources(chassis(c, m), [dbd(*bsets)])) == flat * m


json_values = st.recursive(
    st.one_of(st.integers(-2**64, 2**64), st.floats(), st.text(max_size=8), st.booleans(),
              st.none()),
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=8), c,
                                                                   max_size=4)),
    max_leaves=16)
jobspec_like = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(["node", "slot", "chassis", "core",
                                                    "storage_node", "ssd"]),
                           "count": st.one_of(st.integers(-1, 20), json_values)}),
    lambda c: st.fixed_dictionaries({"type": st.sampled_from(["node", "slot", "chassis"]),
                                     "count": st.integers(0, 5),
                                     "with": st.lists(c, max_size=3)}),
    max_leaves=8)


@given(st.one_of(json_values, st.lists(jobspec_like, max_size=3)),
       st.one_of(json_values, st.lists(st.one_of(json_values, st.just(load("lustre_default"))),
                                       max_size=3)))
def test_arbitrary_input_only_raises_breakdown_error(resources: Any, breakdowns: Any) -> None:
    try:
        out = rewrite_resources(resources, breakdowns)
    except BreakdownError as e:
        assert str(e)
    else:
        assert out is None or isinstance(out, list)


def test_jobspec_node_count():
    from flux_dws.libdws.breakdown import BreakdownError, jobspec_node_count
    node = {"type": "node", "count": 1, "with": [{"type": "core", "count": 1}]}
    assert jobspec_node_count([{**node, "count": 5}]) == 5
    assert jobspec_node_count([{"type": "slot", "count": 3, "label": "s", "with": [node]}]) == 3
    assert jobspec_node_count([{"type": "chassis", "count": 2,
                                "with": [{**node, "count": 4}]}]) == 8
    with pytest.raises(BreakdownError, match="resources"):
        jobspec_node_count([{"type": "core", "count": 1}])
    with pytest.raises(BreakdownError, match="not JSON"):
        jobspec_node_count([{1, 2}])
