"""PBS_cray_atom against the ATOM emulator, run as PBS runs it
(pbs-atom-hook-notes.md §7, every case)."""

from __future__ import annotations

import json
import os
import pwd

import pytest
from t.python.pbs.conftest import cfg

from flux_dws.pbs.atom_emulator import Action
from flux_dws.pbs.harness import CONSTANTS, OFFLINE_COMMENT, run_hook

ME = pwd.getpwuid(os.getuid())
ERR, DBG, DBG2, DBG4 = (CONSTANTS[k] for k in ("EVENT_ERROR", "EVENT_DEBUG", "EVENT_DEBUG2",
                                                "EVENT_DEBUG4"))


def begin(atom, **kw):
    kw.setdefault("config", cfg(atom))
    return run_hook("execjob_begin", **kw)


def end(atom, **kw):
    kw.setdefault("config", cfg(atom))
    return run_hook("execjob_end", **kw)


def reqs(atom):
    return [(r.method, r.path) for r in atom.requests]


# --- success --------------------------------------------------------------

def test_begin_success(atom):
    r = begin(atom)
    assert r.outcome == "accept" and r.offlined == []
    (req,) = atom.requests
    assert (req.method, req.path) == ("POST", "/rm/v1/jobs")
    assert req.headers["Content-Type"] == "application/json"
    assert req.json == {"jobid": "1.pbs01", "uid": ME.pw_uid, "exclusive": False}
    assert r.logged("Job 1.pbs01 registered", DBG)
    assert r.logged("POST response: status 200", DBG2)


def test_begin_201_is_success(atom):
    atom.fault("POST", Action("status", 201, '{"jobid": "1.pbs01"}'))
    r = begin(atom)
    assert r.outcome == "accept" and r.logged("answered 201 (not 200)")


def test_end_success_and_round_trip(atom):
    assert begin(atom).outcome == "accept"
    assert "1.pbs01" in atom.jobs
    r = end(atom)
    assert r.outcome == "accept" and r.logged("Job 1.pbs01 deleted", DBG)
    assert atom.jobs == {}
    assert reqs(atom)[-1] == ("DELETE", "/rm/v1/jobs/1.pbs01")
    assert atom.requests[-1].headers.get("Content-Length") == "0"


# --- 400 retry --------------------------------------------------------------

def test_400_retry_recovers(atom):
    assert begin(atom).outcome == "accept"  # ATOM already has the job
    r = begin(atom)
    assert r.outcome == "accept"
    assert reqs(atom)[1:] == [("POST", "/rm/v1/jobs"), ("DELETE", "/rm/v1/jobs/1.pbs01"),
                              ("POST", "/rm/v1/jobs")]


def test_400_retry_delete_404_is_fine(atom):
    atom.fault("POST", Action("status", 400, '{"error": "bad"}'))
    r = begin(atom)
    assert r.outcome == "accept"
    assert [m for m, _ in reqs(atom)] == ["POST", "DELETE", "POST"]


@pytest.mark.parametrize(("faults", "expect_requests"), [
    ({"POST": [Action("status", 400)], "DELETE": [Action("status", 500)]}, 2),
    ({"POST": [Action("status", 400)], "DELETE": [Action("delay", seconds=1.0)]}, 2),
    ({"POST": [Action("status", 400), Action("status", 400)]}, 3),
    ({"POST": [Action("status", 400), Action("status", 500)]}, 3),
    ({"POST": [Action("status", 400), Action("delay", seconds=1.0)]}, 3),
])
def test_400_retry_failures_offline(atom, faults, expect_requests):
    for method, actions in faults.items():
        atom.fault(method, *actions)
    r = begin(atom, config=cfg(atom, post_timeout=0.2, delete_timeout=0.2))
    assert r.outcome == "error", r.traceback
    assert r.offlined == ["node01"]
    assert len(atom.requests) == expect_requests  # never a second retry


# --- begin failures --------------------------------------------------------

