"""``flux dws rabbits``: the health of each rabbit and of its computes.

Asks the running service (``dws.rabbits`` on the enclosing Flux instance)
what it knows of each rabbit: its Storage object, what Fluxion has for its
ssd vertices, the jobs using it, the ssd vertices jobs hold down until their
Teardown, and for each of its computes the PCIe link, drains, properties and
the SystemStatus flux-dws last wrote, and its space (total, used, free: the
sum of its Storage's drives, what allocations hold, its Storage's
``status.capacity``).  Prints a summary line and a table (one line per
rabbit) in the format ``-o`` names (flux_dws.cli.outputformat: FIELDS,
PRESETS; the default fits 80 columns, the reason last, never cut when
the output is not a terminal); ``-v`` selects the long format and adds a
line per compute that is not plainly healthy and one per job holding
ssds, ``-vv`` one per compute and the held vertices' names; ``--json``
prints the answer as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from flux_dws import users
from flux_dws.cli import argtypes, rabbitdrain
from flux_dws.cli.outputformat import HELP, Field, OutputFormat, Preset, Table, terminal_width
from flux_dws.fluxutil import FluxUnavailable, ask_dws
from flux_dws.inputfile import one_line
from flux_dws.libdws.engine import EngineError
from flux_dws.libdws.hostlist import Hostlist, HostlistError
from flux_dws.textfmt import duration, f58, size

TOPIC = "dws.rabbits"

#: Narrowest the reason (the last column) is cut to on a terminal.
MIN_WHY = 24
GiB = 1 << 30

FIELDS = {
    "name": Field("RABBIT", "the rabbit's name"),
    "storage": Field("STORAGE", "its Storage's status (/reboot when it needs one)"),
    "state": Field("STATE", "its Storage's spec.state (/mode when not Live)"),
    "fluxion": Field("FLUXION", "its ssd vertices in Fluxion: up, down, pending, mixed"),
    "computes": Field("COMPUTES", "how many computes it serves", int),
    "links_down": Field("LINKS-DOWN", "its computes whose link is not Ready", int),
    "fenced": Field("FENCED", "its computes fenced", int),
    "drained": Field("DRAINED", "its computes drained", int),
    "jobs": Field("JOBS", "Flux jobs whose Workflows use it", int),
    "held": Field("HELD", "its ssd vertices jobs hold down until their Teardown", int),
    "ssds": Field("SSDS", "its ssd vertices in Fluxion's graph", int),
    "total": Field("TOTAL", "its ssd's size"),
    "used": Field("USED", "what allocations hold on it"),
    "free": Field("FREE", "what is free (its Storage's status.capacity)"),
    "lustre_gib": Field("LUSTRE-GIB", "GiB spread Lustre holds of its total"),
    "message": Field("MESSAGE", "its Storage's status message"),
    "drain_date": Field("DRAIN-DATE", "when it was drained"),
    "drain_reason": Field("DRAIN-REASON", "why it was drained"),
    "drained_by": Field("DRAINED-BY", "who drained it (flux dws rabbits drain)"),
    "why": Field("WHY", "why it is down, or why it is used though not Ready"),
}
PRESETS = {
    "default": Preset("what fits a terminal of 80 columns, then the reason",
                      "+:{name} +:{storage} +:{fluxion} +:{computes:>} +:{drained:>}"
                      " +:{jobs:>} {why}"),
    "long": Preset("every count, space and the reason (-v)",
                   "+:{name}  +:{storage}  +:{state}  +:{fluxion}  +:{computes:>}"
                   "  +:{links_down:>}  +:{fenced:>}  +:{drained:>}  +:{jobs:>}  +:{held:>}"
                   "  +:{total:>}  +:{used:>}  +:{free:>}  +:{lustre_gib:>}  {why}"),
    "space": Preset("the rabbit's space and who holds it",
                    "+:{name} +:{total:>} +:{used:>} +:{free:>} +:{lustre_gib:>}"
                    " +:{jobs:>} +:{held:>} +:{fluxion}"),
    "drain": Preset("the drain: when, by whom, why (whole)",
                    "+:{name} +:{storage} +:{fluxion} ?+:{drain_date} ?+:{drained_by}"
                    " {drain_reason}"),
}
TABLE = Table("flux dws rabbits", FIELDS, PRESETS)


class AnswerError(Exception):
    """The dws.rabbits answer does not have the documented shape."""


class UnknownRabbits(Exception):
    """Rabbits asked for by name that the service does not know."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        super().__init__(f"unknown rabbit{'' if len(names) == 1 else 's'}: "
                         f"{Hostlist(names).sorted().encode()}")


