"""Kubernetes field.Error texts, as webhook rejections carry them.

``Spec.DesiredState: Invalid value: "Setup": desired state must start in
Proposal`` -- a path, the error type, the value (Go %q for strings), the
detail.
"""

from __future__ import annotations

import json
from typing import Any

#: The prefix controller-runtime puts before a validating webhook's error.
WORKFLOW_WEBHOOK = 'admission webhook "vworkflow.kb.io" denied the request: '


class AdmissionError(Exception):
    """A webhook refused the request: HTTP 403 Forbidden with this message."""

    def __init__(self, detail: str, webhook: str = WORKFLOW_WEBHOOK) -> None:
        super().__init__(webhook + detail)
        self.detail = detail


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return str(v)


def invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {_value(value)}: {detail}"


def forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def internal(path: str, detail: str) -> str:
    return f"{path}: Internal error: {detail}"
