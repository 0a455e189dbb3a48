"""atheris target: splitting, tokenising and validating #DW text never crash."""

import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws.directives import (
        DirectiveError,
        check_maximums,
        parse_capacity,
        split_directives,
        validate,
    )


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(300).replace("\0", "")
    try:
        dws = split_directives(text if fdp.ConsumeBool() else text.split("|"))
        validate(dws)
        check_maximums(dws, fdp.ConsumeIntInRange(1, 64), {"xfs": 10, "lustre": 100})
    except DirectiveError:
        pass
    try:
        parse_capacity(text[:40])
    except DirectiveError:
        pass


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
