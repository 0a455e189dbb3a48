"""nnf-sos' NnfSystemStorage controller for the emulator.

An NnfSystemStorage (made by a site or a test, outside any WLM) gets nnf-sos'
finalizer ``nnf.cray.hpe.com/nnf_system_storage``, then a Servers (label
``system-storage``, the requested capacity, one entry per chosen rabbit), a
Computes, an NnfStorage and an NnfAccess, all named like it, labelled with
its owner labels, ``nnf.cray.hpe.com/directive_index: "0"`` and
``nnf.cray.hpe.com/job_id: SystemStorage`` and owned by it; ``status.ready``
once the storage is allocated (after the ``Setup`` latency) and the access
mounted.  Errors go to ``status.error`` (Minor ones are retried).  A change
of any Storage re-evaluates ``excludeDisabledRabbits``.  Deleting it deletes
the children, then drops the finalizer.  The decisions are
dwsim.systemstorage; ClientMounts for ``makeClientMounts`` are not made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL, DWS, NNF, Resource
from flux_dws.apiserver.store import ApiError, StoreApi
from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim import systemstorage as nss

FINALIZER = "nnf.cray.hpe.com/nnf_system_storage"
KIND = "NnfSystemStorage"
OWNER_KIND = "dataworkflowservices.github.io/owner.kind"
OWNER_LABELS = (OWNER_KIND, "dataworkflowservices.github.io/owner.name",
                "dataworkflowservices.github.io/owner.namespace",
                "dataworkflowservices.github.io/owner.uid")
PINNED_PROFILE_LABELS = ("nnf.cray.hpe.com/pinned_storage_profile_name",
                         "nnf.cray.hpe.com/pinned_storage_profile_namespace")

SYSTEM_STORAGE = BY_GROUP_PLURAL[(NNF, "nnfsystemstorages")]
SERVERS = BY_GROUP_PLURAL[(DWS, "servers")]
COMPUTES = BY_GROUP_PLURAL[(DWS, "computes")]
NNF_STORAGE = BY_GROUP_PLURAL[(NNF, "nnfstorages")]
ACCESS = BY_GROUP_PLURAL[(NNF, "nnfaccesses")]
SYSCONFIG = BY_GROUP_PLURAL[(DWS, "systemconfigurations")]
STORAGE = BY_GROUP_PLURAL[(DWS, "storages")]
PROFILE = BY_GROUP_PLURAL[(NNF, "nnfstorageprofiles")]
CHILDREN = (ACCESS, NNF_STORAGE, COMPUTES, SERVERS)


def owner_of(labels: dict[str, str]) -> tuple[str, str] | None:
    """The NnfSystemStorage (namespace, name) a child's labels name, if any."""
    if labels.get(OWNER_KIND) != KIND:
        return None
    return labels.get(OWNER_LABELS[2], ""), labels.get(OWNER_LABELS[1], "")


