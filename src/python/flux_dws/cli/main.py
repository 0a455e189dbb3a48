"""Entry point of ``flux-dws``: one module per subcommand.

Each module named in SUBCOMMANDS lives in flux_dws.cli and defines
``register(subparsers) -> None``, which adds its parser and sets
``func(args) -> int`` as the default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from flux_dws.inputfile import InputError

SUBCOMMANDS: list[str] = [
    "atom_emulator",
    "check",
    "config_check",
    "demo",
    "df",
    "dws2jgf",
    "emulator",
    "fault",
    "getrabbit",
    "job",
    "jobs",
    "persistent",
    "rabbitmapping",
    "rabbits",
    "referee",
    "status",
    "sync",
    "usage",
    "version",
    "wait",
]


def _mark_parsers(parser: argparse.ArgumentParser) -> None:
    """Set ``_parser`` on the namespace of each (nested) subcommand to its
    own parser, so that errors found after parsing show its usage."""
    parser.set_defaults(_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _mark_parsers(child)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flux-dws",
        description="Flux integration with HPE Rabbit near-node storage (DWS).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(f"flux_dws.cli.{name}").register(sub)
    _mark_parsers(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # An unknown option is reported with the usage of the subcommand it was
    # given to (argparse's parse_args reports it with the top level's).
    args, extra = parser.parse_known_args(argv)
    if extra:
        args._parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args))
    except InputError as exc:
        print(f"{args._parser.prog}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
