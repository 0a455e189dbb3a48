"""The rabbitmapping builder and the mapping file model."""

from __future__ import annotations

import json

import pytest

from flux_dws.rabbitmapping_build import MappingError, StorageSpace, build_mapping, storage_space
from flux_dws.rabbitmapping_file import MappingFileError, RabbitMapping

KIND_SYSCONFIG = {
    "metadata": {"name": "default", "namespace": "default"},
    "spec": {
        "storageNodes": [
            {"type": "Rabbit", "name": "kind-worker2", "computesAccess": [
                {"name": "compute-01", "index": 0}, {"name": "compute-02", "index": 1},
                {"name": "compute-03", "index": 6}]},
            {"type": "Rabbit", "name": "kind-worker3", "computesAccess": [
                {"name": "compute-04", "index": 4}]},
        ],
        "ports": ["5000-5999"],
    },
}
CAP = 39582418599936


def storage(name, capacity=CAP):
    st = {"metadata": {"name": name, "namespace": "default"}}
    if capacity is not None:
        st["status"] = {"capacity": capacity}
    return st


def servers(name, rabbit, size, count=1):
    return {"metadata": {"name": name},
            "spec": {"allocationSets": [{"label": "xfs", "allocationSize": size,
                                         "storage": [{"name": rabbit,
                                                      "allocationCount": count}]}]}}


def test_kind_mapping():
    m = build_mapping(KIND_SYSCONFIG, [storage("kind-worker2"), storage("kind-worker3")])
    assert m == {
        "computes": {"compute-01": "kind-worker2", "compute-02": "kind-worker2",
                     "compute-03": "kind-worker2", "compute-04": "kind-worker3"},
        "rabbits": {"kind-worker2": {"capacity": CAP, "hostlist": "compute-[01-03]"},
                    "kind-worker3": {"capacity": CAP, "hostlist": "compute-04"}},
    }


def test_missing_capacity_takes_the_largest_seen():
    m = build_mapping(KIND_SYSCONFIG, [storage("kind-worker2", 100), storage("kind-worker3",
                                                                             None)])
    assert m["rabbits"]["kind-worker3"]["capacity"] == 100


def test_external_servers_reduce_capacity_but_flux_ones_do_not():
    objs = [servers("persistent-lus", "kind-worker2", 1000, 3),
            servers("fluxjob-42-0", "kind-worker2", 10**12),
            servers("huge", "kind-worker3", CAP * 2)]
    m = build_mapping(KIND_SYSCONFIG, [storage("kind-worker2"), storage("kind-worker3")], objs)
    assert m["rabbits"]["kind-worker2"]["capacity"] == CAP - 3000
    assert m["rabbits"]["kind-worker3"]["capacity"] == 0
    m = build_mapping(KIND_SYSCONFIG, [storage("kind-worker2")], objs, ignore_external=True)
    assert m["rabbits"]["kind-worker2"]["capacity"] == CAP


# --- status.capacity is free space, the total is the devices' (#497, #501) ---

TiB = 1 << 40


def nnf_storage(name, devices, free):
    """A Storage as nnf-sos writes it: its drives, and its free bytes."""
    return {"metadata": {"name": name, "namespace": "default"},
            "status": {"capacity": free, "devices": [
                {"slot": str(i), "model": "m", "serialNumber": f"s{i}", "firmwareVersion": "f",
                 "capacity": c, "wearLevel": 1, "status": "Ready" if c else "Failed"}
                for i, c in enumerate(devices)]}}


