"""DWS' and nnf-sos' admission webhooks served to a real API server.

In the emulator's own API server the webhooks are functions the store
calls (``store.admission[(group, plural)] = fn(op, old, new) -> new``;
``Controllers._admit`` for Workflows, ``profile_webhooks`` for the NNF
profiles).  A real kube-apiserver calls webhooks over HTTPS:
``WebhookServer`` serves the same functions as AdmissionReview v1
endpoints, and ``register`` makes the API server call them
(MutatingWebhookConfiguration and ValidatingWebhookConfiguration with
``clientConfig.url`` and ``caBundle``; the certificate is made here,
emulator.tls).  The webhooks are named as DWS and nnf-sos name theirs, so
the API server's denial reads as the emulator's does:
``admission webhook "vworkflow.kb.io" denied the request: <DWS' text>``.

- ``/mutate-<group>-<version>-<kind>`` (Workflow CREATE): the function's
  changes as a JSON patch.  A refusal is left to the validating webhook,
  which carries the name the refusal's text gives.
- ``/validate-<group>-<version>-<kind>`` (CREATE and UPDATE): allowed, or
  denied with the function's ApiError (its code, reason and message, the
  API server's ``admission webhook "NAME" denied the request: `` prefix
  taken off, as the API server puts it back).

With ``admin`` (emulator.admin.request on the attached controllers) and
``token``, the same server answers ``/_emulator/...`` for a bearer of the
token: ``flux-dws fault`` against attached controllers.

``api_server_admission`` plays the API server's part for a store without
webhook support (the emulator's own, in tests): a mutating call, the
patch applied, then a validating call, each over HTTPS.
"""

from __future__ import annotations

import base64
import hmac
import http.client
import json
import logging
import ssl
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from flux_dws.apiserver import tls
from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL, DWS, NNF, Resource
from flux_dws.apiserver.patch import PatchError, json_patch
from flux_dws.apiserver.store import Admission, ApiError, Kind
from flux_dws.dwsim.fielderr import WORKFLOW_WEBHOOK
from flux_dws.emulator import profile_webhooks

__all__ = ["WEBHOOKS", "Webhook", "WebhookServer", "api_server_admission", "configurations",
           "denied_prefix"]

log = logging.getLogger("flux_dws.emulator.webhook")

ADMIN_PREFIX = "/_emulator/"
# emulator.admin.request's signature: (method, path, read body) -> (status, JSON)
AdminHandler = Callable[[str, str, Callable[[], Any]], tuple[int, Any]]

MUTATING_CONFIG = "flux-dws-emulator-mutating"
VALIDATING_CONFIG = "flux-dws-emulator-validating"


@dataclass(frozen=True)
class Webhook:
    """How one kind's admission is registered: its webhooks' names (None:
    no mutating webhook) and the operations each sees."""

    mutating: str | None
    validating: str
    mutate_ops: tuple[str, ...] = ("CREATE",)
    validate_ops: tuple[str, ...] = ("CREATE", "UPDATE")


def _name_of(prefix: str) -> str:
    return prefix.split('"')[1]


WEBHOOKS: dict[Kind, Webhook] = {
    (DWS, "workflows"): Webhook("mworkflow.kb.io", _name_of(WORKFLOW_WEBHOOK)),
    **{(NNF, plural): Webhook(None, name)
       for plural, name in profile_webhooks.WEBHOOKS.items()},
}


def denied_prefix(name: str) -> str:
    """What the API server puts before a webhook's denial message."""
    return f'admission webhook "{name}" denied the request: '


def _path(kind: str, r: Resource) -> str:
    return f"/{kind}-{r.group.replace('.', '-')}-{r.storage_version}-{r.kind.lower()}"


