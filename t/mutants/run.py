"""Mutation testing of libdws' engine and health rooms (issue 62, item 7).

    python t/mutants/run.py [--sample N] [--seed S] [--files GLOB ...]
        [--pytest PATH ...] [--only RESULTS.jsonl] [--replay RESULTS.jsonl]
        [--out RESULTS.jsonl]

universalmutator (``pip install universalmutator``: ``mutate``) writes
the mutants of each C source (``--noCheck``: every rule's text change, its
comment and dead-line heuristics on); a seeded sample of them is tried,
one at a time, in a private copy of the tree (``git worktree`` of HEAD in
a temporary directory, built there with meson, flux-core's plugins off):
the mutant replaces its file, ninja rebuilds, and it is

- stillborn when it does not compile (not counted),
- equivalent when it compiles to the original's object code (its
  object, debug information stripped, is the original's byte for byte:
  "trivial compiler equivalence"; it cannot change behaviour, so it is
  neither tested nor counted),
- killed when ``meson test`` (the C unit tests) fails or, those passing,
  when pytest over one of the ``--pytest`` paths (default t/python/libdws:
  the engine and health through cffi; each in turn, the first to fail is
  the record's ``by``) fails,
- killed by the sanitizer C tests when, with ``--sanitizers``, the C unit
  tests of a second build with ASan and UBSan (``-Dsanitizers=true``, as
  CI's "ASan+UBSan C unit tests") fail on a mutant that both the above
  passed: a leak or an overflow no assertion sees,
- survived when all pass.

Every test run is bounded (a mutant that loops is killed by its timeout).
One JSON line per mutant goes to ``--out`` and a summary is printed last:

    mutants: G generated in F files, S tried: B stillborn, E equivalent,
    K killed (C tests KC, pytest KP[, sanitizers KS]), V survived: K of C
    compiled (P %)

with each survivor as ``file:line: original -> mutant``.  ``--only`` tries
again the mutants an earlier run's results name (its survivors), to show
what a new test kills.  ``--replay`` makes them again from their text
instead, for sources that changed since: each record's ``original`` line
(or, for a line the mutant inserted, the ``before`` line it went before)
is looked for in its ``file``, the occurrence nearest its ``line``, else
in the one other ``--files`` source that has it (code that moved), and
the ``mutated`` text put in its place; a record no source matches is
"unmapped".  The records need only those keys (a hand-written line of
``file``, ``line``, ``original``, ``mutated`` will do).  Flux-core's
Python (``PYTHONPATH`` entries outside the checkout) stays on the path of
the pytest runs; an editable install of flux-dws in the venv (which would
answer ``import flux_dws`` from its own checkout, not the mutant's build)
is stepped around, and the run stops if pytest would still not import the
tree's build.  Nothing in the checkout is changed.
"""

from __future__ import annotations

import argparse
import difflib
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOP = Path(__file__).resolve().parents[2]
DEFAULT_FILES = ["src/common/libdws/engine/**/*.c", "src/common/libdws/health/*.c"]
BUILD_TIMEOUT = 600
TEST_TIMEOUT = 600


def run(argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None
        ) -> tuple[bool, str]:
    """(passed, the output's tail); a run past timeout fails."""
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s"
    return p.returncode == 0, (p.stdout + p.stderr)[-400:]


def pytest_env(tree: Path, build: Path) -> dict[str, str]:
    """The environment of the pytest runs: the tree's Python and its build
    first, flux-core's bindings (PYTHONPATH entries outside the checkout)
    kept.  An editable install of flux-dws in the venv (meson-python's
    loader, a .pth) answers ``import flux_dws`` before PYTHONPATH, from
    its own checkout (and rebuilds that on import): its finders are told
    to step aside (MESONPY_EDITABLE_SKIP names their build directories)."""
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and not Path(p).resolve().is_relative_to(TOP)]
    skip = [os.environ.get("MESONPY_EDITABLE_SKIP", "")]
    skip += [str(f._build_path) for f in sys.meta_path if hasattr(f, "_build_path")]
    return {**os.environ,
            "PYTHONPATH": os.pathsep.join([str(tree / "src/python"), str(build / "src/python"),
                                           *kept]),
            "MESONPY_EDITABLE_SKIP": os.pathsep.join(dict.fromkeys(p for p in skip if p))}


