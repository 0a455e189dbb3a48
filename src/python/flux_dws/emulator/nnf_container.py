"""nnf-sos' container driver, its port manager, and the cluster that runs containers.

Per state (spec/dws-nnf-behaviour.md §5, P4):

Proposal  the profile (``profile=``, in nnf-system) is pinned: copied to
          ``<wf>-<i>`` in the workflow's namespace, ``pinned: true``.
Setup     with ``container-auth`` in ``status.requires``: the token Secrets
          ``<wf>-token-server`` / ``<wf>-token`` and ``status.workflowToken``
          (dwsim.tokens).  With ``numPorts > 0``: a request for
          ``numPorts x containers`` ports in the NnfPortManager's spec, then
          a wait for its status ``InUse`` (InvalidConfiguration and
          InsufficientResources fail with nnf-sos' texts).
PreRun    the rabbits of the Computes' hosts; the ``NNF_CONTAINER_*``
          environment; non-MPI: headless Service ``<wf>`` and one batch Job
          ``<wf>-<rabbit>`` per rabbit; MPI: MPIJob ``<wf>`` (launcher on the
          first rabbit); ``createContainer: false``: NnfContainerData
          ``<wf>-<i>`` instead.  Then a wait for the containers to start;
          after ``preRunTimeoutSeconds`` the jobs get a deadline and the state
          fails ("user container(s) failed to start after N seconds").
PostRun   shutdown is sent, the jobs get ``postRunTimeoutSeconds`` to
          finish (0: not waited for), and their results are checked.
Teardown  Jobs, MPIJobs and NnfContainerData go; the ports are released.

``PortManager`` plays nnf-sos' NnfPortManager controller (dwsim.ports):
requests become InUse with ports, or InsufficientResources (retried every
cooldown + 1 s); released ones sit in Cooldown for
``portsCooldownInSeconds``.

``ContainerCluster`` plays the Job controller, mpi-operator and kubelet:
a Job becomes ready (a Running Pod on its rabbit) after the ``Container``
latency; at shutdown it completes; ``activeDeadlineSeconds`` ends it with
DeadlineExceeded.  ``container`` faults (Controllers.faults) make a
workload never start (``stall`` at PreRun), fail (any severity at PreRun or
PostRun: BackoffLimitExceeded) or ignore shutdown (``stall`` at PostRun).
"""

from __future__ import annotations

import base64
import datetime as dt
import secrets
import threading
import time
from typing import Any

