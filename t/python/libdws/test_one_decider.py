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
    "resources_sent",  # the resource-update went out: not again, unless lost
    "info_for",  # what the job-info read is for (R, R's graph, the jobspec)
    "asking",  # a single request out (forceReady patch, token read): not again
    "written",  # a write answered that a step waits for (the Servers, the Computes)
    "setup",  # dws.setup came (waiting for the map, said once); Setup not yet asked
    "toredown",  # to Teardown without PostRun or DataOut
    "listed_at_start",  # in the first Workflow list: may have ended while away
    "news",  # what happened that no other fact says: the decider takes it
    "fired",  # the timers fired, not yet decided (NEWS_TIMER)
    "culprits",  # the hosts a timeout's read would give up (NEWS_*_CULPRITS)
    "lim.recounted",  # the event whose admit pass changed its count: decided in it
    "ps.room_tried",  # the room's generation when it last found none: not again till it moves
    "prolog",  # held or ended (a side machine: its setter in sidestate.c reads it too)
    "wf_read",  # its Workflow's sightings read (wf_seen when last read): not again
    "wf_gone",  # the sighting that found its Workflow deleted: what follows, once
)
# a read of job->F (or j->F): not an assignment to it
FACT_READ = re.compile(
    r"\b(?:job|j)->(" + "|".join(map(re.escape, DECISION_FACTS))
    + r")\b(?!\s*(?:=(?!=)|\+\+|--|[-+|&]=))"
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
    """Reads of a decision-only fact outside decide.c (and sidestate.c's
    setters, which read where a machine is to refuse a move), in engine
    files."""
    bad = []
    for name, text in sorted(files.items()):
        if name in ("decide.c", "sidestate.c"):
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
        "progress.c": "void f (struct job *job)\n{\n    job->resources_sent = true;\n"
        "    /* if (job->toredown) in a comment */\n"
        "    if (job->toredown || job->resources_sent == false)\n        return;\n}\n",
        "engine.c": "void g (struct job *j)\n{\n    j->servers_pending--;\n"
        "    if (j->excepted && !j->toredown)\n        return;\n}\n",
        "decide.c": "bool h (const struct job *job)\n{\n    return job->toredown;\n}\n",
    }
    assert fact_violations(planted) == [
        "engine.c:4: reads toredown",
        "progress.c:5: reads toredown",
        "progress.c:5: reads resources_sent",
    ]


def struct_body(name: str) -> str:
    """The members of state.h's struct `name`, comments blanked."""
    code = "\n".join(line for _, line in code_lines((ENGINE / "state.h").read_text()))
    body = code[code.index(f"struct {name} {{") :]
    return body[: body.index("};")]


def test_the_decision_facts_are_fields_of_struct_job() -> None:
    def declared(fact: str) -> bool:  # ps.F, lim.F: a field of a wing's struct
        where, _, field = fact.rpartition(".")
        body = struct_body({"ps": "prestage_state", "lim": "limit_state"}.get(where, "job"))
        return bool(re.search(r"\b" + field + r"\s*;", body))

    missing = [f for f in DECISION_FACTS if not declared(f)]
    assert not missing, "not in struct job: " + ", ".join(missing)


def test_only_the_decider_reads_a_decision_fact() -> None:
    bad = fact_violations(read(sorted(ENGINE.rglob("*.c"))))
    assert not bad, "decision-only facts read outside decide.c: " + ", ".join(bad)


def test_only_the_decider_moves_an_engine_job() -> None:
    bad = engine_violations(read(sorted(ENGINE.rglob("*.[ch]"))))
    assert not bad, "transitions outside decide.c: " + ", ".join(bad)


def test_only_phase_moves_a_jobsm_job() -> None:
    bad = jobsm_violations(read(sorted((LIBDWS / "jobtap").glob("jobsm*.[ch]"))))
    assert not bad, "jobsm phase set outside phase (): " + ", ".join(bad)


# The one call site of the decider and the one table of verbs
# (engine/advance.c, engine/verbtable.c): an input records its facts and
# marks the job (advance_mark, advance_tell); only advance.c's run ()
# asks decide (), only decide.c
# asks decide_next (), and a step's kind is named only where it is chosen
# (decide.c, decide.h) and where it is carried out (verbtable.c's table).
DECIDE_CALL = re.compile(r"\b(decide|decide_next)\s*\(")
STEP_NAME = re.compile(r"\bSTEP_[A-Z_]+\b")
DECIDER_FILES = {"decide.c": ("decide", "decide_next"), "advance.c": ("decide",)}
STEP_FILES = ("decide.c", "decide.h", "verbtable.c")


