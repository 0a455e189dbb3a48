"""atheris target: arbitrary JSON into the Lustre decisions (lustre.h): the
spread rewrite, the reservation read from R, the placement and the
[rabbit.lustre] table; only LustreError may come out."""

import json
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws.lustre import LustreError, allocation_sets, reserved_of_R, rewrite

NODES = [{"type": "node", "count": 2}]
LUSTRE = {"allocationSets": [
    {"label": "ost", "allocationStrategy": "AllocateAcrossServers", "minimumCapacity": 1 << 40},
    {"label": "mdt", "allocationStrategy": "AllocateAcrossServers", "minimumCapacity": 5 << 30},
    {"label": "mgt", "allocationStrategy": "AllocateSingleServer", "minimumCapacity": 5 << 30}]}
READY = [{"status": {"ready": True, "storage": LUSTRE}}]
SPREAD = {"spread": True}


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
            rewrite(value, READY, SPREAD, minimum >> 30)
        elif which == 1:
            rewrite(NODES, value, SPREAD, minimum >> 30)
        elif which == 2:
            rewrite(NODES, READY, value, minimum >> 30)
        elif which == 3:
            reserved_of_R(value if isinstance(value, dict) else {"scheduling": value})
        elif which == 4:
            allocation_sets(value, {"r1": 1000, "r2": 300}, None, minimum)
        elif which == 5:
            allocation_sets(LUSTRE, value, None, minimum)
        else:
            allocation_sets(LUSTRE, {"r1": 2000, "r2": 700, "r3": 9}, value, minimum)
    except LustreError:
        pass


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
