"""A fresh emulator per test, and the official client bound to it."""

from __future__ import annotations

import itertools
import queue
import time
from collections.abc import Iterator

import pytest
from kubernetes.client.exceptions import ApiException

from flux_dws.emulator import Emulator
from flux_dws.emulator.testing import Target, emulator, k8s, k8s_api  # noqa: F401
from flux_dws.libdws.breakdown import RabbitMap, allocation_sets
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.wfstates import STATES  # noqa: F401 (the tests import it from here)

G, V = "dataworkflowservices.github.io", "v1alpha7"


@pytest.fixture
def emu(k8s: Target) -> Iterator[Emulator]:  # noqa: F811
    """The emulator under test (a skip when FLUX_DWS_TEST_KUBECONFIG names a cluster)."""
    yield k8s.need_emulator()


@pytest.fixture
def api(k8s: Target):  # noqa: F811
    return k8s.custom_objects_api()


@pytest.fixture
def ns(k8s: Target) -> str:  # noqa: F811
    return k8s.namespace


def workflow(name="w1", **spec):
    body = {"apiVersion": f"{G}/{V}", "kind": "Workflow", "metadata": {"name": name},
            "spec": {"desiredState": "Proposal", "dwDirectives": [], "wlmID": "flux",
                     "jobID": "f1", "userID": 1000, "groupID": 1000}}
    body["spec"].update(spec)
    return body


def storage(name="r1", **labels):
    return {"apiVersion": f"{G}/{V}", "kind": "Storage",
            "metadata": {"name": name, "labels": labels}}


# --- The kind system with its controllers, and helpers that play the WLM ---

FLUX_FINALIZER = "flux-framework.readthedocs.io/workflow"
KIND_MAP = {"compute-01": "kind-worker2", "compute-02": "kind-worker2",
            "compute-03": "kind-worker2", "compute-04": "kind-worker3"}
NNF, NV = "nnf.cray.hpe.com", "v1alpha11"


@pytest.fixture
def kind() -> Iterator[Emulator]:
    """The kind system, its DWS and nnf-sos controllers running.  A module
    that wants other settings overrides it, taking this one as argument."""
    with Emulator(system="kind", latency="zero") as emu:
        yield emu


