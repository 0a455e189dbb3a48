"""atheris target: sequences of known and arbitrary events into the jobtap
plugin's job state machine; only JobMachineError may come out, a refused
event must leave the machine unchanged and every action must be known."""

import json
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws.jobsm import JobMachine, JobMachineError

DW = "#DW jobdw type=xfs capacity=1GiB name=x"
SPEC = {"resources": [{"type": "node", "count": 1}],
        "attributes": {"system": {"dw": DW, "constraints": {"properties": ["a"]},
                                  "allow_rabbits": True}}}
PSPEC = {"attributes": {"system": {"dw": "#DW persistentdw name=p",
                                  "dw_failure_tolerance": -1}}}
EVENTS = [
    {"type": "depend", "id": 1, "userid": 2, "jobspec": SPEC},
    {"type": "depend", "id": 1, "userid": 2, "jobspec": PSPEC},
    {"type": "create"},
    {"type": "dependency-add", "name": "after-success=f1"},
    {"type": "dependency-remove", "name": "after-success=f1", "jobspec": PSPEC},
    {"type": "dependency-add", "name": "dws-create"},
    {"type": "reload", "id": 1, "userid": 2, "jobspec": PSPEC, "state": "DEPEND",
     "other_dependencies": 1},
    {"type": "reload", "id": 1, "userid": 2, "jobspec": SPEC, "state": "CLEANUP",
     "epilog_active": True},
    {"type": "run"}, {"type": "start"}, {"type": "finish"}, {"type": "cleanup"},
    {"type": "R", "R": {}}, {"type": "R", "error": "e"},
    {"type": "exception", "exc_type": "cancel", "severity": 0},
    {"type": "exception", "exc_type": "dws-epilog-timeout", "severity": 0},
    {"type": "timer", "key": "epilog-timeout", "state": "CLEANUP"},
    {"type": "rpc-response", "tag": "create", "ok": False, "errnum": 38, "errstr": "x"},
    {"type": "rpc-response", "tag": "post_run", "ok": True, "payload": {"success": False}},
    {"type": "rpc-response", "tag": "teardown", "ok": False, "errstr": "x"},
    {"type": "resource-update", "state": "DEPEND", "jobspec": SPEC,
     "payload": {"id": 1, "resources": [], "exclude": {"not": [{"hostlist": ["r1"]}]}}},
    {"type": "prolog-remove", "payload": {"id": 1, "variables": {"A": "b"}}},
    {"type": "epilog-remove", "state": "CLEANUP", "payload": {"id": 1}},
]
ACTIONS = {"dependency-add", "dependency-remove", "subscribe", "rpc", "lookup-R",
           "prolog-start", "prolog-finish", "epilog-start", "epilog-finish", "timer-start",
           "timer-stop", "raise", "jobspec-update", "post-event", "respond", "respond-error",
           "log"}


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    sm = JobMachine({"epilog-timeout": fdp.ConsumeIntInRange(-1, 3)})
    for _ in range(fdp.ConsumeIntInRange(0, 24)):
        pick = fdp.ConsumeIntInRange(0, len(EVENTS) + 1)
        if pick < len(EVENTS):
            event = EVENTS[pick]
        else:
            text = fdp.ConsumeUnicodeNoSurrogates(200)
            try:
                event = json.loads(text)
            except ValueError:
                event = {"type": text}
            if pick == len(EVENTS) and isinstance(event, dict):
                # keep the type of a known event, fuzz the rest
                event = {**event, "type": EVENTS[len(text) % len(EVENTS)]["type"]}
        before = sm.state()
        try:
            actions = sm.event(event)
        except JobMachineError:
            if sm.state() != before:
                raise RuntimeError("a refused event changed the machine") from None
            continue
        for a in actions:
            if a.get("action") not in ACTIONS:
                raise RuntimeError(f"unknown action {a!r}")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()
