"""nnf-sos' profile webhooks (§1.12): pinning rules and storage profile content."""

from __future__ import annotations

import json

import pytest
from kubernetes.client.exceptions import ApiException

from flux_dws.dwsim.systems import load_system, seed_objects
from flux_dws.emulator import Emulator
from flux_dws.emulator.profile_webhooks import check_storage_profile_data

NNF, NV = "nnf.cray.hpe.com", "v1alpha11"
KINDS = {"nnfstorageprofiles": "NnfStorageProfile",
         "nnfcontainerprofiles": "NnfContainerProfile",
         "nnfdatamovementprofiles": "NnfDataMovementProfile"}
HOOKS = {"nnfstorageprofiles": "vnnfstorageprofile.kb.io",
         "nnfcontainerprofiles": "vnnfcontainerprofile.kb.io",
         "nnfdatamovementprofiles": "vnnfdatamovementprofile.kb.io"}


@pytest.fixture(scope="module")
def api():
    with Emulator(system="kind", latency="zero") as emu:
        yield emu.custom_objects_api()


def create(api, plural, ns, name, data):
    return api.create_namespaced_custom_object(NNF, NV, ns, plural, {
        "apiVersion": f"{NNF}/{NV}", "kind": KINDS[plural], "metadata": {"name": name},
        "data": data})


def denied(exc_info, plural, message):
    assert exc_info.value.status == 403
    assert json.loads(exc_info.value.body)["message"] == (
        f'admission webhook "{HOOKS[plural]}" denied the request: {message}')


@pytest.mark.parametrize("plural", list(KINDS))
def test_selectable_profiles_live_in_nnf_system(api, plural):
    with pytest.raises(ApiException) as exc:
        create(api, plural, "default", "mine", {})
    denied(exc, plural, "incorrect namespace for profile that is intended to be selected by"
                        " users; the namespace should be 'nnf-system'")
    create(api, plural, "default", f"pinned-{plural}", {"pinned": True})  # a pinned copy


@pytest.mark.parametrize("plural", list(KINDS))
def test_pinned_flag_is_immutable(api, plural):
    create(api, plural, "nnf-system", f"flag-{plural}", {})
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(NNF, NV, "nnf-system", plural, f"flag-{plural}",
                                           {"data": {"pinned": True}})
    denied(exc, plural, "the pinned flag is immutable")


@pytest.mark.parametrize("plural", ["nnfcontainerprofiles", "nnfdatamovementprofiles"])
def test_pinned_data_is_immutable(api, plural):
    create(api, plural, "default", f"frozen-{plural}", {"pinned": True})
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(NNF, NV, "default", plural, f"frozen-{plural}",
                                           {"data": {"retryLimit": 9}})
    denied(exc, plural, "update on pinned resource not allowed")
    # metadata may change (finalizers, owners, labels)
    api.patch_namespaced_custom_object(NNF, NV, "default", plural, f"frozen-{plural}",
                                       {"metadata": {"labels": {"a": "b"}}})


def test_pinned_storage_profile_data_may_change(api):
    create(api, "nnfstorageprofiles", "default", "thawed", {"pinned": True})
    api.patch_namespaced_custom_object(NNF, NV, "default", "nnfstorageprofiles", "thawed", {
        "data": {"xfsStorage": {"allocationPadding": "1GiB"}}})


@pytest.mark.parametrize(("data", "message"), [
    ({"default": True, "pinned": True},
     "the NnfStorageProfile cannot be both default and pinned"),
    ({"lustreStorage": {"combinedMgtMdt": True, "mgtOptions": {"externalMgs": "1@tcp"}}},
     "cannot set both combinedMgtMdt and externalMgs"),
    ({"lustreStorage": {"mgtOptions": {"externalMgs": "1@tcp",
                                       "standaloneMgtPoolName": "p"}}},
     "cannot set both standaloneMgtPoolName and externalMgs"),
    ({"lustreStorage": {"combinedMgtMdt": True, "mgtOptions": {"standaloneMgtPoolName": "p"}}},
     "cannot set standaloneMgtPoolName and combinedMgtMdt"),
    ({"lustreStorage": {"ostOptions": {"count": 2, "scale": 3}}},
     "count and scale cannot both be specified in Lustre target options"),
    ({"lustreStorage": {"mdtOptions": {"variableOverride": {"$NOPE": "x"}}}},
     "variableOverride key '$NOPE' is not a recognized variable name"),
    ({"lustreStorage": {"clientOptions": {"variableOverride": {"MOUNT_PATH": "/x"}}}},
     "variableOverride key 'MOUNT_PATH' must start with '$'"),
    ({"gfs2Storage": {"variableOverride": {"": "/x"}}},
     "gfs2Storage: variableOverride key cannot be empty"),
    ({"xfsStorage": {"variableOverride": {"$WORKFLOW_UID": "/x"}}},
     "xfsStorage: variableOverride key '$WORKFLOW_UID' is not a recognized variable name"),
])
def test_storage_profile_content(api, data, message):
    with pytest.raises(ApiException) as exc:
        create(api, "nnfstorageprofiles", "nnf-system", "bad", data)
    denied(exc, "nnfstorageprofiles", message)


def test_good_storage_profile_is_admitted(api):
    create(api, "nnfstorageprofiles", "nnf-system", "good", {
        "lustreStorage": {"mgtOptions": {"standaloneMgtPoolName": "p"},
                          "ostOptions": {"scale": 5}},
        "xfsStorage": {"variableOverride": {"$MOUNT_PATH": "/x/$JOBID"}}})


@pytest.mark.parametrize("system", ["kind", "rzadams", "tuolumne", "elcap"])
def test_shipped_systems_pass_the_webhook(system):
    for obj in seed_objects(load_system(system)):
        if obj["kind"] == "NnfStorageProfile":
            check_storage_profile_data(obj["data"])
