"""Go time formats DWS writes into Workflow status."""

from __future__ import annotations

import datetime as dt

import pytest

from flux_dws.dwsim.gotime import duration_string, elapsed, microtime, parse_microtime


@pytest.mark.parametrize(("ns", "text"), [
    (0, "0s"), (1, "1ns"), (1500, "1.5µs"), (850_123_000, "850.123ms"), (1_000_000, "1ms"),
    (2_345_678_000, "2.345678s"), (63_200_000_000, "1m3.2s"), (3_600_000_000_000, "1h0m0s"),
    (3_723_000_004_000, "1h2m3.000004s"), (-1_500_000_000, "-1.5s"), (60_000_000_000, "1m0s"),
])
def test_duration_string(ns, text):
    assert duration_string(ns) == text


def test_microtime_round_trip():
    t = dt.datetime(2026, 11, 22, 12, 0, 0, 123456, tzinfo=dt.timezone.utc)
    assert microtime(t) == "2026-11-22T12:00:00.123456Z"
    assert parse_microtime(microtime(t)) == t
    assert parse_microtime("2026-11-22T12:00:00Z") == t.replace(microsecond=0)


def test_elapsed_rounds_to_microseconds():
    a = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    assert elapsed(a, a + dt.timedelta(seconds=2, microseconds=345678)) == "2.345678s"
    assert elapsed(a, a + dt.timedelta(milliseconds=850, microseconds=123)) == "850.123ms"


@pytest.mark.parametrize(("text", "iso"), [
    ("2026-11-22T12:00:00Z", "2026-11-22T12:00:00+00:00"),
    ("2026-11-22T12:00:00.123456Z", "2026-11-22T12:00:00.123456+00:00"),
    ("2026-11-22T12:00:00.1Z", "2026-11-22T12:00:00.100000+00:00"),
    ("2026-11-22T12:00:00.123456789Z", "2026-11-22T12:00:00.123456+00:00"),
    ("2026-11-22t13:30:00+01:30", "2026-11-22T12:00:00+00:00"),
    ("2026-11-22 12:00:00z", "2026-11-22T12:00:00+00:00"),
])
def test_parse_rfc3339_forms(text, iso):
    assert parse_microtime(text).isoformat() == iso


@pytest.mark.parametrize("text", ["yesterday", "2026-11-22", "2026-11-22T12:00:00",
                                  "2026-13-01T00:00:00Z", "2026-11-22T12:00:00.Z", ""])
def test_parse_refuses_non_rfc3339(text):
    with pytest.raises(ValueError):
        parse_microtime(text)
