"""Rabbit health faults as a shell test drives them: ``flux-dws fault
health`` (flags that persist, --reset), ``fault storage`` (an administrator's
Storage patches, Testing-mode status by hand) and ``fault storm`` (a burst of
Storage updates that ends where it began); their admin endpoints' refusals."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import io
import json
import re
import ssl
import sys
import urllib.error
import urllib.request

import pytest
from kubernetes import watch
from t.python.emulator.conftest import G, V, controllers_passed, store_events
from t.python.emulator.watching import until

from flux_dws.cli.fault import read_kubeconfig
from flux_dws.cli.main import main
from flux_dws.emulator import Emulator

STORAGES = (G, "storages")


def fault(emu, *argv):
    """(exit status, stdout, stderr) of ``flux-dws fault ARGV`` against emu,
    as a shell sees them (a SystemExit message is stderr and status 1)."""
    kc = ["fault", "--kubeconfig", str(emu.kubeconfig)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([*kc, *argv])
        except SystemExit as exc:
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
                rc = 1
            else:
                rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


def ok(emu, *argv):
    """The JSON ``flux-dws fault ARGV`` prints (it must succeed)."""
    rc, out, err = fault(emu, *argv)
    assert rc == 0, err
    return json.loads(out)


def refused(emu, rc, message, *argv):
    """``flux-dws fault ARGV`` fails with status rc and one line naming message."""
    got, out, err = fault(emu, *argv)
    assert got == rc, (got, out, err)
    assert out == ""
    lines = [ln for ln in err.splitlines() if ln and not ln.startswith(("usage:", " "))]
    assert len(lines) == 1 and message in lines[0], err


def post(emu, path, body, method="POST"):
    """(HTTP status, decoded answer) of an admin request, sent as is."""
    server, ca, token = read_kubeconfig(str(emu.kubeconfig))
    ctx = ssl.create_default_context(cadata=base64.b64decode(ca).decode())
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server + path, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def storage(api, name):
    return api.get_namespaced_custom_object(G, V, "default", "storages", name)


def links(obj):
    return {c["name"]: c["status"] for c in obj["status"]["access"]["computes"]}


def server_status(obj):
    return obj["status"]["access"]["servers"][0]["status"]


# --- fault health ---------------------------------------------------------------


def test_health_flags_set_what_they_name_and_persist(kind):
    api = kind.custom_objects_api()
    assert ok(kind, "health", "kind-worker2", "--fenced")["status"]["status"] == "Degraded"
    st = ok(kind, "health", "kind-worker2", "--status", "Offline")
    assert st["status"]["status"] == "Degraded" and server_status(st) == "Offline"
    st = ok(kind, "health", "kind-worker2", "--unfenced")
    assert st["status"]["status"] == "Offline"  # the node status stayed
    assert ok(kind, "health", "kind-worker2", "--status", "Ready", "--k8s-not-ready")[
        "status"]["status"] == "Offline"
    st = ok(kind, "health", "kind-worker2", "--link", "compute-01=Offline")
    assert st["status"] == storage(api, "kind-worker2")["status"]
    assert st["status"]["message"] == "Kubernetes node is offline"
    assert links(st)["compute-01"] == "Offline"
    st = ok(kind, "health", "kind-worker2", "--k8s-ready", "--drain-taint",
            "cray.nnf.node.drain")
    assert st["status"]["status"] == "Drained"
    assert st["status"]["message"] == "Kubernetes node is tainted with cray.nnf.node.drain"
    st = ok(kind, "health", "kind-worker2", "--no-drain-taint")
    assert st["status"]["status"] == "Ready" and links(st)["compute-01"] == "Offline"
    # a call that names nothing changes nothing
    assert ok(kind, "health", "kind-worker2")["status"] == st["status"]
    # the other rabbit never moved
    assert storage(api, "kind-worker3")["status"]["status"] == "Ready"


def test_health_reset(kind):
    api = kind.custom_objects_api()
    st = ok(kind, "health", "kind-worker2", "--status", "Failed", "--link",
            "compute-01=Offline", "--link", "compute-03=NotPresent", "--fenced",
            "--k8s-not-ready", "--drain-taint", "cray.nnf.node.drain")
    assert st["status"]["status"] == "Degraded"  # fencing wins
    st = ok(kind, "health", "kind-worker2", "--reset")
    assert st["status"]["status"] == "Ready" and server_status(st) == "Ready"
    assert set(links(st).values()) == {"Ready"}
    # as in nnf-sos, fencing leaves rebootRequired (and its message) until the
    # Storage is re-enabled
    assert st["status"]["rebootRequired"] is True
    ok(kind, "storage", "kind-worker2", "--state", "Disabled")
    st = ok(kind, "storage", "kind-worker2", "--state", "Enabled")
    assert st["status"]["rebootRequired"] is False and st["status"]["message"] == ""
    assert st["status"]["status"] == "Ready"
    # --reset, then what the same call names
    ok(kind, "health", "kind-worker2", "--status", "Offline", "--k8s-not-ready")
    st = ok(kind, "health", "kind-worker2", "--reset", "--link", "compute-02=Offline")
    assert st["status"]["status"] == "Ready"
    assert links(st) == {"compute-01": "Ready", "compute-02": "Offline", "compute-03": "Ready"}
    assert until(api, "storages", "kind-worker2", lambda o: o["status"] == st["status"])


def test_health_reset_in_testing_mode_shows_once_live(kind):
    api = kind.custom_objects_api()
    ok(kind, "health", "kind-worker3", "--status", "Offline")
    ok(kind, "storage", "kind-worker3", "--mode", "Testing")
    assert ok(kind, "health", "kind-worker3", "--reset")["status"]["status"] == "Offline"
    controllers_passed(api)
    assert storage(api, "kind-worker3")["status"]["status"] == "Offline"
    assert ok(kind, "storage", "kind-worker3", "--mode", "Live")["status"]["status"] == "Ready"


def test_health_refusals_change_nothing(kind):
    api = kind.custom_objects_api()
    before = storage(api, "kind-worker2")
    refused(kind, 1, "no rabbit 'nope' (no Storage default/nope)", "health", "nope",
            "--status", "Offline")
    refused(kind, 1, "rabbit 'kind-worker2' has no compute 'compute-04'", "health",
            "kind-worker2", "--status", "Offline", "--link", "compute-04=Offline")
    refused(kind, 2, "--link compute-01: 'offline' is not a status", "health",
            "kind-worker2", "--link", "compute-01=offline")
    refused(kind, 2, "invalid choice: 'Bogus'", "health", "kind-worker2", "--status", "Bogus")
    refused(kind, 2, "not a drain taint key", "health", "kind-worker2", "--drain-taint",
            "node.kubernetes.io/unschedulable")
    refused(kind, 2, "not allowed with argument", "health", "kind-worker2", "--fenced",
            "--unfenced")
    assert storage(api, "kind-worker2") == before


@pytest.mark.parametrize(("body", "message"), [
    ({"name": 5}, "'name' has the wrong type (int)"),
    ({}, "'name' is required"),
    ({"name": "kind-worker2", "fenced": "yes"}, "'fenced' has the wrong type (str)"),
    ({"name": "kind-worker2", "k8sReady": 1}, "'k8sReady' has the wrong type (int)"),
    ({"name": "kind-worker2", "reset": None}, "'reset' has the wrong type (NoneType)"),
    ({"name": "kind-worker2", "fencd": True}, "unknown field 'fencd'"),
    ({"name": "kind-worker2", "drainTaint": ""}, "'' is not a drain taint key"),
    ({"name": "kind-worker2", "drainTaint": "x"}, "'x' is not a drain taint key"),
    ({"name": "kind-worker2", "status": "Bogus"}, "node status: 'Bogus' is not a status"),
    ({"name": "kind-worker2", "links": {"compute-01": 3}}, "'links' maps computes"),
    ({"name": "kind-worker2", "links": ["compute-01"]}, "'links' has the wrong type"),
    ({"name": "kind-worker3", "links": {"compute-01": "Offline"}},
     "rabbit 'kind-worker3' has no compute 'compute-01'"),
])
def test_health_endpoint_refuses_bad_bodies(kind, body, message):
    code, answer = post(kind, "/_emulator/health", body)
    assert code == 400 and message in answer["message"], answer


def test_health_endpoint_null_drain_taint_removes_it(kind):
    code, obj = post(kind, "/_emulator/health", {"name": "kind-worker2",
                                                 "drainTaint": "cray.nnf.node.drain"})
    assert code == 200 and obj["status"]["status"] == "Drained"
    code, obj = post(kind, "/_emulator/health", {"name": "kind-worker2", "drainTaint": None})
    assert code == 200 and obj["status"]["status"] == "Ready"


@pytest.mark.parametrize("action", ["health", "storage", "storm", "vanish"])
def test_admin_endpoints_want_post_and_a_json_object(kind, action):
    code, answer = post(kind, f"/_emulator/{action}", None, method="GET")
    assert code == 405 and answer["message"] == f"/_emulator/{action}: use POST"
    code, answer = post(kind, f"/_emulator/{action}", ["kind-worker2"])
    assert code == 400 and answer["message"] == f"{action}: the body must be a JSON object"


@pytest.mark.parametrize("argv", [["health", "r"], ["storage", "r"], ["storm", "--events", "2"]])
def test_rabbit_faults_need_controllers(emu, argv):
    refused(emu, 1, "runs no controllers", *argv)


# --- fault storage --------------------------------------------------------------


DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def test_storage_disable_with_reason_and_enable(kind):
    api = kind.custom_objects_api()
    api.patch_namespaced_custom_object(G, V, "default", "storages", "kind-worker2",
                                       {"metadata": {"annotations": {"keep": "me"}}})
    reason = "flux job fluxjob-42 epilog timed out (dws.abort)"
    start = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    st = ok(kind, "storage", "kind-worker2", "--state", "Disabled", "--reason", reason)
    end = dt.datetime.now(dt.timezone.utc)
    notes = st["metadata"]["annotations"]
    assert notes["disable_reason"] == reason and notes["keep"] == "me"
    assert DATE.match(notes["disable_date"]), notes
    when = dt.datetime.strptime(notes["disable_date"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=dt.timezone.utc)
    assert start <= when <= end
    assert st["spec"] == {"state": "Disabled", "mode": "Live"}
    # a client watching sees what flux's dws.abort would have written
    seen = until(api, "storages", "kind-worker2", lambda o: o["status"]["status"] == "Disabled")
    assert seen["metadata"]["annotations"] == notes
    assert seen["status"]["message"] == "Storage node manually disabled"
    st = ok(kind, "storage", "kind-worker2", "--state", "Enabled")
    assert st["metadata"]["annotations"] == {"keep": "me"}
    assert st["spec"]["state"] == "Enabled" and st["status"]["status"] == "Ready"
    # Disabled without a reason: the spec only, as kubectl patch would
    st = ok(kind, "storage", "kind-worker2", "--state", "Disabled")
    assert st["metadata"]["annotations"] == {"keep": "me"}
    assert st["status"]["status"] == "Disabled"


def test_storage_enable_drops_an_emptied_annotations_map(kind):
    ok(kind, "storage", "kind-worker3", "--state", "Disabled", "--reason", "r")
    st = ok(kind, "storage", "kind-worker3", "--state", "Enabled")
    assert "annotations" not in st["metadata"]  # as the API server omits an empty map


def test_storage_testing_mode_status_by_hand(kind):
    api = kind.custom_objects_api()
    st = ok(kind, "storage", "kind-worker2", "--mode", "Testing", "--status", "Failed",
            "--link", "compute-02=Offline")
    assert st["spec"]["mode"] == "Testing" and st["status"]["status"] == "Failed"
    assert links(st) == {"compute-01": "Ready", "compute-02": "Offline", "compute-03": "Ready"}
    # the rabbit's own health does not show in Testing mode ...
    ok(kind, "health", "kind-worker2", "--link", "compute-01=Offline")
    controllers_passed(api)
    assert links(storage(api, "kind-worker2"))["compute-01"] == "Ready"
    # ... the Storage is already in Testing mode: --status needs no --mode
    st = ok(kind, "storage", "kind-worker2", "--status", "Ready", "--link", "compute-02=Fenced")
    assert st["status"]["status"] == "Ready" and links(st)["compute-02"] == "Fenced"
    # spec.state Disabled shows in any mode, whatever was written by hand
    st = ok(kind, "storage", "kind-worker2", "--state", "Disabled", "--status", "Ready")
    assert st["status"]["status"] == "Disabled"
    ok(kind, "storage", "kind-worker2", "--state", "Enabled")
    # Live again: nnf-sos rebuilds the status from the rabbit
    st = ok(kind, "storage", "kind-worker2", "--mode", "Live")
    assert links(st) == {"compute-01": "Offline", "compute-02": "Ready", "compute-03": "Ready"}
    assert until(api, "storages", "kind-worker2", lambda o: o["status"] == st["status"])


def test_storage_refusals_change_nothing(kind):
    api = kind.custom_objects_api()
    before = storage(api, "kind-worker2")
    refused(kind, 1, "is in mode Live: nnf-sos rebuilds its status from the rabbit",
            "storage", "kind-worker2", "--state", "Disabled", "--status", "Failed")
    refused(kind, 1, "no rabbit 'nope'", "storage", "nope", "--state", "Disabled")
    refused(kind, 1, "Storage 'kind-worker2' lists no compute 'compute-04'", "storage",
            "kind-worker2", "--mode", "Testing", "--link", "compute-04=Offline")
    refused(kind, 2, "--reason goes with --state Disabled", "storage", "kind-worker2",
            "--reason", "x")
    refused(kind, 2, "--reason is empty", "storage", "kind-worker2", "--state", "Disabled",
            "--reason", "")
    refused(kind, 2, "invalid choice: 'disabled'", "storage", "kind-worker2", "--state",
            "disabled")
    refused(kind, 2, "--link wants COMPUTE=STATUS", "storage", "kind-worker2", "--link", "x")
    assert storage(api, "kind-worker2") == before
    ok(kind, "storage", "kind-worker2", "--mode", "Testing")
    refused(kind, 1, "is in mode Live", "storage", "kind-worker2", "--mode", "Live",
            "--status", "Failed")
    assert storage(api, "kind-worker2")["spec"]["mode"] == "Testing"


@pytest.mark.parametrize(("body", "message"), [
    ({"name": "kind-worker2", "state": "Bogus"}, "state: 'Bogus' is not Enabled or Disabled"),
    ({"name": "kind-worker2", "mode": "live"}, "mode: 'live' is not Live or Testing"),
    ({"name": "kind-worker2", "reason": "x"}, "a reason goes with state Disabled"),
    ({"name": "kind-worker2", "state": "Disabled", "reason": ""},
     "a reason goes with state Disabled, and is not empty"),
    ({"name": "kind-worker2", "mode": "Testing", "status": "ready"},
     "status: 'ready' is not a status"),
    ({"name": "kind-worker2", "mode": "Testing", "links": {"compute-01": "x"}},
     "link compute-01: 'x' is not a status"),
    ({"name": "kind-worker2", "state": 1}, "'state' has the wrong type (int)"),
])
def test_storage_endpoint_refuses_bad_bodies(kind, body, message):
    code, answer = post(kind, "/_emulator/storage", body)
    assert code == 400 and message in answer["message"], answer


# --- fault storm ----------------------------------------------------------------


def statuses(api):
    return {o["metadata"]["name"]: o["status"] for o in
            api.list_namespaced_custom_object(G, V, "default", "storages")["items"]}


@pytest.mark.parametrize("events", [100, 101])
def test_storm_ends_where_it_began(kind, events):
    api = kind.custom_objects_api()
    controllers_passed(api)  # no Storage reconcile is left from the start
    listed = api.list_namespaced_custom_object(G, V, "default", "storages")
    before = {o["metadata"]["name"]: o["status"] for o in listed["items"]}
    q = store_events(kind, [STORAGES])
    out = ok(kind, "storm", "--events", str(events), "--seed", "3")
    assert out["events"] == out["updates"] == events
    assert out["seed"] == 3 and out["seconds"] > 0 and out["skipped"] == {}
    assert out["rabbits"] == ["kind-worker2", "kind-worker3"]
    # every update is in the store's event stream by the time the answer came
    evs = []
    while not q.empty():
        evs.append(q.get())
    assert len(evs) == events and {e.type for e in evs} == {"MODIFIED"}
    assert any(s == "Offline" for e in evs for s in
               [server_status(e.obj), *links(e.obj).values()])
    # a client watching from before the storm sees each update, then the
    # objects as they were
    seen, last = 0, {}
    w = watch.Watch()
    for ev in w.stream(api.list_namespaced_custom_object, G, V, "default", "storages",
                       resource_version=listed["metadata"]["resourceVersion"],
                       timeout_seconds=10):
        seen += 1
        last[ev["object"]["metadata"]["name"]] = ev["object"]["status"]
        if seen == events:
            w.stop()
    assert seen == events
    assert all(before[n] == s for n, s in last.items())
    controllers_passed(api)  # nnf-sos looked at every Storage again: nothing to change
    assert statuses(api) == before
    assert q.empty()


def test_storm_is_reproducible_by_seed():
    def run(seed):
        with Emulator(system="kind", latency="zero") as emu:
            controllers_passed(emu.custom_objects_api())
            q = store_events(emu, [STORAGES])
            ok(emu, "storm", "--events", "40", "--seed", str(seed))
            out = []
            while not q.empty():
                e = q.get()
                out.append((e.key[3], e.obj["status"]))
            return out
    assert run(11) == run(11)
    assert run(11) != run(12)


def test_storm_picks_rabbits(kind):
    api = kind.custom_objects_api()
    out = ok(kind, "storm", "--rabbits", "kind-worker3", "--events", "6")
    assert out["rabbits"] == ["kind-worker3"] and out["updates"] == 6
    assert isinstance(out["seed"], int)  # chosen, and told, to replay the storm
    assert ok(kind, "storm", "--rabbits", "kind-worker[2-3]", "--events", "7")["updates"] == 7
    # a Disabled rabbit still shows its links change (Live mode)
    ok(kind, "storage", "kind-worker3", "--state", "Disabled")
    q = store_events(kind, [STORAGES])
    assert ok(kind, "storm", "--rabbits", "kind-worker3", "--events", "4")["updates"] == 4
    assert {q.get().obj["status"]["status"] for _ in range(4)} == {"Disabled"}
    # Testing mode: nnf-sos leaves the status alone; 'all' skips it
    ok(kind, "storage", "kind-worker2", "--mode", "Testing")
    api.create_namespaced_custom_object(G, V, "default", "storages", {
        "apiVersion": f"{G}/{V}", "kind": "Storage", "metadata": {"name": "not-a-rabbit"}})
    out = ok(kind, "storm", "--events", "4")
    assert out["rabbits"] == ["kind-worker3"]
    assert "mode Testing" in out["skipped"]["kind-worker2"]
    assert "is not a rabbit's" in out["skipped"]["not-a-rabbit"]
    refused(kind, 1, "Storage 'kind-worker2' is in mode Testing", "storm", "--rabbits",
            "kind-worker2", "--events", "4")
    refused(kind, 1, "is not a rabbit's", "storm", "--rabbits", "not-a-rabbit", "--events", "4")


def test_storm_odd_events_need_a_compute(kind):
    api = kind.custom_objects_api()
    api.create_namespaced_custom_object(G, V, "default", "storages", {
        "apiVersion": f"{G}/{V}", "kind": "Storage", "metadata": {
            "name": "lonely", "labels": {"dataworkflowservices.github.io/storage": "Rabbit"}}})
    until(api, "storages", "lonely", lambda o: (o.get("status") or {}).get("status") == "Ready")
    refused(kind, 1, "an odd number of events (3) needs a rabbit with a compute", "storm",
            "--rabbits", "lonely", "--events", "3")
    assert ok(kind, "storm", "--rabbits", "lonely", "--events", "4")["updates"] == 4
    assert ok(kind, "storm", "--rabbits", "lonely,kind-worker3", "--events", "3")[
        "updates"] == 3


def test_storm_refusals(kind):
    api = kind.custom_objects_api()
    before = statuses(api)
    refused(kind, 1, "no rabbit 'nope'", "storm", "--rabbits", "kind-worker2,nope",
            "--events", "4")
    refused(kind, 1, "storm: rabbits:", "storm", "--rabbits", "kind-worker[", "--events", "4")
    refused(kind, 1, "storm: a storm needs at least 2 events (a change and its undoing)",
            "storm", "--events", "1")
    refused(kind, 1, "at most 1000000 per storm", "storm", "--events", "1000001")
    refused(kind, 2, "--events", "storm", "--events", "0")
    refused(kind, 2, "--seed", "storm", "--events", "4", "--seed", "-1")
    assert statuses(api) == before


@pytest.mark.parametrize(("body", "message"), [
    ({}, "'events' is required"),
    ({"events": "10"}, "'events' has the wrong type (str)"),
    ({"events": True}, "'events' has the wrong type (bool)"),
    ({"events": 4, "seed": 1.5}, "'seed' has the wrong type (float)"),
    ({"events": 4, "rabbits": ""}, "rabbits: '' is neither 'all' nor a hostlist"),
    ({"events": 4, "rabbits": ["kind-worker2"]}, "'rabbits' has the wrong type (list)"),
])
def test_storm_endpoint_refuses_bad_bodies(kind, body, message):
    code, answer = post(kind, "/_emulator/storm", body)
    assert code == 400 and message in answer["message"], answer
