"""``flux-dws emulator``: run the emulated Rabbit management cluster.

Serves the Kubernetes API for the DWS/NNF resources on ADDR:PORT (TLS with a
generated CA and a bearer token unless told otherwise), writes a kubeconfig
naming the port actually used, and runs in the foreground until interrupted.
With --api-server it serves nothing: the DWS/nnf-sos controllers run as
clients of that API server (emulator.attached).
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import sys
import threading
from pathlib import Path
from types import FrameType

from flux_dws.cli.argtypes import listen_address, positive_float, positive_int
from flux_dws.emulator import Emulator

#: The first bytes of every SQLite 3 database file.
SQLITE_MAGIC = b"SQLite format 3\x00"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("emulator", help="run the emulated DWS/NNF Kubernetes API")
    p.add_argument("--listen", type=listen_address, default=("127.0.0.1", 0), metavar="ADDR:PORT",
                   help="address to serve on (default 127.0.0.1:0, a free port)")
    p.add_argument("--kubeconfig", metavar="OUT", default="kubeconfig",
                   help="write a kubeconfig for clients here (default ./kubeconfig;"
                        " with --api-server, one for flux-dws fault)")
    p.add_argument("--state", metavar="FILE",
                   help="keep objects in this SQLite file across restarts")
    p.add_argument("--plain-http", action="store_true", help="serve HTTP, not HTTPS")
    p.add_argument("--no-auth", action="store_true", help="do not require a bearer token")
    p.add_argument("--history", type=positive_int, default=1000, metavar="N",
                   help="watch events kept for resuming (older gives 410 Gone)")
    p.add_argument("--bookmark-interval", type=positive_float, default=60.0, metavar="S",
                   help="seconds between BOOKMARK events on watches that ask for them")
    p.add_argument("--system", metavar="NAME|FILE",
                   help="seed a Rabbit system (kind, rzadams, tuolumne, elcap or a file)"
                        " and run the DWS/nnf-sos controllers")
    p.add_argument("--latency", default="fast", metavar="PRESET",
                   help="latency model of the controllers: fast (default: states take"
                        " tens to hundreds of ms, Setup and unmounts longest, so a WLM's"
                        " timeouts can fire), zero (no latency, for fast tests), demo,"
                        " realistic, or a YAML file (doc/man1/flux-dws-emulator.rst)")
    p.add_argument("--api-server", metavar="KUBECONFIG",
                   help="serve nothing: run the DWS/nnf-sos controllers of --system"
                        " (default kind) against the API server this kubeconfig names"
                        " (an admin's), seeding the system there and serving their"
                        " admission webhooks on --webhook-listen")
    p.add_argument("--webhook-listen", type=listen_address, default=("127.0.0.1", 0),
                   metavar="ADDR:PORT",
                   help="with --api-server: where the webhooks are served (default"
                        " 127.0.0.1:0, a free port)")
    p.set_defaults(func=run)


def check_state(path: str) -> str | None:
    """Why ``path`` cannot hold the emulator's SQLite state (None if it can):
    its directory is missing, it is a directory, or it is a file that is
    not an SQLite database."""
    p = Path(path)
    parent = p.parent
    if not parent.is_dir():
        return f"--state {path}: directory {parent} does not exist"
    if p.is_dir():
        return f"--state {path}: is a directory"
    if p.exists():
        try:
            with open(p, "rb") as fh:
                head = fh.read(len(SQLITE_MAGIC))
        except OSError as exc:
            return f"--state {path}: {exc.strerror}"
        if head and head != SQLITE_MAGIC:
            return f"--state {path}: not an SQLite database"
    return None


def _on_signals() -> threading.Event:
    """An Event set by SIGTERM or SIGINT (from now on)."""
    done = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    return done


#: how often the main thread looks for a signal's handler to run
SIGNAL_POLL_S = 0.2


def _until_signalled(done: threading.Event) -> None:
    """Wait for _on_signals's event.  Not done.wait () alone: Python runs a
    handler in the main thread only, and a signal the kernel gives one of
    the server's threads does not interrupt the main thread's wait, which
    then never ends (seen: t1000's emulator ignored its SIGTERM)."""
    while not done.wait(SIGNAL_POLL_S):
        pass


def run_attached(args: argparse.Namespace) -> int:
    """--api-server: the controllers as clients of an existing API server."""
    from flux_dws.apiserver.store import ApiError
    from flux_dws.dwsim.systems import SystemError_
    from flux_dws.emulator.attached import Attached

    host, port = args.webhook_listen
    done = _on_signals()
    try:
        att = Attached(args.api_server, system=args.system or "kind", latency=args.latency,
                       webhook_host=host, webhook_port=port)
        att.start()
    except (SystemError_, ValueError, OSError, ApiError) as exc:
        print(f"flux-dws emulator: --api-server {args.api_server}: {exc}", file=sys.stderr)
        return 1
    assert att.webhook is not None
    try:
        att.write_kubeconfig(args.kubeconfig)
    except OSError as exc:
        att.stop()
        print(f"flux-dws emulator: --kubeconfig {args.kubeconfig}: {exc}", file=sys.stderr)
        return 1
    print(f"flux-dws emulator: controllers of {args.system or 'kind'} attached to"
          f" {att.store.http.config.server}, webhooks on {att.webhook.url}", flush=True)
    print(f"flux-dws emulator: faults on {att.webhook.url}/_emulator/"
          f" (flux-dws fault --kubeconfig {args.kubeconfig})", flush=True)
    _until_signalled(done)
    att.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    if args.api_server:
        return run_attached(args)
    host, port = args.listen
    from flux_dws.dwsim.systems import SystemError_
    why = check_state(args.state) if args.state else None
    if why:
        print(f"flux-dws emulator: {why}", file=sys.stderr)
        return 1
    try:
        emu = Emulator(host, port, use_tls=not args.plain_http,
                       token=None if args.no_auth else "auto", kubeconfig=args.kubeconfig,
                       state=args.state, history=args.history,
                       bookmark_interval=args.bookmark_interval, system=args.system,
                       latency=args.latency)
    except (SystemError_, ValueError) as exc:
        print(f"flux-dws emulator: {exc}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:
        print(f"flux-dws emulator: --state {args.state}: {exc}", file=sys.stderr)
        return 1
    done = _on_signals()
    try:
        emu.start()
    except OSError as exc:
        emu.stop()
        if exc.filename is None:
            what = f"cannot listen on {host}:{port}"
        elif args.kubeconfig and str(args.kubeconfig).startswith(str(exc.filename)):
            # the file or one of its directories: name the option's value
            what = f"cannot write --kubeconfig {args.kubeconfig}"
        else:
            what = f"cannot write {exc.filename}"
        print(f"flux-dws emulator: {what}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"flux-dws emulator: serving {emu.url}, kubeconfig {emu.kubeconfig}", flush=True)
    _until_signalled(done)
    emu.stop()
    return 0
