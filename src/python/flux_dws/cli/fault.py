"""``flux-dws fault``: inject faults into a running emulator.

    flux-dws fault add --state Setup --severity Fatal --message "disk died" [--workflow W]
                       [--index I] [--type User|WLM|Internal] [--once]
                       [--kind driver|clientmount|datamovement|container] [--compute C]
    flux-dws fault stall --state PreRun [--workflow W] [--kind ...] [--compute C]
    flux-dws fault stall --kind datamovement --state DataIn [--seconds S]
    flux-dws fault stall --kind allocation --rabbit R [--workflow W]
    flux-dws fault delay --state Setup --seconds 30 [--workflow W] [--kind ...]
    flux-dws fault hold --kind datamovement --state DataIn [--index I] [--seconds S]
    flux-dws fault release
    flux-dws fault list | clear
    flux-dws fault health RABBIT [--reset] [--status S] [--link COMPUTE=S ...]
                       [--fenced|--unfenced] [--k8s-not-ready|--k8s-ready]
                       [--drain-taint KEY|--no-drain-taint]
    flux-dws fault storage RABBIT [--state Enabled|Disabled] [--mode Live|Testing]
                       [--reason TEXT] [--status S] [--link COMPUTE=S ...]
    flux-dws fault storm [--rabbits HOSTLIST|all] --events N [--seed S]
    flux-dws fault vanish WORKFLOW [--namespace NS]
    flux-dws fault api [--status 503] [--method M] [--path REGEX] [--count N]
                       [--retry-after S] [--drop | --hold S] [--skip N] [--message TEXT]
    flux-dws fault api-list | api-clear | drop-watches | expire-watches [--count N]
    flux-dws fault mute-watches [--off]

The emulator is found through --kubeconfig (default $KUBECONFIG or
./kubeconfig); it must run with --system (its controllers take the faults),
except for the API-level faults (api*, drop-watches, expire-watches,
mute-watches).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import ssl
import sys
import urllib.error
import urllib.request
from typing import Any

from flux_dws import inputfile
from flux_dws.cli.argtypes import (
    http_status,
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
    text,
)
from flux_dws.dwsim.storage import (
    MODES,
    RESOURCE_STATUSES,
    STATES,
    check_drain_taint,
    check_status,
)

STORM_TIMEOUT = 600.0  # seconds a storm may take (a million events on elcap: ~4 min)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("fault", help="inject faults into a running emulator")
    p.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG", "kubeconfig"))
    act = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = act.add_parser("add", help="an error (driver, ClientMount, data movement,"
                                     " container)")
    stall = act.add_parser("stall", help="something that never completes")
    delay = act.add_parser("delay", help="a state or data movement that takes --seconds")
    hold = act.add_parser("hold", help="a data movement that moves until released"
                                       " (flux-dws fault release)")
    act.add_parser("release", help="let every held data movement finish now")
    for q in (add, stall, delay, hold):
        q.add_argument("--workflow", default="*")
        q.add_argument("--state", default="*")
        q.add_argument("--index", type=nonnegative_int)
        q.add_argument("--once", action="store_true")
        q.add_argument("--kind", default="driver",
                       choices=["driver", "clientmount", "datamovement", "container",
                                "allocation"])
        q.add_argument("--compute", help="the compute node (kind clientmount)")
        q.add_argument("--rabbit", type=text,
                       help="the rabbit whose Setup allocations are late (kind allocation)")
    delay.add_argument("--seconds", type=positive_float, required=True)
    stall.add_argument("--seconds", type=positive_float,
                       help="kind datamovement: its progress moves this long, then stops")
    hold.add_argument("--seconds", type=positive_float,
                      help="its progress moves as over this long (default 60), never past 99%%")
    add.add_argument("--severity", default="Fatal", choices=["Minor", "Major", "Fatal"])
    add.add_argument("--type", default="Internal", choices=["Internal", "User", "WLM"])
    add.add_argument("--message", default="injected fault")
    act.add_parser("list", help="the faults in force")
    act.add_parser("clear", help="remove every fault")
    h = act.add_parser("health", help="change a rabbit's health (each option sets what it"
                                      " names; the rest stays)")
    h.add_argument("rabbit", type=text)
    h.add_argument("--reset", action="store_true",
                   help="first make the rabbit fully healthy")
    h.add_argument("--status", choices=RESOURCE_STATUSES, metavar="STATUS",
                   help="node manager status (Ready, Offline, Failed, ...)")
    h.add_argument("--link", action="append", default=[], metavar="COMPUTE=STATUS",
                   help="a compute's PCIe link status")
    fence = h.add_mutually_exclusive_group()
    fence.add_argument("--fenced", action="store_true", default=None)
    fence.add_argument("--unfenced", dest="fenced", action="store_false")
    k8s = h.add_mutually_exclusive_group()
    k8s.add_argument("--k8s-not-ready", dest="k8s_ready", action="store_false", default=None)
    k8s.add_argument("--k8s-ready", dest="k8s_ready", action="store_true")
    taint = h.add_mutually_exclusive_group()
    taint.add_argument("--drain-taint", metavar="KEY", type=_drain_taint,
                       help="a taint cray.nnf.node.drain...")
    taint.add_argument("--no-drain-taint", action="store_true")
    s = act.add_parser("storage", help="patch a Storage as an administrator would")
    s.add_argument("rabbit", type=text)
    s.add_argument("--state", choices=STATES)
    s.add_argument("--mode", choices=MODES)
    s.add_argument("--reason", type=text, help="with --state Disabled: the disable_reason"
                                               " annotation (disable_date: now)")
    s.add_argument("--status", choices=RESOURCE_STATUSES, metavar="STATUS",
                   help="status.status, by hand (mode Testing)")
    s.add_argument("--link", action="append", default=[], metavar="COMPUTE=STATUS",
                   help="a compute's status in status.access.computes (mode Testing)")
    storm = act.add_parser("storm", help="N Storage updates flipping links and rabbits"
                                         " Ready/Offline, ending as before")
    storm.add_argument("--rabbits", default="all", type=text, metavar="HOSTLIST|all")
    storm.add_argument("--events", type=positive_int, required=True)
    storm.add_argument("--seed", type=nonnegative_int)
    v = act.add_parser("vanish", help="delete a workflow behind the WLM's back")
    v.add_argument("workflow")
    v.add_argument("--namespace", default="default")
    a = act.add_parser("api", help="the next requests matching get an HTTP error"
                                   " (or lose their connection)")
    a.add_argument("--status", type=http_status, default=503)
    a.add_argument("--method", default="*")
    a.add_argument("--path", default="", help="a regular expression searched in the"
                                              " request target (path and query)")
    a.add_argument("--count", type=positive_int, default=1)
    a.add_argument("--retry-after", type=nonnegative_float, help="seconds, sent as Retry-After")
    a.add_argument("--drop", action="store_true", help="close the connection, no answer")
    a.add_argument("--hold", type=nonnegative_float, default=0.0,
                   help="carry the request out, hold its answer S seconds (or until"
                        " api-clear)")
    a.add_argument("--skip", type=nonnegative_int, default=0,
                   help="let the first N matching requests pass")
    a.add_argument("--message", default="")
    act.add_parser("api-list", help="the API faults in force and the open watches")
    act.add_parser("api-clear", help="remove every API fault (held answers go)")
    act.add_parser("drop-watches", help="cut every open watch stream now")
    m = act.add_parser("mute-watches", help="every watch stream stays open and sends nothing"
                                            " (its events lost) until --off or api-clear")
    m.add_argument("--off", action="store_true", help="let the watch streams speak again")
    e = act.add_parser("expire-watches", help="the next watches from a resourceVersion"
                                              " get 410 Gone")
    e.add_argument("--count", type=positive_int, default=1)
    p.set_defaults(func=run)


def read_kubeconfig(path: str) -> tuple[str, str | None, str | None]:
    """(server URL, CA certificate data, bearer token) of the first cluster
    and user of a kubeconfig; SystemExit with a one-line message naming the
    file if it cannot be read or lacks them."""
    def fail(why: str) -> SystemExit:
        return SystemExit(f"flux-dws fault: cannot read kubeconfig {why}")

    try:
        cfg = inputfile.load_yaml(path)
    except inputfile.InputError as exc:
        raise fail(str(exc)) from None
    try:
        cluster = cfg["clusters"][0]["cluster"]
        server = cluster["server"]
        ca = cluster.get("certificate-authority-data")
        users = cfg.get("users") or [{}]
        token = (users[0].get("user") or {}).get("token")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise fail(f"{path}: no clusters[0].cluster.server ({type(exc).__name__})") from None
    if not isinstance(server, str) or not server.startswith(("http://", "https://")):
        raise fail(f"{path}: server must be an http(s) URL, got {server!r:.60}")
    for what, value in (("certificate-authority-data", ca), ("token", token)):
        if value is not None and not isinstance(value, str):
            raise fail(f"{path}: {what} must be a string")
    return server, ca, token


def _drain_taint(value: str) -> str:
    try:
        return check_drain_taint(text(value))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _links(items: list[str]) -> dict[str, str]:
    """--link COMPUTE=STATUS options as a dict; ValueError with the message."""
    links = {}
    for item in items:
        c, sep, st = item.partition("=")
        if not sep or not c:
            raise ValueError(f"--link wants COMPUTE=STATUS, not '{item}'")
        links[c] = check_status(st, f"--link {c}")
    return links


def _call(kubeconfig: str, method: str, path: str, body: Any = None,
          timeout: float = 10.0) -> Any:
    server, ca, token = read_kubeconfig(kubeconfig)
    ctx = None
    if ca:
        try:
            ctx = ssl.create_default_context(cadata=base64.b64decode(ca, validate=True)
                                             .decode("ascii", "strict"))
        except (ValueError, ssl.SSLError) as exc:
            raise SystemExit(f"flux-dws fault: cannot read kubeconfig {kubeconfig}:"
                             f" bad certificate-authority-data: {exc}") from None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server + path, data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=timeout) as r:
            return json.loads(r.read())
    except ValueError as e:  # a bad URL, or an answer that is not JSON
        raise SystemExit(f"flux-dws fault: {server}: {e}") from None
    except urllib.error.HTTPError as e:
        try:
            msg = json.loads(e.read()).get("message")
        except ValueError:
            msg = e.reason
        raise SystemExit(f"flux-dws fault: {msg}") from None
    except OSError as e:
        raise SystemExit(f"flux-dws fault: cannot reach the emulator: {e}") from None


def _rabbit_request(args: argparse.Namespace) -> dict[str, Any]:
    """The body of a health or storage request: only what the command line
    names (ValueError for a bad --link or a --reason without Disabled)."""
    body: dict[str, Any] = {"name": args.rabbit, "links": _links(args.link)}
    if args.status is not None:
        body["status"] = args.status
    if args.action == "health":
        if args.reset:
            body["reset"] = True
        if args.fenced is not None:
            body["fenced"] = args.fenced
        if args.k8s_ready is not None:
            body["k8sReady"] = args.k8s_ready
        if args.no_drain_taint:
            body["drainTaint"] = None
        elif args.drain_taint is not None:
            body["drainTaint"] = args.drain_taint
        return body
    if args.reason is not None and args.state != "Disabled":
        raise ValueError("--reason goes with --state Disabled")
    if args.reason == "":
        raise ValueError("--reason is empty")
    body.update({k: v for k, v in (("state", args.state), ("mode", args.mode),
                                   ("reason", args.reason)) if v is not None})
    return body


def run(args: argparse.Namespace) -> int:
    kc = args.kubeconfig
    if args.action in ("add", "stall", "delay", "hold"):
        body = {"workflow": args.workflow, "state": args.state, "index": args.index,
                "once": args.once, "kind": args.kind, "compute": args.compute,
                "rabbit": args.rabbit}
        if args.action == "add":
            body.update(severity=args.severity, type=args.type, message=args.message)
        elif args.action == "delay":
            body.update(severity="delay", seconds=args.seconds)
        elif args.action == "hold":
            if args.kind != "datamovement":
                print("flux-dws fault hold: only a data movement is held (--kind"
                      " datamovement)", file=sys.stderr)
                return 2
            body.update(severity="hold", seconds=args.seconds or 0.0)
        else:
            body["severity"] = "stall"
            if args.seconds is not None:
                if args.kind != "datamovement":
                    print("flux-dws fault stall: --seconds is for --kind datamovement",
                          file=sys.stderr)
                    return 2
                body["seconds"] = args.seconds
        out = _call(kc, "POST", "/_emulator/faults", body)
    elif args.action == "api":
        body = {"status": args.status, "method": args.method, "path": args.path,
                "count": args.count, "drop": args.drop, "message": args.message,
                "hold": args.hold, "skip": args.skip}
        if args.retry_after is not None:
            body["retryAfter"] = args.retry_after
        out = _call(kc, "POST", "/_emulator/api-faults", body)
    elif args.action == "release":
        out = _call(kc, "POST", "/_emulator/release", {})
    elif args.action == "api-list":
        out = _call(kc, "GET", "/_emulator/api-faults")
    elif args.action == "api-clear":
        out = _call(kc, "DELETE", "/_emulator/api-faults")
    elif args.action == "drop-watches":
        out = _call(kc, "POST", "/_emulator/api-faults", {"dropWatches": True})
    elif args.action == "mute-watches":
        out = _call(kc, "POST", "/_emulator/api-faults", {"muteWatches": not args.off})
    elif args.action == "expire-watches":
        out = _call(kc, "POST", "/_emulator/api-faults", {"expireWatches": args.count})
    elif args.action == "list":
        out = _call(kc, "GET", "/_emulator/faults")
    elif args.action == "clear":
        out = _call(kc, "DELETE", "/_emulator/faults")
    elif args.action in ("health", "storage"):
        try:
            request = _rabbit_request(args)
        except ValueError as exc:
            print(f"flux-dws fault: {exc}", file=sys.stderr)
            return 2
        out = _call(kc, "POST", f"/_emulator/{args.action}", request)
    elif args.action == "storm":
        out = _call(kc, "POST", "/_emulator/storm", {
            "rabbits": args.rabbits, "events": args.events, "seed": args.seed},
            timeout=STORM_TIMEOUT)
    else:
        out = _call(kc, "POST", "/_emulator/vanish",
                    {"name": args.workflow, "namespace": args.namespace})
    print(json.dumps(out, indent=1))
    return 0
