"""nnf-sos' data-movement driver (copy_in, copy_out) and the nnf-dm workers.

Per state (doc/guide/emulator.rst, "Controllers"):

Proposal  the workflow checks ran already (staging paths); the data-movement
          profile (``profile=`` or the default one in nnf-system) is pinned:
          copied to ``<wf>-<i>`` in the workflow's namespace with
          ``pinned: true``, owned by the Workflow.
DataIn /  each staging argument is resolved: ``$DW_JOB_<name>/path`` to the
DataOut   NnfStorage of that jobdw, ``$DW_PERSISTENT_<name>/path`` to the
          persistent one, anything else to a LustreFileSystem whose
          mountRoot holds it ("Staging parameter '...' is invalid"
          otherwise).  The NnfDataMovementManager must exist.  Then:
          xfs/gfs2 -> one NnfDataMovement per allocation, ``<wf>-<i>-<k>`` in
          the rabbit's namespace; lustre -> one ``<wf>-<i>`` in
          ``nnf-dm-system``.  The driver finishes when all are Finished; any
          that did not end in Success fails the state (Fatal,
          ``data movement operation failed during '<State>', message: <m>``).
Teardown  the directive's NnfDataMovements are deleted (that is how nnf-sos
          cancels data movement).

``DataMovementWorker`` plays nnf-dm: a new NnfDataMovement is Starting,
then Running, then Finished/Success after the ``DataMovement`` latency;
``spec.cancel`` ends it Cancelled; ``datamovement`` faults end it Failed
with their message, leave it Running (stall), slow it (delay) or keep it
moving until ``release`` (hold: ``flux-dws fault release``).
"""

from __future__ import annotations

import datetime as dt
import functools
import posixpath
import threading
import time
from typing import Any

from flux_dws.apiserver.store import ApiError
from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim.gotime import microtime
from flux_dws.dwsim.proposal import staging_name
from flux_dws.emulator.driver import (
    DIRECTIVE_INDEX_LABEL,
    JOB_ID_LABEL,
    NNF,
    OWNER_LABELS,
    RESOURCE,
    Directive,
    Driver,
    DriverContext,
    Wait,
    child_labels,
    owner_refs,
)
from flux_dws.libdws.wfstates import DATA_IN, DATA_OUT

DM_NAMESPACE = "nnf-dm-system"
#: how often a running data movement's commandStatus moves (seconds; a
#: quarter of its length for a shorter one)
PROGRESS_EVERY = 5.0
#: the time a held copy's progress moves as over, when its hold says none
HOLD_SECONDS = 60.0
#: what an emulated data movement pretends to copy, for its progress lines
EMULATED_BYTES = 64 << 30
GIB = 1 << 30
DM_MANAGER = "nnf-dm-manager-controller-manager"
PROFILE_NAMESPACE = "nnf-system"
TEARDOWN_STATE_LABEL = "nnf.cray.hpe.com/teardown_state"
INITIATOR_LABEL = "dm.cray.hpe.com/initiator"
SERVER_MOUNT_PREFIX = "/mnt/nnf"


def split_staging(arg: str) -> tuple[str, str]:
    """``$DW_JOB_my_fs/a/b`` -> (``my-fs``, ``/a/b``); other paths -> ("", arg)."""
    if arg.startswith(("$DW_JOB_", "$DW_PERSISTENT_")):
        _, sep, rest = arg.partition("/")
        return staging_name(arg), sep + rest
    return "", arg


def go_clean(path: str) -> str:
    """Go's filepath.Clean: posixpath.normpath, but '//' at the start is '/' too."""
    out = posixpath.normpath(path)
    return "/" + out.lstrip("/") if out.startswith("//") else out


