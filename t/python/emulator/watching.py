"""Waiting on the API as a WLM does: a watch, never a sleep."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes import watch

G = "dataworkflowservices.github.io"
NNF = "nnf.cray.hpe.com"


def until(api: Any, plural: str, name: str, cond: Callable[[dict[str, Any]], bool],
          ns: str = "default", group: str = G, version: str | None = None,
          timeout: int = 10) -> dict[str, Any]:
    """The object ``ns/name`` once ``cond`` holds for it (watched from a list,
    so a change between the list and the watch is not missed)."""
    version = version or ("v1alpha7" if group == G else "v1alpha11")
    lst = api.list_namespaced_custom_object(group, version, ns, plural,
                                            field_selector=f"metadata.name={name}")
    for obj in lst["items"]:
        if cond(obj):
            return dict(obj)
    last: dict[str, Any] = lst["items"][0] if lst["items"] else {}
    w = watch.Watch()
    for ev in w.stream(api.list_namespaced_custom_object, group, version, ns, plural,
                       field_selector=f"metadata.name={name}",
                       resource_version=lst["metadata"]["resourceVersion"],
                       timeout_seconds=timeout):
        if ev["type"] in ("ADDED", "MODIFIED"):
            last = ev["object"]
            if cond(last):
                w.stop()
                return dict(last)
    raise AssertionError(f"{plural} {ns}/{name}: condition never held; last: {last}")


def gone(api: Any, plural: str, name: str, ns: str = "default", group: str = G,
         version: str | None = None, timeout: int = 10) -> None:
    """Return once ``ns/name`` does not exist (watched)."""
    version = version or ("v1alpha7" if group == G else "v1alpha11")
    lst = api.list_namespaced_custom_object(group, version, ns, plural,
                                            field_selector=f"metadata.name={name}")
    if not lst["items"]:
        return
    w = watch.Watch()
    for ev in w.stream(api.list_namespaced_custom_object, group, version, ns, plural,
                       field_selector=f"metadata.name={name}",
                       resource_version=lst["metadata"]["resourceVersion"],
                       timeout_seconds=timeout):
        if ev["type"] == "DELETED":
            w.stop()
            return
    raise AssertionError(f"{plural} {ns}/{name} never went")
