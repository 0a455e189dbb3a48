"""Run every t/fuzz/fuzz_*.py target with atheris for a bounded time.

    python t/fuzz/run.py --seconds 30

The time is split evenly over the targets.  Each target runs in its own
process (atheris takes over the interpreter); a crash or an uncaught
exception fails the run and leaves the reproducer in build/fuzz/<target>/.
Every target keeps a seed corpus in t/fuzz/corpus/<target>/.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = HERE.parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30.0)
    args = ap.parse_args()
    targets = sorted(HERE.glob("fuzz_*.py"))
    if not targets:
        print("no fuzz targets")
        return 0
    per = max(1, int(args.seconds / len(targets)))
    failed = 0
    for t in targets:
        name = t.stem
        work = TOP / "build" / "fuzz" / name
        work.mkdir(parents=True, exist_ok=True)
        seeds = HERE / "corpus" / name
        # libFuzzer writes new inputs into its first corpus directory: give
        # it one under build/ and read the committed seeds from the second.
        grown = work / "corpus"
        grown.mkdir(exist_ok=True)
        cmd = [sys.executable, str(t), f"-max_total_time={per}", "-timeout=10",
               "-rss_limit_mb=2048", f"-artifact_prefix={work}/", str(grown)]
        if seeds.is_dir():
            cmd.append(str(seeds))
        print(f"fuzz: {name} for {per}s", flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        tail = [ln for ln in proc.stderr.splitlines() if ln.startswith(("#", "Done", "=="))]
        for ln in tail[-2:]:
            print(f"  {ln}")
        if proc.returncode != 0:
            failed += 1
            print(f"fuzz: {name} FAILED (exit {proc.returncode})")
            print(proc.stderr[-4000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
