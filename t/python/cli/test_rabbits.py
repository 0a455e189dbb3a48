"""flux dws rabbits: the table, the verbose lines, the filters and the
error paths, from hand-written dws.rabbits answers (the contract in
doc/man1/flux-dws-rabbits.rst)."""

from __future__ import annotations

import copy
import errno
import json
from typing import Any

import pytest

from flux_dws import fluxutil
from flux_dws.cli import rabbits
from flux_dws.cli.main import main
from flux_dws.cli.rabbits import (
    MIN_WHY,
    TABLE,
    AnswerError,
    UnknownRabbits,
    duration,
    format_rabbits,
    problems,
    select,
    space_cells,
    summary,
)
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.textfmt import f58, size

SENT = {"set_status": 72, "set_property": 1, "remove_property": 0, "drain": 1, "undrain": 0,
        "systemstatus": 2}


def compute(name: str, **kw: Any) -> dict[str, Any]:
    """A healthy compute, with ``kw`` changed."""
    c = {"name": name, "link": "Ready", "online": True, "excluded": False, "drained": None,
         "badrabbit": False, "alloc_rabbit": False, "systemstatus": "Enabled"}
    c.update(kw)
    return c


def storage(**kw: Any) -> dict[str, Any]:
    s = {"status": "Ready", "state": "Enabled", "mode": "Live", "message": "",
         "disable_reason": None, "disable_date": None}
    s.update(kw)
    return s


