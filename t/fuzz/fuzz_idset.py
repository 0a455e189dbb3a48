"""atheris target: idset decode/encode/set operations never crash, round-trip,
and bad input only ever raises DwsError (IDsetError)."""

import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.errors import DwsError
    from flux_dws.libdws.idset import IDset


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(100)
    other = fdp.ConsumeUnicodeNoSurrogates(40)
    try:
        ids = IDset(text)
    except DwsError:
        return
    assert IDset(ids.encode()) == ids
    assert IDset(ids.encode(brackets=True)) == ids
    try:
        b = IDset(other)
    except DwsError:
        return
    u, x, d = ids | b, ids & b, ids - b
    assert len(u) == len(ids) + len(b) - len(x)
    assert len(d) == len(ids) - len(x)
    if len(u) <= 10000:
        assert set(u) == set(ids) | set(b)
        assert ids.first() == (min(ids) if len(ids) else None)


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