def decide_call_violations(files: dict[str, str]) -> list[str]:
    """Calls of decide () or decide_next () outside advance.c and decide.c
    (a definition counts as none: it starts a line)."""
    bad = []
    for name, text in sorted(files.items()):
        allowed = DECIDER_FILES.get(name, ())
        for n, line in code_lines(text):
            for m in DECIDE_CALL.finditer(line):
                defined = re.match(r"^(?:struct step|int|bool)\s+" + m.group(1), line)
                if m.group(1) not in allowed and not defined and not name.endswith(".h"):
                    bad.append(f"{name}:{n}: calls {m.group(1)}")
    return bad


def step_kind_violations(files: dict[str, str]) -> list[str]:
    """A step's kind named in code outside the decider and the table."""
    bad = []
    for name, text in sorted(files.items()):
        if name in STEP_FILES:
            continue
        for n, line in code_lines(text):
            for m in STEP_NAME.finditer(line):
                if m.group(0) != "STEP_COUNT":  # the table's size, no kind
                    bad.append(f"{name}:{n}: names {m.group(0)}")
    return bad


def test_the_guard_finds_a_planted_outside_choice() -> None:
    planted = {
        "progress.c": "void f (struct job *job)\n{\n"
        "    /* decide (e, job, ...) == STEP_WORKFLOW_SEEN in a comment */\n"
        "    if (decide (e, job, NEWS_SEEN, 0).kind == STEP_WORKFLOW_SEEN)\n"
        "        progress_workflow (e, job);\n}\n",
        "engine.c": "void g (struct job *j)\n{\n"
        "    struct step st = decide_next (e, j, NEWS_MAP, 0);\n}\n",
        "advance.c": "static void run (void)\n{\n"
        "    struct step st = decide (e, job, on, arg);\n}\n",
        "decide.c": "struct step decide (struct dws_engine *e)\n{\n"
        "    return decide_next (e, job, on, arg);\n}\n",
    }
    assert decide_call_violations(planted) == [
        "engine.c:3: calls decide_next",
        "progress.c:4: calls decide",
    ]
    assert step_kind_violations(planted) == ["progress.c:4: names STEP_WORKFLOW_SEEN"]


# Inputs mark, the loop runs once: the marked jobs are run (advance_due)
# only at the end of an input or of the event's passes, in engine.c; no
# verb, no input handler runs a job itself, and advance.c's run () has
# one caller.  (Issue 64: a verb that ran the loop from inside it made a
# second machine beside the decider's.)
LOOP_CALL = re.compile(r"\b(advance_due|advance_job|run)\s*\(")
LOOP_CALLERS = {"advance_due": ("engine.c",), "run": ("advance.c",)}


def loop_call_violations(files: dict[str, str]) -> list[str]:
    """Runs of the loop outside its places: advance_due () outside
    engine.c, advance.c's run () called more than once or elsewhere, and
    any advance_job () (gone: inputs mark)."""
    bad = []
    runs = 0
    for name, text in sorted(files.items()):
        if name.endswith(".h"):
            continue
        for n, line in code_lines(text):
            for m in LOOP_CALL.finditer(line):
                what = m.group(1)
                if re.match(r"^(?:static )?void\s+" + what, line):
                    continue  # its definition
                if what == "run" and name != "advance.c":
                    continue  # another file's word, not the loop
                if what == "run":
                    runs += 1
                if name not in LOOP_CALLERS.get(what, ()):
                    bad.append(f"{name}:{n}: calls {what}")
    if runs > 1:
        bad.append(f"advance.c: run () called {runs} times")
    return bad


def test_the_loop_runs_in_one_place() -> None:
    bad = loop_call_violations(read(sorted(ENGINE.rglob("*.[ch]"))))
    assert not bad, "the loop run outside its place: " + ", ".join(bad)


def test_the_guard_finds_a_verb_that_runs_the_loop() -> None:
    planted = {
        "progress.c": "void progress_workflow_seen (struct dws_engine *e)\n{\n"
        "    /* advance_due (e, ADVANCE_AS_MARKED) in a comment */\n"
        "    advance_mark (e, job, NEWS_LOOK);\n"
        "    advance_due (e, ADVANCE_AS_MARKED);\n}\n",
        "request.c": "void request_setup (struct dws_engine *e)\n{\n"
        "    advance_job (e, job, NEWS_SETUP, NULL);\n}\n",
        "advance.c": "static void run (struct dws_engine *e)\n{\n}\n"
        "void advance_due (struct dws_engine *e)\n{\n    run (e, job);\n    run (e, job);\n}\n",
        "engine.c": "void f (struct dws_engine *e)\n{\n"
        "    advance_due (e, ADVANCE_AS_MARKED);\n}\n",
    }
    assert loop_call_violations(planted) == [
        "progress.c:5: calls advance_due",
        "request.c:3: calls advance_job",
        "advance.c: run () called 2 times",
    ]


