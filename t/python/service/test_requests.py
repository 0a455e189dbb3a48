"""What the dws service asks of the API server for a job (issue 77, item
4): no request refused in a clean run, our finalizer removed once, and
one merge patch per state asked (the job's hosts ride on Setup's).

The removal goes out with the Workflow's delete; a watch event older than
its answer still shows our finalizer, and asking again then was refused
(a failed JSON-patch test, 1.6 to 1.9 per job on the emulator before).
The counts come from t/bench/bench_requests.py's counter of the
emulator's API server.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from flux_dws.harness import Harness

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_requests.py"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_requests", BENCH)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_request_is_refused_and_the_finalizer_goes_once() -> None:
    counts, undo = bench().count_requests()
    try:
        with Harness() as h:
            jobs = [h.submit([XFS]) for _ in range(6)]
            for jobid in jobs:
                h.wait(jobid, timeout=60.0)
            h.wait_for(lambda: not h.workflows(), what="every Workflow deleted", timeout=60.0)
            seen = dict(counts)
    finally:
        undo()
    refused = {k: n for k, n in seen.items() if k[2] >= 400}
    assert not refused, refused
    # json-patch is the finalizer's removal alone: once per job
    removals = sum(n for (verb, kind, _), n in seen.items()
                   if verb == "json-patch" and kind == "Workflow")
    assert removals == len(jobs), seen
    # each of the six states asked once (the hosts recorded with Setup's):
    # 6 merge patches
    patches = sum(n for (verb, kind, _), n in seen.items()
                  if verb == "merge-patch" and kind == "Workflow")
    assert patches == 6 * len(jobs), seen
