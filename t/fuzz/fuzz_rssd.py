"""atheris target: arbitrary text into rssd.paths (rssd.h), as R's JSON text
and, when it is JSON, as R's scheduling graph; only RssdError may come out.
The seeds are R that Fluxion 0.54 wrote (t/data/rssd)."""

import json
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws.rssd import RssdError, paths


def test_one(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    try:
        got = paths(text)
        assert all(isinstance(p, str) and p.startswith("/") for p in got), got
    except RssdError:
        pass
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return
    try:
        paths({"scheduling": value})
        paths({"scheduling": {"graph": value}})
    except RssdError:
        pass


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
