"""Short text for the commands' tables: durations, sizes, cut cells, job ids."""

from __future__ import annotations

import locale
import os
import sys

ELLIPSIS = "..."
#: f58's prefix in a UTF-8 locale (U+0192) and its ASCII alternative
F58_PREFIX = "\u0192"
F58_ASCII_PREFIX = "f"


def python_chose_utf8() -> bool:
    """Whether Python itself switched a C/POSIX locale to UTF-8 at start
    (PEP 538 coercion and PEP 540's UTF-8 mode, which it turns on by itself
    only in that locale): the user's locale is then not UTF-8, whatever
    LC_CTYPE says now."""
    return (bool(sys.flags.utf8_mode) and "PYTHONUTF8" not in os.environ
            and "utf8" not in sys._xoptions)


def f58_prefix() -> str:
    """The prefix flux-core gives an f58 job id it prints (``flux job id
    --to=f58``, ``flux submit``): "ƒ" when the locale is UTF-8 and
    FLUX_F58_FORCE_ASCII is not set (to any value), else "f" --
    is_utf8_locale() of flux-core's libutil/fluid.c.  The locale is the
    user's, as flux(1) sees it: not the C.UTF-8 Python puts in place of
    "C" (python_chose_utf8).  The plain form, always "f", is for names and
    wire values (Workflow names and labels, ``dws-dataout:`` dependencies,
    JSON)."""
    if "FLUX_F58_FORCE_ASCII" in os.environ or python_chose_utf8():
        return F58_ASCII_PREFIX
    try:
        codeset = locale.nl_langinfo(locale.CODESET)
    except (AttributeError, ValueError):  # no nl_langinfo on this platform
        return F58_ASCII_PREFIX
    return F58_PREFIX if codeset == "UTF-8" else F58_ASCII_PREFIX


def f58(jobid: int) -> str:
    """A job id as flux-core prints it for people (f58_prefix() + base58)."""
    from flux_dws.libdws.engine import f58 as plain

    return f58_prefix() + plain(jobid)[len(F58_ASCII_PREFIX):]


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


SIZE_UNITS = ("K", "M", "G", "T", "P", "E")


def size(nbytes: int) -> str:
    """A non-negative number of bytes, short, in powers of 1024 as df -h
    writes them: 512B, 1.5K, 200.0G, 36.0T (one decimal from K up)."""
    n = max(int(nbytes), 0)
    if n < 1024:
        return f"{n}B"
    value, unit = float(n), "B"
    for unit in SIZE_UNITS:
        value /= 1024
        if value < 1024 or unit == SIZE_UNITS[-1]:
            break
    return f"{value:.1f}{unit}"
