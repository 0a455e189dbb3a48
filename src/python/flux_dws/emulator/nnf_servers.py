"""nnf-sos' Servers controller (dws_servers_controller.go) for the emulator.

Every Servers object -- a jobdw's or create_persistent's, or one an
NnfSystemStorage made -- gets ``status.ready: false`` (and ``lastUpdate``)
as soon as it exists; once its allocation sets are filled, every rabbit of
them is listed with ``allocationSize: 0`` until the NnfStorage of the same
name has its allocations, and again after that NnfStorage is deleted.  The
decision is dwsim.servers.reconcile_status; this module reads the store and
writes the status back.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from flux_dws.dwsim import servers as nnf_servers
from flux_dws.dwsim.gotime import microtime
from flux_dws.emulator.api_resources import BY_GROUP_PLURAL, DWS, NNF
from flux_dws.emulator.store import ApiError, Store

SERVERS = BY_GROUP_PLURAL[(DWS, "servers")]
NNF_STORAGE = BY_GROUP_PLURAL[(NNF, "nnfstorages")]


def allocated(nnf_storage: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per allocation-set name, the bytes an NnfStorage holds on each rabbit
    (nothing until it is ready)."""
    out: dict[str, dict[str, int]] = {}
    ready = bool((nnf_storage.get("status") or {}).get("ready"))
    for aset in (nnf_storage.get("spec") or {}).get("allocationSets") or []:
        per = out.setdefault(str(aset.get("name", "")), {})
        for node in aset.get("nodes") or []:
            size = int(aset.get("capacity", 0)) * int(node.get("count", 1)) if ready else 0
            per[node["name"]] = per.get(node["name"], 0) + size
    return out


def reconcile(store: Store, ns: str, name: str) -> None:
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
