"""User containers on the real nnf-sos and real kubelets (issue 78, item
2): the rabbits are Nodes of flux_dws.realstack.nodes, each rabbit's
kubelet and containerd in that rabbit's mount namespace (a Pod's
hostPath is what its rabbit sees), the container profile a site would
write with the project's busybox image.  A job with a container
directive, submitted as a user who is not root (nnf-sos runs the
container as the job's user, and never as root), runs its container on
each rabbit of its computes from PreRun; the container writes to the
job's storage; PostRun waits for it; a failing container fails the job
in nnf-sos' words.  March release set (the container code of May's is
the same but for raw storage).

The profiles are flux_dws.realstack.containers' (what kind mode makes
them add is said there); the job's storage is gfs2, a file system per
compute, all of them mounted on the compute's rabbit (kind mode's Lustre
is a symlink to nowhere on a rabbit, with no Lustre client, which the
kubelet's hostPath check refuses: "is not a directory").
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from t.python.realk8s import require_binaries, require_nodes
from t.python.test_realnnf_persistent import JOB_TIMEOUT, release_build
from t.python.test_realstack_nodes import until

from flux_dws.harness import Harness, RemoteEmulator
from flux_dws.realstack import containers, nnf
from flux_dws.realstack import controlplane as cpl
from flux_dws.realstack.nodes import PodNodes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

USER = 1000
try:
    GROUP = pwd.getpwuid(USER).pw_gid
except KeyError:
    GROUP = USER
GFS2 = "#DW jobdw type=gfs2 capacity=10GiB name=scratch"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[tuple[nnf.RealControllers, Harness]]:
    bins, nbins = require_binaries(), require_nodes()
    build = release_build("2026-03")
    workdir: Path = tmp_path_factory.mktemp("realnnf-containers")
    with cpl.ControlPlane(workdir / "cp", bins) as cp:
        nodes = PodNodes(cp, ["kind-worker2", "kind-worker3"], workdir / "nodes", nbins,
                         mpi=True)
        with nnf.RealControllers(cp, workdir / "nnf", system="kind", nnf=build,
                                 nodes=nodes) as rc:
            cp.apply_files([cpl.k8s_dir() / "rbac" / "flux-bindings.yaml"])
            for profile in containers.profiles(USER, GROUP):
                cp.apply(profile)
            with Harness(system="kind",
                         emulator=RemoteEmulator(cp.flux_kubeconfig,  # type: ignore[arg-type]
                                                 cp.admin_kubeconfig)) as h:
                h.wait_for(lambda: all(h.fluxion.rabbit_up(r.name) for r in h.system.rabbits),
                           what="rabbits up", timeout=JOB_TIMEOUT)
                yield rc, h
                assert kube_jobs(rc) == [], pods(rc)


def notes(h: Harness, jobid: int) -> list[str]:
    job = h.wait(jobid, timeout=JOB_TIMEOUT)
    return [e["note"] for e in job.exceptions if e["severity"] == 0]


def pods(rc: nnf.RealControllers) -> str:
    """The pods of the workflows' namespace and what their containers
    wrote: a failed assertion's explanation."""
    items = rc.plane.request("GET", "/api/v1/namespaces/default/pods")[1]["items"]
    lines = []
    for p in items:
        status = p["status"]
        states = [(c["name"], c.get("state"))
                  for c in status.get("initContainerStatuses", []) + status.get(
                      "containerStatuses", [])]
        lines.append(f"{p['metadata']['name']} on {p['spec'].get('nodeName')}: "
                     f"{status.get('phase')} {states}")
    assert rc.nodes is not None
    lines += [f"{path}: {text[-500:]}" for path, text in rc.nodes.pod_logs().items()]
    return "\n".join(lines) or "no pods"


def kube_jobs(rc: nnf.RealControllers) -> list[str]:
    """The Kubernetes Jobs of the workflows' namespace: nnf-sos makes one
    per rabbit for a non-MPI container and deletes them at Teardown."""
    items = rc.plane.request("GET", "/apis/batch/v1/namespaces/default/jobs")[1]["items"]
    return sorted(j["metadata"]["name"] for j in items)


