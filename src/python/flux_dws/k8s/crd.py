"""Names and versions of the DWS/NNF custom resources flux-dws reads or writes.

The versions are probed once per client (newest first), as a real management
cluster may serve an older DWS or NNF API; a site can pin them with
``rabbit.dws_api_version`` / ``rabbit.nnf_api_version``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes.client import CustomObjectsApi
from kubernetes.client.exceptions import ApiException

DWS_GROUP = "dataworkflowservices.github.io"
DWS_VERSIONS = ("v1alpha7", "v1alpha6")
NNF_GROUP = "nnf.cray.hpe.com"
NNF_VERSIONS = ("v1alpha11", "v1alpha10", "v1alpha9", "v1alpha8")

WORKFLOW_FINALIZER = "flux-framework.readthedocs.io/workflow"
WORKFLOW_NAME_LABEL = "dataworkflowservices.github.io/workflow.name"


class CRDVersionError(Exception):
    """None of the known API versions of a group is served."""


@dataclass(frozen=True)
class ApiVersions:
    dws: str
    nnf: str | None


def probe_dws_version(api: CustomObjectsApi, preferred: str | None = None) -> str:
    """Return the first served DWS version (``preferred`` is tried first)."""
    tried: list[str] = []
    for version in _candidates(preferred, DWS_VERSIONS):
        tried.append(version)
        try:
            api.list_namespaced_custom_object(
                DWS_GROUP, version, "default", "systemconfigurations", limit=1
            )
            return version
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise
    raise CRDVersionError(
        f"no served version of {DWS_GROUP} among {', '.join(tried)}"
    )


def probe_nnf_version(api: CustomObjectsApi, preferred: str | None = None) -> str:
    """Return the first served NNF version (``preferred`` is tried first)."""
    tried: list[str] = []
    for version in _candidates(preferred, NNF_VERSIONS):
        tried.append(version)
        try:
            api.list_cluster_custom_object(NNF_GROUP, version, "nnfdatamovements", limit=1)
            return version
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise
    raise CRDVersionError(
        f"no served version of {NNF_GROUP} among {', '.join(tried)}"
    )


def _candidates(preferred: str | None, known: tuple[str, ...]) -> list[str]:
    out = [preferred] if preferred else []
    return out + [v for v in known if v != preferred]


def items(listing: Any) -> list[dict[str, Any]]:
    """The ``items`` of a list response (the client returns plain dicts)."""
    result = listing.get("items", []) if isinstance(listing, dict) else []
    return [i for i in result if isinstance(i, dict)]