def test_total_is_the_sum_of_the_devices():
    # 16 drives of 1.589 TB, 3.441 TB of them allocated (free is less than total)
    drives = [1589 * 10**9] * 16
    total = sum(drives)
    st = nnf_storage("kind-worker2", drives, total - 3441 * 10**9)
    assert storage_space(st) == StorageSpace(total, total - 3441 * 10**9)
    warnings: list[str] = []
    m = build_mapping(KIND_SYSCONFIG, [st, nnf_storage("kind-worker3", [TiB, 0, TiB], 5)],
                      warnings=warnings)
    assert m["rabbits"]["kind-worker2"]["capacity"] == total == 25424 * 10**9
    assert m["rabbits"]["kind-worker3"]["capacity"] == 2 * TiB  # a failed drive counts 0
    assert warnings == []
    # an older DWS lists no device capacity: its status.capacity is the total
    assert storage_space(storage("r", 100)) == StorageSpace(100, 100)
    assert storage_space(nnf_storage("r", [0, 0], 0)) is None
    assert storage_space({"metadata": {"name": "r"}, "status": "bad"}) is None


def test_a_full_rabbit_keeps_its_total():
    m = build_mapping(KIND_SYSCONFIG, [nnf_storage("kind-worker2", [TiB] * 4, 0),
                                       nnf_storage("kind-worker3", [TiB] * 2, 2 * TiB)])
    assert m["rabbits"]["kind-worker2"]["capacity"] == 4 * TiB
    assert m["rabbits"]["kind-worker3"]["capacity"] == 2 * TiB


def test_external_allocation_is_subtracted_once():
    """A 1 TiB external allocation already missing from the free space is
    taken from the total once, not from the free space again; Flux's own
    allocations (missing from the free space too) are not taken at all."""
    total = 16 * TiB
    st = nnf_storage("kind-worker2", [TiB] * 16, total - TiB - 3 * TiB)  # external + flux
    objs = [servers("nnf-system-storage", "kind-worker2", TiB),
            servers("fluxjob-42-0", "kind-worker2", 3 * TiB)]
    warnings: list[str] = []
    m = build_mapping(KIND_SYSCONFIG, [st, nnf_storage("kind-worker3", [TiB] * 16, total)],
                      objs, warnings=warnings)
    assert m["rabbits"]["kind-worker2"]["capacity"] == total - TiB
    assert m["rabbits"]["kind-worker3"]["capacity"] == total
    assert warnings == []
    m = build_mapping(KIND_SYSCONFIG, [st], objs, ignore_external=True, warnings=warnings)
    assert m["rabbits"]["kind-worker2"]["capacity"] == total
    assert m["rabbits"]["kind-worker3"]["capacity"] == total  # the largest seen
    assert warnings == []


def test_warning_when_total_less_external_is_below_free():
    """#501: an external Servers whose storage the Storage does not show as
    allocated: the mapping keeps total - external, and says so."""
    st = nnf_storage("kind-worker2", [TiB] * 4, 4 * TiB)
    objs = [servers("persistent-lus", "kind-worker2", TiB, 2)]
    warnings: list[str] = []
    m = build_mapping(KIND_SYSCONFIG, [st, nnf_storage("kind-worker3", [TiB] * 4, TiB)], objs,
                      warnings=warnings)
    assert m["rabbits"]["kind-worker2"]["capacity"] == 2 * TiB
    assert warnings == [
        f"rabbit kind-worker2: its total ({4 * TiB} bytes) less external allocations"
        f" ({2 * TiB} bytes) is {2 * TiB} bytes, below the free space its Storage reports"
        f" ({4 * TiB} bytes); using {2 * TiB}"]
    # without the subtraction the figures agree: no warning
    warnings.clear()
    build_mapping(KIND_SYSCONFIG, [st], objs, ignore_external=True, warnings=warnings)
    assert warnings == []
    # more external than the total: floored at 0, and said
    build_mapping(KIND_SYSCONFIG, [st], [servers("x", "kind-worker2", 5 * TiB)],
                  warnings=warnings)
    assert len(warnings) == 1 and "is -1099511627776 bytes" in warnings[0]
    assert warnings[0].endswith("using 0")


def test_non_rabbit_storage_nodes_are_ignored():
    sc = json.loads(json.dumps(KIND_SYSCONFIG))
    sc["spec"]["storageNodes"].append({"type": "Other", "name": "x",
                                       "computesAccess": [{"name": "compute-09"}]})
    m = build_mapping(sc, [storage("kind-worker2")])
    assert "x" not in m["rabbits"]


