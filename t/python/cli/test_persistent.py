"""``flux dws persistent``: bad arguments give one line and no traceback;
the table shows what the service answers, owners by name; the service's
refusals come back as one line, exit status 1."""

from __future__ import annotations

import errno
import os
import pwd
from typing import Any

import pytest
from t.python.cli.test_garbage import NOT_UTF8, assert_clear_error, run_main

from flux_dws.cli import main as flux_dws
from flux_dws.cli import persistent

ME = os.getuid()
NOBODY_UID = 4_000_000_000  # no passwd entry: shown as the number


@pytest.mark.parametrize(("argv", "names"), [
    (["persistent"], "VERB"),
    (["persistent", "bogus"], "bogus"),
    (["persistent", "share"], "NAME"),
    (["persistent", "unshare", "Proj"], "'Proj' is not a persistent storage name"),
    (["persistent", "share", "x-"], "'x-'"),
    (["persistent", "share", "a" * 254], "is not a persistent storage name"),
    (["persistent", "share", ""], "''"),
    (["persistent", "share", NOT_UTF8], "not UTF-8"),
    (["persistent", "share", "a\x00b"], "NUL"),
    (["persistent", "share", "a", "b"], "unrecognized arguments: b"),
    (["persistent", "list", "extra"], "unrecognized arguments: extra"),
    (["persistent", "list", "--no-such-option"], "--no-such-option"),
    (["persistent", "list"], "FLUX_URI"),
    (["persistent", "share", "proj"], "FLUX_URI"),
    (["persistent", "list", "-o", "{name} {size}"], "unknown field 'size'"),
    (["persistent", "list", "-o", "wide"], "unknown format 'wide'"),
    (["persistent", "list", "--format={shared:d}"], "field 'shared'"),
    (["persistent", "list", "--json", "-o", "long"], "not allowed with argument --json"),
    (["persistent", "share", "proj", "-o", "long"], "unrecognized arguments: -o long"),
])
def test_bad_arguments(argv: list[str], names: str, monkeypatch: pytest.MonkeyPatch,
                       capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    outcome = run_main(flux_dws.main, argv, monkeypatch, capfd)
    assert_clear_error(outcome, names)


ANSWER = {"success": True, "persistent": [
    {"name": "proj", "type": "lustre", "capacity": "1TiB", "userid": ME, "owner": None,
     "state": "Degraded", "deleting": False, "shared": True, "jobs": [1234567],
     "workflows": ["slurm-1-0"], "created": None},
    {"name": "old", "type": "xfs", "capacity": None, "userid": NOBODY_UID, "owner": None,
     "state": "Active", "deleting": True, "shared": False, "jobs": [], "workflows": [],
     "created": None},
    {"name": "far", "type": "gfs2", "capacity": "1GiB", "userid": NOBODY_UID + 1,
     "owner": "faruser", "state": "Creating", "deleting": False, "shared": False, "jobs": [],
     "workflows": [], "created": None}]}


def fake_ask(answers: dict[str, Any]) -> Any:
    def ask(topic: str, payload: dict[str, Any]) -> dict[str, Any]:
        got = answers[topic]
        if isinstance(got, Exception):
            raise got
        return got(payload) if callable(got) else got
    return ask


def test_list_table(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(persistent, "_ask", fake_ask({"dws.persistent-list": ANSWER}))
    outcome = run_main(flux_dws.main, ["persistent", "list"], monkeypatch, capfd)
    assert outcome.rc == 0 and outcome.err == ""
    head, proj, old, far = outcome.out.splitlines()
    assert head.split() == ["NAME", "TYPE", "CAPACITY", "OWNER", "STATE", "SHARED", "JOBS"]
    me = pwd.getpwuid(ME).pw_name
    assert proj.split() == ["proj", "lustre", "1TiB", me, "Degraded", "yes",
                            f"{persistent.textfmt.f58(1234567)},slurm-1-0"]
    assert old.split() == ["old", "xfs", "-", str(NOBODY_UID), "Destroying", "no", "-"]
    # no passwd entry here: the name the service found
    assert far.split() == ["far", "gfs2", "1GiB", "faruser", "Creating", "no", "-"]
    assert head.index("OWNER") == proj.index(me)  # aligned


def test_list_formats(monkeypatch: pytest.MonkeyPatch,
                      capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(persistent, "_ask", fake_ask({"dws.persistent-list": ANSWER}))
    outcome = run_main(flux_dws.main, ["persistent", "list", "-o", "long"], monkeypatch, capfd)
    lines = outcome.out.splitlines()
    assert outcome.rc == 0 and lines[0].split() == ["NAME", "TYPE", "CAPACITY", "OWNER",
                                                    "USERID", "STATE", "SHARED", "JOBS"]
    assert lines[2].split()[3:5] == [str(NOBODY_UID), str(NOBODY_UID)]
    outcome = run_main(flux_dws.main, ["persistent", "list", "-n", "-o", "{name}={shared}"],
                       monkeypatch, capfd)
    assert outcome.out == "proj=yes\nold=no\nfar=no\n"
    monkeypatch.delenv("FLUX_URI", raising=False)
    outcome = run_main(flux_dws.main, ["persistent", "list", "-o", "help"], monkeypatch, capfd)
    assert outcome.rc == 0 and outcome.out == persistent.TABLE.help_text() + "\n"
    assert outcome.out.startswith("flux dws persistent list output formats (-o NAME):")


def test_list_json(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    import json

    monkeypatch.setattr(persistent, "_ask", fake_ask({"dws.persistent-list": ANSWER}))
    outcome = run_main(flux_dws.main, ["persistent", "list", "--json"], monkeypatch, capfd)
    assert outcome.rc == 0
    assert json.loads(outcome.out) == {"persistent": ANSWER["persistent"]}


@pytest.mark.parametrize(("got", "names"), [
    (OSError(errno.EPERM, "dws.persistent-share: 'proj' belongs to another user; only its"
                          " owner or the instance owner may share it"), "belongs to another"),
    (OSError(errno.ENOSYS, "Function not implemented"), "not loaded"),
    (OSError(errno.ETIMEDOUT, "Connection timed out"), "did not answer"),
    (persistent.AnswerError("dws.persistent-share: name must be a non-empty string"),
     "name must be"),
])
def test_refusals_are_one_line(got: Exception, names: str, monkeypatch: pytest.MonkeyPatch,
                               capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(persistent, "_ask", fake_ask({"dws.persistent-share": got}))
    outcome = run_main(flux_dws.main, ["persistent", "share", "proj"], monkeypatch, capfd)
    assert outcome.rc == 1
    assert_clear_error(outcome, names)


def test_share_says_what_changed(monkeypatch: pytest.MonkeyPatch,
                                 capfd: pytest.CaptureFixture[str]) -> None:
    answers = {"dws.persistent-share": lambda p: {"success": True, "name": p["name"],
                                                   "shared": True, "changed": True},
               "dws.persistent-unshare": lambda p: {"success": True, "name": p["name"],
                                                     "shared": False, "changed": False}}
    monkeypatch.setattr(persistent, "_ask", fake_ask(answers))
    out = run_main(flux_dws.main, ["persistent", "share", "proj"], monkeypatch, capfd)
    assert out.rc == 0 and out.out == ("proj is now shared: every user may use it with"
                                       " #DW persistentdw name=proj\n")
    out = run_main(flux_dws.main, ["persistent", "unshare", "proj"], monkeypatch, capfd)
    assert out.rc == 0 and out.out == "proj was already not shared\n"


def test_a_malformed_answer_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                        capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(persistent, "_ask",
                        fake_ask({"dws.persistent-list": {"success": True, "persistent": 3}}))
    outcome = run_main(flux_dws.main, ["persistent", "list"], monkeypatch, capfd)
    assert outcome.rc == 1
    assert_clear_error(outcome, "not a list")
