"""The phase words ``flux dws jobs`` prints come from libdws' one list
(engine.h, jobview.c): each C name beside the word a user reads, the
engine's phases and a record reader's own alike."""

from __future__ import annotations

import re

from flux_dws.libdws.engine import PHASE_IDS, PHASES


def test_each_word_beside_its_c_name() -> None:
    assert PHASE_IDS["LIMITED"] == "waiting-limit"
    assert PHASE_IDS["RUNNING"] == "running"
    assert PHASE_IDS["TORN_DOWN"] == "torn-down"
    assert PHASE_IDS["INACTIVE"] == "inactive"
    assert PHASE_IDS["NO_WORKFLOW"] == "no Workflow yet"
    for cname, word in PHASE_IDS.items():
        assert re.fullmatch(r"[A-Z][A-Z_]*", cname), cname
        assert word != cname and not re.fullmatch(r"[A-Z_]+", word), (cname, word)
    assert list(PHASE_IDS.values()) == list(PHASES)
