"""Go's time formats as DWS writes them into Workflow status.

- MicroTime (metav1.MicroTime): RFC 3339 with exactly 6 fractional digits,
  UTC, e.g. ``2026-11-22T12:00:00.123456Z``.
- time.Duration.String() of a duration rounded to the microsecond, as in
  ``status.elapsedTimeLastState`` (``"2.345678s"``, ``"1m3.2s"``,
  ``"850.123ms"``, ``"0s"``).
"""

from __future__ import annotations

import datetime as dt
import re


def microtime(t: dt.datetime) -> str:
    t = t.astimezone(dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}Z"


RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d{1,9})?([Zz]|[+-]\d\d:\d\d)")


def parse_microtime(s: str) -> dt.datetime:
    """Parse a MicroTime or any RFC 3339 time (what a CRD's ``date-time``
    format admits), as an aware UTC datetime; ValueError otherwise."""
    if not isinstance(s, str) or not RFC3339.fullmatch(s):
        raise ValueError(f"not an RFC 3339 time: {s!r}")
    text = s.upper().replace(" ", "T").replace("Z", "+00:00")
    if "." in text:  # Python keeps microseconds: drop nanosecond digits
        head, _, rest = text.partition(".")
        digits = rest[:-6]
        text = f"{head}.{(digits + '000000')[:6]}{rest[-6:]}"
    return dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc)


def _frac(v: int, prec: int) -> tuple[str, int]:
    """Go's fmtFrac: the fraction of v (prec digits), trailing zeros dropped."""
    digits = ""
    printed = False
    for _ in range(prec):
        d = v % 10
        printed = printed or d != 0
        if printed:
            digits = str(d) + digits
        v //= 10
    return ("." + digits if printed else ""), v


def duration_string(nanoseconds: int) -> str:
    """Go's time.Duration.String()."""
    neg = nanoseconds < 0
    u = -nanoseconds if neg else nanoseconds
    if u < 1_000_000_000:
        if u == 0:
            return "0s"
        if u < 1_000:
            out = f"{u}ns"
        elif u < 1_000_000:
            frac, whole = _frac(u, 3)
            out = f"{whole}{frac}µs"
        else:
            frac, whole = _frac(u, 6)
            out = f"{whole}{frac}ms"
    else:
        frac, secs = _frac(u, 9)
        out = f"{secs % 60}{frac}s"
        mins = secs // 60
        if mins > 0:
            out = f"{mins % 60}m" + out
            hours = mins // 60
            if hours > 0:
                out = f"{hours}h" + out
    return "-" + out if neg else out


def elapsed(start: dt.datetime, end: dt.datetime) -> str:
    """readyChange - desiredStateChange rounded to µs, as DWS formats it."""
    delta = end - start
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    return duration_string(micros * 1000)
