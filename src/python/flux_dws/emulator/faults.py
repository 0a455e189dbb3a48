"""Injected faults of the emulated DWS/nnf-sos (``flux-dws fault``).

``Fault`` is one rule (which driver, ClientMount, data movement or
container fails, stalls or is delayed); ``Faults`` is the thread-safe set
the controllers and the nnf drivers take matching faults from.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from flux_dws.libdws.wfstates import SETUP

__all__ = ["FAULT_KINDS", "SEVERITIES", "Fault", "Faults"]

FAULT_KINDS = ("driver", "clientmount", "datamovement", "container", "allocation")
SEVERITIES = ("Minor", "Major", "Fatal", "stall", "delay", "hold")


@dataclass
class Fault:
    """One injected fault.

    kind ``driver``: the nnf driver of ``state`` (and directive ``index``)
    fails with ``severity`` (Minor, Major, Fatal), never completes
    (``stall``) or completes ``seconds`` after the state was asked for
    (``delay``); a storage directive's Setup that stalls or is delayed has
    made its NnfStorage (nnf-sos' start), whose allocations are not ready.
    Kind ``allocation``: the allocations on ``rabbit`` of matching
    workflows' storage are not ready in Setup: never (``stall``) or until
    ``seconds`` after Setup was asked for (``delay``).  Kind
    ``clientmount``: the ClientMounts of ``compute`` fail with ``message``
    (any severity but stall) or stay pending (``stall``), when mounting
    (``state`` PreRun), unmounting (PostRun) or both ("*").
    Kind ``datamovement``: the NnfDataMovements of directive ``index`` end
    Failed with ``message``, stay Running (``stall``: with ``seconds``, their
    progress moves for that long first, then stops) or take ``seconds``
    (``delay``), or move until released (``hold``: their progress moves as
    over ``seconds``, 60 when not given, never past 99 %, and they finish
    when ``flux-dws fault release`` says so: a test's copy under way for as
    long as its assertions take, however loaded the machine).  Kind
    ``container``: at ``state`` PreRun the workflow's
    containers never start (``stall``) or fail at once (other severities);
    at PostRun they ignore shutdown (``stall``: the deadline ends them) or
    fail.  ``workflow`` "*" matches every workflow; ``once`` faults are used
    up by their first match.
    """

    workflow: str = "*"
    state: str = "*"
    index: int | None = None
    severity: str = "Fatal"
    message: str = "injected fault"
    type: str = "Internal"
    once: bool = False
    kind: str = "driver"
    compute: str | None = None
    seconds: float = 0.0
    rabbit: str | None = None

    def __post_init__(self) -> None:
        for name in ("workflow", "state", "message", "type", "kind", "severity"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string")
        if self.index is not None and (isinstance(self.index, bool)
                                       or not isinstance(self.index, int) or self.index < 0):
            raise ValueError("index must be a directive index (an integer >= 0)")
        if self.compute is not None and not isinstance(self.compute, str):
            raise ValueError("compute must be a string")
        if self.rabbit is not None and not isinstance(self.rabbit, str):
            raise ValueError("rabbit must be a string")
        if isinstance(self.seconds, bool) or not isinstance(self.seconds, (int, float)):
            raise ValueError("seconds must be a number")
        if not isinstance(self.once, bool):
            raise ValueError("once must be true or false")
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"kind must be one of {', '.join(FAULT_KINDS)}, not {self.kind!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be Minor, Major, Fatal, stall, delay or hold,"
                             f" not {self.severity!r}")
        if self.type not in ("Internal", "User", "WLM"):
            raise ValueError(f"type must be Internal, User or WLM, not {self.type!r}")
        if self.kind == "clientmount" and not self.compute:
            raise ValueError("a clientmount fault needs a compute")
        if self.kind == "allocation" and not self.rabbit:
            raise ValueError("an allocation fault needs a rabbit")
        if self.kind == "allocation" and self.severity not in ("stall", "delay"):
            raise ValueError(f"an allocation fault is a stall or a delay, not"
                             f" {self.severity!r}")
        if self.severity == "hold" and self.kind != "datamovement":
            raise ValueError(f"a hold is a datamovement fault, not a {self.kind} fault")
        if self.severity == "hold" and not (0 <= self.seconds <= 86400):
            raise ValueError("a hold's seconds (how its progress moves) are between 0 and"
                             " 86400")
        if self.severity == "delay" and not (0 < self.seconds <= 86400):
            raise ValueError("a delay fault needs seconds between 0 and 86400")

    def matches(self, kind: str, wf: str, state: str, index: int | None,
                compute: str | None = None, rabbit: str | None = None) -> bool:
        return (self.kind == kind and self.workflow in ("*", wf)
                and self.state in ("*", state) and self.index in (None, index)
                and (kind != "clientmount" or self.compute == compute)
                and (kind != "allocation" or self.rabbit == rabbit))


@dataclass
class Faults:
    items: list[Fault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, fault: Fault) -> None:
        with self.lock:
            self.items.append(fault)

    def clear(self, state: str | None = None, severity: str | None = None) -> None:
        """Drop every fault, or those of one Workflow state and/or severity."""
        with self.lock:
            self.items[:] = [f for f in self.items
                             if (state is not None and f.state != state)
                             or (severity is not None and f.severity != severity)]

    def _take(self, kind: str, wf: str, state: str, index: int | None,
              compute: str | None = None, waited: float | None = None,
              rabbit: str | None = None) -> Fault | None:
        with self.lock:
            for f in self.items:
                if f.matches(kind, wf, state, index, compute, rabbit):
                    # a ``once`` delay is used up when it has delayed, not when seen
                    pending = f.severity == "delay" and waited is not None \
                        and waited < f.seconds
                    if f.once and not pending:
                        self.items.remove(f)
                    return f
        return None

    def take(self, wf: str, state: str, index: int, waited: float | None = None) -> Fault | None:
        """A driver fault for this workflow, state and directive (``waited``:
        seconds since the state was asked for, for delay faults)."""
        return self._take("driver", wf, state, index, waited=waited)

    def driver_error_set(self, wf: str, state: str, index: int) -> bool:
        """Whether a driver fault that fails the driver (not a stall or a
        delay, which hold only its finish) is set for this workflow, state
        and directive; nothing is used up."""
        with self.lock:
            return any(f.matches("driver", wf, state, index, None, None)
                       and f.severity not in ("stall", "delay") for f in self.items)

    def take_allocation(self, wf: str, index: int, rabbit: str,
                        waited: float) -> Fault | None:
        """An allocation fault for this workflow's directive on ``rabbit``
        (Setup; ``waited``: seconds since Setup was asked for)."""
        return self._take("allocation", wf, SETUP, index, waited=waited, rabbit=rabbit)

    def take_mount(self, wf: str, compute: str, state: str) -> Fault | None:
        """A ClientMount fault for ``compute``: ``state`` is PreRun for a
        mount, PostRun for an unmount (a fault for "*" takes both)."""
        return self._take("clientmount", wf, state, None, compute)

    def take_dm(self, wf: str, state: str, index: int) -> Fault | None:
        return self._take("datamovement", wf, state, index)

    def take_container(self, wf: str, state: str) -> Fault | None:
        return self._take("container", wf, state, None)
