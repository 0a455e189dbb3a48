"""RFC 22 idsets backed by libdws (src/common/libdws/util/idset.h).

    >>> ids = IDset("0-3,7")
    >>> len(ids), 7 in ids, list(ids), ids.encode(brackets=True)
    (5, True, [0, 1, 2, 3, 7], '[0-3,7]')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi

INVALID = 0xFFFFFFFF


class IDsetError(DwsError, ValueError):
    """An idset is malformed or an id is out of range."""


def _check(handle: Any, err: Any | None = None) -> Any:
    if handle == _ffi.ffi.NULL:
        if err is None:
            raise MemoryError("out of memory")
        _ffi.raise_error(err, IDsetError)
    return _ffi.ffi.gc(handle, _ffi.lib.dws_idset_destroy)


def _valid_id(i: object) -> int:
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < INVALID:
        raise IDsetError(f"invalid id {i!r} (ids are integers from 0 to {INVALID - 1})")
    return i


class IDset:
    """A set of ids (RFC 22): str, IDset or ints in."""

    __slots__ = ("_h",)
    _h: Any

    def __init__(self, ids: str | IDset | Iterable[int] = "") -> None:
        lib, err = _ffi.lib, _ffi.new_error()
        if isinstance(ids, IDset):
            self._h = _check(lib.dws_idset_copy(ids._h))
        elif isinstance(ids, str):
            self._h = _check(lib.dws_idset_decode(_ffi.to_c(ids, IDsetError), err), err)
        else:
            self._h = _check(lib.dws_idset_create())
            for i in ids:
                if lib.dws_idset_add(self._h, _valid_id(i)) < 0:
                    raise MemoryError("out of memory")

    @classmethod
    def _wrap(cls, handle: Any) -> IDset:
        obj = cls.__new__(cls)
        obj._h = _check(handle)
        return obj

    def encode(self, brackets: bool = False, ranges: bool = True) -> str:
        """RFC 22 text: ranges ("1-3,5") or every id ("1,2,3,5"); brackets
        around a set of more than one id."""
        lib = _ffi.lib
        if not ranges and len(self) > lib.DWS_IDSET_EXPAND_MAX:
            raise IDsetError(
                f"idset of {len(self)} ids is too large to spell out "
                f"(at most {lib.DWS_IDSET_EXPAND_MAX})"
            )
        flags = (lib.DWS_IDSET_BRACKETS if brackets else 0) | (
            0 if ranges else lib.DWS_IDSET_NORANGE
        )
        return _ffi.take_string(lib.dws_idset_encode(self._h, flags))

    def __str__(self) -> str:
        return self.encode()

    def __repr__(self) -> str:
        return f"IDset({self.encode()!r})"

    def __len__(self) -> int:
        return int(_ffi.lib.dws_idset_count(self._h))

    def __contains__(self, i: object) -> bool:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < INVALID:
            return False
        return bool(_ffi.lib.dws_idset_contains(self._h, i))

    def __iter__(self) -> Iterator[int]:
        lib = _ffi.lib
        i = lib.dws_idset_first(self._h)
        while i != INVALID:
            yield int(i)
            i = lib.dws_idset_next(self._h, i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IDset):
            return bool(_ffi.lib.dws_idset_equal(self._h, other._h))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def first(self) -> int | None:
        i = _ffi.lib.dws_idset_first(self._h)
        return None if i == INVALID else int(i)

    def last(self) -> int | None:
        i = _ffi.lib.dws_idset_last(self._h)
        return None if i == INVALID else int(i)

    def add(self, i: int, hi: int | None = None) -> None:
        """Add id i, or the range i..hi."""
        lo = _valid_id(i)
        top = lo if hi is None else _valid_id(hi)
        if top < lo:
            raise IDsetError(f"invalid range {lo}-{top} (end before start)")
        if _ffi.lib.dws_idset_add_range(self._h, lo, top) < 0:
            raise MemoryError("out of memory")

    def discard(self, i: int) -> None:
        if _ffi.lib.dws_idset_remove(self._h, _valid_id(i)) < 0:
            raise MemoryError("out of memory")

    def _other(self, other: str | IDset | Iterable[int]) -> IDset:
        return other if isinstance(other, IDset) else IDset(other)

    def union(self, other: str | IDset | Iterable[int]) -> IDset:
        return IDset._wrap(_ffi.lib.dws_idset_union(self._h, self._other(other)._h))

    def intersection(self, other: str | IDset | Iterable[int]) -> IDset:
        return IDset._wrap(_ffi.lib.dws_idset_intersect(self._h, self._other(other)._h))

    def difference(self, other: str | IDset | Iterable[int]) -> IDset:
        return IDset._wrap(_ffi.lib.dws_idset_difference(self._h, self._other(other)._h))

    __or__ = union
    __and__ = intersection
    __sub__ = difference