class DataMovementDriver(Driver):
    commands = ("copy_in", "copy_out")

    # --- Proposal: pin the profile ------------------------------------------

    def proposal(self, wf: dict[str, Any], d: Directive) -> None:
        ns, pinned = wf["metadata"]["namespace"], f"{wf['metadata']['name']}-{d.index}"
        try:
            existing = self.store.get(RESOURCE["dmprofile"], ns, pinned)
        except ApiError:
            existing = None
        if existing is not None:
            if not (existing.get("data") or {}).get("pinned"):
                raise rerr.internal("", f"Expected pinned NnfDataMovementProfile, but it was"
                                        f" not pinned: {pinned}")
            return
        source = self._profile_to_use(d.args.get("profile"))
        data = dict(source.get("data") or {})
        data.update(pinned=True, default=False)
        labels = {k: v for k, v in child_labels(wf).items() if k in OWNER_LABELS}
        self.create_quiet(RESOURCE["dmprofile"], ns, {
            "apiVersion": f"{NNF}/v1alpha11", "kind": "NnfDataMovementProfile",
            "metadata": {"name": pinned, "labels": labels, "ownerReferences": owner_refs(wf)},
            "data": data})

    def _profile_to_use(self, name: str | None) -> dict[str, Any]:
        if name:
            try:
                return self.store.get(RESOURCE["dmprofile"], PROFILE_NAMESPACE, name)
            except ApiError:
                raise rerr.user(f"Unable to find NnfDataMovementProfile: {name}") from None
        defaults = [p["metadata"]["name"]
                    for p in self.store.list_objects(RESOURCE["dmprofile"], PROFILE_NAMESPACE)
                    if (p.get("data") or {}).get("default")]
        if not defaults:
            raise rerr.internal("Unable to find a default NnfDataMovementProfile to use")
        if len(defaults) > 1:
            raise rerr.internal(f"More than one default NnfDataMovementProfile found; unable"
                                f" to pick one: [{' '.join(sorted(defaults))}]")
        return self.store.get(RESOURCE["dmprofile"], PROFILE_NAMESPACE, defaults[0])

    # --- DataIn / DataOut ------------------------------------------------------

    def datain(self, wf: dict[str, Any], d: Directive) -> None:
        self._stage(wf, d, DATA_IN)

    def dataout(self, wf: dict[str, Any], d: Directive) -> None:
        self._stage(wf, d, DATA_OUT)

    def _stage(self, wf: dict[str, Any], d: Directive, state: str) -> None:
        sel = ",".join(f"{k}={v}" for k, v in {
            **{k: v for k, v in child_labels(wf).items() if k in OWNER_LABELS},
            DIRECTIVE_INDEX_LABEL: str(d.index), TEARDOWN_STATE_LABEL: state}.items())
        dms = self.store.list_objects(RESOURCE["dm"], None, sel)
        if not dms:
            self._start(wf, d, state)
            dms = self.store.list_objects(RESOURCE["dm"], None, sel)
            if not dms:
                raise Wait("pending data movement", after=2.0)
        for dm in dms:
            if (dm.get("status") or {}).get("state") != "Finished":
                raise Wait("pending data movement")
        for dm in dms:
            status = dm.get("status") or {}
            if status.get("status") != "Success":
                raise rerr.internal(f"data movement operation failed during '{state}',"
                                    f" message: {status.get('message', '')}")

    def _resolve(self, wf: dict[str, Any], param: str) -> tuple[dict[str, Any], str, str, str]:
        """(storage reference, file system type, rabbit mount, path) of a staging
        argument; the mount is "" for a global Lustre path."""
        ns = wf["metadata"]["namespace"]
        name, path = split_staging(param)
        if name:
            persistent = param.startswith("$DW_PERSISTENT_")
            command = "persistentdw" if persistent else "jobdw"
            parent = next((x for x in self.ctl.directives(wf)
                           if x.command == command and x.args.get("name") == name), None)
            if parent is None:
                raise rerr.user(f"no directive matching '{name}' found in workflow")
            storage_name = name if persistent else f"{wf['metadata']['name']}-{parent.index}"
            try:
                storage = self.store.get(RESOURCE["nnfstorage"], ns, storage_name)
            except ApiError:
                raise rerr.internal("could not find storage allocation",
                                    f"could not get NnfStorage {ns}/{storage_name}",
                                    severity="Minor") from None
            fs = str(storage.get("spec", {}).get("fileSystemType", ""))
            mount = go_clean(f"/{SERVER_MOUNT_PREFIX}/{wf['metadata'].get('uid', '')}"
                             f"-{parent.index}")
            ref = {"kind": "NnfStorage", "name": storage_name, "namespace": ns}
            return ref, fs, mount, path
        for lus in self.store.list_objects(RESOURCE["lustre"], None):
            root = str(lus.get("spec", {}).get("mountRoot", ""))
            if root and (param == root or param.startswith(root.rstrip("/") + "/")):
                return ({"kind": "LustreFileSystem", "name": lus["metadata"]["name"],
                         "namespace": lus["metadata"].get("namespace", "")}, "lustre", "",
                        param)
        raise rerr.user(f"Staging parameter '{param}' is invalid")

    def _start(self, wf: dict[str, Any], d: Directive, state: str) -> None:
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        try:
            src_ref, src_fs, src_mount, src_path = self._resolve(wf, d.args.get("source", ""))
            dst_ref, dst_fs, dst_mount, dst_path = self._resolve(wf,
                                                                 d.args.get("destination", ""))
        except rerr.ResourceError as err:
            raise rerr.ResourceError(err.user_message or "could not prepare data movement"
                                     " resources", err.debug_message, err.type,
                                     err.severity) from None
        if not self.exists(RESOURCE["dmmanager"], DM_NAMESPACE, DM_MANAGER):
            raise rerr.internal("could not determine data movement readiness",
                                f"could not get NnfDataMovementManager"
                                f" {DM_NAMESPACE}/{DM_MANAGER}", severity="Minor")
        target_ref, fs = (dst_ref, dst_fs) if state == DATA_IN else (src_ref, src_fs)
        pinned = f"{name}-{d.index}"
        if not self.exists(RESOURCE["dmprofile"], ns, pinned):
            raise rerr.internal("could not find data movement profile",
                                f"could not get NnfDataMovementProfile {pinned}",
                                severity="Minor")
        labels = {**child_labels(wf, d.index), TEARDOWN_STATE_LABEL: state,
                  INITIATOR_LABEL: d.command,
                  JOB_ID_LABEL: str(wf["spec"].get("jobID", "")).replace(" ", "-")}

        def dm(dm_name: str, dm_ns: str, src: str, dst: str) -> dict[str, Any]:
            return {"apiVersion": f"{NNF}/v1alpha11", "kind": "NnfDataMovement",
                    "metadata": {"name": dm_name, "namespace": dm_ns, "labels": labels},
                    "spec": {"source": {"path": src, "storageReference": src_ref},
                             "destination": {"path": dst, "storageReference": dst_ref},
                             "userId": wf["spec"].get("userID", 0),
                             "groupId": wf["spec"].get("groupID", 0), "cancel": False,
                             "profileReference": {"kind": "NnfDataMovementProfile",
                                                  "name": pinned, "namespace": ns}}}

        def rel(mount: str, path: str, subdir: str) -> str:
            """The path as the rabbit sees it (getRabbitRelativePath)."""
            if not mount:
                return path  # a global Lustre path
            out = posixpath.join(mount, subdir, path.lstrip("/")) if subdir else \
                posixpath.join(mount, path.lstrip("/"))
            out = go_clean(out)
            return out + "/" if path.endswith("/") else out

        created: list[tuple[str, str]] = []
        if target_ref["kind"] == "NnfStorage" and fs in ("xfs", "gfs2"):
            storage = self.store.get(RESOURCE["nnfstorage"], ns, target_ref["name"])
            sets = storage.get("spec", {}).get("allocationSets") or []
            if len(sets) != 1:
                raise rerr.internal("unexpected allocation count",
                                    f"file system {fs} has unexpected allocation sets"
                                    f" {len(sets)}")
            for node in sets[0].get("nodes") or []:
                rabbit = node["name"]
                for k in range(int(node.get("count", 1))):
                    sub = f"{rabbit}-{k}"
                    self.create_quiet(RESOURCE["dm"], rabbit, dm(
                        f"{pinned}-{k}", rabbit,
                        rel(src_mount, src_path, sub if src_fs in ("xfs", "gfs2") else ""),
                        rel(dst_mount, dst_path, sub if dst_fs in ("xfs", "gfs2") else "")))
                    created.append((rabbit, f"{pinned}-{k}"))
        else:
            self.create_quiet(RESOURCE["dm"], DM_NAMESPACE, dm(pinned, DM_NAMESPACE,
                                                        rel(src_mount, src_path, ""),
                                                        rel(dst_mount, dst_path, "")))
            created.append((DM_NAMESPACE, pinned))
        for dm_ns, dm_name in created:
            self.ctl.dmworker.start(dm_ns, dm_name, name, state, d.index)

    # --- Teardown and deletion -------------------------------------------------

    def teardown(self, wf: dict[str, Any], d: Directive) -> None:
        self.delete_labelled(RESOURCE["dm"], wf, d.index)

    def delete(self, wf: dict[str, Any]) -> None:
        self.delete_labelled(RESOURCE["dm"], wf, None)
        self.delete_labelled(RESOURCE["dmprofile"], wf, None)


