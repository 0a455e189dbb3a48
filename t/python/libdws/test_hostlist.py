"""Hostlist (RFC 29) through the cffi wrapper, with property tests."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws.hostlist import Hostlist, HostlistError, encode, expand


def test_basics():
    hl = Hostlist("elcap[1001-1004],login1")
    assert len(hl) == 5
    assert hl[0] == "elcap1001" and hl[-1] == "login1"
    assert hl.index("elcap1003") == 2
    assert "login1" in hl and "login2" not in hl and 5 not in hl
    assert str(hl) == "elcap[1001-1004],login1"
    assert repr(hl) == "Hostlist('elcap[1001-1004],login1')"
    assert list(hl[1:3]) == ["elcap1002", "elcap1003"]
    with pytest.raises(IndexError):
        hl[5]
    with pytest.raises(ValueError, match="'nosuch' is not in the hostlist"):
        hl.index("nosuch")


def test_build_from_names_and_copy():
    hl = Hostlist(["n3", "n1", "n2", "n2"])
    assert str(hl) == "n[3,1-2,2]"
    assert str(hl.uniq()) == "n[3,1-2]"
    assert str(hl.sorted()) == "n[1-2,2-3]"
    assert Hostlist(hl) == hl
    assert hl == "n[3,1-2,2]"
    assert hl != Hostlist("n[1-3]")


def test_append_and_set_operations():
    hl = Hostlist("a[1-3]")
    hl.append("b1")
    hl.append(Hostlist("a4"))
    assert str(hl) == "a[1-3],b1,a4"
    assert str(Hostlist("a[1-5]") | "a[4-8]") == "a[1-8]"
    assert str(Hostlist("a[1-5]") & ["a2", "a9"]) == "a2"
    assert str(Hostlist("a[1-5]") - "a[2-3]") == "a[1,4-5]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo[1-3", "unbalanced brackets in 'foo[1-3'"),
        ("foo[3-1]", "invalid range '3-1' in 'foo[3-1]' (end before start)"),
        ("a,,b", "empty host name"),
        ("foo[1]x", "unexpected text after ']'"),
        ("a b", "invalid character in host name 'a b'"),
        ("n[0-99999999]", "hostlist too large"),
    ],
)
def test_bad_hostlists(text, message):
    with pytest.raises(HostlistError, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        Hostlist(text)


def test_bad_names():
    with pytest.raises(HostlistError, match="empty host name"):
        Hostlist([""])
    with pytest.raises(HostlistError, match="must be strings"):
        Hostlist([1])  # type: ignore[list-item]
    with pytest.raises(HostlistError, match="NUL"):
        Hostlist("a\0b")


def test_elcap_scale():
    hl = Hostlist("elcap[1001-12136]")
    assert len(hl) == 11136
    assert hl.index("elcap12136") == 11135
    names = list(hl)
    assert encode(names) == "elcap[1001-12136]"
    assert expand("elcap[1001-1002]") == ["elcap1001", "elcap1002"]


prefixes = st.sampled_from(["n", "elcap", "rz-adams", "x1y", ""])
hosts = st.one_of(
    st.builds(lambda p, n, w: f"{p}{n:0{w}d}", prefixes, st.integers(0, 5000), st.integers(0, 5)),
    st.sampled_from(["login", "mgmt-a", "head"]),
).filter(bool)


@given(st.lists(hosts, max_size=60))
def test_encode_decode_round_trip(names):
    assert list(Hostlist(Hostlist(names).encode())) == names


@given(st.lists(hosts, max_size=40), st.lists(hosts, max_size=40))
def test_set_laws(a, b):
    ha, hb = Hostlist(a), Hostlist(b)
    union, inter, diff = set(ha | hb), set(ha & hb), set(ha - hb)
    assert union == set(a) | set(b)
    assert inter == set(a) & set(b)
    assert diff == set(a) - set(b)
    assert len(list(ha | hb)) == len(union)  # no repeats
    assert list(ha.uniq()) == list(dict.fromkeys(a))


@given(st.lists(hosts, max_size=60))
def test_count_and_index_agree(names):
    hl = Hostlist(names)
    assert len(hl) == len(names)
    for i, name in enumerate(names):
        assert hl[i] == name
        assert hl.index(name) == names.index(name)


@given(st.text(max_size=40))
def test_decode_never_crashes(text):
    try:
        Hostlist(text)
    except HostlistError:
        pass
