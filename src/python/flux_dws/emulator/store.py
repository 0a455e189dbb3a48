"""The emulator's object store: Kubernetes semantics without HTTP.

One lock, one global resourceVersion counter (etcd-like) and a bounded,
ordered event history.  Stored objects are never mutated: every write puts a
new dict (and its JSON encoding, reused by lists and watches).

In-process API for controllers (the DWS/NNF emulation, tests):

- ``create / get / list / replace / patch / delete / delete_collection``
  with the API server's semantics (resourceVersion conflicts, status
  subresource rules, generation, finalizers and deletionTimestamp,
  ownerReference cascade, CRD defaulting/validation/pruning);
- ``subscribe(fn)``: fn(Event) is called after every committed change,
  under the store lock (it must only queue work);
- ``admission[(group, plural)] = fn(op, old, new) -> new``: called before a
  create ("CREATE", None, new) or update ("UPDATE", old, new) is committed;
  it may return a changed object or raise ApiError (e.g. 403 Forbidden for
  the DWS webhooks);
- ``watch(...)`` returns a Watch to read events from;
- ``compact()`` drops the event history, as etcd compaction does.

Errors are ApiError(code, reason, message), turned into Kubernetes Status
objects by the HTTP layer.
"""

from __future__ import annotations

import base64
import collections
import copy
import datetime as dt
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from flux_dws.emulator import schema, selectors
from flux_dws.emulator.patch import PatchError, json_patch, merge_patch
from flux_dws.emulator.resources import BY_GROUP_PLURAL, Resource

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "dws-system", "nnf-system",
                      "nnf-dm-system")
PROTECTED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
             "generation", "resourceVersion", "namespace", "name")

Key = tuple[str, str, str, str]  # group, plural, namespace ("" if cluster), name
Admission = Callable[[str, "dict[str, Any] | None", "dict[str, Any]"], "dict[str, Any]"]


def _content(obj: dict[str, Any], status_is_subresource: bool) -> dict[str, Any]:
    skip = ("metadata", "status") if status_is_subresource else ("metadata",)
    return {k: v for k, v in obj.items() if k not in skip}


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or {}


def now_rfc3339() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def qualified(r: Resource) -> str:
    return f"{r.plural}.{r.group}" if r.group else r.plural


def not_found(r: Resource, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{qualified(r)} "{name}" not found',
                    {"name": name, "group": r.group, "kind": r.plural})


def conflict(r: Resource, name: str) -> ApiError:
    return ApiError(409, "Conflict",
                    f'Operation cannot be fulfilled on {qualified(r)} "{name}": the object has'
                    " been modified; please apply your changes to the latest version and try"
                    " again", {"name": name, "group": r.group, "kind": r.plural})


def invalid(r: Resource, name: str, causes: list[tuple[str, str]]) -> ApiError:
    text = ", ".join(f"{f}: {m}" for f, m in causes)
    if len(causes) > 1:
        text = f"[{text}]"
    return ApiError(422, "Invalid", f'{r.kind}.{r.group or "core"} "{name}" is invalid: {text}',
                    {"name": name, "group": r.group, "kind": r.kind,
                     "causes": [{"field": f, "message": m, "reason": "FieldValueInvalid"}
                                for f, m in causes]})


@dataclass
class Entry:
    obj: dict[str, Any]
    raw: bytes          # JSON encoding of obj
    rv: int


@dataclass
class Event:
    type: str           # ADDED MODIFIED DELETED
    key: Key
    obj: dict[str, Any]
    raw: bytes
    rv: int


class Watch:
    """Events for one watcher: replayed history, then live ones."""

    def __init__(self, store: Store, match: Callable[[Event], bool]) -> None:
        self._store = store
        self._match = match
        self._queue: collections.deque[Event] = collections.deque()
        self.closed = False

    def _offer(self, ev: Event) -> None:
        if self._match(ev):
            self._queue.append(ev)

    def next(self, timeout: float) -> Event | None:
        """The next event, or None after timeout (or when closed)."""
        with self._store.cond:
            if not self._queue and not self.closed:
                self._store.cond.wait(timeout)
            if self._queue:
                return self._queue.popleft()
            return None

    def close(self) -> None:
        with self._store.cond:
            self.closed = True
            if self in self._store.watches:
                self._store.watches.remove(self)
            self._store.cond.notify_all()


