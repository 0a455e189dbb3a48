"""How the Kubernetes layer names failures.

``KubeError``: Kubernetes cannot be used at all (``KubeLayer.connect``
raises it; the service's module load fails with its message).
``TRANSPORT_ERRORS``: what a lost or refused connection looks like through
the client; the writers retry these as they retry 429 and 5xx answers.
``status_message`` and ``retry_after`` read an error answer
(``ApiException``): its Status message, and the wait a 429 asks for;
``describe`` names any other exception in one line.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import time

import urllib3
from kubernetes.client.exceptions import ApiException

__all__ = ["TRANSPORT_ERRORS", "KubeError", "describe", "retry_after", "status_message"]

# what a lost or refused connection looks like through the client (urllib3
# errors, socket errors, http.client's RemoteDisconnected and friends)
TRANSPORT_ERRORS = (urllib3.exceptions.HTTPError, OSError, http.client.HTTPException)


class KubeError(Exception):
    """Kubernetes cannot be used at all (bad kubeconfig, unreachable, no DWS)."""


def status_message(exc: ApiException) -> str:
    """The Kubernetes Status message of an error answer, else its reason."""
    body = getattr(exc, "body", None)
    if body:
        try:
            status = json.loads(body)
        except (ValueError, TypeError):
            status = None
        if isinstance(status, dict) and isinstance(status.get("message"), str):
            return str(status["message"])
    return str(exc.reason or exc)


def retry_after(exc: ApiException) -> float | None:
    """Seconds a 429 asks us to wait (Retry-After: seconds or an HTTP date)."""
    headers = getattr(exc, "headers", None)
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
