"""A client-side store: the emulator's controllers on any Kubernetes API server.

``RemoteStore(kubeconfig)`` has the calls the DWS/nnf-sos controllers use
(``store.StoreApi``), so they run unchanged as ordinary API clients of a
real kube-apiserver, as the real controllers do:

- an informer per kind: a paged list, then a watch from the list's
  resourceVersion with bookmarks (``timeoutSeconds`` ends each stream; it
  resumes from the last resourceVersion).  A 410 Gone (an HTTP 410 or an
  ERROR event) re-lists and diffs against the cache: what changed meanwhile
  is delivered as ADDED/MODIFIED/DELETED, nothing else is replayed.  A
  dropped stream reconnects after a back-off (0.1 s doubling to 5 s).
- reads (``get``, ``list_objects``, ``view``, ``objects``,
  ``kind_version``) answer from the cache; a missing object is the API's 404.
- writes (``create``, ``replace``, ``patch``, ``delete``) go to the API
  server; its answer (or its Status as an ``ApiError``) comes back, and the
  object it returns goes into the cache at once when newer than the cached
  one, so a controller reads its own writes (a watch event older than
  what the cache holds never moves it back).
- ``subscribe(fn, kinds)``: ``fn(Event)`` for every watch event, in the
  order the server sent them, under the store's lock (only queue work).
- ``admission``: what the controllers register there is served by
  ``webhook.WebhookServer`` to the API server, which calls it.
- ``load(r, obj)`` creates a seed object (and its status, through the
  status subresource), keeping one that exists.

The kubeconfig's server, CA, and token or client certificate are used;
one HTTPS connection per thread is kept alive.
"""

from __future__ import annotations

import base64
import collections
import http.client
import json
import logging
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import yaml

from flux_dws.apiserver import selectors
from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL, RESOURCES, Resource
from flux_dws.apiserver.store import (
    Admission,
    ApiError,
    Entry,
    Event,
    Key,
    Kind,
    for_kinds,
    not_found,
)

__all__ = ["ClientConfig", "RemoteStore", "load_kubeconfig"]

log = logging.getLogger("flux_dws.apiserver.remote")

WATCH_SECONDS = 60          # the server ends each watch stream after this
REQUEST_TIMEOUT = 30.0
BACKOFF_MAX = 5.0
PAGE = 500
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


@dataclass
class ClientConfig:
    """Where an API server is and how to authenticate to it."""

    server: str
    ssl_context: ssl.SSLContext | None
    token: str | None


def _data_or_file(d: Mapping[str, Any], key: str, tmp: Path) -> str | None:
    """The path of a kubeconfig's ``KEY`` file or ``KEY-data`` (written to tmp)."""
    if d.get(f"{key}-data"):
        path = tmp / key
        path.write_bytes(base64.b64decode(d[f"{key}-data"]))
        return str(path)
    value = d.get(key)
    return str(value) if value else None


def load_kubeconfig(path: str | Path, context: str | None = None) -> ClientConfig:
    """The server, TLS settings and credentials of a kubeconfig's context."""
    cfg = yaml.safe_load(Path(path).read_text()) or {}
    name = context or cfg.get("current-context")
    ctx = next((c["context"] for c in cfg.get("contexts") or [] if c.get("name") == name),
               None)
    if ctx is None:
        raise ValueError(f"{path}: no context {name!r}")
    cluster = next(c["cluster"] for c in cfg.get("clusters") or []
                   if c.get("name") == ctx.get("cluster"))
    user = next((u.get("user") or {} for u in cfg.get("users") or []
                 if u.get("name") == ctx.get("user")), {})
    server = str(cluster["server"]).rstrip("/")
    sslctx = None
    if server.startswith("https:"):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            sslctx = ssl.create_default_context(cafile=_data_or_file(cluster,
                                                                     "certificate-authority",
                                                                     tmp))
            if cluster.get("insecure-skip-tls-verify"):
                sslctx.check_hostname = False
                sslctx.verify_mode = ssl.CERT_NONE
            cert = _data_or_file(user, "client-certificate", tmp)
            key = _data_or_file(user, "client-key", tmp)
            if cert:
                sslctx.load_cert_chain(cert, key)
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = Path(user["tokenFile"]).read_text().strip()
    return ClientConfig(server, sslctx, token or None)


def _rv(obj: Mapping[str, Any]) -> int:
    try:
        return int(obj["metadata"]["resourceVersion"])
    except (KeyError, TypeError, ValueError):
        return 0


