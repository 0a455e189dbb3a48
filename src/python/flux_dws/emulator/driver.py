"""What an emulated nnf-sos driver is: one class per family of #DW commands.

The Controllers core (controllers.py) walks a Workflow's nnf drivers of
the current state in directive order and calls, for each, the method named
after the state (``proposal``, ``setup``, ``datain``, ``prerun``,
``postrun``, ``dataout``, ``teardown``) of the driver registered for the
directive's command.  A method returns when the driver is done, raises a
``ResourceError`` (dwsim.resource_error) when it failed, or raises ``Wait``
when it started something that has not finished yet; the core then leaves
the driver Running and looks again when a child object changes or when
``Wait.after`` seconds have passed.

``delete`` is called when the Workflow is being deleted (from any state) and
removes whatever the driver created for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL, DWS, NNF, Resource
from flux_dws.apiserver.store import ApiError, StoreApi
from flux_dws.dwsim import workflow as dws
from flux_dws.emulator.faults import Faults

__all__ = ["DWS", "NNF", "RESOURCE", "Directive", "Driver", "DriverContext", "Wait"]

# the API resources the drivers touch, by a short name
RESOURCE: dict[str, Resource] = {name: BY_GROUP_PLURAL[key] for name, key in {
    "workflow": (DWS, "workflows"), "computes": (DWS, "computes"),
    "breakdown": (DWS, "directivebreakdowns"), "servers": (DWS, "servers"),
    "storage": (DWS, "storages"), "rules": (DWS, "dwdirectiverules"),
    "sysconfig": (DWS, "systemconfigurations"), "sysstatus": (DWS, "systemstatuses"),
    "psi": (DWS, "persistentstorageinstances"), "clientmount": (DWS, "clientmounts"),
    "profile": (NNF, "nnfstorageprofiles"), "cprofile": (NNF, "nnfcontainerprofiles"),
    "dmprofile": (NNF, "nnfdatamovementprofiles"), "nnfstorage": (NNF, "nnfstorages"),
    "dm": (NNF, "nnfdatamovements"), "access": (NNF, "nnfaccesses"),
    "dmmanager": (NNF, "nnfdatamovementmanagers"), "portmanager": (NNF, "nnfportmanagers"),
    "containerdata": (NNF, "nnfcontainerdata"), "secret": ("", "secrets"),
    "node": ("", "nodes"),
    "lustre": ("lus.cray.hpe.com", "lustrefilesystems"),
}.items()}

T = TypeVar("T")
R = TypeVar("R")

DIRECTIVE_INDEX_LABEL = "nnf.cray.hpe.com/directive_index"
JOB_ID_LABEL = "nnf.cray.hpe.com/job_id"
OWNER_LABELS = ("dataworkflowservices.github.io/owner.kind",
                "dataworkflowservices.github.io/owner.name",
                "dataworkflowservices.github.io/owner.namespace",
                "dataworkflowservices.github.io/owner.uid")


class Wait(Exception):
    """The driver's work is under way; look again later (or on a child event)."""

    def __init__(self, why: str, after: float | None = None) -> None:
        super().__init__(why)
        self.reason = why  # the driver message while it waits, as nnf-sos words it
        self.after = after


@dataclass(frozen=True)
class Directive:
    index: int
    command: str
    args: dict[str, str]
    text: str


def workflow_labels(wf: dict[str, Any]) -> dict[str, str]:
    md = wf["metadata"]
    return {dws.WORKFLOW_LABELS[0]: md["name"], dws.WORKFLOW_LABELS[1]: md["namespace"],
            dws.WORKFLOW_LABELS[2]: md.get("uid", "")}


def child_labels(wf: dict[str, Any], index: int | None = None) -> dict[str, str]:
    """Workflow labels, nnf owner labels and (given an index) the directive's."""
    md = wf["metadata"]
    out = workflow_labels(wf)
    out.update(zip(OWNER_LABELS, ("Workflow", md["name"], md["namespace"], md.get("uid", "")),
                   strict=True))
    if index is not None:
        out[DIRECTIVE_INDEX_LABEL] = str(index)
    return out


def owner_refs(wf: dict[str, Any]) -> list[dict[str, Any]]:
    md = wf["metadata"]
    return [{"apiVersion": wf.get("apiVersion", f"{DWS}/v1alpha7"), "kind": "Workflow",
             "name": md["name"], "uid": md.get("uid", ""), "controller": True,
             "blockOwnerDeletion": True}]