from flux_dws.dwsim import ports as nnf_ports
from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim import tokens
from flux_dws.dwsim.gotime import parse_microtime
from flux_dws.emulator.driver import (
    DIRECTIVE_INDEX_LABEL,
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
from flux_dws.emulator.resources import BY_GROUP_PLURAL
from flux_dws.emulator.store import ApiError
from flux_dws.jsondata import copy_json

JOB = BY_GROUP_PLURAL[("batch", "jobs")]
MPIJOB = BY_GROUP_PLURAL[("kubeflow.org", "mpijobs")]
SERVICE = BY_GROUP_PLURAL[("", "services")]
POD = BY_GROUP_PLURAL[("", "pods")]

CONTAINER_LABEL = "nnf.cray.hpe.com/container"
PINNED_NAME_LABEL = "nnf.cray.hpe.com/pinned_container_profile_name"
PINNED_NAMESPACE_LABEL = "nnf.cray.hpe.com/pinned_container_profile_namespace"
REQUIRES_AUTH = "container-auth"
REQUIRES_COPY_OFFLOAD = "copy-offload"
TLS_SECRET = ("default", "nnf-dm-usercontainer-server-tls")
PORT_MANAGER = ("nnf-system", "nnf-port-manager")
PROFILE_NAMESPACE = "nnf-system"


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def count_containers(data: dict[str, Any]) -> int:
    """Containers that get ports: the launcher's for MPI, the pod's otherwise."""
    if data.get("mpiSpec"):
        launcher = (data["mpiSpec"].get("launcher") or {})
        return len(launcher.get("containers") or [])
    return len((data.get("spec") or {}).get("containers") or [])


def interpret_requires(requires: str) -> list[str]:
    """The status.requires words a ``requires=`` list adds (nnf-sos keeps only these)."""
    out: list[str] = []
    for word in requires.split(","):
        add = {REQUIRES_COPY_OFFLOAD: [REQUIRES_COPY_OFFLOAD, REQUIRES_AUTH],
               "user-container-auth": [REQUIRES_AUTH]}.get(word, [])
        out += [w for w in add if w not in out]
    return out


class ContainerDriver(Driver):
    commands = ("container",)

    # --- Proposal --------------------------------------------------------------

    def proposal(self, wf: dict[str, Any], d: Directive) -> None:
        ns, pinned = wf["metadata"]["namespace"], f"{wf['metadata']['name']}-{d.index}"
        if self.exists(RESOURCE["cprofile"], ns, pinned):
            return
        name = d.args.get("profile", "")
        try:
            source = self.store.get(RESOURCE["cprofile"], PROFILE_NAMESPACE, name)
        except ApiError:
            raise rerr.user(f"container profile '{name}' not found") from None
        data = copy_json(source.get("data") or {})
        data["pinned"] = True
        labels = {k: v for k, v in child_labels(wf).items() if k in OWNER_LABELS}
        self.create_quiet(RESOURCE["cprofile"], ns, {
            "apiVersion": f"{NNF}/v1alpha11", "kind": "NnfContainerProfile",
            "metadata": {"name": pinned, "labels": labels, "ownerReferences": owner_refs(wf)},
            "data": data})

    def _profile(self, wf: dict[str, Any], d: Directive) -> dict[str, Any]:
        ns, pinned = wf["metadata"]["namespace"], f"{wf['metadata']['name']}-{d.index}"
        try:
            return self.store.get(RESOURCE["cprofile"], ns, pinned)
        except ApiError:
            raise rerr.internal("", f"could not find pinned container profile {ns}/{pinned}",
                                severity="Minor") from None

    # --- Setup: token secrets and ports ----------------------------------------

    def setup(self, wf: dict[str, Any], d: Directive) -> None:
        if REQUIRES_AUTH in (wf["status"].get("requires") or []):
            wf["status"]["workflowToken"] = self._token_secrets(wf)
        data = self._profile(wf, d).get("data") or {}
        wanted = count_containers(data) * int(data.get("numPorts") or 0)
        if wanted <= 0:
            return
        uid = wf["metadata"].get("uid", "")
        pm = self._port_manager()
        if not any((a.get("requester") or {}).get("uid") == uid
                   for a in pm.get("spec", {}).get("allocations") or []):
            allocations = [*(pm.get("spec", {}).get("allocations") or []), {
                "requester": {"kind": "Workflow", "name": wf["metadata"]["name"],
                              "namespace": wf["metadata"]["namespace"], "uid": uid},
                "count": wanted}]
            pm = self.store.patch(RESOURCE["portmanager"], *PORT_MANAGER, "merge", {
                "metadata": {"resourceVersion": pm["metadata"]["resourceVersion"]},
                "spec": {"allocations": allocations}})
            self.ctl.ports.reconcile()
            pm = self._port_manager()
        for a in (pm.get("status") or {}).get("allocations") or []:
            if (a.get("requester") or {}).get("uid") != uid:
                continue
            if a.get("status") == "InUse" and len(a.get("ports") or []) == wanted:
                return
            if a.get("status") == "InvalidConfiguration":
                raise rerr.user("could not request ports for container workflow: Invalid"
                                " NnfPortManager configuration")
            if a.get("status") == "InsufficientResources":
                raise rerr.internal("could not request ports for container workflow:"
                                    " InsufficientResources")
        raise Wait("NnfPortManager allocation not ready", after=2.0)

    def _port_manager(self) -> dict[str, Any]:
        try:
            return self.store.get(RESOURCE["portmanager"], *PORT_MANAGER)
        except ApiError:
            raise rerr.internal("", f"could not get NnfPortManager {'/'.join(PORT_MANAGER)}",
                                severity="Minor") from None

    def _token_secrets(self, wf: dict[str, Any]) -> dict[str, str]:
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        token_ref = wf["status"].get("workflowToken") or {"secretName": f"{name}-token",
                                                          "secretNamespace": ns}
        key_name = token_ref["secretName"] + "-server"
        labels = {**workflow_labels(wf),
                  **{k: v for k, v in child_labels(wf).items() if k in OWNER_LABELS}}
        try:
            existing = self.store.get(RESOURCE["secret"], token_ref["secretNamespace"], key_name)
            key = tokens.key_from_pem(base64.b64decode(existing["data"]["token.key"]))
        except ApiError:
            key, pem = tokens.create_key()
            self.create_quiet(RESOURCE["secret"], token_ref["secretNamespace"], {
                "apiVersion": "v1", "kind": "Secret", "type": "Opaque", "immutable": True,
                "metadata": {"name": key_name, "labels": labels,
                             "ownerReferences": owner_refs(wf)},
                "data": {"token.key": base64.b64encode(pem).decode()}})
        except (KeyError, ValueError, tokens.TokenError) as exc:
            raise rerr.internal("could not create workflow's server-token secret",
                                f"could not create secret: {key_name}: GetKeyFromPEM: {exc}") \
                from None
        try:
            existing = self.store.get(RESOURCE["secret"], token_ref["secretNamespace"],
                                      token_ref["secretName"])
        except ApiError:
            self.create_quiet(RESOURCE["secret"], token_ref["secretNamespace"], {
                "apiVersion": "v1", "kind": "Secret", "type": "Opaque", "immutable": True,
                "metadata": {"name": token_ref["secretName"], "labels": labels,
                             "ownerReferences": owner_refs(wf)},
                "data": {"token": base64.b64encode(tokens.create_token(key).encode())
                         .decode()}})
        else:
            try:
                tokens.verify_token(base64.b64decode(existing["data"]["token"]).decode(), key)
            except (KeyError, ValueError, tokens.TokenError) as exc:
                raise rerr.internal("could not create or update workflow's client-token"
                                    " secret", f"could not create secret:"
                                    f" {token_ref['secretName']}: VerifyToken: {exc}") from None
        return {"secretName": token_ref["secretName"],
                "secretNamespace": token_ref["secretNamespace"]}

    # --- PreRun ---------------------------------------------------------------------

    def _rabbits(self, wf: dict[str, Any]) -> list[str]:
        """The rabbits of the Computes' hosts, first seen first."""
        computes = self.ctl.computes(wf)
        if not computes:
            raise rerr.ResourceError("", "the Computes resources does not specify any compute"
                                         " nodes", type="WLM", severity="Fatal")
        try:
            sysconf = self.store.get(RESOURCE["sysconfig"], "default", "default")
        except ApiError:
            raise rerr.internal("", "could not get system configuration") from None
        owner: dict[str, str] = {}
        for node in sysconf.get("spec", {}).get("storageNodes") or []:
            if node.get("type") == "Rabbit":
                for c in node.get("computesAccess") or []:
                    owner[c.get("name")] = node.get("name")
        out: list[str] = []
        for c in computes:
            if c not in owner:
                raise rerr.internal("", f"supplied compute node '{c}' not found in"
                                        f" SystemConfiguration")
            if owner[c] not in out:
                out.append(owner[c])
        return out

    def prerun(self, wf: dict[str, Any], d: Directive) -> None:
        profile = self._profile(wf, d)
        data = profile.get("data") or {}
        mpi = bool(data.get("mpiSpec"))
        if not self._started(wf, d):
            try:
                rabbits = self._rabbits(wf)
            except rerr.ResourceError as err:
                # nnf-sos wraps twice and puts the inner error text in the user message
                debug = f"error obtaining the target NNF nodes for containers:" \
                        f" {err.debug_message}"
                raise rerr.ResourceError(f"unable to create/update Container Jobs:"
                                         f" {err.type.lower()} error: {debug}",
                                         debug, err.type, err.severity) from None
            self._publish_env(wf, data, rabbits, mpi)
            self._create_workload(wf, d, profile, rabbits, mpi)
        if not data.get("createContainer", True):
            return
        timeout = int(data.get("preRunTimeoutSeconds", 300) or 0)
        elapsed = timeout > 0 and self.ctl.waited(wf) >= timeout
        message = f"user container(s) failed to start after {timeout} seconds"
        if mpi:
            job = self._get(MPIJOB, wf, wf["metadata"]["name"])
            running = job is not None and any(
                c.get("type") in ("Running", "Succeeded") and c.get("status") == "True"
                for c in (job.get("status") or {}).get("conditions") or [])
            if running:
                wf["status"].setdefault("env", {})["NNF_CONTAINER_LAUNCHER"] = \
                    self._rabbits(wf)[0]
                return
            if elapsed:
                if job is not None:
                    self.ctl.cluster.set_deadline(MPIJOB, job)
                raise rerr.internal(message, "MPIJob timeout set")
            raise Wait(f"pending MPIJob start for workflow '{wf['metadata']['name']}',"
                       f" index: {d.index}", after=self._until(wf, timeout))
        jobs = self._jobs(wf, d.index)
        if not jobs:
            if elapsed:
                raise rerr.internal(message, "no Jobs found in JobList to set timeout")
            raise Wait(f"pending job creation for workflow '{wf['metadata']['name']}',"
                       f" index: {d.index}", after=2.0)
        for job in jobs:
            # as nnf-sos: once the timeout has passed every Job gets the deadline,
            # running or not (a PreRun re-run after a slow earlier directive too)
            if elapsed:
                self.ctl.cluster.set_deadline(JOB, job)
                continue
            if (job.get("status") or {}).get("conditions"):
                continue
            if int((job.get("status") or {}).get("ready") or 0) < 1:
                raise Wait(f"pending container start for job '{job['metadata']['name']}'",
                           after=self._until(wf, timeout))
        if elapsed:
            raise rerr.internal(message, "job(s) timeout set")

    def _until(self, wf: dict[str, Any], timeout: int) -> float | None:
        """Seconds until the timeout passes (None: no timeout)."""
        if timeout <= 0:
            return None
        return max(0.05, timeout - self.ctl.waited(wf) + 0.01)

    def _started(self, wf: dict[str, Any], d: Directive) -> bool:
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        return bool(self.exists(MPIJOB, ns, name) or self._jobs(wf, d.index)
                    or self.exists(RESOURCE["containerdata"], ns, f"{name}-{d.index}"))

    def _ports(self, wf: dict[str, Any], data: dict[str, Any]) -> list[int]:
        wanted = count_containers(data) * int(data.get("numPorts") or 0)
        if wanted <= 0:
            return []
        uid = wf["metadata"].get("uid", "")
        ports = [p for a in (self._port_manager().get("status") or {}).get("allocations") or []
                 if (a.get("requester") or {}).get("uid") == uid and a.get("status") == "InUse"
                 for p in a.get("ports") or []]
        if len(ports) != wanted:
            raise rerr.internal("requested ports do not meet the number of allocated ports",
                                f"number of ports found in NnfPortManager's allocation"
                                f" ({len(ports)}) does not equal the profile's requested ports"
                                f" ({wanted})")
        return ports

    def _publish_env(self, wf: dict[str, Any], data: dict[str, Any], rabbits: list[str],
                     mpi: bool) -> None:
        env = wf["status"].setdefault("env", {})
        name, ns = wf["metadata"]["name"], wf["metadata"]["namespace"]
        ports = self._ports(wf, data)
        if ports:
            containers = (data["mpiSpec"].get("launcher") or {}).get("containers") if mpi \
                else (data.get("spec") or {}).get("containers")
            containers = containers or []
            env["NNF_CONTAINER_PORTS"] = ",".join(str(p) for p in ports)
            per = len(ports) // max(1, len(containers))
            for i, c in enumerate(containers):
                key = "NNF_CONTAINER_PORTS_" + str(c.get("name", "")).replace("-", "_")
                env[key] = ",".join(str(p) for p in ports[i * per:(i + 1) * per])
        hosts = [f"{name}-launcher", *(f"{name}-worker-{i}" for i in range(len(rabbits)))] \
            if mpi else rabbits
        env.update(NNF_CONTAINER_SUBDOMAIN=name, NNF_CONTAINER_DOMAIN=f"{ns}.svc.cluster.local",
                   NNF_CONTAINER_HOSTNAMES=",".join(hosts))

    def _labels(self, wf: dict[str, Any], d: Directive, profile: dict[str, Any]) -> dict[str, str]:
        return {**child_labels(wf, d.index), CONTAINER_LABEL: wf["metadata"]["name"],
                PINNED_NAME_LABEL: profile["metadata"]["name"],
                PINNED_NAMESPACE_LABEL: profile["metadata"]["namespace"]}

    def _create_workload(self, wf: dict[str, Any], d: Directive, profile: dict[str, Any],
                         rabbits: list[str], mpi: bool) -> None:
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        data = profile.get("data") or {}
        labels = self._labels(wf, d, profile)
        if not data.get("createContainer", True):
            volumes = []
            for key, value in d.args.items():
                if not key.startswith(("DW_JOB_", "DW_PERSISTENT_")):
                    continue
                command = "jobdw" if key.startswith("DW_JOB_") else "persistentdw"
                target = next((x for x in self.ctl.directives(wf)
                               if x.command == command and x.args.get("name") == value), None)
                if target is not None:
                    path = (wf["status"].get("env") or {}).get(
                        ("DW_JOB_" if command == "jobdw" else "DW_PERSISTENT_")
                        + value.replace("-", "_"), "")
                    volumes.append({"name": key, "command": command,
                                    "directiveIndex": target.index, "mountPath": path})
            self.create_quiet(RESOURCE["containerdata"], ns, {
                "apiVersion": f"{NNF}/v1alpha11", "kind": "NnfContainerData",
                "metadata": {"name": f"{name}-{d.index}",
                             "labels": {k: v for k, v in labels.items()
                                        if k not in (CONTAINER_LABEL, PINNED_NAME_LABEL,
                                                     PINNED_NAMESPACE_LABEL,
                                                     DIRECTIVE_INDEX_LABEL)},
                             "ownerReferences": owner_refs(wf)},
                "data": {"volumes": volumes}})
            return
        uid, gid = wf["spec"].get("userID", 0), wf["spec"].get("groupID", 0)
        retry = int(data.get("retryLimit", 6))
        if mpi:
            spec = data["mpiSpec"]
            self.create_quiet(MPIJOB, ns, {
                "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                "metadata": {"name": name, "labels": labels, "ownerReferences": owner_refs(wf)},
                "spec": {"slotsPerWorker": spec.get("slotsPerWorker", 1),
                         "runPolicy": {"backoffLimit": retry},
                         "mpiReplicaSpecs": {
                             "Launcher": {"replicas": 1, "template": {"spec": {
                                 **copy_json(spec.get("launcher") or {}),
                                 "nodeSelector": {"kubernetes.io/hostname": rabbits[0]}}}},
                             "Worker": {"replicas": len(rabbits), "template": {"spec":
                                        copy_json(spec.get("worker") or {})}}}}})
            self.ctl.cluster.started(MPIJOB, ns, name, rabbits)
            return
        self.create_quiet(SERVICE, ns, {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "ownerReferences": owner_refs(wf)},
            "spec": {"selector": {CONTAINER_LABEL: name}, "clusterIP": "None"}})
        for rabbit in rabbits:
            pod = copy_json(data.get("spec") or {})
            pod.update(restartPolicy="Never", subdomain=name, hostname=rabbit,
                       nodeSelector={"kubernetes.io/hostname": rabbit},
                       securityContext={"runAsUser": uid, "runAsGroup": gid, "fsGroup": gid},
                       tolerations=[{"key": "cray.nnf.node", "operator": "Equal",
                                     "value": "true", "effect": "NoSchedule"}])
            self.create_quiet(JOB, ns, {
                "apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": f"{name}-{rabbit}", "labels": labels,
                             "ownerReferences": owner_refs(wf)},
                "spec": {"backoffLimit": retry,
                         "template": {"metadata": {"labels": labels}, "spec": pod}}})
            self.ctl.cluster.started(JOB, ns, f"{name}-{rabbit}", [rabbit])

    def _jobs(self, wf: dict[str, Any], index: int) -> list[dict[str, Any]]:
        md = wf["metadata"]
        sel = (f"dataworkflowservices.github.io/workflow.name={md['name']},"
               f"dataworkflowservices.github.io/workflow.namespace={md['namespace']},"
               f"{DIRECTIVE_INDEX_LABEL}={index}")
        return self.store.list_objects(JOB, md["namespace"], sel)

    def _get(self, r: Any, wf: dict[str, Any], name: str) -> dict[str, Any] | None:
        try:
            return self.store.get(r, wf["metadata"]["namespace"], name)
        except ApiError:
            return None

    # --- PostRun ----------------------------------------------------------------------

    def postrun(self, wf: dict[str, Any], d: Directive) -> None:
        data = self._profile(wf, d).get("data") or {}
        if not data.get("createContainer", True):
            return
        timeout = int(data.get("postRunTimeoutSeconds", 300) or 0)
        if timeout == 0:
            return  # nnf-sos neither waits for nor checks the containers
        mpi = bool(data.get("mpiSpec"))
        message = f"user container(s) failed to complete after {timeout} seconds"
        if mpi:
            job = self._get(MPIJOB, wf, wf["metadata"]["name"])
            if job is None:
                raise Wait("pending MPIJob", after=2.0)
            conds = (job.get("status") or {}).get("conditions") or []
            if not any(c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True"
                       for c in conds):
                self.ctl.cluster.shutdown(MPIJOB, job, timeout)
                raise Wait("pending MPIJob completion", after=2.0)
            for c in conds:
                if c.get("type") == "Failed" and c.get("status") == "True":
                    debug = f"container MPIJob Failed ({c.get('reason', '')}):" \
                            f" {c.get('message', '')}"
                    if c.get("reason") == "DeadlineExceeded":
                        raise rerr.internal(message, debug)
                    raise rerr.internal(f"user container(s) failed to run successfully after"
                                        f" {int(data.get('retryLimit', 6)) + 1} attempts", debug)
            return
        jobs = self._jobs(wf, d.index)
        if not jobs:
            raise rerr.internal("", f"waitForContainersToFinish: no container jobs found for"
                                    f" workflow '{wf['metadata']['name']}', index: {d.index}",
                                severity="Major")
        for job in jobs:
            if not (job.get("status") or {}).get("conditions"):
                self.ctl.cluster.shutdown(JOB, job, timeout)
        for job in jobs:
            job = self._get(JOB, wf, job["metadata"]["name"]) or job
            if not (job.get("status") or {}).get("conditions"):
                raise Wait("pending container finish", after=2.0)
        for job in jobs:
            job = self._get(JOB, wf, job["metadata"]["name"]) or job
            for c in (job.get("status") or {}).get("conditions") or []:
                if c.get("type") in ("Complete", "SuccessCriteriaMet"):
                    continue
                debug = f"container job {c.get('type')} ({c.get('reason', '')}):" \
                        f" {c.get('message', '')}"
                if c.get("reason") == "DeadlineExceeded":
                    raise rerr.internal(message, debug)
                raise rerr.internal("", debug)

    # --- Teardown and deletion --------------------------------------------------------

    def teardown(self, wf: dict[str, Any], d: Directive) -> None:
        self._delete_workload(wf, d.index)
        self._release_ports(wf)

    def delete(self, wf: dict[str, Any]) -> None:
        self._delete_workload(wf, None)
        self._release_ports(wf)

    def _delete_workload(self, wf: dict[str, Any], index: int | None) -> None:
        for r in (MPIJOB, JOB):
            self.delete_labelled(r, wf, index)
        self.delete_labelled(POD, wf, index)
        ns, name = wf["metadata"]["namespace"], wf["metadata"]["name"]
        if index is not None:
            self.delete_quiet(RESOURCE["containerdata"], ns, f"{name}-{index}")
        else:
            self.delete_labelled(RESOURCE["containerdata"], wf, None)

    def _release_ports(self, wf: dict[str, Any]) -> None:
        uid = wf["metadata"].get("uid", "")
        try:
            pm = self.store.get(RESOURCE["portmanager"], *PORT_MANAGER)
        except ApiError:
            return
        allocations = pm.get("spec", {}).get("allocations") or []
        keep = [a for a in allocations if (a.get("requester") or {}).get("uid") != uid]
        if len(keep) != len(allocations):
            self.store.patch(RESOURCE["portmanager"], *PORT_MANAGER, "merge", {
                "metadata": {"resourceVersion": pm["metadata"]["resourceVersion"]},
                "spec": {"allocations": keep}})
            self.ctl.ports.reconcile()


