"""remote.RemoteStore: the controllers' store as a client of an API server
(here the emulator's own, bare): the informer cache, watch events
delivered to subscribers, 410 re-lists, bookmarks, writes and their errors
worded as the in-process Store words them."""

from __future__ import annotations

import queue
from collections.abc import Iterator

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import G, V, workflow

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL, DWS
from flux_dws.apiserver.remote import RemoteStore, load_kubeconfig
from flux_dws.apiserver.store import ApiError, Event, Store
from flux_dws.emulator import Emulator

WF = BY_GROUP_PLURAL[(DWS, "workflows")]
STORAGE = BY_GROUP_PLURAL[(DWS, "storages")]
NS = BY_GROUP_PLURAL[("", "namespaces")]


@pytest.fixture
def served() -> Iterator[Emulator]:
    with Emulator(bookmark_interval=0.2) as emu:
        yield emu


@pytest.fixture
def remote(served: Emulator) -> Iterator[RemoteStore]:
    with RemoteStore(served.kubeconfig, kinds=[WF, STORAGE, NS]) as rs:
        yield rs


def events(rs: RemoteStore) -> queue.SimpleQueue[Event]:
    q: queue.SimpleQueue[Event] = queue.SimpleQueue()
    rs.subscribe(q.put, [(DWS, "workflows")])
    return q


def take(q: queue.SimpleQueue[Event], n: int) -> list[tuple[str, str]]:
    return [(ev.type, ev.key[3]) for ev in (q.get(timeout=10) for _ in range(n))]


def test_start_lists_what_exists(served):
    api = served.custom_objects_api()
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow("w0"))
    with RemoteStore(served.kubeconfig, kinds=[WF, NS]) as rs:
        assert rs.get(WF, "default", "w0")["spec"]["wlmID"] == "flux"
        assert ("", "namespaces", "", "dws-system") in rs.objects
        assert [o["metadata"]["name"] for o in rs.view(WF, None)] == ["w0"]
        assert rs.informer_lists(WF) == 1


def test_a_kind_not_served_is_an_error_at_start(tmp_path):
    with Emulator() as emu:
        bogus = BY_GROUP_PLURAL[("kubeflow.org", "mpijobs")]
        from dataclasses import replace
        with pytest.raises(ApiError, match="cannot list nothere"):
            RemoteStore(emu.kubeconfig, kinds=[replace(bogus, plural="nothere")]).start()


def test_other_clients_changes_reach_subscribers_in_order(served, remote):
    q = events(remote)
    api = served.custom_objects_api()
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow("w1"))
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "w1",
                                       {"spec": {"forceReady": True}})
    api.delete_namespaced_custom_object(G, V, "default", "workflows", "w1")
    assert take(q, 3) == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]
    assert remote.wait_for(lambda: ("dataworkflowservices.github.io", "workflows", "default",
                                    "w1") not in remote.objects, 10)


def test_own_writes_are_read_back_at_once(remote):
    made = remote.create(WF, "default", workflow("w2"))
    # no wait: the cache has the API server's answer before the watch brings it
    assert remote.get(WF, "default", "w2")["metadata"]["uid"] == made["metadata"]["uid"]
    patched = remote.patch(WF, "default", "w2", "merge", {"spec": {"forceReady": True}})
    assert remote.get(WF, "default", "w2")["metadata"]["resourceVersion"] == \
        patched["metadata"]["resourceVersion"]
    assert remote.kind_version(WF) >= int(patched["metadata"]["resourceVersion"])
    deleted_now, _ = remote.delete(WF, "default", "w2")
    assert deleted_now
    with pytest.raises(ApiError) as exc:
        remote.get(WF, "default", "w2")
    assert exc.value.code == 404


def test_subscribers_hear_own_writes_too(remote):
    q = events(remote)
    remote.create(WF, "default", workflow("w3"))
    remote.patch(WF, "default", "w3", "merge", {"spec": {"forceReady": True}})
    assert take(q, 2) == [("ADDED", "w3"), ("MODIFIED", "w3")]


def test_errors_are_worded_as_the_in_process_store_words_them(remote):
    local = Store()
    for st in (local, remote):
        st.create(WF, "default", workflow("w4"))
    answers = []
    for st in (local, remote):
        old = st.get(WF, "default", "w4")
        st.patch(WF, "default", "w4", "merge", {"spec": {"forceReady": True}})
        with pytest.raises(ApiError) as conflict:
            st.replace(WF, "default", "w4", old)
        with pytest.raises(ApiError) as exists:
            st.create(WF, "default", workflow("w4"))
        with pytest.raises(ApiError) as missing:
            st.patch(WF, "default", "nope", "merge", {"spec": {}})
        answers.append([(e.value.code, e.value.reason, e.value.message)
                        for e in (conflict, exists, missing)])
    assert answers[0] == answers[1]
    assert answers[1][0][0] == 409 and "has been modified" in answers[1][0][2]


def test_a_finalizer_holds_the_delete_and_its_removal_ends_it(remote):
    remote.create(WF, "default", {**workflow("w5"), "metadata": {
        "name": "w5", "finalizers": ["example.com/hold"]}})
    now, obj = remote.delete(WF, "default", "w5")
    assert not now and obj["metadata"]["deletionTimestamp"]
    assert remote.get(WF, "default", "w5")["metadata"]["deletionTimestamp"]
    remote.patch(WF, "default", "w5", "merge", {"metadata": {"finalizers": None}})
    # the server deleted it with its last finalizer: so does the cache, at once
    with pytest.raises(ApiError):
        remote.get(WF, "default", "w5")


