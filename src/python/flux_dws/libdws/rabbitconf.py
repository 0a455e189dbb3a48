"""The ``[rabbit]`` table of the Flux configuration: load, validate, normalise.

    >>> conf = parse({"setup_timeout": 600, "prolog_timeout": "30m"})
    >>> conf["prolog_timeout"], conf["tc_timeout"]
    (1800.0, 10.0)
    >>> conf = parse(load_toml("/etc/flux/system/conf.d"))

``parse`` returns every key, filled with its value or default (timeouts as
float seconds); the rules and messages are libdws'
(src/common/libdws/config/rabbitconf.h) and flux-config-rabbit(5) documents each
key.  Every failure is a :class:`ConfigError` whose text names the key, e.g.
``rabbit.setup_timeout: must be a number of seconds >= 0, got "ten"``.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flux_dws import inputfile
from flux_dws.errors import DwsError
from flux_dws.libdws import _ffi

__all__ = ["KEYS", "ConfigError", "check_drain_properties", "load_config", "load_toml", "parse"]

#: The keys of a normalised table, in its (alphabetical) order: libdws'
#: key table (DWS_RABBITCONF_KEYS in rabbitconf.h), the one list of them.
KEYS: tuple[str, ...] = tuple(
    _ffi.ffi.string(_ffi.lib.dws_rabbitconf_key_name(i)).decode()
    for i in range(_ffi.lib.dws_rabbitconf_key_count()))

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")
_INT64 = (-(2**63), 2**63 - 1)


class ConfigError(DwsError):
    """A Flux configuration file, or its ``[rabbit]`` table, is invalid."""


def _keypath(parent: str, key: str) -> str:
    """parent.key as a TOML dotted key (quoted unless bare), as libdws writes it."""
    if _BARE_KEY.fullmatch(key):
        return f"{parent}.{key}"
    quoted = json.dumps(key, ensure_ascii=False)
    if len(quoted) > 64:
        quoted = quoted[:60] + '..."'
    return f"{parent}.{quoted}"


def _check_key(parent: str, key: Any) -> str:
    if not isinstance(key, str):
        raise ConfigError(f"{parent}: table keys must be strings, got {key!r}")
    if "\0" in key:
        raise ConfigError(f"{_keypath(parent, key)}: a key must not contain a NUL character")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(f"{parent}: a key is not valid Unicode text: {key!r}") from None
    return key


def _plain(value: Any, path: str) -> Any:
    """value as plain JSON data, or ConfigError for what JSON cannot carry.

    libdws sees JSON text, which has no NaN, infinity, integers beyond 64
    bits, dates or non-string keys; these are refused here, naming the key.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise ConfigError(f"{path}: integer out of range, got {value}")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{path}: must be a finite number, got {value}")
        return value
    if isinstance(value, str):
        if "\0" in value:
            raise ConfigError(f"{path}: contains a NUL character, got {value!r}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(f"{path}: not valid Unicode text, got {value!r}") from None
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[_check_key(path, k)] = _plain(v, _keypath(path, k))
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (datetime.date, datetime.time)):  # TOML dates and times
        raise ConfigError(f"{path}: a date or time is not a valid value, got {value.isoformat()}")
    raise ConfigError(f"{path}: unsupported value of type {type(value).__name__}")


def parse(table: Mapping[str, Any] | None) -> dict[str, Any]:
    """The normalised ``[rabbit]`` table (None or {} gives every default).

    Any other value than a table raises ConfigError, as does every invalid
    key or value.  The result is a valid input again (null means "not set").
    """
    err = _ffi.new_error()
    deferred: ConfigError | None = None
    if table is None:
        plain: Any = None
    elif not isinstance(table, Mapping):
        try:
            plain = _plain(table, "rabbit")
        except ConfigError:
            raise ConfigError(f"rabbit: must be a table, got {table!r:.80}") from None
    else:
        # A value JSON cannot carry is sent as null (not set) and reported
        # only if libdws finds nothing else wrong, so that an unknown key
        # is still reported as one.
        plain = {}
        for k, v in table.items():
            _check_key("rabbit", k)
            try:
                plain[k] = _plain(v, _keypath("rabbit", k))
            except ConfigError as exc:
                plain[k] = None
                deferred = deferred or exc
    text = _ffi.to_c(json.dumps(plain, ensure_ascii=False), ConfigError)
    ptr = _ffi.lib.dws_rabbitconf_parse_json(text, err)
    if ptr == _ffi.ffi.NULL:
        raise ConfigError(_ffi.error_text(err))
    if deferred is not None:
        _ffi.lib.dws_free(ptr)
        raise deferred
    result: dict[str, Any] = _ffi.take_json(ptr, err)
    return result