@pytest.mark.parametrize(
    ("sysconfig", "storages", "message"),
    [
        ({}, [], "SystemConfiguration has no spec"),
        ({"spec": {"storageNodes": {}}}, [], "storageNodes is not a list"),
        ({"spec": {"storageNodes": [{"computesAccess": []}]}}, [], r"storageNodes\[0\] has no"),
        ({"spec": {"storageNodes": [{"name": "r", "computesAccess": [{"index": 1}]}]}}, [],
         r"computesAccess\[0\] has no name"),
        ({"spec": {"storageNodes": [{"name": "r", "computesAccess": [{"name": "c"}]},
                                    {"name": "s", "computesAccess": [{"name": "c"}]}]}},
         [storage("r")], "compute node 'c' is attached to two rabbits: 'r' and 's'"),
        ({"spec": {"storageNodes": [{"name": "r"}, {"name": "r"}]}}, [],
         "rabbit 'r' is listed twice"),
        (KIND_SYSCONFIG, [storage("kind-worker2", None)], "no Storage object reports"),
    ],
)
def test_build_errors(sysconfig, storages, message):
    with pytest.raises(MappingError, match=message):
        build_mapping(sysconfig, storages)


def test_mapping_file_round_trip(tmp_path):
    m = build_mapping(KIND_SYSCONFIG, [storage("kind-worker2"), storage("kind-worker3")])
    p = tmp_path / "m.json"
    p.write_text(json.dumps(m))
    rm = RabbitMapping.load(p)
    assert rm.rabbits_of(["compute-04", "compute-01", "compute-02"]) == ["kind-worker3",
                                                                          "kind-worker2"]
    assert rm.computes_of(["kind-worker3", "kind-worker2"]) == [
        "compute-04", "compute-01", "compute-02", "compute-03"]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "exactly the keys"),
        ({"computes": {}}, "exactly the keys"),
        ({"computes": [], "rabbits": {}}, "must be objects"),
        ({"computes": {}, "rabbits": {"r": 1}}, "rabbits.r is not an object"),
        ({"computes": {}, "rabbits": {"r": {"capacity": "1", "hostlist": ""}}},
         "rabbits.r.capacity"),
        ({"computes": {}, "rabbits": {"r": {"capacity": True, "hostlist": ""}}},
         "rabbits.r.capacity"),
        ({"computes": {}, "rabbits": {"r": {"capacity": 1, "hostlist": 3}}},
         "rabbits.r.hostlist must be a string"),
        ({"computes": {}, "rabbits": {"r": {"capacity": 1, "hostlist": "a[1-"}}},
         "rabbits.r.hostlist"),
        ({"computes": {"a": "r", "b": "s"}, "rabbits": {
            "r": {"capacity": 1, "hostlist": "a,b"}, "s": {"capacity": 1, "hostlist": "b"}}},
         "compute node 'b' is listed under two rabbits: 'r' and 's'"),
        ({"computes": {"a": "s"}, "rabbits": {"r": {"capacity": 1, "hostlist": "a"}}},
         "computes.a says rabbit 's'"),
        ({"computes": {}, "rabbits": {"r": {"capacity": 1, "hostlist": "a"}}},
         "compute node 'a' is in rabbits.r.hostlist but not in 'computes'"),
    ],
)
def test_mapping_file_errors(doc, message):
    with pytest.raises(MappingFileError, match=message):
        RabbitMapping(doc)


def test_mapping_load_errors(tmp_path):
    with pytest.raises(MappingFileError, match="No such file"):
        RabbitMapping.load(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(MappingFileError, match="not valid JSON"):
        RabbitMapping.load(bad)


def test_lookup_errors():
    rm = RabbitMapping({"computes": {"a": "r"},
                        "rabbits": {"r": {"capacity": 1, "hostlist": "a"}}})
    with pytest.raises(MappingFileError, match="compute node 'zz' is not attached"):
        rm.rabbits_of(["zz"])
    with pytest.raises(MappingFileError, match="'a' is not a rabbit"):
        rm.computes_of(["a"])