# The decider reads the job alone: no argument says what just happened
# (an input records it on the job as news first).
DECIDE_NEXT_PROTO = re.compile(r"struct step decide_next\s*\(([^)]*)\)")


def decider_arguments(header: str) -> list[str]:
    """The parameters decide_next () is declared with in decide.h."""
    code = "\n".join(line for _, line in code_lines(header))
    m = DECIDE_NEXT_PROTO.search(code)
    assert m, "decide.h declares no decide_next"
    return [" ".join(p.split()) for p in m.group(1).split(",")]


def test_the_decider_reads_the_job_alone() -> None:
    args = decider_arguments((ENGINE / "decider" / "decide.h").read_text())
    assert args == ["const struct dws_engine *e", "const struct job *job"], args


def inner_choices(decide_c: str) -> list[str]:
    """Calls, in decide.c, of the function that chooses a step for a news
    (``next``) from anywhere but decide_next's body: decide () must take
    its step from decide_next (), the function the guard above reads."""
    code = "\n".join(line for _, line in code_lines(decide_c))
    body = re.search(r"^struct step decide_next \([^)]*\)\n\{\n.*?^\}\n", code, re.S | re.M)
    assert body, "decide.c defines no decide_next"
    rest = code[: body.start()] + code[body.end():]
    return [f"decide.c:{rest[: m.start()].count(chr(10)) + 1}: calls next"
            for m in re.finditer(r"(?<![\w.>])next\s*\(", rest)
            if not re.match(r"next \(const struct dws_engine", rest[m.start():])]


def test_decide_takes_its_step_from_decide_next() -> None:
    bad = inner_choices((ENGINE / "decider" / "decide.c").read_text())
    assert not bad, "a step chosen beside decide_next: " + ", ".join(bad)


def test_the_guard_finds_a_step_chosen_beside_decide_next() -> None:
    planted = ("static struct step next (const struct dws_engine *e, const struct job *job,\n"
               "                         enum news on, int arg)\n{\n    return make (1);\n}\n"
               "struct step decide_next (const struct dws_engine *e, const struct job *job)\n{\n"
               "    return next (e, job, first_news (job), 0);\n}\n"
               "struct step decide (struct dws_engine *e, struct job *job)\n{\n"
               "    return next (e, job, NEWS_SEEN, 0);\n}\n")
    assert inner_choices(planted) == ["decide.c:8: calls next"]


def test_the_guard_finds_a_what_happened_argument() -> None:
    planted = "struct step decide_next (const struct dws_engine *e,\n" \
        "    const struct job *job, enum news on, int arg);\n"
    assert decider_arguments(planted) != ["const struct dws_engine *e", "const struct job *job"]


def test_only_advance_asks_the_decider() -> None:
    bad = decide_call_violations(read(sorted(ENGINE.rglob("*.[ch]"))))
    assert not bad, "decide () asked outside advance.c: " + ", ".join(bad)


def test_only_the_decider_and_the_table_name_a_step() -> None:
    bad = step_kind_violations(read(sorted(ENGINE.rglob("*.[ch]"))))
    assert not bad, "a step's kind tested outside decide.c and verbtable.c: " + ", ".join(bad)


STEP_ROW = re.compile(r"^\s*X \((\w+), (\w+)\)", re.M)


def step_list(header: str) -> list[tuple[str, str]]:
    """(step, verb) of decide.h's DWS_ENGINE_STEPS, in order."""
    code = "\n".join(line for _, line in code_lines(header))
    macro = code[code.index("#define DWS_ENGINE_STEPS(X)") :]
    macro = macro[: macro.index("enum step_kind")]
    return STEP_ROW.findall(macro)


