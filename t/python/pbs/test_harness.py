"""The PBS stand-in: the hook runs as pbs_python runs it, and the command
line admins use to try a hook file and config without PBS."""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest
from t.python.pbs.conftest import DBG, cfg

from flux_dws.pbs.atom_emulator import Action
from flux_dws.pbs.harness import CONSTANTS, OFFLINE_COMMENT, main, run_hook

PROBE = '''
import pbs
e = pbs.event()
pbs.logmsg(pbs.EVENT_DEBUG, "name=%s local=%s sharing=%s place=%s vnodes=%s cfg=%s" % (
    __name__, pbs.get_local_nodename(), pbs.server().vnode(pbs.get_local_nodename()).sharing,
    e.job.Resource_List["place"], ",".join(e.vnode_list), pbs.hook_config_filename is not None))
'''


def test_namespace_and_pbs_module():
    r = run_hook("execjob_begin", source=PROBE, place="pack", sharing=CONSTANTS["ND_FORCE_EXCL"],
                 vnodes=("nid9", "nid9[1]"))
    assert r.outcome == "accept"  # falling off the end accepts
    assert r.logs == [(DBG, "name=builtins local=nid9 sharing=4 place=pack vnodes=nid9,nid9[1]"
                            " cfg=True")]


def test_everything_is_restored():
    def outer_handler(signum, frame):
        raise AssertionError("the outer timer fired")

    before = signal.signal(signal.SIGALRM, outer_handler)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, 50)
    os.environ["PBS_HOOK_CONFIG_FILE"] = "/before"
    try:
        r = run_hook("execjob_begin", source="import pbs\nraise ValueError('boom')")
        assert r.outcome == "error" and "ValueError: boom" in r.traceback
        assert r.offlined == ["node01"]
        assert os.environ["PBS_HOOK_CONFIG_FILE"] == "/before"
        assert "pbs" not in sys.modules
        # the SIGALRM user around us (here a stand-in; pytest-timeout in CI)
        assert signal.getsignal(signal.SIGALRM) is outer_handler
        assert 49 < signal.getitimer(signal.ITIMER_REAL)[0] <= 50
    finally:
        del os.environ["PBS_HOOK_CONFIG_FILE"]
        signal.signal(signal.SIGALRM, before)
        signal.setitimer(signal.ITIMER_REAL, outer)


def test_alarm_escaping_the_hook_is_an_alarm():
    r = run_hook("execjob_begin", source="while True:\n    pass\n", alarm=0.2)
    assert r.outcome == "alarm" and r.offlined == ["node01"]
    assert r.logged("alarm call while running execjob_begin hook 'PBS_cray_atom',"
                    " request rejected")
    r = run_hook("execjob_end", source="while True:\n    pass\n", alarm=0.2)
    assert r.outcome == "alarm" and r.offlined == []  # fail_action is for begin only


def test_reject_message_and_vnode_comment():
    r = run_hook("execjob_begin", source="import pbs\npbs.event().reject('no')")
    assert (r.outcome, r.reject_msg, r.offlined) == ("reject", "no", [])
    r = run_hook("execjob_begin", source="raise RuntimeError")
    assert r.offlined == ["node01"] and OFFLINE_COMMENT.endswith("due to hook error")


def test_main_thread_only():
    errors = []

    def worker():
        try:
            run_hook("execjob_begin", source="")
        except RuntimeError as exc:
            errors.append(str(exc))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert errors == ["run_hook arms SIGALRM, so it must run in the main thread"]


@pytest.mark.parametrize(("kw", "message"), [
    ({"alarm": 0}, "alarm must be positive"), ({"vnodes": ()}, "at least one vnode")])
def test_bad_arguments(kw, message):
    with pytest.raises(ValueError, match=message):
        run_hook("execjob_begin", **kw)


# --- command line ----------------------------------------------------------------

def test_cli_begin_and_end(atom, sockdir, capsys):
    conf = sockdir / "PBS_cray_atom.CF"
    conf.write_text(cfg(atom))
    assert main(["begin", "--config", str(conf), "--jobid", "8.srv", "--place", "excl",
                 "--sharing", "default_shared", "--vnode", "nid3"]) == 0
    out = capsys.readouterr().out
    assert "DEBUG: PBS_cray_atom:8.srv:execjob_begin: Job 8.srv registered" in out
    assert out.rstrip().endswith("outcome: accept")
    assert atom.jobs["8.srv"]["exclusive"] is True
    atom.fault("DELETE", Action.status(500))
    assert main(["execjob_end", "--config", str(conf), "--jobid", "8.srv"]) == 1
    out = capsys.readouterr().out
    assert "outcome: reject (PBS_cray_atom: DELETE job failed: status 500)" in out


def test_cli_hook_error_offlines(atom, sockdir, capsys):
    conf = sockdir / "c.CF"
    conf.write_text(cfg(atom))
    atom.fault("POST", Action.status(503))
    assert main(["begin", "--config", str(conf), "--vnode", "a", "--vnode", "b"]) == 2
    out = capsys.readouterr().out
    assert "outcome: error" in out and "OfflineError: Invalid status code 503" in out
    assert f"offlined: a ({OFFLINE_COMMENT})\nofflined: b" in out


def test_cli_own_hook_file_and_no_config(sockdir, capsys):
    hook = sockdir / "mine.PY"
    hook.write_text("import pbs\npbs.event().reject('mine')\n")
    assert main(["end", "--no-config", "--hook", str(hook)]) == 1
    assert "outcome: reject (mine)" in capsys.readouterr().out
    assert main(["begin", "--no-config"]) == 2  # the shipped hook needs its config
    assert "no hook configuration file is set" in capsys.readouterr().out


def test_cli_errors(sockdir, capsys):
    assert main(["begin", "--config", str(sockdir / "missing.CF")]) == 2
    assert "No such file or directory" in capsys.readouterr().err
    bad = sockdir / "bad.PY"
    bad.write_text("def (:\n")
    assert main(["begin", "--no-config", "--hook", str(bad)]) == 2
    assert "invalid syntax" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["begin"])  # --config or --no-config is required


def test_site_hook_name(atom, sockdir, capsys):
    """Installed as a site hook under another name, the hook logs and
    rejects under that name, and PBS' offline comment names it."""
    atom.fault("DELETE", Action.status(500))
    r = run_hook("execjob_end", config=cfg(atom), hook_name="cray_atom")
    assert r.reject_msg == "cray_atom: DELETE job failed: status 500"
    assert r.logged("cray_atom:1.pbs01:execjob_end: DELETE job failed")
    conf = sockdir / "c.CF"
    conf.write_text(cfg(atom))
    atom.fault("POST", Action.status(500))
    assert main(["begin", "--config", str(conf), "--name", "cray_atom"]) == 2
    out = capsys.readouterr().out
    assert "offlined: node01 (offlined by hook 'cray_atom' due to hook error)" in out
    assert "execjob_begin hook 'cray_atom' encountered an exception" in out
