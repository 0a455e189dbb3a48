"""The dws service's Kubernetes layer against the emulator: watches (sync,
events, bookmarks, 410, dropped streams), the writer pool (order, retries,
final errors), connect errors and stop."""

from __future__ import annotations

import logging
import socket
import threading
import time

import pytest
from kubernetes.client.exceptions import ApiException

from flux_dws.emulator import Emulator
from flux_dws.emulator import api_resources as res
from flux_dws.k8s import crd
from flux_dws.k8s.errors import KubeError, retry_after, status_message
from flux_dws.k8s.layer import KubeLayer
from flux_dws.k8s.settings import KubeSettings
from flux_dws.k8s.watching import WatchSpec

from .conftest import G, LogSignal, Recorder, V, k8s, storage

STORAGE = res.BY_KIND[(G, "Storage")]
WORKFLOW = res.BY_KIND[(G, "Workflow")]
FAST = {"retry_initial": 0.01, "retry_max": 0.05}


def store_create(emu, name, **labels):
    return emu.store.create(STORAGE, "default", storage(name, **labels))


def store_state(emu):
    """name -> resourceVersion of the emulator's Storages."""
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
            for o in emu.store.list_objects(STORAGE, "default")}


def watch_connected(emu, n=1):
    assert emu.api_faults.wait(lambda f: f.open_watches() >= n), "the watch did not connect"


class Mirror:
    """What the engine would know of one kind: the last sync plus the events since."""

    def __init__(self, events: Recorder, kind: str) -> None:
        self.events, self.kind = events, kind

    def state(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for e in list(self.events.events):
            if e.get("kind") != self.kind:
                continue
            if e["type"] == "sync":
                out = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                       for o in e["objects"]}
            elif e["type"] == "watch":
                md = e["object"]["metadata"]
                if e["event"] == "DELETED":
                    out.pop(md["name"], None)
                else:
                    out[md["name"]] = md["resourceVersion"]
        return out


# --- watches --------------------------------------------------------------------


def test_sync_then_watch_events(emulator, layer, events):
    store_create(emulator, "s1")
    store_create(emulator, "s2")
    layer.start_watches(["Storage"])
    i, sync = events.sync("Storage")
    assert sync == {"type": "sync", "kind": "Storage", "objects": sync["objects"]}
    assert sorted(o["metadata"]["name"] for o in sync["objects"]) == ["s1", "s2"]
    watch_connected(emulator)

    layer.submit(k8s("create", body=storage("s3"), token="c"))
    layer.submit(k8s("patch", name="s3", body={"metadata": {"labels": {"x": "1"}}},
                     token="p"))
    layer.submit(k8s("delete", name="s3", token="d"))
    assert events.result("c")["ok"] and events.result("p")["ok"]
    assert events.result("d") == {"type": "k8s-result", "token": "d", "ok": True,
                                  "code": 200, "message": "", "object": None}
    events.wait_for(lambda e: e["type"] == "watch" and e["event"] == "DELETED")
    seen = [(e["event"], e["object"]["metadata"]["name"]) for e in events.of("watch", i)]
    assert seen == [("ADDED", "s3"), ("MODIFIED", "s3"), ("DELETED", "s3")]
    for e in events.of("watch", i):
        assert set(e) == {"type", "kind", "event", "object"} and e["kind"] == "Storage"
        assert isinstance(e["object"], dict)  # raw JSON, not a client model
    modified = events.of("watch", i)[1]["object"]
    assert modified["metadata"]["labels"] == {"x": "1"}
    assert len(events.of("sync")) == 1


def test_watch_namespace_and_label_selector(emulator, layer, events):
    store_create(emulator, "a", role="x")
    store_create(emulator, "b", role="y")
    emulator.store.create(res.BY_KIND[("", "Namespace")], "", {"metadata": {"name": "other"}})
    emulator.store.create(STORAGE, "other", storage("c", role="x"))
    layer.start_watches([WatchSpec("Storage", namespace="default", label_selector="role=x")])
    _, sync = events.sync("Storage")
    assert [o["metadata"]["name"] for o in sync["objects"]] == ["a"]
    watch_connected(emulator)
    emulator.store.create(STORAGE, "other", storage("d", role="x"))
    store_create(emulator, "e", role="y")
    store_create(emulator, "f", role="x")
    _, ev = events.wait_for(lambda e: e["type"] == "watch")
    assert ev["object"]["metadata"]["name"] == "f"
    assert len(events.of("watch")) == 1


