"""The emulator's single timer thread."""

from __future__ import annotations

import threading
import time

from flux_dws.emulator.timers import TimerThread


def test_calls_run_in_deadline_order():
    timers = TimerThread()
    done = threading.Event()
    order: list[str] = []
    timers.call_later(0.15, lambda: (order.append("late"), done.set()))
    timers.call_later(0.05, lambda: order.append("early"))
    timers.call_later(0.0, lambda: order.append("now"))
    assert done.wait(5)
    assert order == ["now", "early", "late"]
    timers.stop()


def test_many_waits_use_one_thread():
    before = threading.active_count()
    timers = TimerThread()
    for _ in range(1000):
        timers.call_later(60, lambda: None)
    assert threading.active_count() <= before + 1
    assert timers.pending() == 1000
    timers.stop()
    assert timers.pending() == 0


def test_a_failing_callback_does_not_stop_the_others():
    errors: list[BaseException] = []
    timers = TimerThread(on_error=errors.append)
    done = threading.Event()
    timers.call_later(0, lambda: 1 / 0)
    timers.call_later(0.01, done.set)
    assert done.wait(5)
    assert isinstance(errors[0], ZeroDivisionError)
    timers.stop()


def test_stop_drops_pending_and_ignores_new_calls():
    timers = TimerThread()
    fired: list[int] = []
    timers.call_later(0.05, lambda: fired.append(1))
    timers.stop()
    timers.call_later(0, lambda: fired.append(2))
    time.sleep(0.1)
    assert fired == []


def test_stop_before_any_call_starts_no_thread():
    timers = TimerThread()
    timers.stop()
    assert timers.pending() == 0
