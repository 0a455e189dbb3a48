"""Persistent storage a project shares (issue 47 item 3), through the
harness: dws.persistent-list shows every PSI with its owner, state and
the jobs using it; dws.persistent-share and -unshare set and remove the
ignore-uid annotation for the PSI's owner and the instance owner only;
a persistentdw refused for another user's storage says who owns it
beside DWS' note, which stays byte for byte.
"""

from __future__ import annotations

import errno
import json
import pwd
import time
from typing import Any

import pytest
from t.python.service.harnesshelp import gone

from flux_dws.emulator.driver import RESOURCE
from flux_dws.harness import Harness

IGNORE_UID = "dataworkflowservices.github.io/ignore-uid"
PSI = RESOURCE["psi"]
LIST, SHARE, UNSHARE = "dws.persistent-list", "dws.persistent-share", "dws.persistent-unshare"


def psi(h: Harness, name: str) -> dict[str, Any]:
    return h.emulator.store.get(PSI, "default", name)


def listed(h: Harness, name: str, userid: int | None = None) -> dict[str, Any] | None:
    answer = h.ask(LIST, userid=userid)
    assert answer.get("success"), answer
    return next((p for p in answer["persistent"] if p["name"] == name), None)


def until_listed(h: Harness, name: str, timeout: float = 30.0, **want: Any) -> dict[str, Any]:
    """The list's entry for name once it shows ``want``: each look follows
    the service catching up with the API server (dws.watch_test: the PSI
    watch is asynchronous); looked at again while the emulator's
    controllers may still be changing the PSI (a consumer reference goes
    after its Workflow), for ``timeout`` seconds at most."""
    deadline = time.monotonic() + timeout
    while True:
        assert h.ask("dws.watch_test") == {}
        entry = listed(h, name)
        if entry is not None and all(entry.get(k) == v for k, v in want.items()):
            return entry
        if time.monotonic() > deadline:
            assert entry is not None, f"{name} is not listed"
            raise AssertionError(f"{name} never showed {want}: {entry}")
        time.sleep(0.05)


def make_psi(h: Harness, name: str, userid: int, **metadata: Any) -> None:
    """A PSI as nnf-sos leaves it after its create_persistent, made directly."""
    h.emulator.store.create(PSI, "default", {
        "apiVersion": "dataworkflowservices.github.io/v1alpha7",
        "kind": "PersistentStorageInstance",
        "metadata": {"name": name, **metadata},
        "spec": {"name": name, "fsType": "gfs2", "userID": userid, "state": "Active",
                 "dwDirective": f"#DW create_persistent type=gfs2 capacity=2TiB name={name}",
                 "consumerReferences": []}})
    h.emulator.store.patch(PSI, "default", name, "merge", {"status": {"state": "Active"}},
                           "status")


@pytest.fixture
def h() -> Any:
    with Harness() as harness:
        yield harness


def test_share_lets_another_user_in_and_list_shows_who_uses_it(h: Harness) -> None:
    other = h.owner + 1
    create = h.submit("#DW create_persistent type=xfs capacity=10GiB name=proj", nodes=1)
    assert h.wait(create).exceptions == []
    entry = until_listed(h, "proj", state="Active")
    owner = pwd.getpwuid(h.owner).pw_name
    assert entry == {"name": "proj", "type": "xfs", "capacity": "10GiB", "userid": h.owner,
                     "owner": owner, "state": "Active", "deleting": False, "shared": False,
                     "jobs": [], "workflows": [], "created": entry["created"], "gib": 10}
    assert listed(h, "proj", userid=other) == entry  # every user sees the list
    assert "token" not in json.dumps(entry).lower()

    # refused: DWS' note whole, and beside it who owns the storage
    refused = h.submit("#DW persistentdw name=proj", nodes=1, userid=other)
    job = h.wait(refused)
    (exc,) = [e for e in job.exceptions if e["severity"] == 0]
    assert exc["note"] == ("DWS/Rabbit interactions failed: workflow hit an error:"
                           " DW Directive 0: User error: User ID does not match existing"
                           " persistent storage")
    (expl,) = [c for _, n, c in job.eventlog if n == "dws-explanation"]
    first, second = expl["explanation"].split("\n")
    assert first.startswith("That persistent storage belongs to another user, who created it.")
    assert second == (f"'proj' belongs to {owner} (uid {h.owner}). That user (or the"
                      " instance owner) can share it with: flux dws persistent share proj")

    # a guest may not share the owner's storage
    no = h.ask(SHARE, userid=other, payload={"name": "proj"})
    assert no["errnum"] == errno.EPERM and "belongs to another user" in no["error"], no
    assert IGNORE_UID not in (psi(h, "proj")["metadata"].get("annotations") or {})

    ok = h.ask(SHARE, payload={"name": "proj"})
    assert ok == {"success": True, "name": "proj", "shared": True, "changed": True}, ok
    assert psi(h, "proj")["metadata"]["annotations"][IGNORE_UID] == "true"
    until_listed(h, "proj", shared=True)
    again = h.ask(SHARE, payload={"name": "proj"})
    assert again["changed"] is False and again["shared"] is True

    use = h.submit("#DW persistentdw name=proj", nodes=1, userid=other, runtime=30.0)
    h.wait(use, "RUN")
    entry = until_listed(h, "proj", jobs=[use])
    assert entry["shared"] and entry["userid"] == h.owner
    h.cancel(use)
    h.wait(use)
    gone(h, use)
    until_listed(h, "proj", jobs=[])

    off = h.ask(UNSHARE, payload={"name": "proj"})
    assert off == {"success": True, "name": "proj", "shared": False, "changed": True}, off
    assert IGNORE_UID not in (psi(h, "proj")["metadata"].get("annotations") or {})
    until_listed(h, "proj", shared=False)

    destroy = h.submit("#DW destroy_persistent name=proj", nodes=1)
    assert h.wait(destroy).exceptions == []
    h.ask("dws.watch_test")
    assert listed(h, "proj") is None


