"""Every rule of the engine's decider earns its place (issue 76, item 3).

    python t/scripts/rule_coverage.py COUNTS.jsonl [--allow-unfired NAME ...]

COUNTS.jsonl holds JSON lines ``{"source": ..., "counts": {rule: n}}``
appended by the test runs where ``FLUX_DWS_RULE_COUNTS`` names it: the C
engine suite (src/common/libdws/test/engine.c) and pytest
(t/python/conftest.py), each summing every engine's counts
(``dws_engine_rule_fired``).  Prints how often each rule fired, in the
decider's order, and exits 1 when a rule of the engine's list
(flux_dws.libdws.engine.RULES) fired in none of them: a rule no input
reaches is removed, or gets the test that shows why it is there.  A
rule the counts do not know (the files are older than the build) fails
too.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def merge(lines: list[str]) -> tuple[Counter[str], list[str]]:
    """The summed counts and the sources they came from."""
    total: Counter[str] = Counter()
    sources = []
    for text in lines:
        if not text.strip():
            continue
        rec = json.loads(text)
        sources.append(str(rec.get("source", "?")))
        for name, n in rec.get("counts", {}).items():
            total[name] += int(n)
    return total, sources


def unfired(rules: tuple[str, ...], total: Counter[str], allowed: set[str]) -> list[str]:
    """The rules no run fired (or knew), but those allowed."""
    return [r for r in rules if total.get(r, 0) == 0 and r not in allowed]


def main(argv: list[str] | None = None) -> int:
    from flux_dws.libdws.engine import RULES

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("counts", type=Path)
    ap.add_argument("--allow-unfired", nargs="*", default=[])
    args = ap.parse_args(argv)
    if not args.counts.exists():
        print(f"rule coverage: {args.counts} does not exist: no test run counted", file=sys.stderr)
        return 1
    total, sources = merge(args.counts.read_text(encoding="utf-8").splitlines())
    print(f"rule coverage: {len(RULES)} rules, counted by {len(sources)} runs:")
    for s in sources:
        print(f"  {s}")
    width = max(len(r) for r in RULES)
    for r in RULES:
        print(f"  {r:<{width}}  {total.get(r, 0):>8}")
    dead = unfired(RULES, total, set(args.allow_unfired))
    if dead:
        print(f"rule coverage: {len(dead)} rules fired by no test: {', '.join(dead)}",
              file=sys.stderr)
        return 1
    waived = [r for r in RULES if total.get(r, 0) == 0]
    print(f"rule coverage: every rule fired ({sum(total.values())} steps in all)"
          + (f" but {len(waived)} allowed unfired: {', '.join(waived)}" if waived else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
