"""flux rabbitmapping against the emulator seeded with the kind system."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flux_dws.cli import rabbitmapping as cli
from flux_dws.emulator import Emulator
from flux_dws.emulator.controllers import seed_system

DATA = Path(__file__).resolve().parents[2] / "data" / "rabbitmapping"


def seed(emu: Emulator, system: str) -> None:
    seed_system(emu.store, system)


@pytest.fixture
def kind():
    with Emulator() as emu:
        seed(emu, "kind")
        yield emu


def test_kind_mapping_matches_the_reference_file(kind, capsys):
    assert cli.main(["--kubeconfig", str(kind.kubeconfig)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == json.loads((DATA / "kind.json").read_text())


def test_external_servers_reduce_capacity_unless_ignored(kind, capsys):
    api = kind.custom_objects_api()
    g, v = "dataworkflowservices.github.io", "v1alpha7"
    for name in ("persistent-lus", "fluxjob-12-0"):
        api.create_namespaced_custom_object(g, v, "default", "servers", {
            "apiVersion": f"{g}/{v}", "kind": "Servers", "metadata": {"name": name},
            "spec": {"allocationSets": [{"label": "ost", "allocationSize": 1 << 40,
                                         "storage": [{"name": "kind-worker2",
                                                      "allocationCount": 2}]}]}})
    assert cli.main(["--kubeconfig", str(kind.kubeconfig), "--indent", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rabbits"]["kind-worker2"]["capacity"] == 39582418599936 - (2 << 40)
    assert out["rabbits"]["kind-worker3"]["capacity"] == 39582418599936
    assert cli.main(["--kubeconfig", str(kind.kubeconfig), "--ignore-external-allocations"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rabbits"]["kind-worker2"]["capacity"] == 39582418599936


def test_sorting_and_indent(kind, capsys):
    assert cli.main(["--kubeconfig", str(kind.kubeconfig), "-i", "2", "--nosort"]) == 0
    text = capsys.readouterr().out
    assert text.startswith('{\n  "computes": {')


def test_unreachable_and_bad_kubeconfig(tmp_path, capsys):
    assert cli.main(["--kubeconfig", str(tmp_path / "missing")]) == 1
    assert "cannot load kubeconfig" in capsys.readouterr().err
    with Emulator() as emu:
        kc = emu.kubeconfig.read_text()
    (tmp_path / "kc").write_text(kc)  # the server is gone now
    assert cli.main(["--kubeconfig", str(tmp_path / "kc")]) == 1
    assert "flux-rabbitmapping:" in capsys.readouterr().err


def test_rzadams_mapping(capsys):
    with Emulator() as emu:
        seed(emu, "rzadams")
        assert cli.main(["--kubeconfig", str(emu.kubeconfig)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rabbits"]["rzadams201"] == {"capacity": 30720000000000,
                                            "hostlist": "rzadams[1001-1016]"}
    assert out["rabbits"]["rzadams208"]["capacity"] == 17250000000000
    assert len(out["computes"]) == 128
