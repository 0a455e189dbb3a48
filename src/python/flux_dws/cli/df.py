"""``flux dws df``: each rabbit's space, as df shows a file system's.

Asks the running service (``dws.rabbits`` with ``{"df": true}``): per
rabbit its SIZE (the sum of its Storage's drives), what Flux jobs hold
(JOBS: their Servers allocations), what persistent storage holds
(PERSISTENT), the rest of what is used (OTHER: system storage, anything
no Servers names), what is FREE (the Storage's ``status.capacity``), USE%,
and its ssd vertices as the service gave them to Fluxion (SSDS
up/total, DOWN, HELD: down for a job's hold until its Teardown); then a
``total`` line, in the format ``-o`` names (FIELDS, PRESETS).  ``-b``
prints bytes; ``--json`` the answer, its rabbits chosen by RABBIT.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from flux_dws.cli.outputformat import HELP, Field, OutputFormat, Preset, Table
from flux_dws.cli.rabbits import hostlist_arg
from flux_dws.fluxutil import FluxUnavailable, open_flux
from flux_dws.inputfile import one_line
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.textfmt import size

TOPIC = "dws.rabbits"
FIELDS = {
    "name": Field("RABBIT", "the rabbit's name (total for the last line)"),
    "size": Field("SIZE", "its ssd: the sum of its Storage's drives"),
    "used": Field("USED", "what is used: JOBS + PERSISTENT + OTHER"),
    "jobs": Field("JOBS", "what Flux jobs' storage holds on it"),
    "persistent": Field("PERSISTENT", "what persistent file systems hold on it"),
    "other": Field("OTHER", "the rest of what is used"),
    "free": Field("FREE", "its Storage's status.capacity"),
    "use_percent": Field("USE%", "used of size, rounded up as df does"),
    "ssds": Field("SSDS", "its ssd vertices in Fluxion: up/total"),
    "ssds_up": Field("UP", "its ssd vertices the service gave Fluxion up", int),
    "ssds_total": Field("TOTAL", "its ssd vertices in Fluxion's graph", int),
    "down": Field("DOWN", "its ssd vertices the service gave Fluxion down", int),
    "held": Field("HELD", "its ssd vertices held down for a job until its Teardown", int),
    "state": Field("STATE", "up, or why the rabbit is down"),
}
PRESETS = {
    "default": Preset("size, who holds what, free, ssd vertices, state",
                      "+:{name}  +:{size:>}  +:{jobs:>}  +:{persistent:>}  +:{other:>}"
                      "  +:{free:>}  +:{use_percent:>}  +:{ssds:>}  +:{down:>}  +:{held:>}"
                      "  {state}"),
    "long": Preset("the default with USED",
                   "+:{name}  +:{size:>}  +:{used:>}  +:{jobs:>}  +:{persistent:>}"
                   "  +:{other:>}  +:{free:>}  +:{use_percent:>}  +:{ssds:>}  +:{down:>}"
                   "  +:{held:>}  {state}"),
}
TABLE = Table("flux dws df", FIELDS, PRESETS)


class AnswerError(Exception):
    """The answer does not have the documented shape."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "df", help="each rabbit's space: size, used by jobs and others, free",
        description="Show each rabbit's space as the dws service sees it: its size, what"
                    " Flux jobs and persistent storage hold, the rest used, what is free,"
                    " and its ssd vertices in Fluxion; then the total.")
    p.add_argument("rabbits", nargs="*", type=hostlist_arg, metavar="RABBIT",
                   help="only these rabbits (RFC 29 hostlists, e.g. rabbit[01-04]); the"
                        " total is theirs")
    TABLE.add_options(p, json_help="print the answer as JSON")
    p.add_argument("-b", "--bytes", action="store_true", help="sizes in bytes")
    p.set_defaults(func=run)


