"""The emulator's Kubernetes API over HTTP(S) (standard library server).

Speaks what the official client and kubectl use: discovery (/api, /apis,
/version), OpenAPI stubs for kubectl, get/list/watch/create/replace/patch/
delete/deletecollection on every resource of api_resources.RESOURCES, status
subresources, pods/log, bearer-token authentication and Kubernetes Status
objects on every error.  Each connection is a thread (HTTP/1.1 keep-alive,
TCP_NODELAY: without it keep-alive requests stall ~40 ms on delayed ACKs).
"""

from __future__ import annotations

import email.utils
import functools
import http
import json
import logging
import select
import socket
import socketserver
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Collection
from typing import Any

from flux_dws.apiserver import api_resources as res
from flux_dws.apiserver import selectors, table
from flux_dws.apiserver.api_resources import Resource
from flux_dws.apiserver.apifaults import STATUS_REASONS, ApiFault, ApiFaults
from flux_dws.apiserver.selectors import SelectorError
from flux_dws.apiserver.store import ApiError, Store, go_json_type, invalid, not_found

log = logging.getLogger("flux_dws.emulator")  # the name the emulator's log had
MAX_BODY = 3 * 1024 * 1024
KUBE_VERSION = {"major": "1", "minor": "30", "gitVersion": "v1.30.0-flux-dws-emulator",
                "gitCommit": "", "gitTreeState": "clean", "buildDate": "2026-11-22T00:00:00Z",
                "goVersion": "go1.22", "compiler": "gc", "platform": "linux/amd64"}
UNAUTHENTICATED = ("/version", "/healthz", "/readyz", "/livez")
VERBS_NS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
# kubectl 1.20 needs /openapi/v2 as protobuf (served as octet-stream): a
# minimal openapi_v2.Document {swagger: "2.0", info: {title, version}, paths: {}}
OPENAPI_V2 = b"\x0a\x032.0\x12\x0f\x0a\x08emulator\x12\x031.0\x42\x00"


