"""atheris target: arbitrary JSON into the jobspec rewrite, the rabbit
counts and the Servers allocation; only BreakdownError may come out."""

import json
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws.breakdown import (
        BreakdownError,
        RabbitMap,
        allocation_sets,
        rabbit_counts,
        rewrite_resources,
    )

NODES = [{"type": "node", "count": 2}]
LUSTRE = {"allocationSets": [
    {"label": "ost", "allocationStrategy": "AllocateAcrossServers", "minimumCapacity": 1 << 40},
    {"label": "mgt", "allocationStrategy": "AllocateSingleServer", "minimumCapacity": 5 << 30}]}
MAP = {"computes": {"c1": "r1", "c2": "r1", "c3": "r2"}, "rabbits": {"r1": {}, "r2": {}}}


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    which = fdp.ConsumeIntInRange(0, 6)
    minimum = fdp.ConsumeIntInRange(0, 1 << 40)
    text = fdp.ConsumeUnicodeNoSurrogates(600)
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    try:
        if which == 0:
            rewrite_resources(value, [{"status": {"storage": LUSTRE}}], minimum)
        elif which == 1:
            rewrite_resources(NODES, value, minimum)
        elif which == 2:
            rewrite_resources(value, value, minimum)
        elif which == 3:
            allocation_sets(value, {"r1": 2, "r2": 1}, minimum)
        elif which == 4:
            allocation_sets(LUSTRE, value, minimum)
        elif which == 5:
            rabbit_counts(value, MAP)
            rabbit_counts(["c1"], value)
        else:
            RabbitMap(MAP).counts(value if isinstance(value, str) else [])
    except BreakdownError:
        pass


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
