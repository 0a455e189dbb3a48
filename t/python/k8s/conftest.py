"""Fixtures for the Kubernetes layer's tests: an emulator, a recorder of
posted events, a connected KubeLayer (stopped after the test), and the
objects and helpers the test files share."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from flux_dws.apiserver import api_resources as res
from flux_dws.emulator import Emulator
from flux_dws.emulator.testing import emulator  # noqa: F401
from flux_dws.k8s.layer import KubeLayer

G, V = "dataworkflowservices.github.io", "v1alpha7"
WAIT = 10.0  # an upper bound: every wait ends as soon as its condition holds


class Recorder:
    """The events a KubeLayer posted, in order, with waits on them."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.cond = threading.Condition()

    def __call__(self, event: dict[str, Any]) -> None:
        with self.cond:
            self.events.append(event)
            self.cond.notify_all()

    def wait_for(self, pred: Callable[[dict[str, Any]], bool], start: int = 0,
                 timeout: float = WAIT) -> tuple[int, dict[str, Any]]:
        """(index, event) of the first event at or after start matching pred."""
        with self.cond:
            i = start
            while True:
                while i < len(self.events):
                    if pred(self.events[i]):
                        return i, self.events[i]
                    i += 1
                if not self.cond.wait(timeout):
                    raise AssertionError(f"no matching event within {timeout} s; "
                                         f"got {self.events[start:]!r}")

    def result(self, token: str, start: int = 0) -> dict[str, Any]:
        return self.wait_for(lambda e: e["type"] == "k8s-result" and e["token"] == token,
                             start)[1]

    def sync(self, kind: str, start: int = 0) -> tuple[int, dict[str, Any]]:
        return self.wait_for(lambda e: e["type"] == "sync" and e["kind"] == kind, start)

    def of(self, etype: str, start: int = 0, end: int | None = None) -> list[dict[str, Any]]:
        with self.cond:
            return [e for e in self.events[start:end] if e["type"] == etype]

    def __len__(self) -> int:
        with self.cond:
            return len(self.events)


class LogSignal(logging.Handler):
    """Counts log records whose message contains a text; wait on the count."""

    def __init__(self, text: str) -> None:
        super().__init__(logging.DEBUG)
        self.text = text
        self.count = 0
        self.cond = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            with self.cond:
                self.count += 1
                self.cond.notify_all()

    def wait(self, n: int, timeout: float = WAIT) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.count >= n, timeout)


@pytest.fixture
def events() -> Recorder:
    return Recorder()


@pytest.fixture
def make_layer(emulator: Emulator, events: Recorder  # noqa: F811
               ) -> Iterator[Callable[..., KubeLayer]]:
    """make_layer(config=None, emu=None) -> a connected KubeLayer posting to events."""
    made: list[KubeLayer] = []

    def make(config: dict[str, Any] | None = None, emu: Emulator | None = None,
             log: logging.Logger | None = None) -> KubeLayer:
        target = emu or emulator
        layer = KubeLayer(str(target.kubeconfig), events, log or logging.getLogger(
            "flux_dws.test.kube"), config)
        layer.connect()
        made.append(layer)
        return layer

    yield make
    for layer in made:
        layer.stop()


@pytest.fixture
def layer(make_layer: Callable[..., KubeLayer]) -> KubeLayer:
    return make_layer()


def storage(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": f"{G}/{V}", "kind": "Storage",
            "metadata": {"name": name, "labels": labels}}


def k8s(op: str, kind: str = "Storage", name: str | None = None, body: Any = None,
        token: str | None = None, namespace: str | None = "default",
        **extra: Any) -> dict[str, Any]:
    action: dict[str, Any] = {"action": "k8s", "op": op, "kind": kind, "namespace": namespace}
    if name is not None:
        action["name"] = name
    if body is not None:
        action["body"] = body
    if token is not None:
        action["token"] = token
    action.update(extra)
    return action


STORAGE = res.BY_KIND[(G, "Storage")]


WF = {"apiVersion": "dataworkflowservices.github.io/v1alpha7", "kind": "Workflow",
      "metadata": {"name": "fluxjob-1", "namespace": "default", "resourceVersion": "7",
                   "labels": {"ünï": "cödé"}},
      "spec": {"desiredState": "Proposal", "dwDirectives": ["#DW jobdw type=xfs"]},
      "status": {"state": "Proposal", "ready": True, "message": "a \"quoted\" word"}}


def store_create(emu, name, **labels):
    return emu.store.create(STORAGE, "default", storage(name, **labels))


def watch_connected(emu, n=1):
    assert emu.api_faults.wait(lambda f: f.open_watches() >= n), "the watch did not connect"
