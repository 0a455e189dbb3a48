"""``flux-dws rabbits drain|undrain``: argument checks (usage errors, one
line, exit 2), the request each sends, and the service's refusals printed
as one line (exit 1).  The service's side: t/python/service/test_rabbit_drain.py."""

from __future__ import annotations

import contextlib
import errno
import io
from typing import Any

import pytest

from flux_dws.cli import rabbitdrain
from flux_dws.cli.main import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv,words", [
    (["drain"], "required: RABBITS, -r/--reason"),
    (["drain", "r1"], "required: -r/--reason"),
    (["drain", "r[", "--reason", "x"], "argument RABBITS: "),
    (["drain", "r[2-1]", "--reason", "x"], "argument RABBITS: "),
    (["drain", "r1", "--reason", ""], "the reason is empty"),
    (["drain", "r1", "--reason", "  "], "the reason is empty"),
    (["drain", "r1", "--reason", "a\nb"], "one line"),
    (["drain", "r1", "--reason", "x" * 201], "longer than 200 bytes"),
    (["drain", "r1", "--reason", "x\x00"], "NUL"),
    (["drain", "r1", "--reason", "x", "--no-such-option"], "unrecognized arguments"),
    (["undrain"], "required: RABBITS"),
    (["undrain", "r1", "--reason", "x"], "unrecognized arguments: --reason x"),
])
def test_bad_arguments_are_usage_errors(argv: list[str], words: str) -> None:
    rc, out, err = run("rabbits", *argv)
    assert rc == 2 and out == ""
    lines = [ln for ln in err.splitlines() if not ln.startswith("usage:")]
    assert len(lines) == 1 and words in lines[0], err
    assert lines[0].startswith(f"flux-dws rabbits {argv[0]}: error:")


def test_the_requests_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    def ask(topic: str, payload: dict[str, Any]) -> Any:
        sent.append((topic, payload))
        return {"success": True, "rabbits": ["r1", "r2", "r3"]}

    monkeypatch.setattr(rabbitdrain, "ask", ask)
    rc, out, err = run("rabbits", "drain", "r[1-2]", "r3", "-r", "bad drive")
    assert (rc, out, err) == (0, "drained r[1-3]\n", "")
    rc, out, _ = run("rabbits", "undrain", "r[1-3]")
    assert (rc, out) == (0, "undrained r[1-3]\n")
    assert sent == [("dws.drain", {"rabbits": "r[1-3]", "reason": "bad drive"}),
                    ("dws.undrain", {"rabbits": "r[1-3]"})]


@pytest.mark.parametrize("errnum,errstr,line", [
    (errno.EPERM, "Request requires owner credentials",
     "flux-dws rabbits drain: Request requires owner credentials"),
    (errno.EINVAL, "dws.drain: unknown rabbit: nosuch",
     "flux-dws rabbits drain: unknown rabbit: nosuch"),
    (errno.EIO, "dws.drain: rabbit r1: tainting its Kubernetes Node: 409\nConflict",
     "flux-dws rabbits drain: rabbit r1: tainting its Kubernetes Node: 409 Conflict"),
    (errno.ENOSYS, "Function not implemented",
     "flux-dws rabbits drain: Function not implemented (is the dws service loaded?"
     " flux module load dws.py)"),
])
def test_refusals_are_one_line(monkeypatch: pytest.MonkeyPatch, errnum: int, errstr: str,
                               line: str) -> None:
    def ask(topic: str, payload: dict[str, Any]) -> Any:
        raise OSError(errnum, errstr)

    monkeypatch.setattr(rabbitdrain, "ask", ask)
    rc, out, err = run("rabbits", "drain", "r1", "--reason", "x")
    assert (rc, out, err) == (1, "", line + "\n")


def test_the_table_still_takes_rabbit_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anything but a verb first is the table's RABBIT list, as before."""
    rc, _, err = run("rabbits", "--down", "drainer[1-2]")
    assert rc == 1 and "FLUX_URI" in err
