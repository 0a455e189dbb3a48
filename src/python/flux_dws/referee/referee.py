"""The referee of the emulator's Kubernetes API server (doc/guide/emulator.rst).

Scenarios (``SCENARIOS``) are scripted sequences of API calls made the way
flux-dws' kube layer makes them (``flux_dws.k8s.api.Api``: raw REST calls
through the official client, lists and watches with
``_preload_content=False`` read line by line).  ``run(target)`` plays
them against one API server, named by a kubeconfig, and returns a
*transcript*: per scenario, per step, what the server answered (status
code, Status reason and message, the objects' fields) with what differs
from one run to the next abstracted: uids become ``uid#N``,
resourceVersions ``rv#N`` (numbered in order of first appearance, so a
no-op keeps its number and a write gets a new one), timestamps ``<time>``,
the run's namespace and names ``<ns>``/``<node>``.  A list's
resourceVersion (the store's newest, which other writers move) is
recorded as its relation to the newest item's.

``compare(a, b)`` gives every difference between two transcripts, one
line each (``scenario/step: path: A=... B=...``); ``accepted(line)``
names the entry of ``ACCEPTED`` (the differences from a real
kube-apiserver that stay, each with its reason) that covers a line.  A
step either side could not carry out (``unreachable``: the target has
no hook for it) is not compared.

    transcript = run(Target("emulator", "kubeconfig"))
    for line in compare(transcript, run(Target("real", "admin.conf", ...))):
        print(line)

``flux-dws referee`` is the command line (doc/man1/flux-dws-referee.rst).
"""

from __future__ import annotations

import fnmatch
import json
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from flux_dws.k8s.api import JSON_PATCH, MERGE_PATCH, Api
from flux_dws.k8s.kinds import KindInfo
from flux_dws.k8s.watching import _watch_lines
from flux_dws.libdws.wfstates import PROPOSAL, SETUP

__all__ = ["ACCEPTED", "SCENARIOS", "Target", "accepted", "compare", "run"]

G = "dataworkflowservices.github.io"
V = "v1alpha7"
WORKFLOW = KindInfo("Workflow", G, V, "workflows")
STORAGE = KindInfo("Storage", G, V, "storages")         # has a status subresource
NODE = KindInfo("Node", "", "v1", "nodes", namespaced=False)
NAMESPACE = KindInfo("Namespace", "", "v1", "namespaces", namespaced=False)
FINALIZER = "flux-framework.readthedocs.io/workflow"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
WATCH_SECONDS = 1     # a replaying watch: its events, then the end of the stream
BOOKMARK_SECONDS = 4  # long enough for the bookmark 2 s before the deadline


@dataclass
class Target:
    """An API server to referee: its kubeconfig (rights to create
    namespaces and nodes), optionally one of a user with no rights on
    namespaces (``restricted``), and a hook that compacts its watch history
    (``compact``: the emulator's ``/_emulator/compact``; etcd compaction
    on a real one)."""

    name: str
    kubeconfig: str
    restricted: str | None = None
    compact: Callable[[], None] | None = None


class Unreachable(Exception):
    """A step this target cannot carry out (no hook for it)."""


@dataclass
class Answer:
    code: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class Client:
    """Raw calls as flux_dws.k8s.api.Api makes them, answers kept whole."""

    def __init__(self, kubeconfig: str, timeout: float = 30.0) -> None:
        from kubernetes import config

        self.api_client = config.new_client_from_config(kubeconfig)  # type: ignore[no-untyped-call]
        self.api = Api(self.api_client, timeout)
        self.timeout = timeout

    def call(self, method: str, path: str, body: Any = None, ctype: str = "application/json",
             query: dict[str, Any] | None = None, accept: str = "application/json") -> Answer:
        ac = self.api_client
        headers = {"Accept": accept, "User-Agent": ac.user_agent}
        if body is not None:
            headers["Content-Type"] = ctype
        ac.update_params_for_auth(headers, [], ["BearerToken"], path, method, body)
        url = ac.configuration.host + path + (f"?{urlencode(query)}" if query else "")
        resp = ac.rest_client.request(method, url, headers=headers, body=body,
                                      _request_timeout=self.timeout)
        data = resp.read()
        try:
            value = json.loads(data) if data else None
        except ValueError:
            value = data.decode("utf-8", "replace")
        return Answer(int(resp.status), value, {k.lower(): v for k, v in resp.headers.items()})

    def watch(self, k: KindInfo, ns: str | None, seconds: int, **kw: Any) -> list[Any]:
        """The events of one watch, read until the server ends the stream
        (or an Answer if the request itself failed)."""
        from kubernetes.client.exceptions import ApiException

        try:
            resp = self.api.lister(k, ns)(watch=True, timeout_seconds=seconds,
                                          _preload_content=False,
                                          _request_timeout=(5, seconds + 15), **kw)
        except ApiException as exc:
            return [Answer(int(exc.status), _json(exc.body))]
        try:
            return [json.loads(line) for line in _watch_lines(resp)]
        finally:
            resp.release_conn()


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if text else None
    except (ValueError, TypeError):
        return text


def path_of(k: KindInfo, ns: str | None, name: str | None = None, sub: str = "") -> str:
    """The path of k's objects in ns (None: in all namespaces)."""
    if ns is None and k.namespaced:
        k = KindInfo(k.kind, k.group, k.version, k.plural, namespaced=False)
    path = Api._path(k, ns, name)
    return f"{path}/{sub}" if sub else path


# --- normalising ------------------------------------------------------------

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# numbers in messages that name resourceVersions
MESSAGE_RVS = (re.compile(r"(too old resource version: )\d+ \(\d+\)"),
               re.compile(r"(ResourceVersion in (?:precondition|object meta): )\d+"),
               re.compile(r"(ResourceVersion in (?:the precondition|record) \()\d+"),
               re.compile(r"(trying to send message larger than max \()\d+"))