def step_list_violations(rows: list[tuple[str, str]], files: dict[str, str]) -> list[str]:
    """A step listed twice, a verb shared, a verb whose name is not its
    file's prefix and its step's name (the prefix said once when the step's
    name starts with it: PRESTAGE_LOST is prestage_lost), or a verb its
    file does not define."""
    bad = []
    steps = [step for step, _ in rows]
    verbs = [verb for _, verb in rows]
    bad += [f"{s} listed twice" for s in sorted({s for s in steps if steps.count(s) > 1})]
    bad += [f"{v} carries two steps" for v in sorted({v for v in verbs if verbs.count(v) > 1})]
    for step, verb in rows:
        prefix = verb.split("_")[0]
        name = step.lower()
        if verb.lower() not in (f"{prefix}_{name}", name if name.startswith(prefix + "_") else ""):
            bad.append(f"{verb} is not the verb of STEP_{step} ({prefix}_{name})")
        defined = re.compile(r"^void\s+" + verb + r"\s*\(", re.M)
        if not defined.search(files.get(f"{prefix}.c", "")):
            bad.append(f"{verb} is not defined in {prefix}.c")
    return bad


def test_every_step_is_listed_once_with_its_verb() -> None:
    rows = step_list((ENGINE / "decider" / "decide.h").read_text())
    assert len(rows) >= 80  # a parse that finds the list
    bad = step_list_violations(rows, read(sorted(ENGINE.rglob("*.c"))))
    assert not bad, "; ".join(bad)
    # the enum and the table are made from the list, and name no step again
    decide_h = (ENGINE / "decider" / "decide.h").read_text()
    header = "\n".join(line for _, line in code_lines(decide_h))
    enum = header[header.index("enum step_kind {") :]
    enum = enum[: enum.index("};")]
    assert set(STEP_NAME.findall(enum)) == {"STEP_NOTHING", "STEP_TEARDOWN_LATER", "STEP_COUNT",
                                            "STEP_KIND"}  # the list's X
    assert "DWS_ENGINE_STEPS (STEP_KIND)" in enum
    table = "\n".join(line for _, line in code_lines((ENGINE / "verbtable.c").read_text()))
    assert set(STEP_NAME.findall(table)) == {"STEP_ROW"}  # the list's X
    assert "DWS_ENGINE_STEPS (STEP_ROW)" in table


NEWS_ROW = re.compile(r"^\s*X \((\w+), (\w+)\)", re.M)


def news_family_violations(header: str, decider: str) -> list[str]:
    """A news its family's decider (decide.c's next_<family>) does not
    answer, or answered by another family's, where it never comes."""
    code = "\n".join(line for _, line in code_lines(header))
    macro = code[code.index("#define DWS_ENGINE_NEWS(X)") :]
    family = {f"NEWS_{n}": f for n, f in NEWS_ROW.findall(macro[: macro.index("enum news")])}
    bad = []
    answered: dict[str, str] = {}
    for m in re.finditer(r"^static struct step next_(\w+) \(.*?^}", decider, re.M | re.S):
        cases = re.findall(r"case (NEWS_[A-Z_]+):", m.group(0))
        alone = [n for n, f in family.items() if f == m.group(1)]
        if not cases and len(alone) == 1:
            answered[alone[0]] = m.group(1)  # a family of one news: no case needed (NEWS_LOOK)
        for news in cases:
            answered[news] = m.group(1)
            if family.get(news) != m.group(1):
                bad.append(f"{news} is answered in next_{m.group(1)}, its family is"
                           f" {family.get(news)}")
    bad += [f"{n} is answered by no next_{f}" for n, f in family.items() if n not in answered]
    return bad


def test_each_news_is_answered_by_its_family() -> None:
    bad = news_family_violations((ENGINE / "decider" / "decide.h").read_text(),
                                 (ENGINE / "decider" / "decide.c").read_text())
    assert not bad, "; ".join(bad)
    planted_h = ("#define DWS_ENGINE_NEWS(X) \\\n    X (SEEN, workflow) \\\n"
                 "    X (ROOM, limits)\nenum news")
    planted_c = ("static struct step next_limits (e)\n{\n    switch (on) {\n"
                 "        case NEWS_SEEN:\n            break;\n    }\n}\n")
    assert news_family_violations(planted_h, planted_c) == [
        "NEWS_SEEN is answered in next_limits, its family is workflow",
        "NEWS_ROOM is answered by no next_limits",
    ]
    # a family of one news is answered without a case; of two, not
    look_h = "#define DWS_ENGINE_NEWS(X) \\\n    X (LOOK, look)\nenum news"
    look_c = "static struct step next_look (e)\n{\n    return settle (e, job);\n}\n"
    assert news_family_violations(look_h, look_c) == []
    two_h = "#define DWS_ENGINE_NEWS(X) \\\n    X (LOOK, look) \\\n    X (MAP, look)\nenum news"
    assert news_family_violations(two_h, look_c) == [
        "NEWS_LOOK is answered by no next_look", "NEWS_MAP is answered by no next_look"]


