"""nnf-sos' NnfPortManager controller for the emulator: hands out the
ports container workflows ask for (the decisions are dwsim.ports), with
Cooldown after release."""

from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any

from flux_dws.apiserver.store import ApiError
from flux_dws.dwsim import ports as nnf_ports
from flux_dws.dwsim.gotime import parse_microtime
from flux_dws.emulator.driver import RESOURCE, DriverContext
from flux_dws.emulator.nnf_container import (
    PORT_MANAGER,
)


def _age(a: dict[str, Any], now: float) -> float:
    t = a.get("timeUnallocated")
    if not t:
        return 0.0
    return now - parse_microtime(t).timestamp()


class PortManager:
    """nnf-sos' NnfPortManager controller (the algorithm is dwsim.ports)."""

    def __init__(self, ctl: DriverContext) -> None:
        self.ctl = ctl
        self._lock = threading.Lock()
        self._due: float | None = None   # when the one pending timer fires

    def _later(self, seconds: float) -> None:
        due = time.monotonic() + seconds
        with self._lock:
            if self._due is not None and self._due <= due + 0.005:
                return
            self._due = due
        self.ctl.after(seconds, self._timer)

    def _timer(self) -> None:
        with self._lock:
            self._due = None
        self.reconcile()

    def reconcile(self) -> None:
        with self._lock:
            self._reconcile()

    def _reconcile(self) -> None:
        store = self.ctl.store
        try:
            pm = store.get(RESOURCE["portmanager"], *PORT_MANAGER)
        except ApiError:
            return
        spec_allocs = pm.get("spec", {}).get("allocations") or []
        status = pm.get("status") or {}
        old = list(status.get("allocations") or [])
        try:
            sysconf = store.get(RESOURCE["sysconfig"], "default", "default")
            ports = nnf_ports.expand_ports(sysconf.get("spec", {}).get("ports") or [])
            cooldown = int(sysconf.get("spec", {}).get("portsCooldownInSeconds", 60))
            state = "Ready"
        except (ApiError, nnf_ports.PortConfigError):
            ports, cooldown, state = [], 0, "SystemConfigurationNotFound"
        now = time.time()
        wanted = {(a.get("requester") or {}).get("uid"): a for a in spec_allocs}
        out: list[dict[str, Any]] = []
        for a in old:
            uid = (a.get("requester") or {}).get("uid")
            if uid in wanted or a.get("status") == "Cooldown":
                out.append(a)
            elif a.get("status") == "InUse":
                # released: the ports cool down before anyone else gets them
                out.append({**a, "status": "Cooldown",
                            "timeUnallocated": dt.datetime.fromtimestamp(
                                now, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
        out = [a for a in out if not (a.get("status") == "Cooldown" and _age(a, now) >= cooldown)]
        have = {(a.get("requester") or {}).get("uid") for a in out
                if a.get("status") != "Cooldown"}
        retry = False
        for uid, req in wanted.items():
            entry = next((a for a in out if (a.get("requester") or {}).get("uid") == uid
                          and a.get("status") != "Cooldown"), None)
            if entry is not None and entry.get("status") == "InUse":
                continue
            if state != "Ready":
                got = None
                new = {"requester": req.get("requester"), "ports": [],
                       "status": "InvalidConfiguration"}
            else:
                got = nnf_ports.allocate(ports, out, int(req.get("count", 0)))
                if got:
                    out = nnf_ports.reuse_free(out, got)
                new = {"requester": req.get("requester"), "ports": got or [],
                       "status": "InUse" if got is not None else "InsufficientResources"}
                retry = retry or got is None
            if uid in have:
                out = [new if ((a.get("requester") or {}).get("uid") == uid
                               and a.get("status") != "Cooldown") else a for a in out]
            else:
                out.append(new)
        new_status = {"status": state, "allocations": out}
        if new_status != status:
            store.patch(RESOURCE["portmanager"], *PORT_MANAGER, "merge", {"status": new_status},
                        "status")
        waits = [cooldown - _age(a, now) for a in out if a.get("status") == "Cooldown"]
        if retry:
            waits.append(cooldown + 1)
        if waits:
            self.ctl.after(0, lambda: self._later(max(0.01, min(waits))))
