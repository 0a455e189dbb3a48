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
- Storage (one per rabbit): the rabbit's *total* bytes are the sum of
  ``status.devices[].capacity``; ``status.capacity`` is its *free* bytes
  (DWS #284), which already lack every allocation -- Flux's own too, which
  Fluxion accounts for itself -- so it is not what the graph is built from.
  A Storage that lists no device capacity (an older DWS) gives its
  ``status.capacity`` as the total.  A rabbit whose Storage is missing or
  reports no capacity gets the largest total seen (rabbits are built alike;
  a down rabbit is reported by its status, not by shrinking the graph); with
  no capacity anywhere that is an error.
- Servers: unless ``ignore_external`` is set, every Servers object whose name
  does not start with ``fluxjob-`` (storage held outside Flux, e.g. persistent
  file systems or an NnfSystemStorage) reduces each rabbit's total it names by
  ``allocationSize * allocationCount``, once, floored at 0.

The capacity written is the total less the external allocations.  When that
is below the free space the Storage reports, the two disagree (an external
Servers whose storage is not, or no longer, allocated; drives the Storage
does not list): ``build_mapping`` says so in ``warnings`` and the mapping
keeps the smaller figure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flux_dws.libdws.hostlist import Hostlist

RABBIT_STORAGE_TYPE = "Rabbit"
FLUX_WORKFLOW_PREFIX = "fluxjob-"


class MappingError(Exception):
    """The DWS objects do not describe a consistent rabbit mapping."""


@dataclass(frozen=True)
class StorageSpace:
    """What one rabbit's Storage says of its space, in bytes."""

    total: int        # the sum of status.devices[].capacity (else status.capacity)
    free: int | None  # status.capacity; None when not reported


def storage_space(storage: dict[str, Any]) -> StorageSpace | None:
    """The total and free bytes a Storage reports; None when it reports no
    capacity at all (no positive device capacity, no positive
    status.capacity)."""
    status = storage.get("status")
    if not isinstance(status, dict):
        return None
    free = status.get("capacity")
    if not isinstance(free, int) or isinstance(free, bool) or free < 0:
        free = None
    total = 0
    for dev in status.get("devices") or []:
        cap = dev.get("capacity") if isinstance(dev, dict) else None
        if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0:
            total += cap
    if total == 0:
        if not free:
            return None
        total = free  # no devices listed: an older DWS, whose figure is the size
    return StorageSpace(total, free)


def capacity_warning(rabbit: str, total: int, external: int, free: int) -> str:
    """The warning for a rabbit whose total less external allocations is
    below the free space its Storage reports."""
    return (f"rabbit {rabbit}: its total ({total} bytes) less external allocations"
            f" ({external} bytes) is {total - external} bytes, below the free space its"
            f" Storage reports ({free} bytes); using {max(0, total - external)}")


def build_mapping(
    sysconfig: dict[str, Any],
    storages: Iterable[dict[str, Any]],
    servers: Iterable[dict[str, Any]] = (),
    ignore_external: bool = False,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """Return the rabbitmapping dict for these DWS objects; a warning for
    each rabbit whose figures disagree is appended to ``warnings``."""
    rabbit_computes = _rabbit_computes(sysconfig)
    spaces = _spaces(storages)
    capacities = _capacities(spaces, rabbit_computes)
    external = {} if ignore_external else _external_allocations(servers)
    for rabbit in capacities:
        used = external.get(rabbit, 0)
        space = spaces.get(rabbit)
        if space is not None and space.free is not None and space.total - used < space.free:
            if warnings is not None:
                warnings.append(capacity_warning(rabbit, space.total, used, space.free))
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


def _spaces(storages: Iterable[dict[str, Any]]) -> dict[str, StorageSpace]:
    out: dict[str, StorageSpace] = {}
    for storage in storages:
        name = (storage.get("metadata") or {}).get("name")
        space = storage_space(storage)
        if isinstance(name, str) and space is not None:
            out[name] = space
    return out


def _capacities(spaces: dict[str, StorageSpace], rabbits: dict[str, list[str]]
                ) -> dict[str, int]:
    """Each rabbit's total; the largest known for those without one."""
    seen = {name: space.total for name, space in spaces.items()}
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