def running(rc: nnf.RealControllers, job: int) -> bool:
    """Whether every user container of ``job`` runs: one per rabbit of
    its computes (a Kubernetes Job each), none ended."""
    selector = f"labelSelector=nnf.cray.hpe.com/container=fluxjob-{job}"
    jobs = rc.plane.request("GET", f"/apis/batch/v1/namespaces/default/jobs?{selector}")[1]
    items = rc.plane.request("GET", f"/api/v1/namespaces/default/pods?{selector}")[1]["items"]
    states = [c.get("state") or {} for p in items
              for c in p["status"].get("containerStatuses", []) if c["name"] == "app"]
    return 0 < len(jobs["items"]) == len(states) and all("running" in st for st in states)


def until_seen(rc: nnf.RealControllers, cond: Callable[[], bool], what: str) -> None:
    """until(cond), a timeout saying what the pods were then."""
    try:
        until(cond, what, timeout=JOB_TIMEOUT)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; {pods(rc)}") from None


def until_running(rc: nnf.RealControllers, job: int) -> None:
    until_seen(rc, lambda: running(rc, job), "every container of the job running")


def held(rc: nnf.RealControllers, h: Harness) -> int:
    """A started 2-node job whose hold containers all run (release)."""
    job = started(h, "flux-dws-hold", 2)
    until_running(rc, job)
    return job


def until_postrun(h: Harness, job: int) -> None:
    until(lambda: workflow_state(h, job)[0] == "PostRun", "the Workflow in PostRun",
          timeout=JOB_TIMEOUT)


def ended_cleanly(rc: nnf.RealControllers, h: Harness, job: int) -> None:
    """The job ended with no exception, nothing left in DWS or Kubernetes."""
    assert notes(h, job) == []
    assert h.left_behind(timeout=JOB_TIMEOUT) == ([], [], 0)
    assert kube_jobs(rc) == []


def none_running(rc: nnf.RealControllers, job: int) -> bool:
    selector = f"labelSelector=nnf.cray.hpe.com/container=fluxjob-{job}"
    return not rc.plane.request("GET", f"/api/v1/namespaces/default/pods?{selector}")[1]["items"]


def written(rc: nnf.RealControllers) -> dict[str, str]:
    """What the write containers wrote: {from-<allocation>: its text}."""
    return {p.name: p.read_text() for p in rc.kind_file_systems.glob("*/from-*")}


def allocations(rc: nnf.RealControllers) -> dict[str, list[str]]:
    """Each rabbit's allocations of the job now: the directories of its
    mount path (<rabbit>-<index>, gfs2's one per compute)."""
    return {r: sorted(p.name for p in (rc.files / r / "mnt").glob("*/*")) for r in rc.rabbits}


def file_systems(rc: nnf.RealControllers) -> list[Path]:
    """The job's file systems in kind mode: a directory each."""
    return [d for d in rc.kind_file_systems.iterdir() if d.is_dir()]


def release(rc: nnf.RealControllers) -> None:
    """Let every HOLD container end."""
    for d in file_systems(rc):
        (d / "release").touch()


def workflow_state(h: Harness, job: int) -> tuple[str, bool]:
    [wf] = [w for w in h.workflows() if w["metadata"]["name"] == f"fluxjob-{job}"] or [None]
    assert wf is not None, f"no Workflow for job {job}"
    return wf["status"].get("state", ""), bool(wf["status"].get("ready"))


def submit(h: Harness, profile_name: str, nodes: int) -> int:
    return h.submit(f"{GFS2}\n#DW container name=app profile={profile_name} "
                    "DW_JOB_scratch=scratch", nodes=nodes, runtime=3600.0, userid=USER)


#: nnf-sos (v0.1.32) makes a job's pinned container profile, and a
#: reconcile that follows before its cache has it makes it again, and
#: reports AlreadyExists as the Workflow's Error: the job fails at
#: Proposal, as it would on a site.  Not these tests' subject
PINNED_PROFILE_RACE = "nnfcontainerprofiles.nnf.cray.hpe.com"


def started(h: Harness, profile_name: str, nodes: int) -> int:
    """A job of ``profile_name`` once it started; submitted again, once,
    when it met PINNED_PROFILE_RACE."""
    for _ in range(2):
        job = submit(h, profile_name, nodes)
        h.wait_for(lambda j=job: bool({"start", "clean"} & set(h.jm.jobs[j].events())),
                   JOB_TIMEOUT, f"job {job} started or ended")
        if "start" in h.jm.jobs[job].events():
            return job
        met = notes(h, job)
        assert any(PINNED_PROFILE_RACE in n and "already exists" in n for n in met), met
    raise AssertionError("nnf-sos' pinned profile race, twice")


