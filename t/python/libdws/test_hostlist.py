"""Hostlist (RFC 29) through the cffi wrapper, with property tests."""

from __future__ import annotations

import re
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws.errors import DwsError
from flux_dws.libdws.hostlist import Hostlist, HostlistError, encode, expand


def test_basics():
    hl = Hostlist("elcap[1001-1004],login1")
    assert len(hl) == 5
    assert hl[0] == "elcap1001" and hl[-1] == "login1"
    assert hl.index("elcap1003") == 2
    assert "login1" in hl and "login2" not in hl and 5 not in hl and "a\0b" not in hl
    assert str(hl) == "elcap[1001-1004],login1"
    assert repr(hl) == "Hostlist('elcap[1001-1004],login1')"
    assert list(hl[1:3]) == ["elcap1002", "elcap1003"]
    with pytest.raises(IndexError):
        hl[5]
    with pytest.raises(IndexError):
        hl[-6]
    with pytest.raises(ValueError, match="'nosuch' is not in the hostlist"):
        hl.index("nosuch")
    assert Hostlist() == "" and len(Hostlist("")) == 0 and list(Hostlist()) == []


def test_build_from_names_and_copy():
    hl = Hostlist(["n3", "n1", "n2", "n2"])
    assert str(hl) == "n[3,1-2,2]"
    assert str(hl.uniq()) == "n[3,1-2]"
    assert str(hl.sorted()) == "n[1-2,2-3]"
    assert Hostlist(hl) == hl
    assert hl == "n[3,1-2,2]"
    assert hl != Hostlist("n[1-3]")
    assert hl != 3
    # a name that could read as syntax takes the checked path
    with pytest.raises(HostlistError, match="invalid character in host name 'a b'"):
        Hostlist(["x1", "a b"])
    with pytest.raises(HostlistError, match="invalid character in host name 'a,b'"):
        Hostlist(["x1", "a,b"])


def test_append_and_set_operations():
    hl = Hostlist("a[1-3]")
    assert hl.index("a3") == 2
    hl.append("b1")
    hl.append(Hostlist("a4"))
    assert str(hl) == "a[1-3],b1,a4"
    assert hl.index("a4") == 4 and hl[4] == "a4"
    with pytest.raises(HostlistError, match="unbalanced brackets"):
        hl.append("c[1-")
    assert str(hl) == "a[1-3],b1,a4"
    assert str(Hostlist("a[1-5]") | "a[4-8]") == "a[1-8]"
    assert str(Hostlist("a[1-5]") & ["a2", "a9"]) == "a2"
    assert str(Hostlist("a[1-5]") - "a[2-3]") == "a[1,4-5]"
    assert str(Hostlist("a[1-5]").union("b1")) == "a[1-5],b1"
    assert str(Hostlist("a[1-5]").intersection("a[5-9]")) == "a5"
    assert str(Hostlist("a[1-5]").difference(Hostlist("a[1-5]"))) == ""


@pytest.mark.parametrize(
    ("text", "names"),
    [  # RFC 29's test vectors
        ("", []),
        ("foox,fooy,fooz", ["foox", "fooy", "fooz"]),
        ("[1-3,5-6]", ["1", "2", "3", "5", "6"]),
        ("foo[1-5]", ["foo1", "foo2", "foo3", "foo4", "foo5"]),
        ("foo[0-4]-eth2", [f"foo{i}-eth2" for i in range(5)]),
        ("foo1,foo1,foo1", ["foo1"] * 3),
        ("[00-02]", ["00", "01", "02"]),
        ("[00-2]", ["00", "01", "02"]),
        ("foo[1,1,2,1]", ["foo1", "foo1", "foo2", "foo1"]),
    ],
)
def test_rfc29_vectors(text, names):
    assert list(Hostlist(text)) == names
    assert list(Hostlist(Hostlist(text).encode())) == names


