"""One decider per state machine (ARCHITECTURE.md, h11's rule): a job's
phase changes only where its machine decides.

- the engine (src/common/libdws/engine/): ``phase_event`` is called only
  from ``decide.c`` (the decider) and defined in ``phase.c`` (the table);
  ``->phase`` / ``.phase`` is assigned only in ``phase.c``;
- the jobtap plugin's machine (src/common/libdws/jobtap/jobsm*.c): the phase is
  assigned once, in ``phase ()`` of ``jobsm.c``, from
  ``jobsm_phase_next``'s table.

A file that moves a job itself fails here, naming the file and the line.
Like test_no_cycles.py it reads the sources: comments are left out."""

from __future__ import annotations

import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
LIBDWS = TOP / "src" / "common" / "libdws"
ENGINE = LIBDWS / "engine"

CALL = re.compile(r"\bphase_event\s*\(")
# an assignment (not a comparison) to a phase member
ASSIGN = re.compile(r"(?:->|\.)phase\s*=(?!=)")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, code) with comments blanked (newlines kept)."""
    code = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return list(enumerate(code.splitlines(), 1))


def engine_violations(files: dict[str, str]) -> list[str]:
    """Calls of phase_event outside decide.c and phase.c, and phase
    assignments outside phase.c, in engine files {name: text}."""
    bad = []
    for name, text in sorted(files.items()):
        for n, line in code_lines(text):
            if CALL.search(line) and name not in ("decide.c", "phase.c", "phase.h"):
                bad.append(f"{name}:{n}: calls phase_event")
            if ASSIGN.search(line) and name != "phase.c":
                bad.append(f"{name}:{n}: sets a job's phase")
    return bad


def jobsm_violations(files: dict[str, str]) -> list[str]:
    """Phase assignments in the jobsm files other than the one in
    jobsm.c's phase (), which takes its target from the table."""
    bad = []
    for name, text in sorted(files.items()):
        lines = code_lines(text)
        owner = None
        for n, line in lines:
            m = re.match(r"^static int (\w+) \(", line)
            if m:
                owner = m.group(1)
            elif re.match(r"^\w", line):
                owner = None
            if ASSIGN.search(line) and not (name == "jobsm.c" and owner == "phase"):
                bad.append(f"{name}:{n}: sets the phase outside phase ()")
    return bad


def read(paths: list[Path]) -> dict[str, str]:
    return {p.name: p.read_text() for p in paths}


def test_the_guard_finds_a_planted_transition() -> None:
    planted = {
        "workflow.c": "void f (void)\n{\n    phase_event (e, job, PHASE_EV_ASK, WF_SETUP);\n}\n",
        "progress.c": "/* phase_event (e, job, ...) in a comment */\nvoid g (void)\n{\n"
        "    job->phase = PHASE_NONE;\n    if (job->phase == PHASE_NONE)\n        return;\n}\n",
        "decide.c": "void h (void)\n{\n    phase_event (e, job, PHASE_EV_DONE, s);\n}\n",
    }
    assert engine_violations(planted) == [
        "progress.c:4: sets a job's phase",
        "workflow.c:3: calls phase_event",
    ]
    jobsm = {
        "jobsm.c": "static int phase (struct ctx *c)\n{\n    c->next.phase = to;\n}\n"
        "static int ev_reload (struct ctx *c)\n{\n    c->next.phase = JOBSM_PHASE_INERT;\n}\n",
    }
    assert jobsm_violations(jobsm) == ["jobsm.c:7: sets the phase outside phase ()"]


def test_only_the_decider_moves_an_engine_job() -> None:
    bad = engine_violations(read(sorted(ENGINE.glob("*.[ch]"))))
    assert not bad, "transitions outside decide.c: " + ", ".join(bad)


def test_only_phase_moves_a_jobsm_job() -> None:
    bad = jobsm_violations(read(sorted((LIBDWS / "jobtap").glob("jobsm*.[ch]"))))
    assert not bad, "jobsm phase set outside phase (): " + ", ".join(bad)
