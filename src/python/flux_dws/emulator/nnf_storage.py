"""nnf-sos' storage drivers: jobdw, create_persistent, persistentdw, destroy_persistent.

Per state (doc/guide/emulator.rst, "Controllers"):

Proposal  DirectiveBreakdown ``<wf>-<i>`` (ready, storage from the pinned
          profile, compute constraints) and an empty Servers (``<wf>-<i>``,
          or the PSI's name for create_persistent, owned by the PSI);
          ``status.directiveBreakdowns``.
Setup     start: the WLM's Servers are checked (dwsim.servers) and the
          NnfStorage made; finish: its allocations are ready on every
          rabbit (an ``allocation`` fault keeps a rabbit's late: "allocation
          set not ready") and reported in the Servers;
          create_persistent's PSI goes Creating -> Active; persistentdw
          adds its consumer reference.  A driver stall or delay holds the
          finish: the NnfStorage exists, no allocation is ready.
PreRun    one ClientMount per compute of the Computes object (namespace =
          compute), mounted by the emulated clientmountd; the environment
          (dwsim.env).  After a Setup the WLM forced ready (spec.forceReady)
          the computes of rabbits whose allocations are still late get a
          ClientMount with nothing to mount, as nnf-sos maps a compute only
          to the ready NnfNodeStorages of its rabbit.  A compute its
          rabbit's Storage lists Fenced fails the state (Fatal, nnf-sos'
          words: "Workflow failed: compute nodes [c] were fenced during the
          job"), checked after every mount attempt and after the unmount.
PostRun   the ClientMounts are unmounted; data movements the job started
          itself (copy offload, labelled for PostRun) must finish, and any
          that failed fail the state ("data movement failed").
Teardown  the directive's ClientMounts, NnfAccess and NnfStorage go (its
          breakdown and Servers stay until the Workflow is deleted);
          create_persistent leaves the PSI alive, destroy_persistent removes
          it (owner and in-use checks), persistentdw drops its reference.

ClientMounts are mounted and unmounted by ``ClientMountDaemon`` (below),
which honours per-compute faults and a mount delay; the driver waits for
every ClientMount of the directive to report ready, and fails with the
ClientMount's error as nnf-sos does.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from flux_dws.apiserver.store import ApiError
from flux_dws.dwsim import breakdown as nnf_breakdown
from flux_dws.dwsim import env as nnf_env
from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim import servers as nnf_servers
from flux_dws.dwsim import storage as nnf_storage_status
from flux_dws.dwsim import workflow as dws
from flux_dws.dwsim.gotime import parse_microtime
from flux_dws.emulator import nnf_servers as servers_controller
from flux_dws.emulator.driver import (
    DIRECTIVE_INDEX_LABEL,
    DWS,
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
    workflow_labels,
)
from flux_dws.emulator.nnf_container import TLS_SECRET, interpret_requires
from flux_dws.libdws.wfstates import POST_RUN, PRE_RUN, TEARDOWN

STORAGE_COMMANDS = ("jobdw", "create_persistent")
TEARDOWN_STATE_LABEL = "nnf.cray.hpe.com/teardown_state"
TARGET_INDEX_LABEL = "nnf.cray.hpe.com/target_directive_index"
STANDALONE_MGT_LABEL = "nnf.cray.hpe.com/standalone_mgt"
PINNED_PROFILE_LABELS = ("nnf.cray.hpe.com/pinned_storage_profile_name",
                         "nnf.cray.hpe.com/pinned_storage_profile_namespace")


class StorageDriver(Driver):
    commands = ("jobdw", "create_persistent", "persistentdw", "destroy_persistent")

    # --- Proposal ------------------------------------------------------------

    def proposal(self, wf: dict[str, Any], d: Directive) -> None:
        if d.command == "destroy_persistent":
            return
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        if d.args.get("requires"):
            self._requires(wf, d.args["requires"])
        dbd_name = f"{name}-{d.index}"
        labels = {**workflow_labels(wf), DIRECTIVE_INDEX_LABEL: str(d.index),
                  JOB_ID_LABEL: str(wf["spec"].get("jobID", "")).replace(" ", "-")}
        # the breakdown first: what goes wrong building it shows in its status.error
        self.create_quiet(RESOURCE["breakdown"], ns, {
            "apiVersion": f"{DWS}/v1alpha7", "kind": "DirectiveBreakdown",
            "metadata": {"name": dbd_name, "labels": labels, "ownerReferences": owner_refs(wf)},
            "spec": {"directive": d.text, "userID": wf["spec"].get("userID")}})
        dbd = self.store.get(RESOURCE["breakdown"], ns, dbd_name)
        refs = wf["status"].setdefault("directiveBreakdowns", [])
        ref = {"kind": "DirectiveBreakdown", "name": dbd_name, "namespace": ns}
        if ref not in refs:
            refs.append(ref)
        try:
            status = self._breakdown_status(wf, d, dbd, labels)
        except rerr.ResourceError as err:
            self.store.patch(RESOURCE["breakdown"], ns, dbd_name, "merge", {"status": {
                "ready": False, "error": {"userMessage": err.user_message,
                                          "debugMessage": err.debug_message or err.user_message,
                                          "type": err.type, "severity": err.severity}}},
                "status")
            raise
        status["error"] = None
        self.store.patch(RESOURCE["breakdown"], ns, dbd_name, "merge", {"status": status}, "status")

    def _breakdown_status(self, wf: dict[str, Any], d: Directive, dbd: dict[str, Any],
                          labels: dict[str, str]) -> dict[str, Any]:
        """The DirectiveBreakdown's status, with the pinned profile, PSI and
        Servers it stands for (§3.1)."""
        ns, dbd_name = wf["metadata"]["namespace"], dbd["metadata"]["name"]
        by_dbd = [{"apiVersion": f"{DWS}/v1alpha7", "kind": "DirectiveBreakdown",
                   "name": dbd_name, "uid": dbd["metadata"]["uid"], "controller": True,
                   "blockOwnerDeletion": True}]
        status: dict[str, Any] = {"ready": True}
        if d.command == "jobdw":
            profile = self._pin_profile(ns, dbd_name, d.args.get("profile"), by_dbd, labels)
            sets = nnf_breakdown.storage_breakdown(d.text, profile)
            status["storage"] = {"lifetime": "job", "allocationSets": sets, "reference": {
                "kind": "Servers", "name": dbd_name, "namespace": ns}}
            status["compute"] = nnf_breakdown.compute_breakdown(d.text, profile, dbd_name,
                                                                ns, sets)
            # Servers inherit the breakdown's labels and belong to it
            self.create_quiet(RESOURCE["servers"], ns, {
                "apiVersion": f"{DWS}/v1alpha7", "kind": "Servers",
                "metadata": {"name": dbd_name, "labels": labels, "ownerReferences": by_dbd},
                "spec": {}})
        elif d.command == "create_persistent":
            psi_name = d.args["name"]
            source = self.ctl.storage_profile(d.args.get("profile"))
            sets = nnf_breakdown.storage_breakdown(d.text, source)
            psi = self._create_psi(wf, d, source, {**labels, **child_labels(wf, d.index)},
                                   by_dbd)
            by_psi = [{"apiVersion": f"{DWS}/v1alpha7", "kind": "PersistentStorageInstance",
                       "name": psi_name, "uid": psi["metadata"]["uid"], "controller": True,
                       "blockOwnerDeletion": True}]
            psi_labels = {"dataworkflowservices.github.io/persistentstorage.name": psi_name,
                          "dataworkflowservices.github.io/persistentstorage.namespace": ns}
            self._pin_profile(ns, psi_name, d.args.get("profile"), by_psi, psi_labels)
            status["storage"] = {"lifetime": "persistent", "allocationSets": sets,
                                 "reference": {"kind": "Servers", "name": psi_name,
                                               "namespace": ns}}
            self.create_quiet(RESOURCE["servers"], ns, {
                "apiVersion": f"{DWS}/v1alpha7", "kind": "Servers",
                "metadata": {"name": psi_name, "labels": psi_labels, "ownerReferences": by_psi},
                "spec": {}})
        elif d.command == "persistentdw":
            status["compute"] = nnf_breakdown.persistent_compute_breakdown(
                self._psi_servers(ns, d.args["name"]), ns)
        if d.args.get("requires") and d.command != "create_persistent":
            status["requires"] = d.args["requires"].split(",")
        return status

    def _pin_profile(self, ns: str, name: str, profile: str | None,
                     owner: list[dict[str, Any]], labels: dict[str, str]) -> dict[str, Any]:
        """Copy the NnfStorageProfile to use (``profile=`` or the default) to
        ``ns/name`` with ``pinned: true``; later states read the copy, so an
        admin editing nnf-system's profiles does not change a running job."""
        try:
            existing = self.store.get(RESOURCE["profile"], ns, name)
        except ApiError:
            existing = None
        if existing is not None:
            data: dict[str, Any] = existing.get("data") or {}
            if not data.get("pinned"):
                raise rerr.internal("", f"Expected pinned NnfStorageProfile, but it was not"
                                        f" pinned: {name}")
            return data
        data = dict(self.ctl.storage_profile(profile))
        data.update(pinned=True, default=False)
        self.create_quiet(RESOURCE["profile"], ns, {
            "apiVersion": f"{NNF}/v1alpha11", "kind": "NnfStorageProfile",
            "metadata": {"name": name, "labels": labels, "ownerReferences": owner},
            "data": data})
        return data

    def pinned_profile(self, wf: dict[str, Any], d: Directive) -> dict[str, Any]:
        """The data of the profile pinned for a jobdw (``<wf>-<i>``) or for the
        persistent storage a persistentdw names (``<name>``)."""
        ns = wf["metadata"]["namespace"]
        name = d.args["name"] if d.command == "persistentdw" else \
            f"{wf['metadata']['name']}-{d.index}"
        try:
            return self.store.get(RESOURCE["profile"], ns, name).get("data") or {}
        except ApiError:
            raise rerr.internal("", f"could not find pinned NnfStorageProfile {ns}/{name}",
                                severity="Minor") from None

    def _requires(self, wf: dict[str, Any], requires: str) -> None:
        """requires=copy-offload / user-container-auth: status.requires words,
        which need the site's user-container TLS secret."""
        words = interpret_requires(requires)
        have = wf["status"].setdefault("requires", [])
        have += [w for w in words if w not in have]
        if not have:
            del wf["status"]["requires"]
        if words and not self.exists(RESOURCE["secret"], *TLS_SECRET):
            raise rerr.internal("", "the administrator must configure the user container TLS"
                                    " secret for the system. See the copy-offload docs")

    # --- Setup ---------------------------------------------------------------

    def setup(self, wf: dict[str, Any], d: Directive) -> None:
        if d.command == "persistentdw":
            return self._consume(wf, d.index, d.args["name"], add=True)
        if d.command not in STORAGE_COMMANDS:
            return None
        name, servers, dbd = self._check_servers(wf, d)
        late, again = self._late_rabbits(wf, d, servers)
        self._nnf_storage(wf, d, name, servers, dbd, late)
        if late:
            raise Wait("allocation set not ready", after=min(again) if again else None)
        if d.command == "create_persistent":
            ns = wf["metadata"]["namespace"]
            self.store.patch(RESOURCE["psi"], ns, name, "merge", {"status": {"state": "Active"}},
                             "status")
        return None

    def setup_start(self, wf: dict[str, Any], d: Directive) -> None:
        """nnf-sos' start of Setup alone (a stall or delay fault holds its
        finish): the Servers checked and the NnfStorage made, with no
        allocation ready."""
        if d.command in STORAGE_COMMANDS:
            name, servers, dbd = self._check_servers(wf, d)
            self._nnf_storage(wf, d, name, servers, dbd, sorted(_rabbits_of(servers)))

    def _check_servers(self, wf: dict[str, Any],
                       d: Directive) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """The storage's name, its Servers and its breakdown, once nnf-sos'
        checks of the Servers passed."""
        ns, dbd_name = wf["metadata"]["namespace"], f"{wf['metadata']['name']}-{d.index}"
        name = dbd_name if d.command == "jobdw" else d.args["name"]
        try:
            dbd = self.store.get(RESOURCE["breakdown"], ns, dbd_name)
        except ApiError:
            raise rerr.internal("could not read allocation request", f"unable to get"
                                f" DirectiveBreakdown: {ns}/{dbd_name}", severity="Minor") \
                from None
        try:
            servers = self.store.get(RESOURCE["servers"], ns, name)
        except ApiError:
            raise rerr.internal("could not read allocation request",
                                f"unable to get Servers: {ns}/{name}", severity="Minor") from None
        sets = dbd.get("status", {}).get("storage", {}).get("allocationSets", [])
        rabbits = [o["metadata"]["name"] for o in self.store.view(RESOURCE["storage"],
                                                                  "default")]
        nnf_servers.validate_allocations(sets, servers.get("spec", {}), rabbits)
        return name, servers, dbd

    def _late_rabbits(self, wf: dict[str, Any], d: Directive,
                      servers: dict[str, Any]) -> tuple[list[str], list[float]]:
        """The rabbits whose allocations an ``allocation`` fault holds, and
        in how many seconds the delayed ones are due."""
        waited = self.ctl.waited(wf)
        late: list[str] = []
        again: list[float] = []
        for rabbit in sorted(_rabbits_of(servers)):
            fault = self.ctl.faults.take_allocation(wf["metadata"]["name"], d.index, rabbit,
                                                    waited)
            if fault is None or (fault.severity == "delay" and waited >= fault.seconds):
                continue
            late.append(rabbit)
            if fault.severity == "delay":
                again.append(fault.seconds - waited)
        return late, again

    def _nnf_storage(self, wf: dict[str, Any], d: Directive, name: str,
                     servers: dict[str, Any], dbd: dict[str, Any], late: list[str]) -> None:
        """The NnfStorage nnf-sos makes from the Servers (data movement reads
        it), ready but for the allocations of the ``late`` rabbits; then
        nnf-sos' Servers controller sees the allocations (done here at once,
        so the Servers are ready when Setup is)."""
        ns = wf["metadata"]["namespace"]
        pending = ",".join(late) or None
        try:
            old = self.store.get(RESOURCE["nnfstorage"], ns, name)
        except ApiError:
            self._create_nnf_storage(wf, d, name, servers, dbd, pending)
        else:
            if (old["metadata"].get("annotations") or {}).get(servers_controller.PENDING) \
                    != pending:
                self.store.patch(RESOURCE["nnfstorage"], ns, name, "merge", {
                    "metadata": {"annotations": {servers_controller.PENDING: pending}}})
            if bool((old.get("status") or {}).get("ready")) != (not late):
                self.store.patch(RESOURCE["nnfstorage"], ns, name, "merge",
                                 {"status": {"ready": not late}}, "status")
        servers_controller.reconcile(self.store, ns, name)

    def _create_nnf_storage(self, wf: dict[str, Any], d: Directive, name: str,
                            servers: dict[str, Any], dbd: dict[str, Any],
                            pending: str | None) -> None:
        ns = wf["metadata"]["namespace"]
        sets = dbd.get("status", {}).get("storage", {}).get("allocationSets", [])
        labels = {**child_labels(wf, d.index),
                  JOB_ID_LABEL: str(wf["spec"].get("jobID", "")).replace(" ", "-"),
                  # the pinned profile has the NnfStorage's name
                  PINNED_PROFILE_LABELS[0]: name, PINNED_PROFILE_LABELS[1]: ns}
        owner = owner_refs(wf)
        if d.command == "create_persistent":
            psi = self.store.get(RESOURCE["psi"], ns, name)
            owner = [{"apiVersion": f"{DWS}/v1alpha7", "kind": "PersistentStorageInstance",
                      "name": name, "uid": psi["metadata"]["uid"], "controller": True,
                      "blockOwnerDeletion": True}]
        spec_sets = []
        for i, s in enumerate(servers.get("spec", {}).get("allocationSets") or []):
            label = s.get("label") or (sets[i].get("label") if i < len(sets) else "")
            spec_sets.append({
                "name": label, "capacity": s.get("allocationSize", 0),
                "targetType": label if d.args.get("type") == "lustre" else "",
                "sharedAllocation": False,
                "nodes": [{"name": n.get("name"), "count": n.get("allocationCount", 1)}
                          for n in s.get("storage") or []]})
        metadata: dict[str, Any] = {"name": name, "labels": labels, "ownerReferences": owner}
        if pending:
            metadata["annotations"] = {servers_controller.PENDING: pending}
        self.store.create(RESOURCE["nnfstorage"], ns, {
            "apiVersion": f"{NNF}/v1alpha11", "kind": "NnfStorage", "metadata": metadata,
            "spec": {"fileSystemType": d.args.get("type", ""),
                     "userID": wf["spec"].get("userID", 0),
                     "groupID": wf["spec"].get("groupID", 0), "allocationSets": spec_sets}})
        self.store.patch(RESOURCE["nnfstorage"], ns, name, "merge", {"status": {
            "ready": not pending, "allocationSets": [{"allocationCount": sum(
                n["count"] for n in s["nodes"])} for s in spec_sets]}}, "status")

    # --- persistent storage (PSI) ---------------------------------------------

    def _create_psi(self, wf: dict[str, Any], d: Directive, profile: dict[str, Any],
                    labels: dict[str, str], owner: list[dict[str, Any]]) -> dict[str, Any]:
        ns, name = wf["metadata"]["namespace"], d.args["name"]
        if self.exists(RESOURCE["psi"], ns, name):
            psi = self.store.get(RESOURCE["psi"], ns, name)
            if psi.get("spec", {}).get("userID") != wf["spec"].get("userID"):
                raise rerr.user("User ID does not match existing persistent storage")
            return psi
        labels = dict(labels)
        pool = (profile.get("lustreStorage") or {}).get("mgtOptions", {}).get(
            "standaloneMgtPoolName")
        if d.args.get("type") == "lustre" and pool:
            # a standalone MGT for a pool: other file systems find it by this label
            labels[STANDALONE_MGT_LABEL] = pool
        psi = self.store.create(RESOURCE["psi"], ns, {
            "apiVersion": f"{DWS}/v1alpha7", "kind": "PersistentStorageInstance",
            "metadata": {"name": name, "labels": labels, "ownerReferences": owner},
            "spec": {"name": name, "fsType": d.args.get("type", ""), "dwDirective": d.text,
                     "userID": wf["spec"].get("userID"), "state": "Active",
                     "consumerReferences": []}})
        self.store.patch(RESOURCE["psi"], ns, name, "merge", {"status": {
            "state": "Creating", "servers": {"kind": "Servers", "name": name,
                                             "namespace": ns}}}, "status")
        return psi

    def _consume(self, wf: dict[str, Any], index: int, name: str, add: bool) -> None:
        """Add (Setup) or remove (Teardown) a persistentdw consumer reference."""
        ns = wf["metadata"]["namespace"]
        try:
            psi = self.store.get(RESOURCE["psi"], ns, name)
        except ApiError:
            if not add:
                return
            raise rerr.user(f"PersistentStorage '{name}' not found", severity="Major") from None
        if add and (psi.get("status") or {}).get("state") != "Active":
            # Creating, Degraded or Destroying (the user ID was checked at Proposal,
            # where the ignore-uid annotation applies)
            raise rerr.user("PersistentStorage is not active")
        ref = {"kind": "Workflow", "name": f"{wf['metadata']['name']}-{index}",
               "namespace": ns}
        refs = [r for r in psi["spec"].get("consumerReferences") or [] if r != ref]
        if add:
            refs.append(ref)
        if refs != (psi["spec"].get("consumerReferences") or []):
            # on the version read, as nnf-sos' Update: two users' Setups at
            # once must not lose a reference (409: the reconcile runs again)
            self.store.patch(RESOURCE["psi"], ns, name, "merge", {
                "metadata": {"resourceVersion": psi["metadata"]["resourceVersion"]},
                "spec": {"consumerReferences": refs}})

    def _release_psi(self, wf: dict[str, Any], index: int, name: str) -> None:
        """create_persistent at Teardown: the PSI outlives the workflow."""
        ns = wf["metadata"]["namespace"]
        try:
            psi = self.store.get(RESOURCE["psi"], ns, name)
        except ApiError:
            return
        # made by this directive: its breakdown owns it until now
        dbd = f"{wf['metadata']['name']}-{index}"
        mine = any(o.get("kind") == "DirectiveBreakdown" and o.get("name") == dbd
                   for o in psi["metadata"].get("ownerReferences") or [])
        drivers = wf["status"].get("drivers") or []
        if not all(d["completed"] for d in drivers if d["watchState"] != TEARDOWN):
            # the creation never finished: nnf-sos leaves the half-made storage
            # to its breakdown, which takes it along when the Workflow goes
            return
        if mine:
            drop = {*OWNER_LABELS, DIRECTIVE_INDEX_LABEL}
            self.store.patch(RESOURCE["psi"], ns, name, "merge", {"metadata": {
                "ownerReferences": None,
                "labels": {k: None for k in psi["metadata"].get("labels") or {} if k in drop}}})

    def _destroy_psi(self, wf: dict[str, Any], name: str) -> None:
        ns = wf["metadata"]["namespace"]
        try:
            psi = self.store.get(RESOURCE["psi"], ns, name)
        except ApiError:
            return  # already gone: success
        if psi["spec"].get("userID") != wf["spec"].get("userID"):
            raise rerr.user("user ID does not match existing persistent storage")
        if psi["spec"].get("consumerReferences"):
            raise rerr.user("persistent storage cannot be deleted while in use")
        self.store.patch(RESOURCE["psi"], ns, name, "merge", {
            "metadata": {"resourceVersion": psi["metadata"]["resourceVersion"]},
            "spec": {"state": "Destroying"}})
        self.store.patch(RESOURCE["psi"], ns, name, "merge", {"status": {"state": "Destroying"}},
                         "status")
        # nnf-sos' PersistentStorageInstance controller deletes its children
        # (NnfStorage, Servers, the pinned profile) before the instance goes;
        # an API server with no garbage collector running keeps them otherwise
        for r in ("nnfstorage", "servers", "profile"):
            self.delete_quiet(RESOURCE[r], ns, name)
        self.delete_quiet(RESOURCE["psi"], ns, name)

    # --- PreRun / PostRun: ClientMounts ---------------------------------------

    def prerun(self, wf: dict[str, Any], d: Directive) -> None:
        if d.command not in ("jobdw", "persistentdw"):
            return
        fs = d.args.get("type", "")
        if d.command == "persistentdw":
            fs = self._psi_type(wf, d.args["name"])
        profile = self.pinned_profile(wf, d)
        path = nnf_env.mount_path(wf, profile, fs, d.index)
        # nnf-sos publishes the environment before the mounts are done
        wf["status"]["env"] = nnf_env.add_storage_env(wf["status"].get("env") or {},
                                                      d.text, path)
        targets = ["computes", "servers"] if fs in ("gfs2", "lustre", "raw") else ["computes"]
        late = self._need_storage(wf, d, path, targets)
        self._enough_allocations(wf, d, path, fs)
        if "servers" in targets:
            self._access(wf, d, "servers", "mounted", path, ready=True)
        self._mount_computes(wf, d, "mounted", path, fs, frozenset() if fs == "lustre" else late)

    def _need_storage(self, wf: dict[str, Any], d: Directive, path: str,
                      targets: list[str]) -> frozenset[str]:
        """nnf-sos' NnfAccess controller reads the NnfStorage it mounts before
        anything else.  Missing (a Setup that never made it, forced ready by
        the WLM): the Get's NotFound becomes the accesses' status.error, a
        Minor Internal error without a user message that the workflow shows
        (DriverWait, ``Internal error: ``) and that is retried, so PreRun never
        becomes ready.  Made, with some rabbits' allocations late (a Setup
        the WLM forced ready): the computes those rabbits serve, which
        nnf-sos gives nothing to mount (it maps a compute only to the ready
        NnfNodeStorages of its rabbit).  Not ready, with nothing said per
        rabbit: the accesses wait (``pending mount``)."""
        ns = wf["metadata"]["namespace"]
        name = d.args["name"] if d.command == "persistentdw" else \
            f"{wf['metadata']['name']}-{d.index}"
        try:
            storage = self.store.get(RESOURCE["nnfstorage"], ns, name)
        except ApiError:
            err = rerr.internal("", f'nnfstorages.nnf.cray.hpe.com "{name}" not found',
                                severity="Minor")
            for target in targets:
                self._access(wf, d, target, "mounted", path, ready=False, error={
                    "debugMessage": err.debug_message, "type": err.type,
                    "severity": err.severity})
            raise err from None
        if (storage.get("status") or {}).get("ready"):
            return frozenset()
        pending = servers_controller.pending_rabbits(storage)
        if pending is None:
            for target in targets:
                self._access(wf, d, target, "mounted", path, ready=False)
            raise Wait("pending mount")
        return frozenset(str(c["name"]) for r in pending
                         for c in self._rabbit_access(r) if c.get("name"))

    def _enough_allocations(self, wf: dict[str, Any], d: Directive, path: str,
                            fs: str) -> None:
        """nnf-sos maps each compute to one allocation of its rabbit; a
        rabbit given fewer allocations than the job has computes on it
        fails the computes' NnfAccess ("Too many clients for storage", a
        WLM error) while the Workflow only waits (``pending mount``), for
        ever: the referee saw it so on the real controllers.  Lustre is
        mounted over the network, not per allocation."""
        if d.command != "jobdw" or fs == "lustre":
            return
        try:
            servers = self.store.get(RESOURCE["servers"], wf["metadata"]["namespace"],
                                     f"{wf['metadata']['name']}-{d.index}")
        except ApiError:
            return
        computes = set(self.ctl.computes(wf))
        served = {r: sum(1 for c in self._rabbit_access(r) if c.get("name") in computes)
                  for r in _rabbits_of(servers)}
        if nnf_servers.short_rabbits(servers.get("spec") or {}, served):
            err = rerr.wlm(nnf_servers.TOO_MANY_CLIENTS)
            self._access(wf, d, "computes", "mounted", path, ready=False, error={
                "userMessage": err.user_message, "type": err.type, "severity": err.severity})
            raise Wait("pending mount")

    def _rabbit_access(self, rabbit: str) -> list[dict[str, Any]]:
        """The computes a rabbit's Storage says it serves."""
        try:
            storage = self.store.get(RESOURCE["storage"], "default", rabbit)
        except ApiError:
            return []
        computes: list[dict[str, Any]] = ((storage.get("status") or {}).get("access") or {}).get(
            "computes") or []
        return computes

    def postrun(self, wf: dict[str, Any], d: Directive) -> None:
        if d.command not in ("jobdw", "persistentdw"):
            return
        fs = d.args.get("type", "") if d.command == "jobdw" else \
            self._psi_type(wf, d.args["name"])
        self._mount_computes(wf, d, "unmounted", None, fs)
        # data movement the job started itself (copy offload) must end before
        # the rabbits unmount (the movements use their mounts)
        owner = {k: v for k, v in child_labels(wf).items() if k in OWNER_LABELS}
        sel = ",".join(f"{k}={v}" for k, v in {**owner, TEARDOWN_STATE_LABEL: POST_RUN}.items())
        movements = self.store.view(RESOURCE["dm"], None, sel)
        for dm in movements:
            if (dm.get("status") or {}).get("state") != "Finished":
                raise Wait("pending data movement")
        for dm in movements:
            if (dm.get("status") or {}).get("status") == "Failed":
                raise rerr.internal("data movement failed", f"data movement"
                                    f" {dm['metadata'].get('namespace')}/"
                                    f"{dm['metadata']['name']} failed")
        servers = self._get_access(wf, d, "servers")
        if servers is not None and servers["spec"].get("teardownState") == POST_RUN:
            self._access(wf, d, "servers", "unmounted", None, ready=True)

    def _mount_computes(self, wf: dict[str, Any], d: Directive, desired: str,
                        path: str | None, fs: str,
                        nothing: frozenset[str] = frozenset()) -> None:
        """The computes' NnfAccess and its ClientMounts (those of ``nothing``
        with nothing to mount); the access mirrors them."""
        def fail(err: rerr.ResourceError) -> rerr.ResourceError:
            self._access(wf, d, "computes", desired, path, ready=False, error={
                "userMessage": err.user_message, "debugMessage": err.debug_message,
                "type": err.type, "severity": err.severity})
            return err

        # nnf-sos checks for fenced computes after every mount attempt (its
        # error wins over a mount error or a wait) and after an unmount
        # completes (an unmount error comes first)
        try:
            self._clientmounts(wf, d.index, desired, path, fs, nothing)
        except rerr.ResourceError as err:
            raise fail((self._fenced(wf) if desired == "mounted" else None) or err) from None
        except Wait:
            fenced = self._fenced(wf) if desired == "mounted" else None
            if fenced is not None:
                raise fail(fenced) from None
            self._access(wf, d, "computes", desired, path, ready=False)
            raise
        fenced = self._fenced(wf)
        if fenced is not None:
            raise fail(fenced)
        self._access(wf, d, "computes", desired, path, ready=True)

    def _fenced(self, wf: dict[str, Any]) -> rerr.ResourceError | None:
        """nnf-sos' error when some of the Workflow's computes are fenced
        (their rabbit's Storage lists them Fenced), else None."""
        fenced = nnf_storage_status.fenced_computes(
            self.store.view(RESOURCE["storage"], "default"), self.ctl.computes(wf))
        return nnf_storage_status.fence_error(fenced) if fenced else None

    def _get_access(self, wf: dict[str, Any], d: Directive, target: str) -> dict[str, Any] | None:
        try:
            return self.store.get(RESOURCE["access"], wf["metadata"]["namespace"],
                                  f"{wf['metadata']['name']}-{d.index}-{target}")
        except ApiError:
            return None

    def _access(self, wf: dict[str, Any], d: Directive, target: str, desired: str,
                path: str | None, ready: bool, error: dict[str, Any] | None = None) -> None:
        """NnfAccess ``<wf>-<i>-computes`` (single target, ClientMounts on the
        Computes) or ``-servers`` (the rabbits, for gfs2/lustre/raw), as
        nnf-sos keeps them; a WLM may read them, nothing here depends on them."""
        ns, name = wf["metadata"]["namespace"], f"{wf['metadata']['name']}-{d.index}-{target}"
        acc = self._get_access(wf, d, target)
        if acc is None:
            if desired != "mounted":
                return
            storage = d.args["name"] if d.command == "persistentdw" else \
                f"{wf['metadata']['name']}-{d.index}"
            later = any(x.command in ("copy_out", "container") for x in self.ctl.directives(wf))
            acc = self.store.create(RESOURCE["access"], ns, {
                "apiVersion": f"{NNF}/v1alpha11", "kind": "NnfAccess",
                "metadata": {"name": name, "labels": {
                    **child_labels(wf, d.index),
                    JOB_ID_LABEL: str(wf["spec"].get("jobID", "")).replace(" ", "-")},
                    "ownerReferences": owner_refs(wf)},
                "spec": {"desiredState": "mounted", "target": "single" if target == "computes"
                         else "all", "userID": wf["spec"].get("userID", 0),
                         "groupID": wf["spec"].get("groupID", 0), "mountPath": path or "",
                         "mountPathPrefix": path or "",
                         "makeClientMounts": target == "computes",
                         "teardownState": TEARDOWN if target == "servers" and later
                         else POST_RUN,
                         "clientReference": {"kind": "Computes", "name": wf["metadata"]["name"],
                                             "namespace": ns} if target == "computes" else {},
                         "storageReference": {"kind": "NnfStorage", "name": storage,
                                              "namespace": ns}}})
        if acc["spec"].get("desiredState") != desired:
            acc = self.store.patch(RESOURCE["access"], ns, name, "merge",
                                   {"spec": {"desiredState": desired}})
        status = {"state": desired, "ready": ready, "error": error}
        if any((acc.get("status") or {}).get(k) != v for k, v in status.items()):
            self.store.patch(RESOURCE["access"], ns, name, "merge", {"status": status}, "status")

    def _psi_servers(self, ns: str, name: str) -> dict[str, Any]:
        """The Servers of PSI ``name`` (persistentdw's breakdown reads it)."""
        try:
            psi = self.store.get(RESOURCE["psi"], ns, name)
        except ApiError:
            raise rerr.user(f"PersistentStorage '{name}' not found", severity="Major") \
                from None
        ref = (psi.get("status") or {}).get("servers") or {}
        try:
            return self.store.get(RESOURCE["servers"], ref.get("namespace") or ns,
                                  ref.get("name") or name)
        except ApiError:
            raise rerr.internal("could not read allocation request",
                                f"unable to get Servers for PersistentStorage '{name}'",
                                severity="Minor") from None

    def _psi_type(self, wf: dict[str, Any], name: str) -> str:
        try:
            psi = self.store.get(RESOURCE["psi"], wf["metadata"]["namespace"], name)
        except ApiError:
            return ""
        return str(psi.get("spec", {}).get("fsType", ""))

    def _clientmounts(self, wf: dict[str, Any], index: int, desired: str, path: str | None,
                      fs: str, nothing: frozenset[str] = frozenset()) -> None:
        """Ask for every compute's ClientMount to reach ``desired``; wait for
        it.  A ClientMount made for a compute of ``nothing`` has no mounts.
        The computes' ClientMounts are written at once (Controllers.fan_out),
        up to the first compute with no namespace, whose error comes after."""
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        labels = {**workflow_labels(wf), TARGET_INDEX_LABEL: str(index)}
        cm_name = f"{ns}-{name}-{index}-computes"
        skip = self.ctl.unreachable_computes() if desired == "unmounted" else frozenset()
        computes = self.ctl.computes(wf)
        homeless = next((c for c in computes
                         if ("", "namespaces", "", c) not in self.store.objects), None)
        if homeless is not None:
            computes = computes[:computes.index(homeless)]

        def one(compute: str) -> dict[str, Any] | None:
            """The compute's ClientMount asked for ``desired`` (None: none to ask)."""
            try:
                cm = self.store.get(RESOURCE["clientmount"], compute, cm_name)
            except ApiError:
                if desired != "mounted":
                    return None
                # nnf-sos bind-mounts a raw allocation as a file
                # (nnf_access_controller.go, mapClientLocalStorage)
                raw = fs not in ("lustre", "xfs", "gfs2")
                mount = {"mountPath": path or "", "userID": wf["spec"].get("userID", 0),
                         "groupID": wf["spec"].get("groupID", 0), "setPermissions": True,
                         "options": "bind" if raw else "",
                         "type": "none" if raw else fs,
                         "targetType": "file" if raw else "directory", "compute": compute}
                cm = self.store.create(RESOURCE["clientmount"], compute, {
                    "apiVersion": f"{DWS}/v1alpha7", "kind": "ClientMount",
                    "metadata": {"name": cm_name, "labels": labels},
                    "spec": {"node": compute, "desiredState": "mounted",
                             "mounts": [] if compute in nothing else [mount]}})
                cm = self.ctl.clientmountd.kick(compute, cm_name) or cm
            if cm["spec"].get("desiredState") != desired:
                cm = self.store.patch(RESOURCE["clientmount"], compute, cm_name, "merge",
                                      {"spec": {"desiredState": desired}})
                cm = self.ctl.clientmountd.kick(compute, cm_name) or cm
            if (cm.get("status") or {}).get("error"):  # clientmountd tries again each time
                cm = self.ctl.clientmountd.kick(compute, cm_name) or cm
            return cm

        # an Offline or Fenced compute cannot unmount: nnf-sos skips it
        asked = [c for c in computes if c not in skip]
        waiting: list[str] = []
        errors: list[tuple[str, dict[str, Any]]] = []
        for compute, cm in zip(asked, self.ctl.fan_out(one, asked), strict=True):
            if cm is None:
                continue
            status = cm.get("status") or {}
            if status.get("error"):
                errors.append((compute, status["error"]))
            elif not (status.get("allReady") and all(
                    m.get("state") == desired for m in status.get("mounts") or [])):
                waiting.append(compute)
                if self._overdue(cm):
                    raise rerr.internal("", f"Node: {compute}: ClientMount has not been"
                                            f" reconciled after {self.ctl.child_timeout:g}"
                                            f" seconds", severity="Major")
        if homeless is not None:
            raise rerr.internal("could not mount file system on compute nodes",
                                f"compute node '{homeless}' has no namespace")
        if errors:
            # NnfAccess passes the first ClientMount error up as it is, prefixed
            compute, e = errors[0]
            raise rerr.ResourceError(str(e.get("userMessage") or ""),
                                     f"Node: {compute}: {e.get('debugMessage', '')}",
                                     str(e.get("type") or "Internal"),
                                     str(e.get("severity") or "Major"))
        if waiting:
            # nnf-sos' words; which computes lag shows in their ClientMounts
            raise Wait("pending mount" if desired == "mounted" else "pending unmount",
                       after=self.ctl.child_timeout)

    def _overdue(self, cm: dict[str, Any]) -> bool:
        """Never reconciled by its node's clientmountd within the child timeout
        of its creation.  As in nnf-sos the clock is the child's creation and
        the test is "not reconciled at all": a ClientMount its daemon has
        answered (at mount) is waited on without limit at unmount, however
        long the job ran."""
        created = cm["metadata"].get("creationTimestamp")
        if not created or cm.get("status"):
            return False
        age = (dt.datetime.now(dt.timezone.utc) - parse_microtime(created)).total_seconds()
        return age > self.ctl.child_timeout

    # --- Teardown and deletion -------------------------------------------------

    def teardown(self, wf: dict[str, Any], d: Directive) -> None:
        if d.command == "create_persistent":
            self._release_psi(wf, d.index, d.args["name"])
        elif d.command == "destroy_persistent":
            self._destroy_psi(wf, d.args["name"])
        elif d.command == "persistentdw":
            self._consume(wf, d.index, d.args["name"], add=False)
        self._remove(wf, d.index)

    def delete(self, wf: dict[str, Any]) -> None:
        for d in self.ctl.directives(wf):
            if d.command == "persistentdw":
                self._consume(wf, d.index, d.args["name"], add=False)
        self._remove(wf, None)

    def _remove(self, wf: dict[str, Any], index: int | None) -> None:
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        sel = f"{dws.WORKFLOW_LABELS[0]}={name},{dws.WORKFLOW_LABELS[1]}={ns}"
        gone = [(cm["metadata"]["namespace"], cm["metadata"]["name"])
                for cm in self.store.view(RESOURCE["clientmount"], None, sel)
                if index is None or (cm["metadata"].get("labels") or {}).get(
                    TARGET_INDEX_LABEL) == str(index)]
        self.ctl.fan_out(lambda key: self.delete_quiet(RESOURCE["clientmount"], *key), gone)
        names = [f"{name}-{index}"] if index is not None else [
            o["metadata"]["name"] for o in self.store.view(RESOURCE["breakdown"], ns, sel)]
        self.delete_labelled(RESOURCE["access"], wf, index)
        for n in names:
            self.delete_quiet(RESOURCE["nnfstorage"], ns, n)
            if index is None:
                # the breakdown and its Servers stay until the Workflow goes
                # (the WLM may still read them after Teardown)
                self.delete_quiet(RESOURCE["servers"], ns, n)
                self.delete_quiet(RESOURCE["breakdown"], ns, n)