def test_bookmarks_move_the_resource_version_silently(emulator, make_layer, events):
    log = logging.getLogger("flux_dws.test.kube.bookmarks")
    log.setLevel(logging.DEBUG)
    signal = LogSignal("bookmark")
    log.addHandler(signal)
    try:
        layer = make_layer(log=log)
        layer.start_watches(["Storage"])
        events.sync("Storage")
        # other kinds move the global resourceVersion; Storage bookmarks carry it
        emulator.store.create(WORKFLOW, "default", {
            "metadata": {"name": "w"}, "spec": {"desiredState": "Proposal", "dwDirectives": [],
                                                 "wlmID": "flux", "jobID": "1", "userID": 1,
                                                 "groupID": 1}})
        assert signal.wait(signal.count + 2), "no bookmarks"
        assert layer.watches["Storage"].resource_version == str(emulator.store.rv)
        assert [e["type"] for e in events.events] == ["sync"]
    finally:
        log.removeHandler(signal)


def test_410_relists_without_replay(emulator, layer, events):
    store_create(emulator, "s1")
    store_create(emulator, "s2")
    layer.start_watches(["Storage"])
    i1, _ = events.sync("Storage")
    watch_connected(emulator)
    store_create(emulator, "s3")
    events.wait_for(lambda e: e["type"] == "watch", i1)

    emulator.expire_watches(1)
    emulator.drop_watches()
    i2, sync2 = events.sync("Storage", i1 + 1)
    assert emulator.api_faults.expire == 0  # the reconnect got its 410
    assert {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
            for o in sync2["objects"]} == store_state(emulator)
    assert sync2["objects"] == emulator.store.list_objects(STORAGE, "default")
    watch_connected(emulator)
    store_create(emulator, "s4")
    j, ev = events.wait_for(lambda e: e["type"] == "watch", i2)
    assert ev["object"]["metadata"]["name"] == "s4"
    assert j == i2 + 1  # nothing replayed between the new sync and s4
    assert layer.watches["Storage"].syncs == 2


def test_410_after_compaction(emulator, layer, events):
    layer.start_watches(["Storage"])
    i1, _ = events.sync("Storage")
    watch_connected(emulator)
    emulator.api_fault(503, method="GET", path=r"storages\?.*watch=", count=1000)
    emulator.drop_watches()
    assert emulator.api_faults.wait(lambda f: f.failed >= 1)  # it tried, and failed
    store_create(emulator, "late")
    emulator.store.compact()  # the watch's resourceVersion is now too old
    emulator.clear_api_faults()
    _, sync2 = events.sync("Storage", i1 + 1)
    assert [o["metadata"]["name"] for o in sync2["objects"]] == ["late"]
    assert events.of("watch") == []


def test_dropped_watch_reconnects_without_losing_events(emulator, layer, events):
    for n in range(5):
        store_create(emulator, f"old{n}")
    layer.start_watches(["Storage"])
    events.sync("Storage")
    watch_connected(emulator)
    # hold the reconnect off while the objects change
    emulator.api_fault(503, method="GET", path=r"storages\?.*watch=", count=1000)
    assert emulator.drop_watches() == 1
    assert emulator.api_faults.wait(lambda f: f.failed >= 1)
    api = emulator.custom_objects_api()
    for n in range(20):
        api.create_namespaced_custom_object(G, V, "default", "storages", storage(f"new{n}"))
    for n in range(0, 20, 3):
        api.patch_namespaced_custom_object(G, V, "default", "storages", f"new{n}",
                                           {"metadata": {"labels": {"p": "1"}}})
    for n in range(3):
        api.delete_namespaced_custom_object(G, V, "default", "storages", f"old{n}")
    last = api.patch_namespaced_custom_object(G, V, "default", "storages", "old4",
                                              {"metadata": {"labels": {"last": "1"}}})
    emulator.clear_api_faults()
    rv = last["metadata"]["resourceVersion"]
    events.wait_for(lambda e: e["type"] == "watch"
                    and e["object"]["metadata"]["resourceVersion"] == rv)
    assert Mirror(events, "Storage").state() == store_state(emulator)
    assert len(events.of("sync")) == 1  # reconnected from its resourceVersion, no re-list
    assert layer.watches["Storage"].reconnects >= 1


