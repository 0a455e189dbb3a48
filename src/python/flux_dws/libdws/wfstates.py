"""The states of a DWS Workflow, as DWS spells them, in their order.

    >>> STATES[0], STATES[-1]
    ('Proposal', 'Teardown')

The one list is libdws' (src/common/libdws/engine/shapes/wfstate.c), read here
through the cffi extension; the engine, the emulator, the demo and
``flux dws job`` all take it from there, so no state is spelled twice.
"""

from __future__ import annotations

from typing import Any

from flux_dws.libdws import _ffi

__all__ = ["DATA_IN", "DATA_OUT", "POST_RUN", "PRE_RUN", "PROPOSAL", "SETUP", "STATES",
           "TEARDOWN", "workflow_unsettled"]

#: "Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut", "Teardown"
STATES: tuple[str, ...] = tuple(
    _ffi.ffi.string(_ffi.lib.dws_wfstate_name(i)).decode()
    for i in range(_ffi.lib.dws_wfstate_count()))
#: each state by name, for code that names one (never its own literal)
PROPOSAL, SETUP, DATA_IN, PRE_RUN, POST_RUN, DATA_OUT, TEARDOWN = STATES


def workflow_unsettled(obj: Any) -> bool:
    """Whether DWS is still to move a Workflow: it is being deleted, or its
    state is short of its desiredState, or not ready yet.  A watch that
    hears nothing while such Workflows exist is not trusted (the k8s
    layer's watchdog lists it again).

    >>> workflow_unsettled({"spec": {"desiredState": "Setup"},
    ...                     "status": {"state": "Setup", "ready": True}})
    False
    >>> workflow_unsettled({"spec": {"desiredState": "Setup"},
    ...                     "status": {"state": "Proposal", "ready": True}})
    True
    """
    if not isinstance(obj, dict):
        return False
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta.get("deletionTimestamp"):
        return True
    spec, status = obj.get("spec"), obj.get("status")
    if not isinstance(spec, dict) or not isinstance(status, dict):
        return True
    return status.get("state") != spec.get("desiredState") or status.get("ready") is not True
