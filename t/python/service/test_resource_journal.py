"""The pure half of the service's Flux resource watch: R reduced to engine
events (flux_dws.resourcegraph, flux_dws.service.resource_journal.JournalReader)."""

from __future__ import annotations

import errno
import json
import re
from typing import Any

import pytest

from flux_dws.resourcegraph import ResourceError, decode_lean, drainable_hosts, graph_index
from flux_dws.service.resource_journal import (
    JournalReader,
    decode_journal_answer,
    exclude_of,
    journal_ended,
)


def vertex(vtype: str, path: str, **meta: Any) -> dict[str, Any]:
    return {"id": path, "metadata": {"type": vtype, "paths": {"containment": path}, **meta}}


def R_with_graph() -> dict[str, Any]:
    nodes = [vertex("cluster", "/kind"),
             vertex("chassis", "/kind/chassis0", properties={"rabbit": "rabbit-a"}),
             vertex("chassis", "/kind/chassis1", properties={"rabbit": "rabbit-b"}),
             vertex("node", "/kind/chassis0/compute-01", name="compute-01"),
             vertex("node", "/kind/chassis1/compute-02", name="compute-02")]
    for c in (0, 1):
        nodes += [vertex("ssd", f"/kind/chassis{c}/ssd{k}") for k in (10, 2, 0, 1)]
    return {"version": 1,
            "execution": {"R_lite": [], "properties": {"pdebug": "1"}},
            "scheduling": {"graph": {"nodes": nodes, "edges": []}}}


def test_graph_index_paths_by_rabbit_in_natural_order() -> None:
    index = graph_index(R_with_graph())
    assert index["ssds"] == {
        "rabbit-a": [f"/kind/chassis0/ssd{k}" for k in (0, 1, 2, 10)],
        "rabbit-b": [f"/kind/chassis1/ssd{k}" for k in (0, 1, 2, 10)]}
    assert index["nodes"] == {"compute-01": "/kind/chassis0/compute-01",
                              "compute-02": "/kind/chassis1/compute-02"}


@pytest.mark.parametrize("R", [None, {}, {"scheduling": {}},
                               {"scheduling": {"graph": {"nodes": "x"}}}])
def test_graph_index_without_a_graph_is_empty(R: Any) -> None:
    assert graph_index(R) == {"ssds": {}, "nodes": {}}


def test_graph_index_skips_ssds_without_a_rabbit_chassis() -> None:
    R = {"scheduling": {"graph": {"nodes": [vertex("chassis", "/c/chassis0"),
                                            vertex("ssd", "/c/chassis0/ssd0"),
                                            {"metadata": {"type": "ssd"}}, "junk"]}}}
    assert graph_index(R) == {"ssds": {}, "nodes": {}}


def test_decode_lean_keeps_what_graph_index_reads() -> None:
    R = R_with_graph()
    graph = R["scheduling"]["graph"]
    graph["nodes"] += [vertex("core", "/kind/chassis0/compute-01/core0", id=0, rank=0),
                       vertex("gpu", "/kind/chassis0/compute-01/gpu0", id=0, rank=0)]
    graph["edges"] = [{"source": "0", "target": "1"},
                      {"source": "1", "target": "3",
                       "metadata": {"name": {"containment": "contains"}}}]
    answer = {"events": [{"name": "restart", "context": {"id": 1, "metadata": {"type": "x"}}}],
              "R": R}
    lean = decode_lean(json.dumps(answer))
    assert graph_index(lean["R"]) == graph_index(R)
    assert lean["events"] == answer["events"]  # no graph vertex: untouched
    assert lean["R"]["execution"] == R["execution"]
    nodes = lean["R"]["scheduling"]["graph"]["nodes"]
    assert [n["metadata"]["type"] for n in nodes if n is not None] == \
        ["chassis", "chassis", "node", "node"] + ["ssd"] * 8
    assert nodes.count(None) == 3  # the cluster, the core and the GPU
    assert lean["R"]["scheduling"]["graph"]["edges"] == [None, None]
    with pytest.raises(ValueError):
        decode_lean('{"R": ')


def test_decode_journal_answer_names_what_is_wrong() -> None:
    answer = {"events": [], "R": R_with_graph()}
    resp, error = decode_journal_answer(json.dumps(answer))
    assert error is None and graph_index(resp["R"]) == graph_index(answer["R"])
    assert decode_journal_answer("") == ({}, None)
    resp, error = decode_journal_answer('{"events": ')
    assert resp == {} and error is not None
    assert error.startswith("resource.journal answer is not JSON: ")
    assert decode_journal_answer("[1]") == (
        {}, "resource.journal answer is not a JSON object: list")


@pytest.mark.parametrize("state", ["finalize", "shutdown", "goodbye", "cleanup", None])
def test_journal_end_at_shutdown_is_no_error(state: str | None) -> None:
    level, line = journal_ended(errno.ENODATA, state, "[Errno 61] No data available")
    assert level == "info"
    assert line == ("rabbit health: resource.journal ended as the instance shuts down (broker"
                    f" state {state or 'unknown'}); no longer following it")


def test_journal_end_while_running_is_an_error() -> None:
    text = "[Errno 61] No data available"
    assert journal_ended(errno.ENODATA, "run", text) == (
        "err", "rabbit health: resource.journal ended: [Errno 61] No data available")
    for errnum in (errno.EPROTO, errno.ENOSYS, None):
        assert journal_ended(errnum, "finalize", "it broke") == (
            "err", "rabbit health: resource.journal ended: it broke")


