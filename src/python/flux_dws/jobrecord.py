"""A rabbit job's KVS record, read: the view ``flux dws job`` and ``flux
dws jobs`` show of a job the dws service does not answer for (ended, or
no service loaded), and what the record adds to any view.  No I/O: the
commands read the keys (through job-info, so that a user reads only
their own), this reads them.

The view's shape has one author, the engine (libdws engine/views/jobview.c):
it answers ``dws.job`` with it and writes the same into the job's KVS
directory (``RECORD_KEY``, ``data.dws.job``) each time it changes, the
last time before the job's epilog ends.  Read back, it is the job as its
last answer showed it; the reader says only where it was read from
(``phase``: a reader's word of libdws' list, ``source``: "kvs") and adds
what the KVS keeps beside it (``with_record``).

A record written before the engine wrote ``RECORD_KEY`` (or of a job the
service never made a Workflow for) is read by ``from_record``, the
reader of that older layout: the Workflow as last saved, the per-state
keys, the eventlog and the jobspec.  It is kept for those records only.
"""

from __future__ import annotations

import json
from typing import Any

from flux_dws.libdws import _ffi
from flux_dws.libdws.directives import DirectiveError, parse_directive, split_directives
from flux_dws.libdws.engine import PHASE_IDS, RECORD_KEY
from flux_dws.libdws.explain import EVENT as EXPLAIN_EVENT
from flux_dws.libdws.explain import KVS_KEY as EXPLAIN_KEY
from flux_dws.libdws.wfstates import STATES  # Workflow states, in order (the timeline's rows)

#: the reader's phase words (libdws engine.h's one list)
INACTIVE = PHASE_IDS["INACTIVE"]
UNKNOWN = PHASE_IDS["UNKNOWN"]
NO_WORKFLOW = PHASE_IDS["NO_WORKFLOW"]


def _kvs_key(name: str) -> str:
    return str(_ffi.ffi.string(getattr(_ffi.lib, name)).decode())


# The keys of the record, from libdws wire/jobkvs.h (each written once):
#: what every key starts with
KVS_PREFIX = _kvs_key("DWS_JOBKVS_PREFIX")
KVS_WORKFLOW = _kvs_key("DWS_JOBKVS_WORKFLOW")
#: KVS_TIMING + a state's name in lower case (timing_key)
KVS_TIMING = _kvs_key("DWS_JOBKVS_TIMING")
#: KVS_TIMELINE + a state's name in lower case (timeline_key)
KVS_TIMELINE = _kvs_key("DWS_JOBKVS_TIMELINE")
KVS_DATAOUT = _kvs_key("DWS_JOBKVS_DATAOUT")
KVS_TEARDOWN = _kvs_key("DWS_JOBKVS_TEARDOWN")
KVS_DATAMOVEMENTS = _kvs_key("DWS_JOBKVS_DATAMOVEMENTS")
KVS_CONTAINER_LOG = _kvs_key("DWS_JOBKVS_CONTAINER_LOG")
#: the reference's memo with the job's Workflow name, and its KVS link to
#: KVS_WORKFLOW (timing_link: the links to the timing keys)
MEMO_WORKFLOW = _kvs_key("DWS_JOBKVS_MEMO_WORKFLOW")
_LINK_TIMING = (_kvs_key("DWS_JOBKVS_LINK_TIMING_PREFIX"),
                _kvs_key("DWS_JOBKVS_LINK_TIMING_SUFFIX"))
#: the view's outcome fields and the keys they are kept under
OUTCOME_KEYS = (("dataout", KVS_DATAOUT), ("teardown", KVS_TEARDOWN))


def timing_link(state: str) -> str:
    """The reference's KVS link to a Workflow state's timing key."""
    return _LINK_TIMING[0] + state.lower() + _LINK_TIMING[1]


def timing_key(state: str) -> str:
    """The key of DWS' own time in a Workflow state."""
    return KVS_TIMING + state.lower()


def timeline_key(state: str) -> str:
    """The key of when a Workflow state was asked for and done."""
    return KVS_TIMELINE + state.lower()


#: the job's KVS record (RFC 16 keys under its directory): what each holds
RECORD_KEYS = [
    (RECORD_KEY, "the job as flux dws job showed it last (the engine's view)"),
    (KVS_WORKFLOW, "the Workflow as it last was (directives, state, env)"),
    *((timing_key(s), f"DWS' own time in {s}") for s in STATES),
    *((timeline_key(s), f"when {s} was asked for and done") for s in STATES),
    (KVS_DATAOUT, "what became of copy_out (complete, failed, skipped)"),
    (EXPLAIN_KEY, "the exception's note and what it means, in plain words"),
    (KVS_TEARDOWN, "when the storage was torn down"),
    (KVS_DATAMOVEMENTS, "the data movements, as DWS last showed them"),
    (KVS_CONTAINER_LOG, "the user container's log"),
]
#: what a dws.job answer has that the record has not (or has otherwise):
#: the answer's own success, the time in the phase as it is asked, the
#: data movements listed for it (the record's: those saved before
#: Teardown)
ANSWER_ONLY = ("success", "phase_seconds", "datamovements", "datamovements_error")