class DataMovementWorker:
    """nnf-dm: runs (pretends to run) each NnfDataMovement."""

    def __init__(self, ctl: DriverContext, seconds: float = 0.0) -> None:
        self.ctl = ctl
        self.seconds = seconds
        self._lock = threading.Lock()
        self._held: set[tuple[str, str]] = set()  # (namespace, name) held by a hold fault

    def start(self, ns: str, name: str, wf: str, state: str, index: int) -> None:
        fault = self.ctl.faults.take_dm(wf, state, index)
        now = microtime(dt.datetime.now(dt.timezone.utc))
        self._status(ns, name, {"state": "Running", "startTime": now, "restarts": 0,
                                "commandStatus": {"command": "mpirun dcp", "progress": 0}})
        if fault is not None and fault.severity == "hold":  # moves until released
            with self._lock:
                self._held.add((ns, name))
            self._progress_later(ns, name, time.monotonic(), fault.seconds or HOLD_SECONDS)
            return
        if fault is not None and fault.severity == "stall":
            if fault.seconds > 0:  # a copy that moves, then stops moving
                self._progress_later(ns, name, time.monotonic(), 2 * fault.seconds,
                                     stop=fault.seconds)
            return
        seconds = fault.seconds if fault is not None and fault.severity == "delay" \
            else self.seconds
        failed = fault.message if fault is not None and fault.severity != "delay" else None
        if seconds > 0:
            self.ctl.after(seconds, lambda: self.finish(ns, name, failed))
            if failed is None:
                self._progress_later(ns, name, time.monotonic(), seconds)
        else:
            self.finish(ns, name, failed)

    def _progress_later(self, ns: str, name: str, began: float, seconds: float,
                        stop: float | None = None) -> None:
        """dcp prints its progress about every PROGRESS_EVERY seconds; nnf-dm
        puts the last line in commandStatus (progress %, elapsedTime,
        lastMessage, lastMessageTime).  A copy that stalls (``stop``: the
        seconds after which it moves no more) prints nothing after that."""
        if stop is not None and time.monotonic() - began >= stop:
            return
        self.ctl.after(min(PROGRESS_EVERY, seconds / 4),
                       lambda: self._progress(ns, name, began, seconds, stop))

    def _progress(self, ns: str, name: str, began: float, seconds: float,
                  stop: float | None = None) -> None:
        try:
            dm = self.ctl.store.get(RESOURCE["dm"], ns, name)
        except ApiError:
            return  # deleted: cancelled by Teardown
        if (dm.get("status") or {}).get("state") != "Running":
            return
        elapsed = time.monotonic() - began
        pct = min(99, int(100 * elapsed / seconds))
        moved = EMULATED_BYTES * pct // 100
        now = microtime(dt.datetime.now(dt.timezone.utc))
        self._status(ns, name, {"commandStatus": {
            "command": "mpirun dcp", "progress": pct, "elapsedTime": f"{elapsed:.3f}s",
            "lastMessage": f"Copied {moved / GIB:.3f} GiB ({pct}%) in {elapsed:.3f} secs"
                           f" ({moved / GIB / max(elapsed, 1e-3):.3f} GiB/s)"
                           f" {max(seconds - elapsed, 0):.0f} secs left ...",
            "lastMessageTime": now}})
        self._progress_later(ns, name, began, seconds, stop)

    def release(self) -> int:
        """Let every held data movement finish now; how many."""
        with self._lock:
            held, self._held = sorted(self._held), set()
        for ns, name in held:
            self.ctl.after(0, functools.partial(self.finish, ns, name, None))
        return len(held)

    def resume(self, dm: dict[str, Any]) -> None:
        """A movement that was running when the emulator stopped."""
        md = dm["metadata"]
        labels = md.get("labels") or {}
        if "dataworkflowservices.github.io/workflow.name" not in labels \
                or DIRECTIVE_INDEX_LABEL not in labels:
            return  # not ours to run (copy offload): whoever made it finishes it
        self.start(md["namespace"], md["name"], labels["dataworkflowservices.github.io/"
                                                      "workflow.name"],
                   labels.get(TEARDOWN_STATE_LABEL, ""), int(labels[DIRECTIVE_INDEX_LABEL]))

    def finish(self, ns: str, name: str, failed: str | None) -> None:
        try:
            dm = self.ctl.store.get(RESOURCE["dm"], ns, name)
        except ApiError:
            return  # deleted: cancelled by Teardown
        if (dm.get("status") or {}).get("state") == "Finished":
            return
        now = microtime(dt.datetime.now(dt.timezone.utc))
        if dm.get("spec", {}).get("cancel"):
            status = {"status": "Cancelled", "message": "data movement was cancelled"}
        elif failed is not None:
            status = {"status": "Failed", "message": failed}
        else:
            status = {"status": "Success", "message": ""}
        self._status(ns, name, {"state": "Finished", "endTime": now, **status,
                                "commandStatus": {"command": "mpirun dcp",
                                                  "progress": 100 if failed is None else 0}})

    def _status(self, ns: str, name: str, status: dict[str, Any]) -> None:
        try:
            self.ctl.store.patch(RESOURCE["dm"], ns, name, "merge", {"status": status}, "status")
        except ApiError as exc:
            if exc.code != 404:
                raise
