"""``flux dws usage``: who used how much rabbit storage, in GiB-hours and
jobs, by user, bank, project or storage type over a time range.

The inactive rabbit jobs (those with a rabbit_workflow memo) that ended
in the range come from job-list (``since``: t_inactive >= the range's
start; submitted before its end), each one's record (RECORD_KEY) through
job-info, so that a user reads only their own; flux_dws.storageuse adds
them up.  The lookups go out ``IN_FLIGHT`` at a time, all of them and
job-list's answer within ``--timeout``.  The table is in the format
``-o`` names (FIELDS, PRESETS: flux_dws.cli.outputformat), with a
``total`` line as flux dws df has; ``--json`` prints the groups.
"""

from __future__ import annotations

import argparse
import json
import math
import pwd
import sys
import time
import warnings
from datetime import datetime
from typing import Any, NamedTuple

from flux_dws.cli import argtypes
from flux_dws.cli.jobs import INACTIVE, requester_uid, user_names
from flux_dws.cli.outputformat import HELP, Field, OutputFormat, Preset, Table
from flux_dws.engine import RECORD_KEY
from flux_dws.fluxutil import FluxUnavailable, import_flux, job_info_window, open_flux
from flux_dws.jobrecord import MEMO_WORKFLOW
from flux_dws.storageuse import KEYS, Group, JobUse, aggregate, job_use

PROG = "flux-dws usage"
LIST_ATTRS = ["userid", "t_submit", "t_inactive", "annotations"]
#: job-info lookups unanswered at once
IN_FLIGHT = 64
#: the default bound on the whole wait (job-list's answer and every lookup)
TIMEOUT = 300.0
FIELDS = {
    "user": Field("USER", "the jobs' owner (--by=user)"),
    "userid": Field("UID", "the jobs' owner's userid (--by=user)"),
    "bank": Field("BANK", "their flux-accounting bank, - for none (--by=bank)"),
    "project": Field("PROJECT", "their project, - for none (--by=project)"),
    "type": Field("TYPE", "the #DW storage type: xfs, gfs2, raw, lustre (--by=type)"),
    "jobs": Field("JOBS", "the rabbit jobs that held storage in the range", int),
    "gib_hours": Field("GIB-HOURS", "GiB held times hours held, in the range (one decimal)"),
    "share": Field("SHARE", "of the total GiB-hours, in percent (one decimal)"),
}
#: the group keys' fields, in KEYS' order, and the figures
KEY_FIELDS = {"user": ("user", "userid"), "bank": ("bank",), "project": ("project",),
              "type": ("type",)}
FIGURES = "+:{jobs:>}  +:{gib_hours:>}"
#: (table_format puts the --by keys in the place of their ?+: fields)
PRESETS = {
    "default": Preset("the --by keys, JOBS and GIB-HOURS",
                      "?+:{user}  ?+:{bank}  ?+:{project}  ?+:{type}  " + FIGURES),
    "long": Preset("the default with the UID and the SHARE of the total",
                   "?+:{user}  ?+:{userid:>}  ?+:{bank}  ?+:{project}  ?+:{type}  " + FIGURES
                   + "  +:{share:>}"),
}
TABLE = Table("flux dws usage", FIELDS, PRESETS)


def by_keys(text: str) -> list[str]:
    """argparse ``type=`` for --by: KEYS, comma-separated, each once."""
    keys = [k.strip() for k in argtypes.text(text).split(",")]
    for k in keys:
        if k not in KEYS:
            raise argparse.ArgumentTypeError(
                f"unknown key '{k}' (one or more of {', '.join(KEYS)}, comma-separated)")
    if len(set(keys)) != len(keys):
        raise argparse.ArgumentTypeError(f"a key given twice in '{text}'")
    return keys


def iso_time(text: str) -> float | None:
    """An ISO 8601 date or time (``2026-11-01``, ``2026-11-01T08:00``,
    with or without an offset; local time without one, a date alone at
    its midnight) in seconds since the epoch, or None when it is not one."""
    try:
        t = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return t.timestamp() if t.tzinfo else t.astimezone().timestamp()


class Moment(NamedTuple):
    """A time given to --since/--until: as given, and when it is."""

    text: str
    stamp: float


def when(text: str) -> Moment:
    """argparse ``type=`` for --since/--until: an ISO 8601 date or time
    (iso_time), else a time as ``flux jobs --since`` takes it
    (flux.util.parse_datetime: "-7d", "+1h", "now", "yesterday", "last
    monday"...), else seconds since the epoch.  ISO forms come first:
    parsedatetime gives a date alone the time of day it is now, and
    misreads ``2026-11-01T10:00``."""
    argtypes.text(text)
    stamp = iso_time(text)
    if stamp is None:
        try:
            import_flux()
            import flux.util

            with warnings.catch_warnings():  # its parsedatetime's flag style
                warnings.simplefilter("ignore")
                stamp = float(flux.util.parse_datetime(text).timestamp())
        except FluxUnavailable as exc:
            raise argparse.ArgumentTypeError(f"cannot read '{text}': {exc}") from None
        except Exception:  # parsedatetime's, FSD's or datetime's own errors
            try:
                stamp = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"'{text}' is not a time (2026-11-01, 2026-11-01T08:00, -7d, yesterday,"
                    f" now...)") from None
    if not math.isfinite(stamp) or stamp <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a time after 1970")
    return Moment(text, stamp)


