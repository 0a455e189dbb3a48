"""The ssd vertex paths of a job's R (libdws rssd.h) through cffi, on R
that Fluxion 0.54 wrote (t/data/rssd: flux job info JOBID R of jobs on the
kind system, match-format rv1)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from flux_dws.libdws import rssd

DATA = Path(__file__).resolve().parents[2] / "data" / "rssd"


def fixture(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def test_real_R_of_a_rabbit_job() -> None:
    R = fixture("R-xfs-4nodes.json")
    assert rssd.paths(R) == ["/kind/chassis0/ssd33", "/kind/chassis0/ssd34",
                             "/kind/chassis0/ssd35", "/kind/chassis1/ssd35"]
    # the same from its text, as flux job info prints it
    assert rssd.paths((DATA / "R-xfs-4nodes.json").read_text()) == rssd.paths(R)


def test_job_without_rabbit_storage() -> None:
    assert rssd.paths(fixture("R-no-dw.json")) == []


@pytest.mark.parametrize("scheduling", ["absent", None])
def test_R_without_scheduling_graph(scheduling: Any) -> None:
    R = fixture("R-xfs-4nodes.json")
    del R["scheduling"]
    if scheduling is None:
        R["scheduling"] = None
    with pytest.raises(rssd.RssdError,
                       match=r"^R has no scheduling graph: is Fluxion's match-format rv1\?$"):
        rssd.paths(R)


def _with_vertex(metadata: Any) -> dict[str, Any]:
    R = copy.deepcopy(fixture("R-xfs-4nodes.json"))
    R["scheduling"]["graph"]["nodes"][2] = {"id": "99", "metadata": metadata}
    return R


@pytest.mark.parametrize(("metadata", "message"), [
    ({"type": "ssd"}, "R scheduling.graph.nodes[2]: ssd vertex without a containment path"),
    ({"type": "ssd", "paths": {"containment": ["/a"]}},
     "R scheduling.graph.nodes[2]: ssd vertex without a containment path"),
    ({"type": "ssd", "paths": {"containment": "kind/ssd0"}},
     "R scheduling.graph.nodes[2]: ssd vertex without a containment path"),
    ({"paths": {"containment": "/kind/x"}},
     "R scheduling.graph.nodes[2]: a vertex needs metadata with a type"),
    (None, "R scheduling.graph.nodes[2]: a vertex needs metadata with a type"),
])
def test_malformed_vertices(metadata: Any, message: str) -> None:
    with pytest.raises(rssd.RssdError) as exc:
        rssd.paths(_with_vertex(metadata))
    assert str(exc.value) == message


@pytest.mark.parametrize(("R", "message"), [
    ([], "R must be an object"),
    ({"scheduling": {"graph": {}}}, "R scheduling.graph is not a JGF graph (no nodes list)"),
    ({"scheduling": {"graph": {"nodes": {}}}},
     "R scheduling.graph is not a JGF graph (no nodes list)"),
    ('{"scheduling": ', "R: invalid JSON: unexpected token near end of file (line 1, column 15)"),
    ({"x": float("nan")}, "R: invalid JSON: invalid token near 'NaN' (line 1, column 9)"),
    ("{}\0", "string contains a NUL character: '{}\\x00'"),
])
def test_bad_R(R: Any, message: str) -> None:
    with pytest.raises(rssd.RssdError) as exc:
        rssd.paths(R)
    assert str(exc.value) == message
