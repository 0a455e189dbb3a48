"""An ATOM emulator on a short UNIX socket path, per test."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from flux_dws.pbs.atom_emulator import AtomEmulator


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
    path = atom_or_path if isinstance(atom_or_path, str) else atom_or_path.socket_path
    return json.dumps({"unix_socket_file": path, **extra})
