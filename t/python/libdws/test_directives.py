"""#DW directives against the real nnf ruleset: every §2.1/§2.2 text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws.libdws.directives import (
    DirectiveError,
    Ruleset,
    check_maximums,
    nnf_rules,
    parse_capacity,
    parse_directive,
    split_directives,
    validate,
)

XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
# Go's unicode.IsSpace, which DWS' strings.Fields splits on
GO_SPACE = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006" \
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def test_split_forms():
    assert split_directives(XFS) == [XFS]
    assert split_directives(f"{XFS} #DW copy_in source=/a destination=$DW_JOB_scratch/") == [
        XFS, "#DW copy_in source=/a destination=$DW_JOB_scratch/"]
    assert split_directives([XFS, "#DW persistentdw name=pp\n#DW copy_out source=x destination=y"]
                            ) == [XFS, "#DW persistentdw name=pp",
                                  "#DW copy_out source=x destination=y"]
    assert split_directives("") == []


def test_presets():
    presets = {"small": XFS, "pair": [XFS, "#DW persistentdw name=pp"]}
    assert split_directives(" small ", presets) == [XFS]
    assert split_directives(["pair", "#DW copy_in source=a destination=b"], presets) == [
        XFS, "#DW persistentdw name=pp", "#DW copy_in source=a destination=b"]
    assert split_directives("small2", presets) == ["small2"]


@pytest.mark.parametrize("dw", [5, None, {"a": 1}, [XFS, 3], [[XFS]]])
def test_malformed_dw(dw):
    with pytest.raises(DirectiveError, match=r"^Malformed #DW directives: dw must be a string"):
        split_directives(dw)


def test_bad_presets():
    with pytest.raises(DirectiveError, match=r"rabbit\.presets\.x must be a string or a list"):
        split_directives(XFS, {"x": [1]})


def test_parse():
    assert parse_directive("#DW jobdw type=xfs flag a=b=c") == (
        "jobdw", [("type", "xfs"), ("flag", None), ("a", "b=c")])


VALID = [
    [XFS],
    ["#DW jobdw type=lustre capacity=1TiB name=lus requires=copy-offload"],
    ["#DW jobdw type=gfs2 capacity=100GB name=g2 profile=fast-one"],
    ["#DW jobdw type=raw capacity=512MiB name=rr"],
    ["#DW create_persistent type=lustre capacity=10TiB name=mylustre"],
    ["#DW create_persistent type=lustre name=mgt-pool profile=mgt-only"],
    ["#DW destroy_persistent name=mylustre"],
    ["#DW persistentdw name=mylustre requires=user-container-auth,copy-offload"],
    [XFS, "#DW copy_in source=/p/lustre/in destination=$DW_JOB_scratch/in",
     "#DW copy_out source=$DW_JOB_scratch/out destination=/p/lustre/out profile=fast"],
    ["#DW jobdw type=gfs2 capacity=1TB name=my-gfs2", "#DW persistentdw name=some-lustre",
     "#DW container name=my-foo profile=foo DW_JOB_foo_local_storage=my-gfs2"
     " DW_PERSISTENT_foo_persistent_storage=some-lustre"],
]


@pytest.mark.parametrize("dws", VALID)
def test_valid_workflows(dws):
    matches = validate(dws)
    assert [m["index"] for m in matches] == list(range(len(dws)))
    assert all(m["driverLabel"] == "nnf" for m in matches)


def test_watch_states_register_drivers():
    (m,) = validate([XFS])
    assert m["watchStates"] == ["Proposal", "Setup", "PreRun", "PostRun", "Teardown"]
    (m,) = validate(["#DW copy_in source=a destination=b"])
    assert m["watchStates"] == ["Proposal", "DataIn", "Teardown"]


INVALID = [
    (["jobdw type=xfs"], "missing '#DW' prefix in directive 'jobdw type=xfs'"),
    (["#DW"], "invalid directive '#DW'"),
    (["#DW jobdw type=xfs type=raw capacity=1GiB name=aa"],
     "repeated argument 'type' in directive '#DW jobdw type=xfs type=raw capacity=1GiB name=aa'"),
    (["#DW foo"], "invalid directive '#DW foo'"),
    (["#DW jobdw type=zfs capacity=1GiB name=aa"], "argument 'type' invalid string 'zfs'"),
    (["#DW jobdw type=xfs capacity=1 name=aa"], "argument 'capacity' invalid string '1'"),
    (["#DW jobdw type=xfs capacity=1.5GiB name=aa"], "argument 'capacity' invalid string '1.5GiB'"),
    (["#DW jobdw type=xfs capacity=1GiB name=a"], "argument 'name' invalid string 'a'"),
    (["#DW jobdw type=xfs capacity=1GiB name=Ab"], "argument 'name' invalid string 'Ab'"),
    (["#DW jobdw type=xfs capacity=1GiB"], "missing required argument '^name$'"),
    (["#DW jobdw type=xfs name=aa"], "missing required argument '^capacity$'"),
    (["#DW jobdw capacity=1GiB name=aa"], "missing required argument '^type$'"),
    (["#DW jobdw type=xfs capacity=1GiB name=aa size=3"], "unsupported argument 'size'"),
    (["#DW jobdw type capacity=1GiB name=aa"], "argument 'type' requires value"),
    (["#DW jobdw type=xfs capacity=1GiB name=aa requires=copy-offload,x"],
     "argument 'requires' invalid string 'x' in list 'copy-offload,x'"),
    (["#DW jobdw type=xfs capacity=1GiB name=aa requires=copy-offload,copy-offload"],
     "argument 'requires' word 'copy-offload' repeated in list 'copy-offload,copy-offload'"),
    ([XFS, XFS], "value 'scratch' must be unique within 'jobdw_name'"),
    (["#DW create_persistent capacity=1GiB name=aa"], "missing required argument '^type$'"),
    (["#DW copy_in source=a"], "missing required argument '^destination$'"),
    (["#DW container name=cc"], "missing required argument '^profile$'"),
    (["#DW container name=cc profile=pp DW_JOB_X=y"], "unsupported argument 'DW_JOB_X'"),
    (["#DW persistentdw"], "missing required argument '^name$'"),
]


@pytest.mark.parametrize(("dws", "message"), INVALID)
def test_invalid_workflows(dws, message):
    with pytest.raises(DirectiveError) as exc:
        validate(dws)
    assert str(exc.value) == message


def test_empty_ruleset():
    with pytest.raises(DirectiveError, match=r"^unable to find ruleset in namespace: dws-system$"):
        Ruleset([]).validate([XFS])


def test_site_ruleset_and_rule_errors():
    rules = nnf_rules()
    rules["spec"] = [r for r in rules["spec"] if r["command"] != "container"]
    with pytest.raises(DirectiveError, match="invalid directive '#DW container"):
        Ruleset(rules).validate(["#DW container name=cc profile=pp"])
    with pytest.raises(DirectiveError, match="unsupported regular expression"):
        Ruleset({"spec": [{"command": "x", "ruleDefs": [{"key": "(?i)k", "type": "string"}]}]})
    with pytest.raises(DirectiveError, match="needs a command"):
        Ruleset([{"ruleDefs": []}])


@pytest.mark.parametrize(("text", "value"), [
    ("10GiB", 10 << 30), ("1TB", 10**12), ("3TiB", 3 << 40), ("100", 100), ("2.5KiB", 2560)])
def test_capacity(text, value):
    assert parse_capacity(text) == value


@pytest.mark.parametrize("text", ["", "GiB", "ten", "10 GiB "])
def test_bad_capacity(text):
    with pytest.raises(DirectiveError, match="invalid capacity string"):
        parse_capacity(text)


def test_maximums():
    dws = [XFS, "#DW jobdw type=xfs capacity=5GiB name=two",
           "#DW jobdw type=lustre capacity=100GiB name=lus"]
    check_maximums(dws, 4, {"xfs": 15, "lustre": 25})
    with pytest.raises(DirectiveError) as exc:
        check_maximums(dws, 4, {"xfs": 14})
    assert str(exc.value) == ("Requested a total of 15 GiB of xfs storage per node but max is"
                              " 14 GiB per node")
    with pytest.raises(DirectiveError, match="of lustre storage per node but max is 24 GiB"):
        check_maximums(dws, 4, {"lustre": 24})
    check_maximums(dws, 4, None)
    with pytest.raises(DirectiveError, match="unknown file system type"):
        check_maximums(dws, 4, {"zfs": 1})


directive_text = st.text(
    alphabet=st.sampled_from(list("#DW jobdwtypexfscapacity=1GiBnamelustre,-_$/\n\t")),
    max_size=80)


@given(st.lists(directive_text, max_size=4))
def test_validator_never_crashes(dws):
    try:
        validate(dws)
    except DirectiveError as exc:
        assert str(exc)


@given(st.one_of(st.text(max_size=60), st.lists(st.text(max_size=30), max_size=3),
                 st.integers(), st.none()))
def test_splitter_never_crashes(dw):
    try:
        out = split_directives(dw)
    except DirectiveError as exc:
        assert str(exc)
        return
    assert all(isinstance(d, str) and d.strip(GO_SPACE) == d and d for d in out)
