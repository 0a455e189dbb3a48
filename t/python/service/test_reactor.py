"""The harness reactor: messages run ahead of posted events (as the broker
dispatches requests between the service's slices of posted events)."""

from __future__ import annotations

import threading

from flux_dws.harness.reactor import Reactor


def test_a_message_runs_ahead_of_the_posted_backlog() -> None:
    r = Reactor().start()
    try:
        order: list[str] = []
        gate = threading.Event()
        done = threading.Event()
        r.post(lambda: gate.wait(10))  # the reactor is busy with this one
        for i in range(100):
            r.post(lambda i=i: order.append(f"event {i}"))
        r.post(done.set)
        r.post_message(lambda: order.append("message"))
        gate.set()
        assert done.wait(10)
        # after the callable that was running, before the 100 waiting
        assert order[0] == "message"
        assert order[1:] == [f"event {i}" for i in range(100)]
    finally:
        r.stop()


def test_messages_keep_their_own_order_and_wake_an_idle_reactor() -> None:
    r = Reactor().start()
    try:
        got: list[int] = []
        done = threading.Event()
        for i in range(50):
            r.post_message(lambda i=i: got.append(i))
        r.post_message(done.set)
        assert done.wait(10)
        assert got == list(range(50))
    finally:
        r.stop()
