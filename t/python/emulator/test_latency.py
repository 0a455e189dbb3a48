"""The latency model: presets, site files, per-file-system keys."""

from __future__ import annotations

import time

import pytest
from t.python.emulator.conftest import advance, fill_servers, new_workflow, wait

from flux_dws.emulator import Emulator
from flux_dws.emulator import latency as lat


def test_presets_as_documented():
    """doc/man1/flux-dws-emulator.rst: realistic has a real system's order
    of seconds, demo a tenth of it, zero none."""
    assert lat.load("zero") == {}
    assert lat.DEFAULT == "fast"
    assert all(0 < v < 1 for v in lat.load("fast").values())  # tens to hundreds of ms
    real, demo = lat.load("realistic"), lat.load("demo")
    assert (real["Proposal"], real["Setup"], real["Setup/lustre"]) == (2.0, 10.0, 30.0)
    assert (demo["Proposal"], demo["Setup"], demo["Setup/lustre"]) == (0.2, 1.0, 3.0)
    assert set(demo) == set(real)
    assert lat.state_delay(lat.REALISTIC, "Setup", {"xfs"}) == 10.0
    assert lat.state_delay(lat.REALISTIC, "Setup", {"xfs", "lustre"}) == 30.0
    assert lat.state_delay(lat.REALISTIC, "DataIn", {"lustre"}) == 2.0
    assert lat.state_delay({}, "Setup", {"lustre"}) == 0.0


def test_demo_preset_delays_each_state():
    """The preset's behaviour: a Workflow's states take the demo seconds."""
    with Emulator(system="kind", latency="demo") as emu:
        api = emu.custom_objects_api()
        t0 = time.monotonic()
        new_workflow(api, "d", ["#DW jobdw type=xfs capacity=1GiB name=demo"])
        wait(api, "d", "Proposal")
        assert time.monotonic() - t0 >= 0.2  # demo Proposal
        fill_servers(api, "d", "compute-01")
        t0 = time.monotonic()
        advance(api, "d", "Setup")
        assert time.monotonic() - t0 >= 1.0  # demo Setup (xfs)


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
