"""What the rabbit-health code needs to know of an instance's resources.

From R (RFC 20, with the Fluxion graph flux dws2jgf wrote in its
``scheduling`` key) and the broker's configuration, pure functions that
compute:

- ``graph_index``: the paths of each rabbit's ssd vertices and of each
  compute node in Fluxion's graph (``{"ssds": {rabbit: [path]}, "nodes":
  {host: path}, "ssd_gib": {rabbit: GiB}}``, the last, where the graph
  gives vertex sizes, the size of the rabbit's smallest ssd vertex).  A
  chassis vertex carries its rabbit's name in ``properties.rabbit``; its
  ssd vertices are its children.
- ``decode_lean``: JSON text (R, or an answer carrying it) decoded with
  the graph cut down as it is read to the vertices ``graph_index`` reads.
  R's graph holds every core and GPU and every containment edge: on El
  Capitan over a million vertices, which decoded whole would be gigabytes
  of Python objects held at once for the few ten thousand wanted.
- ``drainable_hosts``: the hosts that may be drained when drains are limited
  to some queues (``rabbit.drain_queues``, ``--drain-queues``): drain queues
  name node properties, as the reference's do, so a host may be drained
  when its properties include any of them (flux-core's constraint
  ``{"properties": [Q]}`` for each Q), whatever ``[queues]`` says.

No I/O: the service's Flux watcher thread calls them on what it read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.idset import IDset


class ResourceError(ValueError):
    """R or the queue configuration is not what it should be (named)."""


#: the vertex types graph_index reads (decode_lean keeps only these)
INDEXED_TYPES = frozenset(("chassis", "ssd", "node", "storage_node"))


def _lean(obj: dict[str, Any]) -> Any:
    """json object_hook: a graph vertex of a type not indexed, and an edge,
    become None; a kept vertex keeps only its metadata.  The decoder calls
    it on each object as it is made, so no more than one unwanted vertex
    exists at a time."""
    meta = obj.get("metadata")
    if "id" in obj and isinstance(meta, dict) and isinstance(meta.get("paths"), dict) \
            and isinstance(meta.get("type"), str):
        return {"metadata": meta} if meta["type"] in INDEXED_TYPES else None
    if "source" in obj and "target" in obj and len(obj) <= 3:
        return None
    return obj


def decode_lean(text: str | bytes) -> Any:
    """Decode JSON text whose R graph only feeds graph_index (raises
    ValueError as json.loads does)."""
    return json.loads(text, object_hook=_lean)


def _containment(vertex: Mapping[str, Any]) -> str | None:
    meta = vertex.get("metadata") or {}
    paths = meta.get("paths") or {}
    path = paths.get("containment") if isinstance(paths, dict) else None
    return path if isinstance(path, str) else None


def graph_index(R: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Paths of the rabbits' ssd vertices and of the node vertices.

    An R without a scheduling graph gives empty maps (Fluxion then builds
    its graph from R itself: no ssd vertices, node paths ``/cluster0/<host>``)."""
    ssds: dict[str, list[str]] = {}
    nodes: dict[str, str] = {}
    ssd_gib: dict[str, int] = {}
    graph = ((R or {}).get("scheduling") or {}).get("graph") or {}
    vertices = graph.get("nodes") if isinstance(graph, dict) else None
    if not isinstance(vertices, list):
        return {"ssds": ssds, "nodes": nodes}
    chassis: dict[str, str] = {}  # chassis path -> rabbit
    ssd_paths: list[str] = []
    sizes: dict[str, int] = {}  # ssd path -> GiB
    for v in vertices:
        if not isinstance(v, dict):
            continue
        meta = v.get("metadata") or {}
        vtype = meta.get("type")
        path = _containment(v)
        if path is None:
            continue
        if vtype == "chassis":
            rabbit = (meta.get("properties") or {}).get("rabbit")
            if isinstance(rabbit, str) and rabbit:
                chassis[path] = rabbit
        elif vtype == "ssd":
            ssd_paths.append(path)
            size = meta.get("size")
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                sizes[path] = size
        elif vtype in ("node", "storage_node"):
            name = meta.get("name")
            if isinstance(name, str):
                nodes[name] = path
    for path in ssd_paths:
        rabbit = chassis.get(path.rsplit("/", 1)[0])
        if rabbit is not None:
            ssds.setdefault(rabbit, []).append(path)
            if path in sizes:
                ssd_gib[rabbit] = min(ssd_gib.get(rabbit, sizes[path]), sizes[path])
    for paths in ssds.values():
        paths.sort(key=_natural)
    index: dict[str, dict[str, Any]] = {"ssds": ssds, "nodes": nodes}
    if ssd_gib:
        index["ssd_gib"] = ssd_gib
    return index


def _natural(path: str) -> tuple[str, int]:
    head = path.rstrip("0123456789")
    tail = path[len(head):]
    return head, int(tail) if tail else -1


def host_properties(R: Mapping[str, Any], hosts_by_rank: Sequence[str]) -> dict[str, set[str]]:
    """property -> hosts, from R's ``execution.properties`` ({prop: idset})."""
    props = ((R or {}).get("execution") or {}).get("properties") or {}
    if not isinstance(props, dict):
        raise ResourceError("R execution.properties must be an object")
    out: dict[str, set[str]] = {}
    for prop, ids in props.items():
        if not isinstance(ids, str):
            raise ResourceError(f"R execution.properties.{prop} must be an idset string")
        try:
            ranks = list(IDset(ids))
        except ValueError as exc:
            raise ResourceError(f"R execution.properties.{prop}: {exc}") from None
        out[prop] = {hosts_by_rank[r] for r in ranks if r < len(hosts_by_rank)}
    return out


def drainable_hosts(drain_queues: Iterable[str] | None, R: Mapping[str, Any],
                    hosts_by_rank: Sequence[str]) -> str | None:
    """The hosts whose properties include any of the drain queues, as an
    RFC 29 hostlist ("" when none has any), or None when drains are not
    limited to queues."""
    if not drain_queues:
        return None
    props = host_properties(R, hosts_by_rank)
    chosen: set[str] = set()
    for q in drain_queues:
        chosen |= props.get(q, set())
    return str(Hostlist(sorted(chosen, key=hosts_by_rank.index))) if chosen else ""
