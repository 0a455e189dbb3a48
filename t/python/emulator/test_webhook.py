"""webhook.WebhookServer: DWS' and nnf-sos' admission served as
AdmissionReview v1 over HTTPS, its answers the same as the in-process
admission's (the texts of a denial, the drivers a create gets)."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.request
from collections.abc import Iterator

import pytest
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import NNF, NV, G, V, workflow

from flux_dws.apiserver.api_resources import DWS
from flux_dws.apiserver.store import ApiError
from flux_dws.emulator import Emulator
from flux_dws.emulator.webhook import (
    WebhookServer,
    api_server_admission,
    configurations,
    denied_prefix,
)

JOBDW = "#DW jobdw type=xfs capacity=10GiB name=scratch"


@pytest.fixture(scope="module")
def reference() -> Iterator[Emulator]:
    """The in-process admission: the kind system with its controllers."""
    with Emulator(system="kind", latency="zero") as emu:
        yield emu


@pytest.fixture(scope="module")
def hooks(reference: Emulator) -> Iterator[WebhookServer]:
    """A webhook server for the same admission functions."""
    with WebhookServer(reference.store.admission) as server:
        yield server


@pytest.fixture
def bare(hooks: WebhookServer) -> Iterator[Emulator]:
    """A bare emulated API server calling the webhooks as a real one does."""
    with Emulator() as emu:
        for kind in hooks.admission:
            emu.store.admission[kind] = api_server_admission(hooks, kind)
        yield emu


def post(server: WebhookServer, path: str, review: dict) -> dict:
    ctx = ssl.create_default_context(cadata=server.certs.ca_pem.decode())
    req = urllib.request.Request(server.url + path, json.dumps(review).encode(),
                                 {"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
        out: dict = json.loads(resp.read())
        return out


def review(op: str, obj: dict, old: dict | None = None) -> dict:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u-1", "operation": op, "object": obj, "oldObject": old}}


def refusal(api, body, ns="default", plural="workflows", group=G, version=V):
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_custom_object(group, version, ns, plural, body)
    return exc.value.status, json.loads(exc.value.body)["message"]


def test_a_denial_reads_as_the_emulators(reference, bare):
    bad = workflow("w1", desiredState="Setup")
    want = refusal(reference.custom_objects_api(), bad)
    got = refusal(bare.custom_objects_api(), bad)
    assert got == want
    assert got[0] == 403 and got[1] == denied_prefix("vworkflow.kb.io") + (
        'Spec.DesiredState: Invalid value: "Setup": desired state must start in Proposal')


def test_a_bad_directive_is_refused_in_dws_words(reference, bare):
    bad = workflow("w2", dwDirectives=["#DW jobdw type=nope capacity=1GiB name=x"])
    assert refusal(bare.custom_objects_api(), bad) == \
        refusal(reference.custom_objects_api(), bad)


def test_the_mutating_webhook_fills_the_drivers(bare):
    # the bare server has no DWDirectiveRule: the webhooks read the reference's
    made = bare.custom_objects_api().create_namespaced_custom_object(
        G, V, "default", "workflows", workflow("w3", dwDirectives=[JOBDW]))
    drivers = made["status"]["drivers"]
    assert {d["watchState"] for d in drivers} >= {"Proposal", "Setup", "Teardown"}
    assert all(d["driverID"] == "nnf" and d["status"] == "Pending" for d in drivers)
    assert made["status"]["env"]["DW_WORKFLOW_NAME"] == "w3"


def test_an_update_is_validated(reference, bare):
    api = bare.custom_objects_api()
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow("w4"))
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "w4",
                                           {"spec": {"jobID": "other"}})
    assert exc.value.status == 403
    assert json.loads(exc.value.body)["message"] == denied_prefix("vworkflow.kb.io") + \
        "Spec.JobID: Forbidden: field is immutable"


def test_a_profile_webhook_keeps_its_own_name(reference, bare):
    body = {"apiVersion": f"{NNF}/{NV}", "kind": "NnfStorageProfile",
            "metadata": {"name": "p1"}, "data": {"default": True, "pinned": True}}
    got = refusal(bare.custom_objects_api(), body, "nnf-system", "nnfstorageprofiles", NNF, NV)
    assert got == refusal(reference.custom_objects_api(), body, "nnf-system",
                          "nnfstorageprofiles", NNF, NV)
    assert got[1].startswith(denied_prefix("vnnfstorageprofile.kb.io"))


def test_review_answers(hooks):
    wf = workflow("w5", dwDirectives=[JOBDW])
    wf["metadata"]["namespace"] = "default"
    path = "/mutate-dataworkflowservices-github-io-v1alpha7-workflow"
    out = post(hooks, path, review("CREATE", wf))
    resp = out["response"]
    assert out["kind"] == "AdmissionReview" and resp["uid"] == "u-1" and resp["allowed"]
    assert resp["patchType"] == "JSONPatch"
    assert [op["path"] for op in json.loads(base64.b64decode(resp["patch"]))] == ["/status"]
    # a refusal is the validating webhook's to give, under its name
    bad = {**wf, "spec": {**wf["spec"], "desiredState": "Setup"}}
    assert post(hooks, path, review("CREATE", bad))["response"] == {"uid": "u-1",
                                                                    "allowed": True}
    denied = post(hooks, path.replace("mutate", "validate"), review("CREATE", bad))["response"]
    assert not denied["allowed"]
    assert denied["status"] == {"code": 403, "reason": "Forbidden", "message":
                                'Spec.DesiredState: Invalid value: "Setup": desired state must'
                                " start in Proposal"}
    assert not post(hooks, "/nowhere", review("CREATE", wf))["response"]["allowed"]


def test_configurations_name_the_server(hooks):
    mutating, validating = configurations(hooks)
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert [w["name"] for w in mutating["webhooks"]] == ["mworkflow.kb.io"]
    names = sorted(w["name"] for w in validating["webhooks"])
    assert names == ["vnnfcontainerprofile.kb.io", "vnnfdatamovementprofile.kb.io",
                     "vnnfstorageprofile.kb.io", "vworkflow.kb.io"]
    for w in mutating["webhooks"] + validating["webhooks"]:
        assert w["clientConfig"]["url"].startswith(hooks.url + "/")
        assert base64.b64decode(w["clientConfig"]["caBundle"]) == hooks.certs.ca_pem
        assert w["sideEffects"] == "None" and w["failurePolicy"] == "Fail"
    wf_rule = next(w for w in validating["webhooks"] if w["name"] == "vworkflow.kb.io")["rules"]
    assert wf_rule == [{"apiGroups": [DWS], "apiVersions": ["v1alpha7", "v1alpha6"],
                        "operations": ["CREATE", "UPDATE"], "resources": ["workflows"],
                        "scope": "Namespaced"}]


def test_a_webhook_server_that_is_down_fails_closed(reference):
    server = WebhookServer(reference.store.admission).start()
    admit = api_server_admission(server, (DWS, "workflows"))
    server.stop()
    with pytest.raises((ApiError, OSError)):
        admit("CREATE", None, workflow("w6"))