def test_watch_errors_back_off_and_recover(emulator, make_layer, events):
    layer = make_layer({"watch_backoff_initial": 0.01})
    emulator.api_fault(500, method="GET", path="storages", count=3)  # the list fails 3 times
    layer.start_watches(["Storage"])
    _, sync = events.sync("Storage")
    assert sync["objects"] == []
    assert emulator.api_faults.failed == 3
    watch_connected(emulator)
    store_create(emulator, "s1")
    events.wait_for(lambda e: e["type"] == "watch")


def test_several_kinds(emulator, layer, events):
    layer.start_watches(["Workflow", "Storage", "Secret", "NnfDataMovement", "Computes"])
    for kind in ("Workflow", "Storage", "Secret", "NnfDataMovement", "Computes"):
        events.sync(kind)
    watch_connected(emulator, 5)
    layer.submit(k8s("create", "Secret", body={"metadata": {"name": "sec"},
                                               "data": {"k": "dg=="}}, token="s"))
    assert events.result("s")["object"]["data"] == {"k": "dg=="}
    _, ev = events.wait_for(lambda e: e["type"] == "watch")
    assert ev["kind"] == "Secret" and ev["object"]["metadata"]["name"] == "sec"
    with pytest.raises(ValueError, match="watched twice"):
        layer.start_watches(["Storage"])
    with pytest.raises(ValueError, match="unknown kind"):
        layer.start_watches(["Pods"])


# --- writes: order and results ------------------------------------------------


def test_writes_to_one_object_land_in_order(emulator, layer, events):
    names = [f"o{n}" for n in range(4)]
    for name in names:
        store_create(emulator, name)
    for i in range(200):
        for name in names:
            layer.submit(k8s("patch", name=name, token=f"{name}/{i}",
                             body={"metadata": {"annotations": {"n": str(i)}}}))
    for name in names:
        events.result(f"{name}/199")
    results = events.of("k8s-result")
    assert len(results) == 800 and all(r["ok"] for r in results)
    for name in names:
        mine = [r for r in results if r["token"].startswith(f"{name}/")]
        assert [r["token"] for r in mine] == [f"{name}/{i}" for i in range(200)]
        assert [r["object"]["metadata"]["annotations"]["n"] for r in mine] == \
            [str(i) for i in range(200)]
        obj = emulator.store.get(STORAGE, "default", name)
        assert obj["metadata"]["annotations"] == {"n": "199"}
    assert layer.pending() == 0


def test_create_then_patch_share_a_worker(emulator, make_layer, events):
    layer = make_layer({"writers": 8})
    for n in range(50):
        layer.submit(k8s("create", body=storage(f"s{n}")))          # name only in the body
        layer.submit(k8s("patch", name=f"s{n}", token=f"p{n}",
                         body={"metadata": {"labels": {"ok": "1"}}}))
    for n in range(50):
        assert events.result(f"p{n}")["ok"], events.result(f"p{n}")


def test_ops_get_list_json_patch_secret(emulator, make_layer, events):
    layer = make_layer({"list_limit": 2})
    for n in range(5):
        store_create(emulator, f"s{n}", group="a" if n % 2 else "b")
    layer.submit(k8s("get", name="s1", token="g"))
    layer.submit(k8s("list", token="l", label_selector="group=b"))
    layer.submit(k8s("list", namespace=None, token="all"))
    layer.submit(k8s("json-patch", name="s2", token="j", body=[
        {"op": "add", "path": "/metadata/labels/extra", "value": "yes"}]))
    emulator.store.create(res.BY_KIND[("", "Secret")], "default",
                          {"metadata": {"name": "tok"}, "data": {"token": "c2VjcmV0"}})
    layer.submit(k8s("get", "Secret", name="tok", token="sec"))
    g = events.result("g")
    assert g["ok"] and g["code"] == 200 and g["object"]["metadata"]["name"] == "s1"
    listed = events.result("l")["object"]
    assert sorted(o["metadata"]["name"] for o in listed["items"]) == ["s0", "s2", "s4"]
    assert list(listed) == ["items"]
    assert len(events.result("all")["object"]["items"]) == 5  # three pages of 2
    assert events.result("j")["object"]["metadata"]["labels"] == {"group": "b", "extra": "yes"}
    sec = events.result("sec")["object"]
    assert sec["data"] == {"token": "c2VjcmV0"} and isinstance(sec, dict)
    assert sec["metadata"]["creationTimestamp"].endswith("Z")  # as sent, not re-rendered


