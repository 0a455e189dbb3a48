"""nnf-sos: checks of the Servers allocations a WLM wrote (§3.5).

``validate_allocations`` is validateServerAllocations, run at the start of
Setup; every failure is Fatal.  ``status_for`` is what the Servers
controller reports once the storage is allocated; ``reconcile_status`` is
that controller's step (dws_servers_controller.go): ``ready: false`` as
soon as a Servers exists, then every rabbit of the WLM's allocation sets
with ``allocationSize: 0`` until its storage is allocated.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flux_dws.dwsim import resource_error as rerr

NOT_MET = "Allocation request does not meet directive requirements"
NOT_SATISFIED = "storage directive requirements were not satisfied"


def validate_allocations(breakdown_sets: list[dict[str, Any]],
                         servers_spec: dict[str, Any],
                         storages: Iterable[str]) -> None:
    """Raise ResourceError unless the Servers spec satisfies the breakdown."""
    wanted = servers_spec.get("allocationSets") or []
    if len(wanted) != len(breakdown_sets):
        raise rerr.wlm(NOT_MET)
    known = set(storages)
    by_label = {s.get("label"): s for s in wanted}
    for bset in breakdown_sets:
        got = by_label.get(bset["label"])
        if got is None:
            raise rerr.wlm(NOT_SATISFIED)
        entries = got.get("storage") or []
        size = got.get("allocationSize", 0)
        strategy = bset["allocationStrategy"]
        if strategy == "AllocateSingleServer" and (
                len(entries) != 1 or entries[0].get("allocationCount") != 1):
            raise rerr.wlm(NOT_SATISFIED)
        if strategy == "AllocateAcrossServers":
            total = sum(size * e.get("allocationCount", 0) for e in entries)
            if total < bset["minimumCapacity"]:
                raise rerr.wlm(NOT_SATISFIED)
        elif size < bset["minimumCapacity"]:
            raise rerr.wlm(NOT_SATISFIED)
        for e in entries:
            if e.get("name") not in known:
                raise rerr.internal(NOT_SATISFIED)


TOO_MANY_CLIENTS = "invalid matching between clients and storage. Too many clients for storage"


def short_rabbits(servers_spec: dict[str, Any], served: dict[str, int]) -> list[str]:
    """The rabbits given fewer allocations than the job has computes on
    them (``served``: rabbit -> its computes in the job).  nnf-sos maps
    each compute to one allocation of its rabbit and fails the computes'
    NnfAccess with TOO_MANY_CLIENTS when one runs out
    (nnf_access_controller.go, mapClientLocalStorage)."""
    given: dict[str, int] = {}
    for aset in servers_spec.get("allocationSets") or []:
        for e in aset.get("storage") or []:
            name = str(e.get("name"))
            given[name] = given.get(name, 0) + int(e.get("allocationCount") or 0)
    return sorted(r for r, count in given.items() if served.get(r, 0) > count)


def status_for(servers_spec: dict[str, Any], ready: bool) -> list[dict[str, Any]]:
    """Servers status.allocationSets: per rabbit, the bytes allocated."""
    out = []
    for aset in servers_spec.get("allocationSets") or []:
        storage = {}
        for e in aset.get("storage") or []:
            allocated = aset.get("allocationSize", 0) * e.get("allocationCount", 0)
            storage[e["name"]] = {"allocationSize": allocated if ready else 0, "ready": ready}
        out.append({"label": aset.get("label"), "storage": storage})
    return out


def reconcile_status(spec: dict[str, Any], status: dict[str, Any],
                     allocated: dict[str, dict[str, int]] | None,
                     now: str) -> dict[str, Any] | None:
    """nnf-sos' Servers controller: the new status, or None if unchanged.

    ``allocated`` is None while the NnfStorage of the same name does not
    exist (before Setup allocated it, after Teardown deleted it); else, per
    allocation-set label, the bytes allocated on each rabbit so far (0 or
    missing: not yet).  ``now`` is the MicroTime written to ``lastUpdate``
    whenever the status changes.  ``ready`` goes true once every rabbit has
    its allocation and never back.
    """
    sets = spec.get("allocationSets") or []
    if not sets:
        if status.get("lastUpdate"):
            return None
        return {**status, "ready": False, "lastUpdate": now}
    cleared = [{"label": s.get("label", ""),
                "storage": {e["name"]: {"allocationSize": 0, "ready": False}
                            for e in s.get("storage") or [] if "name" in e}}
               for s in sets]
    ready = bool(status.get("ready")) and bool(status.get("allocationSets"))
    if allocated is not None:
        all_there = True
        for aset in cleared:
            got = allocated.get(aset["label"]) or {}
            for rabbit in aset["storage"]:
                size = int(got.get(rabbit, 0))
                aset["storage"][rabbit] = {"allocationSize": size, "ready": size > 0}
                all_there = all_there and size > 0
        ready = ready or all_there
    new = {**status, "ready": ready, "allocationSets": cleared}
    if new == status:
        return None
    new["lastUpdate"] = now
    return new
