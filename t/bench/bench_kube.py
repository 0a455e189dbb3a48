"""The dws service's Kubernetes layer (flux_dws.k8s): per-call latency
and client CPU for create / merge patch / get through the writer pool, the
pool's pipelined rate, watch delivery, and what ``_preload_content=False``
(raw JSON, no client model decoding) saves per call.

The emulator runs as a subprocess (TLS + token, as a real API server), so the
CPU figures (``time.process_time`` of this process) are the client's alone.
A Workflow-sized object (a few kB, with status) is used, since decoding cost
grows with size.
"""

from __future__ import annotations

import json
import queue
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kubernetes import client, config

from flux_dws.emulator import start_subprocess
from flux_dws.k8s.layer import KubeLayer

G, V = "dataworkflowservices.github.io", "v1alpha7"
N = 300


def _storage(name: str) -> dict[str, Any]:
    return {"apiVersion": f"{G}/{V}", "kind": "Storage",
            "metadata": {"name": name, "labels": {"x": "y"}},
            "spec": {"state": "Enabled", "mode": "Live"},
            "status": {"devices": [{"slot": f"{i}", "model": "disk", "serialNumber": f"sn{i}",
                                    "capacity": 1 << 40, "status": "Ready"}
                                   for i in range(16)],
                       "access": {"computes": [{"name": f"compute-{i:03d}", "status": "Ready"}
                                               for i in range(16)]}}}


def _timed(label: str, n: int, fn: Any) -> None:
    lat: list[float] = []
    c0 = time.process_time()
    t0 = time.perf_counter()
    for i in range(n):
        s = time.perf_counter()
        fn(i)
        lat.append(time.perf_counter() - s)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    lat.sort()
    print(f"{label}: p50 {statistics.median(lat) * 1e3:.2f} ms, "
          f"p99 {lat[int(n * 0.99) - 1] * 1e3:.2f} ms, client CPU "
          f"{cpu / n * 1e3:.3f} ms/call, {n / wall:.0f} calls/s")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kc = Path(tmp) / "kubeconfig"
        proc = start_subprocess(kc)
        try:
            _run(kc)
        finally:
            proc.terminate()
            proc.wait()


def _run(kc: Path) -> None:
    q: queue.Queue[dict[str, Any]] = queue.Queue()
    layer = KubeLayer(kc, q.put)
    layer.connect()

    def call(action: dict[str, Any]) -> dict[str, Any]:
        layer.submit(action)
        while True:
            ev = q.get(timeout=30)
            if ev["type"] == "k8s-result":
                assert ev["ok"], ev
                return ev

    base = {"action": "k8s", "kind": "Storage", "namespace": "default", "token": "t"}
    _timed("pool create (one at a time)", N, lambda i: call(
        {**base, "op": "create", "body": _storage(f"s{i}")}))
    _timed("pool merge patch (one at a time)", N, lambda i: call(
        {**base, "op": "patch", "name": f"s{i}", "body": {"metadata": {"labels": {"n": "1"}}}}))
    _timed("pool get (one at a time)", N, lambda i: call(
        {**base, "op": "get", "name": f"s{i}"}))

    # pipelined: N patches over N objects submitted at once, 4 workers
    c0, t0 = time.process_time(), time.perf_counter()
    for i in range(N):
        layer.submit({**base, "op": "patch", "name": f"s{i}", "token": i,
                      "body": {"metadata": {"labels": {"n": "2"}}}})
    got = 0
    while got < N:
        if q.get(timeout=30)["type"] == "k8s-result":
            got += 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"pool merge patch (pipelined, {layer.settings.writers} writers): {N / wall:.0f}/s, "
          f"client CPU {cpu / N * 1e3:.3f} ms/call")

    # watch delivery: write (through the pool) to watch event
    layer.start_watches(["Storage"])
    while q.get(timeout=30)["type"] != "sync":
        pass
    lat: list[float] = []
    for i in range(100):
        t = time.perf_counter()
        layer.submit({**base, "op": "patch", "name": "s0", "token": None,
                      "body": {"metadata": {"labels": {"n": f"w{i}"}}}})
        while True:
            ev = q.get(timeout=30)
            if ev["type"] == "watch" and ev["object"]["metadata"]["labels"]["n"] == f"w{i}":
                lat.append(time.perf_counter() - t)
                break
    lat.sort()
    print(f"submit to watch event: p50 {statistics.median(lat) * 1e3:.2f} ms, "
          f"p99 {lat[98] * 1e3:.2f} ms")
    layer.stop()

    # the client itself, with and without model decoding
    api_client = config.new_client_from_config(str(kc))  # type: ignore[no-untyped-call]
    api = client.CustomObjectsApi(api_client)
    core = client.CoreV1Api(api_client)
    core.create_namespaced_secret("default", {"metadata": {"name": "sec"},
                                              "data": {f"k{i}": "dmFsdWU=" for i in range(20)}})
    args = (G, V, "default", "storages")
    _timed("client get, decoded by the client", N,
           lambda i: api.get_namespaced_custom_object(*args, f"s{i}"))
    _timed("client get, _preload_content=False + json.loads", N,
           lambda i: json.loads(api.get_namespaced_custom_object(
               *args, f"s{i}", _preload_content=False).data))
    _timed("client merge patch, decoded by the client", N,
           lambda i: api.patch_namespaced_custom_object(
               *args, f"s{i}", {"metadata": {"labels": {"n": "3"}}}))
    _timed("client merge patch, _preload_content=False + json.loads", N,
           lambda i: json.loads(api.patch_namespaced_custom_object(
               *args, f"s{i}", {"metadata": {"labels": {"n": "4"}}},
               _preload_content=False).data))
    _timed("client Secret get, V1Secret + sanitize_for_serialization", N,
           lambda i: api_client.sanitize_for_serialization(
               core.read_namespaced_secret("sec", "default")))
    _timed("client Secret get, _preload_content=False + json.loads", N,
           lambda i: json.loads(core.read_namespaced_secret(
               "sec", "default", _preload_content=False).data))
    _timed("client list of 300 Storages, decoded by the client", 20,
           lambda i: api.list_namespaced_custom_object(*args))
    _timed("client list of 300 Storages, _preload_content=False + json.loads", 20,
           lambda i: json.loads(api.list_namespaced_custom_object(
               *args, _preload_content=False).data))
    # what KubeLayer.connect's proxy assignment saves (the token hook re-sets
    # the host before every call; the host setter re-reads the environment)
    api_client.configuration.proxy = api_client.configuration.proxy
    _timed("client get, _preload_content=False + json.loads, proxy assigned", N,
           lambda i: json.loads(api.get_namespaced_custom_object(
               *args, f"s{i}", _preload_content=False).data))
    api_client.close()


if __name__ == "__main__":
    main()