def imported_from(env: dict[str, str], cwd: Path) -> Path:
    """Where flux_dws' extension (libdws through cffi) is imported from
    under env: the pytest runs test the mutant only if it is the tree's."""
    p = subprocess.run([sys.executable, "-c", "import flux_dws._libdws as m; print(m.__file__)"],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT,
                       check=False)
    return Path(p.stdout.strip() or "/nonexistent").resolve()


def object_of(build: Path, rel: str) -> Path:
    """Where meson puts the object of libdws' source rel (relative to the
    top): libdws.a.p/<its path under libdws, "/" as "_">.o."""
    under = Path(rel).relative_to("src/common/libdws").as_posix().replace("/", "_")
    return build / "src/common/libdws/libdws.a.p" / f"{under}.o"


def code_of(obj: Path, into: Path) -> bytes:
    """An object's code and data: the object with its debug information
    stripped (a mutant's columns and lines move only that)."""
    out = into / f"{obj.name}.stripped"
    subprocess.run(["objcopy", "--strip-debug", str(obj), str(out)], check=True,
                   capture_output=True)
    return out.read_bytes()


def generate(tree: Path, files: list[str], into: Path) -> list[tuple[str, Path]]:
    """Every mutant of each file: (the file, relative to the tree; its mutant)."""
    mutants: list[tuple[str, Path]] = []
    for rel in files:
        d = into / rel.replace("/", "__")
        d.mkdir(parents=True)
        subprocess.run(["mutate", str(tree / rel), "c", "--noCheck", "--mutantDir", str(d)],
                       check=True, capture_output=True)
        mutants += [(rel, m) for m in sorted(d.iterdir())]
    return mutants


def locate(tree: Path, rec: dict[str, Any], files: list[str]) -> tuple[str, int] | None:
    """Where a recorded mutant's line is now: (file, 0-based line index),
    None where no source, or more than one other source, has it."""
    key = (rec.get("original") or rec.get("before") or "").strip()
    if not key:
        return None

    def hits(rel: str) -> list[int]:
        path = tree / rel
        if not path.is_file():
            return []
        return [i for i, text in enumerate(path.read_text().splitlines())
                if text.strip() == key]

    here = hits(rec["file"])
    if here:
        hint = int(rec.get("line") or 1) - 1
        return rec["file"], min(here, key=lambda i: (abs(i - hint), i))
    elsewhere = [(rel, h) for rel in files if rel != rec["file"] for h in hits(rel)]
    if len({rel for rel, _ in elsewhere}) == 1 and len(elsewhere) == 1:
        return elsewhere[0]
    return None


def remake(tree: Path, rec: dict[str, Any], files: list[str]) -> tuple[str, int, str] | None:
    """A recorded mutant made again in today's source: (file, 1-based line,
    the mutated file's text), or None where it no longer maps."""
    where = locate(tree, rec, files)
    if where is None:
        return None
    rel, i = where
    text = (tree / rel).read_text()
    lines = text.splitlines(keepends=True)
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    new = indent + rec["mutated"].strip() + "\n"
    if rec.get("original", "").strip():
        lines[i] = new
    else:
        lines.insert(i, new)
    return rel, i + 1, "".join(lines)


def replay(tree: Path, results: Path, files: list[str], into: Path
           ) -> tuple[list[tuple[str, Path]], list[dict[str, Any]]]:
    """The survivors of an earlier run's results made again (each once):
    (the file, its mutant) as generate () gives them, and the records that
    no longer map."""
    into.mkdir(parents=True)
    mutants: list[tuple[str, Path]] = []
    unmapped: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for n, rec in enumerate(map(json.loads, results.open())):
        if rec.get("result", "survived") != "survived":
            continue
        made = remake(tree, rec, files)
        if made is None:
            unmapped.append(rec)
        elif (made[0], made[2]) not in seen:
            seen.add((made[0], made[2]))
            m = into / f"{Path(made[0]).stem}.replay.{n}{Path(made[0]).suffix}"
            m.write_text(made[2])
            mutants.append((made[0], m))
    return mutants, unmapped


