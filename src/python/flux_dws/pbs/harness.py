"""Run the PBS_cray_atom hook the way PBS does, without PBS.

``run_hook(...)`` builds an importable ``pbs`` module holding the subset the
hook uses (``event()`` with the job and the MoM's vnode list,
``server().vnode(name).sharing``, ``get_local_nodename()``, accept/reject,
``logmsg``, ``hook_config_filename`` and the constants), runs the hook source
in a fresh namespace whose ``__name__`` is ``builtins`` (as pbs_python does),
arms the hook's alarm (SIGALRM raising KeyboardInterrupt, which is what
PyErr_SetInterrupt gives the hook) and applies ``fail_action=offline_vnodes``
to hook errors at execjob_begin: every vnode of the MoM goes offline with
PBS' comment.  It must run in the main thread (signals).

From the command line, to try a hook file and config against an ATOM (real
or emulated) on this node::

    python -m flux_dws.pbs.harness begin --config PBS_cray_atom.CF [--hook FILE]
"""

from __future__ import annotations

import argparse
import builtins
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flux_dws.pbs import hook_dir
from flux_dws.users import user_name

HOOK = "PBS_cray_atom"
CONSTANTS = {
    "ND_DEFAULT_SHARED": 1, "ND_DEFAULT_EXCL": 2, "ND_IGNORE_EXCL": 3, "ND_FORCE_EXCL": 4,
    "ND_DEFAULT_EXCLHOST": 5, "ND_FORCE_EXCLHOST": 6, "ND_OFFLINE": 0x01,
    "EVENT_ERROR": 0x0001, "EVENT_DEBUG": 0x0080, "EVENT_DEBUG2": 0x0100,
    "EVENT_DEBUG3": 0x0400, "EVENT_DEBUG4": 0x0800,
    "EXECJOB_BEGIN": 0x40, "EXECJOB_END": 0x200, "EXECJOB_PROLOGUE": 0x100,
}
SHARING = {"default_shared": 1, "default_excl": 2, "ignore_excl": 3, "force_excl": 4,
           "default_exclhost": 5, "force_exclhost": 6}
LEVELS = {v: k[len("EVENT_"):] for k, v in CONSTANTS.items() if k.startswith("EVENT_")}
EVENTS = {"execjob_begin": CONSTANTS["EXECJOB_BEGIN"], "execjob_end": CONSTANTS["EXECJOB_END"],
          "execjob_prologue": CONSTANTS["EXECJOB_PROLOGUE"]}
# pbs_python's fail_action applies to these events only
OFFLINE_EVENTS = (CONSTANTS["EXECJOB_BEGIN"], CONSTANTS["EXECJOB_PROLOGUE"])
OFFLINE_COMMENT = f"offlined by hook '{HOOK}' due to hook error"


def offline_comment(hook_name: str) -> str:
    """The comment PBS puts on vnodes its fail_action offlined."""
    return f"offlined by hook '{hook_name}' due to hook error"


class _Accept(SystemExit):
    pass


class _Reject(SystemExit):
    pass


@dataclass
class Vnode:
    name: str
    state: int = 0
    comment: str = ""
    sharing: int | None = None


@dataclass
class Job:
    id: str
    euser: str
    Resource_List: dict[str, Any]


@dataclass
class Event:
    type: int
    job: Job
    vnode_list: dict[str, Vnode]
    hook_name: str = HOOK
    accepted: bool = False
    rejected: bool = False
    reject_msg: str = ""

    def accept(self) -> None:
        self.accepted = True
        raise _Accept("0")

    def reject(self, msg: str = "", ecode: int = 255) -> None:
        self.rejected = True
        self.reject_msg = msg
        raise _Reject(ecode)


@dataclass
class Result:
    outcome: str                   # accept | reject | error | alarm
    reject_msg: str = ""
    logs: list[tuple[int, str]] = field(default_factory=list)
    offlined: list[str] = field(default_factory=list)
    traceback: str = ""

    def logged(self, text: str, level: int | None = None) -> bool:
        """Whether a log line contains text (at that level, if given)."""
        return any(text in m and (level is None or lv == level) for lv, m in self.logs)


