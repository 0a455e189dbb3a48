"""atheris target: hostlist decode/encode/lookups/set operations never crash,
and bad input only ever raises DwsError (HostlistError)."""

import re
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.errors import DwsError
    from flux_dws.libdws.hostlist import Hostlist


#: hosts the ranges of one input may name: a range followed by a suffix
#: ("n[1-1000000]x") is held as one name per host (about 80 bytes each; a
#: decode refuses more than DWS_HOSTLIST_SUFFIXED_MAX, 1 M of them), so
#: inputs near that bound would spend the fuzzer's time on allocation;
#: lists up to the caps are the C tests' (test/hostlist.c)
MAX_SPAN = 200_000
RANGE = re.compile(r"(\d+)\s*-\s*(\d+)")


def too_big(text: str) -> bool:
    return sum(abs(int(b[:12]) - int(a[:12])) for a, b in RANGE.findall(text)) > MAX_SPAN


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(200)
    probe = fdp.ConsumeUnicodeNoSurrogates(20)
    if too_big(text) or too_big(probe):
        return
    try:
        hl = Hostlist(text)
    except DwsError:
        return
    try:
        Hostlist(probe)
    except DwsError:
        pass
    if len(hl) > 5000:
        # a lookup indexes every name: millions of hosts (up to the 16 M
        # that decode) take gigabytes, over the fuzzer's memory limit
        return
    try:
        probe in hl  # noqa: B015 - any string, even one with a NUL
    except DwsError:
        pass
    names = list(hl)
    again = Hostlist(hl.encode())
    assert list(again) == names, (text, hl.encode())
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        first.setdefault(name, i)
        assert hl[i] == name
    for name, i in first.items():
        assert hl.index(name) == i, (text, name)
    other = Hostlist(names[::2])
    assert list(hl - other) == [n for n in first if n not in set(names[::2])]
    assert list(hl | other) == list(first)
    assert sorted(hl.sorted()) == sorted(names)
    assert list(hl.uniq()) == list(first)


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
