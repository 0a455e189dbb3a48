"""The cffi surface: error text, ownership and string helpers."""

from __future__ import annotations

import pytest

import flux_dws
from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi


def test_version_matches_package() -> None:
    assert _ffi.version() == flux_dws.__version__


def test_take_string_null_raises_with_error_text() -> None:
    err = _ffi.new_error()
    msg = b"argument 'type' invalid string 'zfs'"
    _ffi.ffi.memmove(err.text, msg, len(msg))
    with pytest.raises(DwsError, match="invalid string 'zfs'"):
        _ffi.take_string(_ffi.ffi.NULL, err)


def test_to_c_rejects_nul() -> None:
    with pytest.raises(DwsError, match="NUL"):
        _ffi.to_c("a\0b")


def test_to_c_encodes_utf8() -> None:
    assert _ffi.to_c("caf\u00e9") == "caf\u00e9".encode()
