"""execjob_begin against the ATOM emulator (pbs-atom-hook-notes.md §7,
cases 1, 4-8 and 17): POST, the one retry after a 400, and every way it
fails, each ending in a hook error that offlines all of the MoM's vnodes."""

from __future__ import annotations

import pytest
from t.python.pbs.conftest import DBG, DBG2, ERR, HOOK_PATH, ME, begin, cfg, reqs

from flux_dws.pbs.atom_emulator import Action
from flux_dws.pbs.harness import OFFLINE_COMMENT

POST = ("POST", "/rm/v1/jobs")
DELETE = ("DELETE", "/rm/v1/jobs/1.pbs01")


def assert_offlined(r, vnodes=("node01",)):
    assert r.outcome == "error", (r.outcome, r.reject_msg, r.logs)
    assert r.offlined == list(vnodes)
    assert r.logged("hook 'PBS_cray_atom' encountered an exception, request rejected", ERR)
    assert "OfflineError" in r.traceback


# --- success ------------------------------------------------------------------

def test_success_posts_once(atom):
    r = begin(atom)
    assert r.outcome == "accept" and r.offlined == [] and r.reject_msg == ""
    (req,) = atom.requests
    assert (req.method, req.path) == POST
    assert req.headers["Content-Type"] == "application/json"
    assert req.headers["Host"] == "localhost"
    assert req.json == {"jobid": "1.pbs01", "uid": ME.pw_uid, "exclusive": False}
    assert [type(req.json[k]) for k in ("jobid", "uid", "exclusive")] == [str, int, bool]
    assert atom.jobs["1.pbs01"]["uid"] == ME.pw_uid
    assert r.logged("PBS_cray_atom:1.pbs01:execjob_begin: Job 1.pbs01 registered", DBG)
    # the request and the whole answer, inside MoM's default log mask
    assert r.logged("POST http+unix://", DBG2)
    assert r.logged('POST answered 200 OK, body \'{"jobid": "1.pbs01"', DBG2)
    assert not [m for lv, m in r.logs if lv == ERR]


def test_201_is_success_and_noted(atom):
    atom.fault("POST", Action.status(201, '{"created": true}'))
    r = begin(atom)
    assert r.outcome == "accept"
    assert r.logged("POST answered 201, not 200: taken as success", DBG)
    assert r.logged("Job 1.pbs01 registered", DBG)


def test_owner_uid_is_looked_up(atom):
    r = begin(atom, euser="root", jobid="9.srv")
    assert r.outcome == "accept" and atom.jobs["9.srv"]["uid"] == 0


# --- 400: delete and post once more ---------------------------------------------

def test_400_job_known_retry_recovers(atom):
    atom.add_job("1.pbs01", uid=1)  # as PTL's test_create_job_already_exists does
    r = begin(atom)
    assert r.outcome == "accept" and r.offlined == []
    assert reqs(atom) == [POST, DELETE, POST]
    assert [q.reply for q in atom.requests] == ["400", "204", "200"]
    assert atom.jobs["1.pbs01"]["uid"] == ME.pw_uid
    assert r.logged("already exists")  # the 400's body is logged
    assert len([m for _, m in r.logs if "registered" in m]) == 1


def test_400_retry_delete_404_is_fine(atom):
    atom.fault("POST", Action.status(400, '{"error": "bad request"}'))
    r = begin(atom)
    assert r.outcome == "accept"
    assert reqs(atom) == [POST, DELETE, POST]
    assert [q.reply for q in atom.requests] == ["400", "404", "200"]


@pytest.mark.parametrize(("faults", "replies", "message"), [
    ({"POST": [Action.status(400)], "DELETE": [Action.status(500)]},
     ["400", "500"], "DELETE job failed: status 500"),
    ({"POST": [Action.status(400)], "DELETE": [Action.delay(1.0)]},
     ["400", None], "DELETE timed out after 0.2 s"),
    ({"POST": [Action.status(400), Action.status(400)]},
     ["400", "404", "400"], "Invalid status code 400 from POST"),
    ({"POST": [Action.status(400), Action.status(500)]},
     ["400", "404", "500"], "Invalid status code 500 from POST"),
    ({"POST": [Action.status(400), Action.delay(1.0)]},
     ["400", "404", None], "POST timed out after 0.2 s"),
], ids=["delete-500", "delete-timeout", "repost-400", "repost-500", "repost-timeout"])
def test_400_retry_failures_offline(atom, faults, replies, message):
    for method, actions in faults.items():
        atom.fault(method, *actions)
    r = begin(atom, config=cfg(atom, post_timeout=0.2, delete_timeout=0.2))
    assert_offlined(r)
    assert r.logged(message, ERR)
    # never a second retry: at most POST, DELETE, POST
    assert [m for m, _ in reqs(atom)] == ["POST", "DELETE", "POST"][:len(replies)]


# --- other failures -----------------------------------------------------------------