def exists(store: StoreApi, r: Resource, ns: str, name: str) -> bool:
    return (r.group, r.plural, ns, name) in store.objects


def create_quiet(store: StoreApi, r: Resource, ns: str, obj: dict[str, Any]) -> None:
    """Create obj unless it exists (a reconcile may run twice)."""
    try:
        store.create(r, ns, obj)
    except ApiError as exc:
        if exc.code != 409:
            raise


def delete_quiet(store: StoreApi, r: Resource, ns: str, name: str) -> None:
    """Delete the object if it is there."""
    try:
        store.delete(r, ns, name)
    except ApiError as exc:
        if exc.code != 404:
            raise


class MountDaemon(Protocol):
    """The compute nodes' clientmountd (nnf_storage.ClientMountDaemon)."""

    def kick(self, compute: str, name: str) -> dict[str, Any] | None: ...


class MovementWorker(Protocol):
    """nnf-dm (nnf_datamovement.DataMovementWorker)."""

    def start(self, ns: str, name: str, wf: str, state: str, index: int) -> None: ...

    def release(self) -> int: ...


class JobCluster(Protocol):
    """What runs user containers (nnf_container.ContainerCluster)."""

    def started(self, r: Resource, ns: str, name: str, rabbits: list[str]) -> None: ...

    def set_deadline(self, r: Resource, obj: dict[str, Any], seconds: float = 0.0) -> bool: ...

    def shutdown(self, r: Resource, obj: dict[str, Any], timeout: float) -> None: ...


class PortAllocator(Protocol):
    """nnf-sos' port manager (nnf_container.PortManager)."""

    def reconcile(self) -> None: ...


class DriverContext(Protocol):
    """What the drivers and the emulated daemons may use of the controllers
    that run them (controllers.Controllers provides it)."""

    @property
    def store(self) -> StoreApi: ...

    @property
    def faults(self) -> Faults: ...

    @property
    def child_timeout(self) -> float: ...  # NNF_CHILD_RESOURCE_TIMEOUT_SECONDS

    @property
    def clientmountd(self) -> MountDaemon: ...

    @property
    def dmworker(self) -> MovementWorker: ...

    @property
    def cluster(self) -> JobCluster: ...

    @property
    def ports(self) -> PortAllocator: ...


    def after(self, seconds: float, fn: Callable[[], Any]) -> None: ...

    def fan_out(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]: ...

    def directives(self, wf: dict[str, Any]) -> list[Directive]: ...

    def waited(self, wf: dict[str, Any]) -> float: ...

    def storage_profile(self, name: str | None) -> dict[str, Any]: ...

    def computes(self, wf: dict[str, Any]) -> list[str]: ...

    def unreachable_computes(self) -> frozenset[str]: ...


class Driver:
    """Base class: store helpers shared by the drivers."""

    commands: tuple[str, ...] = ()

    def __init__(self, ctl: DriverContext) -> None:
        self.ctl = ctl

    @property
    def store(self) -> StoreApi:
        return self.ctl.store

    def exists(self, r: Resource, ns: str, name: str) -> bool:
        return exists(self.store, r, ns, name)

    def create_quiet(self, r: Resource, ns: str, obj: dict[str, Any]) -> None:
        create_quiet(self.store, r, ns, obj)

    def delete_quiet(self, r: Resource, ns: str, name: str) -> None:
        delete_quiet(self.store, r, ns, name)

    def delete_labelled(self, r: Resource, wf: dict[str, Any], index: int | None) -> None:
        """Delete the workflow's objects of kind r (of one directive, or all)."""
        sel = f"{dws.WORKFLOW_LABELS[0]}={wf['metadata']['name']}," \
              f"{dws.WORKFLOW_LABELS[1]}={wf['metadata']['namespace']}"
        if index is not None:
            sel += f",{DIRECTIVE_INDEX_LABEL}={index}"
        for o in self.store.view(r, None, sel):
            self.delete_quiet(r, o["metadata"].get("namespace", ""), o["metadata"]["name"])

    def delete(self, wf: dict[str, Any]) -> None:
        """The Workflow is going: remove what this driver made for it."""