def _encode(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class _Http:
    """HTTP(S) requests to the API server, one kept-alive connection per thread."""

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        u = urlsplit(config.server)
        self.https = u.scheme == "https"
        self.host = u.hostname or "127.0.0.1"
        self.port = u.port or (443 if self.https else 80)
        self.prefix = u.path.rstrip("/")
        self._local = threading.local()

    def connect(self, timeout: float | None) -> http.client.HTTPConnection:
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self.config.ssl_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def headers(self, content_type: str | None = None) -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": "flux-dws-emulator-controllers"}
        if self.config.token:
            h["Authorization"] = f"Bearer {self.config.token}"
        if content_type:
            h["Content-Type"] = content_type
        return h

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> tuple[int, bytes]:
        data = None if body is None else _encode(body)
        for attempt in (0, 1):
            conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = self.connect(REQUEST_TIMEOUT)
            try:
                conn.request(method, self.prefix + path, data,
                             self.headers(content_type if data is not None else None))
                resp = conn.getresponse()
                return resp.status, resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest):
                # a kept-alive connection the server closed: once more, afresh
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
            except BaseException:
                conn.close()
                self._local.conn = None
                raise
        raise AssertionError("unreachable")


def _api_error(status: int, raw: bytes) -> ApiError:
    try:
        st = json.loads(raw)
    except ValueError:
        st = None
    if isinstance(st, dict) and st.get("kind") == "Status":
        return ApiError(int(st.get("code") or status), str(st.get("reason") or ""),
                        str(st.get("message") or ""), st.get("details") or {})
    return ApiError(status, "", raw.decode(errors="replace").strip())


def path_of(r: Resource, ns: str | None, name: str | None = None,
            subresource: str | None = None) -> str:
    base = f"/apis/{r.group}/{r.storage_version}" if r.group else "/api/v1"
    path = (f"{base}/namespaces/{quote(ns, safe='')}/{r.plural}" if r.namespaced and ns
            else f"{base}/{r.plural}")
    if name is not None:
        path += "/" + quote(name, safe="")
    if subresource:
        path += "/" + subresource
    return path


