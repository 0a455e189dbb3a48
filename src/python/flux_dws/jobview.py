"""A rabbit job as its owner sees it: the text of ``flux dws jobs`` and
``flux dws job``.  No I/O: the commands (flux_dws.cli.jobs,
flux_dws.cli.job) fetch, this words.

The data has one shape, the engine's (libdws engine/views/jobview.c): an
active job as the dws service answers ``dws.jobs`` and ``dws.job``, an
inactive one as the engine last wrote it into its KVS record
(flux_dws.jobrecord reads it back), so one formatter prints either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flux_dws import textfmt
from flux_dws.jobrecord import INACTIVE, KVS_TIMELINE, KVS_TIMING, RECORD_KEYS
from flux_dws.jobrecord import as_dict as _dict
from flux_dws.jobrecord import number as _num
from flux_dws.libdws.engine import RULE_WHY
from flux_dws.libdws.explain import explain
from flux_dws.libdws.wfstates import (
    POST_RUN,
    PROPOSAL,
    SETUP,
    STATES,  # Workflow states, in order (the timeline's rows)
)

#: what the time before a state was spent on, where it is not Flux's own
#: work (the gap between the previous state's end and this one's start)
GAP_WHY = {PROPOSAL: "submit to Workflow", SETUP: "waiting for resources",
           POST_RUN: "the job ran"}
#: short error text in a `flux dws jobs` line
ERROR_WIDTH = 60
SEPARATOR = " -- "


# --- errors in plain words ----------------------------------------------------

@dataclass(frozen=True)
class Explained:
    """An error: the plain sentence (None: no row knows it) and DWS' (or
    our) own text, whole."""

    sentence: str | None
    text: str


def explained(error: str, recorded: str | None = None) -> Explained:
    """Split an error as ``flux dws job`` shows it.  recorded: the sentence
    the job's eventlog or KVS record keeps beside the note (explain.h),
    preferred to the table's.  A note raised by flux-dws before the
    sentence moved out of it ends with " -- <sentence>", the sentence of
    the text before it; the text is then what came before."""
    if recorded:
        return Explained(recorded, error)
    cut = error.rfind(SEPARATOR)
    if cut >= 0:
        before = error[:cut]
        sentence = explain(before)
        if sentence and error[cut + len(SEPARATOR):] == sentence:
            return Explained(sentence, before)
    return Explained(explain(error), error)


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


# --- directives in short --------------------------------------------------------

def _args(d: dict[str, Any]) -> dict[str, str]:
    a = d.get("args")
    return {str(k): str(v) for k, v in a.items()} if isinstance(a, dict) else {}


def directive_short(d: dict[str, Any]) -> str:
    """'xfs 100GiB', 'persistent foo', 'copy_in', 'container', ..."""
    cmd = str(d.get("command") or "?")
    a = _args(d)
    if cmd in ("jobdw", "create_persistent"):
        text = " ".join(x for x in (a.get("type"), a.get("capacity")) if x)
        return text + (" persistent" if cmd == "create_persistent" else "") or cmd
    if cmd in ("persistentdw", "destroy_persistent"):
        verb = "persistent" if cmd == "persistentdw" else "destroy"
        return f"{verb} {a.get('name', '?')}"
    return cmd


def directives_short(directives: Any) -> str:
    if not isinstance(directives, list):
        return "-"
    return ", ".join(directive_short(d) for d in directives if isinstance(d, dict)) or "-"


# --- durations --------------------------------------------------------------------

def duration(seconds: float) -> str:
    """Short and exact enough: 0.4s, 45s, 5m12s, 2h03m, 3d04h."""
    return textfmt.duration(seconds, tenths_below=10)


# --- text ------------------------------------------------------------------------

def _state_cell(j: dict[str, Any]) -> str:
    state, status = str(j.get("state") or ""), str(j.get("status") or "")
    if j.get("phase") == INACTIVE:
        return str(j.get("result") or state or "-")
    if not state:
        return "-"
    if j.get("ready") and status != "Error":
        return f"{state} ready"
    return f"{state} {status}".strip()


def error_short(j: dict[str, Any]) -> str:
    error = j.get("error")
    if not isinstance(error, str) or not error:
        return ""
    e = explained(error, _str_or_none(j.get("explanation")))
    return textfmt.truncate(e.sentence or e.text, ERROR_WIDTH)


def waiting_short(j: dict[str, Any]) -> str:
    """Why a job waits for its user's [rabbit.limits] ("waiting"), shortened."""
    why = j.get("waiting")
    if not isinstance(why, str) or not why:
        return ""
    return textfmt.truncate(why, ERROR_WIDTH)


