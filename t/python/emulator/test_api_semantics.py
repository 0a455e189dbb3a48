"""More kube-apiserver behaviour, checked with the official client (and so
runnable against a real cluster with FLUX_DWS_TEST_KUBECONFIG):
fieldValidation, garbage collection with several owners, deletion
propagation policies, CRD defaults, and no-op updates.
"""

from __future__ import annotations

import json

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import G, V, storage, workflow

NNF, NV = "nnf.cray.hpe.com", "v1alpha11"


def msg(exc):
    return json.loads(exc.body)["message"]


def wf_with_unknown():
    body = workflow()
    body["spec"]["bogus"] = 1
    body["status"] = {"state": "Proposal", "junk": True}
    return body


def test_field_validation_strict_refuses_unknown_fields(api, ns):
    # apiserver: fieldValidation=Strict -> 400 "strict decoding error: unknown field"
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_custom_object(G, V, ns, "workflows", wf_with_unknown(),
                                            field_validation="Strict")
    assert exc.value.status == 400
    text = msg(exc.value)
    assert 'strict decoding error: unknown field "spec.bogus"' in text
    assert 'unknown field "status.junk"' in text
    with pytest.raises(ApiException):
        api.get_namespaced_custom_object(G, V, ns, "workflows", "w1")  # nothing was created


def test_field_validation_warn_prunes_and_warns(api, ns):
    # the default (Warn since 1.27): pruned, one Warning header per field
    data, code, headers = api.create_namespaced_custom_object_with_http_info(
        G, V, ns, "workflows", wf_with_unknown())
    assert code == 201
    assert "bogus" not in data["spec"] and "junk" not in data["status"]
    warning = headers.get("Warning", "")
    assert 'unknown field \\"spec.bogus\\"' in warning
    # Ignore: pruned silently
    body = wf_with_unknown()
    body["metadata"]["name"] = "w2"
    _, code, headers = api.create_namespaced_custom_object_with_http_info(
        G, V, ns, "workflows", body, field_validation="Ignore")
    assert code == 201 and not headers.get("Warning")


def test_field_validation_on_patch(api, ns):
    api.create_namespaced_custom_object(G, V, ns, "workflows", workflow())
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                           {"spec": {"nope": 1}}, field_validation="Strict")
    assert exc.value.status == 400 and 'unknown field "spec.nope"' in msg(exc.value)
    o = api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1", {"spec": {"nope": 1}})
    assert "nope" not in o["spec"]


def test_crd_defaults(api, ns):
    # profiles are pinned: nnf-sos' webhooks keep unpinned ones in nnf-system
    o = api.create_namespaced_custom_object(G, V, ns, "workflows", workflow())
    assert o["spec"]["hurry"] is False and o["spec"]["forceReady"] is False
    s = api.create_namespaced_custom_object(G, V, ns, "storages", storage())
    assert (s["spec"]["state"], s["spec"]["mode"]) == ("Enabled", "Live")
    cp = api.create_namespaced_custom_object(NNF, NV, ns, "nnfcontainerprofiles", {
        "apiVersion": f"{NNF}/{NV}", "kind": "NnfContainerProfile", "metadata": {"name": "c"},
        "data": {"pinned": True, "storages": [{"name": "DW_JOB_foo"}],
                 "spec": {"containers": [{"name": "x"}]}}})
    d = cp["data"]
    assert (d["createContainer"], d["preRunTimeoutSeconds"], d["postRunTimeoutSeconds"],
            d["retryLimit"], d["storages"][0]["optional"]) == (True, 300, 300, 6, False)
    assert d["spec"] == {"containers": [{"name": "x"}]}  # preserved as given
    sp = api.create_namespaced_custom_object(NNF, NV, ns, "nnfstorageprofiles", {
        "apiVersion": f"{NNF}/{NV}", "kind": "NnfStorageProfile", "metadata": {"name": "p"},
        "data": {"pinned": True, "xfsStorage": {},
                 "lustreStorage": {"mgtOptions": {}, "mdtOptions": {}, "ostOptions": {}}}})
    d = sp["data"]
    assert d["xfsStorage"]["capacityScalingFactor"] == "1.0"
    assert d["lustreStorage"]["mdtOptions"]["capacity"] == "5GiB"
    assert d["lustreStorage"]["ostOptions"]["capacityScalingFactor"] == "1.0"


