"""execjob_end against the ATOM emulator (pbs-atom-hook-notes.md §7,
cases 2, 3, 9, 10, 17): DELETE, and failures that reject but never offline."""

from __future__ import annotations

import json

import pytest
import requests_unixsocket
from t.python.pbs.conftest import DBG, ERR, begin, cfg, end, reqs

from flux_dws.pbs.atom_emulator import Action


def assert_rejected(r, message):
    assert r.outcome == "reject", (r.outcome, r.logs, r.traceback)
    assert r.offlined == []  # the end event never offlines
    assert message in r.reject_msg and r.reject_msg.startswith("PBS_cray_atom: ")


def test_success(atom):
    atom.add_job("1.pbs01")
    r = end(atom)
    assert r.outcome == "accept" and r.offlined == []
    (req,) = atom.requests
    assert (req.method, req.raw_path, req.reply) == ("DELETE", "/rm/v1/jobs/1.pbs01", "204")
    assert req.headers["Content-Length"] == "0" and req.body == b""
    assert r.logged("PBS_cray_atom:1.pbs01:execjob_end: Job 1.pbs01 deleted", DBG)
    assert atom.jobs == {}


def test_round_trip_seen_through_get(atom):
    """PTL's test_create_and_delete_job, with an independent client
    (requests + requests-unixsocket) looking at ATOM between the events."""
    session = requests_unixsocket.Session()
    base = "http+unix://" + atom.socket_path.replace("/", "%2F") + "/rm/v1/jobs"
    assert begin(atom, jobid="77.srv").outcome == "accept"
    got = session.get(base + "/77.srv", timeout=5)
    assert got.status_code == 200 and got.json()["jobid"] == "77.srv"
    assert end(atom, jobid="77.srv").outcome == "accept"
    assert session.get(base + "/77.srv", timeout=5).status_code == 404
    assert session.get(base, timeout=5).json() == {"jobs": []}


def test_202_is_success_and_noted(atom):
    atom.fault("DELETE", Action.status(202, ""))
    r = end(atom)
    assert r.outcome == "accept" and r.logged("DELETE answered 202, not 204", DBG)


def test_404_accepts(atom):
    r = end(atom)  # ATOM never had the job (decision 2 in the guide)
    assert r.outcome == "accept"
    assert r.logged("Job 1.pbs01 is not registered with ATOM (404): nothing to delete", DBG)
    assert not [m for lv, m in r.logs if lv == ERR]


def test_delete_timeout_rejects_without_offline(atom):
    """PTL's test_delete_timeout."""
    atom.add_job("1.pbs01")
    atom.fault("DELETE", Action.delay(1.0))
    r = end(atom, config=cfg(atom, delete_timeout=0.2))
    assert_rejected(r, "DELETE timed out after 0.2 s")
    assert r.logged("DELETE timed out", ERR)


def test_delete_timeout_does_not_use_post_timeout(atom):
    atom.fault("DELETE", Action.delay(0.5))
    assert end(atom, config=cfg(atom, post_timeout=0.1, delete_timeout=2)).outcome == "accept"


@pytest.mark.parametrize("code", [400, 401, 409, 500, 503])
def test_error_status_rejects(atom, code):
    atom.fault("DELETE", Action.status(code, json.dumps({"detail": "tasks failed"})))
    r = end(atom, vnodes=("a", "b"))
    assert_rejected(r, f"DELETE job failed: status {code}")
    assert r.logged(f"DELETE job failed: status {code}, body '{{\"detail\": \"tasks failed\"}}'",
                    ERR)
    assert len(atom.requests) == 1  # no retry at end


@pytest.mark.parametrize("kind", ["drop", "garbage", "truncate"])
def test_broken_replies_reject(atom, kind):
    atom.fault("DELETE", Action(kind))
    assert_rejected(end(atom), "DELETE failed: ")


def test_nobody_listening_rejects(atom):
    atom.stop(remove_socket=False)
    r = end(atom)
    assert_rejected(r, "DELETE failed: ConnectionRefusedError")


def test_alarm_rejects_without_offline(atom):
    atom.fault("DELETE", Action.delay(1.0))
    r = end(atom, alarm=0.3, config=cfg(atom, delete_timeout=5))
    assert_rejected(r, "Handler alarmed")
    assert r.logged("Handler alarmed", ERR)


def test_unknown_owner_does_not_matter_at_end(atom):
    atom.add_job("1.pbs01")
    assert end(atom, euser="no-such-user-xyz").outcome == "accept"


def test_array_subjob_id_is_percent_encoded(atom):
    jid = "123[4].srv"
    assert begin(atom, jobid=jid).outcome == "accept"
    assert end(atom, jobid=jid).outcome == "accept"
    d = atom.requests[-1]
    assert d.raw_path == "/rm/v1/jobs/123%5B4%5D.srv" and d.path == "/rm/v1/jobs/123[4].srv"
    assert atom.jobs == {}
    assert reqs(atom) == [("POST", "/rm/v1/jobs"), ("DELETE", "/rm/v1/jobs/123[4].srv")]
