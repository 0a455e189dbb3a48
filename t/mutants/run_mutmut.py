"""Mutation testing of libdws' Python wrappers with mutmut (issue 62, item 7).

    python t/mutants/run_mutmut.py [--files PY ...] [--tests PATH ...]
        [--max-children N] [--timeout S] [--keep]

mutmut (``pip install mutmut``, requirements-dev.txt) mutates the bodies
of the functions of ``--files`` (default flux_dws/libdws/engine.py, the
cffi wrapper of libdws' engine and, through its events, of rabbit health)
and runs pytest over ``--tests`` (default t/python/libdws) against each.

mutmut runs from a directory holding the package at its top (it names a
module by the file's path there; ``src/python/flux_dws`` would be module
``python.flux_dws``) and sets its ``[mutmut]`` configuration from that
directory's setup.cfg, so the run is made in a scratch tree: every
entry of the checkout but ``src`` linked (the package finds etc/ and t/
beside it, ``parents[4]`` of dwsim/systems.py), a copy of
``src/python/flux_dws`` in a directory of its own and the setup.cfg
there.  The tests are the checkout's, with the checkout (``t.python``
imports) and ``build/src/python`` (the extension) on ``PYTHONPATH``.
mutmut's own bound holds each mutant's run (a CPU-time limit of
``timeout_multiplier`` times the tests' time); ``--timeout`` bounds the
whole run.  The counts by mutmut's verdict are printed last:

    mutmut: N mutants: K killed, S survived, T no tests, O timeout, X other

with each survivor's and untested mutant's name (``--keep`` leaves the
scratch tree, where ``mutmut show NAME`` prints its diff).  Nothing in the
checkout is changed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
PACKAGE = "src/python/flux_dws"
VERDICTS = ("killed", "survived", "no tests", "timeout")


def shadow(top: Path, into: Path) -> Path:
    """The scratch tree: into/top with the checkout's entries linked but
    src, and into/top/run holding a copy of the package; run is returned."""
    tree = into / "top"
    run_dir = tree / "run"
    run_dir.mkdir(parents=True)
    for entry in top.iterdir():
        if entry.name not in ("src", "run"):
            (tree / entry.name).symlink_to(entry)
    shutil.copytree(top / PACKAGE, run_dir / "flux_dws",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return run_dir


def config(files: list[str], tests: list[Path], timeout_multiplier: float) -> str:
    """setup.cfg's [mutmut] section for a run over files (paths under
    flux_dws/) with pytest over tests (absolute)."""
    def multi(values: list[str]) -> str:
        return "".join(f"\n    {v}" for v in values)

    return ("[mutmut]\n"
            "source_paths=flux_dws\n"
            f"only_mutate={multi(files)}\n"
            f"pytest_add_cli_args_test_selection={multi([str(t) for t in tests])}\n"
            f"pytest_add_cli_args={multi(['-p', 'no:cacheprovider'])}\n"
            f"timeout_multiplier={timeout_multiplier}\n")


def python_path(top: Path, environ: dict[str, str]) -> str:
    """The checkout, its extension, then the environment's entries outside
    the checkout (flux-core's bindings); the checkout's own package is left
    off, so that only the mutated copy is imported."""
    kept = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and not Path(p).resolve().is_relative_to(top)]
    return os.pathsep.join([str(top), str(top / "build/src/python"), *kept])


def verdicts(results: str) -> dict[str, list[str]]:
    """mutmut results --all true's lines (``    name: verdict``) by verdict."""
    out: dict[str, list[str]] = {}
    for line in results.splitlines():
        name, sep, verdict = line.strip().rpartition(": ")
        if sep and name.startswith("flux_dws."):
            out.setdefault(verdict, []).append(name)
    return out


def summary(by: dict[str, list[str]]) -> str:
    n = Counter({v: len(names) for v, names in by.items()})
    other = sum(c for v, c in n.items() if v not in VERDICTS)
    return (f"mutmut: {sum(n.values())} mutants: {n['killed']} killed, {n['survived']} survived,"
            f" {n['no tests']} no tests, {n['timeout']} timeout, {other} other")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", default=["flux_dws/libdws/engine.py"],
                    help="the package's files (as flux_dws/...) to mutate")
    ap.add_argument("--tests", nargs="+", default=["t/python/libdws"],
                    help="pytest paths (relative to the top) run against each mutant")
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--timeout-multiplier", type=float, default=5.0,
                    help="mutmut's per-mutant bound, times the tests' own time")
    ap.add_argument("--timeout", type=float, default=3600, help="bound of the whole run (s)")
    ap.add_argument("--keep", action="store_true", help="leave the scratch tree")
    args = ap.parse_args()
    mutmut = shutil.which("mutmut")
    if mutmut is None:
        print("mutmut: skipped: mutmut is not installed (pip install mutmut)")
        return 0
    work = Path(tempfile.mkdtemp(prefix="flux-dws-mutmut-"))
    try:
        run_dir = shadow(TOP, work)
        (run_dir / "setup.cfg").write_text(
            config(args.files, [TOP / t for t in args.tests], args.timeout_multiplier))
        env = {**os.environ, "PYTHONPATH": python_path(TOP, dict(os.environ))}
        try:
            p = subprocess.run([mutmut, "run", "--max-children", str(args.max_children)],
                               cwd=run_dir, env=env, capture_output=True, text=True,
                               timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            print(f"mutmut: timed out after {args.timeout:.0f} s")
            return 1
        if p.returncode != 0:
            print(f"mutmut: run failed ({p.returncode}): {(p.stdout + p.stderr)[-2000:]}")
            return 1
        res = subprocess.run([mutmut, "results", "--all", "true"], cwd=run_dir, env=env,
                             capture_output=True, text=True, check=True)
        by = verdicts(res.stdout)
        for verdict in sorted(v for v in by if v != "killed"):
            print(f"{verdict}:\n" + "\n".join(f"  {name}" for name in by[verdict]))
        print(summary(by), flush=True)
        if args.keep:
            print(f"mutmut: the scratch tree is {run_dir}")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
