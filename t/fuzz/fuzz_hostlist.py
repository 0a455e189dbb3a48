"""atheris target: hostlist decode/encode/lookups never crash on any input."""

import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.hostlist import Hostlist, HostlistError


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(200).replace("\0", "")
    try:
        hl = Hostlist(text)
    except HostlistError:
        return
    if len(hl) > 5000:
        return
    again = Hostlist(hl.encode())
    assert list(again) == list(hl), (text, hl.encode())
    for i, name in enumerate(hl):
        assert hl.index(name) <= i
    other = Hostlist(list(hl)[::2])
    assert set(hl - other) == set(hl) - set(other)


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
