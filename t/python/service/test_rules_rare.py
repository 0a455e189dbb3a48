"""The decider's rare rules (engine/rules.h) through the harness: the real
service, the emulator and a job manager, each rule reached by the inputs
a site sees and held to what follows it (the job's exception, its drain,
its view, the log), with nothing left behind.  The engine-alone share is
t/python/libdws/test_rules_rare.py.
"""

from __future__ import annotations

from t.python.service.harnesshelp import cleared, fault, state, waits_on_limit

from flux_dws.harness import Harness
from flux_dws.jobview import job_text
from flux_dws.libdws.jobsm import PRESTAGE_DEPENDENCY

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
LUSTRE = "#DW jobdw type=lustre capacity=10GiB name=lus"
COPY_IN = "#DW copy_in source=/lus/global/in destination=$DW_JOB_lus/"
PREFIX = "DWS/Rabbit interactions failed: "


def fired(h: Harness) -> dict[str, int]:
    """How often each rule chose a step in the harness's service."""
    def counts() -> dict[str, int]:
        assert h.service is not None
        return h.service.engine.rules_fired()

    out: dict[str, int] = h.reactor.call(counts)
    return out


def test_a_job_larger_than_the_instance_is_not_prestaged() -> None:
    """prestage-too-big: under rabbit.prestage = "always", a Lustre job
    whose storage could be placed before its nodes asks for 5 nodes of an
    instance of 4.  Held ahead of nodes it could hold its storage forever:
    it is not pre-staged.  It leaves DEPEND without dws-prestage to wait
    for nodes, its storage untouched, and its view and the log say why."""
    with Harness(config={"prestage": "always"}) as h:
        jobid = h.submit([LUSTRE, COPY_IN], nodes=5)
        job = h.wait_event(jobid, "dependency-remove")
        assert state(h, jobid) == "SCHED"
        assert PRESTAGE_DEPENDENCY not in str(job.eventlog)
        why = "it asks for 5 nodes, the instance has 4"
        view = h.ask("dws.job", payload={"jobid": jobid})
        assert view["prestage_not"] == why and view["phase"] == "proposed", view
        assert f"not pre-staged: {why}" in job_text(view)
        logged = ("info", f"fluxjob-{jobid}: not pre-staged: {why}")
        h.wait_for(lambda: logged in h.link.logs, 10, "the log to say why")
        counts = fired(h)
        assert counts["prestage-too-big"] == 1 and counts["prestage-chosen"] == 0, counts
        h.cancel(jobid)
        assert [e["type"] for e in h.wait(jobid).exceptions] == ["cancel"]
        assert cleared(h) == {}


def test_a_transient_condition_that_lasts_in_postrun_drains_who_still_mounts() -> None:
    """transient-postrun: PostRun's unmount hits a TransientCondition that
    lasts tc_timeout.  As for PostRun's Error, which computes still mount
    is read first and exactly those are drained (postrun-error-drain);
    the job fails with DWS' words, then Teardown."""
    with Harness(config={"tc_timeout": 0.3}) as h:
        fault(h, state="PostRun", severity="Major", message="flaky unmount")
        jobid = h.submit(XFS, nodes=2)
        job = h.wait(jobid)
        (exc,) = [e for e in job.exceptions if e["severity"] == 0]
        assert exc["type"] == "exception"
        assert exc["note"] == (PREFIX + "workflow in TransientCondition for more than 0.3 s:"
                               " DW Directive 0: Internal error: flaky unmount"), exc
        assert job.events().index("start") < job.events().index("exception")
        drained = h.reactor.call(lambda: dict(h.jm.drained))
        assert sorted(drained) == sorted(job.hosts), (drained, job.hosts)
        assert all(r.startswith("failed to unmount rabbit kind-worker") for r in
                   drained.values()), drained
        counts = fired(h)
        assert counts["transient-postrun"] == 1 and counts["postrun-error-drain"] == 1, counts
        assert counts["transient-fail"] == 0
        assert cleared(h) == {}


def test_an_admitted_jobs_create_that_fails_raises_on_the_job() -> None:
    """create-failed: under [rabbit.limits] a job waits on dws-limit, its
    dws.create answered; when its turn comes its Workflow's create is
    refused (an admission webhook's 422).  No request waits to carry
    that to the job manager: the service raises the job's exception
    itself, the job ends without a Workflow, its epilog released."""
    with Harness(config={"limits": {"max_user_jobs": 1, "users": {}}}) as h:
        first = h.submit(XFS, nodes=1, runtime=3600.0)
        h.wait_event(first, "start")
        second = h.submit(XFS, nodes=1)
        waits_on_limit(h, second)
        refused = h.emulator.api_fault(422, method="POST", path=r"/workflows(\?|$)",
                                       message="admission webhook denied the request")
        h.finish(first)
        job = h.wait(second)
        assert refused.hits == 1
        (exc,) = job.exceptions
        assert exc == {"type": "exception", "severity": 0,
                       "note": PREFIX + f"cannot create workflow fluxjob-{second}: admission"
                       " webhook denied the request"}, exc
        assert "alloc" not in job.events()
        assert job.events().index("exception") < job.events().index("epilog-finish")
        assert h.wait(first).exceptions == []
        counts = fired(h)
        assert counts["create-failed"] == 1 and counts["create-failed-forget"] == 0, counts
        assert cleared(h) == {}
