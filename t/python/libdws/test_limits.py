"""[rabbit.limits] through cffi: the table ([rabbit] parse), the engine's
pure decision (engine/limits.h) and the jobtap side's dependency method
(jobsm: flux-dws' own dependencies, added and removed for the service)."""

from __future__ import annotations

import errno
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws import limits, rabbitconf
from flux_dws.jobsm import (
    DEPENDENCY,
    DEPENDENCY_METHOD,
    LIMIT_DEPENDENCY,
    SERVICES,
    JobMachine,
)

DW = "#DW jobdw type=xfs capacity=1GiB name=x"
JOBSPEC = {"version": 1, "resources": [{"type": "node", "count": 1}],
           "attributes": {"system": {"dw": DW}}}


def test_the_table_is_absent_unless_configured() -> None:
    assert "limits" not in rabbitconf.parse({})
    assert rabbitconf.parse({"limits": {"max_user_gib": 5}})["limits"] == \
        {"max_user_gib": 5, "users": {}, "banks": {}}
    assert rabbitconf.parse({"limits": {"users": {"alice": {"max_user_jobs": 2}}}})["limits"] \
        == {"users": {"alice": {"max_user_jobs": 2}}, "banks": {}}
    assert rabbitconf.parse({"limits": {"max_bank_jobs": 9, "banks": {
        "physics": {"max_bank_gib": 4096, "max_user_jobs": 2}}}})["limits"] == {
        "max_bank_jobs": 9, "users": {}, "banks": {"physics": {"max_bank_gib": 4096,
                                                               "max_user_jobs": 2}}}


@pytest.mark.parametrize(("table", "message"), [
    ({"max_user_gib": -1}, "rabbit.limits.max_user_gib: must be an integer >= 1, got -1"),
    ({"max_user_gib": "lots"}, 'rabbit.limits.max_user_gib: must be an integer >= 1, got "lots"'),
    ({"max_user_jobs": 0}, "rabbit.limits.max_user_jobs: must be an integer >= 1, got 0"),
    ({"users": {"bob": {"max_user_gib": -1}}},
     "rabbit.limits.users.bob.max_user_gib: must be an integer >= 1, got -1"),
    ([1], "rabbit.limits: must be a table, got [1]"),
    ({"max_user_gib": 2**33},
     "rabbit.limits.max_user_gib: must be at most 8589934591 GiB, got 8589934592"),
    ({"frobnicate": 1}, "rabbit.limits.frobnicate: unknown key (rabbit.limits has"
     " max_user_gib, max_user_jobs, max_bank_gib, max_bank_jobs, users and banks)"),
    ({"max_bank_gib": 0}, "rabbit.limits.max_bank_gib: must be an integer >= 1, got 0"),
    ({"banks": {"physics": {"max_bank_jobs": "2"}}},
     'rabbit.limits.banks.physics.max_bank_jobs: must be an integer >= 1, got "2"'),
    ({"banks": {"physics": {"max_gib": 1}}},
     "rabbit.limits.banks.physics.max_gib: unknown key (rabbit.limits.banks.physics has"
     " max_bank_gib, max_bank_jobs, max_user_gib and max_user_jobs)"),
    ({"banks": {"physics": []}}, "rabbit.limits.banks.physics: must be a table holding"
     " max_bank_gib, max_bank_jobs, max_user_gib or max_user_jobs, got []"),
    ({"banks": "physics"}, 'rabbit.limits.banks: must be a table of bank names, got "physics"'),
    ({"users": {"bob": {"users": {}}}}, "rabbit.limits.users.bob.users: unknown key"
     " (rabbit.limits.users.bob has max_user_gib and max_user_jobs)"),
    ({"users": 5}, "rabbit.limits.users: must be a table of user names or uids, got 5"),
    ({"users": {"": {"max_user_gib": 1}}},
     'rabbit.limits.users: a user must be a name or a uid of 1 to 64 characters, got ""'),
    ({"users": {"bob": 3}},
     "rabbit.limits.users.bob: must be a table holding max_user_gib or max_user_jobs, got 3"),
])
def test_bad_values_are_refused_with_one_line(table: Any, message: str) -> None:
    with pytest.raises(rabbitconf.ConfigError) as info:
        rabbitconf.parse({"limits": table})
    assert str(info.value) == message


