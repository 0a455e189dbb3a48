"""The shipped hook files: the .HK attributes and .CF defaults of the
specification, and Python 3.6 compatibility of the .PY (plan case 22)."""

from __future__ import annotations

import ast
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from t.python.pbs.conftest import HOOK_PATH, cfg

from flux_dws.pbs import hook_dir
from flux_dws.pbs.atom_emulator import Action

STDLIB_USED = {"http", "json", "os", "pwd", "socket", "urllib"}


def test_hk_file_is_the_specification():
    lines = (hook_dir() / "PBS_cray_atom.HK").read_text().splitlines()
    assert dict(line.split("=", 1) for line in lines) == {
        "type": "pbs", "enabled": "false", "user": "pbsadmin",
        "event": "execjob_begin,execjob_end", "order": "100", "alarm": "300",
        "fail_action": "offline_vnodes"}
    assert len(lines) == 7


def test_cf_file_is_the_specification():
    assert json.loads((hook_dir() / "PBS_cray_atom.CF").read_text()) == {
        "post_timeout": 30, "delete_timeout": 30,
        "unix_socket_file": "/var/run/atomd/atomd.sock"}


def test_hook_files_ship_together():
    assert sorted(p.name for p in hook_dir().glob("PBS_cray_atom.*")) == [
        "PBS_cray_atom.CF", "PBS_cray_atom.HK", "PBS_cray_atom.PY"]


# --- Python 3.6 -----------------------------------------------------------------

def test_ast_feature_check_for_36():
    """No syntax or stdlib newer than 3.6, and only the standard library."""
    src = HOOK_PATH.read_text()
    ast.parse(src, feature_version=(3, 6))  # walrus, match, ... are refused
    tree = ast.parse(src)
    newer = [type(n).__name__ for n in ast.walk(tree)
             if type(n).__name__ in ("NamedExpr", "Match", "JoinedStr", "AnnAssign")]
    assert newer == []  # f-strings are 3.6, but keep the file 3.5-clean like PBS' own hooks
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.arg) and n.annotation]
    imports = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
               for a in n.names}
    imports |= {n.module.split(".")[0] for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and n.module}
    assert imports == STDLIB_USED | {"pbs"}
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module == "__future__"]


def _vermin() -> str:
    exe = shutil.which("vermin") or str(Path(sys.executable).with_name("vermin"))
    assert os.access(exe, os.X_OK), "vermin is in requirements-dev.txt; run scripts/setup.sh"
    return exe


