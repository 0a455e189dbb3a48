"""The nnf driver walk (dwsim.walk), fed with drivers' outcomes."""

from __future__ import annotations

import pytest

from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim import walk

PENDING = {"driverID": "nnf", "status": "Pending", "completed": False, "message": "",
           "error": ""}


def run(state, outcomes):
    """Feed outcomes in order until the walk stops; the drivers it touched."""
    w = walk.Walk(state, "NOW", retry_seconds=1.0, bug_retry_seconds=5.0)
    out = []
    for o in outcomes:
        d, go_on = w.feed(dict(PENDING), o)
        out.append(d)
        if not go_on:
            break
    return w, out


def test_all_done_complete_in_order():
    w, ds = run("Setup", [walk.DONE, walk.DONE])
    assert [d["status"] for d in ds] == ["Completed", "Completed"]
    assert ds[0]["completeTime"] == "NOW" and ds[0]["completed"] and w.requeue == []


def test_waiting_in_finish_lets_later_drivers_work_but_not_complete():
    w, ds = run("PreRun", [walk.Outcome("wait", "pending mount", 300.0), walk.DONE])
    assert ds[0]["status"] == "Running" and ds[0]["message"] == "pending mount"
    assert ds[1]["status"] == "Running" and not ds[1]["completed"]
    assert w.requeue == [300.0]


@pytest.mark.parametrize("state", ["PostRun", "Teardown"])
def test_waiting_in_start_holds_later_drivers_back(state):
    w, ds = run(state, [walk.Outcome("wait", "pending unmount"), walk.DONE])
    assert len(ds) == 1 and w.requeue == []


def test_first_error_stops_the_walk_with_its_back_off():
    err = rerr.ResourceError("bad", severity="Major")
    w, ds = run("Setup", [walk.DONE, walk.Outcome("error", error=err), walk.DONE])
    assert len(ds) == 2 and ds[1]["status"] == "TransientCondition"
    assert ds[1]["message"] == "Internal error: bad" and w.requeue == [1.0]
    w, ds = run("Setup", [walk.Outcome("error", error=rerr.user("no"))])
    assert ds[0]["status"] == "Error" and w.requeue == []
    w, ds = run("Setup", [walk.Outcome("bug", error=rerr.internal("", "KeyError: x",
                                                                   severity="Major"))])
    assert ds[0]["error"] == "internal error: KeyError: x" and w.requeue == [5.0]


def test_faults_as_outcomes():
    assert walk.fault_outcome("stall", 0, 0, "", "Internal") == walk.Outcome("stall")
    assert walk.fault_outcome("delay", 2.0, 0.5, "", "Internal") == walk.Outcome(
        "delay", after=1.5)
    assert walk.fault_outcome("delay", 2.0, 3.0, "", "Internal") is None
    o = walk.fault_outcome("Minor", 0, 0, "slow", "User")
    assert o is not None and o.error == rerr.ResourceError("slow", type="User",
                                                           severity="Minor")
    # a stall in a finish-waiting state leaves the entry alone, blocks later ones
    w, ds = run("DataIn", [walk.Outcome("stall"), walk.DONE])
    assert ds[0] == PENDING and ds[1]["status"] == "Running"
    w, ds = run("Teardown", [walk.Outcome("delay", after=1.5), walk.DONE])
    assert len(ds) == 1 and w.requeue == [1.5]


def test_unknown_outcome():
    with pytest.raises(ValueError, match="unknown outcome"):
        run("Setup", [walk.Outcome("maybe")])
