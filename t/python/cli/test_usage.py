"""``flux dws usage``: the sums (flux_dws.storageuse) and the table of
made-up records, grouped by each key and by two, clipped at either end of
the range, with jobs whose Teardown was never recorded done and records
with no usage; then the command against a fake handle: what it asks of
job-list, the job-info lookups a few at a time within the timeout, and its
errors.  The command under a real broker is a sharness test."""

from __future__ import annotations

import errno
import json
from collections import deque
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from t.python.cli.test_garbage import assert_clear_error, run_main

from flux_dws.cli import main as flux_dws
from flux_dws.cli import usage
from flux_dws.engine import RECORD_KEY
from flux_dws.storageuse import JobUse, aggregate, job_use

H = 3600.0
T0 = 1_790_000_000.0
USERS = {1001: "alice", 1002: "bob"}
EVER = (0.0, T0 + 100 * H)


def record(jid: int, uid: int, since: float, until: float | None, gib: dict[str, int],
           bank: str | None = None, project: str | None = None,
           gib_seconds: dict[str, float] | None = None) -> dict[str, Any]:
    """A job's record as the engine writes it (the fields usage reads, and
    a few of the others)."""
    use: dict[str, Any] = {"since": since, "gib": gib}
    if until is not None:
        use["until"] = until
        use["gib_seconds"] = gib_seconds if gib_seconds is not None else {
            k: v * (until - since) for k, v in gib.items()}
    rec: dict[str, Any] = {"id": jid, "userid": uid, "workflow": f"fluxjob-{jid}",
                           "directives": [], "usage": use}
    if bank is not None:
        rec["bank"] = bank
    if project is not None:
        rec["project"] = project
    return rec


#: alice: 100 GiB of xfs for 2 h and 1000 GiB of lustre for 2 h (no
#: project); bob: 50 GiB of xfs and 10 of gfs2 for 1 h
RECORDS = {
    1: record(1, 1001, T0, T0 + 2 * H, {"xfs": 100}, "physics", "p1"),
    2: record(2, 1001, T0 + H, T0 + 3 * H, {"lustre": 1000}, "physics"),
    3: record(3, 1002, T0, T0 + H, {"xfs": 50, "gfs2": 10}, "chem", "p1"),
}


def uses(records: dict[int, dict[str, Any]], t_inactive: float = T0 + 5 * H) -> list[JobUse]:
    out = [job_use(jid, r["userid"], t_inactive, r) for jid, r in records.items()]
    assert None not in out
    return [u for u in out if u is not None]


def summed(by: list[str], since: float = EVER[0], until: float = EVER[1],
           records: dict[int, dict[str, Any]] = RECORDS) -> list[tuple[Any, ...]]:
    """(keys..., jobs, GiB-hours) of each group, then the total's."""
    rows, total = aggregate(uses(records), by, since, until)
    return [(*(g.keys[k] for k in by if k in g.keys), len(g.jobs), round(g.gib_hours, 6))
            for g in [*rows, total]]


# --- the sums ------------------------------------------------------------------------

def test_by_each_key() -> None:
    assert summed(["user"]) == [(1001, 2, 2200.0), (1002, 1, 60.0), (3, 2260.0)]
    assert summed(["bank"]) == [("physics", 2, 2200.0), ("chem", 1, 60.0), (3, 2260.0)]
    # a job with no project is a group of its own (None; '-' in the table)
    assert summed(["project"]) == [(None, 1, 2000.0), ("p1", 2, 260.0), (3, 2260.0)]
    # a job is in a group per type it holds; the total counts it once
    assert summed(["type"]) == [("lustre", 1, 2000.0), ("xfs", 2, 250.0), ("gfs2", 1, 10.0),
                                (3, 2260.0)]


