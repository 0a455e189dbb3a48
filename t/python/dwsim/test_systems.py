"""Emulated system descriptions and the objects they seed."""

from __future__ import annotations

import time

import pytest

from flux_dws.dwsim.systems import (
    SystemError_,
    load_system,
    parse_system,
    seed_objects,
    system_names,
)


def test_known_systems():
    assert {"kind", "rzadams", "tuolumne", "elcap"} <= set(system_names())


def test_kind():
    s = load_system("kind")
    assert [(r.name, r.computes) for r in s.rabbits] == [
        ("kind-worker2", [("compute-01", 0), ("compute-02", 1), ("compute-03", 6)]),
        ("kind-worker3", [("compute-04", 4)])]
    assert {r.capacity for r in s.rabbits} == {39582418599936}
    assert s.ports == ["5000-5999"] and s.ports_cooldown == 0
    objs = {(o["kind"], o["metadata"]["name"]): o for o in seed_objects(s)}
    sc = objs[("SystemConfiguration", "default")]
    assert sc["spec"]["storageNodes"][0]["computesAccess"][2] == {"name": "compute-03",
                                                                   "index": 6}
    st = objs[("Storage", "kind-worker3")]
    assert st["status"]["status"] == "Ready" and st["status"]["capacity"] == 39582418599936
    assert st["metadata"]["labels"] == {"dataworkflowservices.github.io/storage": "Rabbit"}
    assert objs[("SystemStatus", "default")]["data"]["nodes"]["compute-04"] == "Enabled"
    assert ("Namespace", "compute-01") in objs
    assert objs[("NnfStorageProfile", "default")]["data"]["default"] is True
    assert ("NnfContainerProfile", "copy-offload-default") in objs
    assert ("DWDirectiveRule", "nnf") in objs
    assert objs[("LustreFileSystem", "lushtx")]["spec"]["mountRoot"] == "/lus/global"


def test_rzadams_capacities():
    s = load_system("rzadams")
    caps = {r.name: r.capacity for r in s.rabbits}
    assert len(caps) == 8 and caps["rzadams201"] == 30720000000000
    assert caps["rzadams208"] == 17250000000000
    assert s.rabbits[1].computes[0] == ("rzadams1017", 0)


def test_elcap_loads_quickly():
    t0 = time.perf_counter()
    s = load_system("elcap")
    objs = seed_objects(s)
    elapsed = time.perf_counter() - t0
    assert len(s.rabbits) == 696 and len(s.computes) == 11136
    assert sum(o["kind"] == "Storage" for o in objs) == 696
    del elapsed  # measured by t/bench, not asserted here


@pytest.mark.parametrize(("doc", "message"), [
    ({}, "name is required"),
    ({"name": "x", "capacity": -1, "rabbits": []}, "capacity must be a non-negative integer"),
    ({"name": "x", "capacity": 1, "rabbits": "r1"}, "rabbits must be a pattern or a list"),
    ({"name": "x", "capacity": 1, "rabbits": {"hostlist": "r[1-2]", "computes": "c[1-40]",
                                              "perRabbit": 16}}, "40 computes do not fit"),
    ({"name": "x", "capacity": 1, "rabbits": {"hostlist": "r[1-", "computes": "c1",
                                              "perRabbit": 1}}, "unbalanced brackets"),
    ({"name": "x", "capacity": 1, "rabbits": [{"name": "r1", "computes": ["c1"]},
                                              {"name": "r2", "computes": ["c1"]}]},
     "compute 'c1' is attached to two rabbits: 'r1' and 'r2'"),
    ({"name": "x", "capacity": 1, "rabbits": [{"computes": []}]}, r"rabbits\[0\] needs a name"),
    ({"name": "x", "capacity": 1, "capacities": {"r9": 5}, "rabbits": [{"name": "r1"}]},
     "capacities names unknown rabbit 'r9'"),
])
def test_bad_descriptions(doc, message):
    with pytest.raises(SystemError_, match=message):
        parse_system(doc)


def test_unknown_system_and_file(tmp_path):
    with pytest.raises(SystemError_, match="unknown system 'nosuch'"):
        load_system("nosuch")
    with pytest.raises(SystemError_, match="not found"):
        load_system(str(tmp_path / "x.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("- 1\n")
    with pytest.raises(SystemError_, match="expected a mapping"):
        load_system(str(bad))
    site = tmp_path / "site.yaml"
    site.write_text("name: site\ncapacity: 100\nrabbits:\n  - name: r1\n    computes: [c1, c2]\n")
    s = load_system(str(site))
    assert s.rabbits[0].computes == [("c1", 0), ("c2", 1)] and s.rabbits[0].capacity == 100
