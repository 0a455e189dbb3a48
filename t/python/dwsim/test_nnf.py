"""nnf-sos decisions: resource errors, DirectiveBreakdowns, Servers checks."""

from __future__ import annotations

import pytest

from flux_dws.dwsim import breakdown as bd
from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim import servers

TEMPLATE = {  # the nnf-sos example profile
    "xfsStorage": {"capacityScalingFactor": "1.0", "allocationPadding": "300MiB"},
    "gfs2Storage": {"capacityScalingFactor": "1.0", "allocationPadding": "300MiB"},
    "rawStorage": {"capacityScalingFactor": "1.0", "allocationPadding": "300MiB"},
    "lustreStorage": {"combinedMgtMdt": True,
                      "ostOptions": {"scale": 5, "colocateComputes": True,
                                     "capacityScalingFactor": "1.0"}},
}
LABEL = "dataworkflowservices.github.io/storage=Rabbit"


def test_resource_error_texts():
    e = rerr.user("PersistentStorage 'p' not found", severity="Major")
    assert (e.driver_status, e.driver_message, e.driver_error) == (
        "TransientCondition", "User error: PersistentStorage 'p' not found",
        "user error: PersistentStorage 'p' not found")
    assert rerr.internal().driver_message == "Internal error: "
    assert rerr.internal("x", debug="y").driver_error == "internal error: y"
    assert rerr.wlm("w", severity="Minor").driver_status == "Running"
    d = rerr.apply_to_driver({"status": "Running", "completed": False}, rerr.internal("z"))
    assert d["status"] == "Error" and d["message"] == "Internal error: z"
    with pytest.raises(ValueError):
        rerr.ResourceError(type="Bogus")


def test_xfs_with_template_padding():
    (s,) = bd.storage_breakdown("#DW jobdw type=xfs capacity=10GiB name=aa", TEMPLATE)
    assert s == {"allocationStrategy": "AllocatePerCompute", "minimumCapacity": 11051991040,
                 "label": "xfs", "constraints": {"labels": [LABEL]}}


def test_unpadded_and_percent_padding():
    (s,) = bd.storage_breakdown("#DW jobdw type=gfs2 capacity=10GiB name=aa", {})
    assert s["minimumCapacity"] == 10 << 30
    prof = {"rawStorage": {"allocationPadding": "3.5%", "storageLabels": ["fast"]}}
    (s,) = bd.storage_breakdown("#DW jobdw type=raw capacity=100GB name=aa", prof)
    assert s["minimumCapacity"] == 103_500_000_000
    assert s["constraints"]["labels"] == ["fast", LABEL]


def test_lustre_combined_mgtmdt():
    ost, mgtmdt = bd.storage_breakdown("#DW jobdw type=lustre capacity=1TiB name=aa", TEMPLATE)
    assert ost == {"allocationStrategy": "AllocateAcrossServers", "minimumCapacity": 1 << 40,
                   "label": "ost", "constraints": {"labels": [LABEL], "scale": 5}}
    assert mgtmdt["label"] == "mgtmdt" and mgtmdt["minimumCapacity"] == 5 << 30
    assert mgtmdt["constraints"]["colocation"] == [{"type": "exclusive", "key": "lustre-mgt"}]


def test_lustre_external_mgs_with_counts():
    prof = {"lustreStorage": {"mgtOptions": {"externalMgs": "10.0.0.1@tcp"},
                              "mdtOptions": {"capacity": "256GiB", "count": 1},
                              "ostOptions": {"count": 2}}}
    ost, mdt = bd.storage_breakdown("#DW jobdw type=lustre capacity=10GiB name=aa", prof)
    assert (ost["minimumCapacity"], ost["constraints"]["count"]) == (10737418240, 2)
    assert (mdt["label"], mdt["minimumCapacity"], mdt["constraints"]["count"]) == (
        "mdt", 274877906944, 1)
    assert "colocation" not in mdt["constraints"]


