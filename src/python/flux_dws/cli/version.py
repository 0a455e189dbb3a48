"""``flux-dws version``: print the package and libdws versions, or where the
dws service's module file is installed (``--module-path``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import flux_dws
from flux_dws.libdws import _ffi


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("version", help="print the flux-dws and libdws versions")
    p.add_argument("--module-path", action="store_true",
                   help="print the path of dws.py, for flux module load / flux python")
    p.set_defaults(func=run)


def module_path() -> Path | None:
    """The installed dws.py (a source tree's src/modules/dws.py otherwise)."""
    pkg = Path(flux_dws.__file__).resolve().parent
    for candidate in (pkg / "modules" / "dws.py", pkg.parents[1] / "modules" / "dws.py"):
        if candidate.is_file():
            return candidate
    return None


def run(args: argparse.Namespace) -> int:
    if args.module_path:
        path = module_path()
        if path is None:
            print("flux-dws version: dws.py is not installed with this flux_dws",
                  file=sys.stderr)
            return 1
        print(path)
        return 0
    print(f"flux-dws {flux_dws.__version__} (libdws {_ffi.version()})")
    return 0