class _Informer:
    """One kind's list+watch loop (a daemon thread) feeding the store's cache."""

    def __init__(self, store: RemoteStore, r: Resource) -> None:
        self.store = store
        self.r = r
        self.kind: Kind = (r.group, r.plural)
        self.rv: str | None = None     # None: (re-)list next
        self.synced = threading.Event()
        self.error: str | None = None  # why the first list failed
        self.lists = 0                 # how many lists were made (1 + re-lists)
        self._conn: http.client.HTTPConnection | None = None
        self._thread = threading.Thread(target=self._run, name=f"informer-{r.plural}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def alive(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        backoff = 0.1
        while not self.store.stopping.is_set():
            try:
                if self.rv is None:
                    self._list()
                if self._watch():
                    backoff = 0.1
                    continue
            except ApiError as exc:
                if exc.code == 410:
                    self.rv = None
                    continue
                if not self.synced.is_set() and exc.code in (401, 403, 404):
                    # refused or not served: retrying will not help
                    self.error = f"{self.r.plural}.{self.r.group or 'core'}: {exc.message}"
                    self.synced.set()
                log.warning("informer %s: %s", self.r.plural, exc.message)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                if self.store.stopping.is_set():
                    return
                log.debug("informer %s: %s", self.r.plural, exc)
            self.store.stopping.wait(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    def _list(self) -> None:
        items: list[dict[str, Any]] = []
        cont = ""
        while True:
            q = {"limit": str(PAGE), **({"continue": cont} if cont else {})}
            status, raw = self.store.http.request("GET", path_of(self.r, None) + "?"
                                                  + urlencode(q))
            if status != 200:
                raise _api_error(status, raw)
            body = json.loads(raw)
            items.extend(body.get("items") or [])
            cont = (body.get("metadata") or {}).get("continue") or ""
            if not cont:
                rv = str((body.get("metadata") or {}).get("resourceVersion") or "")
                break
        self.store._relist(self, items, not self.synced.is_set(), rv)
        self.synced.set()

    def _watch(self) -> bool:
        """Watch from self.rv until the stream ends; True if it delivered."""
        q = {"watch": "true", "allowWatchBookmarks": "true", "resourceVersion": self.rv or "",
             "timeoutSeconds": str(WATCH_SECONDS)}
        conn = self._conn = self.store.http.connect(WATCH_SECONDS + 30)
        try:
            conn.request("GET", self.store.http.prefix + path_of(self.r, None) + "?"
                         + urlencode(q), headers=self.store.http.headers())
            resp = conn.getresponse()
            if resp.status != 200:
                raise _api_error(resp.status, resp.read())
            delivered = False
            for line in _lines(resp):
                ev = json.loads(line)
                etype, obj = ev.get("type"), ev.get("object") or {}
                if etype == "BOOKMARK":
                    with self.store.cond:
                        self.rv = str(obj.get("metadata", {}).get("resourceVersion")
                                      or self.rv)
                        self.store.cond.notify_all()
                elif etype == "ERROR":
                    raise ApiError(int(obj.get("code") or 500), str(obj.get("reason") or ""),
                                   str(obj.get("message") or ""))
                elif etype in ("ADDED", "MODIFIED", "DELETED"):
                    self.store._watched(self.kind, etype, obj)
                    self.rv = str(obj["metadata"]["resourceVersion"])
                delivered = True
            return delivered
        finally:
            self._conn = None
            conn.close()


def _lines(resp: http.client.HTTPResponse) -> Iterator[bytes]:
    """The complete lines of a watch stream (a cut-off last line is dropped)."""
    while True:
        line = resp.readline()
        if not line:
            return
        if line.endswith(b"\n") and line.strip():
            yield line


class RemoteStore:
    """The controllers' store, backed by a Kubernetes API server (module docstring)."""

    def __init__(self, kubeconfig: str | Path | ClientConfig,
                 kinds: Iterable[Resource] | None = None) -> None:
        config = kubeconfig if isinstance(kubeconfig, ClientConfig) \
            else load_kubeconfig(kubeconfig)
        self.http = _Http(config)
        self.cond = threading.Condition()
        self.objects: dict[Key, Entry] = {}
        self.admission: dict[Kind, Admission] = {}
        self.subscribers: list[Callable[[Event], None]] = []
        self.stopping = threading.Event()
        self._kinds: dict[Kind, set[Key]] = collections.defaultdict(set)
        self._kind_rv: dict[Kind, int] = {}
        self._gone: dict[Key, int] = {}     # deleted through us: rv of the deletion
        wanted = list(kinds) if kinds is not None else \
            [r for r in RESOURCES if r.plural != "customresourcedefinitions"]
        self._informers = {(r.group, r.plural): _Informer(self, r) for r in wanted}
        self._namespaces: set[str] = set()

    # --- lifecycle ----------------------------------------------------------

    def start(self, timeout: float = 60.0) -> RemoteStore:
        """Start the informers; return once each has listed its kind (a kind
        the server does not serve, or may not be listed, is an error)."""
        for inf in self._informers.values():
            inf.start()
        deadline = time.monotonic() + timeout
        for inf in self._informers.values():
            if not inf.synced.wait(max(0.0, deadline - time.monotonic())):
                self.stop()
                raise ApiError(504, "Timeout", f"{inf.r.plural}: not listed within"
                                               f" {timeout} s")
            if inf.error is not None:
                self.stop()
                raise ApiError(503, "ServiceUnavailable", f"cannot list {inf.error}")
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.stopping.set()
        deadline = time.monotonic() + timeout
        for inf in self._informers.values():
            # a watch still connecting has no socket to shut down yet: again
            while inf.alive() and time.monotonic() < deadline:
                inf.stop()
                inf.join(0.05)

    def __enter__(self) -> RemoteStore:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def informer_lists(self, r: Resource) -> int:
        """How many times kind r was listed (1, plus one per 410 re-list)."""
        return self._informers[(r.group, r.plural)].lists

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until predicate() holds (checked after each cache change)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True

    # --- the cache ----------------------------------------------------------

    def _key(self, r: Resource, ns: str, name: str) -> Key:
        return (r.group, r.plural, ns if r.namespaced else "", name)

    def _obj_key(self, kind: Kind, obj: Mapping[str, Any]) -> Key:
        md = obj["metadata"]
        return (kind[0], kind[1], md.get("namespace") or "", md["name"])

    def _put(self, key: Key, obj: dict[str, Any] | None, rv: int,
             raw: bytes | None = None) -> None:
        """Change the cache (lock held): obj None removes; raw is obj encoded
        when the caller has it."""
        kind = key[:2]
        self._kind_rv[kind] = max(self._kind_rv.get(kind, 0), rv)
        if obj is None:
            self.objects.pop(key, None)
            self._kinds[kind].discard(key)
        else:
            self.objects[key] = Entry(obj, raw if raw is not None else _encode(obj), rv)
            self._kinds[kind].add(key)
        self.cond.notify_all()

    def _deliver(self, ev: Event) -> None:
        for fn in list(self.subscribers):
            try:
                fn(ev)
            except Exception:
                log.exception("subscriber")

    def _watched(self, kind: Kind, etype: str, obj: dict[str, Any]) -> None:
        """A watch event: into the cache unless the cache knows newer, then
        to the subscribers."""
        key = self._obj_key(kind, obj)
        rv = _rv(obj)
        raw = _encode(obj)
        with self.cond:
            cur = self.objects.get(key)
            if etype == "DELETED":
                if cur is None or cur.rv <= rv:
                    self._put(key, None, rv)
                self._gone.pop(key, None)
            elif (cur is None or cur.rv <= rv) and self._gone.get(key, -1) < rv:
                self._put(key, obj, rv, raw)
            self._deliver(Event(etype, key, obj, raw, rv))

    def _relist(self, inf: _Informer, items: list[dict[str, Any]], first: bool,
                list_rv: str) -> None:
        """A (re-)list: the cache of the kind becomes it; after a 410, what
        differs goes to the subscribers as the events the watch missed."""
        kind = inf.kind
        with self.cond:
            fresh = {}
            for obj in items:
                obj.setdefault("apiVersion", inf.r.api_version())
                obj.setdefault("kind", inf.r.kind)
                fresh[self._obj_key(kind, obj)] = obj
            events = []
            for key in sorted(self._kinds.get(kind, set()) - set(fresh)):
                old = self.objects[key].obj
                self._put(key, None, _rv(old))
                events.append(Event("DELETED", key, old, _encode(old), _rv(old)))
            for key, obj in sorted(fresh.items()):
                cur = self.objects.get(key)
                obj_rv = _rv(obj)
                if cur is not None and cur.rv >= obj_rv:
                    continue
                self._put(key, obj, obj_rv)
                events.append(Event("ADDED" if cur is None else "MODIFIED", key, obj,
                                    _encode(obj), obj_rv))
            self._gone.clear()
            inf.lists += 1
            inf.rv = list_rv
            self.cond.notify_all()
            if not first:
                for ev in events:
                    self._deliver(ev)

    def _wrote(self, r: Resource, obj: dict[str, Any]) -> None:
        """The API server's answer to a write: into the cache if newer."""
        key = self._obj_key((r.group, r.plural), obj)
        rv = _rv(obj)
        md = obj["metadata"]
        with self.cond:
            cur = self.objects.get(key)
            if md.get("deletionTimestamp") and not md.get("finalizers"):
                # its last finalizer went: the server deleted it
                self._gone[key] = max(rv, cur.rv if cur is not None else 0)
                self._put(key, None, self._gone[key])
            elif (cur is None or cur.rv < rv) and self._gone.get(key, -1) < rv:
                self._put(key, obj, rv)

    # --- reads (from the cache) -----------------------------------------------

    def get(self, r: Resource, ns: str, name: str) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(self.get_raw(r, ns, name))
        return out

    def get_raw(self, r: Resource, ns: str, name: str) -> bytes:
        with self.cond:
            e = self.objects.get(self._key(r, ns, name))
            if e is None:
                raise not_found(r, name)
            return e.raw

    def _select(self, r: Resource, ns: str | None, label: str | None,
                field: str | None) -> list[Entry]:
        lmatch, fmatch = selectors.label_matcher(label), selectors.field_matcher(field)
        with self.cond:
            keys = sorted(k for k in self._kinds.get((r.group, r.plural), set())
                          if ns is None or not r.namespaced or k[2] == ns)
            entries = [self.objects[k] for k in keys]
        return [e for e in entries if lmatch(e.obj) and fmatch(e.obj)]

    def view(self, r: Resource, ns: str | None, label: str | None = None,
             field: str | None = None) -> list[Mapping[str, Any]]:
        """The cached objects themselves (never mutated: do not mutate them)."""
        return [e.obj for e in self._select(r, ns, label, field)]

    def list_objects(self, r: Resource, ns: str | None, label: str | None = None,
                     field: str | None = None) -> list[dict[str, Any]]:
        return [json.loads(e.raw) for e in self._select(r, ns, label, field)]

    def kind_version(self, r: Resource) -> int:
        with self.cond:
            return self._kind_rv.get((r.group, r.plural), 0)

    def subscribe(self, fn: Callable[[Event], None],
                  kinds: Iterable[Kind] | None = None) -> None:
        with self.cond:
            self.subscribers.append(for_kinds(fn, kinds))

    # --- writes (through the API server) ----------------------------------------

    def _call(self, method: str, path: str, body: Any = None,
              content_type: str = "application/json") -> dict[str, Any]:
        status, raw = self.http.request(method, path, body, content_type)
        if status >= 300:
            raise _api_error(status, raw)
        out: dict[str, Any] = json.loads(raw) if raw else {}
        return out

    @staticmethod
    def _query(dry_run: bool = False, validation: str = "Ignore") -> str:
        q = {"fieldValidation": validation} if validation != "Ignore" else {}
        if dry_run:
            q["dryRun"] = "All"
        return "?" + urlencode(q) if q else ""

    def create(self, r: Resource, ns: str, body: dict[str, Any], dry_run: bool = False,
               validation: str = "Ignore") -> dict[str, Any]:
        body = {"apiVersion": r.api_version(), "kind": r.kind, **body}
        ns = ns or (body.get("metadata") or {}).get("namespace") or ""
        obj = self._call("POST", path_of(r, ns) + self._query(dry_run, validation), body)
        if not dry_run:
            self._wrote(r, obj)
        return obj

    def replace(self, r: Resource, ns: str, name: str, body: dict[str, Any],
                subresource: str | None = None, validation: str = "Ignore") -> dict[str, Any]:
        obj = self._call("PUT", path_of(r, ns, name, subresource) + self._query(
            validation=validation), body)
        self._wrote(r, obj)
        return obj

    def patch(self, r: Resource, ns: str, name: str, patch_type: str, patch: Any,
              subresource: str | None = None, validation: str = "Ignore") -> dict[str, Any]:
        """patch_type: "merge" (RFC 7386) or "json" (RFC 6902)."""
        ctype = {"merge": MERGE_PATCH, "json": JSON_PATCH}.get(patch_type)
        if ctype is None:
            raise ApiError(415, "UnsupportedMediaType", f"unknown patch type {patch_type}")
        obj = self._call("PATCH", path_of(r, ns, name, subresource) + self._query(
            validation=validation), patch, ctype)
        self._wrote(r, obj)
        return obj

    def delete(self, r: Resource, ns: str, name: str,
               preconditions: dict[str, Any] | None = None,
               propagation: str = "Background") -> tuple[bool, dict[str, Any]]:
        """(deleted now, the object as the server answered it)."""
        opts: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions",
                                "propagationPolicy": propagation}
        if preconditions:
            opts["preconditions"] = preconditions
        obj = self._call("DELETE", path_of(r, ns, name), opts)
        if obj.get("kind") == "Status":
            obj = {}
        md = obj.get("metadata") or {}
        later = bool(md.get("deletionTimestamp") and md.get("finalizers"))
        key = self._key(r, ns, name)
        if later:
            self._wrote(r, obj)
        else:
            with self.cond:
                cur = self.objects.get(key)
                rv = max(_rv(obj), cur.rv if cur is not None else 0)
                self._gone[key] = rv
                self._put(key, None, rv)
        return not later, obj

    # --- seeding and what only a kubelet does --------------------------------------

    def load(self, r: Resource, obj: dict[str, Any]) -> None:
        """Create a seed object (its status through the status subresource);
        one that exists is kept, as Store.load keeps it."""
        md = obj["metadata"]
        ns = md.get("namespace", "") if r.namespaced else ""
        if ns and ns not in self._namespaces:
            ns_r = BY_GROUP_PLURAL[("", "namespaces")]
            if self._key(ns_r, "", ns) not in self.objects:
                try:
                    self.create(ns_r, "", {"metadata": {"name": ns}})
                except ApiError as exc:
                    if exc.code != 409:
                        raise
            self._namespaces.add(ns)
        body = {**obj, "apiVersion": obj.get("apiVersion") or r.api_version(), "kind": r.kind}
        try:
            made = self.create(r, ns, body)
        except ApiError as exc:
            if exc.code == 409 and exc.reason == "AlreadyExists":
                return
            raise
        if r.status and obj.get("status") is not None \
                and made.get("status") != obj["status"]:
            self.replace(r, ns, md["name"], {**made, "status": obj["status"]}, "status")

    def append_pod_log(self, ns: str, name: str, container: str, text: str) -> None:
        """A container's output is the kubelet's to keep: an API client
        cannot write it."""
        raise ApiError(405, "MethodNotAllowed",
                       f"pods/{name}/log in {ns}: container output ({container}) is written"
                       " by a kubelet, not through the API")
