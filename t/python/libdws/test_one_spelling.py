"""Each word flux-dws shares between C and Python is spelled once, in C,
and read by Python through the cffi extension: the Workflow states
(engine/wfstate.c), the exception-note prefixes (wire.h for the service,
jobwire.h for the jobtap plugin), the plugin's names and actions
(jobwire.h), the [rabbit] keys (rabbitconf.c).  The values are checked
here against the reference's words, and the sources for a second
spelling: a Python literal, or a C literal outside the one header."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from flux_dws import engine, jobsm, rabbitconf, wfstates
from flux_dws.dwsim import storage
from flux_dws.emulator import schema

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
        '"Proposal", "Setup", "DataIn"': LIBDWS / "engine" / "wfstate.c",
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
