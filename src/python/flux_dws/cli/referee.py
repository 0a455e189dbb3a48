"""``flux-dws referee``: play the API-server scenarios against a server and
compare transcripts (flux_dws.referee.referee; doc/man1/flux-dws-referee.rst).

    flux-dws referee run --kubeconfig K [--restricted K2] [-o T.json]
    flux-dws referee emulator [-o T.json]        # a fresh emulator
    flux-dws referee realk8s [-o T.json]         # a real kube-apiserver (t/k8s)
    flux-dws referee diff A.json B.json [--all]  # one line per difference
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from flux_dws.referee import referee


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("referee", help="compare the emulator's Kubernetes API with a real one")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("-o", "--output", metavar="FILE",
                       help="write the transcript here (default: standard output)")
        q.add_argument("-s", "--scenario", action="append", choices=list(referee.SCENARIOS),
                       metavar="NAME", help="play only this scenario (repeatable)")
        q.add_argument("-q", "--quiet", action="store_true",
                       help="do not report each scenario's progress on standard error")

    r = verbs.add_parser("run", help="play the scenarios against the server of a kubeconfig")
    r.add_argument("--kubeconfig", required=True, metavar="FILE",
                   help="a user who may create namespaces and nodes")
    r.add_argument("--restricted", metavar="FILE",
                   help="a user without rights on namespaces (the RBAC scenario)")
    r.add_argument("--name", default="server", help="the target's name in the transcript")
    common(r)
    r.set_defaults(func=run)
    e = verbs.add_parser("emulator", help="play the scenarios against a fresh emulator")
    common(e)
    e.set_defaults(func=run_emulator)
    k = verbs.add_parser("realk8s", help="play the scenarios against a real kube-apiserver"
                                         " built by t/k8s/build.sh")
    k.add_argument("--workdir", metavar="DIR",
                   help="keep its etcd data, certificates and logs here (default: a"
                        " temporary directory)")
    common(k)
    k.set_defaults(func=run_realk8s)
    d = verbs.add_parser("diff", help="print the differences between two transcripts")
    d.add_argument("a", metavar="A.json")
    d.add_argument("b", metavar="B.json")
    d.add_argument("--all", action="store_true",
                   help="also print the accepted differences, each with its reason")
    d.set_defaults(func=diff)


def _write(args: argparse.Namespace, transcript: dict[str, Any]) -> int:
    text = json.dumps(transcript, indent=1, sort_keys=False) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _progress(args: argparse.Namespace) -> Any:
    return None if args.quiet else (lambda line: print(line, file=sys.stderr))


def run(args: argparse.Namespace) -> int:
    target = referee.Target(args.name, args.kubeconfig, args.restricted)
    return _write(args, referee.run(target, args.scenario, _progress(args)))


def run_emulator(args: argparse.Namespace) -> int:
    from flux_dws.emulator import Emulator
    with Emulator() as emu:
        return _write(args, referee.run(referee.emulator_target(emu), args.scenario,
                                        _progress(args)))


def run_realk8s(args: argparse.Namespace) -> int:
    import tempfile

    from flux_dws.realstack.controlplane import ControlPlane, ControlPlaneUnavailable

    with tempfile.TemporaryDirectory(prefix="flux-dws-referee-") as tmp:
        try:
            with ControlPlane(args.workdir or tmp) as cp:
                cp.install_crds()
                referee.install_schemas(cp)
                cp.apply_rbac()
                return _write(args, referee.run(referee.controlplane_target(cp),
                                                args.scenario, _progress(args)))
        except ControlPlaneUnavailable as exc:
            print(f"flux-dws referee: no real control plane: {exc}", file=sys.stderr)
            return 1


def diff(args: argparse.Namespace) -> int:
    """Exit 1 when a difference is not accepted (referee.ACCEPTED)."""
    a, b = (json.loads(Path(f).read_text()) for f in (args.a, args.b))
    bad = 0
    for line in referee.compare(a, b):
        entry = referee.accepted(line)
        if entry is None:
            bad += 1
            print(line)
        elif args.all:
            print(f"{line}  [accepted: {entry.why}]")
    for t in (a, b):
        for line in referee.unreachable(t):
            print(f"{t.get('target')}: not compared: {line}", file=sys.stderr)
    return 1 if bad else 0