def shown_id(j: dict[str, Any]) -> str:
    """The job's id as flux-core prints it for people (textfmt.f58: "ƒ"
    in a UTF-8 locale); the view's own "f58" (plain, as JSON carries it)
    where its id is not a job id."""
    jid = j.get("id")
    if isinstance(jid, int) and not isinstance(jid, bool) and 0 <= jid < 1 << 64:
        return textfmt.f58(jid)
    return str(j.get("f58") or jid)


def jobs_rows(jobs: list[dict[str, Any]], now: float, users: dict[int, str] | None = None
              ) -> list[dict[str, Any]]:
    """The ``flux dws jobs`` values of each job, oldest first, by field
    (flux_dws.cli.jobs.FIELDS): its id (decimal and f58), owner, phase,
    state, directives, rabbits, time in its state (or since it ended),
    error (short), Workflow."""
    users = users or {}
    rows = []
    for j in sorted(jobs, key=lambda j: int(j.get("id") or 0)):
        uid = j.get("userid")
        if j.get("phase") == INACTIVE:
            since = _num(j.get("t_inactive"))
            time = f"{duration(now - since)} ago" if since is not None else "-"
        else:
            secs = _num(j.get("phase_seconds"))
            time = duration(secs) if secs is not None else "-"
        rows.append({"id": str(j.get("id")), "id.f58": shown_id(j),
                     "userid": str(uid) if isinstance(uid, int) else "-",
                     "username": users.get(uid, str(uid)) if isinstance(uid, int) else "-",
                     "phase": str(j.get("phase") or "-"), "state": _state_cell(j),
                     "directives": directives_short(j.get("directives")),
                     "rabbits": str(j.get("rabbits") or "-"), "time": time,
                     "error": error_short(j) or waiting_short(j),
                     "workflow": str(j.get("workflow") or "-")})
    return rows


def _gib(v: Any) -> str:
    n = _num(v)
    if n is None:
        return str(v)
    return f"{n / 2**30:g} GiB" if n >= 2**30 else f"{int(n)} bytes"


def _directive_lines(j: dict[str, Any]) -> list[str]:
    out = []
    lustre = j.get("lustre_rabbits") if isinstance(j.get("lustre_rabbits"), dict) else None
    for i, d in enumerate(j.get("directives") or []):
        if not isinstance(d, dict):
            continue
        a = _args(d)
        cmd = str(d.get("command") or "?")
        line = f"  {i}  {cmd}"
        if cmd in ("jobdw", "create_persistent"):
            line += f" {a.get('type', '?')}, capacity {a.get('capacity', '?')}"
            if a.get("name"):
                line += f", name {a['name']}"
            if a.get("type") == "lustre" and lustre:
                line += ", on " + ", ".join(f"{r} ({g} GiB)" for r, g in sorted(lustre.items()))
            elif j.get("rabbits"):
                line += f", on {j['rabbits']}"
            sets = d.get("allocation_sets")
            if isinstance(sets, list) and sets:
                line += "; DWS allocates " + ", ".join(
                    f"{s.get('label', '?')} {_gib(s.get('minimumCapacity'))}"
                    f" ({s.get('allocationStrategy', '?')})" for s in sets if isinstance(s, dict))
        elif cmd in ("copy_in", "copy_out"):
            line += f" {a.get('source', '?')} -> {a.get('destination', '?')}"
        elif a:
            line += " " + " ".join(f"{k}={v}" if v else k for k, v in a.items())
        out.append(line)
    return out or ["  (none)"]


