"""flux_dws.jobview: the data and text of ``flux dws jobs`` and ``flux
dws job``, from the service's answer or from a job's KVS record (no
Flux needed: the commands fetch, this module shapes and words)."""

from __future__ import annotations

import json
from typing import Any

from flux_dws.cli.jobs import jobs_lines
from flux_dws.explain import explain, explain_note
from flux_dws.jobrecord import eventlog_entries, from_record, safe_env
from flux_dws.jobview import (
    directives_short,
    duration,
    explained,
    job_text,
    timeline_rows,
)
from flux_dws.textfmt import f58

T0 = 1_700_000_000.0
XFS = {"command": "jobdw", "args": {"type": "xfs", "capacity": "10GiB", "name": "scratch"}}
COPY_IN = {"command": "copy_in", "args": {"source": "/lus/in", "destination": "$DW_JOB_scratch/"}}
MOUNT_NOTE = ("DWS/Rabbit interactions failed: workflow in TransientCondition too long in"
              " PreRun: DW Directive 0: Internal error:  (internal error: Node: compute-01:"
              " mount/unmount failed: unable to mount file system: mount.xfs: wrong fs type)")


def service_answer(**kw: Any) -> dict[str, Any]:
    j: dict[str, Any] = {
        "id": 1234, "userid": 1000, "workflow": "fluxjob-1234", "phase": "datain",
        "desired": "DataIn", "state": "DataIn", "ready": False, "status": "Running",
        "phase_seconds": 65.0, "directives": [XFS, COPY_IN], "rabbits": "kind-worker2",
        "hosts": "compute-[01-02]", "env": {"DW_JOB_scratch": "/mnt/nnf/abc"},
        "timeline": {"Proposal": {"asked": T0, "done": T0 + 0.5},
                     "Setup": {"asked": T0 + 2.0, "done": T0 + 3.0},
                     "DataIn": {"asked": T0 + 3.1}},
        "datamovements": [{"initiator": "copy_in", "source": "/lus/in",
                           "destination": "$DW_JOB_scratch/", "state": "Running",
                           "commandStatus": {"progress": 42, "elapsedTime": "4.2s",
                                             "lastMessage": "Copied 1.2 GiB (42%)",
                                             "files": 7}}],
        "now": T0 + 68.1, "t_submit": T0 - 0.2}
    j.update(kw)
    return j


def test_directives_in_short() -> None:
    assert directives_short([XFS, COPY_IN]) == "xfs 10GiB, copy_in"
    assert directives_short([{"command": "persistentdw", "args": {"name": "p"}}]) \
        == "persistent p"
    assert directives_short([{"command": "create_persistent",
                              "args": {"type": "lustre", "capacity": "1TiB"}}]) \
        == "lustre 1TiB persistent"
    assert directives_short("junk") == "-" and directives_short([]) == "-"


def test_duration() -> None:
    assert [duration(s) for s in (0.04, 9.95, 45, 312, 7380, 270000, -3)] == [
        "0.0s", "9.9s", "45s", "5m12s", "2h03m", "3d03h", "0.0s"]


def test_a_job_in_datain_shows_its_copy_moving() -> None:
    text = job_text(service_answer(), "alice")
    assert f"job {f58(1234)}: owner alice (uid 1000), Workflow fluxjob-1234" in text
    assert "phase datain: Workflow DataIn Running for 1m05s" in text
    assert "  0  jobdw xfs, capacity 10GiB, name scratch, on kind-worker2" in text
    assert "  1  copy_in /lus/in -> $DW_JOB_scratch/" in text
    assert "  DW_JOB_scratch=/mnt/nnf/abc" in text
    assert ("  copy_in /lus/in -> $DW_JOB_scratch/: Running, 42% after 4.2s (7 files)"
            in text)
    assert "      Copied 1.2 GiB (42%)" in text
    assert "error:" not in text


def test_the_timeline_says_where_the_time_went() -> None:
    rows = timeline_rows(service_answer())
    assert rows == [("Proposal", "+0.2s", "0.5s", "0.2s (submit to Workflow)"),
                    ("Setup", "+2.2s", "1.0s", "1.5s (waiting for resources)"),
                    ("DataIn", "+3.3s", "1m05s so far", "0.1s")]
    # an ended job: a state asked for and never done says so
    ended = service_answer(phase="inactive", timeline={
        "Proposal": {"asked": T0, "done": T0 + 0.5}, "PreRun": {"asked": T0 + 1.0}})
    assert [r[2] for r in timeline_rows(ended)] == ["0.5s", "never done"]
    # a state this service did not see asked: DWS' own figure
    rows = timeline_rows(service_answer(timeline={}, timing={"Proposal": "512ms"}))
    assert rows == [("Proposal", "-", "512ms", "-")]


