"""A rabbit job as its owner sees it (issue 35), through the harness:
dws.jobs and dws.job answer the job's owner and the instance owner, and
nobody else; a running copy_in shows its progress; the timeline and the
error come through; nothing secret goes out.
"""

from __future__ import annotations

import errno
import json
import queue
import time
from typing import Any

from t.python.service.harnesshelp import fault, phase

from flux_dws.emulator.driver import RESOURCE
from flux_dws.harness import Harness

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
STAGED_IN = [XFS, "#DW copy_in source=/lus/global/in destination=$DW_JOB_scratch/"]
ALICE, BOB = 1000, 1001
DM_KIND = ("nnf.cray.hpe.com", "nnfdatamovements")
DM_RESOURCE = RESOURCE["dm"]


def await_progress(h: Harness, timeout: float = 30.0) -> None:
    """Until the emulator's copy_in reports progress (its commandStatus)."""
    events = h.emulator.store.subscribe_queue([DM_KIND])
    deadline = time.monotonic() + timeout
    while True:
        for dm in h.emulator.store.list_objects(DM_RESOURCE, None, None):
            if ((dm.get("status") or {}).get("commandStatus") or {}).get("progress", 0) > 0:
                return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no data movement progress")
        try:
            events.get(timeout=left)
        except queue.Empty:
            pass


def job_view(h: Harness, jobid: int, userid: int) -> dict[str, Any]:
    return h.ask("dws.job", userid=userid, payload={"jobid": jobid})


def test_owner_sees_a_moving_copy_in_and_others_see_nothing() -> None:
    with Harness() as h:
        fault(h, kind="datamovement", index=1, severity="delay", seconds=3.0)
        jobid = h.submit(STAGED_IN, nodes=2, userid=ALICE, runtime=0.0)
        h.wait_for(lambda: phase(h, jobid) == "datain", what="datain")

        await_progress(h)
        v = job_view(h, jobid, ALICE)
        dms = v["datamovements"]
        assert dms and dms[0]["initiator"] == "copy_in", v
        assert dms[0]["state"] == "Running"
        assert 0 < dms[0]["commandStatus"]["progress"] < 100
        assert "Copied" in dms[0]["commandStatus"]["lastMessage"]
        assert dms[0]["source"] == "/lus/global/in"
        assert v["phase"] == "datain" and v["userid"] == ALICE
        assert [d["command"] for d in v["directives"]] == ["jobdw", "copy_in"]
        assert v["directives"][0]["args"]["type"] == "xfs"
        assert v["rabbits"]
        assert {"Proposal", "Setup", "DataIn"} <= set(v["timeline"])
        assert "done" not in v["timeline"]["DataIn"]
        text = json.dumps(v)
        assert "workflowToken" not in text and "secret" not in text.lower()

        other = job_view(h, jobid, BOB)
        assert other.get("errnum") == errno.EPERM, other
        assert "belongs to another user" in other["error"]
        assert h.ask("dws.jobs", userid=BOB)["jobs"] == []
        assert [j["id"] for j in h.ask("dws.jobs", userid=ALICE)["jobs"]] == [jobid]
        assert h.ask("dws.jobs", userid=BOB, payload={"all_users": True})["errnum"] \
            == errno.EPERM
        everyone = h.ask("dws.jobs", payload={"all_users": True})["jobs"]
        assert [j["id"] for j in everyone] == [jobid]
        assert "datamovements" in job_view(h, jobid, h.owner)  # the instance owner sees all
        h.wait(jobid)


def test_unknown_and_malformed() -> None:
    with Harness() as h:
        gone = job_view(h, 424242, ALICE)
        assert gone["errnum"] == errno.ENOENT and "has no Workflow" in gone["error"]
        bad = job_view(h, -1, ALICE)  # type: ignore[arg-type]
        assert bad.get("success") is False and "jobid" in bad["errstr"]
        bad = h.ask("dws.jobs", userid=ALICE, payload={"ids": ["x"]})
        assert bad.get("success") is False and "ids[0]" in bad["errstr"]


def test_a_failed_mount_is_the_jobs_error() -> None:
    """The note raised is the job's error, as raised (the plain sentence
    is added where it is shown); Teardown held so the Workflow stays."""
    with Harness(config={"tc_timeout": 0.5}) as h:
        fault(h, kind="clientmount", compute="compute-01", state="PreRun", severity="Fatal",
              message="mount.xfs: wrong fs type")
        fault(h, state="Teardown", severity="stall")
        jobid = h.submit([XFS], nodes=1, userid=ALICE)
        job = h.wait_event(jobid, "exception")
        note = next(e["note"] for e in job.exceptions if e["severity"] == 0)
        h.wait_for(lambda: phase(h, jobid) == "teardown", what="teardown")
        line = h.ask("dws.jobs", userid=ALICE)["jobs"][0]
        assert line["error"] and note.startswith(line["error"]), (line, note)
        assert job_view(h, jobid, ALICE)["error"] == line["error"]
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
