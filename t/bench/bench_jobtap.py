"""dws-jobtap.so under a real broker (issue goals: job-manager throughput
for jobs without ``dw`` within 1 % with and without the plugin; the rabbit
job lifecycle through the real job manager, shells and service).

Needs flux-core and Fluxion on PATH and a build with the Flux plugins
(``build/``, or ``$DWS_BUILDDIR``); prints why it is skipped otherwise.

1. Jobs without dw: 1,000 jobs with flux-core's test execution (no job
   shells: the job manager, scheduler and exec bookkeeping dominate),
   submitted at once, timed from submission to an idle queue; five rounds
   alternating without and with the plugin, medians compared.
2. Rabbit jobs: a 4-broker instance as the kind system's computes (as in
   t/t3100-dws-jobtap.t), the dws service loaded by modprobe, the emulator
   at zero latency; 50 jobs with one xfs jobdw each submitted at once and
   run with real shells, against the same 50 jobs without dw.
3. The scheduler hold in normal running (the dws service ready, Fluxion's
   nodes up): in the same instance, rounds of 20 rabbit jobs with the hold
   on and off (the plugin reloaded with ``sched-hold``), alternating; per
   job the time from the ``dws-create`` dependency's removal to the
   ``priority`` event (its time in PRIORITY, where the hold would keep it);
   medians compared on one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("DWS_BUILDDIR", TOP / "build"))
JOBTAP = BUILD / "src/job-manager/plugins/dws-jobtap.so"
SHELL_PLUGINS = BUILD / "src/shell/plugins"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"

# submit N jobs at once, wait for an idle queue, print the seconds taken
TIMED = """
set -e
{prep}
t0=$(date +%s.%N)
flux submit --cc=1-{n} --quiet {opts} true
flux queue drain
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN {{ printf "ELAPSED %.6f\\n", b - a }}'
echo "RESULTS $(flux jobs -a -no '{{result}}' | sort | uniq -c | tr -s ' \\n' ' ')"
"""


def _run(cmd: list[str], n: int, env: dict[str, str] | None = None) -> str:
    """Run a TIMED script; its seconds, once every one of its ``n`` jobs is
    known to have completed (a round whose jobs failed measured nothing)."""
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    if "ELAPSED" not in lines or "RESULTS" not in lines:
        raise RuntimeError(f"no timing or results in: {out[-500:]}")
    if lines["RESULTS"].split() != [str(n), "COMPLETED"]:
        raise RuntimeError(f"not every one of {n} jobs completed: {lines['RESULTS']}")
    return lines["ELAPSED"].split()[0]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _plain_round(tmp: Path, plugin: bool, n: int) -> tuple[float, float]:
    """Seconds from submission to an idle queue, and the CPU seconds of the
    whole instance (brokers, modules, the plugin and the submitting client)."""
    conf = tmp / ("conf-plugin" if plugin else "conf-none")
    conf.mkdir(exist_ok=True)
    (conf / "jm.toml").write_text(
        f'[job-manager]\nplugins = [ {{ load = "{JOBTAP}" }} ]\n' if plugin else "")
    script = TIMED.format(prep="", n=n, opts="--setattr=system.exec.test.run_duration=0.001s")
    cpu0 = _children_cpu()
    elapsed = float(_run(["flux", "start", f"--config-path={conf}", "sh", "-c", script], n))
    return elapsed, _children_cpu() - cpu0


def plain_jobs(tmp: Path) -> None:
    n, rounds = 1000, 5
    wall: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for plugin in (False, True):
            elapsed, used = _plain_round(tmp, plugin, n)
            wall[plugin].append(elapsed)
            cpu[plugin].append(used)
    for plugin, what in ((False, "no plugin"), (True, "dws-jobtap.so loaded")):
        print(f"jobs without dw, {what}: {n / statistics.median(wall[plugin]):.0f} jobs/s,"
              f" {1000 * statistics.median(cpu[plugin]) / n:.2f} ms CPU/job (medians of"
              f" {rounds}; wall {', '.join(f'{t:.2f}' for t in wall[plugin])} s;"
              f" every job of every round completed)")
    w0, w1 = statistics.median(wall[False]), statistics.median(wall[True])
    c0, c1 = statistics.median(cpu[False]), statistics.median(cpu[True])
    print(f"plugin cost for jobs without dw: wall {100 * (w1 - w0) / w0:+.1f} %,"
          f" CPU {100 * (c1 - c0) / c0:+.1f} %")


@contextlib.contextmanager
def rabbit_instance(tmp: Path) -> Iterator[tuple[list[str], dict[str, str], str]]:
    """The emulator at zero latency and what runs a 4-broker instance as the
    kind system's computes (as in t/t3100-dws-jobtap.t) with the dws service
    loaded by modprobe: the ``flux start`` words to put a script after, its
    environment, and the shell lines that mark every ssd vertex up."""
    from flux_dws.emulator import start_subprocess
    kubeconfig = tmp / "kubeconfig"
    emulator = start_subprocess(kubeconfig, "--system", "kind", "--latency", "zero")
    try:
        data = TOP / "t/data/rabbitmapping"
        R = tmp / "R.json"
        with R.open("w") as f:
            subprocess.run([sys.executable, "-m", "flux_dws.cli.dws2jgf", "--cluster-name",
                            "kind", "--from-config", str(data / "kind-resource.toml"),
                            str(data / "kind.json")], stdout=f, check=True)
        conf = tmp / "rabbit-conf"
        conf.mkdir(exist_ok=True)
        (conf / "instance.toml").write_text(
            f'[resource]\nnoverify = true\npath = "{R}"\n'
            '[sched-fluxion-resource]\nmatch-format = "rv1"\n'
            f'[job-manager]\nplugins = [ {{ load = "{JOBTAP}" }} ]\n'
            f'[rabbit]\nkubeconfig = "{kubeconfig}"\n')
        modprobe = tmp / "modprobe"
        (modprobe / "modprobe.d").mkdir(parents=True, exist_ok=True)
        (modprobe / "rc1.d").mkdir(exist_ok=True)
        shutil.copy(TOP / "etc/modprobe/rc1.d/dws.py", modprobe / "rc1.d")
        (modprobe / "modprobe.d/dws.toml").write_text(
            (TOP / "etc/modprobe/dws.toml.in").read_text().replace(
                "@DWS_MODULE@", str(TOP / "src/modules/dws.py")))
        site = subprocess.run([sys.executable, "-c",
                               "import site; print(site.getsitepackages()[0])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        env = dict(os.environ, FLUX_MODPROBE_PATH_APPEND=str(modprobe),
                   PYTHONPATH=f"{TOP / 'src/python'}:{BUILD / 'src/python'}:{site}")
        prep = ("for r in 0 1; do for k in $(seq 0 35); do"
                " flux ion-resource set-status /kind/chassis$r/ssd$k up >/dev/null;"
                " done; done")
        start = ["flux", "start", "-s4", "--test-hosts=compute-[01-04]",
                 f"-Sconf.shell_pluginpath={SHELL_PLUGINS}", f"--config-path={conf}"]
        yield start, env, prep
    finally:
        emulator.terminate()
        emulator.wait()


def rabbit_jobs(tmp: Path) -> None:
    with rabbit_instance(tmp) as (start, env, prep):
        n = 50
        figures = {}
        for label, opts in (("without dw", ""), ("xfs jobdw", f"-N1 --setattr=system.dw='{XFS}'")):
            if not opts:
                opts = "-N1"
            script = TIMED.format(prep=prep, n=n, opts=opts)
            figures[label] = float(_run([*start, "sh", "-c", script], n, env=env))
        for label, t in figures.items():
            print(f"{n} jobs {label} on 4 nodes, real shells: {t:.2f} s ({n / t:.1f} jobs/s;"
                  f" all {n} completed)")
        extra = (figures["xfs jobdw"] - figures["without dw"]) / n * 4
        print(f"rabbit lifecycle cost per job and node slot (Proposal..Teardown through the"
              f" real job manager, zero-latency DWS): {1000 * extra:.0f} ms")


# In the instance: rounds of N rabbit jobs with the scheduler hold on and
# off (the plugin reloaded with sched-hold = true / false), alternating;
# per job, the seconds from the dws-create dependency's removal to the
# priority event (the time the job spends in PRIORITY, where the hold
# would keep it).  Prints "PRIORITY on|off SECONDS" per job, and the jobs'
# results.
HOLD_ROUNDS = """
import json, subprocess, sys
import flux
from flux.job import JobspecV1, submit_async
h = flux.Flux()
jobtap, n, rounds, dw = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
results = {}
for r in range(rounds):
    for mode in ("on", "off"):
        subprocess.run(["flux", "jobtap", "load", "-r", "dws-jobtap.so", jobtap,
                        "sched-hold=" + ("true" if mode == "on" else "false")], check=True)
        spec = JobspecV1.from_command(["true"], num_nodes=1, num_tasks=1)
        spec.setattr("system.dw", dw)
        ids = [f.get_id() for f in [submit_async(h, spec) for _ in range(n)]]
        for jobid in ids:
            subprocess.run(["flux", "job", "wait-event", "-t", "120", str(jobid), "clean"],
                           check=True, stdout=subprocess.DEVNULL)
            text = h.rpc("job-info.lookup", {"id": jobid, "keys": ["eventlog"],
                                             "flags": 0}).get()["eventlog"]
            events = [json.loads(line) for line in text.splitlines()]
            at = {}
            for e in events:
                at.setdefault(e["name"], e["timestamp"])
                if e["name"] == "finish":
                    status = e["context"]["status"]
                    results[status] = results.get(status, 0) + 1
            removed = max(e["timestamp"] for e in events if e["name"] == "dependency-remove")
            print("PRIORITY", mode, at["priority"] - removed, flush=True)