class Norm:
    """What differs between runs, abstracted (see the module docstring)."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names            # run-specific text -> its placeholder
        self.uids: dict[str, str] = {}
        self.rvs: dict[str, str] = {}

    def uid(self, u: str) -> str:
        return self.uids.setdefault(u, f"uid#{len(self.uids) + 1}")

    def rv(self, v: Any) -> Any:
        if not isinstance(v, str) or not v:
            return v
        if not v.isdigit():
            return "<rv:not a number>"
        return self.rvs.setdefault(v, f"rv#{len(self.rvs) + 1}")

    def text(self, s: str) -> str:
        for real, placeholder in self.names.items():
            s = s.replace(real, placeholder)
        s = UID.sub(lambda m: self.uid(m.group(0)), s)
        for rx in MESSAGE_RVS:
            s = rx.sub(lambda m: f"{m.group(1)}<rv>", s)
        return TIME.sub(lambda m: "<time.frac>" if m.group(1) else "<time>", s)

    def value(self, v: Any, key: str = "") -> Any:
        if isinstance(v, dict):
            return self.obj(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, str):
            if key == "uid" and UID.fullmatch(v):
                return self.uid(v)
            if key == "resourceVersion":
                return self.rv(v)
            return self.text(v)
        return v

    def obj(self, o: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in o.items():
            if k == "managedFields":
                out[k] = "<present>"  # server-side apply's bookkeeping
            elif k == "metadata" and isinstance(v, dict) and "items" in o:
                out[k] = self.list_meta(v, o["items"])
            else:
                out[k] = self.value(v, k)
        return out

    def list_meta(self, md: dict[str, Any], items: Any) -> dict[str, Any]:
        out = {k: self.value(v, k) for k, v in md.items() if k != "resourceVersion"}
        rv = md.get("resourceVersion")
        newest = max((int(i["metadata"]["resourceVersion"]) for i in items or []
                      if isinstance(i, dict) and str(i.get("metadata", {}).get(
                          "resourceVersion", "")).isdigit()), default=0)
        if "continue" in out:
            out["continue"] = "<token>" if md["continue"] else ""
        if rv is not None:
            out["resourceVersion"] = ("<not a number>" if not str(rv).isdigit() else
                                      ">= newest item" if int(rv) >= newest else "< newest item")
        return out

    def answer(self, a: Answer) -> dict[str, Any]:
        out: dict[str, Any] = {"code": a.code}
        b = a.body
        if isinstance(b, dict) and b.get("kind") == "Status":
            out["status"] = self.status(b)
        elif b is not None:
            out["body"] = self.value(b)
        warning = a.headers.get("warning")
        if warning:
            out["warning"] = self.text(warning)
        return out

    def status(self, b: dict[str, Any]) -> dict[str, Any]:
        keep: dict[str, Any] = {k: b.get(k) for k in ("status", "reason", "message", "code")
                                if k in b}
        d = b.get("details")
        if isinstance(d, dict):
            keep["details"] = d
        return self.obj(keep)

    def events(self, evs: list[Any]) -> dict[str, Any]:
        if len(evs) == 1 and isinstance(evs[0], Answer):
            return self.answer(evs[0])
        out = []
        last = 0
        for ev in evs:
            t = ev.get("type")
            o = ev.get("object") or {}
            rv = str((o.get("metadata") or {}).get("resourceVersion") or "")
            if t == "BOOKMARK":
                md = o.get("metadata") or {}
                out.append({"type": t, "kind": o.get("kind"), "apiVersion": o.get("apiVersion"),
                            "metadata": sorted(md),
                            "annotations": md.get("annotations"),
                            "resourceVersion": ("<not a number>" if not rv.isdigit() else
                                                ">= last event" if int(rv) >= last else
                                                "< last event")})
                continue
            if rv.isdigit():
                last = max(last, int(rv))
            out.append({"type": t, "object": self.status(o) if t == "ERROR" else self.value(o)})
        return {"events": out}


# --- scenarios ----------------------------------------------------------------


class Run:
    """One scenario's run against one target: its clients, namespace and steps."""

    def __init__(self, target: Target, admin: Client, token: str, scenario: str) -> None:
        self.target = target
        self.c = admin
        self.ns = f"ref-{token}-{scenario.replace('_', '-')}"[:63].rstrip("-")
        self.node = f"ref-{token}-node"
        self.norm = Norm({self.ns: "<ns>", self.node: "<node>"})
        self.steps: list[tuple[str, Any]] = []

    def record(self, step: str, outcome: Any) -> None:
        if any(s == step for s, _ in self.steps):
            raise ValueError(f"step {step!r} recorded twice")
        self.steps.append((step, outcome))

    def step(self, step: str, a: Answer, pick: Callable[[Any], Any] | None = None) -> Answer:
        """Record an answer (``pick``: only these fields of its body)."""
        out = self.norm.answer(a)
        if pick is not None and "body" in out:
            out["body"] = pick(out["body"])
        self.record(step, out)
        return a

    def watch(self, step: str, k: KindInfo, ns: str | None, seconds: int = WATCH_SECONDS,
              **kw: Any) -> list[Any]:
        evs = self.c.watch(k, ns, seconds, **kw)
        self.record(step, self.norm.events(evs))
        return evs

    # the calls, as flux-dws makes them
    def create(self, k: KindInfo, body: dict[str, Any], ns: str | None = "",
               **query: Any) -> Answer:
        ns = self.ns if ns == "" else ns
        return self.c.call("POST", path_of(k, ns), body, query=query or None)

    def get(self, k: KindInfo, name: str, ns: str | None = "", **kw: Any) -> Answer:
        return self.c.call("GET", path_of(k, self.ns if ns == "" else ns, name), **kw)

    def list(self, k: KindInfo, ns: str | None = "", **query: Any) -> Answer:
        return self.c.call("GET", path_of(k, self.ns if ns == "" else ns), query=query or None)

    def patch(self, k: KindInfo, name: str, body: Any, ctype: str = MERGE_PATCH,
              sub: str = "", ns: str | None = "", **query: Any) -> Answer:
        return self.c.call("PATCH", path_of(k, self.ns if ns == "" else ns, name, sub), body,
                           ctype, query=query or None)

    def put(self, k: KindInfo, name: str, body: Any, sub: str = "") -> Answer:
        return self.c.call("PUT", path_of(k, self.ns, name, sub), body)

    def delete(self, k: KindInfo, name: str, ns: str | None = "", body: Any = None,
               **query: Any) -> Answer:
        return self.c.call("DELETE", path_of(k, self.ns if ns == "" else ns, name), body,
                           query=query or None)

    def rv_of(self, a: Answer) -> str:
        return str(a.body["metadata"]["resourceVersion"])


