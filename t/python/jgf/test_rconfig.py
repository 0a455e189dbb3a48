"""R from [resource.config] (the `flux R parse-config` rules, without Flux)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from flux_dws.libdws.resource_config import ConfigError, R_from_config, load_resource_table


def R(config):
    return json.loads(R_from_config(config))


def test_single_entry():
    assert R([{"hosts": "elcap[1001-1004]", "cores": "0-95", "gpus": "0-3"}]) == {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "0-3", "children": {"core": "0-95", "gpu": "0-3"}}],
            "starttime": 0.0,
            "expiration": 0.0,
            "nodelist": ["elcap[1001-1004]"],
        },
    }


def test_ranks_follow_first_mention_and_repeats_merge():
    out = R([
        {"hosts": "b[1-2]", "cores": "0-3"},
        {"hosts": "a1,b1", "gpus": "0"},
        {"hosts": "b2", "cores": "4-7", "properties": ["big"]},
    ])
    ex = out["execution"]
    assert ex["nodelist"] == ["b[1-2],a1"]
    assert ex["R_lite"] == [
        {"rank": "0", "children": {"core": "0-3", "gpu": "0"}},
        {"rank": "1", "children": {"core": "0-7"}},
        {"rank": "2", "children": {"gpu": "0"}},
    ]
    assert ex["properties"] == {"big": "1"}


def test_identical_nodes_share_an_entry_across_gaps():
    out = R([{"hosts": "n[1-3]", "cores": "0"}, {"hosts": "n2", "gpus": "0"}])
    assert out["execution"]["R_lite"] == [
        {"rank": "0,2", "children": {"core": "0"}},
        {"rank": "1", "children": {"core": "0", "gpu": "0"}},
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "resource config must be an array"),
        ([], "no hosts configured"),
        (["x"], r"config\[0\]: must be a table"),
        ([{"cores": "0"}], r"config\[0\]: Object item not found: hosts"),
        ([{"hosts": 5}], r"config\[0\]: hosts must be a string"),
        ([{"hosts": "n1", "cores": "0", "ram": "1"}],
         r"config\[0\]: 1 object item\(s\) left unpacked: ram"),
        ([{"hosts": "n[1-", "cores": "0"}], r"config\[0\]: invalid hostlist 'n\[1-'"),
        ([{"hosts": "", "cores": "0"}], r"config\[0\]: empty hostlist specified"),
        ([{"hosts": "n1", "cores": "x"}], r"config\[0\]: invalid idset cores='x'"),
        ([{"hosts": "n1", "gpus": "3-1"}], r"config\[0\]: invalid idset gpus='3-1'"),
        ([{"hosts": "n1", "cores": "0", "properties": "p"}],
         r"config\[0\]: properties must be an array"),
        ([{"hosts": "n1", "cores": "0", "properties": ["a|b"]}],
         r'config\[0\]: invalid property "a\|b"'),
        ([{"hosts": "n1", "cores": "0", "properties": [1]}], r"config\[0\]: invalid property 1"),
        ([{"hosts": "n[1-2]", "cores": "0"}, {"hosts": "m[1-3]"}],
         r"resource.config: m\[1-3\] assigned no resources"),
    ],
)
def test_errors(config, message):
    with pytest.raises(ConfigError, match=message):
        R_from_config(config)


def test_load_resource_table(tmp_path):
    f = tmp_path / "r.toml"
    f.write_text('[resource]\nexclude = "0"\n[[resource.config]]\nhosts = "n1"\ncores = "0"\n')
    table = load_resource_table(f)
    assert table["exclude"] == "0"
    assert R(table["config"])["execution"]["nodelist"] == ["n1"]


def test_load_resource_table_errors(tmp_path):
    with pytest.raises(ConfigError, match="No such file"):
        load_resource_table(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[resource\n")
    with pytest.raises(ConfigError, match=r"bad\.toml"):
        load_resource_table(bad)
    empty = tmp_path / "empty.toml"
    empty.write_text("[other]\n")
    with pytest.raises(ConfigError, match="no \\[resource\\] table"):
        load_resource_table(empty)


@pytest.mark.skipif(shutil.which("flux") is None, reason="flux-core is not installed")
def test_agrees_with_flux_R_parse_config(tmp_path):
    f = tmp_path / "r.toml"
    f.write_text(
        "[[resource.config]]\nhosts = \"b[1-2]\"\ncores = \"0-3\"\n"
        "[[resource.config]]\nhosts = \"a1,b1\"\ngpus = \"0\"\nproperties = [\"x\"]\n"
    )
    flux = json.loads(subprocess.run(["flux", "R", "parse-config", str(f)], check=True,
                                     capture_output=True, text=True).stdout)
    ours = R(load_resource_table(f)["config"])
    assert ours == flux