def rabbit(name: str, computes: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    """An up rabbit, with ``kw`` changed."""
    r = {"name": name, "storage": storage(), "up": True, "why": "", "fluxion": "up",
         "ssds": 36, "jobs": [], "computes": computes}
    r.update(kw)
    return r


def answer(rabbits: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    a = {"fluxion": True, "drain_compute_nodes": True, "soft_drain": True, "ready": True,
         "sent": dict(SENT), "rabbits": rabbits}
    a.update(kw)
    return a


def kind() -> dict[str, Any]:
    """Three rabbits: one up with a drained compute and two jobs (3,340 GiB
    of its 4 TiB used, 3,240 of them by spread Lustre), one whose Kubernetes
    node is offline (Testing mode; 36 TiB, all free), one without a Storage."""
    return answer([
        rabbit("kind-worker2", [compute("compute-01"),
                                compute("compute-02", link="Offline", systemstatus="Disabled",
                                        drained="rabbit kind-worker2 link Offline")],
               jobs=[123456789, 987654321], capacity=4 << 40, free=756 << 30,
               used=3340 << 30, lustre_gib=3240),
        rabbit("kind-worker3",
               [compute("compute-03", link="Offline"), compute("compute-04", link="Offline")],
               storage=storage(status="Offline", mode="Testing"), up=False, fluxion="down",
               capacity=39582418599936, free=39582418599936, used=0,
               why="Storage status Offline: Kubernetes node is offline"),
        rabbit("kind-worker4", [], storage=None, up=False, fluxion=None, ssds=0,
               why="no Storage object"),
    ])


LONG = TABLE.parse("long")
HEADER = ("RABBIT        STORAGE  STATE            FLUXION  COMPUTES  LINKS-DOWN  FENCED  DRAINED"
          "  JOBS  HELD  TOTAL  USED    FREE  LUSTRE-GIB  WHY")


def test_summary_line() -> None:
    assert summary(kind()) == (
        "mode: fluxion; ready; 3 rabbits (2 down); 1 compute drained; link down: drain;"
        " sent: set_status 72, set_property 1, remove_property 0, drain 1, undrain 0,"
        " systemstatus 2")
    starting = answer([rabbit("r1", [compute("c1", drained=""), compute("c2", drained="x")])],
                      fluxion=False, ready=False, drain_compute_nodes=False, sent={})
    assert summary(starting) == ("mode: no fluxion; starting; 1 rabbit (0 down); 2 computes"
                                 " drained; link down: badrabbit; sent: -")
    assert "link down: nothing;" in summary(answer([], drain_compute_nodes=False,
                                                   soft_drain=False))


def test_table() -> None:
    """The default view: what fits a terminal of 80 columns, the reason
    last and whole."""
    assert format_rabbits(kind()).splitlines() == [
        summary(kind()),
        "RABBIT       STORAGE FLUXION COMPUTES DRAINED JOBS WHY",
        "kind-worker2 Ready   up             2       1    2",
        "kind-worker3 Offline down           2       0    0 Storage status Offline: Kubernetes"
        " node is offline",
        "kind-worker4 -       -              0       0    0 no Storage object",
    ]
    assert all(len(line) <= 80 - MIN_WHY for line in
               format_rabbits(kind(), fmt=TABLE.parse("{name} {storage} {fluxion} {computes}"
                                                      " {drained} {jobs}")).splitlines()[1:])


def test_long_table() -> None:
    """-v: every count and the space (today's table before -o existed)."""
    assert format_rabbits(kind(), fmt=LONG).splitlines() == [
        summary(kind()),
        HEADER,
        "kind-worker2  Ready    Enabled          up              2           1       0        1"
        "     2     0   4.0T  3.3T  756.0G   3240/4096",
        "kind-worker3  Offline  Enabled/Testing  down            2           2       0        0"
        "     0     0  36.0T    0B   36.0T     0/36864  Storage status Offline: Kubernetes node is"
        " offline",
        "kind-worker4  -        -                -               0           0       0        0"
        "     0     0      -     -       -           -  no Storage object",
    ]
    assert format_rabbits(kind(), verbose=1).splitlines()[1] == HEADER


@pytest.mark.parametrize(("nbytes", "text"), [
    (0, "0B"), (1023, "1023B"), (1024, "1.0K"), (1536, "1.5K"), (200 << 30, "200.0G"),
    (39582418599936, "36.0T"), (1 << 60, "1.0E"), (5000 << 60, "5000.0E"), (-5, "0B")])
def test_size(nbytes: int, text: str) -> None:
    assert size(nbytes) == text


def test_space_columns() -> None:
    """TOTAL is the rabbit's capacity (its drives), FREE its Storage's
    status.capacity, USED the difference; '-' for what is not known."""
    full = rabbit("r1", [], capacity=8 << 40, free=0, used=8 << 40)
    assert space_cells(full) == {"total": "8.0T", "used": "8.0T", "free": "0B"}
    older = rabbit("r2", [], capacity=8 << 40)  # a service that sends no free/used
    assert space_cells(older) == {"total": "8.0T", "used": "-", "free": "-"}
    assert space_cells(rabbit("r3", [], capacity=0, free=None, used=None)) == {
        "total": "-", "used": "-", "free": "-"}
    lines = format_rabbits(answer([full, older]), fmt=LONG).splitlines()
    assert lines[2].split()[10:13] == ["8.0T", "8.0T", "0B"]
    assert lines[3].split()[10:13] == ["8.0T", "-", "-"]


def test_empty_answers() -> None:
    assert format_rabbits(answer([])).splitlines() == [summary(answer([])), "no rabbits"]
    # what a service that knows nothing yet could answer
    bare: dict[str, Any] = {"rabbits": []}
    assert format_rabbits(bare) == ("mode: no fluxion; starting; 0 rabbits (0 down); 0 computes"
                                    " drained; link down: nothing; sent: -\nno rabbits")
    healthy = answer([rabbit("r1", [compute("c1")])])
    assert format_rabbits(healthy, down_only=True).splitlines()[1:] == [
        "no rabbit is down or has an unhealthy compute"]


def test_null_fields() -> None:
    """Every field the contract allows to be null (or that an older
    service might leave out) prints as '-' or counts as not healthy."""
    nulls = {k: None for k in ("link", "online", "excluded", "drained", "badrabbit",
                               "alloc_rabbit", "systemstatus")}
    ans = answer([
        {"name": "r1", "storage": None, "up": None, "why": None, "fluxion": None,
         "ssds": None, "jobs": None, "computes": [{"name": "c1", **nulls}]},
        {"name": "r2", "storage": storage(status=None, state=None, mode=None)},
    ], sent=None)
    lines = format_rabbits(ans, verbose=2).splitlines()
    assert lines[0].startswith("mode: fluxion; ready; 2 rabbits (2 down); 0 computes drained;")
    assert lines[0].endswith("sent: -")
    assert lines[2].split() == ["r1", "-", "-", "-", "1", "1", "0", "0", "0", "0", "-", "-",
                                "-", "-"]
    assert lines[3] == "  c1  link not reported; not in this Flux instance"
    assert lines[4].split() == ["r2", "-", "-", "-", "0", "0", "0", "0", "0", "0", "-", "-",
                                "-", "-"]
    assert len(lines) == 5


def test_long_and_multiline_reasons() -> None:
    """On a terminal (width), a reason that does not fit is cut to what is
    left of the line (no fewer than MIN_WHY characters) and follows whole
    on a line of its own; without a width it is never cut."""
    why = "Storage status Offline: " + "the Kubernetes node went away " * 10
    reason = "failed to unmount rabbit\nstorage on  kind-worker2"
    ans = answer([rabbit("r1", [compute("c1", drained=reason)], up=False, why=why),
                  rabbit("r2", [], up=False, why="short")])
    lines = format_rabbits(ans, width=80).splitlines()
    assert lines[2] == ("r1     Ready   up             1       1    0 Storage status Offline: the"
                        " Kubern+")
    assert len(lines[2]) == 80
    assert lines[3] == f"  why: {why.strip()}"
    assert lines[4] == "r2     Ready   up             0       0    0 short"
    # a narrow terminal still leaves MIN_WHY characters of the reason
    narrow = format_rabbits(ans, width=40).splitlines()[2]
    assert narrow.endswith("+") and len(narrow.split(" 0 ")[-1]) == MIN_WHY
    # without a width (not a terminal): the whole reason, on one line
    assert format_rabbits(ans).splitlines()[2].endswith(why.strip())
    assert len(format_rabbits(ans).splitlines()) == 4
    verbose = format_rabbits(ans, verbose=1, width=139).splitlines()
    assert verbose[3] == f"  why: {why.strip()}"
    assert verbose[4] == "  c1  drained: failed to unmount rabbit storage on kind-worker2"
    assert verbose[5].startswith("r2 ")  # short reason: no why line
    # the last field of any format is the one cut, and it follows whole
    mine = format_rabbits(ans, width=30, fmt=TABLE.parse("{name:<4}{why}")).splitlines()
    assert mine[2] == "r1  " + why[:25] + "+" and mine[3] == f"  why: {why.strip()}"


def drained_answer(reason: str, by: str | None = "0") -> dict[str, Any]:
    """kind-worker3 drained with ``reason`` by ``by`` (a userid; None:
    with the nnf CLI), kind-worker2 up."""
    drain = {"drain_reason": reason, "drain_date": "2026-11-26T09:00:00Z", "drained_by": by}
    return answer([
        rabbit("kind-worker2", [compute("compute-01")]),
        rabbit("kind-worker3", [compute("compute-03")], up=False, fluxion="down",
               storage=storage(status="Drained", **drain),
               why=f"drained 2026-11-26T09:00:00Z: {reason}")])


LONG_REASON = ("firmware update of every NVMe drive, back after the vendor's fix is in;"
               " ask the storage team (ticket 4242) before undraining: " + "x" * 74)


def test_not_a_terminal_never_cuts_the_reason(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 51: a drained rabbit says why, whole, when the output is not a
    terminal (a pipe, a file), whatever $COLUMNS says."""
    assert len(LONG_REASON.encode()) == 200  # the longest reason drain takes
    why = f"drained 2026-11-26T09:00:00Z: {LONG_REASON} (by root)"
    for argv in ([], ["-v"], ["--down"], ["-o", "long"]):
        for columns in ("80", "40"):
            monkeypatch.setenv("COLUMNS", columns)
            handle = Handle(drained_answer(LONG_REASON))
            monkeypatch.setattr(fluxutil, "open_flux", lambda h=handle: h)
            assert main(["rabbits", *argv]) == 0
            out = capsys.readouterr().out.splitlines()
            row = [line for line in out if line.startswith("kind-worker3 ")]
            assert len(row) == 1 and row[0].endswith(f" {why}"), out
            assert not any(line.startswith("  why:") for line in out)


def test_a_terminal_cuts_the_reason_and_prints_it_whole_below(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(rabbits, "terminal_width", lambda: 80)
    rc, out, _, _ = run_with(drained_answer(LONG_REASON), [], monkeypatch, capsys)
    lines = out.splitlines()
    assert rc == 0 and all(len(line) <= 80 for line in lines[1:4])
    assert lines[3].startswith("kind-worker3 Drained down") and lines[3].endswith("+")
    assert lines[4] == f"  why: drained 2026-11-26T09:00:00Z: {LONG_REASON} (by root)"
    # a reason that fits is not cut: no line of its own
    monkeypatch.setattr(rabbits, "terminal_width", lambda: 100)
    rc, out, _, _ = run_with(drained_answer("firmware"), [], monkeypatch, capsys)
    assert out.splitlines()[3].endswith(": firmware (by root)") and len(out.splitlines()) == 4


def test_the_drain_fields() -> None:
    ans = drained_answer("firmware update", by=None)  # the nnf CLI's: no one recorded
    ans["rabbits"][0]["storage"].update(drain_reason="old", drain_date="2026-11-25T01:00:00Z",
                                        drained_by="0")
    assert format_rabbits(ans, fmt=TABLE.parse("drain")).splitlines()[1:] == [
        "RABBIT       STORAGE FLUXION DRAIN-DATE           DRAINED-BY DRAIN-REASON",
        "kind-worker2 Ready   up      2026-11-25T01:00:00Z root       old",
        "kind-worker3 Drained down    2026-11-26T09:00:00Z            firmware update",
    ]
    # ?+: drops a column nobody has a value for
    assert format_rabbits(drained_answer("x", by=None), fmt=TABLE.parse("drain"),
                          header=False).splitlines() == [
        "kind-worker2 Ready   up", "kind-worker3 Drained down 2026-11-26T09:00:00Z x"]


def test_verbose_names_each_problem() -> None:
    computes = [
        compute("c01"),
        compute("c02", link="Offline"),
        compute("c03", drained="bad link"),
        compute("c04", drained=""),
        compute("c05", badrabbit=True),
        compute("c06", alloc_rabbit=True),
        compute("c07", online=False),
        compute("c08", excluded=True),
        compute("c09", systemstatus="Disabled"),
        compute("c10", online=None, systemstatus=None),
        compute("c11", link="Disabled", online=False, drained="link down", badrabbit=True),
    ]
    ans = answer([rabbit("r1", computes, jobs=[123456789])])
    lines = format_rabbits(ans, verbose=1).splitlines()
    assert lines[3:] == [
        "  c02  link Offline",
        "  c03  drained: bad link",
        "  c04  drained",
        "  c05  badrabbit",
        "  c06  alloc_rabbit",
        "  c07  offline",
        "  c08  excluded",
        "  c09  SystemStatus Disabled",
        "  c11  link Disabled; offline; badrabbit; drained: link down",
        f"  jobs: {f58(123456789)}",
    ]
    # computes, links down, fenced, drained, jobs, held, total, used, free, Lustre
    assert lines[2].split()[4:] == ["11", "2", "0", "3", "1", "0", "-", "-", "-", "-"]
    every = format_rabbits(ans, verbose=2).splitlines()
    assert every[3] == "  c01  ok"
    assert every[12] == "  c10  ok; not in this Flux instance"
    assert len(every) == 3 + len(computes) + 1
    assert problems(compute("c")) == []


NOW = 1_800_000_000.0
P = "/kind/chassis0/"


def held_answer() -> dict[str, Any]:
    """Two jobs hold ssds of kind-worker2 after their computes went back:
    job A (down in Fluxion for 5m12s) holds ssd33 and ssd34, job B (just
    held, not yet answered) holds ssd34 too and ssd35."""
    a, b = 123456789, 987654321
    ans = kind()
    ans["rabbits"][0]["held"] = [
        {"job": a, "since": NOW - 312, "ssds": [P + "ssd33", P + "ssd34"], "down": True},
        {"job": b, "since": NOW - 2, "ssds": [P + "ssd34", P + "ssd35"], "down": False},
    ]
    ans["holds"] = [
        {"job": a, "since": NOW - 312, "paths": [P + "ssd33", P + "ssd34"], "applied": True},
        {"job": b, "since": NOW - 2, "paths": [P + "ssd34", P + "ssd35"], "applied": False},
    ]
    return ans


def test_held_ssds() -> None:
    ans = held_answer()
    assert summary(ans) == (
        "mode: fluxion; ready; 3 rabbits (2 down); 1 compute drained; link down: drain;"
        " 3 ssds held by 2 jobs; sent: set_status 72, set_property 1, remove_property 0,"
        " drain 1, undrain 0, systemstatus 2")
    lines = format_rabbits(ans, now=NOW, fmt=LONG).splitlines()
    assert lines[2].split()[4:10] == ["2", "1", "0", "1", "2", "3"], "HELD: 3 distinct vertices"
    assert lines[3].split()[9] == "0"
    verbose = format_rabbits(ans, verbose=1, now=NOW).splitlines()
    assert verbose[5:7] == [
        f"  held by {f58(123456789)} for 5m12s: 2 ssds, down",
        f"  held by {f58(987654321)} for 2s: 2 ssds, going down",
    ]
    every = format_rabbits(ans, verbose=2, now=NOW).splitlines()
    assert f"  held by {f58(123456789)} for 5m12s: ssd33 ssd34, down" in every
    assert f"  held by {f58(987654321)} for 2s: ssd34 ssd35, going down" in every
    # a hold without a start time (an older service) still prints
    ans["rabbits"][0]["held"][0]["since"] = None
    assert (f"  held by {f58(123456789)}: 2 ssds, down"
            in format_rabbits(ans, verbose=1, now=NOW).splitlines())
    # nothing held: no note
    assert "held" not in summary(kind())
    assert "held" not in summary({**kind(), "holds": []})


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (59.9, "59s"), (60, "1m00s"), (312, "5m12s"), (3600, "1h00m"),
    (7380, "2h03m"), (86400 * 3 + 3600 * 4 + 5, "3d04h"), (-5, "0s"),
])
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_down_filter() -> None:
    ans = answer([rabbit("r1", [compute("c1")]),
                  rabbit("r2", [compute("c2", badrabbit=True)]),
                  rabbit("r3", [compute("c3")], up=False, why="disabled: maintenance"),
                  rabbit("r4", [compute("c4", online=None, systemstatus=None)])])
    assert [r["name"] for r in select(ans, down_only=True)] == ["r2", "r3"]
    lines = format_rabbits(ans, down_only=True).splitlines()
    assert lines[0] == summary(ans)  # the summary is about every rabbit
    assert [line.split()[0] for line in lines[2:]] == ["r2", "r3"]


def test_hostlist_filter() -> None:
    ans = answer([rabbit(f"rabbit{i:02d}", []) for i in range(1, 9)])
    names = [Hostlist("rabbit[07-08]"), Hostlist("rabbit02,rabbit07")]
    assert [r["name"] for r in select(ans, names)] == ["rabbit02", "rabbit07", "rabbit08"]
    with pytest.raises(UnknownRabbits, match=r"^unknown rabbits: r1,rabbit\[09-10\]$") as exc:
        select(ans, [Hostlist("rabbit[08-10]"), Hostlist("r1,rabbit09")])
    assert exc.value.names == ["rabbit09", "rabbit10", "r1"]
    with pytest.raises(UnknownRabbits, match=r"^unknown rabbit: x$"):
        format_rabbits(ans, names=[Hostlist("x")])


@pytest.mark.parametrize(("bad", "message"), [
    ([1, 2], "not a JSON object"),
    ({"rabbits": {"r1": {}}}, "'rabbits' is not a list of objects"),
    ({"rabbits": [{"up": True}]}, "a rabbit without a 'name'"),
    ({"rabbits": [{"name": "r1", "computes": "c1"}]}, "rabbit r1: 'computes'"),
    ({"rabbits": [{"name": "r1", "storage": "Ready"}]}, "rabbit r1: 'storage'"),
    ({"rabbits": [{"name": "r1", "jobs": 3}]}, "rabbit r1: 'jobs'"),
    ({"rabbits": [{"name": "r1", "capacity": "4TiB"}]}, "rabbit r1: 'capacity' is not a count"),
    ({"rabbits": [{"name": "r1", "free": -1}]}, "rabbit r1: 'free' is not a count"),
    ({"rabbits": [{"name": "r1", "used": True}]}, "rabbit r1: 'used' is not a count"),
    ({"rabbits": [{"name": "r1", "lustre_gib": -1}]}, "rabbit r1: 'lustre_gib' is not a count"),
    ({"rabbits": [{"name": "r1", "lustre_gib": True}]}, "rabbit r1: 'lustre_gib' is not a count"),
    ({"rabbits": [{"name": "r1", "held": {}}]}, "rabbit r1: 'held' is not a list of objects"),
    ({"rabbits": [{"name": "r1", "held": [{"job": 1}]}]},
     "rabbit r1: a 'held' entry without 'ssds'"),
])
def test_malformed_answer(bad: Any, message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        format_rabbits(bad)


# --- the command: parsing, the RPC and its errors ----------------------------------


def test_no_flux_instance(monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    assert main(["rabbits"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "flux-dws rabbits: not running inside a Flux instance (FLUX_URI is not set)\n"


def test_unreachable_flux_instance(monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """FLUX_URI naming no broker: one line saying why, whether or not the
    flux bindings are installed here."""
    monkeypatch.setenv("FLUX_URI", f"local://{tmp_path}/no-broker")
    assert main(["rabbits", "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("flux-dws rabbits: ")
    assert ("the flux Python bindings are not installed" in err
            or "cannot connect to Flux" in err)


@pytest.mark.parametrize("arg", ["rabbit[01-", "r[3-1]", "a,,b["])
def test_bad_hostlist_is_a_usage_error(arg: str, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["rabbits", arg])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: flux-dws rabbits ")
    assert f"'{arg}'" in err


class Handle:
    """What the command uses of a flux.Flux handle: rpc(topic, payload).get(),
    which raises OSError as flux-core's futures do."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.calls: list[tuple[str, Any]] = []

    def rpc(self, topic: str, payload: Any) -> Handle:
        self.calls.append((topic, copy.deepcopy(payload)))
        return self

    def get(self) -> Any:
        if isinstance(self.reply, OSError):
            raise self.reply
        return copy.deepcopy(self.reply)


def run_with(reply: Any, argv: list[str], monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, Handle]:
    handle = Handle(reply)
    monkeypatch.setattr(fluxutil, "open_flux", lambda: handle)  # ask_dws opens it
    monkeypatch.setenv("COLUMNS", "100")
    rc = main(["rabbits", *argv])
    out, err = capsys.readouterr()
    return rc, out, err, handle


def test_command_prints_the_answer(monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err, handle = run_with(kind(), [], monkeypatch, capsys)
    assert (rc, err) == (0, "")
    assert handle.calls == [("dws.rabbits", {})]
    assert out == format_rabbits(kind()) + "\n"  # not a terminal: nothing cut
    rc, out, _, _ = run_with(kind(), ["-vv", "--down", "kind-worker[2-3]"], monkeypatch, capsys)
    assert rc == 0
    assert out == format_rabbits(kind(), verbose=2, down_only=True,
                                 names=[Hostlist("kind-worker[2-3]")]) + "\n"
    assert "  compute-01  ok" in out.splitlines()


def test_command_json(monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _, _ = run_with(held_answer(), ["--json", "kind-worker2"], monkeypatch, capsys)
    got = json.loads(out)
    assert rc == 0 and got["holds"] == held_answer()["holds"]
    assert got["rabbits"][0]["held"] == held_answer()["rabbits"][0]["held"]
    rc, out, _, _ = run_with(kind(), ["--json"], monkeypatch, capsys)
    assert rc == 0 and json.loads(out) == kind()
    assert out == json.dumps(kind(), indent=1) + "\n"
    rc, out, _, _ = run_with(kind(), ["--json", "--down", "kind-worker[3-4]"], monkeypatch,
                             capsys)
    got = json.loads(out)
    assert [r["name"] for r in got["rabbits"]] == ["kind-worker3", "kind-worker4"]
    assert {k: v for k, v in got.items() if k != "rabbits"} == {
        k: v for k, v in kind().items() if k != "rabbits"}


@pytest.mark.parametrize(("argv", "unknown"), [
    (["kind-worker[3-9]"], "kind-worker[5-9]"),
    (["--json", "kind-worker9,kind-worker8", "kind-worker2"], "kind-worker[8-9]"),
])
def test_command_unknown_rabbits(argv: list[str], unknown: str, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err, _ = run_with(kind(), argv, monkeypatch, capsys)
    assert (rc, out) == (1, "")
    assert err == f"flux-dws rabbits: unknown rabbits: {unknown}\n"


def test_command_service_errors(monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err, _ = run_with(OSError(errno.ENOSYS, "Function not implemented"), [],
                               monkeypatch, capsys)
    assert (rc, out) == (1, "")
    assert err == ("flux-dws rabbits: the dws service did not answer dws.rabbits: Function not"
                   " implemented (is it loaded? flux module load dws.py)\n")
    rc, out, err, _ = run_with(OSError(errno.EPERM, "Request requires owner credentials"), [],
                               monkeypatch, capsys)
    assert (rc, err) == (1, "flux-dws rabbits: the dws service did not answer dws.rabbits:"
                            " Request requires owner credentials\n")
    rc, out, err, _ = run_with({"rabbits": "kind-worker2"}, [], monkeypatch, capsys)
    assert (rc, out) == (1, "")
    assert err == ("flux-dws rabbits: unexpected dws.rabbits answer: 'rabbits' is not a list"
                   " of objects\n")


def test_degraded_and_fenced() -> None:
    """A Degraded rabbit still usable is up with the Storage's words in
    WHY; one that needs a reboot (nnf-sos after a STONITH event) shows
    ``Degraded/reboot`` and is down; fenced computes are counted, named in
    the summary and told apart from a link down."""
    fenced_reason = ("rabbit r1 fenced this node: rabbit jobs fail here until it is"
                     " unfenced")
    ans = answer([
        rabbit("r1", [compute("c1", link="Fenced", fenced=True, drained=fenced_reason),
                      compute("c2", link="Degraded")],
               storage=storage(status="Degraded", message="RAID rebuild"),
               note="Storage status Degraded, still usable: RAID rebuild"),
        rabbit("r2", [compute("c3")], up=False, fluxion="down",
               storage=storage(status="Degraded", reboot_required=True,
                               message="Storage node requires reboot to recover from"
                                       " STONITH event"),
               why="Storage status Degraded, reboot required: Storage node requires reboot"
                   " to recover from STONITH event"),
    ])
    assert summary(ans).startswith("mode: fluxion; ready; 2 rabbits (1 down); 1 compute"
                                   " drained; 1 compute fenced; link down: drain;")
    lines = format_rabbits(ans, verbose=1).splitlines()
    assert lines[2].split()[:10] == ["r1", "Degraded", "Enabled", "up", "2", "1", "1", "1",
                                     "0", "0"]
    assert lines[2].endswith("Storage status Degraded, still usable: RAID rebuild")
    assert lines[3] == f"  c1  fenced (rabbit jobs fail here); drained: {fenced_reason}"
    assert lines[4].split()[:8] == ["r2", "Degraded/reboot", "Enabled", "down", "1", "0", "0",
                                    "0"]
    assert lines[4].endswith("reboot required: Storage node requires reboot to recover from"
                             " STONITH event")
    assert len(lines) == 5, "a Degraded link is healthy: no line for c2"
    assert [r["name"] for r in select(ans, down_only=True)] == ["r1", "r2"]


def test_command_formats(monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    """-o takes a preset or a format string; --no-header leaves out the
    summary and the heading line; -v keeps its compute lines under any
    format."""
    ans = drained_answer("firmware update")
    rc, out, _, _ = run_with(ans, ["-o", "{name} {drained_by} {drain_reason}"], monkeypatch,
                             capsys)
    assert (rc, out.splitlines()[1:]) == (0, ["RABBIT DRAINED-BY DRAIN-REASON",
                                              "kind-worker2", "kind-worker3 root firmware update"])
    rc, out, _, _ = run_with(ans, ["-n", "-o", "{name:>14}|{computes:03d}"], monkeypatch,
                             capsys)
    assert (rc, out) == (0, "  kind-worker2|001\n  kind-worker3|001\n")
    rc, out, _, _ = run_with(ans, ["--no-header", "--format=long"], monkeypatch, capsys)
    assert out == format_rabbits(ans, fmt=LONG, header=False) + "\n"
    assert out.splitlines()[1].split()[:4] == ["kind-worker3", "Drained", "Enabled", "down"]
    rc, out, _, _ = run_with(ans, ["-v", "-o", "{name}", "kind-worker3"], monkeypatch, capsys)
    assert out.splitlines()[1:] == ["RABBIT", "kind-worker3"]  # a healthy compute: no line
    rc, out, _, _ = run_with(ans, ["-vv", "-o", "{name}", "kind-worker3"], monkeypatch, capsys)
    assert out.splitlines()[2:] == ["kind-worker3", "  compute-03  ok"]
    # no rabbit to show and no header: nothing at all
    rc, out, _, _ = run_with(answer([]), ["-n"], monkeypatch, capsys)
    assert (rc, out) == (0, "")


def test_command_format_help_needs_no_flux(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    assert main(["rabbits", "-o", "help"]) == 0
    out = capsys.readouterr().out
    assert out == TABLE.help_text() + "\n"
    assert "  drain_reason  DRAIN-REASON  why it was drained" in out.splitlines()


@pytest.mark.parametrize(("argv", "error"), [
    (["-o", "{bogus}"], "argument -o/--format: unknown field 'bogus' (flux dws rabbits -o help"
                        " lists the fields)"),
    (["-o", "wide"], "argument -o/--format: unknown format 'wide': not a preset (default, long,"
                     " space, drain)"),
    (["-o", "{name:d}"], "argument -o/--format: field 'name': Unknown format code 'd'"),
    (["--json", "-o", "{name}"], "argument -o/--format: not allowed with argument --json"),
])
def test_command_bad_formats(argv: list[str], error: str, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    """A bad -o is a usage error (exit status 2) before Flux is asked."""
    monkeypatch.delenv("FLUX_URI", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["rabbits", *argv])
    err = capsys.readouterr().err.splitlines()
    assert exc.value.code == 2 and err[0].startswith("usage: flux-dws rabbits ")
    assert err[-1].startswith(f"flux-dws rabbits: error: {error}")