class SystemStorageController:
    """One reconcile per NnfSystemStorage key; ``later(seconds, fn)`` runs fn
    on the emulator's timer thread, ``enqueue(ns, name)`` asks for a
    reconcile."""

    def __init__(self, store: StoreApi, later: Callable[[float, Callable[[], Any]], None],
                 enqueue: Callable[[str, str], None], alloc_delay: float = 0.0,
                 retry: float = 1.0) -> None:
        self.store = store
        self.later = later
        self.enqueue = enqueue
        self.alloc_delay = alloc_delay
        self.retry = retry
        self._allocating: set[tuple[str, str]] = set()  # NnfStorages on their way

    def enqueue_all(self) -> None:
        for o in self.store.list_objects(SYSTEM_STORAGE, None):
            self.enqueue(o["metadata"]["namespace"], o["metadata"]["name"])

    def reconcile(self, ns: str, name: str) -> None:
        try:
            obj = self.store.get(SYSTEM_STORAGE, ns, name)
        except ApiError:
            return
        md = obj["metadata"]
        fins = list(md.get("finalizers") or [])
        if md.get("deletionTimestamp"):
            if FINALIZER in fins and self._delete_children(obj):
                fins.remove(FINALIZER)
                self.store.patch(SYSTEM_STORAGE, ns, name, "merge", {"metadata": {
                    "finalizers": fins or None, "resourceVersion": md["resourceVersion"]}})
            return
        if FINALIZER not in fins:
            self.store.patch(SYSTEM_STORAGE, ns, name, "merge", {"metadata": {
                "finalizers": [*fins, FINALIZER], "resourceVersion": md["resourceVersion"]}})
            return
        try:
            new: dict[str, Any] = {"ready": self._make(obj), "error": None}
        except rerr.ResourceError as err:
            new = {"ready": False, "error": nss.error_status(err)}
            if err.severity != "Fatal":
                self.later(self.retry, lambda: self.enqueue(ns, name))
        status = obj.get("status") or {}
        if status.get("ready") != new["ready"] or status.get("error") != new["error"]:
            self.store.patch(SYSTEM_STORAGE, ns, name, "merge", {"status": new}, "status")

    # --- the children ------------------------------------------------------

    def _selector(self, obj: dict[str, Any]) -> str:
        md = obj["metadata"]
        return ",".join(f"{k}={v}" for k, v in zip(
            OWNER_LABELS, (KIND, md["name"], md["namespace"], md.get("uid", "")), strict=True))

    def _delete_children(self, obj: dict[str, Any]) -> bool:
        """Delete them; True once none is left."""
        ns, sel = obj["metadata"]["namespace"], self._selector(obj)
        left = False
        for r in CHILDREN:
            for child in self.store.list_objects(r, ns, sel):
                left = True
                try:
                    self.store.delete(r, ns, child["metadata"]["name"])
                except ApiError as exc:
                    if exc.code != 404:
                        raise
        if left:  # look again: they may carry finalizers of their own
            self.enqueue(ns, obj["metadata"]["name"])
        return not left

    def _upsert(self, r: Resource, obj: dict[str, Any], labels: dict[str, str],
                body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """CreateOrUpdate: the child, and whether it was made or changed."""
        md = obj["metadata"]
        ns, name = md["namespace"], md["name"]
        try:
            child = self.store.get(r, ns, name)
        except ApiError as exc:
            if exc.code != 404:
                raise
            owner = [{"apiVersion": obj.get("apiVersion", f"{NNF}/v1alpha11"), "kind": KIND,
                      "name": name, "uid": md.get("uid", ""), "controller": True,
                      "blockOwnerDeletion": True}]
            return self.store.create(r, ns, {
                "apiVersion": r.api_version(), "kind": r.kind,
                "metadata": {"name": name, "labels": labels, "ownerReferences": owner},
                **body}), True
        have = child["metadata"].get("labels") or {}
        patch: dict[str, Any] = {k: v for k, v in body.items() if child.get(k) != v}
        if any(have.get(k) != v for k, v in labels.items()):
            patch["metadata"] = {"labels": labels}
        if not patch:
            return child, False
        return self.store.patch(r, ns, name, "merge", patch), True

    def _sysconfig(self, spec: dict[str, Any]) -> dict[str, Any]:
        key = nss.sysconfig_key(spec)
        try:
            return self.store.get(SYSCONFIG, *key)
        except ApiError as exc:
            raise nss.not_found("systemconfiguration", key, exc.message) from None

    def _make(self, obj: dict[str, Any]) -> bool:
        """Make or update the children; True once the storage is usable."""
        spec, md = obj.get("spec") or {}, obj["metadata"]
        ns, name = md["namespace"], md["name"]
        labels = dict(zip(OWNER_LABELS, (KIND, name, ns, md.get("uid", "")), strict=True))
        labels.update({"nnf.cray.hpe.com/directive_index": "0",
                       "nnf.cray.hpe.com/job_id": nss.JOB_ID})
        sysconfig = self._sysconfig(spec) if nss.rabbits_needing_config(spec) else None
        storages: dict[str, dict[str, Any] | None] = {}
        if spec.get("excludeDisabledRabbits"):
            storages = {o["metadata"]["name"]: o
                        for o in self.store.list_objects(STORAGE, "default")}
        rabbits = nss.select_rabbits(spec, sysconfig, storages)
        servers_spec = nss.servers_spec(spec, rabbits)
        self._upsert(SERVERS, obj, labels, {"spec": servers_spec})
        if not spec.get("includeComputes") and sysconfig is None:
            sysconfig = self._sysconfig(spec)
        computes = nss.select_computes(spec, sysconfig, rabbits)
        self._upsert(COMPUTES, obj, labels, {"data": [{"name": c} for c in computes]})
        pkey = nss.profile_key(spec)
        try:
            self.store.get(PROFILE, *pkey)
        except ApiError as exc:
            raise nss.not_found("StorageProfile", pkey, exc.message) from None
        plabels = {**labels, PINNED_PROFILE_LABELS[0]: pkey[1],
                   PINNED_PROFILE_LABELS[1]: pkey[0]}
        storage, changed = self._upsert(NNF_STORAGE, obj, plabels, {
            "spec": nss.nnf_storage_spec(spec, md, servers_spec)})
        if changed:  # the rabbits (re)allocate it
            self.store.patch(NNF_STORAGE, ns, name, "merge", {"status": {"ready": False}},
                             "status")
            self._allocating.discard((ns, name))
            storage = self.store.get(NNF_STORAGE, ns, name)
        st = storage.get("status") or {}
        if not st.get("ready") or len(st.get("allocationSets") or []) != len(
                storage["spec"].get("allocationSets") or []):
            if (ns, name) not in self._allocating:  # (again after a restart)
                self._allocating.add((ns, name))
                self.later(self.alloc_delay, lambda: self._allocated(ns, name))
            return False
        access, _ = self._upsert(ACCESS, obj, plabels, {"spec": nss.access_spec(spec, ns, name)})
        if (access.get("status") or {}).get("state") != "mounted" or \
                not (access.get("status") or {}).get("ready"):
            self.store.patch(ACCESS, ns, name, "merge", {"status": {
                "state": "mounted", "ready": True, "error": None}}, "status")
        return True

    def _allocated(self, ns: str, name: str) -> None:
        """The NnfStorage's allocations exist on every rabbit."""
        self._allocating.discard((ns, name))
        try:
            storage = self.store.get(NNF_STORAGE, ns, name)
        except ApiError:
            return
        sets = storage["spec"].get("allocationSets") or []
        self.store.patch(NNF_STORAGE, ns, name, "merge", {"status": {
            "ready": True, "allocationSets": [
                {"ready": True, "allocationCount": sum(n.get("count", 1)
                                                       for n in s.get("nodes") or [])}
                for s in sets]}}, "status")