def make_pbs(event: Event, config_path: str | None,
             logs: list[tuple[int, str]]) -> types.ModuleType:
    """The ``pbs`` module as a MoM hook sees it; the first vnode of the
    event's vnode list is the local node."""
    pbs = types.ModuleType("pbs")
    for k, v in CONSTANTS.items():
        setattr(pbs, k, v)
    local = next(iter(event.vnode_list))

    def vnode(name: str) -> Vnode:
        return event.vnode_list.get(name) or Vnode(name)

    server = types.SimpleNamespace(vnode=vnode)
    pbs.event = lambda: event  # type: ignore[attr-defined]
    pbs.logmsg = lambda level, msg: logs.append((level, msg))  # type: ignore[attr-defined]
    pbs.get_local_nodename = lambda: local  # type: ignore[attr-defined]
    pbs.server = lambda: server  # type: ignore[attr-defined]
    pbs.hook_config_filename = config_path  # type: ignore[attr-defined]
    return pbs


def _exec(code: types.CodeType, event: Event, pbs: types.ModuleType, config_path: str | None,
          alarm: float, result: Result) -> None:
    """Run the compiled hook with the pbs module, env and alarm in place."""
    saved_env = os.environ.pop("PBS_HOOK_CONFIG_FILE", None)
    if config_path:
        os.environ["PBS_HOOK_CONFIG_FILE"] = config_path
    saved_pbs = sys.modules.get("pbs")
    sys.modules["pbs"] = pbs

    def on_alarm(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    # Another user of SIGALRM (pytest-timeout, say) gets its handler and
    # the rest of its timer back afterwards.
    old = signal.signal(signal.SIGALRM, on_alarm)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, alarm)
    started = time.monotonic()
    etype = next((k for k, v in EVENTS.items() if v == event.type), str(event.type))
    try:
        exec(code, {"__builtins__": builtins})
    except _Accept:
        result.outcome = "accept"
    except _Reject:
        result.outcome, result.reject_msg = "reject", event.reject_msg
    except KeyboardInterrupt:
        result.outcome = "alarm"
        result.logs.append((CONSTANTS["EVENT_ERROR"], f"alarm call while running {etype}"
                                                      f" hook '{event.hook_name}', request"
                                                      f" rejected"))
    except Exception:
        result.outcome = "error"
        result.traceback = traceback.format_exc()
        result.logs.append((CONSTANTS["EVENT_ERROR"], f"{etype} hook '{event.hook_name}'"
                                                      f" encountered an exception, request"
                                                      f" rejected"))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer > 0:
            signal.setitimer(signal.ITIMER_REAL,
                             max(outer - (time.monotonic() - started), 0.001))
        if saved_pbs is None:
            sys.modules.pop("pbs", None)
        else:
            sys.modules["pbs"] = saved_pbs
        os.environ.pop("PBS_HOOK_CONFIG_FILE", None)
        if saved_env is not None:
            os.environ["PBS_HOOK_CONFIG_FILE"] = saved_env