def test_lustre_default_and_standalone_mgt():
    sets = bd.storage_breakdown("#DW jobdw type=lustre capacity=10GiB name=aa", {})
    assert [(s["label"], s["allocationStrategy"]) for s in sets] == [
        ("ost", "AllocateAcrossServers"), ("mdt", "AllocateAcrossServers"),
        ("mgt", "AllocateSingleServer")]
    prof = {"lustreStorage": {"mgtOptions": {"standaloneMgtPoolName": "pool"},
                              "mdtOptions": {"exclusive": True}}}
    (mgt,) = bd.storage_breakdown("#DW create_persistent type=lustre name=mgtpool", prof)
    assert mgt["label"] == "mgt" and mgt["allocationStrategy"] == "AllocateSingleServer"
    with pytest.raises(rerr.ResourceError) as exc:
        bd.storage_breakdown("#DW jobdw type=lustre capacity=1GiB name=aa", prof)
    assert str(exc.value) == ("User error: standaloneMgtPoolName option can only be used with"
                              " 'create_persistent' directive")


@pytest.mark.parametrize(("directive", "profile", "message"), [
    ("#DW jobdw type=xfs capacity=0GiB name=aa", {}, "Internal error: 'capacity' must be a"
                                                     " non-zero value"),
    ("#DW jobdw type=xfs capacity=1GiB name=aa",
     {"xfsStorage": {"capacityScalingFactor": "x"}},
     "Internal error: invalid capacityScalingFactor for gfs2 allocation"),
    ("#DW jobdw type=xfs capacity=1GiB name=aa", {"xfsStorage": {"allocationPadding": "x%"}},
     "Internal error: invalid allocationPadding percentage"),
    ("#DW jobdw type=xfs capacity=1GiB name=aa", {"xfsStorage": {"allocationPadding": "lots"}},
     "Internal error: invalid allocationPadding value"),
    ("#DW jobdw type=lustre capacity=1GiB name=aa",
     {"lustreStorage": {"ostOptions": {"capacityScalingFactor": ""}}},
     "Internal error: invalid capacityScalingFactor for lustre allocation"),
    ("#DW create_persistent type=xfs name=aa", {},
     "User error: creating persistent storage requires 'capacity' argument"),
    ("#DW create_persistent type=lustre name=aa", {"lustreStorage": {"combinedMgtMdt": True}},
     "User error: creating persistent storage requires 'capacity' argument"),
    ("#DW create_persistent type=lustre capacity=1GiB name=aa",
     {"lustreStorage": {"mgtOptions": {"standaloneMgtPoolName": "pool"}}},
     "User error: creating persistent MGT does not accept 'capacity' argument"),
    ("#DW jobdw type=xfs capacity=1GiB name=aa", {"lustreStorage": None, "xfsStorage": None},
     None),
])
def test_breakdown_errors(directive, profile, message):
    if message is None:  # null sections read as absent, as Go's zero values do
        (s,) = bd.storage_breakdown(directive, profile)
        assert s["minimumCapacity"] == 1 << 30
        return
    with pytest.raises(rerr.ResourceError) as exc:
        bd.storage_breakdown(directive, profile)
    assert str(exc.value) == message


def test_compute_constraints():
    for fs, access in [
        ("xfs", [{"type": "physical", "priority": "mandatory"}]),
        ("gfs2", [{"type": "network", "priority": "mandatory"},
                  {"type": "physical", "priority": "mandatory"}]),
    ]:
        d = f"#DW jobdw type={fs} capacity=1GiB name=aa"
        sets = bd.storage_breakdown(d, {})
        comp = bd.compute_breakdown(d, {}, "wf-0", "default", sets)
        (loc,) = comp["constraints"]["location"]
        assert loc["access"] == access
        assert loc["reference"] == {"kind": "Servers", "name": "wf-0", "namespace": "default",
                                    "fieldPath": "servers.spec.allocationSets[0]"}
    d = "#DW jobdw type=lustre capacity=1GiB name=aa"
    sets = bd.storage_breakdown(d, TEMPLATE)
    locs = bd.compute_breakdown(d, TEMPLATE, "wf-0", "default", sets)["constraints"]["location"]
    assert locs[0]["access"][1] == {"type": "physical", "priority": "bestEffort"}
    assert len(locs[1]["access"]) == 1


SETS = [{"label": "ost", "allocationStrategy": "AllocateAcrossServers", "minimumCapacity": 100},
        {"label": "mgt", "allocationStrategy": "AllocateSingleServer", "minimumCapacity": 10},
        {"label": "xfs", "allocationStrategy": "AllocatePerCompute", "minimumCapacity": 50}]
