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

from flux_dws.apiserver import schema


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
    ("POST", WF, b"[1,2]", "application/json", 400, "BadRequest",
     "the object provided is unrecognized (must be of type Workflow): couldn't get"
     " version/kind; json parse error: json: cannot unmarshal array into Go value of type"),
    ("POST", WF, {**workflow(), "kind": "Storage"}, "application/json", 422, "Invalid",
     'kind: Invalid value: "Storage": must be Workflow'),
    ("POST", WF, {**workflow(), "apiVersion": "v1"}, "application/json", 422, "Invalid",
     f'apiVersion: Invalid value: "v1": must be {G}/{V}'),
    ("POST", WF, workflow(userID="me"), "application/json", 422, "Invalid",
     "spec.userID: Invalid value"),
    ("POST", WF, workflow(desiredState="Bogus"), "application/json", 422, "Invalid",
     'spec.desiredState: Unsupported value: "Bogus"'),
    ("POST", WF, {"metadata": {"name": "x"}, "spec": {}}, "application/json", 422, "Invalid",
     "spec.desiredState: Required value"),
    ("POST", WF, {"metadata": {}}, "application/json", 422, "Invalid",
     "metadata.name: Required value"),
    ("POST", WF, workflow("Bad_Name"), "application/json", 422, "Invalid",
     'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'),
    ("POST", WF, {**workflow(), "metadata": {"name": "w", "labels": {"a": "x y"}}},
     "application/json", 422, "Invalid", 'metadata.labels: Invalid value: "x y": a valid'
                                         " label must be an empty string"),
    ("POST", WF, {**workflow(), "metadata": {"name": "w", "labels": {"a": "v" * 64}}},
     "application/json", 422, "Invalid", "must be no more than 63 characters"),
    ("POST", WF, {**workflow(), "metadata": {"name": "w", "labels": {"ƒ/b": "1"}}},
     "application/json", 422, "Invalid", "prefix part a lowercase RFC 1123 subdomain"),
    ("POST", "/api/v1/namespaces", {"metadata": {"name": "compute.01"}}, "application/json",
     422, "Invalid", 'Namespace "compute.01" is invalid: metadata.name: Invalid value:'
                     ' "compute.01": must not contain dots'),
    ("POST", f"/apis/{G}/{V}/namespaces/nosuch/workflows", workflow(), "application/json",
     404, "NotFound", 'namespaces "nosuch" not found'),
    ("POST", WF, {**workflow(), "metadata": {"name": "w", "namespace": "other"}},
     "application/json", 400, "BadRequest", "does not match the namespace"),
    ("GET", f"{WF}?labelSelector=a%20in%20(", None, "", 400, "BadRequest",
     "unable to parse requirement"),
    ("GET", f"{WF}?fieldSelector=spec.x%3D1", None, "", 400, "BadRequest",
     "field label not supported: spec.x"),
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


@pytest.mark.parametrize("path", [f"/apis/{G}/{V}/namespaces/default/nosuchthings",
                                  "/apis/no.such.group/v1/things", "/apis/no.such.group"])
def test_paths_no_api_serves(emu, path):
    """kube-apiserver's mux: a plain-text 404, no Status (the referee's
    discovery scenario)."""
    ctx = ssl.create_default_context(cadata=emu.certs.ca_pem.decode())
    req = urllib.request.Request(emu.url + path, headers={
        "Authorization": f"Bearer {emu.token}"})
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req, context=ctx)
    assert exc.value.code == 404 and exc.value.read() == b"404 page not found\n"
    assert raw(emu, "GET", WF)[0] == 200


def test_bad_patches(emu, api):
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow())
    path = f"{WF}/w1"
    assert raw(emu, "PATCH", path, {"spec": 1}, "application/strategic-merge-patch+json")[0] \
        == 415
    assert raw(emu, "PATCH", path, b"a: b", "application/apply-patch+yaml")[0] == 415
    assert raw(emu, "PATCH", path, {"op": "add"}, "application/json-patch+json")[0] == 400
    # handlers/patch.go: any error applying a JSON patch is this generic 422
    generic = "the server rejected our request due to an error in our request"
    st, out = raw(emu, "PATCH", path, [{"op": "move", "from": "/nope", "path": "/x"}],
                  "application/json-patch+json")
    assert st == 422 and out["message"] == generic and out["details"] == {}
    st, out = raw(emu, "PATCH", path, [{"op": "jump", "path": "/x"}],
                  "application/json-patch+json")
    assert st == 422 and out["message"] == generic
    st, out = raw(emu, "PATCH", path, {"metadata": {"resourceVersion": "1"}},
                  "application/merge-patch+json")
    assert st == 409
    st, out = raw(emu, "PATCH", path, {"spec": {"desiredState": "Nope"}},
                  "application/merge-patch+json")
    assert st == 422 and "Unsupported value" in out["message"]
    st, out = raw(emu, "PATCH", path, {"metadata": {"labels": {"job": "ƒAbc"}}},
                  "application/merge-patch+json")
    assert st == 422 and 'Invalid value: "ƒAbc": a valid label' in out["message"]


