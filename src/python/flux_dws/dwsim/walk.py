"""nnf-sos' walk over one state's drivers, as a pure decision.

nnf-sos runs every driver's start, then every finish, in directive order,
and stops at the first that fails.  Where the waiting is in the finish
(Proposal, Setup, DataIn, PreRun, DataOut) a driver still waiting does not
hold back the later ones' work (their mounts, jobs, movements start at
once), but none of them completes before the ones ahead of it.  In PostRun
and Teardown the start itself waits (unmounts, shutdowns, deletions), so a
waiting driver holds the later ones back.

The emulator's controllers run each pending driver in order, turn what
happened into an ``Outcome`` and ``feed`` it to a ``Walk``, which says how
the driver's entry in ``status.drivers`` reads now, whether to go on to the
next driver, and when to look at the workflow again (``requeue``).
Injected faults become outcomes too (``fault_outcome``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flux_dws.dwsim import resource_error as rerr
from flux_dws.libdws.wfstates import POST_RUN, TEARDOWN

WAITS_IN_START = (POST_RUN, TEARDOWN)


@dataclass(frozen=True)
class Outcome:
    """What one driver's step did.

    ``done``: finished; ``wait``: under way (``reason`` is nnf-sos' word for
    it, ``after`` when to look again if no child changes first); ``error``:
    failed with ``error``; ``bug``: failed in a way nnf-sos would not (an
    emulator bug, odd input: shown as a Major Internal error, retried after
    a longer back-off); ``stall``: an injected fault that never lets it
    finish; ``delay``: an injected delay that has ``after`` seconds to go.
    """

    kind: str
    reason: str = ""
    after: float | None = None
    error: rerr.ResourceError | None = None


DONE = Outcome("done")


def fault_outcome(severity: str, seconds: float, waited: float, message: str,
                  type_: str) -> Outcome | None:
    """An injected driver fault's outcome, or None once a delay has passed
    (the driver then runs as usual)."""
    if severity == "stall":
        return Outcome("stall")
    if severity == "delay":
        return Outcome("delay", after=seconds - waited) if waited < seconds else None
    return Outcome("error", error=rerr.ResourceError(message, type=type_, severity=severity))


@dataclass
class Walk:
    """One pass over a state's pending nnf drivers (see the module doc)."""

    state: str
    now: str                        # MicroTime written as completeTime
    retry_seconds: float = 1.0      # back-off of a Minor or Major error
    bug_retry_seconds: float = 5.0  # back-off after an emulator bug
    requeue: list[float] = field(default_factory=list)
    blocked: bool = False           # a driver ahead is still waiting

    @property
    def waits_in_start(self) -> bool:
        return self.state in WAITS_IN_START

    def feed(self, driver: dict[str, Any], outcome: Outcome) -> tuple[dict[str, Any], bool]:
        """The driver entry after ``outcome``, and whether the walk goes on."""
        d = dict(driver)
        if outcome.kind in ("wait", "stall", "delay"):
            if outcome.kind == "wait" and (d.get("status") != "Running"
                                           or d.get("message") != outcome.reason):
                d.update(status="Running", message=outcome.reason, error="")
            if outcome.after is not None:
                self.requeue.append(outcome.after)
            if self.waits_in_start:
                return d, False
            self.blocked = True
            return d, True
        if outcome.kind in ("error", "bug"):
            assert outcome.error is not None
            d = rerr.apply_to_driver(d, outcome.error)
            if outcome.kind == "bug":
                self.requeue.append(max(self.retry_seconds, self.bug_retry_seconds))
            elif outcome.error.severity != "Fatal":
                self.requeue.append(self.retry_seconds)
            return d, False  # nnf-sos stops a state's drivers at the first error
        if outcome.kind != "done":
            raise ValueError(f"unknown outcome {outcome.kind!r}")
        if self.blocked:  # done, but its finish comes after those ahead of it
            if d.get("status") != "Running" or d.get("message") or d.get("error"):
                d.update(status="Running", message="", error="")
            return d, True
        d.update(status="Completed", completed=True, message="", error="", completeTime=self.now)
        return d, True
