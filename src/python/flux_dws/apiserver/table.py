"""Server-side printing: the ``meta.k8s.io/v1`` Table kubectl asks for
(``Accept: application/json;as=Table;...``), so that ``kubectl get``
shows the CRDs' printer columns (Workflow: STATE, READY, STATUS, JOBID,
AGE, and more with ``-o wide``) as against a real API server.

Columns are Name plus the kind's additionalPrinterColumns, or Name and Age
for kinds that define none; ``date`` cells are ages ("5m", "2d3h") as the
real server formats them.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from flux_dws.apiserver.api_resources import PRINTER_COLUMNS, Resource

NAME = {"name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace."}
AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


def wants_table(accept: str | None) -> bool:
    return bool(accept) and "as=Table" in str(accept)


def human_duration(seconds: float) -> str:
    """Go's duration.HumanDuration (k8s.io/apimachinery)."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if h < 24 * 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    if d < 365 * 2:
        return f"{d}d"
    y = d // 365
    if y < 8:
        return f"{y}y{d % 365}d" if d % 365 else f"{y}y"
    return f"{y}y"


def _columns(r: Resource) -> list[dict[str, Any]]:
    return PRINTER_COLUMNS.get(r.plural, [AGE])


def _path(obj: Any, path: str) -> Any:
    for part in path.strip(".").split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _cell(col: dict[str, Any], obj: dict[str, Any], now: dt.datetime) -> Any:
    value = _path(obj, str(col["jsonPath"]))
    if col["type"] == "date" and isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        return human_duration((now - when).total_seconds())
    if col["type"] == "string" and value is not None and not isinstance(value, str):
        # a string column prints any value as text (apiextensions' tableconvertor)
        return json.dumps(value, separators=(",", ":"))
    return value


def _row(r: Resource, obj: dict[str, Any], include: str, now: dt.datetime) -> dict[str, Any]:
    row: dict[str, Any] = {"cells": [obj["metadata"]["name"]] + [
        _cell(c, obj, now) for c in _columns(r)]}
    if include == "Object":
        row["object"] = obj
    elif include != "None":
        row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                         "metadata": obj["metadata"]}
    return row


def table(r: Resource, objs: list[dict[str, Any]], meta: dict[str, Any],
          include: str = "Metadata") -> dict[str, Any]:
    """A Table of objs (include: Metadata, Object or None, as includeObject)."""
    now = dt.datetime.now(dt.timezone.utc)
    cols = [NAME] + [{"name": c["name"], "type": c["type"], "format": "",
                      "description": c.get("description", ""),
                      "priority": c.get("priority", 0)} for c in _columns(r)]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "columnDefinitions": cols, "rows": [_row(r, o, include, now) for o in objs]}