def test_by_two_keys() -> None:
    assert summed(["user", "type"]) == [
        (1001, "lustre", 1, 2000.0), (1001, "xfs", 1, 200.0), (1002, "xfs", 1, 50.0),
        (1002, "gfs2", 1, 10.0), (3, 2260.0)]
    assert summed(["project", "bank"]) == [
        (None, "physics", 1, 2000.0), ("p1", "physics", 1, 200.0), ("p1", "chem", 1, 60.0),
        (3, 2260.0)]


def test_clipped_at_both_ends() -> None:
    """Only the part of each span inside the range counts: [T0+0.5h,
    T0+1.5h] takes 1 h of job 1, 0.5 h of job 2 and of job 3."""
    assert summed(["user"], T0 + 0.5 * H, T0 + 1.5 * H) == [
        (1001, 2, 600.0), (1002, 1, 30.0), (3, 630.0)]
    # job 2 starts where the range ends: not in it
    assert summed(["user"], T0, T0 + H) == [(1001, 1, 100.0), (1002, 1, 60.0), (2, 160.0)]
    # job 3 ends where the range starts: not in it
    assert summed(["type"], T0 + H, T0 + 2.5 * H) == [
        ("lustre", 1, 1500.0), ("xfs", 1, 100.0), (2, 1600.0)]
    assert summed(["user"], T0 + 3 * H, T0 + 4 * H) == [(0, 0.0)]


def test_the_engines_gib_seconds_are_shared_out() -> None:
    """Where the record has gib_seconds (its Teardown done), the part in
    the range is that figure times the share of the span in it."""
    recs = {7: record(7, 1002, T0, T0 + 2 * H, {"xfs": 10}, gib_seconds={"xfs": 30 * H})}
    assert summed(["user"], records=recs) == [(1002, 1, 30.0), (1, 30.0)]
    assert summed(["user"], T0 + H, T0 + 3 * H, records=recs) == [(1002, 1, 15.0), (1, 15.0)]


def test_no_teardown_recorded_counts_to_the_jobs_end() -> None:
    """An ended job whose record has no until (its Teardown never seen
    done) holds its storage to t_inactive."""
    rec = record(4, 1002, T0, None, {"raw": 10})
    use = job_use(4, 1002, T0 + 4 * H, rec)
    assert use is not None and (use.end, dict(use.gib_seconds)) == (T0 + 4 * H, {})
    rows, total = aggregate([use], ["user"], *EVER)
    assert [(len(g.jobs), g.gib_hours) for g in [*rows, total]] == [(1, 40.0), (1, 40.0)]
    rows, total = aggregate([use], ["user"], T0 + 3 * H, EVER[1])
    assert [(len(g.jobs), g.gib_hours) for g in [*rows, total]] == [(1, 10.0), (1, 10.0)]
    # a t_inactive before since (clocks apart) is a span of no length
    late = job_use(4, 1002, T0 - 60, rec)
    assert late is not None and late.span == 0.0


def test_a_span_of_no_length_counts_where_it_lies() -> None:
    rec = record(6, 1001, T0 + H, T0 + H, {"xfs": 5})
    assert summed(["user"], T0, T0 + 2 * H, {6: rec}) == [(1001, 1, 0.0), (1, 0.0)]
    assert summed(["user"], T0 + H, T0 + 2 * H, {6: rec}) == [(1001, 1, 0.0), (1, 0.0)]
    assert summed(["user"], T0, T0 + H, {6: rec}) == [(0, 0.0)]


def test_a_job_without_storage() -> None:
    """A job whose directives hold no storage of its own (persistentdw
    alone) counts as a job with 0 GiB-hours, and in no group by type."""
    rec = record(8, 1001, T0, T0 + H, {})
    assert summed(["user"], records={8: rec}) == [(1001, 1, 0.0), (1, 0.0)]
    assert summed(["type"], records={8: rec}) == [(0, 0.0)]


