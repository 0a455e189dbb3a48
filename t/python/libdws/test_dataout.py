"""libdws dataout.h through cffi: the dependents of early-released jobs."""

from __future__ import annotations

import pytest

from flux_dws.libdws.dataout import DataoutError, DataoutMachine


def test_hold_then_release() -> None:
    m = DataoutMachine()
    assert m.event({"type": "depend", "id": 20,
                    "targets": [{"scheme": "afterok", "id": 10}]}) == []
    (add,) = m.event({"type": "begin", "id": 10})
    assert add["action"] == "dependency-add" and add["id"] == 20
    assert add["name"].startswith("dws-dataout:f")
    assert m.tracked == 1 and m.pending == 1
    raise_, remove = m.event({"type": "end", "id": 10, "ok": False, "error": "no space"})
    assert raise_["action"] == "raise" and raise_["type"] == "dependency"
    assert raise_["note"].endswith("copy_out (DWS DataOut) failed: no space")
    assert remove == {**add, "action": "dependency-remove"}
    assert m.tracked == 0 and m.pending == 0


@pytest.mark.parametrize("event, why", [
    ({}, "a dataout event must be an object with a type"),
    ({"type": "begin"}, "id must be a job id (an integer >= 0)"),
    ({"type": "end", "id": 1, "ok": "yes"}, "ok must be true or false"),
    ({"type": "depend", "id": 1, "targets": [{"scheme": 3, "id": 1}]},
     'targets[0] must be {"scheme": S, "id": N}'),
    ({"type": "pending", "ids": [-1]}, "ids[0] must be a job id (an integer >= 0)"),
])
def test_bad_events_change_nothing(event: dict[str, object], why: str) -> None:
    m = DataoutMachine()
    m.event({"type": "begin", "id": 10})
    with pytest.raises(DataoutError, match=f"^{__import__('re').escape(why)}$"):
        m.event(event)
    assert m.pending == 1 and m.tracked == 0