def test_a_container_writes_to_the_jobs_storage(stack: tuple[nnf.RealControllers, Harness]
                                                ) -> None:
    rc, h = stack
    job = started(h, "flux-dws-write", 4)
    env = h.job(job).env or {}
    ports = env.get("NNF_CONTAINER_PORTS", "")
    assert ports.isdigit(), env
    mine = allocations(rc)
    # four computes, each its own gfs2 file system on its rabbit
    assert sum(len(a) for a in mine.values()) == 4, mine
    want = {f"from-{a}": f"{r} {USER} ports={ports}\n" for r, allocs in mine.items()
            for a in allocs}
    until_seen(rc, lambda: written(rc) == want, "the containers' writes")
    h.finish(job)
    ended_cleanly(rc, h, job)
    assert file_systems(rc) == []


def test_postrun_waits_for_the_container(stack: tuple[nnf.RealControllers, Harness]) -> None:
    rc, h = stack
    job = held(rc, h)
    h.finish(job)
    until_postrun(h, job)
    # the containers hold: PostRun is not done while they run
    assert running(rc, job), pods(rc)
    assert workflow_state(h, job) == ("PostRun", False)
    assert h.job(job).state != "INACTIVE"
    release(rc)
    ended_cleanly(rc, h, job)


def test_a_failing_container_fails_the_job(stack: tuple[nnf.RealControllers, Harness]) -> None:
    rc, h = stack
    job = submit(h, "flux-dws-fail", 2)
    h.wait_event(job, "start", timeout=JOB_TIMEOUT)
    h.finish(job)
    [note] = notes(h, job)
    # nnf-sos' words, as the service passes DWS' errors on
    assert "DW Directive 1" in note, note
    assert h.left_behind(timeout=JOB_TIMEOUT) == ([], [], 0)
    assert kube_jobs(rc) == []


def test_a_cancel_while_the_container_runs(stack: tuple[nnf.RealControllers, Harness]) -> None:
    rc, h = stack
    job = held(rc, h)
    # the first cancel ends the tasks: PostRun, which nnf-sos holds while
    # the containers run; the second, in the epilog, jumps to Teardown
    h.cancel(job)
    until_postrun(h, job)
    assert running(rc, job), pods(rc)
    h.cancel(job)
    h.wait(job, timeout=JOB_TIMEOUT)
    # the containers are stopped with their Jobs: nothing runs on
    assert h.left_behind(timeout=JOB_TIMEOUT) == ([], [], 0)
    until_seen(rc, lambda: kube_jobs(rc) == [] and none_running(rc, job), "no container left")


def test_a_service_restart_while_the_container_runs(
        stack: tuple[nnf.RealControllers, Harness]) -> None:
    rc, h = stack
    job = held(rc, h)
    h.restart_service()
    h.finish(job)
    until_postrun(h, job)
    release(rc)
    ended_cleanly(rc, h, job)


def test_user_container_auth(stack: tuple[nnf.RealControllers, Harness]) -> None:
    """requires=user-container-auth: nnf-sos makes the workflow's token
    (the job gets DW_WORKFLOW_TOKEN) and mounts the site's certificate
    and the token's key into the containers."""
    rc, h = stack
    job = h.submit(f"{GFS2} requires=user-container-auth\n"
                   "#DW container name=app profile=flux-dws-auth DW_JOB_scratch=scratch",
                   nodes=2, runtime=3600.0, userid=USER)
    h.wait_event(job, "start", timeout=JOB_TIMEOUT)
    env = h.job(job).env or {}
    assert env.get("DW_WORKFLOW_TOKEN", "").count(".") == 2, env   # a JWT
    until_seen(rc, lambda: len(auth_files(rc)) == sum(len(a) for a in allocations(rc).values()),
               "the containers' auth files")
    # each mounted file is PEM: the certificate, the token's key
    assert {t for t in auth_files(rc).values()} == {
        "/etc/usercontainer-tls/tls.crt:1\n/etc/usercontainer-token/token.key:1\n"}, \
        auth_files(rc)
    h.finish(job)
    ended_cleanly(rc, h, job)


def auth_files(rc: nnf.RealControllers) -> dict[str, str]:
    return {p.name: p.read_text() for p in rc.kind_file_systems.glob("*/auth-*")}


def mpi_written(rc: nnf.RealControllers) -> set[str]:
    """What the ranks of flux-dws-mpi wrote (a line each, into each
    allocation their worker's Pod has: kind mode mounts one rabbit's
    count of them, the module's text)."""
    return {line for p in rc.kind_file_systems.glob("*/mpi-*")
            for line in p.read_text().splitlines()}