class Store:
    def __init__(self, history: int = 1000, persist: Any = None) -> None:
        self.cond = threading.Condition()
        self.objects: dict[Key, Entry] = {}
        self.rv = 0
        self.events: collections.deque[Event] = collections.deque(maxlen=history)
        self.floor = 0
        self.watches: list[Watch] = []
        self.admission: dict[tuple[str, str], Admission] = {}
        self.subscribers: list[Callable[[Event], None]] = []
        self.persist = persist
        if persist is not None:
            self.rv, entries = persist.load()
            for key, obj in entries:
                self.objects[key] = Entry(obj, self._encode(obj),
                                          int(obj["metadata"]["resourceVersion"]))
            self.floor = self.rv
        for ns in DEFAULT_NAMESPACES:
            if ("", "namespaces", "", ns) not in self.objects:
                self.create(BY_GROUP_PLURAL[("", "namespaces")], "", {"metadata": {"name": ns}})

    def subscribe(self, fn: Callable[[Event], None]) -> None:
        """Call fn(event) after every committed change (under the lock)."""
        with self.cond:
            self.subscribers.append(fn)

    # --- helpers -----------------------------------------------------------

    @staticmethod
    def _encode(obj: dict[str, Any]) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()

    def _key(self, r: Resource, ns: str, name: str) -> Key:
        return (r.group, r.plural, ns if r.namespaced else "", name)

    def _commit(self, etype: str, key: Key, obj: dict[str, Any], bump: bool = True) -> Entry:
        """Store obj (or remove it for DELETED) with a new resourceVersion."""
        if bump:
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
        raw = self._encode(obj)
        entry = Entry(obj, raw, self.rv)
        if etype == "DELETED":
            self.objects.pop(key, None)
        else:
            self.objects[key] = entry
        ev = Event(etype, key, obj, raw, self.rv)
        self.events.append(ev)
        if len(self.events) == self.events.maxlen:
            self.floor = self.events[0].rv - 1
        for w in list(self.watches):
            w._offer(ev)
        for fn in list(self.subscribers):
            fn(ev)
        if self.persist is not None:
            self.persist.save(self.rv, key, None if etype == "DELETED" else obj)
        self.cond.notify_all()
        return entry

    def _entry(self, r: Resource, ns: str, name: str) -> Entry:
        e = self.objects.get(self._key(r, ns, name))
        if e is None:
            raise not_found(r, name)
        return e

    def _check_namespace(self, r: Resource, ns: str) -> None:
        if r.namespaced:
            if not ns:
                raise ApiError(400, "BadRequest", "the server could not find the requested"
                                                  " resource: a namespace is required")
            if ("", "namespaces", "", ns) not in self.objects:
                raise ApiError(404, "NotFound", f'namespaces "{ns}" not found',
                               {"name": ns, "kind": "namespaces"})

    def _admit(self, r: Resource, op: str, old: dict[str, Any] | None,
               new: dict[str, Any]) -> dict[str, Any]:
        fn = self.admission.get((r.group, r.plural))
        return fn(op, old, new) if fn else new

    def _schema(self, r: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        try:
            return schema.apply(r.group, r.kind, obj)
        except schema.SchemaError as exc:
            raise invalid(r, obj["metadata"].get("name", ""), exc.causes) from None

    # --- reads ---------------------------------------------------------------

    def get(self, r: Resource, ns: str, name: str) -> dict[str, Any]:
        """A private copy of the object (raises 404)."""
        with self.cond:
            raw = self._entry(r, ns, name).raw
        result: dict[str, Any] = json.loads(raw)
        return result

    def get_raw(self, r: Resource, ns: str, name: str) -> bytes:
        with self.cond:
            return self._entry(r, ns, name).raw

    def list_raw(self, r: Resource, ns: str | None, label: str | None = None,
                 field: str | None = None, limit: int = 0,
                 cont: str | None = None) -> tuple[list[bytes], int, str | None]:
        """(encoded items, list resourceVersion, continue token)."""
        lmatch, fmatch = selectors.label_matcher(label), selectors.field_matcher(field)
        start: tuple[str, str] | None = None
        with self.cond:
            rv = self.rv
            if cont:
                try:
                    state = json.loads(base64.urlsafe_b64decode(cont.encode()))
                    start = (state["ns"], state["name"])
                    rv = int(state["rv"])
                except (ValueError, KeyError, TypeError):
                    raise ApiError(400, "BadRequest", "continue key is not valid") from None
                if rv < self.floor:
                    raise ApiError(410, "Expired", "The provided continue parameter is too old"
                                   " to display a consistent list result. You can start a new"
                                   " list without the continue parameter.")
            keys = sorted(k for k in self.objects
                          if k[0] == r.group and k[1] == r.plural
                          and (ns is None or not r.namespaced or k[2] == ns))
            items: list[bytes] = []
            token = None
            last: Key | None = None
            for k in keys:
                if start is not None and (k[2], k[3]) <= start:
                    continue
                e = self.objects[k]
                if not (lmatch(e.obj) and fmatch(e.obj)):
                    continue
                if limit and len(items) == limit and last is not None:
                    token = base64.urlsafe_b64encode(json.dumps(
                        {"rv": rv, "ns": last[2], "name": last[3]}).encode()).decode()
                    break
                items.append(e.raw)
                last = k
        return items, rv, token

    def list_objects(self, r: Resource, ns: str | None, label: str | None = None,
             field: str | None = None) -> list[dict[str, Any]]:
        items, _, _ = self.list_raw(r, ns, label, field)
        return [json.loads(i) for i in items]

    # --- writes --------------------------------------------------------------

    def create(self, r: Resource, ns: str, body: dict[str, Any],
               dry_run: bool = False) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
            raise ApiError(400, "BadRequest", "the object has no metadata")
        obj = json.loads(json.dumps(body))  # a private copy (faster than deepcopy)
        md = obj.setdefault("metadata", {})
        bns = md.get("namespace")
        if r.namespaced:
            if bns and ns and bns != ns:
                raise ApiError(400, "BadRequest", "the namespace of the provided object does"
                                                  " not match the namespace sent on the request")
            ns = ns or bns or ""
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
            ns = ""
        name = md.get("name")
        with self.cond:
            self._check_namespace(r, ns)
            if not name:
                gen = md.get("generateName")
                if not gen:
                    raise invalid(r, "", [("metadata.name", "Required value: name or"
                                                            " generateName is required")])
                name = gen + uuid.uuid4().hex[:5]
                md["name"] = name
            if not isinstance(name, str):
                raise invalid(r, str(name), [("metadata.name", "Invalid value: must be a"
                                                               " string")])
            key = self._key(r, ns, name)
            if key in self.objects:
                raise ApiError(409, "AlreadyExists", f'{qualified(r)} "{name}" already exists',
                               {"name": name, "group": r.group, "kind": r.plural})
            obj["apiVersion"] = obj.get("apiVersion") or r.api_version()
            obj["kind"] = r.kind
            if r.status:
                obj.pop("status", None)
            for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
                md.pop(k, None)
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = now_rfc3339()
            md["generation"] = 1
            obj = self._schema(r, obj)
            obj = self._admit(r, "CREATE", None, obj)
            if dry_run:
                return obj
            entry = self._commit("ADDED", key, obj)
            return json.loads(entry.raw)  # type: ignore[no-any-return]

    def load(self, r: Resource, obj: dict[str, Any]) -> None:
        """Store a trusted object as a freshly started cluster holds it.

        For seeding at start-up: metadata is filled in and the CRD schema
        applied, but no admission runs and no events are sent (nothing can
        be watching yet).  An existing object of the same name is kept.
        """
        md = obj["metadata"]
        ns = md.get("namespace", "") if r.namespaced else ""
        key = self._key(r, ns, md["name"])
        with self.cond:
            if key in self.objects:
                return
            obj = self._schema(r, {**obj, "apiVersion": obj.get("apiVersion") or
                                   r.api_version(), "kind": r.kind})
            self.rv += 1
            obj["metadata"] = {**md, "uid": str(uuid.uuid4()),
                               "creationTimestamp": now_rfc3339(), "generation": 1,
                               "resourceVersion": str(self.rv)}
            if r.namespaced:
                obj["metadata"]["namespace"] = ns
            self.objects[key] = Entry(obj, self._encode(obj), self.rv)
            if self.persist is not None:
                self.persist.save(self.rv, key, obj)
            self.floor = self.rv

    def _finish_update(self, r: Resource, key: Key, old: Entry, new: dict[str, Any]
                       ) -> dict[str, Any]:
        """Common tail of replace/patch (lock held)."""
        omd, nmd = old.obj["metadata"], new.setdefault("metadata", {})
        for k in PROTECTED:
            if k in omd:
                nmd[k] = omd[k]
            else:
                nmd.pop(k, None)
        new["apiVersion"], new["kind"] = old.obj.get("apiVersion"), r.kind
        if omd.get("deletionTimestamp") and set(nmd.get("finalizers") or []) - set(
                omd.get("finalizers") or []):
            raise invalid(r, omd["name"], [("metadata.finalizers", "Forbidden: no new"
                                            " finalizers can be added if the object is being"
                                            " deleted")])
        new = self._schema(r, new)
        new = self._admit(r, "UPDATE", old.obj, new)
        # generation counts changes outside metadata -- and outside status only
        # when status is a subresource (for other kinds status is content)
        if _content(old.obj, r.status) != _content(new, r.status):
            new["metadata"]["generation"] = omd.get("generation", 1) + 1
        if new == old.obj:
            return json.loads(old.raw)  # type: ignore[no-any-return]  # no-op: same rv
        if omd.get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            self._commit("DELETED", key, new)
            self._cascade(omd.get("uid"))
            return new
        entry = self._commit("MODIFIED", key, new)
        return json.loads(entry.raw)  # type: ignore[no-any-return]

    def _merge_subresource(self, r: Resource, old: dict[str, Any], new: dict[str, Any],
                           subresource: str | None) -> dict[str, Any]:
        if subresource == "status":
            if not r.status:
                raise not_found(r, old["metadata"]["name"])
            merged = copy.deepcopy(old)
            merged["status"] = new.get("status")
            if merged["status"] is None:
                merged.pop("status")
            return merged
        if r.status:
            new = dict(new)
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        return new

    def replace(self, r: Resource, ns: str, name: str, body: dict[str, Any],
                subresource: str | None = None) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body is not an object")
        md = body.get("metadata") or {}
        if md.get("name") and md["name"] != name:
            raise ApiError(400, "BadRequest", "the name of the object does not match the name"
                                              " on the URL")
        with self.cond:
            key = self._key(r, ns, name)
            old = self._entry(r, ns, name)
            rv = md.get("resourceVersion")
            if not rv:
                raise invalid(r, name, [("metadata.resourceVersion", "Invalid value: 0x0: must"
                                                                     " be specified for an"
                                                                     " update")])
            if str(rv) != old.obj["metadata"]["resourceVersion"]:
                raise conflict(r, name)
            new = self._merge_subresource(r, old.obj, copy.deepcopy(body), subresource)
            return self._finish_update(r, key, old, new)

    def patch(self, r: Resource, ns: str, name: str, patch_type: str, patch: Any,
              subresource: str | None = None) -> dict[str, Any]:
        with self.cond:
            key = self._key(r, ns, name)
            old = self._entry(r, ns, name)
            try:
                if patch_type == "merge":
                    if not isinstance(patch, dict):
                        raise ApiError(400, "BadRequest", "a merge patch must be a JSON object")
                    patched = merge_patch(old.obj, patch)
                elif patch_type == "json":
                    patched = json_patch(old.obj, patch)
                else:
                    raise ApiError(415, "UnsupportedMediaType",
                                   f"the body of the request was in an unknown format -"
                                   f" accepted media types include: application/json-patch+json,"
                                   f" application/merge-patch+json ({patch_type} given)")
            except PatchError as exc:
                raise ApiError(exc.code, "Invalid" if exc.code == 422 else "BadRequest",
                               str(exc)) from None
            if not isinstance(patched, dict):
                raise ApiError(422, "Invalid", "the patch made the object not an object")
            rv = (patched.get("metadata") or {}).get("resourceVersion")
            if rv and str(rv) != old.obj["metadata"]["resourceVersion"]:
                raise conflict(r, name)
            new = self._merge_subresource(r, old.obj, patched, subresource)
            return self._finish_update(r, key, old, new)

    def delete(self, r: Resource, ns: str, name: str,
               preconditions: dict[str, Any] | None = None) -> tuple[bool, dict[str, Any]]:
        """(deleted now, the object as it stands)."""
        with self.cond:
            key = self._key(r, ns, name)
            e = self._entry(r, ns, name)
            md = e.obj["metadata"]
            pre = preconditions or {}
            if pre.get("uid") and pre["uid"] != md["uid"]:
                raise ApiError(409, "Conflict", f"Precondition failed: UID in precondition:"
                                                f" {pre['uid']}, UID in object meta: {md['uid']}")
            if pre.get("resourceVersion") and pre["resourceVersion"] != md["resourceVersion"]:
                raise ApiError(409, "Conflict", f"Precondition failed: ResourceVersion in"
                                                f" precondition: {pre['resourceVersion']},"
                                                f" ResourceVersion in object meta:"
                                                f" {md['resourceVersion']}")
            if md.get("finalizers"):
                if md.get("deletionTimestamp"):
                    return False, json.loads(e.raw)
                new = copy.deepcopy(e.obj)
                new["metadata"]["deletionTimestamp"] = now_rfc3339()
                new["metadata"]["deletionGracePeriodSeconds"] = 0
                entry = self._commit("MODIFIED", key, new)
                return False, json.loads(entry.raw)
            gone = copy.deepcopy(e.obj)
            self._commit("DELETED", key, gone)
            if r.plural == "namespaces" and not r.group:
                self._delete_namespace(name)
            self._cascade(md.get("uid"))
            return True, gone

    def _cascade(self, uid: str | None) -> None:
        """Delete (background propagation) objects owned by uid."""
        if not uid:
            return
        owned = [k for k, e in self.objects.items()
                 if any(o.get("uid") == uid for o in e.obj["metadata"].get("ownerReferences")
                        or [])]
        for k in owned:
            res = BY_GROUP_PLURAL[(k[0], k[1])]
            if k in self.objects:
                self.delete(res, k[2], k[3])

    def _delete_namespace(self, ns: str) -> None:
        for k in [k for k in self.objects if k[2] == ns]:
            if k in self.objects:
                self.delete(BY_GROUP_PLURAL[(k[0], k[1])], k[2], k[3])

    def delete_collection(self, r: Resource, ns: str | None, label: str | None = None,
                          field: str | None = None) -> list[dict[str, Any]]:
        with self.cond:
            targets = [json.loads(raw) for raw in self.list_raw(r, ns, label, field)[0]]
            for o in targets:
                md = o["metadata"]
                if self._key(r, md.get("namespace", ""), md["name"]) in self.objects:
                    self.delete(r, md.get("namespace", ""), md["name"])
            return targets

    # --- watches -------------------------------------------------------------

    def watch(self, r: Resource, ns: str | None, rv: int | None, label: str | None = None,
              field: str | None = None) -> Watch:
        """A Watch from rv (None: ADDED for the current objects first)."""
        lmatch, fmatch = selectors.label_matcher(label), selectors.field_matcher(field)

        def match(ev: Event) -> bool:
            k = ev.key
            return (k[0] == r.group and k[1] == r.plural
                    and (ns is None or not r.namespaced or k[2] == ns)
                    and lmatch(ev.obj) and fmatch(ev.obj))

        w = Watch(self, match)
        with self.cond:
            if rv is None or rv == 0:
                for k in sorted(self.objects):
                    e = self.objects[k]
                    w._offer(Event("ADDED", k, e.obj, e.raw, e.rv))
            else:
                if rv < self.floor:
                    raise ApiError(410, "Expired", f"too old resource version: {rv}"
                                                   f" ({self.floor + 1})")
                for ev in self.events:
                    if ev.rv > rv:
                        w._offer(ev)
            self.watches.append(w)
        return w

    def compact(self) -> None:
        with self.cond:
            self.events.clear()
            self.floor = self.rv
            self.cond.notify_all()

    def iter_events(self, w: Watch, timeout: float) -> Iterator[Event]:
        while True:
            ev = w.next(timeout)
            if ev is None:
                return
            yield ev