@pytest.mark.parametrize("rec", [
    {"id": 9, "userid": 1001},                                   # written before usage
    {"id": 9, "usage": "soon"},
    {"id": 9, "usage": {"gib": {"xfs": 1}}},                     # no since
    {"id": 9, "usage": {"since": T0}},                           # no gib
    {"id": 9, "usage": {"since": "today", "gib": {"xfs": 1}}},
    {"id": 9, "usage": {"since": T0, "gib": {"xfs": -1}}},
    {"id": 9, "usage": {"since": T0, "gib": {"xfs": 1.5}}},
    {"id": 9, "usage": {"since": T0, "gib": {"xfs": True}}},
    {"id": 9, "usage": {"since": float("nan"), "gib": {"xfs": 1}}},
    "not a record",
    None,
])
def test_records_without_usage(rec: Any) -> None:
    assert job_use(9, 1001, T0, rec) is None


def test_a_bad_until_or_gib_seconds_is_left_out() -> None:
    rec = record(5, 1001, T0, T0 + H, {"xfs": 2})
    rec["usage"]["gib_seconds"] = {"xfs": "lots", "lustre": 7.0}
    use = job_use(5, 1001, T0 + 2 * H, rec)
    assert use is not None and dict(use.gib_seconds) == {}   # gib times seconds, then
    assert use.gib_seconds_in("xfs", *EVER) == 2 * H
    rec["usage"]["until"] = -1
    use = job_use(5, 1001, T0 + 2 * H, rec)
    assert use is not None and use.end == T0 + 2 * H


SPANS = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 100), st.integers(0, 3),
                           st.sampled_from(["xfs", "lustre"]), st.integers(0, 500)),
                 max_size=12)


@given(SPANS, st.integers(0, 100), st.integers(1, 100), st.integers(1, 100))
def test_ranges_add_up_whatever_the_grouping(spans: list[tuple[int, int, int, str, int]],
                                             start: int, cut: int, length: int) -> None:
    """Two adjacent ranges sum to the range they make, and every grouping
    has the same total."""
    jobs = [JobUse(id=i, userid=uid, bank=None, project=None, since=T0 + a,
                   end=T0 + max(a, b), gib={kind: gib}, gib_seconds={})
            for i, (a, b, uid, kind, gib) in enumerate(spans)]
    lo, mid, hi = T0 + start, T0 + start + min(cut, length), T0 + start + length
    whole = aggregate(jobs, ["user"], lo, hi)[1].gib_seconds
    parts = (aggregate(jobs, ["user"], lo, mid)[1].gib_seconds
             + aggregate(jobs, ["user"], mid, hi)[1].gib_seconds)
    assert parts == pytest.approx(whole)
    for by in (["type"], ["user", "type"], ["project"]):
        rows, total = aggregate(jobs, by, lo, hi)
        assert total.gib_seconds == pytest.approx(whole)
        assert sum(g.gib_seconds for g in rows) == pytest.approx(whole)


# --- the table -----------------------------------------------------------------------

def lines(by: list[str], option: Any = None, header: bool = True,
          since: float = EVER[0], until: float = EVER[1],
          records: dict[int, dict[str, Any]] = RECORDS) -> list[str]:
    rows, total = aggregate(uses(records), by, since, until)
    return usage.usage_lines(rows, total, by, USERS, usage.table_format(option, by), header)


def test_the_default_table_shows_the_keys_grouped_by() -> None:
    assert lines(["user"]) == [
        "USER   JOBS  GIB-HOURS",
        "alice     2     2200.0",
        "bob       1       60.0",
        "total     3     2260.0"]
    assert lines(["project", "type"]) == [
        "PROJECT  TYPE    JOBS  GIB-HOURS",
        "-        lustre     1     2000.0",
        "p1       xfs        2      250.0",
        "p1       gfs2       1       10.0",
        "total               3     2260.0"]
    assert lines(["bank"], header=False) == [
        "physics  2  2200.0",
        "chem     1    60.0",
        "total    3  2260.0"]


