"""The rabbit ssd vertices of a job's R (libdws rssd.h).

Fluxion, run with ``match-format = "rv1"``, writes each job's R with a
``scheduling`` key: the JGF of what it allocated.  A rabbit job's ``ssd``
vertices are there, and their containment paths are what
``sched-fluxion-resource.set_status`` takes::

    >>> paths(json.load(open("R.json")))        # flux job info JOBID R
    ['/kind/chassis0/ssd33', '/kind/chassis1/ssd35']

The job manager's copy of R has no ``scheduling`` key: read the job's KVS
copy.  Bad input raises :class:`RssdError` with libdws' message, e.g.
``R has no scheduling graph: is Fluxion's match-format rv1?``.
"""

from __future__ import annotations

from typing import Any

from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi

__all__ = ["RssdError", "paths"]


class RssdError(DwsError):
    """R has no usable scheduling graph (the message says what is wrong)."""


def paths(R: Any) -> list[str]:
    """The containment paths of the ssd vertices of R (a mapping, or its
    JSON text), in R's order; [] for a job without rabbit storage."""
    text = R if isinstance(R, str) else _ffi.json_arg(R, "R", RssdError).decode("utf-8")
    err = _ffi.new_error()
    ptr = _ffi.lib.dws_rssd_paths_json(_ffi.to_c(text, RssdError), err)
    if ptr == _ffi.ffi.NULL:
        _ffi.raise_error(err, RssdError)
    out: list[str] = _ffi.take_json(ptr, err)
    return out