def mpi_objects(rc: nnf.RealControllers, wf: str) -> list[str]:
    """The MPIJob of ``wf`` and the Pods mpi-operator made for it."""
    mpijobs = rc.plane.request("GET", "/apis/kubeflow.org/v2beta1/namespaces/default/mpijobs")
    selector = f"labelSelector=training.kubeflow.org/job-name={wf}"
    items = rc.plane.request("GET", f"/api/v1/namespaces/default/pods?{selector}")[1]["items"]
    return ([m["metadata"]["name"] for m in mpijobs[1]["items"]]
            + [p["metadata"]["name"] for p in items])


def test_an_mpi_container_runs_a_rank_on_each_rabbit(
        stack: tuple[nnf.RealControllers, Harness]) -> None:
    """flux-dws-mpi: an MPIJob (mpi-operator), its launcher on the first
    rabbit, a worker on each; the launcher's mpirun reaches the workers by
    name over ssh, as the job's user, and each rank writes into each
    allocation, then holds (release)."""
    rc, h = stack
    job = started(h, "flux-dws-mpi", 4)
    wf = f"fluxjob-{job}"
    want = {f"{wf}-worker-{i} {USER} rank={i}/2" for i in (0, 1)}
    until_seen(rc, lambda: mpi_written(rc) == want, "each rank's writes")
    selector = f"labelSelector=training.kubeflow.org/job-name={wf}"
    items = rc.plane.request("GET", f"/api/v1/namespaces/default/pods?{selector}")[1]["items"]
    roles = sorted((p["metadata"]["labels"]["training.kubeflow.org/job-role"],
                    p["spec"]["nodeName"]) for p in items)
    release(rc)
    # a worker on each rabbit; the launcher on the first of the job's
    # (nnf-sos' order of them, either here)
    assert [r for r in roles if r[0] == "worker"] == [("worker", "kind-worker2"),
                                                      ("worker", "kind-worker3")], roles
    assert [r[1] for r in roles if r[0] == "launcher"] in (["kind-worker2"],
                                                           ["kind-worker3"]), roles
    h.finish(job)
    assert notes(h, job) == []
    assert h.left_behind(timeout=JOB_TIMEOUT) == ([], [], 0)
    until_seen(rc, lambda: mpi_objects(rc, wf) == [] and kube_jobs(rc) == [],
               "the MPIJob, its launcher Job and its Pods gone")


XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"


def test_copy_in_and_out_by_nnf_dm_on_its_worker_pods(
        stack: tuple[nnf.RealControllers, Harness]) -> None:
    """Item 3: with Pods, nnf-dm runs as upstream deploys it
    (flux_dws.realstack.nnfdm): the job's copy_in from the global Lustre
    and its copy_out back are run by the manager container of nnf-dm's
    worker Pod on the rabbit (upstream's profile: mpirun, dcp), as the
    job's user; no nnf-dm process of the harness runs."""
    rc, h = stack
    assert rc.dm_pods and not [n for n in rc.managers() if n.startswith("nnf-dm")]
    src, out = rc.lustre_root / "dm-in", rc.lustre_root / "dm-out"
    src.mkdir(parents=True)
    (src / "data").write_text("payload\n")
    out.mkdir()
    os.chown(out, USER, GROUP)      # where the user's copy_out makes its directory
    job = h.submit(f"{XFS}\n#DW copy_in source={src}/ destination=$DW_JOB_scratch/\n"
                   f"#DW copy_out source=$DW_JOB_scratch/ destination={out}/",
                   nodes=1, runtime=3600.0, userid=USER)
    h.wait_event(job, "start", timeout=JOB_TIMEOUT)
    h.finish(job)
    assert notes(h, job) == []
    assert h.left_behind(timeout=JOB_TIMEOUT) == ([], [], 0)
    copied = [p for p in out.rglob("*") if p.is_file()]
    assert [p.read_text() for p in copied] == ["payload\n"], copied
    assert all(p.stat().st_uid == USER for p in copied)
    # the commands ran in the worker Pods' manager containers
    assert rc.nodes is not None
    ran = [text for path, text in rc.nodes.pod_logs().items()
           if "_nnf-dm-worker-" in path and "/manager/" in path and "dcp" in text]
    assert ran, sorted(rc.nodes.pod_logs())