def test_the_psi_owner_shares_their_own(h: Harness) -> None:
    alice, bob = h.owner + 10, h.owner + 11
    make_psi(h, "alices", alice)
    until_listed(h, "alices", userid=alice, capacity="2TiB", type="gfs2")
    assert h.ask(SHARE, userid=bob, payload={"name": "alices"})["errnum"] == errno.EPERM
    ok = h.ask(SHARE, userid=alice, payload={"name": "alices"})
    assert ok["changed"] is True and ok["shared"] is True
    until_listed(h, "alices", shared=True)
    assert h.ask(UNSHARE, userid=bob, payload={"name": "alices"})["errnum"] == errno.EPERM
    assert h.ask(UNSHARE, userid=alice, payload={"name": "alices"})["shared"] is False


def test_share_faults(h: Harness) -> None:
    make_psi(h, "going", h.owner, finalizers=["test.flux-dws.io/hold"])
    make_psi(h, "fine", h.owner)
    until_listed(h, "fine", state="Active")
    until_listed(h, "going", state="Active")

    unknown = h.ask(SHARE, payload={"name": "nosuch"})
    assert unknown["errnum"] == errno.ENOENT and "no persistent storage named 'nosuch'" \
        in unknown["error"], unknown
    for bad in ({}, {"name": ""}, {"name": 3}):
        answer = h.ask(SHARE, payload=bad)
        assert answer == {"success": False,
                          "errstr": "dws.persistent-share: name must be a non-empty string"}

    # being deleted (its finalizer holds it): refused, nothing written
    h.emulator.store.delete(PSI, "default", "going")
    until_listed(h, "going", deleting=True)
    busy = h.ask(SHARE, payload={"name": "going"})
    assert busy["errnum"] == errno.EBUSY and "is being deleted" in busy["error"], busy
    h.emulator.store.patch(PSI, "default", "going", "merge", {"metadata": {"finalizers": None}})

    # the API server refuses the patch: its words come back, one line
    h.emulator.api_fault(403, method="PATCH", path="persistentstorageinstances/fine",
                         message="persistentstorageinstances is forbidden: no patch for you")
    err = h.ask(SHARE, payload={"name": "fine"})
    assert err["errnum"] == errno.EIO and "no patch for you" in err["error"], err
    assert "\n" not in err["error"]
    assert IGNORE_UID not in (psi(h, "fine")["metadata"].get("annotations") or {})
    assert h.ask(SHARE, payload={"name": "fine"})["changed"] is True  # the fault is spent


def test_a_restarted_service_lists_and_shares_again(h: Harness) -> None:
    """Nothing to rebuild but the list: the PSIs are read again from their
    watch, and a share made before the restart is seen on them."""
    make_psi(h, "kept", h.owner + 20)
    until_listed(h, "kept", shared=False)
    assert h.ask(SHARE, userid=h.owner + 20, payload={"name": "kept"})["changed"] is True
    h.restart_service()
    entry = until_listed(h, "kept", shared=True, userid=h.owner + 20)
    assert entry["state"] == "Active"
    again = h.ask(SHARE, userid=h.owner + 20, payload={"name": "kept"})
    assert again["changed"] is False


def owner_words(uid: int) -> str:
    """How the service names a PSI's owner: the passwd name and uid, or the
    uid alone."""
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"the user with uid {uid}"


def test_destroy_of_another_users_storage_is_refused_at_create(h: Harness) -> None:
    """DWS refuses a destroy_persistent of another user's PSI only at
    Teardown, after the job ran, its epilog waiting out its timeout: the
    service refuses it at dws.create, naming the owner; the instance
    owner's too (DWS checks the Workflow's userID, whatever the sharing)."""
    alice, bob = h.owner + 10, h.owner + 11
    make_psi(h, "alices", alice, annotations={IGNORE_UID: "true"})
    until_listed(h, "alices", userid=alice, shared=True)
    for uid in (bob, h.owner):
        job = h.wait(h.submit("#DW destroy_persistent name=alices", nodes=1, userid=uid))
        (exc,) = job.exceptions
        note = ("DWS workflow interactions failed: only its owner may destroy persistent"
                f" storage (#DW destroy_persistent): 'alices' belongs to {owner_words(alice)}")
        assert (exc["type"], exc["severity"], exc["note"]) == ("dws-create", 0, note), exc
        (expl,) = [c for _, n, c in job.eventlog if n == "dws-explanation"]
        assert expl["note"] == note
        assert expl["explanation"].startswith("Only the user who created a persistent storage"
                                              " may destroy it, shared or not;")
        assert "alloc" not in job.events() and h.workflows() == []
    assert psi(h, "alices")["spec"]["state"] == "Active"

    mine = h.wait(h.submit("#DW destroy_persistent name=alices", nodes=1, userid=alice))
    assert mine.exceptions == []
    h.ask("dws.watch_test")
    assert listed(h, "alices") is None
    none = h.wait(h.submit("#DW destroy_persistent name=alices", nodes=1, userid=bob))
    assert none.exceptions == [], "a name no PSI has goes to DWS, which takes it as done"