def test_ops_list_pods_and_read_a_pod_log(emulator, layer, events):
    """A container job's launcher log: the Pods listed by label, one log read."""
    pod = res.BY_KIND[("", "Pod")]
    emulator.store.create(pod, "default", {"metadata": {"name": "p", "labels": {"w": "x"}},
                                           "spec": {"containers": [{"name": "a"},
                                                                   {"name": "b"}]}})
    emulator.store.patch(pod, "default", "p", "merge", {"status": {"phase": "Running"}},
                         "status")
    emulator.store.append_pod_log("default", "p", "a", "one\ntwo\nthree \u00e9")
    layer.submit(k8s("list", "Pod", token="pods", label_selector="w=x"))
    layer.submit(k8s("log", "Pod", name="p", container="a", tail_lines=2, token="log"))
    layer.submit(k8s("log", "Pod", name="p", token="nocontainer"))
    layer.submit(k8s("log", "Pod", name="gone", container="a", token="gone"))
    layer.submit(k8s("log", "Storage", name="p", token="bad"))
    layer.submit(k8s("log", "Pod", name="p", tail_lines=-1, token="badtail"))
    assert [p["metadata"]["name"] for p in events.result("pods")["object"]["items"]] == ["p"]
    got = events.result("log")
    assert got["ok"] and got["code"] == 200 and got["object"] == {"log": "two\nthree \u00e9\n"}
    nc = events.result("nocontainer")
    assert not nc["ok"] and nc["code"] == 400
    assert nc["message"] == "a container name must be specified for pod p, choose one of: [a b]"
    assert events.result("gone")["code"] == 404
    assert events.result("bad")["message"] == \
        "invalid k8s action: log of a Storage: only Pods have logs"
    assert events.result("badtail")["message"].startswith("invalid k8s action: log needs")


def test_merge_patch_content_type(emulator, layer, events):
    """A JSON merge patch (RFC 7386): null deletes a key, lists are replaced."""
    body = storage("s", a="1", b="2")
    body["metadata"]["finalizers"] = ["f/1", "f/2"]
    emulator.store.create(STORAGE, "default", body)
    layer.submit(k8s("patch", name="s", token="m", body={
        "metadata": {"labels": {"a": None}, "finalizers": ["f/3"]}}))
    obj = events.result("m")["object"]
    assert obj["metadata"]["labels"] == {"b": "2"} and obj["metadata"]["finalizers"] == ["f/3"]
    emulator.store.create(res.BY_KIND[("", "Secret")], "default",
                          {"metadata": {"name": "sec", "labels": {"a": "1"}}})
    layer.submit(k8s("patch", "Secret", name="sec", token="sec", body={
        "metadata": {"labels": {"a": None, "c": "3"}}}))
    assert events.result("sec")["object"]["metadata"]["labels"] == {"c": "3"}


def test_delete_of_a_missing_object_is_ok_404(emulator, layer, events):
    layer.submit(k8s("delete", name="nothing", token="d"))
    r = events.result("d")
    assert r == {"type": "k8s-result", "token": "d", "ok": True, "code": 404,
                 "message": 'storages.dataworkflowservices.github.io "nothing" not found',
                 "object": None}


def test_final_errors_carry_the_status_message(emulator, layer, events):
    store_create(emulator, "s")
    layer.submit(k8s("get", name="missing", token="404"))
    layer.submit(k8s("create", body=storage("s"), token="409"))
    layer.submit(k8s("json-patch", name="s", token="422", body=[
        {"op": "test", "path": "/metadata/name", "value": "other"}]))
    r404, r409, r422 = events.result("404"), events.result("409"), events.result("422")
    assert (r404["ok"], r404["code"], r404["object"]) == (False, 404, None)
    assert r404["message"] == 'storages.dataworkflowservices.github.io "missing" not found'
    assert (r409["ok"], r409["code"]) == (False, 409)
    assert "already exists" in r409["message"]
    assert (r422["ok"], r422["code"]) == (False, 422)
    assert layer.pool.retries == 0


