"""The listing commands' shared ``-o/--format`` and ``--no-header``
(flux_dws.cli.outputformat), as flux-core's OutputFormat has them: field
names and Python format specs, flux's ``h`` and ``+`` spec suffixes, the
``+:``, ``?:`` and ``?+:`` column sentinels, presets, ``-o help``, and
one clear error naming a bad field, spec or preset."""

from __future__ import annotations

import argparse
import io
from typing import Any

import pytest

from flux_dws.cli import df, jobs, outputformat, persistent, rabbits
from flux_dws.cli.outputformat import HELP, Field, FormatError, Preset, Table

TABLE = Table("flux dws thing", {
    "name": Field("NAME", "its name"),
    "count": Field("COUNT", "how many", int),
    "id.f58": Field("JOBID", "a dotted name is one field"),
    "why": Field("WHY", "why"),
}, {
    "default": Preset("the usual", "+:{name} +:{count:>} {why}"),
    "short": Preset("names only", "{name:<8}|"),
})
ROWS: list[dict[str, Any]] = [
    {"name": "alpha", "count": 3, "id.f58": "fA", "why": ""},
    {"name": "b", "count": 12345, "id.f58": "fB", "why": "a long reason, told whole"},
]


def test_presets_and_format_strings() -> None:
    assert TABLE.parse("default").lines(ROWS) == [
        "NAME  COUNT WHY",
        "alpha     3",
        "b     12345 a long reason, told whole",
    ]
    assert TABLE.parse("short").lines(ROWS, header=False) == ["alpha   |", "b       |"]
    assert TABLE.parse("{id.f58} {count:05d} {name!r:>8.4}").lines(ROWS) == [
        "JOBID COUNT     NAME",
        "fA 00003     'alp",
        "fB 12345      'b'",
    ]
    # literal braces, and no field at all
    assert TABLE.parse("{{{name}}}").lines(ROWS[:1], header=False) == ["{alpha}"]


def test_header_keeps_only_alignment_and_width() -> None:
    fmt = TABLE.parse("{count:>+8d}|{name:^9.2s}|")
    assert fmt.header() == "   COUNT|  NAME   |"
    assert fmt.line(ROWS[0])[0] == "      +3|   al    |"


def test_flux_spec_suffixes() -> None:
    """``h``: an empty value as ``-``; ``+``: a value cut by the
    precision ends in ``+``."""
    fmt = TABLE.parse("{why:<6.6+}|{why:h}")
    assert fmt.line(ROWS[0])[0] == "      |-"
    assert fmt.line(ROWS[1])[0] == "a lon+|a long reason, told whole"
    assert TABLE.parse("{name:.5+}").line(ROWS[0])[0] == "alpha"  # not cut: no mark


def test_sentinels() -> None:
    """``+:`` widens a column to its widest value and heading (not the
    heading with --no-header), ``?:`` drops a column with no value, ``?+:``
    both; the width given is a minimum."""
    assert TABLE.parse("+:{name:<2}|+:{count:>}|").lines(ROWS) == [
        "NAME |COUNT|", "alpha|    3|", "b    |12345|"]
    assert TABLE.parse("+:{name}|").lines(ROWS, header=False) == ["alpha|", "b    |"]
    assert TABLE.parse("+:{name:10}|").lines(ROWS[:1], header=False) == ["alpha     |"]
    empty = [dict(r, why="-") for r in ROWS]
    assert TABLE.parse("{name} ?:{why} {count}").lines(empty, header=False) == ["alpha 3",
                                                                              "b 12345"]
    assert TABLE.parse("{name} ?+:{why}|").lines(ROWS, header=False) == [
        "alpha " + " " * 25 + "|", "b a long reason, told whole|"]
    assert TABLE.parse("{name} ?+:{why}|").lines(empty, header=False) == ["alpha|", "b|"]


def test_only_the_last_field_is_cut_and_only_with_a_width() -> None:
    fmt = TABLE.parse("+:{name} {why}").fitted(ROWS)
    assert fmt.line(ROWS[1]) == ("b     a long reason, told whole", False)
    assert fmt.line(ROWS[1], width=20) == ("b     a long reason+", True)
    assert fmt.line(ROWS[1], width=10, least=8) == ("b     a long +", True)
    assert fmt.line(ROWS[0], width=3) == ("alpha", False)  # nothing to cut: an empty why
    # a format that does not end with a field is never cut
    assert TABLE.parse("{why}|").line(ROWS[1], width=5) == ("a long reason, told whole|",
                                                           False)


