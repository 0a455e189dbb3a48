"""flux dws2jgf: the graph libdws writes, its options and its errors."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import pytest
from t.python.jgf.conftest import make_R
from t.python.jgf.jgfcheck import check_graph

from flux_dws.libdws.jgf import JGFError, default_cluster_name, write_jgf

GiB = 1 << 30


def render(R: Any, mapping: Any, **kw: Any) -> str:
    with tempfile.TemporaryFile() as f:
        write_jgf(f.fileno(), R, mapping, **kw)
        f.seek(0)
        return f.read().decode()


def graph_of(R: Any, mapping: Any, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(render(R, mapping, **kw))
    return out["scheduling"]


def vertices(graph: dict[str, Any], vtype: str) -> list[dict[str, Any]]:
    return [v["metadata"] for v in graph["graph"]["nodes"] if v["metadata"]["type"] == vtype]


def test_hetchy_graph_is_valid(hetchy):
    R, mapping = hetchy
    g = graph_of(R, mapping, cluster="hetchy")
    check_graph(g, R, mapping, chunks=36)
    chassis = vertices(g, "chassis")
    assert [c["properties"] for c in chassis] == [
        {"rabbit": "hetchy201", "ssdcount": "36"},
        {"rabbit": "hetchy202", "ssdcount": "36"},
    ]
    assert {s["size"] for s in vertices(g, "ssd")} == {30659987046400 // 36 // GiB}


def test_vertex_metadata_matches_the_documented_form(hetchy):
    R, mapping = hetchy
    g = graph_of(R, mapping, cluster="hetchy", chunks=2)
    nodes = g["graph"]["nodes"]
    assert nodes[0] == {"id": "0", "metadata": {
        "type": "cluster", "name": "hetchy", "paths": {"containment": "/hetchy"}}}
    assert nodes[1] == {"id": "1", "metadata": {
        "type": "chassis", "id": 0,
        "properties": {"rabbit": "hetchy201", "ssdcount": "2"},
        "paths": {"containment": "/hetchy/chassis0"}}}
    assert nodes[2]["metadata"] == {
        "type": "ssd", "unit": "GiB", "size": 30659987046400 // 2 // GiB, "status": 1,
        "paths": {"containment": "/hetchy/chassis0/ssd0"}}
    node = nodes[4]["metadata"]
    assert node == {"type": "node", "name": "hetchy1001", "rank": 0,
                    "paths": {"containment": "/hetchy/chassis0/hetchy1001"}}
    assert nodes[5]["metadata"] == {"type": "core", "id": 0, "rank": 0,
                                    "paths": {"containment": "/hetchy/chassis0/hetchy1001/core0"}}
    assert g["graph"]["edges"][0] == {"source": "0", "target": "1"}


def test_R_is_passed_through_with_scheduling(hetchy):
    R, mapping = hetchy
    out = json.loads(render(R, mapping, cluster="hetchy"))
    assert {k: v for k, v in out.items() if k != "scheduling"} == R
    only = json.loads(render(R, mapping, cluster="hetchy", only_sched=True))
    assert only == out["scheduling"]


def test_output_is_deterministic(hetchy):
    R, mapping = hetchy
    assert render(R, mapping, cluster="x") == render(R, mapping, cluster="x")


def test_existing_scheduling_key_is_replaced(hetchy):
    R, mapping = hetchy
    R = dict(R, scheduling={"graph": {"nodes": [], "edges": []}})
    out = json.loads(render(R, mapping, cluster="hetchy"))
    assert len(out["scheduling"]["graph"]["nodes"]) > 1


def test_properties_become_node_properties():
    R = make_R({"hosts": "n[1-4]", "cores": "0", "properties": ["pbatch"]},
               {"hosts": "n[3-4]", "properties": ["debug"]})
    mapping = {"computes": {"n1": "r1", "n2": "r1"},
               "rabbits": {"r1": {"capacity": 100 * GiB, "hostlist": "n[1-2]"}}}
    g = graph_of(R, mapping, cluster="c", chunks=4)
    check_graph(g, R, mapping, chunks=4)
    props = {v["name"]: v.get("properties") for v in vertices(g, "node")}
    assert props == {"n1": {"pbatch": ""}, "n2": {"pbatch": ""},
                     "n3": {"pbatch": "", "debug": ""}, "n4": {"pbatch": "", "debug": ""}}


def test_rabbit_in_R_is_an_exclusive_storage_node(hetchy):
    R = make_R({"hosts": "hetchy[201-202,1001-1018]", "cores": "0-1"})
    _, mapping = hetchy
    g = graph_of(R, mapping, cluster="hetchy")
    check_graph(g, R, mapping, chunks=36)
    sn = vertices(g, "storage_node")
    assert [(v["name"], v["exclusive"]) for v in sn] == [("hetchy201", True),
                                                         ("hetchy202", True)]
    assert sn[0]["paths"]["containment"] == "/hetchy/chassis0/hetchy201"


def test_hosts_without_a_rabbit_hang_off_the_cluster():
    R = make_R({"hosts": "n[1-4]", "cores": "0"})
    mapping = {"computes": {"n2": "r1"},
               "rabbits": {"r1": {"capacity": 10 * GiB, "hostlist": "n2"}}}
    g = graph_of(R, mapping, cluster="c", chunks=1)
    check_graph(g, R, mapping, chunks=1)
    paths = [v["paths"]["containment"] for v in vertices(g, "node")]
    assert paths == ["/c/chassis0/n2", "/c/n1", "/c/n3", "/c/n4"]


def test_exclude_by_rank_and_by_host(hetchy):
    R, mapping = hetchy
    for exclude in ("0-1", "hetchy[1001-1002]"):
        g = graph_of(R, mapping, cluster="h", exclude=exclude)
        check_graph(g, R, mapping, chunks=36, excluded=frozenset({"hetchy1001", "hetchy1002"}))


def test_small_capacity_gives_no_ssd_vertices():
    R = make_R({"hosts": "n1", "cores": "0"})
    mapping = {"computes": {"n1": "r1"},
               "rabbits": {"r1": {"capacity": 3 * GiB, "hostlist": "n1"}}}
    g = graph_of(R, mapping, cluster="c", chunks=4)
    assert vertices(g, "ssd") == []
    assert vertices(g, "chassis")[0]["properties"]["ssdcount"] == "0"


def test_rabbit_with_no_computes():
    R = make_R({"hosts": "n1", "cores": "0"})
    mapping = {"computes": {}, "rabbits": {"r1": {"capacity": 36 * GiB, "hostlist": ""}}}
    g = graph_of(R, mapping, cluster="c")
    check_graph(g, R, mapping, chunks=36)


def test_no_validate_skips_computes_missing_from_R(hetchy):
    _, mapping = hetchy
    R = make_R({"hosts": "hetchy[1001-1010]", "cores": "0"})
    with pytest.raises(JGFError, match="compute node 'hetchy1011' of rabbit 'hetchy202'"
                                       " is not in R"):
        render(R, mapping, cluster="h")
    g = graph_of(R, mapping, cluster="h", validate=False)
    assert len(vertices(g, "node")) == 10


@pytest.mark.parametrize(
    ("R", "mapping", "message"),
    [
        ("{", {"computes": {}, "rabbits": {}}, "R: invalid JSON"),
        ([], {"computes": {}, "rabbits": {}}, "R: must be a JSON object"),
        ({"execution": {}}, {"computes": {}, "rabbits": {}}, "R_lite must be an array"),
        ({"execution": {"R_lite": [{"rank": "0"}]}}, {"computes": {}, "rabbits": {}},
         r"R_lite\[0\] must be an object"),
        ({"execution": {"R_lite": [{"rank": "x", "children": {"core": "0"}}],
                        "nodelist": ["a"]}},
         {"computes": {}, "rabbits": {}}, r"R_lite\[0\].rank"),
        ({"execution": {"R_lite": [{"rank": "0", "children": {"core": "0-"}}],
                        "nodelist": ["a"]}},
         {"computes": {}, "rabbits": {}}, r"R_lite\[0\].children.core"),
        ({"execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0"}}]}},
         {"computes": {}, "rabbits": {}}, "nodelist .* is required"),
        ({"execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0"}}],
                        "nodelist": ["a"]}},
         {"computes": {}, "rabbits": {}}, "names 1 hosts but R_lite has 2 ranks"),
        ({"execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0"}},
                                   {"rank": "1", "children": {"core": "0"}}],
                        "nodelist": ["a,b"]}},
         {"computes": {}, "rabbits": {}}, "rank 1 appears in R_lite entries 0 and 1"),
        ({"execution": {"R_lite": [{"rank": "0-1", "children": {"core": "0"}}],
                        "nodelist": ["a,a"]}},
         {"computes": {}, "rabbits": {}}, "host 'a' appears twice"),
        ({"execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}],
                        "nodelist": ["a"], "properties": {"x|y": "0"}}},
         {"computes": {}, "rabbits": {}}, "invalid property name 'x|y'"),
        ({"execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}],
                        "nodelist": ["a"], "properties": {"p": "5"}}},
         {"computes": {}, "rabbits": {}}, "names rank 5, which is not in R_lite"),
    ],
)
def test_bad_R(R, mapping, message):
    with pytest.raises(JGFError, match=message):
        render(R if isinstance(R, str) else json.dumps(R), mapping, cluster="c")


GOOD_R = {"execution": {"R_lite": [{"rank": "0-2", "children": {"core": "0"}}],
                        "nodelist": ["n[1-3]"]}}


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ("[]", "must be an object with 'computes' and 'rabbits'"),
        ({"computes": {}}, "must be an object with 'computes' and 'rabbits'"),
        ({"computes": {}, "rabbits": {"r": {"hostlist": "n1"}}}, "integer capacity"),
        ({"computes": {}, "rabbits": {"r": {"capacity": -1, "hostlist": "n1"}}},
         "integer capacity"),
        ({"computes": {}, "rabbits": {"r": {"capacity": 1, "hostlist": "n[1-"}}},
         "rabbits.r.hostlist"),
        ({"computes": {"n1": "r", "n2": "s"},
          "rabbits": {"r": {"capacity": 1, "hostlist": "n[1-2]"},
                      "s": {"capacity": 1, "hostlist": "n2"}}},
         "compute node 'n2' is listed under two rabbits: 'r' and 's'"),
        ({"computes": {"n1": "s"}, "rabbits": {"r": {"capacity": 1, "hostlist": "n1"}}},
         "computes.n1 says rabbit 's'"),
        ({"computes": {"n9": "r"}, "rabbits": {"r": {"capacity": 1, "hostlist": "n1"}}},
         "compute node 'n9' is not in R"),
        ({"computes": {"n1": "n2"}, "rabbits": {"n2": {"capacity": 1, "hostlist": "n1"},
                                                 "n1": {"capacity": 1, "hostlist": ""}}},
         "'n1' is both a rabbit and a compute node of rabbit 'n2'"),
    ],
)
def test_bad_mapping(mapping, message):
    with pytest.raises(JGFError, match=message):
        render(GOOD_R, mapping, cluster="c")


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"chunks": 0}, "chunks per rabbit must be at least 1"),
        ({"chunks": -5}, "chunks per rabbit must be at least 1"),
        ({"cluster": ""}, "invalid cluster name ''"),
        ({"cluster": "a/b"}, "invalid cluster name 'a/b'"),
        ({"exclude": "7"}, "exclude: rank 7 is not in R"),
        ({"exclude": "zz1"}, "exclude: host 'zz1' is not in R"),
        ({"exclude": "0-"}, "exclude:"),
    ],
)
def test_bad_options(kw, message):
    mapping = {"computes": {}, "rabbits": {}}
    kw.setdefault("cluster", "c")
    with pytest.raises(JGFError, match=message):
        render(GOOD_R, mapping, **kw)


def test_error_writes_nothing(hetchy):
    R, mapping = hetchy
    mapping = dict(mapping, computes=dict(mapping["computes"], ghost="hetchy201"))
    with tempfile.TemporaryFile() as f:
        with pytest.raises(JGFError):
            write_jgf(f.fileno(), R, mapping, cluster="h")
        assert os.fstat(f.fileno()).st_size == 0


def test_write_error_is_reported(hetchy):
    R, mapping = hetchy
    r, w = os.pipe()
    os.close(r)
    try:
        with pytest.raises(JGFError, match="write error"):
            write_jgf(w, R, mapping, cluster="h")
    finally:
        os.close(w)


@pytest.mark.parametrize(("hostname", "name"), [
    ("elcap1001", "elcap"), ("tuolumne-login3.llnl.gov", "tuolumne-login"), ("1234", "cluster"),
    ("rz-adams5", "rz-adams"),
])
def test_default_cluster_name(hostname, name):
    assert default_cluster_name(hostname) == name


def test_elcap_sixteenth_is_valid():
    """1/16 of El Capitan: 696 computes, 44 rabbits, 96 cores and 4 gpus each."""
    n = 696
    R = make_R({"hosts": f"elcap[1001-{1000 + n}]", "cores": "0-95", "gpus": "0-3"})
    rabbits: dict[str, Any] = {}
    computes: dict[str, str] = {}
    for i in range((n + 15) // 16):
        lo, hi = 1001 + 16 * i, min(1000 + n, 1016 + 16 * i)
        name = f"elcap{201 + i}"
        rabbits[name] = {"capacity": 30659987046400, "hostlist": f"elcap[{lo}-{hi}]"}
        computes.update({f"elcap{h}": name for h in range(lo, hi + 1)})
    mapping = {"computes": computes, "rabbits": rabbits}
    g = graph_of(R, mapping, cluster="elcap")
    check_graph(g, R, mapping, chunks=36)
    assert len(g["graph"]["nodes"]) == 1 + 44 * 37 + n * 101
