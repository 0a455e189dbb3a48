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
        cfg = dws.service_config(table, args, 1234)
        assert (cfg["min_allocation_size"], cfg["drain_queues"], cfg["kubeconfig"],
                cfg["owner"]) == (8, ["pbatch"], "/etc/kc", 1234)
    assert dws.service_config({"setup_timeout": 5}, args, 0)["setup_timeout"] == 5.0


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
