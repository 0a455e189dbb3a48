"""RFC 29 hostlists backed by libdws (src/common/libdws/util/hostlist.h).

    >>> hl = Hostlist("elcap[1001-1004],login1")
    >>> len(hl), hl[0], hl.index("login1"), str(hl)
    (5, 'elcap1001', 4, 'elcap[1001-1004],login1')

A Hostlist keeps order and repeats, like flux-core's.  Set operations keep
the left operand's order and drop repeats.  ``index`` and ``in`` cost
O(log ranges) (libdws builds a lookup index on first use).  Bad input raises
HostlistError naming the offending element.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, overload

from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi

_NAME_BUF = 256


_SPECIAL = "[] \t\n\0"


class HostlistError(DwsError, ValueError):
    """A hostlist or host name is malformed."""


def _check(handle: Any, err: Any) -> Any:
    if handle == _ffi.ffi.NULL:
        _ffi.raise_error(err, HostlistError)
    return _ffi.ffi.gc(handle, _ffi.lib.dws_hostlist_destroy)


class Hostlist:
    """An ordered list of host names (RFC 29): str, Hostlist or names in."""

    __slots__ = ("_h", "_names")
    _h: Any

    def __init__(self, hosts: str | Hostlist | Iterable[str] = "") -> None:
        lib, err = _ffi.lib, _ffi.new_error()
        self._names: list[str] | None = None
        if not isinstance(hosts, (str, Hostlist)):
            hosts = list(hosts)
            # One decode of "a,b,c" is much faster than a call per name;
            # names that could read as syntax take the checked path below.
            if hosts and all(isinstance(h, str) and h for h in hosts):
                joined = ",".join(hosts)
                if joined.count(",") == len(hosts) - 1 and not any(c in joined for c in _SPECIAL):
                    hosts = joined
        if isinstance(hosts, Hostlist):
            self._h = _check(lib.dws_hostlist_copy(hosts._h), err)
        elif isinstance(hosts, str):
            self._h = _check(lib.dws_hostlist_decode(_ffi.to_c(hosts, HostlistError), err), err)
        else:
            self._h = _check(lib.dws_hostlist_create(), err)
            for host in hosts:
                if not isinstance(host, str):
                    raise HostlistError(f"host names must be strings, not {type(host).__name__}")
                if lib.dws_hostlist_append_host(self._h, _ffi.to_c(host, HostlistError), err) < 0:
                    _ffi.raise_error(err, HostlistError)

    @classmethod
    def _wrap(cls, handle: Any, err: Any) -> Hostlist:
        obj = cls.__new__(cls)
        obj._names = None
        obj._h = _check(handle, err)
        return obj

    def encode(self) -> str:
        return _ffi.take_string(_ffi.lib.dws_hostlist_encode(self._h))

    def __str__(self) -> str:
        return self.encode()

    def __repr__(self) -> str:
        return f"Hostlist({self.encode()!r})"

    def __len__(self) -> int:
        return int(_ffi.lib.dws_hostlist_count(self._h))

    def _all(self) -> list[str]:
        if self._names is None:
            err = _ffi.new_error()
            text = _ffi.take_string(_ffi.lib.dws_hostlist_names_text(self._h, err), err)
            self._names = text.split("\n") if text else []
        return self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Hostlist: ...
    def __getitem__(self, index: int | slice) -> str | Hostlist:
        if isinstance(index, slice):
            return Hostlist(self._all()[index])
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("hostlist index out of range")
        if self._names is not None:
            return self._names[index]
        size = _NAME_BUF
        while True:
            buf = _ffi.ffi.new("char[]", size)
            n = _ffi.lib.dws_hostlist_nth(self._h, index, buf, size)
            if n < 0:
                raise MemoryError("out of memory")
            if n < size:
                return str(_ffi.ffi.string(buf).decode("utf-8", "surrogatepass"))
            size = n + 1

    def _find(self, host: object) -> int:
        if not isinstance(host, str) or "\0" in host:
            return -1
        return int(_ffi.lib.dws_hostlist_find(self._h, _ffi.to_c(host)))

    def index(self, host: str) -> int:
        """Position of the first occurrence of host (ValueError if absent)."""
        i = self._find(host)
        if i < 0:
            raise ValueError(f"{host!r} is not in the hostlist")
        return i

    def __contains__(self, host: object) -> bool:
        return self._find(host) >= 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Hostlist):
            return self._all() == other._all()
        if isinstance(other, str):
            return self._all() == Hostlist(other)._all()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def append(self, hosts: str | Hostlist) -> None:
        """Append the hosts of a hostlist string or Hostlist, in place."""
        err = _ffi.new_error()
        other = hosts if isinstance(hosts, Hostlist) else Hostlist(hosts)
        if _ffi.lib.dws_hostlist_append_list(self._h, other._h, err) < 0:
            _ffi.raise_error(err, HostlistError)
        self._names = None

    def _op(self, fn: Any, other: str | Hostlist | Iterable[str]) -> Hostlist:
        o = other if isinstance(other, Hostlist) else Hostlist(other)
        err = _ffi.new_error()
        return Hostlist._wrap(fn(self._h, o._h, err), err)

    def union(self, other: str | Hostlist | Iterable[str]) -> Hostlist:
        return self._op(_ffi.lib.dws_hostlist_union, other)

    def intersection(self, other: str | Hostlist | Iterable[str]) -> Hostlist:
        return self._op(_ffi.lib.dws_hostlist_intersect, other)

    def difference(self, other: str | Hostlist | Iterable[str]) -> Hostlist:
        return self._op(_ffi.lib.dws_hostlist_difference, other)

    __or__ = union
    __and__ = intersection
    __sub__ = difference

    def uniq(self) -> Hostlist:
        err = _ffi.new_error()
        return Hostlist._wrap(_ffi.lib.dws_hostlist_uniq(self._h, err), err)

    def sorted(self) -> Hostlist:
        """Sorted as flux-core sorts: prefix, plain names first, printed
        width, number ("n9,n09,n10"); repeats kept."""
        err = _ffi.new_error()
        return Hostlist._wrap(_ffi.lib.dws_hostlist_sort(self._h, err), err)


def encode(hosts: Iterable[str]) -> str:
    """RFC 29 text for a sequence of host names (order kept)."""
    return Hostlist(hosts).encode()


def expand(hostlist: str) -> list[str]:
    """The host names of an RFC 29 string, in order."""
    return list(Hostlist(hostlist))
