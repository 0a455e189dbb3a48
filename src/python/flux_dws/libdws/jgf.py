"""Fluxion resource graphs (JGF) for Rabbit systems, written by libdws.

``write_jgf`` streams R plus the rabbit graph (see src/common/libdws/placement/jgf.h
for the graph's shape) to a binary file or a file descriptor.  libdws
builds the text and hands it, a buffer at a time, to a write function of
this module (it does no I/O itself).  Everything is checked before the
first byte is written, so a failure never leaves partial output.
"""

from __future__ import annotations

import errno
import json
import os
import socket
from typing import Any, BinaryIO, Union

from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi

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


Output = Union[int, BinaryIO]


def _write_all(out: Output, data: bytes) -> None:
    if isinstance(out, int):
        view = memoryview(data)
        while view:
            view = view[os.write(out, view):]
    else:
        out.write(data)


@_ffi.ffi.def_extern()  # type: ignore[untyped-decorator]
def _flux_dws_jgf_write(buf: Any, n: int, arg: Any) -> int:
    """libdws' writer (dws_write_f): arg is a handle of the output."""
    out = _ffi.ffi.from_handle(arg)
    try:
        _write_all(out, _ffi.ffi.buffer(buf, n)[:])
    except OSError as exc:
        _ffi.ffi.errno = exc.errno or errno.EIO
        return -1
    return 0


def write_jgf(
    out: Output,
    R: dict[str, Any] | str,
    mapping: dict[str, Any] | str,
    *,
    chunks: int = DEFAULT_CHUNKS,
    cluster: str | None = None,
    exclude: str | None = None,
    validate: bool = True,
    only_sched: bool = False,
) -> None:
    """Write R with its ``scheduling`` graph (or only the graph) to ``out``,
    a file descriptor or a binary file."""
    lib, ffi = _ffi.lib, _ffi.ffi
    flags = 0
    if not validate:
        flags |= lib.DWS_JGF_NO_VALIDATE
    if only_sched:
        flags |= lib.DWS_JGF_ONLY_SCHED
    r_text = R if isinstance(R, str) else json.dumps(R)
    m_text = mapping if isinstance(mapping, str) else json.dumps(mapping)
    err = _ffi.new_error()
    handle = ffi.new_handle(out)
    rc = lib.dws_jgf_write_json(
        _ffi.to_c(r_text),
        _ffi.to_c(m_text),
        _ffi.to_c(exclude) if exclude else ffi.NULL,
        _ffi.to_c(cluster if cluster is not None else default_cluster_name()),
        chunks,
        flags,
        lib._flux_dws_jgf_write,
        handle,
        err,
    )
    if rc < 0:
        _ffi.raise_error(err, JGFError)
