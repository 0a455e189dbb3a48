"""The latency model: presets, site files, per-file-system keys."""

from __future__ import annotations

import time

import pytest
from t.python.emulator.conftest import advance, fill_servers, new_workflow, wait

from flux_dws.emulator import Emulator
from flux_dws.emulator import latency as lat


def test_presets():
    assert lat.load("zero") == {}
    assert lat.load("demo")["Setup/lustre"] == pytest.approx(lat.REALISTIC["Setup/lustre"] / 10)
    assert lat.load("realistic") == lat.REALISTIC
    assert lat.state_delay(lat.REALISTIC, "Setup", {"xfs"}) == 10.0
    assert lat.state_delay(lat.REALISTIC, "Setup", {"xfs", "lustre"}) == 30.0
    assert lat.state_delay(lat.REALISTIC, "DataIn", {"lustre"}) == 2.0
    assert lat.state_delay({}, "Setup", {"lustre"}) == 0.0


def test_site_file(tmp_path):
    f = tmp_path / "lat.yaml"
    f.write_text("Setup: 4\nSetup/lustre: 9.5\nClientMount: 0\n")
    assert lat.load(str(f)) == {"Setup": 4.0, "Setup/lustre": 9.5, "ClientMount": 0.0}
    (tmp_path / "empty.yaml").write_text("")
    assert lat.load(str(tmp_path / "empty.yaml")) == {}


@pytest.mark.parametrize("text, why", [
    ("Setupp: 1\n", "unknown key 'Setupp'"),
    ("Setup/zfs: 1\n", "unknown key 'Setup/zfs'"),
    ("Setup: -1\n", "'Setup' must be seconds from 0 to 86400"),
    ("Setup: fast\n", "'Setup' must be seconds"),
    ("Setup: true\n", "'Setup' must be seconds"),
    ("- Setup\n", "a latency model maps keys to seconds"),
    ("Setup: [1\n", "cannot read latency model"),
])
def test_bad_site_files(tmp_path, text, why):
    f = tmp_path / "lat.yaml"
    f.write_text(text)
    with pytest.raises(lat.LatencyError, match=why):
        lat.load(str(f))


def test_unknown_preset():
    with pytest.raises(ValueError, match="unknown latency preset 'slow'"):
        Emulator(system="kind", latency="slow")


def test_lustre_setup_waits_longer_than_xfs():
    with Emulator(system="kind", latency={"Setup": 0.0, "Setup/lustre": 0.6}) as emu:
        api = emu.custom_objects_api()
        for name, fs in (("x", "xfs"), ("l", "lustre")):
            new_workflow(api, name, [f"#DW jobdw type={fs} capacity=100GiB name=s{name}"])
            wait(api, name, "Proposal")
            fill_servers(api, name, "compute-01")
        advance(api, "x", "Setup")
        t0 = time.monotonic()
        advance(api, "l", "Setup")
        assert time.monotonic() - t0 >= 0.6  # the Lustre key applied
        wf = api.get_namespaced_custom_object("dataworkflowservices.github.io", "v1alpha7",
                                              "default", "workflows", "l")
        assert emu.controllers._fs_types(wf, wf["status"]["drivers"], [0, 1, 2]) == {"lustre"}