def test_dws_admission_text_reaches_the_result(events, make_layer):
    with Emulator(system="kind", latency="zero") as emu:
        layer = make_layer(emu=emu)
        layer.submit(k8s("create", "Workflow", token="w", body={
            "apiVersion": f"{G}/{V}", "kind": "Workflow", "metadata": {"name": "w1"},
            "spec": {"desiredState": "Proposal", "dwDirectives": ["#DW bogus type=xfs"],
                     "wlmID": "flux", "jobID": "1", "userID": 1000, "groupID": 1000}}))
        r = events.result("w")
        layer.stop()
    assert (r["ok"], r["code"], r["object"]) == (False, 403, None)
    assert r["message"] == ('admission webhook "vworkflow.kb.io" denied the request: '
                            "invalid directive '#DW bogus type=xfs'")


def test_invalid_actions(emulator, make_layer, events, monkeypatch):
    monkeypatch.setattr(crd, "probe_nnf_version", _no_nnf)
    layer = make_layer()
    assert "NnfDataMovement" not in layer.kinds and "Workflow" in layer.kinds
    layer.submit(k8s("frobnicate", token="op"))
    layer.submit(k8s("get", "NnfDataMovement", name="x", token="nnf"))
    layer.submit(k8s("get", "Bogus", name="x", token="kind"))
    layer.submit(k8s("patch", name="x", body=[], token="body"))
    layer.submit(k8s("get", token="noname"))
    layer.submit(k8s("get", name="x", namespace=None, token="nons"))
    for token, text in [("op", "unknown op"), ("nnf", "not served"), ("kind", "not served"),
                        ("body", "needs an object"), ("noname", "needs a name"),
                        ("nons", "needs a namespace")]:
        r = events.result(token)
        assert (r["ok"], r["code"], r["object"]) == (False, 0, None)
        assert r["message"].startswith("invalid k8s action: ") and text in r["message"], r
    layer.start_watches(["Storage", "NnfDataMovement"])  # skipped with a warning
    assert list(layer.watches) == ["Storage"]


def _no_nnf(api, preferred=None):
    raise crd.CRDVersionError("no served version of nnf.cray.hpe.com")


def test_failure_without_token_is_logged(emulator, layer, events, caplog):
    caplog.set_level(logging.WARNING, "flux_dws.test.kube")
    layer.submit(k8s("patch", name="missing", body={"metadata": {"labels": {"a": "b"}}}))
    layer.submit(k8s("get", name="missing", token="after"))  # same object: runs after
    events.result("after")
    assert any("patch Storage default/missing failed: 404" in r.getMessage()
               for r in caplog.records)
    assert events.of("k8s-result") == [events.result("after")]


# --- writes: retries ---------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_are_retried(emulator, make_layer, events, status):
    layer = make_layer(FAST)
    store_create(emulator, "s")
    emulator.api_fault(status, method="PATCH", path="/storages/s", count=3,
                       retry_after=0 if status == 429 else None)
    layer.submit(k8s("patch", name="s", body={"metadata": {"labels": {"a": "b"}}}, token="t"))
    r = events.result("t")
    assert (r["ok"], r["code"]) == (True, 200)
    assert emulator.api_faults.failed == 3 and layer.pool.retries == 3


def test_dropped_connections_are_retried(emulator, make_layer, events):
    layer = make_layer(FAST)
    emulator.api_fault(method="POST", path="/storages", count=2, drop=True)
    layer.submit(k8s("create", body=storage("s"), token="t"))
    r = events.result("t")
    assert (r["ok"], r["code"]) == (True, 201)
    assert emulator.api_faults.failed == 2


def test_retry_after_is_honoured(emulator, make_layer, events):
    layer = make_layer(FAST)
    emulator.api_fault(429, method="GET", path="/storages/s", retry_after=1)
    store_create(emulator, "s")
    start = time.monotonic()
    layer.submit(k8s("get", name="s", token="t"))
    assert events.result("t")["ok"]
    assert time.monotonic() - start >= 1.0  # FAST alone would have retried after 0.01 s


