"""``flux dws job JOBID``: one rabbit job in full, for its owner.

An active job is read from the dws service (``dws.job``: its directives,
mounts, timeline and data movements as NnfDataMovement reports them).
An inactive one, or any job while no service is loaded, is read from its
KVS record: the same view, as the engine last wrote it there
(flux_dws.jobrecord).  Either way the record adds what it keeps beside
the view (states before a service restart, DWS' own timings, the
record's keys).  Both through the broker's checks: a user reads only
their own jobs.
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
import time
from typing import Any

from flux_dws import textfmt
from flux_dws.cli import argtypes
from flux_dws.cli.jobs import list_id, result_name, user_names
from flux_dws.fluxutil import FluxUnavailable, job_id, job_info_keys, open_flux
from flux_dws.jobrecord import (
    NO_WORKFLOW,
    RECORD_KEYS,
    UNKNOWN,
    eventlog_entries,
    stored_view,
    with_record,
)
from flux_dws.jobview import job_text
from flux_dws.libdws.engine import f58

PROG = "flux-dws job"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("job", help="one rabbit job in full: storage, mounts, timeline,"
                                   " data movement, error")
    p.add_argument("jobid", type=argtypes.text,
                   help="the job (any form flux accepts: f58, decimal, ...)")
    p.add_argument("--json", action="store_true", help="print the job as JSON")
    p.add_argument("--why", action="store_true",
                   help="list every step the job took, with the rule that chose it")
    p.set_defaults(func=run)


class JobError(Exception):
    """A one-line reason the job cannot be shown."""


class NoService(Exception):
    """No dws service is loaded."""


def from_service(h: Any, jobid: int) -> dict[str, Any] | None:
    """The service's view of the job; None when the service has no
    Workflow for it (not made yet, or gone); NoService when no service
    is loaded (the KVS record then answers either way)."""
    try:
        answer = h.rpc("dws.job", {"jobid": jobid}).get()
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            raise NoService() from None
        if exc.errno == errno.ENOENT:
            return None
        raise JobError(exc.strerror or str(exc)) from None
    if not isinstance(answer, dict) or not answer.get("success", False):
        raise JobError(str((answer or {}).get("errstr") or "dws.job failed"))
    answer["source"] = "service"
    return answer


def read_record(h: Any, jobid: int) -> dict[str, str]:
    keys = ["eventlog", "jobspec", *(k for k, _ in RECORD_KEYS)]
    try:
        found = job_info_keys(h, [(jobid, k) for k in keys])
    except PermissionError as exc:
        raise JobError(str(exc)) from None
    return {k: v for (_, k), v in found.items()}


def show(h: Any, jobid: int) -> tuple[dict[str, Any], str | None]:
    """The job's view, and a warning to print (or None)."""
    record = read_record(h, jobid)
    if "eventlog" not in record:
        raise JobError("no such job")
    kvs = stored_view(jobid, record)
    if not kvs["directives"]:
        raise JobError("not a rabbit job (no #DW directives)")
    ended = any(e["name"] == "clean" for e in eventlog_entries(record["eventlog"]))
    if ended:
        job = list_id(h, jobid)
        if job is not None:
            kvs = stored_view(jobid, record, job={**job, "result": result_name(job)})
        return kvs, None
    try:
        view = from_service(h, jobid)
    except NoService:
        return stored_view(jobid, record, UNKNOWN), "the job is active but no dws service" \
            " is loaded: shown from its KVS record"
    if view is None:  # waiting for its Workflow (dependencies, or the create)
        return stored_view(jobid, record, NO_WORKFLOW), None
    return with_record(view, record), None


def run(args: argparse.Namespace) -> int:
    try:
        h = open_flux()
        jobid = job_id(args.jobid)
    except (FluxUnavailable, ValueError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    shown = textfmt.f58(int(jobid))
    try:
        view, warn = show(h, int(jobid))
    except JobError as exc:
        print(f"{PROG}: job {shown}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{PROG}: job {shown}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    view["f58"] = f58(int(jobid))  # plain, as JSON and Workflow names carry it
    view["now"] = time.time()
    if args.json:
        print(json.dumps(view, indent=1))
    else:
        uid = view.get("userid")
        user = user_names({uid}).get(uid) if isinstance(uid, int) else None
        print(job_text(view, user, why_all=args.why))
    if warn:  # what the KVS holds is shown, but not the job as it is now
        print(f"{PROG}: job {shown}: {warn}", file=sys.stderr)
        return 1
    return 0
