"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) for the API server.

Errors raise PatchError with a status code and a message naming the
operation and path: a failing ``test`` is 422 as in kube-apiserver's
applyJSPatch; a patch that is not a list of operations is 400; an operation
on a missing path is 422 (the real server answers some of these with 500).
"""

from __future__ import annotations

import copy
from typing import Any


class PatchError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _parse_path(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise PatchError(422, f"invalid JSON patch path {path!r}")
    return [_unescape(t) for t in path.split("/")[1:]] if path else []


def _parent(doc: Any, tokens: list[str], op: str) -> tuple[Any, str]:
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, dict) and t in cur:
            cur = cur[t]
        elif isinstance(cur, list) and t.isdigit() and int(t) < len(cur):
            cur = cur[int(t)]
        else:
            raise PatchError(422, f"{op} operation does not apply: doc is missing path:"
                                  f" /{'/'.join(tokens)}")
    return cur, tokens[-1]


def _get(doc: Any, tokens: list[str], op: str) -> Any:
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens, op)
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise PatchError(422, f"{op} operation does not apply: doc is missing path:"
                          f" /{'/'.join(tokens)}")


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent, last = _parent(doc, tokens, "add")
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise PatchError(422, f"add operation does not apply: index {last} out of range")
    else:
        raise PatchError(422, f"add operation does not apply: /{'/'.join(tokens)}")
    return doc


def _remove(doc: Any, tokens: list[str], op: str = "remove") -> Any:
    if not tokens:
        raise PatchError(422, f"{op} operation does not apply: cannot remove the root")
    parent, last = _parent(doc, tokens, op)
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise PatchError(422, f"{op} operation does not apply: doc is missing path:"
                          f" /{'/'.join(tokens)}")


def json_patch(target: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise PatchError(400, "json patch must be a list of operations")
    doc = copy.deepcopy(target)
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            raise PatchError(422, f"json patch operation {i} has no 'op'")
        name = op["op"]
        path = _parse_path(op.get("path"))
        if name in ("add", "replace", "test") and "value" not in op:
            raise PatchError(422, f"json patch {name} operation {i} has no 'value'")
        if name == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif name == "remove":
            _remove(doc, path)
        elif name == "replace":
            _get(doc, path, "replace")
            if not path:
                doc = copy.deepcopy(op["value"])
            else:
                _remove(doc, path, "replace")
                doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif name in ("move", "copy"):
            src = _parse_path(op.get("from"))
            value = _get(doc, src, name)
            if name == "move":
                _remove(doc, src, "move")
            doc = _add(doc, path, copy.deepcopy(value))
        elif name == "test":
            if _get(doc, path, "test") != op["value"]:
                raise PatchError(422, f"the server rejected our request due to an error in our"
                                      f" request: testing value /{'/'.join(path)} failed")
        else:
            raise PatchError(422, f"unknown json patch operation '{name}'")
    return doc