def hostlist_arg(text: str) -> Hostlist:
    """argparse ``type=`` for an RFC 29 hostlist of rabbits."""
    try:
        return Hostlist(argtypes.text(text))
    except HostlistError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "rabbits", help="the health of each rabbit and its computes",
        description="Show the health of each rabbit and its computes, as the dws"
                    " service sees them.")
    p.add_argument("rabbits", nargs="*", type=hostlist_arg, metavar="RABBIT",
                   help="only these rabbits (RFC 29 hostlists, e.g. rabbit[01-04])")
    TABLE.add_options(p, json_help="print the dws.rabbits answer (its rabbits filtered by"
                                   " RABBIT and --down)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="the long format, and a line per compute that is not healthy"
                        " (-vv: every compute)")
    p.add_argument("--down", action="store_true",
                   help="only rabbits that are down or have a compute that is not healthy")
    p.set_defaults(func=run)
    rabbitdrain.add_verbs(p)


# --- reading the answer --------------------------------------------------------


def _dicts(value: Any, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise AnswerError(f"{what} is not a list of objects")
    return value


def rabbits_of(answer: Any) -> list[dict[str, Any]]:
    """The rabbits of a dws.rabbits answer; AnswerError if it is not one."""
    if not isinstance(answer, dict):
        raise AnswerError("not a JSON object")
    rabbits = _dicts(answer.get("rabbits"), "'rabbits'")
    for r in rabbits:
        if not isinstance(r.get("name"), str):
            raise AnswerError("a rabbit without a 'name'")
        _dicts(r.get("computes"), f"rabbit {r['name']}: 'computes'")
        if r.get("storage") is not None and not isinstance(r["storage"], dict):
            raise AnswerError(f"rabbit {r['name']}: 'storage' is not an object")
        if r.get("jobs") is not None and not isinstance(r["jobs"], list):
            raise AnswerError(f"rabbit {r['name']}: 'jobs' is not a list")
        for h in _dicts(r.get("held"), f"rabbit {r['name']}: 'held'"):
            if not isinstance(h.get("ssds"), list):
                raise AnswerError(f"rabbit {r['name']}: a 'held' entry without 'ssds'")
        for key in ("capacity", "free", "used", "lustre_gib"):
            v = r.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise AnswerError(f"rabbit {r['name']}: '{key}' is not a count")
    return rabbits


def _computes(rabbit: dict[str, Any]) -> list[dict[str, Any]]:
    return rabbit.get("computes") or []


def _held(rabbit: dict[str, Any]) -> list[dict[str, Any]]:
    return rabbit.get("held") or []


def held_ssds(rabbit: dict[str, Any]) -> int:
    """How many of the rabbit's ssd vertices some job holds."""
    return len({p for h in _held(rabbit) for p in h.get("ssds") or []})


def _text(value: Any) -> str:
    """A value as one line of text ('' for None)."""
    return "" if value is None else one_line(str(value))


def is_down(rabbit: dict[str, Any]) -> bool:
    return rabbit.get("up") is not True


def link_down(compute: dict[str, Any]) -> bool:
    """The compute's PCIe link is anything but Ready or Degraded (not
    reported counts): DWS' Degraded is ready, in a degraded state."""
    return compute.get("link") not in ("Ready", "Degraded")


def is_fenced(compute: dict[str, Any]) -> bool:
    """nnf-sos fenced the compute: DWS fails every Workflow that uses it."""
    return compute.get("fenced") is True or compute.get("link") == "Fenced"


def is_drained(compute: dict[str, Any]) -> bool:
    return compute.get("drained") is not None


def problems(compute: dict[str, Any]) -> list[str]:
    """What is not healthy about a compute, most telling first and the drain
    reason (which may be long) last; [] when it is plainly healthy."""
    out = []
    if is_fenced(compute):
        out.append("fenced (rabbit jobs fail here)")
    elif link_down(compute):
        link = compute.get("link")
        out.append("link not reported" if link is None else f"link {_text(link)}")
    if compute.get("online") is False:
        out.append("offline")
    if compute.get("excluded"):
        out.append("excluded")
    if compute.get("badrabbit"):
        out.append("badrabbit")
    if compute.get("alloc_rabbit"):
        out.append("alloc_rabbit")
    if compute.get("systemstatus") == "Disabled":
        out.append("SystemStatus Disabled")
    if is_drained(compute):
        reason = _text(compute.get("drained"))
        out.append(f"drained: {reason}" if reason else "drained")
    return out


def unhealthy(rabbit: dict[str, Any]) -> bool:
    """The rabbit is down or one of its computes is not healthy (--down)."""
    return is_down(rabbit) or any(problems(c) for c in _computes(rabbit))


def select(answer: Any, names: list[Hostlist] | None = None,
           down_only: bool = False) -> list[dict[str, Any]]:
    """The rabbits of the answer to show, in the answer's order: those named
    (if any hostlist is given) and, with ``down_only``, those down or with
    an unhealthy compute.  UnknownRabbits names those the answer lacks."""
    rabbits = rabbits_of(answer)
    if names:
        wanted = Hostlist([h for hl in names for h in hl])
        known = {r["name"] for r in rabbits}
        unknown = list(dict.fromkeys(h for h in wanted if h not in known))
        if unknown:
            raise UnknownRabbits(unknown)
        chosen = set(wanted)
        rabbits = [r for r in rabbits if r["name"] in chosen]
    if down_only:
        rabbits = [r for r in rabbits if unhealthy(r)]
    return rabbits


# --- formatting ------------------------------------------------------------------


def _on_link_down(answer: dict[str, Any]) -> str:
    """What the service does to a compute whose link is down
    (rabbit.drain_compute_nodes, rabbit.soft_drain)."""
    if answer.get("drain_compute_nodes"):
        return "drain"
    return "badrabbit" if answer.get("soft_drain") else "nothing"


def _holds_note(answer: dict[str, Any]) -> str:
    """'N ssds held by M jobs; ' when jobs hold ssd vertices, else ''."""
    holds = answer.get("holds")
    if not isinstance(holds, list) or not holds:
        return ""
    paths: set[Any] = set()
    for h in holds:
        if isinstance(h, dict) and isinstance(h.get("paths"), list):
            paths.update(p for p in h["paths"] if isinstance(p, str))
    return (f"{len(paths)} ssd{'' if len(paths) == 1 else 's'} held by {len(holds)}"
            f" job{'' if len(holds) == 1 else 's'}; ")


def summary(answer: dict[str, Any]) -> str:
    """The first line: mode, readiness, rabbits down, computes drained, the
    link-down policy, the ssds jobs hold (if any) and what the service has
    sent."""
    rabbits = rabbits_of(answer)
    down = sum(1 for r in rabbits if is_down(r))
    drained = {c.get("name") for r in rabbits for c in _computes(r) if is_drained(c)}
    fenced = {c.get("name") for r in rabbits for c in _computes(r) if is_fenced(c)}
    fenced_note = (f"{len(fenced)} compute{'' if len(fenced) == 1 else 's'} fenced; "
                   if fenced else "")
    sent = answer.get("sent")
    counters = (", ".join(f"{_text(k)} {_text(v)}" for k, v in sent.items())
                if isinstance(sent, dict) and sent else "-")
    return (f"mode: {'fluxion' if answer.get('fluxion') else 'no fluxion'}; "
            f"{'ready' if answer.get('ready') else 'starting'}; "
            f"{len(rabbits)} rabbit{'' if len(rabbits) == 1 else 's'} ({down} down); "
            f"{len(drained)} compute{'' if len(drained) == 1 else 's'} drained; {fenced_note}"
            f"link down: {_on_link_down(answer)}; {_holds_note(answer)}sent: {counters}")


def _state(storage: dict[str, Any] | None) -> str:
    """Storage spec.state, with its mode when that is not Live."""
    if storage is None:
        return "-"
    state = _text(storage.get("state")) or "-"
    mode = _text(storage.get("mode"))
    return f"{state}/{mode}" if mode and mode != "Live" else state


def lustre_cell(rabbit: dict[str, Any]) -> str:
    """GiB of the rabbit's ssd that spread Lustre file systems hold, of its
    total (its Storage's drives): ``used/total``; ``-`` when neither is known."""
    used = rabbit.get("lustre_gib") or 0
    cap = (rabbit.get("capacity") or 0) // GiB
    if cap:
        return f"{used}/{cap}"
    return str(used) if used else "-"


def space_cells(rabbit: dict[str, Any]) -> dict[str, str]:
    """The rabbit's total (``capacity``: the sum of its Storage's drives),
    used and free (its Storage's ``status.capacity``), short (``size``);
    ``-`` for what is not known (no Storage yet, an older service)."""
    total = rabbit.get("capacity") or 0
    free, used = rabbit.get("free"), rabbit.get("used")
    return {"total": size(total) if total else "-",
            "used": "-" if used is None else size(used),
            "free": "-" if free is None else size(free)}


def storage_cell(storage: dict[str, Any] | None) -> str:
    """The Storage's status; ``Degraded/reboot`` when nnf-sos says the
    rabbit needs a reboot (after a STONITH event: down, unlike a Degraded
    rabbit that is still usable)."""
    status = (_text(storage.get("status")) if storage else "") or "-"
    if storage and storage.get("reboot_required") is True:
        status += "/reboot"
    return status


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def row(rabbit: dict[str, Any]) -> dict[str, Any]:
    """One rabbit's values, by field (FIELDS)."""
    storage = rabbit.get("storage")
    computes = _computes(rabbit)
    drain = storage if isinstance(storage, dict) else {}
    by = drain.get("drained_by")
    return {
        "name": _text(rabbit.get("name")),
        "storage": storage_cell(storage),
        "state": _state(storage),
        "fluxion": _text(rabbit.get("fluxion")) or "-",
        "computes": len(computes),
        "links_down": sum(1 for c in computes if link_down(c)),
        "fenced": sum(1 for c in computes if is_fenced(c)),
        "drained": sum(1 for c in computes if is_drained(c)),
        "jobs": len(rabbit.get("jobs") or []),
        "held": held_ssds(rabbit),
        "ssds": _count(rabbit.get("ssds")),
        **space_cells(rabbit),
        "lustre_gib": lustre_cell(rabbit),
        "message": _text(drain.get("message")),
        "drain_date": _text(drain.get("drain_date")),
        "drain_reason": _text(drain.get("drain_reason")),
        "drained_by": _text(user_name(by)) if isinstance(by, str) and by else "",
        # why it is down; for an up rabbit that is not Ready, why it is usable
        "why": _text(rabbit.get("why") or (rabbit.get("note") if rabbit.get("up") else ""))
        + drained_by(storage),
    }


def user_name(userid: str) -> str:
    """``name`` for a userid this host knows, else ``uid N`` (users.py's rule)."""
    return users.user_name(userid) or f"uid {userid}"


def drained_by(storage: dict[str, Any] | None) -> str:
    """`` (by NAME)`` after a drain flux made (``flux dws rabbits drain``
    records who); '' for none, or one the nnf CLI made."""
    by = storage.get("drained_by") if isinstance(storage, dict) else None
    if not isinstance(by, str) or not by:
        return ""
    return f" (by {_text(user_name(by))})"


def _job(jobid: Any) -> str:
    if isinstance(jobid, int) and not isinstance(jobid, bool):
        try:
            return f58(jobid)
        except EngineError:
            pass
    return _text(jobid)


def held_line(hold: dict[str, Any], now: float, verbose: int) -> str:
    """One job's hold on a rabbit's ssds: its job, for how long, how many
    (verbose >= 2: which), and whether Fluxion has them down yet."""
    ssds = [_text(p) for p in hold.get("ssds") or []]
    since = hold.get("since")
    age = (f" for {duration(now - since)}" if isinstance(since, (int, float))
           and not isinstance(since, bool) else "")
    what = (" ".join(p.rsplit("/", 1)[-1] for p in ssds) if verbose >= 2
            else f"{len(ssds)} ssd{'' if len(ssds) == 1 else 's'}")
    state = "down" if hold.get("down") else "going down"
    return f"  held by {_job(hold.get('job'))}{age}: {what}, {state}"


def compute_lines(rabbit: dict[str, Any], verbose: int, now: float | None = None) -> list[str]:
    """The lines under a rabbit's row: with verbose >= 1 each compute that
    is not healthy and its problems (verbose >= 2: every compute), then the
    rabbit's jobs (f58, as flux-core prints them), then each job holding
    its ssds."""
    out = []
    computes = _computes(rabbit)
    shown = []
    for c in computes:
        notes = problems(c)
        if verbose >= 2:
            if not notes:
                notes = ["ok"]
            if c.get("online") is None:
                notes.append("not in this Flux instance")
        if notes:
            shown.append((_text(c.get("name")) or "-", notes))
    width = max((len(name) for name, _ in shown), default=0)
    out += [f"  {name:<{width}}  {'; '.join(notes)}" for name, notes in shown]
    jobs = rabbit.get("jobs") or []
    if jobs:
        out.append(f"  jobs: {' '.join(_job(j) for j in jobs)}")
    when = time.time() if now is None else now
    out += [held_line(h, when, verbose) for h in _held(rabbit)]
    return out


def format_rabbits(answer: Any, verbose: int = 0, down_only: bool = False,
                   names: list[Hostlist] | None = None, width: int | None = None,
                   now: float | None = None, fmt: OutputFormat | None = None,
                   header: bool = True) -> str:
    """What ``flux dws rabbits`` prints for a dws.rabbits answer.

    ``names`` and ``down_only`` choose the rabbits (see select()); the
    summary line is always about every rabbit.  ``fmt`` is the table's
    format (default: the ``default`` preset, ``long`` with ``verbose``).
    With ``width`` (a terminal's), a last column that does not fit is cut
    to what is left of it, to no fewer than MIN_WHY characters, and the
    whole reason follows on a line of its own; without, nothing is cut.
    ``header`` False leaves out the summary and the heading line.
    ``now`` (default: the clock) dates the holds.
    """
    rabbits = select(answer, names, down_only)
    if fmt is None:
        fmt = TABLE.parse("long" if verbose else "default")
    lines = [summary(answer)] if header else []
    if not rabbits:
        if not header:
            return ""
        if down_only:
            lines.append("no rabbit is down or has an unhealthy compute")
        elif not rabbits_of(answer):
            lines.append("no rabbits")
        return "\n".join(lines)
    rows = [row(r) for r in rabbits]
    fitted = fmt.fitted(rows, header)
    if header:
        lines.append(fitted.header())
    for rabbit, cells in zip(rabbits, rows):
        line, cut = fitted.line(cells, width, MIN_WHY)
        lines.append(line)
        if cut:  # the last field, whole, on a line of its own
            last = fitted.fields[-1]
            lines.append(f"  {last}: {cells[last]}")
        if verbose:
            lines += compute_lines(rabbit, verbose, now)
    return "\n".join(lines)


def filtered_answer(answer: Any, names: list[Hostlist] | None,
                    down_only: bool) -> Any:
    """The answer as it is (--json), its rabbits chosen as the table's are."""
    if not names and not down_only:
        return answer
    return {**answer, "rabbits": select(answer, names, down_only)}


# --- the command -------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    prog = "flux-dws rabbits"
    if args.format == HELP:
        print(TABLE.help_text())
        return 0
    try:
        answer = ask_dws(TOPIC)
    except FluxUnavailable as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    try:
        if args.json:
            text = json.dumps(filtered_answer(answer, args.rabbits, args.down), indent=1)
        else:
            text = format_rabbits(answer, args.verbose, args.down, args.rabbits,
                                  terminal_width(), fmt=args.format,
                                  header=not args.no_header)
    except AnswerError as exc:
        print(f"{prog}: unexpected {TOPIC} answer: {exc}", file=sys.stderr)
        return 1
    except UnknownRabbits as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    if text:
        print(text)
    return 0
