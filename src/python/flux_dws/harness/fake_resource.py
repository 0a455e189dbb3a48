"""The harness' flux-core resource module and Fluxion, as far as rabbit
health uses them.

``FakeResources`` keeps the instance's hosts (rank order), which are
online, and the drains, with flux-core's rules: ``resource.drain`` fails
on a drained target unless mode is ``update`` (keep its reason) or
``overwrite``; ``resource.undrain`` fails unless every target is drained.
Its journal is streamed as flux-core does: the backlog (``restart``,
drains, ``resource-define`` with R in its own answer), an empty answer,
then each new event.

``FakeFluxion`` holds the graph dws2jgf would write for the system (a
chassis per rabbit with ``ssds_per_rabbit`` ssd vertices, down at start,
and the computes under it) and answers ``set_status``, ``set_property``,
``remove_property`` and ``stats-get`` with Fluxion's checks (an unknown
path fails the request).  ``restart()`` reloads it (everything back as in
the JGF) and tells the watchers, as the service's uptime poll would.
"""

from __future__ import annotations

import errno
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from flux_dws.dwsim.systems import System
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.idset import IDset

Answer = Callable[[bool, int, str, Any], None]
CLUSTER = "harness"


class FakeResources:
    def __init__(self, hosts: list[str]) -> None:
        self.hosts = list(hosts)
        self.online = set(range(len(hosts)))
        self.drains: dict[int, str] = {}
        self.R: dict[str, Any] = {}
        self._events: list[dict[str, Any]] = [
            self._event("restart", ranks=str(IDset(range(len(hosts)))),
                        online=str(IDset(self.online)), nodelist=str(Hostlist(hosts)))]
        self._consumers: list[Callable[[dict[str, Any]], None]] = []

    @staticmethod
    def _event(name: str, **context: Any) -> dict[str, Any]:
        return {"timestamp": time.time(), "name": name, "context": context}

    def drained(self) -> dict[str, str]:
        return {self.hosts[r]: reason for r, reason in self.drains.items()}

    def journal(self, consumer: Callable[[dict[str, Any]], None]) -> None:
        """Stream the journal to ``consumer`` (answers as resource.journal's)."""
        consumer({"events": list(self._events)})
        consumer({"events": [self._event("resource-define", method="configuration")],
                  "R": self.R})
        consumer({"events": []})
        self._consumers.append(consumer)

    def _post(self, event: dict[str, Any]) -> None:
        self._events.append(event)
        for c in list(self._consumers):
            c({"events": [event]})

    def _ranks(self, targets: str) -> list[int]:
        try:
            return sorted(IDset(targets))
        except ValueError:
            pass
        ranks = []
        for host in Hostlist(targets):
            if host not in self.hosts:
                raise KeyError(host)
            ranks.append(self.hosts.index(host))
        return ranks

    def rpc(self, topic: str, payload: Any, answer: Answer) -> None:
        method = topic.split(".", 1)[1]
        try:
            ranks = self._ranks(payload["targets"])
        except (KeyError, TypeError, ValueError) as exc:
            answer(False, errno.EINVAL, f"invalid targets: {exc}", None)
            return
        if method == "drain":
            mode = payload.get("mode")
            busy = [r for r in ranks if r in self.drains]
            if busy and mode not in ("update", "overwrite"):
                answer(False, errno.EEXIST, f"rank {busy[0]} already drained", None)
                return
            reason = payload.get("reason", "")
            for r in ranks:
                if r not in self.drains or mode == "overwrite":
                    self.drains[r] = reason
            self._post(self._event("drain", idset=str(IDset(ranks)),
                                   nodelist=str(Hostlist([self.hosts[r] for r in ranks])),
                                   reason=reason, overwrite=int(mode == "overwrite")))
        elif method == "undrain":
            idle = [r for r in ranks if r not in self.drains]
            if idle:
                answer(False, errno.EINVAL, f"rank {idle[0]} not drained", None)
                return
            for r in ranks:
                del self.drains[r]
            self._post(self._event("undrain", idset=str(IDset(ranks)),
                                   nodelist=str(Hostlist([self.hosts[r] for r in ranks]))))
        else:
            answer(False, errno.ENOSYS, f"No service matching {topic} is registered", None)
            return
        answer(True, 0, "", {})

    def admin_drain(self, hosts: str, reason: str) -> None:
        """``flux resource drain`` by an admin."""
        self.rpc("resource.drain", {"targets": hosts, "reason": reason},
                 lambda ok, e, s, p: None)

    def set_online(self, hosts: str, online: bool) -> None:
        """Brokers lost or back."""
        ranks = {self.hosts.index(h) for h in Hostlist(hosts)}
        if online:
            self.online |= ranks
        else:
            self.online -= ranks
        self._post(self._event("online" if online else "offline", idset=str(IDset(ranks))))


