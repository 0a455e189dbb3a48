"""The engine alone: recorded inputs replayed, its answers and CPU.

    PYTHONPATH=src/python:build/src/python python t/bench/bench_engine_replay.py \\
        replay DIR OUT          # every DIR/*.jsonl (engine_record.py) -> OUT/
    python t/bench/bench_engine_replay.py record OUT   # a 300-job harness run
    python t/bench/bench_engine_replay.py look DIR     # every job looked at again
    python t/bench/run.py engine_replay                # record, then replay: CPU

``replay`` feeds each recording's lines to a fresh engine of the libdws on
PYTHONPATH and writes, per line, what it answered: the actions (or the
error's text) and the job records the event changed, as JSON; two builds'
OUT directories are then compared with ``diff -r`` (a refactor that must
change nothing a user sees: every answer equal, byte for byte).  It prints
the engine's CPU per event over all recordings.

``look`` replays DIR and, after each event, feeds the last
SystemConfiguration again: nothing new, but every job is looked at
(NEWS_LOOK), so none may act (issue 64: the decider chooses from the
job's phase and facts).  It prints the looks and what acted.

``record`` runs a harness workload (300 jobs, xfs, gfs2 and Lustre, 60 in
flight, on the emulator) with the engine's inputs recorded, for a replay
whose CPU per event and per job is a figure of the engine alone.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from flux_dws.libdws import _ffi

JOBS = 300
IN_FLIGHT = 60
DIRECTIVES = ("#DW jobdw type=xfs capacity=10GiB name=scratch",
              "#DW jobdw type=gfs2 capacity=20GiB name=shared",
              "#DW jobdw type=lustre capacity=100GiB name=big")


def _answer(ptr: Any, err: Any) -> str:
    """The engine's text as it gave it, or its error's."""
    if ptr == _ffi.ffi.NULL:
        return json.dumps({"error": _ffi.error_text(err)})
    return _ffi.take_string(ptr)


def replay_file(path: Path, out: Path) -> tuple[int, float]:
    """Replay one recording into a fresh engine; (events, CPU seconds)."""
    lib, events, cpu = _ffi.lib, 0, 0.0
    engine = None
    with open(path, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            op = json.loads(line)
            err = _ffi.new_error()
            t0 = time.process_time()
            if op["op"] == "create":
                text = op["config"].encode() if op["config"] is not None else _ffi.ffi.NULL
                h = lib.dws_engine_create_json(text, err)
                answer = (json.dumps({"error": _ffi.error_text(err)})
                          if h == _ffi.ffi.NULL else '"created"')
                engine = _ffi.ffi.gc(h, lib.dws_engine_destroy) if h != _ffi.ffi.NULL else None
            elif engine is None:
                answer = '{"error": "no engine"}'
            elif op["op"] == "reconfig":
                rc = lib.dws_engine_reconfig_json(engine, op["config"].encode(), err)
                answer = ('"reconfigured"' if rc == 0
                          else json.dumps({"error": _ffi.error_text(err)}))
            else:
                text = op["event"].encode("utf-8", "surrogatepass")
                answer = (_answer(lib.dws_engine_event_json(engine, text, err), err) + "\n"
                          + _answer(lib.dws_engine_take_records_json(engine, err), err))
                events += 1
            cpu += time.process_time() - t0
            dst.write(answer + "\n")
    return events, cpu


def _is_sysconf(event: Any) -> bool:
    return (isinstance(event, dict) and event.get("kind") == "SystemConfiguration"
            and event.get("type") in ("watch", "sync"))


def look_file(path: Path) -> tuple[int, list[str]]:
    """Replay one recording, every job looked at again after each event
    (the last SystemConfiguration fed again); (looks, what acted)."""
    lib, looks = _ffi.lib, 0
    acted: list[str] = []
    engine, sysconf = None, None
    with open(path, encoding="utf-8") as src:
        for line in src:
            op = json.loads(line)
            err = _ffi.new_error()
            if op["op"] == "create":
                text = op["config"].encode() if op["config"] is not None else _ffi.ffi.NULL
                h = lib.dws_engine_create_json(text, err)
                engine = _ffi.ffi.gc(h, lib.dws_engine_destroy) if h != _ffi.ffi.NULL else None
                sysconf = None
                continue
            if engine is None:
                continue
            if op["op"] == "reconfig":
                lib.dws_engine_reconfig_json(engine, op["config"].encode(), err)
                continue
            text = op["event"].encode("utf-8", "surrogatepass")
            _answer(lib.dws_engine_event_json(engine, text, err), err)
            _answer(lib.dws_engine_take_records_json(engine, err), err)
            event = json.loads(op["event"])
            if _is_sysconf(event):  # again without its "now": the clock stays
                sysconf = json.dumps({k: v for k, v in event.items() if k != "now"}).encode()
            if sysconf is None:
                continue
            again = json.loads(_answer(lib.dws_engine_event_json(engine, sysconf, err), err))
            records = json.loads(_answer(lib.dws_engine_take_records_json(engine, err), err))
            looks += 1
            if again or records:
                acted.append(f"{path.name}: after {op['event'][:120]}: {again} {records}")
    return looks, acted


def look(directory: Path) -> int:
    looks, acted = 0, list[str]()
    for path in sorted(directory.glob("*.jsonl")):
        n, a = look_file(path)
        looks, acted = looks + n, acted + a
    for line in acted[:20]:
        print(line)
    print(f"engine look: {looks} events followed by every job looked at again,"
          f" {len(acted)} acted")
    return 1 if acted else 0


def replay(directory: Path, out: Path) -> dict[str, float]:
    out.mkdir(parents=True, exist_ok=True)
    events, cpu = 0, 0.0
    files = sorted(directory.glob("*.jsonl"))
    for path in files:
        n, c = replay_file(path, out / path.name)
        events, cpu = events + n, cpu + c
    return {"recordings": len(files), "events": events, "cpu": cpu}


def record(out: Path) -> int:
    """The harness workload, recorded into `out`; the jobs run."""
    os.environ["FLUX_DWS_ENGINE_RECORD"] = str(out)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import engine_record

    from flux_dws.harness import Harness

    out.mkdir(parents=True, exist_ok=True)
    engine_record._install(out)
    engine_record._current["test"] = f"harness-{JOBS}-jobs"
    done = 0
    with Harness(system="kind", latency="zero") as h:
        live: list[int] = []
        submitted = 0
        while done < JOBS:
            while submitted < JOBS and len(live) < IN_FLIGHT:
                live.append(h.submit(DIRECTIVES[submitted % len(DIRECTIVES)]))
                submitted += 1
            jobid = live.pop(0)
            h.wait(jobid, timeout=120.0)
            done += 1
    return done


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv[1:]
    if args[:1] == ["replay"] and len(args) == 3:
        fig = replay(Path(args[1]), Path(args[2]))
        print(f"engine replay: {fig['recordings']:.0f} recordings, {fig['events']:.0f} events,"
              f" {fig['cpu']:.3f} s CPU, {1e6 * fig['cpu'] / max(fig['events'], 1):.1f} us/event")
        return 0
    if args[:1] == ["look"] and len(args) == 2:
        return look(Path(args[1]))
    if args[:1] == ["record"] and len(args) == 2:
        print(f"engine record: {record(Path(args[1]))} jobs ended")
        return 0
    if args:
        print(__doc__, file=sys.stderr)
        return 2
    import tempfile

    with tempfile.TemporaryDirectory(prefix="engine-replay-") as tmp:
        jobs = record(Path(tmp) / "in")
        fig = replay(Path(tmp) / "in", Path(tmp) / "out")
    print(f"engine replay events: {fig['events']:.0f} events")
    print(f"engine replay cpu per event: {1e6 * fig['cpu'] / max(fig['events'], 1):.1f} us")
    print(f"engine replay cpu per job: {1e3 * fig['cpu'] / max(jobs, 1):.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
