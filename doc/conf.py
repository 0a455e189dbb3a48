"""Sphinx configuration: the man pages (``-b man``) and the HTML pages
(``-b html``) of flux-dws, built by meson (``-Ddocs``, doc/meson.build) and
checked by t/python/doc/test_manpages.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import manpages

project = "flux-dws"
author = manpages.AUTHOR
copyright = "Lawrence Livermore National Security, LLC and the flux-dws developers"
# the version is meson's (meson passes -D release=...; by hand, read it there)
_meson = (Path(__file__).resolve().parent.parent / "meson.build").read_text(encoding="utf-8")
release = version = re.search(r"version:\s*'([^']+)'", _meson).group(1)  # type: ignore[union-attr]

master_doc = "index"
source_suffix = {".rst": "restructuredtext"}
exclude_patterns = ["_build"]
# the pages name each other as flux-foo(1) in plain text: no roles needed
man_pages = manpages.man_pages()
man_show_urls = False
man_make_section_directory = False
html_theme = "alabaster"
html_copy_source = False
html_show_sourcelink = False
html_title = f"flux-dws {release}"


def _man_source(app: Any, docname: str, source: list[str]) -> None:
    # Sphinx writes the roff NAME line from man_pages: a page's own NAME
    # section would make a second one
    if app.builder.name == "man" and docname.startswith("man"):
        source[0] = manpages.without_name_section(source[0])


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _man_source)
    return {"parallel_read_safe": True}
