"""atheris target: arbitrary text as a note into explain_note (explain.h):
it never fails, the note comes back first and whole, what is appended is
the separator and explain's sentence (bounded), and explaining again
changes nothing.  The text's first line is also tried as a pattern on the
rest (the matcher never goes back, so no text makes it slow)."""

import sys

import atheris

with atheris.instrument_imports():
    from flux_dws.libdws.explain import SEPARATOR, explain, explain_note, match

SENTENCE_MAX = 512  # DWS_EXPLAIN_MAX, with its NUL


def test_one(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace").replace("\0", "")
    out = explain_note(text)
    assert out.startswith(text), (text, out)
    if out != text:
        sentence = explain(text)
        assert sentence and out == text + SEPARATOR + sentence, (text, out)
        assert len(sentence.encode("utf-8", "surrogatepass")) < SENTENCE_MAX
    assert explain_note(out) == out, out
    pattern, _, rest = text.partition("\n")
    got = match(pattern, rest)
    if got is not None and "*" not in pattern and "{}" not in pattern:
        assert pattern in rest and got == ""


atheris.Setup(sys.argv, test_one)
atheris.Fuzz()