def test_errors_are_said_plainly_with_dws_text_beneath() -> None:
    note = explain_note(MOUNT_NOTE)
    assert note.startswith(MOUNT_NOTE) and note != MOUNT_NOTE
    e = explained(note)
    assert e.text == MOUNT_NOTE and e.sentence == explain(MOUNT_NOTE)
    assert explained(MOUNT_NOTE) == e  # a Workflow message, not explained yet
    text = job_text(service_answer(error=note))
    lines = text.splitlines()
    at = lines.index("error:")
    assert lines[at + 1] == f"  {e.sentence}"
    assert lines[at + 2] == f"  DWS said: {MOUNT_NOTE}"
    unknown = explained("something nobody wrote down")
    assert unknown.sentence is None and unknown.text == "something nobody wrote down"
    assert "  something nobody wrote down" in job_text(service_answer(error=unknown.text))
    # a " -- " inside DWS' own text is not taken for our separator
    odd = "DWS said -- this"
    assert explained(odd).text == odd


def test_the_jobs_table() -> None:
    lines = jobs_lines([service_answer(id=2, f58="fB"),
                        service_answer(id=1, f58="fA", phase="teardown", state="Teardown",
                                       error=explain_note(MOUNT_NOTE), userid=1001)],
                       T0, {1000: "alice"})
    assert lines[0].split() == ["JOBID", "USER", "PHASE", "STATE", "DIRECTIVES", "RABBITS",
                                "TIME", "ERROR"]
    # the id as flux-core prints it, not the answer's plain "f58"
    assert lines[1].split()[:4] == [f58(1), "1001", "teardown", "Teardown"]
    assert lines[1].endswith("...") or (explain(MOUNT_NOTE) or "")[:20] in lines[1]
    assert lines[2].split()[:5] == [f58(2), "alice", "datain", "DataIn", "Running"]
    assert "xfs 10GiB, copy_in" in lines[2] and "kind-worker2" in lines[2]


