"""The exclusivity matrix (pbs-atom-hook-notes.md §1.7, plan case 19): the
scheduler's rule as a pure function, and end to end through the POST body."""

from __future__ import annotations

import pytest
from t.python.pbs.conftest import PBS, begin, hook_namespace

from flux_dws.pbs.harness import SHARING

is_exclusive = hook_namespace()["is_exclusive"]
S: dict[str | None, int | None] = {None: None, **SHARING}
COLUMNS = ("none", "excl", "exclhost", "shared")
# rows: the vnode's sharing; columns: the job's place
MATRIX = {
    None: "FTTF",
    "default_shared": "FTTF",
    "default_excl": "TTTF",
    "default_exclhost": "TTTF",
    "ignore_excl": "FFFF",
    "force_excl": "TTTT",
    "force_exclhost": "TTTT",
}
PLACES = {
    "none": [None, "", "free", "pack", "scatter", "vscatter", "scatter:group=switch",
             "pack:group=excl_sw", "free:group=shared_rack"],
    "excl": ["excl", "scatter:excl", "excl:group=switch", "vscatter:excl"],
    "exclhost": ["exclhost", "pack:exclhost", "vscatter:exclhost:group=switch"],
    "shared": ["shared", "pack:shared", "scatter:shared:group=switch"],
}
CASES = [(sharing, col, place) for sharing in MATRIX for col in range(4)
         for place in PLACES[COLUMNS[col]]]


@pytest.mark.parametrize(("sharing", "col", "place"), CASES)
def test_pure_function(sharing, col, place):
    want = MATRIX[sharing][col] == "T"
    assert is_exclusive(place, S[sharing], PBS) is want


class Place:
    """PBS hands the hook a pbs.place object, not a str."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def test_place_objects_are_read_through_str():
    assert is_exclusive(Place("scatter:excl"), S["default_shared"], PBS) is True
    assert is_exclusive(Place("pack:shared"), S["default_excl"], PBS) is False


def test_sharing_values_compare_as_constants():
    """pbs.vnode_sharing is an int subclass: compare by value."""

    class VnodeSharing(int):
        pass

    assert is_exclusive(None, VnodeSharing(PBS.ND_DEFAULT_EXCL), PBS) is True
    assert is_exclusive("excl", VnodeSharing(PBS.ND_IGNORE_EXCL), PBS) is False


@pytest.mark.parametrize("sharing", list(MATRIX))
@pytest.mark.parametrize("col", range(4))
def test_end_to_end(atom, sharing, col):
    """The POST body's "exclusive" for every cell, the job's place taken
    from Resource_List and the sharing from server().vnode(local node)."""
    place = PLACES[COLUMNS[col]][-1]
    jobid = f"{col}.srv"
    r = begin(atom, jobid=jobid, place=place, sharing=S[sharing], vnodes=("nid7", "nid7[1]"))
    assert r.outcome == "accept"
    assert atom.jobs[jobid]["exclusive"] is (MATRIX[sharing][col] == "T")
