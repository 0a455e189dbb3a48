"""flux-dws at El Capitan scale under a real broker (issue 25).

One Flux instance (one broker) whose R is El Capitan's, made by
``flux dws2jgf`` from the emulator's ``elcap`` system (11,136 computes,
696 rabbits of 36 ssd chunks), with ``resource.noverify``, the resource
module's ``monitor-force-up`` (the other 11,135 ranks have no broker) and
``system.exec.test`` (jobs need no shells), Fluxion, dws-jobtap.so and the
dws service as a broker module, against ``flux-dws emulator --system elcap
--latency zero``.  The workload is 2,000 rabbit jobs of mixed kinds (xfs,
gfs2, lustre, raw, persistent create/use/destroy chains, copy_in/copy_out,
a user container) of 1 to 512 nodes, at least 500 in flight.  Then 1,000
jobs are left running and the service is reloaded: its start-up to serving.

    PYTHONPATH=src/python:build/src/python python t/bench/bench_scale.py \\
        [--jobs N] [--in-flight N] [--cores N] [--chaos SEED] [--seed SEED]
        [--lustre-spread] [--release-computes MODE] [--keep]
        [--api-server emulator|kube-apiserver|both]

``--chaos SEED`` runs the same workload while, at times drawn from SEED
(counted in jobs ended, so a run is reproducible), the emulator injects
driver errors, TransientConditions, ClientMount failures, watch 410s,
5xx bursts and an API server restart (``--state``); the service is
reloaded 5 times, the jobtap plugin twice (``flux jobtap load --remove``),
Fluxion's modules once, and 10
rabbits go down and up.

It prints, last, one line:

    scale: N jobs, X jobs/s, reaction p50/p99 A/B ms, service CPU C ms/job,
    RSS D MB, start-up E s with F live Workflows, re-list after a 410 R s,
    stuck G, leaked H

and, before it, the service's err-level log lines (the broker's log ring,
kept whole), counted and the most common shown with numbers folded, and
the problems found in the ended jobs' KVS records (each job's
against what its eventlog says it must hold: ``record_problems``).  It
exits 1 when a job is stuck, something leaked, a record is wrong or an
err-level line is not an injected fault's own (``stray_errors``: under
--chaos the faults' messages say "bench chaos:"; without, none is
injected).

reaction: a watch event in to each write it causes sent (the service's own
figure; under --chaos, of the service instance loaded last); service CPU
and RSS: the service's process (flux-core runs a Python broker module as a
process of its own; its peak RSS); stuck: jobs not clean at the end;
leaked: Workflows, ClientMounts, NnfStorages, PersistentStorageInstances
and rabbits not "up" in Fluxion left behind.  Goals: X >= 50, B <= 20,
C <= 5, D <= 300, E <= 2 with 1,000 live Workflows, G = H = 0.

``--release-computes after-unmount`` runs it with rabbit jobs' computes
released once PostRun is done (issue 38): stuck and leaked then also
cover the ssd holds (an ssd still held at the end is leaked).

``--lustre-spread`` sets ``[rabbit.lustre] spread = true`` (issue 27): the
Lustre jobs' file systems go on the rabbits Fluxion chooses on El Capitan's
graph, through the whole path (jobspec rewrite, Fluxion, the job's R from
the KVS, the Servers from it); a line before the last says how many
rabbits the Lustre jobs that completed used (their ``rabbits`` memo).

Nodes have ``--cores`` cores (default 1): the rabbit path never looks at
cores, and El Capitan's 96 cores and 4 GPUs per node make a 186 MB R that
takes Fluxion minutes to load on a 2-core machine (``--cores 96`` does it).
``--api-server kube-apiserver`` runs the same on a real control plane:
kube-apiserver and etcd from t/k8s/build.sh (flux_dws.realstack.controlplane;
etcd without fsync, as for every test), the emulator's El Capitan
controllers attached to it as ordinary clients (``flux-dws emulator
--api-server``) and the service as user ``flux`` with only the workload
manager's roles; ``--api-server both`` runs the emulator's then that, and
prints their last lines side by side.  Each run also measures a watch
re-list after a 410, with the start-up's live Workflows: every watch of
the service answered 410 Gone at once (the emulator: its expire-watches
and drop-watches faults; kube-apiserver: a write, etcd compacted past it,
kube-apiserver restarted, as a compaction does to watches over a restart),
the seconds from the fault until each has listed again and watches.  No
kubelet runs there, so no Pod runs: the user container jobs' draws are
gfs2 jobs of the same size on kube-apiserver (``--no-containers``, which
both runs of ``both`` take, so their workloads are the same).
``--chaos`` needs the emulator's API server (its faults are the
emulator's); t3602 holds the real control plane's faults as tests.

``--keep`` leaves the work directory (the emulator's log and ``--state``
database, the instance's config) for a look after the run.
Skips, saying why, where Flux, Fluxion or the plugins are absent.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

TOP = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("DWS_BUILDDIR", TOP / "build"))
JOBTAP = BUILD / "src/job-manager/plugins/dws-jobtap.so"
DWS_MODULE = TOP / "src/modules/dws.py"
FLUXION_MODULES = ("sched-fluxion-qmanager", "sched-fluxion-feasibility",
                   "sched-fluxion-resource")


# --- outside: build the system and start the instance -------------------------

def _skip_reason() -> str | None:
    flux = shutil.which("flux")
    if flux is None:
        return "flux is not on PATH (bash ../shared/flux/install.sh; PATH=/opt/flux/bin:$PATH)"
    if not JOBTAP.exists():
        return f"the Flux plugins are not built ({JOBTAP} is missing)"
    mods = subprocess.run([flux, "env", "sh", "-c", "echo $FLUX_MODULE_PATH"],
                          capture_output=True, text=True, check=False).stdout.strip()
    if not any((Path(d) / "sched-fluxion-resource.so").exists() for d in mods.split(":") if d):
        return "Fluxion (sched-fluxion-resource.so) is not installed with this flux"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _python_env() -> dict[str, str]:
    """PYTHONPATH for the instance's ``flux python`` (the broker's Python,
    which has the flux bindings): the source tree, the build's cffi
    module, and this venv's packages (kubernetes)."""
    import site

    env = dict(os.environ)
    env["PYTHONPATH"] = ":".join([str(TOP / "src/python"), str(BUILD / "src/python"),
                                  site.getsitepackages()[0]])
    return env