def run_hook(event_type: str, jobid: str = "1.pbs01", euser: str | None = None,
             place: str | None = None, sharing: int | None = None,
             config: str | None = "{}", config_path: str | None = None,
             alarm: float = 300.0, fail_action: str = "offline_vnodes",
             vnodes: tuple[str, ...] = ("node01",), source: str | None = None,
             hook_name: str = HOOK) -> Result:
    """Run the hook for one event ('execjob_begin', 'execjob_end', ...).

    ``config`` is the configuration file's text (None: no file is set);
    ``config_path`` names an existing file to use instead.  ``sharing`` is
    the local vnode's (the first of ``vnodes``) sharing attribute.
    ``source`` is the hook's text (default: the shipped PBS_cray_atom.PY);
    ``hook_name`` the name the site created it under.
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_hook arms SIGALRM, so it must run in the main thread")
    if alarm <= 0:
        raise ValueError(f"alarm must be positive, not {alarm}")
    if not vnodes:
        raise ValueError("a MoM has at least one vnode")
    if euser is None:
        euser = user_name(os.getuid()) or str(os.getuid())
    etype = EVENTS.get(event_type, 0)
    vnode_list = {n: Vnode(n) for n in vnodes}
    vnode_list[vnodes[0]].sharing = sharing
    event = Event(etype, Job(jobid, euser, {"place": place}), vnode_list, hook_name=hook_name)
    result = Result("accept")
    text = source if source is not None else (hook_dir() / f"{HOOK}.PY").read_text()
    code = compile(text, f"{HOOK}.PY", "exec")
    with tempfile.TemporaryDirectory(prefix="pbshook") as d:
        path = config_path
        if path is None and config is not None:
            path = str(Path(d) / f"{HOOK}.CF")
            Path(path).write_text(config)
        _exec(code, event, make_pbs(event, path, result.logs), path, alarm, result)
    if (result.outcome in ("error", "alarm") and fail_action == "offline_vnodes"
            and etype in OFFLINE_EVENTS):
        for v in event.vnode_list.values():
            v.state |= CONSTANTS["ND_OFFLINE"]
            v.comment = offline_comment(hook_name)
            result.offlined.append(v.name)
    return result


# --- command line -------------------------------------------------------------

EXIT = {"accept": 0, "reject": 1, "error": 2, "alarm": 2}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m flux_dws.pbs.harness",
        description="Run the PBS_cray_atom hook for one event as a PBS MoM would, without"
                    " PBS. Exit status: 0 accept, 1 reject, 2 hook error or alarm.")
    p.add_argument("event", choices=["begin", "end", *EVENTS],
                   help="execjob_begin (begin) or execjob_end (end)")
    cfg = p.add_mutually_exclusive_group(required=True)
    cfg.add_argument("--config", metavar="FILE", help="the hook configuration file")
    cfg.add_argument("--no-config", action="store_true",
                     help="run with no configuration file set")
    p.add_argument("--hook", metavar="FILE", type=Path,
                   help="the hook script (default: the PBS_cray_atom.PY flux-dws ships)")
    p.add_argument("--jobid", default="1.pbs01", help="job id (default 1.pbs01)")
    p.add_argument("--user", help="job owner, euser (default: you)")
    p.add_argument("--place", help="the job's place spec, e.g. scatter:excl")
    p.add_argument("--sharing", choices=sorted(SHARING),
                   help="the local vnode's sharing attribute (default unset)")
    p.add_argument("--vnode", action="append", metavar="NAME",
                   help="the MoM's vnodes, the local node first (default node01)")
    p.add_argument("--alarm", type=float, default=300.0, metavar="SECONDS",
                   help="the hook's alarm (default 300)")
    p.add_argument("--name", default=HOOK,
                   help=f"the name the hook was created under (default {HOOK})")
    p.add_argument("--fail-action", choices=["offline_vnodes", "none"],
                   default="offline_vnodes", help="the hook's fail_action")
    args = p.parse_args(argv)
    event = args.event if args.event.startswith("execjob_") else f"execjob_{args.event}"
    try:
        source = args.hook.read_text() if args.hook else None
        if args.config is not None:
            Path(args.config).stat()
        r = run_hook(event, jobid=args.jobid, euser=args.user, place=args.place,
                     sharing=SHARING.get(args.sharing or ""), config=None,
                     config_path=args.config, alarm=args.alarm,
                     fail_action=args.fail_action, vnodes=tuple(args.vnode or ["node01"]),
                     source=source, hook_name=args.name)
    except (OSError, ValueError, SyntaxError) as exc:
        print(f"{p.prog}: {exc}", file=sys.stderr)
        return 2
    for level, msg in r.logs:
        print(f"{LEVELS.get(level, level)}: {msg}")
    if r.traceback:
        print(r.traceback, end="")
    print(f"outcome: {r.outcome}" + (f" ({r.reject_msg})" if r.reject_msg else ""))
    for name in r.offlined:
        print(f"offlined: {name} ({offline_comment(args.name)})")
    return EXIT[r.outcome]


if __name__ == "__main__":
    sys.exit(main())
