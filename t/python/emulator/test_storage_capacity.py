"""Issue 43 item 4: the emulator reports a rabbit's Storage as nnf-sos does:
its NVMe drives in ``status.devices`` (their capacities add up to the
rabbit's total) and ``status.capacity`` its *free* bytes (DWS #284), which
fall as anyone's storage is allocated on it and rise as it is freed."""

from __future__ import annotations

import pytest
from t.python.emulator.conftest import G, V, finish, to
from t.python.emulator.watching import gone, until

from flux_dws.dwsim import storage
from flux_dws.dwsim.systems import load_system, parse_system, seed_objects
from flux_dws.emulator import Emulator

NNF_G, NNF_V = "nnf.cray.hpe.com", "v1alpha11"
KIND_TOTAL = 39582418599936   # etc/systems/kind.yaml, 36 TiB
TiB, GiB = 1 << 40, 1 << 30
DEVICE_KEYS = {"slot", "model", "serialNumber", "firmwareVersion", "capacity", "wearLevel",
               "status"}


@pytest.fixture
def kind():
    with Emulator(system="kind", latency="zero") as emu:
        yield emu


def free(api, rabbit):
    return api.get_namespaced_custom_object(G, V, "default", "storages",
                                            rabbit)["status"]["capacity"]


def free_is(api, rabbit, want):
    """The Storage once its status.capacity is ``want`` (watched)."""
    return until(api, "storages", rabbit, lambda o: o["status"]["capacity"] == want)


def test_seeded_storage_lists_drives_adding_up_to_the_system_capacity():
    for system, rabbit, total in (("kind", "kind-worker2", KIND_TOTAL),
                                  ("rzadams", "rzadams201", 30720000000000),
                                  ("rzadams", "rzadams208", 17250000000000),
                                  ("tuolumne", "tuolumne209", 17529847545856)):
        st = next(o for o in seed_objects(load_system(system))
                  if o["kind"] == "Storage" and o["metadata"]["name"] == rabbit)["status"]
        devices = st["devices"]
        assert len(devices) == 16
        assert all(set(d) == DEVICE_KEYS and d["status"] == "Ready" for d in devices)
        assert [d["slot"] for d in devices] == [str(i) for i in range(16)]
        assert len({d["serialNumber"] for d in devices}) == 16
        assert sum(d["capacity"] for d in devices) == total
        assert st["capacity"] == total  # nothing allocated yet: all of it is free
    rz = next(o for o in seed_objects(load_system("rzadams"))
              if o["kind"] == "Storage" and o["metadata"]["name"] == "rzadams201")
    rz = rz["status"]["devices"]
    assert {d["capacity"] for d in rz} == {1920000000000}  # 16 x 1.92 TB


def test_system_drives_key():
    system = parse_system({"name": "s", "capacity": 1000, "drives": 3,
                           "rabbits": [{"name": "r1", "computes": ["c1"]}]})
    st = seed_objects(system)
    devices = next(o for o in st if o["kind"] == "Storage")["status"]["devices"]
    assert [d["capacity"] for d in devices] == [333, 333, 334]
    with pytest.raises(ValueError, match="drives must be at least 1"):
        parse_system({"name": "s", "capacity": 1, "drives": 0, "rabbits": []})


def test_free_space_falls_and_rises_with_allocations(kind):
    api = kind.custom_objects_api()
    st = api.get_namespaced_custom_object(G, V, "default", "storages", "kind-worker2")
    assert sum(d["capacity"] for d in st["status"]["devices"]) == KIND_TOTAL
    assert free(api, "kind-worker2") == free(api, "kind-worker3") == KIND_TOTAL
    # someone else's storage: a 1 TiB NnfSystemStorage on every rabbit
    api.create_namespaced_custom_object(NNF_G, NNF_V, "default", "nnfsystemstorages", {
        "apiVersion": f"{NNF_G}/{NNF_V}", "kind": "NnfSystemStorage",
        "metadata": {"name": "sys"}, "spec": {"capacity": TiB, "storageProfile": {
            "kind": "NnfStorageProfile", "name": "default", "namespace": "nnf-system"}}})
    free_is(api, "kind-worker2", KIND_TOTAL - TiB)
    free_is(api, "kind-worker3", KIND_TOTAL - TiB)
    # a Flux job's xfs: 100 GiB on each of compute-0[12], both on kind-worker2
    to(api, "fluxjob-1", ["#DW jobdw type=xfs capacity=100GiB name=scratch"], "Setup",
       hosts="compute-[01-02]")
    st = free_is(api, "kind-worker2", KIND_TOTAL - TiB - 200 * GiB)
    assert sum(d["capacity"] for d in st["status"]["devices"]) == KIND_TOTAL  # total stays
    assert free(api, "kind-worker3") == KIND_TOTAL - TiB
    # freed: the job's storage at its Teardown, the system storage when deleted
    finish(api, "fluxjob-1")
    free_is(api, "kind-worker2", KIND_TOTAL - TiB)
    api.delete_namespaced_custom_object(NNF_G, NNF_V, "default", "nnfsystemstorages", "sys")
    gone(api, "nnfsystemstorages", "sys", group=NNF_G)
    free_is(api, "kind-worker2", KIND_TOTAL)
    free_is(api, "kind-worker3", KIND_TOTAL)


def test_free_space_survives_a_restart(tmp_path):
    state = tmp_path / "state"
    with Emulator(system="kind", latency="zero", state=state) as emu:
        api = emu.custom_objects_api()
        to(api, "fluxjob-2", ["#DW jobdw type=xfs capacity=1TiB name=scratch"], "Setup",
           hosts="compute-04")
        free_is(api, "kind-worker3", KIND_TOTAL - TiB)
    with Emulator(system="kind", latency="zero", state=state) as emu:
        api = emu.custom_objects_api()
        # the total is read back from the drives, not from the free figure
        assert free(api, "kind-worker3") == KIND_TOTAL - TiB
        finish(api, "fluxjob-2")
        st = free_is(api, "kind-worker3", KIND_TOTAL)
        assert sum(d["capacity"] for d in st["status"]["devices"]) == KIND_TOTAL


def test_a_failed_drive_is_reported_empty_and_not_counted():
    devices = storage.nvme_devices("r1", 1600, drives=16)
    devices[3]["status"] = "Failed"
    health = storage.RabbitHealth(capacity=1600, computes={"c1": "Ready"}, devices=devices,
                                  used=50)
    new, _ = storage.reconcile({storage.STORAGE_TYPE_LABEL: "Rabbit"}, {"mode": "Live"}, {},
                               "r1", health)
    assert new["devices"][3] == {"slot": "3", "model": "", "serialNumber": "",
                                 "firmwareVersion": "", "capacity": 0, "status": "Failed"}
    assert sum(d["capacity"] for d in new["devices"]) == 1500
    assert new["capacity"] == 1450
    health.used = 5000  # more held than is left: free is 0, never negative
    assert storage.reconcile({storage.STORAGE_TYPE_LABEL: "Rabbit"}, {}, {}, "r1",
                             health)[0]["capacity"] == 0


def test_health_from_a_status_without_devices():
    """A state saved before devices were reported: its capacity is the total."""
    h = storage.RabbitHealth.from_status({"capacity": 1600}, "r1")
    assert h.capacity == 1600 and len(h.devices) == 16
    h = storage.RabbitHealth.from_status({"capacity": 100,
                                          "devices": storage.nvme_devices("r1", 1600)}, "r1")
    assert h.capacity == 1600
