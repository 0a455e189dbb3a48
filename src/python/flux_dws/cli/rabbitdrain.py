"""``flux dws rabbits drain|undrain``: drain a rabbit from Flux.

``drain RABBITS --reason TEXT`` asks the dws service (``dws.drain``, the
instance owner's) to do what the ``nnf`` CLI's ``rabbit drain`` does:
taint each rabbit's Kubernetes Node ``cray.nnf.node.drain=true`` and
annotate its Storage with ``drain_date`` and ``drain_reason``.  nnf-sos
then reports the Storage Drained and the service takes the rabbit's ssds
down in Fluxion: new jobs stay off it, running jobs keep their storage.
``undrain RABBITS`` (``dws.undrain``) removes both.  RABBITS are RFC 29
hostlists; ``flux dws rabbits`` shows the drain, its date, reason and who.
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Sequence
from typing import Any

from flux_dws.cli import argtypes
from flux_dws.fluxutil import FluxUnavailable, open_flux
from flux_dws.libdws.hostlist import Hostlist, HostlistError

#: the longest reason the service takes (engine/views/rabbitdrain.h)
REASON_MAX = 200


def rabbits_arg(text: str) -> Hostlist:
    """argparse ``type=`` for an RFC 29 hostlist of rabbits (not empty)."""
    try:
        hl = Hostlist(argtypes.text(text))
    except HostlistError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not len(hl):
        raise argparse.ArgumentTypeError("an empty hostlist names no rabbit")
    return hl


def reason_arg(text: str) -> str:
    """argparse ``type=`` for a drain reason: one line, not blank, at most
    REASON_MAX bytes."""
    value = argtypes.text(text)
    if not value.strip():
        raise argparse.ArgumentTypeError("the reason is empty")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise argparse.ArgumentTypeError("the reason must be one line of text")
    if len(value.encode("utf-8")) > REASON_MAX:
        raise argparse.ArgumentTypeError(f"the reason is longer than {REASON_MAX} bytes")
    return value


def add_verb_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the parsers of ``drain`` and ``undrain`` to ``sub``."""
    drain = sub.add_parser(
        "drain", help="drain rabbits (the instance owner's)",
        description="Drain rabbits: no new job gets their storage, running jobs keep"
                    " theirs; DWS and NNF see the drain the nnf CLI would make."
                    " The instance owner's.")
    drain.add_argument("rabbits", nargs="+", type=rabbits_arg, metavar="RABBITS",
                       help="RFC 29 hostlists of rabbits, e.g. rabbit[01-04]")
    drain.add_argument("-r", "--reason", required=True, type=reason_arg, metavar="TEXT",
                       help="why (one line; shown by flux dws rabbits and the nnf CLI)")
    drain.set_defaults(func=run_drain, _parser=drain)
    undrain = sub.add_parser(
        "undrain", help="undrain rabbits (the instance owner's)",
        description="Undrain rabbits drained with flux dws rabbits drain or the nnf"
                    " CLI. The instance owner's.")
    undrain.add_argument("rabbits", nargs="+", type=rabbits_arg, metavar="RABBITS",
                         help="RFC 29 hostlists of rabbits")
    undrain.set_defaults(func=run_undrain, _parser=undrain)


class VerbParser(argparse.ArgumentParser):
    """A parser that lists verbs as subcommands (for --help and whoever
    walks the parsers) but reads its own positional arguments too: when
    the first argument is a verb its parser takes the rest, otherwise this
    one parses all of it, its subcommands left out (``rabbits drain ...``
    beside ``rabbits RABBIT ...``)."""

    def _verbs(self) -> dict[str, argparse.ArgumentParser]:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return dict(action.choices)
        return {}

    def _get_positional_actions(self) -> list[argparse.Action]:
        return [a for a in super()._get_positional_actions()
                if not isinstance(a, argparse._SubParsersAction)]

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        argv = list(sys.argv[1:] if args is None else args)
        verbs = self._verbs()
        if argv and argv[0] in verbs:
            return verbs[argv[0]].parse_known_args(argv[1:], namespace)
        return super().parse_known_args(argv, namespace)


def add_verbs(parser: argparse.ArgumentParser) -> None:
    """Make ``parser`` (``flux-dws rabbits``) take the drain verbs."""
    parser.__class__ = VerbParser
    sub = parser.add_subparsers(dest="verb", metavar="drain|undrain", prog=parser.prog,
                                help="drain or undrain rabbits (flux-dws-rabbits(1))")
    add_verb_parsers(sub)
    parser.usage = (f"{parser.prog} [-h] [--json | -o FORMAT] [-n] [-v] [--down] [RABBIT ...]\n"
                    f"       {parser.prog} drain RABBITS --reason TEXT\n"
                    f"       {parser.prog} undrain RABBITS")


def ask(topic: str, payload: dict[str, Any]) -> Any:
    """The service's answer; OSError (strerror: its words) if it refused."""
    return open_flux().rpc(topic, payload).get()


def _run(args: argparse.Namespace, topic: str, payload: dict[str, Any]) -> int:
    prog = args._parser.prog
    rabbits = Hostlist([h for hl in args.rabbits for h in hl])
    try:
        answer = ask(topic, {"rabbits": rabbits.encode(), **payload})
    except FluxUnavailable as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        words = exc.strerror or errno.errorcode.get(exc.errno or 0, "error")
        words = words.removeprefix(f"{topic}: ")
        if exc.errno == errno.ENOSYS:
            words += " (is the dws service loaded? flux module load dws.py)"
        print(f"{prog}: {' '.join(words.split())}", file=sys.stderr)
        return 1
    done = answer.get("rabbits") if isinstance(answer, dict) else None
    names = Hostlist([str(r) for r in done]).encode() if isinstance(done, list) else \
        rabbits.encode()
    print(f"{topic.removeprefix('dws.')}ed {names}")
    return 0


def run_drain(args: argparse.Namespace) -> int:
    return _run(args, "dws.drain", {"reason": args.reason})


def run_undrain(args: argparse.Namespace) -> int:
    return _run(args, "dws.undrain", {})
