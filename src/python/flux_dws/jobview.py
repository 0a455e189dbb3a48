"""A rabbit job as its owner sees it: the data of ``flux dws jobs`` and
``flux dws job``, and their text.  No I/O: the commands (flux_dws.cli.jobs,
flux_dws.cli.job) fetch, this shapes and words.

An active job comes from the dws service (``dws.jobs``, ``dws.job``); an
inactive one from its KVS record (RFC 16: ``data.dws.*`` keys, the
eventlog, the jobspec), read through job-info so that a user reads only
their own.  Both give the same dictionary (the ``dws.job`` answer's
shape), so one formatter prints either.  Nothing secret is kept from the
KVS copy of the Workflow: not its token reference, not the object itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flux_dws import textfmt
from flux_dws.directives import DirectiveError, parse_directive, split_directives
from flux_dws.explain import EVENT as EXPLAIN_EVENT
from flux_dws.explain import KVS_KEY as EXPLAIN_KEY
from flux_dws.explain import explain
from flux_dws.wfstates import STATES  # Workflow states, in order (the timeline's rows)

#: what the time before a state was spent on, where it is not Flux's own
#: work (the gap between the previous state's end and this one's start)
GAP_WHY = {"Proposal": "submit to Workflow", "Setup": "waiting for resources",
           "PostRun": "the job ran"}
#: the job's KVS record (RFC 16 keys under its directory): what each holds
RECORD_KEYS = [
    ("data.dws.workflow", "the Workflow as it last was (directives, state, env)"),
    *((f"data.dws.timing.{s.lower()}", f"DWS' own time in {s}") for s in STATES),
    *((f"data.dws.timeline.{s.lower()}", f"when {s} was asked for and done") for s in STATES),
    ("data.dws.dataout", "what became of copy_out (complete, failed, skipped)"),
    (EXPLAIN_KEY, "the exception's note and what it means, in plain words"),
    ("data.dws.teardown", "when the storage was torn down"),
    ("data.dws.datamovements", "the data movements, as DWS last showed them"),
    ("data.dws.container_log", "the user container's log"),
]
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


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


# --- the record of an inactive job, from the KVS -----------------------------------

def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def eventlog_entries(text: Any) -> list[dict[str, Any]]:
    """An eventlog (RFC 18: one JSON object per line), malformed lines skipped."""
    out: list[dict[str, Any]] = []
    for line in str(text or "").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict) and isinstance(e.get("name"), str):
            out.append(e)
    return out


def _directives(dw: Any) -> list[dict[str, Any]]:
    """A dw attribute's directives as the service sends them ({command,
    args, directive}), split and tokenised by libdws; one it cannot
    tokenise keeps its text with command '?'."""
    try:
        texts = split_directives(dw)
    except DirectiveError:
        return []
    out: list[dict[str, Any]] = []
    for text in texts:
        try:
            command, args = parse_directive(text)
        except DirectiveError:
            out.append({"command": "?", "args": {}, "directive": text})
            continue
        out.append({"command": command, "args": {k: v or "" for k, v in args},
                    "directive": text})
    return out


def safe_env(env: Any) -> dict[str, str]:
    """The Workflow's env as the job sees it: DW_* and NNF_* only."""
    if not isinstance(env, dict):
        return {}
    return {str(k): str(v) for k, v in env.items()
            if isinstance(v, str) and (str(k).startswith("DW_") or str(k).startswith("NNF_"))}


def _datamovement(dm: Any) -> dict[str, Any]:
    """A saved NnfDataMovement, reduced as the service reduces one."""
    if not isinstance(dm, dict):
        return {}
    meta, spec = dm.get("metadata") or {}, dm.get("spec") or {}
    st, labels = dm.get("status") or {}, (dm.get("metadata") or {}).get("labels") or {}
    out: dict[str, Any] = {
        "name": meta.get("name"), "initiator": labels.get("dm.cray.hpe.com/initiator"),
        "source": (spec.get("source") or {}).get("path"),
        "destination": (spec.get("destination") or {}).get("path")}
    for k in ("state", "status", "message", "startTime", "endTime", "restarts"):
        if k in st:
            out[k] = st[k]
    cs = st.get("commandStatus")
    if isinstance(cs, dict):
        out["commandStatus"] = {k: v for k, v in cs.items() if k != "command"}
    return out