@pytest.mark.parametrize("code", [401, 403, 404, 409, 500, 503])
def test_error_status_offlines_every_vnode_without_retry(atom, code):
    atom.fault("POST", Action.status(code, '{"why": "node is broken"}'))
    vnodes = ("nid001", "nid001[0]", "nid001[1]")
    r = begin(atom, vnodes=vnodes)
    assert_offlined(r, vnodes)
    assert reqs(atom) == [POST]
    assert r.logged(f"Invalid status code {code} from POST, body '{{\"why\": \"node is broken\"}}'",
                    ERR)


def test_offline_comment_is_pbs_one(atom):
    atom.fault("POST", Action.status(500))
    r = begin(atom)
    assert r.offlined == ["node01"]
    assert OFFLINE_COMMENT == "offlined by hook 'PBS_cray_atom' due to hook error"


def test_post_timeout(atom):
    atom.fault("POST", Action.delay(1.0))
    r = begin(atom, config=cfg(atom, post_timeout=0.2))
    assert_offlined(r)
    assert r.logged("POST timed out", ERR)
    assert reqs(atom) == [POST]


def test_tiny_float_timeout_as_ptl_uses(atom):
    atom.fault("POST", Action.delay(0.5))
    r = begin(atom, config=cfg(atom, post_timeout=0.000001))
    assert_offlined(r)
    assert r.logged("POST timed out after 1e-06 s", ERR)


def test_post_timeout_does_not_use_delete_timeout(atom):
    atom.fault("POST", Action.delay(0.5))
    r = begin(atom, config=cfg(atom, post_timeout=2, delete_timeout=0.1))
    assert r.outcome == "accept"


@pytest.mark.parametrize(("kind", "error"), [
    ("drop", "RemoteDisconnected"), ("garbage", "BadStatusLine"),
    ("truncate", "IncompleteRead")])
def test_broken_replies_offline(atom, kind, error):
    atom.fault("POST", Action(kind))
    r = begin(atom)
    assert_offlined(r)
    assert r.logged(f"POST failed: {error}", ERR)


def test_garbage_body_with_200_is_still_success(atom):
    atom.fault("POST", Action.status(200, "\x00\xff not json"))
    r = begin(atom)
    assert r.outcome == "accept"  # the body is only logged, never parsed


def test_huge_body_is_logged_shortened(atom):
    atom.fault("POST", Action.status(500, "x" * 10000))
    r = begin(atom)
    assert_offlined(r)
    assert r.logged("(10000 characters in all)", ERR)
    assert max(len(m) for _, m in r.logs) < 5000


def test_nobody_listening_offlines(atom):
    atom.stop(remove_socket=False)  # the daemon died; its socket file stays
    r = begin(atom)
    assert_offlined(r)
    assert r.logged("POST failed: ConnectionRefusedError", ERR)


def test_socket_path_is_a_plain_file(sockdir):
    plain = sockdir / "plain.sock"
    plain.write_text("")
    r = begin(None, config=cfg(str(plain)))
    assert_offlined(r)
    assert r.logged("POST failed: ConnectionRefusedError", ERR)


def test_alarm_offlines(atom):
    atom.fault("POST", Action.delay(1.0))
    r = begin(atom, alarm=0.3, config=cfg(atom, post_timeout=5))
    assert_offlined(r)
    assert r.logged("PBS_cray_atom:1.pbs01:main: Handler alarmed", ERR)
    assert "Handler alarmed" in r.traceback


def test_alarm_during_retry_offlines(atom):
    atom.fault("POST", Action.status(400))
    atom.fault("DELETE", Action.delay(1.0))
    r = begin(atom, alarm=0.3)
    assert_offlined(r)
    assert r.logged("Handler alarmed", ERR)


def test_unknown_owner_rejects_without_offline(atom):
    r = begin(atom, euser="no-such-user-xyz")
    assert r.outcome == "reject" and r.offlined == []
    assert r.reject_msg == "PBS_cray_atom: job owner no-such-user-xyz is unknown on this node"
    assert r.logged("Error while reading user uid from the machine: no user no-such-user-xyz",
                    ERR)
    assert atom.requests == []


def test_array_subjob_id(atom):
    jid = "123[4].srv"
    atom.add_job(jid)
    assert begin(atom, jobid=jid).outcome == "accept"
    post, delete, _ = atom.requests
    assert post.json["jobid"] == jid  # the body carries the id as it is
    assert delete.raw_path == "/rm/v1/jobs/123%5B4%5D.srv"
    assert delete.path == "/rm/v1/jobs/123[4].srv"


def test_server_query_failure_rejects_without_offline(atom):
    """pbs.server().vnode() is a server query from the MoM; if it fails the
    node is not at fault: reject (the job is requeued), with the reason."""
    src = HOOK_PATH.read_text().replace(
        "sharing = ctx.pbs.server().vnode(node).sharing",
        "sharing = ctx.pbs.server().vnode('no-such-vnode-' + node).comment.sharing")
    assert "no-such-vnode-" in src
    r = begin(atom, source=src, vnodes=("nid4",))
    assert r.outcome == "reject" and r.offlined == [] and atom.requests == []
    assert r.reject_msg == "PBS_cray_atom: cannot read the sharing attribute of vnode nid4"
    assert r.logged("cannot read the sharing attribute of vnode nid4 from the server:"
                    " AttributeError", ERR)
