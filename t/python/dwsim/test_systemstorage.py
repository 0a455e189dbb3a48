"""nnf-sos' NnfSystemStorage decisions (dwsim.systemstorage)."""

from __future__ import annotations

import pytest

from flux_dws.dwsim import systemstorage as nss
from flux_dws.dwsim.resource_error import ResourceError

SYSCONFIG = {"spec": {"storageNodes": [
    {"type": "Rabbit", "name": "r1", "computesAccess": [
        {"name": "c0", "index": 0}, {"name": "c1", "index": 1}, {"name": "c6", "index": 6}]},
    {"type": "Other", "name": "x"},
    {"type": "Rabbit", "name": "r2", "computesAccess": [{"name": "c4", "index": 4}]}]}}
RABBIT = {"dataworkflowservices.github.io/storage": "Rabbit"}


def storage(state="Enabled", status="Ready", labels=RABBIT):
    return {"metadata": {"labels": labels}, "spec": {"state": state},
            "status": {"status": status}}


def test_rabbits_from_sysconfig_include_exclude_and_disabled():
    assert nss.select_rabbits({}, SYSCONFIG, {}) == ["r1", "r2"]
    assert nss.select_rabbits({"excludeRabbits": ["r1"]}, SYSCONFIG, {}) == ["r2"]
    assert nss.select_rabbits({"includeRabbits": ["r9"]}, None, {}) == ["r9"]
    with pytest.raises(ResourceError) as exc:
        nss.select_rabbits({"includeRabbits": ["r1"], "excludeRabbits": ["r2"]}, None, {})
    assert "can not be used together" in exc.value.debug_message
    spec = {"excludeDisabledRabbits": True}
    assert nss.select_rabbits(spec, SYSCONFIG, {"r1": storage("Disabled"),
                                                "r2": storage()}) == ["r2"]
    assert nss.select_rabbits(spec, SYSCONFIG, {"r1": storage(status="Offline"),
                                                "r2": storage(labels={})}) == []
    with pytest.raises(ResourceError) as exc:
        nss.select_rabbits(spec, SYSCONFIG, {"r1": storage()})
    assert exc.value.severity == "Minor" and "could not get Storage 'default/r2'" in \
        exc.value.debug_message


@pytest.mark.parametrize(("spec", "count", "computes"), [
    ({}, 1, ["c0", "c1", "c6", "c4"]),
    ({"shared": False}, 16, ["c0", "c1", "c6", "c4"]),
    ({"shared": False, "computesTarget": "even"}, 8, ["c0", "c6", "c4"]),
    ({"computesTarget": "odd"}, 1, ["c1"]),
    ({"shared": False, "computesTarget": "pattern", "computesPattern": [6, 4]}, 2, ["c6", "c4"]),
    ({"excludeComputes": ["c1", "c4"]}, 1, ["c0", "c6"]),
    ({"includeComputes": ["zz"]}, 1, ["zz"]),
])
def test_counts_and_computes(spec, count, computes):
    assert nss.allocation_count(spec) == count
    assert nss.select_computes(spec, SYSCONFIG, ["r1", "r2"]) == computes


def test_storage_spec_and_refs():
    meta = {"namespace": "default", "name": "s", "uid": "u1"}
    servers = nss.servers_spec({"capacity": 10}, ["r1"])
    st = nss.nnf_storage_spec({"type": "xfs"}, meta, servers)
    aset = st["allocationSets"][0]
    assert st["fileSystemType"] == "xfs" and aset["name"] == "system-storage"
    assert aset["nodes"] == [{"name": "r1", "count": 1}] and aset["capacity"] == 10
    assert {"name": "$WORKFLOW_UID", "indexed": False, "value": "systemstorage-u1"} in \
        aset["commandVariables"]
    with pytest.raises(ResourceError) as exc:
        nss.nnf_storage_spec({}, meta, nss.servers_spec({}, []))
    assert "no Rabbits available" in exc.value.debug_message
    assert nss.sysconfig_key({}) == ("default", "default")
    with pytest.raises(ResourceError) as exc:
        nss.sysconfig_key({"systemConfiguration": {"kind": "Storage", "name": "x"}})
    assert "not of kind 'SystemConfiguration'" in exc.value.debug_message
    with pytest.raises(ResourceError) as exc:
        nss.profile_key({})
    assert "StorageProfile must be specified" in exc.value.debug_message
