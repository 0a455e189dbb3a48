"""Servers allocationSets (flux_dws.libdws.breakdown.allocation_sets) and the
per-rabbit node counts they are computed from (rabbit_counts, RabbitMap)."""

from __future__ import annotations

import math
import re
from functools import reduce
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from t.python.libdws.breakdown_data import GiB, check_servers, load, storage_sets

from flux_dws.libdws.breakdown import (
    BreakdownError,
    RabbitMap,
    ServersError,
    allocation_sets,
    rabbit_counts,
)

# the kind test cluster: compute-[01-03] on kind-worker2, compute-04 on kind-worker3
KIND = {
    "computes": {"compute-01": "kind-worker2", "compute-02": "kind-worker2",
                 "compute-03": "kind-worker2", "compute-04": "kind-worker3"},
    "rabbits": {"kind-worker2": {"capacity": 39582418599936, "hostlist": "compute-[01-03]"},
                "kind-worker3": {"capacity": 39582418599936, "hostlist": "compute-04"}},
}
KIND_COUNTS = {"kind-worker2": 3, "kind-worker3": 1}


def e(name: str, n: int) -> dict[str, Any]:
    return {"name": name, "allocationCount": n}


W2, W3 = "kind-worker2", "kind-worker3"
EXPECTED = {
    "xfs": [{"label": "xfs", "allocationSize": 11051991040, "storage": [e(W2, 3), e(W3, 1)]}],
    "gfs2": [{"label": "gfs2", "allocationSize": 100 * GiB, "storage": [e(W2, 3), e(W3, 1)]}],
    "raw": [{"label": "raw", "allocationSize": 1024 * GiB, "storage": [e(W2, 3), e(W3, 1)]}],
    # ost count 2: 10 GiB / 2 on the two busiest; mdt count 1 on the busiest
    "lustre_external_mgs": [
        {"label": "ost", "allocationSize": 5 * GiB, "storage": [e(W2, 1), e(W3, 1)]},
        {"label": "mdt", "allocationSize": 256 * GiB, "storage": [e(W2, 1)]}],
    # no count: weighted 3:1 (gcd 1, 4 shares); mgtmdt 5 GiB / 4 raised to 4 GiB
    "lustre_combined": [
        {"label": "ost", "allocationSize": 256 * GiB, "storage": [e(W2, 3), e(W3, 1)]},
        {"label": "mgtmdt", "allocationSize": 4 * GiB, "storage": [e(W2, 3), e(W3, 1)]}],
    "lustre_default": [
        {"label": "ost", "allocationSize": 256 * GiB, "storage": [e(W2, 3), e(W3, 1)]},
        {"label": "mdt", "allocationSize": 4 * GiB, "storage": [e(W2, 3), e(W3, 1)]},
        {"label": "mgt", "allocationSize": 5 * GiB, "storage": [e(W2, 1)]}],
    "mgt_pool": [{"label": "mgt", "allocationSize": 5 * GiB, "storage": [e(W2, 1)]}],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_breakdown_files_on_kind(name: str) -> None:
    bd = load(name)
    counts = rabbit_counts([f"compute-0{i}" for i in range(1, 5)], KIND)
    assert counts == KIND_COUNTS
    out = allocation_sets(bd["status"]["storage"], counts)
    assert out == EXPECTED[name]
    check_servers(storage_sets(bd), out, KIND["rabbits"])
    # from the hosts in one call
    assert RabbitMap(KIND).allocation_sets(bd, "compute-[01-04]") == out
    # the breakdown object or its status give the same
    assert allocation_sets(bd, counts) == out
    assert allocation_sets(bd["status"], counts) == out


def test_weighted_split_uses_the_gcd() -> None:
    """32 nodes on rabbits serving 16, 12 and 4 of them: gcd 4, 4+3+1 shares."""
    counts = {"elcap201": 16, "elcap202": 12, "elcap203": 4}
    out = allocation_sets(load("lustre_default"), counts)
    assert out[0] == {"label": "ost", "allocationSize": math.ceil(1024 * GiB / 8),
                      "storage": [e("elcap201", 4), e("elcap202", 3), e("elcap203", 1)]}
    assert out[1]["allocationSize"] == 4 * GiB  # 5 GiB / 8 shares, raised
    assert out[2] == {"label": "mgt", "allocationSize": 5 * GiB, "storage": [e("elcap201", 1)]}
    check_servers(storage_sets(load("lustre_default")), out, counts)


def test_count_larger_than_rabbits_goes_round_robin() -> None:
    sets = [{"label": "ost", "allocationStrategy": "AllocateAcrossServers",
             "minimumCapacity": 70 * GiB, "constraints": {"count": 7}}]
    out = allocation_sets({"allocationSets": sets}, {"b": 16, "a": 16, "c": 2})
    # 7 over 3 rabbits: floor(7/3) = 2 each, and 7 mod 3 = 1 more to the busiest
    # (a and b tie on nodes: a comes first by name)
    assert out == [{"label": "ost", "allocationSize": 10 * GiB,
                    "storage": [e("a", 3), e("b", 2), e("c", 2)]}]
    check_servers(sets, out, {"a", "b", "c"})


def test_minimum_allocation_is_a_parameter() -> None:
    sets = storage_sets(load("lustre_combined"))
    out = allocation_sets({"allocationSets": sets}, KIND_COUNTS, min_allocation_bytes=0)
    assert out[1]["allocationSize"] == math.ceil(5 * GiB / 4)
    out = allocation_sets({"allocationSets": sets}, KIND_COUNTS, min_allocation_bytes=64 * GiB)
    assert [s["allocationSize"] for s in out] == [256 * GiB, 64 * GiB]


def test_rabbit_counts() -> None:
    m = {"c1": "r1", "c2": "r1", "c3": "r2"}
    assert rabbit_counts(["c3", "c1", "c2", "r2"], m) == {"r2": 1, "r1": 2}
    assert list(rabbit_counts(["c3", "c1"], m)) == ["r2", "r1"], "order of first use"
    assert rabbit_counts(["c1", "c1"], m) == {"r1": 1}, "a repeated host counts once"
    assert rabbit_counts([], m) == {}
    rmap = RabbitMap(KIND)
    assert rmap.counts("compute-[01-04],kind-worker3") == KIND_COUNTS
    assert rmap.counts(["compute-04", "compute-01"]) == {W3: 1, W2: 1}
    assert rmap.counts(iter(["compute-02"])) == {W2: 1}


def test_rabbit_counts_at_el_capitan_scale() -> None:
    hosts = [f"elcap{1001 + i}" for i in range(11136)]
    mapping = {h: f"elcap{201 + i // 16}" for i, h in enumerate(hosts)}
    counts = rabbit_counts([*hosts, "elcap201", "elcap896"], mapping)
    assert len(counts) == 696 and set(counts.values()) == {16}
    assert RabbitMap({"computes": mapping}).counts("elcap[1001-12136]") == counts
    out = allocation_sets(load("lustre_default"), counts)
    assert out[0]["storage"][0] == e("elcap201", 1) and len(out[0]["storage"]) == 696
    assert out[0]["allocationSize"] == 4 * GiB  # 1 TiB / 696 = 1.47 GiB, raised
    check_servers(storage_sets(load("lustre_default")), out, counts)
    rmap = RabbitMap({"computes": mapping})
    assert rmap.allocation_sets(load("lustre_default"), "elcap[201-896,1001-12136]") == out


@pytest.mark.parametrize(("hosts", "mapping", "message"), [
    (["c9"], {"c1": "r1"}, "compute node 'c9' is not attached to any rabbit"),
    (["c1", 3], {"c1": "r1"}, r"job hosts\[1\] is not a host name"),
    ("c1", {"c1": "r1"}, "job hosts must be a list of host names"),
    (["c1"], {"c1": 1}, "rabbitmapping: computes.c1 must name a rabbit"),
    (["c1"], ["c1"], "rabbitmapping must be an object"),
    (["c1"], {"computes": {"c1": "r"}, "rabbits": 2}, "'rabbits' must be an object"),
    ([{1, 2}], {}, "hosts: not JSON"),
])
def test_rabbit_count_errors(hosts: Any, mapping: Any, message: str) -> None:
    with pytest.raises(ServersError, match=message):
        rabbit_counts(hosts, mapping)


def test_rabbit_map_errors() -> None:
    with pytest.raises(ServersError, match="'computes' must map"):
        RabbitMap({"computes": []})
    with pytest.raises(ServersError, match="unbalanced brackets"):
        RabbitMap(KIND).counts("compute-[01")
    with pytest.raises(ServersError, match="NUL"):
        RabbitMap(KIND).counts("compute-01\0")
    with pytest.raises(ServersError, match="compute node 'x1' is not attached"):
        RabbitMap(KIND).allocation_sets(load("xfs"), "compute-01,x1")
    with pytest.raises(ServersError, match="min_allocation_bytes must be an integer"):
        RabbitMap(KIND).allocation_sets(load("xfs"), "compute-01", -4)


XFS = {"label": "xfs", "allocationStrategy": "AllocatePerCompute", "minimumCapacity": GiB}


@pytest.mark.parametrize(("storage", "counts", "message"), [
    ({"allocationSets": [{**XFS, "allocationStrategy": "AllocatePerServer"}]}, {"r": 1},
     r"allocation set 0 \(xfs\): allocationStrategy AllocatePerServer is not supported"),
    ({"allocationSets": [{**XFS, "allocationStrategy": "Nope"}]}, {"r": 1},
     "unknown allocationStrategy 'Nope'"),
    ({"allocationSets": [XFS, {"label": "ost"}]}, {"r": 1},
     "allocation set 1 needs a label, an allocationStrategy and an integer minimumCapacity"),
    ({"allocationSets": [{**XFS, "constraints": {"count": -2}}]}, {"r": 1},
     "constraints.count must be an integer >= 1"),
    ({"allocationSets": [{**XFS, "constraints": 5}]}, {"r": 1},
     "constraints must be an object"),
    ({"allocationSets": [XFS]}, {}, "the job has no compute nodes attached to rabbits"),
    ({"allocationSets": [XFS]}, {"r": True}, "rabbit 'r': node count must be an integer"),
    ({"allocationSets": [XFS]}, [["r", 1]], "rabbit counts must be an object"),
    ({"sets": []}, {"r": 1}, "status.storage must have an allocationSets list"),
    ({"allocationSets": [{**XFS, "allocationStrategy": "AllocateAcrossServers",
                          "constraints": {"count": 10**12}}]}, {"r": 1},
     "the allocations add up to more than 9223372036854775807 bytes"),
])
def test_allocation_errors(storage: Any, counts: Any, message: str) -> None:
    with pytest.raises(ServersError, match=message):
        allocation_sets(storage, counts)


def test_errors_are_breakdown_errors() -> None:
    with pytest.raises(BreakdownError):
        allocation_sets({}, {"r": 1})
    with pytest.raises(ServersError, match="min_allocation_bytes must be an integer"):
        allocation_sets({"allocationSets": [XFS]}, {"r": 1}, -1)


def natural(name: str) -> list[Any]:
    return [(0, int(p), len(p)) if p.isdigit() else (1, p, 0)
            for p in re.split(r"(\d+)", name) if p]


names = st.one_of(st.from_regex(r"\Ar[0-9]{1,3}\Z"), st.from_regex(r"\A[a-c]{1,2}[0-9]?\Z"))
counts_st = st.dictionaries(names, st.integers(1, 64), min_size=1, max_size=12)
LABELS = [("xfs", "AllocatePerCompute"), ("gfs2", "AllocatePerCompute"),
          ("raw", "AllocatePerCompute"), ("ost", "AllocateAcrossServers"),
          ("mdt", "AllocateAcrossServers"), ("mgtmdt", "AllocateAcrossServers"),
          ("mgt", "AllocateSingleServer")]
set_st = st.builds(
    lambda ls, cap, count: {"label": ls[0], "allocationStrategy": ls[1], "minimumCapacity": cap,
                            "constraints": {"count": count} if count else {}},
    st.sampled_from(LABELS), st.integers(1, 2**50), st.one_of(st.none(), st.integers(1, 40)))


@given(st.lists(set_st, min_size=1, max_size=4), counts_st,
       st.sampled_from([0, 1, GiB, 4 * GiB, 100 * GiB]), st.randoms())
def test_servers_always_pass_nnf_checks(sets: list[dict[str, Any]], counts: dict[str, int],
                                        minimum: int, rnd: Any) -> None:
    # labels are unique within a breakdown, as nnf-sos makes them
    by_label: dict[str, dict[str, Any]] = {}
    for s in sets:
        by_label.setdefault(s["label"], s)
    sets = list(by_label.values())
    out = allocation_sets({"allocationSets": sets}, counts, minimum)
    check_servers(sets, out, counts.keys(), minimum)
    total = sum(counts.values())
    busiest = sorted(counts, key=lambda r: (-counts[r], natural(r)))
    for bset, aset in zip(sets, out, strict=True):
        placed = {x["name"]: x["allocationCount"] for x in aset["storage"]}
        assert [x["name"] for x in aset["storage"]] == sorted(placed, key=natural)
        strategy, cap = bset["allocationStrategy"], bset["minimumCapacity"]
        count = bset["constraints"].get("count")
        if strategy == "AllocatePerCompute":
            assert placed == counts
            assert aset["allocationSize"] == max(minimum, cap)
        elif strategy == "AllocateSingleServer":
            assert placed == {busiest[0]: 1}
            assert aset["allocationSize"] == max(minimum, cap)
        elif count:
            assert sum(placed.values()) == count
            assert set(placed) == set(busiest[:count])
            assert max(placed.values()) - min(placed.values()) <= 1
            assert aset["allocationSize"] == max(minimum, -(-cap // count))
        else:
            g = reduce(math.gcd, counts.values())
            assert placed == {r: n // g for r, n in counts.items()}
            assert aset["allocationSize"] == max(minimum, -(-g * cap // total))
    # the result does not depend on the order of the counts
    shuffled = list(counts.items())
    rnd.shuffle(shuffled)
    assert allocation_sets({"allocationSets": sets}, dict(shuffled), minimum) == out


json_values = st.recursive(
    st.one_of(st.integers(-2**64, 2**64), st.floats(), st.text(max_size=8), st.booleans(),
              st.none()),
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=8), c,
                                                                   max_size=4)),
    max_leaves=16)


@given(st.one_of(json_values, st.fixed_dictionaries({"allocationSets": st.lists(
    st.one_of(json_values, set_st), max_size=3)})),
       st.one_of(json_values, counts_st), json_values, json_values)
def test_arbitrary_input_only_raises_servers_error(storage: Any, counts: Any, hosts: Any,
                                                   mapping: Any) -> None:
    for call in (lambda: allocation_sets(storage, counts),
                 lambda: rabbit_counts(hosts, mapping),
                 lambda: RabbitMap(mapping).counts(hosts if isinstance(hosts, (str, list))
                                                   else []),
                 lambda: RabbitMap(KIND).allocation_sets(storage, hosts if isinstance(
                     hosts, str) else "compute-[01-04]")):
        try:
            call()
        except ServersError as exc:
            assert str(exc)
