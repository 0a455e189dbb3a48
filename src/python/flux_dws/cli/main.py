"""Entry point of ``flux-dws``: one module per subcommand.

Each module named in SUBCOMMANDS lives in flux_dws.cli and defines
``register(subparsers) -> None``, which adds its parser and sets
``func(args) -> int`` as the default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS: list[str] = [
    "atom_emulator",
    "check",
    "demo",
    "dws2jgf",
    "emulator",
    "fault",
    "getrabbit",
    "rabbitmapping",
    "status",
    "version",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flux-dws",
        description="Flux integration with HPE Rabbit near-node storage (DWS).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(f"flux_dws.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
