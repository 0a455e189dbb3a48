"""Every console command and subcommand, given garbage arguments and
garbage files, answers with a clear error and never a traceback.

Each case runs the command's ``main`` in this process (an exception that
escapes is the traceback a user would see) and checks its exit status
(1 or 2 for input that cannot work) and that, apart from argparse's usage
lines, the error is one line that names the input.  A few cases run the
installed console scripts, to cover the entry points themselves.

What is covered (commands x input kinds) is listed by ``coverage()`` and
in doc/guide/development.rst.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flux_dws.cli import dws2jgf, getrabbit, rabbitmapping
from flux_dws.cli import main as flux_dws

DW = "#DW jobdw type=xfs capacity=1GiB name=scratch"
MAPPING = {"computes": {"c1": "r1"},
           "rabbits": {"r1": {"capacity": 1 << 40, "hostlist": "c1"}}}
R = {"version": 1, "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}],
                                 "nodelist": ["c1"], "starttime": 0, "expiration": 0}}

#: Files that no command can use: kind -> bytes (None: no such file, "dir": a directory).
BAD_FILES: dict[str, bytes | str | None] = {
    "missing": None,
    "directory": "dir",
    "binary": bytes(range(256)) * 4,
    "latin-1": b"[rabbit]\nname = \"caf\xe9\"\n#DW jobdw caf\xe9\n",
    "garbage-text": b"{[ not: json = toml\n\t- yaml: [\n\x01\x02",
    "wrong-shape": b"[1, 2, 3]\n",
}

#: Commands given a FILE (one per option that reads a file): (name,
#: callable, argv with FILE, environment with FILE or None, stdin bytes).
Main = Callable[[list[str]], int]
FILE_CASES: list[tuple[str, Main, list[str], dict[str, str] | None]] = [
    ("flux-dws check -f", flux_dws.main, ["check", "-f", "FILE"], None),
    ("flux-dws check -s", flux_dws.main, ["check", "-s", "FILE"], None),
    ("flux-dws check --rules", flux_dws.main, ["check", "--rules", "FILE", DW], None),
    ("flux-dws check -c", flux_dws.main, ["check", "-c", "FILE", "-N", "2", DW], None),
    ("flux-dws dws2jgf MAPPING", flux_dws.main, ["dws2jgf", "FILE"], None),
    ("flux-dws2jgf MAPPING", dws2jgf.main, ["FILE"], None),
    ("flux-dws2jgf --from-config", dws2jgf.main, ["--from-config", "FILE", "MAP"], None),
    ("flux-getrabbit -m", getrabbit.main, ["-m", "FILE", "c1"], None),
    ("flux-dws getrabbit -m", flux_dws.main, ["getrabbit", "-m", "FILE"], None),
    ("flux-rabbitmapping -k", rabbitmapping.main, ["-k", "FILE"], None),
    ("flux-rabbitmapping $KUBECONFIG", rabbitmapping.main, [], {"KUBECONFIG": "FILE"}),
    ("flux-dws rabbitmapping -k", flux_dws.main, ["rabbitmapping", "-k", "FILE"], None),
    ("flux-dws fault --kubeconfig", flux_dws.main, ["fault", "--kubeconfig", "FILE", "list"],
     None),
    ("flux-dws fault $KUBECONFIG", flux_dws.main, ["fault", "clear"], {"KUBECONFIG": "FILE"}),
    ("flux-dws emulator --state", flux_dws.main, ["emulator", "--state", "FILE"], None),
    ("flux-dws emulator --system", flux_dws.main, ["emulator", "--system", "FILE"], None),
    ("flux-dws emulator --latency", flux_dws.main,
     ["emulator", "--system", "kind", "--latency", "FILE"], None),
    ("flux-dws demo --system", flux_dws.main, ["demo", "--system", "FILE"], None),
    ("flux-dws demo --latency", flux_dws.main, ["demo", "--latency", "FILE"], None),
]

#: Commands fed garbage on standard input: (name, callable, argv).
STDIN_CASES: list[tuple[str, Main, list[str]]] = [
    ("flux-dws check -f -", flux_dws.main, ["check", "-f", "-"]),
    ("flux-dws2jgf (R on stdin)", dws2jgf.main, ["MAP"]),
    ("flux-dws dws2jgf (R on stdin)", flux_dws.main, ["dws2jgf", "MAP"]),
]

NOT_UTF8 = b"\xff\xfe".decode("utf-8", "surrogateescape")

#: Garbage arguments: (callable, argv).  The file-less options of every
#: command and subcommand, with values out of range, of the wrong type, or
#: not UTF-8, and unknown options.
SUBCOMMANDS = ["atom-emulator", "check", "demo", "dws2jgf", "emulator", "fault", "getrabbit",
               "job", "jobs", "persistent", "rabbitmapping", "rabbits", "status", "sync",
               "usage", "version", "wait"]
#: the listing commands, which take -o/--format (flux_dws.cli.outputformat), and a
#: text field of each
LISTINGS = ((["rabbits"], "state"), (["df"], "state"), (["jobs"], "state"),
            (["persistent", "list"], "state"), (["usage"], "user"))
FAULT_ACTIONS = ["add", "stall", "delay", "hold", "release", "list", "clear", "health",
                 "storage", "storm", "vanish", "api", "api-list", "api-clear", "drop-watches",
                 "expire-watches", "mute-watches"]
ARG_CASES: list[tuple[Main, list[str]]] = [
    (flux_dws.main, []),
    (flux_dws.main, ["no-such-command"]),
    (flux_dws.main, [NOT_UTF8]),
    *[(flux_dws.main, [sub, "--no-such-option"]) for sub in SUBCOMMANDS],
    *[(flux_dws.main, ["fault", act, "--no-such-option"]) for act in FAULT_ACTIONS],
    *[(m, ["--no-such-option"]) for m in (dws2jgf.main, getrabbit.main, rabbitmapping.main)],
    (flux_dws.main, ["check"]),
    (flux_dws.main, ["check", NOT_UTF8]),
    (flux_dws.main, ["check", "#DW jobdw " + NOT_UTF8]),
    (flux_dws.main, ["check", "#DW \x00"]),
    (flux_dws.main, ["check", "not a directive"]),
    (flux_dws.main, ["check", "#DW jobdw type=xfs capacity=-1GiB name=big"]),
    (flux_dws.main, ["check", "#DW jobdw type=xfs capacity=1GiB name=a"]),
    *[(flux_dws.main, ["check", "-N", n, DW]) for n in ("-3", "0", "x", "1e3", "")],
    (flux_dws.main, ["demo", "--nodes", "0"]),
    (flux_dws.main, ["demo", "--nodes", "-2"]),
    (flux_dws.main, ["demo", "--nodes", "100000"]),
    (flux_dws.main, ["demo", "--nodes", "100000", "--workflow-only"]),
    (flux_dws.main, ["demo", "--nodes", "two"]),
    (flux_dws.main, ["demo", "--system", "no-such-system"]),
    (flux_dws.main, ["demo", "--latency", "no-such-preset"]),
    *[(flux_dws.main, ["emulator", "--listen", v])
      for v in ("127.0.0.1:99999", "127.0.0.1:-1", "bad..host:0", "host:port", ":", "[::1:0",
                "[nothex]:0", "a" * 300 + ":0", NOT_UTF8 + ":0")],
    *[(flux_dws.main, ["emulator", "--history", v]) for v in ("0", "-5", "x")],
    *[(flux_dws.main, ["emulator", "--bookmark-interval", v])
      for v in ("0", "-1", "nan", "inf", "x")],
    (flux_dws.main, ["emulator", "--system", "no-such-system"]),
    (flux_dws.main, ["emulator", "--latency", "no-such-preset"]),
    (flux_dws.main, ["emulator", "--kubeconfig", "/proc/no/such/kubeconfig"]),
    *[(dws2jgf.main, ["-c", v, "MAP"]) for v in ("0", "-1", "x", "100000")],
    (dws2jgf.main, ["--cluster-name", NOT_UTF8, "MAP"]),
    *[(getrabbit.main, ["-m", "MAP", *a])
      for a in (["c["], ["-c", "c[1-"], ["no-such-rabbit"], ["r1", "-c", "c1"], [NOT_UTF8])],
    (getrabbit.main, ["-j", "f1"]),
    (rabbitmapping.main, ["-i", "x"]),
    (flux_dws.main, ["status"]),
    (flux_dws.main, ["status", "extra"]),
    (flux_dws.main, ["sync"]),
    (flux_dws.main, ["sync", "extra"]),
    (flux_dws.main, ["job"]),
    (flux_dws.main, ["job", "f1"]),
    (flux_dws.main, ["job", "f1", "f2"]),
    (flux_dws.main, ["job", "f1", "--no-such-option"]),
    (flux_dws.main, ["job", NOT_UTF8]),
    (flux_dws.main, ["jobs"]),
    (flux_dws.main, ["jobs", "f1", NOT_UTF8]),
    *[(flux_dws.main, ["jobs", "-a", "-n", n]) for n in ("-5", "0", "-1", "x", "1e3", "", "2.5",
                                                         "2147483648")],
    (flux_dws.main, ["jobs", "--count=-5"]),
    (flux_dws.main, ["wait"]),
    (flux_dws.main, ["wait", "f1"]),
    (flux_dws.main, ["wait", "f1", "f2"]),
    (flux_dws.main, ["wait", "f1", "--no-such-option"]),
    (flux_dws.main, ["wait", NOT_UTF8]),
    *[(flux_dws.main, ["wait", "f1", "-t", t]) for t in ("-1", "0", "nan", "inf", "-inf",
                                                        "1e400", "x", "")],
    (flux_dws.main, ["rabbits"]),
    *[(flux_dws.main, ["rabbits", *a]) for a in (
        ["r["], ["r[2-1]"], ["--json", "r1,,"], [NOT_UTF8], ["-v", "--down", "r\x00"])],
    # -o/--format of the listing commands: a bad field, preset, spec or format string
    *[(flux_dws.main, [*cmd, *a]) for cmd, f in LISTINGS
      for a in (["-o", "{bogus}"], ["-o", "no-such-preset"], ["--format", f"{{{f}:d}}"],
                [f"--format={{{f}"], ["-o", "{}"], ["-o", NOT_UTF8],
                ["--json", "-o", f"{{{f}}}"])],
    (flux_dws.main, ["usage"]),
    *[(flux_dws.main, ["usage", o, v]) for o, vs in (
        ("--by", ("bogus", "user,", "user,user", "", NOT_UTF8)),
        ("--since", ("garbage", "", "99999-01-01", NOT_UTF8, "2026-13-45")),
        ("--until", ("garbage", "1e400")),
        ("-u", ("no-such-user-here", "4294967295", NOT_UTF8)),
        ("-t", ("0", "nan", "inf", "x"))) for v in vs],
    # a value that begins with '-' is given with '=' (--since=-7d), as to flux jobs
    *[(flux_dws.main, ["usage", a]) for a in ("--since=-x", "--since=-1e400",
                                               "--until=-9999999999999d", "-u-1", "-t-1")],
    (flux_dws.main, ["usage", "--since", "2026-11-02", "--until", "2026-11-01"]),
    (flux_dws.main, ["usage", "-o", "{type} {jobs}"]),
    (flux_dws.main, ["version", "--no-such-option"]),
    *[(flux_dws.main, ["fault", "--kubeconfig", "KC", act, *a]) for act, a in (
        ("add", ["--index", "-1"]), ("add", ["--severity", "Bad"]), ("add", ["--kind", "x"]),
        ("stall", ["--kind", "allocation", "--rabbit", NOT_UTF8]),
        ("delay", []), ("delay", ["--seconds", "-1"]), ("delay", ["--seconds", "nan"]),
        ("api", ["--status", "700"]), ("api", ["--count", "0"]),
        ("api", ["--retry-after", "-3"]), ("expire-watches", ["--count", "x"]),
        ("health", ["r1", "--link", "no-equals-sign"]), ("health", []), ("vanish", []),
        ("health", ["r1", "--link", "=Offline"]), ("health", ["r1", "--link", "c1=bogus"]),
        ("health", ["r1", "--status", "Bogus"]), ("health", ["r1", "--drain-taint", "foo"]),
        ("health", ["r1", "--fenced", "--unfenced"]),
        ("health", ["r1", "--k8s-ready", "--k8s-not-ready"]),
        ("health", ["r1", "--drain-taint", "cray.nnf.node.drain", "--no-drain-taint"]),
        ("storage", []), ("storage", ["r1", "--state", "Bogus"]),
        ("storage", ["r1", "--mode", "live"]), ("storage", ["r1", "--status", "Bogus"]),
        ("storage", ["r1", "--link", "c1"]), ("storage", ["r1", "--reason", "x"]),
        ("storage", ["r1", "--state", "Enabled", "--reason", "x"]),
        ("storage", ["r1", "--state", "Disabled", "--reason", ""]),
        ("storm", []), ("storm", ["--events", "0"]), ("storm", ["--events", "x"]),
        ("storm", ["--events", "2", "--seed", "-1"]), ("storm", ["--events", "2", NOT_UTF8]),
    )],
    (flux_dws.main, ["fault", "--kubeconfig", "KC", "list"]),
    *[(flux_dws.main, ["atom-emulator", *a]) for a in (
        [], ["--socket", "/proc/no/such/dir/sock"], ["--socket", "S", "--mode", "999"],
        ["--socket", "S", "--mode", "x"], ["--socket", "S", "--fault", "garbage"])],
]


#: What the error of an ARG_CASES entry must name, where it is not the last
#: argument (the bad value) as given: a missing required argument, an
#: option that conflicts, or a value that cannot be printed as given.
NAMES: dict[tuple[str, ...], str] = {
    (): "COMMAND",
    (NOT_UTF8,): "COMMAND",
    ("atom-emulator", "--no-such-option"): "--socket",
    ("fault", "--no-such-option"): "ACTION",
    ("fault", "delay", "--no-such-option"): "--seconds",
    ("fault", "health", "--no-such-option"): "rabbit",
    ("fault", "storage", "--no-such-option"): "rabbit",
    ("fault", "storm", "--no-such-option"): "--events",
    ("fault", "vanish", "--no-such-option"): "workflow",
    ("check",): "no directives",
    ("check", NOT_UTF8): "not UTF-8",
    ("check", "#DW jobdw " + NOT_UTF8): "not UTF-8",
    ("check", "#DW \x00"): "NUL",
    ("check", "#DW jobdw type=xfs capacity=-1GiB name=big"): "'capacity'",
    ("check", "#DW jobdw type=xfs capacity=1GiB name=a"): "'name'",
    ("demo", "--nodes", "100000", "--workflow-only"): "--nodes",
    ("emulator", "--listen", NOT_UTF8 + ":0"): "--listen",
    ("--cluster-name", NOT_UTF8, "MAP"): "--cluster-name",
    ("fault", "--kubeconfig", "KC", "stall", "--kind", "allocation", "--rabbit", NOT_UTF8):
        "--rabbit",
    ("-m", "MAP", "r1", "-c", "c1"): "--computes",
    ("-m", "MAP", NOT_UTF8): "not UTF-8",
    ("-j", "f1"): "FLUX_URI",
    ("status",): "FLUX_URI",
    ("status", "extra"): "unrecognized arguments: extra",
    ("sync",): "FLUX_URI",
    ("sync", "extra"): "unrecognized arguments: extra",
    ("job",): "jobid",
    ("job", "--no-such-option"): "jobid",
    ("job", "f1"): "FLUX_URI",
    ("job", "f1", "f2"): "unrecognized arguments: f2",
    ("job", NOT_UTF8): "not UTF-8",
    ("jobs",): "FLUX_URI",
    ("jobs", "f1", NOT_UTF8): "not UTF-8",
    ("jobs", "--count=-5"): "-5",
    ("usage",): "FLUX_URI",
    ("usage", "--by", NOT_UTF8): "not UTF-8",
    ("usage", "--since", NOT_UTF8): "not UTF-8",
    ("usage", "-u", NOT_UTF8): "not UTF-8",
    ("usage", "--by", ""): "--by",
    ("usage", "--since", ""): "--since",
    ("usage", "--since", "2026-11-02", "--until", "2026-11-01"):
        "--since=2026-11-02 (2026-11-02",
    ("usage", "--since", "99999-01-01"): "--since=99999-01-01",
    ("usage", "--since=-x"): "'-x'",
    ("usage", "--since=-1e400"): "'-1e400'",
    ("usage", "--until=-9999999999999d"): "'-9999999999999d'",
    ("usage", "-u-1"): "'-1'",
    ("usage", "-t-1"): "-1",
    ("usage", "-o", "{type} {jobs}"): "'type', which --by does not group by",
    ("wait",): "jobid",
    ("wait", "--no-such-option"): "jobid",
    ("wait", "f1"): "FLUX_URI",
    ("wait", "f1", "f2"): "unrecognized arguments: f2",
    ("wait", NOT_UTF8): "not UTF-8",
    ("wait", "f1", "-t", "-inf"): "-t",
    ("rabbits",): "FLUX_URI",
    ("rabbits", NOT_UTF8): "not UTF-8",
    ("rabbits", "-v", "--down", "r\x00"): "NUL",
    ("fault", "--kubeconfig", "KC", "delay"): "--seconds",
    ("fault", "--kubeconfig", "KC", "health"): "rabbit",
    ("fault", "--kubeconfig", "KC", "vanish"): "workflow",
    ("fault", "--kubeconfig", "KC", "storage"): "rabbit",
    ("fault", "--kubeconfig", "KC", "storm"): "--events",
    ("fault", "--kubeconfig", "KC", "health", "r1", "--link", "c1=bogus"): "'bogus'",
    ("fault", "--kubeconfig", "KC", "health", "r1", "--fenced", "--unfenced"): "--unfenced",
    ("fault", "--kubeconfig", "KC", "health", "r1", "--k8s-ready", "--k8s-not-ready"):
        "--k8s-not-ready",
    ("fault", "--kubeconfig", "KC", "health", "r1", "--drain-taint", "cray.nnf.node.drain",
     "--no-drain-taint"): "--no-drain-taint",
    ("fault", "--kubeconfig", "KC", "storage", "r1", "--reason", "x"): "--reason",
    ("fault", "--kubeconfig", "KC", "storage", "r1", "--state", "Enabled", "--reason", "x"):
        "--reason",
    ("fault", "--kubeconfig", "KC", "storage", "r1", "--state", "Disabled", "--reason", ""):
        "--reason",
    ("fault", "--kubeconfig", "KC", "storm", "--events", "2", NOT_UTF8): "unrecognized",
    ("fault", "--kubeconfig", "KC", "list"): "no-such-kubeconfig",
    ("atom-emulator",): "--socket",
    **{(*cmd, *a): names
       for cmd, f in LISTINGS
       for a, names in ((["-o", "{bogus}"], "unknown field 'bogus'"),
                        (["--format", f"{{{f}:d}}"], f"field '{f}': Unknown format code"),
                        ([f"--format={{{f}"], f"'{{{f}'"), (["-o", "{}"], "'{}'"),
                        (["-o", NOT_UTF8], "not UTF-8"),
                        (["--json", "-o", f"{{{f}}}"], "--json"))},
}


def named(argv: list[str]) -> str:
    """What the error for ARG_CASES' ``argv`` must name: NAMES' entry, or
    the last argument given (files and the good directive aside)."""
    if tuple(argv) in NAMES:
        return NAMES[tuple(argv)]
    return [a for a in argv if a not in (DW, "MAP", "KC")][-1]


def make_file(tmp_path: Path, kind: str) -> str:
    content = BAD_FILES[kind]
    path = tmp_path / f"input-{kind}"
    if content is None:
        return str(tmp_path / "no-such-dir" / "no-such-file")
    if content == "dir":
        path.mkdir()
    else:
        assert isinstance(content, bytes)
        path.write_bytes(content)
    return str(path)


class Outcome:
    def __init__(self, rc: int, out: str, err: str) -> None:
        self.rc, self.out, self.err = rc, out, err

    @property
    def verdict(self) -> bool:
        """flux-dws check refused the directives (its verdict, on stdout as
        a job's exception would carry it) rather than failing to read them."""
        return not self.err and self.out.startswith("DWS workflow interactions failed: ")

    def message_lines(self) -> list[str]:
        """stderr without argparse's usage (``usage:`` and its indented
        continuation lines), or check's verdict."""
        text = self.out if self.verdict else self.err
        return [line for line in text.splitlines()
                if line and not line.startswith(("usage:", " "))]


def run_main(main: Main, argv: list[str], monkeypatch: pytest.MonkeyPatch,
             capfd: pytest.CaptureFixture[str], stdin: bytes = b"") -> Outcome:
    """Run a command's main in-process; an escaping exception fails the test
    with its traceback (what a user would see)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    # flux-dws emulator serves until a signal: given input it accepts, it
    # stops at once instead.
    from flux_dws.cli import emulator

    done = threading.Event()
    done.set()
    monkeypatch.setattr(emulator, "threading", types.SimpleNamespace(Event=lambda: done))
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse, and fault's messages
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            rc = 1
        else:
            rc = int(exc.code or 0)
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    captured = capfd.readouterr()
    return Outcome(rc, captured.out, captured.err)


def assert_clear_error(outcome: Outcome, names: str | None) -> None:
    assert outcome.rc in (1, 2), outcome.err
    lines = outcome.message_lines()
    # check's verdict is the job's exception text, which quotes the
    # directive as given (newlines too)
    assert len(lines) == 1 or outcome.verdict, f"expected one line of error, got {lines}"
    assert "Traceback" not in outcome.err
    if names is not None:
        assert names in lines[0], f"{lines[0]!r} does not name {names!r}"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "map.json").write_text(json.dumps(MAPPING))
    return {"MAP": str(tmp_path / "map.json"), "KC": str(tmp_path / "no-such-kubeconfig")}


def substitute(argv: list[str], files: dict[str, str], path: str = "") -> list[str]:
    return [path if a == "FILE" else files.get(a, a) for a in argv]


#: Options for which a directory is good input (a Flux config directory).
DIRECTORY_OK = {"flux-dws check -c"}
BAD_FILE_CASES = [(*case, kind) for case in FILE_CASES for kind in sorted(BAD_FILES)
                  if not (kind == "directory" and case[0] in DIRECTORY_OK)]


@pytest.mark.parametrize(("name", "main", "argv", "env", "kind"), BAD_FILE_CASES,
                         ids=[f"{c[0]}-{c[4]}" for c in BAD_FILE_CASES])
def test_bad_file(name: str, main: Main, argv: list[str], env: dict[str, str] | None,
                  kind: str, tmp_path: Path, files: dict[str, str],
                  monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    path = make_file(tmp_path, kind)
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, path if v == "FILE" else v)
    outcome = run_main(main, substitute(argv, files, path), monkeypatch, capfd,
                       stdin=json.dumps(R).encode())
    # check's verdict on a file of directives quotes the directive it read
    assert_clear_error(outcome, None if outcome.verdict else Path(path).name)


@pytest.mark.parametrize("kind", ["binary", "latin-1", "garbage-text", "wrong-shape"])
@pytest.mark.parametrize(("name", "main", "argv"), STDIN_CASES,
                         ids=[c[0] for c in STDIN_CASES])
def test_bad_stdin(name: str, main: Main, argv: list[str], kind: str, files: dict[str, str],
                   monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    data = BAD_FILES[kind]
    assert isinstance(data, bytes)
    outcome = run_main(main, substitute(argv, files), monkeypatch, capfd, stdin=data)
    assert_clear_error(outcome, None)
    assert any(w in outcome.message_lines()[0] for w in ("standard input", "R", "#DW"))


@pytest.mark.parametrize(("main", "argv"), ARG_CASES,
                         ids=[" ".join([m.__module__.rsplit(".", 1)[-1], *a])[:60]
                              for m, a in ARG_CASES])
def test_bad_arguments(main: Main, argv: list[str], tmp_path: Path, files: dict[str, str],
                       monkeypatch: pytest.MonkeyPatch,
                       capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("FLUX_URI", raising=False)
    outcome = run_main(main, substitute(argv, files), monkeypatch, capfd,
                       stdin=json.dumps(R).encode())
    assert_clear_error(outcome, named(argv))


def test_capacity_too_large_is_refused_where_it_is_parsed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    """DWS' webhook takes any digits as a capacity, so a submission (and
    check, which judges as one) accepts an overflowing one; it is parsed,
    and refused naming it, where a capacity is read: against the policy
    maximums (and by nnf-sos at Proposal)."""
    huge = "#DW jobdw type=xfs capacity=99999999999999999999TiB name=big"
    assert run_main(flux_dws.main, ["check", huge], monkeypatch, capfd).rc == 0
    conf = tmp_path / "rabbit.toml"
    conf.write_text("[rabbit.policy.maximums]\nxfs = 1000\n")
    outcome = run_main(flux_dws.main, ["check", "-c", str(conf), "-N", "1", huge],
                       monkeypatch, capfd)
    assert_clear_error(outcome, "capacity")
    assert "99999999999999999999TiB" in outcome.message_lines()[0]


#: A range followed by a suffix names each host in full: 12,132,137 of them
#: took 1 GB and seconds to decode before any command could say no.
HUGE_SUFFIXED = "[1-12132137]x"
SUFFIXED_CASES: list[tuple[str, Main, list[str], dict[str, Any] | None]] = [
    ("flux-getrabbit -c", getrabbit.main, ["-m", "MAP", "-c", "c" + HUGE_SUFFIXED], None),
    ("flux-getrabbit RABBITS", getrabbit.main, ["-m", "MAP", "r" + HUGE_SUFFIXED], None),
    ("flux-dws getrabbit -c", flux_dws.main,
     ["getrabbit", "-m", "MAP", "-c", "c" + HUGE_SUFFIXED], None),
    ("flux-dws rabbits RABBIT", flux_dws.main, ["rabbits", "r" + HUGE_SUFFIXED], None),
    ("flux-dws rabbits drain", flux_dws.main,
     ["rabbits", "drain", "r" + HUGE_SUFFIXED, "--reason", "x"], None),
    ("flux-dws rabbits undrain", flux_dws.main, ["rabbits", "undrain", "r" + HUGE_SUFFIXED],
     None),
    ("flux-dws df RABBIT", flux_dws.main, ["df", "r" + HUGE_SUFFIXED], None),
    ("flux-dws2jgf (R nodelist)", dws2jgf.main, ["MAP"],
     {**R, "execution": {**R["execution"], "nodelist": ["c" + HUGE_SUFFIXED]}}),
    ("flux-dws2jgf (mapping hostlist)", dws2jgf.main, ["HUGEMAP"], R),
]


@pytest.mark.parametrize(("name", "main", "argv", "stdin"), SUFFIXED_CASES,
                         ids=[c[0] for c in SUFFIXED_CASES])
def test_a_suffixed_range_too_large_is_one_line(
        name: str, main: Main, argv: list[str], stdin: dict[str, Any] | None, tmp_path: Path,
        files: dict[str, str], monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    """Every command that reads a hostlist refuses one whose range followed
    by a suffix names too many hosts, in one line, without making them."""
    monkeypatch.delenv("FLUX_URI", raising=False)
    huge = {**MAPPING, "computes": {}, "rabbits": {"r1": {"capacity": 1 << 40,
                                                        "hostlist": "c" + HUGE_SUFFIXED}}}
    (tmp_path / "huge.json").write_text(json.dumps(huge))
    files = {**files, "HUGEMAP": str(tmp_path / "huge.json")}
    outcome = run_main(main, substitute(argv, files), monkeypatch, capfd,
                       stdin=json.dumps(stdin or R).encode())
    assert_clear_error(outcome, "12132137 such hosts (at most 1048576)")
    assert "hostlist too large: '" in outcome.message_lines()[0]


def test_every_named_case_is_a_case() -> None:
    """NAMES speaks only of cases that exist (a stale entry checks nothing)."""
    cases = {tuple(a) for _, a in ARG_CASES}
    assert set(NAMES) - cases == set()


def test_unknown_option_shows_the_subcommand_usage(monkeypatch: pytest.MonkeyPatch,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    outcome = run_main(flux_dws.main, ["emulator", "--bogus"], monkeypatch, capfd)
    assert outcome.rc == 2
    assert outcome.err.startswith("usage: flux-dws emulator ")
    assert "flux-dws emulator: error: unrecognized arguments: --bogus" in outcome.err
    outcome = run_main(flux_dws.main, ["fault", "add", "--bogus"], monkeypatch, capfd)
    assert outcome.err.startswith("usage: flux-dws fault add ")


SCRIPTS = ["flux-dws", "flux-dws2jgf", "flux-getrabbit", "flux-rabbitmapping"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_console_scripts_print_no_traceback(script: str, tmp_path: Path) -> None:
    """The installed entry points, run for real on a binary file and on a
    binary standard input."""
    exe = Path(sys.executable).parent / script
    if not exe.exists():
        pytest.skip(f"{script} is not installed next to {sys.executable}")
    binary = tmp_path / "binary"
    binary.write_bytes(bytes(range(256)))
    argv = {"flux-dws": ["check", "-f", str(binary)], "flux-dws2jgf": [str(binary)],
            "flux-getrabbit": ["-m", str(binary)], "flux-rabbitmapping": ["-k", str(binary)]}
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    for args in (argv[script], ["--no-such-option"]):
        p = subprocess.run([str(exe), *args], input=bytes(range(256)), capture_output=True,
                           env=env, timeout=60, check=False)
        err = p.stderr.decode(errors="replace")
        assert p.returncode in (1, 2), err
        assert "Traceback" not in err
        if args[0] != "--no-such-option":
            assert f"{binary}:2: not UTF-8 text" in err  # 0x0a ends line 1


def coverage() -> dict[str, list[str]]:
    """What this file tries: command -> input kinds."""
    out: dict[str, list[str]] = {}
    for name, *_ in FILE_CASES:
        out[name] = [f"file: {k}" for k in sorted(BAD_FILES)]
    for name, *_ in STDIN_CASES:
        out[name] = ["stdin: binary, latin-1, garbage-text, wrong-shape"]
    for main, argv in ARG_CASES:
        prog = {flux_dws.main: "flux-dws", dws2jgf.main: "flux-dws2jgf",
                getrabbit.main: "flux-getrabbit", rabbitmapping.main: "flux-rabbitmapping"}[main]
        head = [a for a in argv[:2] if not a.startswith("-")][:2]
        out.setdefault(" ".join([prog, *head]), []).append("args: " + " ".join(argv))
    return out
