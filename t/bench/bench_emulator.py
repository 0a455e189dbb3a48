"""The emulated DWS/nnf-sos under load (issue goals: with zero latency,
1,000 concurrent workflows driven through every state by a client --
workflows/s and the controllers' reaction time from a desiredState write to
status.ready, p50/p99; El Capitan system start-up under 2 s).

The emulator runs as a subprocess (kind system, plain HTTP); the client uses
keep-alive http.client connections and one watch for readiness, and does
what flux-dws does between states (Servers from the breakdowns via libdws,
Computes after Setup).
"""

from __future__ import annotations

import http.client
import json
import queue
import statistics
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from flux_dws.emulator import Emulator, start_subprocess
from flux_dws.libdws.breakdown import RabbitMap, allocation_sets
from flux_dws.libdws.wfstates import STATES

G, V = "dataworkflowservices.github.io", "v1alpha7"
NS = f"/apis/{G}/{V}/namespaces/default"
N = 1000
MAP = {"compute-01": "kind-worker2", "compute-02": "kind-worker2",
       "compute-03": "kind-worker2", "compute-04": "kind-worker3"}


def _conn(server: str) -> http.client.HTTPConnection:
    u = urlsplit(server)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=60)


def _req(c: http.client.HTTPConnection, method: str, path: str, body: object = None,
         ctype: str = "application/merge-patch+json") -> dict:  # type: ignore[type-arg]
    data = json.dumps(body).encode() if body is not None else None
    c.request(method, path, body=data, headers={"Content-Type": ctype} if data else {})
    r = c.getresponse()
    out = r.read()
    if r.status >= 300:
        raise RuntimeError(f"{method} {path}: {r.status} {out[:300]!r}")
    return json.loads(out) if out else {}


def _watch(server: str, events: queue.Queue) -> None:  # type: ignore[type-arg]
    c = _conn(server)
    c.request("GET", f"{NS}/workflows?watch=1&timeoutSeconds=600")
    r = c.getresponse()
    buf = b""
    seen: set[tuple[str, str]] = set()
    while True:
        try:
            chunk = r.read1(1 << 16)  # type: ignore[attr-defined]
        except http.client.IncompleteRead:
            return  # the emulator was stopped
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            ev = json.loads(line)
            st = ev["object"].get("status") or {}
            key = (ev["object"]["metadata"]["name"], st.get("state", ""))
            if st.get("ready") and key not in seen:
                seen.add(key)
                events.put((time.perf_counter(), *key))


def drive(server: str) -> tuple[float, list[float]]:
    c = _conn(server)
    events: queue.Queue[tuple[float, str, str]] = queue.Queue()
    threading.Thread(target=_watch, args=(server, events), daemon=True).start()
    time.sleep(0.3)
    rmap = RabbitMap(MAP)
    counts = rmap.counts("compute-[01-02]")
    written: dict[tuple[str, str], float] = {}
    t0 = time.perf_counter()
    for i in range(N):
        name = f"wf{i}"
        written[(name, "Proposal")] = time.perf_counter()
        _req(c, "POST", f"{NS}/workflows", {
            "apiVersion": f"{G}/{V}", "kind": "Workflow", "metadata": {"name": name},
            "spec": {"desiredState": "Proposal", "wlmID": "flux", "jobID": str(i), "userID": 1,
                     "groupID": 1,
                     "dwDirectives": ["#DW jobdw type=xfs capacity=10GiB name=scratch"]}},
             "application/json")
    reactions: list[float] = []
    done = 0
    while done < N:
        t, name, state = events.get(timeout=120)
        if (name, state) in written:
            reactions.append(t - written.pop((name, state)))
        if state == "Teardown":
            done += 1
            _req(c, "DELETE", f"{NS}/workflows/{name}")
            continue
        nxt = STATES[STATES.index(state) + 1]
        if state == "Proposal":
            dbd = _req(c, "GET", f"{NS}/directivebreakdowns/{name}-0")
            sets = allocation_sets(dbd["status"]["storage"], counts)
            _req(c, "PATCH", f"{NS}/servers/{name}-0", {"spec": {"allocationSets": sets}})
        if state == "Setup":
            _req(c, "PATCH", f"{NS}/computes/{name}",
                 {"data": [{"name": "compute-01"}, {"name": "compute-02"}]})
        written[(name, nxt)] = time.perf_counter()
        _req(c, "PATCH", f"{NS}/workflows/{name}", {"spec": {"desiredState": nxt}})
    return time.perf_counter() - t0, reactions


def main() -> None:
    t0 = time.perf_counter()
    with Emulator(system="elcap", use_tls=False, token=None, latency="zero") as emu:
        n = len(emu.store.objects)
    print(f"El Capitan system start-up (seed {n} objects + serve), in process:"
          f" {time.perf_counter() - t0:.2f} s")
    with tempfile.TemporaryDirectory() as d:
        kc = Path(d) / "kc"
        proc = start_subprocess(kc, "--system", "kind", "--latency", "zero", "--plain-http",
                                "--no-auth")
        try:
            server = yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"]
            wall, reactions = drive(server)
        finally:
            proc.terminate()
            proc.wait(10)
    reactions.sort()
    # drive() counts a workflow done when its Teardown is ready, which DWS
    # reaches only through every state before it without an error
    print(f"{N} concurrent workflows through all 7 states (every one reached Teardown):"
          f" {wall:.1f} s,"
          f" {N / wall:.1f} workflows/s ({7 * N / wall:.0f} state transitions/s)")
    print(f"reaction desiredState write -> ready ({len(reactions)} transitions):"
          f" p50 {statistics.median(reactions) * 1e3:.1f} ms,"
          f" p99 {reactions[int(len(reactions) * 0.99) - 1] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
