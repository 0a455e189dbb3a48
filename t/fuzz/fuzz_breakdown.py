"""atheris target: arbitrary JSON into the rewrite and Servers allocation."""

import json
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.breakdown import BreakdownError, allocation_sets, rabbit_counts, rewrite_resources


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    text = fdp.ConsumeUnicodeNoSurrogates(400)
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    which = fdp.ConsumeIntInRange(0, 3)
    try:
        if which == 0:
            rewrite_resources(value, [value])
        elif which == 1:
            rewrite_resources([{"type": "node", "count": 2}], value)
        elif which == 2:
            allocation_sets(value if isinstance(value, dict) else {}, {"r1": 2, "r2": 1})
        else:
            rabbit_counts(value if isinstance(value, list) else [], {"c1": "r1"})
    except BreakdownError:
        pass


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
