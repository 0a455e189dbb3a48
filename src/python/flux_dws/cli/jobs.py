"""``flux dws jobs``: the caller's rabbit jobs, one line each.

Active jobs come from the dws service (``dws.jobs``, which answers each
user with their own jobs, and the instance owner with everyone's on
``-A``); with ``-a`` (or JOBIDs) inactive rabbit jobs too, from job-list
and each job's KVS record through job-info, which works without the
service.  A user sees only their own jobs.  Job ids are printed as
flux-core prints them (textfmt.f58); the JSON's "f58" is the plain form.
The table is in the format ``-o`` names (FIELDS, PRESETS: jobview words
the values, flux_dws.cli.outputformat lays them out).
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import time
from typing import Any

from flux_dws import textfmt
from flux_dws.cli import argtypes
from flux_dws.cli.outputformat import HELP, Field, OutputFormat, Preset, Table
from flux_dws.fluxutil import FluxUnavailable, job_id, job_info_keys, open_flux
from flux_dws.jobrecord import MEMO_WORKFLOW, stored_view
from flux_dws.jobview import jobs_rows
from flux_dws.libdws.engine import RECORD_KEY, f58
from flux_dws.users import user_name

PROG = "flux-dws jobs"
#: job-list's result codes (flux-core's FLUX_JOB_RESULT_*)
RESULTS = {1: "COMPLETED", 2: "FAILED", 4: "CANCELED", 8: "TIMEOUT"}
INACTIVE = 64  # FLUX_JOB_STATE_INACTIVE
#: how long job-list may take to say what it knows of one job id (it
#: waits for an id it has not seen yet, which may never come)
LIST_ID_TIMEOUT = 5.0
USERID_UNKNOWN = 0xFFFFFFFF
#: the most job-list returns (its max_entries is a C int; 0 would mean all)
MAX_COUNT = 2**31 - 1
LIST_ATTRS = ["userid", "state", "result", "t_submit", "t_inactive", "annotations"]
FIELDS = {
    "id": Field("JOBID", "the job id, in decimal"),
    "id.f58": Field("JOBID", "the job id, in f58 as flux-core prints it"),
    "userid": Field("UID", "its owner's userid"),
    "username": Field("USER", "its owner"),
    "phase": Field("PHASE", "where the service has it in its Workflow's life"),
    "state": Field("STATE", "its Workflow's state and DWS' status (result when ended)"),
    "directives": Field("DIRECTIVES", "its #DW directives, in short"),
    "rabbits": Field("RABBITS", "the rabbits holding its storage"),
    "time": Field("TIME", "how long in its state (how long ago it ended)"),
    "error": Field("ERROR", "its error in a few plain words, or why it waits"),
    "workflow": Field("WORKFLOW", "its Workflow's name"),
}
PRESETS = {
    "default": Preset("id, user, phase, state, directives, rabbits, time, error",
                      "+:{id.f58} +:{username} +:{phase} +:{state} +:{directives} +:{rabbits}"
                      " +:{time} {error}"),
    "long": Preset("the default with the Workflow's name",
                   "+:{id.f58} +:{username} +:{phase} +:{state} +:{directives} +:{rabbits}"
                   " +:{workflow} +:{time} {error}"),
}
TABLE = Table("flux dws jobs", FIELDS, PRESETS)


def count(text: str) -> int:
    """argparse ``type=`` for -n: 1 to MAX_COUNT."""
    value = argtypes.positive_int(text)
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_COUNT} (got {value})")
    return value


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("jobs", help="your rabbit jobs, one line each")
    p.add_argument("-A", "--all-users", action="store_true",
                   help="every user's jobs (the instance owner only)")
    p.add_argument("-a", "--all", action="store_true",
                   help="inactive rabbit jobs too (from their KVS record)")
    p.add_argument("-n", "--count", type=count, default=1000, metavar="N",
                   help="list at most N inactive jobs (default 1000)")
    TABLE.add_options(p, json_help="print the jobs as JSON", short_no_header=False)
    p.add_argument("jobids", nargs="*", type=argtypes.text, metavar="JOBID",
                   help="only these jobs")
    p.set_defaults(func=run)


def requester_uid() -> int:
    """The userid the broker knows this command by: the handle's
    (FLUX_HANDLE_USERID, flux-core's way to act as another user, which
    the instance owner may use), else the process's."""
    try:
        return int(os.environ.get("FLUX_HANDLE_USERID", ""))
    except ValueError:
        return os.getuid()


def user_names(uids: set[int]) -> dict[int, str]:
    """{uid: its name, else the uid as a number (users.py's rule)}."""
    return {uid: user_name(uid) or str(uid) for uid in uids}


