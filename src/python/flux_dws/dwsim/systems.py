"""Emulated Rabbit systems: description files and the objects they seed.

A system description (YAML; ``etc/systems/<name>.yaml``, or any path) says
which rabbits serve which computes and what they hold::

    name: rzadams
    capacity: 30720000000000          # bytes per rabbit (the sum of its drives)
    drives: 16                        # NVMe drives per rabbit (default 16)
    capacities: {rzadams208: 17250000000000}   # exceptions
    ports: ["10000-10999"]            # container ports (SystemConfiguration)
    portsCooldownInSeconds: 60
    rabbits:                          # either a pattern ...
      hostlist: rzadams[201-208]
      computes: rzadams[1001-1128]
      perRabbit: 16
    # ... or an explicit list:
    # rabbits:
    #   - name: kind-worker2
    #     computes: [{name: compute-01, index: 0}, ...]
    externalComputes: [login1]        # optional
    lustre:                           # global Lustre file systems
      - {name: lus, mountRoot: /lus/global, mgsNids: 10.1.1.1@tcp}

``profiles.yaml`` beside the systems supplies the storage, container and data
movement profiles every system starts with.  ``seed_objects`` returns the
objects a freshly installed DWS + nnf-sos cluster holds for the system.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from flux_dws import inputfile
from flux_dws.dwsim.k8snode import node_object
from flux_dws.dwsim.storage import DRIVES_PER_RABBIT, nvme_devices, storage_status
from flux_dws.libdws.directives import nnf_rules
from flux_dws.libdws.hostlist import Hostlist, HostlistError

DWS = "dataworkflowservices.github.io/v1alpha7"
NNF = "nnf.cray.hpe.com/v1alpha11"
LUS = "lus.cray.hpe.com/v1beta1"
STORAGE_TYPE_LABEL = "dataworkflowservices.github.io/storage"


class SystemError_(ValueError):
    """A system description is missing, malformed or inconsistent."""


@dataclass
class Rabbit:
    name: str
    capacity: int                      # total bytes, shared by its drives
    computes: list[tuple[str, int]]
    drives: int = DRIVES_PER_RABBIT


@dataclass
class System:
    name: str
    rabbits: list[Rabbit]
    ports: list[Any] = field(default_factory=list)
    ports_cooldown: int = 60
    external_computes: list[str] = field(default_factory=list)
    lustre: list[dict[str, Any]] = field(default_factory=list)
    profiles: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def computes(self) -> list[str]:
        return [c for r in self.rabbits for c, _ in r.computes]


def _dirs() -> list[Path]:
    here = Path(__file__).resolve()
    out = [here.parents[4] / "etc" / "systems"]  # source tree: <top>/src/python/flux_dws/dwsim
    try:
        out.append(Path(str(resources.files("flux_dws").joinpath("data/systems"))))
    except (ModuleNotFoundError, TypeError):
        pass
    return out


def system_names() -> list[str]:
    names: set[str] = set()
    for d in _dirs():
        names.update(p.stem for p in d.glob("*.yaml") if p.stem != "profiles")
    return sorted(names)


def _find(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or "/" in name_or_path:
        if not p.is_file():
            raise SystemError_(f"system file {name_or_path}: not found")
        return p
    for d in _dirs():
        f = d / f"{name_or_path}.yaml"
        if f.is_file():
            return f
    raise SystemError_(f"unknown system '{name_or_path}' (known: {', '.join(system_names())})")


def _load_yaml(path: Path) -> dict[str, Any]:
    try:
        doc = inputfile.load_yaml(path)
    except inputfile.InputError as exc:
        raise SystemError_(str(exc)) from None
    if not isinstance(doc, dict):
        raise SystemError_(f"{path}: expected a mapping at the top level")
    return doc


def _int(doc: dict[str, Any], key: str, where: str, default: int | None = None) -> int:
    v = doc.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise SystemError_(f"{where}: {key} must be a non-negative integer")
    return v


def parse_system(doc: dict[str, Any], where: str = "system") -> System:
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise SystemError_(f"{where}: name is required")
    capacity = _int(doc, "capacity", where)
    drives = _int(doc, "drives", where, DRIVES_PER_RABBIT)
    if drives < 1:
        raise SystemError_(f"{where}: drives must be at least 1")
    exceptions = doc.get("capacities") or {}
    if not isinstance(exceptions, dict):
        raise SystemError_(f"{where}: capacities must be a mapping of rabbit to bytes")
    spec = doc.get("rabbits")
    rabbits: list[Rabbit] = []
    try:
        if isinstance(spec, dict):
            names = list(Hostlist(str(spec.get("hostlist", ""))))
            computes = list(Hostlist(str(spec.get("computes", ""))))
            per = _int(spec, "perRabbit", f"{where}: rabbits")
            if per < 1 or len(computes) > per * len(names):
                raise SystemError_(f"{where}: {len(computes)} computes do not fit"
                                   f" {len(names)} rabbits of {per}")
            for i, rname in enumerate(names):
                mine = computes[i * per:(i + 1) * per]
                rabbits.append(Rabbit(rname, 0, [(c, k) for k, c in enumerate(mine)]))
        elif isinstance(spec, list):
            for i, entry in enumerate(spec):
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise SystemError_(f"{where}: rabbits[{i}] needs a name")
                comp = []
                for j, c in enumerate(entry.get("computes") or []):
                    if isinstance(c, str):
                        comp.append((c, j))
                    elif isinstance(c, dict) and isinstance(c.get("name"), str):
                        comp.append((c["name"], _int(c, "index", f"{where}: {entry['name']}", j)))
                    else:
                        raise SystemError_(f"{where}: rabbits[{i}].computes[{j}] is invalid")
                rabbits.append(Rabbit(entry["name"], _int(entry, "capacity", where, 0), comp))
        else:
            raise SystemError_(f"{where}: rabbits must be a pattern or a list")
    except HostlistError as exc:
        raise SystemError_(f"{where}: {exc}") from None
    seen: dict[str, str] = {}
    for r in rabbits:
        r.capacity = int(exceptions.get(r.name, r.capacity or capacity))
        r.drives = drives
        for c, _ in r.computes:
            if c in seen:
                raise SystemError_(f"{where}: compute '{c}' is attached to two rabbits:"
                                   f" '{seen[c]}' and '{r.name}'")
            seen[c] = r.name
    unknown = set(exceptions) - {r.name for r in rabbits}
    if unknown:
        raise SystemError_(f"{where}: capacities names unknown rabbit '{sorted(unknown)[0]}'")
    return System(
        name=name, rabbits=rabbits, ports=list(doc.get("ports") or []),
        ports_cooldown=_int(doc, "portsCooldownInSeconds", where, 60),
        external_computes=list(doc.get("externalComputes") or []),
        lustre=list(doc.get("lustre") or []),
    )


def load_system(name_or_path: str) -> System:
    path = _find(name_or_path)
    system = parse_system(_load_yaml(path), str(path))
    for prof in [path.parent / "profiles.yaml"] + [d / "profiles.yaml" for d in _dirs()]:
        if prof.is_file():
            system.profiles = _load_yaml(prof)
            break
    return system


def _obj(api: str, kind: str, name: str, ns: str | None, **body: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if ns is not None:
        md["namespace"] = ns
    return {"apiVersion": api, "kind": kind, "metadata": md, **body}


def seed_objects(system: System) -> list[dict[str, Any]]:
    """The objects a management cluster for ``system`` starts with."""
    out: list[dict[str, Any]] = []
    for ns in ("default", "dws-system", "nnf-system", "nnf-dm-system"):
        out.append(_obj("v1", "Namespace", ns, None))
    for c in system.computes + system.external_computes:
        out.append(_obj("v1", "Namespace", c, None))
    for r in system.rabbits:  # each rabbit's nnf-sos objects (and its data movement)
        out.append(_obj("v1", "Namespace", r.name, None))
    for r in system.rabbits:  # and its Kubernetes Node (nnf-sos reads its Ready, taints)
        out.append(node_object(r.name))
    out.append(_obj(DWS, "SystemConfiguration", "default", "default", spec={
        "storageNodes": [{"type": "Rabbit", "name": r.name,
                          "computesAccess": [{"name": c, "index": i} for c, i in r.computes]}
                         for r in system.rabbits],
        "externalComputeNodes": [{"name": c} for c in system.external_computes],
        "ports": system.ports, "portsCooldownInSeconds": system.ports_cooldown,
    }, status={"ready": True}))
    for r in system.rabbits:
        st = _obj(DWS, "Storage", r.name, "default",
                  spec={"state": "Enabled", "mode": "Live"},
                  status=storage_status({}, r.name, r.capacity,
                                        {c: "Ready" for c, _ in r.computes},
                                        devices=nvme_devices(r.name, r.capacity, r.drives)))
        st["metadata"]["labels"] = {STORAGE_TYPE_LABEL: "Rabbit"}
        out.append(st)
    out.append(_obj(DWS, "SystemStatus", "default", "default", data={
        "nodes": {c: "Enabled" for c in system.computes}}))
    rules = nnf_rules()
    out.append(_obj(DWS, "DWDirectiveRule", "nnf", "dws-system", spec=rules["spec"]))
    for p in system.profiles.get("storageProfiles", []):
        out.append(_obj(NNF, "NnfStorageProfile", p["name"], "nnf-system", data=p["data"]))
    for p in system.profiles.get("containerProfiles", []):
        out.append(_obj(NNF, "NnfContainerProfile", p["name"], "nnf-system", data=p["data"]))
    for p in system.profiles.get("dataMovementProfiles", []):
        out.append(_obj(NNF, "NnfDataMovementProfile", p["name"], "nnf-system", data=p["data"]))
    out.append(_obj(NNF, "NnfPortManager", "nnf-port-manager", "nnf-system", spec={
        "systemConfiguration": {"kind": "SystemConfiguration", "name": "default",
                                "namespace": "default"},
        "allocations": []}, status={"status": "Ready", "allocations": []}))
    out.append(_obj(NNF, "NnfDataMovementManager", "nnf-dm-manager-controller-manager",
                    "nnf-dm-system", spec={}, status={"ready": True}))
    out.append(_obj("v1", "Secret", "nnf-dm-usercontainer-server-tls", "default",
                    type="kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""}))
    for fs in system.lustre:
        out.append(_obj(LUS, "LustreFileSystem", fs["name"], "default", spec={
            "name": fs["name"], "mgsNids": fs.get("mgsNids", ""),
            "mountRoot": fs.get("mountRoot", ""), "storageClassName": "nnf-lustre-fs",
            "namespaces": {"default": {"modes": ["ReadWriteMany"]}}}))
    return out