@pytest.mark.parametrize(
    ("text", "encoded"),
    [  # flux-core's codec vectors (less the separators it skips)
        ("foo-1a-2,foo-1a-3", "foo-1a-[2-3]"),
        ("foo1,foo2,foo3,fooi", "foo[1-3],fooi"),
        ("foo1,fooi,foo2,foo3", "foo1,fooi,foo[2-3]"),
        ("fooi,foo1,foo2,foo3,foo5,foo7,foo8", "fooi,foo[1-3,5,7-8]"),
        ("1,2,3,4,5,9", "[1-5,9]"),
        ("foo[1,3]-bar", "foo1-bar,foo3-bar"),
        ("[00-03]p", "00p,01p,02p,03p"),
        ("p[00-3]p", "p00p,p01p,p02p,p03p"),
        ("rzadams[01-08]", "rzadams[01-08]"),
        ("n[98-100]", "n[98-100]"),
    ],
)
def test_encode(text, encoded):
    assert Hostlist(text).encode() == encoded


@pytest.mark.parametrize(
    ("text", "host", "pos"),
    [  # flux-core's hostlist_find vectors
        ("tst0", "tst", -1),
        ("tst0,tst", "tst", 1),
        ("foo[1-5]-eth0", "foo3-eth0", 2),
        ("foo[1-5]", "foo3-eth0", -1),
        ("[0-5]", "3", 3),
        ("[0-5]i", "0", -1),
        ("i[0-5]", "i00", -1),
        ("i[00-05]", "i04", 4),
        ("f00[7-8,10]", "f0010", 2),
        ("f0010001[07-08]", "f001000108", 1),
        ("corn1-p2", "corn2", -1),
    ],
)
def test_find(text, host, pos):
    for hl in (Hostlist(text), Hostlist("q1,z1,q3,z3,q5,z5,q7,z7,q9," + text)):
        shift = len(hl) - len(Hostlist(text))
        if pos < 0:
            assert host not in hl
        else:
            assert hl.index(host) == pos + shift


@pytest.mark.parametrize(
    ("text", "sorted_"),
    [  # flux-core's sort vectors
        ("foo,f,bar,baz", "bar,baz,f,foo"),
        ("[5-6],[3-4],[1-2,0]", "[0-6]"),
        ("[0-20],45,12,015", "[0-12,12-20,45,015]"),
        ("bar1,bar2,foo1,foo,foo", "bar[1-2],foo,foo,foo1"),
        ("foo[0-3],foo[0-3]", "foo[0,0-1,1-2,2-3,3]"),
    ],
)
def test_sort(text, sorted_):
    assert str(Hostlist(text).sorted()) == sorted_


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo[1-3", "unbalanced brackets in 'foo[1-3'"),
        ("foo]", "unbalanced brackets in 'foo]'"),
        ("foo[[1]]", "unbalanced brackets in 'foo[[1]]'"),
        ("a[1]-[2]", "more than one bracketed range in 'a[1]-[2]'"),
        ("foo[3-1]", "invalid range '3-1' in 'foo[3-1]' (end before start)"),
        ("foo[x-y]", "invalid range 'x-y' in 'foo[x-y]' (not a number)"),
        ("foo[0-1,2--5]", "invalid range '2--5' in 'foo[0-1,2--5]' (not a number)"),
        ("foo[1-]", "invalid range '1-' in 'foo[1-]' (missing number)"),
        ("foo[1-05]", "invalid range '1-05' in 'foo[1-05]' (zero padding of '1' and '05' differs)"),
        ("n[1-1234567890123456789]", "(more than 18 digits)"),
        ("foo[]", "empty brackets in 'foo[]'"),
        ("[]", "empty brackets in '[]'"),
        ("foo[1,,2]", "empty range in brackets of 'foo[1,,2]'"),
        ("foo[1,]", "trailing comma in brackets of 'foo[1,]'"),
        ("a,,b", "empty host name in 'a,,b'"),
        (",a", "empty host name in ',a'"),
        ("a,", "trailing comma in 'a,'"),
        ("a b", "invalid character in host name 'a b'"),
        ("a,b\tc", "invalid character in host name 'b\tc'"),
        ("é\x7f", "invalid character in host name"),
        ("n[0-99999999]", "hostlist too large (more than 16777216 hosts)"),
    ],
)
def test_bad_hostlists(text, message):
    with pytest.raises(HostlistError, match=re.escape(message)) as exc:
        Hostlist(text)
    assert isinstance(exc.value, DwsError) and isinstance(exc.value, ValueError)


