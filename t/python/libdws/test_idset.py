"""IDset (RFC 22) through the cffi wrapper, with property tests."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws.errors import DwsError
from flux_dws.libdws.idset import IDset, IDsetError


def test_basics():
    ids = IDset("0-3,7")
    assert len(ids) == 5 and list(ids) == [0, 1, 2, 3, 7]
    assert 7 in ids and 5 not in ids and -1 not in ids and "1" not in ids
    assert ids.encode(brackets=True) == "[0-3,7]"
    assert ids.encode(ranges=False) == "0,1,2,3,7"
    assert (ids.first(), ids.last()) == (0, 7)
    assert (IDset().first(), IDset().last()) == (None, None)
    assert repr(IDset("[1-2]")) == "IDset('1-2')"


def test_mutation_and_ops():
    ids = IDset([5, 1, 2])
    ids.add(3)
    ids.add(10, 12)
    ids.discard(2)
    assert str(ids) == "1,3,5,10-12"
    assert str(IDset("1-5") | "4-9") == "1-9"
    assert str(IDset("1-5") & [2, 9]) == "2"
    assert str(IDset("1-5") - IDset("2-3")) == "1,4-5"
    assert IDset("1-3") == IDset([3, 2, 1])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3-1", "invalid range '3-1' (end before start)"),
        ("x", "invalid id 'x'"),
        (" 1", "invalid id ' 1'"),
        ("1-2-3", "invalid range '1-2-3'"),
        ("-1", "invalid range '-1'"),
        ("1,", "invalid idset '1,': trailing comma"),
        ("1,,2", "invalid idset '1,,2': empty element"),
        ("[1", "invalid idset '[1': unbalanced brackets"),
        ("[[1]]", "invalid idset '[[1]]': unbalanced brackets"),
        ("4294967295", "invalid id '4294967295' (ids are at most 4294967294)"),
        ("0-99999999999", "invalid range '0-99999999999' (ids are at most 4294967294)"),
    ],
)
def test_bad_idsets(text, message):
    with pytest.raises(IDsetError, match=re.escape(message)) as exc:
        IDset(text)
    assert isinstance(exc.value, DwsError)


def test_bad_operands():
    with pytest.raises(IDsetError, match="invalid id 'x'"):
        IDset("1") | "x"
    with pytest.raises(IDsetError, match="invalid id -1"):
        IDset("1") & [-1]


def test_largest_set():
    ids = IDset("0-4294967294")
    assert len(ids) == 2**32 - 1 and ids.last() == 2**32 - 2
    assert ids.encode(brackets=True) == "[0-4294967294]"
    with pytest.raises(IDsetError, match="too large to spell out"):
        ids.encode(ranges=False)
    ids.discard(5)
    assert str(ids) == "0-4,6-4294967294" and 5 not in ids and 2**32 - 2 in ids


@pytest.mark.parametrize("bad", [-1, 2**32 - 1, 1.5, True, "1"])
def test_bad_ids(bad):
    with pytest.raises(IDsetError, match="invalid id"):
        IDset([bad])  # type: ignore[list-item]


def test_bad_range():
    with pytest.raises(IDsetError, match="end before start"):
        IDset().add(5, 2)


ids_strategy = st.sets(st.integers(0, 2000), max_size=80)


@given(ids_strategy)
def test_round_trip(s):
    ids = IDset(s)
    assert list(IDset(ids.encode())) == sorted(s)
    assert list(IDset(ids.encode(brackets=True, ranges=False))) == sorted(s)
    assert len(ids) == len(s)


@given(ids_strategy, ids_strategy)
def test_set_laws(a, b):
    assert set(IDset(a) | IDset(b)) == a | b
    assert set(IDset(a) & IDset(b)) == a & b
    assert set(IDset(a) - IDset(b)) == a - b
    assert IDset(a) | IDset(b) == IDset(b) | IDset(a)
    assert (IDset(a) - IDset(b)) | (IDset(a) & IDset(b)) == IDset(a)


@given(ids_strategy)
def test_queries_agree(s):
    ids = IDset(s)
    assert ids.first() == (min(s) if s else None)
    assert ids.last() == (max(s) if s else None)
    assert all(i in ids for i in s)
    assert all((i in ids) == (i in s) for i in range(0, 2001, 7))
    text = ids.encode(brackets=True)
    assert (text.startswith("[") and text.endswith("]")) == (len(s) > 1)
    assert IDset(text) == ids


@given(st.text(alphabet="0123456789-,[] x", max_size=30))
def test_decode_never_crashes(text):
    try:
        IDset(text)
    except IDsetError:
        pass
