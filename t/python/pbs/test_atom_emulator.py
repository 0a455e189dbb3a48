"""The ATOM emulator itself, through an independent client (requests +
requests-unixsocket, the pair the specification names) and its command
line."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from urllib.parse import quote

import pytest
import requests
import requests_unixsocket
from t.python.pbs.conftest import cfg

from flux_dws.cli.main import main as flux_dws_main
from flux_dws.pbs.atom_emulator import Action, AtomEmulator, AtomEmulatorError
from flux_dws.pbs.harness import run_hook


@pytest.fixture
def http(atom):
    session = requests_unixsocket.Session()
    base = "http+unix://" + quote(atom.socket_path, safe="") + "/rm/v1"

    def call(method, path, **kw):
        kw.setdefault("timeout", 5)
        return session.request(method, base + path, **kw)
    yield call
    session.close()


JOB = {"jobid": "1.srv", "uid": 1000, "exclusive": False}


# --- the job table -------------------------------------------------------------

def test_post_get_delete(atom, http):
    r = http("POST", "/jobs", json=JOB)
    assert r.status_code == 200 and r.json() == JOB
    assert http("GET", "/jobs").json() == {"jobs": [JOB]}
    assert http("GET", "/jobs/1.srv").json() == JOB
    r = http("DELETE", "/jobs/1.srv")
    assert r.status_code == 204 and r.content == b""
    assert http("GET", "/jobs/1.srv").status_code == 404
    assert http("DELETE", "/jobs/1.srv").status_code == 404
    assert http("GET", "/jobs").json() == {"jobs": []}


def test_duplicate_post_is_400(atom, http):
    assert http("POST", "/jobs", json=JOB).status_code == 200
    r = http("POST", "/jobs", json={**JOB, "uid": 1})
    assert r.status_code == 400 and r.json() == {"error": "job 1.srv already exists"}
    assert atom.jobs["1.srv"]["uid"] == 1000


@pytest.mark.parametrize("body", [
    {"jobid": 1, "uid": 1, "exclusive": False},
    {"jobid": "1", "uid": "1", "exclusive": False},
    {"jobid": "1", "uid": True, "exclusive": False},
    {"jobid": "1", "uid": 1, "exclusive": 0},
    {"jobid": "1", "uid": 1},
    [1, 2],
])
def test_malformed_post_is_400(atom, http, body):
    r = http("POST", "/jobs", json=body)
    assert r.status_code == 400 and "jobid (string)" in r.json()["error"]
    assert atom.jobs == {}


def test_post_not_json_is_400(atom, http):
    r = http("POST", "/jobs", data=b"{nope", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert atom.requests[-1].json is None and atom.requests[-1].body == b"{nope"


def test_array_job_ids_are_unquoted(atom, http):
    assert http("POST", "/jobs", json={**JOB, "jobid": "4[2].srv"}).status_code == 200
    r = http("DELETE", "/jobs/4[2].srv")  # requests sends 4%5B2%5D.srv
    assert r.status_code == 204
    assert atom.requests[-1].raw_path == "/rm/v1/jobs/4%5B2%5D.srv"


@pytest.mark.parametrize(("method", "path", "code"), [
    ("PUT", "/jobs", 405), ("DELETE", "/jobs", 405), ("PATCH", "/jobs/1.srv", 405),
    ("GET", "/tasks", 404), ("GET", "/", 404)])
def test_other_routes(atom, http, method, path, code):
    assert http(method, path).status_code == code


def test_bad_content_length_is_400(atom):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(atom.socket_path)
        s.sendall(b"POST /rm/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 400")


# --- scripted faults --------------------------------------------------------------

def test_faults_are_fifo_per_method(atom, http):
    atom.fault("POST", Action.status(503, "busy"), Action.status(201))
    atom.fault("DELETE", Action.status(500))
    r = http("POST", "/jobs", json=JOB)
    assert (r.status_code, r.text) == (503, "busy")
    assert http("DELETE", "/jobs/1.srv").status_code == 500
    assert http("POST", "/jobs", json=JOB).status_code == 201
    assert http("POST", "/jobs", json=JOB).status_code == 200  # queue empty: default
    assert [q.reply for q in atom.requests] == ["503", "500", "201", "200"]
    assert atom.jobs == {"1.srv": JOB}  # scripted answers do not touch the table


def test_delay_then_default(atom, http):
    atom.fault("GET", Action.delay(0.3))
    t0 = time.monotonic()
    assert http("GET", "/jobs").status_code == 200
    assert time.monotonic() - t0 >= 0.3


def test_delay_is_cut_short_by_stop(sockdir):
    atom = AtomEmulator(str(sockdir / "s.sock")).start()
    atom.fault("POST", Action.delay(30))
    done = threading.Event()

    def client():
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(atom.socket_path)
            s.sendall(b"POST /rm/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            s.settimeout(5)
            try:
                s.recv(100)
            except OSError:
                pass
        done.set()

    threading.Thread(target=client, daemon=True).start()
    while not atom.requests:
        time.sleep(0.01)
    t0 = time.monotonic()
    atom.stop()
    assert done.wait(5) and time.monotonic() - t0 < 5


@pytest.mark.parametrize(("kind", "error"), [
    ("drop", requests.exceptions.ConnectionError),
    ("garbage", requests.exceptions.ConnectionError),
    ("truncate", requests.exceptions.ChunkedEncodingError)])
def test_broken_answers(atom, http, kind, error):
    atom.fault("GET", Action(kind))
    with pytest.raises(error):
        http("GET", "/jobs")
    assert atom.requests[-1].reply == kind
    assert http("GET", "/jobs").status_code == 200  # the next request is served


@pytest.mark.parametrize(("text", "want"), [
    ("status:500", Action.status(500)),
    ("status:400:{\"error\": \"x\"}", Action.status(400, '{"error": "x"}')),
    ("delay:2.5", Action.delay(2.5)), ("drop", Action.drop()), ("garbage", Action.garbage()),
    ("truncate", Action.truncate())])
def test_action_parse(text, want):
    assert Action.parse(text) == want


@pytest.mark.parametrize(("text", "message"), [
    ("status:abc", "bad fault 'status:abc'"), ("status:99", "not within 100-599"),
    ("delay:x", "bad fault"), ("delay:-1", "negative"), ("drop:1", "takes no argument"),
    ("explode", "unknown fault 'explode'")])
def test_action_parse_errors(text, message):
    with pytest.raises(AtomEmulatorError, match=message):
        Action.parse(text)


def test_fault_on_unknown_method(atom):
    with pytest.raises(AtomEmulatorError, match="unknown method 'FETCH'"):
        atom.fault("FETCH", Action.drop())


# --- the socket path ------------------------------------------------------------------

def test_refuses_to_replace_a_live_server(atom):
    with pytest.raises(AtomEmulatorError, match=r"a server is listening on .* already"):
        AtomEmulator(atom.socket_path).start()
    assert run_hook("execjob_begin", config=cfg(atom)).outcome == "accept"


def test_refuses_to_replace_a_plain_file(sockdir):
    path = sockdir / "file"
    path.write_text("keep me")
    with pytest.raises(AtomEmulatorError, match="exists and is not a socket"):
        AtomEmulator(str(path)).start()
    assert path.read_text() == "keep me"


def test_replaces_a_stale_socket_and_cleans_up(sockdir):
    path = str(sockdir / "stale.sock")
    AtomEmulator(path).start().stop(remove_socket=False)
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    with AtomEmulator(path, mode=0o660) as a:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o660
        assert run_hook("execjob_begin", config=cfg(a)).outcome == "accept"
    assert not os.path.exists(path)


def test_unbindable_path(sockdir):
    with pytest.raises(AtomEmulatorError, match="cannot listen on"):
        AtomEmulator(str(sockdir / "no-such-dir" / "s.sock")).start()


# --- command line -------------------------------------------------------------------

def _first_line(proc, bound=120.0):
    """The emulator's first line, once it serves (bounded: a hang fails)."""
    ready, _, _ = select.select([proc.stdout], [], [], bound)
    assert ready, f"no line from the emulator in {bound:.0f} s"
    line = proc.stdout.readline()
    assert line, proc.communicate()
    return line.rstrip("\n")