def test_the_list_guard_finds_planted_cases() -> None:
    files = {"workflow.c": "void workflow_delete (struct dws_engine *e)\n{\n}\n",
             "release.c": "void release_timeout (struct dws_engine *e)\n{\n}\n"}
    rows = [("DELETE", "workflow_delete"), ("DELETE", "workflow_delete"),
            ("KEEP_COMPUTES", "release_timeout"), ("PRESTAGE_LOST", "prestage_lost")]
    assert step_list_violations(rows, files) == [
        "DELETE listed twice",
        "workflow_delete carries two steps",
        "release_timeout is not the verb of STEP_KEEP_COMPUTES (release_keep_computes)",
        "prestage_lost is not defined in prestage.c",
    ]


# Every field of struct job, each said once to be what it is: a fact only
# the decider reads (DECISION_FACTS), or one of these.  A new field fails
# test_every_field_of_struct_job_is_classified until it is put in one of
# them, so a flag that chooses cannot slip in beside the decider unseen.
JOB_FIELDS = {
    # who the job is, and what it asked for
    "identity": ("id", "name", "next", "userid", "groupid", "tolerance", "directives",
                 "resources", "username", "bank", "project", "prestage_asked", "release",
                 "gib", "gib_types"),
    # its pre-staging, a wing of its own (struct prestage_state, prestage.c)
    "prestage": ("ps",),
    # its standing under [rabbit.limits], a wing of its own (struct
    # limit_state, admit.c)
    "limits": ("lim",),
    # its Workflow as last seen, and its phase (phase.c)
    "workflow": ("wf", "view", "wf_seen", "phase", "state_since", "asked_at", "done_at"),
    # what it was given or read: hosts, ssd, breakdowns, held vertices
    "read": ("breakdowns", "hosts", "reserved", "failed", "held", "dms_kept",
             "ssd_asks", "datain", "wf_token"),
    # requests and reads outstanding, counted or kept to answer
    "pending": ("create_msgids", "view_msgids", "breakdowns_wanted", "servers_pending",
                "abort_reads", "teardown_reads", "timers", "record", "record_steps", "refused",
                "dw_parsed", "dw_parsed_of"),
    # what moved it: each step with its rule, written by why.c alone
    "why": ("why", "why_dropped", "why_t0", "asked_by", "failed_by", "waits_by", "prestaged_by",
            "released_by"),
    # what inputs told beside their news, kept for the step that answers it
    # (advance.c hands it to that step's verb in the step: struct step's said)
    "told": ("told",),
    # facts the verbs also act on (a note raised once, an annotation, a
    # late answer dropped, what `flux dws job` shows)
    "acted": ("forced", "epilog", "excepted", "released", "dataout_ended", "postrun_why",
              "tc_since", "note", "deps"),
}
# booleans in struct job now, the issue's goal of 8 (what is left is in
# doc/guide/service.rst, "A job's phase"): the count may only fall
JOB_BOOLEANS_MAX = 7


def struct_job_fields() -> dict[str, str]:
    """{field: type} of struct job (engine/state.h)."""
    code = "\n".join(line for _, line in code_lines((ENGINE / "state.h").read_text()))
    body = code[code.index("struct job {") :]
    body = body[body.index("{") + 1 : body.index("};")]
    fields = {}
    for decl in body.split(";"):
        m = re.match(r"\s*(.+?)[\s*]+(\w+)\s*(?:\[[^]]*\])?\s*$", decl, re.S)
        if m:
            fields[m.group(2)] = " ".join(m.group(1).split())
    return fields


def test_every_field_of_struct_job_is_classified() -> None:
    fields = struct_job_fields()
    said = [f for group in JOB_FIELDS.values() for f in group] + [
        f for f in DECISION_FACTS if "." not in f]  # ps.F, lim.F: in their wings
    twice = sorted({f for f in said if said.count(f) > 1})
    assert not twice, f"fields classified twice: {twice}"
    assert not set(fields) - set(said), f"fields not classified: {set(fields) - set(said)}"
    assert not set(said) - set(fields), f"classified, not in struct job: {set(said) - set(fields)}"