def test_vermin_target_36():
    out = subprocess.run([_vermin(), "--no-tips", "--violations", "--target=3.6-",
                          str(HOOK_PATH)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


def test_vermin_catches_a_37_feature(tmp_path):
    """The check above can fail: vermin refuses 3.7 API at target 3.6."""
    bad = tmp_path / "bad.PY"
    bad.write_text("import time\nprint(time.time_ns())\n")
    out = subprocess.run([_vermin(), "--no-tips", "--violations", "--target=3.6-", str(bad)],
                         capture_output=True, text=True, check=False)
    assert out.returncode != 0


def _python36() -> str | None:
    candidates = [os.environ.get("PBS_HOOK_PYTHON", ""), shutil.which("python3.6") or "",
                  "/usr/bin/python3.6",
                  *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.6*/bin/python3.6")))]
    for exe in filter(None, candidates):
        try:
            out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=20, check=False)
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.strip() == "(3, 6)":
            return exe
    return None


PY36 = _python36()
needs36 = pytest.mark.skipif(PY36 is None, reason="no Python 3.6 interpreter here"
                                                  " (set PBS_HOOK_PYTHON to one)")

# A pbs_python stand-in that itself runs on 3.6: the hook in a namespace
# holding only __builtins__, a pbs module, accept/reject as SystemExit.
DRIVER36 = r'''
import builtins, json, sys, types
hook, config, etype, jobid = sys.argv[1:5]
logs, state = [], {"outcome": "accept", "msg": ""}

class Job(object):
    id = jobid
    euser = "root"
    Resource_List = {"place": "scatter:excl"}

class Event(object):
    type = {"begin": 0x40, "end": 0x200}[etype]
    hook_name = "PBS_cray_atom"
    job = Job()
    def accept(self):
        raise SystemExit("0")
    def reject(self, msg=""):
        state.update(outcome="reject", msg=msg)
        raise SystemExit(255)

pbs = types.ModuleType("pbs")
for k, v in dict(EVENT_ERROR=1, EVENT_DEBUG=0x80, EVENT_DEBUG2=0x100, EVENT_DEBUG3=0x400,
                 EVENT_DEBUG4=0x800, EXECJOB_BEGIN=0x40, EXECJOB_END=0x200, ND_DEFAULT_SHARED=1,
                 ND_DEFAULT_EXCL=2, ND_IGNORE_EXCL=3, ND_FORCE_EXCL=4, ND_DEFAULT_EXCLHOST=5,
                 ND_FORCE_EXCLHOST=6).items():
    setattr(pbs, k, v)
event = Event()
pbs.event = lambda: event
pbs.logmsg = lambda level, msg: logs.append(msg)
pbs.get_local_nodename = lambda: "nid1"
pbs.server = lambda: types.SimpleNamespace(vnode=lambda n: types.SimpleNamespace(sharing=None))
pbs.hook_config_filename = config
sys.modules["pbs"] = pbs
try:
    exec(compile(open(hook).read(), hook, "exec"), {"__builtins__": builtins})
except SystemExit:
    pass
except Exception as exc:
    state.update(outcome="error", msg="%s: %s" % (type(exc).__name__, exc))
print(json.dumps({"outcome": state["outcome"], "msg": state["msg"], "logs": logs,
                  "version": list(sys.version_info[:2])}))
'''


def run36(tmp: Path, config: str | bytes, etype: str, jobid: str = "1.srv") -> dict:
    """Run the hook once under Python 3.6 in the C locale, as MoM may."""
    assert PY36 is not None
    (tmp / "driver.py").write_text(DRIVER36)
    (tmp / "hook.CF").write_bytes(config if isinstance(config, bytes) else config.encode())
    env = {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"}
    out = subprocess.run([PY36, "-I", "-B", str(tmp / "driver.py"), str(HOOK_PATH),
                          str(tmp / "hook.CF"), etype, jobid],
                         capture_output=True, text=True, timeout=30, check=False, env=env)
    assert out.returncode == 0, out.stderr
    result: dict = json.loads(out.stdout)
    assert result["version"] == [3, 6]
    return result


@needs36
def test_compiles_under_real_python36():
    out = subprocess.run([PY36, "-I", "-c", "import sys; compile(open(sys.argv[1]).read(),"
                          " sys.argv[1], 'exec')", str(HOOK_PATH)],
                         capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0, out.stderr


@needs36
def test_runs_under_real_python36(atom, sockdir):
    """begin (400 retry included) and end, on Python 3.6, against the emulator."""
    atom.add_job("1.srv")
    r = run36(sockdir, cfg(atom), "begin")
    assert r["outcome"] == "accept" and any("Job 1.srv registered" in m for m in r["logs"])
    assert [q.reply for q in atom.requests] == ["400", "204", "200"]
    assert atom.jobs["1.srv"] == {"jobid": "1.srv", "uid": 0, "exclusive": True}
    r = run36(sockdir, cfg(atom), "end")
    assert r["outcome"] == "accept" and atom.jobs == {}


@needs36
def test_faults_under_real_python36(atom, sockdir):
    atom.fault("POST", Action.delay(1.0))
    r = run36(sockdir, cfg(atom, post_timeout=0.2), "begin")
    assert r["outcome"] == "error" and r["msg"] == "OfflineError: POST timed out after 0.2 s"
    atom.fault("DELETE", Action.drop())
    r = run36(sockdir, cfg(atom), "end", jobid="2[3].srv")
    assert r["outcome"] == "reject" and "DELETE failed: RemoteDisconnected" in r["msg"]
    assert atom.requests[-1].raw_path == "/rm/v1/jobs/2%5B3%5D.srv"
    r = run36(sockdir, '{"unix_socket_file": "/var/run/a\\u0000b"}', "begin")
    assert r["outcome"] == "error" and "must be an absolute path" in r["msg"]
    r = run36(sockdir, '{"post_timeout": 1e10}', "end")
    assert r["outcome"] == "reject" and "post_timeout must be a number" in r["msg"]
    r = run36(sockdir, "", "end")
    assert r["outcome"] == "accept"  # empty file: defaults, and no socket here


@needs36
def test_config_encoding_under_python36_c_locale(sockdir):
    """A UTF-8 config loads whatever the locale; anything else is a clear error."""
    r = run36(sockdir, '{"unix_socket_file": "/tmp/\u00e9t\u00e9.sock"}'.encode(), "begin")
    assert r["outcome"] == "accept", r
    r = run36(sockdir, b'{"unix_socket_file": "/tmp/\xc3\xa9t\xc3\xa9.sock"}', "begin")
    assert r["outcome"] == "accept", r
    assert any("/tmp/\u00e9t\u00e9.sock does not exist" in m for m in r["logs"]), r
    r = run36(sockdir, b'{"unix_socket_file": "/tmp/\xe9.sock"}', "end")
    assert r["outcome"] == "reject" and "is not UTF-8 text" in r["msg"]


def test_hook_is_lint_clean(tmp_path):
    """pyproject keeps src/pbs out of ruff (its rules assume 3.9); check the
    hook with the rules that hold for 3.6 code, on a .py copy (UP031 is
    off: the file uses %-formatting, staying 3.5-clean like PBS itself)."""
    exe = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    copy = tmp_path / "PBS_cray_atom.py"
    copy.write_text(HOOK_PATH.read_text())
    out = subprocess.run([exe, "check", "--isolated", "--no-cache", "--line-length", "100",
                          "--target-version", "py37", "--select", "E,F,W,B,I,UP,RUF",
                          "--ignore", "UP031", str(copy)],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