def _count(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise AnswerError(f"{what} is not a count")
    return value


def rabbits_of(answer: Any) -> list[dict[str, Any]]:
    """The rabbits of a df answer; AnswerError if it is not one."""
    if not isinstance(answer, dict) or not isinstance(answer.get("rabbits"), list):
        raise AnswerError("no 'rabbits' list (is the dws service older than flux dws df?)")
    out = []
    for r in answer["rabbits"]:
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            raise AnswerError("a rabbit without a 'name'")
        if "jobs" not in r or not isinstance(r.get("ssds"), dict):
            raise AnswerError(f"rabbit {r['name']}: not a df entry (is the dws service"
                              f" older than flux dws df?)")
        for key in ("size", "free", "used", "jobs", "persistent", "other"):
            _count(r.get(key), f"rabbit {r['name']}: '{key}'")
        for key in ("total", "up", "down", "held"):
            _count(r["ssds"].get(key), f"rabbit {r['name']}: 'ssds.{key}'")
        out.append(r)
    return out


def select(rabbits: list[dict[str, Any]], names: list[Hostlist]) -> list[dict[str, Any]]:
    """The rabbits named (all without names); ValueError naming unknown ones."""
    if not names:
        return rabbits
    wanted = Hostlist([h for hl in names for h in hl])
    known = {r["name"] for r in rabbits}
    unknown = list(dict.fromkeys(h for h in wanted if h not in known))
    if unknown:
        raise ValueError(f"unknown rabbit{'' if len(unknown) == 1 else 's'}: "
                         f"{Hostlist(unknown).sorted().encode()}")
    chosen = set(wanted)
    return [r for r in rabbits if r["name"] in chosen]


def totals(rabbits: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``total`` entry of these rabbits (bytes of those that report
    them; null when none does)."""
    out: dict[str, Any] = {"name": "total"}
    for key in ("size", "free", "used", "jobs", "persistent", "other"):
        known = [r[key] for r in rabbits if r.get(key) is not None]
        out[key] = sum(known) if known else None
    out["ssds"] = {k: sum(r["ssds"].get(k) or 0 for r in rabbits)
                   for k in ("total", "up", "down", "held")}
    return out


def _bytes(value: Any, exact: bool) -> str:
    if value is None:
        return "-"
    return str(value) if exact else size(value)


def use_percent(r: dict[str, Any]) -> str:
    """Used of size, rounded up as df does; '-' when unknown."""
    total, used = r.get("size"), r.get("used")
    if not total or used is None:
        return "-"
    return f"{-(-100 * used // total)}%"


def row(r: dict[str, Any], exact: bool) -> dict[str, Any]:
    """A rabbit's (or the total's) values, by field (FIELDS)."""
    ssds = r["ssds"]
    state = "" if r.get("name") == "total" else (
        "up" if r.get("up") else one_line(str(r.get("why") or "down")))
    return {"name": one_line(r["name"]),
            "size": _bytes(r.get("size"), exact), "used": _bytes(r.get("used"), exact),
            "jobs": _bytes(r.get("jobs"), exact),
            "persistent": _bytes(r.get("persistent"), exact),
            "other": _bytes(r.get("other"), exact), "free": _bytes(r.get("free"), exact),
            "use_percent": use_percent(r),
            "ssds": f"{ssds.get('up') or 0}/{ssds.get('total') or 0}",
            "ssds_up": ssds.get("up") or 0, "ssds_total": ssds.get("total") or 0,
            "down": ssds.get("down") or 0, "held": ssds.get("held") or 0, "state": state}


def format_df(rabbits: list[dict[str, Any]], exact: bool = False,
              fmt: OutputFormat | None = None, header: bool = True) -> str:
    """The table: a line per rabbit, then the total (``fmt``: the default
    preset's), nothing cut."""
    rows = [row(r, exact) for r in [*rabbits, totals(rabbits)]]
    return "\n".join((fmt or TABLE.parse("default")).lines(rows, header))


def run(args: argparse.Namespace) -> int:
    prog = "flux-dws df"
    if args.format == HELP:
        print(TABLE.help_text())
        return 0
    try:
        answer = open_flux().rpc(TOPIC, {"df": True}).get()
    except FluxUnavailable as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{prog}: the dws service did not answer {TOPIC}: "
              f"{' '.join((exc.strerror or str(exc)).split())}", file=sys.stderr)
        return 1
    try:
        rabbits = select(rabbits_of(answer), args.rabbits)
    except AnswerError as exc:
        print(f"{prog}: unexpected {TOPIC} answer: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({**answer, "rabbits": rabbits, "total": totals(rabbits)}, indent=1))
    else:
        text = format_df(rabbits, args.bytes, args.format, not args.no_header)
        if text:
            print(text)
    return 0
