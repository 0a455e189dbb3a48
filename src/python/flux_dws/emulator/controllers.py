"""DWS and nnf-sos controllers for the emulator: Workflows move for real.

The decisions are dwsim's pure functions; this module only reads the store,
calls them and writes back.  One worker thread reconciles Workflows from a
queue fed by store events (and by timers for latency).

- Admission: DWS' mutating and validating webhooks on Workflow create and
  update (403 with DWS' texts).
- DWS controller: finalizer, state copy, Computes, driver aggregation,
  forceReady, timestamps (dwsim.workflow.reconcile).
- nnf driver, per directive and state:
    Proposal  whole-workflow checks (dwsim.proposal); DirectiveBreakdown
              ``<wf>-<i>`` (ready, storage from the pinned profile, compute
              constraints) and an empty Servers ``<wf>-<i>`` for jobdw and
              create_persistent; ``status.directiveBreakdowns``.
    Setup     the WLM's Servers are checked (dwsim.servers) and reported
              allocated and ready.
    PreRun    one ClientMount per compute of the Computes object (namespace
              = compute), mounted; the environment (dwsim.env).
    PostRun   the ClientMounts are unmounted.
    Teardown  the workflow's ClientMounts, Servers and breakdowns go.
  DataIn/DataOut (copy_in/copy_out) and container directives complete
  without creating data-movement or container objects: that part of nnf-sos
  is not emulated yet.
- Latency: ``latency[state] = seconds`` before a state's drivers complete.
- Faults: ``faults.add(...)``: a driver error of any severity (Minor ->
  DriverWait, Major -> TransientCondition, Fatal -> Error) or a stall, for a
  workflow (or all), a state and a directive index (or all).
"""

from __future__ import annotations

import copy
import datetime as dt
import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

from flux_dws.directives import DirectiveError, Ruleset, parse_directive
from flux_dws.dwsim import breakdown as nnf_breakdown
from flux_dws.dwsim import env as nnf_env
from flux_dws.dwsim import proposal as nnf_proposal
from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim import servers as nnf_servers
from flux_dws.dwsim import workflow as dws
from flux_dws.dwsim.fielderr import AdmissionError
from flux_dws.emulator.resources import BY_GROUP_PLURAL, DWS, NNF
from flux_dws.emulator.store import ApiError, Event, Store

log = logging.getLogger("flux_dws.emulator")
NNF_FINALIZER = "nnf.cray.hpe.com/nnf_workflow"
R = {name: BY_GROUP_PLURAL[key] for name, key in {
    "workflow": (DWS, "workflows"), "computes": (DWS, "computes"),
    "breakdown": (DWS, "directivebreakdowns"), "servers": (DWS, "servers"),
    "storage": (DWS, "storages"), "rules": (DWS, "dwdirectiverules"),
    "psi": (DWS, "persistentstorageinstances"), "clientmount": (DWS, "clientmounts"),
    "profile": (NNF, "nnfstorageprofiles"), "cprofile": (NNF, "nnfcontainerprofiles"),
    "lustre": ("lus.cray.hpe.com", "lustrefilesystems"),
}.items()}
STORAGE_COMMANDS = ("jobdw", "create_persistent")


@dataclass
class Fault:
    workflow: str = "*"          # workflow name or *
    state: str = "*"
    index: int | None = None     # directive index or None for all
    severity: str = "Fatal"      # Minor Major Fatal, or "stall"
    message: str = "injected fault"
    type: str = "Internal"
    once: bool = False

    def matches(self, wf: str, state: str, index: int) -> bool:
        return (self.workflow in ("*", wf) and self.state in ("*", state)
                and self.index in (None, index))


@dataclass
class Faults:
    items: list[Fault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, fault: Fault) -> None:
        if fault.severity not in ("Minor", "Major", "Fatal", "stall"):
            raise ValueError(f"severity must be Minor, Major, Fatal or stall, not"
                             f" {fault.severity!r}")
        with self.lock:
            self.items.append(fault)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()

    def take(self, wf: str, state: str, index: int) -> Fault | None:
        with self.lock:
            for f in self.items:
                if f.matches(wf, state, index):
                    if f.once:
                        self.items.remove(f)
                    return f
        return None


