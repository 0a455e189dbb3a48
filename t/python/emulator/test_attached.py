"""The emulator's DWS/nnf-sos controllers attached to an API server
(emulator.attached): the lifecycle tests of test_controllers run again with
the controllers as API clients, first of the emulator's own API server
(bare: no system, no controllers), then of a real kube-apiserver and etcd
(flux_dws.realstack.controlplane, RBAC on).  There the WLM's part is played
as user ``flux`` with only the WLM roles, as a site runs flux-dws.

The real control plane is skipped, with the reason, when its binaries are
not built (t/k8s/build.sh); FLUX_DWS_REQUIRE_REALK8S=1 makes that a failure.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from t.python.emulator.conftest import (
    FLUX_FINALIZER,
    NNF,
    NV,
    G,
    V,
    advance,
    eventually,
    fill_servers,
    finish,
    new_workflow,
    to,
    wait,
)
from t.python.emulator.test_controllers import (  # noqa: F401 (run here again)
    test_admission_refusals,
    test_bad_servers_fail_setup,
    test_injected_faults,
    test_lustre_and_persistent,
    test_proposal_errors_reach_the_workflow,
    test_xfs_workflow_through_every_state,
)
from t.python.realk8s import require_binaries

from flux_dws.apiserver.remote import RemoteStore
from flux_dws.emulator import Emulator
from flux_dws.emulator.attached import Attached
from flux_dws.emulator.controllers import Controllers
from flux_dws.emulator.faults import Fault
from flux_dws.emulator.webhook import WebhookServer, api_server_admission

STATES = ("Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut")

# a bound for a loaded machine: on the real API server a test's teardown
# deletes what it left, each DELETE up to the remote store's 30 s, while
# the real-controller sharness scripts run beside (CI: one teardown took
# over the 120 s default)
pytestmark = pytest.mark.timeout(300)


def real_control_plane(workdir: Path) -> Any:
    """A started ControlPlane with the CRDs and WLM roles, or a skip."""
    from flux_dws.realstack.controlplane import ControlPlane

    plane = ControlPlane(workdir, require_binaries()).start()
    try:
        plane.install_crds()
        plane.apply_rbac()
    except BaseException:
        plane.stop()
        raise
    return plane


class Plane:
    """What the reused tests call ``kind``: the API server under test with
    the controllers attached (``custom_objects_api`` as an admin, for the
    checks of nnf-sos' own objects; ``wlm_api`` as the WLM)."""

    def __init__(self, admin: str | Path, wlm: str | Path, attached: Attached) -> None:
        self.admin = str(admin)
        self.wlm = str(wlm)
        self.attached = attached
        self.controllers: Controllers = attached.controllers  # type: ignore[assignment]

    def custom_objects_api(self) -> Any:
        return client.CustomObjectsApi(config.new_client_from_config(self.admin))

    def core_v1_api(self) -> Any:
        return client.CoreV1Api(config.new_client_from_config(self.admin))

    def wlm_api(self) -> Any:
        return client.CustomObjectsApi(config.new_client_from_config(self.wlm))


def _into_store(emu: Emulator) -> Any:
    def install(store: RemoteStore, server: WebhookServer) -> None:
        for kind in store.admission:
            emu.store.admission[kind] = api_server_admission(server, kind)
    return install


@pytest.fixture(scope="module", params=["emulator", "realk8s"])
def server(request: Any, tmp_path_factory: Any) -> Iterator[tuple[str, Any]]:
    """The API server: the emulator's own (bare), or a real kube-apiserver."""
    if request.param == "emulator":
        with Emulator() as emu:
            yield "emulator", emu
        return
    plane = real_control_plane(tmp_path_factory.mktemp("cp"))
    try:
        yield "realk8s", plane
    finally:
        plane.stop()


def destroy(api: Any, wf: str, name: str) -> None:
    """A destroy_persistent Workflow through every state (it has no
    breakdown, so no Servers to fill), then deleted."""
    new_workflow(api, wf, [f"#DW destroy_persistent name={name}"])
    wait(api, wf, "Proposal")
    for state in (*STATES[1:], "Teardown"):
        advance(api, wf, state)
    finish(api, wf)


def _cleanup(api: Any) -> None:
    """Every Workflow deleted as a WLM deletes it (the next test reuses names)."""
    for wf in api.list_namespaced_custom_object(G, V, "default", "workflows")["items"]:
        name = wf["metadata"]["name"]
        try:
            api.delete_namespaced_custom_object(G, V, "default", "workflows", name)
            api.patch_namespaced_custom_object(G, V, "default", "workflows", name, {
                "metadata": {"finalizers": [f for f in wf["metadata"].get("finalizers", [])
                                            if f != FLUX_FINALIZER] or None}})
        except ApiException as exc:
            if exc.status not in (404, 409, 422):
                raise
    eventually(lambda: not api.list_namespaced_custom_object(
        G, V, "default", "workflows")["items"], what="every Workflow deleted")
    # and the persistent storage a test left, destroyed as a WLM destroys it
    for psi in api.list_namespaced_custom_object(G, V, "default",
                                                 "persistentstorageinstances")["items"]:
        name = psi["metadata"]["name"]
        destroy(api, f"rm-{name}", name)
    eventually(lambda: not api.list_namespaced_custom_object(
        G, V, "default", "persistentstorageinstances")["items"],
        what="every PersistentStorageInstance destroyed")


def collect_garbage(store: RemoteStore, timeout: float = 60.0) -> int:
    """kube-controller-manager's garbage collector, which the test control
    plane does not run: delete every object whose owners are all gone
    (the emulator's API server does this itself).  How many went.

    Each orphan is deleted once, then awaited in the store's cache (its
    watch brings the deletion, a finalizer may hold it a while): asking
    again before the cache caught up hammered the server in a loop that
    had no end when a finalizer stayed (CI: a teardown spun 300 s)."""
    from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL
    from flux_dws.apiserver.store import ApiError

    def orphans() -> dict[str, tuple[str, str, str, str]]:
        entries = list(store.objects.items())
        uids = {e.obj["metadata"].get("uid") for _, e in entries}
        return {e.obj["metadata"].get("uid"): k for k, e in entries
                if e.obj["metadata"].get("ownerReferences")
                and not any(o.get("uid") in uids for o in e.obj["metadata"]["ownerReferences"])}

    asked: dict[str, tuple[str, str, str, str]] = {}
    deadline = time.monotonic() + timeout
    while True:
        found = orphans()
        if not found:
            return len(asked)
        fresh = {uid: k for uid, k in found.items() if uid not in asked}
        for uid, (g, plural, ns, name) in fresh.items():
            try:
                store.delete(BY_GROUP_PLURAL[(g, plural)], ns, name)
            except ApiError as exc:
                if exc.code != 404:
                    raise
            asked[uid] = (g, plural, ns, name)
        # until one asked for is gone from the cache, or a new orphan shows
        if not store.wait_for(lambda before=set(found): orphans().keys() != before,
                              timeout=max(0.0, deadline - time.monotonic())):
            left = sorted(f"{k[1]}/{k[3]}" for k in orphans().values())
            raise AssertionError(f"orphans still there after {timeout:g} s: {left}")


@pytest.fixture
def kind(server: tuple[str, Any]) -> Iterator[Plane]:
    what, srv = server
    if what == "emulator":
        att = Attached(srv.kubeconfig, latency="zero", webhooks=_into_store(srv)).start()
        plane = Plane(srv.kubeconfig, srv.kubeconfig, att)
    else:
        att = Attached(srv.admin_kubeconfig, latency="zero").start()
        plane = Plane(srv.admin_kubeconfig, srv.flux_kubeconfig, att)
    try:
        yield plane
        att.controllers.faults.clear()  # type: ignore[union-attr]
        for _ in range(3):  # a Workflow the last one's deletion let go may still go
            try:
                _cleanup(plane.custom_objects_api())
                if what == "realk8s":
                    collect_garbage(att.store)
                break
            except AssertionError:
                continue
    finally:
        att.stop()


# --- the WLM's part as user flux, with only the WLM roles --------------------------


def test_xfs_as_the_wlm(kind):
    api = kind.wlm_api()
    t0 = time.monotonic()
    wf = to(api, "fluxjob-9", ["#DW jobdw type=xfs capacity=10GiB name=scratch"], "PreRun",
            hosts="compute-[01-02]")
    assert wf["status"]["env"]["DW_JOB_scratch"] == f"/mnt/nnf/{wf['metadata']['uid']}-0"
    cms = api.list_cluster_custom_object(
        G, V, "clientmounts", label_selector="dataworkflowservices.github.io/workflow.name="
                                             "fluxjob-9")["items"]
    assert sorted(c["metadata"]["namespace"] for c in cms) == ["compute-01", "compute-02"]
    for s in ("PostRun", "DataOut", "Teardown"):
        advance(api, "fluxjob-9", s)
    finish(api, "fluxjob-9")
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize("fs", ["gfs2", "raw", "lustre"])
def test_each_file_system_as_the_wlm(kind, fs):
    api = kind.wlm_api()
    wf = to(api, f"fs-{fs}", [f"#DW jobdw type={fs} capacity=100GiB name=data"], "PreRun",
            hosts="compute-[01-04]")
    assert "DW_JOB_data" in wf["status"]["env"]
    finish(api, f"fs-{fs}")


def test_persistent_storage_as_the_wlm(kind):
    api = kind.wlm_api()
    to(api, "mk", ["#DW create_persistent type=xfs capacity=10GiB name=keep"], "Teardown",
       hosts="compute-01", computes=False)
    finish(api, "mk")
    psi = api.get_namespaced_custom_object(G, V, "default", "persistentstorageinstances",
                                           "keep")
    assert psi["status"]["state"] == "Active"
    wf = to(api, "use", ["#DW persistentdw name=keep"], "PreRun", hosts="compute-01")
    assert "DW_PERSISTENT_keep" in wf["status"]["env"]
    finish(api, "use")
    destroy(api, "rm", "keep")

    def gone() -> bool:
        try:
            api.get_namespaced_custom_object(G, V, "default", "persistentstorageinstances",
                                             "keep")
        except ApiException as exc:
            return exc.status == 404
        return False
    eventually(gone, what="the PersistentStorageInstance destroyed")
    # its NnfStorage, Servers and pinned profile went with it, deleted by
    # nnf-sos (no garbage collector runs on the test control plane)
    admin = kind.custom_objects_api()
    for group, version, plural in ((NNF, NV, "nnfstorages"), (G, V, "servers"),
                                   (NNF, NV, "nnfstorageprofiles")):
        left = admin.list_namespaced_custom_object(group, version, "default", plural)
        assert "keep" not in [o["metadata"]["name"] for o in left["items"]], plural


def test_a_setup_failure_as_the_wlm(kind):
    kind.controllers.faults.add(Fault(workflow="sf", state="Setup", severity="Fatal",
                                      message="no space on the rabbit", type="Internal"))
    api = kind.wlm_api()
    new_workflow(api, "sf", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wait(api, "sf", "Proposal")
    fill_servers(api, "sf", "compute-01")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "sf",
                                       {"spec": {"desiredState": "Setup"}})
    wf = wait(api, "sf", "Setup", want="Error")
    assert wf["status"]["message"] == "DW Directive 0: Internal error: no space on the rabbit"
    finish(api, "sf")


@pytest.mark.parametrize("last", STATES)
def test_cancel_in_each_state_as_the_wlm(kind, last):
    api = kind.wlm_api()
    name = f"cancel-{last.lower()}"
    to(api, name, ["#DW jobdw type=xfs capacity=1GiB name=aa"], last, hosts="compute-01") \
        if last != "Proposal" else (new_workflow(api, name, ["#DW jobdw type=xfs capacity=1GiB"
                                                             " name=aa"]),
                                    wait(api, name, "Proposal"))
    advance(api, name, "Teardown")  # Teardown is legal from any state
    finish(api, name)


def test_api_server_option_says_what_is_wrong(tmp_path):
    import subprocess
    import sys

    missing = tmp_path / "nope.kubeconfig"
    out = subprocess.run([sys.executable, "-m", "flux_dws", "emulator", "--api-server",
                          str(missing)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stderr.startswith(f"flux-dws emulator: --api-server {missing}: ")
    with Emulator() as emu:  # it lists, but serves no webhook configurations
        out = subprocess.run([sys.executable, "-m", "flux_dws", "emulator", "--api-server",
                              str(emu.kubeconfig), "--latency", "zero"],
                             capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert "MutatingWebhookConfiguration flux-dws-emulator-mutating" in out.stderr


# --- flux-dws fault against attached controllers ------------------------------------


def _fault(kubeconfig: Path, *args: str) -> Any:
    """flux-dws fault ARGS through kubeconfig: its JSON answer, or SystemExit."""
    import contextlib
    import io
    import json

    from flux_dws.cli.main import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["fault", "--kubeconfig", str(kubeconfig), *args]) == 0
    return json.loads(out.getvalue())


def test_fault_cli_reaches_attached_controllers(kind, tmp_path):
    """The attached controllers' webhook server answers the admin endpoints
    (emulator.admin, as the emulator's own server does): a fault added by
    flux-dws fault fails the WLM's Setup in its words; list, clear and a
    Storage change go through; a wrong token or path gets a clear refusal."""
    kc = tmp_path / "faults.kubeconfig"
    kind.attached.write_kubeconfig(kc)
    added = _fault(kc, "add", "--workflow", "fsf", "--state", "Setup", "--message",
                   "no space on the rabbit")
    assert added["workflow"] == "fsf" and added["severity"] == "Fatal"
    assert [f["message"] for f in _fault(kc, "list")["faults"]] == ["no space on the rabbit"]
    api = kind.wlm_api()
    new_workflow(api, "fsf", ["#DW jobdw type=xfs capacity=1GiB name=aa"])
    wait(api, "fsf", "Proposal")
    fill_servers(api, "fsf", "compute-01")
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "fsf",
                                       {"spec": {"desiredState": "Setup"}})
    wf = wait(api, "fsf", "Setup", want="Error")
    assert wf["status"]["message"] == "DW Directive 0: Internal error: no space on the rabbit"
    assert _fault(kc, "clear") == {"faults": []}
    assert _fault(kc, "list") == {"faults": []}
    finish(api, "fsf")
    storage = _fault(kc, "storage", "kind-worker3", "--state", "Disabled")
    assert storage["spec"]["state"] == "Disabled"
    _fault(kc, "storage", "kind-worker3", "--state", "Enabled")
    with pytest.raises(SystemExit, match=r"^flux-dws fault: invalid fault: a clientmount"
                                         r" fault needs a compute$"):
        _fault(kc, "add", "--kind", "clientmount")
    bad = tmp_path / "bad.kubeconfig"
    kind.attached.write_kubeconfig(bad)
    bad.write_text(bad.read_text().replace(kind.attached.token, "f" * 32))
    with pytest.raises(SystemExit, match=r"^flux-dws fault: Unauthorized$"):
        _fault(bad, "list")
    with pytest.raises(SystemExit, match=r"no admin endpoint /_emulator/api-faults"):
        _fault(kc, "api-list")
