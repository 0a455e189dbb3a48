"""The emulator's object store: Kubernetes semantics without HTTP.

One lock, one global resourceVersion counter (etcd-like) and a bounded,
ordered event history.  Stored objects are never mutated: every write puts a
new dict (and its JSON encoding, reused by gets, lists and watches).

In-process API for controllers (the DWS/NNF emulation, tests) -- the HTTP
layer uses exactly these calls, so both see the same semantics:

- ``create / get / list_objects / replace / patch / delete /
  delete_collection`` (and ``*_raw`` variants returning the JSON bytes the
  API would send; ``view`` the stored objects themselves, read-only):
  resourceVersion conflicts (409), status subresource rules, generation,
  no-op updates keeping their resourceVersion,
  finalizers and deletionTimestamp, ownerReference garbage collection,
  CRD defaulting/validation/pruning (``schema``).  Errors are
  ``ApiError(code, reason, message)``, which the HTTP layer turns into
  Kubernetes Status objects.  Dicts returned are private copies.
- ``subscribe(fn, kinds=None)``: ``fn(event)`` after every committed change
  (of the given ``(group, plural)`` kinds, or all), called under the store
  lock in commit order: it must only queue work.  ``subscribe_queue(kinds)``
  returns a ``queue.SimpleQueue`` of Events instead.
- ``admission[(group, plural)] = fn(op, old, new) -> new``: called with the
  lock held before a create ("CREATE", None, new) or an update ("UPDATE",
  old, new) is committed, after defaulting and schema validation.  It gets
  its own copy of ``new`` and may change and return it (a mutating
  webhook) or raise ``ApiError`` (e.g. ``ApiError(403, "Forbidden", msg)``
  as the DWS webhooks do).  It must not change ``old``.
- ``watch(...)`` returns a Watch to read events from;
  ``compact()`` drops the event history, as etcd compaction does.
- ``load(r, obj)`` stores a trusted object without events or admission
  (seeding a system at start-up).
- ``append_pod_log(ns, name, container, text)`` / ``pod_log(ns, name,
  container, tail_lines, limit_bytes)``: what a Pod's containers wrote (the
  kubelet's part; ``pods/NAME/log``).  Kept per Pod uid, dropped with the
  Pod, never persisted.
"""

from __future__ import annotations

import base64
import collections
import datetime as dt
import json
import queue
import re
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from flux_dws.apiserver import schema, selectors
from flux_dws.apiserver.api_resources import (
    BY_GROUP_PLURAL,
    CRD_GROUP,
    Resource,
    crd_object,
    custom_resources,
)
from flux_dws.apiserver.patch import PatchError, json_patch, merge_patch

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "dws-system", "nnf-system",
                      "nnf-dm-system")
PROTECTED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
             "generation", "resourceVersion", "namespace", "name")
# ObjectMeta fields a client may send; anything else in metadata is unknown
OBJECT_META = frozenset(PROTECTED) | {"generateName", "labels", "annotations", "finalizers",
                                      "ownerReferences", "managedFields", "selfLink"}
FIELD_VALIDATION = ("Ignore", "Warn", "Strict")
OMIT_EMPTY = ("labels", "annotations", "finalizers", "ownerReferences")
NAMESPACE_LABEL = "kubernetes.io/metadata.name"  # every Namespace carries its name
# core kinds whose strategies keep no metadata.generation
NO_GENERATION = frozenset({("", "namespaces"), ("", "nodes"), ("", "secrets"), ("", "services")})

Key = tuple[str, str, str, str]  # group, plural, namespace ("" if cluster), name
POD_KIND = ("", "pods")
Kind = tuple[str, str]           # group, plural
Admission = Callable[[str, "dict[str, Any] | None", "dict[str, Any]"], "dict[str, Any]"]


def _content(obj: dict[str, Any], status_is_subresource: bool) -> dict[str, Any]:
    skip = ("metadata", "status") if status_is_subresource else ("metadata",)
    return {k: v for k, v in obj.items() if k not in skip}


def _copy(obj: Any) -> Any:
    """A deep copy of JSON data (faster than copy.deepcopy)."""
    return json.loads(json.dumps(obj))


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details  # None: none (an empty dict is sent as {})


# etcd's default --max-request-bytes, and the gRPC send limit of
# kube-apiserver's etcd client: larger writes fail with these 500s
ETCD_MAX_REQUEST = 1572864
ETCD_MAX_MESSAGE = 2097152


def _check_size(key: Key, raw: bytes) -> None:
    """Refuse an object etcd would not store (the size of the request
    carrying it is our estimate: the value, its key twice, framing)."""
    size = len(raw) + 2 * len("/registry/" + "/".join(key)) + 64
    if size > ETCD_MAX_MESSAGE:
        raise ApiError(500, "", f"rpc error: code = ResourceExhausted desc = trying to send"
                                f" message larger than max ({size} vs. {ETCD_MAX_MESSAGE})")
    if size > ETCD_MAX_REQUEST:
        raise ApiError(500, "", "etcdserver: request is too large")


def _continue_state(token: str) -> dict[str, Any]:
    """A continue token's contents, or 400 in the words of the etcd3
    store's decoder (base64 without padding, then JSON)."""
    def bad(why: str) -> ApiError:
        return ApiError(400, "BadRequest", f"invalid continue token: continue key is not"
                                           f" valid: {why}")
    try:
        data = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except ValueError:
        at = next((i for i, c in enumerate(token)
                   if not (c.isascii() and (c.isalnum() or c in "-_"))), len(token))
        raise bad(f"illegal base64 data at input byte {at}") from None
    try:
        state = json.loads(data)
        if not isinstance(state, dict):
            raise TypeError
        int(state["rv"])
        return state
    except ValueError:
        if data and chr(data[0]) not in '{["-0123456789tfn \t\r\n':
            c = chr(data[0])
            raise bad("invalid character " + ("'\\''" if c == "'" else
                                              f"'{json.dumps(c)[1:-1]}'") +
                      " looking for beginning of value") from None
        raise bad("malformed continue token") from None
    except (KeyError, TypeError):
        raise bad("malformed continue token") from None


