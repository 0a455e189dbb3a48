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
    if t is dict or t is DecodedObject:
        return {k: _copy(v) for k, v in obj.items()}
    if t is list:
        return [_copy(v) for v in obj]
    return obj


class DecodedObject(dict[str, Any]):
    """A JSON object as decoded from ``text``, which it keeps.

    The Kubernetes layer decodes each object it receives (it reads names
    and resourceVersions) and posts it in this form, so that the engine is
    handed the text as the API server sent it instead of the same object
    encoded again: encoding a Workflow (2.5-4 KB) costs the reactor about
    40 us, 30 times per job.  Read it as a dict; changing it would leave
    the text behind, so nothing does (copy_json gives a plain dict).
    """

    __slots__ = ("text",)

    def __init__(self, value: dict[str, Any], text: bytes) -> None:
        super().__init__(value)
        self.text = text
