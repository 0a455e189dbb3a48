"""nnf-sos: the NnfPortManager allocation algorithm (§5).

Ports come from SystemConfiguration ``spec.ports`` (ints and inclusive
"START-END" strings, in order).  A request takes the first ``count`` ports
not held by an allocation that is InUse or in Cooldown (the ports of a
Free entry are free: the request takes that entry over, see
``reuse_free``); otherwise it is InsufficientResources.  A released
allocation goes to Cooldown and disappears after ``portsCooldownInSeconds``
(at once when that is 0).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class PortConfigError(ValueError):
    """SystemConfiguration spec.ports holds something that is not a port."""


def expand_ports(ports: Iterable[Any]) -> list[int]:
    out: list[int] = []
    for p in ports:
        if isinstance(p, int) and not isinstance(p, bool):
            out.append(p)
        elif isinstance(p, str) and "-" in p:
            lo_s, hi_s = p.split("-", 1)
            try:
                lo, hi = int(lo_s), int(hi_s)
            except ValueError:
                raise PortConfigError(f"invalid port range '{p}'") from None
            if hi < lo:
                raise PortConfigError(f"invalid port range '{p}' (end before start)")
            out.extend(range(lo, hi + 1))
        elif isinstance(p, str) and p.isdigit():
            out.append(int(p))
        else:
            raise PortConfigError(f"invalid port '{p}'")
    return out


def allocate(ports: list[int], allocations: list[dict[str, Any]], count: int) -> list[int] | None:
    """Ports for a new request of ``count``, or None (InsufficientResources).

    ``allocations`` are the status entries: {ports: [...], status: ...}.
    """
    held = {p for a in allocations if a.get("status") in ("InUse", "Cooldown")
            for p in a.get("ports", [])}
    free = [p for p in ports if p not in held]
    if len(free) >= count:
        return free[:count]
    return None


def expire(allocations: list[dict[str, Any]], now: float, cooldown: int) -> list[dict[str, Any]]:
    """Drop Cooldown entries whose cooldown has passed (``timeUnallocated``
    as seconds since the epoch)."""
    return [a for a in allocations
            if not (a.get("status") == "Cooldown"
                    and now - float(a.get("timeUnallocated", 0)) >= cooldown)]


def reuse_free(allocations: list[dict[str, Any]], taken: list[int]) -> list[dict[str, Any]]:
    """Drop the Free entries whose ports a new allocation took over."""
    got = set(taken)
    return [a for a in allocations
            if not (a.get("status") == "Free" and got & set(a.get("ports") or []))]
