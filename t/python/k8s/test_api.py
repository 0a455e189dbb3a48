"""The API calls against the emulator, through the writer pool: every op
(get, list with pages and label selectors, merge and JSON patch, a Pod's
log), the Status message of a final error, DWS' admission text, and the
text of each object as the API server sent it (DecodedObject)."""

from __future__ import annotations

import json

from flux_dws.apiserver import api_resources as res
from flux_dws.emulator import Emulator
from flux_dws.jsondata import DecodedObject

from .conftest import STORAGE, G, V, k8s, storage, store_create


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


def test_results_and_watch_events_carry_the_server_text(emulator, layer, events):
    layer.start_watches(["Storage"])
    i, _ = events.sync("Storage")
    layer.submit(k8s("create", body=storage("t1"), token="c"))
    layer.submit(k8s("get", name="t1", token="g"))
    for token in ("c", "g"):
        obj = events.result(token)["object"]
        assert isinstance(obj, DecodedObject) and json.loads(obj.text) == obj
    _, ev = events.wait_for(lambda e: e["type"] == "watch", i)
    assert isinstance(ev["object"], DecodedObject)
    assert json.loads(ev["object"].text) == ev["object"]
