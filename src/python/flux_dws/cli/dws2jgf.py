"""``flux dws2jgf``: add rabbit storage to Fluxion's resource graph.

Reads R (RFC 20) from standard input, or builds it from a TOML
``[resource]`` configuration with --from-config, and writes R with a
``scheduling`` key holding the JGF graph (only the graph with
--only-sched).  The rabbitmapping (see ``flux rabbitmapping``) is the
RABBITMAPPING argument or ``rabbit.mapping`` of the enclosing Flux instance.
The graph is written by libdws, streaming; on any error nothing is written
to standard output.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from flux_dws import fluxutil, inputfile
from flux_dws.cli import argtypes
from flux_dws.cli.argtypes import positive_int
from flux_dws.inputfile import InputError
from flux_dws.libdws import jgf, resource_config


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-validate", action="store_true",
                   help="skip mapping compute nodes that are not in R instead of failing")
    p.add_argument("-c", "--chunks-per-nnf", type=positive_int, default=jgf.DEFAULT_CHUNKS,
                   metavar="N", help="ssd vertices per rabbit (default: %(default)s)")
    p.add_argument("--cluster-name", metavar="NAME", type=argtypes.text,
                   help="name of the cluster vertex (default: host name without digits)")
    p.add_argument("--from-config", metavar="FILE",
                   help="build R from this TOML [resource] config instead of reading stdin")
    p.add_argument("--only-sched", action="store_true",
                   help="write only the scheduling graph, not R")
    p.add_argument("rabbitmapping", nargs="?", metavar="RABBITMAPPING",
                   help="rabbitmapping file (default: rabbit.mapping from Flux config)")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("dws2jgf", help="add rabbit storage to the Fluxion resource graph")
    add_arguments(p)
    p.set_defaults(func=run)


def _R_and_exclude(args: argparse.Namespace) -> tuple[str, str | None]:
    if args.from_config:
        resource = resource_config.load_resource_table(args.from_config)
        exclude = resource.get("exclude")
        try:
            R = json.dumps(fluxutil.parse_config_R(args.from_config))
        except fluxutil.FluxUnavailable:
            R = resource_config.R_from_config(resource.get("config"), source=args.from_config)
        return R, exclude if isinstance(exclude, str) else None
    if sys.stdin.isatty():
        raise InputError("reading R from standard input (a terminal): pipe R in or use "
                         "--from-config")
    R = inputfile.decode(inputfile.stdin_bytes(), "R (standard input)")
    exclude = None
    try:
        value = fluxutil.config_get(fluxutil.open_flux(), "resource.exclude")
        exclude = value if isinstance(value, str) else None
    except fluxutil.FluxUnavailable:
        pass
    return R, exclude


def _mapping(args: argparse.Namespace) -> tuple[str, Any]:
    path = args.rabbitmapping
    if path is None:
        try:
            path = fluxutil.config_get_or_root("rabbit.mapping")
        except fluxutil.FluxUnavailable:
            path = None
        if not isinstance(path, str):
            raise InputError("no RABBITMAPPING given and rabbit.mapping is not configured")
    try:
        return path, inputfile.load_json(path)
    except InputError as exc:
        raise InputError(f"rabbitmapping {exc}") from None


def check_chunks(mapping: Any, chunks: int) -> None:
    """Refuse a chunk count that splits some rabbit's storage into ssds of
    0 GiB (sizes are whole GiB, floored): Fluxion could never allocate it."""
    rabbits = mapping.get("rabbits") if isinstance(mapping, dict) else None
    if not isinstance(rabbits, dict):
        return  # libdws names what is wrong with the mapping
    for name, entry in rabbits.items():
        capacity = entry.get("capacity") if isinstance(entry, dict) else None
        if not isinstance(capacity, int) or capacity < jgf.GiB:
            continue  # a rabbit under 1 GiB has no storage to give whatever N is
        if capacity // chunks < jgf.GiB:
            raise InputError(f"--chunks-per-nnf {chunks}: rabbit {name}'s {capacity} bytes"
                             f" would make ssds of 0 GiB; use -c {capacity // jgf.GiB}"
                             " or fewer")


def run(args: argparse.Namespace) -> int:
    path = args.rabbitmapping
    try:
        path, mapping = _mapping(args)
        check_chunks(mapping, args.chunks_per_nnf)
        R, exclude = _R_and_exclude(args)
        sys.stdout.flush()
        jgf.write_jgf(
            sys.stdout.buffer,
            R,
            mapping,
            chunks=args.chunks_per_nnf,
            cluster=args.cluster_name,
            exclude=exclude,
            validate=not args.no_validate,
            only_sched=args.only_sched,
        )
        sys.stdout.buffer.flush()
    except (InputError, jgf.JGFError, resource_config.ConfigError) as exc:
        message = str(exc)
        if message.startswith("rabbitmapping: "):  # libdws names it, not its file
            message = f"rabbitmapping {path}: {message[len('rabbitmapping: '):]}"
        print(f"flux-dws2jgf: {message}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="flux-dws2jgf", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
