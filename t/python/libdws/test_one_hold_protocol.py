"""One service-to-plugin protocol for the waits the service owns (issue
53): the engine removes dws-prestage as it adds and removes dws-limit,
through the jobtap plugin's one dependency method, and sends each of the
plugin's job-manager.dws.* methods from one function of act.c.  The
plugin still serves prestage-remove, for a flux-dws service older than it.
"""

from __future__ import annotations

import re
from pathlib import Path

from flux_dws.libdws import _ffi, jobsm

TOP = Path(__file__).resolve().parents[3]
ENGINE = TOP / "src" / "common" / "libdws" / "engine"
HOME = "act.c"

#: the plugin's methods the engine sends through one act.c function each
#: (the method's name as it appears in C: jobwire.h's macro; a literal
#: is test_one_spelling.py's to refuse)
SENT_ONCE = {
    "epilog-remove": r"\bDWS_JOBWIRE_EPILOG_REMOVE_METHOD\b",
    "dataout-end": r"\bDWS_JOBWIRE_DATAOUT_END_METHOD\b",
    "dependency": r"\bDWS_JOBWIRE_DEPENDENCY_METHOD\b",
}


def _code(path: Path) -> str:
    """The C text of path without its comments."""
    text = path.read_text()
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def _uses(pattern: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(ENGINE.rglob("*.c")):
        n = len(re.findall(pattern, _code(path)))
        if n:
            found[path.name] = n
    return found


def test_each_method_is_sent_from_one_function() -> None:
    for method, pattern in SENT_ONCE.items():
        assert _uses(pattern) == {HOME: 1}, method


def test_the_engine_sends_no_prestage_remove() -> None:
    assert _uses(r'"[^"\n]*\bprestage-remove"|\bDWS_JOBWIRE_PRESTAGE_REMOVE_METHOD\b') == {}


def test_the_service_owns_both_waits_through_the_method() -> None:
    service = _ffi.lib.dws_jobwire_service_dependency
    assert service(jobsm.LIMIT_DEPENDENCY.encode()) == 1
    assert service(jobsm.PRESTAGE_DEPENDENCY.encode()) == 1
    assert service(jobsm.DEPENDENCY.encode()) == 0  # dws-create is the plugin's own
    assert jobsm.PRESTAGE_DEPENDENCY == "dws-prestage"


def test_the_plugin_still_serves_an_older_services_prestage_remove() -> None:
    assert "prestage-remove" in jobsm.SERVICES
    assert jobsm.DEPENDENCY_METHOD not in jobsm.SERVICES  # registered apart (jobsm.h)
