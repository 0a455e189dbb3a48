"""R from a TOML ``[resource]`` configuration, without flux-core.

``flux dws2jgf --from-config`` uses ``flux R parse-config`` where Flux is
installed; elsewhere it reads the TOML here and builds the same R with
libdws (src/common/libdws/config/rconfig.h describes the rules).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flux_dws import inputfile
from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi


class ConfigError(DwsError):
    """The configuration file or its [resource] table is invalid."""


def load_resource_table(path: str | Path) -> dict[str, Any]:
    """The ``[resource]`` table of a TOML file (or of a directory of them)."""
    p = Path(path)
    files = sorted(p.glob("*.toml")) if p.is_dir() else [p]
    resource: dict[str, Any] = {}
    for f in files:
        try:
            doc = inputfile.load_toml(f)
        except inputfile.InputError as exc:
            raise ConfigError(str(exc)) from None
        table = doc.get("resource")
        if table is None:
            continue
        if not isinstance(table, dict):
            raise ConfigError(f"{f}: 'resource' must be a table")
        resource.update(table)
    if not resource:
        raise ConfigError(f"{path}: no [resource] table")
    return resource


def R_from_config(config: Any, source: str = "resource.config") -> str:
    """R (as JSON text) for a ``resource.config`` array."""
    if config is None:
        raise ConfigError(f"{source}: no resource.config array")
    err = _ffi.new_error()
    ptr = _ffi.lib.dws_rconfig_to_R_json(_ffi.to_c(json.dumps(config)), err)
    if ptr == _ffi.ffi.NULL:
        raise ConfigError(f"{source}: {_ffi.error_text(err)}")
    return _ffi.take_string(ptr)