def user_id(text: str) -> int:
    """argparse ``type=`` for -u: a user name or a uid."""
    name = argtypes.text(text)
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        pass
    try:
        uid = int(name)
    except ValueError:
        raise argparse.ArgumentTypeError(f"unknown user '{name}'") from None
    if uid < 0 or uid >= 2**32 - 1:
        raise argparse.ArgumentTypeError(f"'{name}' is not a uid")
    return uid


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "usage", help="who used how much rabbit storage: GiB-hours and jobs",
        description="Sum the rabbit storage that ended jobs held, in GiB-hours and jobs,"
                    " by user, bank, project or storage type over a time range, from the"
                    " jobs' KVS records; then the total.")
    who = p.add_mutually_exclusive_group()
    who.add_argument("-A", "--all-users", action="store_true",
                     help="every user's jobs (the instance owner only)")
    who.add_argument("-u", "--user", type=user_id, metavar="USER",
                     help="USER's jobs (a name or a uid; another's: the instance owner only)")
    p.add_argument("--by", type=by_keys, default=["user"], metavar="KEY[,KEY...]",
                   help=f"group by these keys ({', '.join(KEYS)}; default user)")
    p.add_argument("--since", type=when, metavar="WHEN",
                   help="from WHEN (e.g. -7d, 2026-11-01, yesterday; default: every ended"
                        " job the instance keeps)")
    p.add_argument("--until", type=when, metavar="WHEN", help="to WHEN (default: now)")
    p.add_argument("-t", "--timeout", type=argtypes.positive_float, default=TIMEOUT,
                   metavar="SECONDS",
                   help=f"give up if the job list and records are not all read in SECONDS"
                        f" (default {TIMEOUT:g})")
    TABLE.add_options(p, json_help="print the groups and the total as JSON")
    p.set_defaults(func=run)


# --- the table (pure) ----------------------------------------------------------------

def _word(value: Any) -> str:
    return "-" if value is None else str(value)


def table_row(g: Group, by: list[str], users: dict[int, str], total: float,
              first: str = "") -> dict[str, Any]:
    """A group's values by field (FIELDS): the keys it is not grouped by
    are empty; for the total line (no keys) ``first`` names the key field
    that says ``total``."""
    row: dict[str, Any] = {f: "" for f in ("user", "bank", "project", "type")}
    row["userid"] = ""
    for k in by:
        if k in g.keys:
            row[k] = users.get(g.keys[k], str(g.keys[k])) if k == "user" else _word(g.keys[k])
    if "user" in g.keys:
        row["userid"] = str(g.keys["user"])
    if first:
        row[first] = "total"
    row["jobs"] = len(g.jobs)
    row["gib_hours"] = f"{g.gib_hours:.1f}"
    row["share"] = f"{100 * g.gib_seconds / total:.1f}%" if total > 0 else "-"
    return row


def table_format(option: OutputFormat | str | None, by: list[str]) -> OutputFormat:
    """The format ``-o`` chose; the default preset (also when ``-o default``
    or ``-o long`` names it) shows the --by keys in their order."""
    fmt = TABLE.format_of(option)
    for name, preset in PRESETS.items():
        if fmt.text == preset.format:
            keys = "  ".join("+:{" + f + (":>}" if f == "userid" else "}")
                             for k in by for f in KEY_FIELDS[k]
                             if name == "long" or f != "userid")
            return TABLE.parse(keys + "  " + FIGURES
                               + ("  +:{share:>}" if name == "long" else ""))
    return fmt


def ungrouped_fields(fmt: OutputFormat, by: list[str]) -> list[str]:
    """The key fields ``fmt`` shows that --by does not group by."""
    wanted = {f for k in by for f in KEY_FIELDS[k]}
    keyed = {f for fs in KEY_FIELDS.values() for f in fs}
    return [f for f in fmt.fields if f in keyed and f not in wanted]


def usage_lines(rows: list[Group], total: Group, by: list[str], users: dict[int, str],
                fmt: OutputFormat, header: bool = True) -> list[str]:
    """The table: a line per group, then the total, nothing cut."""
    keyed = {f for fs in KEY_FIELDS.values() for f in fs}
    first = next((f for f in fmt.fields if f in keyed and f != "userid"), "")
    table = [table_row(g, by, users, total.gib_seconds) for g in rows]
    table.append(table_row(total, by, users, total.gib_seconds, first))
    return fmt.lines(table, header)


