"""``-o/--format`` and ``--no-header`` of the listing commands, as
flux-core's (``flux jobs``, ``flux resource list``, ``flux resource
drain``) have them.

A command describes its table once: its fields (name -> Field: heading,
what it is, str or int) and its named presets (name -> Preset).  ``-o``
takes a preset's name or a format string of ``{field}`` names with an
optional Python format spec (``{name:<12}``), flux-core's ``h`` (an empty
value as ``-``) and ``+`` (``+`` marks a value cut by the precision)
suffixes, and its column sentinels: ``+:{field}`` widens the column to
its longest value (and heading), ``?:{field}`` drops it when every value
is empty (``""`` or ``-``), ``?+:`` both.  ``-o help`` lists the presets
and the fields.

A bad field, spec or preset is refused where the option is parsed (an
argparse usage error, exit status 2), before the command asks anything
of Flux.  The values of a row are looked up by the field's whole name
(``id.f58`` is a field, not an attribute), as flux-core's header
formatter does.
"""

from __future__ import annotations

import argparse
import re
import shutil
import string
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flux_dws.cli import argtypes

#: ``-o help``: list the presets and fields instead of the table
HELP = "help"
#: values that count as empty for ``?:`` and print as ``-`` with ``h``
EMPTY = ("", "-")
#: the column sentinels, longest first (``?+:`` before ``+:``)
SENTINELS = ("?+:", "?:", "+:")
#: a format spec as flux-core's OutputFormat.FormatSpec splits it
SPEC = re.compile(r"(?:(?P<fill>[\s\S])?(?P<align>[<>=^]))?(?P<sign>[- +])?(?P<z>z)?"
                  r"(?P<alt>#)?(?P<zero>0)?(?P<width>\d+)?(?P<grouping>[_,])?"
                  r"(?:\.(?P<precision>\d+))?(?P<type>[bcdeEfFgGnosxX%])?(?P<hyphen>h)?"
                  r"(?P<truncate>\+)?")
#: the marker of a cut value (flux-core's)
CUT = "+"


class FormatError(ValueError):
    """A format that cannot be used: an unknown field or preset, a bad spec."""


@dataclass(frozen=True)
class Field:
    """A column: its heading, what it shows (for ``-o help``), and the type
    of its values (int fields take integer specs: ``{jobs:03d}``)."""

    heading: str
    help: str
    kind: type = str


@dataclass(frozen=True)
class Preset:
    """A named format (``-o NAME``)."""

    description: str
    format: str


class _Formatter(string.Formatter):
    """string.Formatter that looks a field up by its whole name in the
    row, and knows flux-core's ``h`` and ``+`` spec suffixes."""

    def get_field(self, field_name: str, args: Sequence[Any],
                  kwargs: Mapping[str, Any]) -> tuple[Any, str]:
        return kwargs[field_name], field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        mark = format_spec.endswith("+")
        if mark:
            format_spec = format_spec[:-1]
        if format_spec.endswith("h"):
            value = "-" if str(value) in EMPTY else str(value)
            format_spec = format_spec[:-1]
        text: str = super().format_field(value, format_spec)
        if mark and len(text) < len(str(value)):
            text = text[:-1] + CUT
        return text


_FORMATTER = _Formatter()


def _entry(text: str, field: str, spec: str, conv: str | None) -> str:
    """One piece of a format string: literal text and a field."""
    return (text.replace("{", "{{").replace("}", "}}")
            + "{" + field + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}")


def _with_width(spec: str, width: int) -> str:
    """The spec with its width set to ``width`` (a precision narrower than
    the new width is widened with it, as flux-core does for strings)."""
    m = SPEC.fullmatch(spec)
    if m is None:
        return spec
    g = {k: v or "" for k, v in m.groupdict().items()}
    precision = g["precision"]
    if precision and g["type"] in ("", "s") and int(precision) < width:
        precision = str(width)
    return (g["fill"] + g["align"] + g["sign"] + g["z"] + g["alt"] + g["zero"] + str(width)
            + g["grouping"] + ("." + precision if precision else "") + g["type"] + g["hyphen"]
            + g["truncate"])