def eventually(fn, timeout=30.0, what="condition"):
    """Wait until fn() is true (polled every 20 ms); AssertionError after
    ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if fn():
            return
        time.sleep(0.02)
    raise AssertionError(f"{what} never held")


def new_workflow(api, name, directives):
    return api.create_namespaced_custom_object(G, V, "default", "workflows", {
        "apiVersion": f"{G}/{V}", "kind": "Workflow",
        "metadata": {"name": name, "finalizers": [FLUX_FINALIZER]},
        "spec": {"desiredState": "Proposal", "dwDirectives": directives, "wlmID": "flux",
                 "jobID": "f1", "userID": 1000, "groupID": 1000}})


def wait(api, name, state, timeout=30.0, want="ready"):
    """The Workflow once it is in ``state`` and ready (or its status is
    ``want``)."""
    found = {}

    def reached():
        wf = api.get_namespaced_custom_object(G, V, "default", "workflows", name)
        found["wf"] = wf
        st = wf.get("status", {})
        return st.get("state") == state and (st.get("ready") if want == "ready"
                                             else st.get("status") == want)
    try:
        eventually(reached, timeout)
    except AssertionError:
        raise AssertionError(f"{name} never reached {state}/{want}:"
                             f" {found.get('wf', {}).get('status')}") from None
    return found["wf"]


def advance(api, name, state):
    api.patch_namespaced_custom_object(G, V, "default", "workflows", name,
                                       {"spec": {"desiredState": state}})
    return wait(api, name, state)


def remove_finalizer(api, name):
    """Drop flux's finalizer as a WLM must: read, then patch with the
    resourceVersion read, again on 409 (the DWS and nnf-sos controllers
    drop theirs meanwhile; a stale list would re-add one, a 422)."""
    while True:
        md = api.get_namespaced_custom_object(G, V, "default", "workflows", name)["metadata"]
        try:
            api.patch_namespaced_custom_object(G, V, "default", "workflows", name, {
                "metadata": {"resourceVersion": md["resourceVersion"], "finalizers": [
                    f for f in md.get("finalizers", []) if f != FLUX_FINALIZER]}})
            return
        except ApiException as exc:
            if exc.status != 409:
                raise


def fill_servers(api, name, hosts):
    """What flux-dws' dws.setup does: Servers from the breakdowns and R's hosts."""
    counts = RabbitMap(KIND_MAP).counts(hosts)
    for ref in api.get_namespaced_custom_object(G, V, "default", "workflows", name)[
            "status"]["directiveBreakdowns"]:
        dbd = api.get_namespaced_custom_object(G, V, "default", "directivebreakdowns",
                                               ref["name"])
        storage = dbd["status"].get("storage")
        if storage:
            api.patch_namespaced_custom_object(
                G, V, "default", "servers", storage["reference"]["name"],
                {"spec": {"allocationSets": allocation_sets(storage, counts)}})


def ask_setup(api, name, directives, hosts):
    """A new Workflow through Proposal, its Servers filled for ``hosts``,
    Setup asked for (not waited on)."""
    new_workflow(api, name, directives)
    wait(api, name, "Proposal")
    fill_servers(api, name, hosts)
    api.patch_namespaced_custom_object(G, V, "default", "workflows", name,
                                       {"spec": {"desiredState": "Setup"}})


def finish(api, name):
    """Teardown, then delete as the WLM does (drop its finalizer), and wait
    until the Workflow is gone."""
    wf = api.get_namespaced_custom_object(G, V, "default", "workflows", name)
    if wf["status"]["state"] != "Teardown":
        advance(api, name, "Teardown")  # Teardown is legal from any state
    api.delete_namespaced_custom_object(G, V, "default", "workflows", name)
    remove_finalizer(api, name)

    def gone():
        try:
            api.get_namespaced_custom_object(G, V, "default", "workflows", name)
        except ApiException as exc:
            return exc.status == 404
        return False
    eventually(gone, what=f"deletion of {name}")


def to(api, name, directives, last, hosts="compute-[01-04]", computes=True):
    """A new Workflow driven to state ``last`` (Computes filled after Setup
    unless ``computes`` is false)."""
    new_workflow(api, name, directives)
    wait(api, name, "Proposal")
    fill_servers(api, name, hosts)
    advance(api, name, "Setup")
    if last == "Setup":
        return None
    if computes:
        api.patch_namespaced_custom_object(G, V, "default", "computes", name, {
            "data": [{"name": h} for h in Hostlist(hosts)]})
    wf = None
    for s in ("DataIn", "PreRun", "PostRun", "DataOut", "Teardown"):
        wf = advance(api, name, s)
        if s == last:
            break
    return wf


def port_manager(api):
    return api.get_namespaced_custom_object(NNF, NV, "nnf-system", "nnfportmanagers",
                                            "nnf-port-manager")


def store_events(emu, kinds=None):
    """A queue of the emulator store's events (every change, in order)."""
    return emu.store.subscribe_queue(kinds)


def next_event(q, match, timeout=10.0, what="event"):
    """The first event taken from ``q`` for which match(event) is true."""
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {what} within {timeout} s")
        try:
            ev = q.get(timeout=left)
        except queue.Empty:
            continue
        if match(ev):
            return ev


_barrier_names = itertools.count(1)


def controllers_passed(api):
    """Return once the emulated controllers have handled every reconcile
    queued before the call.  They run one worker over a FIFO queue, so a
    Workflow created now and seen reconciled (Proposal ready) proves it: the
    way to show that something did *not* happen, without sleeping."""
    name = f"barrier-{next(_barrier_names)}"
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow(name))
    wait(api, name, "Proposal")
