"""A fresh emulator per test, and the official client bound to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flux_dws.emulator import Emulator

G, V = "dataworkflowservices.github.io", "v1alpha7"


@pytest.fixture
def emu() -> Iterator[Emulator]:
    with Emulator(bookmark_interval=0.3) as e:
        yield e


@pytest.fixture
def api(emu):
    return emu.custom_objects_api()


def workflow(name="w1", **spec):
    body = {"apiVersion": f"{G}/{V}", "kind": "Workflow", "metadata": {"name": name},
            "spec": {"desiredState": "Proposal", "dwDirectives": [], "wlmID": "flux",
                     "jobID": "f1", "userID": 1000, "groupID": 1000}}
    body["spec"].update(spec)
    return body


def storage(name="r1", **labels):
    return {"apiVersion": f"{G}/{V}", "kind": "Storage",
            "metadata": {"name": name, "labels": labels}}
