"""``flux-dws df``: the table and --json from a dws.rabbits {"df": true}
answer, the rabbits chosen, and bad input as one line (usage errors exit
2, the rest 1).  The service's side: t/python/service/test_rabbit_df.py."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from flux_dws.cli import df
from flux_dws.cli.main import main

T, G = 1 << 40, 1 << 30


def rabbit(name: str, free: int | None, jobs: int = 0, persistent: int = 0,
           up: bool = True, why: str = "", down: int = 0) -> dict[str, Any]:
    size = 36 * T
    used = None if free is None else size - free
    other = 0 if used is None else used - jobs - persistent
    return {"name": name, "up": up, "why": why, "size": size, "free": free, "used": used,
            "jobs": jobs, "persistent": persistent, "other": other,
            "ssds": {"total": 36, "up": 36 - down, "down": down, "held": 0}}


ANSWER = {"success": True, "ready": True, "fluxion": True, "rabbits": [
    rabbit("r1", 36 * T - 30 * G, jobs=10 * G, persistent=20 * G),
    rabbit("r2", 36 * T - 1 * T, jobs=T, up=False, why="drained 2026-11-26T04:00:00Z: fw",
           down=36),
]}


class FakeFlux:
    def __init__(self, answer: Any) -> None:
        self.answer, self.sent = answer, []

    def rpc(self, topic: str, payload: Any) -> Any:
        self.sent.append((topic, payload))
        answer = self.answer

        class Future:
            def get(self) -> Any:
                if isinstance(answer, OSError):
                    raise answer
                return answer
        return Future()


def run(monkeypatch: pytest.MonkeyPatch, answer: Any, *argv: str) -> tuple[int, str, str]:
    fake = FakeFlux(answer)
    monkeypatch.setattr(df, "open_flux", lambda: fake)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(["df", *argv])
        except SystemExit as exc:
            rc = int(exc.code or 0)
    if answer is not None:
        assert fake.sent in ([], [("dws.rabbits", {"df": True})])
    return rc, out.getvalue(), err.getvalue()


def test_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out, err = run(monkeypatch, ANSWER)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == ("RABBIT   SIZE   JOBS  PERSISTENT  OTHER   FREE  USE%   SSDS  DOWN  HELD"
                        "  STATE")
    assert lines[1].split() == ["r1", "36.0T", "10.0G", "20.0G", "0B", "36.0T", "1%", "36/36",
                                "0", "0", "up"]
    assert lines[2].split()[:10] == ["r2", "36.0T", "1.0T", "0B", "0B", "35.0T", "3%",
                                     "0/36", "36", "0"]
    assert lines[2].endswith("drained 2026-11-26T04:00:00Z: fw")
    assert lines[3].split() == ["total", "72.0T", "1.0T", "20.0G", "0B", "71.0T", "2%",
                                "36/72", "36", "0"]


def test_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    """-o: a preset or {field}s; --no-header; the total is a row like any;
    the state is never cut."""
    rc, out, _ = run(monkeypatch, ANSWER, "-o", "long", "r2")
    assert rc == 0 and out.splitlines()[0].split()[:4] == ["RABBIT", "SIZE", "USED", "JOBS"]
    assert out.splitlines()[1].split()[:3] == ["r2", "36.0T", "1.0T"]
    rc, out, _ = run(monkeypatch, ANSWER, "-n", "-b", "-o", "{name}:{ssds_up:02d}/{ssds_total}"
                     " {free} {state}")
    assert (rc, out.splitlines()) == (0, [
        f"r1:36/36 {36 * T - 30 * G} up", f"r2:00/36 {35 * T} drained 2026-11-26T04:00:00Z: fw",
        f"total:36/72 {71 * T - 30 * G}"])
    monkeypatch.setenv("COLUMNS", "20")
    long_why = "drained 2026-11-26T04:00:00Z: " + "the reason, whole " * 10
    rc, out, _ = run(monkeypatch, {"rabbits": [rabbit("r1", 0, up=False, why=long_why)]})
    assert out.splitlines()[1].endswith(long_why.strip())
    monkeypatch.delenv("FLUX_URI", raising=False)
    rc, out, _ = run(monkeypatch, None, "-o", "help")
    assert rc == 0 and out == df.TABLE.help_text() + "\n"
    assert "  use_percent  USE%        used of size, rounded up as df does" in out


def test_chosen_rabbits_and_json(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out, _ = run(monkeypatch, ANSWER, "--json", "r2")
    got = json.loads(out)
    assert rc == 0 and [r["name"] for r in got["rabbits"]] == ["r2"]
    assert got["total"]["jobs"] == T and got["total"]["ssds"]["down"] == 36
    rc, out, _ = run(monkeypatch, ANSWER, "-b", "r1")
    assert rc == 0 and str(36 * T) in out.splitlines()[1]


def test_unknown_sizes_show_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out, _ = run(monkeypatch, {"rabbits": [rabbit("r1", None)]})
    assert rc == 0 and out.splitlines()[1].split()[5:7] == ["-", "-"]


@pytest.mark.parametrize("answer,argv,rc,words", [
    (ANSWER, ["nosuch"], 1, "flux-dws df: unknown rabbit: nosuch"),
    (ANSWER, ["r[1-3]"], 1, "flux-dws df: unknown rabbit: r3"),
    (ANSWER, ["r["], 2, "argument RABBIT: "),
    (ANSWER, ["--no-such-option"], 2, "unrecognized arguments"),
    (ANSWER, ["-o", "{size} {bogus}"], 2, "argument -o/--format: unknown field 'bogus'"),
    (ANSWER, ["-o", "narrow"], 2, "argument -o/--format: unknown format 'narrow'"),
    (ANSWER, ["-o", "{down:s}"], 2, "field 'down': Unknown format code"),
    (ANSWER, ["-o", "default", "--json"], 2, "argument --json: not allowed with argument -o"),
    ({"rabbits": [{"name": "r1"}]}, [], 1, "not a df entry"),
    ([1, 2], [], 1, "unexpected dws.rabbits answer"),
    (OSError(38, "Function not implemented"), [], 1,
     "flux-dws df: the dws service did not answer dws.rabbits: Function not implemented"),
])
def test_bad_input_is_one_line(monkeypatch: pytest.MonkeyPatch, answer: Any, argv: list[str],
                               rc: int, words: str) -> None:
    got, out, err = run(monkeypatch, answer, *argv)
    lines = [ln for ln in err.splitlines() if not ln.startswith("usage:")]
    assert (got, out) == (rc, "") and len(lines) == 1 and words in lines[0], err
    assert "Traceback" not in err


def test_without_flux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["df"])
    assert rc == 1 and "FLUX_URI" in err.getvalue() and len(err.getvalue().splitlines()) == 1
