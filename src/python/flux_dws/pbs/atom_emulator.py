"""An ATOM emulator: HTTP on a UNIX socket, as HPE Cray's atomd serves it.

Faithful default behaviour (pbs-atom-hook-notes.md §2, §5):
  POST   /rm/v1/jobs          {"jobid": str, "uid": int, "exclusive": bool}
                              200 + the job; 400 if malformed or already known
  GET    /rm/v1/jobs          {"jobs": [...]}
  GET    /rm/v1/jobs/<jobid>  the job, or 404
  DELETE /rm/v1/jobs/<jobid>  204 (empty), or 404
  anything else: 404, or 405 for a wrong method

Faults are scripted per method (a FIFO; each request takes the next action):
``status(code, body)``, ``delay(seconds)`` (then the normal answer),
``drop`` (close without answering), ``garbage`` (a non-HTTP reply).  Every
request is recorded (method, raw path, unquoted path, headers, body).

    python -m flux_dws.pbs.atom_emulator --socket /var/run/atomd/atomd.sock
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import socketserver
import sys
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

JOBS = "/rm/v1/jobs"


@dataclass
class Request:
    method: str
    raw_path: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = None


@dataclass
class Action:
    kind: str                 # status delay drop garbage
    code: int = 0
    body: str = ""
    seconds: float = 0.0


@dataclass
class State:
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    faults: dict[str, collections.deque[Action]] = field(
        default_factory=lambda: collections.defaultdict(collections.deque))
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State

    # AF_UNIX peers have no address: the default logging would crash
    def address_string(self) -> str:
        return "unix"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, code: int, obj: Any = None) -> None:
        body = b"" if obj is None else json.dumps(obj).encode()
        try:
            self.send_response(code)
            if code != 204:
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if code != 204:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        req = Request(method, self.path, path, dict(self.headers.items()), body)
        try:
            req.json = json.loads(body) if body else None
        except ValueError:
            req.json = None
        with self.state.lock:
            self.state.requests.append(req)
            queue = self.state.faults.get(method)
            action = queue.popleft() if queue else None
        if action is not None:
            if action.kind == "status":
                return self._reply(action.code, json.loads(action.body) if action.body else None)
            if action.kind == "drop":
                self.close_connection = True
                return
            if action.kind == "garbage":
                try:
                    self.wfile.write(b"this is not HTTP\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True
                return
            if action.kind == "delay":
                self.state.stopping.wait(action.seconds)
        self._default(method, path, req)

    def _default(self, method: str, path: str, req: Request) -> None:
        jobs = self.state.jobs
        if path == JOBS:
            if method == "GET":
                return self._reply(200, {"jobs": list(jobs.values())})
            if method != "POST":
                return self._reply(405, {"error": "method not allowed"})
            j = req.json
            if (not isinstance(j, dict) or not isinstance(j.get("jobid"), str)
                    or not isinstance(j.get("uid"), int) or isinstance(j.get("uid"), bool)
                    or not isinstance(j.get("exclusive"), bool)):
                return self._reply(400, {"error": "expected jobid (str), uid (int) and"
                                                  " exclusive (bool)"})
            with self.state.lock:
                if j["jobid"] in jobs:
                    return self._reply(400, {"error": f"job {j['jobid']} already exists"})
                jobs[j["jobid"]] = j
            return self._reply(200, j)
        if path.startswith(JOBS + "/"):
            jobid = path[len(JOBS) + 1:]
            with self.state.lock:
                job = jobs.get(jobid)
                if method == "GET":
                    return self._reply(200, job) if job else self._reply(404, {
                        "error": f"job {jobid} not found"})
                if method == "DELETE":
                    if job is None:
                        return self._reply(404, {"error": f"job {jobid} not found"})
                    del jobs[jobid]
                    return self._reply(204)
            return self._reply(405, {"error": "method not allowed"})
        return self._reply(404, {"error": "not found"})

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PUT(self) -> None:
        self._handle("PUT")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and left is not an error here


class AtomEmulator:
    """Run with ``with AtomEmulator(path) as atom:``; script faults with
    ``atom.fault("POST", Action("status", 500))``."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.state = State()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> AtomEmulator:
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        handler = type("BoundHandler", (Handler,), {"state": self.state})
        self._server = _Server(self.socket_path, handler)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Unbind (as a daemon that went away); the socket file is removed."""
        self.state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)

    def __enter__(self) -> AtomEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fault(self, method: str, *actions: Action) -> None:
        with self.state.lock:
            self.state.faults[method].extend(actions)

    @property
    def requests(self) -> list[Request]:
        with self.state.lock:
            return list(self.state.requests)

    @property
    def jobs(self) -> dict[str, dict[str, Any]]:
        with self.state.lock:
            return dict(self.state.jobs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flux_dws.pbs.atom_emulator",
                                description="An ATOM emulator on a UNIX socket.")
    p.add_argument("--socket", required=True, help="socket path (e.g. /var/run/atomd/atomd.sock)")
    args = p.parse_args(argv)
    atom = AtomEmulator(args.socket).start()
    print(f"atom emulator: serving {args.socket}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    atom.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
