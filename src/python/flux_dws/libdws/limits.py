"""[rabbit.limits]: rabbit storage per user and per bank, decided by libdws
(engine/limits.h).

``decide`` asks the engine's pure function whether a job asking for
``want[0]`` GiB may go on while its user holds ``use`` (and, with a bank,
while the bank and the user within it hold ``bank_use`` and
``bank_user_use``), and how many of ``want`` (jobs of the same user and
bank waiting, in submission order) may go now.  The dws
engine applies it to its job table (engine/verbs/admit.c); this wrapper lets
tests and tools ask the same question.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flux_dws.libdws import _ffi


@dataclass(frozen=True)
class Decision:
    """verdict: "go", "wait" or "never" (for want[0]); why: the message of
    a wait or a refusal; admit: how many of want go now."""

    verdict: str
    why: str
    admit: int


def decide(limits: dict[str, Any] | None, uid: int, name: str | None,
           use_gib: int, use_jobs: int, want: list[int], bank: str | None = None,
           bank_use: tuple[int, int] = (0, 0),
           bank_user_use: tuple[int, int] = (0, 0)) -> Decision:
    """limits: the normalised table (``rabbitconf.parse(...)["limits"]``);
    the uses are (GiB, jobs)."""
    query = {"limits": limits, "uid": uid, "name": name, "bank": bank,
             "use": {"gib": use_gib, "jobs": use_jobs},
             "bank_use": {"gib": bank_use[0], "jobs": bank_use[1]},
             "bank_user_use": {"gib": bank_user_use[0], "jobs": bank_user_use[1]},
             "want": want}
    err = _ffi.new_error()
    p = _ffi.lib.dws_limits_decide_json(_ffi.to_c(json.dumps(query)), err)
    if p == _ffi.ffi.NULL:
        _ffi.raise_error(err)
    out: dict[str, Any] = _ffi.take_json(p, err)
    return Decision(str(out["verdict"]), str(out["why"]), int(out["admit"]))
