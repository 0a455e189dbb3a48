"""The jobtap plugin's hold on the dependents of early-released jobs
(libdws dataout.h), for the harness and the tests.

With ``release_computes = "after-unmount"`` a rabbit job ends while DWS
still copies its data out.  dws-jobtap.so holds each job in DEPEND with an
afterok/afterany/afternotok dependency on it (``dws-dataout:<f58>``) until
its DataOut ends, and fails an afterok one when the copy failed::

    >>> m = DataoutMachine()
    >>> m.event({"type": "depend", "id": 20, "targets": [{"scheme": "afterok", "id": 10}]})
    []
    >>> m.event({"type": "begin", "id": 10})
    [{'action': 'dependency-add', 'id': 20, 'name': 'dws-dataout:fB', 'quiet': False}]

A bad event raises :class:`DataoutError` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi
from flux_dws.libdws.jobsm import DATAOUT_BEGIN_METHOD, DATAOUT_END_METHOD

__all__ = ["SERVICES", "DataoutError", "DataoutMachine"]

#: the job-manager.dws.<method> requests the machine serves (jobwire.h's
#: names), and their events
SERVICES = {DATAOUT_BEGIN_METHOD: "begin", DATAOUT_END_METHOD: "end"}


class DataoutError(DwsError):
    """An event the machine cannot take (the message says why)."""


class DataoutMachine:
    """The plugin's one machine: events in, actions out."""

    def __init__(self) -> None:
        h = _ffi.lib.dws_dataout_create()
        if h == _ffi.ffi.NULL:
            raise MemoryError("dws_dataout_create")
        self._h = _ffi.ffi.gc(h, _ffi.lib.dws_dataout_destroy)

    def event(self, event: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Apply one event; the actions to carry out, in order."""
        err = _ffi.new_error()
        text = _ffi.json_arg(event, "event", DataoutError)
        p = _ffi.lib.dws_dataout_event_json(self._h, text, err)
        if p == _ffi.ffi.NULL:
            _ffi.raise_error(err, DataoutError)
        actions: list[dict[str, Any]] = _ffi.take_json(p, err)
        return actions

    @property
    def tracked(self) -> int:
        """How many dependents in DEPEND it follows."""
        return int(_ffi.lib.dws_dataout_tracked(self._h))

    @property
    def pending(self) -> int:
        """How many jobs' DataOut is under way."""
        return int(_ffi.lib.dws_dataout_pending(self._h))