def timeline_rows(j: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(state, asked at, DWS time, time before it) per state seen: times
    relative to the first known, DWS' time from the timeline (or DWS' own
    elapsedTimeLastState), the time before it from the previous state's
    end (what it was spent on, where known)."""
    tl = _dict(j.get("timeline"))
    timing = _dict(j.get("timing"))
    now = _num(j.get("now"))
    base = _num(j.get("t_submit"))
    starts = [_num((tl.get(s) or {}).get("asked")) for s in STATES]
    known = [t for t in starts if t is not None]
    if base is None and known:
        base = min(known)
    rows = []
    prev_done = _num(j.get("t_submit"))
    current = str(j.get("desired") or j.get("state") or "")
    for s in STATES:
        t = _dict(tl.get(s))
        asked, done = _num(t.get("asked")), _num(t.get("done"))
        if asked is None and done is None and s not in timing:
            continue
        at = f"+{duration(asked - base)}" if asked is not None and base is not None else "-"
        if asked is not None and done is not None:
            dws = duration(done - asked)
        elif asked is not None and now is not None and s == current \
                and j.get("phase") != INACTIVE:
            dws = f"{duration(now - asked)} so far"
        elif asked is not None and s not in timing:
            dws = "never done"
        else:
            dws = str(timing.get(s) or "-")
        before = "-"
        if asked is not None and prev_done is not None:
            before = duration(asked - prev_done)
            if s in GAP_WHY:
                before += f" ({GAP_WHY[s]})"
        rows.append((s, at, dws, before))
        prev_done = done
    return rows


def _dm_lines(j: dict[str, Any]) -> list[str]:
    out = []
    for dm in j.get("datamovements") or []:
        if not isinstance(dm, dict):
            continue
        cs = _dict(dm.get("commandStatus"))
        what = dm.get("initiator") or "data movement"
        state = " ".join(str(x) for x in (dm.get("state"), dm.get("status")) if x) or "?"
        line = f"  {what} {dm.get('source', '?')} -> {dm.get('destination', '?')}: {state}"
        if cs.get("progress") is not None:
            line += f", {cs['progress']}%"
        if cs.get("elapsedTime"):
            line += f" after {cs['elapsedTime']}"
        counts = [f"{cs[k]} {k}" for k in ("files", "directories", "bytes") if cs.get(k)]
        if counts:
            line += f" ({', '.join(counts)})"
        out.append(line)
        if cs.get("lastMessage"):
            out.append(f"      {cs['lastMessage']}")
        if dm.get("message"):
            out.append(f"      DWS: {dm['message']}")
    if j.get("datamovements_error"):
        out.append(f"  (cannot list them: {j['datamovements_error']})")
    return out or ["  (none)"]


def _prestage_lines(j: dict[str, Any]) -> list[str]:
    """A pre-staged job: what it holds ahead of its nodes, since when, and
    what it waits for (doc/guide/prestage.rst)."""
    p = _dict(j.get("prestage"))
    if not p:
        why = j.get("prestage_not")
        return [f"  not pre-staged: {why}"] if why else []
    gib = _num(p.get("gib")) or 0
    held = f"{int(gib)} GiB of rabbit ssd" if gib > 0 else "its persistent storage"
    since, now = _num(p.get("since")), _num(j.get("now"))
    chassis = _dict(p.get("chassis"))
    where = []
    if chassis:
        counts = _dict(chassis.get("counts"))
        where = ["  on " + ", ".join(f"{r} ({n} nodes)" for r, n in sorted(counts.items()))
                 + f": its nodes come from {chassis.get('hosts', '?')} alone"]
    if p.get("given_up"):
        return [f"  pre-staging given up: {p['given_up']}; its storage is torn down and set"
                " up again the usual way when its nodes come"]
    if p.get("nodes"):
        return [f"  pre-staged: set up and filled before its nodes ({held})", *where]
    ago = f" for {duration(now - since)}" if since and now and now >= since else ""
    line = f"  pre-staging: {held} set up ahead of its nodes{ago}"
    if p.get("ready") and p.get("node_wait"):
        line += ("; data in, waiting for the scheduler (given up after"
                 f" {duration(_num(p['node_wait']) or 0)} without its nodes)")
    elif p.get("ready"):
        line += "; data in, waiting for the scheduler"
    elif p.get("waiting"):
        line += f"; waiting: {p['waiting']}"
    else:
        line += "; Setup and DataIn before it is scheduled"
    return [line, *where, *_datain_lines(_dict(p.get("datain")))]


def _datain_lines(d: dict[str, Any]) -> list[str]:
    """A pre-staged DataIn watched for progress (rabbit.datain_stall_timeout):
    how far its data movements are, when they last moved, and the time
    left at the pace so far."""
    if not d:
        return []
    pct, moved, left = _num(d.get("percent")), _num(d.get("moved")), _num(d.get("left"))
    line = (f"  DataIn: {pct or 0:.0f}% of {d.get('dms', 0)} data movements"
            f" ({d.get('finished', 0)} finished)")
    if moved is not None:
        line += f", last moved {duration(moved)} ago"
    if left is not None:
        line += f", about {duration(left)} left"
    out = [line]
    if d.get("last"):
        out.append(f"      {d['last']}")
    if d.get("unread"):
        out.append(f"      (its data movements could not be listed: {d['unread']})")
    return out


def _usage_lines(j: dict[str, Any]) -> list[str]:
    """What its storage held and for how long (flux dws usage sums it)."""
    usage = _dict(j.get("usage"))
    if not usage:
        return []
    gib = _dict(usage.get("gib"))
    held = ", ".join(f"{g} GiB {t}" for t, g in sorted(gib.items())) or "no GiB"
    since, until = _num(usage.get("since")), _num(usage.get("until"))
    if since is None or until is None:
        return [f"  usage: {held}, held since its Workflow was created"]
    seconds = _dict(usage.get("gib_seconds")).values()
    hours = sum(v for v in seconds if isinstance(v, (int, float))) / 3600
    return [f"  usage: {held} for {duration(until - since)}: {hours:.2f} GiB-hours"]


# --- why: the rules that moved it ---------------------------------------------

def rule_words(rule: Any, state: Any = None) -> str:
    """A rule's words for people ("torn down: ... (in DataIn)"), from the
    engine's list; a rule this build does not know (an older record) is
    shown by its name."""
    words = RULE_WHY.get(str(rule), str(rule))
    return f"{words} (in {state})" if isinstance(state, str) and state else words


def why_step(line: Any) -> dict[str, Any] | None:
    """One step of a record's why ("MS RULE STEP IN FACTS": ms since its
    first step, the rule, the step, the state it asked for then or "-",
    the facts), as a dict; None for what is not one."""
    parts = str(line).split(" ", 4) if isinstance(line, str) else []
    if len(parts) < 4 or not parts[0].isdigit():
        return None
    return {"ms": int(parts[0]), "rule": parts[1], "step": parts[2],
            "in": "" if parts[3] == "-" else parts[3],
            "facts": parts[4] if len(parts) > 4 else ""}


def why_lines(j: dict[str, Any]) -> list[str]:
    """What moved the job: the rule that asked for each state, made it
    fail, made it wait (the engine's record, ``why``)."""
    why = _dict(j.get("why"))
    if not why:
        return []
    asked_in: dict[str, Any] = {}
    for line in why.get("steps") or []:  # the state the job was in when the rule chose
        step = why_step(line)
        if step:
            asked_in[step["rule"]] = step["in"]
    lines = ["why:"]
    states = _dict(why.get("states"))
    for state in STATES:
        if state in states:
            rule = str(states[state])
            lines.append(f"  {state}: {rule_words(rule, asked_in.get(rule))} [{rule}]")
    for key, title in (("prestage", "pre-staging"), ("release", "computes released"),
                       ("exception", "failed"), ("waiting", "waits")):
        named = why.get(key)
        if isinstance(named, str):
            lines.append(f"  {title}: {rule_words(named, asked_in.get(named))} [{named}]")
    return lines


def why_steps_lines(j: dict[str, Any]) -> list[str]:
    """``flux dws job --why``: every step the job took, with its rule, the
    state it was in and the facts that made the rule hold."""
    why = _dict(j.get("why"))
    steps = [s for s in (why_step(line) for line in why.get("steps") or []) if s]
    lines = ["steps (each with the rule that chose it):"]
    if not steps:
        return [*lines, "  (none recorded)"]
    if _num(why.get("dropped")):
        lines.append(f"  ({int(_num(why.get('dropped')) or 0)} older steps not kept)")
    t0 = _num(why.get("t0"))
    base = _num(j.get("t_submit")) or t0
    for s in steps:
        t = t0 + s["ms"] / 1000.0 if t0 is not None else None
        at = f"+{duration(t - base)}" if t is not None and base is not None else "-"
        lines.append(f"  {at:>8}  {s.get('rule')}: {s.get('step')}"
                     + (f" in {s['in']}" if s.get("in") else ""))
        lines.append(f"            {rule_words(s.get('rule'))}")
        if s.get("facts"):
            lines.append(f"            facts: {s['facts']}")
    return lines


def job_text(j: dict[str, Any], user: str | None = None, why_all: bool = False) -> str:
    """``flux dws job``: one job in full (``why_all``: every step with its
    rule, ``--why``)."""
    jid = shown_id(j)
    uid = j.get("userid")
    owner = f"{user} (uid {uid})" if user else f"uid {uid}"
    lines = [f"job {jid}: owner {owner}, Workflow {j.get('workflow', '-')}"]
    account = ", ".join(f"{k} {j[k]}" for k in ("bank", "project") if isinstance(j.get(k), str))
    if account:  # flux-accounting's
        lines.append(f"  {account}")
    if j.get("phase") == INACTIVE:
        lines.append(f"  inactive ({j.get('result') or 'ended'}); read from the job's KVS "
                     "record")
    elif j.get("source") == "kvs":  # active, but not from the service
        lines.append(f"  active, {j.get('phase')}; read from the job's KVS record")
    else:
        secs = _num(j.get("phase_seconds"))
        lines.append(f"  phase {j.get('phase')}: Workflow {_state_cell(j)}"
                     + (f" for {duration(secs)}" if secs is not None else "")
                     + (" (computes released, data still moving)" if j.get("released") else ""))
    if isinstance(j.get("waiting"), str) and j["waiting"]:
        lines.append(f"  waits for rabbit storage ([rabbit.limits]): {j['waiting']}")
    if j.get("hosts"):
        lines.append(f"  computes {j['hosts']}" + (f"; given up: {j['failed_hosts']}"
                                                   if j.get("failed_hosts") else ""))
    lines += _prestage_lines(j)
    lines += _datain_lines(_dict(j.get("datain")))  # in its prolog
    lines.append("storage:")
    lines += _directive_lines(j)
    lines += _usage_lines(j)
    env = _dict(j.get("env"))
    lines.append("mounts, as the job sees them:")
    lines += [f"  {k}={v}" for k, v in sorted(env.items())] or ["  (none yet)"]
    lines.append("timeline:")
    rows = timeline_rows(j)
    if rows:
        titles = ("STATE", "ASKED", "DWS TOOK", "BEFORE IT (FLUX)")
        w = [max(len(r[i]) for r in [titles, *rows]) for i in range(3)]
        for r in [titles, *rows]:
            lines.append(f"  {r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}")
    else:
        lines.append("  (nothing recorded yet)")
    lines += why_lines(j)
    if why_all:
        lines += why_steps_lines(j)
    lines.append("data movement:")
    lines += _dm_lines(j)
    for k in ("dataout", "teardown"):
        rec = j.get(k)
        if isinstance(rec, dict):
            lines.append(f"{k}: {rec.get('state', '?')}"
                         + (f": {rec['error']}" if rec.get("error") else "")
                         + (f"{SEPARATOR}{rec['explanation']}"
                            if rec.get("error") and rec.get("explanation") else ""))
    error = j.get("error")
    if isinstance(error, str) and error:
        e = explained(error, _str_or_none(j.get("explanation")))
        lines.append("error:")
        if e.sentence:
            lines.append(f"  {e.sentence}")
        lines.append(f"  DWS said: {e.text}" if e.sentence else f"  {e.text}")
    keys = j.get("record_keys")
    if isinstance(keys, list) and keys:
        lines.append(f"record (flux job info {jid} KEY):")
        what = dict(RECORD_KEYS)
        grouped: dict[str, list[str]] = {}
        for k in keys:
            head, _, state = str(k).rpartition(".")
            if head + "." in (KVS_TIMING, KVS_TIMELINE):
                grouped.setdefault(head, []).append(state)
                if len(grouped[head]) > 1:
                    continue
                lines.append(head)  # filled in below
            else:
                lines.append(f"  {k}: {what.get(k, '')}")
        for head, states in grouped.items():
            why = ("DWS' own time in each state" if head + "." == KVS_TIMING
                   else "when each state was asked for and done")
            lines[lines.index(head)] = f"  {head}.<state>: {why} ({', '.join(states)})"
    return "\n".join(lines)
