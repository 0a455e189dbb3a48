"""The layer: connect (bad kubeconfigs, unreachable and busy servers,
pinned API versions) and a prompt stop with every kind watched."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from flux_dws.emulator import Emulator
from flux_dws.k8s.errors import KubeError
from flux_dws.k8s.layer import KubeLayer

from .conftest import G, LogSignal, Recorder, k8s, watch_connected


def test_connect_errors(tmp_path, monkeypatch):
    post = Recorder()
    with pytest.raises(KubeError, match=r"^cannot reach Kubernetes: invalid kubeconfig"):
        KubeLayer(str(tmp_path / "missing"), post).connect()
    bad = tmp_path / "bad"
    bad.write_text("clusters: [")
    with pytest.raises(KubeError, match=r"^cannot reach Kubernetes: invalid kubeconfig"):
        KubeLayer(bad, post).connect()
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    with pytest.raises(KubeError, match=r"invalid kubeconfig .*none"):
        KubeLayer(None, post).connect()
    with Emulator() as emu:
        kc = tmp_path / "kc"
        kc.write_text(emu.kubeconfig.read_text())
    with pytest.raises(KubeError, match=r"^cannot reach Kubernetes: https://127\.0\.0\.1"):
        KubeLayer(kc, post).connect()  # the server has gone
    with Emulator(token="right") as emu:
        text = emu.kubeconfig.read_text().replace("token: right", "token: wrong")
        (tmp_path / "kc2").write_text(text)
        with pytest.raises(KubeError, match="401"):
            KubeLayer(tmp_path / "kc2", post).connect()
    assert post.events == []


def test_connect_to_a_closed_port(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    kc = tmp_path / "kc"
    kc.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    with pytest.raises(KubeError, match=f"cannot reach Kubernetes: http://127.0.0.1:{port}"):
        KubeLayer(kc, Recorder()).connect()


def test_connect_rides_out_busy_answers(emulator, tmp_path):
    """A 503 burst while the service (re)starts: connect retries the busy
    answers (with a warning each) and succeeds; a refusal (403) fails at once."""
    from flux_dws.emulator.apifaults import ApiFault

    log = logging.getLogger("test-connect")
    signal = LogSignal("retrying in")
    log.addHandler(signal)
    try:
        emulator.api_faults.add(ApiFault(status=503, count=4, message="backend restarting"))
        layer = KubeLayer(emulator.kubeconfig, Recorder(), log)
        assert layer.connect().dws_version
        assert signal.count == 4
        layer.stop()
        emulator.api_faults.add(ApiFault(status=403, count=1, message="go away"))
        with pytest.raises(KubeError, match="403 go away"):
            KubeLayer(emulator.kubeconfig, Recorder(), log).connect()
        assert signal.count == 4
        emulator.api_faults.add(ApiFault(status=503, count=100, message="down for good"))
        with pytest.raises(KubeError, match="503 down for good"):
            KubeLayer(emulator.kubeconfig, Recorder(), log,
                      {"retry_deadline": 0.5}).connect()
    finally:
        emulator.api_faults.clear()
        log.removeHandler(signal)


def test_pinned_versions(emulator, make_layer):
    layer = make_layer({"dws_api_version": "v1alpha6", "nnf_api_version": "v1alpha10"})
    assert (layer.kinds.dws_version, layer.kinds.nnf_version) == ("v1alpha6", "v1alpha10")
    assert layer.kinds["Workflow"].api_version == f"{G}/v1alpha6"
    assert layer.kinds["Secret"].api_version == "v1"


def test_stop_is_prompt(emulator, layer, events):
    kinds = ["Workflow", "Computes", "Servers", "DirectiveBreakdown", "ClientMount", "Storage",
             "SystemStatus", "SystemConfiguration", "NnfDataMovement", "Secret"]
    layer.start_watches(kinds)
    for kind in kinds:
        events.sync(kind)
    watch_connected(emulator, len(kinds))
    start = time.monotonic()
    layer.stop()
    assert time.monotonic() - start < 1.0
    threads = [w._thread for w in layer.watches.values()]
    threads += [w.thread for w in layer.pool._workers]
    assert not any(t.is_alive() for t in threads)
    assert emulator.api_faults.wait(lambda f: f.open_watches() == 0)
    n = len(events)
    layer.submit(k8s("get", name="x", token="late"))  # dropped with a warning
    assert len(events) == n and layer.pending() == 0
