"""The controllers' admin endpoints, one implementation for every server.

``/_emulator/faults`` (POST a fault, GET the list, DELETE them all) and
POST ``/_emulator/{health,storage,storm,vanish,release}`` act on the DWS/nnf-sos
controllers (emulator.controllers), wherever they run: the emulator's own
API server serves them beside the Kubernetes API (emulator.server), and
controllers attached to another API server serve them on their webhook
server (emulator.attached), so ``flux-dws fault`` reaches both the same way.
``request`` answers one call as (HTTP status, JSON body) or raises the
ApiError the server turns into a Kubernetes Status.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from flux_dws.apiserver.store import ApiError
from flux_dws.emulator.faults import Fault

__all__ = ["FIELDS", "PATHS", "request"]

# The POST /_emulator/<action> endpoints: each body field, its JSON type(s)
# (None: null allowed), and which are required.
_STR, _OPT_STR, _BOOL = (str,), (str, type(None)), (bool,)
FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "health": {"name": _STR, "reset": _BOOL, "status": _OPT_STR, "links": (dict,),
               "fenced": _BOOL, "k8sReady": _BOOL, "drainTaint": _OPT_STR},
    "storage": {"name": _STR, "state": _OPT_STR, "mode": _OPT_STR, "reason": _OPT_STR,
                "status": _OPT_STR, "links": (dict,)},
    "storm": {"rabbits": _OPT_STR, "events": (int,), "seed": (int, type(None))},
    "vanish": {"name": _STR, "namespace": _OPT_STR},
    "release": {},
}
REQUIRED = {"health": ("name",), "storage": ("name",), "storm": ("events",),
            "vanish": ("name",), "release": ()}
FAULTS = "/_emulator/faults"
PATHS = frozenset({FAULTS, *(f"/_emulator/{a}" for a in FIELDS)})


def checked_body(action: str, body: Any) -> dict[str, Any]:
    """An action's body, checked against FIELDS (400 naming the field
    otherwise); ``links`` maps compute names to strings."""
    fields = FIELDS[action]
    if not isinstance(body, dict):
        raise ApiError(400, "BadRequest", f"{action}: the body must be a JSON object")
    for key in REQUIRED[action]:
        if key not in body:
            raise ApiError(400, "BadRequest", f"{action}: '{key}' is required")
    for key, value in body.items():
        types = fields.get(key)
        if types is None:
            raise ApiError(400, "BadRequest", f"{action}: unknown field '{key}' (known:"
                                              f" {', '.join(fields)})")
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ApiError(400, "BadRequest", f"{action}: '{key}' has the wrong type"
                                              f" ({type(value).__name__})")
    links = body.get("links") or {}
    if not all(isinstance(v, str) for v in links.values()):
        raise ApiError(400, "BadRequest", f"{action}: 'links' maps computes to statuses")
    return body


def request(ctl: Any, method: str, path: str,
            body: Callable[[], Any]) -> tuple[int, Any]:
    """Answer ``method path`` (one of PATHS) on the controllers ``ctl``
    (emulator.controllers.Controllers, None when there are none); ``body``
    reads the request's JSON body, called only by the methods that take one."""
    if ctl is None:
        raise ApiError(404, "NotFound", "this emulator runs no controllers (no --system)")
    if path == FAULTS:
        return _faults(ctl, method, body)
    if method != "POST":
        raise ApiError(405, "MethodNotAllowed", f"{path}: use POST")
    return _action(ctl, path.rsplit("/", 1)[1], body())


def _faults(ctl: Any, method: str, body: Callable[[], Any]) -> tuple[int, Any]:
    if method == "POST":
        fields = body()
        if not isinstance(fields, dict):
            raise ApiError(400, "BadRequest", "a fault is a JSON object")
        try:
            fault = Fault(**fields)
            ctl.faults.add(fault)
        except (TypeError, ValueError) as exc:
            raise ApiError(400, "BadRequest", f"invalid fault: {exc}") from None
        return 201, asdict(fault)
    if method == "DELETE":
        # what a stall held moves on at its object's next change (as
        # before: tests kick it, and rely on it not moving by itself)
        ctl.faults.clear()
        return 200, {"faults": []}
    if method == "GET":
        with ctl.faults.lock:
            return 200, {"faults": [asdict(f) for f in ctl.faults.items]}
    raise ApiError(405, "MethodNotAllowed", "use GET, POST or DELETE")


def _action(ctl: Any, action: str, raw: Any) -> tuple[int, Any]:
    """Rabbit health and Storage changes, a storm of them, workflows
    vanishing (bodies: see FIELDS)."""
    body = checked_body(action, raw)
    try:
        if action == "health":
            taint = body.get("drainTaint")  # null removes the taint
            if taint == "":
                raise ValueError("drainTaint: '' is not a drain taint key (null removes"
                                 " the taint)")
            return 200, ctl.health.set_health(
                body["name"], body.get("status"), body.get("links"), body.get("fenced"),
                body.get("k8sReady"), "" if "drainTaint" in body and taint is None
                else taint, bool(body.get("reset")))
        if action == "storage":
            return 200, ctl.health.set_storage(
                body["name"], body.get("state"), body.get("mode"), body.get("reason"),
                body.get("status"), body.get("links"))
        if action == "storm":
            rabbits = body.get("rabbits")
            return 200, ctl.health.storm("all" if rabbits is None else rabbits,
                                         body["events"], body.get("seed"))
        if action == "release":  # what hold faults hold goes on (nnf-dm's copies)
            return 200, {"released": ctl.dmworker.release()}
        ctl.vanish(body.get("namespace") or "default", body["name"])
        return 200, {"deleted": body["name"]}
    except ValueError as exc:
        raise ApiError(400, "BadRequest", f"{action}: {exc}") from None
