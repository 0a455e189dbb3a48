"""Each word flux-dws shares between C and Python is spelled once, in C,
and read by Python through the cffi extension (doc/guide/development.rst,
"Where to make a change": "a word C and Python share"; doc/guide/libdws.rst,
"Rooms", wire/): the Workflow states (engine/shapes/wfstate.c), the
exception-note prefixes (wire.h for the service, jobwire.h for the jobtap
plugin), the plugin's names, actions and job-manager.dws.<method> topics
(jobwire.h), the job's KVS keys (jobkvs.h), the [rabbit] keys with their
kinds and defaults (rabbitconf.h's one table, which the engine reads its
configuration through), the f58 job id (util/f58.c), and a user's name
for a uid (flux_dws.users, the one lookup).  The values are checked here
against the reference's words, and the sources for a second spelling: a
Python literal, or a C literal outside the one header.  Every check is a
function of the tree's root, and each is shown failing on a planted
alias."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from flux_dws.apiserver import schema
from flux_dws.dwsim import storage
from flux_dws.libdws import engine, jobsm, rabbitconf, wfstates

TOP = Path(__file__).resolve().parents[3]
SRC = TOP / "src"
PYPKG = SRC / "python" / "flux_dws"
LIBDWS = SRC / "common" / "libdws"
HOME_OF_STATUSES = PYPKG / "dwsim" / "storage.py"

DWS_STATES = ("Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut", "Teardown")
SERVICE_NOTE = "DWS/Rabbit interactions failed: "
PLUGIN_NOTE = "DWS workflow interactions failed: "


def test_the_words_read_through_cffi_are_the_references() -> None:
    assert wfstates.STATES == DWS_STATES
    assert engine.NOTE_PREFIX == SERVICE_NOTE
    assert jobsm.NOTE_PREFIX == PLUGIN_NOTE
    assert (jobsm.DEPENDENCY, jobsm.PROLOG, jobsm.EPILOG) == ("dws-create", "dws-setup",
                                                              "dws-epilog")
    assert (jobsm.EPILOG_TIMEOUT_EXCEPTION, jobsm.TIMER) == ("dws-epilog-timeout",
                                                            "epilog-timeout")
    assert "restrict_persistent_creation" in rabbitconf.KEYS
    assert "min_allocation_size" in rabbitconf.KEYS
    assert "restrict_persistent" not in rabbitconf.KEYS  # an alias, not a key


def test_the_emulator_uses_the_same_lists() -> None:
    assert schema.STATES is wfstates.STATES
    assert schema.RESOURCE_STATUSES is storage.RESOURCE_STATUSES
    assert not hasattr(schema, "RESOURCE_STATUS")
    spec = schema.STORAGE.props["spec"].props
    assert spec["state"].enum is storage.STATES and spec["mode"].enum is storage.MODES


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    """Every str constant that is not a docstring, with its line."""
    docs = {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_python_spells_none_of_them_again() -> None:
    names = {jobsm.DEPENDENCY, jobsm.PROLOG, jobsm.EPILOG, jobsm.EPILOG_TIMEOUT_EXCEPTION}
    bad = []
    for path in sorted(PYPKG.rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = path.relative_to(TOP)
        for line, text in _literals(tree):
            if text.startswith((SERVICE_NOTE, PLUGIN_NOTE)):
                bad.append(f"{where}:{line}: a note prefix")
            if text in names:
                bad.append(f"{where}:{line}: {text!r}")
        for node in ast.walk(tree):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if len(words & set(DWS_STATES)) >= 3:
                    bad.append(f"{where}:{node.lineno}: a list of Workflow states")
                if len(words & set(rabbitconf.KEYS)) >= 3:
                    bad.append(f"{where}:{node.lineno}: a list of [rabbit] keys")
                if len(words & set(storage.RESOURCE_STATUSES)) >= 5 and path != HOME_OF_STATUSES:
                    bad.append(f"{where}:{node.lineno}: a list of resource statuses")
    assert not bad, "spelled again (read it from libdws): " + "; ".join(bad)


def _c_sources() -> list[Path]:
    """The C sources, not their unit tests (which spell what they expect)."""
    return sorted(p for p in SRC.rglob("*")
                  if p.suffix in (".c", ".h") and LIBDWS / "test" not in p.parents)


def _code(path: Path) -> str:
    return re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)


def test_c_spells_each_once() -> None:
    """The note prefixes in their header only; the Workflow states in
    wfstate.c only; the plugin's action names in jobwire.h only (of the
    files that carry actions out or build them as bare strings)."""
    once = {
        f'"{SERVICE_NOTE}"': LIBDWS / "wire" / "wire.h",
        f'"{PLUGIN_NOTE}"': LIBDWS / "wire" / "jobwire.h",
        '"Proposal", "Setup", "DataIn"': LIBDWS / "engine" / "shapes" / "wfstate.c",
    }
    for path in _c_sources():
        text = _code(path)
        for literal, home in once.items():
            assert (literal in text) == (path == home), f"{path.relative_to(TOP)}: {literal}"
    for path in (LIBDWS / "jobtap" / "dataout.c",
                 SRC / "job-manager" / "plugins" / "dataout_hold.c",
                 SRC / "job-manager" / "plugins" / "jobctx.c"):
        found = [a for a in jobsm.ACTIONS if re.search(rf'"{re.escape(a)}"', _code(path))]
        assert not found, f"{path.relative_to(TOP)} spells {found}: use jobwire.h"


# --- every alias, in C and in Python: functions of {path: text} -----------

#: what the engine's configuration holds beside [rabbit] (rabbitconf.h's
#: DWS_RABBITCONF_SERVICE_KEYS): read through the same table
SERVICE_KEYS = ("fluxion", "owner")
#: the job-manager.dws.<method> names (jobwire.h), through the cffi
#: extension (not "dependency", a word of many other uses)
METHODS = (jobsm.RESOURCE_UPDATE_METHOD, jobsm.PROLOG_REMOVE_METHOD,
           jobsm.EPILOG_REMOVE_METHOD, jobsm.PRESTAGE_REMOVE_METHOD,
           jobsm.DATAOUT_BEGIN_METHOD, jobsm.DATAOUT_END_METHOD)
RELEASE_VALUES = ("after-unmount", "after-teardown")
F58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
#: each word's one C home, relative to src/common/libdws/
C_HOMES = {
    "a job-manager.dws. topic": "wire/jobwire.h",
    "a job-manager.dws.<method>": "wire/jobwire.h",
    "a data.dws. KVS key": "wire/jobkvs.h",
    "the reference's memo or link name": "wire/jobkvs.h",
    "a Workflow state": "engine/shapes/wfstate.c",
    "a release_computes value": "config/rabbitconf.h",
    "the f58 alphabet": "util/f58.c",
}
#: the reference's memo (rabbit_workflow) and KVS link names
#: (rabbit_<state>_timing), or a printf pattern of them
REFERENCE_NAME = re.compile(r"^rabbit_(?:workflow|\w*%s\w*|\w+_timing)?$|^_timing$")
#: the files that read the [rabbit] table: each key comes from
#: rabbitconf.h's DWS_RABBITCONF_KEYS (by id), never as its own literal
CONFIG_READERS = ("engine/engine.c", "config/rabbitconf.c")
#: the one Python lookup of a user's name (users.py's rule)
HOME_OF_NAMES = "users.py"


def _blank_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)),
                  text, flags=re.S)


def c_literals(text: str) -> list[tuple[int, str]]:
    """Every string literal of C text (comments and char literals left
    out), with its line."""
    out = []
    for n, line in enumerate(_blank_comments(text).splitlines(), 1):
        line = re.sub(r"'(?:[^'\\\n]|\\.)+'", "' '", line)
        out += [(n, m.group(1)) for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', line)]
    return out


def c_violations(files: dict[str, str]) -> list[str]:
    """Second spellings in C files {path under src/common/libdws/ (or
    ../../ for the plugins): text}."""
    keys = set(rabbitconf.KEYS) | set(SERVICE_KEYS)
    bad = []
    for path, text in sorted(files.items()):
        code = _blank_comments(text)
        if re.search(r"\bgetpwuid\b", code):
            bad.append(f"{path}: looks a user up (getpwuid): names are flux_dws.users")
        if re.search(r"^char \*dws_f58_plain \([^;]*$", code, re.M) and path != "util/f58.c":
            bad.append(f"{path}: defines dws_f58_plain (util/f58.c's)")
        for n, lit in c_literals(text):
            found = []
            if "job-manager.dws." in lit:
                found.append("a job-manager.dws. topic")
            if lit in METHODS:
                found.append("a job-manager.dws.<method>")
            if "data.dws." in lit:
                found.append("a data.dws. KVS key")
            if REFERENCE_NAME.search(lit):
                found.append("the reference's memo or link name")
            if lit in wfstates.STATES:
                found.append("a Workflow state")
            if lit in RELEASE_VALUES:
                found.append("a release_computes value")
            if lit == F58_ALPHABET:
                found.append("the f58 alphabet")
            bad += [f"{path}:{n}: {what} {lit!r} (spelled in {C_HOMES[what]})"
                    for what in found if path != C_HOMES[what]]
            if path in CONFIG_READERS and lit in keys:
                bad.append(f"{path}:{n}: the [rabbit] key {lit!r} (rabbitconf.h's table:"
                           f" read it by its id)")
    return bad


def py_violations(files: dict[str, str]) -> list[str]:
    """Second spellings in Python files {path under flux_dws/: text}."""
    bad = []
    for path, text in sorted(files.items()):
        tree = ast.parse(text)
        for line, lit in _literals(tree):  # f-strings' text parts too
            if "data.dws." in lit:
                bad.append(f"{path}:{line}: a data.dws. KVS key {lit!r}"
                           " (jobrecord.py reads them from jobkvs.h)")
            if REFERENCE_NAME.search(lit):
                bad.append(f"{path}:{line}: the reference's memo or link name {lit!r}"
                           " (jobrecord.MEMO_WORKFLOW, timing_link: from jobkvs.h)")
            if lit.startswith(jobsm.TOPIC_PREFIX) or lit in METHODS:
                bad.append(f"{path}:{line}: a job-manager.dws. topic or method {lit!r}"
                           " (jobsm.py reads them from jobwire.h)")
            if lit in wfstates.STATES:
                bad.append(f"{path}:{line}: the Workflow state {lit!r} (wfstates.py's)")
        for node in ast.walk(tree):
            name = (node.attr if isinstance(node, ast.Attribute)
                    else node.id if isinstance(node, ast.Name) else None)
            if name == "getpwuid" and path != HOME_OF_NAMES:
                bad.append(f"{path}:{node.lineno}: looks a user up (getpwuid):"
                           " use flux_dws.users")
    return bad


def c_tree(top: Path = TOP) -> dict[str, str]:
    src = top / "src"
    libdws = src / "common" / "libdws"
    return {(str(p.relative_to(libdws)) if libdws in p.parents
             else "../../" + str(p.relative_to(src))): p.read_text()
            for p in src.rglob("*") if p.suffix in (".c", ".h")
            and libdws / "test" not in p.parents}


def py_tree(top: Path = TOP) -> dict[str, str]:
    pkg = top / "src" / "python" / "flux_dws"
    return {str(p.relative_to(pkg)): p.read_text() for p in pkg.rglob("*.py")}


def test_c_spells_every_shared_word_once() -> None:
    bad = c_violations(c_tree())
    assert not bad, "spelled again (use its one header): " + "; ".join(bad)


def test_python_reads_every_shared_word() -> None:
    bad = py_violations(py_tree())
    assert not bad, "spelled again (read it from libdws): " + "; ".join(bad)


def test_the_guard_finds_a_planted_c_alias() -> None:
    tree = c_tree()
    planted = {
        "engine/verbs/progress.c": tree["engine/verbs/progress.c"] + '\nstatic const char *t ='
        ' "job-manager.dws.resource-update";\nstatic const char *m = "rabbit_workflow";\n',
        "engine/verbs/workflow.c": tree["engine/verbs/workflow.c"]
        + '\n/* "data.dws.x" in a comment */\n'
        'static const char *k = "data.dws.teardown";\nstatic const char *s = "Setup";\n',
        "engine/engine.c": tree["engine/engine.c"].replace(
            "DWS_RABBIT_TC_TIMEOUT, &c->tc_timeout", '"tc_timeout", &c->tc_timeout'),
        "jobtap/dataout.c": tree["jobtap/dataout.c"]
        + "\nchar *dws_f58_plain (unsigned long long id)\n{\n    return 0;\n}\n",
        "../../job-manager/plugins/jobctx.c": tree["../../job-manager/plugins/jobctx.c"]
        + '\nstatic int f (void) { return !!getpwuid (0) && !strcmp ("x", "epilog-remove"); }\n',
    }
    # the lines of the real files move: compare without them
    assert [re.sub(r":\d+:", ":N:", b) for b in c_violations(planted)] == [
        "../../job-manager/plugins/jobctx.c: looks a user up (getpwuid): names are"
        " flux_dws.users",
        "../../job-manager/plugins/jobctx.c:N: a job-manager.dws.<method> 'epilog-remove'"
        " (spelled in wire/jobwire.h)",
        "engine/engine.c:N: the [rabbit] key 'tc_timeout' (rabbitconf.h's table: read it by"
        " its id)",
        "engine/verbs/progress.c:N: a job-manager.dws. topic 'job-manager.dws.resource-update'"
        " (spelled in wire/jobwire.h)",
        "engine/verbs/progress.c:N: the reference's memo or link name 'rabbit_workflow' (spelled in"
        " wire/jobkvs.h)",
        "engine/verbs/workflow.c:N: a data.dws. KVS key 'data.dws.teardown' (spelled in"
        " wire/jobkvs.h)",
        "engine/verbs/workflow.c:N: a Workflow state 'Setup' (spelled in engine/shapes/wfstate.c)",
        "jobtap/dataout.c: defines dws_f58_plain (util/f58.c's)",
    ]


def test_the_guard_finds_a_planted_python_alias() -> None:
    planted = {
        "cli/jobs.py": 'LINK = f"rabbit_{1}_timing"\n',
        "cli/wait.py": 'KEY = f"{1}.data.dws.teardown"\n',
        "service/core.py": 'import pwd\nNAME = pwd.getpwuid(0).pw_name\n',
        "harness/jobmanager.py": 'TOPIC = "job-manager.dws.dataout-end"\n',
        "jobview.py": 'GAP_WHY = {"Setup": "waiting for resources"}\n',
        "emulator/controllers.py": 'S = "Setup"\n',  # the emulator too: no exemption
        "users.py": 'import pwd\nE = pwd.getpwuid(0)\n',
        "jobrecord.py": '"""data.dws.job in a docstring"""\n',
    }
    assert py_violations(planted) == [
        "cli/jobs.py:1: the reference's memo or link name 'rabbit_'"
        " (jobrecord.MEMO_WORKFLOW, timing_link: from jobkvs.h)",
        "cli/jobs.py:1: the reference's memo or link name '_timing'"
        " (jobrecord.MEMO_WORKFLOW, timing_link: from jobkvs.h)",
        "cli/wait.py:1: a data.dws. KVS key '.data.dws.teardown'"
        " (jobrecord.py reads them from jobkvs.h)",
        "emulator/controllers.py:1: the Workflow state 'Setup' (wfstates.py's)",
        "harness/jobmanager.py:1: a job-manager.dws. topic or method 'job-manager.dws.dataout-end'"
        " (jobsm.py reads them from jobwire.h)",
        "jobview.py:1: the Workflow state 'Setup' (wfstates.py's)",
        "service/core.py:2: looks a user up (getpwuid): use flux_dws.users",
    ]


def test_the_names_read_through_cffi_are_the_references() -> None:
    """The topics and KVS keys are the reference's (the wire and the
    record stay byte for byte)."""
    from flux_dws import jobrecord
    assert jobsm.TOPIC_PREFIX == "job-manager.dws."
    assert METHODS == ("resource-update", "prolog-remove", "epilog-remove", "prestage-remove",
                       "dataout-begin", "dataout-end")
    assert jobsm.DEPENDENCY_METHOD == "dependency"
    assert (jobrecord.KVS_PREFIX, jobrecord.KVS_WORKFLOW, jobrecord.KVS_DATAOUT,
            jobrecord.KVS_TEARDOWN, jobrecord.KVS_DATAMOVEMENTS,
            jobrecord.KVS_CONTAINER_LOG) == (
        "data.dws.", "data.dws.workflow", "data.dws.dataout", "data.dws.teardown",
        "data.dws.datamovements", "data.dws.container_log")
    assert jobrecord.timing_key("PreRun") == "data.dws.timing.prerun"
    assert jobrecord.MEMO_WORKFLOW == "rabbit_workflow"
    assert jobrecord.timing_link("PreRun") == "rabbit_prerun_timing"
    assert jobrecord.timeline_key("DataOut") == "data.dws.timeline.dataout"
    assert (wfstates.PROPOSAL, wfstates.TEARDOWN) == ("Proposal", "Teardown")