def test_presets_and_fields() -> None:
    fmt = usage.TABLE.option("long")
    assert lines(["user"], fmt) == [
        "USER    UID  JOBS  GIB-HOURS   SHARE",
        "alice  1001     2     2200.0   97.3%",
        "bob    1002     1       60.0    2.7%",
        "total           3     2260.0  100.0%"]
    # -o default names the preset: the --by keys still
    assert lines(["type"], usage.TABLE.option("default"))[0] == "TYPE    JOBS  GIB-HOURS"
    fmt = usage.TABLE.option("{type:<8}|{jobs:03d}|{gib_hours:>8}")
    assert lines(["type"], fmt, header=False) == [
        "lustre  |001|  2000.0", "xfs     |002|   250.0", "gfs2    |001|    10.0",
        "total   |003|  2260.0"]
    # the total line says "total" in the first key the format shows
    fmt = usage.TABLE.option("{jobs} {bank} {user}")
    assert lines(["user", "bank"], fmt, header=False)[-1] == "3 total"
    # nothing in the range: the total alone, with no share
    assert lines(["user"], usage.TABLE.option("long"), since=T0 + 50 * H) == [
        "USER   UID  JOBS  GIB-HOURS  SHARE", "total          0        0.0      -"]


def test_fields_the_grouping_has_not() -> None:
    fmt = usage.TABLE.option("{user} {bank} {jobs}")
    assert usage.ungrouped_fields(fmt, ["user"]) == ["bank"]
    assert usage.ungrouped_fields(usage.TABLE.option("{userid}"), ["type"]) == ["userid"]
    assert usage.ungrouped_fields(usage.table_format(None, ["bank"]), ["bank"]) == []


def test_json() -> None:
    rows, total = aggregate(uses(RECORDS), ["user", "project"], *EVER)
    got = usage.usage_json(rows, total, ["user", "project"], USERS, *EVER, 2)
    assert got["groups"][0] == {"user": "alice", "userid": 1001, "project": None, "jobs": 1,
                                "gib_hours": 2000.0, "gib_seconds": 2000.0 * H}
    assert [(g["user"], g["project"]) for g in got["groups"]] == [
        ("alice", None), ("alice", "p1"), ("bob", "p1")]
    assert got["total"] == {"jobs": 3, "gib_hours": 2260.0, "gib_seconds": 2260.0 * H}
    assert (got["since"], got["until"], got["by"], got["jobs_without_usage"]) == (
        *EVER, ["user", "project"], 2)
    json.dumps(got)


# --- the command, against a fake handle ----------------------------------------------

class Future:
    def __init__(self, handle: FakeFlux, answer: Any) -> None:
        self.handle, self.answer = handle, answer

    def wait_for(self, timeout: float = -1.0) -> Future:
        self.handle.waits.append(timeout)
        if self.answer is NEVER:
            raise OSError(errno.ETIMEDOUT, "Connection timed out")
        return self

    def get(self) -> Any:
        self.handle.outstanding.remove(self)
        if isinstance(self.answer, OSError):
            raise self.answer
        return self.answer


NEVER = object()


class FakeFlux:
    """job-list's answer and job-info's, which count the lookups sent and
    not yet taken."""

    def __init__(self, listed: list[dict[str, Any]], records: dict[int, Any],
                 owner: int = 0) -> None:
        self.listed, self.records, self.owner = listed, records, owner
        self.sent: list[tuple[str, Any]] = []
        self.outstanding: deque[Future] = deque()
        self.most = 0
        self.waits: list[float] = []

    def attr_get(self, name: str) -> str:
        assert name == "security.owner"
        return str(self.owner)

    def rpc(self, topic: str, payload: Any) -> Future:
        self.sent.append((topic, payload))
        answer: Any = {"jobs": self.listed}
        if topic != "job-list.list":
            assert topic == "job-info.lookup" and payload["keys"] == [RECORD_KEY]
            answer = self.records.get(payload["id"])
            if answer is None:
                answer = OSError(errno.ENOENT, "No such file or directory")
            elif answer is not NEVER and not isinstance(answer, OSError):
                answer = {RECORD_KEY: json.dumps(answer)}
        f = Future(self, answer)
        self.outstanding.append(f)
        self.most = max(self.most, len(self.outstanding))
        return f


