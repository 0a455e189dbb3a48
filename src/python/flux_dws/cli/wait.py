"""``flux dws wait JOBID``: wait until a rabbit job's data has landed and
its storage is gone.

With ``release_computes = "after-unmount"`` a rabbit job ends (``clean``)
while DWS still copies its data out and tears its storage down; the job
cannot carry what happens then.  The dws service records it in the job's
KVS directory (RFC 16): ``data.dws.dataout`` and ``data.dws.teardown``,
each ``{"state", "time", "error"?}``.  This command watches for the
Teardown record and answers from both: exit 0 when DataOut completed and
Teardown is done, 1 with the error otherwise.  It works for every rabbit
job, released early or not.

It cannot wait for ever on a record that will not come: once the job is
inactive and the service no longer tracks its Workflow (deleted outside
Flux, or never created), a missing record is an error.  While no service
is loaded (a reload) it says so and asks again every 2 s: the next
service picks the Workflow up and records its end.  ``-t`` bounds it all.
"""

from __future__ import annotations

import argparse
import errno
import sys
from typing import Any

from flux_dws import textfmt
from flux_dws.cli import argtypes
from flux_dws.fluxutil import FluxUnavailable, job_id, open_flux
from flux_dws.jobrecord import KVS_DATAOUT, KVS_TEARDOWN

PROG = "flux-dws wait"
#: seconds between two dws.status asks while no service is loaded
NO_SERVICE_RETRY = 2.0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("wait", help="wait until a rabbit job's data has landed and its"
                                    " storage is gone")
    p.add_argument("jobid", type=argtypes.text,
                   help="the job (any form flux accepts: f58, decimal, ...)")
    p.add_argument("-t", "--timeout", type=argtypes.positive_float, default=None, metavar="SECONDS",
                   help="give up after SECONDS (exit 2)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=run)


def verdict(dataout: dict[str, Any] | None, teardown: dict[str, Any] | None) -> tuple[int, str]:
    """The exit code and the line to print, from the two records."""
    if not teardown:
        return 1, "no Teardown record: the service never finished this job's storage"
    if not dataout:
        return 1, "DataOut never ran (the job ended before it); its storage is gone"
    state = dataout.get("state")
    if state == "complete":
        return 0, "data out complete; storage torn down"
    why = dataout.get("error") or "no reason recorded"
    if state == "skipped":
        return 1, f"data movement skipped: {why}"
    return 1, f"copy_out failed: {why}"


class _Wait:
    """One reactor: the Teardown record's watch, the job's eventlog (for
    when it is inactive), and the optional timeout."""

    def __init__(self, h: Any, jobid: Any, timeout: float | None) -> None:
        self.h = h
        self.jobid = jobid
        self.key = f"{jobid.kvs}.{KVS_TEARDOWN}"
        self.timeout = timeout
        self.teardown: dict[str, Any] | None = None
        self.error: str | None = None
        self.timed_out = False
        self.told_no_service = False
        self.retry: Any = None

    def _stop(self) -> None:
        self.h.reactor_stop()

    def _on_record(self, future: Any) -> None:
        try:
            value = future.get()
        except OSError as exc:
            self.error = f"cannot watch {self.key}: {exc.strerror}"
            self._stop()
            return
        if isinstance(value, dict):
            self.teardown = value
            self._stop()

    def _ask_status(self) -> None:
        self.h.rpc("dws.status", {}).then(self._on_status)

    def _on_status(self, future: Any) -> None:
        try:
            ids = future.get().get("workflows", [])
        except OSError as exc:
            if exc.errno != errno.ENOSYS:
                self.error = f"the dws service did not answer: {exc.strerror}"
                self._stop()
                return
            # no service (being reloaded?): the Workflow may still exist, and
            # the next service records its end; ask again shortly
            if not self.told_no_service:
                print(f"{PROG}: the dws service is not loaded; waiting for it",
                      file=sys.stderr)
                self.told_no_service = True
            self.retry = self.h.timer_watcher_create(NO_SERVICE_RETRY,
                                                     lambda *_: self._ask_status())
            self.retry.start()
            return
        if int(self.jobid) in ids:
            return  # DataOut or Teardown still under way: the record will come
        self.teardown = _lookup(self.h, self.key)
        self._stop()

    def _on_event(self, future: Any) -> None:
        try:
            event = future.get_event()
        except OSError:
            return
        if event is not None and event.name == "clean":
            self._ask_status()

    def run(self) -> None:
        import flux.job
        import flux.kvs

        watch = flux.kvs.kvs_watch_async(self.h, self.key, waitcreate=True)
        watch.then(self._on_record)
        events = flux.job.event_watch_async(self.h, self.jobid)
        events.then(self._on_event)
        timer = None
        if self.timeout is not None:
            def expired(*_: Any) -> None:
                self.timed_out = True
                self._stop()
            timer = self.h.timer_watcher_create(self.timeout, expired)
            timer.start()
        self.h.reactor_run()
        watch.cancel()
        events.cancel()
        if self.retry is not None:
            self.retry.stop()
        if timer is not None:
            timer.stop()


def _lookup(h: Any, key: str) -> Any:
    import flux.kvs

    try:
        return flux.kvs.get(h, key)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise


def run(args: argparse.Namespace) -> int:
    try:
        h = open_flux()
        jobid = job_id(args.jobid)
    except (FluxUnavailable, ValueError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    shown = textfmt.f58(int(jobid))
    try:
        jobspec = _lookup(h, f"{jobid.kvs}.jobspec")
    except OSError as exc:
        print(f"{PROG}: job {shown}: {exc.strerror}", file=sys.stderr)
        return 1
    if jobspec is None:
        print(f"{PROG}: job {shown}: no such job", file=sys.stderr)
        return 1
    system = (jobspec.get("attributes") or {}).get("system") or {}
    if not system.get("dw"):
        print(f"{PROG}: job {shown} has no rabbit storage (no #DW directives)",
              file=sys.stderr)
        return 1
    w = _Wait(h, jobid, args.timeout)
    w.run()
    if w.timed_out:
        print(f"{PROG}: job {shown}: still not torn down after {args.timeout:g} s",
              file=sys.stderr)
        return 2
    if w.error:
        print(f"{PROG}: job {shown}: {w.error}", file=sys.stderr)
        return 1
    rc, line = verdict(_lookup(h, f"{jobid.kvs}.{KVS_DATAOUT}"), w.teardown)
    if rc != 0:
        print(f"{PROG}: job {shown}: {line}", file=sys.stderr)
    elif not args.quiet:
        print(f"job {shown}: {line}")
    return rc
