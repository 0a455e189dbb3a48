"""``flux-dws atom-emulator``: serve an emulated HPE Cray ATOM on a UNIX socket.

The same program as ``python -m flux_dws.pbs.atom_emulator``: a job table
behind ``/rm/v1/jobs``, scripted faults, a JSON line per request received.
Used to test the PBS_cray_atom hook (doc/guide/pbs-atom-hook.rst).
"""

from __future__ import annotations

import argparse

from flux_dws.pbs import atom_emulator


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("atom-emulator", help="serve an emulated HPE Cray ATOM (PBS hook tests)",
                       description="Serve an emulated HPE Cray ATOM on a UNIX socket.")
    atom_emulator.add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return atom_emulator.run(args, "flux-dws atom-emulator")
