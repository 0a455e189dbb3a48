"""Configuration, the socket check, URLs and events (pbs-atom-hook-notes.md
§7, cases 11-16, 18, 20): a bad configuration is one clear ERROR line and
the documented outcome (begin offlines, end rejects), never a traceback of
the hook's own making."""

from __future__ import annotations

import json
import os

import pytest
from t.python.pbs.conftest import (
    DBG3,
    DBG4,
    ERR,
    HOOK_PATH,
    begin,
    cfg,
    end,
    hook_namespace,
    reqs,
)

from flux_dws.pbs.atom_emulator import Action, AtomEmulator
from flux_dws.pbs.harness import run_hook

BAD_CONFIGS = [
    ("{not json", "is not valid JSON: Expecting property name"),
    ('{"post_timeout": 30,}', "is not valid JSON"),
    ("[1, 2]", "must be a JSON object, not list"),
    ('"a string"', "must be a JSON object, not str"),
    ('{"post_timeout": "abc"}', 'post_timeout must be a number of seconds, more than 0 and at'
                                ' most 86400, not "abc"'),
    ('{"post_timeout": -1}', "post_timeout must be a number of seconds"),
    ('{"post_timeout": 0}', "post_timeout must be a number of seconds"),
    ('{"delete_timeout": true}', "delete_timeout must be a number of seconds, more than 0 and"
                                 " at most 86400, not true"),
    ('{"delete_timeout": null}', "delete_timeout must be a number of seconds"),
    ('{"delete_timeout": 1e10}', "delete_timeout must be a number of seconds"),
    ('{"delete_timeout": 1e999}', "not Infinity"),
    ('{"post_timeout": NaN}', "is not valid JSON: NaN is not a JSON value"),
    ('{"post_timeout": Infinity}', "Infinity is not a JSON value"),
    ('{"post_timeout": [30]}', "post_timeout must be a number of seconds"),
    ('{"unix_socket_file": 5}', "unix_socket_file must be an absolute path (a string starting"
                                " with /), not 5"),
    ('{"unix_socket_file": ""}', 'unix_socket_file must be an absolute path'),
    ('{"unix_socket_file": "atomd.sock"}', 'not "atomd.sock"'),
    ('{"unix_socket_file": "/var/run/a\\u0000b"}', "unix_socket_file must be an absolute path"),
    ('{"unix_socket_file": "/%s"}' % ("x" * 110), "longer than the 107 bytes"),
]


def assert_config_error(message, **kw):
    r = run_hook("execjob_begin", **kw)
    assert r.outcome == "error" and r.offlined == ["node01"]  # fail closed at begin
    assert r.logged(message, ERR), r.logs
    # the hook's own error is the OfflineError it raises on purpose; the
    # reason is in the log line, not only in a traceback
    assert r.traceback.rstrip().splitlines()[-1].startswith("OfflineError: ")
    r = run_hook("execjob_end", **kw)
    assert r.outcome == "reject" and r.offlined == []
    assert message in r.reject_msg and r.logged(message, ERR)


@pytest.mark.parametrize(("config", "message"), BAD_CONFIGS)
def test_bad_config(config, message):
    assert_config_error(message, config=config)


def test_no_config_file_set():
    assert_config_error("no hook configuration file is set (PBS_HOOK_CONFIG_FILE)", config=None)


def test_config_file_missing(sockdir):
    path = str(sockdir / "nope.CF")
    assert_config_error(f"cannot read hook configuration {path}: No such file or directory",
                        config_path=path)


def test_config_file_is_a_directory(sockdir):
    assert_config_error(f"cannot read hook configuration {sockdir}: Is a directory",
                        config_path=str(sockdir))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_config_file_unreadable(sockdir):
    path = sockdir / "secret.CF"
    path.write_text("{}")
    path.chmod(0)
    assert_config_error("Permission denied", config_path=str(path))


def test_config_not_utf8(sockdir):
    path = sockdir / "latin1.CF"
    path.write_bytes(b'{"unix_socket_file": "/tmp/\xe9t\xe9.sock"}')
    assert_config_error("is not UTF-8 text", config_path=str(path))


def test_env_var_is_used_when_pbs_has_no_filename(atom, sockdir):
    """Older PBS: no pbs.hook_config_filename, only PBS_HOOK_CONFIG_FILE."""
    path = sockdir / "env.CF"
    path.write_text(cfg(atom))
    text = HOOK_PATH.read_text()
    patched = text.replace('getattr(self.pbs, "hook_config_filename", None)', "None")
    assert patched != text
    r = run_hook("execjob_begin", config_path=str(path), source=patched)
    assert r.outcome == "accept" and len(atom.requests) == 1


# --- defaults, merging, constants -------------------------------------------------

def test_partial_config_gets_defaults(atom, sockdir):
    ns = hook_namespace()
    path = sockdir / "partial.CF"
    path.write_text(json.dumps({"unix_socket_file": atom.socket_path}))
    c = ns["load_config"](str(path))
    assert (c["post_timeout"], c["delete_timeout"]) == (30.0, 30.0)
    assert begin(atom, config=path.read_text()).outcome == "accept"


