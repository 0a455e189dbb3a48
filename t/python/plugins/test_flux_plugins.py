"""The plugin files themselves, loaded as flux-core loads them (needs the
flux Python bindings; skipped without them)."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

flux = pytest.importorskip("flux", reason="flux-core's Python bindings are not installed")
pytest.importorskip("flux.job", reason="flux.job does not import here (flux-core needs ply)")
from flux.importer import import_path  # noqa: E402
from flux.job import JobspecV1  # noqa: E402

from flux_dws.libdws.explain import SEPARATOR, explain_note  # noqa: E402

TOP = Path(__file__).resolve().parents[3]
PLUGINS = TOP / "src" / "python" / "flux_dws" / "flux_plugins"
GOOD = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def jobspec(**system):
    js = JobspecV1.from_command(["hostname"], num_nodes=4, num_tasks=4)
    for k, v in system.items():
        js.setattr(f"system.{k}", v)
    return js


def test_cli_plugin_registers_prefixed_options(monkeypatch):
    from flux.cli.plugin import CLIPluginRegistry

    monkeypatch.setenv("FLUX_CLI_PLUGINPATH_OVERRIDE", str(TOP / "etc" / "cli" / "plugins"))
    names = {o.name for o in CLIPluginRegistry("run").options}
    assert {"--coral2-chassis", "--coral2-rabbit-cores"} <= names
    # job-ingest's jobspec validator loads CLI plugins as "validate": no options
    validate = {o.name for o in CLIPluginRegistry("validate").options}
    assert not validate & {"--coral2-chassis", "--coral2-rabbit-cores"}


def test_cli_plugin_preinit_refuses_bad_options():
    mod = import_path(str(TOP / "etc" / "cli" / "plugins" / "chassis.py"))
    plugin = mod.ChassisPlugin("submit")
    with pytest.raises(ValueError, match="requires -N, --nodes"):
        plugin.preinit(SimpleNamespace(chassis=2, rabbit_cores=None, nodes=None))
    with pytest.raises(ValueError, match="not a multiple of 2"):
        plugin.preinit(SimpleNamespace(chassis=2, rabbit_cores=None, nodes="3"))
    plugin.preinit(SimpleNamespace(chassis=None, rabbit_cores=None, nodes=None))


def test_frobnicator_plugin_sets_the_widened_constraints():
    mod = import_path(str(PLUGINS / "frobnicator" / "rabbit.py"))
    frob = mod.Frobnicator(parser=None)
    js = jobspec(dw=GOOD, allow_rabbits=True, constraints={"properties": ["pbatch"]})
    frob.frob(js, 0, 16, 0)
    assert js.attributes["system"]["constraints"] == {
        "or": [{"properties": ["pbatch"]}, {"properties": ["rabbit"]}]
    }
    plain = jobspec(dw=GOOD)
    frob.frob(plain, 0, 16, 0)
    assert "constraints" not in plain.attributes["system"]
    with pytest.raises(ValueError, match="constraints frobnicator plugin loaded"):
        frob.frob(jobspec(dw=GOOD, allow_rabbits=True), 0, 16, 0)


def test_validator_plugin_returns_einval_with_the_message():
    mod = import_path(str(PLUGINS / "validator" / "rabbit.py"))
    val = mod.Validator(parser=None)
    val.rabbit = {"presets": {"scratch": GOOD}}

    def job(**system):
        return SimpleNamespace(jobspec=json.loads(jobspec(**system).dumps()))

    assert val.validate(job()) is None
    assert val.validate(job(dw="scratch")) is None
    words = "Malformed #DW directives: dw must be a string or a list of strings"
    # the validator's words first, then the plain sentence explain.h gives them
    assert val.validate(job(dw=7)) == (errno.EINVAL, explain_note(words))
    assert explain_note(words).startswith(words + SEPARATOR)
    errnum, msg = val.validate(job(dw="#DW jobdw type=zfs capacity=1GiB name=x"))
    assert errnum == errno.EINVAL and "argument 'type' invalid string 'zfs'" in msg