def workflow(name: str, finalizers: list[str] | None = None,
             labels: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if finalizers:
        md["finalizers"] = finalizers
    if labels:
        md["labels"] = labels
    return {"apiVersion": f"{G}/{V}", "kind": "Workflow", "metadata": md,
            "spec": {"desiredState": PROPOSAL, "dwDirectives": [], "wlmID": "flux",
                     "jobID": "f1", "userID": 1000, "groupID": 1000, "forceReady": False}}


def storage(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": f"{G}/{V}", "kind": "Storage",
            "metadata": {"name": name, "labels": labels},
            "spec": {"state": "Enabled", "mode": "Live"},
            "status": {"status": "Ready"}}


def _meta(*keys: str) -> Callable[[Any], Any]:
    """Pick the body's metadata fields ``keys`` (and spec/status)."""
    def pick(body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        md = body.get("metadata") or {}
        return {"metadata": {k: md.get(k) for k in keys},
                **{k: body[k] for k in ("spec", "status") if k in body}}
    return pick


def _names(body: Any) -> Any:
    """A list's item names and its metadata."""
    if not isinstance(body, dict) or "items" not in body:
        return body
    return {"kind": body.get("kind"), "apiVersion": body.get("apiVersion"),
            "metadata": body.get("metadata"),
            "items": [i.get("metadata", {}).get("name") for i in body["items"]]}


def s_crud(r: Run) -> None:
    """create/get/list/delete of namespaced custom resources, and their
    metadata as the server fills it in."""
    r.step("create", r.create(WORKFLOW, workflow("w1")))
    r.step("get", r.get(WORKFLOW, "w1"))
    r.step("list", r.list(WORKFLOW))
    r.step("list-all-namespaces", r.list(WORKFLOW, None, fieldSelector=f"metadata.namespace"
                                                                          f"={r.ns}"), _names)
    r.step("delete", r.delete(WORKFLOW, "w1"))
    r.step("get-deleted", r.get(WORKFLOW, "w1"))
    r.step("delete-missing", r.delete(WORKFLOW, "w1"))
    r.step("create-generate-name", r.create(WORKFLOW, {
        **workflow(""), "metadata": {"generateName": "gen-"}}),
        lambda b: {"generateName": b.get("metadata", {}).get("generateName"),
                   "name-prefix": str(b.get("metadata", {}).get("name", ""))[:4],
                   "name-length": len(str(b.get("metadata", {}).get("name", "")))})
    r.step("create-in-missing-namespace", r.create(WORKFLOW, workflow("w2"), ns=r.ns + "-none"))
    other = workflow("w3")
    other["metadata"]["namespace"] = "default"
    r.step("create-namespace-mismatch", r.create(WORKFLOW, other))
    r.step("create-wrong-kind", r.create(WORKFLOW, {**workflow("w4"), "kind": "Storage"}))
    unknown = workflow("w6")
    unknown["spec"]["bogus"] = 1
    unknown["metadata"]["bogus"] = 1
    r.step("create-unknown-fields", r.create(WORKFLOW, unknown), _meta("name"))
    r.step("create-unknown-fields-strict", r.create(WORKFLOW, {
        **unknown, "metadata": {"name": "w7"}}, fieldValidation="Strict"))
    for label, size in (("create-1.6MiB", 1600 << 10), ("create-2MiB", 2 << 20),
                        ("create-4MiB", 4 << 20)):
        big = workflow(f"big-{size >> 20}")
        big["spec"]["dwDirectives"] = ["x" * (size // 8)] * 8
        r.step(label, r.create(WORKFLOW, big), _meta("name"))
    with_rv = workflow("w5")
    with_rv["metadata"]["resourceVersion"] = "5"
    r.step("create-with-resource-version", r.create(WORKFLOW, with_rv))
    r.create(STORAGE, storage("s1"))
    fresh = r.get(STORAGE, "s1").body
    fresh["status"] = {"status": "Degraded"}
    fresh["spec"]["state"] = "Disabled"
    r.step("put-status", r.put(STORAGE, "s1", fresh, sub="status"),
           _meta("generation"))
    # (the client sends a str JSON-encoded: a JSON string, not an object)
    r.step("create-not-object", r.c.call("POST", path_of(WORKFLOW, r.ns), "{not json"))


def s_cluster_scoped(r: Run) -> None:
    """A cluster-scoped kind (the Node a rabbit's drain taints)."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": r.node,
                                                             "labels": {"referee": "yes"}}}
    r.step("create", r.create(NODE, node, ns=None), _meta("name", "labels", "generation"))
    r.step("create-again", r.create(NODE, node, ns=None))
    r.step("get", r.get(NODE, r.node, ns=None), _meta("name", "labels", "namespace"))
    r.step("list-selected", r.list(NODE, None, labelSelector="referee=yes"), _names)
    r.step("patch-taint", r.patch(NODE, r.node, {"spec": {"taints": [
        {"key": "cray.nnf.node.drain", "effect": "NoSchedule"}]}}, ns=None),
        lambda b: {"spec": b.get("spec")})
    r.step("delete", r.delete(NODE, r.node, ns=None),
           lambda b: {"kind": b.get("kind"), "metadata": {"name": b.get("metadata", {}).get(
               "name")}, "status": b.get("status"), "details": b.get("details")})
    r.step("get-deleted", r.get(NODE, r.node, ns=None))


def s_conflicts(r: Run) -> None:
    """409s: a name taken, a stale resourceVersion on update and patch."""
    a = r.step("create", r.create(WORKFLOW, workflow("w1")), _meta("resourceVersion"))
    r.step("create-existing", r.create(WORKFLOW, workflow("w1")))
    old = a.body
    r.step("patch", r.patch(WORKFLOW, "w1", {"spec": {"desiredState": SETUP}}),
           _meta("resourceVersion", "generation"))
    r.step("put-stale", r.put(WORKFLOW, "w1", old))
    r.step("patch-stale-rv", r.patch(WORKFLOW, "w1", {"metadata": {
        "resourceVersion": old["metadata"]["resourceVersion"]}, "spec": {"jobID": "f2"}}))
    fresh = r.get(WORKFLOW, "w1").body
    no_rv = {**fresh, "metadata": {k: v for k, v in fresh["metadata"].items()
                                   if k != "resourceVersion"}}
    r.step("put-without-rv", r.put(WORKFLOW, "w1", no_rv))
    fresh["spec"]["jobID"] = "f3"
    r.step("put-current", r.put(WORKFLOW, "w1", fresh), _meta("resourceVersion", "generation"))
    r.step("put-wrong-name", r.put(WORKFLOW, "w2", fresh))
    r.step("delete-precondition-rv", r.delete(WORKFLOW, "w1", body={
        "kind": "DeleteOptions", "apiVersion": "v1",
        "preconditions": {"resourceVersion": old["metadata"]["resourceVersion"]}}))
    r.step("delete-precondition-uid", r.delete(WORKFLOW, "w1", body={
        "kind": "DeleteOptions", "apiVersion": "v1",
        "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}))


def s_patches(r: Run) -> None:
    """merge and JSON patches (what flux-dws sends), strategic and apply
    patches (which it does not) on a custom resource."""
    r.step("create", r.create(WORKFLOW, workflow("w1", labels={"a": "1", "b": "2"})),
           _meta("resourceVersion", "generation", "labels"))
    r.step("merge", r.patch(WORKFLOW, "w1", {"metadata": {"labels": {"a": None, "c": "3"}},
                                             "spec": {"dwDirectives": ["#DW x"]}}),
           _meta("resourceVersion", "generation", "labels"))
    r.step("merge-noop", r.patch(WORKFLOW, "w1", {"spec": {"dwDirectives": ["#DW x"]}}),
           _meta("resourceVersion", "generation"))
    r.step("merge-not-object", r.patch(WORKFLOW, "w1", [1, 2]))
    r.step("merge-missing", r.patch(WORKFLOW, "nope", {"spec": {}}))
    r.step("json", r.patch(WORKFLOW, "w1", [
        {"op": "test", "path": "/spec/jobID", "value": "f1"},
        {"op": "replace", "path": "/spec/jobID", "value": "f9"},
        {"op": "add", "path": "/metadata/annotations", "value": {"x": "y"}}], JSON_PATCH),
        _meta("resourceVersion", "generation", "annotations"))
    r.step("json-test-fails", r.patch(WORKFLOW, "w1", [
        {"op": "test", "path": "/spec/jobID", "value": "nope"}], JSON_PATCH))
    r.step("json-remove-missing", r.patch(WORKFLOW, "w1", [
        {"op": "remove", "path": "/spec/nothing"}], JSON_PATCH))
    r.step("json-not-array", r.patch(WORKFLOW, "w1", {"op": "add"}, JSON_PATCH))
    r.step("strategic", r.patch(WORKFLOW, "w1", {"spec": {"jobID": "f8"}}, STRATEGIC))
    r.step("apply", r.patch(WORKFLOW, "w1", json.dumps(
        {"apiVersion": f"{G}/{V}", "kind": "Workflow", "metadata": {"name": "w1"},
         "spec": {"jobID": "f7"}}), APPLY, fieldManager="referee"),
        _meta("generation"))
    r.step("merge-schema-invalid", r.patch(WORKFLOW, "w1", {"spec": {"userID": "alice"}}))


def s_status(r: Run) -> None:
    """The status subresource (Storage) and its absence (Workflow)."""
    r.step("create-with-status", r.create(STORAGE, storage("s1")),
           _meta("generation"))
    r.step("status-via-main", r.patch(STORAGE, "s1", {"status": {"status": "Degraded"}}),
           _meta("generation", "resourceVersion"))
    r.step("status-via-sub", r.patch(STORAGE, "s1", {"status": {"status": "Ready"},
                                                     "spec": {"state": "Disabled"}},
                                     sub="status"),
           _meta("generation", "resourceVersion"))
    r.step("spec-via-main", r.patch(STORAGE, "s1", {"spec": {"state": "Disabled"}}),
           _meta("generation", "resourceVersion"))
    r.step("labels-via-sub", r.patch(STORAGE, "s1", {"metadata": {"labels": {"x": "1"}}},
                                     sub="status"),
           _meta("generation", "labels"))
    r.step("get-sub", r.c.call("GET", path_of(STORAGE, r.ns, "s1", "status")), _meta("name"))
    r.step("workflow-create", r.create(WORKFLOW, {**workflow("w1"), "status": {
        "state": PROPOSAL, "ready": False}}), _meta("generation"))
    r.step("workflow-status-via-main", r.patch(WORKFLOW, "w1", {"status": {"ready": True}}),
           _meta("generation"))
    r.step("workflow-status-sub", r.patch(WORKFLOW, "w1", {"status": {"ready": False}},
                                          sub="status"))


def s_finalizers(r: Run) -> None:
    """delete with a finalizer: deletionTimestamp; removing it deletes."""
    r.step("create", r.create(WORKFLOW, workflow("w1", [FINALIZER])), _meta("finalizers"))
    a = r.step("delete", r.delete(WORKFLOW, "w1"),
               _meta("deletionTimestamp", "deletionGracePeriodSeconds", "finalizers",
                     "resourceVersion", "generation"))
    start = r.rv_of(r.get(WORKFLOW, "w1")) if a.code == 200 else "0"
    r.step("delete-again", r.delete(WORKFLOW, "w1"),
           _meta("deletionTimestamp", "resourceVersion", "generation"))
    r.step("add-finalizer", r.patch(WORKFLOW, "w1", {"metadata": {
        "finalizers": [FINALIZER, "another/one"]}}))
    r.step("spec-while-deleting", r.patch(WORKFLOW, "w1", {"spec": {"jobID": "f2"}}),
           _meta("generation", "deletionTimestamp"))
    r.step("remove-finalizer", r.patch(WORKFLOW, "w1", {"metadata": {"finalizers": None}}),
           _meta("deletionTimestamp", "finalizers", "resourceVersion"))
    r.step("get-after", r.get(WORKFLOW, "w1"))
    r.watch("watch-from-delete", WORKFLOW, r.ns, resource_version=start)


def s_generation(r: Run) -> None:
    """generation moves with spec (and, without a status subresource, status)."""
    r.step("create", r.create(WORKFLOW, workflow("w1")), _meta("generation"))
    r.step("labels", r.patch(WORKFLOW, "w1", {"metadata": {"labels": {"x": "1"}}}),
           _meta("generation"))
    r.step("annotations", r.patch(WORKFLOW, "w1", {"metadata": {"annotations": {"x": "1"}}}),
           _meta("generation"))
    r.step("spec", r.patch(WORKFLOW, "w1", {"spec": {"jobID": "f2"}}), _meta("generation"))
    r.step("status", r.patch(WORKFLOW, "w1", {"status": {"state": PROPOSAL}}),
           _meta("generation"))
    r.step("protected-meta", r.patch(WORKFLOW, "w1", {"metadata": {
        "uid": "00000000-0000-0000-0000-000000000000", "generation": 99,
        "creationTimestamp": "2020-01-01T00:00:00Z"}}),
        _meta("generation", "uid", "creationTimestamp"))
    r.step("storage-create", r.create(STORAGE, storage("s1")), _meta("generation"))
    r.step("storage-status", r.patch(STORAGE, "s1", {"status": {"status": "Degraded"}},
                                     sub="status"), _meta("generation"))


def s_selectors(r: Run) -> None:
    """label and field selectors on lists (and a watch)."""
    for name, labels in (("s1", {"rack": "a", "tier": "x"}), ("s2", {"rack": "b"}),
                         ("s3", {})):
        r.create(STORAGE, storage(name, **labels))
    for sel in ("rack=a", "rack==a", "rack!=a", "rack in (a,b)", "rack notin (a)", "rack",
                "!rack", "rack=a,tier=x", "rack=a,tier=y"):
        r.step(f"label {sel}", r.list(STORAGE, labelSelector=sel), _names)
    for sel in ("rack in (a", "=a", "rack=a b"):
        r.step(f"label-bad {sel}", r.list(STORAGE, labelSelector=sel))
    for sel in ("metadata.name=s2", "metadata.name!=s2", "metadata.namespace=<ns>",
                "metadata.namespace=default"):
        r.step(f"field {sel}", r.list(STORAGE, fieldSelector=sel.replace("<ns>", r.ns)),
               _names)
    r.step("field all-namespaces", r.list(STORAGE, None, fieldSelector=f"metadata.namespace"
                                                                       f"={r.ns}"), _names)
    for sel in ("spec.state=Enabled", "metadata.labels=x", "metadata.name"):
        r.step(f"field-bad {sel}", r.list(STORAGE, fieldSelector=sel))
    start = r.rv_of(r.get(STORAGE, "s3"))
    r.patch(STORAGE, "s1", {"spec": {"state": "Disabled"}})
    r.patch(STORAGE, "s2", {"spec": {"state": "Disabled"}})
    r.watch("watch label rack=a", STORAGE, r.ns, resource_version=start,
            label_selector="rack=a")
    r.watch("watch field metadata.name=s2", STORAGE, r.ns, resource_version=start,
            field_selector="metadata.name=s2")
    moved = r.rv_of(r.get(STORAGE, "s2"))
    r.patch(STORAGE, "s1", {"metadata": {"labels": {"rack": "b"}}})   # leaves rack=a
    r.patch(STORAGE, "s3", {"metadata": {"labels": {"rack": "a"}}})   # joins rack=a
    r.watch("watch label rack=a as labels change", STORAGE, r.ns, resource_version=moved,
            label_selector="rack=a")


def s_pagination(r: Run) -> None:
    """limit/continue, a bad continue, an expired one (after compaction)."""
    for i in range(5):
        r.create(STORAGE, storage(f"s{i}"))
    first = r.step("page-1", r.list(STORAGE, limit=2), _names)
    cont = (first.body.get("metadata") or {}).get("continue", "")
    second = r.step("page-2", r.list(STORAGE, limit=2, **{"continue": cont}), _names)
    cont2 = (second.body.get("metadata") or {}).get("continue", "")
    r.create(STORAGE, storage("s9"))
    r.step("page-3-after-create", r.list(STORAGE, limit=2, **{"continue": cont2}), _names)
    r.step("limit-0", r.list(STORAGE, limit=0), _names)
    r.step("limit-negative", r.list(STORAGE, limit=-1), _names)
    r.step("continue-garbage", r.list(STORAGE, limit=2, **{"continue": "garbage"}))
    r.step("continue-other-ns", r.list(STORAGE, "default", limit=2, **{"continue": cont}))
    if r.target.compact is None:
        r.record("continue-expired", {"unreachable": "the target has no compaction hook"})
        return
    r.target.compact()
    r.step("continue-expired", r.list(STORAGE, limit=2, **{"continue": cont}))


def s_watch(r: Run) -> None:
    """watches from a resourceVersion, as flux-dws' watches run them."""
    a = r.create(WORKFLOW, workflow("w1"))
    start = r.rv_of(a)
    r.patch(WORKFLOW, "w1", {"spec": {"desiredState": SETUP}})
    r.create(WORKFLOW, workflow("w2"))
    r.delete(WORKFLOW, "w2")
    r.watch("from-create", WORKFLOW, r.ns, resource_version=start)
    listed = r.step("list", r.list(WORKFLOW), _names)
    r.watch("from-list", WORKFLOW, r.ns, resource_version=listed.body["metadata"][
        "resourceVersion"])
    r.watch("from-0", WORKFLOW, r.ns, resource_version="0")
    r.watch("without-rv", WORKFLOW, r.ns)
    r.watch("all-namespaces", WORKFLOW, None, resource_version=start,
            field_selector=f"metadata.namespace={r.ns}")
    r.watch("from-1-too-old", WORKFLOW, r.ns, resource_version="1")
    future = str(int(listed.body["metadata"]["resourceVersion"]) + 1000000)
    r.watch("from-the-future", WORKFLOW, r.ns, 5, resource_version=future)
    r.watch("bad-rv", WORKFLOW, r.ns, resource_version="abc")
    r.watch("bad-label", WORKFLOW, r.ns, resource_version=start, label_selector="a in (b")
    r.step("watch-query-on-get", r.c.call("GET", path_of(WORKFLOW, r.ns, "w1"),
                                          query={"watch": "true", "timeoutSeconds": "1"}),
           lambda b: b)


def s_bookmarks(r: Run) -> None:
    """allowWatchBookmarks (as flux-dws always asks): when they come."""
    a = r.create(WORKFLOW, workflow("w1"))
    r.watch("short-timeout", WORKFLOW, r.ns, resource_version=r.rv_of(a),
            allow_watch_bookmarks=True)
    r.watch("bookmark-before-timeout", WORKFLOW, r.ns, BOOKMARK_SECONDS,
            resource_version=r.rv_of(a), allow_watch_bookmarks=True)
    r.patch(WORKFLOW, "w1", {"spec": {"jobID": "f2"}})
    r.watch("bookmark-after-filtered-writes", WORKFLOW, r.ns, BOOKMARK_SECONDS,
            resource_version=r.rv_of(a), allow_watch_bookmarks=True,
            label_selector="nothing=here")


def s_dry_run(r: Run) -> None:
    """dryRun=All: the answer as if written, nothing stored."""
    r.step("create", r.create(WORKFLOW, workflow("w1"), dryRun="All"),
           lambda b: {**_meta("name", "generation", "namespace", "resourceVersion")(b),
                      "has-uid": bool(b.get("metadata", {}).get("uid")),
                      "has-creationTimestamp": bool(b.get("metadata", {}).get(
                          "creationTimestamp"))})
    r.step("get", r.get(WORKFLOW, "w1"))
    r.step("bad-dry-run", r.create(WORKFLOW, workflow("w1"), dryRun="Some"))
    r.create(WORKFLOW, workflow("w2"))
    r.step("patch", r.patch(WORKFLOW, "w2", {"spec": {"jobID": "dry"}}, dryRun="All"),
           _meta("generation"))
    r.step("get-after-patch", r.get(WORKFLOW, "w2"), lambda b: b.get("spec", {}).get("jobID"))
    r.step("delete", r.delete(WORKFLOW, "w2", dryRun="All"),
           lambda b: {"kind": b.get("kind"), "status": b.get("status")})
    r.step("get-after-delete", r.get(WORKFLOW, "w2"), _meta("name"))


def s_names(r: Run) -> None:
    """422 for names the real server refuses (and some it takes)."""
    for label, name in (("uppercase", "Bad"), ("underscore", "a_b"), ("dots", "a..b"),
                        ("trailing-dash", "a-"), ("253", "a" * 253), ("254", "a" * 254),
                        ("64", "a" * 64), ("dotted", "a.b.c"), ("digits", "123")):
        r.step(f"workflow {label}", r.create(WORKFLOW, workflow(name)),
               lambda b: b.get("metadata", {}).get("name", "")[:12])
    r.step("namespace 64", r.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": "n" * 64}}, ns=None))
    r.step("namespace dotted", r.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": "a.b"}}, ns=None))
    r.step("no-name", r.create(WORKFLOW, {**workflow(""), "metadata": {}}))
    r.step("bad-label-key", r.create(WORKFLOW, workflow("w1", labels={"a b": "x"})))
    r.step("bad-label-value", r.create(WORKFLOW, workflow("w2", labels={"a": "x y"})))
    r.step("get-bad-name", r.get(WORKFLOW, "Bad"))


def s_forbidden(r: Run) -> None:
    """A user without rights (the WLM roles grant no namespaces)."""
    if r.target.restricted is None:
        for step in ("create-namespace", "delete-node", "list-secrets"):
            r.record(step, {"unreachable": "the target has no restricted user"})
        return
    c = Client(r.target.restricted)
    r.step("create-namespace", c.call("POST", path_of(NAMESPACE, None), {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": r.ns + "-x"}}))
    r.step("delete-node", c.call("DELETE", path_of(NODE, None, r.node)))
    r.step("list-secrets", c.call("GET", "/api/v1/namespaces/kube-system/secrets"))


def s_table(r: Run) -> None:
    """Server-side printing (what kubectl get asks for)."""
    r.create(WORKFLOW, workflow("w1"))
    r.create(STORAGE, storage("s1"))

    def cols(b: Any) -> Any:
        if not isinstance(b, dict):
            return b
        return {"kind": b.get("kind"), "apiVersion": b.get("apiVersion"),
                "columns": [(c.get("name"), c.get("type"), c.get("format"),
                             c.get("priority", 0)) for c in b.get("columnDefinitions") or []],
                "rows": [[c if not isinstance(c, str) or not c.endswith("s") else "<age>"
                          for c in row.get("cells", [])] for row in b.get("rows") or []],
                "row-object": sorted((b.get("rows") or [{}])[0].get("object") or {})}
    r.step("workflows", r.c.call("GET", path_of(WORKFLOW, r.ns), accept=TABLE), cols)
    r.step("storages", r.c.call("GET", path_of(STORAGE, r.ns), accept=TABLE), cols)
    r.step("workflow", r.c.call("GET", path_of(WORKFLOW, r.ns, "w1"), accept=TABLE), cols)


def s_discovery(r: Run) -> None:
    """What flux-dws' kinds probe and kubectl read."""
    def versions(b: Any) -> Any:
        if not isinstance(b, dict):
            return b
        return {"kind": b.get("kind"), "name": b.get("name"),
                "versions": [v.get("version") for v in b.get("versions") or []],
                "preferred": (b.get("preferredVersion") or {}).get("version")}

    def resources(b: Any) -> Any:
        if not isinstance(b, dict):
            return b
        out = {}
        for e in b.get("resources") or []:
            if e.get("name") in ("workflows", "workflows/status", "storages",
                                 "storages/status"):
                out[e["name"]] = {k: e.get(k) for k in ("namespaced", "kind", "singularName",
                                                        "shortNames", "categories")}
                out[e["name"]]["verbs"] = sorted(e.get("verbs") or [])
        return {"kind": b.get("kind"), "groupVersion": b.get("groupVersion"),
                "resources": out}
    r.step("group", r.c.call("GET", f"/apis/{G}"), versions)
    r.step("group-version", r.c.call("GET", f"/apis/{G}/{V}"), resources)
    r.step("missing-group", r.c.call("GET", "/apis/nothing.example.com"))
    r.step("missing-resource", r.c.call("GET", f"/apis/{G}/{V}/namespaces/{r.ns}/nothings"))
    r.step("missing-subresource", r.c.call("GET", f"/apis/{G}/{V}/namespaces/{r.ns}/storages"
                                                  "/s1/nothing"))


SCENARIOS: dict[str, Callable[[Run], None]] = {
    "crud": s_crud,
    "cluster_scoped": s_cluster_scoped,
    "conflicts": s_conflicts,
    "patches": s_patches,
    "status": s_status,
    "finalizers": s_finalizers,
    "generation": s_generation,
    "selectors": s_selectors,
    "pagination": s_pagination,
    "watch": s_watch,
    "bookmarks": s_bookmarks,
    "dry_run": s_dry_run,
    "names": s_names,
    "forbidden": s_forbidden,
    "table": s_table,
    "discovery": s_discovery,
}


def run(target: Target, scenarios: list[str] | None = None,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Play the scenarios (all, or those named) against target: its transcript."""
    admin = Client(target.kubeconfig)
    token = secrets.token_hex(3)
    out: dict[str, Any] = {"target": target.name, "scenarios": {}}
    for name in scenarios or list(SCENARIOS):
        fn = SCENARIOS[name]
        r = Run(target, admin, token, name)
        t0 = time.monotonic()
        made = r.c.call("POST", path_of(NAMESPACE, None), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": r.ns}})
        if made.code != 201:
            raise RuntimeError(f"{target.name}: cannot create namespace {r.ns}: {made.body}")
        try:
            fn(r)
        except Exception as exc:  # a scenario that breaks is a difference too
            r.steps.append(("<scenario failed>", f"{type(exc).__name__}: {r.norm.text(str(exc))}"))
        finally:
            r.c.call("DELETE", path_of(NAMESPACE, None, r.ns))
        out["scenarios"][name] = [[s, o] for s, o in r.steps]
        if progress is not None:
            progress(f"{target.name}: {name}: {len(r.steps)} steps,"
                     f" {time.monotonic() - t0:.1f} s")
    return out


# --- comparing ----------------------------------------------------------------


def _flatten(v: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(v, dict) and v:
        for k in v:
            yield from _flatten(v[k], f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(v, list) and v and any(isinstance(x, (dict, list)) for x in v):
        yield f"{prefix}.#" if prefix else "#", len(v)
        for i, x in enumerate(v):
            yield from _flatten(x, f"{prefix}[{i}]")
    else:
        yield prefix or ".", v


def _show(v: Any) -> str:
    return "<absent>" if v is _ABSENT else json.dumps(v, sort_keys=True)


_ABSENT = object()


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Every difference between transcripts a and b, one line each:
    ``scenario/step: path: A=... B=...`` (A, B: the targets' names)."""
    lines: list[str] = []
    na, nb = a.get("target", "A"), b.get("target", "B")
    sa, sb = a.get("scenarios", {}), b.get("scenarios", {})
    for scen in list(sa) + [s for s in sb if s not in sa]:
        if scen not in sa or scen not in sb:
            lines.append(f"{scen}: only in {na if scen in sa else nb}")
            continue
        steps_a, steps_b = dict(map(tuple, sa[scen])), dict(map(tuple, sb[scen]))
        order = list(steps_a) + [s for s in steps_b if s not in steps_a]
        for step in order:
            where = f"{scen}/{step}"
            if step not in steps_a or step not in steps_b:
                lines.append(f"{where}: only in {na if step in steps_a else nb}")
                continue
            va, vb = steps_a[step], steps_b[step]
            if any(isinstance(v, dict) and "unreachable" in v for v in (va, vb)):
                continue
            fa, fb = dict(_flatten(va)), dict(_flatten(vb))
            for path in list(fa) + [p for p in fb if p not in fa]:
                x, y = fa.get(path, _ABSENT), fb.get(path, _ABSENT)
                if x != y:
                    lines.append(f"{where}: {path}: {na}={_show(x)} {nb}={_show(y)}")
    return lines


def unreachable(t: dict[str, Any]) -> list[str]:
    """The steps a transcript could not carry out, with why."""
    return [f"{scen}/{step}: {o['unreachable']}" for scen, steps in t.get("scenarios",
                                                                           {}).items()
            for step, o in steps if isinstance(o, dict) and "unreachable" in o]


@dataclass(frozen=True)
class Accepted:
    """Differences (``scenario/step: path`` glob) that stay, and why."""

    where: str
    why: str


#: The differences from a real kube-apiserver that stay (doc/guide/emulator.rst
#: lists them, with these reasons).
ACCEPTED: tuple[Accepted, ...] = (
    Accepted("*: *managedFields", "no server-side apply, so no managedFields: flux-dws never"
                                  " reads them"),
    Accepted("patches/apply: *", "no server-side apply: apply patches get 415 (flux-dws"
                                 " sends merge and JSON patches only)"),
    Accepted("cluster_scoped/*: body.spec.taints*", "core kinds are stored as given: no"
                                                    " TaintNodesByCondition admission (its"
                                                    " not-ready taint)"),
    Accepted("cluster_scoped/*: body.status.*", "core kinds are stored as given: no"
                                                " defaulting of a Node's status"),
    Accepted("pagination/page-3-after-create: *", "no multi-version store: a continued list"
                                                  " shows the objects as they are now, not"
                                                  " the first page's snapshot"),
    Accepted("pagination/continue-expired: *", "kube-apiserver 1.34 serves continued lists"
                                               " from its watch cache's snapshots, which"
                                               " etcd compaction does not expire; the"
                                               " emulator's compaction expires continue"
                                               " tokens (flux-dws re-lists on that 410)"),
)


def accepted(line: str, table: tuple[Accepted, ...] = ACCEPTED) -> Accepted | None:
    """The entry of table that covers a difference line, or None."""
    where = line.split(": ", 2)
    key = ": ".join(where[:2])
    for entry in table:
        if fnmatch.fnmatchcase(key, entry.where):
            return entry
    return None


def emulator_target(emu: Any, name: str = "emulator") -> Target:
    """A Target for a started flux_dws.emulator.Emulator (no RBAC, so no
    restricted user; compaction through its test hook)."""
    def compact() -> None:
        Client(str(emu.kubeconfig)).call("POST", "/_emulator/compact")
    return Target(name, str(emu.kubeconfig), None, compact)


def etcd_compact(etcd_url: str) -> None:
    """Compact etcd to its current revision (its JSON gateway): what makes
    a real API server's older continue tokens expire."""
    import urllib.request

    def post(path: str, body: dict[str, Any]) -> Any:
        req = urllib.request.Request(etcd_url + path, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())
    rev = int(post("/v3/kv/range", {"key": "Lw==", "limit": 1})["header"]["revision"])
    post("/v3/kv/compaction", {"revision": rev, "physical": True})


def install_schemas(cp: Any, timeout: float = 60.0) -> None:
    """Give a ControlPlane's CRDs (``install_crds``: any field kept) the
    schemas the emulator enforces (``crd_object(r, schemas=True)``), so
    that defaulting, pruning and validation are compared too; returns once
    each is in force (a dry-run create with an unknown field is refused)."""
    from flux_dws.apiserver import api_resources as res
    from flux_dws.apiserver import schema
    kinds = [r for r in res.custom_resources() if (r.group, r.kind) in schema.SCHEMAS]
    for r in kinds:
        crd = res.crd_object(r, schemas=True)
        crd.pop("status", None)
        cp.apply(crd)
    admin = Client(str(cp.admin_kubeconfig))
    deadline = time.monotonic() + timeout
    for r in kinds:
        k = KindInfo(r.kind, r.group, r.storage_version, r.plural, r.namespaced)
        probe = {"apiVersion": r.api_version(), "kind": r.kind,
                 "metadata": {"name": "referee-probe"}, "refereeProbe": 1}
        while admin.call("POST", path_of(k, "default"), probe, query={
                "dryRun": "All", "fieldValidation": "Strict"}).code == 201:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the schema of {r.plural}.{r.group} not in force after"
                                   f" {timeout} s")
            time.sleep(0.05)


def controlplane_target(cp: Any, name: str = "kube-apiserver") -> Target:
    """A Target for a started flux_dws.realstack.controlplane.ControlPlane with
    the emulator's CRDs and the WLM roles installed: its admin, its ``flux``
    user as the restricted one, etcd compaction as the hook."""
    return Target(name, str(cp.admin_kubeconfig), str(cp.flux_kubeconfig),
                  lambda: etcd_compact(cp.etcd_url))