def _heading_spec(spec: str) -> str:
    """What of a field's spec applies to its heading: alignment and width."""
    m = SPEC.fullmatch(spec)
    if m is None:
        return ""
    return (m.group("align") or "") + (m.group("width") or "")


@dataclass(frozen=True)
class _Item:
    text: str            # literal text before the field
    field: str           # "" for trailing text
    spec: str
    conv: str | None
    sentinel: str        # "", "+:", "?:" or "?+:"


class OutputFormat:
    """A parsed format: render rows (field name -> value) as lines."""

    def __init__(self, table: Table, text: str, items: list[_Item] | None = None) -> None:
        """Parse ``text`` (FormatError if it cannot be used), or take
        ``items`` already parsed from it (fitted())."""
        self.table = table
        self.text = text
        self.items: list[_Item] = items or []
        if items is not None:
            return
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise FormatError(f"bad format '{text}': {exc}") from None
        for literal, field, spec, conv in parsed:
            sentinel = next((s for s in SENTINELS if literal.endswith(s)), "") if field else ""
            if field is not None and field not in table.fields:
                raise FormatError(self._unknown(field))
            item = _Item(literal[:len(literal) - len(sentinel)], field or "", spec or "", conv,
                         sentinel)
            if item.field:
                self._check(item)
            self.items.append(item)

    def _unknown(self, field: str) -> str:
        if not field or field.isdigit():
            return (f"'{{{field}}}' in '{self.text}' names no field"
                    f" ({self.table.command} -o help lists them)")
        return f"unknown field '{field}' ({self.table.command} -o help lists the fields)"

    def _check(self, item: _Item) -> None:
        """Refuse a spec or conversion the field's values cannot take."""
        sample = {name: f.kind() for name, f in self.table.fields.items()}
        try:
            _FORMATTER.format(_entry("", item.field, item.spec, item.conv), **sample)
        except KeyError as exc:  # a nested spec naming something else
            raise FormatError(self._unknown(str(exc.args[0]))) from None
        except (ValueError, TypeError, IndexError, AttributeError) as exc:
            raise FormatError(f"field '{item.field}': {exc}") from None

    @property
    def fields(self) -> list[str]:
        """The fields the format shows, in order."""
        return [i.field for i in self.items if i.field]

    def fitted(self, rows: Sequence[Mapping[str, Any]], header: bool = True) -> OutputFormat:
        """This format with its sentinels applied to ``rows``: ``+:``
        fields as wide as their widest value (and heading, with
        ``header``), ``?:`` fields dropped when every value is empty."""
        if not any(i.sentinel for i in self.items):
            return self
        out = []
        for item in self.items:
            if not item.sentinel:
                out.append(item)
                continue
            plain = _entry("", item.field, "", item.conv)
            values = [_FORMATTER.format(plain, **row) for row in rows]
            widest = max((len(v) for v in values if v not in EMPTY), default=0)
            if "?" in item.sentinel and widest == 0:
                continue
            spec = item.spec
            if "+" in item.sentinel:
                m = SPEC.fullmatch(spec)
                width = max(int(m.group("width") or 0) if m else 0,
                            len(self.table.fields[item.field].heading) if header else 0,
                            max((len(v) for v in values), default=0))
                spec = _with_width(spec, width)
            out.append(_Item(item.text, item.field, spec, item.conv, ""))
        return OutputFormat(self.table, self.text, out)

    def header(self) -> str:
        """The heading line."""
        headings = {name: f.heading for name, f in self.table.fields.items()}
        return "".join(_FORMATTER.format(_entry(i.text, i.field, _heading_spec(i.spec), None),
                                         **headings)
                       if i.field else i.text for i in self.items).rstrip()

    def line(self, row: Mapping[str, Any], width: int | None = None,
             least: int = 0) -> tuple[str, bool]:
        """A row's line, and whether its last field was cut: with
        ``width`` (a terminal's), a last field that ends the line is cut
        (ending in ``+``) to what is left of ``width``, to no fewer than
        ``least`` characters; nothing else is ever cut."""
        parts = [_FORMATTER.format(_entry(i.text, i.field, i.spec, i.conv), **row)
                 if i.field else i.text for i in self.items]
        last = self.items[-1] if self.items else None
        if width is None or last is None or not last.field:
            return "".join(parts).rstrip(), False
        lead = "".join(parts[:-1]) + last.text
        value = parts[-1][len(last.text):].rstrip()
        room = max(width - len(lead), least)
        if len(value) <= room:
            return (lead + value).rstrip(), False
        return lead + value[:max(room - len(CUT), 0)] + CUT, True

    def lines(self, rows: Sequence[Mapping[str, Any]], header: bool = True) -> list[str]:
        """The table: the heading line (with ``header``), then a line per
        row; never cut."""
        fmt = self.fitted(rows, header)
        out = [fmt.header()] if header else []
        return out + [fmt.line(row)[0] for row in rows]


