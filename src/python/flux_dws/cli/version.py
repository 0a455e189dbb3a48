"""``flux-dws version``: print the package and libdws versions."""

from __future__ import annotations

import argparse

import flux_dws
from flux_dws import _ffi


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("version", help="print the flux-dws and libdws versions")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(f"flux-dws {flux_dws.__version__} (libdws {_ffi.version()})")
    return 0
