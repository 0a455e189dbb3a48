"""A fresh emulator per test, and the official client bound to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flux_dws.emulator import Emulator
from flux_dws.emulator.testing import Target, emulator, k8s, k8s_api  # noqa: F401

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
