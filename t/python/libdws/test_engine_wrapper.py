"""flux_dws.libdws.engine's own calls: Engine.reconfig, Engine.status and
f58, which no other test of t/python/libdws made (mutmut's run over the
wrapper found every mutant of them untested: doc/guide/development.rst,
"Mutation testing")."""

from __future__ import annotations

from typing import Any

import pytest

from flux_dws.libdws.engine import Engine, EngineError, f58

GUEST = 1000


def ask(engine: Engine, topic: str, userid: int) -> dict[str, Any]:
    (answer,) = engine.event({"type": "request", "topic": topic, "msgid": 1, "userid": userid,
                              "payload": {}})
    return answer


def test_reconfig_takes_the_new_owner() -> None:
    e = Engine({"owner": 0})
    assert ask(e, "dws.status", GUEST)["errstr"] == "Request requires owner credentials"
    e.reconfig({"owner": GUEST})
    assert ask(e, "dws.status", GUEST)["action"] == "respond"
    assert ask(e, "dws.status", 0)["action"] == "respond-error"


def test_a_refused_reconfig_names_the_key_and_keeps_the_old_one() -> None:
    e = Engine({"owner": GUEST})
    with pytest.raises(EngineError, match=r"^rabbit\.setup_timeout: must be a number"):
        e.reconfig({"owner": 0, "setup_timeout": "soon"})
    with pytest.raises(EngineError, match=r"^config: not JSON"):
        e.reconfig({"owner": 0, "x": object()})
    assert ask(e, "dws.status", GUEST)["action"] == "respond"


def test_status_is_what_dws_status_answers() -> None:
    e = Engine({"owner": 0})
    assert e.status()["events"] == 0
    answer = ask(e, "dws.status", 0)["payload"]
    now = e.status()
    assert now["events"] == 1  # the request was an event
    assert {k: v for k, v in answer.items() if k not in ("success", "workflows", "events")} \
        == {k: v for k, v in now.items() if k != "events"}
    assert now == {"synced": False, "jobs": [], "phases": {}, "rabbits": 0, "computes": 0,
                   "events": 1}


@pytest.mark.parametrize(("jobid", "text"), [
    (0, "f1"), (1, "f2"), (57, "fz"), (58, "f21"), ((1 << 64) - 1, "fjpXCZedGfVQ")])
def test_f58_is_flux_plain_form(jobid: int, text: str) -> None:
    assert f58(jobid) == text


@pytest.mark.parametrize("jobid", [-1, 1 << 64])
def test_f58_refuses_what_is_no_job_id(jobid: int) -> None:
    with pytest.raises(EngineError, match=f"^job id out of range: {jobid}$"):
        f58(jobid)