class PortManager:
    """nnf-sos' NnfPortManager controller (the algorithm is dwsim.ports)."""

    def __init__(self, ctl: DriverContext) -> None:
        self.ctl = ctl
        self._lock = threading.Lock()
        self._due: float | None = None   # when the one pending timer fires

    def _later(self, seconds: float) -> None:
        due = time.monotonic() + seconds
        with self._lock:
            if self._due is not None and self._due <= due + 0.005:
                return
            self._due = due
        self.ctl.after(seconds, self._timer)

    def _timer(self) -> None:
        with self._lock:
            self._due = None
        self.reconcile()

    def reconcile(self) -> None:
        with self._lock:
            self._reconcile()

    def _reconcile(self) -> None:
        store = self.ctl.store
        try:
            pm = store.get(RESOURCE["portmanager"], *PORT_MANAGER)
        except ApiError:
            return
        spec_allocs = pm.get("spec", {}).get("allocations") or []
        status = pm.get("status") or {}
        old = list(status.get("allocations") or [])
        try:
            sysconf = store.get(RESOURCE["sysconfig"], "default", "default")
            ports = nnf_ports.expand_ports(sysconf.get("spec", {}).get("ports") or [])
            cooldown = int(sysconf.get("spec", {}).get("portsCooldownInSeconds", 60))
            state = "Ready"
        except (ApiError, nnf_ports.PortConfigError):
            ports, cooldown, state = [], 0, "SystemConfigurationNotFound"
        now = time.time()
        wanted = {(a.get("requester") or {}).get("uid"): a for a in spec_allocs}
        out: list[dict[str, Any]] = []
        for a in old:
            uid = (a.get("requester") or {}).get("uid")
            if uid in wanted or a.get("status") == "Cooldown":
                out.append(a)
            elif a.get("status") == "InUse":
                # released: the ports cool down before anyone else gets them
                out.append({**a, "status": "Cooldown",
                            "timeUnallocated": dt.datetime.fromtimestamp(
                                now, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
        out = [a for a in out if not (a.get("status") == "Cooldown" and _age(a, now) >= cooldown)]
        have = {(a.get("requester") or {}).get("uid") for a in out
                if a.get("status") != "Cooldown"}
        retry = False
        for uid, req in wanted.items():
            entry = next((a for a in out if (a.get("requester") or {}).get("uid") == uid
                          and a.get("status") != "Cooldown"), None)
            if entry is not None and entry.get("status") == "InUse":
                continue
            if state != "Ready":
                got = None
                new = {"requester": req.get("requester"), "ports": [],
                       "status": "InvalidConfiguration"}
            else:
                got = nnf_ports.allocate(ports, out, int(req.get("count", 0)))
                if got:
                    out = nnf_ports.reuse_free(out, got)
                new = {"requester": req.get("requester"), "ports": got or [],
                       "status": "InUse" if got is not None else "InsufficientResources"}
                retry = retry or got is None
            if uid in have:
                out = [new if ((a.get("requester") or {}).get("uid") == uid
                               and a.get("status") != "Cooldown") else a for a in out]
            else:
                out.append(new)
        new_status = {"status": state, "allocations": out}
        if new_status != status:
            store.patch(RESOURCE["portmanager"], *PORT_MANAGER, "merge", {"status": new_status},
                        "status")
        waits = [cooldown - _age(a, now) for a in out if a.get("status") == "Cooldown"]
        if retry:
            waits.append(cooldown + 1)
        if waits:
            self.ctl.after(0, lambda: self._later(max(0.01, min(waits))))


def _age(a: dict[str, Any], now: float) -> float:
    t = a.get("timeUnallocated")
    if not t:
        return 0.0
    return now - parse_microtime(t).timestamp()


class ContainerCluster:
    """The Job controller, mpi-operator and kubelet, as far as a WLM can tell."""

    def __init__(self, ctl: DriverContext, start_seconds: float = 0.0) -> None:
        self.ctl = ctl
        self.start_seconds = start_seconds

    def _patch_status(self, r: Any, ns: str, name: str, status: dict[str, Any]) -> None:
        try:
            self.ctl.store.patch(r, ns, name, "merge", {"status": status}, "status")
        except ApiError as exc:
            if exc.code != 404:
                raise

    def _wf(self, obj: dict[str, Any]) -> str:
        return str((obj["metadata"].get("labels") or {}).get(
            "dataworkflowservices.github.io/workflow.name", ""))

    def resume(self) -> None:
        """Workloads that were starting or stopping when the emulator stopped."""
        store = self.ctl.store
        for r in (JOB, MPIJOB):
            for obj in store.list_objects(r, None):
                st = obj.get("status") or {}
                conds = st.get("conditions") or []
                if any(c.get("type") in ("Failed", "Complete", "Succeeded") for c in conds):
                    continue
                ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
                deadline = (obj.get("spec") or {}).get("activeDeadlineSeconds") \
                    if r is JOB else ((obj.get("spec") or {}).get("runPolicy") or {}).get(
                        "activeDeadlineSeconds")
                if deadline is not None:
                    # shutdown was asked for before the restart: the pods are gone
                    self._finish(r, ns, name, True)
                elif r is MPIJOB and not any(c.get("type") == "Running" for c in conds):
                    sel = obj["spec"]["mpiReplicaSpecs"]
                    first = sel["Launcher"]["template"]["spec"].get("nodeSelector", {}).get(
                        "kubernetes.io/hostname", "")
                    self._run(r, ns, name, [first] * int(sel["Worker"].get("replicas", 1)))
                elif r is JOB and not st.get("ready"):
                    self._run(r, ns, name, [])

    def started(self, r: Any, ns: str, name: str, rabbits: list[str]) -> None:
        try:
            obj = self.ctl.store.get(r, ns, name)
        except ApiError:
            return
        fault = self.ctl.faults.take_container(self._wf(obj), "PreRun")
        if r is MPIJOB:
            self._patch_status(r, ns, name, {"conditions": [
                {"type": "Created", "status": "True", "reason": "MPIJobCreated",
                 "lastTransitionTime": _now()}], "startTime": _now()})
        else:
            self._patch_status(r, ns, name, {"active": 1, "ready": 0, "startTime": _now()})
        if fault is not None and fault.severity == "stall":
            return  # never scheduled: PreRun times out
        if fault is not None:
            self.ctl.after(0, lambda: self._fail(r, ns, name, fault.message))
            return
        if self.start_seconds > 0:
            self.ctl.after(self.start_seconds, lambda: self._run(r, ns, name, rabbits))
        else:
            self._run(r, ns, name, rabbits)

    def _run(self, r: Any, ns: str, name: str, rabbits: list[str]) -> None:
        store = self.ctl.store
        try:
            obj = store.get(r, ns, name)
        except ApiError:
            return
        if (obj.get("status") or {}).get("completionTime") or any(
                c.get("type") in ("Failed", "Complete", "Succeeded")
                for c in (obj.get("status") or {}).get("conditions") or []):
            return
        labels = dict(obj["metadata"].get("labels") or {})
        if r is MPIJOB:
            launcher = f"{name}-launcher"
            self._create_pod(ns, f"{launcher}-{secrets.token_hex(3)[:5]}", {**labels,
                             "app": name, "training.kubeflow.org/job-role": "launcher"},
                             rabbits[0], obj)
            for i, rabbit in enumerate(rabbits):
                self._create_pod(ns, f"{name}-worker-{i}", {**labels, "app": name,
                                 "training.kubeflow.org/job-role": "worker"}, rabbit, obj)
            conds = (obj.get("status") or {}).get("conditions") or []
            self._patch_status(r, ns, name, {"conditions": [*conds, {
                "type": "Running", "status": "True", "reason": "MPIJobRunning",
                "lastTransitionTime": _now()}]})
            return
        rabbit = (obj.get("spec", {}).get("template", {}).get("spec", {}).get("nodeSelector")
                  or {}).get("kubernetes.io/hostname", "")
        self._create_pod(ns, f"{name}-{secrets.token_hex(3)[:5]}",
                         {**labels, "batch.kubernetes.io/job-name": name, "job-name": name},
                         rabbit, obj)
        self._patch_status(r, ns, name, {"active": 1, "ready": 1})

    def _create_pod(self, ns: str, name: str, labels: dict[str, str], node: str,
                    owner: dict[str, Any]) -> None:
        try:
            self.ctl.store.create(POD, ns, {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": labels, "ownerReferences": [{
                    "apiVersion": owner["apiVersion"], "kind": owner["kind"],
                    "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                    "controller": True}]},
                "spec": {"nodeName": node, "containers": [{"name": "emulated"}]}})
            self._patch_status(POD, ns, name, {"phase": "Running", "startTime": _now()})
        except ApiError as exc:
            if exc.code != 409:
                raise

    def _finish(self, r: Any, ns: str, name: str, ok: bool, reason: str = "",
                message: str = "") -> None:
        try:
            obj = self.ctl.store.get(r, ns, name)
        except ApiError:
            return
        status = obj.get("status") or {}
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "Running"]
        if any(c.get("type") in ("Failed", "Complete", "Succeeded") for c in conds):
            return
        now = _now()
        if r is MPIJOB:
            running = {"type": "Running", "status": "False", "lastTransitionTime": now}
            end = {"type": "Succeeded" if ok else "Failed", "status": "True",
                   "reason": "MPIJobSucceeded" if ok else reason, "message": message,
                   "lastTransitionTime": now}
            self._patch_status(r, ns, name, {"conditions": [*conds, running, end],
                                             "completionTime": now})
        elif ok:
            self._patch_status(r, ns, name, {
                "active": 0, "ready": 0, "succeeded": 1, "completionTime": now,
                "conditions": [{"type": "SuccessCriteriaMet", "status": "True",
                                "reason": "CompletionsReached",
                                "message": "Reached expected number of succeeded pods",
                                "lastTransitionTime": now},
                               {"type": "Complete", "status": "True",
                                "reason": "CompletionsReached",
                                "message": "Reached expected number of succeeded pods",
                                "lastTransitionTime": now}]})
        else:
            self._patch_status(r, ns, name, {
                "active": 0, "ready": 0, "failed": 1,
                "conditions": [{"type": "FailureTarget", "status": "True", "reason": reason,
                                "message": message, "lastTransitionTime": now},
                               {"type": "Failed", "status": "True", "reason": reason,
                                "message": message, "lastTransitionTime": now}]})
        sel = f"{'app' if r is MPIJOB else 'batch.kubernetes.io/job-name'}={name}"
        for pod in self.ctl.store.list_objects(POD, ns, sel):
            self._patch_status(POD, ns, pod["metadata"]["name"],
                               {"phase": "Succeeded" if ok else "Failed"})

    def _fail(self, r: Any, ns: str, name: str, message: str) -> None:
        self._finish(r, ns, name, False, "BackoffLimitExceeded",
                     message or "Job has reached the specified backoff limit")

    def set_deadline(self, r: Any, obj: dict[str, Any], seconds: float = 0.0) -> bool:
        """Give a running workload ``seconds`` more (as nnf-sos sets
        activeDeadlineSeconds); past it, it ends DeadlineExceeded.  False if
        a deadline was set already."""
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        spec = obj.get("spec") or {}
        has = (spec.get("runPolicy") or {}).get("activeDeadlineSeconds") if r is MPIJOB \
            else spec.get("activeDeadlineSeconds")
        if has is not None:
            return False
        started = (obj.get("status") or {}).get("startTime")
        ran = time.time() - parse_microtime(started).timestamp() if started else 0.0
        deadline = max(1, int(ran + seconds + 0.999))
        patch = {"runPolicy": {"activeDeadlineSeconds": deadline}} if r is MPIJOB \
            else {"activeDeadlineSeconds": deadline}
        self.ctl.store.patch(r, ns, name, "merge", {"spec": patch})
        text = "Job was active longer than specified deadline"
        self.ctl.after(seconds, lambda: self._finish(r, ns, name, False, "DeadlineExceeded",
                                                     text))
        return True

    def shutdown(self, r: Any, obj: dict[str, Any], timeout: float) -> None:
        """PostRun: the containers are asked to stop, with ``timeout`` to do it."""
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        if not self.set_deadline(r, obj, timeout):
            return  # asked already
        fault = self.ctl.faults.take_container(self._wf(obj), "PostRun")
        if fault is not None and fault.severity == "stall":
            return  # ignores the shutdown: the deadline ends it
        if fault is not None:
            self._fail(r, ns, name, fault.message)
            return
        self._finish(r, ns, name, True)
