"""What a benchmark claims, checked (issue 51: benchmarks that cannot fail).

A benchmark states its goals (the figures its docstring and its guide
promise, and the invariants its lines print: nothing stuck, nothing
leaked, what a flush must send).  ``Goals`` checks each one after the
figures are printed, prints it met or missed with what was seen, and
``status`` is the benchmark's exit status: 0 when every goal was met, 1
(naming each goal missed) when one was not; ``run.py`` then names the
benchmark.

A speed goal is the benchmark's, never the test suite's: a goal missed
on a loaded machine is a figure to look at, and this says which.
"""

from __future__ import annotations

import sys

__all__ = ["Goals"]


class Goals:
    """The goals of one benchmark run, in the order they were checked."""

    def __init__(self, bench: str) -> None:
        self.bench = bench
        self.met: list[str] = []
        self.missed: list[str] = []

    def check(self, goal: str, ok: bool, seen: str) -> bool:
        """One goal: ``goal`` says what must hold, ``seen`` what the run
        measured.  Prints it and returns ``ok``."""
        line = f"{goal} (seen: {seen})"
        (self.met if ok else self.missed).append(line)
        print(f"goal {'met' if ok else 'MISSED'}: {line}", flush=True)
        return ok

    def at_most(self, goal: str, value: float, limit: float, unit: str = "") -> bool:
        """``value`` no more than ``limit``."""
        return self.check(f"{goal} <= {limit:g}{unit}", value <= limit, f"{value:g}{unit}")

    def at_least(self, goal: str, value: float, limit: float, unit: str = "") -> bool:
        """``value`` no less than ``limit``."""
        return self.check(f"{goal} >= {limit:g}{unit}", value >= limit, f"{value:g}{unit}")

    def equal(self, goal: str, value: object, want: object) -> bool:
        """``value`` exactly ``want`` (counts, action tallies)."""
        return self.check(f"{goal} = {want}", value == want, str(value))

    def status(self) -> int:
        """The benchmark's exit status; says which goals were missed."""
        total = len(self.met) + len(self.missed)
        if not self.missed:
            print(f"{self.bench}: all {total} goals met", flush=True)
            return 0
        print(f"{self.bench}: failed: {len(self.missed)} of {total} goals missed:"
              + "".join(f"\n  {line}" for line in self.missed), file=sys.stderr, flush=True)
        return 1
