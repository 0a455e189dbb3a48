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
    """Hand-made Servers with no NnfStorage behind them: nnf-sos allocated
    nothing, so the Storage's free space stays whole and the external one
    (subtracted from the total) disagrees with it: a warning, JSON as ever."""
    api = kind.custom_objects_api()
    g, v = "dataworkflowservices.github.io", "v1alpha7"
    for name in ("persistent-lus", "fluxjob-12-0"):
        api.create_namespaced_custom_object(g, v, "default", "servers", {
            "apiVersion": f"{g}/{v}", "kind": "Servers", "metadata": {"name": name},
            "spec": {"allocationSets": [{"label": "ost", "allocationSize": 1 << 40,
                                         "storage": [{"name": "kind-worker2",
                                                      "allocationCount": 2}]}]}})
    assert cli.main(["--kubeconfig", str(kind.kubeconfig), "--indent", "2"]) == 0
    got = capsys.readouterr()
    out = json.loads(got.out)
    assert out["rabbits"]["kind-worker2"]["capacity"] == 39582418599936 - (2 << 40)
    assert out["rabbits"]["kind-worker3"]["capacity"] == 39582418599936
    assert got.err == (
        "flux-rabbitmapping: warning: rabbit kind-worker2: its total (39582418599936 bytes)"
        " less external allocations (2199023255552 bytes) is 37383395344384 bytes, below the"
        " free space its Storage reports (39582418599936 bytes); using 37383395344384\n")
    assert cli.main(["--kubeconfig", str(kind.kubeconfig), "--ignore-external-allocations"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["rabbits"]["kind-worker2"]["capacity"] == 39582418599936
    assert got.err == ""


def test_external_allocation_subtracted_once_from_the_total(capsys):
    """A real external allocation (a 1 TiB NnfSystemStorage) and a Flux
    job's xfs: the Storage's free space lacks both; the mapping is the total
    less the external one, once (flux-coral2 #497), and no warning."""
    from t.python.emulator.conftest import to
    from t.python.emulator.watching import until

    total = 39582418599936
    with Emulator(system="kind", latency="zero") as emu:
        api = emu.custom_objects_api()
        api.create_namespaced_custom_object(
            "nnf.cray.hpe.com", "v1alpha11", "default", "nnfsystemstorages", {
                "apiVersion": "nnf.cray.hpe.com/v1alpha11", "kind": "NnfSystemStorage",
                "metadata": {"name": "sys"}, "spec": {"capacity": 1 << 40, "storageProfile": {
                    "kind": "NnfStorageProfile", "name": "default",
                    "namespace": "nnf-system"}}})
        to(api, "fluxjob-1", ["#DW jobdw type=xfs capacity=100GiB name=scratch"], "Setup",
           hosts="compute-[01-02]")
        until(api, "storages", "kind-worker2",
              lambda o: o["status"]["capacity"] == total - (1 << 40) - (200 << 30))
        until(api, "storages", "kind-worker3",
              lambda o: o["status"]["capacity"] == total - (1 << 40))
        assert cli.main(["--kubeconfig", str(emu.kubeconfig)]) == 0
        got = capsys.readouterr()
        out = json.loads(got.out)
        assert out["rabbits"]["kind-worker2"]["capacity"] == total - (1 << 40)
        assert out["rabbits"]["kind-worker3"]["capacity"] == total - (1 << 40)
        assert got.err == ""
        assert cli.main(["--kubeconfig", str(emu.kubeconfig),
                         "--ignore-external-allocations"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["rabbits"]["kind-worker2"]["capacity"] == total


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