def test_a_verbs_input_travels_in_its_step() -> None:
    """What an input told reaches its verb in the step (struct step's
    `said`, set by advance.c), not through a field of the job."""
    users = sorted(f.name for f in ENGINE.rglob("*.[ch]")
                   if re.search(r"job\s*->\s*said\b", f.read_text()))
    assert not users, f"job->said read in {users}"


def test_struct_job_has_no_more_booleans() -> None:
    booleans = sorted(f for f, t in struct_job_fields().items() if t == "bool")
    assert len(booleans) <= JOB_BOOLEANS_MAX, f"{len(booleans)} booleans: {booleans}"


# The policies are the decider's: the settings that choose (whether a job
# is pre-staged, whether its computes go back early) are read in decide.c
# alone, and only decide.c (and limits.c, which words the verdict) tells
# a job that may go (LIMITS_GO) from one that waits.  admit.c and
# prestage.c count and weigh (facts); the decider chooses.
POLICY_SETTING = re.compile(r"cfg\.(prestage|release_early)\b(?!_)")
LIMITS_GO = re.compile(r"\bLIMITS_GO\b")


def policy_violations(files: dict[str, str]) -> list[str]:
    """A choosing setting read, or a limits verdict taken as go,
    outside decide.c (limits.c words the verdict)."""
    bad = []
    for name, text in sorted(files.items()):
        if name in ("decide.c", "limits.c", "limits.h"):
            continue
        for n, line in code_lines(text):
            for m in POLICY_SETTING.finditer(line):
                bad.append(f"{name}:{n}: reads cfg.{m.group(1)}")
            if LIMITS_GO.search(line):
                bad.append(f"{name}:{n}: takes a limits verdict as go")
    return bad


def test_only_the_decider_applies_a_policy() -> None:
    bad = policy_violations(read(sorted(ENGINE.rglob("*.[ch]"))))
    assert not bad, "a policy applied beside the decider: " + ", ".join(bad)


def test_the_guard_finds_a_planted_policy() -> None:
    planted = {
        "admit.c": "void f (void)\n{\n"
        "    if (limits_check (&r, use, want, u, why, n) == LIMITS_GO)\n"
        "        workflow_create (e, job);\n}\n",
        "prestage.c": "bool g (void)\n{\n    /* cfg.prestage in a comment */\n"
        "    return e->cfg.prestage == 2 && e->cfg.prestage_max_jobs > 0;\n}\n",
        "decide.c": "bool h (void)\n{\n    return e->cfg.release_early;\n}\n",
    }
    assert policy_violations(planted) == [
        "admit.c:3: takes a limits verdict as go",
        "prestage.c:4: reads cfg.prestage",
    ]


# The machines beside the phase (engine/decider/sidestate.c): their fields change
# only through its setters, which refuse a transition their table lacks.
SIDE_FIELDS = ("ps.stage", "ps.ssd", "ps.restage", "setup", "prolog", "epilog")
SIDE_SET = re.compile(r"->\s*(" + "|".join(map(re.escape, SIDE_FIELDS))
                      + r")\s*(=(?!=)|\+\+|--|\+=|-=)")


def side_state_violations(files: dict[str, str]) -> list[str]:
    """An assignment of a side machine's field outside sidestate.c."""
    bad = []
    for name, text in sorted(files.items()):
        if name == "sidestate.c":
            continue
        for n, line in code_lines(text):
            bad += [f"{name}:{n}: sets {m.group(1)}" for m in SIDE_SET.finditer(line)]
    return bad


def test_side_states_change_only_through_their_tables() -> None:
    bad = side_state_violations(read(sorted(ENGINE.rglob("*.c"))))
    assert not bad, "set outside engine/decider/sidestate.c: " + ", ".join(bad)
    planted = {"prestage.c": "void f (struct job *job)\n{\n"
               "    /* job->ps.ssd = SSD_PICKED in a comment */\n"
               "    if (job->ps.ssd == SSD_PICKED)\n"
               "        job->ps.ssd = SSD_VERIFIED;\n"
               "    job->ps.restage=RESTAGE_AGAIN;\n}\n",
               "sidestate.c": "    job->epilog = to;\n"}
    assert side_state_violations(planted) == ["prestage.c:5: sets ps.ssd",
                                              "prestage.c:6: sets ps.restage"]


