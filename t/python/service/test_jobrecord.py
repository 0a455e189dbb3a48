"""A job's KVS record is the view dws.job answers (issue 45, item 4),
through the harness: while the job waits in DataIn and in Teardown, the
record the engine wrote equals the answer at that moment (but for what
only an answer has); once the job has ended, ``flux dws job``'s reader
reads back the last record whole, with only its own words added.
"""

from __future__ import annotations

import json
import time
from typing import Any

from t.python.service.harnesshelp import fault, phase

from flux_dws.harness import Harness
from flux_dws.jobrecord import ANSWER_ONLY, INACTIVE, stored_view
from flux_dws.jobview import job_text
from flux_dws.libdws.engine import PHASES, RECORD_KEY

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
STAGED_IN = [XFS, "#DW copy_in source=/lus/global/in destination=$DW_JOB_scratch/"]
ALICE = 1000


def record(h: Harness, jobid: int) -> dict[str, Any]:
    rec: dict[str, Any] = h.reactor.call(lambda: json.loads(json.dumps(
        h.jm.jobs[jobid].kvs.get(RECORD_KEY))))
    assert isinstance(rec, dict), f"no {RECORD_KEY} in job {jobid}'s KVS record"
    return rec


def answer_as_recorded(h: Harness, jobid: int) -> dict[str, Any]:
    v = h.ask("dws.job", userid=ALICE, payload={"jobid": jobid})
    assert v.get("success") is True, v
    return {k: x for k, x in v.items() if k not in ANSWER_ONLY}


def answer_and_record(h: Harness, jobid: int, timeout: float = 10.0
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The answer and the record, read until they agree (the record is
    written after the event that changed the view, and another event may
    come between the two reads); the last pair after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        seen = answer_as_recorded(h, jobid)
        rec = record(h, jobid)
        if {k: v for k, v in rec.items() if k != "datamovements"} == seen \
                or time.monotonic() > deadline:
            return seen, rec


def kvs_of(h: Harness, jobid: int) -> dict[str, Any]:
    """The job's KVS keys as ``flux dws job`` reads them (JSON text)."""
    job = h.job(jobid)
    rec = {k: json.dumps(v) for k, v in job.kvs.items() if k.startswith("data.dws.")}
    rec["eventlog"] = "".join(json.dumps({"timestamp": t, "name": n, "context": c}) + "\n"
                              for t, n, c in job.eventlog)
    return rec


def test_the_record_is_the_answer_and_reads_back_whole() -> None:
    with Harness() as h:
        fault(h, kind="datamovement", index=1, severity="delay", seconds=3.0)
        fault(h, state="Teardown", severity="stall")
        jobid = h.submit(STAGED_IN, nodes=1, userid=ALICE, runtime=0.0)

        h.wait_for(lambda: phase(h, jobid) == "datain", what="datain")
        seen, rec = answer_and_record(h, jobid)
        assert {k: v for k, v in rec.items() if k != "datamovements"} == seen
        assert rec["phase"] == "datain" and rec["phase"] in PHASES
        assert [d["command"] for d in rec["directives"]] == ["jobdw", "copy_in"]

        h.wait_for(lambda: phase(h, jobid) == "teardown", what="teardown")
        seen, rec = answer_and_record(h, jobid)
        assert {k: v for k, v in rec.items() if k != "datamovements"} == seen
        assert rec["timeline"]["DataIn"]["done"] >= rec["timeline"]["DataIn"]["asked"]

        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        h.wait(jobid)
        last = record(h, jobid)
        assert last["phase"] == "deleting", last["phase"]
        assert last["state"] == "Teardown"
        ended = stored_view(jobid, kvs_of(h, jobid), job={"result": "COMPLETED"})
        # the reader's own words: where it was read, and what the KVS keeps beside
        assert ended["phase"] == INACTIVE and ended["source"] == "kvs"
        assert {k: v for k, v in ended.items() if k in last and k != "phase"} \
            == {k: v for k, v in last.items() if k != "phase"}
        assert set(last) <= set(ended)
        assert "data.dws.job" in ended["record_keys"]
        text = job_text(ended)
        assert "inactive (COMPLETED); read from the job's KVS record" in text
        assert "  data.dws.job: the job as flux dws job showed it last" in text