def from_record(jobid: int, record: dict[str, Any], job: dict[str, Any] | None = None
                ) -> dict[str, Any]:
    """The ``dws.job`` shape for a job from its KVS record: ``record`` maps
    the keys read (RECORD_KEYS, "eventlog", "jobspec") to their values
    (missing keys absent); ``job`` is its job-list entry, if any."""
    job = job or {}
    wf = _json(record.get("data.dws.workflow"))
    wf = wf if isinstance(wf, dict) else {}
    spec, st = wf.get("spec") or {}, wf.get("status") or {}
    events = eventlog_entries(record.get("eventlog"))
    jobspec = _json(record.get("jobspec"))
    dw: Any = None
    if isinstance(jobspec, dict):
        dw = ((jobspec.get("attributes") or {}).get("system") or {}).get("dw")
    dws_dw = spec.get("dwDirectives")
    directives = _directives(dws_dw if isinstance(dws_dw, list) else dw)
    userid = job.get("userid")
    error = None
    explanations: dict[str, str] = {}  # note -> its sentence, as recorded
    submit = None
    memo: dict[str, Any] = {}
    for e in events:
        ctx = _dict(e.get("context"))
        if e["name"] == "submit":
            submit = _num(e.get("timestamp"))
            userid = ctx.get("userid", userid)
        elif e["name"] == "exception" and ctx.get("severity") == 0 and error is None:
            error = str(ctx.get("note") or ctx.get("type") or "exception")
        elif e["name"] == EXPLAIN_EVENT and isinstance(ctx.get("explanation"), str):
            explanations.setdefault(str(ctx.get("note")), ctx["explanation"])
        elif e["name"] == "memo":
            memo.update(ctx)
    kept = _json(record.get(EXPLAIN_KEY))
    if isinstance(kept, dict) and isinstance(kept.get("explanation"), str):
        explanations.setdefault(str(kept.get("note")), kept["explanation"])
    dataout = _json(record.get("data.dws.dataout"))
    if error is None and isinstance(dataout, dict) and dataout.get("state") == "failed":
        error = f"copy_out failed: {dataout.get('error') or 'no reason recorded'}"
    timeline: dict[str, dict[str, float]] = {}
    timing: dict[str, str] = {}
    for s in STATES:
        t = _json(record.get(f"data.dws.timeline.{s.lower()}"))
        if isinstance(t, dict):
            timeline[s] = {k: v for k, v in t.items() if k in ("asked", "done")
                           and _num(v) is not None}
        g = _json(record.get(f"data.dws.timing.{s.lower()}"))
        if isinstance(g, str) and g:
            timing[s] = g
    dms = _json(record.get("data.dws.datamovements"))
    view: dict[str, Any] = {
        "id": jobid, "userid": userid, "workflow": memo.get("rabbit_workflow") or
        (wf.get("metadata") or {}).get("name") or f"fluxjob-{jobid}",
        "phase": "inactive", "state": st.get("state", ""), "status": st.get("status", ""),
        "ready": bool(st.get("ready")), "message": st.get("message", ""),
        "directives": directives, "env": safe_env(st.get("env")), "timeline": timeline,
        "timing": timing, "datamovements": [_datamovement(d) for d in dms]
        if isinstance(dms, list) else [], "source": "kvs",
        "record_keys": [k for k, _ in RECORD_KEYS if k in record]}
    if memo.get("rabbits"):
        view["rabbits"] = memo["rabbits"]
    if submit is not None:
        view["t_submit"] = submit
    if error is not None:
        view["error"] = error
        if error in explanations:
            view["explanation"] = explanations[error]
    for k in ("dataout", "teardown"):
        v = _json(record.get(f"data.dws.{k}"))
        if isinstance(v, dict):
            view[k] = v
    for k in ("result", "t_inactive", "t_submit"):
        if k in job and k not in view:
            view[k] = job[k]
    return view


