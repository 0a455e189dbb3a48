"""The [rabbit] table: rabbitconf.parse (libdws) and rabbitconf.load_toml."""

from __future__ import annotations

import datetime
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws.errors import DwsError
from flux_dws.libdws import rabbitconf
from flux_dws.libdws.rabbitconf import KEYS, ConfigError, load_toml, parse

DEFAULTS = {
    "datain_stall_timeout": 0.0,
    "drain_compute_nodes": True,
    "drain_queues": None,
    "dws_api_version": None,
    "kubeconfig": None,
    "mapping": None,
    "min_allocation_size": 4,
    "nnf_api_version": None,
    "lustre": {"max_rabbits": 0, "mdts": 1, "min_rabbits": 1, "osts_per_mdt": 0,
               "spread": False, "whole_rabbit_gib": 0},
    "policy": {"maximums": {}},
    "postrun_timeout": 0.0,
    "prerun_timeout": 0.0,
    "presets": {},
    "prestage": "never",
    "prestage_max_gib": 0,
    "prestage_max_jobs": 0,
    "prestage_node_wait": 3600.0,
    "prolog_timeout": 1800.0,
    "release_computes": "after-teardown",
    "restrict_persistent_creation": True,
    "save_datamovements": 0,
    "setup_timeout": 0.0,
    "soft_drain": True,
    "tc_timeout": 10.0,
    "teardown_after": 0.0,
}
SECONDS = ["tc_timeout", "setup_timeout", "prerun_timeout", "postrun_timeout", "teardown_after"]
TIMES = [*SECONDS, "prolog_timeout"]
BOOLS = ["drain_compute_nodes", "soft_drain", "restrict_persistent_creation"]
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def bad(table, message):
    with pytest.raises(ConfigError) as info:
        parse(table)
    assert str(info.value) == message
    return info.value


def test_defaults():
    assert parse(None) == DEFAULTS
    assert parse({}) == DEFAULTS
    assert list(parse({})) == list(KEYS) == sorted(DEFAULTS)
    for k in TIMES:
        assert type(parse({})[k]) is float
    # the normalised table is a valid input, and null means "not set"
    assert parse(DEFAULTS) == DEFAULTS
    assert parse({k: None for k in KEYS}) == DEFAULTS


def test_error_class():
    exc = bad({"frobnicate": 1}, f"rabbit.frobnicate: unknown key (valid keys: {', '.join(KEYS)})")
    assert isinstance(exc, DwsError)


@pytest.mark.parametrize("key", SECONDS)
@pytest.mark.parametrize(("value", "expect"), [(0, 0.0), (30, 30.0), (2.5, 2.5), (-0.0, 0.0),
                                               (1e300, 1e300)])
def test_seconds_good(key, value, expect):
    out = parse({key: value})[key]
    assert out == expect and type(out) is float


@pytest.mark.parametrize("key", SECONDS)
@pytest.mark.parametrize(("value", "shown"), [
    ("ten", '"ten"'), ("10", '"10"'), ("30m", '"30m"'), (True, "true"), (False, "false"),
    (-1, "-1"), (-0.5, "-0.5"), ([10], "[10]"), ({}, "{}")])
def test_seconds_bad(key, value, shown):
    bad({key: value}, f"rabbit.{key}: must be a number of seconds >= 0, got {shown}")


