"""The store's in-process API, as the emulated controllers use it:
subscriptions per kind, queues, admission hooks (mutate, refuse with 403),
the same validation and resourceVersion rules as over HTTP, and objects
that stay as they were committed."""

from __future__ import annotations

import json

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import G, storage, workflow

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL
from flux_dws.apiserver.store import ApiError, Store

WF = BY_GROUP_PLURAL[(G, "workflows")]
ST = BY_GROUP_PLURAL[(G, "storages")]


def test_subscribe_per_kind_and_queue():
    st = Store()
    seen = []
    st.subscribe(lambda ev: seen.append((ev.type, ev.key[1], ev.key[3])), [(G, "workflows")])
    q = st.subscribe_queue([(G, "storages")])
    st.create(WF, "default", workflow())
    st.create(ST, "default", storage())
    st.patch(WF, "default", "w1", "merge", {"spec": {"forceReady": True}})
    st.delete(WF, "default", "w1")
    assert seen == [("ADDED", "workflows", "w1"), ("MODIFIED", "workflows", "w1"),
                    ("DELETED", "workflows", "w1")]
    ev = q.get_nowait()
    assert (ev.type, ev.key, ev.obj["metadata"]["name"]) == (
        "ADDED", (G, "storages", "default", "r1"), "r1")
    assert q.empty()


def test_admission_mutates_and_refuses():
    st = Store()
    calls = []

    def admit(op, old, new):
        calls.append((op, old is None))
        if new["spec"].get("wlmID") == "forbidden":
            raise ApiError(403, "Forbidden", "admission webhook said no")
        new.setdefault("metadata", {}).setdefault("labels", {})["admitted"] = op
        return new

    st.admission[(G, "workflows")] = admit
    o = st.create(WF, "default", workflow())
    assert o["metadata"]["labels"] == {"admitted": "CREATE"}
    o = st.patch(WF, "default", "w1", "merge", {"spec": {"forceReady": True}})
    assert o["metadata"]["labels"] == {"admitted": "UPDATE"}
    with pytest.raises(ApiError) as exc:
        st.patch(WF, "default", "w1", "merge", {"spec": {"wlmID": "forbidden"}})
    assert (exc.value.code, exc.value.reason) == (403, "Forbidden")
    assert st.get(WF, "default", "w1")["spec"]["wlmID"] == "flux"  # nothing changed
    assert calls == [("CREATE", True), ("UPDATE", False), ("UPDATE", False)]


def test_admission_refusal_reaches_http_clients(emu, api):
    def admit(op, old, new):
        raise ApiError(403, "Forbidden", 'admission webhook "vworkflow.kb.io" denied the'
                                         " request: nope")

    emu.store.admission[(G, "workflows")] = admit
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_custom_object(G, "v1alpha7", "default", "workflows", workflow())
    body = json.loads(exc.value.body)
    assert exc.value.status == 403 and body["reason"] == "Forbidden"
    assert body["message"].endswith("denied the request: nope")


def test_internal_error_is_a_500_and_the_server_keeps_serving(emu, api):
    def broken(op, old, new):
        raise RuntimeError("a bug in a controller")

    emu.store.admission[(G, "workflows")] = broken
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_custom_object(G, "v1alpha7", "default", "workflows", workflow())
    body = json.loads(exc.value.body)
    assert exc.value.status == 500 and body["reason"] == "InternalError"
    assert "a bug in a controller" in body["message"]
    del emu.store.admission[(G, "workflows")]
    assert api.create_namespaced_custom_object(G, "v1alpha7", "default", "workflows",
                                               workflow())["metadata"]["name"] == "w1"


def test_same_rules_in_process():
    st = Store()
    o = st.create(WF, "default", workflow())
    with pytest.raises(ApiError) as exc:
        st.replace(WF, "default", "w1", {**o, "metadata": {**o["metadata"],
                                                           "resourceVersion": "1"}})
    assert exc.value.code == 409
    with pytest.raises(ApiError) as exc:
        st.patch(WF, "default", "w1", "merge", {"spec": {"desiredState": "Bogus"}})
    assert exc.value.code == 422
    with pytest.raises(ApiError) as exc:
        st.patch(WF, "default", "w1", "json", [{"op": "test", "path": "/spec/wlmID",
                                                "value": "slurm"}])
    assert exc.value.code == 422
    rv = st.get(WF, "default", "w1")["metadata"]["resourceVersion"]
    same = st.patch(WF, "default", "w1", "merge", {"spec": {"wlmID": "flux"}})
    assert same["metadata"]["resourceVersion"] == rv  # a no-op keeps its resourceVersion


