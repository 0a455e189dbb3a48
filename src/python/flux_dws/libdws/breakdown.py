"""DirectiveBreakdowns -> jobspec resources and Servers allocations (libdws).

The rules (per-node GiB, minimum allocation size, rabbit choice, rounding
and ordering) are in src/common/libdws/parse/breakdown.h and
placement/servers.h and in doc/guide/breakdown.rst.  Every function takes
and returns plain JSON-like Python values; bad input of any kind raises
BreakdownError (or its subclass ServersError) carrying libdws' message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi

GiB = 1 << 30
MIN_ALLOCATION_GIB = 4
MIN_ALLOCATION_BYTES = MIN_ALLOCATION_GIB * GiB
_INT64_MAX = (1 << 63) - 1

__all__ = [
    "MIN_ALLOCATION_BYTES",
    "MIN_ALLOCATION_GIB",
    "BreakdownError",
    "GiB",
    "RabbitMap",
    "ServersError",
    "allocation_sets",
    "jobspec_node_count",
    "rabbit_counts",
    "rewrite_resources",
]


class BreakdownError(DwsError):
    """A breakdown or jobspec is unusable (the message names it)."""


class ServersError(BreakdownError):
    """Servers allocation inputs (storage, rabbit counts, hosts, mapping) are unusable."""


def _call(exc: type[DwsError], fn: Any, *args: Any) -> Any:
    err = _ffi.new_error()
    ptr = fn(*args, err)
    if ptr == _ffi.ffi.NULL:
        _ffi.raise_error(err, exc)
    return _ffi.take_json(ptr, err)


def _int64(value: Any, what: str, exc: type[DwsError]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _INT64_MAX:
        raise exc(f"{what} must be an integer from 0 to {_INT64_MAX}, not {value!r}")
    return value


def rewrite_resources(resources: Any, breakdowns: Any,
                      min_allocation_gib: int = MIN_ALLOCATION_GIB) -> list[Any] | None:
    """The jobspec ``resources`` asking for rabbit storage, or None to leave
    them alone (they hold ``ssd`` already, or no breakdown needs storage).

    ``breakdowns`` lists DirectiveBreakdown objects or their ``status``
    objects.  ``min_allocation_gib`` is the minimum allocation size in GiB.
    """
    minimum = _int64(min_allocation_gib, "min_allocation_gib", BreakdownError)
    out: list[Any] | None = _call(BreakdownError, _ffi.lib.dws_breakdown_rewrite_json,
                                  _ffi.json_arg(resources, "resources", BreakdownError),
                                  _ffi.json_arg(breakdowns, "breakdowns", BreakdownError), minimum)
    return out


def jobspec_node_count(resources: Any) -> int:
    """Compute nodes a jobspec ``resources`` array asks for (node, slot or
    chassis form, before or after the rewrite); BreakdownError naming the
    shape libdws does not take."""
    err = _ffi.new_error()
    n = int(_ffi.lib.dws_jobspec_node_count_json(
        _ffi.json_arg(resources, "resources", BreakdownError), err))
    if n < 0:
        _ffi.raise_error(err, BreakdownError)
    return n


class RabbitMap:
    """compute -> rabbit, prepared once from a rabbitmapping document (or a
    bare ``{compute: rabbit}`` object) for many per-job lookups."""

    def __init__(self, mapping: Any) -> None:
        err = _ffi.new_error()
        text = _ffi.json_arg(mapping, "rabbitmapping", ServersError)
        h = _ffi.lib.dws_rabbitmap_create_json(text, err)
        if h == _ffi.ffi.NULL:
            _ffi.raise_error(err, ServersError)
        self._h = _ffi.ffi.gc(h, _ffi.lib.dws_rabbitmap_destroy)

    def counts(self, hosts: str | Iterable[str]) -> dict[str, int]:
        """{rabbit: how many of ``hosts`` it serves}, rabbits in order of first
        use.  ``hosts`` is an RFC 29 hostlist string or host names; hosts
        that are rabbits are skipped, a repeated host counts once, a host
        no rabbit serves raises ServersError."""
        out: dict[str, int]
        if isinstance(hosts, str):
            out = _call(ServersError, _ffi.lib.dws_rabbitmap_counts_json, self._h,
                        _ffi.to_c(hosts, ServersError))
        else:
            out = _call(ServersError, _ffi.lib.dws_rabbitmap_counts_list_json, self._h,
                        _ffi.json_arg(list(hosts), "hosts", ServersError))
        return out

    def allocation_sets(self, storage: Any, hosts: str,
                        min_allocation_bytes: int = MIN_ALLOCATION_BYTES) -> list[dict[str, Any]]:
        """Servers ``spec.allocationSets`` for one breakdown's storage and the
        job's hosts (an RFC 29 hostlist, e.g. R's nodelist), counted by this
        map: the same as ``allocation_sets(storage, self.counts(hosts))``
        in one call."""
        minimum = _int64(min_allocation_bytes, "min_allocation_bytes", ServersError)
        out: list[dict[str, Any]] = _call(
            ServersError, _ffi.lib.dws_servers_allocation_sets_hosts_json, self._h,
            _ffi.to_c(hosts, ServersError), _ffi.json_arg(storage, "storage", ServersError),
            minimum)
        return out


def rabbit_counts(hosts: Any, compute_to_rabbit: Any) -> dict[str, int]:
    """{rabbit: number of the job's compute nodes it serves}, for a list of
    host names and a ``{compute: rabbit}`` object (or a rabbitmapping)."""
    out: dict[str, int] = _call(ServersError, _ffi.lib.dws_rabbit_counts_json,
                                _ffi.json_arg(hosts, "hosts", ServersError),
                                _ffi.json_arg(compute_to_rabbit, "rabbitmapping", ServersError))
    return out


def allocation_sets(storage: Any, counts: Mapping[str, int] | Any,
                    min_allocation_bytes: int = MIN_ALLOCATION_BYTES) -> list[dict[str, Any]]:
    """Servers ``spec.allocationSets`` for one breakdown's ``status.storage``
    (or the breakdown, or its status) and the job's ``{rabbit: nodes}``."""
    minimum = _int64(min_allocation_bytes, "min_allocation_bytes", ServersError)
    out: list[dict[str, Any]] = _call(ServersError, _ffi.lib.dws_servers_allocation_sets_json,
                                      _ffi.json_arg(storage, "storage", ServersError),
                                      _ffi.json_arg(counts, "rabbit counts", ServersError), minimum)
    return out
