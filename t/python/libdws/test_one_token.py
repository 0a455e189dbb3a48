"""One token namespace and one pending table (engine/state.h TOKEN_KINDS,
engine/shapes/token.c, engine/shapes/pending.c): every token the engine puts on an
action is written by token.c (rabbit health's, a kind it owns, by
health/batch.c from health.h's word), so no other file spells a kind's
word as a token's beginning; no file tests a token's prefix itself
(engine.c parses it once and dispatches through one table); and struct
dws_engine has one table of the requests waiting for an answer and one
queue of those waiting for a list.  Comments are left out."""

from __future__ import annotations

import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
LIBDWS = TOP / "src" / "common" / "libdws"
ENGINE = LIBDWS / "engine"
STATE = ENGINE / "state.h"
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
# a function that tests an event's token for a prefix: rabbits_token (event)
PREFIX_TEST = re.compile(r"\b\w+_token\s*\(\s*(?:json_t\s*\*\s*)?event\s*\)")


def code(text: str) -> str:
    return COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def kind_words() -> list[str]:
    text = code(STATE.read_text())
    table = text[text.index("#define TOKEN_KINDS"):text.index("enum token_kind")]
    words = re.findall(r'X \(\w+, "([^"]+)"', table)
    health = re.search(r'#define DWS_HEALTH_TOKEN_KIND "([^"]+)"',
                       (LIBDWS / "health" / "health.h").read_text())
    assert health, "health.h defines DWS_HEALTH_TOKEN_KIND"
    return [*words, health.group(1)]


def token_violations(files: dict[str, str], words: list[str]) -> list[str]:
    """String literals that begin a token ("<word>:" or "<word>:%..."), and
    tests of a token's prefix, in C files {name: text} other than token.c
    (and health.h, the home of health's word)."""
    bad = []
    begins = re.compile(r"^(?:" + "|".join(map(re.escape, words)) + r"):(?:%|$)")
    for name, text in sorted(files.items()):
        if name in ("token.c", "health.h"):
            continue
        for n, line in enumerate(code(text).splitlines(), 1):
            for lit in LITERAL.findall(line):
                if begins.match(lit):
                    bad.append(f"{name}:{n}: writes a token \"{lit}\"")
            if PREFIX_TEST.search(line):
                bad.append(f"{name}:{n}: tests a token's prefix")
    return bad


def sources() -> dict[str, str]:
    paths = [*ENGINE.rglob("*.[ch]"), *(LIBDWS / "health").glob("*.[ch]")]
    return {p.name: p.read_text() for p in paths}


def test_the_kinds_are_one_table() -> None:
    words = kind_words()
    assert len(words) == len(set(words)), f"a kind's word twice: {words}"
    assert {"create", "job-info", "persistent-share", "df", "drain", "health"} <= set(words)
    assert all(":" not in w for w in words)


def test_no_file_but_token_c_writes_or_tests_a_token() -> None:
    bad = token_violations(sources(), kind_words())
    assert not bad, "a token outside token.c: " + "; ".join(bad)


def test_the_guard_finds_a_planted_token() -> None:
    planted = {
        "rabbitdf.c": 'void f (char *b) { snprintf (b, 9, "df:%d", 1); }\n'
                      "bool rabbitdf_token (json_t *event) { return true; }\n",
        "token.c": 'static const char *w = "df:";\n',  # its home: allowed
    }
    assert token_violations(planted, kind_words()) == [
        'rabbitdf.c:1: writes a token "df:%d"',
        "rabbitdf.c:2: tests a token's prefix",
    ]


def test_one_pending_table_and_one_deferral_queue() -> None:
    text = code(STATE.read_text())
    body = text[text.index("struct dws_engine {"):]
    body = body[:body.index("};")]
    tables = re.findall(r"json_t \*(\w*(?:pending|deferred|drains|dfs)\w*);", body)
    assert tables == ["deferred", "pending"], f"waiting requests kept in {tables}"
    seqs = re.findall(r"\b(\w+_seq);", body)
    assert seqs == ["pending_seq"], f"request sequences: {seqs}"