def status_body(code: int, reason: str, message: str,
                details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Failure", "message": message, "code": code}
    if reason:
        body["reason"] = reason
    if details is not None:  # empty name and group are left out (omitempty)
        body["details"] = {k: v for k, v in details.items()
                           if not (k in ("name", "group") and v == "")}
    return body


class Settings:
    """Server knobs shared by all handler threads."""

    def __init__(self, token: str | None, bookmark_interval: float = 60.0,
                 default_watch_timeout: float = 1800.0) -> None:
        self.token = token
        self.bookmark_interval = bookmark_interval
        self.default_watch_timeout = default_watch_timeout
        self.stopping = threading.Event()
        # the controllers' own endpoints (emulator.admin), served beside the
        # Kubernetes API by whoever runs controllers on this server: their
        # paths, and the answer to one call as (status, JSON body)
        self.admin_paths: Collection[str] = ()
        self.admin: Callable[[str, str, Callable[[], Any]], tuple[int, Any]] | None = None
        self.api_faults = ApiFaults()  # HTTP-level faults (emulator.apifaults)
        # kept-alive connections waiting for their next request (close_idle)
        self._idle: set[socket.socket] = set()
        self._idle_lock = threading.Condition()

    def idle(self, sock: socket.socket, waiting: bool) -> None:
        """A connection waits for its next request (or no longer does)."""
        with self._idle_lock:
            if waiting:
                self._idle.add(sock)
            else:
                self._idle.discard(sock)
            self._idle_lock.notify_all()

    def wait_idle(self, count: int, timeout: float) -> bool:
        """Wait until `count` kept-alive connections wait for their next
        request (a test's sync point); False after `timeout` s."""
        with self._idle_lock:
            return self._idle_lock.wait_for(lambda: len(self._idle) >= count, timeout)

    def close_idle(self) -> int:
        """Close every kept-alive connection waiting for a request, as Go's
        server does at its shutdown: a client's next request then finds
        the server that follows (urllib3 sees the connection dropped
        before it reuses it).  A connection busy with a request closes
        after its answer (stopping is set first).  How many."""
        with self._idle_lock:
            idle, self._idle = list(self._idle), set()
        for sock in idle:
            try:  # the plain socket's shutdown: the TLS object stays whole
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass
        return len(idle)


REASONS = {code.value: code.phrase for code in http.HTTPStatus}
# what kube-apiserver's mux answers for a path no API serves (text, no Status)
PAGE_NOT_FOUND = "404 page not found\n"
UNSUPPORTED_PATCH = ("the body of the request was in an unknown format - accepted media types"
                     " include: application/json-patch+json, application/merge-patch+json,"
                     " application/apply-patch+yaml")

MAX_LINE = 65536
HANDSHAKE_TIMEOUT = 10.0
DISCARD_LIMIT = 64 * 1024 * 1024  # oversized bodies up to this are read before the 413
MAX_HEADERS = 200


class Headers:
    """Request headers, looked up without regard to case."""

    def __init__(self, items: dict[str, str]) -> None:
        self._items = items

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._items.get(name.lower(), default)


class _Date:
    """The Date header, formatted once a second."""

    _second = 0
    _value = ""

    @classmethod
    def now(cls) -> str:
        t = int(time.time())
        if t != cls._second:
            cls._value = email.utils.formatdate(t, usegmt=True)
            cls._second = t
        return cls._value


class Handler(socketserver.StreamRequestHandler):
    """One client connection: HTTP/1.1 requests, kept alive, one at a time.

    A small HTTP/1.1 reader of our own (BaseHTTPRequestHandler's
    email-based header parsing and two writes per response halved the
    request rate); each response goes out in one write.
    """

    rbufsize = 65536
    wbufsize = 0
    disable_nagle_algorithm = True
    timeout = None
    store: Store
    settings: Settings
    command = ""
    path = ""
    headers = Headers({})

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(HANDSHAKE_TIMEOUT)
            try:
                self.request.do_handshake()
            except (OSError, ssl.SSLError):
                self.request.close()
                raise
            self.request.settimeout(None)
        super().setup()

    def handle(self) -> None:
        self.close_connection = False
        try:
            while not self.close_connection and not self.settings.stopping.is_set():
                if not self._one_request():
                    return
        except (OSError, ssl.SSLError, ValueError):
            return  # the client went away (or spoke TLS/HTTP wrongly)
        finally:
            self.settings.idle(self.request, False)

    def _one_request(self) -> bool:
        self._warnings: list[str] = []
        self._extra_headers: list[str] = []
        self._held: ApiFault | None = None  # an api fault that holds this answer
        self.command = ""
        self.settings.idle(self.request, True)
        line = self.rfile.readline(MAX_LINE + 1)
        self.settings.idle(self.request, False)
        if not line:
            return False
        if len(line) > MAX_LINE:
            self.close_connection = True
            self._error(414, "RequestURITooLong", "the request line is too long")
            return False
        parts = line.decode("latin-1").split()
        if not parts:
            return True  # a stray empty line between requests
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            self.close_connection = True
            self._error(400, "BadRequest", f"malformed request line {line[:80]!r}")
            return False
        self.command, self.path, version = parts
        items: dict[str, str] = {}
        for _ in range(MAX_HEADERS + 1):
            h = self.rfile.readline(MAX_LINE + 1)
            if h in (b"\r\n", b"\n", b""):
                break
            name, sep, value = h.decode("latin-1").partition(":")
            if not sep or len(h) > MAX_LINE:
                self.close_connection = True
                self._error(400, "BadRequest", "malformed request header")
                return False
            items[name.strip().lower()] = value.strip()
        else:
            self.close_connection = True
            self._error(431, "RequestHeaderFieldsTooLarge", "too many request headers")
            return False
        self.headers = Headers(items)
        conn = items.get("connection", "").lower()
        self.close_connection = conn == "close" or (version == "HTTP/1.0"
                                                     and conn != "keep-alive")
        self._body_read = False
        if self.settings.stopping.is_set():
            # a server going away answers what still comes on a kept-alive
            # connection with 503 and closes it, as Go's server does, so
            # the client's next request finds the server that follows
            self.close_connection = True
            self._error(503, "ServiceUnavailable", "the API server is shutting down")
            return False
        method = "GET" if self.command == "HEAD" else self.command
        if method not in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            self._skip_body()
            self._error(405, "MethodNotAllowed", f"method {self.command} is not supported")
            return True
        self._dispatch(method)
        if not self._body_read and not self.close_connection:
            self._skip_body()
        return True

    # --- responses -------------------------------------------------------

    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        head = [f"HTTP/1.1 {code} {REASONS.get(code, 'Unknown')}",
                f"Content-Type: {ctype}", f"Content-Length: {len(body)}",
                "Cache-Control: no-cache, private", f"Date: {_Date.now()}"]
        for w in self._warnings:
            head.append(f"Warning: 299 - {json.dumps(w)}")
        head.extend(self._extra_headers)
        if self.close_connection:
            head.append("Connection: close")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        held, self._held = self._held, None
        if held is not None:
            held.wait_released()
        self.wfile.write(data + body if self.command != "HEAD" else data)

    def _json(self, code: int, obj: Any) -> None:
        self._send(code, json.dumps(obj, separators=(",", ":")).encode())

    def _error(self, code: int, reason: str, message: str,
               details: dict[str, Any] | None = None) -> None:
        self._json(code, status_body(code, reason, message, details))

    def _not_found(self) -> None:
        self._error(404, "NotFound", "the server could not find the requested resource")

    # --- request plumbing --------------------------------------------------

    def _authorized(self, path: str) -> bool:
        if self.settings.token is None or path in UNAUTHENTICATED:
            return True
        auth = self.headers.get("Authorization", "")
        return auth == f"Bearer {self.settings.token}"

    def _length(self) -> int:
        text = self.headers.get("Content-Length")
        if text is None:
            return -1 if (self.headers.get("Transfer-Encoding") or "").lower() == "chunked" \
                else 0
        try:
            n = int(text)
        except ValueError:
            n = -2
        if n < 0:
            self.close_connection = True
            self._body_read = True
            raise ApiError(400, "BadRequest", f"invalid Content-Length {text!r}")
        return n

    def _skip_body(self) -> None:
        try:
            n = self._length()
        except ApiError:
            return
        if n > MAX_BODY or n == -1:
            self.close_connection = True
        elif n:
            self.rfile.read(n)
        self._body_read = True

    def _read_raw(self) -> bytes:
        n = self._length()
        self._body_read = True
        if n > MAX_BODY:
            # read (and drop) a body of moderate size so that a client that
            # sends it all before reading gets the answer; then hang up
            self.close_connection = True
            left = n if n <= DISCARD_LIMIT else 0
            while left > 0:
                got = len(self.rfile.read(min(left, 1 << 20)))
                if not got:
                    break
                left -= got
            raise ApiError(413, "RequestEntityTooLarge",
                           f"Request entity too large: limit is {MAX_BODY}")
        if (self.headers.get("Expect") or "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if n >= 0:
            raw = self.rfile.read(n) if n else b""
            if len(raw) < n:
                self.close_connection = True
                raise ApiError(400, "BadRequest", "the request body ended early")
            return raw
        chunks: list[bytes] = []  # Transfer-Encoding: chunked
        total = 0
        while True:
            size_line = self.rfile.readline(MAX_LINE)
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                raise ApiError(400, "BadRequest", "malformed chunked request body") from None
            total += size
            if total > MAX_BODY:
                self.close_connection = True
                raise ApiError(413, "RequestEntityTooLarge",
                               f"Request entity too large: limit is {MAX_BODY}")
            if size == 0:
                while self.rfile.readline(MAX_LINE) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline(MAX_LINE)

    def _body(self) -> Any:
        raw = self._raw_body = self._read_raw()
        if not raw:
            raise ApiError(400, "BadRequest", "the request has no body")
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ApiError(400, "BadRequest",
                           f"couldn't get version/kind; json parse error: {exc}") from None

    def _dispatch(self, method: str) -> None:
        path, items = split_target(self.path)
        query = dict(items)
        if not self._authorized(path):
            self._error(401, "Unauthorized", "Unauthorized")
            return
        self.store.take_warnings()
        if not path.startswith("/_emulator/") and self._api_fault(method):
            return
        try:
            if path == "/_emulator/compact" and method == "POST":
                self.store.compact()  # test hook: drop watch history as etcd compaction
                self._json(200, {"resourceVersion": str(self.store.rv)})
            elif path == "/_emulator/api-faults":
                self._api_faults(method)
            elif path in self.settings.admin_paths and self.settings.admin is not None:
                self._json(*self.settings.admin(method, path, self._body))
            elif not self._discovery(method, path):
                self._resource(method, path, query)
        except ApiError as exc:
            if exc.code == 404 and exc.reason == "" and exc.message == PAGE_NOT_FOUND:
                self._send(404, PAGE_NOT_FOUND.encode(), "text/plain; charset=utf-8")
            else:
                self._error(exc.code, exc.reason, exc.message, exc.details)
        except SelectorError as exc:
            self._error(400, "BadRequest", str(exc))
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
        except Exception as exc:  # a bug of ours: say so, keep serving
            log.exception("%s %s", self.command, self.path)
            self._error(500, "InternalError", f"Internal error occurred: {exc!r}")

    def _api_fault(self, method: str) -> bool:
        """Answer this request with an injected fault, if a rule says so."""
        fault = self.settings.api_faults.take(method, self.path)
        if fault is None:
            return False
        if fault.hold:  # carried out; _send holds its answer
            self._held = fault
            return False
        self.close_connection = self.close_connection or fault.drop
        if fault.drop:  # hang up without an answer
            self._body_read = True
            try:
                self.request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        self._skip_body()
        if fault.retry_after is not None:
            self._extra_headers.append(f"Retry-After: {fault.retry_after:g}")
        self._error(fault.status, STATUS_REASONS.get(fault.status, REASONS.get(
            fault.status, "Unknown").replace(" ", "")), fault.message)
        return True

    def _api_faults(self, method: str) -> None:
        """Admin endpoint: POST a rule, dropWatches, expireWatches or
        muteWatches; GET; DELETE."""
        faults = self.settings.api_faults
        if method == "POST":
            body = self._body()
            if not isinstance(body, dict):
                raise ApiError(400, "BadRequest", "an API fault is a JSON object")
            try:
                if body.get("dropWatches") is True and len(body) == 1:
                    return self._json(200, {"dropped": faults.drop_watches()})
                if "expireWatches" in body and len(body) == 1:
                    faults.expire_watches(body["expireWatches"])
                    return self._json(200, faults.to_json())
                if "muteWatches" in body and len(body) == 1:
                    faults.mute_watches(body["muteWatches"])
                    return self._json(200, faults.to_json())
                fault = faults.add(ApiFault.from_json(body))
            except (TypeError, ValueError) as exc:
                raise ApiError(400, "BadRequest", f"invalid API fault: {exc}") from None
            self._json(201, fault.to_json())
        elif method == "DELETE":
            faults.clear()
            self._json(200, faults.to_json())
        elif method == "GET":
            self._json(200, faults.to_json())
        else:
            raise ApiError(405, "MethodNotAllowed", "use GET, POST or DELETE")

    # --- discovery ---------------------------------------------------------

    def _discovery(self, method: str, path: str) -> bool:
        if method != "GET":
            return False
        if path == "/version":
            self._json(200, KUBE_VERSION)
        elif path in UNAUTHENTICATED:
            self._send(200, b"ok", "text/plain")
        elif path == "/api":
            self._json(200, {"kind": "APIVersions", "versions": ["v1"],
                             "serverAddressByClientCIDRs": [
                                 {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
        elif path == "/api/v1":
            self._json(200, resource_list("", "v1"))
        elif path == "/apis":
            self._json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                             "groups": [group_doc(g, vs) for g, vs in res.groups().items()]})
        elif path.startswith("/apis/") and path.count("/") == 2:
            g = path.split("/")[2]
            if g not in res.groups():
                self._send(404, PAGE_NOT_FOUND.encode(), "text/plain; charset=utf-8")
            else:
                self._json(200, {"kind": "APIGroup", "apiVersion": "v1",
                                 **group_doc(g, res.groups()[g])})
        elif path.startswith("/apis/") and path.count("/") == 3:
            _, _, g, v = path.split("/")
            if v not in res.groups().get(g, ()):
                self._send(404, PAGE_NOT_FOUND.encode(), "text/plain; charset=utf-8")
            else:
                self._json(200, resource_list(g, v))
        elif path == "/openapi/v2":
            self._send(200, OPENAPI_V2, "application/octet-stream")
        elif path == "/openapi/v3":
            paths = {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1"}}
            for g, vs in res.groups().items():
                for v in vs:
                    paths[f"apis/{g}/{v}"] = {"serverRelativeURL": f"/openapi/v3/apis/{g}/{v}"}
            self._json(200, {"paths": paths})
        elif path.startswith("/openapi/v3/"):
            parts = path[len("/openapi/v3/"):].split("/")
            g, v = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
            self._json(200, openapi_v3(g, v))
        else:
            return False
        return True

    # --- resources -----------------------------------------------------------

    def _resource(self, method: str, path: str, q: dict[str, str]) -> None:
        r, ns, name, sub, watch_path = route(path)
        st = self.store
        if r.group == res.CRD_GROUP and method != "GET":
            raise ApiError(405, "MethodNotAllowed", "the emulator's CustomResourceDefinitions"
                                                    " are built in: it serves the DWS, NNF and"
                                                    " Lustre resources itself")
        nsv = ns or ""
        if method == "GET" and name and sub == "log":
            return self._send(200, st.pod_log(nsv, name, q.get("container") or None,
                                              _count_param(q, "tailLines"),
                                              _count_param(q, "limitBytes", 1)),
                              "text/plain")
        if method == "GET" and name and not watch_path:
            raw = st.get_raw(r, nsv, name)
            if self._table():
                obj = json.loads(raw)
                return self._json(200, table.table(r, [obj], {
                    "resourceVersion": obj["metadata"]["resourceVersion"]},
                    q.get("includeObject") or "Metadata"))
            return self._send(200, raw)
        if method == "GET":
            if watch_path or q.get("watch") in ("1", "true", "True"):
                if name:
                    q["fieldSelector"] = f"metadata.name={name}"
                return self._watch(r, ns, q)
            return self._list(r, ns, q)
        validation = q.get("fieldValidation") or "Warn"
        if validation not in ("Ignore", "Warn", "Strict"):
            raise ApiError(400, "BadRequest", f"fieldValidation parameter unsupported:"
                                              f' "{validation}": must be one of "Ignore",'
                                              f' "Warn" or "Strict"')
        dry_run = _dry_run(q, {"POST": "Create", "PUT": "Update", "PATCH": "Patch",
                               "DELETE": "Delete"}.get(method, ""))
        if method == "POST" and not name:
            if r.namespaced and ns is None:
                raise ApiError(405, "MethodNotAllowed", "create needs a namespace in the URL")
            body = self._check_kind(r, self._body())
            raw = st.create_raw(r, nsv, body, dry_run, validation)
            self._warnings = st.take_warnings()
            return self._send(201, raw)
        if method == "PUT" and name:
            body = self._check_kind(r, self._body())
            raw = st.replace_raw(r, nsv, name, body, sub, validation, dry_run=dry_run)
            self._warnings = st.take_warnings()
            return self._send(200, raw)
        if method == "PATCH" and name:
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            kinds = {"application/merge-patch+json": "merge",
                     "application/json-patch+json": "json"}
            ptype = kinds.get(ctype)
            if ptype is None and ctype == "application/strategic-merge-patch+json" and not r.group:
                ptype = "merge"  # core kinds: our objects hold no merge-keyed lists we need
            if ptype is None:
                self._skip_body()
                raise ApiError(415, "UnsupportedMediaType", UNSUPPORTED_PATCH)
            body = self._body()
            raw = st.patch_raw(r, nsv, name, ptype, body, sub, validation, dry_run=dry_run)
            self._warnings = st.take_warnings()
            return self._send(200, raw)
        if method == "DELETE":
            pre, propagation = self._delete_options(q)
            if name:
                deleted, obj = st.delete(r, nsv, name, pre, propagation, dry_run=dry_run)
                if deleted:
                    md = obj["metadata"]
                    return self._json(200, {"kind": "Status", "apiVersion": "v1",
                                            "metadata": {}, "status": "Success",
                                            "details": {"name": md["name"],
                                                        **({"group": r.group} if r.group
                                                           else {}),
                                                        "kind": r.plural,
                                                        "uid": md.get("uid")}})
                return self._json(200, obj)
            gone = [json.loads(i) for i in st.list_raw(r, ns, q.get("labelSelector"),
                                                       q.get("fieldSelector"))[0]] \
                if dry_run else st.delete_collection(r, ns, q.get("labelSelector"),
                                                     q.get("fieldSelector"), propagation)
            return self._json(200, {"kind": f"{r.kind}List", "apiVersion": r.api_version(),
                                    "metadata": {"resourceVersion": str(st.rv)}, "items": gone})
        raise ApiError(405, "MethodNotAllowed",
                       "the server does not allow this method on the requested resource")

    def _delete_options(self, q: dict[str, str]) -> tuple[dict[str, Any] | None, str]:
        """(preconditions, propagation policy) from DeleteOptions and the query."""
        pre = None
        propagation = q.get("propagationPolicy") or ""
        if q.get("orphanDependents") in ("true", "1"):
            propagation = propagation or "Orphan"
        if self._length():
            opts = self._body()
            if not isinstance(opts, dict):
                raise ApiError(400, "BadRequest", "DeleteOptions must be a JSON object")
            pre = opts.get("preconditions")
            propagation = opts.get("propagationPolicy") or propagation
            if opts.get("orphanDependents") is True:
                propagation = propagation or "Orphan"
        return pre, propagation or "Background"

    def _check_kind(self, r: Resource, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raw = getattr(self, "_raw_body", b"")
            summary = raw[:30].hex() + (" ..." if len(raw) > 30 else "")
            raise ApiError(400, "BadRequest", f"the object provided is unrecognized (must be of"
                                              f" type {r.kind}): couldn't get version/kind; json"
                                              f" parse error: json: cannot unmarshal"
                                              f" {go_json_type(body)} into Go value of type"
                                              ' struct { APIVersion string "json:\\"apiVersion,'
                                              'omitempty\\""; Kind string "json:\\"kind,'
                                              'omitempty\\"" }'
                                              f" ({summary})")
        kind = body.get("kind")
        if r.group and r.group not in res.BUILTIN_GROUPS:
            # custom resources: the CR validator's field errors (a 422)
            api = body.get("apiVersion")
            name = str((body.get("metadata") or {}).get("name") or "")
            causes = []
            if kind is not None and kind != r.kind:
                causes.append(("kind", f'Invalid value: "{kind}": must be {r.kind}'))
            if api is not None and api not in [r.api_version(v) for v in r.versions]:
                causes.append(("apiVersion", f'Invalid value: "{api}": must be'
                                             f" {r.api_version()}"))
            if causes:
                raise invalid(r, name, causes, kind=str(kind or r.kind))
            return body
        if kind is not None and kind != r.kind:
            raise ApiError(400, "BadRequest", f"the kind in the data ({kind}) does not match"
                                              f" the expected kind ({r.kind})")
        api = body.get("apiVersion")
        if api is not None and api not in [r.api_version(v) for v in r.versions]:
            raise ApiError(400, "BadRequest", f"the API version in the data ({api}) does not"
                                              f" match the expected API version"
                                              f" ({r.api_version()})")
        return body

    def _table(self) -> bool:
        """The client asked for server-side printing (kubectl get)."""
        return table.wants_table(self.headers.get("Accept"))

    def _list(self, r: Resource, ns: str | None, q: dict[str, str]) -> None:
        try:
            limit = max(0, int(q.get("limit") or 0))  # a negative limit is no limit
        except ValueError:
            raise ApiError(400, "BadRequest", f"invalid limit {q.get('limit')!r}") from None
        items, rv, token, left = self.store.list_page(r, ns, q.get("labelSelector"),
                                                      q.get("fieldSelector"), limit,
                                                      q.get("continue"))
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if token or (r.group and r.group not in res.BUILTIN_GROUPS):
            meta["continue"] = token or ""  # custom resources' lists always say it
        if left is not None:
            meta["remainingItemCount"] = left
        if self._table():
            return self._json(200, table.table(r, [json.loads(i) for i in items], meta,
                                               q.get("includeObject") or "Metadata"))
        head = json.dumps({"kind": f"{r.kind}List", "apiVersion": r.api_version(),
                           "metadata": meta}, separators=(",", ":"))
        body = head[:-1].encode() + b',"items":[' + b",".join(items) + b"]}"
        self._send(200, body)

    def _watch(self, r: Resource, ns: str | None, q: dict[str, str]) -> None:
        text = q.get("resourceVersion") or ""
        if text and not text.isdigit():  # as the watch cache says it (a 500, no reason)
            raise ApiError(500, "", f'resourceVersion: Invalid value: "{text}":'
                                    f' strconv.ParseUint: parsing "{text}": invalid syntax')
        try:
            rv = int(text) if text else None
            timeout = float(q.get("timeoutSeconds") or self.settings.default_watch_timeout)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid resourceVersion or timeoutSeconds") from None
        if timeout < 0:
            raise ApiError(400, "BadRequest", f"invalid timeoutSeconds {timeout}")
        selectors.label_matcher(q.get("labelSelector"))  # refuse bad ones before the 200
        selectors.field_matcher(q.get("fieldSelector"))
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true", "True")
        as_table = self._table()
        self.wfile.write(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         f"Cache-Control: no-cache, private\r\nDate: {_Date.now()}\r\n"
                         f"Transfer-Encoding: chunked\r\n\r\n".encode())
        faults = self.settings.api_faults
        try:
            if rv and faults.take_expired():
                raise ApiError(410, "Expired", f"too old resource version: {rv} ({rv + 1})")
            w = self.store.watch(r, ns, rv, q.get("labelSelector"), q.get("fieldSelector"))
        except ApiError as exc:  # 410 Gone arrives as an ERROR event, as from the watch cache
            self._chunk(json.dumps({"type": "ERROR", "object": status_body(
                exc.code, exc.reason, exc.message)}).encode() + b"\n")
            self._chunk(b"")
            return
        deadline = time.monotonic() + timeout
        # a bookmark 2 s before the deadline (none if that is past) or
        # every bookmark_interval, as the watch cache schedules them
        pre_timeout = timeout - 2 if timeout > 2 else float("inf")
        next_bookmark = time.monotonic() + min(self.settings.bookmark_interval, pre_timeout)
        sent = rv or self.store.rv  # the newest resourceVersion this watcher has seen
        cut = threading.Event()

        def drop() -> None:
            cut.set()
            w.close()  # wakes the drain below

        handle = faults.watch_opened(drop)
        try:
            while not self.settings.stopping.is_set():
                now = time.monotonic()
                if now >= deadline:
                    break
                if bookmarks and now >= next_bookmark and not faults.muted:
                    sent = max(sent, w.seen_rv)
                    if self.store.rv > sent:  # only news: a bookmark moves the watcher on
                        sent = self.store.rv
                        self._bookmark(r, sent)
                    left = deadline - 2 - now
                    next_bookmark = now + min(self.settings.bookmark_interval,
                                              left if left > 0 else float("inf"))
                wait = min(deadline, next_bookmark if bookmarks else deadline) - now
                events = w.drain(max(0.0, min(wait, 0.5)))
                if not events and self._client_gone():  # as Go's server sees a hang-up
                    self.close_connection = True
                    return
                if cut.is_set():  # an injected drop: hang up without the final chunk
                    self.close_connection = True
                    try:
                        self.request.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                if events and faults.silenced(len(events)):  # injected: lost on the way
                    events = []
                if events and as_table:
                    self._chunk(b"".join(json.dumps({"type": ev.type, "object": table.table(
                        r, [ev.obj], {"resourceVersion": str(ev.rv)},
                        q.get("includeObject") or "Metadata")}).encode() + b"\n"
                        for ev in events))
                elif events:
                    self._chunk(b"".join(b'{"type":"' + ev.type.encode() + b'","object":'
                                         + ev.raw + b"}\n" for ev in events))
                if events:
                    sent = max(sent, events[-1].rv)
            if self.settings.stopping.is_set():
                self.close_connection = True  # its last chunk, then the connection goes
            self._chunk(b"")
        finally:
            faults.watch_closed(handle)
            w.close()

    def _client_gone(self) -> bool:
        """Whether a watch's client hung up (or sent anything: a watching
        client sends nothing more), seen without writing to it."""
        try:
            readable, _, _ = select.select([self.request], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def _bookmark(self, r: Resource, rv: int) -> None:
        obj = {"kind": r.kind, "apiVersion": r.api_version(),
               "metadata": {"resourceVersion": str(rv)}}
        self._chunk(json.dumps({"type": "BOOKMARK", "object": obj}).encode() + b"\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


def _dry_run(q: dict[str, str], options: str) -> bool:
    """Whether a write is a dry run (``dryRun=All``); any other value is
    refused as kube-apiserver's ValidateDryRun refuses it (a 422 naming
    the Create/Update/Patch/DeleteOptions)."""
    value = q.get("dryRun")
    if value is None or value == "All":
        return value == "All"
    message = f'Unsupported value: [{json.dumps(value)}]: supported values: "All"'
    raise ApiError(422, "Invalid", f'{options}Options.meta.k8s.io "" is invalid: dryRun:'
                                   f" {message}",
                   {"group": "meta.k8s.io", "kind": f"{options}Options", "causes": [
                       {"reason": "FieldValueNotSupported", "message": message,
                        "field": "dryRun"}]})


def _count_param(q: dict[str, str], key: str, least: int = 0) -> int | None:
    """An integer query parameter (pods/log's tailLines, limitBytes), or None."""
    value = q.get(key)
    if value is None:
        return None
    try:
        n = int(value)
    except ValueError:
        raise ApiError(400, "BadRequest", f"{key}: invalid value {value!r}:"
                                          f" must be an integer") from None
    if n < least:
        raise ApiError(422, "Invalid", f"PodLogOptions \"\" is invalid: {key}: Invalid value:"
                                       f" {n}: must be greater than or equal to {least}")
    return n


@functools.lru_cache(maxsize=8192)
def route(path: str) -> tuple[Resource, str | None, str | None, str | None, bool]:
    """(resource, namespace or None, name, subresource, is a watch path).

    A path no API serves is kube-apiserver's plain-text "404 page not
    found"; an unknown subresource of a named object (or ``status`` of a
    kind without one) is that object's NotFound, as the real routes say."""
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
    nowhere = ApiError(404, "", PAGE_NOT_FOUND)
    if parts[0] == "api" and len(parts) >= 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise nowhere
    watch_path = bool(rest) and rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    ns = None
    if len(rest) >= 3 and rest[0] == "namespaces" and not (group == "" and len(rest) < 3):
        ns, rest = rest[1], rest[2:]
    if not rest:
        raise nowhere
    r = res.lookup(group, version, rest[0])
    if r is None or (ns is not None and not r.namespaced):
        raise nowhere
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if len(rest) > 3:
        raise nowhere
    if sub is not None and name is not None and (
            sub not in ("status", "log") or (sub == "status" and not r.status)
            or (sub == "log" and r.plural != "pods")):
        raise not_found(r, name)
    return r, ns, name, sub, watch_path


@functools.lru_cache(maxsize=8192)
def split_target(target: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(path without trailing slash, query parameters) of a request target."""
    url = urllib.parse.urlsplit(target)
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
    return url.path.rstrip("/") or "/", tuple(query.items())


def group_doc(g: str, versions: tuple[str, ...]) -> dict[str, Any]:
    return {"name": g,
            "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in versions],
            "preferredVersion": {"groupVersion": f"{g}/{versions[0]}", "version": versions[0]}}


def resource_list(g: str, v: str) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for r in res.in_group_version(g, v):
        entry = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                 "kind": r.kind, "verbs": VERBS_NS}
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        items.append(entry)
        if r.status:
            items.append({"name": f"{r.plural}/status", "singularName": "",
                          "namespaced": r.namespaced, "kind": r.kind,
                          "verbs": ["get", "patch", "update"]})
        if r.plural == "pods":
            items.append({"name": "pods/log", "singularName": "", "namespaced": True,
                          "kind": "Pod", "verbs": ["get"]})
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{g}/{v}" if g else v, "resources": items}


def openapi_v3(g: str, v: str) -> dict[str, Any]:
    """Enough OpenAPI for kubectl create/apply: GVKs and fieldValidation."""
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    prefix = f"/apis/{g}/{v}" if g else f"/api/{v}"
    for r in res.in_group_version(g, v):
        gvk = {"group": r.group, "version": v, "kind": r.kind}
        ref = f"{g or 'core'}.{v}.{r.kind}"
        schemas[ref] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                        "x-kubernetes-group-version-kind": [gvk]}
        op = {"parameters": [{"name": "fieldValidation", "in": "query",
                              "schema": {"type": "string"}}],
              "x-kubernetes-group-version-kind": gvk,
              "responses": {"200": {"description": "OK"}}}
        base = f"{prefix}/namespaces/{{namespace}}/{r.plural}" if r.namespaced else \
            f"{prefix}/{r.plural}"
        paths[base] = {"post": op, "get": op}
        paths[f"{base}/{{name}}"] = {"put": op, "patch": op, "get": op, "delete": op}
    return {"openapi": "3.0.0", "info": {"title": "flux-dws emulator", "version": v},
            "paths": paths, "components": {"schemas": schemas}}


class ApiServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection from %s failed", client_address, exc_info=True)


class ApiServer6(ApiServer):
    address_family = socket.AF_INET6


def make_server(store: Store, host: str, port: int, settings: Settings,
                ssl_context: ssl.SSLContext | None = None) -> ApiServer:
    """A threading server for store on host:port (TLS with ssl_context).

    The TLS handshake happens in the connection's thread (Handler.setup),
    so a client that connects and stays silent cannot stall the others."""
    handler = type("BoundHandler", (Handler,), {"store": store, "settings": settings})
    cls = ApiServer6 if ":" in host else ApiServer
    srv = cls((host, port), handler)
    if ssl_context is not None:
        srv.socket = ssl_context.wrap_socket(srv.socket, server_side=True,
                                             do_handshake_on_connect=False)
    return srv
