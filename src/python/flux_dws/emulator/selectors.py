"""Label and field selectors (the subset kubectl and clients send).

Label: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``,
``k``, ``!k``, comma-separated.  Field: ``metadata.name`` and
``metadata.namespace`` with ``=``, ``==``, ``!=``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Matcher = Callable[[dict[str, Any]], bool]


class SelectorError(ValueError):
    pass


_SET = re.compile(r"^\s*(!?)([A-Za-z0-9._/-]+)\s*(?:(notin|in)\s*\(([^)]*)\))?\s*$")
_EQ = re.compile(r"^\s*([A-Za-z0-9._/-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")


def _split(sel: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for c in sel:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return parts


LabelTest = Callable[[dict[str, str]], bool]


def _eq(k: str, v: str, want: bool) -> LabelTest:
    return lambda lb: (lb.get(k) == v) == want


def _in(k: str, vals: set[str], want: bool) -> LabelTest:
    return lambda lb: (lb.get(k) in vals) == want


def _exists(k: str, want: bool) -> LabelTest:
    return lambda lb: (k in lb) == want


def label_matcher(sel: str | None) -> Matcher:
    if not sel:
        return lambda o: True
    tests: list[LabelTest] = []
    for part in _split(sel):
        m = _EQ.match(part)
        if m:
            k, op, v = m.groups()
            tests.append(_eq(k, v, op != "!="))
            continue
        m = _SET.match(part)
        if not m:
            raise SelectorError(f"unable to parse requirement: {part.strip()!r}")
        neg, k, op, values = m.groups()
        if op:
            tests.append(_in(k, {x.strip() for x in values.split(",")}, op == "in"))
        else:
            tests.append(_exists(k, not neg))

    def match(o: dict[str, Any]) -> bool:
        labels = o.get("metadata", {}).get("labels") or {}
        return all(t(labels) for t in tests)

    return match


def label_equalities(sel: str | None) -> list[tuple[str, str]]:
    """The ``k=v`` / ``k==v`` terms of a label selector: every object it
    matches carries these labels, so a label index can narrow a list to
    them before the full matcher runs (which also reports syntax errors)."""
    out = []
    for part in _split(sel or ""):
        m = _EQ.match(part)
        if m and m.group(2) != "!=":
            out.append((m.group(1), m.group(3)))
    return out


def _field(f: str, v: str, want: bool) -> Matcher:
    return lambda o: (o["metadata"].get(f) == v) == want


def field_matcher(sel: str | None) -> Matcher:
    if not sel:
        return lambda o: True
    tests: list[Matcher] = []
    for part in _split(sel):
        m = _EQ.match(part)
        if not m or m.group(1) not in ("metadata.name", "metadata.namespace"):
            raise SelectorError(f'"{part.strip()}" is not a known field selector: only'
                                f' "metadata.name", "metadata.namespace"')
        key, op, v = m.groups()
        tests.append(_field(key.split(".")[1], v, op != "!="))
    return lambda o: all(t(o) for t in tests)
