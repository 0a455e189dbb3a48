"""job-ingest validator plugin ``rabbit`` (flux-dws).

Refuses at submission a job whose ``attributes.system.dw`` is not a string
or a list of strings, whose ``#DW`` directives DWS would refuse (checked
against the nnf ruleset, after ``[rabbit.presets]`` expansion), or whose
``dw_failure_tolerance`` is not an integer >= 0.  The message is the one
``flux dws check`` prints.  (The dws jobtap plugin's own job.validate refuses
only a dw that is not a string or a list of strings; without this plugin a
bad tolerance is accepted, as flux-coral2 does, and the job fails with a
``dws-create`` exception.)  Enable it next to the default validator::

    [ingest.validator]
    plugins = ["jobspec", "rabbit"]

The decision is flux_dws.ingest.validate_dw.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import Any

from flux.job.validator import ValidatorPlugin

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

from flux_dws.ingest import IngestError, validate_dw  # noqa: E402


class Validator(ValidatorPlugin):  # type: ignore[misc]
    def __init__(self, parser: Any) -> None:
        self.rabbit: dict[str, Any] | None = None
        super().__init__(parser)

    def configure(self, args: Any) -> None:
        rabbit = self.flux.conf_get("rabbit")
        self.rabbit = rabbit if isinstance(rabbit, dict) else None

    def validate(self, job: Any) -> tuple[int, str] | None:
        try:
            validate_dw(job.jobspec, self.rabbit)
        except IngestError as exc:
            return (errno.EINVAL, str(exc))
        return None