class Controllers:
    def __init__(self, store: Store, latency: dict[str, float] | None = None) -> None:
        self.store = store
        self.latency = dict(latency or {})
        self.faults = Faults()
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self._pending: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._timers: list[threading.Timer] = []
        self._stopping = threading.Event()
        self._ruleset: tuple[tuple[tuple[str, str], ...], Ruleset] | None = None
        store.admission[(DWS, "workflows")] = self._admit
        store.subscribe(self._on_event)

    # --- plumbing ------------------------------------------------------------

    def start(self) -> Controllers:
        self._thread = threading.Thread(target=self._run, name="emulator-controllers",
                                        daemon=True)
        self._thread.start()
        for key in [(k[2], k[3]) for k in self.store.objects if k[:2] == (DWS, "workflows")]:
            self.enqueue(*key)
        return self

    def stop(self) -> None:
        self._stopping.set()
        for t in self._timers:
            t.cancel()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(5)

    def enqueue(self, ns: str, name: str) -> None:
        with self._lock:
            if (ns, name) in self._pending:
                return
            self._pending.add((ns, name))
        self._queue.put((ns, name))

    def _later(self, seconds: float, ns: str, name: str) -> None:
        t = threading.Timer(seconds, self.enqueue, (ns, name))
        t.daemon = True
        self._timers = [x for x in self._timers if x.is_alive()] + [t]
        t.start()

    def _on_event(self, ev: Event) -> None:
        group, plural, ns, name = ev.key
        if (group, plural) == (DWS, "workflows"):
            self.enqueue(ns, name)
        elif (group, plural) == (DWS, "storages") and ev.type != "DELETED":
            self.enqueue("storage:" + ns, name)

    def _run(self) -> None:
        while not self._stopping.is_set():
            key = self._queue.get()
            if key is None:
                return
            with self._lock:
                self._pending.discard(key)
            try:
                if key[0].startswith("storage:"):
                    self.reconcile_storage(key[0][len("storage:"):], key[1])
                else:
                    self.reconcile(*key)
            except ApiError as exc:
                if exc.code in (404, 409):
                    if exc.code == 409:
                        self.enqueue(*key)
                    continue
                log.exception("reconcile %s/%s", *key)
            except Exception:
                log.exception("reconcile %s/%s", *key)

    # --- admission -------------------------------------------------------------

    def _rules(self) -> Ruleset | None:
        """The DWDirectiveRules of dws-system, compiled once per version."""
        objs = self.store.list_objects(R["rules"], "dws-system")
        if not objs:
            return None
        version = tuple((o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in objs)
        if self._ruleset is None or self._ruleset[0] != version:
            self._ruleset = (version, Ruleset(objs))
        return self._ruleset[1]

    def _admit(self, op: str, old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
        try:
            if op == "CREATE":
                return dws.admit_create(new, self._rules())
            assert old is not None
            dws.admit_update(old, new)
            return new
        except AdmissionError as exc:
            raise ApiError(403, "Forbidden", str(exc)) from None
        except DirectiveError as exc:  # the rules themselves are broken
            raise ApiError(500, "InternalError", f"DWDirectiveRule: {exc}") from None

    # --- reconcile -------------------------------------------------------------

    def reconcile(self, ns: str, name: str) -> None:
        st = self.store
        try:
            wf = st.get(R["workflow"], ns, name)
        except ApiError:
            return
        now = dt.datetime.now(dt.timezone.utc)
        md = wf["metadata"]
        if md.get("deletionTimestamp"):
            if NNF_FINALIZER in (md.get("finalizers") or []):
                self._delete(wf)  # the change requeues this workflow
                return
        elif NNF_FINALIZER not in (md.get("finalizers") or []):
            st.patch(R["workflow"], ns, name, "merge", {"metadata": {
                "finalizers": [*(md.get("finalizers") or []), NNF_FINALIZER],
                "resourceVersion": md["resourceVersion"]}})
            return
        computes = self._exists(R["computes"], ns, name)
        step = dws.reconcile(wf, now, computes_exist=computes)
        if step.ensure_computes:
            self._create_quiet(R["computes"], ns, dws.computes_for(wf))
        if step.delete_computes:
            self._delete_quiet(R["computes"], ns, name)
            self.enqueue(ns, name)
        if step.remove_finalizer:
            fins = [f for f in md.get("finalizers") or [] if f != dws.FINALIZER]
            st.patch(R["workflow"], ns, name, "merge", {"metadata": {
                "finalizers": fins or None, "resourceVersion": md["resourceVersion"]}})
            return
        if step.workflow is not None:
            st.replace(R["workflow"], ns, name, step.workflow)
            return
        if not md.get("deletionTimestamp"):
            self._drive(wf, now)

    def _exists(self, r: Any, ns: str, name: str) -> bool:
        return (r.group, r.plural, ns, name) in self.store.objects

    def _create_quiet(self, r: Any, ns: str, obj: dict[str, Any]) -> None:
        try:
            self.store.create(r, ns, obj)
        except ApiError as exc:
            if exc.code != 409:
                raise

    def _delete_quiet(self, r: Any, ns: str, name: str) -> None:
        try:
            self.store.delete(r, ns, name)
        except ApiError as exc:
            if exc.code != 404:
                raise

    # --- rabbit health (nnf-sos' Storage controller) -------------------------

    def reconcile_storage(self, ns: str, name: str) -> None:
        """spec.state Disabled shows as status Disabled; re-enabling restores."""
        try:
            obj = self.store.get(R["storage"], ns, name)
        except ApiError:
            return
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if spec.get("mode") == "Testing":
            return  # tests own the status of a Storage in Testing mode
        new = dict(status)
        if spec.get("state") == "Disabled":
            new.update(status="Disabled", message="Storage node manually disabled")
        elif status.get("status") == "Disabled":
            new.update(status="Ready", message="", rebootRequired=False)
        if new != status:
            self.store.patch(R["storage"], ns, name, "merge", {"status": new}, "status")

    def set_health(self, name: str, status: str | None = None,
                   links: dict[str, str] | None = None, fenced: bool = False,
                   k8s_ready: bool = True, drain_taint: str | None = None) -> dict[str, Any]:
        """Change a rabbit's health as its node manager would report it."""
        from flux_dws.dwsim.storage import storage_status

        obj = self.store.get(R["storage"], "default", name)
        old = obj.get("status") or {}
        computes = {c["name"]: c["status"] for c in old.get("access", {}).get("computes", [])}
        unknown = set(links or {}) - set(computes)
        if unknown:
            raise ValueError(f"rabbit '{name}' has no compute '{sorted(unknown)[0]}'")
        computes.update(links or {})
        new = storage_status(obj.get("spec") or {}, name, old.get("capacity", 0), computes,
                             node_status=status or old.get("access", {}).get("servers", [{}])[0]
                             .get("status", "Ready"),
                             k8s_ready=k8s_ready, fenced=fenced, drain_taint=drain_taint)
        new["devices"] = old.get("devices", [])
        return self.store.patch(R["storage"], "default", name, "merge", {"status": new},
                                "status")

    def vanish(self, ns: str, name: str) -> None:
        """Delete a workflow behind the WLM's back (finalizers ignored)."""
        wf = self.store.get(R["workflow"], ns, name)
        self._remove_children(wf, None)
        self.store.patch(R["workflow"], ns, name, "merge", {"metadata": {"finalizers": None}})
        try:
            self.store.delete(R["workflow"], ns, name)
        except ApiError as exc:
            if exc.code != 404:
                raise
        self._delete_quiet(R["computes"], ns, name)

    # --- the nnf driver -----------------------------------------------------

    def _drive(self, wf: dict[str, Any], now: dt.datetime) -> None:
        st, spec, status = self.store, wf["spec"], wf.get("status") or {}
        state = status.get("state")
        if state != spec.get("desiredState") or status.get("ready"):
            return
        drivers = status.get("drivers") or []
        mine = [i for i, d in enumerate(drivers)
                if d["watchState"] == state and d["driverID"] == "nnf" and not d["completed"]]
        if not mine:
            return
        started = status.get("desiredStateChange")
        delay = self.latency.get(state, 0.0)
        if delay and started:
            from flux_dws.dwsim.gotime import parse_microtime
            waited = (now - parse_microtime(started)).total_seconds()
            if waited < delay:
                self._later(delay - waited, wf["metadata"]["namespace"], wf["metadata"]["name"])
                return
        new = copy.deepcopy(wf)
        ndrivers = new["status"]["drivers"]
        changed = False
        for i in mine:
            d = ndrivers[i]
            idx = d["dwdIndex"]
            fault = self.faults.take(wf["metadata"]["name"], state, idx)
            if fault is not None:
                if fault.severity == "stall":
                    continue
                err = rerr.ResourceError(fault.message, type=fault.type,
                                         severity=fault.severity)
                ndrivers[i] = rerr.apply_to_driver(d, err)
                changed = True
                break  # nnf-sos stops a state's drivers at the first error
            try:
                self._run_driver(new, state, idx)
            except rerr.ResourceError as err:
                ndrivers[i] = rerr.apply_to_driver(d, err)
                changed = True
                break
            d.update(status="Completed", completed=True, message="", error="",
                     completeTime=_micro(now))
            changed = True
        if changed:
            st.replace(R["workflow"], wf["metadata"]["namespace"], wf["metadata"]["name"], new)

    def _run_driver(self, wf: dict[str, Any], state: str, index: int) -> None:
        directive = wf["spec"]["dwDirectives"][index]
        command, args = parse_directive(directive)
        argmap = {k: (v or "") for k, v in args}
        handler = getattr(self, f"_{state.lower()}", None)
        if handler is not None:
            handler(wf, index, command, argmap, directive)

    # per-state handlers: they raise ResourceError, or return when done

    def _cluster(self, ns: str) -> nnf_proposal.Cluster:
        st = self.store
        return nnf_proposal.Cluster(
            psis={o["metadata"]["name"]: o for o in st.list_objects(R["psi"], ns)},
            lustre_roots=[o.get("spec", {}).get("mountRoot", "")
                          for o in st.list_objects(R["lustre"], None)],
            container_profiles={o["metadata"]["name"]: o
                                for o in st.list_objects(R["cprofile"], "nnf-system")},
        )

    def _profile(self, name: str | None) -> dict[str, Any]:
        profiles = self.store.list_objects(R["profile"], "nnf-system")
        if name:
            for p in profiles:
                if p["metadata"]["name"] == name:
                    return p.get("data", {})  # type: ignore[no-any-return]
            raise rerr.user(f"Unable to find NnfStorageProfile: {name}")
        defaults = [p for p in profiles if p.get("data", {}).get("default")]
        if len(defaults) != 1:
            raise rerr.internal("Unable to find a default NnfStorageProfile to use")
        return defaults[0].get("data", {})  # type: ignore[no-any-return]

    def _proposal(self, wf: dict[str, Any], index: int, command: str, args: dict[str, str],
                  directive: str) -> None:
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        nnf_proposal.validate_workflow(wf, self._cluster(ns))
        if command not in (*STORAGE_COMMANDS, "persistentdw"):
            return
        dbd_name = f"{name}-{index}"
        labels = {dws.WORKFLOW_LABELS[0]: name, dws.WORKFLOW_LABELS[1]: ns,
                  dws.WORKFLOW_LABELS[2]: wf["metadata"].get("uid", ""),
                  "nnf.cray.hpe.com/directive_index": str(index),
                  "nnf.cray.hpe.com/job_id": str(wf["spec"].get("jobID", "")).replace(" ", "-")}
        owner = [{"apiVersion": wf.get("apiVersion", f"{DWS}/v1alpha7"), "kind": "Workflow",
                  "name": name, "uid": wf["metadata"].get("uid", ""), "controller": True}]
        status: dict[str, Any] = {"ready": True}
        if command in STORAGE_COMMANDS:
            profile = self._profile(args.get("profile"))
            sets = nnf_breakdown.storage_breakdown(directive, profile)
            servers_name = dbd_name if command == "jobdw" else args["name"]
            status["storage"] = {
                "lifetime": "job" if command == "jobdw" else "persistent",
                "reference": {"kind": "Servers", "name": servers_name, "namespace": ns},
                "allocationSets": sets}
            if command == "jobdw":
                status["compute"] = nnf_breakdown.compute_breakdown(directive, profile, dbd_name,
                                                                    ns, sets)
                srv_owner, srv_labels = owner, labels
            else:
                psi = self._create_psi(wf, args, directive, labels, owner)
                srv_owner = [{"apiVersion": f"{DWS}/v1alpha7",
                              "kind": "PersistentStorageInstance", "name": args["name"],
                              "uid": psi["metadata"]["uid"], "controller": True}]
                srv_labels = {"dataworkflowservices.github.io/persistentstorage.name":
                              args["name"],
                              "dataworkflowservices.github.io/persistentstorage.namespace": ns}
            servers = {"apiVersion": f"{DWS}/v1alpha7", "kind": "Servers",
                       "metadata": {"name": servers_name, "labels": srv_labels,
                                    "ownerReferences": srv_owner}, "spec": {}}
            self._create_quiet(R["servers"], ns, servers)
        if args.get("requires"):
            status["requires"] = args["requires"].split(",")
        dbd = {"apiVersion": f"{DWS}/v1alpha7", "kind": "DirectiveBreakdown",
               "metadata": {"name": dbd_name, "labels": labels, "ownerReferences": owner},
               "spec": {"directive": directive, "userID": wf["spec"].get("userID")}}
        self._create_quiet(R["breakdown"], ns, dbd)
        self.store.patch(R["breakdown"], ns, dbd_name, "merge", {"status": status}, "status")
        refs = wf["status"].setdefault("directiveBreakdowns", [])
        ref = {"kind": "DirectiveBreakdown", "name": dbd_name, "namespace": ns}
        if ref not in refs:
            refs.append(ref)

    def _setup(self, wf: dict[str, Any], index: int, command: str, args: dict[str, str],
               directive: str) -> None:
        if command == "persistentdw":
            return self._consume(wf, index, args["name"], add=True)
        if command not in STORAGE_COMMANDS:
            return None
        ns, dbd_name = wf["metadata"]["namespace"], f"{wf['metadata']['name']}-{index}"
        name = dbd_name if command == "jobdw" else args["name"]
        try:
            dbd = self.store.get(R["breakdown"], ns, dbd_name)
            servers = self.store.get(R["servers"], ns, name)
        except ApiError:
            raise rerr.internal("storage directive requirements were not satisfied",
                                f"breakdown or Servers {name} not found") from None
        sets = dbd.get("status", {}).get("storage", {}).get("allocationSets", [])
        rabbits = [o["metadata"]["name"] for o in self.store.list_objects(R["storage"],
                                                                          "default")]
        nnf_servers.validate_allocations(sets, servers.get("spec", {}), rabbits)
        self.store.patch(R["servers"], ns, name, "merge", {"status": {
            "ready": True, "lastUpdate": _micro(dt.datetime.now(dt.timezone.utc)),
            "allocationSets": nnf_servers.status_for(servers.get("spec", {}), True)}},
            "status")
        if command == "create_persistent":
            self.store.patch(R["psi"], ns, name, "merge", {"status": {"state": "Active"}},
                             "status")
        return None

    # --- persistent storage (PSI) ---------------------------------------------

    def _create_psi(self, wf: dict[str, Any], args: dict[str, str], directive: str,
                    labels: dict[str, str], owner: list[dict[str, Any]]) -> dict[str, Any]:
        ns, name = wf["metadata"]["namespace"], args["name"]
        if self._exists(R["psi"], ns, name):
            psi = self.store.get(R["psi"], ns, name)
            if psi.get("spec", {}).get("userID") != wf["spec"].get("userID"):
                raise rerr.user("User ID does not match existing persistent storage")
            return psi
        psi = self.store.create(R["psi"], ns, {
            "apiVersion": f"{DWS}/v1alpha7", "kind": "PersistentStorageInstance",
            "metadata": {"name": name, "labels": labels, "ownerReferences": owner},
            "spec": {"name": name, "fsType": args.get("type", ""), "dwDirective": directive,
                     "userID": wf["spec"].get("userID"), "state": "Active",
                     "consumerReferences": []}})
        self.store.patch(R["psi"], ns, name, "merge", {"status": {
            "state": "Creating", "servers": {"kind": "Servers", "name": name,
                                             "namespace": ns}}}, "status")
        return psi

    def _consume(self, wf: dict[str, Any], index: int, name: str, add: bool) -> None:
        """Add (Setup) or remove (Teardown) a persistentdw consumer reference."""
        ns = wf["metadata"]["namespace"]
        try:
            psi = self.store.get(R["psi"], ns, name)
        except ApiError:
            if not add:
                return
            raise rerr.user(f"PersistentStorage '{name}' not found", severity="Major") from None
        if add and psi.get("status", {}).get("state") not in (None, "Active", "Creating"):
            raise rerr.user("PersistentStorage is not active")
        ref = {"kind": "Workflow", "name": f"{wf['metadata']['name']}-{index}",
               "namespace": ns}
        refs = [r for r in psi["spec"].get("consumerReferences") or [] if r != ref]
        if add:
            refs.append(ref)
        self.store.patch(R["psi"], ns, name, "merge", {"spec": {"consumerReferences": refs}})

    def _release_psi(self, wf: dict[str, Any], name: str) -> None:
        """create_persistent at Teardown: the PSI outlives the workflow."""
        ns = wf["metadata"]["namespace"]
        drivers = wf["status"].get("drivers") or []
        if not all(d["completed"] for d in drivers if d["watchState"] != "Teardown"):
            return  # the creation never finished: the storage goes with the workflow
        if self._exists(R["psi"], ns, name):
            self.store.patch(R["psi"], ns, name, "merge", {"metadata": {
                "ownerReferences": None, "labels": None}})

    def _destroy_psi(self, wf: dict[str, Any], name: str) -> None:
        ns = wf["metadata"]["namespace"]
        try:
            psi = self.store.get(R["psi"], ns, name)
        except ApiError:
            return  # already gone: success
        if psi["spec"].get("userID") != wf["spec"].get("userID"):
            raise rerr.user("user ID does not match existing persistent storage")
        if psi["spec"].get("consumerReferences"):
            raise rerr.user("persistent storage cannot be deleted while in use")
        self.store.patch(R["psi"], ns, name, "merge", {"spec": {"state": "Destroying"}})
        self._delete_quiet(R["servers"], ns, name)
        self._delete_quiet(R["psi"], ns, name)

    def _computes(self, wf: dict[str, Any]) -> list[str]:
        try:
            c = self.store.get(R["computes"], wf["metadata"]["namespace"],
                               wf["metadata"]["name"])
        except ApiError:
            return []
        return [d["name"] for d in c.get("data") or [] if isinstance(d, dict) and "name" in d]

    def _prerun(self, wf: dict[str, Any], index: int, command: str, args: dict[str, str],
                directive: str) -> None:
        if command not in ("jobdw", "persistentdw"):
            return
        fs = args.get("type", "")
        profile = self._profile(args.get("profile")) if command == "jobdw" else {}
        path = nnf_env.mount_path(wf, profile, fs, index)
        wf["status"]["env"] = nnf_env.add_storage_env(wf["status"].get("env") or {},
                                                      directive, path)
        self._clientmounts(wf, index, "mounted", path, fs)

    def _postrun(self, wf: dict[str, Any], index: int, command: str, args: dict[str, str],
                 directive: str) -> None:
        if command in ("jobdw", "persistentdw"):
            self._clientmounts(wf, index, "unmounted", None, args.get("type", ""))

    def _clientmounts(self, wf: dict[str, Any], index: int, desired: str, path: str | None,
                      fs: str) -> None:
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        labels = {dws.WORKFLOW_LABELS[0]: name, dws.WORKFLOW_LABELS[1]: ns,
                  dws.WORKFLOW_LABELS[2]: wf["metadata"].get("uid", ""),
                  "nnf.cray.hpe.com/target_directive_index": str(index)}
        cm_name = f"{ns}-{name}-{index}-computes"
        for compute in self._computes(wf):
            if ("", "namespaces", "", compute) not in self.store.objects:
                raise rerr.internal("could not mount file system on compute nodes",
                                    f"compute node '{compute}' has no namespace")
            mount = {"mountPath": path or "", "userID": wf["spec"].get("userID", 0),
                     "groupID": wf["spec"].get("groupID", 0), "setPermissions": True,
                     "options": "", "type": fs if fs in ("lustre", "xfs", "gfs2") else "none",
                     "targetType": "directory", "compute": compute}
            if desired == "mounted":
                self._create_quiet(R["clientmount"], compute, {
                    "apiVersion": f"{DWS}/v1alpha7", "kind": "ClientMount",
                    "metadata": {"name": cm_name, "labels": labels},
                    "spec": {"node": compute, "desiredState": "mounted", "mounts": [mount]}})
            elif not self._exists(R["clientmount"], compute, cm_name):
                continue
            else:
                self.store.patch(R["clientmount"], compute, cm_name, "merge",
                                 {"spec": {"desiredState": desired}})
            self.store.patch(R["clientmount"], compute, cm_name, "merge", {"status": {
                "allReady": True, "mounts": [{"state": desired, "ready": True}]}}, "status")

    def _teardown(self, wf: dict[str, Any], index: int, command: str, args: dict[str, str],
                  directive: str) -> None:
        if command == "create_persistent":
            self._release_psi(wf, args["name"])
        elif command == "destroy_persistent":
            self._destroy_psi(wf, args["name"])
        elif command == "persistentdw":
            self._consume(wf, index, args["name"], add=False)
        self._remove_children(wf, index)

    def _remove_children(self, wf: dict[str, Any], index: int | None) -> None:
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        sel = f"{dws.WORKFLOW_LABELS[0]}={name}"
        for cm in self.store.list_objects(R["clientmount"], None, sel):
            if index is None or cm["metadata"]["labels"].get(
                    "nnf.cray.hpe.com/target_directive_index") == str(index):
                self._delete_quiet(R["clientmount"], cm["metadata"]["namespace"],
                                   cm["metadata"]["name"])
        names = [f"{name}-{index}"] if index is not None else [
            o["metadata"]["name"] for o in self.store.list_objects(R["breakdown"], ns, sel)]
        for n in names:
            self._delete_quiet(R["servers"], ns, n)
            self._delete_quiet(R["breakdown"], ns, n)

    def _delete(self, wf: dict[str, Any]) -> None:
        """nnf's part of a Workflow deletion: children, then its finalizer."""
        md = wf["metadata"]
        if NNF_FINALIZER not in (md.get("finalizers") or []):
            return
        self._remove_children(wf, None)
        fins = [f for f in md["finalizers"] if f != NNF_FINALIZER]
        self.store.patch(R["workflow"], md["namespace"], md["name"], "merge", {"metadata": {
            "finalizers": fins or None, "resourceVersion": md["resourceVersion"]}})


def _micro(t: dt.datetime) -> str:
    from flux_dws.dwsim.gotime import microtime
    return microtime(t)


LATENCY_PRESETS: dict[str, dict[str, float]] = {
    "zero": {},
    # roughly what a small xfs job sees on real hardware, shortened 10x
    "demo": {"Proposal": 0.2, "Setup": 1.0, "DataIn": 0.2, "PreRun": 0.6, "PostRun": 0.4,
             "DataOut": 0.2, "Teardown": 0.8},
}


def seed_system(store: Store, system: str) -> int:
    """Load the objects a fresh cluster for ``system`` holds; returns how many."""
    from flux_dws.dwsim.systems import load_system, seed_objects

    by_kind = {(r.group, r.kind): r for r in BY_GROUP_PLURAL.values()}
    objs = seed_objects(load_system(system))
    for obj in objs:
        store.load(by_kind[(obj["apiVersion"].rpartition("/")[0], obj["kind"])], obj)
    return len(objs)
