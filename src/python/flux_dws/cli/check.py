"""``flux-dws check``: validate #DW directives as a job submission would.

Directives come from the arguments (each a dw string, which may hold several
#DW), from -f FILE (``-`` for stdin), or from job scripts given with -s
(their lines that begin with ``#DW``).  They are split, preset-expanded,
checked against the nnf ruleset (or --rules FILE) and, with --nodes, against
[rabbit.policy.maximums].  An error is printed exactly as the job's
exception would carry it, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from flux_dws import inputfile
from flux_dws.cli.argtypes import positive_int
from flux_dws.inputfile import InputError
from flux_dws.libdws import directives as dw
from flux_dws.libdws import rabbitconf
from flux_dws.libdws.explain import explain_note
from flux_dws.libdws.jobsm import NOTE_PREFIX as EXCEPTION_PREFIX  # a refused job's note starts so


def exception_note(exc: Exception) -> str:
    """The note a job whose directives are refused so gets: the prefix, the
    message, then the plain sentence libdws' explain table appends."""
    return explain_note(EXCEPTION_PREFIX + str(exc))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directives", nargs="*", metavar="DW",
                   help="a dw attribute value (one or more #DW directives)")
    p.add_argument("-f", "--file", action="append", default=[], metavar="FILE",
                   help="read the dw value from FILE ('-' for standard input)")
    p.add_argument("-s", "--script", action="append", default=[], metavar="SCRIPT",
                   help="take the #DW lines of a job script")
    p.add_argument("-c", "--config", metavar="TOML",
                   help="Flux config with a [rabbit] table (presets, policy.maximums)")
    p.add_argument("-N", "--nodes", type=positive_int, metavar="N",
                   help="node count of the job, to apply [rabbit.policy.maximums]")
    p.add_argument("--rules", metavar="FILE",
                   help="DWDirectiveRule JSON to validate against (default: nnf)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print each directive after splitting")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("check", help="validate #DW directives")
    add_arguments(p)
    p.set_defaults(func=run)


def _read(path: str) -> str:
    return inputfile.read_text(path, stdin=True)


def script_directives(text: str) -> list[str]:
    """The lines of a job script that begin with #DW."""
    return [line.strip() for line in text.splitlines() if line.lstrip().startswith("#DW")]


def _rabbit_table(path: str) -> dict[str, Any]:
    """The [rabbit] table of a config file or directory, validated as the
    dws service validates it (so a bad key is refused even without -N)."""
    try:
        return rabbitconf.parse(rabbitconf.load_toml(path))
    except rabbitconf.ConfigError as exc:
        message = str(exc)
        raise InputError(message if message.startswith(path) else f"{path}: {message}"
                         ) from None


def _rules(path: str) -> dw.Ruleset:
    try:
        return dw.Ruleset(inputfile.load_json(path))
    except dw.DirectiveError as exc:
        raise InputError(f"{path}: not a DWDirectiveRule: {exc}") from None


def collect(args: argparse.Namespace) -> list[Any]:
    """The dw values to check, each as a job would carry it."""
    values: list[Any] = [inputfile.argument_text(d, f"directive {i}")
                         for i, d in enumerate(args.directives, 1)]
    values += [_read(f) for f in args.file]
    for s in args.script:
        lines = script_directives(_read(s))
        if not lines:
            raise InputError(f"{s}: no #DW lines")
        values.append(lines)
    if not values:
        raise InputError("no directives given (arguments, -f FILE or -s SCRIPT)")
    return values


def check(value: Any, rabbit: dict[str, Any], nodes: int | None,
          rules: dw.Ruleset | None) -> list[str]:
    maximums = (rabbit.get("policy") or {}).get("maximums") if nodes is not None else None
    return dw.check_dw(value, rabbit.get("presets"), nodes, maximums, rules)


def run(args: argparse.Namespace) -> int:
    try:
        rabbit = _rabbit_table(args.config) if args.config else {}
        rules = _rules(args.rules) if args.rules else None
        values = collect(args)
    except (InputError, dw.DirectiveError) as exc:
        print(f"flux-dws check: {exc}", file=sys.stderr)
        return 2
    failed = 0
    total = 0
    for value in values:
        try:
            directives = check(value, rabbit, args.nodes, rules)
        except dw.DirectiveError as exc:
            print(exception_note(exc))
            failed += 1
            continue
        total += len(directives)
        if args.verbose:
            for d in directives:
                print(f"  {d}")
    if failed:
        return 1
    print(f"OK: {total} directive{'s' if total != 1 else ''}")
    return 0
