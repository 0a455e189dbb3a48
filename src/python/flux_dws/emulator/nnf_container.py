"""nnf-sos' container driver (its port manager is in nnf_ports.py, the
cluster that runs the containers in nnf_cluster.py).

Per state (doc/guide/emulator.rst, "Controllers"):

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

``PortManager`` (nnf_ports.py) plays nnf-sos' NnfPortManager controller
(dwsim.ports): requests become InUse with ports, or InsufficientResources
(retried every cooldown + 1 s); released ones sit in Cooldown for
``portsCooldownInSeconds``.

``ContainerCluster`` (nnf_cluster.py) plays the Job controller,
mpi-operator and kubelet: a Job becomes ready (a Running Pod on its rabbit) after the ``Container``
latency; at shutdown it completes; ``activeDeadlineSeconds`` ends it with
DeadlineExceeded.  ``container`` faults (emulator.faults) make a
workload never start (``stall`` at PreRun), fail (any severity at PreRun or
PostRun: BackoffLimitExceeded) or ignore shutdown (``stall`` at PostRun).
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

from flux_dws.apiserver.api_resources import BY_GROUP_PLURAL
from flux_dws.apiserver.store import ApiError
from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim import tokens
from flux_dws.emulator.driver import (
    DIRECTIVE_INDEX_LABEL,
    NNF,
    OWNER_LABELS,
    RESOURCE,
    Directive,
    Driver,
    Wait,
    child_labels,
    owner_refs,
    workflow_labels,
)
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
        mounts = self._nnf_volumes(wf, d)
        if mpi:
            spec = data["mpiSpec"]
            self.create_quiet(MPIJOB, ns, {
                "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                "metadata": {"name": name, "labels": labels, "ownerReferences": owner_refs(wf)},
                "spec": {"slotsPerWorker": spec.get("slotsPerWorker", 1),
                         "runPolicy": {"backoffLimit": retry},
                         "mpiReplicaSpecs": {
                             "Launcher": {"replicas": 1, "template": {"spec": {
                                 **_with_volumes(spec.get("launcher") or {}, mounts),
                                 "nodeSelector": {"kubernetes.io/hostname": rabbits[0]}}}},
                             "Worker": {"replicas": len(rabbits), "template": {"spec":
                                        _with_volumes(spec.get("worker") or {}, mounts)}}}}})
            self.ctl.cluster.started(MPIJOB, ns, name, rabbits)
            return
        self.create_quiet(SERVICE, ns, {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "ownerReferences": owner_refs(wf)},
            "spec": {"selector": {CONTAINER_LABEL: name}, "clusterIP": "None"}})
        for rabbit in rabbits:
            pod = _with_volumes(data.get("spec") or {}, mounts)
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

    def _nnf_volumes(self, wf: dict[str, Any], d: Directive) -> list[tuple[str, str, str]]:
        """(volume, variable, path) of each DW_JOB_/DW_PERSISTENT_ argument
        of ``d``, as nnf-sos mounts them into a container: the volume named
        after the argument ("_" made "-"), the rabbit's mount path of the
        storage (its servers' NnfAccess), the argument as a variable."""
        out = []
        for key, value in d.args.items():
            for prefix, command in (("DW_JOB_", "jobdw"), ("DW_PERSISTENT_", "persistentdw")):
                if not key.startswith(prefix):
                    continue
                target = next((x for x in self.ctl.directives(wf)
                               if x.command == command and x.args.get("name") == value), None)
                if target is None:
                    continue
                access = self._get(RESOURCE["access"], wf,
                                   f"{wf['metadata']['name']}-{target.index}-servers")
                path = ((access or {}).get("spec") or {}).get("mountPath") or (
                    wf["status"].get("env") or {}).get(prefix + value.replace("-", "_"), "")
                out.append((key[len(prefix):].replace("_", "-"), key.replace("-", "_"), path))
        return out

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


def _with_volumes(spec: dict[str, Any], volumes: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A copy of the pod ``spec`` with nnf-sos' volumes of the storage:
    each a hostPath, mounted into every container (not the init ones) at
    its path, which the container's variable names (addNnfVolumes)."""
    pod = copy_json(spec)
    for name, variable, path in volumes:
        pod.setdefault("volumes", []).append(
            {"name": name, "hostPath": {"path": path, "type": "Directory"}})
        for c in pod.get("containers") or []:
            c.setdefault("volumeMounts", []).append({"name": name, "mountPath": path})
            c.setdefault("env", []).append({"name": variable, "value": path})
    return pod
