"""The emulator's latency model: how long DWS and nnf-sos take.

A model maps keys to seconds:

- ``<State>`` (Proposal, Setup, DataIn, PreRun, PostRun, DataOut,
  Teardown): the wait before a state's nnf drivers run;
- ``<State>/<fs>`` (fs = xfs, gfs2, raw, lustre): the same for a state
  whose directives include that file-system type; the longest key that
  applies wins (Lustre setup is slower than xfs);
- ``ClientMount``: each compute's mount or unmount;
- ``DataMovement``: each NnfDataMovement;
- ``Container``: user containers, from Job creation to running.

Presets: ``fast`` (the default: tens to hundreds of milliseconds per state,
Setup and unmounts longest, so timeouts of a WLM can fire), ``zero``
(everything at once; tests that need speed pick it), ``demo`` (a tenth of
``realistic``, for watching a workflow move) and ``realistic`` (the order
of magnitude seen on Rabbit hardware for small jobs).  A site can give its own model as a YAML or
JSON file of the same keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flux_dws.libdws.wfstates import (
    DATA_IN,
    DATA_OUT,
    POST_RUN,
    PRE_RUN,
    PROPOSAL,
    SETUP,
    STATES,
    TEARDOWN,
)

FS_TYPES = ("xfs", "gfs2", "raw", "lustre")
CHILDREN = ("ClientMount", "DataMovement", "Container")
KEYS = frozenset([*STATES, *CHILDREN, *(f"{s}/{f}" for s in STATES for f in FS_TYPES)])

REALISTIC: dict[str, float] = {
    PROPOSAL: 2.0, SETUP: 10.0, f"{SETUP}/gfs2": 15.0, f"{SETUP}/lustre": 30.0, DATA_IN: 2.0,
    PRE_RUN: 6.0, f"{PRE_RUN}/lustre": 8.0, POST_RUN: 4.0, DATA_OUT: 2.0, TEARDOWN: 8.0,
    f"{TEARDOWN}/lustre": 15.0, "ClientMount": 3.0, "DataMovement": 10.0, "Container": 5.0,
}

# the default: every state takes tens to hundreds of milliseconds, storage
# creation (Setup) and unmounting (PostRun, Teardown) longest, as on a real
# system, so a WLM's short timeouts can fire while tests stay quick
FAST: dict[str, float] = {
    PROPOSAL: 0.02, SETUP: 0.3, f"{SETUP}/gfs2": 0.35, f"{SETUP}/lustre": 0.5, DATA_IN: 0.05,
    PRE_RUN: 0.08, f"{PRE_RUN}/lustre": 0.1, POST_RUN: 0.3, DATA_OUT: 0.05, TEARDOWN: 0.2,
    f"{TEARDOWN}/lustre": 0.3, "ClientMount": 0.03, "DataMovement": 0.1, "Container": 0.1,
}
DEFAULT = "fast"

PRESETS: dict[str, dict[str, float]] = {
    "zero": {},
    "fast": FAST,
    "demo": {k: round(v / 10, 3) for k, v in REALISTIC.items()},
    "realistic": REALISTIC,
}


class LatencyError(ValueError):
    """A latency model that names unknown keys or has bad values."""


def check(model: dict[str, Any], where: str = "latency") -> dict[str, float]:
    """The model with its values as floats; LatencyError names what is wrong."""
    if not isinstance(model, dict):
        raise LatencyError(f"{where}: a latency model maps keys to seconds")
    out: dict[str, float] = {}
    for k, v in model.items():
        if k not in KEYS:
            raise LatencyError(f"{where}: unknown key '{k}' (use a state, State/fstype with"
                               f" fstype {'|'.join(FS_TYPES)}, or {', '.join(CHILDREN)})")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 86400:
            raise LatencyError(f"{where}: '{k}' must be seconds from 0 to 86400, not {v!r}")
        out[k] = float(v)
    return out


def load(spec: str | dict[str, Any]) -> dict[str, float]:
    """A model from a preset name, a YAML/JSON file, or a dict."""
    if isinstance(spec, dict):
        return check(spec)
    if spec in PRESETS:
        return dict(PRESETS[spec])
    path = Path(spec)
    if not path.is_file():
        raise LatencyError(f"unknown latency preset '{spec}' (known: {', '.join(PRESETS)};"
                           f" or a YAML file)")
    import yaml
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise LatencyError(f"{spec}: cannot read latency model: {exc}") from None
    return check(doc if doc is not None else {}, spec)


def state_delay(model: dict[str, float], state: str, fs_types: set[str]) -> float:
    """The wait before ``state``'s drivers run for directives of ``fs_types``."""
    return max([model.get(state, 0.0), *(model.get(f"{state}/{fs}", 0.0) for fs in fs_types)])
