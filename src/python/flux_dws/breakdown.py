"""DirectiveBreakdowns -> jobspec resources and Servers allocations (libdws).

See src/common/libdws/breakdown.h and servers.h for the rules (per-node GiB,
minimum allocation size, rabbit choice and rounding).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from flux_dws import _ffi
from flux_dws.errors import DwsError
from flux_dws.hostlist import Hostlist

GiB = 1 << 30
MIN_ALLOCATION_GIB = 4


class BreakdownError(DwsError):
    """A breakdown, jobspec or allocation input is unusable (message names it)."""


def _call(fn: Any, *args: Any) -> Any:
    err = _ffi.new_error()
    ptr = fn(*args, err)
    if ptr == _ffi.ffi.NULL:
        _ffi.raise_error(err, BreakdownError)
    return _ffi.take_json(ptr, err)


def _text(value: Any) -> bytes:
    return _ffi.to_c(json.dumps(value), BreakdownError)


def rewrite_resources(resources: list[Any], breakdowns: list[Any],
                      min_allocation_gib: int = MIN_ALLOCATION_GIB) -> list[Any] | None:
    """The jobspec resources asking for rabbit storage, or None to leave
    them alone (they hold ssd already, or no breakdown needs storage).
    ``breakdowns`` are DirectiveBreakdown objects or their status objects.
    """
    out: list[Any] | None = _call(_ffi.lib.dws_breakdown_rewrite_json, _text(resources),
                                  _text(breakdowns), min_allocation_gib)
    return out


class RabbitMap:
    """compute -> rabbit, prepared once (a rabbitmapping or its computes)."""

    def __init__(self, mapping: Mapping[str, Any]) -> None:
        err = _ffi.new_error()
        h = _ffi.lib.dws_rabbitmap_create_json(_text(dict(mapping)), err)
        if h == _ffi.ffi.NULL:
            _ffi.raise_error(err, BreakdownError)
        self._h = _ffi.ffi.gc(h, _ffi.lib.dws_rabbitmap_destroy)

    def counts(self, hosts: str | Iterable[str]) -> dict[str, int]:
        """{rabbit: number of these hosts it serves} (a hostlist or names)."""
        text = hosts if isinstance(hosts, str) else Hostlist(hosts).encode()
        out: dict[str, int] = _call(_ffi.lib.dws_rabbitmap_counts_json, self._h,
                                    _ffi.to_c(text, BreakdownError))
        return out


def rabbit_counts(hosts: str | Iterable[str], compute_to_rabbit: Mapping[str, str]
                  ) -> dict[str, int]:
    """{rabbit: number of the job's compute nodes it serves} (one-off)."""
    return RabbitMap(compute_to_rabbit).counts(hosts)


def allocation_sets(storage: Mapping[str, Any], counts: Mapping[str, int],
                    min_allocation_bytes: int = MIN_ALLOCATION_GIB * GiB) -> list[dict[str, Any]]:
    """Servers spec.allocationSets for one breakdown's status.storage."""
    out: list[dict[str, Any]] = _call(_ffi.lib.dws_servers_allocation_sets_json,
                                      _text(dict(storage)), _text(dict(counts)),
                                      min_allocation_bytes)
    return out