# ... and only the decider reads them to choose a step (issue 64).  A read
# elsewhere is one of these, each function said once with what it does:
# a view (what `flux dws job`, dws.status or a Workflow annotation shows of
# the value: it writes the fact out, it does not choose), an answer's
# check that it is still awaited (a late one is dropped), or rabbit health's
# count of the rabbits a job uses.  sidestate.c moves the machines (its
# reach/begin/end setters read where a machine is, so verbs need not).
SIDE_READ = re.compile(
    r"\b(?:job|j)->(" + "|".join(map(re.escape, SIDE_FIELDS))
    + r")\b(?!\s*(?:=(?!=)|\+\+|--|[-+|&]=))"
)
SIDE_READERS = {
    ("prestage.c", "prestage_view"): "view: `flux dws job`'s pre-staging",
    ("status.c", "dws_engine_status"): "view: dws.status' job list",
    ("workflow.c", "workflow_send_create"): "view: a Workflow created again says it was given up",
    ("workflow.c", "workflow_teardown_patch"): "view: the Teardown patch says the epilog runs",
    ("prestage.c", "prestage_noted"): "answer: the pick written, the ssd held (not picked anew)",
    ("prestage.c", "prestage_found"): "answer: Fluxion's find, dropped unless awaited",
    ("prestage.c", "prestage_on_given_up"): "answer: the give-up written, dropped unless awaited",
    ("prestage.c", "prestage_on_unpin"): "answer: the unpin, dropped unless awaited",
    ("rabbits.c", "rabbits_job"): "health: a job whose epilog ended uses no rabbit",
}
FUNCTION = re.compile(r"^(?:static\s+)?(?:const\s+)?(?:struct\s+)?\w+[\s*]+(\w+)\s*\(")


def side_read_violations(files: dict[str, str]) -> list[str]:
    """A side machine's field read outside decide.c and sidestate.c, in a
    function SIDE_READERS does not list."""
    bad = []
    for name, text in sorted(files.items()):
        if name in ("decide.c", "sidestate.c"):
            continue
        owner = None
        for n, line in code_lines(text):
            m = FUNCTION.match(line)
            if m:
                owner = m.group(1)
            if (name, owner) in SIDE_READERS:
                continue
            bad += [f"{name}:{n}: {owner} reads {m.group(1)}" for m in SIDE_READ.finditer(line)]
    return bad


def test_only_the_decider_reads_a_side_state_to_choose() -> None:
    files = read(sorted(ENGINE.rglob("*.c")))
    bad = side_read_violations(files)
    assert not bad, "a side state read beside the decider: " + ", ".join(bad)
    # every listed reader still reads one: the list says what is, not was
    for name, function in SIDE_READERS:
        lines = code_lines(files[name])
        body = [line for n, line in lines]
        start = next(i for i, line in enumerate(body) if (m := FUNCTION.match(line))
                     and m.group(1) == function)
        end = next(i for i in range(start + 1, len(body)) if body[i].startswith("}"))
        assert any(SIDE_READ.search(line) for line in body[start:end]), (name, function)


def test_the_guard_finds_a_verb_choosing_by_a_side_state() -> None:
    planted = {
        "workflow.c": "void workflow_delete (struct dws_engine *e, struct job *job)\n{\n"
        "    /* job->epilog in a comment */\n"
        "    if (job->epilog || job->ps.restage != RESTAGE_UNPINNED)\n"
        "        workflow_epilog_remove (e, job);\n    job->ps.ssd = SSD_PICKED;\n}\n",
        "status.c": "json_t *dws_engine_status (struct job *j)\n{\n"
        "    return json_boolean (j->epilog);\n}\n",
        "decide.c": "static bool f (const struct job *job)\n{\n    return job->epilog;\n}\n",
    }
    assert side_read_violations(planted) == [
        "workflow.c:4: workflow_delete reads epilog",
        "workflow.c:4: workflow_delete reads ps.restage",
    ]


# Pre-staging is a wing (issue 76, item 4): its facts, struct
# prestage_state (job->ps), are written by prestage.c alone, its stage,
# ssd and restage moved through sidestate.c's setters; the job's other
# files read them at most.  An assignment, an increment, a string or
# memory write (snprintf, memset, strcpy, free) of job->ps anywhere else
# fails.
PS_WRITERS = ("prestage.c", "sidestate.c")


def wing_write(field: str) -> re.Pattern[str]:
    """A write of job->FIELD: an assignment, an increment, a string or
    memory write (snprintf, memset, strcpy, free, json_decref)."""
    return re.compile(
        rf"\b(?:job|j)->{field}\.(\w+)(?:\.\w+|\[[^]]*\])*\s*(?:=(?!=)|\+\+|--|[-+|&]=)"
        rf"|\b(?:snprintf|memset|strcpy|strncpy|free|json_decref)\s*\(\s*&?(?:job|j)->{field}\.(\w+)"
    )