def number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def as_dict(value: Any) -> dict[str, Any]:
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


# --- the engine's record -----------------------------------------------------------

def recorded(jobid: int, record: dict[str, Any]) -> dict[str, Any] | None:
    """The engine's record of the job (RECORD_KEY), or None when the
    record has none (an older layout, or no Workflow ever)."""
    view = _json(record.get(RECORD_KEY))
    if isinstance(view, dict) and view.get("id") == jobid:
        return view
    return None


def stored_view(jobid: int, record: dict[str, Any], phase: str = INACTIVE,
                job: dict[str, Any] | None = None) -> dict[str, Any]:
    """The job as its KVS record shows it: ``record`` maps the keys read
    (RECORD_KEYS, "eventlog", "jobspec") to their values (missing keys
    absent), ``phase`` is the reader's word for where the job is (INACTIVE,
    UNKNOWN, NO_WORKFLOW), ``job`` its job-list entry, if any."""
    view = recorded(jobid, record)
    if view is None:
        view = from_record(jobid, record, job)
    view = {**view, "phase": phase, "source": "kvs"}
    return with_record(view, record, job)


def with_record(view: dict[str, Any], record: dict[str, Any],
                job: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the KVS keeps beside the engine's view, added to it (from the
    service or from the record alike): the keys there are, DWS' own time
    in each state, the states asked for before this service started, the
    submit time, the plain sentence recorded beside the error, what became
    of copy_out and of the storage, and the job-list's result."""
    tl = view.setdefault("timeline", {})
    timing: dict[str, str] = {}
    for s in STATES:
        t = _json(record.get(timeline_key(s)))
        if isinstance(t, dict) and s not in tl:
            tl[s] = {k: v for k, v in t.items() if k in ("asked", "done")
                     and number(v) is not None}
        g = _json(record.get(timing_key(s)))
        if isinstance(g, str) and g:
            timing[s] = g
    view["timing"] = timing
    view["record_keys"] = [k for k, _ in RECORD_KEYS if k in record]
    explanations: dict[str, str] = {}  # note -> its sentence, as recorded
    fatal = None
    for e in eventlog_entries(record.get("eventlog")):
        ctx = as_dict(e.get("context"))
        if e["name"] == "submit" and number(e.get("timestamp")) is not None:
            view["t_submit"] = number(e.get("timestamp"))
        elif e["name"] == "exception" and ctx.get("severity") == 0 and fatal is None:
            fatal = str(ctx.get("note") or ctx.get("type") or "exception")
        elif e["name"] == EXPLAIN_EVENT and isinstance(ctx.get("explanation"), str):
            explanations.setdefault(str(ctx.get("note")), ctx["explanation"])
    kept = _json(record.get(EXPLAIN_KEY))
    if isinstance(kept, dict) and isinstance(kept.get("explanation"), str):
        explanations.setdefault(str(kept.get("note")), kept["explanation"])
    if not view.get("error") and fatal is not None:  # raised by another than the engine
        view["error"] = fatal
    if view.get("error") in explanations:
        view["explanation"] = explanations[view["error"]]
    for k, key in OUTCOME_KEYS:
        v = _json(record.get(key))
        if isinstance(v, dict):
            view[k] = v
    for k in ("result", "t_inactive", "t_submit"):
        if job and k in job and k not in view:
            view[k] = job[k]
    return view


# --- the older layout ----------------------------------------------------------------

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
    """The ``dws.job`` shape for a job from a KVS record of the older
    layout (no RECORD_KEY): ``record`` maps the keys read (RECORD_KEYS,
    "eventlog", "jobspec") to their values (missing keys absent); ``job``
    is its job-list entry, if any."""
    job = job or {}
    wf = _json(record.get(KVS_WORKFLOW))
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
        ctx = as_dict(e.get("context"))
        if e["name"] == "submit":
            submit = number(e.get("timestamp"))
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
    dataout = _json(record.get(KVS_DATAOUT))
    if error is None and isinstance(dataout, dict) and dataout.get("state") == "failed":
        error = f"copy_out failed: {dataout.get('error') or 'no reason recorded'}"
    timeline: dict[str, dict[str, float]] = {}
    timing: dict[str, str] = {}
    for s in STATES:
        t = _json(record.get(timeline_key(s)))
        if isinstance(t, dict):
            timeline[s] = {k: v for k, v in t.items() if k in ("asked", "done")
                           and number(v) is not None}
        g = _json(record.get(timing_key(s)))
        if isinstance(g, str) and g:
            timing[s] = g
    dms = _json(record.get(KVS_DATAMOVEMENTS))
    view: dict[str, Any] = {
        "id": jobid, "userid": userid, "workflow": memo.get(MEMO_WORKFLOW) or
        (wf.get("metadata") or {}).get("name") or f"fluxjob-{jobid}",
        "phase": INACTIVE, "state": st.get("state", ""), "status": st.get("status", ""),
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
    for k, key in OUTCOME_KEYS:
        v = _json(record.get(key))
        if isinstance(v, dict):
            view[k] = v
    for k in ("result", "t_inactive", "t_submit"):
        if k in job and k not in view:
            view[k] = job[k]
    return view
