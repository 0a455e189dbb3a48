"""atheris target: any [rabbit] table (TOML or JSON text) parses or raises ConfigError."""

import json
import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws import _ffi
    from flux_dws.libdws.rabbitconf import ConfigError, parse

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    as_json = fdp.ConsumeBool()
    text = fdp.ConsumeUnicodeNoSurrogates(600)
    if as_json:
        # straight into libdws: the JSON entry point must never crash
        err = _ffi.new_error()
        ptr = _ffi.lib.dws_rabbitconf_parse_json(text.replace("\0", "").encode(), err)
        if ptr != _ffi.ffi.NULL:
            out = json.loads(_ffi.take_string(ptr))
            assert parse(out) == out
        return
    try:
        doc = tomllib.loads("[rabbit]\n" + text)
    except tomllib.TOMLDecodeError:
        return
    try:
        out = parse(doc["rabbit"])
    except ConfigError:
        return
    assert parse(out) == out


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