class Table:
    """The fields and presets of one command's table."""

    def __init__(self, command: str, fields: dict[str, Field],
                 presets: dict[str, Preset]) -> None:
        self.command = command
        self.fields = fields
        self.presets = presets
        for preset in presets.values():  # a broken preset is a bug: fail at import
            OutputFormat(self, preset.format)

    def parse(self, text: str) -> OutputFormat:
        """A preset's name or a format string; FormatError if neither."""
        if "{" in text or "}" in text:
            return OutputFormat(self, text)
        preset = self.presets.get(text)
        if preset is None:
            raise FormatError(
                f"unknown format '{text}': not a preset ({', '.join(self.presets)}) nor a"
                f" format string with {{field}} names ({self.command} -o help)")
        return OutputFormat(self, preset.format)

    def option(self, text: str) -> OutputFormat | str:
        """argparse ``type=`` for ``-o``: an OutputFormat, or HELP."""
        if text == HELP:
            return HELP
        try:
            return self.parse(argtypes.text(text))
        except FormatError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    def add_options(self, parser: argparse.ArgumentParser, json_help: str | None = None,
                    short_no_header: bool = True) -> None:
        """Add ``-o/--format`` and ``[-n] --no-header`` to ``parser``, and
        with ``json_help`` ``--json``, which ``-o`` may not be given with."""
        group: Any = parser.add_mutually_exclusive_group() if json_help else parser
        group.add_argument(
            "-o", "--format", type=self.option, metavar="FORMAT",
            help="a preset (" + ", ".join(self.presets) + ") or a format string of"
                 " {field} names ('help' lists both)")
        if json_help:
            group.add_argument("--json", action="store_true", help=json_help)
        flags = ["-n", "--no-header"] if short_no_header else ["--no-header"]
        parser.add_argument(*flags, action="store_true", help="print no heading line")

    def help_text(self) -> str:
        """What ``-o help`` prints."""
        width = max(len(n) for n in [*self.presets, *self.fields])
        heads = max(len(f.heading) for f in self.fields.values())
        lines = [f"{self.command} output formats (-o NAME):", ""]
        lines += [f"  {name:<{width}}  {p.description}" for name, p in self.presets.items()]
        lines += ["", f"Fields (-o '{{field}} ...', with a Python format spec:"
                      f" {{{next(iter(self.fields))}:<12}}):", ""]
        lines += [f"  {name:<{width}}  {f.heading:<{heads}}  {f.help}"
                  for name, f in self.fields.items()]
        return "\n".join(lines)

    def format_of(self, option: OutputFormat | str | None, preset: str = "default"
                  ) -> OutputFormat:
        """The format ``-o`` chose, else ``preset``."""
        if isinstance(option, OutputFormat):
            return option
        return self.parse(preset)


def terminal_width() -> int | None:
    """The terminal's width when standard output is one (``$COLUMNS``
    first, as shutil says), else None: output that is not a terminal is
    never cut."""
    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    return shutil.get_terminal_size().columns