PS_WRITE = wing_write("ps")


# the job's destructor frees every field it holds: no fact written
PS_FREERS = {("job.c", "job_free")}


def wing_write_violations(files: dict[str, str], field: str, writers: tuple[str, ...],
                          lifecycle: set[tuple[str, str]],
                          pointer_ok: str | None = None) -> list[str]:
    """A write of job->FIELD outside its writers (and the job table's
    functions of `lifecycle`, (file, function)); with pointer_ok, also its
    address passed to a function whose name does not start so (a setter
    of another file's)."""
    write = wing_write(field)
    passed = re.compile(rf"\b(\w+)\s*\([^;]*&(?:job|j)->{field}\.(\w+)")
    bad = []
    for name, text in sorted(files.items()):
        if name in writers:
            continue
        owner = None
        for n, line in code_lines(text):
            m = FUNCTION.match(line)
            if m:
                owner = m.group(1)
            if (name, owner) in lifecycle:
                continue
            bad += [f"{name}:{n}: writes {field}.{m.group(1) or m.group(2)}"
                    for m in write.finditer(line)]
            if pointer_ok is not None:
                bad += [f"{name}:{n}: {m.group(1)} () is given {field}.{m.group(2)}"
                        for m in passed.finditer(line) if not m.group(1).startswith(pointer_ok)]
    return bad


def ps_write_violations(files: dict[str, str]) -> list[str]:
    """A write of job->ps outside prestage.c and sidestate.c."""
    return wing_write_violations(files, "ps", PS_WRITERS, PS_FREERS)


def test_only_prestage_c_writes_the_prestage_wing() -> None:
    bad = ps_write_violations(read(sorted(ENGINE.rglob("*.[ch]"))))
    assert not bad, "pre-staging's facts written outside prestage.c: " + ", ".join(bad)


def test_the_guard_finds_a_planted_prestage_write() -> None:
    planted = {
        "progress.c": "void f (struct job *job)\n{\n    job->ps.gib = 0;\n"
                      "    snprintf (job->ps.wait, 4, \"x\");\n    if (job->ps.gib == 0)\n"
                      "        job->ps.not[0] = '\\0';\n}\n",
        "prestage.c": "void g (struct job *job)\n{\n    job->ps.gib = 1;\n}\n",
    }
    assert ps_write_violations(planted) == ["progress.c:3: writes ps.gib",
                                            "progress.c:4: writes ps.wait",
                                            "progress.c:6: writes ps.not"]


# The limits' facts are a wing too (issue 76, item 4): struct limit_state
# (job->lim) is admit.c's, written there alone; the job table gives its
# first values and frees it (job_create, job_free); request.c tells what
# dws-limit was seen to show through admit_shown (); its address goes
# only to limits.c's functions (limits_job_verdict reads it, and
# limits_held_uncount marks it uncounted when a create is sent).
LIM_WRITERS = ("admit.c",)
LIM_LIFECYCLE = {("job.c", "job_create"), ("job.c", "job_free")}


def lim_write_violations(files: dict[str, str]) -> list[str]:
    """A write of job->lim outside admit.c."""
    return wing_write_violations(files, "lim", LIM_WRITERS, LIM_LIFECYCLE, pointer_ok="limits_")


def test_only_admit_c_writes_the_limits_wing() -> None:
    bad = lim_write_violations(read(sorted(ENGINE.rglob("*.[ch]"))))
    assert not bad, "the limits' facts written outside admit.c: " + ", ".join(bad)


def test_the_guard_finds_a_planted_limits_write() -> None:
    planted = {
        "request.c": "void f (struct job *job)\n{\n    job->lim.shown = LIMIT_SHOWN_ASKED;\n"
                     "    free (job->lim.why);\n    if (job->lim.behind > 0)\n"
                     "        tally (&job->lim.held);\n"
                     "    limits_held_uncount (&job->lim.held);\n}\n",
        "job.c": "struct job *job_create (struct dws_engine *e, json_int_t id)\n{\n"
                 "    j->lim.recounted = -1;\n}\n"
                 "void job_forget (struct job *j)\n{\n    j->lim.behind = 0;\n}\n",
        "admit.c": "void g (struct job *job)\n{\n    job->lim.behind = 1;\n}\n",
    }
    assert lim_write_violations(planted) == ["job.c:7: writes lim.behind",
                                             "request.c:3: writes lim.shown",
                                             "request.c:4: writes lim.why",
                                             "request.c:6: tally () is given lim.held"]
