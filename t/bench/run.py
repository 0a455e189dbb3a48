"""Run the flux-dws benchmarks and print their figures.

    PYTHONPATH=src/python:build/src/python python t/bench/run.py [NAME...]

Every t/bench/bench_<name>.py defines ``main()`` which prints one line
per figure: "<what>: <value> <unit>".  Benchmarks measure; the test suite
never asserts on speed.  A benchmark that states goals (its docstring's,
its guide's: figures, nothing stuck, nothing leaked) checks them itself
(``goals.py``: each printed met or missed) and its ``main()`` returns
non-zero when one is missed or the run was broken (bench_release,
bench_scale: a job stuck or something leaked): run.py then exits 1,
naming it.
"""

from __future__ import annotations

import importlib.util
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    wanted = set(argv[1:])
    failed = []
    print(f"# {platform.node()} python {platform.python_version()} "
          f"{time.strftime('%Y-%m-%d %H:%M:%S')}")
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem[len("bench_"):]
        if wanted and name not in wanted:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        print(f"== {name}")
        sys.stdout.flush()
        if mod.main():
            failed.append(name)
    if failed:
        print(f"# failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