def test_retries_exhausted(emulator, make_layer, events):
    layer = make_layer({**FAST, "retry_attempts": 3})
    store_create(emulator, "s")
    emulator.api_fault(503, method="GET", path="/storages/s", count=100, message="busy")
    layer.submit(k8s("get", name="s", token="t"))
    r = events.result("t")
    assert r == {"type": "k8s-result", "token": "t", "ok": False, "code": 503,
                 "message": "busy", "object": None}
    assert emulator.api_faults.failed == 3
    emulator.clear_api_faults()
    emulator.api_fault(method="GET", path="/storages/s", count=100, drop=True)
    layer.submit(k8s("get", name="s", token="drop"))
    r = events.result("drop")
    assert (r["ok"], r["code"]) == (False, 0) and r["message"], r


def test_retry_deadline(emulator, make_layer, events):
    layer = make_layer({"retry_initial": 0.2, "retry_deadline": 0.5, "retry_attempts": 100})
    emulator.api_fault(500, method="GET", path="/storages/s", count=100)
    start = time.monotonic()
    layer.submit(k8s("get", name="s", token="t"))
    r = events.result("t")
    assert (r["ok"], r["code"]) == (False, 500)
    assert time.monotonic() - start < 2.0
    assert emulator.api_faults.failed == 2  # waits 0.2 then 0.4: past the deadline


def test_retry_after_parsing():
    e = ApiException(status=429)
    e.headers = {"Retry-After": "2"}
    assert retry_after(e) == 2.0
    e.headers = {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}
    assert retry_after(e) == 0.0
    e.headers = {"Retry-After": "soon"}
    assert retry_after(e) is None
    e.headers = None
    assert retry_after(e) is None
    e.body = '{"kind":"Status","message":"m"}'
    assert status_message(e) == "m"
    e.body, e.reason = "not json", "Too Many Requests"
    assert status_message(e) == "Too Many Requests"


# --- connect, settings, stop -----------------------------------------------------------


def test_connect_errors(tmp_path, monkeypatch):
    post = Recorder()
    with pytest.raises(KubeError, match=r"^cannot reach Kubernetes: invalid kubeconfig"):
        KubeLayer(str(tmp_path / "missing"), post).connect()
    bad = tmp_path / "bad"
    bad.write_text("clusters: [")
    with pytest.raises(KubeError, match=r"^cannot reach Kubernetes: invalid kubeconfig"):
        KubeLayer(bad, post).connect()
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    with pytest.raises(KubeError, match=r"invalid kubeconfig .*none"):
        KubeLayer(None, post).connect()
    with Emulator() as emu:
        kc = tmp_path / "kc"
        kc.write_text(emu.kubeconfig.read_text())
    with pytest.raises(KubeError, match=r"^cannot reach Kubernetes: https://127\.0\.0\.1"):
        KubeLayer(kc, post).connect()  # the server has gone
    with Emulator(token="right") as emu:
        text = emu.kubeconfig.read_text().replace("token: right", "token: wrong")
        (tmp_path / "kc2").write_text(text)
        with pytest.raises(KubeError, match="401"):
            KubeLayer(tmp_path / "kc2", post).connect()
    assert post.events == []