def test_410_relists_and_delivers_only_what_changed(served):
    api = served.custom_objects_api()
    for name in ("a", "b", "c"):
        api.create_namespaced_custom_object(G, V, "default", "workflows", workflow(name))
    with RemoteStore(served.kubeconfig, kinds=[WF]) as remote:
        relist_delivers_only_what_changed(served, remote)


def relist_delivers_only_what_changed(served, remote):
    api = served.custom_objects_api()
    q = events(remote)
    # the stream is cut; the next watch from its resourceVersion gets 410
    served.expire_watches(1)
    served.drop_watches()
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "b",
                                       {"spec": {"forceReady": True}})
    api.delete_namespaced_custom_object(G, V, "default", "workflows", "c")
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow("d"))
    evs = [q.get(timeout=10) for _ in range(3)]
    got = sorted((e.type, e.key[3]) for e in evs)
    assert got == [("ADDED", "d"), ("DELETED", "c"), ("MODIFIED", "b")]
    assert remote.wait_for(lambda: remote.informer_lists(WF) >= 2, 10)
    assert q.empty()  # "a" did not change: not replayed
    assert sorted(o["metadata"]["name"] for o in remote.view(WF, None)) == ["a", "b", "d"]
    assert remote.get(WF, "default", "b")["spec"]["forceReady"] is True


def test_a_dropped_stream_resumes_without_a_relist(served, remote):
    q = events(remote)
    served.drop_watches()
    api = served.custom_objects_api()
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow("w6"))
    assert take(q, 1) == [("ADDED", "w6")]
    assert remote.informer_lists(WF) == 1


def test_bookmarks_move_an_idle_kinds_resource_version(served, remote):
    served.custom_objects_api().create_namespaced_custom_object(
        G, V, "default", "workflows", workflow("w7"))
    target = served.store.rv
    inf = remote._informers[(DWS, "storages")]
    # no Storage changed: only a BOOKMARK can bring its watch up to date
    assert remote.wait_for(lambda: int(inf.rv or 0) >= target, 10)


def test_load_creates_a_seed_with_its_status(served, remote):
    remote.load(STORAGE, {"apiVersion": f"{G}/{V}", "kind": "Storage",
                          "metadata": {"name": "r9", "namespace": "default"},
                          "spec": {"state": "Enabled"}, "status": {"status": "Ready"}})
    got = served.custom_objects_api().get_namespaced_custom_object(
        G, V, "default", "storages", "r9")
    assert got["status"]["status"] == "Ready"
    remote.load(STORAGE, {"metadata": {"name": "r9", "namespace": "default"},
                          "spec": {"state": "Disabled"}})  # kept as it is
    assert served.store.get(STORAGE, "default", "r9")["spec"]["state"] == "Enabled"


def test_kubeconfig_token_and_ca_are_used(served, tmp_path):
    cfg = load_kubeconfig(served.kubeconfig)
    assert cfg.server == served.url and cfg.token == served.token
    bad = tmp_path / "kc"
    bad.write_text(served.kubeconfig.read_text().replace(served.token, "wrong"))
    with pytest.raises(ApiError) as exc:
        RemoteStore(bad, kinds=[WF]).start(timeout=10)
    assert "Unauthorized" in exc.value.message or "401" in exc.value.message


def test_the_official_client_sees_the_same_objects(served, remote):
    remote.create(WF, "default", workflow("w8"))
    try:
        got = served.custom_objects_api().get_namespaced_custom_object(
            G, V, "default", "workflows", "w8")
    except ApiException as exc:  # pragma: no cover - a failure's message
        raise AssertionError(exc.body) from None
    assert got["metadata"]["uid"] == remote.get(WF, "default", "w8")["metadata"]["uid"]


def test_a_real_api_server_answers_as_the_in_process_store(tmp_path):
    """The same calls on kube-apiserver (skipped when it is not built):
    its answers are worded as the in-process Store's, and another client's
    changes reach the subscribers in order."""
    from t.python.emulator.test_attached import real_control_plane

    plane = real_control_plane(tmp_path / "cp")
    try:
        with RemoteStore(plane.admin_kubeconfig, kinds=[WF]) as rs:
            local = Store()
            answers = []
            for st in (local, rs):
                st.create(WF, "default", workflow("w4"))
                old = st.get(WF, "default", "w4")
                st.patch(WF, "default", "w4", "merge", {"spec": {"forceReady": True}})
                with pytest.raises(ApiError) as conflict:
                    st.replace(WF, "default", "w4", old)
                with pytest.raises(ApiError) as exists:
                    st.create(WF, "default", workflow("w4"))
                with pytest.raises(ApiError) as missing:
                    st.patch(WF, "default", "nope", "merge", {"spec": {}})
                answers.append([(e.value.code, e.value.reason, e.value.message)
                                for e in (conflict, exists, missing)])
            assert answers[0] == answers[1]
            q = events(rs)
            status, _ = plane.request("POST", "/apis/dataworkflowservices.github.io/v1alpha7/"
                                      "namespaces/default/workflows", workflow("w9"))
            assert status == 201
            plane.request("DELETE", "/apis/dataworkflowservices.github.io/v1alpha7/"
                          "namespaces/default/workflows/w9")
            # w4's own events may still be on their way from the watch
            # (CI: they came after the subscription): only w9's are counted
            seen: list[tuple[str, str]] = []
            while len(seen) < 2:
                seen += [ev for ev in take(q, 1) if ev[1] == "w9"]
            assert seen == [("ADDED", "w9"), ("DELETED", "w9")]
    finally:
        plane.stop()