class FakeFluxion:
    def __init__(self, system: System, ssds_per_rabbit: int = 2, jgf: bool = True) -> None:
        """jgf=False: Fluxion runs on R without a scheduling graph (no ssd
        vertices; nodes at /cluster0/<host>), as with --disable-fluxion."""
        self.ssds: dict[str, list[str]] = {}
        self.node_paths: dict[str, str] = {}
        if not jgf:
            self.node_paths = {c: f"/cluster0/{c}" for c in system.computes}
            self.graph: dict[str, Any] = {}
            self._init_state()
            return
        vertices: list[dict[str, Any]] = [
            {"id": "0", "metadata": {"type": "cluster", "name": CLUSTER,
                                     "paths": {"containment": f"/{CLUSTER}"}}}]
        for i, rabbit in enumerate(system.rabbits):
            chassis = f"/{CLUSTER}/chassis{i}"
            vertices.append({"id": str(len(vertices)), "metadata": {
                "type": "chassis", "properties": {"rabbit": rabbit.name},
                "paths": {"containment": chassis}}})
            self.ssds[rabbit.name] = [f"{chassis}/ssd{k}" for k in range(ssds_per_rabbit)]
            # GiB per vertex, as flux dws2jgf cuts a rabbit's capacity
            size = (rabbit.capacity >> 30) // max(ssds_per_rabbit, 1)
            for path in self.ssds[rabbit.name]:
                meta: dict[str, Any] = {"type": "ssd", "paths": {"containment": path}}
                if size > 0:
                    meta["size"] = size
                vertices.append({"id": str(len(vertices)), "metadata": meta})
            for host, _ in rabbit.computes:
                self.node_paths[host] = f"{chassis}/{host}"
                vertices.append({"id": str(len(vertices)), "metadata": {
                    "type": "node", "name": host,
                    "paths": {"containment": self.node_paths[host]}}})
        self.graph = {"graph": {"nodes": vertices, "edges": []}}
        self._init_state()

    def _init_state(self) -> None:
        self.calls: Counter[str] = Counter()
        self.away = False
        #: ssd vertices a job holds (what find "sched-now=allocated" sees)
        self.allocated: set[str] = set()
        #: how many more finds of "sched-now=allocated ..." fail (EIO)
        self.allocated_find_fails = 0
        self._watchers: list[Callable[[], None]] = []
        self._reload()

    def _reload(self) -> None:
        self.status = {p: "down" for paths in self.ssds.values() for p in paths}
        self.properties: dict[str, dict[str, str]] = {p: {} for p in self.node_paths.values()}
        self.loaded = time.monotonic()

    def restart(self) -> None:
        """The scheduler reloaded: statuses and properties as in the JGF."""
        self._reload()
        for w in list(self._watchers):
            w()

    def watch_restarts(self, fn: Callable[[], None]) -> None:
        self._watchers.append(fn)

    def rabbit_up(self, rabbit: str) -> bool:
        return all(self.status[p] == "up" for p in self.ssds.get(rabbit, []))

    def hosts_with(self, prop: str) -> set[str]:
        return {h for h, p in self.node_paths.items() if prop in self.properties[p]}

    def _paths(self, value: Any) -> list[str]:
        paths = [value] if isinstance(value, str) else value
        if not isinstance(paths, list) or not paths:
            raise ValueError("resource_path must be a string or a non-empty array of strings")
        for p in paths:
            if p not in self.properties:
                raise KeyError(f"Couldn't find '{p}' in resource graph")
        return paths

    def _find(self, payload: Any) -> dict[str, Any] | None:
        """find status=down (or "sched-now=allocated and status=down": of
        those, the ones in ``allocated``) in JGF, as Fluxion answers it:
        the ssd vertices and their ancestors, or null when nothing matches."""
        criteria = payload.get("criteria")
        if criteria not in ("status=down", "sched-now=allocated and status=down"):
            raise ValueError(f"find: invalid criteria: {criteria}")
        if payload.get("format", "rv1_nosched") != "jgf":
            raise ValueError("the harness's Fluxion answers find only in jgf")
        vertices: list[dict[str, Any]] = []
        down = sorted(p for p, st in self.status.items() if st == "down")
        if criteria != "status=down":
            down = [p for p in down if p in self.allocated]
        for path in down:
            chassis = path.rsplit("/", 1)[0]
            for anc, vtype in ((f"/{CLUSTER}", "cluster"), (chassis, "chassis")):
                if not any(v["metadata"]["paths"]["containment"] == anc for v in vertices):
                    vertices.append({"id": str(len(vertices)), "metadata": {
                        "type": vtype, "paths": {"containment": anc}}})
            vertices.append({"id": str(len(vertices)), "metadata": {
                "type": "ssd", "paths": {"containment": path}}})
        return {"graph": {"nodes": vertices, "edges": []}} if vertices else None

    def rpc(self, topic: str, payload: Any, answer: Answer) -> None:
        method = topic.rsplit(".", 1)[1]
        if self.away:
            answer(False, errno.ENOSYS, f"No service matching {topic} is registered", None)
            return
        self.calls[method] += 1
        try:
            if method == "set_status":
                path, status = payload["resource_path"], payload["status"]
                if path not in self.status:
                    raise ValueError(f"could not find path '{path}' in resource graph")
                if status not in ("up", "down"):
                    raise ValueError(f"unrecognized status '{status}'")
                self.status[path] = status
            elif method == "set_property":
                key, _, value = payload["sp_keyval"].partition("=")
                for p in self._paths(payload["sp_resource_path"]):
                    self.properties[p][key] = value
            elif method == "remove_property":
                for p in self._paths(payload["resource_path"]):
                    self.properties[p].pop(payload["key"], None)
            elif method == "find":
                if self.allocated_find_fails > 0 and "sched-now" in str(payload.get("criteria")):
                    self.allocated_find_fails -= 1
                    answer(False, errno.EIO, "find: injected failure", None)
                    return
                answer(True, 0, "", {"R": self._find(payload)})
                return
            elif method == "stats-get":
                answer(True, 0, "", {"graph-uptime": int(time.monotonic() - self.loaded)})
                return
            else:
                answer(False, errno.ENOSYS, f"No service matching {topic} is registered", None)
                return
        except KeyError as exc:
            answer(False, errno.ENOENT, str(exc.args[0]), None)
            return
        except (ValueError, TypeError) as exc:
            answer(False, errno.EINVAL, str(exc), None)
            return
        answer(True, 0, "", {})