@pytest.mark.parametrize("key", [*TIMES, "save_datamovements"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite(key, value):
    bad({key: value}, f"rabbit.{key}: must be a finite number, got {value}")


@pytest.mark.parametrize(("value", "seconds"), [
    (0, 0.0), (600, 600.0), (12.5, 12.5), ("30m", 1800.0), ("1.5h", 5400.0), ("90s", 90.0),
    ("2d", 172800.0), ("1500ms", 1.5), ("45", 45.0), ("0", 0.0), (".5m", 30.0),
    ("1e2s", 100.0)])
def test_prolog_timeout_fsd(value, seconds):
    assert parse({"prolog_timeout": value})["prolog_timeout"] == seconds


@pytest.mark.parametrize("value", ["ten", "", "-5m", "+5m", " 5m", "5m ", "5 m", "5M", "5min",
                                   "5w", "m", "0x10", "nan", "1e999", -1, True, ["30m"]])
def test_prolog_timeout_bad(value):
    bad({"prolog_timeout": value},
        "rabbit.prolog_timeout: must be a number of seconds >= 0 or a Flux Standard Duration"
        ' (a number with an optional suffix ms, s, m, h or d, e.g. "30m"), got '
        + json.dumps(value))


def test_prolog_timeout_inf():
    bad({"prolog_timeout": "inf"},
        'rabbit.prolog_timeout: must be finite (0 means no timeout), got "inf"')


@pytest.mark.parametrize("key", BOOLS)
def test_bools(key):
    assert parse({key: False})[key] is False
    assert parse({key: True})[key] is True
    for v, shown in [(1, "1"), (0.0, "0.0"), ("true", '"true"'), ([True], "[true]")]:
        bad({key: v}, f"rabbit.{key}: must be true or false, got {shown}")


def test_integers():
    assert parse({"save_datamovements": 25})["save_datamovements"] == 25
    for v, shown in [(-1, "-1"), (2.0, "2.0"), (2.5, "2.5"), (True, "true"), ("5", '"5"')]:
        bad({"save_datamovements": v},
            f"rabbit.save_datamovements: must be an integer >= 0, got {shown}")
    assert parse({"min_allocation_size": 16})["min_allocation_size"] == 16
    for v, shown in [(0, "0"), (-4, "-4"), (4.0, "4.0"), ("4GiB", '"4GiB"'), (False, "false")]:
        bad({"min_allocation_size": v},
            f"rabbit.min_allocation_size: must be an integer number of GiB >= 1, got {shown}")
    bad({"min_allocation_size": 2**33},
        "rabbit.min_allocation_size: must be at most 8589934591 GiB (the size in bytes must"
        " fit in 64 bits), got 8589934592")
    bad({"save_datamovements": 2**64},
        f"rabbit.save_datamovements: integer out of range, got {2**64}")


@pytest.mark.parametrize("key", ["mapping", "kubeconfig"])
def test_paths(key):
    assert parse({key: "/etc/flux/x"})[key] == "/etc/flux/x"
    for v, shown in [("", '""'), (5, "5"), (["a"], '["a"]')]:
        bad({key: v}, f"rabbit.{key}: must be a file name (non-empty string), got {shown}")


@pytest.mark.parametrize("key", ["dws_api_version", "nnf_api_version"])
def test_api_versions(key):
    for v in ["v1", "v1alpha7", "v2beta1", "v1alpha11"]:
        assert parse({key: v})[key] == v
    for v in ["", "1alpha7", "v", "v1alpha", "V1", "dataworkflowservices.github.io/v1alpha7", 7]:
        bad({key: v}, f'rabbit.{key}: must be a Kubernetes API version such as "v1alpha7" (or'
                      f" be left out to discover it), got {json.dumps(v)}")


def test_drain_queues():
    assert parse({"drain_queues": ["pbatch", "pdebug"]})["drain_queues"] == ["pbatch", "pdebug"]
    assert parse({"drain_queues": ("pbatch",)})["drain_queues"] == ["pbatch"]
    for v in [[], "pbatch"]:
        bad({"drain_queues": v},
            "rabbit.drain_queues: must be a non-empty list of queue names (leave it out to drain"
            f" nodes of every queue), got {json.dumps(v)}")
    bad({"drain_queues": ["a", 5]},
        "rabbit.drain_queues[1]: must be a queue name (non-empty string), got 5")


def test_release_computes(tmp_path):
    assert parse({})["release_computes"] == "after-teardown"
    for v in ["after-unmount", "after-teardown"]:
        assert parse({"release_computes": v})["release_computes"] == v
    for v in ["after_unmount", "After-Unmount", "", "unmount", True, 1, ["after-unmount"]]:
        bad({"release_computes": v},
            'rabbit.release_computes: must be "after-unmount" or "after-teardown",'
            f" got {json.dumps(v)}")
    # as a site writes it
    f = write(tmp_path / "rabbit.toml", '[rabbit]\nrelease_computes = "after-unmount"\n')
    assert parse(load_toml(f))["release_computes"] == "after-unmount"
    f = write(tmp_path / "rabbit.toml", "[rabbit]\nrelease_computes = true\n")
    bad(load_toml(f), 'rabbit.release_computes: must be "after-unmount" or "after-teardown",'
                      " got true")


def test_policy():
    assert parse({"policy": {}})["policy"] == {"maximums": {}}
    m = {"xfs": 1, "gfs2": 2, "raw": 3, "lustre": 4}
    assert parse({"policy": {"maximums": m}})["policy"] == {"maximums": m}
    bad({"policy": 5}, "rabbit.policy: must be a table holding maximums, got 5")
    bad({"policy": {"maximum": {}}},
        "rabbit.policy.maximum: unknown key (rabbit.policy has only maximums)")
    bad({"policy": {"maximums": {"zfs": 1}}},
        "rabbit.policy.maximums.zfs: unknown file system type (expected xfs, gfs2, raw or"
        " lustre)")
    bad({"policy": {"maximums": {"xfs": 1.5}}},
        "rabbit.policy.maximums.xfs must be a non-negative integer (GiB per node)")


def test_presets():
    presets = {"small": XFS, "pair": [XFS, "#DW persistentdw name=pp"], "my preset": XFS}
    assert parse({"presets": presets})["presets"] == presets
    bad({"presets": []}, "rabbit.presets: must be a table of name = #DW directive(s), got []")
    bad({"presets": {"p": 3}},
        "rabbit.presets.p: must be a string of #DW directives or a list of them, got 3")
    bad({"presets": {"p": [XFS, 3]}},
        "rabbit.presets.p[1]: must be a string of #DW directives, got 3")
    bad({"presets": {"p": []}}, "rabbit.presets.p: must hold at least one #DW directive, got []")
    bad({"presets": {"p": "jobdw"}},
        "rabbit.presets.p: missing '#DW' prefix in directive 'jobdw'")
    bad({"presets": {"p q": "#DW jobdw a=1 a=2"}},
        "rabbit.presets.\"p q\": repeated argument 'a' in directive '#DW jobdw a=1 a=2'")
    bad({"presets": {" p": XFS}},
        'rabbit.presets." p": a preset name must be non-empty without leading or trailing'
        " white space (no dw attribute could name it)")


@pytest.mark.parametrize(("table", "expect"), [
    ({"restrict_persistent": False}, False),
    ({"restrict_persistent": True, "restrict_persistent_creation": True}, True),
    ({"restrict_persistent": None, "restrict_persistent_creation": False}, False),
    ({"restrict_persistent_creation": False}, False),
])
def test_restrict_alias(table, expect):
    out = parse(table)
    assert out["restrict_persistent_creation"] is expect
    assert "restrict_persistent" not in out


def test_restrict_alias_conflict():
    bad({"restrict_persistent": False, "restrict_persistent_creation": True},
        "rabbit.restrict_persistent: conflicts with rabbit.restrict_persistent_creation = true"
        " (it is flux-coral2's name for the same setting: keep only"
        " restrict_persistent_creation), got false")


@pytest.mark.parametrize(("key", "meant"), [
    ("restrict_persistant", "restrict_persistent_creation"),
    ("restrict-persistent-creation", "restrict_persistent_creation"),
    ("tc-timeout", "tc_timeout"), ("preset", "presets"), ("maximums", "policy.maximums"),
    ("min_allocation", "min_allocation_size"), ("Soft_Drain", "soft_drain")])
def test_unknown_near_miss(key, meant):
    bad({key: 1}, f"rabbit.{key}: unknown key (did you mean {meant}?)")


def test_unknown_lists_keys():
    valid = ", ".join(KEYS)
    bad({"frobnicate": 1}, f"rabbit.frobnicate: unknown key (valid keys: {valid})")
    bad({"a b": 1}, f'rabbit."a b": unknown key (valid keys: {valid})')
    # reported even when its value is one JSON cannot carry
    bad({"tc_timeout": math.nan, "frobnicate": math.nan},
        f"rabbit.frobnicate: unknown key (valid keys: {valid})")


@pytest.mark.parametrize(("table", "message"), [
    (5, "rabbit: must be a table, got 5"),
    ([], "rabbit: must be a table, got []"),
    (math.nan, "rabbit: must be a table, got nan"),
    ({1: 2}, "rabbit: table keys must be strings, got 1"),
    ({"a\0": 1}, 'rabbit."a\\u0000": a key must not contain a NUL character'),
    ({"mapping": "a\0b"}, "rabbit.mapping: contains a NUL character, got 'a\\x00b'"),
    ({"mapping": "\udc80"}, "rabbit.mapping: not valid Unicode text, got '\\udc80'"),
    ({"mapping": {1, 2}}, "rabbit.mapping: unsupported value of type set"),
    ({"mapping": datetime.date(2024, 1, 2)},
     "rabbit.mapping: a date or time is not a valid value, got 2024-01-02"),
])
def test_python_values(table, message):
    bad(table, message)


# ---- property tests ----

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
NEAR_VALID = st.dictionaries(
    st.sampled_from([*KEYS, "restrict_persistent"]) | st.text(max_size=12),
    JSON | st.sampled_from(["30m", "1.5h", "v1alpha7", XFS, ["q"], {"maximums": {"xfs": 1}},
                            {"p": XFS}, 0, 4, 1.5, True, False]),
    max_size=6,
)


@given(JSON)
def test_any_json_value(value):
    try:
        out = parse(value)
    except ConfigError as exc:
        assert re.match(r"^rabbit[.:\[ ]", str(exc)), str(exc)
        return
    assert isinstance(out, dict) and list(out) == list(KEYS)


@given(NEAR_VALID)
def test_near_valid_tables(table):
    try:
        out = parse(table)
    except ConfigError as exc:
        assert str(exc).startswith("rabbit")
        return
    assert list(out) == list(KEYS)
    assert parse(out) == out  # idempotent
    for k in TIMES:
        assert type(out[k]) is float and out[k] >= 0


# ---- load_toml ----

def write(path, text):
    path.write_text(text)
    return path


def test_load_file(tmp_path):
    f = write(tmp_path / "rabbit.toml", '[rabbit]\nsetup_timeout = 600\nprolog_timeout = "30m"\n'
                                        '[rabbit.policy.maximums]\nxfs = 10\n')
    table = load_toml(f)
    assert table == {"setup_timeout": 600, "prolog_timeout": "30m",
                     "policy": {"maximums": {"xfs": 10}}}
    conf = parse(table)
    assert conf["setup_timeout"] == 600.0 and conf["prolog_timeout"] == 1800.0
    assert load_toml(str(f)) == table


def test_load_no_rabbit(tmp_path):
    assert load_toml(write(tmp_path / "a.toml", "[resource]\nnoverify = true\n")) == {}
    assert load_toml(write(tmp_path / "empty.toml", "")) == {}


def test_load_directory_merges(tmp_path):
    d = tmp_path / "conf.d"
    d.mkdir()
    write(d / "10-rabbit.toml", "[rabbit]\ntc_timeout = 5\nsetup_timeout = 1\n")
    write(d / "20-presets.toml", '[rabbit]\nsetup_timeout = 2\n[rabbit.presets]\ns = "#DW a x=1"\n')
    write(d / "30-other.toml", "[resource]\nnoverify = true\n")
    write(d / "README", "not toml at all [[[")
    write(d / ".hidden.toml", "not toml at all [[[")
    write(d / "x.toml.bak", "not toml at all [[[")
    assert load_toml(d) == {"tc_timeout": 5, "setup_timeout": 2,
                            "presets": {"s": "#DW a x=1"}}
    empty = tmp_path / "empty.d"
    empty.mkdir()
    assert load_toml(empty) == {}


def test_load_json_file(tmp_path):
    f = write(tmp_path / "c.json", json.dumps({"rabbit": {"soft_drain": False}}))
    assert load_toml(f) == {"soft_drain": False}
    with pytest.raises(ConfigError, match=r"c2\.json:1: not valid JSON: Expecting"):
        load_toml(write(tmp_path / "c2.json", "{oops"))


@pytest.mark.parametrize(("name", "content", "pattern"), [
    ("bad.toml", "[rabbit\n", r"bad\.toml: .*line 1"),
    ("dup.toml", "[rabbit]\na = 1\na = 2\n", r"dup\.toml: .*line 3"),
    ("latin1.toml", b"[rabbit]\nmapping = \"caf\xe9\"\n", r"latin1\.toml:2: not UTF-8 text"
                                                           r" \(byte 0xe9\)$"),
    ("scalar.toml", "rabbit = 5\n", r"scalar\.toml: rabbit must be a table, got 5$"),
])
def test_load_bad_files(tmp_path, name, content, pattern):
    f = tmp_path / name
    if isinstance(content, bytes):
        f.write_bytes(content)
    else:
        f.write_text(content)
    with pytest.raises(ConfigError, match=pattern) as info:
        load_toml(f)
    # no chained exception to print behind the message
    exc = info.value
    assert exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__)


def test_load_bad_file_in_directory(tmp_path):
    write(tmp_path / "a.toml", "[rabbit]\ntc_timeout = 5\n")
    write(tmp_path / "b.toml", "[rabbit\n")
    with pytest.raises(ConfigError, match=r"b\.toml: "):
        load_toml(tmp_path)


def test_load_missing_and_unreadable(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.toml: No such file or directory$"):
        load_toml(tmp_path / "nope.toml")
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(ConfigError, match=r"dir\.toml: Is a directory$"):
        load_toml(tmp_path)


def test_load_toml_values_parse_cleanly(tmp_path):
    f = write(tmp_path / "t.toml", "[rabbit]\nsetup_timeout = nan\n")
    bad(load_toml(f), "rabbit.setup_timeout: must be a finite number, got nan")
    f = write(tmp_path / "d.toml", "[rabbit]\nmapping = 1979-05-27\n")
    bad(load_toml(f), "rabbit.mapping: a date or time is not a valid value, got 1979-05-27")


# --- drain_queues against the nodes' properties -------------------------------

#: R execution.properties: pbatch on ranks 0-1, pdebug on 2, empty on none
PROPS = {"pbatch": "0-1", "pdebug": "2", "empty": ""}


@pytest.mark.parametrize("drain_queues,properties,missing", [
    (None, None, []),
    (None, PROPS, []),
    (["pbatch"], PROPS, []),
    (["pdebug", "pbatch"], PROPS, []),
    # some node has one: accepted, the others named (the service warns)
    (["pbatch", "x", "empty"], PROPS, ["x", "empty"]),
])
def test_drain_properties_accepted(drain_queues: list[str] | None,
                                   properties: dict[str, str] | None,
                                   missing: list[str]) -> None:
    assert rabbitconf.check_drain_properties(drain_queues, properties) == missing


@pytest.mark.parametrize("drain_queues,properties,where,message", [
    (["x"], PROPS, "rabbit.drain_queues",
     'rabbit.drain_queues: no node has the property "x": drain queues name node properties'
     ' (the nodes\' properties: pbatch, pdebug)'),
    (["x", "empty"], PROPS, "--drain-queues",
     '--drain-queues: no node has any of the properties "x", "empty": drain queues name node'
     ' properties (the nodes\' properties: pbatch, pdebug)'),
    (["pbatch"], None, "rabbit.drain_queues",
     'rabbit.drain_queues: no node has the property "pbatch": drain queues name node'
     ' properties, and no node has any (leave drain_queues out to drain nodes of the whole'
     ' instance)'),
    (["pbatch"], {"pbatch": 7}, "rabbit.drain_queues",
     "R execution.properties.pbatch: must be an idset string"),
    (["pbatch"], {"pbatch": float("nan")}, "rabbit.drain_queues",
     "R execution.properties.pbatch: must be a finite number, got nan"),
])
def test_drain_properties_refused(drain_queues: list[str], properties: Any, where: str,
                                  message: str) -> None:
    with pytest.raises(rabbitconf.ConfigError) as info:
        rabbitconf.check_drain_properties(drain_queues, properties, where)
    assert str(info.value) == message


def test_load_config_gives_every_table(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[rabbit]\ndrain_queues = ["pbatch"]\n')
    (tmp_path / "b.toml").write_text('[queues.pbatch]\nrequires = ["batch"]\n')
    config = rabbitconf.load_config(tmp_path)
    assert config["queues"] == {"pbatch": {"requires": ["batch"]}}
    assert rabbitconf.load_toml(tmp_path) == {"drain_queues": ["pbatch"]}
