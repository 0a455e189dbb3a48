"""A job's KVS write that fails is sent again (issue 44.5): the record is
not lost, a write sent again never puts back a key a later write has put,
and what succeeds on a second try is a warning, not an error."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from flux_dws.harness import Harness
from flux_dws.harness.link import HarnessLink
from flux_dws.service import core

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
Commit = Callable[[HarnessLink, int, dict[str, Any], dict[str, str],
                   Callable[[bool, str], None]], None]


@pytest.fixture
def h() -> Iterator[Harness]:
    with Harness() as harness:
        yield harness
        assert harness.reactor.errors == []


def errors(h: Harness) -> list[str]:
    return [m for lvl, m in h.link.logs if lvl == "err" and "KVS write" in m]


def warnings(h: Harness) -> list[str]:
    return [m for lvl, m in h.link.logs if lvl == "warning" and "KVS write" in m]


def test_a_failed_write_is_sent_again_and_the_record_is_whole(
        h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    plain: Commit = HarnessLink.kvs_commit
    failed: list[list[str]] = []

    def flaky(self: HarnessLink, jobid: int, put: dict[str, Any], link: dict[str, str],
              callback: Callable[[bool, str], None]) -> None:
        if "data.dws.workflow" in put and not failed:  # the Teardown write, once
            failed.append(sorted(put))
            self.reactor.post(lambda: callback(False, "File exists"))
            return
        plain(self, jobid, put, link, callback)

    monkeypatch.setattr(HarnessLink, "kvs_commit", flaky)
    job = h.wait(h.submit(XFS, nodes=1))
    assert job.exceptions == [] and failed
    wf = job.kvs_get("data.dws.workflow")
    assert wf["metadata"]["name"] == f"fluxjob-{job.id}"
    assert job.links["rabbit_workflow"] == "data.dws.workflow"
    assert errors(h) == []
    assert warnings(h) == [f"job {job.id}: KVS write failed (File exists): sending it again"
                           f" (2 of {core.KVS_TRIES})"]


def test_a_write_sent_again_leaves_out_what_a_later_write_put(
        h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first write of data.dws.job fails, and its failure comes back
    only after the next write of it has landed: sent again, it must not
    put the older record back."""
    plain: Commit = HarnessLink.kvs_commit
    held: list[Callable[[], None]] = []
    resent: list[dict[str, Any]] = []  # what the failure's callback sent again
    state = {"failed": False, "in_failure": False}

    def racing(self: HarnessLink, jobid: int, put: dict[str, Any], link: dict[str, str],
               callback: Callable[[bool, str], None]) -> None:
        if state["in_failure"]:
            resent.append(put)
        elif "data.dws.job" in put and not state["failed"]:
            state["failed"] = True

            def fail() -> None:
                state["in_failure"] = True
                callback(False, "File exists")
                state["in_failure"] = False

            held.append(fail)
            return
        elif held and "data.dws.job" in put:  # a later record lands, then the failure
            plain(self, jobid, put, link, callback)
            self.reactor.post(held.pop())
            return
        plain(self, jobid, put, link, callback)

    monkeypatch.setattr(HarnessLink, "kvs_commit", racing)
    job = h.wait(h.submit(XFS, nodes=1))
    assert job.exceptions == [] and state["failed"] and not held
    # sent again or not (nothing else was in it), never the older record
    assert all("data.dws.job" not in put for put in resent)
    # the record is the last one the engine wrote: the job's end
    assert job.kvs_get("data.dws.job")["phase"] == "deleting"
    assert errors(h) == []


def test_a_write_that_keeps_failing_is_given_up_with_one_error(
        h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    plain: Commit = HarnessLink.kvs_commit
    tries: list[int] = []

    def broken(self: HarnessLink, jobid: int, put: dict[str, Any], link: dict[str, str],
               callback: Callable[[bool, str], None]) -> None:
        if "data.dws.teardown" in put:
            tries.append(jobid)
            self.reactor.post(lambda: callback(False, "Input/output error"))
            return
        plain(self, jobid, put, link, callback)

    monkeypatch.setattr(HarnessLink, "kvs_commit", broken)
    job = h.wait(h.submit(XFS, nodes=1))
    assert job.exceptions == []  # a lost record does not fail the job
    assert len(tries) == core.KVS_TRIES
    assert errors(h) == [f"job {job.id}: KVS write failed {core.KVS_TRIES} times, given up:"
                         f" Input/output error"]
    assert len(warnings(h)) == core.KVS_TRIES - 1
    assert job.kvs_get("data.dws.teardown") is None
