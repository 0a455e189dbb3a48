"""The emulator's controllers attached to an existing Kubernetes API server.

    with Attached(admin_kubeconfig, system="kind") as att:   # seeds, webhooks, controllers
        ...   # the dws service, as its own user, talks to the same API server

``Attached`` is ``flux-dws emulator --api-server KUBECONFIG``: the
DWS/nnf-sos controllers (emulator.controllers, unchanged) run as ordinary
API clients of that server through a ``remote.RemoteStore``, the seeded
system is created there, and their admission (DWS' Workflow webhooks,
nnf-sos' profile webhooks) is served by a ``webhook.WebhookServer`` that
the API server calls (registered as webhook configurations).  The API
server must serve the emulator's kinds (CRDs: ``api_resources.crd_object``,
as flux_dws.realstack.controlplane installs them) and the kubeconfig's user
must be allowed everything the controllers do (an admin).

The webhook server also answers the emulator's admin endpoints
(emulator.admin: ``/_emulator/faults``, ``health``, ``storage``, ``storm``,
``vanish``) for a bearer of ``token``; ``write_kubeconfig`` names it for
``flux-dws fault --kubeconfig``, as the emulator's own kubeconfig does.

``webhooks`` says how the API server learns of the webhook server: by
default the two webhook configurations are created (or replaced) and
``Attached`` waits until the API server calls them, before seeding (a
restart replaces the configurations of the run before, whose server is
gone); a server with no webhook support (the emulator's own, in tests) is
given a function that installs ``webhook.api_server_admission`` instead.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flux_dws.apiserver import kubeconfig
from flux_dws.apiserver.api_resources import DWS
from flux_dws.apiserver.remote import RemoteStore, path_of
from flux_dws.apiserver.store import ApiError
from flux_dws.emulator import admin
from flux_dws.emulator import latency as latency_model
from flux_dws.emulator.controllers import Controllers, seed_system
from flux_dws.emulator.driver import RESOURCE
from flux_dws.emulator.webhook import WEBHOOKS, WebhookServer, configurations, denied_prefix
from flux_dws.libdws.wfstates import TEARDOWN

__all__ = ["Attached", "register_webhooks"]

log = logging.getLogger("flux_dws.emulator.attached")

WEBHOOK_TIMEOUT = 30.0  # until the API server calls a new webhook configuration
#: reconciles at once (nnf-sos runs GOMAXPROCS of each controller), and the
#: threads writing one reconcile's independent objects (a ClientMount per
#: compute) at once: over HTTPS a reconcile waits on the API server, not
#: on the CPU (emulator.workqueue)
WORKERS = 16
FANOUT = 32


def _apply(store: RemoteStore, obj: dict[str, Any]) -> None:
    """Create obj, or replace the one of its name (admissionregistration/v1)."""
    plural = obj["kind"].lower() + "s"
    base = f"/apis/admissionregistration.k8s.io/v1/{plural}"
    status, raw = store.http.request("POST", base, obj)
    if status == 409:
        status, raw = store.http.request("GET", f"{base}/{obj['metadata']['name']}")
        if status == 200:
            rv = json.loads(raw)["metadata"]["resourceVersion"]
            body = {**obj, "metadata": {**obj["metadata"], "resourceVersion": rv}}
            status, raw = store.http.request("PUT", f"{base}/{obj['metadata']['name']}",
                                             body)
    if status >= 300:
        raise ApiError(status, "", f"{obj['kind']} {obj['metadata']['name']}: "
                                   f"{raw.decode(errors='replace')}")


def register_webhooks(store: RemoteStore, server: WebhookServer) -> None:
    """Register server's webhooks with the API server and wait until it
    calls them: a dry-run Workflow that DWS' validating webhook refuses
    comes back refused in its words."""
    for obj in configurations(server):
        _apply(store, obj)
    probe = {"apiVersion": RESOURCE["workflow"].api_version(), "kind": "Workflow",
             "metadata": {"name": "flux-dws-webhook-probe", "namespace": "default"},
             "spec": {"desiredState": TEARDOWN, "wlmID": "probe", "jobID": "probe",
                      "userID": 0, "groupID": 0, "dwDirectives": []}}
    want = denied_prefix(WEBHOOKS[(DWS, "workflows")].validating)
    deadline = time.monotonic() + WEBHOOK_TIMEOUT
    calls = server.calls
    while True:
        status, raw = store.http.request(
            "POST", path_of(RESOURCE["workflow"], "default") + "?dryRun=All", probe)
        try:
            message = str(json.loads(raw).get("message", ""))
        except (ValueError, AttributeError):
            message = ""
        if status == 403 and message.startswith(want) and server.calls > calls:
            return
        if time.monotonic() > deadline:
            raise ApiError(504, "Timeout", f"the API server does not call the webhooks at"
                                           f" {server.url} after {WEBHOOK_TIMEOUT} s (last"
                                           f" answer {status}: {raw[:200]!r})")
        time.sleep(0.1)


class Attached:
    """Controllers, webhook server and seeded system on an API server."""

    def __init__(self, kubeconfig: str | Path, system: str | None = "kind",
                 latency: str | dict[str, float] = latency_model.DEFAULT,
                 webhooks: Callable[[RemoteStore, WebhookServer], None] = register_webhooks,
                 webhook_host: str = "127.0.0.1", webhook_port: int = 0,
                 workers: int = WORKERS, fanout: int = FANOUT) -> None:
        self.store = RemoteStore(kubeconfig)
        self.workers = workers
        self.fanout = fanout
        self.system = system
        self.latency = latency_model.load(latency)
        self.webhooks = webhooks
        self.webhook_host = webhook_host
        self.webhook_port = webhook_port
        self.controllers: Controllers | None = None
        self.webhook: WebhookServer | None = None
        self.seeded = 0
        self.token = secrets.token_hex(16)

    def _admin(self, method: str, path: str,
               body: Callable[[], Any]) -> tuple[int, Any]:
        if path not in admin.PATHS:
            raise ApiError(404, "NotFound", f"no admin endpoint {path} on attached"
                                            f" controllers")
        return admin.request(self.controllers, method, path, body)

    def write_kubeconfig(self, path: str | Path) -> None:
        """A kubeconfig naming the admin endpoints (flux-dws fault)."""
        assert self.webhook is not None
        kubeconfig.write(path, kubeconfig.kubeconfig(
            self.webhook.url, self.webhook.certs.ca_pem, self.token,
            name="flux-dws-attached"))

    def start(self) -> Attached:
        try:
            self.store.start()
            self.controllers = Controllers(self.store, self.latency, workers=self.workers,
                                           fanout=self.fanout)
            # the webhooks first: configurations a previous run left point
            # to its server, gone, and the API server fails every write they
            # cover (seeding too) until they name this one
            self.webhook = WebhookServer(self.store.admission, self.webhook_host,
                                         self.webhook_port, admin=self._admin,
                                         token=self.token).start()
            self.webhooks(self.store, self.webhook)
            if self.system is not None:
                self.seeded = seed_system(self.store, self.system)
            self.controllers.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.controllers is not None:
            self.controllers.stop()
        if self.webhook is not None:
            self.webhook.stop()
        self.store.stop()

    def __enter__(self) -> Attached:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
