"""``flux dws status``: the dws service's live view.

Asks the running service (``dws.status`` on the enclosing Flux instance)
for its jobs, each one's phase (where the engine has it in its
Workflow's life), their Workflow states and what each waits for, plus the
service's own figures; ``--json`` prints the answer as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from flux_dws import textfmt
from flux_dws.fluxutil import FluxUnavailable, ask_dws


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("status", help="the dws service's jobs, states and figures")
    p.add_argument("--json", action="store_true", help="print the raw dws.status answer")
    p.set_defaults(func=run)


def _state(job: dict[str, Any]) -> str:
    desired, state = job.get("desired", ""), job.get("state", "")
    if job.get("status") == "Error":
        return f"{state} Error"
    if state == desired and job.get("ready"):
        return f"{state} ready"
    return f"{state or '-'} -> {desired}" if state != desired else f"{state} {job.get('status')}"


def _released(job: dict[str, Any]) -> str:
    """'[computes released, N ssds held, phase for T] ' for a job whose
    computes went back after PostRun (release_computes), else ''."""
    if not job.get("released"):
        return ""
    held = job.get("held_ssds") or 0
    since = job.get("phase_seconds")
    age = f", {job.get('phase', '')} for {since:.0f}s" if isinstance(since, (int, float)) \
        else ""
    return f"[computes released, {held} ssd{'' if held == 1 else 's'} held{age}] "


def _jobid(job: dict[str, Any]) -> str:
    """The job's id as flux-core prints it for people (textfmt.f58)."""
    jid = job.get("id")
    if isinstance(jid, int) and not isinstance(jid, bool) and 0 <= jid < 1 << 64:
        return textfmt.f58(jid)
    return str(jid if jid is not None else "")


def _watch_line(w: dict[str, Any]) -> str:
    """'watch Workflow: watching at resourceVersion 812, heard 0.4 s ago, ...'
    (a watch's state: flux_dws.k8s.watching.KindWatch.view)."""
    heard = w.get("heard_s")
    line = (f"watch {w.get('kind')}: {w.get('state')} at resourceVersion "
            f"{w.get('resource_version') or '-'}, heard "
            f"{'-' if not isinstance(heard, (int, float)) else f'{heard:.1f} s ago'}, "
            f"{w.get('unsettled', 0)} unsettled; lists {w.get('lists', 0)}, reconnects "
            f"{w.get('reconnects', 0)}, heals {w.get('heals', 0)}")
    return line + (f"; last error: {w['last_error']}" if w.get("last_error") else "")


def format_status(st: dict[str, Any]) -> str:
    """The table ``flux dws status`` prints (also used by the demo)."""
    released = [j for j in st.get("jobs", []) if j.get("released")]
    held = sum(j.get("held_ssds") or 0 for j in released)
    lines = [f"synced: {'yes' if st.get('synced') else 'no (starting)'}; "
             f"{st.get('rabbits', 0)} rabbits, {st.get('computes', 0)} computes; "
             f"{len(st.get('jobs', []))} jobs"
             + (f", {len(released)} with computes released ({held} ssds held)"
                if released else "")]
    svc = st.get("service") or {}
    if svc:
        oldest = svc.get("k8s_oldest_pending_s")
        lines.append(f"events {svc.get('events')}, reaction p50/p99 "
                     f"{svc.get('reaction_ms_p50')}/{svc.get('reaction_ms_p99')} ms "
                     f"(waiting for the reactor {svc.get('reactor_wait_ms_p50')}/"
                     f"{svc.get('reactor_wait_ms_p99')} ms, for a writer "
                     f"{svc.get('writer_wait_ms_p50')}/{svc.get('writer_wait_ms_p99')} ms)")
        lines.append(f"load: events behind {svc.get('events_behind', 0)}, k8s writes pending "
                     f"{svc.get('k8s_pending')} (oldest "
                     f"{'-' if oldest is None else f'{oldest:.3f} s'}), flux calls pending "
                     f"{svc.get('flux_pending', 0)} ({svc.get('rpcs_waiting', 0)} RPCs"
                     " waiting to be sent)")
        lines += [_watch_line(w) for w in svc.get("watches") or [] if isinstance(w, dict)]
    jobs = sorted(st.get("jobs", []), key=lambda j: j.get("id", 0))
    if jobs:
        lines.append(f"{'JOBID':>10} {'WORKFLOW':<18} {'PHASE':<12} {'STATE':<22} {'HOSTS':<16} "
                     f"{'TIMERS':<16} MESSAGE")
        for j in jobs:
            lines.append(f"{_jobid(j):>10} {j.get('workflow', ''):<18} "
                         f"{j.get('phase', '-'):<12} {_state(j):<22} "
                         f"{j.get('hosts', '-'):<16} {','.join(j.get('timers', [])) or '-':<16} "
                         f"{_released(j)}{j.get('message', '')}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        st = ask_dws("dws.status")
    except FluxUnavailable as exc:
        print(f"flux-dws status: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(st, indent=1) if args.json else format_status(st))
    return 0
