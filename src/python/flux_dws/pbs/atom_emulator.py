"""An ATOM emulator: HTTP on a UNIX socket, as HPE Cray's atomd serves it.

Default behaviour (pbs-atom-hook-notes.md §2, §5):

  POST   /rm/v1/jobs          {"jobid": str, "uid": int, "exclusive": bool}
                              200 and the job; 400 if malformed or already known
  GET    /rm/v1/jobs          {"jobs": [...]}
  GET    /rm/v1/jobs/<jobid>  the job, or 404
  DELETE /rm/v1/jobs/<jobid>  204 (no body), or 404
  anything else               404, or 405 for a wrong method

Faults are scripted per method, first in first out: the next request of
that method takes the next action, and with none left the default applies.

  status(code, body)  answer with this status (and body text, if given)
  delay(seconds)      wait, then answer normally (stop() cuts the wait short)
  drop                close the connection without answering
  garbage             answer with bytes that are not HTTP
  truncate            a 200 whose body is shorter than its Content-Length

Every request is recorded (method, raw and unquoted path, headers, body,
parsed JSON, what was answered).  From the command line::

    python -m flux_dws.pbs.atom_emulator --socket /var/run/atomd/atomd.sock \\
        [--fault POST=status:500] [--fault DELETE=delay:5] [--quiet]

prints one JSON line per request it received (see doc/guide/pbs-atom-hook.rst).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import socket
import socketserver
import stat
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from types import FrameType
from typing import Any

JOBS = "/rm/v1/jobs"
KINDS = ("status", "delay", "drop", "garbage", "truncate")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
MAX_BODY = 1 << 20


class AtomEmulatorError(Exception):
    """The emulator cannot start or was given a bad fault description."""


@dataclass(frozen=True)
class Action:
    """One scripted answer; build it with the class methods."""

    kind: str
    code: int = 0
    body: str | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise AtomEmulatorError(f"unknown fault '{self.kind}' (one of {', '.join(KINDS)})")
        if self.kind == "status" and not 100 <= self.code <= 599:
            raise AtomEmulatorError(f"status code {self.code} is not within 100-599")
        if self.seconds < 0:
            raise AtomEmulatorError(f"delay {self.seconds} is negative")

    @classmethod
    def status(cls, code: int, body: str | None = None) -> Action:
        return cls("status", code=code, body=body)

    @classmethod
    def delay(cls, seconds: float) -> Action:
        return cls("delay", seconds=seconds)

    @classmethod
    def drop(cls) -> Action:
        return cls("drop")

    @classmethod
    def garbage(cls) -> Action:
        return cls("garbage")

    @classmethod
    def truncate(cls) -> Action:
        return cls("truncate")

    @classmethod
    def parse(cls, text: str) -> Action:
        """``status:CODE[:BODY]``, ``delay:SECONDS``, ``drop``, ``garbage``
        or ``truncate``."""
        kind, _, rest = text.partition(":")
        try:
            if kind == "status":
                code, _, body = rest.partition(":")
                return cls.status(int(code), body or None)
            if kind == "delay":
                return cls.delay(float(rest))
        except ValueError:
            raise AtomEmulatorError(f"bad fault '{text}': expected status:CODE[:BODY]"
                                    f" or delay:SECONDS") from None
        if rest:
            raise AtomEmulatorError(f"bad fault '{text}': '{kind}' takes no argument")
        return cls(kind)


@dataclass
class Request:
    """A request as the emulator received it."""

    method: str
    raw_path: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = None
    reply: str = ""           # the status sent, or drop / garbage / truncate

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.raw_path,
                "body": self.body.decode("utf-8", "replace"), "reply": self.reply}


@dataclass
class State:
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    faults: dict[str, collections.deque[Action]] = field(
        default_factory=lambda: collections.defaultdict(collections.deque))
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    on_request: Callable[[Request], None] | None = None


def _error(msg: str) -> bytes:
    return json.dumps({"error": msg}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State

    # AF_UNIX peers have no address: the default logging would crash on it.
    def address_string(self) -> str:
        return "unix"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, req: Request, code: int, body: bytes = b"",
              length: int | None = None, reply: str | None = None) -> None:
        # record the answer before giving it: a client may look right after
        req.reply = reply or str(code)
        try:
            self.send_response(code)
            if code != 204:
                if body:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) if length is None else length))
            self.end_headers()
            if code != 204:
                self.wfile.write(body)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _close(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _handle(self, method: str) -> None:
        raw_length = self.headers.get("Content-Length") or "0"
        try:
            length = int(raw_length)
            if not 0 <= length <= MAX_BODY:
                raise ValueError(raw_length)
        except ValueError:
            length = -1
        body = self.rfile.read(length) if length > 0 else b""
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        req = Request(method, self.path, path, dict(self.headers.items()), body)
        try:
            req.json = json.loads(body) if body else None
        except ValueError:
            req.json = None
        with self.state.lock:
            self.state.requests.append(req)
            queue = self.state.faults.get(method)
            action = queue.popleft() if queue and length >= 0 else None
        if length < 0:
            self.close_connection = True
            self._send(req, 400, _error(f"bad Content-Length {raw_length!r}"))
        else:
            self._answer(action, method, path, req)
        if self.state.on_request is not None:
            self.state.on_request(req)

    def _answer(self, action: Action | None, method: str, path: str, req: Request) -> None:
        if action is None or action.kind == "delay":
            if action is not None:
                self.state.stopping.wait(action.seconds)
            return self._default(method, path, req)
        if action.kind == "status":
            body = (action.body if action.body is not None
                    else json.dumps({"error": f"scripted {action.code}"}))
            return self._send(req, action.code, body.encode())
        req.reply = action.kind
        if action.kind == "garbage":
            try:
                self.wfile.write(b"this is not HTTP\r\n\r\n")
            except OSError:
                pass
        elif action.kind == "truncate":
            self._send(req, 200, b'{"jobid": ', length=100, reply=action.kind)
        self._close()

    def _default(self, method: str, path: str, req: Request) -> None:
        jobs = self.state.jobs
        if path == JOBS:
            if method == "GET":
                with self.state.lock:
                    listing = list(jobs.values())
                return self._send(req, 200, json.dumps({"jobs": listing}).encode())
            if method != "POST":
                return self._send(req, 405, _error(f"{method} is not allowed on {JOBS}"))
            j = req.json
            if (not isinstance(j, dict) or not isinstance(j.get("jobid"), str)
                    or not isinstance(j.get("uid"), int) or isinstance(j.get("uid"), bool)
                    or not isinstance(j.get("exclusive"), bool)):
                return self._send(req, 400, _error("expected a JSON object with jobid (string),"
                                              " uid (integer) and exclusive (boolean)"))
            with self.state.lock:
                known = j["jobid"] in jobs
                if not known:
                    jobs[j["jobid"]] = j
            if known:
                return self._send(req, 400, _error(f"job {j['jobid']} already exists"))
            return self._send(req, 200, json.dumps(j).encode())
        if path.startswith(JOBS + "/"):
            jobid = path[len(JOBS) + 1:]
            with self.state.lock:
                job = jobs.get(jobid)
                if method == "DELETE" and job is not None:
                    del jobs[jobid]
            if method not in ("GET", "DELETE"):
                return self._send(req, 405, _error(f"{method} is not allowed on a job"))
            if job is None:
                return self._send(req, 404, _error(f"job {jobid} not found"))
            return self._send(req, 200, json.dumps(job).encode()) if method == "GET" \
                else self._send(req, 204)
        return self._send(req, 404, _error(f"no resource {path}"))

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and left is not an error here


def _clear_path(path: str) -> None:
    """Remove a stale socket at path; refuse anything else."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise AtomEmulatorError(f"{path} exists and is not a socket; not replacing it")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)  # nobody listens: a socket left behind
        return
    finally:
        probe.close()
    raise AtomEmulatorError(f"a server is listening on {path} already (a real atomd?);"
                            f" not replacing it")


