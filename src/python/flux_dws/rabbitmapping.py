"""Build the rabbitmapping document from DWS objects.

The rabbitmapping is the JSON file Fluxion's graph generator (``flux
dws2jgf``) and ``flux getrabbit`` read::

    {"computes": {"<compute>": "<rabbit>", ...},
     "rabbits": {"<rabbit>": {"capacity": <bytes>, "hostlist": "<RFC 29>"}, ...}}

It is derived from three kinds of DWS object (all plain dicts here, so the
builder is a pure function that tests feed directly):

- SystemConfiguration ``default/default``: ``spec.storageNodes[]`` of type
  Rabbit, each with ``computesAccess[].name``; the hostlist keeps the listed
  order.  A compute listed under two rabbits is an error naming both.
- Storage (one per rabbit): ``status.capacity`` in bytes.  A rabbit whose
  Storage is missing or reports no capacity gets the largest capacity seen
  (rabbits are built alike; a down rabbit is reported by its status, not by
  shrinking the graph); with no capacity anywhere that is an error.
- Servers: unless ``ignore_external`` is set, every Servers object whose name
  does not start with ``fluxjob-`` (storage held outside Flux, e.g. persistent
  file systems made by hand) reduces each rabbit it names by
  ``allocationSize * allocationCount``, floored at 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flux_dws.hostlist import Hostlist

RABBIT_STORAGE_TYPE = "Rabbit"
FLUX_WORKFLOW_PREFIX = "fluxjob-"


class MappingError(Exception):
    """The DWS objects do not describe a consistent rabbit mapping."""


def build_mapping(
    sysconfig: dict[str, Any],
    storages: Iterable[dict[str, Any]],
    servers: Iterable[dict[str, Any]] = (),
    ignore_external: bool = False,
) -> dict[str, Any]:
    """Return the rabbitmapping dict for these DWS objects."""
    rabbit_computes = _rabbit_computes(sysconfig)
    capacities = _capacities(storages, rabbit_computes)
    if not ignore_external:
        for rabbit, used in _external_allocations(servers).items():
            if rabbit in capacities:
                capacities[rabbit] = max(0, capacities[rabbit] - used)
    computes: dict[str, str] = {}
    rabbits: dict[str, dict[str, Any]] = {}
    for rabbit, hosts in rabbit_computes.items():
        for host in hosts:
            computes[host] = rabbit
        rabbits[rabbit] = {
            "capacity": capacities[rabbit],
            "hostlist": Hostlist(hosts).encode(),
        }
    return {"computes": computes, "rabbits": rabbits}


def _rabbit_computes(sysconfig: dict[str, Any]) -> dict[str, list[str]]:
    spec = sysconfig.get("spec")
    if not isinstance(spec, dict):
        raise MappingError("SystemConfiguration has no spec")
    nodes = spec.get("storageNodes")
    if nodes is None:
        nodes = []
    if not isinstance(nodes, list):
        raise MappingError("SystemConfiguration spec.storageNodes is not a list")
    owner: dict[str, str] = {}
    result: dict[str, list[str]] = {}
    for i, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("name"), str):
            raise MappingError(f"SystemConfiguration spec.storageNodes[{i}] has no name")
        if node.get("type", RABBIT_STORAGE_TYPE) != RABBIT_STORAGE_TYPE:
            continue
        rabbit = node["name"]
        if rabbit in result:
            raise MappingError(f"rabbit '{rabbit}' is listed twice in SystemConfiguration")
        hosts: list[str] = []
        for j, access in enumerate(node.get("computesAccess") or []):
            name = access.get("name") if isinstance(access, dict) else None
            if not isinstance(name, str) or not name:
                raise MappingError(
                    f"SystemConfiguration spec.storageNodes[{i}].computesAccess[{j}] has no name"
                )
            if name in owner:
                raise MappingError(
                    f"compute node '{name}' is attached to two rabbits: "
                    f"'{owner[name]}' and '{rabbit}'"
                )
            owner[name] = rabbit
            hosts.append(name)
        result[rabbit] = hosts
    return result


def _capacities(
    storages: Iterable[dict[str, Any]], rabbits: dict[str, list[str]]
) -> dict[str, int]:
    seen: dict[str, int] = {}
    for storage in storages:
        name = storage.get("metadata", {}).get("name")
        status = storage.get("status")
        capacity = status.get("capacity") if isinstance(status, dict) else None
        if isinstance(name, str) and isinstance(capacity, int) and capacity > 0:
            seen[name] = capacity
    known = [seen[r] for r in rabbits if r in seen]
    if rabbits and not known:
        raise MappingError("no Storage object reports a capacity for any rabbit")
    fallback = max(known, default=0)
    return {r: seen.get(r, fallback) for r in rabbits}


def _external_allocations(servers: Iterable[dict[str, Any]]) -> dict[str, int]:
    used: dict[str, int] = {}
    for server in servers:
        name = server.get("metadata", {}).get("name", "")
        if not isinstance(name, str) or name.startswith(FLUX_WORKFLOW_PREFIX):
            continue
        spec = server.get("spec") or {}
        for aset in spec.get("allocationSets") or []:
            size = aset.get("allocationSize", 0)
            for entry in aset.get("storage") or []:
                rabbit = entry.get("name")
                count = entry.get("allocationCount", 0)
                if isinstance(rabbit, str) and isinstance(size, int) and isinstance(count, int):
                    used[rabbit] = used.get(rabbit, 0) + size * count
    return used