def changed_line(orig: str, mutant: str) -> tuple[int, str, str]:
    """(line number, original line, mutant line) of a one-line mutant."""
    a, b = orig.splitlines(), mutant.splitlines()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            return i1 + 1, " ".join(a[i1:i2]).strip(), " ".join(b[j1:j2]).strip()
    return 0, "", ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", default=DEFAULT_FILES,
                    help="C sources (globs, relative to the top) to mutate")
    ap.add_argument("--sample", type=int, default=200, help="mutants tried (0: all)")
    ap.add_argument("--seed", type=int, default=62)
    ap.add_argument("--pytest", nargs="+", default=["t/python/libdws"],
                    help="pytest paths run when the C tests pass")
    ap.add_argument("--only", type=Path,
                    help="try only the mutants this earlier --out names as survivors")
    ap.add_argument("--replay", type=Path,
                    help="make this earlier --out's survivors again from their text")
    ap.add_argument("--sanitizers", action="store_true",
                    help="try each survivor's C tests again under ASan and UBSan")
    ap.add_argument("--out", type=Path, default=Path("mutants.jsonl"))
    args = ap.parse_args()
    if args.replay is None and shutil.which("mutate") is None:
        print("mutants: skipped: universalmutator is not installed (pip install"
              " universalmutator)")
        return 0
    # stopped by a signal, the worktree and its build are still removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="flux-dws-mutants-"))
    tree = work / "tree"
    subprocess.run(["git", "-C", str(TOP), "worktree", "add", "--detach", str(tree), "HEAD"],
                   check=True, capture_output=True)
    try:
        return trial(args, work, tree)
    finally:
        subprocess.run(["git", "-C", str(TOP), "worktree", "remove", "--force", str(tree)],
                       check=False, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def trial(args: argparse.Namespace, work: Path, tree: Path) -> int:
    files = sorted({os.path.relpath(f, TOP) for g in args.files
                    for f in glob.glob(str(TOP / g), recursive=True)})
    unmapped: list[dict[str, Any]] = []
    if args.replay is not None:
        mutants, unmapped = replay(tree, args.replay, files, work / "mutants")
        tried = mutants
    else:
        mutants = generate(tree, files, work / "mutants")
        if args.only is not None:
            wanted = {(r["file"], r["mutant"]) for r in map(json.loads, args.only.open())
                      if r["result"] == "survived"}
            tried = [(f, m) for f, m in mutants if (f, m.name) in wanted]
        elif args.sample and args.sample < len(mutants):
            tried = random.Random(args.seed).sample(mutants, args.sample)
        else:
            tried = mutants
    build = tree / "build"
    ok, out = run(["meson", "setup", str(build), "-Dflux=disabled", "-Ddocs=disabled",
                   "-Dflux-commands=disabled"], tree, BUILD_TIMEOUT)
    ok = ok and run(["ninja", "-C", str(build)], tree, BUILD_TIMEOUT)[0]
    if not ok:
        print(f"mutants: the unmutated tree does not build: {out}")
        return 1
    sanitized = tree / "build-sanitizers"
    if args.sanitizers:
        ok, out = run(["meson", "setup", str(sanitized), "-Dflux=disabled", "-Ddocs=disabled",
                       "-Dflux-commands=disabled", "-Dsanitizers=true"], tree, BUILD_TIMEOUT)
        if ok:
            ok, out = run(["ninja", "-C", str(sanitized)], tree, BUILD_TIMEOUT)
        if ok:
            ok, out = run(["meson", "test", "-C", str(sanitized), "--no-rebuild", "-q"],
                          tree, TEST_TIMEOUT)
        if not ok:
            print(f"mutants: the unmutated tree fails its sanitizer C tests: {out}")
            return 1
    env = pytest_env(tree, build)
    where = imported_from(env, tree)
    if not where.is_relative_to(build.resolve()):
        print(f"mutants: pytest would import flux_dws' extension from {where}, not the"
              f" tree's build ({build}): its mutants would go untested")
        return 1
    stripped = work / "objects"
    stripped.mkdir()
    original = {rel: code_of(object_of(build, rel), stripped) for rel in files}
    counts = {"stillborn": 0, "equivalent": 0, "killed by C tests": 0, "killed by pytest": 0,
              "killed by sanitizers": 0, "survived": 0, "unmapped": len(unmapped)}
    survivors: list[str] = []
    t0 = time.monotonic()
    with args.out.open("w") as out_f:
        for lost in unmapped:
            out_f.write(json.dumps({**lost, "result": "unmapped"}) + "\n")
            print(f"unmapped: {lost['file']}:{lost.get('line')}: {lost.get('original')!r}"
                  f" -> {lost.get('mutated')!r}", flush=True)
        for n, (rel, mutant) in enumerate(tried, 1):
            src = tree / rel
            orig = src.read_text()
            text = mutant.read_text()
            line, was, now = changed_line(orig, text)
            src.write_text(text)
            try:
                by = None
                if not run(["ninja", "-C", str(build)], tree, BUILD_TIMEOUT)[0]:
                    result = "stillborn"
                elif code_of(object_of(build, rel), stripped) == original[rel]:
                    result = "equivalent"
                elif not run(["meson", "test", "-C", str(build), "--no-rebuild", "-q"],
                             tree, TEST_TIMEOUT)[0]:
                    result = "killed by C tests"
                elif (by := next((p for p in args.pytest if not run(
                        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", p],
                        tree, TEST_TIMEOUT, env)[0]), None)) is not None:
                    result = "killed by pytest"
                elif args.sanitizers and not (
                        run(["ninja", "-C", str(sanitized)], tree, BUILD_TIMEOUT)[0]
                        and run(["meson", "test", "-C", str(sanitized), "--no-rebuild", "-q"],
                                tree, TEST_TIMEOUT)[0]):
                    result = "killed by sanitizers"
                else:
                    result = "survived"
                    survivors.append(f"{rel}:{line}: {was} -> {now}")
            finally:
                src.write_text(orig)
            counts[result] += 1
            rec: dict[str, Any] = {"file": rel, "mutant": mutant.name, "line": line,
                                   "original": was, "mutated": now, "result": result}
            if by is not None:
                rec["by"] = by  # the --pytest path that failed
            if not was and 0 < line <= len(orig.splitlines()):
                rec["before"] = orig.splitlines()[line - 1].strip()  # what --replay finds
            out_f.write(json.dumps(rec) + "\n")
            out_f.flush()
            print(f"[{n}/{len(tried)} {time.monotonic() - t0:.0f} s] {rel}:{line}: {result}"
                  + (f" ({by})" if by else ""),
                  flush=True)
    run(["ninja", "-C", str(build)], tree, BUILD_TIMEOUT)
    if args.sanitizers:
        run(["ninja", "-C", str(sanitized)], tree, BUILD_TIMEOUT)
    print("survivors:\n" + "\n".join(f"  {s}" for s in survivors) if survivors else
          "survivors: none")
    killed = (counts["killed by C tests"] + counts["killed by pytest"]
              + counts["killed by sanitizers"])
    compiled = killed + counts["survived"]
    print(f"mutants: {len(mutants)} generated in {len(files)} files, {len(tried)} tried: "
          f"{counts['stillborn']} stillborn, {counts['equivalent']} equivalent, "
          f"{killed} killed (C tests "
          f"{counts['killed by C tests']}, pytest {counts['killed by pytest']}"
          + (f", sanitizers {counts['killed by sanitizers']}" if args.sanitizers else "")
          + "), "
          f"{counts['survived']} survived"
          + (f", {counts['unmapped']} unmapped" if args.replay is not None else "")
          + (f": {killed} of {compiled} compiled ({100 * killed / compiled:.1f} %)"
             if compiled else ""),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
