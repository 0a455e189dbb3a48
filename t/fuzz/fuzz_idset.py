"""atheris target: idset decode/encode never crash and round-trip."""

import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.idset import IDset, IDsetError


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(100).replace("\0", "")
    try:
        ids = IDset(text)
    except IDsetError:
        return
    assert IDset(ids.encode()) == ids
    assert IDset(ids.encode(brackets=True)) == ids


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