def eventlog(*events: dict[str, Any]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def record() -> dict[str, Any]:
    wf = {"metadata": {"name": "fluxjob-77"},
          "spec": {"dwDirectives": ["#DW jobdw type=xfs capacity=10GiB name=scratch",
                                    "#DW copy_out source=$DW_JOB_scratch/ destination=/lus/o"]},
          "status": {"state": "DataOut", "status": "Error", "ready": False,
                     "workflowToken": {"secretName": "s3cr3t", "secretNamespace": "default"},
                     "env": {"DW_JOB_scratch": "/mnt/x", "DW_WORKFLOW_NAME": "fluxjob-77",
                             "PATH": "/evil"}}}
    copy_note = ("DWS/Rabbit interactions failed: workflow hit an error: DW Directive 1:"
                 " Internal error: data movement operation failed during 'DataOut',"
                 " message: dcp: Permission denied")
    return {
        "data.dws.workflow": json.dumps(wf),
        "data.dws.timeline.dataout": json.dumps({"asked": T0 + 10, "done": T0 + 12}),
        "data.dws.timeline.postrun": json.dumps({"asked": T0 + 8, "done": T0 + 9}),
        "data.dws.timing.dataout": '"2s"',
        "data.dws.teardown": json.dumps({"state": "complete", "time": T0 + 13}),
        "eventlog": eventlog(
            {"timestamp": T0, "name": "submit", "context": {"userid": 1000}},
            {"timestamp": T0 + 1, "name": "memo", "context": {"rabbits": "kind-worker3"}},
            {"timestamp": T0 + 11, "name": "exception",
             "context": {"type": "exception", "severity": 0, "note": explain_note(copy_note)}},
            "not json" and {"timestamp": T0 + 14, "name": "clean"}),
        "jobspec": json.dumps({"attributes": {"system": {"dw": "ignored here"}}})}


def test_an_ended_job_from_its_kvs_record() -> None:
    view = from_record(77, record(), {"result": "FAILED", "t_inactive": T0 + 14})
    assert view["phase"] == "inactive" and view["userid"] == 1000
    assert [d["command"] for d in view["directives"]] == ["jobdw", "copy_out"]
    assert view["env"] == {"DW_JOB_scratch": "/mnt/x", "DW_WORKFLOW_NAME": "fluxjob-77"}
    assert view["rabbits"] == "kind-worker3"
    assert "data.dws.timeline.dataout" in view["record_keys"]
    assert "data.dws.workflow" in view["record_keys"]
    assert "s3cr3t" not in json.dumps(view) and "/evil" not in json.dumps(view)
    text = job_text(view)
    assert "inactive (FAILED); read from the job's KVS record" in text
    assert ("  data.dws.timeline.<state>: when each state was asked for and done"
            " (postrun, dataout)") in text
    lines = text.splitlines()
    err = lines[lines.index("error:") + 1:]
    assert "copy_out" in err[0] or "copy" in err[0].lower()
    assert err[1].startswith("  DWS said: DWS/Rabbit interactions failed: workflow hit")
    assert any(r[0] == "DataOut" and r[2] == "2.0s" for r in timeline_rows(view))


def test_a_record_with_only_a_jobspec() -> None:
    rec = {"jobspec": json.dumps({"attributes": {"system": {"dw": [
        "#DW jobdw type=gfs2 capacity=1TiB name=a\n#DW copy_in source=/x destination=/y"]}}}),
        "eventlog": "garbage\n" + eventlog({"timestamp": T0, "name": "submit",
                                            "context": {"userid": 5}})}
    view = from_record(5, rec)
    assert directives_short(view["directives"]) == "gfs2 1TiB, copy_in"
    assert view["record_keys"] == [] and view["timeline"] == {}
    text = job_text(view)
    assert "(nothing recorded yet)" in text and "(none yet)" in text
    assert from_record(6, {})["directives"] == []


def test_dataout_failure_after_release_is_the_error() -> None:
    rec = {"data.dws.dataout": json.dumps({"state": "failed", "time": T0,
                                           "error": "data movement operation failed"})}
    view = from_record(8, rec)
    assert view["error"].startswith("copy_out failed: data movement operation failed")
    assert "dataout: failed: data movement operation failed" in job_text(view)


def test_helpers() -> None:
    assert eventlog_entries('{"name": "a"}\n[1]\n{"x": 1}\n') == [{"name": "a"}]
    assert safe_env({"DW_A": "1", "NNF_B": "2", "X": "3", "DW_C": 4}) == {
        "DW_A": "1", "NNF_B": "2"}
    assert safe_env(None) == {}


def test_an_active_job_the_service_has_no_workflow_for() -> None:
    view = {**from_record(9, {"jobspec": json.dumps({"attributes": {"system": {
        "dw": "#DW jobdw type=xfs capacity=1GiB name=a"}}})}), "phase": "no Workflow yet"}
    text = job_text(view)
    assert "  active, no Workflow yet; read from the job's KVS record" in text
    assert "  0  jobdw xfs, capacity 1GiB, name a" in text


def test_a_directive_libdws_cannot_tokenise_keeps_its_text() -> None:
    rec = {"jobspec": json.dumps({"attributes": {"system": {"dw": [
        "#DW jobdw type=xfs type=xfs capacity=1GiB name=a"]}}})}
    (d,) = from_record(10, rec)["directives"]
    assert d["command"] == "?" and d["directive"].endswith("name=a")
    assert from_record(11, {"jobspec": json.dumps({"attributes": {"system": {
        "dw": 42}}})})["directives"] == []


def test_a_prestaged_job_waiting_for_its_chassis_and_given_up() -> None:
    chassis = {"counts": {"kind-worker2": 3}, "hosts": "compute-[01-03]"}
    waiting = service_answer(phase="datain-done", prestage={
        "since": T0, "gib": 30, "ready": True, "nodes": False, "chassis": chassis,
        "node_wait": 3600.0})
    text = job_text(waiting)
    assert ("pre-staging: 30 GiB of rabbit ssd set up ahead of its nodes for 1m08s; data in,"
            " waiting for the scheduler (given up after 1h00m without its nodes)") in text, text
    why = ("its nodes did not come within 3600 s of its data being in on compute-[01-03]"
           " (rabbit.prestage_node_wait)")
    torn = service_answer(phase="teardown", prestage={
        "since": T0, "gib": 30, "ready": True, "nodes": False, "chassis": chassis,
        "given_up": why})
    assert (f"  pre-staging given up: {why}; its storage is torn down and set up again the"
            " usual way when its nodes come") in job_text(torn)
    again = service_answer(phase="proposed", prestage_not=f"given up: {why}")
    assert f"  not pre-staged: given up: {why}" in job_text(again)
    unread = service_answer(prestage={"since": T0, "gib": 30, "ready": False, "nodes": False,
                                      "datain": {"percent": 0, "moved": 12.0, "dms": 0,
                                                 "finished": 0, "unread": "Internal error"}})
    assert "(its data movements could not be listed: Internal error)" in job_text(unread)


def test_job_text_says_its_bank_and_usage() -> None:
    held = service_answer(bank="physics", project="fusion",
                          usage={"since": T0, "gib": {"xfs": 20, "lustre": 50}})
    text = job_text(held)
    assert "\n  bank physics, project fusion\n" in text
    assert "\n  usage: 50 GiB lustre, 20 GiB xfs, held since its Workflow was created\n" in text
    ended = service_answer(bank="physics", usage={
        "since": T0, "until": T0 + 5400, "gib": {"xfs": 20},
        "gib_seconds": {"xfs": 20 * 5400.0}})
    text = job_text(ended)
    assert "\n  bank physics\n" in text
    assert f"\n  usage: 20 GiB xfs for {duration(5400)}: 30.00 GiB-hours\n" in text
    assert "usage:" not in job_text(service_answer()) and "bank" not in job_text(service_answer())
