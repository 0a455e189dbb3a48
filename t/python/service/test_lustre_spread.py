"""Lustre on the rabbits Fluxion chooses (issue 27), end to end through the
harness: the real service and the emulator's nnf-sos on the lus8 system (8
rabbits of 4 TiB; the harness's Fluxion packs a top-level ssd request
rabbit by rabbit, and its job manager's R is redacted as flux-core's is).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from t.python.service.harnesshelp import gone, settled

from flux_dws.harness import Harness
from flux_dws.libdws.hostlist import Hostlist

LUS8 = str(Path(__file__).resolve().parents[2] / "data" / "lustre" / "lus8.yaml")
GiB = 1 << 30


def harness(lustre: dict[str, Any]) -> Harness:
    return Harness(system=LUS8, config={"lustre": lustre})


def capacities_known(h: Harness) -> None:
    """Until the service has every rabbit's size from its Storage: the
    refusals below name what all rabbits hold, which a job submitted
    before the Storage list would not see."""
    def known() -> bool:
        view = h.rabbits_now()  # not ready: its rabbits may not be listed yet
        return bool(view.get("ready")) and all(r["capacity"] > 0 for r in view["rabbits"])

    h.wait_for(known, what="every rabbit's capacity known")


@pytest.fixture
def spread() -> Iterator[Harness]:
    with harness({"spread": True, "mdts": 2}) as h:
        yield h
        assert h.reactor.errors == []


def servers_while_running(h: Harness, jobid: int) -> list[dict[str, Any]]:
    api = h.emulator.custom_objects_api()
    name = f"fluxjob-{jobid}-0"
    out: list[dict[str, Any]] = []

    def filled() -> bool:
        try:
            srv = api.get_namespaced_custom_object("dataworkflowservices.github.io", "v1alpha7",
                                                   "default", "servers", name)
        except Exception:
            return False
        out[:] = (srv.get("spec") or {}).get("allocationSets") or []
        return bool(out)

    h.wait_for(filled)
    return out


def test_big_lustre_job_spreads_over_rabbits_fluxion_chose(spread: Harness) -> None:
    h = spread
    jobid = h.submit("#DW jobdw type=lustre capacity=10TiB name=big", nodes=2, runtime=3600)
    h.wait_event(jobid, "start")  # held running until h.finish
    sets = servers_while_running(h, jobid)
    # flux dws rabbits: the Lustre use of each rabbit, and the job on them
    view = {r["name"]: r for r in h.ask("dws.rabbits")["rabbits"]}
    used = {name: r["lustre_gib"] for name, r in view.items() if r["lustre_gib"]}
    assert sum(used.values()) >= 10 * 1024, used
    assert all(view[name]["capacity"] == 4 << 40 for name in view)
    assert all(jobid in view[name]["jobs"] for name in used)
    h.finish(jobid)
    job = h.wait(jobid)
    assert job.exceptions == []
    res = job.jobspec["resources"]
    assert res[0]["type"] == "node" and res[1]["type"] == "ssd"
    assert res[1]["count"] >= 10 * 1024
    osts = {e["name"]: s["allocationSize"] * e["allocationCount"]
            for s in sets if s["label"] == "ost" for e in s["storage"]}
    assert len(osts) >= 3
    assert sum(osts.values()) >= 10 << 40
    for name, b in osts.items():
        assert b <= 4398046511104, (name, b)
    mdts = [e for s in sets if s["label"] in ("mdt", "mgtmdt") for e in s["storage"]]
    assert sum(e["allocationCount"] for e in mdts) == 2
    # the memo names the rabbits of the computes and of the file system
    assert set(osts) <= set(Hostlist(job.memo["rabbits"]))
    assert job.env is not None and job.env["DW_JOB_big"].startswith("/mnt/nnf/")
    gone(h, jobid)
    assert settled(h) == {}
    # ... and once the job is gone, dws.rabbits has given its Lustre back (the
    # service forgets the job at the Workflow's DELETED event, a moment after
    # the API server no longer lists it)
    h.wait_for(lambda: not any(r["lustre_gib"] or jobid in r["jobs"]
                               for r in h.rabbits_now()["rabbits"]), what="the Lustre given back")
    after = h.ask("dws.rabbits")["rabbits"]
    assert [(r["name"], r["lustre_gib"]) for r in after if r["lustre_gib"]] == []
    assert all(jobid not in r["jobs"] for r in after)


def test_whole_rabbits_are_equal() -> None:
    with harness({"spread": True, "whole_rabbit_gib": 4096}) as h:
        jobid = h.submit("#DW jobdw type=lustre capacity=6TiB name=whole", nodes=1,
                         runtime=3600)
        h.wait_event(jobid, "start")
        sets = servers_while_running(h, jobid)
        h.finish(jobid)
        job = h.wait(jobid)
        assert job.exceptions == []
        osts = [s["allocationSize"] * e["allocationCount"]
                for s in sets if s["label"] == "ost" for e in s["storage"]]
        assert len(osts) == 2 and osts[0] == osts[1]
        gone(h, jobid)


def test_too_many_whole_rabbits_refused() -> None:
    with harness({"spread": True, "whole_rabbit_gib": 4096, "max_rabbits": 2}) as h:
        jobid = h.submit("#DW jobdw type=lustre capacity=20TiB name=wide", nodes=1)
        job = h.wait(jobid)
        notes = " ".join(e.get("note", "") for e in job.exceptions)
        assert "whole rabbits of 4096 GiB, more than rabbit.lustre.max_rabbits (2)" in notes


def test_more_than_all_rabbits_hold_is_refused_with_the_reason() -> None:
    # lus8: 8 rabbits of 4 TiB; 40 TiB (and its headroom) fits no set of them,
    # so the service says so instead of Fluxion's "unsatisfiable"
    with harness({"spread": True}) as h:
        capacities_known(h)
        jobid = h.submit("#DW jobdw type=lustre capacity=40TiB name=huge", nodes=1)
        job = h.wait(jobid)
        notes = " ".join(e.get("note", "") for e in job.exceptions)
        # 40 TiB of OSTs, the MDT and MGT, 1/32 headroom
        assert re.search(r"Lustre needs 4[12]\d\d\d GiB of rabbit ssd", notes), notes
        assert "more than all 8 rabbits hold (32768 GiB)" in notes, notes
        gone(h, jobid)
        assert settled(h) == {}


def test_more_than_max_rabbits_hold_is_refused_with_the_reason() -> None:
    with harness({"spread": True, "max_rabbits": 2}) as h:
        capacities_known(h)
        jobid = h.submit("#DW jobdw type=lustre capacity=10TiB name=wide", nodes=1)
        job = h.wait(jobid)
        notes = " ".join(e.get("note", "") for e in job.exceptions)
        assert ("more than rabbit.lustre.max_rabbits (2) rabbits of at most 4096 GiB hold"
                in notes), notes
        # within what max_rabbits can hold: placed as before
        ok = h.submit("#DW jobdw type=lustre capacity=7TiB name=fits", nodes=1)
        assert h.wait(ok).exceptions == []


def test_off_switch_is_node_local() -> None:
    with harness({}) as h:
        jobid = h.submit("#DW jobdw type=lustre capacity=1TiB name=small", nodes=2)
        job = h.wait(jobid)
        assert job.exceptions == []
        assert job.jobspec["resources"][0]["type"] == "slot"
        assert job.memo["rabbits"] == "rab1"


def test_create_persistent_spreads(spread: Harness) -> None:
    h = spread
    jobid = h.submit("#DW create_persistent type=lustre capacity=10TiB name=keep", nodes=1)
    job = h.wait(jobid)
    assert job.exceptions == []
    assert job.jobspec["resources"][1]["type"] == "ssd"
    api = h.emulator.custom_objects_api()
    srv = api.get_namespaced_custom_object("dataworkflowservices.github.io", "v1alpha7",
                                           "default", "servers", "keep")
    osts = {e["name"] for s in srv["spec"]["allocationSets"] if s["label"] == "ost"
            for e in s["storage"]}
    assert len(osts) >= 3  # 10 TiB on 4 TiB rabbits
    jobid = h.submit("#DW destroy_persistent name=keep", nodes=1)
    assert h.wait(jobid).exceptions == []


def test_service_restart_keeps_the_placement(spread: Harness) -> None:
    """A service restarted before the Servers were written (dws.setup is
    not sent again) reads the job's R for its hosts and Fluxion's
    reservation, places the file system on it, and records both on the
    Workflow with its Setup ask."""
    h = spread
    h.emulator.api_fault(method="PATCH", path="/servers/", count=100000, drop=True)
    jobid = h.submit("#DW jobdw type=lustre capacity=10TiB name=big", nodes=2, runtime=1.0)

    def hosts_known() -> bool:
        return any(j["id"] == jobid and j.get("hosts") for j in h.status_now().get("jobs", []))

    def recorded() -> dict[str, int] | None:
        for w in h.workflows():
            if w["metadata"]["name"] == f"fluxjob-{jobid}":
                ann = w["metadata"].get("annotations") or {}
                if "flux-dws.io/lustre-rabbits" in ann:
                    out: dict[str, int] = json.loads(ann["flux-dws.io/lustre-rabbits"])
                    return out
        return None

    h.wait_for(hosts_known, what="dws.setup taken, its Servers' patch dropped")
    h.stop_service()
    h.emulator.clear_api_faults()
    h.start_service()
    h.wait_for(lambda: recorded() is not None, what="the reservation on the Workflow")
    reserved = recorded()
    assert reserved and len(reserved) >= 3
    sets = servers_while_running(h, jobid)
    osts = {e["name"] for s in sets if s["label"] == "ost" for e in s["storage"]}
    assert osts <= set(reserved)
    job = h.wait(jobid)
    assert job.exceptions == []
    gone(h, jobid)