def go_json_type(v: Any) -> str:
    """How Go's encoding/json names a JSON value's type in its errors."""
    return {dict: "object", list: "array", str: "string", bool: "bool", int: "number",
            float: "number"}.get(type(v), "null")


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


CAUSE_REASONS = (("Required value", "FieldValueRequired"), ("Forbidden", "FieldValueForbidden"),
                 ("Unsupported value", "FieldValueNotSupported"),
                 ("Too long", "FieldValueTooLong"), ("Duplicate value", "FieldValueDuplicate"))


def cause_reason(message: str) -> str:
    """A field error's StatusCause reason, as its message's kind says
    (apimachinery field.ErrorType): a wrong JSON type is TypeInvalid."""
    for prefix, reason in CAUSE_REASONS:
        if message.startswith(prefix):
            return reason
    if " in body must be of type " in message:
        return "FieldValueTypeInvalid"
    return "FieldValueInvalid"


def invalid(r: Resource, name: str, causes: list[tuple[str, str]],
            kind: str | None = None, twice: bool = False) -> ApiError:
    """422 Invalid (apimachinery errors.NewInvalid): the message names
    each distinct cause once; ``twice``: the causes are listed twice, as
    kube-apiserver reports ObjectMeta update errors for custom resources
    (its strategy and the CR validator both check them)."""
    text = ", ".join(f"{f}: {m}" for f, m in causes)
    if len(causes) > 1:
        text = f"[{text}]"
    kind = kind or r.kind
    qualified_kind = f"{kind}.{r.group}" if r.group else kind
    details: dict[str, Any] = {"name": name, "group": r.group, "kind": kind,
                               "causes": [{"reason": cause_reason(m), "message": m, "field": f}
                                          for f, m in causes] * (2 if twice else 1)}
    return ApiError(422, "Invalid", f'{qualified_kind} "{name}" is invalid: {text}', details)


def strict_error(r: Resource, unknown: list[str]) -> ApiError:
    """What fieldValidation=Strict answers for unknown fields (a 400)."""
    fields = ", ".join(f'unknown field "{f}"' for f in unknown)
    return ApiError(400, "BadRequest", f'{r.kind} in version "{r.storage_version}" cannot be'
                                       f" handled as a {r.kind}: strict decoding error:"
                                       f" {fields}")


_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_QNAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric"
                 " characters, '-' or '.', and must start and end with an alphanumeric"
                 " character (e.g. 'example.com', regex used for validation is"
                 " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters"
             " or '-', and must start and end with an alphanumeric character (e.g. 'my-name', "
             " or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters,"
             " '-', '_' or '.', and must start and end with an alphanumeric character (e.g."
             " 'MyValue',  or 'my_value',  or '12345', regex used for validation is"
             " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
KEY_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must"
           " start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name', "
           " or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
           "[A-Za-z0-9]')")


def name_errors(r: Resource, name: str) -> list[tuple[str, str]]:
    """What ObjectMeta validation says of a name (namespaces: a DNS label,
    everything else: a DNS subdomain)."""
    if r.plural == "namespaces" and not r.group:
        if "." in name:
            return [("metadata.name", f'Invalid value: "{name}": must not contain dots')]
        if len(name) > 63:
            return [("metadata.name", f'Invalid value: "{name}": must be no more than 63'
                                      " characters")]
        if not _LABEL.fullmatch(name):
            return [("metadata.name", f'Invalid value: "{name}": {LABEL_MSG}')]
        return []
    if len(name) > 253:
        return [("metadata.name", f'Invalid value: "{name}": must be no more than 253'
                                  " characters")]
    if not _SUBDOMAIN.fullmatch(name):
        return [("metadata.name", f'Invalid value: "{name}": {SUBDOMAIN_MSG}')]
    return []


