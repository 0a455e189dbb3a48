"""No include circle in src/ and no import circle in flux_dws: a change
that makes two files need each other fails here, naming the circle.

C: the quoted includes of every .c and .h under src/ (resolved beside the
including file, then in libdws); Python: the module-level imports between
flux_dws modules (``from pkg import submodule`` depends on the submodule
only; imports inside functions, made to break a circle at run time, are
not counted)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
SRC = TOP / "src"
LIBDWS = SRC / "common" / "libdws"
PYSRC = SRC / "python"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle a depth-first walk meets, each as its path."""
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                found.append([*path[path.index(dep):], dep])
            elif dep not in state:
                walk(dep, path)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node, [])
    return found


def c_includes() -> dict[str, set[str]]:
    files = [p for p in SRC.rglob("*") if p.suffix in (".c", ".h")]
    graph: dict[str, set[str]] = {}
    for p in files:
        deps = set()
        for inc in re.findall(r'^#include\s+"([^"]+)"', p.read_text(), re.M):
            for base in (p.parent, LIBDWS):
                if (base / inc).exists():
                    deps.add(str((base / inc).resolve().relative_to(TOP)))
                    break
        graph[str(p.relative_to(TOP))] = deps
    return graph


def py_imports() -> dict[str, set[str]]:
    mods: dict[str, Path] = {}
    for p in (PYSRC / "flux_dws").rglob("*.py"):
        name = ".".join(p.relative_to(PYSRC).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = p
    graph: dict[str, set[str]] = {}
    for name, p in mods.items():
        deps: set[str] = set()
        for node in ast.parse(p.read_text()).body:
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in mods)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in mods:
                subs = {f"{node.module}.{a.name}" for a in node.names} & mods.keys()
                deps.update(subs)
                if len(subs) < len(node.names):
                    deps.add(node.module)
        graph[name] = deps
    return graph


def test_the_walk_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_include_circle() -> None:
    graph = c_includes()
    assert "src/common/libdws/jobtap/jobsm.c" in graph and len(graph) > 100
    assert circles(graph) == []


def test_no_import_circle() -> None:
    graph = py_imports()
    assert "flux_dws.service.core" in graph and len(graph) > 80
    assert circles(graph) == []
