"""Kubernetes API behaviour the flux-dws service and other DWS clients rely
on, checked with the official client (k8s-api-server-notes.md, the 19
checks, plus status-subresource and schema rules from the real CRDs).
Each test names the kube-apiserver behaviour it depends on.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
import urllib3
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import G, V, storage, workflow


def msg(exc):
    return json.loads(exc.body)["message"]


NS = {"ns": "default"}


@pytest.fixture(autouse=True)
def _namespace(ns):
    """The namespace of the API server under test (see flux_dws.emulator.testing)."""
    NS["ns"] = ns


def create(api, body, plural="workflows", ns=None):
    return api.create_namespaced_custom_object(G, V, ns or NS["ns"], plural, body)


def test_discovery(k8s):
    groups = {g.name: g for g in client.ApisApi(k8s.api_client()).get_api_versions().groups}
    assert groups["dataworkflowservices.github.io"].preferred_version.version == "v1alpha7"
    assert groups["nnf.cray.hpe.com"].preferred_version.version == "v1alpha11"
    assert "lus.cray.hpe.com" in groups
    res = client.CustomObjectsApi(k8s.api_client()).get_api_resources(G, V)
    names = {r.name for r in res.resources}
    assert {"workflows", "storages", "storages/status", "servers/status"} <= names
    assert "workflows/status" not in names  # the Workflow CRD has no status subresource
    assert client.VersionApi(k8s.api_client()).get_code().major == "1"


def test_create_sets_metadata_and_defaults(api, ns):
    o = create(api, workflow())
    md = o["metadata"]
    assert md["uid"] and md["generation"] == 1 and md["namespace"] == ns
    assert md["creationTimestamp"].endswith("Z") and md["resourceVersion"].isdigit()
    assert o["spec"]["forceReady"] is False  # CRD default


def test_duplicate_and_missing(api, ns):
    create(api, workflow())
    with pytest.raises(ApiException) as exc:
        create(api, workflow())
    assert exc.value.status == 409 and '"w1" already exists' in msg(exc.value)
    with pytest.raises(ApiException) as exc:
        api.get_namespaced_custom_object(G, V, ns, "workflows", "nope")
    assert exc.value.status == 404
    assert 'workflows.dataworkflowservices.github.io "nope" not found' in msg(exc.value)


def test_list_resource_version_and_selectors(api, ns):
    create(api, storage("r1", rack="a"), "storages")
    create(api, storage("r2", rack="b"), "storages")
    create(api, storage("r3"), "storages")
    full = api.list_namespaced_custom_object(G, V, ns, "storages")
    assert full["kind"] == "StorageList" and full["metadata"]["resourceVersion"].isdigit()
    sel = lambda s: [o["metadata"]["name"] for o in api.list_namespaced_custom_object(  # noqa: E731
        G, V, ns, "storages", label_selector=s)["items"]]
    assert sel("rack=a") == ["r1"]
    assert sel("rack!=a") == ["r2", "r3"]
    assert sel("rack in (a,b)") == ["r1", "r2"]
    assert sel("rack notin (a)") == ["r2", "r3"]
    assert sel("rack") == ["r1", "r2"] and sel("!rack") == ["r3"]
    by_name = api.list_cluster_custom_object(G, V, "storages", field_selector="metadata.name=r2")
    assert [o["metadata"]["name"] for o in by_name["items"]] == ["r2"]


def test_limit_and_continue(api, ns):
    for i in range(5):
        create(api, storage(f"r{i}"), "storages")
    page = api.list_namespaced_custom_object(G, V, ns, "storages", limit=2)
    names = [o["metadata"]["name"] for o in page["items"]]
    while page["metadata"].get("continue"):
        page = api.list_namespaced_custom_object(G, V, ns, "storages", limit=2,
                                                 _continue=page["metadata"]["continue"])
        names += [o["metadata"]["name"] for o in page["items"]]
    assert names == [f"r{i}" for i in range(5)]


def test_merge_patch_semantics(api, ns):
    create(api, workflow(dwDirectives=["#DW a", "#DW b"]))
    o = api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1", {
        "metadata": {"labels": {"x": "1"}}, "spec": {"dwDirectives": ["#DW c"]}})
    assert o["spec"]["dwDirectives"] == ["#DW c"]  # lists are replaced
    assert o["metadata"]["generation"] == 2
    o2 = api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                            {"metadata": {"labels": {"x": None}}})
    assert "x" not in (o2["metadata"].get("labels") or {})  # null deletes
    assert o2["metadata"]["generation"] == 2  # metadata-only change
    assert int(o2["metadata"]["resourceVersion"]) > int(o["metadata"]["resourceVersion"])


def test_noop_update_keeps_resource_version(api, ns):
    o = create(api, workflow())
    o2 = api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                            {"spec": {"wlmID": "flux"}})
    assert o2["metadata"]["resourceVersion"] == o["metadata"]["resourceVersion"]


def test_workflow_status_is_part_of_the_object(api, ns):
    """No status subresource: status is written through the main resource."""
    create(api, workflow())
    o = api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                           {"status": {"state": "Proposal", "ready": False}})
    assert o["status"]["state"] == "Proposal"
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object_status(G, V, ns, "workflows", "w1",
                                                  {"status": {"ready": True}})
    assert exc.value.status == 404


def test_status_subresource_rules(api, ns):
    create(api, {**storage(), "status": {"capacity": 5}}, "storages")
    o = api.get_namespaced_custom_object(G, V, ns, "storages", "r1")
    assert "status" not in o  # dropped on create
    assert o["spec"] == {"state": "Enabled", "mode": "Live"}  # CRD defaults
    o = api.patch_namespaced_custom_object(G, V, ns, "storages", "r1",
                                           {"status": {"capacity": 9}})
    assert "status" not in o  # main endpoint ignores status
    o = api.patch_namespaced_custom_object_status(G, V, ns, "storages", "r1",
                                                  {"status": {"capacity": 9},
                                                   "spec": {"state": "Disabled"}})
    assert o["status"]["capacity"] == 9 and o["spec"]["state"] == "Enabled"


def test_json_patch_and_failed_test(api, ns):
    """A failing test operation is 422 (kube-apiserver applyJSPatch); a list
    sent as a merge patch is a 400."""
    jp = {"_content_type": "application/json-patch+json"}
    create(api, workflow(dwDirectives=["#DW a"]))
    o = api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1", [
        {"op": "add", "path": "/spec/dwDirectives/-", "value": "#DW b"},
        {"op": "test", "path": "/spec/wlmID", "value": "flux"}], **jp)
    assert o["spec"]["dwDirectives"] == ["#DW a", "#DW b"]
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1", [
            {"op": "test", "path": "/spec/wlmID", "value": "slurm"}], **jp)
    assert exc.value.status == 422
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1", [
            {"op": "remove", "path": "/spec/dwDirectives/0"}])
    assert exc.value.status == 400
    o = api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1", [
        {"op": "remove", "path": "/spec/dwDirectives/0"}], **jp)
    assert o["spec"]["dwDirectives"] == ["#DW b"]


def test_replace_conflict(api, ns):
    o = create(api, workflow())
    o["spec"]["wlmID"] = "other"
    api.replace_namespaced_custom_object(G, V, ns, "workflows", "w1", o)
    with pytest.raises(ApiException) as exc:
        api.replace_namespaced_custom_object(G, V, ns, "workflows", "w1", o)
    assert exc.value.status == 409 and "the object has been modified" in msg(exc.value)
    o.pop("metadata")
    with pytest.raises(ApiException) as exc:
        api.replace_namespaced_custom_object(G, V, ns, "workflows", "w1", o)
    assert exc.value.status == 422 and "must be specified for an update" in msg(exc.value)


def test_watch_from_list_resource_version(api, ns):
    create(api, workflow())
    rv = api.list_namespaced_custom_object(G, V, ns, "workflows")["metadata"][
        "resourceVersion"]

    def writer():
        time.sleep(0.2)
        api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                           {"spec": {"forceReady": True}})
        api.delete_namespaced_custom_object(G, V, ns, "workflows", "w1")

    threading.Thread(target=writer).start()
    events = [(e["type"], int(e["object"]["metadata"]["resourceVersion"]))
              for e in watch.Watch().stream(api.list_namespaced_custom_object, G, V, ns,
                                            "workflows", resource_version=rv, timeout_seconds=2)]
    assert [t for t, _ in events] == ["MODIFIED", "DELETED"]
    assert events[0][1] < events[1][1]


def test_watch_without_resource_version_starts_with_added(api, ns):
    create(api, workflow("a"))
    create(api, workflow("b"))
    events = list(watch.Watch().stream(api.list_namespaced_custom_object, G, V, ns,
                                       "workflows", timeout_seconds=1))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"), ("ADDED", "b")]


def test_finalizers_and_deletion(api, ns):
    create(api, {**workflow(), "metadata": {"name": "w1", "finalizers": ["x/y"]}})
    api.delete_namespaced_custom_object(G, V, ns, "workflows", "w1")
    o = api.get_namespaced_custom_object(G, V, ns, "workflows", "w1")
    assert o["metadata"]["deletionTimestamp"] and o["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                           {"metadata": {"finalizers": ["x/y", "new/one"]}})
    assert exc.value.status == 422 and "no new finalizers" in msg(exc.value)
    api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                       {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as exc:
        api.get_namespaced_custom_object(G, V, ns, "workflows", "w1")
    assert exc.value.status == 404


def test_delete_returns_status_and_cascades_to_owned(api, ns):
    parent = create(api, workflow())
    child = {"apiVersion": f"{G}/{V}", "kind": "Computes", "metadata": {
        "name": "w1", "ownerReferences": [{"apiVersion": f"{G}/{V}", "kind": "Workflow",
                                           "name": "w1", "uid": parent["metadata"]["uid"]}]},
             "data": []}
    create(api, child, "computes")
    st = api.delete_namespaced_custom_object(G, V, ns, "workflows", "w1")
    assert st["status"] == "Success" and st["details"]["uid"] == parent["metadata"]["uid"]
    assert api.list_namespaced_custom_object(G, V, ns, "computes")["items"] == []


def test_delete_preconditions(api, ns):
    o = create(api, workflow())
    with pytest.raises(ApiException) as exc:
        api.delete_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                            body=client.V1DeleteOptions(
                                                preconditions=client.V1Preconditions(uid="x")))
    assert exc.value.status == 409
    api.delete_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                        body=client.V1DeleteOptions(preconditions=client.
                                                                    V1Preconditions(
                                                                        uid=o["metadata"]["uid"])))


def test_delete_collection(api, ns):
    for n in ("a", "b"):
        create(api, storage(n, rack="x"), "storages")
    create(api, storage("c"), "storages")
    api.delete_collection_namespaced_custom_object(G, V, ns, "storages",
                                                   label_selector="rack=x")
    left = api.list_namespaced_custom_object(G, V, ns, "storages")["items"]
    assert [o["metadata"]["name"] for o in left] == ["c"]


def test_watch_410_and_relist(emu, api, ns):
    create(api, workflow())
    rv = api.list_namespaced_custom_object(G, V, ns, "workflows")["metadata"][
        "resourceVersion"]
    api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                       {"spec": {"forceReady": True}})
    emu.store.compact()
    with pytest.raises(ApiException) as exc:
        list(watch.Watch().stream(api.list_namespaced_custom_object, G, V, ns,
                                  "workflows", resource_version=rv, timeout_seconds=1))
    assert exc.value.status == 410
    fresh = api.list_namespaced_custom_object(G, V, ns, "workflows")
    assert fresh["items"][0]["spec"]["forceReady"] is True
    events = list(watch.Watch().stream(api.list_namespaced_custom_object, G, V, ns,
                                       "workflows", timeout_seconds=1,
                                       resource_version=fresh["metadata"]["resourceVersion"]))
    assert events == []


def test_bookmarks(k8s, api, ns):
    """The watch cache sends a BOOKMARK 2 s before the deadline (or every
    minute; the emulator under test: every 0.3 s) only when it has moved
    past what the watcher has gone through, filtered-out events included
    (cache_watcher.go process: nothing at or below the watcher's
    resourceVersion is sent): none for a watch that is up to date, even
    after writes its selector filtered out.  The cache moves past it with
    etcd's progress notifications, carrying writes to other kinds; the
    emulator moves past it with those writes."""
    create(api, workflow())
    rv = api.list_namespaced_custom_object(G, V, ns, "workflows")["metadata"][
        "resourceVersion"]

    def watched(**kw):
        w = watch.Watch()
        types = [e["type"] for e in w.stream(api.list_namespaced_custom_object, G, V, ns,
                                             "workflows", resource_version=rv,
                                             timeout_seconds=3, allow_watch_bookmarks=True,
                                             **kw)]
        return types, w.resource_version

    assert watched() == ([], rv)
    api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1", {"spec": {"jobID": "f2"}})
    assert watched(label_selector="nothing=here")[0] == []
    if k8s.emulator is None:
        return
    rv = api.get_namespaced_custom_object(G, V, ns, "workflows", "w1")["metadata"][
        "resourceVersion"]
    other = create(api, storage("s1"), "storages")["metadata"]["resourceVersion"]
    types, seen = watched()
    assert types and set(types) == {"BOOKMARK"} and seen == other


def test_watch_timeout(api, ns):
    t0 = time.monotonic()
    list(watch.Watch().stream(api.list_namespaced_custom_object, G, V, ns, "workflows",
                              timeout_seconds=1))
    assert 0.9 < time.monotonic() - t0  # closed by the server, not by the client


def test_core_namespaces_secrets_pods(emu, ns):
    core = emu.core_v1_api()
    names = {n.metadata.name for n in core.list_namespace().items}
    assert {ns, "dws-system", "nnf-system"} <= names
    core.create_namespaced_secret(ns, client.V1Secret(
        metadata=client.V1ObjectMeta(name="s"), data={"token": "dG9r"}))
    assert core.read_namespaced_secret("s", ns).data == {"token": "dG9r"}
    assert core.list_namespaced_pod(ns, label_selector="a=b").items == []
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="compute-01")))
    assert core.read_namespace("compute-01").metadata.name == "compute-01"


def test_crds_are_listed(k8s):
    ext = client.ApiextensionsV1Api(k8s.api_client())
    crds = {c.metadata.name: c for c in ext.list_custom_resource_definition().items}
    assert "nnfstorageprofiles.nnf.cray.hpe.com" in crds
    wf = crds["workflows.dataworkflowservices.github.io"]
    assert wf.spec.scope == "Namespaced" and wf.spec.names.plural == "workflows"
    v7 = next(v for v in wf.spec.versions if v.name == "v1alpha7")
    assert v7.served and v7.storage and not (v7.subresources and v7.subresources.status)
    assert {c.type: c.status for c in wf.status.conditions}["Established"] == "True"
    one = ext.read_custom_resource_definition("storages.dataworkflowservices.github.io")
    assert one.metadata.uid and one.spec.versions[0].subresources.status == {}


def test_older_versions_are_served(emu, ns):
    api = emu.custom_objects_api()
    o = api.create_namespaced_custom_object(G, "v1alpha6", ns, "workflows",
                                            {**workflow(), "apiVersion": f"{G}/v1alpha6"})
    assert o["metadata"]["name"] == "w1"
    assert api.list_cluster_custom_object("nnf.cray.hpe.com", "v1alpha10",
                                          "nnfdatamovements")["items"] == []


def test_authentication_is_required(emu):
    http = urllib3.PoolManager(cert_reqs="CERT_NONE")
    urllib3.disable_warnings()
    r = http.request("GET", f"{emu.url}/apis/{G}/{V}/workflows")
    assert r.status == 401
    assert http.request("GET", f"{emu.url}/readyz").status == 200
