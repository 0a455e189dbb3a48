"""The Kubernetes kinds the dws service reads and writes, and where they live.

``Kinds.probe`` asks the cluster which DWS and NNF API versions it serves
(``flux_dws.k8s.crd``; a pinned version is tried first).  A cluster that
serves no NNF API is tolerated: ``NnfDataMovement`` is then absent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from flux_dws.k8s import crd

DWS_PLURALS = {
    "Workflow": "workflows",
    "Computes": "computes",
    "Servers": "servers",
    "DirectiveBreakdown": "directivebreakdowns",
    "ClientMount": "clientmounts",
    "Storage": "storages",
    "SystemStatus": "systemstatuses",
    "SystemConfiguration": "systemconfigurations",
    "PersistentStorageInstance": "persistentstorageinstances",
}
NNF_PLURALS = {"NnfDataMovement": "nnfdatamovements"}
CORE_PLURALS = {"Secret": "secrets", "Pod": "pods", "Node": "nodes"}
#: the kinds above that are cluster-scoped (a rabbit's Node: dws.drain)
CLUSTER_KINDS = frozenset({"Node"})
ALL_KINDS = (*DWS_PLURALS, *NNF_PLURALS, *CORE_PLURALS)


@dataclass(frozen=True)
class KindInfo:
    """Where one kind lives: group ("" for core), version, plural, scope."""

    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool = True

    @property
    def core(self) -> bool:
        return self.group == ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def snake(self) -> str:
        """The kind as the core API's method names spell it (``config_map``)."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.kind).lower()


class Kinds(Mapping[str, KindInfo]):
    """kind -> KindInfo for the DWS, NNF and core kinds the service uses."""

    def __init__(self, dws_version: str, nnf_version: str | None) -> None:
        self.dws_version = dws_version
        self.nnf_version = nnf_version
        table = {k: KindInfo(k, crd.DWS_GROUP, dws_version, p) for k, p in DWS_PLURALS.items()}
        if nnf_version is not None:
            table.update({k: KindInfo(k, crd.NNF_GROUP, nnf_version, p)
                          for k, p in NNF_PLURALS.items()})
        table.update({k: KindInfo(k, "", "v1", p, namespaced=k not in CLUSTER_KINDS)
                      for k, p in CORE_PLURALS.items()})
        self._table = table

    @classmethod
    def probe(cls, custom_api: Any, dws_version: str | None = None,
              nnf_version: str | None = None) -> Kinds:
        """The kinds at the versions ``custom_api``'s cluster serves.

        Raises crd.CRDVersionError when no DWS version is served, and the
        client's exceptions when the cluster cannot be asked."""
        dws = crd.probe_dws_version(custom_api, dws_version)
        try:
            nnf: str | None = crd.probe_nnf_version(custom_api, nnf_version)
        except crd.CRDVersionError:
            nnf = None
        return cls(dws, nnf)

    def __getitem__(self, kind: str) -> KindInfo:
        return self._table[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __repr__(self) -> str:
        return f"Kinds(dws={self.dws_version!r}, nnf={self.nnf_version!r})"
