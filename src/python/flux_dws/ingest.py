"""Job-ingest decisions of the ``rabbit`` frobnicator and validator plugins.

flux-core's job-ingest module passes every submitted jobspec through
frobnicator plugins (which may change it) and validator plugins (which may
refuse it).  flux-dws ships one of each, named ``rabbit``
(flux_dws/flux_plugins/{frobnicator,validator}/rabbit.py); their decisions
live here, free of Flux, so they are tested without a broker:

- :func:`rabbit_constraints`: a job that asks for rabbit storage (``dw``)
  and may run on Rabbit nodes (``allow_rabbits``) gets its constraints
  widened to ``{"or": [existing, {"properties": ["rabbit"]}]}``;
- :func:`validate_dw`: a job whose ``dw`` is not a string or a list of
  strings, whose directives DWS would refuse, or whose
  ``dw_failure_tolerance`` is not an integer >= 0 is refused at submission,
  with the words ``flux dws check`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flux_dws.errors import DwsError
from flux_dws.libdws import directives as dw
from flux_dws.libdws.explain import explain_note
from flux_dws.libdws.jobsm import JobspecError, check_jobspec

#: The property flux-dws2jgf gives the nodes of a Rabbit chassis.
RABBIT_PROPERTY = "rabbit"

__all__ = ["RABBIT_PROPERTY", "IngestError", "rabbit_constraints", "validate_dw"]


class IngestError(DwsError):
    """The job is refused at submission; the message is one line."""


def _system(jobspec: Mapping[str, Any]) -> Mapping[str, Any]:
    attributes = jobspec.get("attributes") if isinstance(jobspec, Mapping) else None
    system = attributes.get("system") if isinstance(attributes, Mapping) else None
    return system if isinstance(system, Mapping) else {}


def rabbit_constraints(jobspec: Mapping[str, Any]) -> dict[str, Any] | None:
    """The constraints the frobnicator sets, or None to leave the job alone.

    Only a job with ``attributes.system.dw`` and ``allow_rabbits`` true is
    changed.  It must already have constraints (flux-core's ``constraints``
    frobnicator sets a queue's ``requires`` there): without them the job
    could run anywhere, and widening nothing is a configuration mistake.
    """
    system = _system(jobspec)
    if "dw" not in system or system.get("allow_rabbits") is not True:
        return None
    existing = system.get("constraints")
    if not existing:
        raise IngestError(
            "rabbit frobnicator: the job has allow_rabbits but no constraints to widen."
            " Is the constraints frobnicator plugin loaded?"
        )
    return {"or": [existing, {"properties": [RABBIT_PROPERTY]}]}


def validate_dw(jobspec: Mapping[str, Any], rabbit: Mapping[str, Any] | None = None) -> None:
    """Raise IngestError if the job's dw attributes are invalid.

    ``rabbit`` is the instance's ``[rabbit]`` config table; its ``presets``
    are expanded as the dws service expands them.  A job without ``dw``
    always passes.  The message is the text ``flux dws check`` prints after
    "DWS workflow interactions failed: ": the validator's words, then the
    plain sentence libdws' explain table gives them (if any).
    """
    try:
        check_jobspec(jobspec)
    except JobspecError as exc:
        raise IngestError(explain_note(str(exc))) from None
    system = _system(jobspec)
    if "dw" not in system:
        return
    presets = rabbit.get("presets") if isinstance(rabbit, Mapping) else None
    try:
        dw.check_dw(system["dw"], presets if isinstance(presets, dict) else None)
    except dw.DirectiveError as exc:
        raise IngestError(explain_note(str(exc))) from None
