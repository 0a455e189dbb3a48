"""``flux dws persistent``: the persistent storage of the system, and sharing it.

``list`` asks the running dws service (``dws.persistent-list``) for every
PersistentStorageInstance of its namespace: name, file-system type,
capacity (as its ``create_persistent`` asked), owner (the user name of its
``spec.userID``), state (nnf-sos' ``status.state``: Creating, Active,
Degraded, Destroying), whether it is shared (the
``dataworkflowservices.github.io/ignore-uid`` annotation), and the Flux
jobs using it now, in the format ``-o`` names (FIELDS, PRESETS).  It
never shows Secrets or tokens.

``share NAME`` and ``unshare NAME`` ask the service to set or remove that
annotation (``dws.persistent-share``, ``-unshare``); it allows the PSI's
owner and the instance owner, and does the Kubernetes write.  Errors are
one line, exit status 1.
"""

from __future__ import annotations

import argparse
import errno
import json
import re
import sys
from typing import Any

from flux_dws import textfmt
from flux_dws.cli import argtypes
from flux_dws.cli.outputformat import HELP, Field, OutputFormat, Preset, Table
from flux_dws.fluxutil import FluxUnavailable, open_flux
from flux_dws.users import user_name

PROG = "flux-dws persistent"
TOPICS = {"list": "dws.persistent-list", "share": "dws.persistent-share",
          "unshare": "dws.persistent-unshare"}
#: how long the service may take to answer (it waits for its first list
#: of the PSIs, which a cluster that cannot be reached never gives)
TIMEOUT = 60.0
#: a Kubernetes object name (RFC 1123 subdomain), as a PSI's name is
NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
FIELDS = {
    "name": Field("NAME", "the PSI's name (its #DW name=)"),
    "type": Field("TYPE", "its file system: xfs, gfs2, lustre, raw"),
    "capacity": Field("CAPACITY", "the capacity= its create_persistent asked for"),
    "owner": Field("OWNER", "the user who created it"),
    "userid": Field("USERID", "that user's id (its spec.userID)"),
    "state": Field("STATE", "nnf-sos' state of it: Creating, Active, Degraded, Destroying"),
    "shared": Field("SHARED", "yes when every user's persistentdw may use it"),
    "jobs": Field("JOBS", "the Flux jobs (and other Workflows) using it now"),
}
PRESETS = {
    "default": Preset("name, type, capacity, owner, state, shared, jobs",
                      "+:{name} +:{type} +:{capacity} +:{owner} +:{state} +:{shared} {jobs}"),
    "long": Preset("the default with the owner's userid",
                   "+:{name} +:{type} +:{capacity} +:{owner} +:{userid} +:{state} +:{shared}"
                   " {jobs}"),
}
TABLE = Table("flux dws persistent list", FIELDS, PRESETS)


class AnswerError(Exception):
    """The service's answer does not have the documented shape."""


def psi_name(text: str) -> str:
    """argparse ``type=`` for a PSI's name (a #DW name=)."""
    value = argtypes.text(text)
    if not NAME.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"'{value}' is not a persistent storage name (lowercase letters, digits,"
            " '-' and '.', starting and ending with a letter or digit)")
    return value


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "persistent", help="list persistent storage, share it with other users",
        description="List the system's persistent rabbit storage, and share a file"
                    " system you own with other users (or stop sharing it).")
    # not required=True: an unknown option is then reported as such, not
    # as a missing VERB (run asks for one)
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    ls = verbs.add_parser("list", help="every persistent storage instance",
                          description="List every persistent storage instance.")
    TABLE.add_options(ls, json_help="print the service's answer")
    for verb, what in (("share", "let every user's #DW persistentdw use NAME"),
                       ("unshare", "let only NAME's owner use it again")):
        v = verbs.add_parser(verb, help=what, description=what[0].upper() + what[1:] + ".")
        v.add_argument("name", type=psi_name, metavar="NAME",
                       help="the persistent storage (its #DW name=)")
    p.set_defaults(func=run)