@pytest.mark.parametrize(("text", "error"), [
    ("{bogus}", "unknown field 'bogus' (flux dws thing -o help lists the fields)"),
    ("{name} {id}", "unknown field 'id'"),
    ("{name.upper}", "unknown field 'name.upper'"),
    ("{name[0]}", "unknown field 'name[0]'"),
    ("{}", "'{}' in '{}' names no field"),
    ("{0}", "'{0}' in '{0}' names no field"),
    ("{name", "bad format '{name': expected '}' before end of string"),
    ("name}", "bad format 'name}': Single '}' encountered in format string"),
    ("{count:s}", "field 'count': Unknown format code 's' for object of type 'int'"),
    ("{name:d}", "field 'name': Unknown format code 'd' for object of type 'str'"),
    ("{count:.2d}", "field 'count': Precision not allowed in integer format specifier"),
    ("{name!x}", "field 'name': Unknown conversion specifier x"),
    ("{name:{width}}", "unknown field 'width'"),
    ("bogus", "unknown format 'bogus': not a preset (default, short) nor a format string"
              " with {field} names (flux dws thing -o help)"),
    ("", "unknown format ''"),
])
def test_bad_formats_name_what_is_wrong(text: str, error: str) -> None:
    with pytest.raises(FormatError) as exc:
        TABLE.parse(text)
    assert str(exc.value).startswith(error)
    assert "\n" not in str(exc.value)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="thing")
    TABLE.add_options(p, json_help="JSON")
    return p


def test_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    args = parser().parse_args([])
    assert (args.format, args.json, args.no_header) == (None, False, False)
    assert TABLE.format_of(args.format).text == "+:{name} +:{count:>} {why}"
    args = parser().parse_args(["-n", "--format", "short"])
    assert args.no_header and TABLE.format_of(args.format).text == "{name:<8}|"
    assert parser().parse_args(["-o", "help"]).format == HELP
    assert TABLE.format_of(None, "short").text == "{name:<8}|"
    for argv in (["-o", "{bogus}"], ["-o", "{name}", "--json"]):
        with pytest.raises(SystemExit) as exc:
            parser().parse_args(argv)
        assert exc.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[1] == ("thing: error: argument -o/--format: unknown field 'bogus' (flux dws"
                      " thing -o help lists the fields)")
    assert err[-1] == "thing: error: argument --json: not allowed with argument -o/--format"
    p = argparse.ArgumentParser()
    TABLE.add_options(p, short_no_header=False)
    assert p.parse_args(["--no-header"]).no_header
    with pytest.raises(SystemExit):
        p.parse_args(["-n"])


def test_help_lists_presets_and_fields() -> None:
    assert TABLE.help_text().splitlines() == [
        "flux dws thing output formats (-o NAME):",
        "",
        "  default  the usual",
        "  short    names only",
        "",
        "Fields (-o '{field} ...', with a Python format spec: {name:<12}):",
        "",
        "  name     NAME   its name",
        "  count    COUNT  how many",
        "  id.f58   JOBID  a dotted name is one field",
        "  why      WHY    why",
    ]


@pytest.mark.parametrize("table", [rabbits.TABLE, df.TABLE, jobs.TABLE, persistent.TABLE],
                         ids=["rabbits", "df", "jobs", "persistent"])
def test_every_command_has_a_default_and_lists_every_field(table: Table) -> None:
    assert "default" in table.presets
    text = table.help_text()
    assert all(f"  {name} " in text for name in [*table.presets, *table.fields])
    # every field is usable alone, with a width and hyphenated
    for name in table.fields:
        table.parse(f"{{{name}}} +:{{{name}:>3}} ?:{{{name}:h}}")


def test_a_broken_preset_fails_at_once() -> None:
    with pytest.raises(FormatError, match="unknown field 'nope'"):
        Table("x", {"a": Field("A", "a")}, {"default": Preset("d", "{nope}")})


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a terminal has a width ($COLUMNS first); a pipe or a file has
    none, whatever $COLUMNS says."""
    monkeypatch.setenv("COLUMNS", "91")
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert outputformat.terminal_width() is None
    monkeypatch.setattr("sys.stdout", Tty())
    assert outputformat.terminal_width() == 91
    monkeypatch.setattr("sys.stdout", None)
    assert outputformat.terminal_width() is None
