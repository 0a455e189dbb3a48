"""Shared pytest configuration for flux-dws."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# A bounded, repeatable property-test budget for CI; raise locally with
# HYPOTHESIS_PROFILE=thorough.
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Rule coverage (t/scripts/rule_coverage.py): where FLUX_DWS_RULE_COUNTS
# names a file, every engine's rule counts are summed as it is destroyed
# and appended there as one JSON line when the run ends.
_RULE_COUNTS = os.environ.get("FLUX_DWS_RULE_COUNTS")


def pytest_sessionstart(session: object) -> None:
    if _RULE_COUNTS:
        from collections import Counter

        from flux_dws.libdws import engine

        engine.RULES_FIRED = Counter()


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    if not _RULE_COUNTS:
        return
    import gc
    import json
    import sys

    from flux_dws.libdws import engine

    gc.collect()  # the engines no test holds any more
    counts = engine.RULES_FIRED or {}
    line = {"source": "pytest " + " ".join(sys.argv[1:])[:200],
            "counts": {name: counts.get(name, 0) for name in engine.RULES}}
    with open(_RULE_COUNTS, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
