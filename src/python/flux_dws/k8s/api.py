"""Raw Kubernetes API calls: JSON in, (status, JSON) out, no client models.

``Api`` makes each call for a kind of kinds.py (create, merge or JSON
patch, delete, get, a Pod's log, lists paged with ``limit``/``continue``,
and the list+watch request the watches stream); ``read_answer`` decodes a
raw answer.  Nothing here retries: the writers (writing.py) and the
watches (watching.py) do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from flux_dws.jsondata import DecodedObject
from flux_dws.k8s import crd
from flux_dws.k8s.kinds import KindInfo

__all__ = ["JSON_PATCH", "MERGE_PATCH", "Api", "read_answer"]

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def read_answer(resp: Any) -> tuple[int, Any]:
    """(status, decoded JSON body) of a raw (``_preload_content=False``)
    answer; an object body as a DecodedObject (it keeps its text)."""
    try:
        data = resp.data
    finally:
        resp.release_conn()
    if not data:
        return int(resp.status), None
    value = json.loads(data)
    return int(resp.status), DecodedObject(value, data) if isinstance(value, dict) else value


class Api:
    """Raw calls for a kind: JSON in, (status, JSON) out, no client models.

    Creates, patches, deletes and gets (the calls every job makes) go
    straight to the client's REST layer (``rest_client.request``): the
    same connection pool, TLS settings, token refresh (the kubeconfig's
    auth hook, through ``update_params_for_auth``), JSON encoding and
    ApiExceptions (a TLS error is status 0) as the generated API classes,
    without their per-call argument validation (pydantic) and parameter
    serialisation, about a tenth of a write's CPU.  Lists, watches and Pod
    logs, with their query parameters, use the API classes with
    ``_preload_content=False``.  Answers are decoded with ``json.loads``;
    errors are the client's ``ApiException`` (its ``body`` holds the
    Status) or transport errors.
    """

    def __init__(self, api_client: Any, request_timeout: float) -> None:
        self.api_client = api_client
        self.custom = client.CustomObjectsApi(api_client)
        self.core = client.CoreV1Api(api_client)
        self.timeout = request_timeout

    def _raw(self) -> dict[str, Any]:
        return {"_preload_content": False, "_request_timeout": self.timeout}

    @staticmethod
    def _path(k: KindInfo, ns: str | None, name: str | None = None) -> str:
        base = "/api/v1" if k.core else f"/apis/{k.group}/{k.version}"
        path = (f"{base}/namespaces/{quote(ns or '', safe='')}/{k.plural}" if k.namespaced
                else f"{base}/{k.plural}")
        return path if name is None else f"{path}/{quote(name, safe='')}"

    def _send(self, method: str, path: str, body: Any = None,
              content_type: str = "application/json") -> tuple[int, Any]:
        ac = self.api_client
        headers = {"Accept": "application/json", "User-Agent": ac.user_agent}
        if body is not None:
            headers["Content-Type"] = content_type
        ac.update_params_for_auth(headers, [], ["BearerToken"], path, method, body)
        # after the auth hook: the kubeconfig loader's sets the host again
        resp = ac.rest_client.request(method, ac.configuration.host + path, headers=headers,
                                      body=body, _request_timeout=self.timeout)
        if not 200 <= resp.status <= 299:
            resp.read()
            raise ApiException.from_response(http_resp=resp, body=None, data=None)
        return read_answer(resp.response)

    def create(self, k: KindInfo, ns: str, body: Any) -> tuple[int, Any]:
        return self._send("POST", self._path(k, ns), body)

    def patch(self, k: KindInfo, ns: str | None, name: str, body: Any,
              json_patch: bool = False) -> tuple[int, Any]:
        return self._send("PATCH", self._path(k, ns, name), body,
                          JSON_PATCH if json_patch else MERGE_PATCH)

    def delete(self, k: KindInfo, ns: str | None, name: str) -> tuple[int, Any]:
        return self._send("DELETE", self._path(k, ns, name))

    def get(self, k: KindInfo, ns: str | None, name: str) -> tuple[int, Any]:
        return self._send("GET", self._path(k, ns, name))

    def pod_log(self, ns: str, name: str, container: str | None,
                tail_lines: int | None) -> tuple[int, Any]:
        """A Pod's log (text, decoded as UTF-8 with replacement) as ``{"log": text}``."""
        kw: dict[str, Any] = dict(self._raw())
        if container:
            kw["container"] = container
        if tail_lines is not None:
            kw["tail_lines"] = tail_lines
        resp: Any = self.core.read_namespaced_pod_log(name, ns, **kw)  # raw: not a str
        try:
            data = resp.data
        finally:
            resp.release_conn()
        return int(resp.status), {"log": data.decode("utf-8", errors="replace")}

    def lister(self, k: KindInfo, ns: str | None) -> Callable[..., Any]:
        """The list (and, with watch=True, watch) call for k in ns (None: all)."""
        if k.core:
            if ns is None:
                return getattr(self.core, f"list_{k.snake}_for_all_namespaces")  # type: ignore[no-any-return]
            fn = getattr(self.core, f"list_namespaced_{k.snake}")
            return lambda **kw: fn(ns, **kw)
        if ns is None or not k.namespaced:
            return lambda **kw: self.custom.list_cluster_custom_object(
                k.group, k.version, k.plural, **kw)
        return lambda **kw: self.custom.list_namespaced_custom_object(
            k.group, k.version, ns, k.plural, **kw)

    def list_all(self, k: KindInfo, ns: str | None, label_selector: str | None,
                 limit: int) -> tuple[list[dict[str, Any]], str]:
        """Every object (pages of ``limit``) and the list's resourceVersion.

        The first page's resourceVersion is the list's (the pages are one
        snapshot on a real API server); an expired continue token (410)
        restarts the list, at most three times."""
        fn = self.lister(k, ns)
        for _ in range(3):
            items: list[dict[str, Any]] = []
            rv = ""
            cont: str | None = None
            try:
                while True:
                    kw: dict[str, Any] = {"limit": limit, **self._raw()}
                    if label_selector:
                        kw["label_selector"] = label_selector
                    if cont:
                        kw["_continue"] = cont
                    _, page = read_answer(fn(**kw))
                    meta = page.get("metadata") or {}
                    rv = rv or str(meta.get("resourceVersion") or "")
                    items.extend(crd.items(page))
                    cont = meta.get("continue")
                    if not cont:
                        return items, rv
            except ApiException as exc:
                if exc.status != 410 or not cont:
                    raise
        raise ApiException(status=410, reason="continue token expired three times")