def _ask(topic: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The service's answer; OSError (its errstr) or AnswerError."""
    h = open_flux()
    f = h.rpc(topic, payload)
    f.wait_for(TIMEOUT)  # OSError ETIMEDOUT after that long
    answer = f.get()
    if not isinstance(answer, dict):
        raise AnswerError(f"{topic}: the answer is not a JSON object")
    if answer.get("success") is False:
        raise AnswerError(str(answer.get("errstr") or f"{topic} failed"))
    return answer


def entries_of(answer: dict[str, Any]) -> list[dict[str, Any]]:
    ps = answer.get("persistent")
    if not isinstance(ps, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str)
                                           for p in ps):
        raise AnswerError("dws.persistent-list: 'persistent' is not a list of named objects")
    return ps


def owner_name(p: dict[str, Any]) -> str:
    """The owner's user name here, else the one the service found, else
    the uid."""
    uid = p.get("userid")
    if not isinstance(uid, int) or isinstance(uid, bool) or uid < 0:
        return "-"
    name = user_name(uid)
    if name is not None:
        return name
    owner = p.get("owner")
    return owner if isinstance(owner, str) and owner else str(uid)


def state_of(p: dict[str, Any]) -> str:
    raw = p.get("state")
    state = raw if isinstance(raw, str) and raw else "-"
    return "Destroying" if p.get("deleting") is True and state != "Destroying" else state


def jobs_of(p: dict[str, Any]) -> str:
    ids = [textfmt.f58(j) for j in p.get("jobs") or [] if isinstance(j, int)]
    others = [w for w in p.get("workflows") or [] if isinstance(w, str)]
    return ",".join(ids + others) or "-"


def row(p: dict[str, Any]) -> dict[str, str]:
    """A PSI's values, by field (FIELDS)."""
    uid = p.get("userid")
    return {"name": p["name"], "type": str(p.get("type") or "-"),
            "capacity": str(p.get("capacity") or "-"), "owner": owner_name(p),
            "userid": str(uid) if isinstance(uid, int) and not isinstance(uid, bool) else "-",
            "state": state_of(p), "shared": "yes" if p.get("shared") is True else "no",
            "jobs": jobs_of(p)}


def table(entries: list[dict[str, Any]], fmt: OutputFormat | None = None,
          header: bool = True) -> list[str]:
    """The list's lines (``fmt``: the default preset's), nothing cut."""
    return (fmt or TABLE.parse("default")).lines([row(p) for p in entries], header)


def run(args: argparse.Namespace) -> int:
    if args.verb is None:
        args._parser.error("a VERB is required: list, share or unshare")
    if args.verb == "list" and args.format == HELP:
        print(TABLE.help_text())
        return 0
    topic = TOPICS[args.verb]
    try:
        answer = _ask(topic, {} if args.verb == "list" else {"name": args.name})
        if args.verb == "list":
            entries = entries_of(answer)
    except FluxUnavailable as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        why = {errno.ENOSYS: "the dws service is not loaded (flux module load dws.py)",
               errno.ETIMEDOUT: f"the dws service did not answer {topic} within"
                                f" {TIMEOUT:.0f} s"}.get(exc.errno or 0)
        print(f"{PROG}: {why or exc.strerror or exc}", file=sys.stderr)
        return 1
    except AnswerError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    if args.verb == "list":
        if args.json:
            print(json.dumps({"persistent": entries}, indent=1))
        else:
            for line in table(entries, args.format, not args.no_header):
                print(line)
        return 0
    name, shared = answer.get("name", args.name), answer.get("shared") is True
    if answer.get("changed") is False:
        print(f"{name} was already {'shared' if shared else 'not shared'}")
    else:
        print(f"{name} is now {'shared: every user' if shared else 'not shared: only its owner'}"
              f" may use it with #DW persistentdw name={name}")
    return 0
