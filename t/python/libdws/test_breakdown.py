"""Jobspec rewrite and Servers allocation, checked against nnf-sos' rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws.breakdown import BreakdownError, allocation_sets, rabbit_counts, rewrite_resources
from flux_dws.dwsim import breakdown as nnf
from flux_dws.dwsim import servers as nnf_servers

GiB = 1 << 30
TASKS = [{"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}]


def nodes(n):
    return [{"type": "node", "count": n, "with": TASKS}]


def dbd(*sets):
    return {"status": {"storage": {"allocationSets": list(sets)}}}


def test_spec_example():
    xfs = nnf.storage_breakdown("#DW jobdw type=xfs capacity=10GiB name=aa", {})
    assert rewrite_resources(nodes(2), [dbd(*xfs)]) == [
        {"type": "slot", "count": 2, "label": "rabbit", "with": [
            {"type": "node", "count": 1, "with": TASKS},
            {"type": "ssd", "count": 10, "exclusive": True}]}]


def test_several_directives_add_up():
    prof = {"lustreStorage": {"combinedMgtMdt": True}}
    bds = [dbd(*nnf.storage_breakdown("#DW jobdw type=xfs capacity=10GiB name=aa", {})),
           dbd(*nnf.storage_breakdown("#DW jobdw type=lustre capacity=1TiB name=bb", prof)),
           {"status": {}}]  # a persistentdw breakdown holds no storage
    out = rewrite_resources(nodes(4), bds)
    assert out[0]["with"][1]["count"] == 10 + 256 + 4  # xfs + ost/4 + mgtmdt raised to 4


def test_min_allocation_is_a_parameter():
    sets = nnf.storage_breakdown("#DW jobdw type=raw capacity=1GiB name=aa", {})
    assert rewrite_resources(nodes(1), [dbd(*sets)], min_allocation_gib=0)[0]["with"][1][
        "count"] == 1
    assert rewrite_resources(nodes(1), [dbd(*sets)])[0]["with"][1]["count"] == 4


def test_left_alone():
    assert rewrite_resources(nodes(1), [{"status": {"storage": None}}]) is None
    done = rewrite_resources(nodes(1), [dbd({"label": "xfs",
                                             "allocationStrategy": "AllocatePerCompute",
                                             "minimumCapacity": GiB})])
    assert rewrite_resources(done, [dbd({"label": "xfs", "allocationStrategy":
                                         "AllocatePerCompute", "minimumCapacity": GiB})]) is None


@pytest.mark.parametrize(("resources", "message"), [
    ([{"type": "slot", "count": 1, "with": [{"type": "core", "count": 1}]}],
     "needs a jobspec that requests nodes"),
    ([{"type": "node", "count": {"min": 1, "max": 2}}], "count ranges are not supported"),
    ([], "must be a non-empty list"),
    ({"type": "node"}, "must be a non-empty list"),
])
def test_bad_jobspecs(resources, message):
    with pytest.raises(BreakdownError, match=message):
        rewrite_resources(resources, [dbd({"label": "xfs", "allocationStrategy":
                                           "AllocatePerCompute", "minimumCapacity": 1})])


def test_rabbit_counts():
    m = {"c1": "r1", "c2": "r1", "c3": "r2"}
    assert rabbit_counts(["c1", "c2", "c3", "r2"], m) == {"r1": 2, "r2": 1}
    with pytest.raises(BreakdownError, match="compute node 'zz' is not attached"):
        rabbit_counts(["zz"], m)


LUSTRE_PROFILES = [
    {"lustreStorage": {"combinedMgtMdt": True, "ostOptions": {"scale": 5}}},
    {"lustreStorage": {"mgtOptions": {"externalMgs": "x@tcp"}, "mdtOptions": {
        "capacity": "256GiB", "count": 1}, "ostOptions": {"count": 2}}},
    {},
]


@given(
    fs=st.sampled_from(["xfs", "gfs2", "raw", "lustre"]),
    gib=st.integers(1, 4096),
    prof=st.sampled_from(LUSTRE_PROFILES),
    counts=st.dictionaries(st.sampled_from([f"r{i}" for i in range(8)]), st.integers(1, 16),
                           min_size=1),
    count=st.one_of(st.none(), st.integers(1, 12)),
)
def test_servers_always_pass_nnf_checks(fs, gib, prof, counts, count):
    sets = nnf.storage_breakdown(f"#DW jobdw type={fs} capacity={gib}GiB name=aa", prof)
    if count is not None:
        for s in sets:
            if s["allocationStrategy"] == "AllocateAcrossServers":
                s["constraints"]["count"] = count
    spec = {"allocationSets": allocation_sets({"allocationSets": sets}, counts)}
    nnf_servers.validate_allocations(sets, spec, counts.keys())
    for bset, aset in zip(sets, spec["allocationSets"]):
        assert aset["allocationSize"] >= 4 * GiB
        placed = {e["name"]: e["allocationCount"] for e in aset["storage"]}
        assert set(placed) <= set(counts)
        if bset["allocationStrategy"] == "AllocatePerCompute":
            assert placed == counts
        if bset["allocationStrategy"] == "AllocateSingleServer":
            assert list(placed.values()) == [1]
        if bset.get("constraints", {}).get("count"):
            assert sum(placed.values()) == bset["constraints"]["count"]


@given(st.integers(1, 64), st.lists(st.integers(1, 10**13), min_size=1, max_size=4))
def test_gib_per_node_is_at_least_each_request(n, caps):
    sets = [{"label": "xfs", "allocationStrategy": "AllocatePerCompute", "minimumCapacity": c}
            for c in caps]
    out = rewrite_resources(nodes(n), [dbd(*sets)])
    assert out[0]["count"] == n
    assert out[0]["with"][1]["count"] * GiB >= sum(caps)
    assert out[0]["with"][1]["count"] >= 4 * len(caps)


@given(st.recursive(st.one_of(st.integers(), st.text(max_size=5), st.none()),
                    lambda c: st.one_of(st.lists(c, max_size=3),
                                        st.dictionaries(st.text(max_size=6), c, max_size=3)),
                    max_leaves=12))
def test_arbitrary_input_only_raises_breakdown_error(junk):
    for call in (lambda: rewrite_resources(junk, [junk]),
                 lambda: rewrite_resources(nodes(2), junk),
                 lambda: allocation_sets(junk if isinstance(junk, dict) else {"x": junk},
                                         {"r": 1})):
        try:
            call()
        except BreakdownError:
            pass
