"""Shared fixtures for the PBS_cray_atom tests: an ATOM emulator on a short
UNIX socket path per test, and helpers to run the hook against it."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flux_dws.pbs import hook_dir
from flux_dws.pbs.atom_emulator import AtomEmulator
from flux_dws.pbs.harness import CONSTANTS, Result, run_hook

ME = pwd.getpwuid(os.getuid())
ERR, DBG, DBG2, DBG3, DBG4 = (CONSTANTS[k] for k in (
    "EVENT_ERROR", "EVENT_DEBUG", "EVENT_DEBUG2", "EVENT_DEBUG3", "EVENT_DEBUG4"))
HOOK_PATH = hook_dir() / "PBS_cray_atom.PY"
PBS = types.SimpleNamespace(**CONSTANTS)


def hook_namespace() -> dict[str, Any]:
    """The hook's functions, loaded without running its PBS entry block."""
    ns: dict[str, Any] = {"__name__": "PBS_cray_atom"}
    exec(compile(HOOK_PATH.read_text(), str(HOOK_PATH), "exec"), ns)
    return ns


@pytest.fixture
def sockdir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="atom", dir="/tmp"))  # sun_path is only 107 bytes
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def atom(sockdir) -> Iterator[AtomEmulator]:
    with AtomEmulator(str(sockdir / "atomd.sock")) as a:
        yield a


def cfg(atom_or_path, **extra) -> str:
    """Config text pointing at the emulator (or a path), with extra keys."""
    path = atom_or_path if isinstance(atom_or_path, str) else atom_or_path.socket_path
    return json.dumps({"unix_socket_file": path, **extra})


def begin(atom, **kw) -> Result:
    if "config" not in kw:
        kw["config"] = cfg(atom)
    return run_hook("execjob_begin", **kw)


def end(atom, **kw) -> Result:
    if "config" not in kw:
        kw["config"] = cfg(atom)
    return run_hook("execjob_end", **kw)


def reqs(atom) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in atom.requests]


def pytest_collection_modifyitems(items) -> None:
    """A per-test ceiling for this directory (delays here are at most 1 s)."""
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(15))
