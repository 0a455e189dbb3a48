"""Who used how much rabbit storage: the ``usage`` of rabbit jobs' KVS
records, summed into GiB-hours by user, bank, project or storage type over
a time range.  No I/O: ``flux dws usage`` (cli/usage.py) reads the records,
this reads them and adds them up.

The engine (libdws engine/views/jobview.c) writes into each job's record
(``RECORD_KEY``) its ``bank`` and ``project`` (absent when the job has
none) and::

   "usage": {"since": T0, "until": T1,
             "gib": {"xfs": 400, "lustre": 1000},
             "gib_seconds": {"xfs": 1440000.0, "lustre": 3600000.0}}

``since`` is the Workflow's creation, ``until`` its Teardown done (absent
while the storage is held, and with it ``gib_seconds``), ``gib`` the GiB
of each ``#DW`` storage type the job holds meanwhile (its capacities in
whole GiB, per compute node for xfs, gfs2 and raw; once for lustre and
create_persistent: what ``[rabbit.limits]`` counts).

A job holds its storage over ``[since, until]``; a record of an ended job
without ``until`` (its Teardown never seen done) holds it to the job's
end (``t_inactive``).  Only the part inside the range asked for counts:
``gib_seconds`` times the share of the span inside the range (``gib``
times the seconds inside it when there is no ``gib_seconds``).  A job
counts in a group when its span and the range overlap (a span of no
length: when it lies in the range).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: what the rows may be grouped by, in the order the table shows them
KEYS = ("user", "bank", "project", "type")
SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class JobUse:
    """One job's storage, as its record says: held from ``since`` to
    ``end`` (``until``, else the job's end), ``gib`` per type, and the
    engine's ``gib_seconds`` per type when it recorded ``until``."""

    id: int
    userid: int
    bank: str | None
    project: str | None
    since: float
    end: float
    gib: Mapping[str, int]
    gib_seconds: Mapping[str, float]

    @property
    def span(self) -> float:
        return max(self.end - self.since, 0.0)

    def overlap(self, since: float, until: float) -> float:
        """Seconds of the span inside [since, until]."""
        return max(min(self.end, until) - max(self.since, since), 0.0)

    def counts_in(self, since: float, until: float) -> bool:
        """Whether the job held its storage in [since, until): its span
        overlaps it, or, of no length, lies in it."""
        if self.span == 0.0:
            return since <= self.since < until
        return self.since < until and self.end > since

    def gib_seconds_in(self, kind: str, since: float, until: float) -> float:
        """GiB-seconds of storage type ``kind`` inside [since, until]."""
        inside = self.overlap(since, until)
        if inside == 0.0:
            return 0.0
        if kind in self.gib_seconds:
            return self.gib_seconds[kind] * inside / self.span
        return self.gib.get(kind, 0) * inside


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def job_use(jobid: int, userid: int, t_inactive: float, record: Any) -> JobUse | None:
    """The storage a job's record (RECORD_KEY, parsed) says it held; None
    when it says nothing readable: no ``usage`` (a record written before
    the engine kept it), or one without a ``since`` or ``gib``."""
    if not isinstance(record, dict) or not isinstance(record.get("usage"), dict):
        return None
    use = record["usage"]
    since = _number(use.get("since"))
    gib = use.get("gib")
    if since is None or not isinstance(gib, dict):
        return None
    sizes = {str(k): int(v) for k, v in gib.items()
             if _number(v) is not None and float(v).is_integer()}
    if len(sizes) != len(gib):
        return None
    until = _number(use.get("until"))
    kept = use.get("gib_seconds") if until is not None else None
    seconds = {str(k): float(v) for k, v in kept.items() if _number(v) is not None
               and k in sizes} if isinstance(kept, dict) else {}
    return JobUse(id=jobid, userid=userid, bank=_name(record.get("bank")),
                  project=_name(record.get("project")), since=since,
                  end=until if until is not None else max(t_inactive, since),
                  gib=sizes, gib_seconds=seconds)


@dataclass
class Group:
    """One row: the values of the keys grouped by (None: the job has
    none), the jobs in it and their GiB-seconds in the range."""

    keys: dict[str, Any]
    jobs: set[int] = field(default_factory=set)
    gib_seconds: float = 0.0

    @property
    def gib_hours(self) -> float:
        return self.gib_seconds / SECONDS_PER_HOUR

    def as_json(self) -> dict[str, Any]:
        return {**self.keys, "jobs": len(self.jobs), "gib_hours": self.gib_hours,
                "gib_seconds": self.gib_seconds}


def _sort_key(value: Any) -> tuple[int, Any]:
    return (1, "") if value is None else (0, value)


def aggregate(jobs: Iterable[JobUse], by: Iterable[str], since: float, until: float
              ) -> tuple[list[Group], Group]:
    """The groups of ``jobs`` by the KEYS ``by`` (in that order) over
    [since, until], most GiB-hours first (then most jobs, then by keys),
    and their total (``keys`` empty).  ``user`` groups by userid; ``type``
    puts a job in a group per storage type it holds (a job with none is
    in no group by type)."""
    by = list(by)
    groups: dict[tuple[Any, ...], Group] = {}
    total = Group({})
    for job in jobs:
        if not job.counts_in(since, until):
            continue
        kinds: list[str | None] = list(job.gib) if "type" in by else [None]
        for kind in kinds:
            values = {"user": job.userid, "bank": job.bank, "project": job.project,
                      "type": kind}
            key = tuple(values[k] for k in by)
            g = groups.get(key)
            if g is None:
                g = groups[key] = Group({k: values[k] for k in by})
            g.jobs.add(job.id)
            total.jobs.add(job.id)
            for k in ([kind] if kind is not None else list(job.gib)):
                seconds = job.gib_seconds_in(k, since, until)
                g.gib_seconds += seconds
                total.gib_seconds += seconds
    rows = sorted(groups.values(), key=lambda g: (
        -g.gib_seconds, -len(g.jobs), *(_sort_key(g.keys[k]) for k in by)))
    return rows, total