def test_committed_objects_never_change():
    """An event's object stays as committed after later writes (controllers
    keep them in queues)."""
    st = Store()
    q = st.subscribe_queue([(G, "workflows")])
    st.create(WF, "default", workflow())
    st.patch(WF, "default", "w1", "merge", {"spec": {"forceReady": True}})
    st.patch(WF, "default", "w1", "merge", {"spec": {"forceReady": False}})
    events = [q.get_nowait() for _ in range(3)]
    for ev in events:
        assert ev.obj == json.loads(ev.raw)
    assert [ev.obj["metadata"]["generation"] for ev in events] == [1, 2, 3]
    assert [ev.obj["spec"]["forceReady"] for ev in events] == [False, True, False]


def test_returned_objects_are_private_copies():
    st = Store()
    o = st.create(WF, "default", workflow())
    o["spec"]["wlmID"] = "changed"
    got = st.get(WF, "default", "w1")
    got["metadata"]["labels"] = {"x": "y"}
    assert st.get(WF, "default", "w1")["spec"]["wlmID"] == "flux"
    assert "labels" not in st.get(WF, "default", "w1")["metadata"]


def test_view_is_the_stored_object_itself():
    """view() hands out what is stored (no copy, no decode); a later write
    puts a new object and leaves the viewed one as it was."""
    st = Store()
    st.create(ST, "default", storage("r1", zone="a"))
    st.create(ST, "default", storage("r2", zone="b"))
    (r1,) = st.view(ST, "default", "zone=a")
    assert r1 == st.get(ST, "default", "r1")
    assert r1 is st.view(ST, "default", "zone=a")[0]
    st.patch(ST, "default", "r1", "merge", {"metadata": {"labels": {"zone": "c"}}})
    assert r1["metadata"]["labels"] == {"zone": "a"}
    assert [o["metadata"]["name"] for o in st.view(ST, "default")] == ["r1", "r2"]


@pytest.mark.parametrize("sel, names", [
    ("zone=a", ["r1", "r3"]),
    ("zone==a,rack=1", ["r1"]),
    ("zone=a,rack!=1", ["r3"]),
    ("zone in (a,b)", ["r1", "r2", "r3"]),
    ("zone=a,!rack", []),
    ("zone=z", []),
    ("rack", ["r1", "r2", "r3"]),
    ("", ["r1", "r2", "r3", "r4"]),
])
def test_label_index_gives_what_the_selector_says(sel, names):
    """Lists narrowed by the label index match a full scan, after labels
    change and objects go."""
    st = Store()
    for name, labels in [("r1", {"zone": "a", "rack": "1"}), ("r2", {"zone": "b", "rack": "1"}),
                         ("r3", {"zone": "b", "rack": "2"}), ("r4", {"zone": "a"}),
                         ("r5", {"zone": "a", "rack": "3"})]:
        st.create(ST, "default", storage(name, **labels))
    st.patch(ST, "default", "r3", "merge", {"metadata": {"labels": {"zone": "a"}}})
    st.patch(ST, "default", "r4", "merge", {"metadata": {"labels": {"zone": None}}})
    st.delete(ST, "default", "r5")
    got = [o["metadata"]["name"] for o in st.view(ST, "default", sel)]
    assert got == [json.loads(b)["metadata"]["name"] for b in st.list_raw(ST, None, sel)[0]]
    assert got == names
    assert (G, "storages", "zone", "a") in st._labelled
    assert all(k[3] != "r5" for keys in st._labelled.values() for k in keys)


def test_kind_version_moves_with_its_kind_only():
    st = Store()
    assert st.kind_version(ST) == 0
    st.create(ST, "default", storage("r1"))
    v = st.kind_version(ST)
    assert v == int(st.get(ST, "default", "r1")["metadata"]["resourceVersion"])
    st.create(WF, "default", workflow())
    assert st.kind_version(ST) == v < st.kind_version(WF)
    st.delete(ST, "default", "r1")
    assert st.kind_version(ST) > st.kind_version(WF)


def test_label_index_empties_with_its_objects():
    st = Store()
    for i in range(3):
        st.create(WF, "default", {**workflow(f"w{i}"),
                                  "metadata": {"name": f"w{i}", "labels": {"job": str(i)}}})
    for i in range(3):
        st.delete(WF, "default", f"w{i}")
    assert not [ix for ix in st._labelled if ix[:2] == (G, "workflows")]


def test_crds_are_objects_of_the_store():
    st = Store()
    crd = BY_GROUP_PLURAL[("apiextensions.k8s.io", "customresourcedefinitions")]
    names = {o["metadata"]["name"] for o in st.list_objects(crd, None)}
    assert "workflows.dataworkflowservices.github.io" in names
    assert "secrets" not in {n.split(".")[0] for n in names}
