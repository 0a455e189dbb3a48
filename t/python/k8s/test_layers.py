"""flux_dws.k8s is built in one-way layers, as the engine is
(t/python/libdws/test_engine_layers.py): each module imports only the
modules of the layers below it, so none imports another that imports it
back, and nothing in k8s/ imports the service (or anything else above
the Kubernetes layer: the engine, the harness, the emulator, the
commands).  Imports inside ``if TYPE_CHECKING:`` count too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import flux_dws.k8s

PKG = "flux_dws.k8s"
ROOT = Path(flux_dws.k8s.__file__).parent
GUIDE = Path(__file__).resolve().parents[3] / "doc" / "guide" / "service.rst"

# bottom first
LAYERS = [
    "crd",
    "errors",
    "events",
    "settings",
    "kinds",
    "api",
    "watching",
    "writing",
    "layer",
]
#: what k8s/ may import of flux_dws outside itself: data types below it
BELOW = {"flux_dws.jsondata"}


def imports(path: Path) -> set[str]:
    """The flux_dws modules a file imports (``from flux_dws.k8s import crd``
    is flux_dws.k8s.crd; a relative import is resolved from the package)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = PKG.rsplit(".", node.level - 1)[0]
                base = f"{up}.{base}" if base else up
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names if base in (PKG, "flux_dws"))
    return {m for m in out if m == "flux_dws" or m.startswith("flux_dws.")}


def modules() -> list[Path]:
    return sorted(p for p in ROOT.glob("*.py") if p.stem != "__init__")


def test_every_k8s_module_is_a_layer() -> None:
    odd = {p.stem for p in modules()} ^ set(LAYERS)
    assert not odd, f"modules not in a layer, or layers without modules: {odd}"


def test_each_module_imports_only_layers_below_it() -> None:
    bad = []
    for path in modules():
        level = LAYERS.index(path.stem)
        for m in sorted(imports(path)):
            if m == PKG or not m.startswith(PKG + "."):
                continue
            if LAYERS.index(m.removeprefix(PKG + ".")) >= level:
                bad.append(f"{path.stem} imports {m}")
    assert not bad, "imports against the layers: " + ", ".join(bad)


def test_nothing_above_k8s_is_imported() -> None:
    bad = []
    for path in [*modules(), ROOT / "__init__.py"]:
        for m in sorted(imports(path)):
            if m != PKG and not m.startswith(PKG + ".") and m not in BELOW:
                bad.append(f"{path.name} imports {m}")
    assert not bad, "k8s/ reaches above itself: " + ", ".join(bad)


def test_the_package_and_the_service_guide_list_the_same_layers() -> None:
    doc = flux_dws.k8s.__doc__ or ""
    listed = re.findall(r"^``(\w+)``\s", doc, flags=re.M)
    assert listed == list(reversed(LAYERS)), f"k8s/__init__.py lists {listed}"
    shown = re.findall(r"^\s+(\w+)\.py\s{2,}", GUIDE.read_text(), flags=re.M)
    assert shown == list(reversed(LAYERS)), f"the guide's picture lists {shown}"