def test_empty_config_file_means_defaults(sockdir):
    ns = hook_namespace()
    path = sockdir / "empty.CF"
    path.write_text("  \n")
    assert ns["load_config"](str(path))["unix_socket_file"] == "/var/run/atomd/atomd.sock"


def test_unknown_keys_and_constants_are_ignored(atom):
    """version_uri cannot be overridden; resources (upstream's merge_dict
    crash) and the specification's future per-node blocks do no harm."""
    extra = cfg(atom, version_uri="/rm/v2", resources={"job": "/x"}, vn_type={"arm": {}},
                nodes={"cmp17": {"unix_socket_file": "/nope"}}, post_timout=1)
    r = begin(atom, config=extra)
    assert r.outcome == "accept"
    assert r.logged("ignoring configuration keys: nodes, post_timout, resources, version_uri,"
                    " vn_type", DBG3)
    assert end(atom, config=extra).outcome == "accept"
    assert reqs(atom) == [("POST", "/rm/v1/jobs"), ("DELETE", "/rm/v1/jobs/1.pbs01")]


def test_integer_and_float_timeouts(sockdir):
    ns = hook_namespace()
    path = sockdir / "t.CF"
    path.write_text('{"post_timeout": 5, "delete_timeout": 0.25}')
    c = ns["load_config"](str(path))
    assert (c["post_timeout"], c["delete_timeout"]) == (5.0, 0.25)
    assert c["version_uri"] == "/rm/v1"


def test_shipped_config_loads(sockdir):
    c = hook_namespace()["load_config"](str(HOOK_PATH.with_suffix(".CF")))
    assert c["unix_socket_file"] == "/var/run/atomd/atomd.sock" and c["ignored_keys"] == []


# --- the socket check -----------------------------------------------------------

def test_missing_socket_is_a_non_atom_node(sockdir):
    """Both events accept with no request and no uid or server lookup."""
    missing = str(sockdir / "none.sock")
    for event in ("execjob_begin", "execjob_end"):
        r = run_hook(event, config=cfg(missing), euser="no-such-user-xyz")
        assert r.outcome == "accept", r.logs
        assert r.logged(f"Unix socket file {missing} does not exist, skipping hook", DBG4)
        assert not [m for lv, m in r.logs if lv == ERR]


def test_missing_socket_sees_no_request(atom, sockdir):
    r = begin(atom, config=cfg(str(sockdir / "other.sock")))
    assert r.outcome == "accept" and atom.requests == []


# --- URLs ------------------------------------------------------------------------

def test_url_building():
    ns = hook_namespace()
    c = dict(ns["DEFAULTS"], version_uri="/rm/v1", resources={"job": "/jobs"})
    assert ns["build_url"](c, "job") == "http+unix://%2Fvar%2Frun%2Fatomd%2Fatomd.sock/rm/v1/jobs"
    c["unix_socket_file"] = "/tmp/a b%c.sock"
    assert ns["build_url"](c, "job", "7[1].s") == \
        "http+unix://%2Ftmp%2Fa%20b%25c.sock/rm/v1/jobs/7%5B1%5D.s"
    assert ns["request_path"](c, "job", "1.a/b c") == "/rm/v1/jobs/1.a%2Fb%20c"


def test_socket_path_with_space_and_percent(sockdir):
    path = str(sockdir / "a b%c.sock")
    with AtomEmulator(path) as a:
        assert run_hook("execjob_begin", config=cfg(path)).outcome == "accept"
        assert len(a.requests) == 1


# --- events and MoMs ---------------------------------------------------------------

def test_unhandled_event_type_accepts(atom):
    r = run_hook("execjob_prologue", config=cfg(atom))
    assert r.outcome == "accept" and r.logged("unexpected event type 256; accepting", ERR)
    assert atom.requests == []


def test_mother_superior_and_sister(sockdir):
    """Each MoM posts the same job id to its own node-local ATOM."""
    with AtomEmulator(str(sockdir / "ms.sock")) as ms, \
            AtomEmulator(str(sockdir / "sis.sock")) as sis:
        for mom, vnodes in ((ms, ("nid1",)), (sis, ("nid2",))):
            r = run_hook("execjob_begin", config=cfg(mom), vnodes=vnodes, jobid="5.srv")
            assert r.outcome == "accept"
        assert list(ms.jobs) == list(sis.jobs) == ["5.srv"]
        sis.fault("DELETE", Action.status(500))
        assert run_hook("execjob_end", config=cfg(ms), jobid="5.srv").outcome == "accept"
        r = run_hook("execjob_end", config=cfg(sis), jobid="5.srv", vnodes=("nid2",))
        assert r.outcome == "reject" and r.offlined == []
        assert ms.jobs == {} and list(sis.jobs) == ["5.srv"]


def test_fail_action_none_offlines_nothing(atom):
    atom.fault("POST", Action.status(500))
    r = begin(atom, fail_action="none")
    assert r.outcome == "error" and r.offlined == []


def test_end_config_error_never_offlines_even_with_fail_action():
    r = end(None, config="{bad")
    assert r.outcome == "reject" and r.offlined == []