@pytest.mark.parametrize(("group", "version", "plural", "body", "text"), [
    (G, V, "persistentstorageinstances",
     {"spec": {"name": "p", "fsType": "zfs", "dwDirective": "#DW", "userID": 1,
               "state": "Active"}}, 'spec.fsType: Unsupported value: "zfs"'),
    (G, V, "persistentstorageinstances", {"spec": {"name": "p"}},
     "spec.dwDirective: Required value"),
    (G, V, "clientmounts", {"spec": {"node": "n", "desiredState": "up", "mounts": []}},
     'spec.desiredState: Unsupported value: "up"'),
    ("lus.cray.hpe.com", "v1beta1", "lustrefilesystems",
     {"spec": {"name": "toolongname", "mgsNids": "a@tcp", "mountRoot": "/l"}},
     "spec.name: Too long"),
    (NNF, NV, "nnfstorageprofiles",
     {"data": {"lustreStorage": {"ostOptions": {"scale": 11}}}},
     "data.lustreStorage.ostOptions.scale: Invalid value: 11"),
    (G, V, "servers", {"spec": {"allocationSets": [{"label": "x", "allocationSize": "1",
                                                    "storage": []}]}},
     "spec.allocationSets[0].allocationSize: Invalid value"),
])
def test_schema_errors_are_422(api, ns, group, version, plural, body, text):
    kind = {"persistentstorageinstances": "PersistentStorageInstance",
            "clientmounts": "ClientMount", "lustrefilesystems": "LustreFileSystem",
            "nnfstorageprofiles": "NnfStorageProfile", "servers": "Servers"}[plural]
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_custom_object(group, version, ns, plural, {
            "apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": "x"},
            **body})
    assert exc.value.status == 422 and text in msg(exc.value), msg(exc.value)
    assert json.loads(exc.value.body)["reason"] == "Invalid"


def owner_ref(o):
    return {"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
            "uid": o["metadata"]["uid"]}


def test_gc_keeps_a_dependent_with_another_living_owner(api, ns):
    # garbage collector: a dependent goes only when all its owners are gone;
    # a dangling reference to a deleted owner is removed
    a = api.create_namespaced_custom_object(G, V, ns, "workflows", workflow("a"))
    b = api.create_namespaced_custom_object(G, V, ns, "workflows", workflow("b"))
    child = {**storage("c"), "metadata": {"name": "c",
                                          "ownerReferences": [owner_ref(a), owner_ref(b)]}}
    api.create_namespaced_custom_object(G, V, ns, "storages", child)
    api.delete_namespaced_custom_object(G, V, ns, "workflows", "a")
    c = api.get_namespaced_custom_object(G, V, ns, "storages", "c")
    assert [o["name"] for o in c["metadata"]["ownerReferences"]] == ["b"]
    api.delete_namespaced_custom_object(G, V, ns, "workflows", "b")
    with pytest.raises(ApiException) as exc:
        api.get_namespaced_custom_object(G, V, ns, "storages", "c")
    assert exc.value.status == 404


def test_orphan_propagation_keeps_dependents(api, ns):
    a = api.create_namespaced_custom_object(G, V, ns, "workflows", workflow("a"))
    api.create_namespaced_custom_object(G, V, ns, "storages", {
        **storage("c"), "metadata": {"name": "c", "ownerReferences": [owner_ref(a)]}})
    api.delete_namespaced_custom_object(G, V, ns, "workflows", "a",
                                        propagation_policy="Orphan")
    c = api.get_namespaced_custom_object(G, V, ns, "storages", "c")
    assert not c["metadata"].get("ownerReferences")


def test_foreground_propagation_deletes_dependents(api, ns):
    a = api.create_namespaced_custom_object(G, V, ns, "workflows", workflow("a"))
    api.create_namespaced_custom_object(G, V, ns, "storages", {
        **storage("c"), "metadata": {"name": "c", "ownerReferences": [owner_ref(a)]}})
    api.delete_namespaced_custom_object(G, V, ns, "workflows", "a",
                                        propagation_policy="Foreground")
    for plural, name in (("workflows", "a"), ("storages", "c")):
        with pytest.raises(ApiException):
            api.get_namespaced_custom_object(G, V, ns, plural, name)


def test_new_finalizer_refused_while_deleting(api, ns):
    api.create_namespaced_custom_object(G, V, ns, "workflows", {
        **workflow(), "metadata": {"name": "w1", "finalizers": ["x/y"]}})
    api.delete_namespaced_custom_object(G, V, ns, "workflows", "w1")
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                           {"metadata": {"finalizers": ["x/y", "z/w"]}})
    assert exc.value.status == 422 and "no new finalizers" in msg(exc.value)
    api.patch_namespaced_custom_object(G, V, ns, "workflows", "w1",
                                       {"metadata": {"finalizers": None}})


def test_unknown_metadata_fields_are_dropped(api, ns):
    body = workflow()
    body["metadata"]["color"] = "blue"
    o = api.create_namespaced_custom_object(G, V, ns, "workflows", body)
    assert "color" not in o["metadata"]
