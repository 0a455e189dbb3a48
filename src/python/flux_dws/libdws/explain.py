"""Plain sentences for the DWS and nnf-sos failures a job's owner meets
(libdws explain.h).

One table maps each known failure text to a sentence saying what happened
and what to do.  An exception note stays the reference's, byte for byte;
its sentence goes in a job eventlog entry of its own (``EVENT``, context
``{"type", "note", "explanation"}``) and the job's KVS key ``KVS_KEY``.
Messages that are no note (``flux dws check``, ingest errors) carry it
after the original text::

    >>> explain("File system creation took too long")
    "The rabbits did not create the job's file system in time (they may be busy or ...
    >>> explain_note("DWS epilog timed out")
    'DWS epilog timed out -- The rabbit work after the job (unmount, copy_out, ...'

A text no row knows gives ``None`` (``explain``) or comes back unchanged
(``explain_note``), and so does a message explained already.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from flux_dws.libdws import _ffi

__all__ = ["EVENT", "KVS_KEY", "SEPARATOR", "Row", "explain", "explain_note", "find_row",
           "match", "rows"]

#: What joins a message and its sentence (explain_note).
SEPARATOR = " -- "
#: The job eventlog entry carrying an exception note's sentence (explain.h).
EVENT = _ffi.ffi.string(_ffi.lib.dws_explain_event()).decode()
#: The job's KVS key keeping the sentence of the engine's exception.
KVS_KEY = _ffi.ffi.string(_ffi.lib.dws_explain_kvs_key()).decode()

_MAX = int(_ffi.lib.DWS_EXPLAIN_MAX)


@dataclass(frozen=True)
class Row:
    """One row of the table: its short name, the pattern it matches
    (explain.h), an example failure text it explains, and its sentence
    (``{}`` stands for what the pattern's ``{}`` captured)."""

    name: str
    pattern: str
    example: str
    sentence: str


def _text(ptr: Any) -> str:
    return str(_ffi.ffi.string(ptr).decode("utf-8", "surrogatepass"))


def explain(text: str) -> str | None:
    """The sentence for a failure text, or None when no row knows it."""
    buf = _ffi.ffi.new("char[]", _MAX)
    if _ffi.lib.dws_explain(_ffi.to_c(text), buf, _MAX) == _ffi.ffi.NULL:
        return None
    return _text(buf)


def explain_note(note: str) -> str:
    """``note + SEPARATOR + sentence`` when a row knows the note and it
    carries no sentence yet; else the note unchanged."""
    raw = _ffi.to_c(note)
    size = len(raw) + len(SEPARATOR) + _MAX
    buf = _ffi.ffi.new("char[]", size)
    _ffi.lib.dws_explain_note(raw, buf, size)
    return _text(buf)


def match(pattern: str, text: str) -> str | None:
    """What pattern's first ``{}`` captures in text ("" without one), or
    None when it does not match."""
    raw = _ffi.to_c(text)
    cap = _ffi.ffi.new("char[]", len(raw) + 1)
    if _ffi.lib.dws_explain_match(_ffi.to_c(pattern), raw, cap, len(raw) + 1) != 1:
        return None
    return _text(cap)


@cache
def _rows() -> tuple[Row, ...]:
    lib = _ffi.lib
    return tuple(Row(_text(lib.dws_explain_row_name(i)), _text(lib.dws_explain_row_pattern(i)),
                     _text(lib.dws_explain_row_example(i)),
                     _text(lib.dws_explain_row_sentence(i)))
                 for i in range(lib.dws_explain_count()))


def rows() -> list[Row]:
    """The table, first row first (the first row matching a text wins)."""
    return list(_rows())


def find_row(text: str) -> Row | None:
    """The row that explains text (the first that matches), or None."""
    return next((r for r in _rows() if match(r.pattern, text) is not None), None)
