"""Fluxion resource graphs (JGF) for Rabbit systems, written by libdws.

``write_jgf`` streams R plus the rabbit graph (see src/common/libdws/jgf.h
for the graph's shape) to a file descriptor.  Everything is checked before
the first byte is written, so a failure never leaves partial output.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from flux_dws import _ffi
from flux_dws.errors import DwsError

DEFAULT_CHUNKS = 36
GiB = 1 << 30


class JGFError(DwsError):
    """R, the rabbitmapping or an option is invalid (the message names it)."""


def default_cluster_name(hostname: str | None = None) -> str:
    """The host name with its digits removed and trailing '-' stripped."""
    name = hostname if hostname is not None else socket.gethostname()
    name = name.split(".")[0]
    stripped = "".join(c for c in name if not c.isdigit()).rstrip("-")
    return stripped or "cluster"


def write_jgf(
    fd: int,
    R: dict[str, Any] | str,
    mapping: dict[str, Any] | str,
    *,
    chunks: int = DEFAULT_CHUNKS,
    cluster: str | None = None,
    exclude: str | None = None,
    validate: bool = True,
    only_sched: bool = False,
) -> None:
    """Write R with its ``scheduling`` graph (or only the graph) to ``fd``."""
    lib, ffi = _ffi.lib, _ffi.ffi
    flags = 0
    if not validate:
        flags |= lib.DWS_JGF_NO_VALIDATE
    if only_sched:
        flags |= lib.DWS_JGF_ONLY_SCHED
    r_text = R if isinstance(R, str) else json.dumps(R)
    m_text = mapping if isinstance(mapping, str) else json.dumps(mapping)
    err = _ffi.new_error()
    rc = lib.dws_jgf_write_fd(
        fd,
        _ffi.to_c(r_text),
        _ffi.to_c(m_text),
        _ffi.to_c(exclude) if exclude else ffi.NULL,
        _ffi.to_c(cluster if cluster is not None else default_cluster_name()),
        chunks,
        flags,
        err,
    )
    if rc < 0:
        _ffi.raise_error(err, JGFError)
