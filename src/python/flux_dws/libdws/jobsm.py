"""The job side of the dws jobtap plugin, as a state machine (libdws jobsm).

The decisions of ``dws-jobtap.so`` -- the ``dws-create`` dependency, the
``dws-setup`` prolog, the ``dws-epilog`` epilog, the dws.* RPCs and the
job-manager.dws.* callbacks -- live in src/common/libdws/jobtap/jobsm.h, which
lists every event and action.  The C plugin and flux-dws' in-process
job-manager harness both drive one JobMachine per job: feed it what
happens to the job, carry out the actions it returns, in order.

    >>> sm = JobMachine({"epilog-timeout": 60.0})
    >>> sm.event({"type": "depend", "id": 42, "userid": 1000, "jobspec": jobspec})
    [{'action': 'dependency-add', 'name': 'dws-create'}, {'action': 'subscribe'},
     {'action': 'rpc', 'topic': 'dws.create', 'tag': 'create', 'payload': {...}}]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi


def _text(value: Any) -> str:
    return str(_ffi.ffi.string(value).decode())


# The names the plugin puts on a job, from jobwire.h (each written once):
#: the dependency held until the jobspec is rewritten
DEPENDENCY: str = _text(_ffi.lib.DWS_JOBWIRE_DEPENDENCY)
#: the prolog that waits for the file systems
PROLOG: str = _text(_ffi.lib.DWS_JOBWIRE_PROLOG)
#: the epilog that waits for their teardown
EPILOG: str = _text(_ffi.lib.DWS_JOBWIRE_EPILOG)
#: the exception type of the plugin's own epilog timeout
EPILOG_TIMEOUT_EXCEPTION: str = _text(_ffi.lib.DWS_JOBWIRE_EPILOG_TIMEOUT_EXCEPTION)
#: that timeout's timer key
TIMER: str = _text(_ffi.lib.DWS_JOBWIRE_TIMER)
#: the job-manager.dws.<method> that adds or removes flux-dws' own dependencies
DEPENDENCY_METHOD: str = _text(_ffi.lib.DWS_JOBWIRE_DEPENDENCY_METHOD)
#: what the topic of every job-manager.dws.<method> request starts with
TOPIC_PREFIX: str = _text(_ffi.lib.DWS_JOBWIRE_TOPIC_PREFIX)
#: the methods the dws service asks of the plugin (each topic is
#: TOPIC_PREFIX + method): the jobspec rewrite, the prolog's and the
#: epilog's end, a pre-staged job's storage ready, a released job's
#: DataOut begun and ended
RESOURCE_UPDATE_METHOD: str = _text(_ffi.lib.DWS_JOBWIRE_RESOURCE_UPDATE_METHOD)
PROLOG_REMOVE_METHOD: str = _text(_ffi.lib.DWS_JOBWIRE_PROLOG_REMOVE_METHOD)
EPILOG_REMOVE_METHOD: str = _text(_ffi.lib.DWS_JOBWIRE_EPILOG_REMOVE_METHOD)
PRESTAGE_REMOVE_METHOD: str = _text(_ffi.lib.DWS_JOBWIRE_PRESTAGE_REMOVE_METHOD)
#: a pre-staged job given up: the usual resources again, the pin out
PRESTAGE_UNPIN_METHOD: str = _text(_ffi.lib.DWS_JOBWIRE_PRESTAGE_UNPIN_METHOD)
DATAOUT_BEGIN_METHOD: str = _text(_ffi.lib.DWS_JOBWIRE_DATAOUT_BEGIN_METHOD)
DATAOUT_END_METHOD: str = _text(_ffi.lib.DWS_JOBWIRE_DATAOUT_END_METHOD)
#: the dependency a job over its user's [rabbit.limits] waits on
LIMIT_DEPENDENCY: str = _text(_ffi.lib.DWS_JOBWIRE_LIMIT_DEPENDENCY)
#: the dependency a pre-staged job waits on until its data is in (the
#: service removes it with DEPENDENCY_METHOD; an older one with
#: prestage-remove, still in SERVICES)
PRESTAGE_DEPENDENCY: str = _text(_ffi.lib.DWS_JOBWIRE_PRESTAGE_DEPENDENCY)
#: what the notes of the exceptions the plugin raises start with
NOTE_PREFIX: str = _text(_ffi.lib.DWS_JOBWIRE_NOTE_PREFIX)

__all__ = [
    "ACTIONS",
    "DATAOUT_BEGIN_METHOD",
    "DATAOUT_END_METHOD",
    "DEPENDENCY",
    "DEPENDENCY_METHOD",
    "EPILOG",
    "EPILOG_REMOVE_METHOD",
    "EPILOG_TIMEOUT_EXCEPTION",
    "LIMIT_DEPENDENCY",
    "NOTE_PREFIX",
    "PRESTAGE_DEPENDENCY",
    "PRESTAGE_REMOVE_METHOD",
    "PRESTAGE_UNPIN_METHOD",
    "PROLOG",
    "PROLOG_REMOVE_METHOD",
    "RESOURCE_UPDATE_METHOD",
    "SERVICES",
    "TIMER",
    "TOPIC_PREFIX",
    "JobMachine",
    "JobMachineError",
    "JobspecError",
    "check_jobspec",
    "unrouted",
    "validate_jobspec",
]


#: Every action a machine returns, by name, from jobwire.h's one table (the
#: harness dispatches on these; no name is written twice).
ACTIONS: tuple[str, ...] = tuple(
    _text(_ffi.lib.dws_jobwire_action_name(i)) for i in range(_ffi.lib.dws_jobwire_action_count()))


#: The job-manager.dws.<name> services the plugin registers, owner only
#: (jobsm.h's one table; the harness serves and the tests refuse guests
#: these).
SERVICES: tuple[str, ...] = tuple(
    _ffi.ffi.string(_ffi.lib.dws_jobsm_service_name(i)).decode()
    for i in range(_ffi.lib.dws_jobsm_service_count()))


class JobMachineError(DwsError):
    """A bad plugin config, or an event the machine cannot take (not an
    object, unknown type, missing or mistyped field, out of order)."""


class JobspecError(DwsError):
    """A jobspec's dw or dw_failure_tolerance attribute is invalid (the
    message is the one the plugin gives)."""


def validate_jobspec(jobspec: Mapping[str, Any]) -> None:
    """The plugin's job.validate: raise JobspecError if attributes.system.dw
    is not a string or a list of strings.  A jobspec without dw always
    passes.  dw_failure_tolerance is not looked at: the plugin sends it with
    dws.create and the service refuses a bad one (the job's ``dws-create``
    exception)."""
    err = _ffi.new_error()
    if _ffi.lib.dws_jobsm_validate_jobspec_json(_ffi.json_arg(jobspec, "jobspec", JobspecError),
                                                err) < 0:
        _ffi.raise_error(err, JobspecError)


def check_jobspec(jobspec: Mapping[str, Any]) -> None:
    """validate_jobspec, and dw_failure_tolerance (when dw is present) an
    integer >= 0: what the ``rabbit`` validator plugin refuses at
    submission (without it the service refuses such a job's dws.create,
    the job's ``dws-create`` exception)."""
    err = _ffi.new_error()
    if _ffi.lib.dws_jobsm_check_jobspec_json(_ffi.json_arg(jobspec, "jobspec", JobspecError),
                                             err) < 0:
        _ffi.raise_error(err, JobspecError)


def unrouted(method: str, payload: Any, active: bool, has_dw: bool) -> list[dict[str, Any]]:
    """The actions answering a job-manager.dws.<method> request that reaches
    no job's machine (jobsm.h dws_jobsm_unrouted): a malformed payload,
    a job not active, a job without dw."""
    err = _ffi.new_error()
    try:
        text: Any = json.dumps(payload).encode() if payload is not None else _ffi.ffi.NULL
    except (TypeError, ValueError):
        text = _ffi.ffi.NULL  # not JSON: as malformed as it gets
    p = _ffi.lib.dws_jobsm_unrouted_json(_ffi.to_c(method, JobMachineError), text, active,
                                         has_dw, err)
    if p == _ffi.ffi.NULL:
        _ffi.raise_error(err, JobMachineError)
    actions: list[dict[str, Any]] = _ffi.take_json(p, err)
    return actions


class JobMachine:
    """One job's machine.  ``config`` is the plugin's jobtap conf (only
    ``epilog-timeout``, seconds, is read)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        err = _ffi.new_error()
        text = (_ffi.json_arg(config, "config", JobMachineError) if config is not None
                else _ffi.ffi.NULL)
        h = _ffi.lib.dws_jobsm_create_json(text, err)
        if h == _ffi.ffi.NULL:
            _ffi.raise_error(err, JobMachineError)
        self._h = _ffi.ffi.gc(h, _ffi.lib.dws_jobsm_destroy)

    def event(self, event: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Apply one event; the actions to carry out, in order.  A bad event
        raises JobMachineError and leaves the machine unchanged."""
        err = _ffi.new_error()
        text = _ffi.json_arg(event, "event", JobMachineError)
        p = _ffi.lib.dws_jobsm_event_json(self._h, text, err)
        if p == _ffi.ffi.NULL:
            _ffi.raise_error(err, JobMachineError)
        actions: list[dict[str, Any]] = _ffi.take_json(p, err)
        return actions

    def state(self) -> dict[str, Any]:
        """The machine's flags, for debugging and tests (not an interface)."""
        state: dict[str, Any] = _ffi.take_json(_ffi.lib.dws_jobsm_state_json(self._h))
        return state
