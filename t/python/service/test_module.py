"""src/modules/dws.py without a broker: options and the config it serves with."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from flux_dws.libdws.rabbitconf import ConfigError

DWS_PY = Path(__file__).resolve().parents[3] / "src" / "modules" / "dws.py"


@pytest.fixture(scope="module")
def dws() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dws_module", DWS_PY)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: the nodes' properties (R execution.properties) of an instance whose
#: queues are node properties, the reference's deployment style
PROPS = {"pbatch": "0-2", "pdebug": "3", "rabbit": "0-3"}


def test_command_line_stays_on_top_of_every_table(dws: ModuleType) -> None:
    args = dws.parse_args(["-m", "8", "--drain-queues", "pbatch", "-k", "/etc/kc"])
    for table in ({"setup_timeout": 5, "min_allocation_size": 2}, None):
        cfg = dws.service_config(table, args, 1234, PROPS)
        assert (cfg["min_allocation_size"], cfg["drain_queues"], cfg["kubeconfig"],
                cfg["owner"]) == (8, ["pbatch"], "/etc/kc", 1234)
    assert dws.service_config({"setup_timeout": 5}, args, 0, PROPS)["setup_timeout"] == 5.0


@pytest.mark.parametrize("argv,table,properties,message", [
    # the option names a property no node has
    (["--drain-queues", "nosuch"], None, PROPS,
     r'^--drain-queues: no node has the property "nosuch": drain queues name node'
     r" properties \(the nodes' properties: pbatch, pdebug, rabbit\)$"),
    # the key does
    ([], {"drain_queues": ["pdbug", "pbtch"]}, PROPS,
     r'^rabbit\.drain_queues: no node has any of the properties "pdbug", "pbtch"'),
    # nodes without properties
    ([], {"drain_queues": ["pbatch"]}, {},
     r'^rabbit\.drain_queues: no node has the property "pbatch": drain queues name node'
     r" properties, and no node has any"),
    (["--drain-queues", "pbatch"], {}, None,
     r'^--drain-queues: no node has the property "pbatch"'),
    # the properties could not be read
    (["--drain-queues", "pbatch"], None, "resource.status: Function not implemented",
     r"^--drain-queues: cannot check them against the nodes' properties \(resource\.status:"
     r" Function not implemented\)$"),
])
def test_drain_queue_no_node_has_is_refused_naming_it(
        dws: ModuleType, argv: list[str], table: dict[str, object] | None,
        properties: dict[str, str] | str | None, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        dws.service_config(table, dws.parse_args(argv), 0, properties)


def test_drain_queues_are_node_properties_not_queues(dws: ModuleType) -> None:
    """No [queues] table is needed: a property some node has is enough."""
    warned: list[str] = []
    cfg = dws.service_config({"drain_queues": ["pdebug"]}, dws.parse_args([]), 0, PROPS,
                             warned.append)
    assert cfg["drain_queues"] == ["pdebug"] and warned == []
    # the option replaces the key, and only the option's names are checked
    cfg = dws.service_config({"drain_queues": ["nosuch"]},
                             dws.parse_args(["--drain-queues", "pbatch"]), 0, PROPS)
    assert cfg["drain_queues"] == ["pbatch"]
    # no drain queues: the properties do not matter, nor whether they could be read
    assert dws.service_config(None, dws.parse_args([]), 0, None)["drain_queues"] is None
    assert dws.service_config(None, dws.parse_args([]), 0, "no resource module")[
        "drain_queues"] is None


def test_drain_queues_some_node_lacks_are_warned_of(dws: ModuleType) -> None:
    warned: list[str] = []
    cfg = dws.service_config({"drain_queues": ["pbatch", "pdbug"]}, dws.parse_args([]), 0,
                             PROPS, warned.append)
    assert cfg["drain_queues"] == ["pbatch", "pdbug"]
    assert warned == ['rabbit.drain_queues: no node has the property "pdbug"; rabbit faults'
                      " drain only nodes with pbatch"]


def test_node_properties_from_resource_status(dws: ModuleType) -> None:
    """Read from rank 0's resource.status (R without its scheduling graph)."""
    class Future:
        def __init__(self, answer: object) -> None:
            self.answer = answer

        def get(self) -> object:
            if isinstance(self.answer, OSError):
                raise self.answer
            return self.answer

    class Handle:
        def __init__(self, answer: object) -> None:
            self.answer = answer
            self.calls: list[tuple[str, int]] = []

        def rpc(self, topic: str, nodeid: int = -1) -> Future:
            self.calls.append((topic, nodeid))
            return Future(self.answer)

    h = Handle({"R": {"execution": {"properties": PROPS}}, "online": "0-3"})
    assert dws.node_properties(h) == PROPS
    assert h.calls == [("resource.status", 0)]
    assert dws.node_properties(Handle({"R": {"execution": {}}})) == {}
    assert dws.node_properties(Handle(OSError(38, "Function not implemented"))) == \
        "resource.status: Function not implemented"


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
