"""Systems for the graph tests: R built by libdws from resource configs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from flux_dws.libdws.resource_config import R_from_config


def make_R(*entries: dict[str, Any]) -> dict[str, Any]:
    R: dict[str, Any] = json.loads(R_from_config(list(entries)))
    return R


@pytest.fixture
def hetchy() -> tuple[dict[str, Any], dict[str, Any]]:
    """The doc example: hetchy201 -> 2 nodes, hetchy202 -> 16 nodes."""
    R = make_R({"hosts": "hetchy[1001-1018]", "cores": "0-3", "gpus": "0-1"})
    computes = {f"hetchy{n}": "hetchy201" if n <= 1002 else "hetchy202"
                for n in range(1001, 1019)}
    mapping = {
        "computes": computes,
        "rabbits": {
            "hetchy201": {"capacity": 30659987046400, "hostlist": "hetchy[1001-1002]"},
            "hetchy202": {"capacity": 30659987046400, "hostlist": "hetchy[1003-1018]"},
        },
    }
    return R, mapping
