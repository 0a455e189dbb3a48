"""Read and decode input files with one clear error.

Every command-line tool reads the files it is given through these
functions.  A missing file, a directory, bytes that are not UTF-8, or text
that is not the JSON, TOML or YAML expected each raise :class:`InputError`,
whose text is one line naming the file and the problem::

    >>> load_json("mapping.json")
    InputError: mapping.json:1: not UTF-8 text (byte 0xff)

``-`` stands for standard input where a function's ``stdin`` argument
allows it.  Files are opened with context managers and read whole.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older Pythons only
    import tomli as tomllib

PathArg = Union[str, "os.PathLike[str]"]

STDIN = "-"


class InputError(Exception):
    """An input file is missing, unreadable or not in the expected format;
    str() is one line that begins with the file's name."""


def one_line(text: str) -> str:
    """``text`` with its runs of white space (newlines too) made one space."""
    return " ".join(str(text).split())


def display_name(path: PathArg) -> str:
    """How messages name ``path`` (``standard input`` for ``-``)."""
    p = os.fspath(path)
    return "standard input" if p == STDIN else p


def stdin_bytes() -> bytes:
    """All of standard input, as bytes (a text stream without a binary
    buffer, as tests substitute, is encoded back)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        data: bytes = buffer.read()
        return data
    return str(sys.stdin.read()).encode("utf-8", "surrogateescape")


def read_bytes(path: PathArg, *, stdin: bool = False) -> bytes:
    """The bytes of ``path`` (of standard input for ``-`` when ``stdin``)."""
    p = os.fspath(path)
    if stdin and p == STDIN:
        return stdin_bytes()
    try:
        with open(p, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{p}: {exc.strerror or one_line(str(exc))}") from None
    except ValueError as exc:  # a NUL in the path
        raise InputError(f"{p!r}: {exc}") from None


def decode(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text; InputError naming ``name``, the line and the
    first byte that is not UTF-8 otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"{name}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"
        ) from None


def read_text(path: PathArg, *, stdin: bool = False) -> str:
    """The UTF-8 text of ``path``."""
    return decode(read_bytes(path, stdin=stdin), display_name(path))


def parse_json(text: str, name: str) -> Any:
    """JSON ``text`` decoded; InputError naming ``name`` and the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{name}:{exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except RecursionError:
        raise InputError(f"{name}: not valid JSON: nested too deeply") from None


def load_json(path: PathArg, *, stdin: bool = False) -> Any:
    """The JSON document in ``path``."""
    return parse_json(read_text(path, stdin=stdin), display_name(path))


def parse_toml(text: str, name: str) -> dict[str, Any]:
    """TOML ``text`` decoded; InputError naming ``name`` otherwise."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{name}: not valid TOML: {one_line(str(exc))}") from None


def load_toml(path: PathArg) -> dict[str, Any]:
    """The TOML document in ``path``."""
    return parse_toml(read_text(path), display_name(path))


def parse_yaml(text: str, name: str) -> Any:
    """YAML ``text`` decoded (safe loader); InputError naming ``name``."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{name}: not valid YAML: {one_line(str(exc))}") from None
    except RecursionError:
        raise InputError(f"{name}: not valid YAML: nested too deeply") from None


def load_yaml(path: PathArg) -> Any:
    """The YAML document in ``path``."""
    return parse_yaml(read_text(path), display_name(path))


def argument_text(value: str, what: str) -> str:
    """A command-line argument, refused if it held bytes that are not UTF-8
    (Python keeps those as lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ord(value[exc.start])
        byte = f"byte 0x{bad - 0xDC00:02x}" if 0xDC80 <= bad <= 0xDCFF else f"U+{bad:04X}"
        raise InputError(f"{what}: not UTF-8 text ({byte} at character {exc.start + 1})"
                         ) from None
    return value