# --- text ------------------------------------------------------------------------

def _state_cell(j: dict[str, Any]) -> str:
    state, status = str(j.get("state") or ""), str(j.get("status") or "")
    if j.get("phase") == "inactive":
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


def shown_id(j: dict[str, Any]) -> str:
    """The job's id as flux-core prints it for people (textfmt.f58: "ƒ"
    in a UTF-8 locale); the view's own "f58" (plain, as JSON carries it)
    where its id is not a job id."""
    jid = j.get("id")
    if isinstance(jid, int) and not isinstance(jid, bool) and 0 <= jid < 1 << 64:
        return textfmt.f58(jid)
    return str(j.get("f58") or jid)


def jobs_lines(jobs: list[dict[str, Any]], now: float, users: dict[int, str] | None = None
               ) -> list[str]:
    """The ``flux dws jobs`` table (a header, then a line per job, oldest
    first)."""
    users = users or {}
    rows = []
    for j in sorted(jobs, key=lambda j: int(j.get("id") or 0)):
        uid = j.get("userid")
        if j.get("phase") == "inactive":
            since = _num(j.get("t_inactive"))
            time = f"{duration(now - since)} ago" if since is not None else "-"
        else:
            secs = _num(j.get("phase_seconds"))
            time = duration(secs) if secs is not None else "-"
        rows.append([shown_id(j),
                     users.get(uid, str(uid)) if isinstance(uid, int) else "-",
                     str(j.get("phase") or "-"), _state_cell(j),
                     directives_short(j.get("directives")), str(j.get("rabbits") or "-"),
                     time, error_short(j)])
    head = ["JOBID", "USER", "PHASE", "STATE", "DIRECTIVES", "RABBITS", "TIME", "ERROR"]
    table = [head, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(head) - 1)]
    return [(" ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True))
             + " " + r[-1]).rstrip() for r in table]


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
                and j.get("phase") != "inactive":
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


def job_text(j: dict[str, Any], user: str | None = None) -> str:
    """``flux dws job``: one job in full."""
    jid = shown_id(j)
    uid = j.get("userid")
    owner = f"{user} (uid {uid})" if user else f"uid {uid}"
    lines = [f"job {jid}: owner {owner}, Workflow {j.get('workflow', '-')}"]
    if j.get("phase") == "inactive":
        lines.append(f"  inactive ({j.get('result') or 'ended'}); read from the job's KVS "
                     "record")
    elif j.get("source") == "kvs":  # active, but not from the service
        lines.append(f"  active, {j.get('phase')}; read from the job's KVS record")
    else:
        secs = _num(j.get("phase_seconds"))
        lines.append(f"  phase {j.get('phase')}: Workflow {_state_cell(j)}"
                     + (f" for {duration(secs)}" if secs is not None else "")
                     + (" (computes released, data still moving)" if j.get("released") else ""))
    if j.get("hosts"):
        lines.append(f"  computes {j['hosts']}" + (f"; given up: {j['failed_hosts']}"
                                                   if j.get("failed_hosts") else ""))
    lines.append("storage:")
    lines += _directive_lines(j)
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
            if head in ("data.dws.timing", "data.dws.timeline"):
                grouped.setdefault(head, []).append(state)
                if len(grouped[head]) > 1:
                    continue
                lines.append(head)  # filled in below
            else:
                lines.append(f"  {k}: {what.get(k, '')}")
        for head, states in grouped.items():
            why = ("DWS' own time in each state" if head.endswith("timing")
                   else "when each state was asked for and done")
            lines[lines.index(head)] = f"  {head}.<state>: {why} ({', '.join(states)})"
    return "\n".join(lines)
