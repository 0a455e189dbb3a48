"""One decider per state machine (doc/guide/service.rst, "The decider";
doc/guide/development.rst, "Where to make a change" and its worked
example; h11's rule): a job's phase changes only where its machine
decides.

- the engine (src/common/libdws/engine/): ``phase_event`` is called only
  from ``decide.c`` (the decider) and defined in ``phase.c`` (the table);
  ``->phase`` / ``.phase`` is assigned only in ``phase.c``;
- the jobtap plugin's machine (src/common/libdws/jobtap/jobsm*.c): the phase is
  assigned once, in ``phase ()`` of ``jobsm.c``, from
  ``jobsm_phase_next``'s table;
- the facts of ``struct job`` that only choose a transition
  (DECISION_FACTS) are read in ``decide.c`` alone: other engine files
  record them (``job->fact = ...``) and carry out the step the decider
  returns, but do not test them.

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

# Facts of struct job (engine/state.h) read only by the decider: each
# chooses a transition and nothing else.  Other facts (excepted, epilog,
# released, the read counters, ...) are also acted on (a note raised
# once, an annotation written, a late answer dropped) and are not listed.
DECISION_FACTS = (
    "recreate",  # created again after it vanished: a refused create keeps it
    "resources_sent",  # the resource-update went out: not again, unless lost
    "lustre",  # a breakdown asks for Lustre: Setup's timeout fails whole
    "info_R",  # job-info asked for R for a lost dws.setup
    "other_deps",  # found holding other dependencies: its create is still to come
    "force_pending",  # the forceReady patch is not answered yet
    "setup_pending",  # dws.setup came; Setup not yet asked
    "setup_error",  # a Servers write failed: Setup is not asked
    "run_started",  # the job ran: PostRun, else Teardown
    "toredown",  # to Teardown without PostRun or DataOut
    "info_hold",  # job-info asked for R for the ssd holds
    "listed_at_start",  # in the first Workflow list: may have ended while away
    "token_pending",  # the workflow token is being read
)
# a read of job->F (or j->F): not an assignment to it
FACT_READ = re.compile(
    r"\b(?:job|j)->(" + "|".join(DECISION_FACTS) + r")\b(?!\s*(?:=(?!=)|\+\+|--|[-+|&]=))"
)


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


def fact_violations(files: dict[str, str]) -> list[str]:
    """Reads of a decision-only fact outside decide.c, in engine files."""
    bad = []
    for name, text in sorted(files.items()):
        if name == "decide.c":
            continue
        for n, line in code_lines(text):
            for m in FACT_READ.finditer(line):
                bad.append(f"{name}:{n}: reads {m.group(1)}")
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


def test_the_guard_finds_a_planted_decision() -> None:
    planted = {
        "progress.c": "void f (struct job *job)\n{\n    job->setup_pending = true;\n"
        "    /* if (job->toredown) in a comment */\n"
        "    if (job->toredown || job->setup_pending == false)\n        return;\n}\n",
        "engine.c": "void g (struct job *j)\n{\n    j->servers_pending--;\n"
        "    if (j->excepted && !j->run_started)\n        return;\n}\n",
        "decide.c": "bool h (const struct job *job)\n{\n    return job->toredown;\n}\n",
    }
    assert fact_violations(planted) == [
        "engine.c:4: reads run_started",
        "progress.c:5: reads toredown",
        "progress.c:5: reads setup_pending",
    ]


def test_the_decision_facts_are_fields_of_struct_job() -> None:
    code = "\n".join(line for _, line in code_lines((ENGINE / "state.h").read_text()))
    body = code[code.index("struct job {") :]
    body = body[: body.index("};")]
    missing = [f for f in DECISION_FACTS if not re.search(r"\b" + f + r"\s*;", body)]
    assert not missing, "not in struct job: " + ", ".join(missing)


def test_only_the_decider_reads_a_decision_fact() -> None:
    bad = fact_violations(read(sorted(ENGINE.glob("*.c"))))
    assert not bad, "decision-only facts read outside decide.c: " + ", ".join(bad)


def test_only_the_decider_moves_an_engine_job() -> None:
    bad = engine_violations(read(sorted(ENGINE.glob("*.[ch]"))))
    assert not bad, "transitions outside decide.c: " + ", ".join(bad)


def test_only_phase_moves_a_jobsm_job() -> None:
    bad = jobsm_violations(read(sorted((LIBDWS / "jobtap").glob("jobsm*.[ch]"))))
    assert not bad, "jobsm phase set outside phase (): " + ", ".join(bad)
