"""The relay of flux_dws.realstack.relay on the loopback: what gives the
API server to mpi-operator's network namespace and to the pods."""

from __future__ import annotations

import socket
import threading

from flux_dws.realstack.relay import Relay


def echo_server() -> tuple[socket.socket, threading.Thread]:
    srv = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                while data := conn.recv(65536):
                    conn.sendall(data.upper())

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, t


def test_connections_are_relayed_both_ways_and_closed_in_pairs() -> None:
    srv, _ = echo_server()
    listener = socket.create_server(("127.0.0.1", 0))
    relay = Relay([listener], srv.getsockname())
    relay.start()
    try:
        for n in range(3):
            with socket.create_connection(listener.getsockname(), timeout=10) as c:
                c.sendall(b"x" * 200_000 + b"end")
                got = b""
                while len(got) < 200_003:
                    chunk = c.recv(65536)
                    assert chunk, got[-10:]
                    got += chunk
                assert got == b"X" * 200_000 + b"END"
            assert relay.connections == n + 1
    finally:
        relay.stop()
        srv.close()


def test_a_target_that_is_not_there_closes_the_connection() -> None:
    gone = socket.create_server(("127.0.0.1", 0))
    target = gone.getsockname()
    gone.close()
    listener = socket.create_server(("127.0.0.1", 0))
    relay = Relay([listener], target)
    relay.start()
    try:
        with socket.create_connection(listener.getsockname(), timeout=10) as c:
            assert c.recv(10) == b""      # closed: nothing relayed
        assert relay.connections == 0
    finally:
        relay.stop()
    assert relay.listeners == []