def _active(h: Any, all_users: bool, ids: list[int] | None) -> list[dict[str, Any]] | None:
    """The service's jobs, or None when no service is loaded."""
    payload: dict[str, Any] = {"all_users": all_users}
    if ids is not None:
        payload["ids"] = ids
    try:
        answer = h.rpc("dws.jobs", payload).get()
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            return None
        raise
    if not answer.get("success", True):
        raise ValueError(answer.get("errstr") or "dws.jobs failed")
    jobs = answer.get("jobs")
    return [j for j in jobs if isinstance(j, dict)] if isinstance(jobs, list) else []


def list_id(h: Any, jobid: int) -> dict[str, Any] | None:
    """job-list's entry for one job (LIST_ATTRS), or None when it has none
    within LIST_ID_TIMEOUT."""
    f = h.rpc("job-list.list-id", {"id": jobid, "attrs": LIST_ATTRS})
    try:
        job = f.wait_for(LIST_ID_TIMEOUT).get()["job"]
    except (OSError, TimeoutError, KeyError):
        return None
    return job if isinstance(job, dict) else None


def result_name(job: dict[str, Any]) -> str:
    r = job.get("result", 0)
    return RESULTS.get(r, str(r)) if isinstance(r, int) else "ended"


def _inactive(h: Any, all_users: bool, ids: list[int] | None, count: int
              ) -> list[dict[str, Any]]:
    """Inactive rabbit jobs (those with a rabbit_workflow memo), from
    job-list, each as its KVS record shows it."""
    if ids is not None:
        listed = [j for j in (list_id(h, jid) for jid in ids) if j is not None]
    else:
        constraint: dict[str, Any] = {"and": [{"states": [INACTIVE]}]}
        if not all_users:
            constraint["and"].append({"userid": [requester_uid()]})
        listed = h.rpc("job-list.list", {"max_entries": count, "attrs": LIST_ATTRS,
                                         "since": 0.0, "constraint": constraint}).get()["jobs"]
    rabbit = [j for j in listed if j.get("state") == INACTIVE
              and ((j.get("annotations") or {}).get("user") or {}).get(MEMO_WORKFLOW)]
    keys = [(int(j["id"]), k) for j in rabbit for k in ("jobspec", "eventlog", RECORD_KEY)]
    record = job_info_keys(h, keys)
    out = []
    for j in rabbit:
        jid = int(j["id"])
        rec = {k: v for (i, k), v in record.items() if i == jid}
        info = {**j, "result": result_name(j)}
        out.append(stored_view(jid, rec, job=info))
    return out


def jobs_lines(jobs: list[dict[str, Any]], now: float, users: dict[int, str] | None = None,
               fmt: OutputFormat | None = None, header: bool = True) -> list[str]:
    """The table (``fmt``: the default preset's), oldest job first, nothing
    cut."""
    return (fmt or TABLE.parse("default")).lines(jobs_rows(jobs, now, users), header)


def run(args: argparse.Namespace) -> int:
    if args.format == HELP:
        print(TABLE.help_text())
        return 0
    try:
        h = open_flux()
        ids = [int(job_id(j)) for j in args.jobids] if args.jobids else None
    except (FluxUnavailable, ValueError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    try:
        active = _active(h, args.all_users, ids)
        if active is None:
            print(f"{PROG}: the dws service is not loaded: active jobs are not shown",
                  file=sys.stderr)
            active = []
        seen = {int(j["id"]) for j in active if isinstance(j.get("id"), int)}
        inactive: list[dict[str, Any]] = []
        if args.all or ids is not None:
            rest = None if ids is None else [i for i in ids if i not in seen]
            if rest is None or rest:
                inactive = [j for j in _inactive(h, args.all_users, rest, args.count)
                            if j["id"] not in seen]
    except (OSError, ValueError, PermissionError) as exc:
        print(f"{PROG}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return 1
    jobs = active + inactive
    for j in jobs:
        j["f58"] = f58(j["id"])
    if ids is not None:
        missing = set(ids) - {j["id"] for j in jobs}
        for jid in sorted(missing):
            print(f"{PROG}: job {textfmt.f58(jid)}: not a rabbit job of yours",
                  file=sys.stderr)
    if args.json:
        print(json.dumps({"jobs": jobs}, indent=1))
    else:
        uids = {j["userid"] for j in jobs if isinstance(j.get("userid"), int)}
        for line in jobs_lines(jobs, time.time(), user_names(uids), args.format,
                               not args.no_header):
            print(line)
    return 1 if ids is not None and len(jobs) < len(set(ids)) else 0
