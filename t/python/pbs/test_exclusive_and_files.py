"""The exclusivity matrix, the .HK/.CF files and Python 3.6 compatibility."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import types

import pytest
from t.python.pbs.conftest import cfg

from flux_dws.pbs import hook_dir
from flux_dws.pbs.harness import CONSTANTS, run_hook

NS: dict = {"__name__": "hook"}
exec(compile((hook_dir() / "PBS_cray_atom.PY").read_text(), "hook", "exec"), NS)
is_exclusive = NS["is_exclusive"]
PBS = types.SimpleNamespace(**CONSTANTS)
S = {None: None, "default_shared": 1, "default_excl": 2, "ignore_excl": 3, "force_excl": 4,
     "default_exclhost": 5, "force_exclhost": 6}
# rows: sharing; columns: none, excl, exclhost, shared (pbs-atom-hook-notes.md §1.7)
MATRIX = {
    None: "FTTF", "default_shared": "FTTF", "default_excl": "TTTF",
    "default_exclhost": "TTTF", "ignore_excl": "FFFF", "force_excl": "TTTT",
    "force_exclhost": "TTTT",
}
PLACES = {"none": [None, "free", "pack", "scatter", "vscatter", "scatter:group=excl_sw"],
          "excl": ["excl", "scatter:excl"], "exclhost": ["exclhost",
                                                         "vscatter:exclhost:group=switch"],
          "shared": ["shared", "pack:shared"]}


@pytest.mark.parametrize("sharing", list(MATRIX))
@pytest.mark.parametrize("col", range(4))
def test_matrix(sharing, col):
    want = MATRIX[sharing][col] == "T"
    for place in PLACES[["none", "excl", "exclhost", "shared"][col]]:
        assert is_exclusive(place, S[sharing], PBS) is want, (sharing, place)


@pytest.mark.parametrize(("place", "sharing", "want"), [
    ("scatter:excl", "default_shared", True), ("pack:shared", "default_excl", False),
    (None, "force_exclhost", True)])
def test_exclusive_reaches_atom(atom, place, sharing, want):
    assert run_hook("execjob_begin", place=place, sharing=S[sharing],
                    config=cfg(atom)).outcome == "accept"
    assert atom.requests[0].json["exclusive"] is want


def test_hk_file():
    lines = (hook_dir() / "PBS_cray_atom.HK").read_text().split()
    assert dict(line.split("=", 1) for line in lines) == {
        "type": "pbs", "enabled": "false", "user": "pbsadmin",
        "event": "execjob_begin,execjob_end", "order": "100", "alarm": "300",
        "fail_action": "offline_vnodes"}


def test_cf_file():
    assert json.loads((hook_dir() / "PBS_cray_atom.CF").read_text()) == {
        "post_timeout": 30, "delete_timeout": 30,
        "unix_socket_file": "/var/run/atomd/atomd.sock"}


def test_python36_syntax():
    """The hook runs in PBS' embedded Python, often 3.6 on Cray nodes."""
    src = (hook_dir() / "PBS_cray_atom.PY").read_text()
    ast.parse(src, feature_version=(3, 6))
    tree = ast.parse(src)
    banned = (ast.NamedExpr, ast.Match) if hasattr(ast, "Match") else (ast.NamedExpr,)
    assert not [n for n in ast.walk(tree) if isinstance(n, banned)]
    imports = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
               for a in n.names}
    imports |= {n.module.split(".")[0] for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and n.module}
    assert imports <= {"http", "json", "os", "pwd", "socket", "urllib", "pbs"}, imports
    assert "dataclasses" not in src and "from __future__ import annotations" not in src


@pytest.mark.skipif(shutil.which("vermin") is None, reason="vermin is not installed")
def test_vermin_says_36():
    out = subprocess.run(["vermin", "--no-tips", "--violations", "--target=3.6-",
                          str(hook_dir() / "PBS_cray_atom.PY")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_emulator_command_line(sockdir):
    import time
    sock = sockdir / "cli.sock"
    p = subprocess.Popen([sys.executable, "-m", "flux_dws.pbs.atom_emulator", "--socket",
                          str(sock)], stdout=subprocess.PIPE)
    try:
        for _ in range(100):
            if sock.exists():
                break
            time.sleep(0.05)
        assert run_hook("execjob_begin", config=cfg(str(sock))).outcome == "accept"
    finally:
        p.terminate()
        p.wait(5)
