"""``flux-dws config-check``: validate a Flux configuration off-line, as
flux-dws would read it, before a site switches to it.

Checks the whole ``[rabbit]`` table (each key on its own, so that every bad
key is reported, then the table as a whole), ``rabbit.drain_queues``
against the node properties of ``[[resource.config]]`` when the
configuration lists its nodes there (drain queues name node properties: one
no node has is refused, as the dws service refuses it; without
``resource.config`` the nodes come from elsewhere and only the service can
check), and the ``conf`` of every ``dws-jobtap.so`` entry of
``[job-manager] plugins``.
Prints one line per problem, naming it, and exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from flux_dws.libdws import rabbitconf, resource_config
from flux_dws.libdws.jobsm import JobMachine, JobMachineError

JOBTAP = "dws-jobtap.so"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("config-check", help="validate a Flux config for flux-dws (off-line)")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a Flux config file (TOML, or JSON if named *.json) or a config"
                        " directory (every *.toml, as flux-broker --config-path reads it)")
    p.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    p.set_defaults(func=run)


def rabbit_problems(table: Any) -> list[str]:
    """Every problem of a raw [rabbit] table (empty: none)."""
    if table is None:
        return []
    if not isinstance(table, Mapping):
        try:
            rabbitconf.parse(table)
        except rabbitconf.ConfigError as exc:
            return [str(exc)]
        return []
    problems: list[str] = []
    for key, value in table.items():
        try:
            rabbitconf.parse({key: value})
        except rabbitconf.ConfigError as exc:
            problems.append(str(exc))
    if not problems:  # keys that only conflict together (restrict_persistent)
        try:
            rabbitconf.parse(table)
        except rabbitconf.ConfigError as exc:
            problems.append(str(exc))
    return problems


def queue_problems(table: Any, resource: Any) -> list[str]:
    """rabbit.drain_queues against the node properties of [[resource.config]]
    (empty: fine, or not checkable off-line: no resource.config)."""
    if not isinstance(table, Mapping) or table.get("drain_queues") is None:
        return []
    nodes = resource.get("config") if isinstance(resource, Mapping) else None
    if nodes is None:
        return []
    try:
        drain_queues = rabbitconf.parse({"drain_queues": table["drain_queues"]})["drain_queues"]
        R = json.loads(resource_config.R_from_config(nodes))
    except rabbitconf.ConfigError as exc:
        return [str(exc)]
    except resource_config.ConfigError:
        return []  # flux-core reports a bad resource.config, in its own words
    try:
        rabbitconf.check_drain_properties(drain_queues, R["execution"].get("properties"))
    except rabbitconf.ConfigError as exc:
        return [str(exc)]
    return []


def jobtap_problems(config: Mapping[str, Any]) -> list[str]:
    """The conf of each dws-jobtap.so in [job-manager] plugins."""
    plugins = (config.get("job-manager") or {}).get("plugins") \
        if isinstance(config.get("job-manager"), Mapping) else None
    if not isinstance(plugins, list):
        return []
    problems: list[str] = []
    for i, entry in enumerate(plugins):
        if not isinstance(entry, Mapping):
            continue
        load = entry.get("load")
        if not isinstance(load, str) or not load.endswith(JOBTAP):
            continue
        try:
            JobMachine(entry.get("conf"))
        except (JobMachineError, TypeError, ValueError) as exc:
            problems.append(f"job-manager.plugins[{i}] ({load}): conf: {exc}")
    return problems


def problems_of(config: Mapping[str, Any]) -> list[str]:
    table = config.get("rabbit")
    return (rabbit_problems(table) + queue_problems(table, config.get("resource"))
            + jobtap_problems(config))


def run(args: argparse.Namespace) -> int:
    failed = False
    for path in args.paths:
        try:
            config = rabbitconf.load_config(path)
        except rabbitconf.ConfigError as exc:
            message = str(exc)
            print(message if message.startswith(str(path)) else f"{path}: {message}",
                  file=sys.stderr)
            return 2
        found = problems_of(config)
        for p in found:
            print(f"{path}: {p}")
        if found:
            failed = True
        elif not args.quiet:
            what = "no [rabbit] table" if "rabbit" not in config else "[rabbit] OK"
            print(f"{path}: OK ({what})")
    return 1 if failed else 0
