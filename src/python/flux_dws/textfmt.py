"""Short text for the commands' tables: durations and cut cells."""

from __future__ import annotations

ELLIPSIS = "..."


def truncate(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ending in '...' when cut."""
    if len(text) <= width:
        return text
    return text[:max(width - len(ELLIPSIS), 0)] + ELLIPSIS


def duration(seconds: float, tenths_below: float = 0.0) -> str:
    """A non-negative number of seconds, short: 45s, 5m12s, 2h03m, 3d04h;
    below ``tenths_below`` seconds with a tenth: 0.4s."""
    if tenths_below > 0 and seconds < tenths_below:
        return f"{max(seconds, 0):.1f}s"
    s = max(int(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"
