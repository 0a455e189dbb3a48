"""Structural checks of a Fluxion JGF graph written by flux dws2jgf.

check_graph() raises AssertionError naming the first problem:
- every vertex has a unique decimal-string id and metadata with a type and
  a containment path; paths are unique;
- every edge joins existing vertices; every vertex but the root has exactly
  one parent, and its path is the parent's path plus one component;
- the graph is connected from the single cluster root;
- node/storage_node vertices carry the rank of their host in R, their
  children the same rank, and the children's ids match R_lite;
- each rabbit has one chassis whose ssd vertices number ``ssdcount`` and
  whose sizes sum to the rabbit's capacity within rounding (less than one
  GiB per chunk short, never over);
- every compute of the mapping that is in R sits under its rabbit's chassis,
  every other host of R directly under the cluster.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.idset import IDset

GiB = 1 << 30


def r_hosts(R: dict[str, Any]) -> dict[str, tuple[int, dict[str, list[int]]]]:
    """host -> (rank, {child type: ids}) from R."""
    ranks: list[tuple[int, dict[str, list[int]]]] = []
    for entry in R["execution"]["R_lite"]:
        children = {t: list(IDset(ids)) for t, ids in entry["children"].items()}
        ranks += [(r, children) for r in IDset(entry["rank"])]
    ranks.sort(key=lambda x: x[0])
    hosts: list[str] = []
    for hl in R["execution"]["nodelist"]:
        hosts += list(Hostlist(hl))
    assert len(hosts) == len(ranks), "nodelist and R_lite disagree"
    return dict(zip(hosts, ranks))


def check_graph(
    graph: dict[str, Any],
    R: dict[str, Any],
    mapping: dict[str, Any],
    chunks: int,
    excluded: frozenset[str] = frozenset(),
) -> None:
    nodes = graph["graph"]["nodes"]
    edges = graph["graph"]["edges"]
    byid: dict[str, dict[str, Any]] = {}
    paths: set[str] = set()
    for v in nodes:
        vid = v["id"]
        assert isinstance(vid, str) and vid.isdigit(), f"vertex id {vid!r} is not decimal"
        assert vid not in byid, f"duplicate vertex id {vid}"
        md = v["metadata"]
        assert isinstance(md.get("type"), str), f"vertex {vid} has no type"
        path = md["paths"]["containment"]
        assert path not in paths, f"duplicate containment path {path}"
        paths.add(path)
        byid[vid] = md
    parent: dict[str, str] = {}
    kids: dict[str, list[str]] = defaultdict(list)
    for e in edges:
        assert set(e) == {"source", "target"}, f"edge has extra keys: {e}"
        s, t = e["source"], e["target"]
        assert s in byid and t in byid, f"edge {s}->{t} names a missing vertex"
        assert t not in parent, f"vertex {t} has two parents"
        parent[t] = s
        kids[s].append(t)
        ppath = byid[s]["paths"]["containment"]
        cpath = byid[t]["paths"]["containment"]
        assert cpath.startswith(ppath + "/") and "/" not in cpath[len(ppath) + 1:], (
            f"path {cpath} is not directly under {ppath}"
        )
    roots = [v for v in byid if v not in parent]
    assert len(roots) == 1 and byid[roots[0]]["type"] == "cluster", f"roots: {roots}"
    seen, todo = set(), [roots[0]]
    while todo:
        v = todo.pop()
        seen.add(v)
        todo += kids[v]
    assert seen == set(byid), "graph is not connected"

    hosts = r_hosts(R)
    host_vertex: dict[str, str] = {}
    for vid, md in byid.items():
        if md["type"] in ("node", "storage_node"):
            name = md["name"]
            assert name in hosts, f"host {name} is not in R"
            assert name not in host_vertex, f"host {name} appears twice"
            host_vertex[name] = vid
            rank, children = hosts[name]
            assert md["rank"] == rank, f"{name}: rank {md['rank']} != {rank}"
            got: dict[str, list[int]] = defaultdict(list)
            for c in kids[vid]:
                cm = byid[c]
                assert cm["rank"] == rank, f"child of {name} has rank {cm['rank']}"
                got[cm["type"]].append(cm["id"])
            assert dict(got) == {t: ids for t, ids in children.items() if ids}, (
                f"{name}: children {dict(got)} != R {children}"
            )
    assert set(host_vertex) == set(hosts) - excluded, "hosts of R missing from the graph"

    chassis = {md["properties"]["rabbit"]: vid for vid, md in byid.items()
               if md["type"] == "chassis"}
    assert set(chassis) == set(mapping["rabbits"]), "chassis do not match the rabbits"
    for rabbit, info in mapping["rabbits"].items():
        cid = chassis[rabbit]
        ssds = [byid[c] for c in kids[cid] if byid[c]["type"] == "ssd"]
        assert byid[cid]["properties"]["ssdcount"] == str(len(ssds))
        total = sum(s["size"] for s in ssds) * GiB
        assert total <= info["capacity"] < total + chunks * GiB, (
            f"{rabbit}: ssd sizes {total} do not add up to capacity {info['capacity']}"
        )
        for s in ssds:
            assert s["unit"] == "GiB" and s["status"] == 1
        members = {byid[c]["name"] for c in kids[cid] if byid[c]["type"] == "node"}
        expected = {h for h in Hostlist(info["hostlist"]) if h in hosts} - excluded
        assert members == expected, f"{rabbit}: computes {members} != {expected}"
    for name, vid in host_vertex.items():
        under_chassis = byid[parent[vid]]["type"] == "chassis"
        attached = name in mapping["computes"] or name in mapping["rabbits"]
        assert under_chassis == attached, f"{name} is misplaced"
