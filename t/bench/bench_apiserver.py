"""The emulator's API server under load (issue goals on a 2-core machine:
>= 2,000 merge patches/s with 1,000 live objects, watch delivery p99 <= 5 ms
from write to client, 11,136 objects listed in under 1 s).

The server runs as a subprocess (`flux-dws emulator --plain-http --no-auth`,
and once with TLS + token); clients use keep-alive http.client connections
from this process (and 4 extra processes for the concurrent figure).
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import statistics
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from flux_dws.emulator import start_subprocess

G, V = "dataworkflowservices.github.io", "v1alpha7"
BASE = f"/apis/{G}/{V}/namespaces/default/storages"


def _conn(server: str) -> http.client.HTTPConnection:
    u = urlsplit(server)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.connect()
    import socket
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return c


def _req(c: http.client.HTTPConnection, method: str, path: str, body: object = None,
         ctype: str = "application/json") -> bytes:
    data = json.dumps(body).encode() if body is not None else None
    c.request(method, path, body=data, headers={"Content-Type": ctype} if data else {})
    r = c.getresponse()
    out = r.read()
    if r.status >= 300:
        raise RuntimeError(f"{method} {path}: {r.status} {out[:200]!r}")
    return out


def _create(c: http.client.HTTPConnection, n: int, offset: int = 0) -> None:
    for i in range(offset, offset + n):
        _req(c, "POST", BASE, {"apiVersion": f"{G}/{V}", "kind": "Storage",
                               "metadata": {"name": f"rabbit{i}"}})


def _patcher(server: str, seconds: float, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    c = _conn(server)
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        _req(c, "PATCH", f"{BASE}/rabbit{n % 1000}",
             {"metadata": {"labels": {"n": str(n)}}}, "application/merge-patch+json")
        n += 1
    out.put(n)


def _watch_latencies(server: str, samples: int) -> list[float]:
    c = _conn(server)
    rv = json.loads(_req(c, "GET", BASE + "?limit=1"))["metadata"]["resourceVersion"]
    sent: dict[str, float] = {}
    got: list[float] = []
    ready = threading.Event()

    def reader() -> None:
        wc = _conn(server)
        wc.request("GET", f"{BASE}?watch=1&resourceVersion={rv}&timeoutSeconds=60")
        r = wc.getresponse()
        ready.set()
        buf = b""
        while len(got) < samples:
            chunk = r.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                t = time.perf_counter()
                ev = json.loads(line)
                mark = (ev["object"]["metadata"].get("labels") or {}).get("mark")
                if mark in sent:
                    got.append(t - sent.pop(mark))

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    ready.wait(5)
    time.sleep(0.2)
    for i in range(samples):
        mark = f"m{i}"
        sent[mark] = time.perf_counter()
        _req(c, "PATCH", f"{BASE}/rabbit{i % 1000}", {"metadata": {"labels": {"mark": mark}}},
             "application/merge-patch+json")
        time.sleep(0.004)
    th.join(10)
    return got


def _run(tls: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        kc = Path(d) / "kc"
        args = [] if tls else ["--plain-http", "--no-auth"]
        proc = start_subprocess(kc, *args)
        try:
            server = yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"]
            if tls:
                _tls_figures(kc)
                return
            c = _conn(server)
            t0 = time.perf_counter()
            _create(c, 1000)
            print(f"create 1,000 objects: {1000 / (time.perf_counter() - t0):.0f} /s")
            n, end, t0 = 0, time.monotonic() + 3, time.perf_counter()
            while time.monotonic() < end:
                _req(c, "PATCH", f"{BASE}/rabbit{n % 1000}",
                     {"metadata": {"labels": {"n": str(n)}}}, "application/merge-patch+json")
                n += 1
            print(f"merge patches, 1 client, 1,000 live objects:"
                  f" {n / (time.perf_counter() - t0):.0f} /s")
            q: multiprocessing.Queue[int] = multiprocessing.Queue()
            procs = [multiprocessing.Process(target=_patcher, args=(server, 3.0, q))
                     for _ in range(4)]
            for p in procs:
                p.start()
            total = sum(q.get() for _ in procs)
            for p in procs:
                p.join()
            print(f"merge patches, 4 client processes: {total / 3.0:.0f} /s")
            lat = sorted(_watch_latencies(server, 500))
            if lat:
                p50 = statistics.median(lat) * 1e3
                p99 = lat[int(len(lat) * 0.99) - 1] * 1e3
                print(f"watch delivery write->client ({len(lat)} events): p50 {p50:.2f} ms,"
                      f" p99 {p99:.2f} ms")
            _create(c, 11136 - 1000, 1000)
            best = min(_timed_list(c) for _ in range(3))
            print(f"list 11,136 objects (request + JSON decode): {best * 1e3:.0f} ms")
            from kubernetes import client, config

            api = client.CustomObjectsApi(config.new_client_from_config(str(kc)))
            t0 = time.perf_counter()
            got = api.list_namespaced_custom_object(G, V, "default", "storages")["items"]
            assert len(got) == 11136
            print(f"list 11,136 objects through the official client:"
                  f" {(time.perf_counter() - t0) * 1e3:.0f} ms")
        finally:
            proc.terminate()
            proc.wait(10)


def _timed_list(c: http.client.HTTPConnection) -> float:
    t0 = time.perf_counter()
    items = json.loads(_req(c, "GET", BASE))["items"]
    assert len(items) == 11136
    return time.perf_counter() - t0


def _tls_figures(kc: Path) -> None:
    from kubernetes import client, config

    api = client.CustomObjectsApi(config.new_client_from_config(str(kc)))
    for i in range(200):
        api.create_namespaced_custom_object(G, V, "default", "storages", {
            "apiVersion": f"{G}/{V}", "kind": "Storage", "metadata": {"name": f"r{i}"}})
    n, end, t0 = 0, time.monotonic() + 2, time.perf_counter()
    while time.monotonic() < end:
        api.patch_namespaced_custom_object(G, V, "default", "storages", f"r{n % 200}",
                                           {"metadata": {"labels": {"n": str(n)}}})
        n += 1
    print(f"merge patches through the official client over TLS + token:"
          f" {n / (time.perf_counter() - t0):.0f} /s")


def main() -> None:
    _run(tls=False)
    _run(tls=True)


if __name__ == "__main__":
    main()
