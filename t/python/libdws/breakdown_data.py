"""Shared data and checks for the breakdown and Servers tests.

``load(name)`` reads a DirectiveBreakdown from data/breakdowns/<name>.yaml.
``check_servers`` applies what nnf-sos checks of a Servers spec at Setup
(doc/guide/emulator.rst, Controllers; through the emulator's
``dwsim.servers.validate_allocations``) plus the Servers CRD's own field
rules and the minimum allocation size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from flux_dws.dwsim import servers as nnf_servers

DATA = Path(__file__).parent / "data" / "breakdowns"
GiB = 1 << 30
INT64_MAX = (1 << 63) - 1


def load(name: str) -> dict[str, Any]:
    with open(DATA / f"{name}.yaml") as f:
        doc: dict[str, Any] = yaml.safe_load(f)
    return doc


def storage_sets(breakdown: dict[str, Any]) -> list[dict[str, Any]]:
    sets: list[dict[str, Any]] = breakdown["status"]["storage"]["allocationSets"]
    return sets


def check_servers(bsets: list[dict[str, Any]], spec_sets: list[dict[str, Any]],
                  rabbits: set[str] | Any, min_bytes: int = 4 * GiB) -> None:
    """Raise unless nnf-sos would accept the spec (and the CRD would)."""
    nnf_servers.validate_allocations(bsets, {"allocationSets": spec_sets}, rabbits)
    assert [s["label"] for s in spec_sets] == [s["label"] for s in bsets]
    for bset, aset in zip(bsets, spec_sets, strict=True):
        size = aset["allocationSize"]
        assert isinstance(size, int) and min_bytes <= size and size >= 1
        assert aset["storage"], "every set names at least one rabbit"
        names = [e["name"] for e in aset["storage"]]
        assert len(names) == len(set(names)), "a rabbit appears once per set"
        total = 0
        for e in aset["storage"]:
            assert isinstance(e["allocationCount"], int) and e["allocationCount"] >= 1
            total += size * e["allocationCount"]
        assert total <= INT64_MAX, "nnf-sos sums sizes in int64"
        if bset["allocationStrategy"] == "AllocateAcrossServers":
            assert total >= bset["minimumCapacity"]
        else:
            assert size >= bset["minimumCapacity"]
