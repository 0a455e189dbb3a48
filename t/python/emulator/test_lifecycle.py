"""Starting, restarting with --state, and the command line."""

from __future__ import annotations

import signal

import yaml
from kubernetes import client, config
from t.python.emulator.conftest import G, V, workflow

from flux_dws.emulator import Emulator, start_subprocess


def test_state_survives_a_restart(tmp_path):
    state = tmp_path / "state.db"
    with Emulator(state=state) as emu:
        api = emu.custom_objects_api()
        api.create_namespaced_custom_object(G, V, "default", "workflows", workflow())
        rv = api.list_namespaced_custom_object(G, V, "default",
                                               "workflows")["metadata"]["resourceVersion"]
    with Emulator(state=state) as emu:
        api = emu.custom_objects_api()
        o = api.get_namespaced_custom_object(G, V, "default", "workflows", "w1")
        assert o["spec"]["wlmID"] == "flux"
        after = api.list_namespaced_custom_object(G, V, "default", "workflows")
        assert int(after["metadata"]["resourceVersion"]) >= int(rv)
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "w1",
                                           {"spec": {"forceReady": True}})
        assert int(api.get_namespaced_custom_object(G, V, "default", "workflows", "w1")[
            "metadata"]["resourceVersion"]) > int(rv)


def test_plain_http_without_auth(tmp_path):
    with Emulator(use_tls=False, token=None, kubeconfig=tmp_path / "kc") as emu:
        assert emu.url.startswith("http://")
        cfg = yaml.safe_load((tmp_path / "kc").read_text())
        assert cfg["users"][0]["user"] == {}
        api = client.CustomObjectsApi(config.new_client_from_config(str(tmp_path / "kc")))
        assert api.list_cluster_custom_object(G, V, "workflows")["items"] == []


def test_command_line(tmp_path):
    kc = tmp_path / "kubeconfig"
    proc = start_subprocess(kc, "--state", str(tmp_path / "s.db"))
    try:
        cfg = yaml.safe_load(kc.read_text())
        server = cfg["clusters"][0]["cluster"]["server"]
        assert server.startswith("https://127.0.0.1:") and not server.endswith(":0")
        api = client.CustomObjectsApi(config.new_client_from_config(str(kc)))
        api.create_namespaced_custom_object(G, V, "default", "workflows", workflow())
        assert len(api.list_cluster_custom_object(G, V, "workflows")["items"]) == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
