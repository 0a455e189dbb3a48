"""``flux-dws emulator`` ends on SIGTERM whichever of its threads the
kernel gives the signal to.

Python runs a signal's handler in the main thread only; a signal the
kernel delivers to another thread (the HTTP server's, blocked in poll)
does not interrupt the main thread's wait.  A main thread that waited on
an Event alone never woke: t1000's ``stop_emulator`` hung for good.  The
test sends SIGTERM to each thread that is not the main one, with
tgkill(2), which is what the kernel may do with a process-wide kill."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

SYS_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


def _tgkill(pid: int, tid: int, sig: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), f"tgkill {pid} {tid}")


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], Path]:
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-m", "flux_dws.cli.main", "emulator", "--listen", "127.0.0.1:0",
         "--kubeconfig", str(kubeconfig), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while not (kubeconfig.exists() and kubeconfig.stat().st_size > 0):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the emulator wrote no kubeconfig in 30 s"
        time.sleep(0.05)
    return proc, kubeconfig


def _ended_by(proc: subprocess.Popen[str], send: Callable[[], None]) -> str:
    """Send the signal, and the emulator's output once it has ended (15 s
    at most: then it is killed and the test fails on its status)."""
    try:
        send()
        out, _ = proc.communicate(timeout=15)
        return out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _other_threads(pid: int) -> list[int]:
    return [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid]


@pytest.mark.skipif(SYS_TGKILL is None or not Path("/proc/self/task").is_dir(),
                    reason="needs Linux tgkill(2) and /proc")
@pytest.mark.parametrize("extra", [(), ("--state", "state.db")], ids=["memory", "state"])
def test_sigterm_to_a_server_thread_ends_the_emulator(tmp_path: Path,
                                                      extra: tuple[str, ...]) -> None:
    extra = tuple(str(tmp_path / a) if a.endswith(".db") else a for a in extra)
    proc, _ = _start(tmp_path, *extra)
    others = _other_threads(proc.pid)
    assert others, "the emulator runs its server in a thread of its own"
    out = _ended_by(proc, lambda: _tgkill(proc.pid, others[0], signal.SIGTERM))
    assert proc.returncode == 0, out
    assert "serving" in out


def test_sigint_ends_the_emulator(tmp_path: Path) -> None:
    proc, _ = _start(tmp_path)
    out = _ended_by(proc, lambda: proc.send_signal(signal.SIGINT))
    assert proc.returncode == 0, out
