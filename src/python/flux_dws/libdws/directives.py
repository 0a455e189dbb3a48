"""#DW directives: split, validate against DWS rules, capacities, limits.

All decisions are made by libdws (src/common/libdws/parse/{directive,
ruleset,capacity,policy}.h); this module converts Python values and raises
DirectiveError carrying libdws' text, which is exactly what a job's
exception shows.

    >>> dws = split_directives("#DW jobdw type=xfs capacity=1GiB name=a #DW copy_in ...")
    >>> validate(dws)          # raises DirectiveError("argument 'type' ...")
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi

#: DWS answers a rejected Workflow with this prefix (HTTP 403).
ADMISSION_PREFIX = 'admission webhook "vworkflow.kb.io" denied the request: '
RULESET_NAMESPACE = "dws-system"


class DirectiveError(DwsError):
    """A #DW directive (or the dw attribute holding them) is invalid."""


def nnf_rules() -> dict[str, Any]:
    """The DWDirectiveRule nnf-sos installs as dws-system/nnf."""
    text = resources.files("flux_dws").joinpath("data/nnf-ruleset.json").read_text()
    rules: dict[str, Any] = json.loads(text)
    return rules


def split_directives(dw: Any, presets: dict[str, Any] | None = None) -> list[str]:
    """One string per directive from a dw attribute (string or list)."""
    err = _ffi.new_error()
    p = _ffi.lib.dws_dw_split_json(
        _ffi.to_c(json.dumps(dw), DirectiveError),
        _ffi.to_c(json.dumps(presets), DirectiveError) if presets is not None else _ffi.ffi.NULL,
        err,
    )
    if p == _ffi.ffi.NULL:
        _ffi.raise_error(err, DirectiveError)
    result: list[str] = _ffi.take_json(p, err)
    return result


def parse_directive(directive: str) -> tuple[str, list[tuple[str, str | None]]]:
    """(command, [(key, value or None for a bare key), ...])."""
    err = _ffi.new_error()
    p = _ffi.lib.dws_dw_parse_json(_ffi.to_c(directive, DirectiveError), err)
    if p == _ffi.ffi.NULL:
        _ffi.raise_error(err, DirectiveError)
    doc = _ffi.take_json(p, err)
    return doc["command"], [(k, v) for k, v in doc["args"]]


class Ruleset:
    """Compiled DWDirectiveRule data (one or a list of rule objects/specs)."""

    def __init__(self, rules: Any, namespace: str = RULESET_NAMESPACE) -> None:
        err = _ffi.new_error()
        h = _ffi.lib.dws_ruleset_create_json(
            _ffi.to_c(json.dumps(rules), DirectiveError), _ffi.to_c(namespace), err
        )
        if h == _ffi.ffi.NULL:
            _ffi.raise_error(err, DirectiveError)
        self._h = _ffi.ffi.gc(h, _ffi.lib.dws_ruleset_destroy)

    def validate(self, directives: list[str]) -> list[dict[str, Any]]:
        """Validate a workflow's directives; return the rule matches.

        Each match is {"index", "command", "driverLabel", "watchStates"}, in
        directive order, as the DWS mutating webhook registers drivers.
        """
        err = _ffi.new_error()
        p = _ffi.lib.dws_ruleset_validate_json(
            self._h, _ffi.to_c(json.dumps(directives), DirectiveError), err
        )
        if p == _ffi.ffi.NULL:
            _ffi.raise_error(err, DirectiveError)
        matches: list[dict[str, Any]] = _ffi.take_json(p, err)
        return matches


@lru_cache(maxsize=1)
def default_ruleset() -> Ruleset:
    return Ruleset(nnf_rules())


def validate(directives: list[str], rules: Ruleset | None = None) -> list[dict[str, Any]]:
    """Validate against `rules` (default: the nnf ruleset)."""
    return (rules or default_ruleset()).validate(directives)


def parse_capacity(text: str) -> int:
    """Bytes in a capacity string, as nnf-sos reads it (see capacity.h)."""
    err = _ffi.new_error()
    out = _ffi.ffi.new("int64_t *")
    if _ffi.lib.dws_capacity_parse(_ffi.to_c(text, DirectiveError), out, err) < 0:
        _ffi.raise_error(err, DirectiveError)
    return int(out[0])


def check_maximums(directives: list[str], nnodes: int, maximums: dict[str, Any] | None) -> None:
    """Raise DirectiveError if a jobdw request exceeds [rabbit.policy.maximums]."""
    err = _ffi.new_error()
    rc = _ffi.lib.dws_policy_check_maximums_json(
        _ffi.to_c(json.dumps(directives), DirectiveError),
        nnodes,
        _ffi.to_c(json.dumps(maximums)) if maximums is not None else _ffi.ffi.NULL,
        err,
    )
    if rc < 0:
        _ffi.raise_error(err, DirectiveError)


def check_dw(value: Any, presets: dict[str, Any] | None = None, nodes: int | None = None,
             maximums: dict[str, Any] | None = None, rules: Ruleset | None = None) -> list[str]:
    """Check a dw attribute value as a job submission is checked; return its
    directives.  The value is preset-expanded and split, validated against
    ``rules`` (default nnf; a refusal carries DWS' admission prefix) and, with
    ``nodes``, against [rabbit.policy.maximums].  ``flux dws check`` and the
    job-ingest validator plugin both call this, so their messages agree."""
    directives = split_directives(value, presets)
    if not directives:
        raise DirectiveError("Malformed #DW directives: no #DW directive found")
    try:
        validate(directives, rules)
    except DirectiveError as exc:
        raise DirectiveError(ADMISSION_PREFIX + str(exc)) from None
    if nodes is not None:
        check_maximums(directives, nodes, maximums)
    return directives
