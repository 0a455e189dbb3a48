"""pytest fixtures: a fresh emulator per test, and the official client on it.

Use them from any conftest.py::

    from flux_dws.emulator.testing import emulator, k8s, k8s_api  # noqa: F401

- ``emulator``: a started ``Emulator`` (TLS, token, free port, its own
  kubeconfig) stopped after the test; about 15 ms.
- ``k8s``: a ``Target``: the API server a test talks to and the namespace
  it may use.  Normally a fresh emulator and ``default``.  With
  ``FLUX_DWS_TEST_KUBECONFIG=FILE`` in the environment it is the cluster
  that kubeconfig names (a real one with the DWS/NNF CRDs installed, to
  check that the emulator and a real API server agree) and a fresh
  namespace, deleted after the test; ``k8s.emulator`` is then None, and
  tests that need the emulator itself call ``k8s.need_emulator()`` (a
  skip).
- ``k8s_api``: ``CustomObjectsApi`` bound to ``k8s``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from flux_dws.emulator import Emulator

ENV_KUBECONFIG = "FLUX_DWS_TEST_KUBECONFIG"


class Target:
    """The API server under test: an emulator or a real cluster."""

    def __init__(self, emulator: Emulator | None, kubeconfig: str, namespace: str) -> None:
        self.emulator = emulator
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        self._client: Any = None

    def need_emulator(self) -> Emulator:
        if self.emulator is None:
            pytest.skip("needs the emulator itself (a real cluster is under test)")
        return self.emulator

    def api_client(self) -> Any:
        from kubernetes import config

        if self._client is None:
            self._client = config.new_client_from_config(  # type: ignore[no-untyped-call]
                self.kubeconfig)
        return self._client

    def custom_objects_api(self) -> Any:
        from kubernetes import client

        return client.CustomObjectsApi(self.api_client())

    def core_v1_api(self) -> Any:
        from kubernetes import client

        return client.CoreV1Api(self.api_client())


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    """A fresh emulated API server (no system, no controllers)."""
    with Emulator(bookmark_interval=0.3) as emu:
        yield emu


@pytest.fixture
def k8s() -> Iterator[Target]:
    """The API server the test talks to (see the module docstring)."""
    real = os.environ.get(ENV_KUBECONFIG)
    if not real:
        with Emulator(bookmark_interval=0.3) as emu:
            yield Target(emu, str(emu.kubeconfig), "default")
        return
    from kubernetes import client

    ns = f"flux-dws-test-{secrets.token_hex(4)}"
    target = Target(None, real, ns)
    core = client.CoreV1Api(target.api_client())
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    try:
        yield target
    finally:
        core.delete_namespace(ns)


@pytest.fixture
def k8s_api(k8s: Target) -> Any:
    """CustomObjectsApi bound to the API server under test."""
    return k8s.custom_objects_api()