print("RESULTS", json.dumps(results))
"""


def hold_latency(tmp: Path) -> None:
    """The scheduler hold in normal running (the flux-dws service ready,
    Fluxion up): what it adds to a rabbit job's time in PRIORITY."""
    n, rounds = 20, 3
    with rabbit_instance(tmp) as (start, env, prep):
        script = f"set -e\n{prep}\nflux python -c \"$0\" \"$@\""
        run = subprocess.run([*start, "sh", "-c", script, HOLD_ROUNDS, str(JOBTAP), str(n),
                              str(rounds), XFS], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"the instance failed ({run.returncode}): {run.stderr[:3000]}")
    out = run.stdout
    times: dict[str, list[float]] = {"on": [], "off": []}
    results = ""
    for line in out.splitlines():
        words = line.split(" ", 2)
        if words[0] == "PRIORITY":
            times[words[1]].append(float(words[2]))
        elif words[0] == "RESULTS":
            results = line.split(" ", 1)[1]
    total = n * rounds
    if len(times["on"]) != total or len(times["off"]) != total:
        raise RuntimeError(f"expected {total} jobs each way: {out[-500:]}")
    if json.loads(results or "{}") != {"0": 2 * total}:
        raise RuntimeError(f"not every job completed: {results}")
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    print(f"scheduler hold in normal running: dws-create removed -> priority, median"
          f" {1000 * on:.2f} ms (hold on) vs {1000 * off:.2f} ms (hold off), {total} rabbit jobs"
          f" each, {rounds} alternating rounds; max {1000 * max(times['on']):.2f} vs"
          f" {1000 * max(times['off']):.2f} ms")


def main() -> None:
    if not shutil.which("flux"):
        print("skipped: flux-core is not installed (no 'flux' on PATH)")
        return
    if not JOBTAP.exists():
        print(f"skipped: {JOBTAP} is not built (meson found no flux-core)")
        return
    with tempfile.TemporaryDirectory() as d:
        plain_jobs(Path(d))
        rabbit_jobs(Path(d) / "rabbit")
        hold_latency(Path(d) / "hold")


if __name__ == "__main__":
    main()
