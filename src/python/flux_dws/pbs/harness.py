"""Run the PBS_cray_atom hook the way PBS does, without PBS.

``run_hook(...)`` builds an importable ``pbs`` module with the subset the
hook uses (event, job, vnode list, server().vnode().sharing, accept/reject,
logmsg, hook_config_filename and the constants), runs the hook source in a
fresh namespace whose ``__name__`` is ``builtins`` (as pbs_python does),
arms the hook alarm (SIGALRM raising KeyboardInterrupt, as PyErr_SetInterrupt
does) and applies ``fail_action=offline_vnodes`` to hook errors at
execjob_begin: every vnode of the MoM goes offline with PBS' comment.
"""

from __future__ import annotations

import builtins
import os
import signal
import sys
import tempfile
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flux_dws.pbs import hook_dir

HOOK = "PBS_cray_atom"
CONSTANTS = {
    "ND_DEFAULT_SHARED": 1, "ND_DEFAULT_EXCL": 2, "ND_IGNORE_EXCL": 3, "ND_FORCE_EXCL": 4,
    "ND_DEFAULT_EXCLHOST": 5, "ND_FORCE_EXCLHOST": 6, "ND_OFFLINE": 0x01,
    "EVENT_ERROR": 0x0001, "EVENT_DEBUG": 0x0080, "EVENT_DEBUG2": 0x0100,
    "EVENT_DEBUG3": 0x0400, "EVENT_DEBUG4": 0x0800,
    "EXECJOB_BEGIN": 0x40, "EXECJOB_END": 0x200, "EXECJOB_PROLOGUE": 0x100,
}
OFFLINE_COMMENT = f"offlined by hook '{HOOK}' due to hook error"


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
        return any(text in m and (level is None or lv == level) for lv, m in self.logs)


def make_pbs(event: Event, sharing: int | None, config_path: str | None,
             logs: list[tuple[int, str]]) -> types.ModuleType:
    pbs = types.ModuleType("pbs")
    for k, v in CONSTANTS.items():
        setattr(pbs, k, v)
    server_vnode = Vnode("local", sharing=sharing)
    pbs.event = lambda: event  # type: ignore[attr-defined]
    pbs.logmsg = lambda level, msg: logs.append((level, msg))  # type: ignore[attr-defined]
    pbs.get_local_nodename = lambda: "local"  # type: ignore[attr-defined]
    server = types.SimpleNamespace(vnode=lambda name: server_vnode)
    pbs.server = lambda: server  # type: ignore[attr-defined]
    pbs.hook_config_filename = config_path  # type: ignore[attr-defined]
    return pbs


def run_hook(event_type: str, jobid: str = "1.pbs01", euser: str | None = None,
             place: str | None = None, sharing: int | None = None,
             config: str | None = "{}", alarm: float = 300.0,
             fail_action: str = "offline_vnodes",
             vnodes: tuple[str, ...] = ("node01",), source: str | None = None) -> Result:
    """Run the hook for one event ('execjob_begin', 'execjob_end', ...).

    ``config`` is the configuration file's text (None: no file set).
    """
    if euser is None:
        import pwd
        euser = pwd.getpwuid(os.getuid()).pw_name
    etype = CONSTANTS.get(event_type.upper(), 0)
    event = Event(etype, Job(jobid, euser, {"place": place}),
                  {n: Vnode(n) for n in vnodes})
    logs: list[tuple[int, str]] = []
    with tempfile.TemporaryDirectory(prefix="pbshook") as d:
        cfg_path = None
        if config is not None:
            cfg_path = str(Path(d) / f"{HOOK}.CF")
            Path(cfg_path).write_text(config)
        pbs = make_pbs(event, sharing, cfg_path, logs)
        text = source if source is not None else (hook_dir() / f"{HOOK}.PY").read_text()
        code = compile(text, f"{HOOK}.PY", "exec")
        saved_env = os.environ.pop("PBS_HOOK_CONFIG_FILE", None)
        if cfg_path:
            os.environ["PBS_HOOK_CONFIG_FILE"] = cfg_path
        saved_pbs = sys.modules.get("pbs")
        sys.modules["pbs"] = pbs

        def on_alarm(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt

        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, alarm)
        result = Result("accept", logs=logs)
        try:
            exec(code, {"__builtins__": builtins})
        except _Accept:
            result.outcome = "accept"
        except _Reject:
            result.outcome, result.reject_msg = "reject", event.reject_msg
        except KeyboardInterrupt:
            result.outcome = "alarm"
            logs.append((CONSTANTS["EVENT_ERROR"], f"alarm call while running {event_type} hook"
                                                   f" '{HOOK}', request rejected"))
        except Exception:
            result.outcome = "error"
            result.traceback = traceback.format_exc()
            logs.append((CONSTANTS["EVENT_ERROR"], f"{event_type} hook '{HOOK}' encountered an"
                                                   f" exception, request rejected"))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            if saved_pbs is None:
                sys.modules.pop("pbs", None)
            else:
                sys.modules["pbs"] = saved_pbs
            os.environ.pop("PBS_HOOK_CONFIG_FILE", None)
            if saved_env is not None:
                os.environ["PBS_HOOK_CONFIG_FILE"] = saved_env
    if (result.outcome in ("error", "alarm") and fail_action == "offline_vnodes"
            and etype in (CONSTANTS["EXECJOB_BEGIN"], CONSTANTS["EXECJOB_PROLOGUE"])):
        for v in event.vnode_list.values():
            v.state |= CONSTANTS["ND_OFFLINE"]
            v.comment = OFFLINE_COMMENT
            result.offlined.append(v.name)
    return result
