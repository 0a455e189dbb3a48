"""A loaded rabbitmapping file: compute <-> rabbit lookups.

See flux_dws.rabbitmapping_build for the format.  Loading checks that the two
halves agree (every compute in a rabbit's hostlist maps back to that rabbit
in ``computes`` and vice versa) and names the first inconsistency.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flux_dws import inputfile
from flux_dws.errors import DwsError
from flux_dws.libdws.hostlist import Hostlist


class MappingFileError(Exception):
    """The rabbitmapping document is malformed or inconsistent."""


@dataclass(frozen=True)
class Rabbit:
    name: str
    capacity: int
    computes: tuple[str, ...]


class RabbitMapping:
    def __init__(self, doc: Any, source: str = "rabbitmapping") -> None:
        if not isinstance(doc, dict) or set(doc) != {"computes", "rabbits"}:
            raise MappingFileError(
                f"{source}: expected an object with exactly the keys 'computes' and 'rabbits'"
            )
        computes, rabbits = doc["computes"], doc["rabbits"]
        if not isinstance(computes, dict) or not isinstance(rabbits, dict):
            raise MappingFileError(f"{source}: 'computes' and 'rabbits' must be objects")
        self.rabbits: dict[str, Rabbit] = {}
        self.compute_to_rabbit: dict[str, str] = {}
        for name, entry in rabbits.items():
            if not isinstance(entry, dict):
                raise MappingFileError(f"{source}: rabbits.{name} is not an object")
            capacity = entry.get("capacity")
            if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 0:
                raise MappingFileError(
                    f"{source}: rabbits.{name}.capacity must be a non-negative integer"
                )
            hostlist = entry.get("hostlist")
            if not isinstance(hostlist, str):
                raise MappingFileError(f"{source}: rabbits.{name}.hostlist must be a string")
            try:
                hosts = tuple(Hostlist(hostlist)) if hostlist else ()
            except DwsError as exc:
                raise MappingFileError(f"{source}: rabbits.{name}.hostlist: {exc}") from None
            for host in hosts:
                other = self.compute_to_rabbit.get(host)
                if other is not None:
                    raise MappingFileError(
                        f"{source}: compute node '{host}' is listed under two rabbits: "
                        f"'{other}' and '{name}'"
                    )
                self.compute_to_rabbit[host] = name
            self.rabbits[name] = Rabbit(name, capacity, hosts)
        for host, rabbit in computes.items():
            if self.compute_to_rabbit.get(host) != rabbit:
                raise MappingFileError(
                    f"{source}: computes.{host} says rabbit '{rabbit}' but rabbits."
                    f"{rabbit if rabbit in self.rabbits else '<none>'} does not list it"
                )
        if len(computes) != len(self.compute_to_rabbit):
            missing = sorted(set(self.compute_to_rabbit) - set(computes))
            raise MappingFileError(
                f"{source}: compute node '{missing[0]}' is in rabbits."
                f"{self.compute_to_rabbit[missing[0]]}.hostlist but not in 'computes'"
            )

    @classmethod
    def load(cls, path: str | Path) -> RabbitMapping:
        try:
            doc = inputfile.load_json(path)
        except inputfile.InputError as exc:
            raise MappingFileError(str(exc)) from None
        return cls(doc, str(path))

    def rabbits_of(self, computes: Iterable[str]) -> list[str]:
        """Rabbits serving these computes (first-seen order, unique)."""
        out: dict[str, None] = {}
        for host in computes:
            rabbit = self.compute_to_rabbit.get(host)
            if rabbit is None:
                raise MappingFileError(f"compute node '{host}' is not attached to any rabbit")
            out[rabbit] = None
        return list(out)

    def computes_of(self, rabbits: Iterable[str]) -> list[str]:
        """Computes attached to these rabbits (in mapping order, unique)."""
        out: dict[str, None] = {}
        for rabbit in rabbits:
            entry = self.rabbits.get(rabbit)
            if entry is None:
                raise MappingFileError(f"'{rabbit}' is not a rabbit in the mapping")
            out.update(dict.fromkeys(entry.computes))
        return list(out)