GOOD = {"allocationSets": [
    {"label": "ost", "allocationSize": 50, "storage": [{"name": "r1", "allocationCount": 2}]},
    {"label": "mgt", "allocationSize": 10, "storage": [{"name": "r2", "allocationCount": 1}]},
    {"label": "xfs", "allocationSize": 50, "storage": [{"name": "r1", "allocationCount": 4}]},
]}


def test_servers_accept_a_good_allocation():
    servers.validate_allocations(SETS, GOOD, ["r1", "r2"])


def bad(index, **change):
    import copy
    spec = copy.deepcopy(GOOD)
    spec["allocationSets"][index].update(change)
    return spec


@pytest.mark.parametrize(("spec", "message"), [
    ({"allocationSets": GOOD["allocationSets"][:2]},
     "WLM error: Allocation request does not meet directive requirements"),
    (bad(0, label="mdt"), "WLM error: storage directive requirements were not satisfied"),
    (bad(1, storage=[{"name": "r1", "allocationCount": 2}]),
     "WLM error: storage directive requirements were not satisfied"),
    (bad(0, allocationSize=49), "WLM error: storage directive requirements were not satisfied"),
    (bad(2, allocationSize=49), "WLM error: storage directive requirements were not satisfied"),
    (bad(2, storage=[{"name": "r9", "allocationCount": 1}]),
     "Internal error: storage directive requirements were not satisfied"),
])
def test_servers_refusals(spec, message):
    with pytest.raises(rerr.ResourceError) as exc:
        servers.validate_allocations(SETS, spec, ["r1", "r2"])
    assert str(exc.value) == message
    assert exc.value.severity == "Fatal"


def test_servers_status():
    st = servers.status_for(GOOD, ready=True)
    assert st[0] == {"label": "ost", "storage": {"r1": {"allocationSize": 100, "ready": True}}}
    assert servers.status_for(GOOD, ready=False)[0]["storage"]["r1"]["allocationSize"] == 0


def test_servers_controller_status_steps():
    spec = {"allocationSets": [{"label": "xfs", "allocationSize": 10, "storage": [
        {"name": "r1", "allocationCount": 2}, {"name": "r2", "allocationCount": 1}]}]}
    st = servers.reconcile_status({}, {}, None, "t0")
    assert st == {"ready": False, "lastUpdate": "t0"}
    assert servers.reconcile_status({}, st, None, "t1") is None
    st = servers.reconcile_status(spec, st, None, "t1")
    assert st["ready"] is False and st["lastUpdate"] == "t1"
    assert st["allocationSets"][0]["storage"] == {
        "r1": {"allocationSize": 0, "ready": False}, "r2": {"allocationSize": 0, "ready": False}}
    assert servers.reconcile_status(spec, st, None, "t2") is None
    st = servers.reconcile_status(spec, st, {"xfs": {"r1": 20}}, "t2")  # r2 is slow
    assert st["ready"] is False and st["allocationSets"][0]["storage"]["r2"][
        "allocationSize"] == 0
    st = servers.reconcile_status(spec, st, {"xfs": {"r1": 20, "r2": 10}}, "t3")
    assert st["ready"] is True
    st = servers.reconcile_status(spec, st, None, "t4")  # NnfStorage deleted
    assert st["ready"] is True and st["allocationSets"][0]["storage"]["r1"][
        "allocationSize"] == 0


def test_short_rabbits_counts_allocations_per_rabbit_over_sets():
    spec = {"allocationSets": [
        {"label": "xfs", "storage": [{"name": "r1", "allocationCount": 2},
                                     {"name": "r2", "allocationCount": 1}]}]}
    assert servers.short_rabbits(spec, {"r1": 2, "r2": 1}) == []
    assert servers.short_rabbits(spec, {"r1": 3, "r2": 2}) == ["r1", "r2"]
    assert servers.short_rabbits(spec, {}) == []
    assert servers.short_rabbits({}, {"r1": 1}) == []   # no allocation named: nothing to map
    two_sets = {"allocationSets": [{"storage": [{"name": "r1", "allocationCount": 1}]},
                                   {"storage": [{"name": "r1", "allocationCount": 1}]}]}
    assert servers.short_rabbits(two_sets, {"r1": 2}) == []