def label_errors(labels: Any) -> list[tuple[str, str]]:
    """What ObjectMeta validation says of metadata.labels."""
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [("metadata.labels", "Invalid value: must be a map of strings")]
    errors: list[tuple[str, str]] = []
    for key, value in labels.items():
        prefix, _, name = key.rpartition("/")
        if prefix and (len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
            errors.append(("metadata.labels", f'Invalid value: "{key}": prefix part'
                                              f" {SUBDOMAIN_MSG}"))
        elif not name or len(name) > 63 or not _QNAME.fullmatch(name):
            errors.append(("metadata.labels", f'Invalid value: "{key}": {KEY_MSG}'
                           if len(name) <= 63 else
                           f'Invalid value: "{key}": name part must be no more than 63'
                           " characters"))
        if not isinstance(value, str):
            errors.append((f"metadata.labels[{key}]", "Invalid value: must be a string"))
        elif len(value) > 63:
            errors.append(("metadata.labels", f'Invalid value: "{value}": must be no more'
                                              " than 63 characters"))
        elif value and not _QNAME.fullmatch(value):
            errors.append(("metadata.labels", f'Invalid value: "{value}": {VALUE_MSG}'))
    return errors


@dataclass
class Entry:
    obj: dict[str, Any]
    raw: bytes          # JSON encoding of obj
    rv: int


@dataclass
class Event:
    type: str           # ADDED MODIFIED DELETED
    key: Key
    obj: dict[str, Any]  # shared with the store: read it, never change it
    raw: bytes
    rv: int
    prev: dict[str, Any] | None = None  # a MODIFIED object's previous state


class Watch:
    """Events for one watcher: replayed history, then live ones."""

    def __init__(self, store: Store, match: Callable[[Event], Event | None],
                 kind: Kind | None = None) -> None:
        self._store = store
        self._match = match
        self._kind = kind
        # the newest resourceVersion of the kind this watch has gone past,
        # events its selectors filtered out included (a bookmark is only
        # news beyond it, as for the watch cache's watchers)
        self.seen_rv = 0
        self._queue: collections.deque[Event] = collections.deque()
        self._cv = threading.Condition(threading.Lock())
        self.closed = False

    def _offer(self, ev: Event) -> None:
        if self._kind is None or ev.key[:2] == self._kind:
            self.seen_rv = max(self.seen_rv, ev.rv)
        out = self._match(ev)
        if out is not None:
            with self._cv:
                self._queue.append(out)
                self._cv.notify()

    def next(self, timeout: float) -> Event | None:
        """The next event, or None after timeout (or when closed)."""
        with self._cv:
            if not self._queue and not self.closed:
                self._cv.wait(timeout)
            return self._queue.popleft() if self._queue else None

    def drain(self, timeout: float) -> list[Event]:
        """Every queued event (waiting up to timeout for the first)."""
        with self._cv:
            if not self._queue and not self.closed:
                self._cv.wait(timeout)
            out = list(self._queue)
            self._queue.clear()
            return out

    def close(self) -> None:
        with self._store.cond:
            if self in self._store.watches:
                self._store.watches.remove(self)
        with self._cv:
            self.closed = True
            self._cv.notify_all()


def for_kinds(fn: Callable[[Event], None],
              kinds: Iterable[Kind] | None) -> Callable[[Event], None]:
    """fn, called only for events of the given (group, plural) kinds (all
    when kinds is None): a subscriber of either store."""
    if kinds is None:
        return fn
    wanted = frozenset(kinds)

    def filtered(ev: Event) -> None:
        if ev.key[:2] in wanted:
            fn(ev)
    return filtered


class StoreApi(Protocol):
    """What the controllers use of a store: ``Store`` (in this process) and
    ``remote.RemoteStore`` (a cache of any Kubernetes API server) both have
    it, so the DWS/nnf-sos controllers never know which they were given.
    ``objects`` is read-only to them (membership and ``get``)."""

    admission: dict[Kind, Admission]

    @property
    def objects(self) -> Mapping[Key, Entry]: ...

    def subscribe(self, fn: Callable[[Event], None],
                  kinds: Iterable[Kind] | None = None) -> None: ...

    def get(self, r: Resource, ns: str, name: str) -> dict[str, Any]: ...

    def view(self, r: Resource, ns: str | None, label: str | None = None,
             field: str | None = None) -> list[Mapping[str, Any]]: ...

    def list_objects(self, r: Resource, ns: str | None, label: str | None = None,
                     field: str | None = None) -> list[dict[str, Any]]: ...

    def kind_version(self, r: Resource) -> int: ...

    def create(self, r: Resource, ns: str, body: dict[str, Any], dry_run: bool = False,
               validation: str = "Ignore") -> dict[str, Any]: ...

    def replace(self, r: Resource, ns: str, name: str, body: dict[str, Any],
                subresource: str | None = None, validation: str = "Ignore") -> dict[str, Any]: ...

    def patch(self, r: Resource, ns: str, name: str, patch_type: str, patch: Any,
              subresource: str | None = None, validation: str = "Ignore") -> dict[str, Any]: ...

    def delete(self, r: Resource, ns: str, name: str,
               preconditions: dict[str, Any] | None = None,
               propagation: str = "Background") -> tuple[bool, dict[str, Any]]: ...

    def load(self, r: Resource, obj: dict[str, Any]) -> None: ...

    def append_pod_log(self, ns: str, name: str, container: str, text: str) -> None: ...


def _owner_uids(obj: dict[str, Any]) -> set[str]:
    return {o["uid"] for o in obj["metadata"].get("ownerReferences") or []
            if isinstance(o, dict) and isinstance(o.get("uid"), str)}


class Store:
    def __init__(self, history: int = 1000, persist: Any = None) -> None:
        self.cond = threading.Condition()
        self.objects: dict[Key, Entry] = {}
        self.rv = 0
        self.events: collections.deque[Event] = collections.deque(maxlen=history)
        self.floor = 0
        self.watches: list[Watch] = []
        self.admission: dict[Kind, Admission] = {}
        self.subscribers: list[Callable[[Event], None]] = []
        self.persist = persist
        self._kinds: dict[Kind, set[Key]] = collections.defaultdict(set)
        self._kind_rv: dict[Kind, int] = {}  # the last resourceVersion of each kind
        self._uids: dict[str, Key] = {}
        self._owned: dict[str, set[Key]] = collections.defaultdict(set)
        # (group, plural, label, value) -> keys: a Workflow's children are
        # listed by its labels among thousands of ClientMounts
        self._labelled: dict[tuple[str, str, str, str], set[Key]] = \
            collections.defaultdict(set)
        self._pod_logs: dict[tuple[str, str], list[str]] = {}  # (pod uid, container): lines
        if persist is not None:
            self.rv, entries = persist.load()
            for key, obj in entries:
                self._index(key, None, obj)
                self.objects[key] = Entry(obj, self._encode(obj),
                                          int(obj["metadata"]["resourceVersion"]))
            self.floor = self.rv
        for ns in DEFAULT_NAMESPACES:
            if ("", "namespaces", "", ns) not in self.objects:
                self.create(BY_GROUP_PLURAL[("", "namespaces")], "", {"metadata": {"name": ns}})
        crd = BY_GROUP_PLURAL[(CRD_GROUP, "customresourcedefinitions")]
        for r in custom_resources():
            self.load(crd, crd_object(r, schemas=True))

    def subscribe(self, fn: Callable[[Event], None],
                  kinds: Iterable[Kind] | None = None) -> None:
        """Call fn(event) after every committed change of the given
        (group, plural) kinds, or of all (under the lock: only queue work)."""
        with self.cond:
            self.subscribers.append(for_kinds(fn, kinds))

    def subscribe_queue(self, kinds: Iterable[Kind] | None = None) -> queue.SimpleQueue[Event]:
        """A queue receiving every committed Event of the given kinds (or all)."""
        q: queue.SimpleQueue[Event] = queue.SimpleQueue()
        self.subscribe(q.put, kinds)
        return q

    # --- helpers -----------------------------------------------------------

    @staticmethod
    def _encode(obj: dict[str, Any]) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()

    def _key(self, r: Resource, ns: str, name: str) -> Key:
        return (r.group, r.plural, ns if r.namespaced else "", name)

    def _index(self, key: Key, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        """Keep the kind, uid, owner and label indexes in step with a change."""
        if old is not None:
            self._uids.pop(old["metadata"].get("uid", ""), None)
            for u in _owner_uids(old):
                self._owned[u].discard(key)
                if not self._owned[u]:
                    del self._owned[u]
            for lk, lv in (old["metadata"].get("labels") or {}).items():
                ix = (key[0], key[1], lk, str(lv))
                self._labelled[ix].discard(key)
                if not self._labelled[ix]:
                    del self._labelled[ix]
        if new is None:
            self._kinds[key[:2]].discard(key)
            return
        self._kinds[key[:2]].add(key)
        uid = new["metadata"].get("uid")
        if uid:
            self._uids[uid] = key
        for u in _owner_uids(new):
            self._owned[u].add(key)
        for lk, lv in (new["metadata"].get("labels") or {}).items():
            self._labelled[(key[0], key[1], lk, str(lv))].add(key)

    def _commit(self, etype: str, key: Key, obj: dict[str, Any]) -> Entry:
        """Store obj (or remove it for DELETED) with a new resourceVersion.

        obj (and its metadata dict) must be new: it is changed here.  An
        object too large for etcd is refused first, as etcd refuses it."""
        obj["metadata"]["resourceVersion"] = str(self.rv + 1)
        raw = self._encode(obj)
        if etype != "DELETED":
            _check_size(key, raw)
        self.rv += 1
        self._kind_rv[key[:2]] = self.rv
        entry = Entry(obj, raw, self.rv)
        prev = self.objects.get(key)
        self._index(key, prev.obj if prev else None, None if etype == "DELETED" else obj)
        if etype == "DELETED":
            self.objects.pop(key, None)
            if key[:2] == POD_KIND and self._pod_logs:
                uid = obj["metadata"].get("uid", "")
                for k in [k for k in self._pod_logs if k[0] == uid]:
                    del self._pod_logs[k]
        else:
            self.objects[key] = entry
        ev = Event(etype, key, obj, raw, self.rv,
                   prev.obj if prev is not None and etype == "MODIFIED" else None)
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
            ns_entry = self.objects.get(("", "namespaces", "", ns))
            if ns_entry is None:
                raise ApiError(404, "NotFound", f'namespaces "{ns}" not found',
                               {"name": ns, "kind": "namespaces"})
            if ns_entry.obj["metadata"].get("deletionTimestamp"):
                raise ApiError(403, "Forbidden", f'unable to create new content in namespace'
                                                 f" {ns} because it is being terminated")

    def _admit(self, r: Resource, op: str, old: dict[str, Any] | None,
               new: dict[str, Any]) -> dict[str, Any]:
        fn = self.admission.get((r.group, r.plural))
        return fn(op, old, _copy(new)) if fn else new

    def _schema(self, r: Resource, obj: dict[str, Any], old: dict[str, Any] | None,
                validation: str) -> dict[str, Any]:
        """Default, prune and validate obj (subtrees identical to old's are
        skipped); unknown fields are dropped, and with fieldValidation=Strict
        refused (400) or with Warn noted in ``warnings``."""
        unknown: list[str] = []
        md = obj.get("metadata") or {}
        if not isinstance(md, dict):
            raise invalid(r, "", [("metadata", "Invalid value: must be an object")])
        extra = [k for k in md if k not in OBJECT_META]
        if extra:
            unknown += [f"metadata.{k}" for k in extra]
            obj["metadata"] = md = {k: v for k, v in md.items() if k in OBJECT_META}
        empty = [k for k in OMIT_EMPTY if k in md and md[k] in ({}, [], None)]
        if empty:  # ObjectMeta's omitempty: an empty map or list is not kept
            obj["metadata"] = {k: v for k, v in md.items() if k not in empty}
        try:
            out = schema.apply(r.group, r.kind, obj, old, unknown)
        except schema.SchemaError as exc:
            raise invalid(r, obj["metadata"].get("name", ""), exc.causes) from None
        if unknown:
            if validation == "Strict":
                raise strict_error(r, unknown)
            if validation == "Warn":
                self.warnings.extend(f'unknown field "{f}"' for f in unknown)
        return out

    # per-thread warnings of the current request (fieldValidation=Warn)
    _tls = threading.local()

    @property
    def warnings(self) -> list[str]:
        w: list[str] | None = getattr(self._tls, "warnings", None)
        if w is None:
            w = self._tls.warnings = []
        return w

    def take_warnings(self) -> list[str]:
        """The warnings of this thread's last writes (and forget them)."""
        w = self.warnings
        self._tls.warnings = []
        return w

    # --- pod logs (the kubelet's part) -----------------------------------------

    def _pod_containers(self, ns: str, name: str) -> tuple[dict[str, Any], list[str]]:
        pod = self._entry(BY_GROUP_PLURAL[POD_KIND], ns, name).obj
        names = [str(c.get("name", "")) for c in (pod.get("spec") or {}).get("containers") or []
                 if isinstance(c, dict)]
        return pod, names

    def append_pod_log(self, ns: str, name: str, container: str, text: str) -> None:
        """Container ``container`` of Pod ns/name wrote ``text`` (lines)."""
        with self.cond:
            pod, names = self._pod_containers(ns, name)
            if container not in names:
                raise ApiError(400, "BadRequest",
                               f"container {container} is not valid for pod {name}")
            lines = self._pod_logs.setdefault((pod["metadata"].get("uid", ""), container), [])
            lines.extend(text.splitlines())

    def pod_log(self, ns: str, name: str, container: str | None = None,
                tail_lines: int | None = None, limit_bytes: int | None = None) -> bytes:
        """The log of a container of a Pod, as ``GET pods/NAME/log`` answers it:
        the last ``tail_lines`` lines, then at most ``limit_bytes`` bytes.
        Errors as the real API server's (404 no Pod, 400 no such container,
        a container name needed, a container not started)."""
        with self.cond:
            pod, names = self._pod_containers(ns, name)
            if container is None:
                if len(names) != 1:
                    raise ApiError(400, "BadRequest",
                                   f"a container name must be specified for pod {name},"
                                   f" choose one of: [{' '.join(names)}]")
                container = names[0]
            elif container not in names:
                raise ApiError(400, "BadRequest",
                               f"container {container} is not valid for pod {name}")
            phase = (pod.get("status") or {}).get("phase") or "Pending"
            if phase == "Pending":
                raise ApiError(400, "BadRequest", f'container "{container}" in pod "{name}"'
                                                  f" is waiting to start: ContainerCreating")
            lines = list(self._pod_logs.get((pod["metadata"].get("uid", ""), container), ()))
        if tail_lines is not None:
            lines = lines[len(lines) - tail_lines:] if tail_lines else []
        data = "".join(line + "\n" for line in lines).encode()
        return data[:limit_bytes] if limit_bytes is not None else data

    # --- reads ---------------------------------------------------------------

    def get(self, r: Resource, ns: str, name: str) -> dict[str, Any]:
        """A private copy of the object (raises 404)."""
        result: dict[str, Any] = json.loads(self.get_raw(r, ns, name))
        return result

    def get_raw(self, r: Resource, ns: str, name: str) -> bytes:
        with self.cond:
            return self._entry(r, ns, name).raw

    def list_raw(self, r: Resource, ns: str | None, label: str | None = None,
                 field: str | None = None, limit: int = 0,
                 cont: str | None = None) -> tuple[list[bytes], int, str | None]:
        """(encoded items, list resourceVersion, continue token)."""
        entries, rv, token = self._select(r, ns, label, field, limit, cont)
        return [e.raw for e in entries], rv, token

    def list_page(self, r: Resource, ns: str | None, label: str | None = None,
                  field: str | None = None, limit: int = 0, cont: str | None = None
                  ) -> tuple[list[bytes], int, str | None, int | None]:
        """list_raw and the items left after this page (remainingItemCount:
        None unless there are more pages of a list without selectors, as
        the etcd3 store counts them)."""
        entries, rv, token = self._select(r, ns, label, field, limit, cont)
        left = None
        if token and not label and not field:
            last = self._key(r, *(json.loads(entries[-1].raw)["metadata"].get(k, "")
                                  for k in ("namespace", "name")))
            with self.cond:
                left = sum(1 for k in self._kinds.get((r.group, r.plural), ())
                           if (ns is None or not r.namespaced or k[2] == ns)
                           and (k[2], k[3]) > (last[2], last[3]))
        return [e.raw for e in entries], rv, token, left

    def view(self, r: Resource, ns: str | None, label: str | None = None,
             field: str | None = None) -> list[Mapping[str, Any]]:
        """The matching stored objects themselves, neither copied nor decoded:
        for controllers that only read (a list_objects of the 696 Storages
        decoded them all, on every Setup).  Stored objects are never mutated
        and the caller must not mutate these either."""
        entries, _, _ = self._select(r, ns, label, field, 0, None)
        return [e.obj for e in entries]

    def _select(self, r: Resource, ns: str | None, label: str | None, field: str | None,
                limit: int, cont: str | None) -> tuple[list[Entry], int, str | None]:
        lmatch, fmatch = selectors.label_matcher(label), selectors.field_matcher(field)
        start: tuple[str, str] | None = None
        if limit < 0:
            raise ApiError(400, "BadRequest", f"invalid limit {limit}: must not be negative")
        with self.cond:
            rv = self.rv
            if cont:
                state = _continue_state(cont)
                start = (str(state["ns"]), str(state["name"]))
                rv = int(state["rv"])
                if rv < self.floor:
                    raise ApiError(410, "Expired", "The provided continue parameter is too old"
                                   " to display a consistent list result. You can start a new"
                                   " list without the continue parameter.")
            keys = sorted(k for k in self._candidates(r, label)
                          if ns is None or not r.namespaced or k[2] == ns)
            items: list[Entry] = []
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
                        {"rv": rv, "ns": last[2], "name": last[3]}).encode()).decode().rstrip("=")
                    break
                items.append(e)
                last = k
        return items, rv, token

    def kind_version(self, r: Resource) -> int:
        """The resourceVersion of the last change to any object of kind r
        (0 if none since start): what a controller's cache of a derived
        answer keys on."""
        with self.cond:
            return self._kind_rv.get((r.group, r.plural), 0)

    def _candidates(self, r: Resource, label: str | None) -> set[Key]:
        """The keys of kind r that may match the label selector: those
        carrying its rarest k=v label, else all of the kind (lock held)."""
        keys = self._kinds.get((r.group, r.plural), set())
        for lk, lv in selectors.label_equalities(label):
            having = self._labelled.get((r.group, r.plural, lk, lv), set())
            if len(having) < len(keys):
                keys = having
        return keys

    def list_objects(self, r: Resource, ns: str | None, label: str | None = None,
                     field: str | None = None) -> list[dict[str, Any]]:
        items, _, _ = self.list_raw(r, ns, label, field)
        return [json.loads(i) for i in items]

    # --- writes --------------------------------------------------------------

    def create(self, r: Resource, ns: str, body: dict[str, Any], dry_run: bool = False,
               validation: str = "Ignore") -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.create_raw(r, ns, body, dry_run, validation))
        return result

    def create_raw(self, r: Resource, ns: str, body: dict[str, Any], dry_run: bool = False,
                   validation: str = "Ignore") -> bytes:
        if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
            raise ApiError(400, "BadRequest", "the object has no metadata")
        obj = _copy(body)  # a private copy
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
        try:  # etcd3 store.Create; an unparsable resourceVersion is ignored there
            stale_rv = int(md.get("resourceVersion") or 0)
        except (TypeError, ValueError):
            stale_rv = 0
        if stale_rv:
            raise ApiError(500, "", "resourceVersion should not be set on objects to be"
                                    " created")
        with self.cond:
            self._check_namespace(r, ns)
            if not name:
                gen = md.get("generateName")
                if not gen or not isinstance(gen, str):
                    raise invalid(r, "", [("metadata.name", "Required value: name or"
                                                            " generateName is required")])
                name = gen + uuid.uuid4().hex[:5]
                md["name"] = name
            if not isinstance(name, str):
                raise invalid(r, str(name), [("metadata.name", "Invalid value: must be a"
                                                               " string")])
            if r.plural == "namespaces" and not r.group:  # as the NamespaceLifecycle admits it
                md["labels"] = {**(md.get("labels") or {}), NAMESPACE_LABEL: name}
            errors = name_errors(r, name) + label_errors(md.get("labels"))
            if errors:
                raise invalid(r, name, errors)
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
            if (r.group, r.plural) not in NO_GENERATION:
                md["generation"] = 1
            if r.plural == "namespaces" and not r.group:
                obj["spec"] = {"finalizers": ["kubernetes"]}
                obj["status"] = {"phase": "Active"}
            obj = self._schema(r, obj, None, validation)
            obj = self._admit(r, "CREATE", None, obj)
            if dry_run:
                return self._encode(obj)
            return self._commit("ADDED", key, obj).raw

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
                                   r.api_version(), "kind": r.kind}, None, "Ignore")
            self.rv += 1
            obj["metadata"] = {**md, "uid": str(uuid.uuid4()),
                               "creationTimestamp": now_rfc3339(), "generation": 1,
                               "resourceVersion": str(self.rv)}
            if r.namespaced:
                obj["metadata"]["namespace"] = ns
            self._index(key, None, obj)
            self.objects[key] = Entry(obj, self._encode(obj), self.rv)
            if self.persist is not None:
                self.persist.save(self.rv, key, obj)
            self.floor = self.rv

    def _finish_update(self, r: Resource, key: Key, old: Entry, new: dict[str, Any],
                       validation: str, dry_run: bool = False) -> bytes:
        """Common tail of replace/patch (lock held); new is a fresh dict."""
        omd = old.obj["metadata"]
        nmd = new.get("metadata")
        if not isinstance(nmd, dict):
            raise invalid(r, omd["name"], [("metadata", "Invalid value: must be an object")])
        nmd = new["metadata"] = dict(nmd)  # never change the stored object's metadata
        if nmd.get("uid") and nmd["uid"] != omd.get("uid"):
            raise invalid(r, omd["name"], [("metadata.uid", f'Invalid value: "{nmd["uid"]}":'
                                                            " field is immutable")], twice=True)
        for k in PROTECTED:
            if k in omd:
                nmd[k] = omd[k]
            else:
                nmd.pop(k, None)
        new["apiVersion"], new["kind"] = old.obj.get("apiVersion"), r.kind
        if nmd.get("labels") is not omd.get("labels"):
            errors = label_errors(nmd.get("labels"))
            if errors:
                raise invalid(r, omd["name"], errors)
        if omd.get("deletionTimestamp"):
            added = set(nmd.get("finalizers") or []) - set(omd.get("finalizers") or [])
            if added:
                found = ", ".join(json.dumps(f) for f in sorted(added))
                raise invalid(r, omd["name"], [(
                    "metadata.finalizers", "Forbidden: no new finalizers can be added if the"
                    f" object is being deleted, found new finalizers []string{{{found}}}")],
                    twice=True)
        new = self._schema(r, new, old.obj, validation)
        new = self._admit(r, "UPDATE", old.obj, new)
        # generation counts changes outside metadata -- and outside status only
        # when status is a subresource (for other kinds status is content)
        if _content(old.obj, r.status) != _content(new, r.status):
            new["metadata"]["generation"] = omd.get("generation", 1) + 1
        if new == old.obj:
            return old.raw  # no-op: same resourceVersion, no event
        if dry_run:  # the answer as if written, with the old resourceVersion
            return self._encode(new)
        if omd.get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            # deleted as it is stored (the DELETED event carries its last
            # state, finalizers and all); the answer is the update as
            # asked, with the resourceVersion it was made on
            self._commit("DELETED", key, {**old.obj, "metadata": dict(omd)})
            self._collect(omd.get("uid"))
            return self._encode(new)
        return self._commit("MODIFIED", key, new).raw

    def _merge_subresource(self, r: Resource, old: dict[str, Any], new: dict[str, Any],
                           subresource: str | None) -> dict[str, Any]:
        if subresource == "status":
            if not r.status:
                raise not_found(r, old["metadata"]["name"])
            merged = dict(old)
            if new.get("status") is None:
                merged.pop("status", None)
            else:
                merged["status"] = new["status"]
            return merged
        if r.status:
            new = dict(new)
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        return new

    def replace(self, r: Resource, ns: str, name: str, body: dict[str, Any],
                subresource: str | None = None, validation: str = "Ignore", *,
                dry_run: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(
            self.replace_raw(r, ns, name, body, subresource, validation, dry_run=dry_run))
        return result

    def replace_raw(self, r: Resource, ns: str, name: str, body: dict[str, Any],
                    subresource: str | None = None, validation: str = "Ignore", *,
                    dry_run: bool = False) -> bytes:
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body is not an object")
        md = body.get("metadata") or {}
        if not isinstance(md, dict):
            raise ApiError(400, "BadRequest", "the object's metadata is not an object")
        if md.get("name") and md["name"] != name:
            raise ApiError(400, "BadRequest", f"the name of the object ({md['name']}) does not"
                                              f" match the name on the URL ({name})")
        if r.namespaced and md.get("namespace") and md["namespace"] != ns:
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not"
                                              " match the namespace sent on the request")
        with self.cond:
            key = self._key(r, ns, name)
            old = self._entry(r, ns, name)
            rv = md.get("resourceVersion")
            if not rv:  # (named by its resource, as registry.Store's update says it)
                err = invalid(r, name, [("metadata.resourceVersion", "Invalid value: 0: must be"
                                                                     " specified for an update")],
                              kind=r.plural)
                err.message = err.message.replace(f"{r.plural}.{r.group}" if r.group else
                                                  r.plural, qualified(r), 1)
                raise err
            if str(rv) != old.obj["metadata"]["resourceVersion"]:
                raise conflict(r, name)
            new = self._merge_subresource(r, old.obj, _copy(body), subresource)
            return self._finish_update(r, key, old, new, validation, dry_run)

    def patch(self, r: Resource, ns: str, name: str, patch_type: str, patch: Any,
              subresource: str | None = None, validation: str = "Ignore", *,
              dry_run: bool = False) -> dict[str, Any]:
        """patch_type: "merge" (RFC 7386) or "json" (RFC 6902)."""
        result: dict[str, Any] = json.loads(
            self.patch_raw(r, ns, name, patch_type, patch, subresource, validation,
                           dry_run=dry_run))
        return result

    def patch_raw(self, r: Resource, ns: str, name: str, patch_type: str, patch: Any,
                  subresource: str | None = None, validation: str = "Ignore", *,
                  dry_run: bool = False) -> bytes:
        with self.cond:
            key = self._key(r, ns, name)
            old = self._entry(r, ns, name)
            try:
                if patch_type == "merge":
                    if not isinstance(patch, dict):
                        raise ApiError(400, "BadRequest", "error decoding patch: json: cannot"
                                                          f" unmarshal {go_json_type(patch)} into"
                                                          " Go value of type"
                                                          " map[string]interface {}")
                    patched = merge_patch(old.obj, patch)
                elif patch_type == "json":
                    patched = json_patch(old.obj, patch)
                else:
                    raise ApiError(415, "UnsupportedMediaType",
                                   f"the body of the request was in an unknown format -"
                                   f" accepted media types include: application/json-patch+json,"
                                   f" application/merge-patch+json ({patch_type} given)")
            except PatchError as exc:
                if exc.code == 422:  # what handlers/patch.go answers for any Apply error
                    raise ApiError(422, "Invalid", "the server rejected our request due to an"
                                                   " error in our request", {}) from None
                raise ApiError(exc.code, "BadRequest", str(exc)) from None
            if not isinstance(patched, dict):
                raise ApiError(422, "Invalid", "the patch made the object not an object")
            rv = (patched.get("metadata") or {}).get("resourceVersion") \
                if isinstance(patched.get("metadata"), dict) else None
            if rv and str(rv) != old.obj["metadata"]["resourceVersion"]:
                raise conflict(r, name)
            new = self._merge_subresource(r, old.obj, patched, subresource)
            return self._finish_update(r, key, old, new, validation, dry_run)

    def delete(self, r: Resource, ns: str, name: str,
               preconditions: dict[str, Any] | None = None,
               propagation: str = "Background", *,
               dry_run: bool = False) -> tuple[bool, dict[str, Any]]:
        """(deleted now, the object as it stands); with dry_run the answer
        as if deleted, nothing changed.

        propagation: Background (dependents are garbage-collected at once),
        Foreground (the same, dependents first) or Orphan (dependents keep
        living, their ownerReferences to this object are removed)."""
        if propagation not in ("Background", "Foreground", "Orphan"):
            raise ApiError(400, "BadRequest", f'unsupported propagationPolicy "{propagation}":'
                                              ' supported values: "Background", "Foreground",'
                                              ' "Orphan"')
        with self.cond:
            key = self._key(r, ns, name)
            e = self._entry(r, ns, name)
            md = e.obj["metadata"]
            pre = preconditions or {}
            if not isinstance(pre, dict):
                raise ApiError(400, "BadRequest", "preconditions must be an object")
            what = (f"Operation cannot be fulfilled on {r.kind}{'.' if r.group else ''}"
                    f'{r.group} "{name}"')
            details = {"name": name, "group": r.group, "kind": r.kind}
            if pre.get("uid") and pre["uid"] != md["uid"]:
                raise ApiError(409, "Conflict", f"{what}: the UID in the precondition"
                                                f" ({pre['uid']}) does not match the UID in"
                                                f" record ({md['uid']}). The object might have"
                                                " been deleted and then recreated", details)
            if pre.get("resourceVersion") and pre["resourceVersion"] != md["resourceVersion"]:
                raise ApiError(409, "Conflict", f"{what}: the ResourceVersion in the"
                                                f" precondition ({pre['resourceVersion']}) does"
                                                " not match the ResourceVersion in record"
                                                f" ({md['resourceVersion']}). The object might"
                                                " have been modified", details)
            if md.get("finalizers"):
                if md.get("deletionTimestamp"):
                    return False, json.loads(e.raw)
                new = {**e.obj, "metadata": {**md, "deletionTimestamp": now_rfc3339(),
                                             "deletionGracePeriodSeconds": 0}}
                if md.get("generation"):  # rest.BeforeDelete counts the deletion
                    new["metadata"]["generation"] = md["generation"] + 1
                if dry_run:
                    return False, _copy(new)
                entry = self._commit("MODIFIED", key, new)
                if r.plural == "namespaces" and not r.group:
                    self._delete_namespace(name)
                return False, json.loads(entry.raw)
            if dry_run:
                return True, json.loads(e.raw)
            if r.plural == "namespaces" and not r.group:
                self._delete_namespace(name)
            if propagation == "Orphan":
                self._orphan(md.get("uid"))
            elif propagation == "Foreground":
                self._collect(md.get("uid"), exclude=key)
            if key not in self.objects:  # a dependent owned its owner
                return True, json.loads(e.raw)
            gone = {**e.obj, "metadata": dict(md)}
            self._commit("DELETED", key, gone)
            self._collect(md.get("uid"))
            return True, gone

    def _collect(self, uid: str | None, exclude: Key | None = None) -> None:
        """Garbage collection after the owner uid went away: dependents whose
        owners are all gone are deleted; the others lose that owner."""
        if not uid:
            return
        for k in sorted(self._owned.get(uid, ())):
            e = self.objects.get(k)
            if e is None or k == exclude:
                continue
            refs = e.obj["metadata"].get("ownerReferences") or []
            alive = [o for o in refs if isinstance(o, dict) and o.get("uid") != uid
                     and o.get("uid") in self._uids]
            res = BY_GROUP_PLURAL[(k[0], k[1])]
            if alive:
                keep = [o for o in refs if not (isinstance(o, dict) and o.get("uid") == uid)]
                self._commit("MODIFIED", k, {**e.obj, "metadata": {
                    **e.obj["metadata"], "ownerReferences": keep}})
            else:
                self.delete(res, k[2], k[3])

    def _orphan(self, uid: str | None) -> None:
        if not uid:
            return
        for k in sorted(self._owned.get(uid, ())):
            e = self.objects[k]
            refs = [o for o in e.obj["metadata"].get("ownerReferences") or []
                    if not (isinstance(o, dict) and o.get("uid") == uid)]
            md = {**e.obj["metadata"], "ownerReferences": refs}
            if not refs:
                del md["ownerReferences"]
            self._commit("MODIFIED", k, {**e.obj, "metadata": md})

    def _delete_namespace(self, ns: str) -> None:
        for k in sorted(k for k in self.objects if k[2] == ns and k[0:2] != ("", "namespaces")):
            if k in self.objects:
                self.delete(BY_GROUP_PLURAL[(k[0], k[1])], k[2], k[3])

    def delete_collection(self, r: Resource, ns: str | None, label: str | None = None,
                          field: str | None = None,
                          propagation: str = "Background") -> list[dict[str, Any]]:
        with self.cond:
            targets = [json.loads(raw) for raw in self.list_raw(r, ns, label, field)[0]]
            for o in targets:
                md = o["metadata"]
                if self._key(r, md.get("namespace", ""), md["name"]) in self.objects:
                    self.delete(r, md.get("namespace", ""), md["name"], None, propagation)
            return targets

    # --- watches -------------------------------------------------------------

    def watch(self, r: Resource, ns: str | None, rv: int | None, label: str | None = None,
              field: str | None = None) -> Watch:
        """A Watch from rv (None or 0: ADDED for the current objects first)."""
        lmatch, fmatch = selectors.label_matcher(label), selectors.field_matcher(field)
        kind = (r.group, r.plural)

        def match(ev: Event) -> Event | None:
            """The event as this watch sees it (cache_watcher's
            convertToWatchEvent): an object that comes to match the
            selectors is ADDED, one that stops matching DELETED (its
            previous state, the change's resourceVersion)."""
            k = ev.key
            if k[:2] != kind or not (ns is None or not r.namespaced or k[2] == ns):
                return None
            now = ev.type != "DELETED" and lmatch(ev.obj) and fmatch(ev.obj)
            before = ev.prev if ev.type == "MODIFIED" else ev.obj if ev.type == "DELETED" \
                else None
            was = before is not None and lmatch(before) and fmatch(before)
            if now:
                return ev if was or ev.type == "ADDED" else Event(
                    "ADDED", k, ev.obj, ev.raw, ev.rv, ev.prev)
            if not was or before is None:
                return None
            if ev.type == "DELETED":
                return ev
            gone = {**before, "metadata": {**before["metadata"],
                                           "resourceVersion": str(ev.rv)}}
            return Event("DELETED", k, gone, self._encode(gone), ev.rv, before)

        w = Watch(self, match, kind)
        with self.cond:
            if rv is None or rv == 0:
                for k in sorted(self._kinds.get(kind, ())):
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
