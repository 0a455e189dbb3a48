"""[rabbit.limits] by flux-accounting bank, end to end through the harness
(issue 65): a job is weighed by its user, by its bank as a whole and by
its user within the bank; a job over a bank's limit waits on dws-limit
while the same user's job in another bank goes; a job alone over a
bank's GiB is refused; a restarted service reads each job's bank again
(from its Workflow, or the jobspec of a job still waiting); and each
job's record says its bank, project and the GiB-seconds it held."""

from __future__ import annotations

import json
from typing import Any

from t.python.service.harnesshelp import (
    engine_view,
    fault,
    has_workflow,
    settled,
    user_name,
    waits_on_limit,
)

from flux_dws.harness import Harness
from flux_dws.libdws.engine import RECORD_KEY
from flux_dws.libdws.jobsm import LIMIT_DEPENDENCY

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
LUSTRE = "#DW jobdw type=lustre capacity=50GiB name=lus"
LONG = 3600.0  # a runtime that holds the job running until h.finish
PHYSICS = {"bank": "physics", "project": "fusion"}
CHEM = {"bank": "chem"}


def _record(h: Harness, jobid: int) -> dict[str, Any]:
    rec: dict[str, Any] = h.reactor.call(lambda: json.loads(json.dumps(
        h.jm.jobs[jobid].kvs.get(RECORD_KEY))))
    assert isinstance(rec, dict), f"no {RECORD_KEY} in job {jobid}'s KVS record"
    return rec


def test_a_full_bank_holds_its_jobs_and_not_the_users_others() -> None:
    limits = {"banks": {"physics": {"max_bank_jobs": 1}}}
    with Harness(config={"limits": limits}) as h:
        a = h.submit(XFS, nodes=1, runtime=LONG, system=PHYSICS)
        h.wait_event(a, "start")
        b = h.submit(XFS, nodes=1, system=PHYSICS)
        waits_on_limit(h, b)
        assert engine_view(h, b)["waiting"] == "max_bank_jobs 1: bank physics holds 10 GiB in 1 job"
        assert not has_workflow(h, b)
        c = h.submit(XFS, nodes=1, system=CHEM)  # the same user, another bank
        assert h.wait(c).exceptions == []
        d = h.submit(XFS, nodes=1)  # no bank: the bank's limits are not its
        assert h.wait(d).exceptions == []
        assert LIMIT_DEPENDENCY in h.jm.jobs[b].deps
        h.finish(a)
        assert h.wait(a).exceptions == []
        assert h.wait(b).exceptions == []
        assert settled(h) == {}


def test_a_users_share_of_a_bank() -> None:
    limits = {"max_user_gib": 1000, "banks": {"physics": {"max_user_gib": 15}}}
    with Harness(config={"limits": limits}) as h:
        a = h.submit(XFS, nodes=1, runtime=LONG, system=PHYSICS)
        h.wait_event(a, "start")
        b = h.submit(XFS, nodes=1, system=PHYSICS)
        waits_on_limit(h, b)
        assert engine_view(h, b)["waiting"] == \
            f"max_user_gib 15: user {user_name(h.owner)} holds 10 GiB in 1 job in bank physics"
        h.finish(a)
        assert h.wait(b).exceptions == []
        assert settled(h) == {}


def test_a_job_alone_over_the_banks_gib_is_refused() -> None:
    with Harness(config={"limits": {"max_bank_gib": 15}}) as h:
        jobid = h.submit(XFS, nodes=2, system=CHEM)  # 2 x 10 GiB
        job = h.wait(jobid)
        assert [e["type"] for e in job.exceptions] == ["dws-create"]
        assert job.exceptions[0]["note"].endswith(
            "Requested a total of 20 GiB of rabbit storage but max_bank_gib is 15 GiB"
            " (bank chem)")
        assert not has_workflow(h, jobid)


def test_a_bank_that_is_not_a_string() -> None:
    with Harness(config={}) as h:
        # the plugin sends a bank only when it is a string: a number is none
        jobid = h.submit(XFS, nodes=1, system={"bank": 5})
        assert h.wait(jobid).exceptions == []
        assert "bank" not in _record(h, jobid)
        # another plugin's dws.create with one is refused, naming it
        answer = h.ask("dws.create", payload={
            "jobid": 4242, "userid": h.owner, "dw_directives": XFS,
            "resources": [{"type": "node", "count": 1}], "failure_tolerance": 0, "bank": 5})
        assert answer == {"success": False,
                          "errstr": "dws.create: bank must be a string (flux-accounting's name)"}
        assert not has_workflow(h, 4242)


