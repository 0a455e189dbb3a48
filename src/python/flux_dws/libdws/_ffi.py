"""Thin helpers around the cffi extension flux_dws._libdws.

Conventions of the cffi surface (see src/common/libdws/util/memory.h):
- fallible calls take a ``dws_error_t *`` and return -1 / NULL on failure;
- JSON crosses the boundary as UTF-8 text;
- returned ``char *`` is owned by the caller and released with dws_free().
"""

from __future__ import annotations

import json
from typing import Any

from flux_dws._libdws import ffi, lib
from flux_dws.errors import DwsError

__all__ = ["ffi", "json_arg", "lib", "new_error", "raise_error", "take_json", "take_string",
           "to_c"]


def new_error() -> Any:
    """Return a fresh zeroed dws_error_t *."""
    return ffi.new("dws_error_t *")


def error_text(err: Any) -> str:
    return str(ffi.string(err.text).decode("utf-8", "replace"))


def raise_error(err: Any, exc: type[Exception] = DwsError) -> None:
    raise exc(error_text(err))


def to_c(text: str, exc: type[Exception] = DwsError) -> bytes:
    """Encode a Python str for a ``const char *`` argument (exc on a NUL)."""
    if "\0" in text:
        raise exc(f"string contains a NUL character: {text!r}")
    return text.encode("utf-8", "surrogatepass")


def json_arg(value: Any, what: str, exc: type[Exception] = DwsError) -> bytes:
    """JSON text of ``value`` for a ``const char *`` argument; ``exc`` naming
    ``what`` when it is not JSON."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError) as e:
        raise exc(f"{what}: not JSON: {e}") from None
    return to_c(text, exc)


def take_string(ptr: Any, err: Any | None = None) -> str:
    """Copy a malloc'd C string into Python and free it.

    A NULL pointer raises DwsError with the message in err.
    """
    if ptr == ffi.NULL:
        if err is None:
            raise DwsError("out of memory")
        raise_error(err)
    try:
        return str(ffi.string(ptr).decode("utf-8", "surrogatepass"))
    finally:
        lib.dws_free(ptr)


def take_json(ptr: Any, err: Any | None = None) -> Any:
    """Like take_string, then json.loads the text."""
    return json.loads(take_string(ptr, err))


def version() -> str:
    return str(ffi.string(lib.dws_version()).decode())
