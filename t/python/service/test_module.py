"""src/modules/dws.py without a broker: options and the config it serves with."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from flux_dws.rabbitconf import ConfigError

DWS_PY = Path(__file__).resolve().parents[3] / "src" / "modules" / "dws.py"


@pytest.fixture(scope="module")
def dws() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dws_module", DWS_PY)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_command_line_stays_on_top_of_every_table(dws: ModuleType) -> None:
    args = dws.parse_args(["-m", "8", "--drain-queues", "pbatch", "-k", "/etc/kc"])
    for table in ({"setup_timeout": 5, "min_allocation_size": 2}, None):
        cfg = dws.service_config(table, args, 1234, {"pbatch": {}})
        assert (cfg["min_allocation_size"], cfg["drain_queues"], cfg["kubeconfig"],
                cfg["owner"]) == (8, ["pbatch"], "/etc/kc", 1234)
    assert dws.service_config({"setup_timeout": 5}, args, 0,
                              {"pbatch": {}})["setup_timeout"] == 5.0


@pytest.mark.parametrize("argv,table,queues,message", [
    # the option names a queue [queues] lacks
    (["--drain-queues", "pbatch", "nosuch"], None, {"pbatch": {}, "pdebug": {}},
     r'^--drain-queues: no queue named "nosuch" in \[queues\] \(its queues: pbatch,'
     r' pdebug\)$'),
    # the key does
    ([], {"drain_queues": ["pdbug"]}, {"pbatch": {}, "pdebug": {}},
     r'^rabbit\.drain_queues: no queue named "pdbug" in \[queues\]'),
    # an instance without [queues]: every named queue is unknown
    ([], {"drain_queues": ["pbatch"]}, None,
     r'^rabbit\.drain_queues: no queue named "pbatch": this instance defines no queues'),
    (["--drain-queues", "pbatch"], {}, {},
     r'^--drain-queues: no queue named "pbatch": this instance defines no queues'),
])
def test_unknown_drain_queue_is_refused_naming_it(dws: ModuleType, argv: list[str],
                                                 table: dict[str, object] | None,
                                                 queues: dict[str, object] | None,
                                                 message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        dws.service_config(table, dws.parse_args(argv), 0, queues)


def test_known_drain_queues_pass(dws: ModuleType) -> None:
    queues = {"pbatch": {"requires": ["batch"]}, "pdebug": {}}
    cfg = dws.service_config({"drain_queues": ["pdebug"]}, dws.parse_args([]), 0, queues)
    assert cfg["drain_queues"] == ["pdebug"]
    # the option replaces the key, and only the option's queues are checked
    cfg = dws.service_config({"drain_queues": ["nosuch"]},
                             dws.parse_args(["--drain-queues", "pbatch"]), 0, queues)
    assert cfg["drain_queues"] == ["pbatch"]
    # no drain queues: [queues] does not matter
    assert dws.service_config(None, dws.parse_args([]), 0, None)["drain_queues"] is None


def test_bad_table_names_the_key(dws: ModuleType) -> None:
    with pytest.raises(ConfigError, match=r"rabbit\.setup_timeout"):
        dws.service_config({"setup_timeout": "soon"}, dws.parse_args([]), 0)


@pytest.mark.parametrize("argv,message", [
    (["--no-such-option"], "unrecognized arguments"),
    (["-m", "0"], "--min-allocation-size must be at least 1"),
    (["-m", "many"], "invalid int value"),
])
def test_bad_options(dws: ModuleType, argv: list[str], message: str) -> None:
    with pytest.raises(dws.UsageError, match=message):
        dws.parse_args(argv)
