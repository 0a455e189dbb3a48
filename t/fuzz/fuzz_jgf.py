"""atheris target: the JGF writer only ever raises JGFError on bad R/mappings."""

import json
import os
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws.jgf import JGFError, write_jgf

DEVNULL = os.open(os.devnull, os.O_WRONLY)
BASE_R = {"execution": {"R_lite": [{"rank": "0-3", "children": {"core": "0-1"}}],
                        "nodelist": ["n[1-4]"]}}
BASE_MAP = {"computes": {"n1": "r1"}, "rabbits": {"r1": {"capacity": 1 << 40,
                                                         "hostlist": "n1"}}}


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 3)
    text = fdp.ConsumeUnicodeNoSurrogates(300).replace("\0", "")
    R, mapping = json.dumps(BASE_R), json.dumps(BASE_MAP)
    if mode == 0:
        R = text
    elif mode == 1:
        mapping = text
    elif mode == 2:
        R = text.replace("@", json.dumps(BASE_R))
    try:
        write_jgf(DEVNULL, R, mapping, cluster="c", chunks=fdp.ConsumeIntInRange(-1, 4),
                  exclude=text[:8] if mode == 3 else None)
    except JGFError:
        pass


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