def _diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A JSON patch turning old into new (whole top-level members)."""
    ops: list[dict[str, Any]] = []
    for k in old:
        if k not in new:
            ops.append({"op": "remove", "path": f"/{k}"})
    for k, v in new.items():
        if k not in old:
            ops.append({"op": "add", "path": f"/{k}", "value": v})
        elif old[k] != v:
            ops.append({"op": "replace", "path": f"/{k}", "value": v})
    return ops


class WebhookServer:
    """HTTPS AdmissionReview v1 endpoints for ``admission``'s functions."""

    def __init__(self, admission: Mapping[Kind, Admission], host: str = "127.0.0.1",
                 port: int = 0, admin: AdminHandler | None = None,
                 token: str | None = None) -> None:
        self.admission = admission
        self.admin = admin
        self.token = token
        self.host = host
        self.certs = tls.generate([host])
        self.routes: dict[str, tuple[str, Kind]] = {}
        self.calls = 0
        handler = self._handler()
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self._server.socket = tls.server_context(self.certs).wrap_socket(
            self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    def url_for(self, kind: str, r: Resource) -> str:
        """The URL of r's ``mutate`` or ``validate`` endpoint."""
        return self.url + _path(kind, r)

    def start(self) -> WebhookServer:
        for k in self.admission:
            r = BY_GROUP_PLURAL[k]
            self.routes[_path("mutate", r)] = ("mutate", k)
            self.routes[_path("validate", r)] = ("validate", k)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.1}, name="webhook",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> WebhookServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def review(self, path: str, review: Mapping[str, Any]) -> dict[str, Any]:
        """The AdmissionReview answer to one request at path."""
        req = review.get("request") or {}
        resp: dict[str, Any] = {"uid": req.get("uid", ""), "allowed": True}
        out = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
               "response": resp}
        route = self.routes.get(path)
        if route is None:
            resp.update(allowed=False, status={"code": 404, "reason": "NotFound",
                                               "message": f"no webhook at {path}"})
            return out
        what, kind = route
        fn = self.admission.get(kind)
        op = req.get("operation", "")
        new = req.get("object") or {}
        old = req.get("oldObject")
        if fn is None or op not in ("CREATE", "UPDATE"):
            return out
        self.calls += 1
        try:
            mutated = fn(op, old, json.loads(json.dumps(new)))
        except ApiError as exc:
            if what == "mutate":
                return out  # the validating webhook refuses, with its own name
            message = exc.message
            hook = WEBHOOKS.get(kind)
            prefix = denied_prefix(hook.validating) if hook else ""
            if prefix and message.startswith(prefix):
                message = message[len(prefix):]
            resp.update(allowed=False, status={"code": exc.code, "reason": exc.reason,
                                               "message": message})
            return out
        if what == "mutate":
            ops = _diff(new, mutated)
            if ops:
                resp.update(patchType="JSONPatch",
                            patch=base64.b64encode(json.dumps(ops).encode()).decode())
        return out

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._admin()

            def do_DELETE(self) -> None:
                self._admin()

            def do_POST(self) -> None:
                if self.path.startswith(ADMIN_PREFIX):
                    self._admin()
                    return
                try:
                    size = int(self.headers.get("Content-Length") or 0)
                    review = json.loads(self.rfile.read(size))
                    answer = outer.review(self.path.split("?")[0], review)
                    code = 200
                except ValueError as exc:
                    answer, code = {"error": f"not an AdmissionReview: {exc}"}, 400
                except Exception as exc:  # a bug must not hang the API server
                    log.exception("webhook %s", self.path)
                    answer, code = {"error": str(exc)}, 500
                self._answer(code, answer)

            def _admin(self) -> None:
                """An admin endpoint (emulator.admin), for a bearer of the token."""
                path = self.path.split("?")[0]
                self.close_connection = True  # a refused POST leaves its body unread
                try:
                    if outer.admin is None or not path.startswith(ADMIN_PREFIX):
                        raise ApiError(404, "NotFound", f"nothing at {path}")
                    if not outer.token or not hmac.compare_digest(
                            self.headers.get("Authorization") or "",
                            f"Bearer {outer.token}"):
                        raise ApiError(401, "Unauthorized", "Unauthorized")
                    code, answer = outer.admin(self.command, path, self._json_body)
                except ApiError as exc:
                    code, answer = exc.code, {
                        "kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "message": exc.message, "reason": exc.reason, "code": exc.code}
                except Exception as exc:  # a bug of ours: say so, keep serving
                    log.exception("admin %s %s", self.command, self.path)
                    code, answer = 500, {"kind": "Status", "code": 500,
                                         "message": f"Internal error occurred: {exc!r}"}
                self._answer(code, answer)

            def _json_body(self) -> Any:
                size = int(self.headers.get("Content-Length") or 0)
                if size <= 0:
                    raise ApiError(400, "BadRequest", "the request has no body")
                try:
                    return json.loads(self.rfile.read(size))
                except (ValueError, UnicodeDecodeError) as exc:
                    raise ApiError(400, "BadRequest", f"json parse error: {exc}") from None

            def _answer(self, code: int, answer: Any) -> None:
                data = json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("webhook: " + format, *args)

        return Handler


def configurations(server: WebhookServer) -> list[dict[str, Any]]:
    """The MutatingWebhookConfiguration and ValidatingWebhookConfiguration
    making an API server call ``server`` for each kind it admits."""
    ca = base64.b64encode(server.certs.ca_pem).decode()
    mutating: list[dict[str, Any]] = []
    validating: list[dict[str, Any]] = []
    for kind in server.admission:
        hook = WEBHOOKS.get(kind)
        if hook is None:
            continue
        r = BY_GROUP_PLURAL[kind]

        def entry(name: str, what: str, ops: tuple[str, ...], r: Resource = r) -> \
                dict[str, Any]:
            return {"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                    "failurePolicy": "Fail", "timeoutSeconds": 10,
                    "clientConfig": {"url": server.url_for(what, r), "caBundle": ca},
                    "rules": [{"apiGroups": [r.group], "apiVersions": list(r.versions),
                               "operations": list(ops), "resources": [r.plural],
                               "scope": "Namespaced" if r.namespaced else "Cluster"}]}
        if hook.mutating:
            mutating.append(entry(hook.mutating, "mutate", hook.mutate_ops))
        validating.append(entry(hook.validating, "validate", hook.validate_ops))
    api = "admissionregistration.k8s.io/v1"
    return [{"apiVersion": api, "kind": "MutatingWebhookConfiguration",
             "metadata": {"name": MUTATING_CONFIG}, "webhooks": mutating},
            {"apiVersion": api, "kind": "ValidatingWebhookConfiguration",
             "metadata": {"name": VALIDATING_CONFIG}, "webhooks": validating}]


def _call(url: str, ca_pem: bytes, review: dict[str, Any]) -> dict[str, Any]:
    u = urlsplit(url)
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    conn = http.client.HTTPSConnection(u.hostname or "127.0.0.1", u.port or 443,
                                       context=ctx, timeout=10)
    try:
        conn.request("POST", u.path, json.dumps(review).encode(),
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise ApiError(500, "InternalError", f"failed calling webhook: {resp.status}")
        out: dict[str, Any] = json.loads(body)["response"]
        return out
    finally:
        conn.close()


def api_server_admission(server: WebhookServer, kind: Kind) -> Admission:
    """The API server's part for one kind: call the mutating webhook (and
    apply its patch), then the validating one; a denial is the ApiError
    the API server makes of it."""
    hook = WEBHOOKS[kind]
    r = BY_GROUP_PLURAL[kind]

    def admit(op: str, old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
        req = {"uid": str(uuid.uuid4()), "operation": op, "object": new, "oldObject": old,
               "kind": {"group": r.group, "version": r.storage_version, "kind": r.kind},
               "resource": {"group": r.group, "version": r.storage_version,
                            "resource": r.plural}}
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                  "request": req}
        if hook.mutating and op in hook.mutate_ops:
            resp = _call(server.url_for("mutate", r), server.certs.ca_pem, review)
            if resp.get("patch"):
                try:
                    new = json_patch(new, json.loads(base64.b64decode(resp["patch"])))
                except PatchError as exc:
                    raise ApiError(500, "InternalError", str(exc)) from None
                req["object"] = new
        if op in hook.validate_ops:
            resp = _call(server.url_for("validate", r), server.certs.ca_pem, review)
            if not resp.get("allowed"):
                st = resp.get("status") or {}
                code = int(st.get("code") or 403)
                raise ApiError(max(code, 400), str(st.get("reason") or "Forbidden"),
                               denied_prefix(hook.validating) + str(st.get("message", "")))
        return new

    return admit
