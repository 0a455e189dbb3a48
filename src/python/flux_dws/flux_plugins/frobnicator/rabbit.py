"""job-ingest frobnicator plugin ``rabbit`` (flux-dws).

A job with ``attributes.system.dw`` and ``allow_rabbits`` true may also run
on Rabbit nodes: its constraints become
``{"or": [<existing constraints>, {"properties": ["rabbit"]}]}``.  Such a job
must already have constraints (from the ``constraints`` frobnicator, i.e. a
queue's ``requires``), otherwise it is refused.  List it after
``constraints``::

    [ingest.frobnicator]
    plugins = ["defaults", "constraints", "rabbit"]

The decision is flux_dws.ingest.rabbit_constraints.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from flux.job.frobnicator import FrobnicatorPlugin

# meson writes flux_dws' install directory here when it installs this file
# into flux-core's plugin directory; in the package flux_dws is found three
# levels up.
_PYTHONDIR = "@PYTHONDIR@"


def _find_flux_dws() -> None:
    try:
        import flux_dws  # noqa: F401
    except ImportError:
        here = Path(__file__).resolve()
        for cand in (_PYTHONDIR, str(here.parents[3]) if len(here.parents) > 3 else ""):
            if cand and not cand.startswith("@") and (Path(cand) / "flux_dws").is_dir():
                sys.path.append(cand)
                return


_find_flux_dws()

from flux_dws.ingest import IngestError, rabbit_constraints  # noqa: E402


class Frobnicator(FrobnicatorPlugin):  # type: ignore[misc]
    def __init__(self, parser: Any) -> None:
        super().__init__(parser)

    def frob(self, jobspec: Any, user: int, urgency: int, flags: int) -> None:
        try:
            constraints = rabbit_constraints(jobspec.jobspec)
        except IngestError as exc:
            raise ValueError(str(exc)) from None
        if constraints is not None:
            jobspec.setattr("system.constraints", constraints)