def test_bad_names():
    with pytest.raises(HostlistError, match="empty host name"):
        Hostlist([""])
    with pytest.raises(HostlistError, match="must be strings"):
        Hostlist([1])  # type: ignore[list-item]
    with pytest.raises(HostlistError, match="NUL"):
        Hostlist("a\0b")
    with pytest.raises(HostlistError, match="NUL"):
        Hostlist(["a", "b\0"])


def test_long_and_non_ascii_names():
    name = "h" * 3000 + "7"
    hl = Hostlist(f"{'h' * 3000}[7-8]")
    assert hl[0] == name and hl[1].endswith("8") and hl.index(name) == 0
    assert "nœud1" not in hl
    with pytest.raises(HostlistError, match="invalid character in host name 'nœud\\[1-2\\]'"):
        Hostlist("nœud[1-2]")
    with pytest.raises(HostlistError, match="invalid character in host name 'nœud1'"):
        Hostlist(["n1", "nœud1"])


def test_elcap_scale():
    hl = Hostlist("elcap[1001-12136]")
    assert len(hl) == 11136
    assert hl.index("elcap12136") == 11135
    names = list(hl)
    assert encode(names) == "elcap[1001-12136]"
    assert expand("elcap[1001-1002]") == ["elcap1001", "elcap1002"]
    # a list of 5,568 ranges (every other host, then the rest): the
    # indexed lookup agrees with the positions
    shuffled = Hostlist(names[::2] + names[1::2])
    assert all(shuffled.index(n) == i for i, n in enumerate(shuffled))
    assert hl == shuffled.sorted()


def test_concurrent_lookups():
    names = [f"n{i}" for i in range(0, 4000, 2)]
    hl = Hostlist(names)
    errors: list[str] = []

    def work():
        for i, n in enumerate(names):
            if hl.index(n) != i:
                errors.append(n)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


prefixes = st.sampled_from(["n", "elcap", "rz-adams", "x1y", "", "n1"])
suffixes = st.sampled_from(["", "", "", "-eth0", "p"])
hosts = st.one_of(
    st.builds(
        lambda p, n, w, s: f"{p}{n:0{w}d}{s}",
        prefixes,
        st.integers(0, 5000),
        st.integers(0, 5),
        suffixes,
    ),
    st.sampled_from(["login", "mgmt-a", "head"]),
).filter(bool)


@given(st.lists(hosts, max_size=60))
def test_encode_decode_round_trip(names):
    text = Hostlist(names).encode()
    assert list(Hostlist(text)) == names
    assert Hostlist(text).encode() == text


@given(st.lists(hosts, max_size=40), st.lists(hosts, max_size=40))
def test_set_laws(a, b):
    ha, hb = Hostlist(a), Hostlist(b)
    union, inter, diff = list(ha | hb), list(ha & hb), list(ha - hb)
    assert union == list(dict.fromkeys(a + b))
    assert inter == [h for h in dict.fromkeys(a) if h in set(b)]
    assert diff == [h for h in dict.fromkeys(a) if h not in set(b)]
    assert set(ha | hb) == set(hb | ha)
    assert set(ha & hb) == set(hb & ha)
    assert set((ha - hb) | (ha & hb)) == set(a)
    assert list(ha.uniq()) == list(dict.fromkeys(a))


@given(st.lists(hosts, max_size=60))
def test_count_and_index_agree(names):
    hl = Hostlist(names)
    assert len(hl) == len(names)
    for i, name in enumerate(names):
        assert hl[i] == name
        assert hl.index(name) == names.index(name)
        assert name in hl


@given(st.lists(hosts, max_size=60))
def test_sorted_is_an_ordered_permutation(names):
    out = list(Hostlist(names).sorted())
    assert sorted(out) == sorted(names)
    again = list(Hostlist(out).sorted())
    assert again == out


@given(st.text(max_size=40))
def test_decode_never_crashes(text):
    try:
        hl = Hostlist(text)
    except HostlistError:
        return
    assert list(Hostlist(hl.encode())) == list(hl)