@pytest.mark.parametrize("code", [404, 409, 500, 503])
def test_begin_error_status_offlines(atom, code):
    atom.fault("POST", Action("status", code, '{"why": "broken"}'))
    r = begin(atom, vnodes=("n1", "n2[0]", "n2[1]"))
    assert r.outcome == "error"
    assert r.offlined == ["n1", "n2[0]", "n2[1]"]  # every vnode of the MoM
    assert len(atom.requests) == 1
    assert r.logged(f"Invalid status code {code}", ERR) and r.logged("broken")
    assert r.logged("encountered an exception, request rejected")


def test_begin_post_timeout(atom):
    atom.fault("POST", Action("delay", seconds=1.0))
    r = begin(atom, config=cfg(atom, post_timeout=0.2))
    assert r.outcome == "error" and r.offlined and r.logged("POST timed out", ERR)


def test_tiny_float_timeout_as_ptl_uses(atom):
    atom.fault("POST", Action("delay", seconds=0.5))
    r = begin(atom, config=cfg(atom, post_timeout=0.000001))
    assert r.outcome == "error" and r.logged("POST timed out")


@pytest.mark.parametrize("kind", ["drop", "garbage"])
def test_begin_broken_replies_offline(atom, kind):
    atom.fault("POST", Action(kind))
    r = begin(atom)
    assert r.outcome == "error" and r.offlined and r.logged("POST failed", ERR)


# --- end failures ------------------------------------------------------------

def test_end_delete_timeout_rejects_without_offline(atom):
    atom.fault("DELETE", Action("delay", seconds=1.0))
    r = end(atom, config=cfg(atom, delete_timeout=0.2))
    assert r.outcome == "reject" and r.offlined == []
    assert r.logged("DELETE timed out", ERR) and "DELETE timed out" in r.reject_msg


@pytest.mark.parametrize("code", [400, 500])
def test_end_delete_failure_rejects(atom, code):
    atom.fault("DELETE", Action("status", code))
    r = end(atom)
    assert r.outcome == "reject" and r.offlined == [] and r.logged("DELETE job failed", ERR)


def test_end_delete_404_is_accepted(atom):
    r = end(atom)
    assert r.outcome == "accept" and r.logged("was not registered", DBG)


def test_end_connection_failure_rejects(atom):
    atom.fault("DELETE", Action("drop"))
    r = end(atom)
    assert r.outcome == "reject" and r.offlined == []


# --- environment and config --------------------------------------------------

def test_missing_socket_is_a_non_atom_node(sockdir):
    for event in ("execjob_begin", "execjob_end"):
        r = run_hook(event, config=cfg(str(sockdir / "none.sock")))
        assert r.outcome == "accept" and r.logged("Unix socket file does not exist", DBG4)


def test_stale_socket(sockdir):
    stale = sockdir / "stale.sock"
    stale.write_text("")  # a file where the socket was, no listener
    r = run_hook("execjob_begin", config=cfg(str(stale)))
    assert r.outcome == "error" and r.offlined
    r = run_hook("execjob_end", config=cfg(str(stale)))
    assert r.outcome == "reject" and r.offlined == []


def test_unknown_user_rejects_without_offline(atom):
    r = begin(atom, euser="no-such-user-xyz")
    assert r.outcome == "reject" and r.offlined == [] and atom.requests == []
    assert "unknown user no-such-user-xyz" in r.reject_msg
    assert r.logged("Error while reading user uid from the machine.", DBG)


@pytest.mark.parametrize(("config", "message"), [
    (None, "no hook configuration file is set"),
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"post_timeout": "abc"}', 'post_timeout must be a positive number of seconds, not "abc"'),
    ('{"post_timeout": -1}', "post_timeout must be a positive number"),
    ('{"delete_timeout": true}', "delete_timeout must be a positive number"),
    ('{"unix_socket_file": 5}', "unix_socket_file must be a non-empty string, not 5"),
])
def test_bad_config(config, message):
    r = run_hook("execjob_begin", config=config)
    assert r.outcome == "error" and r.offlined  # fail closed at begin
    assert r.logged(message, ERR) and "Traceback" not in "".join(m for _, m in r.logs)
    r = run_hook("execjob_end", config=config)
    assert r.outcome == "reject" and r.offlined == [] and message in r.reject_msg


