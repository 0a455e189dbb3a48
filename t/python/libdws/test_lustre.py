"""Lustre on the rabbits Fluxion chooses (libdws lustre.h) through cffi.

Every placement is checked against nnf-sos' Servers checks as the emulator
implements them (dwsim.servers.validate_allocations), against Fluxion's
reservation (no rabbit gets more than Fluxion allocated on it) and, when
the reservation allows it, for equal capacity per rabbit.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flux_dws.dwsim import breakdown as nnf
from flux_dws.dwsim import servers as nnf_servers
from flux_dws.libdws import lustre

GiB = 1 << 30
TiB = 1 << 40
NODE4 = [{"type": "node", "count": 4, "with": [
    {"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}]}]


def lustre_sets(capacity: str, profile: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return nnf.storage_breakdown(f"#DW jobdw type=lustre capacity={capacity} name=l",
                                 profile or {})


def ready(sets: list[dict[str, Any]]) -> dict[str, Any]:
    return {"status": {"ready": True, "storage": {"allocationSets": sets}}}


def per_rabbit(out: list[dict[str, Any]], label: str = "ost") -> dict[str, int]:
    got: dict[str, int] = {}
    for s in out:
        if s["label"] == label:
            for e in s["storage"]:
                got[e["name"]] = got.get(e["name"], 0) + s["allocationSize"] * e["allocationCount"]
    return got


def used(out: list[dict[str, Any]]) -> dict[str, int]:
    got: dict[str, int] = {}
    for s in out:
        for e in s["storage"]:
            got[e["name"]] = got.get(e["name"], 0) + s["allocationSize"] * e["allocationCount"]
    return got


def test_rewrite_spreads_lustre_only_node_jobs() -> None:
    sets = lustre_sets("200TiB")
    res, spread = lustre.rewrite(NODE4, [ready(sets)], {"spread": True})
    assert spread
    assert res is not None and res[0] == NODE4[0]
    ssd = res[1]
    assert ssd["type"] == "ssd" and ssd["exclusive"] is True
    assert ssd["count"] >= 200 * 1024


def test_rewrite_off_switch_and_mixed_jobs_stay_node_local() -> None:
    sets = lustre_sets("1TiB")
    res, spread = lustre.rewrite(NODE4, [ready(sets)])
    assert not spread and res is not None and res[0]["type"] == "slot"
    xfs = nnf.storage_breakdown("#DW jobdw type=xfs capacity=10GiB name=x", {})
    res, spread = lustre.rewrite(NODE4, [ready(sets), ready(xfs)], {"spread": True})
    assert not spread and res is not None and res[0]["label"] == "rabbit"


def test_bad_config_is_refused() -> None:
    with pytest.raises(lustre.LustreError, match=r"rabbit\.lustre\.spred: unknown key"):
        lustre.rewrite(NODE4, [ready(lustre_sets("1TiB"))], {"spred": True})


def test_reserved_of_R() -> None:
    R = {"version": 1, "execution": {"R_lite": [], "nodelist": ["c1"]}, "scheduling": {"graph": {
        "nodes": [
            {"id": "1", "metadata": {"type": "chassis", "properties": {"rabbit": "r1"},
                                     "paths": {"containment": "/c/chassis0"}}},
            {"id": "2", "metadata": {"type": "ssd", "size": 793,
                                     "paths": {"containment": "/c/chassis0/ssd1"}}},
            {"id": "3", "metadata": {"type": "ssd", "size": 793,
                                     "paths": {"containment": "/c/chassis0/ssd2"}}}],
        "edges": []}}}
    assert lustre.reserved_of_R(R) == {"r1": 1586}


@pytest.mark.parametrize("profile", [
    {},
    {"lustreStorage": {"combinedMgtMdt": True}},
    {"lustreStorage": {"mgtOptions": {"externalMgs": "1.2.3.4@tcp"}}},
    {"lustreStorage": {"mdtOptions": {"count": 3}}},
])
def test_equal_osts_pass_nnf_sos(profile: dict[str, Any]) -> None:
    sets = lustre_sets("200TiB", profile)
    reserved = {f"r{i}": 28 * 1024 for i in range(1, 10)}  # nine 28 TiB reservations
    out = lustre.allocation_sets(sets, reserved, {"mdts": 2})
    nnf_servers.validate_allocations(sets, {"allocationSets": out}, reserved)
    osts = per_rabbit(out)
    assert len(osts) == 9 and len(set(osts.values())) == 1
    for name, b in used(out).items():
        assert b <= reserved[name] * GiB


def test_min_max_rabbits() -> None:
    sets = lustre_sets("100TiB")
    reserved = {f"r{i}": 28 * 1024 for i in range(1, 10)}
    out = lustre.allocation_sets(sets, reserved, {"max_rabbits": 4})
    assert len(per_rabbit(out)) == 4
    out = lustre.allocation_sets(sets, reserved, {"osts_per_mdt": 2})
    assert len(per_rabbit(out, "mdt")) == math.ceil(len(per_rabbit(out)) / 2)


def test_too_little_reserved_is_refused() -> None:
    with pytest.raises(lustre.LustreError, match="too little for"):
        lustre.allocation_sets(lustre_sets("100TiB"), {"r1": 1024})


@settings(max_examples=300, deadline=None)
@given(cap_gib=st.integers(1, 600 * 1024),
       reserved=st.dictionaries(st.sampled_from([f"r{i}" for i in range(40)]),
                                st.integers(1, 36).map(lambda n: n * 793), min_size=1,
                                max_size=40),
       profile=st.sampled_from([{}, {"lustreStorage": {"combinedMgtMdt": True}}]),
       conf=st.fixed_dictionaries({"min_rabbits": st.integers(1, 4),
                                   "max_rabbits": st.sampled_from([0, 4, 16]),
                                   "osts_per_mdt": st.sampled_from([0, 1, 8])}))
def test_any_reservation_either_fits_or_is_refused(cap_gib: int, reserved: dict[str, int],
                                                   profile: dict[str, Any],
                                                   conf: dict[str, int]) -> None:
    sets = lustre_sets(f"{cap_gib}GiB", profile)
    try:
        out = lustre.allocation_sets(sets, reserved, conf)
    except lustre.LustreError as e:
        assert "too little" in str(e) or "MDT/MGT share" in str(e) or "no room" in str(e)
        # refused only when the reservation is truly too small
        assert sum(reserved.values()) * GiB < sum(s["minimumCapacity"] for s in sets) + \
            len(sets) * 4 * GiB + max(reserved.values()) * GiB
        return
    nnf_servers.validate_allocations(sets, {"allocationSets": out}, reserved)
    for name, b in used(out).items():
        assert b <= reserved[name] * GiB, (name, b, reserved[name])
