"""nnf-sos' Servers controller (dws_servers_controller.go) for the emulator.

Every Servers object -- a jobdw's or create_persistent's, or one an
NnfSystemStorage made -- gets ``status.ready: false`` (and ``lastUpdate``)
as soon as it exists; once its allocation sets are filled, every rabbit of
them is listed with ``allocationSize: 0`` until the NnfStorage of the same
name has its allocations on that rabbit, and again after that NnfStorage is
deleted.  The decision is dwsim.servers.reconcile_status; this module reads
the store and writes the status back.

nnf-sos reads each rabbit's allocations from its NnfNodeStorage objects;
the emulator keeps the rabbits whose allocations are not ready yet in one
annotation of the NnfStorage (``PENDING``, comma-separated; absent once
the NnfStorage is ready, or when it never had a late rabbit).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL, DWS, NNF
from flux_dws.apiserver.store import ApiError, StoreApi
from flux_dws.dwsim import servers as nnf_servers
from flux_dws.dwsim.gotime import microtime

SERVERS = BY_GROUP_PLURAL[(DWS, "servers")]
NNF_STORAGE = BY_GROUP_PLURAL[(NNF, "nnfstorages")]


#: the NnfStorage annotation naming the rabbits whose allocations are late
PENDING = "emulator.flux-dws.io/allocations-pending"


def pending_rabbits(nnf_storage: dict[str, Any]) -> frozenset[str] | None:
    """The rabbits whose allocations of an NnfStorage that is not ready are
    not ready either (None: the NnfStorage says nothing per rabbit)."""
    text = ((nnf_storage.get("metadata") or {}).get("annotations") or {}).get(PENDING)
    return frozenset(r for r in text.split(",") if r) if isinstance(text, str) else None


def allocated(nnf_storage: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per allocation-set name, the bytes an NnfStorage holds on each rabbit
    (all once it is ready; before, those of the rabbits not pending)."""
    out: dict[str, dict[str, int]] = {}
    ready = bool((nnf_storage.get("status") or {}).get("ready"))
    pending = None if ready else pending_rabbits(nnf_storage)
    for aset in (nnf_storage.get("spec") or {}).get("allocationSets") or []:
        per = out.setdefault(str(aset.get("name", "")), {})
        for node in aset.get("nodes") or []:
            there = ready or (pending is not None and node["name"] not in pending)
            size = int(aset.get("capacity", 0)) * int(node.get("count", 1)) if there else 0
            per[node["name"]] = per.get(node["name"], 0) + size
    return out


def reconcile(store: StoreApi, ns: str, name: str) -> None:
    """Bring the Servers ``ns/name``'s status up to date."""
    try:
        srv = store.get(SERVERS, ns, name)
    except ApiError:
        return
    if srv["metadata"].get("deletionTimestamp"):
        return
    try:
        got: dict[str, dict[str, int]] | None = allocated(store.get(NNF_STORAGE, ns, name))
    except ApiError:
        got = None
    status = srv.get("status") or {}
    new = nnf_servers.reconcile_status(srv.get("spec") or {}, status, got,
                                       microtime(dt.datetime.now(dt.timezone.utc)))
    if new is not None:
        store.patch(SERVERS, ns, name, "merge", {"metadata": {
            "resourceVersion": srv["metadata"]["resourceVersion"]}, "status": new}, "status")