def listed(jid: int, uid: int, memo: bool = True, t_inactive: float = T0 + 5 * H
           ) -> dict[str, Any]:
    return {"id": jid, "userid": uid, "t_submit": T0 - H, "t_inactive": t_inactive,
            "annotations": {"user": {"rabbit_workflow": f"fluxjob-{jid}"}} if memo else {}}


def command(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
            fake: FakeFlux, *argv: str, uid: int = 0) -> Any:
    monkeypatch.setattr(usage, "open_flux", lambda: fake)
    monkeypatch.setattr(usage, "user_names", lambda uids: {u: USERS.get(u, str(u))
                                                           for u in uids})
    monkeypatch.setenv("FLUX_HANDLE_USERID", str(uid))
    return run_main(flux_dws.main, ["usage", *argv], monkeypatch, capfd)


def test_the_command(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
                     ) -> None:
    """Everyone's jobs: job-list's inactive jobs with a Workflow memo, one
    lookup each; the jobs whose record has no usage, or who have no record
    (ENOENT: they ended before the engine wrote one), are counted once on
    stderr; a job without the memo is not asked about."""
    jobs = [listed(1, 1001), listed(2, 1001), listed(3, 1002), listed(10, 1002),
            listed(11, 1002), listed(12, 1001, memo=False)]
    recs: dict[int, Any] = {**RECORDS, 10: {"id": 10, "userid": 1002}}
    fake = FakeFlux(jobs, recs)
    out = command(monkeypatch, capfd, fake, "-A", "--since=2026-09-21T00:00:00Z",
                  "--until=2026-10-01T00:00Z")
    assert out.rc == 0, out.err
    assert out.out.splitlines() == lines(["user"], since=1_789_948_800.0,
                                         until=1_790_812_800.0)
    assert out.err == ("flux-dws usage: 2 rabbit jobs ended with no usage in their records"
                       " (written before flux-dws kept it): not counted\n")
    topic, ask = fake.sent[0]
    assert topic == "job-list.list" and ask["since"] == 1_789_948_800.0
    assert ask["max_entries"] == 0
    assert ask["constraint"] == {"and": [{"states": [64]},
                                         {"t_submit": ["<1790812800.000000"]}]}
    assert sorted(p["id"] for t, p in fake.sent[1:]) == [1, 2, 3, 10, 11]
    out = command(monkeypatch, capfd, FakeFlux(jobs, recs), "-A", "--json", "--by=type")
    got = json.loads(out.out)
    assert (out.rc, out.err, got["jobs_without_usage"]) == (0, "", 2)
    assert [(g["type"], g["jobs"]) for g in got["groups"]] == [
        ("lustre", 1), ("xfs", 2), ("gfs2", 1)]


def test_a_user_sees_their_own(monkeypatch: pytest.MonkeyPatch,
                               capfd: pytest.CaptureFixture[str]) -> None:
    fake = FakeFlux([listed(3, 1002)], RECORDS)
    out = command(monkeypatch, capfd, fake, "-o", "{user} {jobs} {gib_hours}", "-n", uid=1002)
    assert (out.rc, out.out) == (0, "bob 1 60.0\ntotal 1 60.0\n")
    assert {"userid": [1002]} in fake.sent[0][1]["constraint"]["and"]
    for argv in (["-A"], ["-u", "1001"]):
        fake = FakeFlux([], {})
        out = command(monkeypatch, capfd, fake, *argv, uid=1002)
        assert out.rc == 1 and fake.sent == []
        assert_clear_error(out, "only the instance owner may see")
    # the owner asks for one user
    fake = FakeFlux([], {})
    out = command(monkeypatch, capfd, fake, "-u", "1001")
    assert out.rc == 0 and {"userid": [1001]} in fake.sent[0][1]["constraint"]["and"]
    assert out.out.splitlines() == ["USER   JOBS  GIB-HOURS", "total     0        0.0"]
    # job-info's refusal (another user's job) ends it with one line
    fake = FakeFlux([listed(3, 1002)], {3: OSError(errno.EPERM, "Operation not permitted")})
    out = command(monkeypatch, capfd, fake, "-A")
    assert_clear_error(out, "job 3 belongs to another user")