def check_drain_properties(drain_queues: Any, properties: Any,
                           where: str = "rabbit.drain_queues") -> list[str]:
    """The names of ``drain_queues`` (a normalised rabbit.drain_queues: None
    or a list of names) that no node has as a property, given the nodes'
    properties (R's ``execution.properties``, ``{name: idset}``; None: none).
    Drain queues name node properties, as the reference's --drain-queues
    does: whether [queues] defines a queue of that name does not matter.
    ConfigError when no node has any of them (nothing could ever be
    drained), naming them and the properties the nodes have (libdws:
    dws_rabbitconf_drain_properties); ``where`` names the setting (the
    service says ``--drain-queues`` for its option).
    """
    if drain_queues is None:
        return []
    err = _ffi.new_error()
    ptr = _ffi.lib.dws_rabbitconf_drain_properties_json(
        _ffi.to_c(json.dumps(_plain(drain_queues, where), ensure_ascii=False), ConfigError),
        _ffi.to_c(json.dumps(_plain(properties, "R execution.properties"),
                             ensure_ascii=False), ConfigError),
        _ffi.to_c(where, ConfigError), err)
    if ptr == _ffi.ffi.NULL:
        raise ConfigError(_ffi.error_text(err))
    missing: list[str] = _ffi.take_json(ptr, err)
    return missing


def _merge(into: dict[str, Any], new: Mapping[str, Any]) -> None:
    """Recursive update, as flux-core merges config files: tables merge,
    anything else is replaced by the later file's value."""
    for k, v in new.items():
        old = into.get(k)
        if isinstance(old, dict) and isinstance(v, Mapping):
            _merge(old, v)
        else:
            into[k] = v


def _load_file(f: Path) -> dict[str, Any]:
    """One config file: TOML, or JSON for a name ending .json (as flux-core
    reads a config *file*)."""
    try:
        text = inputfile.read_text(f)
        if f.suffix == ".json":
            doc = inputfile.parse_json(text, str(f))
            if not isinstance(doc, dict):
                raise ConfigError(f"{f}: a JSON config must be an object")
            return doc
        return inputfile.parse_toml(text, str(f))
    except inputfile.InputError as exc:
        raise ConfigError(str(exc)) from None


def _config_files(d: Path) -> list[Path]:
    """d/*.toml in glob(3) order (sorted, no dot files), as flux-core reads them."""
    if not os.access(d, os.R_OK | os.X_OK):
        raise ConfigError(f"{d}: Permission denied")
    try:
        names = os.listdir(d)
    except OSError as exc:
        raise ConfigError(f"{d}: {exc.strerror or exc}") from None
    return [d / n for n in sorted(names) if n.endswith(".toml") and not n.startswith(".")]


def load_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The raw ``[rabbit]`` table of a Flux config file or directory.

    A directory is read as ``flux-broker --config-path`` reads it: every
    ``*.toml`` file, in sorted order, tables merged.  A config without
    ``[rabbit]`` gives {}.  Validate the result with :func:`parse`.  Missing,
    unreadable, non-UTF-8 and malformed files raise ConfigError naming the
    file.
    """
    config, where = _load(path)
    rabbit = config.get("rabbit", {})
    if not isinstance(rabbit, dict):
        raise ConfigError(f"{where['rabbit']}: rabbit must be a table, got {rabbit!r}")
    return rabbit


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The whole Flux configuration of a file or directory (read as
    :func:`load_toml` reads it), every table merged."""
    return _load(path)[0]


def _load(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, Path]]:
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        raise ConfigError(f"{p}: {exc.strerror or exc}") from None
    files = _config_files(p) if stat.S_ISDIR(st.st_mode) else [p]
    config: dict[str, Any] = {}
    where: dict[str, Path] = {}
    for f in files:
        doc = _load_file(f)
        for key in doc:
            where[key] = f
        _merge(config, doc)
    return config, where
