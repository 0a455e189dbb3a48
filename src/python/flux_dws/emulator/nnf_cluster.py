"""What runs user containers in the emulator: batch Jobs and MPIJobs get
a Pod per rabbit that runs (after the ``Container`` latency), finishes at
shutdown, or fails or times out as ``container`` faults and deadlines say."""

from __future__ import annotations

import secrets
import time
from typing import Any

from flux_dws.apiserver.store import ApiError, now_rfc3339
from flux_dws.dwsim.gotime import parse_microtime
from flux_dws.emulator.driver import DriverContext
from flux_dws.emulator.nnf_container import (
    JOB,
    MPIJOB,
    POD,
)
from flux_dws.libdws.wfstates import POST_RUN, PRE_RUN


def _containers(spec: Any) -> list[dict[str, Any]]:
    """The containers of a Job spec or an MPIJob replica spec's Pod template
    (name, image, command, args), or one named ``emulated`` if it has none."""
    tmpl = ((spec or {}).get("template") or {}).get("spec") or {} if isinstance(spec, dict) \
        else {}
    out = [{k: c[k] for k in ("name", "image", "command", "args") if k in c}
           for c in tmpl.get("containers") or [] if isinstance(c, dict) and c.get("name")]
    return out or [{"name": "emulated"}]


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
        fault = self.ctl.faults.take_container(self._wf(obj), PRE_RUN)
        if r is MPIJOB:
            self._patch_status(r, ns, name, {"conditions": [
                {"type": "Created", "status": "True", "reason": "MPIJobCreated",
                 "lastTransitionTime": now_rfc3339()}], "startTime": now_rfc3339()})
        else:
            self._patch_status(r, ns, name, {"active": 1, "ready": 0, "startTime": now_rfc3339()})
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
            replicas = obj["spec"].get("mpiReplicaSpecs") or {}
            self._create_pod(ns, f"{launcher}-{secrets.token_hex(3)[:5]}", {**labels,
                             "app": name, "training.kubeflow.org/job-role": "launcher"},
                             rabbits[0], obj, _containers(replicas.get("Launcher")))
            for i, rabbit in enumerate(rabbits):
                self._create_pod(ns, f"{name}-worker-{i}", {**labels, "app": name,
                                 "training.kubeflow.org/job-role": "worker"}, rabbit, obj,
                                 _containers(replicas.get("Worker")))
            conds = (obj.get("status") or {}).get("conditions") or []
            self._patch_status(r, ns, name, {"conditions": [*conds, {
                "type": "Running", "status": "True", "reason": "MPIJobRunning",
                "lastTransitionTime": now_rfc3339()}]})
            return
        rabbit = (obj.get("spec", {}).get("template", {}).get("spec", {}).get("nodeSelector")
                  or {}).get("kubernetes.io/hostname", "")
        self._create_pod(ns, f"{name}-{secrets.token_hex(3)[:5]}",
                         {**labels, "batch.kubernetes.io/job-name": name, "job-name": name},
                         rabbit, obj, _containers(obj.get("spec")))
        self._patch_status(r, ns, name, {"active": 1, "ready": 1})

    def _create_pod(self, ns: str, name: str, labels: dict[str, str], node: str,
                    owner: dict[str, Any], containers: list[dict[str, Any]]) -> None:
        """A Running Pod with the template's containers; each writes to its
        log what it runs (the emulator runs nothing)."""
        try:
            self.ctl.store.create(POD, ns, {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": labels, "ownerReferences": [{
                    "apiVersion": owner["apiVersion"], "kind": owner["kind"],
                    "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                    "controller": True}]},
                "spec": {"nodeName": node, "containers": containers}})
            self._patch_status(POD, ns, name, {"phase": "Running", "startTime": now_rfc3339()})
            for c in containers:
                argv = [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
                text = f"flux-dws emulator: container {c['name']} ({c.get('image', 'no image')})" \
                       f" started in pod {name} on {node}"
                if argv:
                    text += "\n+ " + " ".join(argv)
                self._log(ns, name, c["name"], text)
        except ApiError as exc:
            if exc.code != 409:
                raise

    def _log(self, ns: str, pod: str, container: str, text: str) -> None:
        try:
            self.ctl.store.append_pod_log(ns, pod, container, text)
        except ApiError as exc:
            # 405: attached to a real API server, where a kubelet writes a
            # container's output and nothing else can (the pod has none)
            if exc.code not in (404, 405):
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
        now = now_rfc3339()
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
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            for c in (pod.get("spec") or {}).get("containers") or []:
                self._log(ns, pod["metadata"]["name"], c["name"],
                          f"flux-dws emulator: container {c['name']} exited with status 0"
                          if ok else f"flux-dws emulator: container {c['name']} failed:"
                                     f" {reason}: {message}")
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
        fault = self.ctl.faults.take_container(self._wf(obj), POST_RUN)
        if fault is not None and fault.severity == "stall":
            return  # ignores the shutdown: the deadline ends it
        if fault is not None:
            self._fail(r, ns, name, fault.message)
            return
        self._finish(r, ns, name, True)