def test_resource_version_on_create(emu):
    # kube-apiserver (etcd3 store): a 500 without a reason; an unparsable one is ignored
    body = {**workflow(), "metadata": {"name": "w", "resourceVersion": "17"}}
    status, out = raw(emu, "POST", WF, body)
    assert (status, out["code"]) == (500, 500) and "reason" not in out
    assert out["message"] == "resourceVersion should not be set on objects to be created"
    body["metadata"]["resourceVersion"] = "junk"
    assert raw(emu, "POST", WF, body)[0] == 201


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


def raw_exchange(emu, data: bytes) -> bytes:
    """Send bytes on a fresh TLS connection; everything the server answers
    until it closes the connection or goes quiet."""
    import socket

    ctx = ssl.create_default_context(cadata=emu.certs.ca_pem.decode())
    with socket.create_connection((emu.host, emu.port), timeout=5) as s, \
            ctx.wrap_socket(s, server_hostname=emu.host) as t:
        t.sendall(data)
        t.settimeout(0.5)
        out = b""
        while True:
            try:
                got = t.recv(65536)
            except (TimeoutError, ssl.SSLError, OSError):
                break
            if not got:
                break
            out += got
        return out


def status_of(reply: bytes) -> tuple[int, dict]:
    head, _, body = reply.partition(b"\r\n\r\n")
    code = int(head.split()[1])
    return code, json.loads(body) if body.startswith(b"{") else {}


@pytest.mark.parametrize(("request_bytes", "code", "text"), [
    (b"NONSENSE\r\n\r\n", 400, "malformed request line"),
    (b"GET /version HTTP/1.1\r\nno colon here\r\n\r\n", 400, "malformed request header"),
    (b"POST " + WF.encode() + b" HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 400,
     "invalid Content-Length"),
    (b"POST " + WF.encode() + b" HTTP/1.1\r\nContent-Length: many\r\n\r\n", 400,
     "invalid Content-Length"),
    (b"BREW /version HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405, "method BREW"),
    (b"GET /version HTTP/1.1\r\n" + b"X-A: b\r\n" * 300 + b"\r\n", 431, "too many"),
])
def test_malformed_http(emu, request_bytes, code, text):
    line, sep, rest = request_bytes.partition(b"\r\n")
    if sep:
        request_bytes = line + f"\r\nAuthorization: Bearer {emu.token}\r\n".encode() + rest
    got, body = status_of(raw_exchange(emu, request_bytes))
    assert got == code and text in body["message"] and body["kind"] == "Status"
    assert raw(emu, "GET", WF)[0] == 200  # still serving


def test_chunked_body_and_expect_continue(emu):
    body = json.dumps(workflow()).encode()
    chunks = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n"
                      for p in (body[:10], body[10:])) + b"0\r\n\r\n"
    req = (f"POST {WF} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {emu.token}\r\n"
           f"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
           f"Expect: 100-continue\r\nConnection: close\r\n\r\n").encode() + chunks
    reply = raw_exchange(emu, req)
    assert reply.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created")
    assert json.loads(reply.split(b"\r\n\r\n", 2)[2])["metadata"]["name"] == "w1"


@pytest.mark.parametrize(("path", "text"), [
    (f"{WF}?fieldValidation=Loud", "fieldValidation parameter unsupported"),
    (f"{WF}?watch=1&labelSelector=a%20in%20(", "unable to parse requirement"),
    (f"{WF}?watch=1&timeoutSeconds=-3", "invalid timeoutSeconds"),
])
def test_bad_query_parameters(emu, path, text):
    method = "POST" if "fieldValidation" in path else "GET"
    status, out = raw(emu, method, path, workflow() if method == "POST" else None)
    assert status == 400 and text in out["message"]


def test_writes_to_crds_are_refused(emu):
    status, out = raw(emu, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                      {"metadata": {"name": "x.example.com"}})
    assert status == 405 and "built in" in out["message"]


def test_silent_tls_client_does_not_block_others(emu):
    import socket

    with socket.create_connection((emu.host, emu.port)):  # never says a word
        assert raw(emu, "GET", WF)[0] == 200


def test_unknown_kind_schema_errors_in_json_patch_result(emu, api):
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow())
    st, out = raw(emu, "PATCH", f"{WF}/w1",
                  [{"op": "replace", "path": "/spec/userID", "value": "root"}],
                  "application/json-patch+json")
    assert st == 422 and "spec.userID: Invalid value" in out["message"]
    st, out = raw(emu, "PATCH", f"{WF}/w1", [{"op": "remove", "path": "/metadata"}],
                  "application/json-patch+json")
    assert st == 422