def test_a_restart_reads_each_jobs_bank_again() -> None:
    limits = {"banks": {"physics": {"max_bank_gib": 25}}}
    with Harness(config={"limits": limits}) as h:
        a = h.submit(XFS, nodes=2, runtime=LONG, system=PHYSICS)  # 20 GiB
        h.wait_event(a, "start")
        b = h.submit(XFS, nodes=1, system=PHYSICS)  # 30 with a's: waits
        waits_on_limit(h, b)
        h.restart_service()
        # a's bank from its Workflow, b's from its jobspec: b still waits;
        # each ask is a round trip through the restarted service (no sleep)
        asks = 0
        reason = "max_bank_gib 25: bank physics holds 20 GiB in 1 job"
        while engine_view(h, b).get("waiting") != reason:
            asks += 1
            assert asks < 5000, f"the restarted service never held job {b} by the bank"
        c = h.submit(XFS, nodes=1, system=PHYSICS)
        waits_on_limit(h, c)  # behind b, and over the bank besides
        h.finish(a)
        assert h.wait(b).exceptions == []
        assert h.wait(c).exceptions == []
        assert _record(h, a)["bank"] == "physics"
        assert settled(h) == {}


def test_the_record_says_who_held_how_much_for_how_long() -> None:
    with Harness(config={}) as h:
        a = h.submit([XFS, LUSTRE], nodes=2, system=PHYSICS)
        assert h.wait(a).exceptions == []
        settled(h)
        rec = _record(h, a)
        assert (rec["bank"], rec["project"]) == ("physics", "fusion")
        usage = rec["usage"]
        assert usage["gib"] == {"xfs": 20, "lustre": 50}
        held = usage["until"] - usage["since"]
        assert held >= 0
        assert usage["gib_seconds"] == {"xfs": 20 * held, "lustre": 50 * held}
        b = h.submit(XFS, nodes=1)
        assert h.wait(b).exceptions == []
        settled(h)
        rec = _record(h, b)
        assert "bank" not in rec and "project" not in rec
        assert rec["usage"]["gib"] == {"xfs": 10}


def _events_at(h: Harness, jobid: int) -> dict[str, float]:
    """When each of the job's eventlog entries was posted (the first of a name)."""
    out: dict[str, float] = {}
    for t, name, _ in h.job(jobid).eventlog:
        out.setdefault(name, t)
    return out


def test_storage_kept_after_an_early_release_counts_until_teardown() -> None:
    staged = [XFS, "#DW copy_out source=$DW_JOB_scratch/ destination=/lus/global/out"]
    with Harness(config={"release_computes": "after-unmount"}) as h:
        fault(h, state="DataOut", severity="stall")  # held until the job has ended
        jobid = h.submit(staged, nodes=1, system=PHYSICS)
        assert h.wait(jobid).exceptions == []
        h.emulator.controllers.clear_faults()  # type: ignore[union-attr]
        settled(h)
        usage = _record(h, jobid)["usage"]
        ended = _events_at(h, jobid)["clean"]  # the job ended (its epilog released)
        # its storage outlived its nodes: counted until Teardown, after the end
        assert usage["until"] >= ended
        assert usage["gib_seconds"]["xfs"] == 10 * (usage["until"] - usage["since"])


def test_prestaged_storage_counts_from_before_the_nodes() -> None:
    lustre = "#DW jobdw type=lustre capacity=10GiB name=lus"
    staged = [lustre, "#DW copy_in source=/lus/global/in destination=$DW_JOB_lus/"]
    with Harness() as h:
        jobid = h.submit(staged, nodes=2, system={"dw_prestage": "yes", **PHYSICS})
        assert h.wait(jobid).exceptions == []
        settled(h)
        usage = _record(h, jobid)["usage"]
        # its Workflow came before its nodes: the hold counts from then
        assert usage["since"] <= _events_at(h, jobid)["alloc"]
        assert usage["gib"] == {"lustre": 10}
        assert usage["until"] >= usage["since"]
