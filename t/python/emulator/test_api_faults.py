"""The emulator's HTTP-level faults (emulator.apifaults): failing or dropped
requests, cut watch streams, forced 410s, and the /_emulator/api-faults
endpoint."""

from __future__ import annotations

import http.client
import json
import ssl
import threading

import pytest
from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from flux_dws.apiserver.apifaults import ApiFault
from flux_dws.emulator import Emulator

from .conftest import G, V, storage


def request(emu: Emulator, method: str, path: str, body=None, token: str | None = "ok"):
    """(status, headers, decoded body) of one request on a fresh connection."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    conn = http.client.HTTPSConnection(emu.host, emu.port, context=ctx, timeout=10)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {emu.token if token == 'ok' else token}"
    conn.request(method, path, json.dumps(body) if body is not None else None, headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.headers, json.loads(data) if data else None


def test_status_rules(emulator):
    api = emulator.custom_objects_api()
    api.create_namespaced_custom_object(G, V, "default", "storages", storage("s"))
    emulator.api_fault(429, method="get", path=r"/storages/s$", count=2, retry_after=3,
                       message="slow down")
    code, headers, body = request(emulator, "GET", f"/apis/{G}/{V}/namespaces/default/storages/s")
    assert (code, headers["Retry-After"], body["reason"], body["message"]) == \
        (429, "3", "TooManyRequests", "slow down")
    code, _, _ = request(emulator, "GET", f"/apis/{G}/{V}/namespaces/default/storages/s")
    assert code == 429  # (the client's default urllib3 Retry would wait and retry a 429)
    assert api.get_namespaced_custom_object(G, V, "default", "storages", "s")  # used up
    emulator.api_fault(503, method="PATCH")
    api.get_namespaced_custom_object(G, V, "default", "storages", "s")  # other methods pass
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_custom_object(G, V, "default", "storages", "s", {})
    assert (exc.value.status, json.loads(exc.value.body)["reason"]) == (503, "ServiceUnavailable")
    assert "Retry-After" not in exc.value.headers
    assert emulator.api_faults.failed == 3 and emulator.api_faults.rules == []


def test_drop_rule(emulator):
    emulator.api_fault(path="/storages", drop=True)
    path = f"/apis/{G}/{V}/namespaces/default/storages"
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        request(emulator, "GET", path)  # no answer at all
    assert request(emulator, "GET", path)[0] == 200  # used up
    # the official client's default urllib3 Retry hides one dropped GET
    emulator.api_fault(path="/storages", drop=True)
    api = emulator.custom_objects_api()
    assert api.list_namespaced_custom_object(G, V, "default", "storages")["items"] == []
    assert emulator.api_faults.failed == 2


def test_admin_paths_are_never_faulted(emulator):
    emulator.api_fault(500, count=5)
    code, _, body = request(emulator, "GET", "/_emulator/api-faults")
    assert code == 200 and body["faults"][0]["count"] == 5
    code, _, _ = request(emulator, "GET", "/version")
    assert code == 500


def _watcher(emu: Emulator, rv: str, out: list, done: threading.Event) -> None:
    api = emu.custom_objects_api()
    try:
        for ev in watch.Watch().stream(api.list_namespaced_custom_object, G, V, "default",
                                       "storages", resource_version=rv, timeout_seconds=30):
            out.append(ev["type"])
    except Exception as exc:
        out.append(exc)
    finally:
        done.set()


def test_drop_watches_cuts_streams(emulator):
    api = emulator.custom_objects_api()
    rv = api.list_namespaced_custom_object(G, V, "default", "storages")["metadata"][
        "resourceVersion"]
    out: list = []
    done = threading.Event()
    threading.Thread(target=_watcher, args=(emulator, rv, out, done), daemon=True).start()
    assert emulator.api_faults.wait(lambda f: f.open_watches() == 1)
    assert emulator.drop_watches() == 1
    assert done.wait(10)
    assert len(out) == 1 and not isinstance(out[0], str)  # the stream broke, no events
    assert emulator.api_faults.open_watches() == 0 and emulator.api_faults.dropped == 1


def test_expire_watches(emulator):
    api = emulator.custom_objects_api()
    rv = api.list_namespaced_custom_object(G, V, "default", "storages")["metadata"][
        "resourceVersion"]
    emulator.expire_watches(1)
    w = watch.Watch()
    with pytest.raises(ApiException) as exc:
        for _ in w.stream(api.list_namespaced_custom_object, G, V, "default", "storages",
                          resource_version=rv, timeout_seconds=1):
            pass
    assert exc.value.status == 410
    assert emulator.api_faults.expire == 0
    # the next one is served (and one without a resourceVersion never uses a 410 up)
    emulator.expire_watches(1)
    events = list(watch.Watch().stream(api.list_namespaced_custom_object, G, V, "default",
                                       "storages", timeout_seconds=1))
    assert events == [] and emulator.api_faults.expire == 1


def test_admin_endpoint(emulator):
    base = "/_emulator/api-faults"
    code, _, body = request(emulator, "POST", base, {"status": 429, "method": "GET",
                                                     "path": "/storages", "count": 2,
                                                     "retryAfter": 1})
    assert code == 201 and body["status"] == 429 and body["retryAfter"] == 1
    code, _, body = request(emulator, "POST", base, {"expireWatches": 2})
    assert code == 200 and body["expireWatches"] == 2
    code, _, body = request(emulator, "POST", base, {"dropWatches": True})
    assert (code, body) == (200, {"dropped": 0})
    code, _, body = request(emulator, "POST", base, {"muteWatches": True})
    assert code == 200 and body["muteWatches"] is True and body["mutedEvents"] == 0
    code, _, body = request(emulator, "GET", base)
    assert len(body["faults"]) == 1 and body["openWatches"] == 0
    for bad in ({"status": 200}, {"count": 0}, {"path": "("}, {"bogus": 1}, [1],
                {"drop": "yes"}, {"retryAfter": -1}, {"expireWatches": -1},
                {"muteWatches": 1}):
        code, _, body = request(emulator, "POST", base, bad)
        assert code == 400, (bad, body)
    code, _, body = request(emulator, "DELETE", base)
    assert code == 200 and body["faults"] == [] and body["expireWatches"] == 0
    assert body["muteWatches"] is False  # cleared with the rest
    code, _, _ = request(emulator, "POST", base, {"status": 500}, token="wrong")
    assert code == 401
    code, _, _ = request(emulator, "PUT", base, {})
    assert code == 405


def test_fault_validation():
    with pytest.raises(ValueError):
        ApiFault(status=302)
    with pytest.raises(ValueError):
        ApiFault(count=-1)
    f = ApiFault(500, "post", "/x")
    assert f.matches("POST", "/a/x?y") and not f.matches("GET", "/a/x")
    assert f.message == "injected fault: HTTP 500"


def test_cli(emulator, capsys):
    from flux_dws.cli.main import main

    kc = ["fault", "--kubeconfig", str(emulator.kubeconfig)]
    assert main([*kc, "api", "--status", "429", "--method", "PATCH", "--path", "/storages/",
                 "--count", "2", "--retry-after", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["retryAfter"] == 1
    assert main([*kc, "api", "--drop", "--path", "watch="]) == 0
    capsys.readouterr()
    assert main([*kc, "expire-watches", "--count", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["expireWatches"] == 3
    assert main([*kc, "api-list"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(f["status"], f["drop"]) for f in listed["faults"]] == [(429, False), (503, True)]
    assert main([*kc, "drop-watches"]) == 0
    assert json.loads(capsys.readouterr().out) == {"dropped": 0}
    assert main([*kc, "mute-watches"]) == 0
    assert json.loads(capsys.readouterr().out)["muteWatches"] is True
    assert emulator.api_faults.muted
    assert main([*kc, "mute-watches", "--off"]) == 0
    assert json.loads(capsys.readouterr().out)["muteWatches"] is False
    assert main([*kc, "api-clear"]) == 0
    assert emulator.api_faults.rules == [] and emulator.api_faults.expire == 0
    with pytest.raises(SystemExit, match="invalid API fault"):
        main([*kc, "api", "--status", "200"])


def test_muted_watches_stay_open_and_lose_their_events(emulator):
    """mute-watches: a watch (open before, or opened while muted) stays
    open and says nothing, its events counted as lost; unmuted, it speaks
    again from the next change (what it lost stays lost)."""
    import queue
    import threading

    api = emulator.custom_objects_api()
    got: queue.SimpleQueue = queue.SimpleQueue()
    rv = api.list_namespaced_custom_object(G, V, "default", "storages")["metadata"][
        "resourceVersion"]

    def watching() -> None:
        for ev in watch.Watch().stream(api.list_namespaced_custom_object, G, V, "default",
                                       "storages", resource_version=rv, timeout_seconds=30):
            got.put((ev["type"], ev["object"]["metadata"]["name"]))

    emulator.mute_watches()
    threading.Thread(target=watching, daemon=True).start()
    assert emulator.api_faults.wait(lambda f: f.open_watches() == 1)
    body = {"apiVersion": f"{G}/{V}", "kind": "Storage", "metadata": {"name": "lost"}}
    api.create_namespaced_custom_object(G, V, "default", "storages", body)
    assert emulator.api_faults.wait(lambda f: f.muted_events == 1)
    emulator.mute_watches(False)
    body["metadata"]["name"] = "heard"
    api.create_namespaced_custom_object(G, V, "default", "storages", body)
    assert got.get(timeout=10) == ("ADDED", "heard")
    assert got.empty() and emulator.api_faults.open_watches() == 1


def test_a_stopped_server_closes_its_kept_alive_connections():
    """Once stopped, what still comes on a kept-alive connection gets 503
    and the connection closes, as from Go's server: a client's next
    request finds the server that follows, not this one for ever."""
    emu = Emulator().start()
    try:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(emu.host, emu.port, context=ctx, timeout=10)
        headers = {"Authorization": f"Bearer {emu.token}"}
        conn.request("GET", "/version", headers=headers)
        first = conn.getresponse()
        first.read()
        assert first.status == 200 and first.headers.get("Connection") != "close"
        # the connection waits for its next request (else a handler still
        # answering the first sees stopping and closes without an answer,
        # as Go's server closes a connection busy when it shuts down)
        assert emu.settings.wait_idle(1, 30), "the connection never went idle"
        emu.settings.stopping.set()  # what Emulator.stop does first
        conn.request("GET", "/version", headers=headers)
        second = conn.getresponse()
        body = json.loads(second.read())
        assert second.status == 503 and second.headers["Connection"] == "close"
        assert body["message"] == "the API server is shutting down"
        conn.close()
    finally:
        emu.stop()


def test_cli_hold_is_for_data_movement_only(emulator, capsys):
    from flux_dws.cli.main import main

    kc = ["fault", "--kubeconfig", str(emulator.kubeconfig)]
    assert main([*kc, "hold", "--state", "Setup"]) == 2
    assert capsys.readouterr().err == ("flux-dws fault hold: only a data movement is held"
                                       " (--kind datamovement)\n")