@pytest.mark.parametrize("argv0", [
    [sys.executable, "-m", "flux_dws.pbs.atom_emulator"],
    [sys.executable, "-m", "flux_dws.cli.main", "atom-emulator"]], ids=["module", "flux-dws"])
def test_command_line(sockdir, argv0):
    """Faults from the command line, one JSON line per request, and the
    socket removed on SIGTERM (a stale socket would offline every node)."""
    sock = str(sockdir / "cli.sock")
    proc = subprocess.Popen([*argv0, "--socket", sock, "--fault", "POST=status:500",
                             "--fault", "post=drop"], stdout=subprocess.PIPE, text=True)
    try:
        first = _first_line(proc)
        for _ in range(3):
            run_hook("execjob_begin", config=cfg(sock))
        assert run_hook("execjob_end", config=cfg(sock)).outcome == "accept"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert first == f"atom emulator: serving {sock}"
    got = [json.loads(line) for line in out.splitlines()]
    assert [(g["method"], g["reply"]) for g in got] == [
        ("POST", "500"), ("POST", "drop"), ("POST", "200"), ("DELETE", "204")]
    assert json.loads(got[2]["body"])["jobid"] == "1.pbs01"
    assert not os.path.exists(sock)


def test_command_line_errors(sockdir, capsys):
    with pytest.raises(SystemExit):
        flux_dws_main(["atom-emulator", "--socket", "x", "--fault", "POST"])
    assert "expected METHOD=ACTION" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        flux_dws_main(["atom-emulator", "--socket", "x", "--fault", "POST=boom"])
    assert "unknown fault 'boom'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        flux_dws_main(["atom-emulator", "--socket", "x", "--mode", "rw"])
    assert "expected an octal mode" in capsys.readouterr().err
    plain = sockdir / "plain"
    plain.write_text("")
    assert flux_dws_main(["atom-emulator", "--socket", str(plain)]) == 1
    assert "exists and is not a socket" in capsys.readouterr().err


def test_hook_sends_what_requests_sends(atom, http):
    """The stdlib transport puts the same request on the wire as the
    requests + requests-unixsocket pair the specification names."""
    jid = "123[4].srv"
    body = {"jobid": jid, "uid": os.getuid(), "exclusive": False}
    assert http("POST", "/jobs", json=body).status_code == 200
    assert http("DELETE", f"/jobs/{jid}").status_code == 204
    assert run_hook("execjob_begin", jobid=jid, config=cfg(atom)).outcome == "accept"
    assert run_hook("execjob_end", jobid=jid, config=cfg(atom)).outcome == "accept"
    theirs, ours = atom.requests[:2], atom.requests[2:]
    for a, b in zip(ours, theirs, strict=True):
        assert (a.method, a.raw_path, a.json, a.body) == (b.method, b.raw_path, b.json, b.body)
        for h in ("Host", "Content-Type", "Content-Length"):
            assert a.headers.get(h) == b.headers.get(h), h
    assert ours[1].headers["Content-Length"] == "0"
