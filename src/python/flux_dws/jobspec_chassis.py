"""The jobspec rewrite behind ``--coral2-chassis`` and ``--coral2-rabbit-cores``.

A Rabbit system's Fluxion graph (flux-dws2jgf(1)) hangs the compute nodes
that share a Rabbit under a ``chassis`` vertex.  ``--coral2-chassis=N``
asks for the job's nodes spread evenly over N chassis, so the job gets N
Rabbits' worth of storage bandwidth: the top-level ``node`` request becomes
``chassis(count=N){node(count=nodes/N){...}}``.  ``--coral2-rabbit-cores=C``
(experimental) also asks, in each chassis, for C exclusive cores of the
Rabbit itself (``storage_node(count=1){core(count=C, exclusive)}``) and
sets ``attributes.system.allow_rabbits``.

Everything here is pure: the CLI plugin (etc/cli/plugins/chassis.py) reads
the options and the instance's R, and calls these functions.

    >>> rewrite_resources([{"type": "node", "count": 4, "with": [...]}], chassis=2)
    [{'type': 'chassis', 'count': 2, 'with': [{'type': 'node', 'count': 2, 'with': [...]}]}]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from flux_dws.errors import DwsError

CHASSIS_OPTION = "--coral2-chassis"
RABBIT_CORES_OPTION = "--coral2-rabbit-cores"

__all__ = [
    "CHASSIS_OPTION",
    "RABBIT_CORES_OPTION",
    "ChassisError",
    "check_options",
    "has_scheduling",
    "rewrite_jobspec",
    "rewrite_resources",
]


class ChassisError(DwsError, ValueError):
    """The chassis options cannot be applied (the message is one line that
    names the option and what is wrong).  A ValueError, as flux-core's CLI
    plugin interface asks of plugins that refuse their input."""


def _positive(value: Any, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ChassisError(f"{option} must be a positive integer, not {value!r}")
    return value


def check_options(chassis: Any, rabbit_cores: Any, nodes: Any) -> None:
    """Check the option values before the jobspec exists.

    ``nodes`` is the value of ``-N, --nodes`` as the command parsed it (None
    when not given; flux-core keeps it as a string, possibly a range).
    """
    if chassis is None:
        if rabbit_cores is not None:
            _positive(rabbit_cores, RABBIT_CORES_OPTION)
            raise ChassisError(f"{RABBIT_CORES_OPTION} requires {CHASSIS_OPTION}")
        return
    n = _positive(chassis, CHASSIS_OPTION)
    if rabbit_cores is not None:
        _positive(rabbit_cores, RABBIT_CORES_OPTION)
    if nodes is None:
        raise ChassisError(f"{CHASSIS_OPTION} requires -N, --nodes")
    try:
        count = int(nodes)
    except (TypeError, ValueError):
        raise ChassisError(
            f"{CHASSIS_OPTION} requires a fixed node count, not -N {nodes}"
        ) from None
    if count % n != 0:
        raise ChassisError(
            f"{CHASSIS_OPTION}={n}: the node count {count} is not a multiple of {n}"
        )


def has_scheduling(R: Any, config: Any = None) -> bool:
    """True if the instance schedules on a Fluxion graph: its R (the KVS
    ``resource.R``) carries an RFC 20 ``scheduling`` key, or its config sets
    ``resource.scheduling``."""
    if isinstance(R, Mapping) and R.get("scheduling"):
        return True
    resource = config.get("resource") if isinstance(config, Mapping) else None
    return isinstance(resource, Mapping) and bool(resource.get("scheduling"))


def rewrite_resources(
    resources: Sequence[Mapping[str, Any]], chassis: int, rabbit_cores: int | None = None
) -> list[dict[str, Any]]:
    """A copy of ``resources`` with the top-level node request spread over
    ``chassis`` chassis (and, with ``rabbit_cores``, a storage_node with that
    many exclusive cores in each chassis)."""
    n = _positive(chassis, CHASSIS_OPTION)
    if rabbit_cores is not None:
        _positive(rabbit_cores, RABBIT_CORES_OPTION)
    if not isinstance(resources, Sequence) or isinstance(resources, (str, bytes)):
        raise ChassisError(f"{CHASSIS_OPTION}: jobspec resources must be a list")
    nodes = [i for i, r in enumerate(resources)
             if isinstance(r, Mapping) and r.get("type") == "node"]
    if len(nodes) != 1:
        raise ChassisError(
            f"{CHASSIS_OPTION}: the jobspec must request nodes at the top level"
            f" (found {len(nodes)} node requests)"
        )
    index = nodes[0]
    node = copy.deepcopy(dict(resources[index]))
    count = node.get("count")
    if isinstance(count, bool) or not isinstance(count, int):
        raise ChassisError(f"{CHASSIS_OPTION} requires a fixed node count, not {count!r}")
    if count % n != 0:
        raise ChassisError(
            f"{CHASSIS_OPTION}={n}: the node count {count} is not a multiple of {n}"
        )
    node["count"] = count // n
    children: list[dict[str, Any]] = [node]
    if rabbit_cores is not None:
        children.append({
            "type": "storage_node",
            "count": 1,
            "with": [{"type": "core", "count": rabbit_cores, "exclusive": True}],
        })
    out = [copy.deepcopy(dict(r)) for r in resources]
    out[index] = {"type": "chassis", "count": n, "with": children}
    return out


def rewrite_jobspec(
    jobspec: Mapping[str, Any], chassis: int, rabbit_cores: int | None = None
) -> dict[str, Any]:
    """A copy of ``jobspec`` rewritten as rewrite_resources says; with
    ``rabbit_cores`` also ``attributes.system.allow_rabbits = true``."""
    out = copy.deepcopy(dict(jobspec))
    out["resources"] = rewrite_resources(jobspec.get("resources", []), chassis, rabbit_cores)
    if rabbit_cores is not None:
        attributes = out.setdefault("attributes", {})
        system = attributes.setdefault("system", {})
        system["allow_rabbits"] = True
    return out
