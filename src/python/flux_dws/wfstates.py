"""The states of a DWS Workflow, as DWS spells them, in their order.

    >>> STATES[0], STATES[-1]
    ('Proposal', 'Teardown')

The one list is libdws' (src/common/libdws/engine/wfstate.c), read here
through the cffi extension; the engine, the emulator, the demo and
``flux dws job`` all take it from there, so no state is spelled twice.
"""

from __future__ import annotations

from flux_dws import _ffi

__all__ = ["DATA_IN", "DATA_OUT", "POST_RUN", "PRE_RUN", "PROPOSAL", "SETUP", "STATES",
           "TEARDOWN"]

#: "Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut", "Teardown"
STATES: tuple[str, ...] = tuple(
    _ffi.ffi.string(_ffi.lib.dws_wfstate_name(i)).decode()
    for i in range(_ffi.lib.dws_wfstate_count()))
#: each state by name, for code that names one (never its own literal)
PROPOSAL, SETUP, DATA_IN, PRE_RUN, POST_RUN, DATA_OUT, TEARDOWN = STATES
