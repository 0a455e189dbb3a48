"""Lustre on the rabbits Fluxion chooses for capacity (libdws lustre.h).

With ``[rabbit.lustre] spread = true`` a job whose rabbit storage is all
Lustre asks Fluxion for the file system's capacity beside its nodes
(``rewrite``), and its Servers allocation sets are built from the ssd
Fluxion allocated, read from the job's R (``reserved_of_R``,
``allocation_sets``).  The rules are in src/common/libdws/placement/lustre.h and
doc/guide/lustre-placement.rst.  Bad input raises ``LustreError``.
"""

from __future__ import annotations

import json
from typing import Any

from flux_dws.libdws import _ffi
from flux_dws.libdws.breakdown import MIN_ALLOCATION_BYTES, MIN_ALLOCATION_GIB, ServersError

__all__ = ["LustreError", "allocation_sets", "reserved_of_R", "rewrite"]


class LustreError(ServersError):
    """Lustre placement inputs are unusable (the message names them)."""


def _call(fn: Any, *args: Any) -> Any:
    err = _ffi.new_error()
    ptr = fn(*args, err)
    if ptr == _ffi.ffi.NULL:
        _ffi.raise_error(err, LustreError)
    return _ffi.take_json(ptr, err)


def _conf(conf: Any) -> Any:
    return _ffi.ffi.NULL if conf is None else _ffi.json_arg(conf, "lustre config", LustreError)


def _int64(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 63:
        raise LustreError(f"{what} must be an integer from 0 to {(1 << 63) - 1}, not {value!r}")
    return value


def rewrite(resources: Any, breakdowns: Any, conf: Any = None,
            min_allocation_gib: int = MIN_ALLOCATION_GIB) -> tuple[list[Any] | None, bool]:
    """(rewritten resources or None when left alone, whether the job's
    Lustre is spread over the rabbits Fluxion chooses)."""
    out = _call(_ffi.lib.dws_lustre_rewrite_json,
                _ffi.json_arg(resources, "resources", LustreError),
                _ffi.json_arg(breakdowns, "breakdowns", LustreError), _conf(conf),
                _int64(min_allocation_gib, "min_allocation_gib"))
    return out["resources"], bool(out["spread"])


def reserved_of_R(R: Any) -> dict[str, int]:
    """``{rabbit: GiB of ssd}`` Fluxion allocated, from R's scheduling graph."""
    if isinstance(R, str):
        R = json.loads(R)
    out: dict[str, int] = _call(_ffi.lib.dws_lustre_reserved_of_R_json,
                                _ffi.json_arg(R, "R", LustreError))
    return out


def allocation_sets(storage: Any, reserved: Any, conf: Any = None,
                    min_allocation_bytes: int = MIN_ALLOCATION_BYTES) -> list[dict[str, Any]]:
    """Servers ``spec.allocationSets`` of one Lustre breakdown over the
    rabbits of ``reserved`` (``storage`` may also be the bare list of
    allocation sets)."""
    if isinstance(storage, list):
        storage = {"allocationSets": storage}
    out: list[dict[str, Any]] = _call(
        _ffi.lib.dws_lustre_allocation_sets_json, _ffi.json_arg(storage, "storage", LustreError),
        _ffi.json_arg(reserved, "reserved", LustreError), _conf(conf),
        _int64(min_allocation_bytes, "min_allocation_bytes"))
    return out