def test_decide() -> None:
    table = {"max_user_gib": 100, "max_user_jobs": 2, "users": {"bob": {"max_user_gib": 500}}}
    assert limits.decide(table, 1001, "alice", 90, 1, [20, 5]) == limits.Decision(
        "wait", "max_user_gib 100: user alice holds 90 GiB in 1 job", 0)
    assert limits.decide(table, 1001, "alice", 0, 0, [200]).verdict == "never"
    assert limits.decide(table, 1002, "bob", 0, 0, [200, 100, 300]) == limits.Decision(
        "go", "", 2)
    assert limits.decide(None, 1, None, 10**6, 10**3, [10**6]).admit == 1


def test_decide_by_bank() -> None:
    table = {"max_user_gib": 1000, "max_bank_gib": 300,
             "banks": {"physics": {"max_bank_jobs": 2, "max_user_gib": 100}}}
    # the bank's limits count only for a job charged to it
    assert limits.decide(table, 1001, "alice", 0, 0, [200]).verdict == "go"
    assert limits.decide(table, 1001, "alice", 0, 0, [200], bank="physics") == limits.Decision(
        "never", "Requested a total of 200 GiB of rabbit storage but max_user_gib is 100 GiB"
        " (user alice in bank physics)", 0)
    assert limits.decide(table, 1001, "alice", 0, 0, [50], bank="physics",
                         bank_use=(10, 2)) == limits.Decision(
        "wait", "max_bank_jobs 2: bank physics holds 10 GiB in 2 jobs", 0)
    assert limits.decide(table, 1001, "alice", 0, 0, [50, 50, 1], bank="physics",
                         bank_user_use=(20, 1)) == limits.Decision("go", "", 1)
    # a bank without a table: the top level's max_bank_gib
    assert limits.decide(table, 1001, "alice", 0, 0, [301], bank="chem").why == (
        "Requested a total of 301 GiB of rabbit storage but max_bank_gib is 300 GiB"
        " (bank chem)")


@given(st.integers(1, 10**4), st.integers(1, 20), st.integers(0, 10**4), st.integers(0, 20),
       st.lists(st.integers(0, 10**4), max_size=8))
def test_admit_is_the_longest_prefix_that_fits(max_gib: int, max_jobs: int, gib: int,
                                               jobs: int, want: list[int]) -> None:
    table = {"max_user_gib": max_gib, "max_user_jobs": max_jobs, "users": {}}
    d = limits.decide(table, 7, None, gib, jobs, want)
    n = 0
    for w in want:
        if gib + w > max_gib or jobs + 1 > max_jobs:
            break
        gib, jobs, n = gib + w, jobs + 1, n + 1
    assert d.admit == n


@given(st.integers(1, 10**4), st.integers(1, 20), st.integers(1, 10**4), st.integers(1, 20),
       st.integers(0, 10**4), st.integers(0, 20), st.lists(st.integers(0, 10**4), max_size=8))
def test_admit_by_bank_fits_every_scope(user_gib: int, user_jobs: int, bank_gib: int,
                                        bank_jobs: int, gib: int, jobs: int,
                                        want: list[int]) -> None:
    table = {"max_user_gib": user_gib, "max_user_jobs": user_jobs,
             "banks": {"b": {"max_bank_gib": bank_gib, "max_bank_jobs": bank_jobs}}}
    d = limits.decide(table, 7, None, gib, jobs, want, bank="b", bank_use=(gib, jobs))
    n = 0
    for w in want:
        if gib + w > min(user_gib, bank_gib) or jobs + 1 > min(user_jobs, bank_jobs):
            break
        gib, jobs, n = gib + w, jobs + 1, n + 1
    assert d.admit == n


