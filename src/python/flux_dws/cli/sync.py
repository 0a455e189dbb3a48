"""``flux dws sync``: wait until the dws service has caught up with Kubernetes.

Sends ``dws.watch_test`` (owner only) to the enclosing instance's dws
service and returns once it answers: every change the Kubernetes API server
had made to the watched kinds (Workflow, Storage, SystemConfiguration) when
it was asked has been processed, and what those changes caused has been
carried out (flux-dws-service(8), "dws.watch_test").  A barrier for tests
and admins: ``kubectl patch ...; flux dws sync; flux dws rabbits``.
"""

from __future__ import annotations

import argparse
import sys

from flux_dws.fluxutil import FluxUnavailable, ask_dws


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("sync", help="wait until the dws service has caught up with Kubernetes")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        ask_dws("dws.watch_test")
    except FluxUnavailable as exc:
        print(f"flux-dws sync: {exc}", file=sys.stderr)
        return 1
    return 0