def build_system(work: Path, cores: int, spread: bool = False,
                 release: str | None = None) -> None:
    """work/R.json (El Capitan from the emulator's elcap system) and the
    instance's config and modprobe directories."""
    from flux_dws.emulator import start_subprocess
    env = _python_env()
    kc = work / "mapping-kubeconfig"
    emu = start_subprocess(kc, "--system", "elcap", "--latency", "zero", timeout=120,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with open(work / "elcap.json", "w") as out:
            subprocess.run([sys.executable, "-m", "flux_dws", "rabbitmapping"], stdout=out,
                           env={**env, "KUBECONFIG": str(kc)}, check=True)
    finally:
        emu.terminate()
        emu.wait(30)
    (work / "resource.toml").write_text(
        '[resource]\nnoverify = true\n[[resource.config]]\nhosts = "elcap[1001-12136]"\n'
        f'cores = "0-{cores - 1}"\n')
    with open(work / "R.json", "w") as out:
        subprocess.run([sys.executable, "-m", "flux_dws", "dws2jgf", "--cluster-name", "elcap",
                        "--from-config", str(work / "resource.toml"), str(work / "elcap.json")],
                       stdout=out, env=env, check=True)
    (work / "conf").mkdir()
    (work / "conf/instance.toml").write_text(f"""\
[resource]
noverify = true
path = "{work}/R.json"
[sched-fluxion-resource]
match-format = "rv1"
[job-manager]
plugins = [ {{ load = "{JOBTAP}" }} ]
[rabbit]
kubeconfig = "{work}/kubeconfig"
mapping = "{work}/elcap.json"
""" + (f'release_computes = "{release}"\n' if release else "")
      + ("[rabbit.lustre]\nspread = true\n" if spread else ""))
    rc1 = work / "modprobe/rc1.d"
    rc1.mkdir(parents=True)
    # one broker holds 11,136 nodes' R: the others are forced up; the dws
    # service is loaded by the benchmark itself (its start-up is measured)
    (rc1 / "scale.py").write_text(
        "def setup(context):\n"
        "    context.setopt('resource', 'monitor-force-up noverify', overwrite=True)\n")


#: written by the initial program when it is done (instance_stop_bound)
INSIDE_DONE = "inside-done"
#: the initial program's last line (scale: ...), for --api-server both
RESULT = "result"
#: seconds for the emulator's controllers to seed El Capitan on kube-apiserver
ATTACH_TIMEOUT = 600.0
#: seconds for every watch to list again after a 410
RELIST_TIMEOUT = 300.0
#: seconds the instance may take to stop once its initial program is done,
#: before it is stopped as a site stops one (SIGTERM); and the broker's
#: cleanup-timeout, which flux-core applies on that signal only
STOP_WAIT, CLEANUP_TIMEOUT = 60.0, 30.0


def run_instance(cmd: list[str], env: dict[str, str], done: Path) -> int:
    """Run the instance; its exit status.  A stopping instance waits for
    every epilog (flux queue idle, with no bound unless by a signal): jobs
    left in CLEANUP with their dws service gone (a stalled run's) would
    hold it for good.  So once the initial program is done, the instance
    gets STOP_WAIT seconds, then SIGTERM, as systemd stops one: the
    cleanup is then cut after broker.cleanup-timeout and the jobs stay
    active with their Workflows, for the next start to carry on
    (t3107).  Last, SIGKILL."""
    proc = subprocess.Popen(cmd, env=env)
    since: float | None = None
    signalled = False
    while True:
        try:
            return proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        if since is None and done.exists():
            since = time.monotonic()
        if since is None:
            continue
        waited = time.monotonic() - since
        if not signalled and waited > STOP_WAIT:
            print(f"bench_scale: the instance did not stop within {STOP_WAIT:.0f} s of its"
                  " initial program's end (jobs in CLEANUP wait for epilogs): SIGTERM, as a"
                  f" site stops one (broker.cleanup-timeout {CLEANUP_TIMEOUT:.0f} s)",
                  flush=True)
            proc.send_signal(signal.SIGTERM)
            signalled = True
        elif waited > STOP_WAIT + CLEANUP_TIMEOUT + 120:
            print("bench_scale: the instance ignored SIGTERM: killed", flush=True)
            proc.kill()
            return proc.wait()


def _plane_skip_reason(api_server: str) -> str | None:
    if api_server == "emulator":
        return None
    from flux_dws.realstack.controlplane import ControlPlaneUnavailable, binaries

    try:
        binaries()
    except ControlPlaneUnavailable as exc:
        return f"no kube-apiserver: {exc}"
    return None


def outside(args: argparse.Namespace) -> int:
    """One run on the API server args.api_server names, or with "both" the
    emulator's, then kube-apiserver's, their last lines side by side."""
    reason = _skip_reason() or _plane_skip_reason(args.api_server)
    if reason is None and args.chaos is not None and args.api_server != "emulator":
        reason = "--chaos needs --api-server emulator (the faults it injects are the emulator's)"
    if reason is not None:
        print(f"scale: skipped: {reason}")
        return 0
    if args.api_server == "kube-apiserver" and not args.no_containers:
        print("scale: no user container jobs on kube-apiserver (no kubelet runs their Pods"
              " here): their draws are gfs2 jobs", flush=True)
        args.argv = [*args.argv, "--no-containers"]
    if args.api_server != "both":
        return outside_one(args, args.argv)[0]
    lines, rc = [], 0
    for server in ("emulator", "kube-apiserver"):
        print(f"=== on {server} (no user container jobs: no kubelet runs their Pods on"
              " kube-apiserver here; their draws are gfs2 jobs) ===", flush=True)
        one_rc, line = outside_one(args, [*args.argv, "--api-server", server, "--no-containers"])
        rc = rc or one_rc
        lines.append(f"{server + ':':16} {line or '(no result: the run failed)'}")
    print("side by side (the same workload, seed and live Workflows):\n"
          + "\n".join(lines), flush=True)
    return rc


def outside_one(args: argparse.Namespace, inner: list[str]) -> tuple[int, str]:
    """(exit status, the scale line) of one instance's run."""
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        if args.keep:
            print(f"work: {work} (kept: the emulator's log and state, the instance's config)",
                  flush=True)
        t0 = time.monotonic()
        build_system(work, args.cores, args.lustre_spread, args.release_computes)
        print(f"system: El Capitan R ({args.cores} core(s)/node) "
              f"{(work / 'R.json').stat().st_size / 1e6:.1f} MB in "
              f"{time.monotonic() - t0:.1f} s", flush=True)
        env = {**_python_env(), "FLUX_MODPROBE_PATH_APPEND": str(work / "modprobe")}
        # a log ring large enough to keep every err line of the run
        cmd = ["flux", "start", "-s1", "-Slog-ring-size=1000000",
               f"-Sbroker.cleanup-timeout={CLEANUP_TIMEOUT:.0f}", f"--config-path={work}/conf",
               "flux", "python", str(Path(__file__).resolve()), "--inside", str(work), *inner]
        rc = run_instance(cmd, env, work / INSIDE_DONE)
        result = work / RESULT
        return rc, result.read_text().strip() if result.exists() else ""
    finally:
        if not args.keep and not (work / "stall").exists():
            shutil.rmtree(work, ignore_errors=True)


# --- inside: the instance's initial program ---------------------------------

XFS = "#DW jobdw type=xfs capacity={gib}GiB name=scratch"
GFS2 = "#DW jobdw type=gfs2 capacity={gib}GiB name=shared"
RAW = "#DW jobdw type=raw capacity={gib}GiB name=blocks"
LUSTRE = "#DW jobdw type=lustre capacity={tib}TiB name=lus"
COPY = [LUSTRE, "#DW copy_in source=/p/lustre5/bench/in destination=$DW_JOB_lus/in",
        "#DW copy_out source=$DW_JOB_lus/out destination=/p/lustre5/bench/out"]
CONTAINER = ["#DW jobdw type=gfs2 capacity={gib}GiB name=cgfs2 requires=user-container-auth",
             "#DW container name=bench profile=example-mpi DW_JOB_foo_local_storage=cgfs2"]
CHAIN_USERS = 3  # a persistent chain: create, 3 users, destroy
#: what every message of a fault the chaos injects says
CHAOS_MARK = "bench chaos: "


class Job:
    __slots__ = ("clean", "deps", "dw", "exception", "id", "kind", "nodes", "rabbits",
                 "submitted")

    def __init__(self, kind: str, nodes: int, dw: str | list[str],
                 deps: list[tuple[str, Job]] | None = None) -> None:
        self.kind, self.nodes, self.dw = kind, nodes, dw
        self.deps = deps or []
        self.id: int | None = None
        self.submitted = self.clean = 0.0
        self.exception: str | None = None
        self.rabbits = ""  # its "rabbits" memo: its computes' and its file system's


def workload(n: int, rng: random.Random, containers: bool = True) -> list[Job]:
    """n jobs in submission order; a persistent chain's jobs are adjacent.
    Without containers, a draw of a user container job is a gfs2 job of
    the same size (the other jobs stay the same)."""
    jobs: list[Job] = []
    chain = 0

    def size() -> int:  # 1..512, log-uniform: mostly small, some big
        return max(1, min(512, round(2 ** rng.uniform(0, 9))))

    while len(jobs) < n:
        r = rng.random()
        gib = rng.choice((10, 50, 100, 200))
        if r < 0.32:
            jobs.append(Job("xfs", size(), XFS.format(gib=gib)))
        elif r < 0.50:
            jobs.append(Job("gfs2", size(), GFS2.format(gib=gib)))
        elif r < 0.60:
            jobs.append(Job("raw", size(), RAW.format(gib=gib)))
        elif r < 0.75:
            jobs.append(Job("lustre", size(), LUSTRE.format(tib=rng.choice((1, 4, 16)))))
        elif r < 0.87:
            jobs.append(Job("copy", size(), [d.format(tib=1) for d in COPY]))
        elif r < 0.96 and containers:
            jobs.append(Job("container", min(size(), 16), [d.format(gib=gib) for d in CONTAINER]))
        elif r < 0.96:
            jobs.append(Job("gfs2", min(size(), 16), GFS2.format(gib=gib)))
        elif n - len(jobs) >= CHAIN_USERS + 2:  # 4% of draws, 17% of jobs
            chain += 1
            name = f"bench-p{chain}"
            create = Job("persistent", 1, f"#DW create_persistent type=lustre capacity=1TiB"
                                          f" name={name}")
            users = [Job("persistent", size(), f"#DW persistentdw name={name}",
                         [("afterok", create)]) for _ in range(CHAIN_USERS)]
            destroy = Job("persistent", 1, f"#DW destroy_persistent name={name}",
                          [("afterany", u) for u in users])
            jobs += [create, *users, destroy]
        else:
            jobs.append(Job("xfs", size(), XFS.format(gib=gib)))
    return jobs[:n]


class Instance:
    """The benchmark's hold on the instance: jobs, the service, the emulator."""

    def __init__(self, work: Path, args: argparse.Namespace) -> None:
        import flux
        import flux.job

        self.flux, self.fjob = flux, flux.job
        self.h = flux.Flux()
        self.work, self.args = work, args
        self.kubeconfig = work / "kubeconfig"   # the service's ([rabbit] kubeconfig)
        self.port = _free_port()
        self.emulator: subprocess.Popen[bytes] | None = None
        # --api-server kube-apiserver: the control plane, and the
        # emulator's faults' kubeconfig (its attached webhook server)
        self.plane: Any = None
        self.fault_kubeconfig = self.kubeconfig
        self.admin_kubeconfig = self.kubeconfig
        self.service_pid: int | None = None
        self.cpu_done = 0.0   # CPU of service processes already gone (reloads)
        self.cpu_base = 0.0   # the current process's CPU when the run began
        self.rss_peak = 0.0
        self.journal = flux.job.JournalConsumer(self.h, full=False).start()
        self.ended: dict[int, Job] = {}
        self.by_id: dict[int, Job] = {}
        self.started: set[int] = set()

    # emulator ------------------------------------------------------------
    def start_emulator(self) -> None:
        if self.args.api_server == "kube-apiserver":
            self.start_attached()
            return
        from flux_dws.emulator import start_subprocess
        extra = ["--state", str(self.work / "emulator.db")] if self.args.chaos is not None else []
        self.emulator = start_subprocess(
            self.kubeconfig, "--system", "elcap", "--latency", "zero", *extra, timeout=120,
            listen=f"127.0.0.1:{self.port}", stdout=subprocess.DEVNULL,
            stderr=open(self.work / "emulator.log", "ab"))

    def start_attached(self) -> None:
        """kube-apiserver and etcd (the emulator's kinds as CRDs, the
        workload manager's roles bound to user flux), the emulator's El
        Capitan controllers attached to it; the service's kubeconfig is
        flux's."""
        from flux_dws.realstack.controlplane import ControlPlane

        t0 = time.monotonic()
        self.plane = ControlPlane(self.work / "cp").start()
        self.plane.install_crds()
        self.plane.apply_rbac()
        self.kubeconfig.write_bytes(Path(self.plane.flux_kubeconfig).read_bytes())
        self.admin_kubeconfig = Path(self.plane.admin_kubeconfig)
        self.fault_kubeconfig = self.work / "fault.kubeconfig"
        log = self.work / "emulator.log"
        with open(log, "ab") as out:
            self.emulator = subprocess.Popen(
                [sys.executable, "-m", "flux_dws", "emulator", "--api-server",
                 str(self.admin_kubeconfig), "--system", "elcap", "--latency", "zero",
                 "--kubeconfig", str(self.fault_kubeconfig)],
                stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + ATTACH_TIMEOUT
        while b"controllers of elcap attached to" not in log.read_bytes():
            if self.emulator.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("bench_scale: the emulator's controllers did not attach to"
                                 f" kube-apiserver within {ATTACH_TIMEOUT:.0f} s: "
                                 + log.read_text(errors="replace")[-2000:])
            time.sleep(0.2)
        print(f"control plane: kube-apiserver + etcd ready, El Capitan seeded and its"
              f" controllers attached in {time.monotonic() - t0:.1f} s", flush=True)

    def stop_emulator(self) -> None:
        if self.emulator is not None:
            self.emulator.send_signal(signal.SIGTERM)
            self.emulator.wait(60)
            self.emulator = None
        if self.plane is not None:
            self.plane.stop()
            self.plane = None

    def plane_hwm(self) -> str:
        """kube-apiserver's and etcd's peak RSS, for the record."""
        if self.plane is None:
            return ""
        peaks = []
        for name in ("kube-apiserver", "etcd"):
            status = Path(f"/proc/{self.plane._proc(name).pid}/status").read_text()
            kb = next(int(line.split()[1]) for line in status.splitlines()
                      if line.startswith("VmHWM:"))
            peaks.append(f"{name} {kb / 1024:.0f} MB")
        return ", ".join(peaks)

    def fault(self, *argv: str) -> None:
        subprocess.run([sys.executable, "-m", "flux_dws", "fault", "--kubeconfig",
                        str(self.fault_kubeconfig), *argv], check=True, stdout=subprocess.DEVNULL)

    def expire_watches(self, watches: int) -> float:
        """The service's watches' next requests from their resourceVersion
        answered 410 Gone, their streams cut: the emulator's faults (as
        many 410s as it has watches), or on
        kube-apiserver what does it there (a write no watch has seen,
        etcd compacted past it, kube-apiserver restarted).  Seconds the
        API server was away (its restart), 0 for the emulator."""
        if self.plane is None:
            self.fault("expire-watches", "--count", str(watches))
            self.fault("drop-watches")
            return 0.0
        self.plane.request("POST", "/api/v1/namespaces/default/configmaps",
                           {"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"generateName": "bench-compaction-"}})
        self.plane.compact()
        t0 = time.monotonic()
        self.plane.restart("kube-apiserver")
        return time.monotonic() - t0

    # the service ---------------------------------------------------------
    def rpc(self, topic: str, payload: Any = None) -> Any:
        return self.h.rpc(topic, payload if payload is not None else {}).get()

    def load_service(self) -> float:
        """Load the dws module; seconds until it serves (synced, rabbits known)."""
        t0 = time.monotonic()
        subprocess.run(["flux", "module", "load", str(DWS_MODULE)], check=True)
        while True:
            try:
                st = self.rpc("dws.status")
                if st.get("synced") and st.get("rabbits"):
                    break
            except OSError:
                pass
            time.sleep(0.01)
        took = time.monotonic() - t0
        self.service_pid = self._find_service_pid()
        return took

    def unload_service(self) -> None:
        self.sample_service()
        if self.service_pid is not None:
            self.cpu_done += self._cpu(self.service_pid) - self.cpu_base
        subprocess.run(["flux", "module", "remove", "dws"], check=True)
        self.service_pid, self.cpu_base = None, 0.0

    def _find_service_pid(self) -> int:
        """flux-core runs a Python module as a child process of the broker."""
        broker = int(self.h.attr_get("broker.pid"))
        for child in Path(f"/proc/{broker}/task").glob("*/children"):
            for pid in child.read_text().split():
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                if str(DWS_MODULE).encode() in cmd:
                    return int(pid)
        raise SystemExit("bench_scale: cannot find the dws service's process")

    @staticmethod
    def _cpu(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def machine_cpu(self) -> dict[str, float]:
        """CPU seconds so far of what shares the machine with the service:
        the broker (job manager, Fluxion, the other modules) with its
        child processes but the service (job validators), the emulator,
        this benchmark's own process (it submits and follows jobs) and,
        on kube-apiserver, the API server and etcd."""
        broker = int(self.h.attr_get("broker.pid"))
        flux_cpu = self._cpu(broker)
        for child in Path(f"/proc/{broker}/task").glob("*/children"):
            for pid in child.read_text().split():
                if int(pid) != self.service_pid:
                    try:
                        flux_cpu += self._cpu(int(pid))
                    except OSError:
                        pass  # ended meanwhile
        emu = self._cpu(self.emulator.pid) if self.emulator is not None else 0.0
        t = os.times()
        out = {"flux": flux_cpu, "emulator": emu, "benchmark": t.user + t.system}
        if self.plane is not None:
            for name in ("kube-apiserver", "etcd"):
                out[name] = self._cpu(self.plane._proc(name).pid)
        return out

    def service_hwm(self) -> float:
        """The service process's peak RSS so far (MB)."""
        if self.service_pid is None:
            return 0.0
        for line in Path(f"/proc/{self.service_pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def sample_service(self) -> None:
        self.rss_peak = max(self.rss_peak, self.service_hwm())

    def service_cpu(self) -> float:
        cur = 0.0 if self.service_pid is None else self._cpu(self.service_pid) - self.cpu_base
        return self.cpu_done + cur

    def keep_stall_evidence(self) -> None:
        """A stalled run keeps what explains it, in the work directory
        (kept): the broker's log, the service's status (its watches' state
        with it), the service's and the emulator's threads' stacks (where
        py-spy is on PATH) and the emulator's log beside them.  Taken
        where the run stood, before anything else is done to it; each
        step bounded (a stalled service may not answer)."""
        out = self.work / "stall"
        out.mkdir(exist_ok=True)

        def keep(name: str, argv: list[str]) -> None:
            with open(out / name, "wb") as f:
                try:
                    subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, check=False,
                                   timeout=60)
                except subprocess.TimeoutExpired:
                    f.write(f"\n{argv[0]}: no end within 60 s\n".encode())

        keep("dmesg", ["flux", "dmesg"])
        try:
            fut = self.h.rpc("dws.status", {})
            fut.wait_for(30)
            (out / "dws.status.json").write_text(json.dumps(fut.get(), indent=1))
        except OSError as exc:
            (out / "dws.status.json").write_text(f"dws.status failed: {exc}\n")
        spy = shutil.which("py-spy")
        for name, pid in (("service", self.service_pid),
                          ("emulator", None if self.emulator is None else self.emulator.pid)):
            if spy is not None and pid is not None:
                keep(f"{name}-threads", [spy, "dump", "--pid", str(pid)])
        print(f"stall: evidence kept in {out} (the emulator's log: "
              f"{self.work / 'emulator.log'})", flush=True)

    def wait_rabbits_up(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            view = self.rpc("dws.rabbits")
            if view.get("ready") and all(r.get("fluxion") == "up" for r in view["rabbits"]):
                return
            time.sleep(0.1)
        raise SystemExit("bench_scale: the rabbits did not come up in Fluxion")

    # jobs ------------------------------------------------------------------
    def submit(self, job: Job, duration: str) -> None:
        spec = self.fjob.JobspecV1.from_command(["true"], num_nodes=job.nodes,
                                                num_tasks=job.nodes)
        spec.setattr("system.dw", job.dw)
        spec.setattr("system.exec.test", {"run_duration": duration})
        job.id = int(self.fjob.submit(self.h, spec))
        job.submitted = time.monotonic()
        self.by_id[job.id] = job

    def poll(self, timeout: float) -> None:
        """Take the job events the journal has (waiting up to timeout)."""
        while True:
            try:
                ev = self.journal.poll(timeout)
            except TimeoutError:
                return
            timeout = 0.0
            job = self.by_id.get(ev.jobid)
            if job is not None:
                if ev.name == "start":
                    self.started.add(ev.jobid)
                elif ev.name == "exception" and ev.context.get("severity") == 0 \
                        and job.exception is None:
                    job.exception = f"{ev.context.get('type')}: {ev.context.get('note')}"
                elif ev.name == "memo" and isinstance(ev.context.get("rabbits"), str):
                    job.rabbits = ev.context["rabbits"]
                elif ev.name == "clean":
                    job.clean = time.monotonic()
                    self.ended[ev.jobid] = job

    def cancel(self, ids: list[int]) -> None:
        for jobid in ids:
            try:
                self.fjob.cancel(self.h, jobid)
            except OSError:
                pass  # ended meanwhile

    # leaks -------------------------------------------------------------------
    def leaks(self) -> dict[str, int]:
        from kubernetes import client, config

        from flux_dws.k8s import crd

        subprocess.run([sys.executable, "-m", "flux_dws", "sync"], check=False)
        api = client.CustomObjectsApi(  # an admin's: flux may not read NnfStorages
            config.new_client_from_config(str(self.admin_kubeconfig)))  # type: ignore[no-untyped-call]
        dws_v = crd.probe_dws_version(api, None)
        nnf_v = crd.probe_nnf_version(api, None)
        # Workflows we deleted go once DWS has removed its finalizers: wait
        # while their number falls (a leak is one that stops falling)
        began, last, still = time.monotonic(), -1, time.monotonic()
        while True:
            n = len(api.list_cluster_custom_object(crd.DWS_GROUP, dws_v, "workflows")["items"])
            if n == 0:
                break
            if n != last:
                last, still = n, time.monotonic()
            elif time.monotonic() - still > 30:
                break
            time.sleep(1.0)
        if time.monotonic() - began > 2:
            print(f"leaks: the last Workflows took {time.monotonic() - began:.0f} s to go",
                  flush=True)
        left: dict[str, int] = {}
        for group, version, plural in (
                (crd.DWS_GROUP, dws_v, "workflows"), (crd.DWS_GROUP, dws_v, "clientmounts"),
                (crd.DWS_GROUP, dws_v, "persistentstorageinstances"),
                (crd.NNF_GROUP, nnf_v, "nnfstorages")):
            listing: Any = api.list_cluster_custom_object(group, version, plural)
            left[plural] = len(listing["items"])
            if plural == "workflows" and listing["items"]:
                # say what they wait for: (desired, state, status, deleting)
                seen: dict[str, int] = {}
                for w in listing["items"]:
                    st = w.get("status") or {}
                    key = (f"{w['spec'].get('desiredState')}/{st.get('state')}/"
                           f"{st.get('status')}"
                           + ("/deleting" if w["metadata"].get("deletionTimestamp") else ""))
                    seen[key] = seen.get(key, 0) + 1
                print("leaked Workflows (desired/state/status): " + ", ".join(
                    f"{k} {n}" for k, n in sorted(seen.items(), key=lambda kv: -kv[1])),
                    flush=True)
        view = self.rpc("dws.rabbits")
        left["rabbits not up"] = sum(1 for r in view["rabbits"] if r.get("fluxion") != "up")
        # release_computes = "after-unmount": ssds still held after every Teardown
        left["ssds held"] = sum(len(h.get("ssds") or []) for r in view["rabbits"]
                                for h in r.get("held") or [])
        return left


class Chaos:
    """Faults at job-count milestones drawn from a seed."""

    def __init__(self, inst: Instance, seed: int, jobs: int) -> None:
        self.inst = inst
        rng = random.Random(seed)
        rabbits = [f"elcap{201 + i}" for i in rng.sample(range(696), 10)]
        steps: list[tuple[str, Callable[[], None]]] = []
        f = inst.fault
        for _ in range(3):
            steps.append(("driver error (Setup, Fatal)", lambda: f(
                "add", "--kind", "driver", "--state", "Setup", "--once",
                "--severity", "Fatal", "--message", f"{CHAOS_MARK}drive failed")))
            steps.append(("TransientCondition (DataIn)", lambda: f(
                "add", "--kind", "driver", "--state", "DataIn", "--once",
                "--severity", "Minor", "--message", f"{CHAOS_MARK}slow fabric")))
        # Fluxion fills the nodes from the first: one of the first 64 soon
        # mounts something
        def mount_fault(compute: str) -> Callable[[], None]:
            return lambda: f("add", "--kind", "clientmount", "--compute", compute, "--once",
                             "--message", f"{CHAOS_MARK}mount")

        steps += [("ClientMount failure", mount_fault(f"elcap{c}"))
                  for c in rng.sample(range(1001, 1065), 2)]

        def expire_watches() -> None:  # the next watch from a resourceVersion: 410
            f("expire-watches")
            f("drop-watches")

        steps += [("watch 410", expire_watches)] * 2
        steps.append(("5xx burst", lambda: f("api", "--status", "503", "--count", "10")))
        steps.append(("5xx burst", lambda: f("api", "--status", "500", "--count", "10",
                                            "--method", "PATCH")))
        steps.append(("API server restart", self.restart_emulator))
        for _ in range(5):
            steps.append(("service reload", self.reload_service))
        for _ in range(2):
            steps.append(("jobtap reload", self.reload_jobtap))
        steps.append(("Fluxion reload", self.reload_fluxion))
        def health(rabbit: str, *argv: str) -> Callable[[], None]:
            return lambda: f("health", rabbit, *argv)

        steps += [(f"{r} down", health(r, "--status", "Offline")) for r in rabbits]
        rng.shuffle(steps)
        # rabbits come back up 5% of the run after they went down
        at = sorted(rng.sample(range(jobs // 20, jobs * 17 // 20), len(steps)))
        self.plan: list[tuple[int, str, Callable[[], None]]] = []
        for when, (what, fn) in zip(at, steps):
            self.plan.append((when, what, fn))
            if what.endswith(" down"):
                r = what.split()[0]
                self.plan.append((when + jobs // 20, f"{r} up", health(r, "--reset")))
        self.plan.sort(key=lambda p: p[0])
        self.done: list[str] = []
        self.at: list[tuple[int, str]] = []  # (jobs ended, fault) as they were made

    def restart_emulator(self) -> None:
        self.inst.stop_emulator()
        self.inst.start_emulator()

    def reload_service(self) -> None:
        self.inst.unload_service()
        self.inst.load_service()

    def reload_jobtap(self) -> None:
        """As flux-jobtap-dws(1) tells an admin: one job-manager request
        removes the plugin and loads the new one, so no job starts or ends
        between (one that does so while no plugin is loaded runs without
        its prolog or ends without its epilog)."""
        subprocess.run(["flux", "jobtap", "load", f"--remove={JOBTAP.name}", str(JOBTAP)],
                       check=True)

    def reload_fluxion(self) -> None:
        for m in FLUXION_MODULES[:2]:
            subprocess.run(["flux", "module", "remove", m], check=True)
        subprocess.run(["flux", "module", "reload", FLUXION_MODULES[2]], check=True)
        for m in reversed(FLUXION_MODULES[:2]):
            subprocess.run(["flux", "module", "load", m], check=True)

    def step(self, ended: int) -> None:
        while self.plan and self.plan[0][0] <= ended:
            _, what, fn = self.plan.pop(0)
            fn()
            self.done.append(what)
            self.at.append((ended, what))

    def finish(self) -> None:
        """The workload is over (or ended early, a stall): the rabbits that
        are down come up;
        the rest of the plan is dropped, not played out at once (a burst
        of reloads and restarts after a stall would leave the figures of
        an instance that never saw the stall, and hide what came before)."""
        for _, what, fn in self.plan:
            if what.endswith(" up"):
                fn()
                self.done.append(what)
        self.plan.clear()
        # the faults no job took (a --once driver error the 2,000-job
        # schedule places near the end): the start-up phase's jobs must
        # not meet them
        self.inst.fault("clear")
        self.inst.fault("api-clear")


def _ready(job: Job, inst: Instance) -> bool | None:
    """Whether a job's dependencies allow it now (None: never: a create it
    needs failed).  The benchmark sequences persistent chains itself: the
    dws-jobtap plugin creates a job's Workflow as the job enters DEPEND, as
    the reference does, so a persistentdw job submitted with afterok on its
    create_persistent job would meet DWS before the storage exists."""
    for scheme, dep in job.deps:
        if dep.id is None or dep.id not in inst.ended:
            return False
        if scheme == "afterok" and dep.exception is not None:
            return None
    return True


def run_workload(inst: Instance, jobs: list[Job], in_flight: int,
                 chaos: Chaos | None) -> tuple[float, int, int]:
    """(seconds, most jobs in flight at once, jobs not run: a create failed)."""
    t0 = time.monotonic()
    waiting = list(jobs)   # in order; a job whose dependencies wait is passed over
    not_run = 0
    most = 0
    last_progress = time.monotonic()
    while waiting or len(inst.by_id) > len(inst.ended):
        live = len(inst.by_id) - len(inst.ended)
        i = 0
        while i < len(waiting) and live < in_flight:
            ready = _ready(waiting[i], inst)
            if ready is False:
                i += 1
                continue
            job = waiting.pop(i)
            if ready is None:
                not_run += 1
                continue
            inst.submit(job, "0.1s")
            live += 1
        most = max(most, live)
        before = len(inst.ended)
        inst.poll(0.2)
        if len(inst.ended) != before:
            last_progress = time.monotonic()
            inst.sample_service()
        if chaos is not None:
            chaos.step(len(inst.ended))
        if time.monotonic() - last_progress > inst.args.stall:
            inst.keep_stall_evidence()
            if chaos is not None:
                print("stall: after " + ", ".join(f"{what} at {n}" for n, what in chaos.at[-4:])
                      + f"; {len(inst.ended)} jobs ended", flush=True)
            break  # nothing ended for so long: the rest is stuck
    if chaos is not None:
        chaos.finish()
    return time.monotonic() - t0, most, not_run


def relist(inst: Instance) -> tuple[float, float, int]:
    """Every watch of the service answered 410 Gone (Instance.expire_watches):
    (seconds from the fault until each watch has listed again and watches,
    seconds of it the API server was away, watches)."""
    def watches() -> list[dict[str, Any]]:
        return list(inst.rpc("dws.status")["service"]["watches"])

    before = [w["lists"] for w in watches()]
    t0 = time.monotonic()
    away = inst.expire_watches(len(before))
    deadline = time.monotonic() + RELIST_TIMEOUT
    while time.monotonic() < deadline:
        try:
            now = watches()
        except OSError:
            now = []
        if len(now) == len(before) and all(
                w["lists"] > b and w["state"] == "watching" for w, b in zip(now, before)):
            return time.monotonic() - t0, away, len(now)
        time.sleep(0.02)
    raise SystemExit(f"bench_scale: the service's watches did not list again within"
                     f" {RELIST_TIMEOUT:.0f} s of a 410: {watches()}")


def startup(inst: Instance, n: int) -> tuple[float, int, tuple[float, float, int]]:
    """Leave n 1-node xfs jobs running, reload the service, then answer its
    watches 410: (seconds to serve, live Workflows it found, relist's)."""
    jobs = [Job("xfs", 1, XFS.format(gib=10)) for _ in range(n)]
    for j in jobs:
        inst.submit(j, "4h")
    ids = {j.id for j in jobs}
    while not ids <= inst.started:
        inst.poll(1.0)
        if any(i in inst.ended for i in ids):
            raise SystemExit("bench_scale: a start-up job ended before running: "
                             f"{next(inst.by_id[i].exception for i in ids if i in inst.ended)}")
    inst.unload_service()
    took = inst.load_service()
    live = len(inst.rpc("dws.status").get("jobs", []))
    relisted = relist(inst)
    inst.cancel([j.id for j in jobs if j.id is not None])
    while not ids <= set(inst.ended):
        inst.poll(1.0)
    return took, live, relisted


def lustre_placement(jobs: list[Job], spread: bool) -> None:
    """Where the Lustre jobs that completed had their storage: the rabbits
    their memo names (their computes' and, spread, their file system's)."""
    from flux_dws.libdws.hostlist import Hostlist

    done = [j for j in jobs if j.kind in ("lustre", "copy") and j.exception is None
            and j.rabbits]
    if not done:
        return
    counts = [len(Hostlist(j.rabbits)) for j in done]
    wider = sum(1 for j, c in zip(done, counts) if c > (j.nodes + 15) // 16)
    print(f"lustre ({'spread' if spread else 'node-local'}): {len(done)} jobs, rabbits per job"
          f" mean {sum(counts) / len(counts):.1f} (max {max(counts)}), {wider} on more rabbits"
          " than ceil(nodes / 16)", flush=True)


def service_errors() -> Counter[str]:
    """The dws service's err-level lines in the broker's log buffer, by
    text with job ids, hosts and numbers folded (a reload under load
    should leave none but the faults the chaos injects)."""
    out = subprocess.run(["flux", "dmesg"], capture_output=True, text=True, check=False).stdout
    lines = (line.split("dws.err[0]: ", 1)[1] for line in out.splitlines()
             if "dws.err[0]: " in line)
    return Counter(re.sub(r"\d{2,}", "N", line) for line in lines)


def stray_errors(errs: Counter[str]) -> Counter[str]:
    """The err-level lines (``service_errors``) that are no injected
    fault's: a run leaves none (under --chaos the faults' own messages
    name them; without, no fault is injected)."""
    return Counter({line: n for line, n in errs.items() if CHAOS_MARK not in line})


#: the states whose timing a job that started has recorded, and those a
#: job that also ended its run cleanly has
STARTED_STATES = ("proposal", "setup", "datain", "prerun")
RAN_STATES = (*STARTED_STATES, "postrun", "dataout")


def record_keys() -> list[str]:
    """The keys of a job's directory the record check reads."""
    from flux_dws.libdws.wfstates import STATES

    return ["eventlog", "data.dws.workflow", "rabbit_workflow", "data.dws.dataout",
            "data.dws.teardown",
            *(f"data.dws.timeline.{s.lower()}" for s in STATES),
            *(f"data.dws.timing.{s}" for s in RAN_STATES),
            *(f"rabbit_{s}_timing" for s in RAN_STATES)]


def read_record(h: Any, jobid: int) -> dict[str, Any]:
    """The job's keys (``record_keys``) that exist, their values decoded as
    ``flux.kvs.get`` decodes them (JSON, else the text; the eventlog, lines
    of JSON, as its text), read as ``flux dws
    job`` reads a record: one job-info lookup per key, all sent before the
    first answer is waited for.

    Not ``flux.kvs.get``: on a key that is missing or a directory,
    flux-core's binding (0.88) raises before it destroys its lookup's
    future, so that future's private reactor, an epoll instance watching
    the handle's own epoll fd, is never closed.  The check reads thousands
    of such keys on one handle; once about 500 such reactors watch it, the
    kernel refuses the next one (epoll's wakeup-path limit: EINVAL) and
    libev aborts the benchmark ("I/O watcher with invalid fd found in
    epoll_ctl")."""
    import json

    from flux_dws.fluxutil import job_info_keys

    out: dict[str, Any] = {}
    for (_, key), raw in job_info_keys(h, [(jobid, k) for k in record_keys()]).items():
        try:
            out[key] = raw if key == "eventlog" else json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


def record_problems(jobs: list[Job], ended: Collection[int]) -> dict[str, list[int]]:
    """Every ended job's KVS record against what its eventlog says it must
    hold (issue 44: a reload under load may lose a write).

    A job given a Workflow (its ``rabbit_workflow`` memo, the name) must
    end with ``data.dws.workflow`` holding it (that name, the job's; not
    one from before it started: a job that started saved it at PreRun or
    later) and the reference's key ``rabbit_workflow`` reading it; a job
    that started, the timings of Proposal to PreRun
    (``data.dws.timing.<state>``, and the reference's
    ``rabbit_<state>_timing`` reading it); a job whose run ended without
    a fatal exception, those of PostRun and DataOut too and
    ``data.dws.dataout`` complete; every job with a Workflow,
    ``data.dws.teardown`` complete.  Returns the jobs of each problem."""
    import json

    import flux

    # a handle of its own: the benchmark's has the journal's stream open
    h = flux.Flux()
    problems: dict[str, list[int]] = {}
    digests: dict[int, str] = {}
    for job in jobs:
        if job.id is None or job.id not in ended:
            continue
        jobid = job.id
        record = read_record(h, jobid)
        get = record.get

        def problem(what: str, jobid: int = jobid) -> None:
            problems.setdefault(what, []).append(jobid)

        name = None
        started = fatal = False
        seen: list[str] = []
        for line in str(get("eventlog") or "").splitlines():
            ev = json.loads(line)
            ctx = ev.get("context") or {}
            seen.append(ev["name"] if ev["name"] != "exception" else
                        f"exception({ctx.get('type')},{ctx.get('severity')})")
            if ev["name"] == "memo" and name is None \
                    and isinstance(ctx.get("rabbit_workflow"), str):
                name = ctx["rabbit_workflow"]
            elif ev["name"] == "start":
                started = True
            elif ev["name"] == "exception" and ctx.get("severity") == 0:
                fatal = True
        if name is None:
            continue  # no Workflow: nothing of DWS to keep
        timeline = {k.rsplit(".", 1)[1]: v for k, v in record.items()
                    if k.startswith("data.dws.timeline.") and isinstance(v, dict)}
        digest = (" ".join(seen) + "; timeline " + ", ".join(
            f"{k}:{'done' if 'done' in v else 'asked'}" for k, v in timeline.items())
            + f"; dataout {get('data.dws.dataout')}")
        before = sum(len(ids) for ids in problems.values())
        wf = get("data.dws.workflow")
        if not isinstance(wf, dict):
            problem("data.dws.workflow missing")
        else:
            if not wf.get("metadata", {}).get("name") == name == f"fluxjob-{jobid}":
                problem("data.dws.workflow another job's")
            if started and (wf.get("status") or {}).get("state") in ("Proposal", "Setup",
                                                                     "DataIn"):
                problem("data.dws.workflow stale (saved before PreRun)")
            if get("rabbit_workflow") != wf:
                problem("rabbit_workflow does not read data.dws.workflow")
        for state in RAN_STATES if started and not fatal else \
                STARTED_STATES if started else ():
            timing = get(f"data.dws.timing.{state}")
            if not isinstance(timing, str):
                problem(f"data.dws.timing.{state} missing")
            elif get(f"rabbit_{state}_timing") != timing:
                problem(f"rabbit_{state}_timing does not read data.dws.timing.{state}")
        if started and not fatal:
            out = get("data.dws.dataout")
            if not (isinstance(out, dict) and out.get("state") == "complete"):
                problem("data.dws.dataout not complete")
        down = get("data.dws.teardown")
        if not (isinstance(down, dict) and down.get("state") == "complete"):
            problem("data.dws.teardown not complete")
        if sum(len(ids) for ids in problems.values()) > before:
            digests[jobid] = digest  # what the job went through, to say why
    for jobid, text in list(digests.items())[:3]:
        print(f"records: job {jobid}: {text}", flush=True)
    return problems


def inside(work: Path, args: argparse.Namespace) -> int:
    inst = Instance(work, args)
    inst.start_emulator()
    try:
        took = inst.load_service()
        inst.wait_rabbits_up()
        print(f"service: first start-up {took:.2f} s (El Capitan, no jobs), RSS"
              f" {inst.service_hwm():.0f} MB", flush=True)
        rng = random.Random(args.seed)
        jobs = workload(args.jobs, rng, containers=not args.no_containers)
        chaos = Chaos(inst, args.chaos, len(jobs)) if args.chaos is not None else None
        inst.cpu_base = inst._cpu(inst.service_pid) if inst.service_pid else 0.0
        machine0 = inst.machine_cpu()
        wall, most, not_run = run_workload(inst, jobs, args.in_flight, chaos)
        cpu = inst.service_cpu()
        machine = {k: v - machine0[k] for k, v in inst.machine_cpu().items()}
        st = inst.rpc("dws.status")["service"]
        stuck = [j for j in jobs if j.id is not None and j.id not in inst.ended]
        inst.cancel([j.id for j in stuck if j.id is not None])
        kinds: dict[str, list[int]] = {}
        for j in jobs:
            k = kinds.setdefault(j.kind, [0, 0])
            k[0] += 1
            k[1] += j.exception is not None
        print("workload: " + ", ".join(f"{k} {n} ({e} with an exception)"
                                       for k, (n, e) in sorted(kinds.items())))
        print(f"workload: most in flight {most}, wall {wall:.1f} s"
              + (f", {not_run} persistent jobs not run (their create failed)" if not_run
                 else ""), flush=True)
        if chaos is not None:
            print(f"chaos (seed {args.chaos}): {len(chaos.done)} faults: "
                  + ", ".join(sorted(set(chaos.done))))
            inst.wait_rabbits_up()
        bad = record_problems(jobs, inst.ended)
        print(f"records: {len(inst.ended)} ended jobs' KVS records checked,"
              f" {sum(len(ids) for ids in bad.values())} problems"
              + "".join(f"\n  {len(ids)} x {what} (e.g. job {ids[0]})"
                        for what, ids in sorted(bad.items(), key=lambda kv: -len(kv[1]))),
              flush=True)
        failed = [j for j in jobs if j.exception is not None]
        for j in failed[:5]:
            print(f"  e.g. job {j.id} ({j.kind}, {j.nodes} nodes): {j.exception}")
        if chaos is None and failed:
            print(f"bench_scale: {len(failed)} jobs failed without chaos: the figures "
                  "below measure a broken run; the first, with what it depended on:")
            for j in [failed[0], *[d for _, d in failed[0].deps]]:
                subprocess.run(["flux", "job", "eventlog", str(j.id)], check=False)
        lustre_placement(jobs, args.lustre_spread)
        n = len(jobs) - not_run
        print(f"service: per job {st['events'] / n:.1f} events, {st['actions'] / n:.1f} actions,"
              f" engine {st['engine_ms'] / n:.2f} ms, process CPU {cpu * 1000 / n:.2f} ms"
              + (" (events, actions, engine: the last service instance's)" if chaos else ""),
              flush=True)
        if chaos is None:  # (under chaos the emulator is restarted: its CPU is lost)
            per_job = {k: v * 1000 / n for k, v in machine.items()}
            total = sum(per_job.values()) + cpu * 1000 / n
            cores = os.cpu_count() or 1
            print("machine: CPU per job: " + ", ".join(f"{k} {v:.1f} ms"
                                                      for k, v in per_job.items())
                  + f", service {cpu * 1000 / n:.1f} ms; {total:.1f} ms in all, so at most "
                  f"{cores * 1000 / total:.1f} jobs/s on {cores} cores (ran "
                  f"{n / wall:.1f}); the service alone, one interpreter, would allow "
                  f"{1000 / (cpu * 1000 / n):.0f}", flush=True)
        print(f"service: reaction waits p50/p99: for the reactor {st['reactor_wait_ms_p50']}/"
              f"{st['reactor_wait_ms_p99']} ms, for a writer {st['writer_wait_ms_p50']}/"
              f"{st['writer_wait_ms_p99']} ms", flush=True)
        by = sorted(st.get("by_event", {}).items(), key=lambda kv: -kv[1]["engine_ms"])
        print("service: engine time by event: " + ", ".join(
            f"{k} {v['events']} in {v['engine_ms'] / 1000:.1f} s" for k, v in by[:6]))
        run_rss = inst.service_hwm()
        up_took, live, (relist_s, away_s, n_watches) = startup(inst, args.live)
        inst.sample_service()
        print(f"service: RSS peak {run_rss:.0f} MB in the workload (the instance that ended"
              f" it), {inst.service_hwm():.0f} MB in a start-up with {live} live Workflows",
              flush=True)
        print(f"service: re-list after a 410 with {live} live Workflows: {n_watches} watches"
              f" listed again and watching {relist_s:.2f} s after the fault"
              + (f" (the API server restarted in {away_s:.2f} s of it)" if away_s else ""),
              flush=True)
        if inst.plane is not None:
            print(f"control plane: RSS peak {inst.plane_hwm()}", flush=True)
        left = inst.leaks()
        leaked = sum(left.values())
        if leaked:
            print("leaked: " + ", ".join(f"{k} {v}" for k, v in left.items() if v))
        errs = service_errors()
        stray = stray_errors(errs)
        print(f"service: {sum(errs.values())} err-level log lines, {sum(stray.values())}"
              " not from an injected fault"
              + "".join(f"\n  {n} x {line}" for line, n in errs.most_common(10)), flush=True)
        line = (f"scale: {n} jobs, {n / wall:.1f} jobs/s, reaction p50/p99 "
                f"{st['reaction_ms_p50']}/{st['reaction_ms_p99']} ms, service CPU "
                f"{cpu * 1000 / n:.2f} ms/job, RSS {inst.rss_peak:.0f} MB, start-up "
                f"{up_took:.2f} s with {live} live Workflows, re-list after a 410 "
                f"{relist_s:.2f} s, stuck {len(stuck)}, leaked {leaked}")
        print(line, flush=True)
        (work / RESULT).write_text(line + "\n")
        return 1 if stuck or leaked or bad or stray or (chaos is None and failed) else 0
    finally:
        if inst.service_pid is not None:  # loaded by us, so not removed by rc3
            subprocess.run(["flux", "module", "remove", "dws"], check=False)
        inst.stop_emulator()
        (work / INSIDE_DONE).touch()  # the instance may stop now (run_instance)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--in-flight", type=int, default=500)
    p.add_argument("--live", type=int, default=1000, help="live Workflows at start-up")
    p.add_argument("--cores", type=int, default=1, help="cores per node in R")
    p.add_argument("--seed", type=int, default=25, help="the workload's seed")
    p.add_argument("--chaos", type=int, metavar="SEED", help="run under faults from SEED")
    p.add_argument("--keep", action="store_true",
                   help="keep the work directory (the emulator's log and state) after the run")
    p.add_argument("--lustre-spread", action="store_true",
                   help="[rabbit.lustre] spread = true: Lustre on the rabbits Fluxion chooses")
    p.add_argument("--release-computes", choices=["after-teardown", "after-unmount"],
                   help="[rabbit] release_computes (issue 38; default: the service's)")
    p.add_argument("--api-server", choices=("emulator", "kube-apiserver", "both"),
                   default="emulator",
                   help="the emulator's API server (default), kube-apiserver + etcd from"
                        " t/k8s/build.sh with the emulator's controllers attached, or both,"
                        " one after the other, side by side")
    p.add_argument("--no-containers", action="store_true",
                   help="no user container jobs (their draws become gfs2 jobs); implied"
                        " on kube-apiserver, where no kubelet runs their Pods")
    p.add_argument("--stall", type=float, default=300,
                   help="seconds without a job ending after which the rest count stuck")
    p.add_argument("--inside", metavar="DIR", help=argparse.SUPPRESS)
    args = p.parse_args([] if argv is None else argv)
    args.argv = [] if argv is None else argv
    if args.inside:
        return inside(Path(args.inside), args)
    return outside(args)


if __name__ == "__main__":
    rc = main(sys.argv[1:])
    if rc:
        sys.exit(rc)