@dataclass
class ClientMountDaemon:
    """The compute nodes' clientmountd: (un)mounts after ``delay`` seconds.

    A ``clientmount`` fault for a compute (Controllers.faults) makes its
    mounts fail with the fault's message in ``status.error``, as clientmountd
    reports a failed mount; a ``stall`` fault leaves them pending.
    """

    ctl: DriverContext
    delay: float = 0.0

    def kick(self, compute: str, name: str) -> dict[str, Any] | None:
        """Start (un)mounting; with no delay it is done at once (the new object)."""
        if self.delay > 0:
            self.ctl.after(self.delay, lambda: self.settle(compute, name))
            return None
        return self.settle(compute, name)

    def settle(self, compute: str, name: str) -> dict[str, Any] | None:
        store = self.ctl.store
        try:
            cm = store.get(RESOURCE["clientmount"], compute, name)
        except ApiError:
            return None
        desired = cm["spec"].get("desiredState", "mounted")
        wf = (cm["metadata"].get("labels") or {}).get(
            "dataworkflowservices.github.io/workflow.name", "")
        fault = self.ctl.faults.take_mount(wf, compute,
                                           PRE_RUN if desired == "mounted" else POST_RUN)
        mounts = cm["spec"].get("mounts") or []
        if fault is not None and fault.severity == "stall":
            return None
        if fault is not None:
            # as clientmountd words it: "mount/unmount failed: unable to mount ..."
            verb = "mount" if desired == "mounted" else "unmount"
            status: dict[str, Any] = {"allReady": False, "mounts": [
                {"state": desired, "ready": False} for _ in mounts],
                "error": {"debugMessage": f"mount/unmount failed: unable to {verb} file"
                                          f" system: {fault.message}",
                          "type": "Internal", "severity": "Major"}}
        else:
            status = {"allReady": True, "error": None,
                      "mounts": [{"state": desired, "ready": True} for _ in mounts]}
        if all((cm.get("status") or {}).get(k) == v for k, v in status.items()):
            same: dict[str, Any] = cm
            return same  # nothing changed: no write, no event
        out: dict[str, Any] = store.patch(RESOURCE["clientmount"], compute, name, "merge",
                                          {"status": status}, "status")
        return out


def _rabbits_of(servers: dict[str, Any]) -> set[str]:
    """The rabbits a Servers object's allocation sets name."""
    return {str(e.get("name")) for s in (servers.get("spec") or {}).get("allocationSets") or []
            for e in s.get("storage") or [] if e.get("name")}
