"""emulator/ has no import circle (type-checking imports included): the
controllers import the drivers, the drivers see the controllers only
through driver.DriverContext."""

from __future__ import annotations

import ast
from pathlib import Path

import flux_dws.emulator

PKG = "flux_dws.emulator"


def graph() -> dict[str, set[str]]:
    root = Path(flux_dws.emulator.__file__).parent
    out: dict[str, set[str]] = {}
    for path in root.glob("*.py"):
        me = f"{PKG}.{path.stem}" if path.stem != "__init__" else PKG
        deps = out.setdefault(me, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == PKG:
                    deps.update(f"{PKG}.{a.name}" for a in node.names)
                elif node.module.startswith(PKG + "."):
                    deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith(PKG + "."))
    return out


def test_no_import_circle():
    g = graph()
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        if state.get(m) == 2:
            return
        assert state.get(m) != 1, " -> ".join([*path, m])
        state[m] = 1
        for d in sorted(g.get(m, ())):
            if d != PKG:  # the package re-exports the Emulator; nothing inside imports it
                visit(d, [*path, m])
        state[m] = 2

    for m in sorted(g):
        visit(m, [])
    assert f"{PKG}.controllers" not in g[f"{PKG}.driver"]


def test_the_api_server_knows_no_controller():
    """flux_dws.apiserver imports nothing of flux_dws.emulator (the
    controllers): they meet it only through its StoreApi."""
    import flux_dws.apiserver

    root = Path(flux_dws.apiserver.__file__).parent
    bad = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            bad += [f"{path.name}: {n}" for n in names if n.startswith(PKG)]
    assert not bad, bad