def usage_json(rows: list[Group], total: Group, by: list[str], users: dict[int, str],
               since: float, until: float, without: int) -> dict[str, Any]:
    """What --json prints: the range, the keys, the groups (a user's
    name beside its userid), the total and how many jobs had no usage."""
    groups = []
    for g in rows:
        out: dict[str, Any] = {}
        for k, v in g.as_json().items():
            if k == "user":
                out.update(user=users.get(v, str(v)), userid=v)
            else:
                out[k] = v
        groups.append(out)
    return {"since": since, "until": until, "by": by, "groups": groups,
            "total": total.as_json(), "jobs_without_usage": without}


def read_uses(listed: list[dict[str, Any]], records: dict[int, Any]
              ) -> tuple[list[JobUse], int]:
    """The storage each listed job's record (parsed, by id; absent: the
    job has none) says it held, and how many had no usage to read."""
    uses, without = [], 0
    for j in listed:
        jid = int(j["id"])
        use = job_use(jid, int(j.get("userid", -1)), float(j.get("t_inactive") or 0.0),
                      records.get(jid))
        if use is None:
            without += 1
        else:
            uses.append(use)
    return uses, without


# --- reading (I/O) -------------------------------------------------------------------

def is_rabbit(job: dict[str, Any]) -> bool:
    """A job whose Workflow was made (it has the rabbit_workflow memo)."""
    memo = ((job.get("annotations") or {}).get("user") or {})
    return isinstance(memo, dict) and bool(memo.get(MEMO_WORKFLOW))


def rabbit_jobs(h: Any, userid: int | None, since: float, until: float,
                deadline: float) -> list[dict[str, Any]]:
    """The inactive rabbit jobs (of ``userid``, None: everyone's) that
    ended at or after ``since`` and were submitted before ``until``."""
    constraint: dict[str, Any] = {"and": [{"states": [INACTIVE]},
                                          {"t_submit": [f"<{until:.6f}"]}]}
    if userid is not None:
        constraint["and"].append({"userid": [userid]})
    f = h.rpc("job-list.list", {"max_entries": 0, "attrs": LIST_ATTRS, "since": since,
                                "constraint": constraint})
    try:
        jobs = f.wait_for(max(deadline - time.monotonic(), 0.0)).get()["jobs"]
    except TimeoutError:
        raise TimeoutError("job-list did not answer") from None
    return [j for j in jobs if isinstance(j, dict) and is_rabbit(j)]


def read_records(h: Any, ids: list[int], deadline: float) -> dict[int, Any]:
    """The records (RECORD_KEY, parsed) of these jobs that have one."""
    out: dict[int, Any] = {}
    for jid, _, raw in job_info_window(h, [(i, RECORD_KEY) for i in ids], IN_FLIGHT,
                                       deadline):
        if raw is None:
            continue
        try:
            out[jid] = json.loads(raw)
        except ValueError:
            continue
    return out


def owner_of(h: Any) -> int | None:
    try:
        return int(h.attr_get("security.owner"))
    except (OSError, ValueError, TypeError):
        return None


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")


def run(args: argparse.Namespace) -> int:
    if args.format == HELP:
        print(TABLE.help_text())
        return 0
    since = args.since.stamp if args.since is not None else 0.0
    until = args.until.stamp if args.until is not None else time.time()
    if since >= until:
        given = [f"--{name}={m.text} ({_stamp(m.stamp)})" if m is not None else
                 f"--{name} (now: {_stamp(until)})"
                 for name, m in (("since", args.since), ("until", args.until))]
        args._parser.error(f"{given[0]} is not before {given[1]}")
    fmt = table_format(args.format, args.by)
    extra = ungrouped_fields(fmt, args.by)
    if extra:
        args._parser.error(f"-o shows '{extra[0]}', which --by does not group by"
                           f" (--by={','.join(args.by)})")
    try:
        h = open_flux()
    except FluxUnavailable as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    me = requester_uid()
    userid = None if args.all_users else (args.user if args.user is not None else me)
    if userid != me and owner_of(h) != me:
        print(f"{PROG}: only the instance owner may see "
              f"{'every user' if userid is None else 'another user'}'s usage", file=sys.stderr)
        return 1
    deadline = time.monotonic() + args.timeout
    try:
        listed = rabbit_jobs(h, userid, since, until, deadline)
        records = read_records(h, [int(j["id"]) for j in listed], deadline)
    except TimeoutError as exc:
        print(f"{PROG}: gave up after {args.timeout:g}s (--timeout): {exc}", file=sys.stderr)
        return 1
    except (OSError, PermissionError) as exc:
        print(f"{PROG}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return 1
    uses, without = read_uses(listed, records)
    rows, total = aggregate(uses, args.by, since, until)
    users = user_names({g.keys["user"] for g in rows if "user" in g.keys})
    if args.json:
        print(json.dumps(usage_json(rows, total, args.by, users, since, until, without),
                         indent=1))
        return 0
    if without:
        print(f"{PROG}: {without} rabbit job{'s' if without != 1 else ''} ended with no"
              f" usage in {'their records' if without != 1 else 'its record'} (written"
              f" before flux-dws kept it): not counted", file=sys.stderr)
    for line in usage_lines(rows, total, args.by, users, fmt, not args.no_header):
        print(line)
    return 0
