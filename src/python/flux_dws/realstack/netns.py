"""A network namespace of its own for a process that binds what it likes,
with the control plane's port of the host's loopback in it.

    ns = PrivateNet(workdir / "mpi-operator.netns", api_port)
    ns.start()                     # the namespace, its loopback, the relay
    argv = ns.enter(["mpi-operator", ...])
    ...
    ns.stop()

mpi-operator serves its health check on port 8080 of every address, a
port no flag moves (its app.healthCheckPort): on the host it would take
a port the host's other programs may want, and die when one has it.  In
a namespace of its own that port is nobody else's.  What it must reach,
the API server on ``127.0.0.1:<port>`` of the host, is there too: a
listening socket made inside the namespace (this thread enters it for
the one call, ``setns``, and comes back), whose connections a thread here
relays to the same address on the host.  The namespace is kept by a bind
mount on a file of the workdir (the host guard unmounts it if the test
dies); ``stop`` unmounts it.
"""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
from pathlib import Path

from flux_dws.realstack.relay import Relay

__all__ = ["PrivateNet", "PrivateNetError"]

CLONE_NEWNET = 0x40000000


class PrivateNetError(RuntimeError):
    """The namespace could not be made (the message says why)."""


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


def listen_in(netns: Path, port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port`` of the namespace ``netns``."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(netns, os.O_RDONLY)
    try:
        _setns(target)
        try:
            return socket.create_server(("127.0.0.1", port))
        finally:
            _setns(own)
    finally:
        os.close(target)
        os.close(own)


class PrivateNet:
    """The namespace kept at ``path`` and the relay of ``port`` into it."""

    def __init__(self, path: Path, port: int) -> None:
        self.path = path
        self.port = port
        self.relay: Relay | None = None
        self._mounted = False

    def enter(self, argv: list[str]) -> list[str]:
        return ["nsenter", f"--net={self.path}", "--", *argv]

    def start(self) -> None:
        self.path.touch()
        r = subprocess.run(["unshare", f"--net={self.path}", "ip", "link", "set", "lo", "up"],
                           capture_output=True, text=True, timeout=30, check=False)
        if r.returncode:
            raise PrivateNetError(f"a network namespace at {self.path}: {r.stderr.strip()}")
        self._mounted = True
        self.relay = Relay([listen_in(self.path, self.port)], ("127.0.0.1", self.port))
        self.relay.start()

    def stop(self) -> None:
        relay, self.relay = self.relay, None
        if relay is not None:
            relay.stop()
        if self._mounted:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, timeout=30,
                           check=False)
            self._mounted = False