def test_lookups_go_a_few_at_a_time(monkeypatch: pytest.MonkeyPatch,
                                    capfd: pytest.CaptureFixture[str]) -> None:
    """500 jobs: never more than IN_FLIGHT lookups unanswered, each waited
    for within what is left of the timeout."""
    jobs = [listed(100 + i, 1001) for i in range(500)]
    recs = {100 + i: record(100 + i, 1001, T0, T0 + H, {"xfs": 1}) for i in range(500)}
    fake = FakeFlux(jobs, recs)
    out = command(monkeypatch, capfd, fake, "-A", "-t", "30", "--json")
    assert out.rc == 0 and json.loads(out.out)["total"]["gib_hours"] == 500.0
    assert fake.most == usage.IN_FLIGHT
    assert len(fake.waits) == 501 and all(0 < w <= 30 for w in fake.waits)


def test_the_timeout_ends_it(monkeypatch: pytest.MonkeyPatch,
                             capfd: pytest.CaptureFixture[str]) -> None:
    jobs = [listed(1, 1001), listed(2, 1001), listed(3, 1002)]
    fake = FakeFlux(jobs, {**RECORDS, 2: NEVER})
    out = command(monkeypatch, capfd, fake, "-A", "--timeout=5")
    assert out.rc == 1 and out.out == ""
    assert_clear_error(out, "flux-dws usage: gave up after 5s (--timeout): job-info answered"
                            " 1 lookups, not job 2's (nor 1 more sent)")


@pytest.mark.parametrize(("argv", "names"), [
    (["--by=user,bogus"], "unknown key 'bogus'"),
    (["--by=type,type"], "a key given twice"),
    (["--by="], "unknown key ''"),
    (["--since=sometime"], "'sometime' is not a time"),
    (["--until=-1e400"], "'-1e400' is not a time after 1970"),
    (["--since=2026-11-02", "--until=2026-11-01"], "--since=2026-11-02 (2026-11-02"),
    (["--since=+1d"], "is not before --until (now: "),
    (["-u", "no-such-user-here"], "unknown user 'no-such-user-here'"),
    (["-u-5"], "'-5' is not a uid"),
    (["-t", "0"], "must be"),
    (["-A", "-u", "root"], "not allowed with argument -A"),
    (["-o", "{bank}"], "-o shows 'bank', which --by does not group by (--by=user)"),
    (["--by=type", "-o", "long"], None),
])
def test_bad_options(argv: list[str], names: str | None, monkeypatch: pytest.MonkeyPatch,
                     capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    out = run_main(flux_dws.main, ["usage", *argv], monkeypatch, capfd)
    if names is None:  # a good command line: then it needs Flux
        assert (out.rc, out.err) == (1, "flux-dws usage: not running inside a Flux instance"
                                        " (FLUX_URI is not set)\n")
        return
    assert out.rc == 2
    assert_clear_error(out, names)


def test_help(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLUX_URI", raising=False)
    out = run_main(flux_dws.main, ["usage", "--format=help"], monkeypatch, capfd)
    assert out.rc == 0 and out.out == usage.TABLE.help_text() + "\n"
    assert "  gib_hours  GIB-HOURS  GiB held times hours held, in the range" in out.out