def test_the_create_carries_the_bank_and_project() -> None:
    jobspec = {"version": 1, "resources": [{"type": "node", "count": 1}],
               "attributes": {"system": {"dw": DW, "bank": "physics", "project": "p1"}}}
    sm = JobMachine({})
    sm.event({"type": "create"})
    acts = sm.event({"type": "depend", "id": 42, "userid": 1001, "jobspec": jobspec})
    create = next(a for a in acts if a.get("topic") == "dws.create")
    assert (create["payload"]["bank"], create["payload"]["project"]) == ("physics", "p1")
    acts = machine_in_depend()[1]
    create = next(a for a in acts if a.get("topic") == "dws.create")
    assert "bank" not in create["payload"] and "project" not in create["payload"]


def machine_in_depend() -> tuple[JobMachine, list[dict[str, Any]]]:
    sm = JobMachine({})
    sm.event({"type": "create"})
    acts = sm.event({"type": "depend", "id": 42, "userid": 1001, "jobspec": JOBSPEC})
    return sm, acts


def test_the_method_is_apart_from_the_references_three() -> None:
    assert DEPENDENCY_METHOD == "dependency" and LIMIT_DEPENDENCY == "dws-limit"
    assert DEPENDENCY_METHOD not in SERVICES


def test_dependency_add_and_remove() -> None:
    sm, acts = machine_in_depend()
    assert {"action": "dependency-add", "name": DEPENDENCY} in acts
    ev = {"type": DEPENDENCY_METHOD, "state": "DEPEND",
          "payload": {"id": 42, "name": LIMIT_DEPENDENCY, "add": True}}
    assert sm.event(ev) == [{"action": "dependency-add", "name": LIMIT_DEPENDENCY},
                            {"action": "respond", "payload": {}}]
    # flux-dws' own: not another plugin's (a persistent job's create is not kept back)
    assert sm.event({"type": "dependency-add", "name": LIMIT_DEPENDENCY}) == []
    assert sm.state()["other_deps"] == 0
    ev["payload"]["add"] = False
    assert sm.event(ev) == [{"action": "dependency-remove", "name": LIMIT_DEPENDENCY},
                            {"action": "respond", "payload": {}}]


@pytest.mark.parametrize(("payload", "state", "errnum", "text"), [
    ({"id": 42, "name": "after-ok", "add": True}, "DEPEND", errno.EINVAL,
     "dws.dependency: 'after-ok' is not a flux-dws dependency"),
    ({"id": 42, "name": LIMIT_DEPENDENCY, "add": True}, "SCHED", errno.EINVAL,
     "dws.dependency: job 42 is in state SCHED, not DEPEND"),
    ({"id": 42, "name": LIMIT_DEPENDENCY, "add": "yes"}, "DEPEND", errno.EPROTO,
     "received malformed dws.dependency RPC: 'add' must be a boolean"),
    ({"id": 42, "add": True}, "DEPEND", errno.EPROTO,
     "received malformed dws.dependency RPC: 'name' must be a string"),
])
def test_dependency_refusals(payload: dict[str, Any], state: str, errnum: int,
                             text: str) -> None:
    sm, _ = machine_in_depend()
    acts = sm.event({"type": DEPENDENCY_METHOD, "state": state, "payload": payload})
    err = next(a for a in acts if a["action"] == "respond-error")
    assert (err["errnum"], err["errstr"]) == (errnum, text)
    assert not [a for a in acts if a["action"].startswith("dependency-")]


def test_a_removal_after_depend_is_answered() -> None:
    sm, _ = machine_in_depend()
    acts = sm.event({"type": DEPENDENCY_METHOD, "state": "CLEANUP",
                     "payload": {"id": 42, "name": LIMIT_DEPENDENCY, "add": False}})
    assert acts == [{"action": "respond", "payload": {}}]
