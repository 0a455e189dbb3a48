"""Every service test checks that a job looked at again with nothing new
takes no step (issue 64: the engine's decider chooses from a job's phase
and facts; a news says which jobs to look at, not what to do).

After each event an engine is fed, the last SystemConfiguration it took
is fed again, without its "now": the map is the same, and every job is
looked at (NEWS_LOOK).  Any action that brings is recorded and fails the
test at its end, with the event it followed.  (The same check over
recorded runs: ``t/bench/bench_engine_replay.py look``.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from flux_dws.libdws.engine import Engine


def _is_sysconf(event: dict[str, Any]) -> bool:
    return event.get("kind") == "SystemConfiguration" and event.get("type") in ("watch", "sync")


def _refused(actions: list[dict[str, Any]]) -> bool:
    """A map the engine refused (it logs why): not one to see again."""
    return any(str(a.get("message", "")).startswith("SystemConfiguration") for a in actions)


@pytest.fixture(autouse=True)
def every_job_looked_at_again(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    event = Engine.event
    acted: list[str] = []

    def looking(self: Engine, ev: dict[str, Any]) -> list[dict[str, Any]]:
        actions = event(self, ev)
        if _is_sysconf(ev) and not _refused(actions):
            self.__dict__["_look_again"] = {k: v for k, v in ev.items() if k != "now"}
        again_ev = self.__dict__.get("_look_again")
        if again_ev is not None:
            again = event(self, again_ev)
            if again:
                acted.append(f"after {str(ev)[:300]}: {again}")
        return actions

    monkeypatch.setattr(Engine, "event", looking)
    yield
    assert not acted, "a job looked at again acted:\n" + "\n".join(acted[:5])
