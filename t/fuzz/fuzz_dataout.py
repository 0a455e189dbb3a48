"""atheris target: a sequence of events into one dataout machine
(dataout.h): only DataoutError may come out, a refused event changes
nothing, and every action is one the plugin knows, naming a job."""

import json
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws.dataout import DataoutError, DataoutMachine

ACTIONS = {"dependency-add", "dependency-remove", "raise"}


def test_one(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    m = DataoutMachine()
    for line in text.splitlines()[:64]:
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        before = (m.tracked, m.pending)
        try:
            actions = m.event(event)
        except DataoutError:
            assert (m.tracked, m.pending) == before
            continue
        for a in actions:
            assert a["action"] in ACTIONS and isinstance(a["id"], int), a
            if a["action"] != "raise":
                assert a["name"].startswith("dws-dataout:f"), a


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