def test_config_merging(atom):
    partial = json.dumps({"unix_socket_file": atom.socket_path})
    assert begin(atom, config=partial).outcome == "accept"
    extra = cfg(atom, version_uri="/rm/v2", resources={"job": "/x"}, vn_type={"arm": {}},
                nodes={"cmp17": {"unix_socket_file": "/nope"}})
    assert end(atom, config=extra).outcome == "accept"
    assert reqs(atom)[-1] == ("DELETE", "/rm/v1/jobs/1.pbs01")  # version_uri not overridable


def test_empty_config_file_means_defaults(sockdir):
    r = run_hook("execjob_begin", config="")
    assert r.outcome == "accept"  # default socket absent here: a non-ATOM node


# --- URLs and ids --------------------------------------------------------------

def test_array_subjob_id_is_percent_encoded(atom):
    jid = "123[4].srv"
    assert begin(atom, jobid=jid).outcome == "accept"
    assert end(atom, jobid=jid).outcome == "accept"
    d = atom.requests[-1]
    assert d.raw_path == "/rm/v1/jobs/123%5B4%5D.srv" and d.path == "/rm/v1/jobs/123[4].srv"


def test_url_building():
    ns: dict = {"__name__": "hook"}
    from flux_dws.pbs import hook_dir
    exec(compile((hook_dir() / "PBS_cray_atom.PY").read_text(), "hook", "exec"), ns)
    cfg_ = ns["load_config"].__globals__["DEFAULTS"] | {"version_uri": "/rm/v1",
                                                         "resources": {"job": "/jobs"}}
    assert ns["build_url"](cfg_, "job") == \
        "http+unix://%2Fvar%2Frun%2Fatomd%2Fatomd.sock/rm/v1/jobs"
    cfg_["unix_socket_file"] = "/tmp/a b%c.sock"
    assert ns["build_url"](cfg_, "job", "7[1].s") == \
        "http+unix://%2Ftmp%2Fa%20b%25c.sock/rm/v1/jobs/7%5B1%5D.s"


# --- alarm, events, two MoMs -----------------------------------------------------

def test_alarm(atom):
    atom.fault("POST", Action("delay", seconds=1.0))
    r = begin(atom, alarm=0.3, config=cfg(atom, post_timeout=5))
    assert r.outcome == "error" and r.offlined == ["node01"]  # OfflineError('Handler alarmed')
    assert r.logged("Handler alarmed", ERR)
    atom.fault("DELETE", Action("delay", seconds=1.0))
    r = end(atom, alarm=0.3, config=cfg(atom, delete_timeout=5))
    assert r.outcome == "reject" and r.offlined == [] and "Handler alarmed" in r.reject_msg


def test_unhandled_event_type_accepts(atom):
    r = run_hook("execjob_prologue", config=cfg(atom))
    assert r.outcome == "accept" and r.logged("unexpected event type", ERR)
    assert atom.requests == []


def test_two_moms(sockdir):
    from flux_dws.pbs.atom_emulator import AtomEmulator
    with AtomEmulator(str(sockdir / "a.sock")) as a, AtomEmulator(str(sockdir / "b.sock")) as b:
        assert run_hook("execjob_begin", config=cfg(a)).outcome == "accept"
        assert run_hook("execjob_begin", config=cfg(b)).outcome == "accept"
        assert list(a.jobs) == list(b.jobs) == ["1.pbs01"]


def test_offline_comment():
    assert OFFLINE_COMMENT == "offlined by hook 'PBS_cray_atom' due to hook error"
