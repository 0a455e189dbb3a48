"""``flux getrabbit``: map rabbits <-> compute nodes <-> jobs.

    flux getrabbit                  all rabbits
    flux getrabbit RABBIT...        the compute nodes of these rabbits
    flux getrabbit -c HOSTS...      the rabbits of these compute nodes
    flux getrabbit -j JOBID...      the rabbits used by these jobs (their
                                    ``rabbits`` memo; needs Flux)

``-c`` and ``-j`` may be combined (the union is printed); rabbit names may
not be combined with either.  Output is one RFC 29 hostlist.  The mapping is
the file named by --mapping, else ``rabbit.mapping`` of the enclosing Flux
instance, else that of the root instance.
"""

from __future__ import annotations

import argparse
import sys

from flux_dws import fluxutil
from flux_dws.cli import argtypes
from flux_dws.errors import DwsError
from flux_dws.libdws.hostlist import Hostlist
from flux_dws.rabbitmapping_file import MappingFileError, RabbitMapping


class UsageError(Exception):
    pass


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--computes", nargs="+", metavar="HOSTS", default=[], type=argtypes.text,
                   help="print the rabbits of these compute nodes (hostlists)")
    p.add_argument("-j", "--jobids", nargs="+", metavar="ID", default=[], type=argtypes.text,
                   help="print the rabbits used by these jobs")
    p.add_argument("-m", "--mapping", metavar="FILE",
                   help="rabbitmapping file (default: rabbit.mapping from Flux config)")
    p.add_argument("rabbits", nargs="*", metavar="RABBITS", type=argtypes.text,
                   help="print the compute nodes of these rabbits (hostlists)")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("getrabbit", help="map rabbits, compute nodes and jobs")
    add_arguments(p)
    p.set_defaults(func=run)


def _expand(hostlists: list[str]) -> list[str]:
    hosts: list[str] = []
    for hl in hostlists:
        hosts.extend(Hostlist(hl))
    return hosts


def _load_mapping(path: str | None) -> RabbitMapping:
    if path is None:
        path = fluxutil.config_get_or_root("rabbit.mapping")
        if not isinstance(path, str):
            raise UsageError("no --mapping given and rabbit.mapping is not configured")
    return RabbitMapping.load(path)


def lookup(args: argparse.Namespace) -> str:
    if args.rabbits and (args.computes or args.jobids):
        raise UsageError("rabbit names cannot be combined with --computes or --jobids")
    if args.jobids and not args.computes:
        result = _job_rabbits(args.jobids)
        return Hostlist(result).encode()
    mapping = _load_mapping(args.mapping)
    if args.rabbits:
        return Hostlist(mapping.computes_of(_expand(args.rabbits))).encode()
    if args.computes:
        rabbits = mapping.rabbits_of(_expand(args.computes))
        if args.jobids:
            rabbits += [r for r in _job_rabbits(args.jobids) if r not in rabbits]
        return Hostlist(rabbits).encode()
    return Hostlist(list(mapping.rabbits)).encode()


def _job_rabbits(jobids: list[str]) -> list[str]:
    out: list[str] = []
    for jobid in jobids:
        memo = fluxutil.job_annotations(jobid).get("user", {}).get("rabbits")
        if not isinstance(memo, str):
            raise UsageError(f"job {jobid} has no 'rabbits' memo (did it use rabbit storage?)")
        out += [r for r in Hostlist(memo) if r not in out]
    return out


def run(args: argparse.Namespace) -> int:
    try:
        print(lookup(args))
    except (UsageError, MappingFileError, fluxutil.FluxUnavailable, DwsError) as exc:
        print(f"flux-getrabbit: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="flux-getrabbit", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
