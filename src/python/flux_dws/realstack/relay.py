"""TCP connections accepted on some sockets, each relayed to one address.

    relay = Relay([listener], ("127.0.0.1", api_port))
    relay.start()       # a thread of its own
    relay.stop()        # the listeners and every connection closed

What gives the API server, which listens on the host's loopback only, to
a process of another network namespace (flux_dws.realstack.netns) and to
the pods, at the address a cluster gives it (flux_dws.realstack.podnet).
One thread, one ``select`` over the listeners and both ends of every
connection; an end that closes or fails closes its pair.
"""

from __future__ import annotations

import select
import socket
import threading

__all__ = ["Relay"]

CHUNK = 65536
#: a connection to the target made, or a send to either end done, or given up
CONNECT_TIMEOUT = 10.0


class Relay:
    def __init__(self, listeners: list[socket.socket], target: tuple[str, int]) -> None:
        self.listeners = list(listeners)
        self.target = target
        self.connections = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="flux-dws-relay", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for s in self.listeners:
            s.close()
        self.listeners = []

    def _run(self) -> None:
        peer: dict[socket.socket, socket.socket] = {}

        def close(s: socket.socket) -> None:
            other = peer.pop(s, None)
            s.close()
            if other is not None:
                peer.pop(other, None)
                other.close()

        while not self._stop.is_set():
            ready, _, _ = select.select([*self.listeners, *peer], [], [], 0.5)
            for s in ready:
                if s in self.listeners:
                    try:
                        inside, _ = s.accept()
                    except OSError:
                        continue
                    # a peer that stops reading for that long loses its
                    # connection, not the relay (one thread serves them all)
                    inside.settimeout(CONNECT_TIMEOUT)
                    try:
                        outside = socket.create_connection(self.target, timeout=CONNECT_TIMEOUT)
                    except OSError:
                        inside.close()
                        continue
                    self.connections += 1
                    peer[inside], peer[outside] = outside, inside
                    continue
                if s not in peer:
                    continue
                try:
                    data = s.recv(CHUNK)
                    if data:
                        peer[s].sendall(data)
                        continue
                except OSError:
                    pass
                close(s)
        for s in list(peer):
            if s in peer:
                close(s)
