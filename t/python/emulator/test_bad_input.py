"""Bad requests get a Kubernetes Status with the right code and message, and
the server keeps serving (spec: issue 'Bad input')."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import G, V, workflow

from flux_dws.emulator import schema


def raw(emu, method, path, body=None, ctype="application/json"):
    ctx = ssl.create_default_context(cadata=emu.certs.ca_pem.decode())
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(emu.url + path, data=data, method=method, headers={
        "Authorization": f"Bearer {emu.token}", "Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, context=ctx) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


WF = f"/apis/{G}/{V}/namespaces/default/workflows"


@pytest.mark.parametrize(("method", "path", "body", "ctype", "code", "reason", "text"), [
    ("POST", WF, b"{not json", "application/json", 400, "BadRequest", "json parse error"),
    ("POST", WF, b"[1,2]", "application/json", 400, "BadRequest", "not a JSON object"),
    ("POST", WF, {**workflow(), "kind": "Storage"}, "application/json", 400, "BadRequest",
     "the kind in the data (Storage) does not match the expected kind (Workflow)"),
    ("POST", WF, {**workflow(), "apiVersion": "v1"}, "application/json", 400, "BadRequest",
     "the API version in the data (v1) does not match"),
    ("POST", WF, workflow(userID="me"), "application/json", 422, "Invalid",
     "spec.userID: Invalid value"),
    ("POST", WF, workflow(desiredState="Bogus"), "application/json", 422, "Invalid",
     'spec.desiredState: Unsupported value: "Bogus"'),
    ("POST", WF, {"metadata": {"name": "x"}, "spec": {}}, "application/json", 422, "Invalid",
     "spec.desiredState: Required value"),
    ("POST", WF, {"metadata": {}}, "application/json", 422, "Invalid",
     "metadata.name: Required value"),
    ("POST", f"/apis/{G}/{V}/namespaces/nosuch/workflows", workflow(), "application/json",
     404, "NotFound", 'namespaces "nosuch" not found'),
    ("POST", WF, {**workflow(), "metadata": {"name": "w", "namespace": "other"}},
     "application/json", 400, "BadRequest", "does not match the namespace"),
    ("GET", f"/apis/{G}/{V}/namespaces/default/nosuchthings", None, "", 404, "NotFound",
     "the server could not find the requested resource"),
    ("GET", "/apis/no.such.group/v1/things", None, "", 404, "NotFound",
     "could not find the requested resource"),
    ("GET", f"{WF}?labelSelector=a%20in%20(", None, "", 400, "BadRequest",
     "unable to parse requirement"),
    ("GET", f"{WF}?fieldSelector=spec.x%3D1", None, "", 400, "BadRequest",
     "not a known field selector"),
    ("GET", f"{WF}?limit=x", None, "", 400, "BadRequest", "invalid limit"),
    ("GET", f"{WF}?limit=1&continue=garbage", None, "", 400, "BadRequest",
     "continue key is not valid"),
    ("PUT", WF, workflow(), "application/json", 405, "MethodNotAllowed", "does not allow"),
])
def test_bad_requests(emu, method, path, body, ctype, code, reason, text):
    status, out = raw(emu, method, path, body, ctype)
    assert (status, out["kind"], out["reason"], out["code"]) == (code, "Status", reason, code)
    assert text in out["message"]
    assert raw(emu, "GET", WF)[0] == 200  # still serving


def test_bad_patches(emu, api):
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow())
    path = f"{WF}/w1"
    assert raw(emu, "PATCH", path, {"spec": 1}, "application/strategic-merge-patch+json")[0] \
        == 415
    assert raw(emu, "PATCH", path, b"a: b", "application/apply-patch+yaml")[0] == 415
    assert raw(emu, "PATCH", path, {"op": "add"}, "application/json-patch+json")[0] == 400
    st, out = raw(emu, "PATCH", path, [{"op": "move", "from": "/nope", "path": "/x"}],
                  "application/json-patch+json")
    assert st == 422 and "missing path" in out["message"]
    st, out = raw(emu, "PATCH", path, [{"op": "jump", "path": "/x"}],
                  "application/json-patch+json")
    assert st == 422 and "unknown json patch operation 'jump'" in out["message"]
    st, out = raw(emu, "PATCH", path, {"metadata": {"resourceVersion": "1"}},
                  "application/merge-patch+json")
    assert st == 409
    st, out = raw(emu, "PATCH", path, {"spec": {"desiredState": "Nope"}},
                  "application/merge-patch+json")
    assert st == 422 and "Unsupported value" in out["message"]


def test_oversized_body(emu):
    big = {**workflow(), "spec": {**workflow()["spec"], "dwDirectives": ["x" * (4 << 20)]}}
    status, out = raw(emu, "POST", WF, big)
    assert status == 413 and out["reason"] == "RequestEntityTooLarge"


def test_unknown_fields_are_pruned(api):
    body = workflow()
    body["spec"]["bogus"] = 1
    body["status"] = {"state": "Proposal", "junk": True}
    o = api.create_namespaced_custom_object(G, V, "default", "workflows", body)
    assert "bogus" not in o["spec"] and "junk" not in o["status"]


def test_schema_rules_directly():
    with pytest.raises(schema.SchemaError) as exc:
        schema.apply(G, "Servers", {"spec": {"allocationSets": [
            {"label": "xfs", "allocationSize": 0, "storage": [{"name": "r"}]}]}})
    fields = [f for f, _ in exc.value.causes]
    assert fields == ["spec.allocationSets[0].allocationSize",
                      "spec.allocationSets[0].storage[0].allocationCount"]
    out = schema.apply(G, "SystemConfiguration", {"spec": {}})
    assert out["spec"]["portsCooldownInSeconds"] == 60
    assert schema.apply("x", "Unknown", {"a": 1}) == {"a": 1}


def test_stale_watch_resource_version_is_410(emu, api):
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow())
    emu.store.compact()
    with pytest.raises(ApiException):
        api.list_namespaced_custom_object(G, V, "default", "workflows", watch=False,
                                          limit=1, _continue="eyJydiI6MSwibnMiOiIiLCJuYW1lIjoiIn0=")
