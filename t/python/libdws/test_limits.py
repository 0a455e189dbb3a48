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
        {"max_user_gib": 5, "users": {}}
    assert rabbitconf.parse({"limits": {"users": {"alice": {"max_user_jobs": 2}}}})["limits"] \
        == {"users": {"alice": {"max_user_jobs": 2}}}


@pytest.mark.parametrize(("table", "message"), [
    ({"max_user_gib": -1}, "rabbit.limits.max_user_gib: must be an integer >= 1, got -1"),
    ({"max_user_gib": "lots"}, 'rabbit.limits.max_user_gib: must be an integer >= 1, got "lots"'),
    ({"max_user_jobs": 0}, "rabbit.limits.max_user_jobs: must be an integer >= 1, got 0"),
    ({"users": {"bob": {"max_user_gib": -1}}},
     "rabbit.limits.users.bob.max_user_gib: must be an integer >= 1, got -1"),
    ([1], "rabbit.limits: must be a table, got [1]"),
    ({"max_user_gib": 2**33},
     "rabbit.limits.max_user_gib: must be at most 8589934591 GiB, got 8589934592"),
    ({"frobnicate": 1}, "rabbit.limits.frobnicate: unknown key"
     " (rabbit.limits has max_user_gib, max_user_jobs and users)"),
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
