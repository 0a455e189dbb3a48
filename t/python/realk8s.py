"""Shared by the real-stack tests (t/python/test_controlplane*.py): a real
kube-apiserver and etcd (flux_dws.realstack.controlplane), skipped with the
reason when t/k8s/build.sh has not built them, failed instead when
FLUX_DWS_REQUIRE_REALK8S=1 (CI: scripts/test.sh sets it where Go is)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from flux_dws.dwsim.systems import load_system, seed_objects
from flux_dws.realstack.controlplane import (
    FLUX_USER,
    Binaries,
    ControlPlane,
    ControlPlaneUnavailable,
    balancer_binary,
    binaries,
)
from flux_dws.realstack.nodes import NodeBinaries, node_binaries

EXTRA_ROLE = Path(__file__).resolve().parents[2] / "etc" / "k8s" / "flux-dws-extra-role.yaml"


T = TypeVar("T")


def _required(find: Callable[[], T], what: str) -> T:
    """find(), or a skip saying what is missing (a failure under
    FLUX_DWS_REQUIRE_REALK8S=1, as CI runs)."""
    try:
        return find()
    except ControlPlaneUnavailable as exc:
        why = f"{what}{exc}"
        if os.environ.get("FLUX_DWS_REQUIRE_REALK8S") == "1":
            pytest.fail(f"{why} (FLUX_DWS_REQUIRE_REALK8S=1)")
        pytest.skip(why)


def require_binaries() -> Binaries:
    """The built servers, or a skip."""
    return _required(binaries, "no real control plane: ")


def require_balancer() -> Path:
    """Debian's haproxy, or a skip."""
    return _required(balancer_binary, "")


def require_nodes() -> NodeBinaries:
    """What nodes that run Pods need (flux_dws.realstack.nodes), or a skip."""
    return _required(node_binaries, "no nodes that run Pods: ")


@contextmanager
def seeded_controlplane(workdir: Path, system: str = "kind") -> Iterator[ControlPlane]:
    """A started control plane with the emulator's kinds as CRDs, the WLM
    roles bound to flux and the objects a cluster for ``system`` starts
    with, made as admin (no controllers run)."""
    with ControlPlane(workdir, require_binaries()) as cp:
        cp.install_crds()
        cp.apply_rbac()
        cp.seed(seed_objects(load_system(system)))
        yield cp


def can(cp: ControlPlane, verb: str, resource: str, group: str = "",
        namespace: str | None = "default", subresource: str = "", name: str = "",
        user: str = FLUX_USER) -> bool:
    """Whether ``user`` may: a SubjectAccessReview, asked as admin."""
    attrs: dict[str, Any] = {"verb": verb, "resource": resource, "group": group}
    if namespace is not None:
        attrs["namespace"] = namespace
    if subresource:
        attrs["subresource"] = subresource
    if name:
        attrs["name"] = name
    status, body = cp.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                              {"apiVersion": "authorization.k8s.io/v1",
                               "kind": "SubjectAccessReview",
                               "spec": {"user": user, "resourceAttributes": attrs}})
    assert status == 201, body
    return bool(body["status"].get("allowed"))


def until(what: str, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait (bounded) until predicate() holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)


def wait_rbac(cp: ControlPlane, allowed: bool, verb: str, resource: str, group: str = "",
              namespace: str | None = None) -> None:
    """Wait until the API server's RBAC cache says ``allowed`` for flux
    (a new binding reaches the authorizer a moment after its write)."""
    until(f"{verb} {resource} {'allowed' if allowed else 'forbidden'} for flux",
          lambda: can(cp, verb, resource, group, namespace) == allowed)
