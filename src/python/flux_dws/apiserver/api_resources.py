"""The API resources the emulator serves (doc/guide/emulator.rst).

Each Resource says where it lives in the Kubernetes API: group, versions,
plural, kind, scope and whether it has a status subresource (Workflow,
Computes, SystemStatus, DWDirectiveRule and the NNF profiles have none).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from flux_dws.apiserver.schema import openapi

STARTED = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

DWS = "dataworkflowservices.github.io"
NNF = "nnf.cray.hpe.com"
LUS = "lus.cray.hpe.com"
CRD_GROUP = "apiextensions.k8s.io"


@dataclass(frozen=True)
class Resource:
    group: str            # "" for core
    versions: tuple[str, ...]
    plural: str
    kind: str
    namespaced: bool = True
    status: bool = True
    short_names: tuple[str, ...] = ()

    @property
    def storage_version(self) -> str:
        return self.versions[0]

    @property
    def singular(self) -> str:
        return self.kind.lower()

    def api_version(self, version: str | None = None) -> str:
        v = version or self.storage_version
        return f"{self.group}/{v}" if self.group else v


DWS_VERSIONS = ("v1alpha7", "v1alpha6")
NNF_VERSIONS = ("v1alpha11", "v1alpha10")


def _dws(plural: str, kind: str, status: bool = True) -> Resource:
    return Resource(DWS, DWS_VERSIONS, plural, kind, status=status)


def _nnf(plural: str, kind: str, status: bool = True,
         versions: tuple[str, ...] = NNF_VERSIONS) -> Resource:
    return Resource(NNF, versions, plural, kind, status=status)


RESOURCES: tuple[Resource, ...] = (
    _dws("workflows", "Workflow", status=False),
    _dws("directivebreakdowns", "DirectiveBreakdown"),
    _dws("computes", "Computes", status=False),
    _dws("servers", "Servers"),
    _dws("storages", "Storage"),
    _dws("systemconfigurations", "SystemConfiguration"),
    _dws("systemstatuses", "SystemStatus", status=False),
    _dws("persistentstorageinstances", "PersistentStorageInstance"),
    _dws("clientmounts", "ClientMount"),
    _dws("dwdirectiverules", "DWDirectiveRule", status=False),
    _nnf("nnfstorageprofiles", "NnfStorageProfile", status=False),
    _nnf("nnfcontainerprofiles", "NnfContainerProfile", status=False),
    _nnf("nnfdatamovementprofiles", "NnfDataMovementProfile", status=False),
    _nnf("nnfportmanagers", "NnfPortManager"),
    _nnf("nnfdatamovements", "NnfDataMovement"),
    _nnf("nnfdatamovementmanagers", "NnfDataMovementManager"),
    _nnf("nnfaccesses", "NnfAccess"),
    _nnf("nnfstorages", "NnfStorage"),
    _nnf("nnfcontainerdata", "NnfContainerData", status=False, versions=("v1alpha11",)),
    _nnf("nnfnodes", "NnfNode"),
    _nnf("nnfnodestorages", "NnfNodeStorage"),
    _nnf("nnfsystemstorages", "NnfSystemStorage"),
    Resource(LUS, ("v1beta1", "v1alpha1"), "lustrefilesystems", "LustreFileSystem"),
    Resource("", ("v1",), "namespaces", "Namespace", namespaced=False, short_names=("ns",)),
    Resource("", ("v1",), "nodes", "Node", namespaced=False, short_names=("no",)),
    Resource("", ("v1",), "secrets", "Secret", status=False),
    Resource("", ("v1",), "pods", "Pod", short_names=("po",)),
    Resource("", ("v1",), "services", "Service", short_names=("svc",)),
    # what nnf-sos runs user containers with (batch Jobs, mpi-operator MPIJobs)
    Resource("batch", ("v1",), "jobs", "Job"),
    Resource("kubeflow.org", ("v2beta1",), "mpijobs", "MPIJob"),
    Resource(CRD_GROUP, ("v1",), "customresourcedefinitions", "CustomResourceDefinition",
             namespaced=False, short_names=("crd", "crds")),
)

BY_GROUP_PLURAL = {(r.group, r.plural): r for r in RESOURCES}
BY_KIND = {(r.group, r.kind): r for r in RESOURCES}


def groups() -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for r in RESOURCES:
        if r.group:
            out.setdefault(r.group, r.versions)
    return out


def in_group_version(group: str, version: str) -> list[Resource]:
    return [r for r in RESOURCES if r.group == group and version in r.versions]


def lookup(group: str, version: str, plural: str) -> Resource | None:
    r = BY_GROUP_PLURAL.get((group, plural))
    return r if r is not None and version in r.versions else None


def _column(name: str, type_: str, path: str, priority: int = 0) -> dict[str, object]:
    col: dict[str, object] = {"name": name, "type": type_, "jsonPath": path}
    if priority:
        col["priority"] = priority
    return col


# what `kubectl get` shows for the kinds people look at most (from the CRDs)
PRINTER_COLUMNS = {
    "workflows": [
        _column("STATE", "string", ".status.state"),
        _column("READY", "boolean", ".status.ready"),
        _column("STATUS", "string", ".status.status"),
        _column("JOBID", "string", ".spec.jobID"),
        _column("AGE", "date", ".metadata.creationTimestamp"),
        _column("DESIREDSTATE", "string", ".spec.desiredState", 1),
        _column("DESIREDSTATECHANGE", "date", ".status.desiredStateChange", 1),
        _column("ELAPSEDTIMELASTSTATE", "string", ".status.elapsedTimeLastState", 1),
        _column("UID", "string", ".spec.userID", 1),
        _column("GID", "string", ".spec.groupID", 1),
    ],
    "namespaces": [_column("Status", "string", ".status.phase"),
                   _column("Age", "date", ".metadata.creationTimestamp")],
}


def crd_object(r: Resource, schemas: bool = False) -> dict[str, object]:
    """A CustomResourceDefinition describing r (for `kubectl get crd`):
    any field kept, or with ``schemas`` the structural schema the
    emulator enforces (schema.openapi: what the emulator serves, and what
    the referee gives a real API server)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{r.plural}.{r.group}"},
        "spec": {
            "group": r.group,
            "names": {"plural": r.plural, "singular": r.singular, "kind": r.kind,
                      "listKind": f"{r.kind}List"},
            "scope": "Namespaced" if r.namespaced else "Cluster",
            "versions": [{"name": v, "served": True, "storage": v == r.storage_version,
                          **({"additionalPrinterColumns": PRINTER_COLUMNS[r.plural]}
                             if r.plural in PRINTER_COLUMNS else {}),
                          "subresources": {"status": {}} if r.status else {},
                          "schema": {"openAPIV3Schema": openapi(r.group, r.kind) if schemas
                                     else {"type": "object",
                                           "x-kubernetes-preserve-unknown-fields": True}}}
                         for v in r.versions],
        },
        "status": {"acceptedNames": {"plural": r.plural, "singular": r.singular,
                                     "kind": r.kind, "listKind": f"{r.kind}List"},
                   "storedVersions": [r.storage_version],
                   "conditions": [{"type": t, "status": "True", "reason": reason,
                                   "message": message, "lastTransitionTime": STARTED}
                                  for t, reason, message in CRD_CONDITIONS]},
    }


CRD_CONDITIONS = (("NamesAccepted", "NoConflicts", "no conflicts found"),
                  ("Established", "InitialNamesAccepted", "the initial names have been"
                                                          " accepted"))


def custom_resources() -> list[Resource]:
    """The resources that CustomResourceDefinitions describe."""
    return [r for r in RESOURCES if r.group and r.group not in BUILTIN_GROUPS]


BUILTIN_GROUPS = (CRD_GROUP, "batch")  # served by kube-apiserver itself, not CRDs
