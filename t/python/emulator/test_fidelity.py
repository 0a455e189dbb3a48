"""Issue 14: where a WLM's own tests found the emulator differing from DWS
and nnf-sos.  Each test drives the emulator through the Kubernetes API as a
WLM (or a site's test) would and waits on watches."""

from __future__ import annotations

import pytest
from t.python.emulator.conftest import G, V
from t.python.emulator.watching import until

from flux_dws.emulator import Emulator


@pytest.fixture
def kind():
    with Emulator(system="kind", latency="zero") as emu:
        yield emu


def links(st):
    return {c["name"]: c["status"] for c in st["status"]["access"]["computes"]}


# --- 1. Storage status: Live is the rabbit's truth ----------------------------

def test_testing_edits_vanish_when_storage_goes_live(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"mode": "Testing"}})
    api.patch_namespaced_custom_object_status(G, V, "default", "storages", "kind-worker2", {
        "status": {"status": "Degraded", "capacity": 1, "access": {"computes": [
            {"name": "compute-01", "status": "Ready"},
            {"name": "compute-02", "status": "Disabled"},
            {"name": "compute-03", "status": "Ready"}]}}})
    st = until(api, "storages", "kind-worker2", lambda o: links(o)["compute-02"] == "Disabled")
    assert st["status"]["status"] == "Degraded"      # Testing: the edit stands
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"mode": "Live"}})
    st = until(api, "storages", "kind-worker2",
               lambda o: set(links(o).values()) == {"Ready"})
    assert st["status"]["status"] == "Ready"
    assert st["status"]["capacity"] == 39582418599936
    assert st["status"]["access"]["servers"] == [{"name": "kind-worker2", "status": "Ready"}]


def test_disabled_shows_in_testing_mode(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"mode": "Testing", "state": "Disabled"}})
    st = until(api, "storages", "kind-worker3", lambda o: o["status"]["status"] == "Disabled")
    assert st["status"]["message"] == "Storage node manually disabled"
    # enabled again while still in Testing: nnf-sos leaves the status alone ...
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"state": "Enabled"}})
    # ... until the Storage is Live again
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker3",
                                       {"spec": {"mode": "Live"}})
    st = until(api, "storages", "kind-worker3", lambda o: o["status"]["status"] == "Ready")
    assert st["status"]["message"] == "" and st["status"]["rebootRequired"] is False


def test_health_changed_in_testing_mode_shows_once_live(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"mode": "Testing"}})
    until(api, "storages", "kind-worker2", lambda o: o["spec"]["mode"] == "Testing")
    st = kind.controllers.set_health("kind-worker2", links={"compute-03": "Offline"})
    assert links(st)["compute-03"] == "Ready"         # Testing: untouched
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"spec": {"mode": "Live"}})
    until(api, "storages", "kind-worker2", lambda o: links(o)["compute-03"] == "Offline")


def test_live_status_edit_is_undone(kind):
    """A status written by hand in Live mode is rebuilt at once."""
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object_status(G, V, "default", "storages", "kind-worker3", {
        "status": {"access": {"computes": [{"name": "compute-04", "status": "Disabled"}]}}})
    until(api, "storages", "kind-worker3", lambda o: links(o) == {"compute-04": "Ready"})