def test_connect_to_a_closed_port(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    kc = tmp_path / "kc"
    kc.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    with pytest.raises(KubeError, match=f"cannot reach Kubernetes: http://127.0.0.1:{port}"):
        KubeLayer(kc, Recorder()).connect()


def test_settings():
    s = KubeSettings.from_config({"writers": 2, "retry_deadline": 1.5, "other": "x",
                                  "dws_api_version": "v1alpha6"})
    assert (s.writers, s.retry_deadline, s.dws_api_version, s.retry_attempts) == \
        (2, 1.5, "v1alpha6", 8)
    for bad in ({"writers": 0}, {"writers": 1.5}, {"retry_max": "1"}, {"watch_timeout": True},
                {"dws_api_version": 7}):
        with pytest.raises(ValueError):
            KubeSettings.from_config(bad)
    assert KubeSettings.from_config(None) == KubeSettings()


def test_pinned_versions(emulator, make_layer):
    layer = make_layer({"dws_api_version": "v1alpha6", "nnf_api_version": "v1alpha10"})
    assert (layer.kinds.dws_version, layer.kinds.nnf_version) == ("v1alpha6", "v1alpha10")
    assert layer.kinds["Workflow"].api_version == f"{G}/v1alpha6"
    assert layer.kinds["Secret"].api_version == "v1"


def test_stop_is_prompt(emulator, layer, events):
    kinds = ["Workflow", "Computes", "Servers", "DirectiveBreakdown", "ClientMount", "Storage",
             "SystemStatus", "SystemConfiguration", "NnfDataMovement", "Secret"]
    layer.start_watches(kinds)
    for kind in kinds:
        events.sync(kind)
    watch_connected(emulator, len(kinds))
    start = time.monotonic()
    layer.stop()
    assert time.monotonic() - start < 1.0
    threads = [w._thread for w in layer.watches.values()]
    threads += [w.thread for w in layer.pool._workers]
    assert not any(t.is_alive() for t in threads)
    assert emulator.api_faults.wait(lambda f: f.open_watches() == 0)
    n = len(events)
    layer.submit(k8s("get", name="x", token="late"))  # dropped with a warning
    assert len(events) == n and layer.pending() == 0


def test_stop_during_a_retry_wait(emulator, make_layer, events):
    layer = make_layer({"retry_initial": 30.0, "retry_max": 30.0})
    emulator.api_fault(503, method="GET", path="/storages/s", count=10)
    layer.submit(k8s("get", name="s", token="t"))
    assert emulator.api_faults.wait(lambda f: f.failed == 1)
    start = time.monotonic()
    layer.stop()
    assert time.monotonic() - start < 1.0
    assert events.of("k8s-result") == []  # not posted once stop began


def test_stop_drains_when_asked(emulator, make_layer, events):
    layer = make_layer()
    gate = threading.Event()
    emulator.store.admission[(G, "storages")] = lambda op, old, new: (gate.wait(10), new)[1]
    for n in range(20):
        layer.submit(k8s("create", body=storage(f"s{n}"), token=f"t{n}"))
    assert layer.pending() > 0
    gate.set()
    layer.stop(drain=True, timeout=10)
    assert sorted(r["token"] for r in events.of("k8s-result")) == sorted(
        f"t{n}" for n in range(20))
    assert layer.pending() == 0


def test_oldest_pending_and_sent(emulator, make_layer, events):
    """The load figures of ``flux dws status``: the age of the oldest write
    not carried out (the one being carried out counts), and ``sent`` called
    as a write goes out, before its answer."""
    layer = make_layer({"writers": 1})
    gate = threading.Event()
    entered = threading.Event()

    def hold(op, old, new):
        entered.set()
        gate.wait(10)
        return new

    emulator.store.admission[(G, "storages")] = hold
    assert layer.oldest_pending() is None
    sent: list[str] = []
    layer.submit(k8s("create", body=storage("held"), token="t1"), lambda: sent.append("t1"))
    layer.submit(k8s("create", body=storage("queued"), token="t2"), lambda: sent.append("t2"))
    assert entered.wait(10)
    assert sent == ["t1"]  # the first is out, the second still queued
    first = layer.oldest_pending()
    assert first is not None and first >= 0.0 and layer.pending() == 2
    assert events.of("k8s-result") == []
    gate.set()
    assert events.result("t1")["ok"] and events.result("t2")["ok"]
    flushed = threading.Event()
    layer.writes_barrier(flushed.set)
    assert flushed.wait(10)
    assert sent == ["t1", "t2"]
    assert layer.pending() == 0 and layer.oldest_pending() is None
    layer.stop()


def test_stop_drops_queued_actions(emulator, make_layer, events):
    layer = make_layer({"writers": 1})
    gate = threading.Event()
    entered = threading.Event()

    def hold(op, old, new):
        entered.set()
        gate.wait(10)
        return new

    emulator.store.admission[(G, "storages")] = hold
    for n in range(20):
        layer.submit(k8s("create", body=storage(f"s{n}"), token=f"t{n}"))
    assert entered.wait(10)
    joining = threading.Event()
    real_join = layer.pool.join

    def join(timeout=None):
        joining.set()  # stop() has signalled everything and now waits
        return real_join(timeout)

    layer.pool.join = join
    stopper = threading.Thread(target=layer.stop, kwargs={"timeout": 10})
    stopper.start()
    assert joining.wait(10)
    gate.set()
    stopper.join(10)
    assert not stopper.is_alive()
    assert events.of("k8s-result") == [] and layer.pending() == 0
    assert len(emulator.store.list_objects(STORAGE, "default")) == 1  # only the one in flight


# --- barriers (dws.watch_test) ---------------------------------------------------


def test_watch_barrier_waits_for_what_the_server_had(emulator, layer, events):
    store_create(emulator, "old")
    store_create(emulator, "doomed")
    layer.start_watches(["Storage", "Workflow"])
    events.sync("Storage")
    events.sync("Workflow")
    for n in range(30):
        store_create(emulator, f"s{n}")
    emulator.store.patch(STORAGE, "default", "old", "merge",
                         {"metadata": {"labels": {"x": "1"}}})
    emulator.store.delete(STORAGE, "default", "doomed")
    seen: list[list[dict]] = []
    done = threading.Event()

    def cb(error):
        assert error is None
        with events.cond:
            seen.append(list(events.events))
        done.set()

    layer.watch_barrier(cb)
    assert done.wait(10)
    got = seen[0]
    added = {e["object"]["metadata"]["name"] for e in got
             if e["type"] == "watch" and e["event"] == "ADDED"}
    assert added >= {f"s{n}" for n in range(30)}
    assert any(e["type"] == "watch" and e["event"] == "MODIFIED"
               and e["object"]["metadata"]["name"] == "old" for e in got)
    assert any(e["type"] == "watch" and e["event"] == "DELETED"
               and e["object"]["metadata"]["name"] == "doomed" for e in got)


def test_watch_barrier_caught_up_at_once_and_a_deletion_only(emulator, layer, events):
    store_create(emulator, "a")
    layer.start_watches(["Storage"])
    events.sync("Storage")
    answers: list = []
    done = threading.Event()
    layer.watch_barrier(lambda e: (answers.append(e), done.set()))
    assert done.wait(10) and answers == [None]
    emulator.store.delete(STORAGE, "default", "a")
    done.clear()
    n = len(events)
    layer.watch_barrier(lambda e: (answers.append((e, len(events))), done.set()))
    assert done.wait(10)
    assert events.of("watch", n)[-1]["event"] == "DELETED"
    assert answers[1][0] is None and answers[1][1] > n


def test_watch_barrier_reports_a_failed_list(emulator, layer, events):
    layer.start_watches(["Storage"])
    events.sync("Storage")
    # a list (limit=, no watch=) fails: the barrier says so, the watch goes on
    emulator.api_fault(500, method="GET", path=r"storages\?limit=", count=1)
    answers: list = []
    done = threading.Event()
    layer.watch_barrier(lambda e: (answers.append(e), done.set()))
    assert done.wait(30)
    assert answers == ["cannot list Storage: 500 injected fault"] or \
        answers[0].startswith("cannot list Storage: 500"), answers


def test_writes_barrier_waits_for_every_result(emulator, layer, events):
    for n in range(8):
        store_create(emulator, f"w{n}")
    for n in range(8):
        for k in range(3):
            layer.submit(k8s("patch", name=f"w{n}", token=f"p{n}.{k}",
                             body={"metadata": {"labels": {"k": str(k)}}}))
    results: list[int] = []
    done = threading.Event()

    def cb():
        results.append(len(events.of("k8s-result")))
        done.set()

    layer.writes_barrier(cb)
    assert done.wait(10)
    assert results == [24]
    assert layer.pending() == 0


def test_connect_rides_out_busy_answers(emulator, tmp_path):
    """A 503 burst while the service (re)starts: connect retries the busy
    answers (with a warning each) and succeeds; a refusal (403) fails at once."""
    from flux_dws.emulator.apifaults import ApiFault

    log = logging.getLogger("test-connect")
    signal = LogSignal("retrying in")
    log.addHandler(signal)
    try:
        emulator.api_faults.add(ApiFault(status=503, count=4, message="backend restarting"))
        layer = KubeLayer(emulator.kubeconfig, Recorder(), log)
        assert layer.connect().dws_version
        assert signal.count == 4
        layer.stop()
        emulator.api_faults.add(ApiFault(status=403, count=1, message="go away"))
        with pytest.raises(KubeError, match="403 go away"):
            KubeLayer(emulator.kubeconfig, Recorder(), log).connect()
        assert signal.count == 4
        emulator.api_faults.add(ApiFault(status=503, count=100, message="down for good"))
        with pytest.raises(KubeError, match="503 down for good"):
            KubeLayer(emulator.kubeconfig, Recorder(), log,
                      {"retry_deadline": 0.5}).connect()
    finally:
        emulator.api_faults.clear()
        log.removeHandler(signal)