class AtomEmulator:
    """``with AtomEmulator(path) as atom:`` serves ATOM on the socket path;
    ``atom.fault("POST", Action.status(500))`` scripts the next POST."""

    def __init__(self, socket_path: str, mode: int | None = None,
                 on_request: Callable[[Request], None] | None = None) -> None:
        self.socket_path = socket_path
        self.mode = mode
        self.state = State(on_request=on_request)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> AtomEmulator:
        """Bind and serve; AtomEmulatorError if the path is taken."""
        _clear_path(self.socket_path)
        self.state.stopping.clear()
        handler = type("BoundHandler", (Handler,), {"state": self.state})
        try:
            self._server = _Server(self.socket_path, handler)
        except OSError as exc:
            raise AtomEmulatorError(f"cannot listen on {self.socket_path}: {exc}") from None
        if self.mode is not None:
            os.chmod(self.socket_path, self.mode)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self, remove_socket: bool = True) -> None:
        """Stop serving.  remove_socket=False leaves the socket file behind,
        as a daemon that died does (nobody listens on it)."""
        self.state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if remove_socket:
            try:
                if stat.S_ISSOCK(os.lstat(self.socket_path).st_mode):
                    os.unlink(self.socket_path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> AtomEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fault(self, method: str, *actions: Action) -> None:
        """Queue actions for the next requests of this method."""
        if method not in METHODS:
            raise AtomEmulatorError(f"unknown method '{method}' (one of {', '.join(METHODS)})")
        with self.state.lock:
            self.state.faults[method].extend(actions)

    def add_job(self, jobid: str, uid: int = 1, exclusive: bool = False) -> None:
        """Put a job into the table, as if ATOM had taken an earlier POST."""
        with self.state.lock:
            self.state.jobs[jobid] = {"jobid": jobid, "uid": uid, "exclusive": exclusive}

    @property
    def requests(self) -> list[Request]:
        with self.state.lock:
            return list(self.state.requests)

    @property
    def jobs(self) -> dict[str, dict[str, Any]]:
        with self.state.lock:
            return dict(self.state.jobs)


# --- command line -------------------------------------------------------------


def _fault(text: str) -> tuple[str, Action]:
    method, sep, spec = text.partition("=")
    if not sep or method.upper() not in METHODS:
        raise argparse.ArgumentTypeError(f"expected METHOD=ACTION (e.g. POST=status:500),"
                                         f" not '{text}'")
    try:
        return method.upper(), Action.parse(spec)
    except AtomEmulatorError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _mode(text: str) -> int:
    try:
        return int(text, 8)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an octal mode such as 0660,"
                                         f" not '{text}'") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--socket", required=True, metavar="PATH",
                   help="socket to serve on (e.g. /var/run/atomd/atomd.sock)")
    p.add_argument("--fault", type=_fault, action="append", default=[],
                   metavar="METHOD=ACTION",
                   help="script the next request of METHOD, in order: status:CODE[:BODY],"
                        " delay:SECONDS, drop, garbage or truncate (repeatable)")
    p.add_argument("--mode", type=_mode, metavar="OCTAL",
                   help="permissions of the socket file (default: from the umask)")
    p.add_argument("--quiet", action="store_true",
                   help="do not print a JSON line per request received")


def run(args: argparse.Namespace, prog: str) -> int:
    out_lock = threading.Lock()

    def show(req: Request) -> None:
        line = json.dumps({"time": round(time.time(), 3), **req.to_json()})
        with out_lock:
            print(line, flush=True)

    atom = AtomEmulator(args.socket, mode=args.mode, on_request=None if args.quiet else show)
    for method, action in args.fault:
        atom.fault(method, action)
    try:
        # the first line says it serves: a request's line, printed by the
        # serving thread, waits for it
        with out_lock:
            atom.start()
            print(f"atom emulator: serving {args.socket}", flush=True)
    except AtomEmulatorError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not done.wait(0.2):
            pass
    finally:
        atom.stop()
        for s, h in old.items():
            signal.signal(s, h)
    return 0


def main(argv: list[str] | None = None) -> int:
    prog = "python -m flux_dws.pbs.atom_emulator"
    p = argparse.ArgumentParser(prog=prog, description="An ATOM emulator on a UNIX socket.")
    add_arguments(p)
    return run(p.parse_args(argv), prog)


if __name__ == "__main__":
    sys.exit(main())
