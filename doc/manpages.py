"""The man pages flux-dws builds: every ``doc/man<N>/<name>.rst``.

One list for Sphinx (``doc/conf.py``: ``man_pages``) and for meson
(``doc/meson.build`` runs this file, which prints one ``<N> <name>`` line
per page, to name the roff files it installs into ``man<N>``).

A page's one-line description (the NAME line of the roff page, what
``whatis`` and ``apropos`` show) is its own NAME section where it has one
(``name - description``), otherwise the entry in DESCRIPTIONS below.  The
roff page gets its NAME line from Sphinx, so a page's own NAME section is
left out of the man build (``without_name_section``) and kept in HTML.

Standard library only: meson runs it with the Python it builds for.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parent
SECTIONS = ("1", "5", "8")
AUTHOR = "the flux-dws developers"

#: descriptions of the pages that have no NAME section of their own
DESCRIPTIONS = {
    "flux-dws-atom-emulator": "serve an emulated HPE Cray ATOM for the PBS_cray_atom hook",
    "flux-dws-check": "validate #DW directives as a job submission would",
    "flux-dws-config-check": "check a Flux configuration off-line as flux-dws reads it",
    "flux-dws-emulator": "run an emulated Rabbit management cluster's Kubernetes API",
    "flux-dws-fault": "inject DWS and NNF faults into the flux-dws emulator",
    "flux-dws-job": "show one rabbit job in full: its storage, timeline, data movements and error",
    "flux-dws-jobs": "list your rabbit jobs and where each is in its DWS Workflow",
    "flux-dws-persistent": "list persistent rabbit storage and share it with other users",
    "flux-dws-referee": "compare the emulator's Kubernetes API server with a real one",
    "flux-dws-rabbits": "show each rabbit's and its computes' health as the dws service sees it",
    "flux-dws-status": "show what the dws service is doing",
    "flux-dws-sync": "wait until the dws service has caught up with Kubernetes",
    "flux-dws-wait": "wait until a rabbit job's data has landed and its storage is gone",
    "flux-dws2jgf": "add Rabbit storage to Fluxion's resource graph",
    "flux-getrabbit": "look up rabbits, compute nodes and jobs",
    "flux-rabbitmapping": "write the rabbitmapping of a Rabbit system",
}

_NAME_SECTION = re.compile(r"^NAME\n=+\n\n(?P<body>.*?)\n\n(?=\S)", re.M | re.S)


def _plain(text: str) -> str:
    """RST inline markup of a NAME line as plain text."""
    text = " ".join(text.split())
    return re.sub(r"``([^`]*)``|\*\*([^*]*)\*\*|\*([^*]*)\*",
                  lambda m: next(g for g in m.groups() if g is not None), text)


def without_name_section(source: str) -> str:
    """The page's RST without its NAME section (Sphinx writes the roff NAME)."""
    return _NAME_SECTION.sub("", source, count=1)


def pages() -> list[tuple[str, str, str]]:
    """(section, name, description) of every page, sorted by section and name."""
    out = []
    for section in SECTIONS:
        for rst in sorted((DOC / f"man{section}").glob("*.rst")):
            name = rst.stem
            m = _NAME_SECTION.search(rst.read_text(encoding="utf-8"))
            if m:
                body = _plain(m.group("body"))
                prefix = f"{name} - "
                if not body.startswith(prefix):
                    raise ValueError(f"{rst}: its NAME section must read '{prefix}...'")
                description = body[len(prefix):]
            elif name in DESCRIPTIONS:
                description = DESCRIPTIONS[name]
            else:
                raise ValueError(f"{rst}: no NAME section and no entry in"
                                 f" doc/manpages.py DESCRIPTIONS")
            out.append((section, name, description))
    return out


def man_pages() -> list[tuple[str, str, str, list[str], int]]:
    """Sphinx's ``man_pages`` setting."""
    return [(f"man{s}/{name}", name, desc, [AUTHOR], int(s)) for s, name, desc in pages()]


if __name__ == "__main__":
    try:
        for section, name, _ in pages():
            print(section, name)
    except (OSError, ValueError) as exc:
        sys.exit(f"doc/manpages.py: {exc}")
