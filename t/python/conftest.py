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