def test_drainable_hosts_by_node_property() -> None:
    """Drain queues name node properties: a host may be drained when its
    properties include any of them; [queues] plays no part."""
    R = {"execution": {"properties": {"pdebug": "1", "pbatch": "0", "both": "0-1"}}}
    hosts = ["compute-01", "compute-02"]
    assert drainable_hosts(None, R, hosts) is None
    assert drainable_hosts(["pdebug"], R, hosts) == "compute-02"
    assert drainable_hosts(["pbatch", "pdebug"], R, hosts) == "compute-[01-02]"
    assert drainable_hosts(["both"], R, hosts) == "compute-[01-02]"
    assert drainable_hosts(["pbatch", "nosuch"], R, hosts) == "compute-01"
    assert drainable_hosts(["nosuch"], R, hosts) == ""
    bad_R = {"execution": {"properties": {"pdebug": "x-"}}}
    with pytest.raises(ResourceError, match=re.escape("R execution.properties.pdebug")):
        drainable_hosts(["pdebug"], bad_R, hosts)


def test_journal_reader_replay_then_live() -> None:
    reader = JournalReader(fluxion=True, exclude="compute-02")
    first = reader.answer({"events": [{"name": "restart", "context": {
        "ranks": "0-1", "online": "0", "nodelist": "compute-[01-02]"}}], "R": R_with_graph()})
    assert [e["type"] for e in first] == ["journal", "graph", "flux-config"]
    assert first[0]["synced"] is False
    assert first[1]["graph"]["ssds"]["rabbit-a"][0] == "/kind/chassis0/ssd0"
    assert first[2] == {"type": "flux-config", "exclude": "compute-02", "drainable": None}
    assert reader.hosts == ["compute-01", "compute-02"]
    end = reader.answer({"events": []})
    assert end == [{"type": "journal", "events": [], "synced": True}]
    live = reader.answer({"events": [{"name": "online", "context": {"idset": "1"}}]})
    assert live[0]["synced"] is True and not reader.errors


def test_journal_reader_names_what_is_wrong() -> None:
    reader = JournalReader(fluxion=True, drain_queues=["nosuch"])
    assert reader.answer({"nothing": 1}) == []
    reader.answer({"events": [{"name": "restart", "context": {"nodelist": "compute-01"}}],
                   "R": {"execution": {}}})
    assert reader.errors == [
        "resource.journal answered without an events array",
        "no rabbit ssd vertices in R's scheduling graph: Fluxion is not told which rabbits"
        " are up (was R made with flux dws2jgf?)",
        'rabbit.drain_queues: no node has the property "nosuch": drain queues name node'
        " properties, and no node has any (leave drain_queues out to drain nodes of the whole"
        " instance); no compute node will be drained"]


def test_journal_reader_without_fluxion_sends_no_graph() -> None:
    reader = JournalReader(fluxion=False)
    out = reader.answer({"events": [], "R": R_with_graph()})
    assert [e["type"] for e in out] == ["journal", "flux-config"]


def test_journal_reader_reconfigure() -> None:
    """A config reload: nothing before R came (the R answer then uses the
    new values), the flux-config event from R's properties after."""
    reader = JournalReader(fluxion=False)
    assert reader.reconfigure("compute-01", ["pdebug"]) == []
    restart = {"name": "restart", "context": {"nodelist": "compute-[01-02]"}}
    out = reader.answer({"events": [restart], "R": R_with_graph()})
    assert out[-1] == {"type": "flux-config", "exclude": "compute-01",
                       "drainable": "compute-02"}
    assert reader.reconfigure(None, ["nosuch", "pdebug"]) == [
        {"type": "flux-config", "exclude": None, "drainable": "compute-02"}]
    assert reader.reconfigure(None, None) == [
        {"type": "flux-config", "exclude": None, "drainable": None}]
    assert reader.errors == []
    assert reader.reconfigure(None, ["gone"]) == [
        {"type": "flux-config", "exclude": None, "drainable": ""}]
    assert reader.errors == ['rabbit.drain_queues: no node has the property "gone": drain'
                             " queues name node properties (the nodes' properties: pdebug);"
                             " no compute node will be drained"]


def test_exclude_of() -> None:
    assert exclude_of({"resource": {"exclude": "compute-01"}}) == "compute-01"
    assert exclude_of({"resource": {"exclude": ""}}) is None
    assert exclude_of({"resource": {"exclude": 3}}) is None
    assert exclude_of({}) is None


def test_graph_reloaded_by_load_time() -> None:
    from flux_dws.service.resource_journal import graph_reloaded

    assert graph_reloaded(None, 5, 100.0) == (False, 95.0)  # first poll
    # 10 s later, 15 s up: the same graph (whole seconds: the earliest kept)
    assert graph_reloaded(95.0, 15, 110.0) == (False, 95.0)
    assert graph_reloaded(95.0, 14, 110.0) == (False, 95.0)
    # reloaded 1 s after a poll that said 5 s: 9 s up 10 s later is a
    # larger uptime than before, and still a reload
    assert graph_reloaded(95.0, 9, 110.0) == (True, 101.0)
    # a smaller uptime is one too
    assert graph_reloaded(95.0, 0, 110.0) == (True, 110.0)
