"""Label and field selectors (the subset kubectl and clients send).

Label: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``,
``k``, ``!k``, ``k>N``, ``k<N``, comma-separated, parsed as
apimachinery's labels.Parser parses them (and refused in its words).  Field: ``metadata.name`` and
``metadata.namespace`` with ``=``, ``==``, ``!=``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Matcher = Callable[[dict[str, Any]], bool]


class SelectorError(ValueError):
    pass


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


# --- label selectors: apimachinery labels.Parser's grammar and errors ------

_SPECIAL = "=!(),><"
_OPERATORS = ("!=", "==", "=", "!", "(", ")", ",", ">", "<")
_BINARY = "in, notin, =, ==, !=, gt, lt"
END = ("end", "")


def _lex(sel: str) -> list[tuple[str, str]]:
    """(token kind, literal): "id" (in and notin are ids here; the parser
    reads them as operators where one is expected), an operator, END."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(sel):
        c = sel[i]
        if c.isspace():
            i += 1
        elif c in _SPECIAL:
            op = next(o for o in _OPERATORS if sel.startswith(o, i))
            out.append((op, op))
            i += len(op)
        else:
            j = i
            while j < len(sel) and not sel[j].isspace() and sel[j] not in _SPECIAL:
                j += 1
            out.append(("id", sel[i:j]))
            i = j
    out.append(END)
    return out


class _Parser:
    def __init__(self, sel: str) -> None:
        self.toks = _lex(sel)
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str]:
        tok = self.toks[self.i]
        self.i = min(self.i + 1, len(self.toks) - 1)
        return tok

    def parse(self) -> list[LabelTest]:
        tests: list[LabelTest] = []
        while True:
            kind, lit = self.peek()
            if kind in ("id", "!"):
                try:
                    tests.append(self.requirement())
                except SelectorError as exc:
                    raise SelectorError(f"unable to parse requirement: {exc}") from None
                kind, lit = self.take()
                if kind == "end":
                    return tests
                if kind == ",":
                    k2, l2 = self.peek()
                    if k2 not in ("id", "!"):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                    continue
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            if kind == "end":
                return tests
            raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> LabelTest:
        kind, key = self.take()
        absent = kind == "!"
        if absent:
            kind, key = self.take()
        if kind != "id":
            raise SelectorError(f"found '{key}', expected: identifier")
        if absent or self.peek()[0] in ("end", ","):
            return _exists(key, not absent)
        kind, lit = self.take()
        op = lit if kind == "id" and lit in ("in", "notin") else kind
        if op in ("in", "notin"):
            return _in(key, self.values(), op == "in")
        if op not in ("=", "==", "!=", ">", "<"):
            raise SelectorError(f"found '{lit}', expected: {_BINARY}")
        value = self.exact()
        if op in (">", "<"):
            try:
                bound = int(value)
            except ValueError:
                raise SelectorError(f"for 'Gt', 'Lt' operators, the value must be an integer"
                                    f" (found {value!r})") from None
            return _compare(key, bound, op == ">")
        return _eq(key, value, op != "!=")

    def values(self) -> set[str]:
        kind, lit = self.take()
        if kind != "(":
            raise SelectorError(f"found '{lit}' expected: '('")
        kind, lit = self.peek()
        if kind == ")":
            self.take()
            return {""}
        if kind not in ("id", ","):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        out: set[str] = set()
        while True:
            kind, lit = self.take()
            if kind == "id":
                out.add(lit)
                k2, l2 = self.peek()
                if k2 == ",":
                    continue
                if k2 == ")":
                    self.take()
                    return out
                raise SelectorError(f"found '{l2}', expected: ',' or ')'")
            if kind == ",":
                if not out:
                    out.add("")
                k2, _ = self.peek()
                if k2 == ")":
                    self.take()
                    out.add("")
                    return out
                if k2 == ",":
                    self.take()
                    out.add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact(self) -> str:
        kind, lit = self.peek()
        if kind in ("end", ","):
            return ""
        self.take()
        if kind == "id":
            return lit
        raise SelectorError(f"found '{lit}', expected: identifier")


def _compare(k: str, bound: int, greater: bool) -> LabelTest:
    def test(lb: dict[str, str]) -> bool:
        try:
            v = int(lb[k])
        except (KeyError, ValueError):
            return False
        return v > bound if greater else v < bound
    return test


def label_matcher(sel: str | None) -> Matcher:
    """A label selector's matcher; SelectorError with kube-apiserver's
    words for one it cannot parse."""
    if not sel:
        return lambda o: True
    tests = _Parser(sel).parse()

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
    """A field selector's matcher (metadata.name and metadata.namespace, as
    custom resources have); SelectorError with kube-apiserver's words."""
    if not sel:
        return lambda o: True
    tests: list[Matcher] = []
    for part in _split(sel):
        m = _EQ.match(part)
        if not m:
            raise SelectorError(f"invalid selector: '{sel}'; can't understand '{part}'")
        key, op, v = m.groups()
        if key not in ("metadata.name", "metadata.namespace"):
            raise SelectorError(f"field label not supported: {key}")
        tests.append(_field(key.split(".")[1], v, op != "!="))
    return lambda o: all(t(o) for t in tests)
