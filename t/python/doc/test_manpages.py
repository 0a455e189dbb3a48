"""The man pages: every ``doc/man<N>/*.rst`` builds with Sphinx and renders
with groff without a warning, and every command, option, ``[rabbit]`` key,
RPC and man page a page names exists.

A page that names something removed (a subcommand, an option, a key, a
``dws.*`` method, a page) fails here, where a reader of the installed page
would otherwise find it.  What exists is asked of the code, not listed
again: flux-dws' argparse parsers (``flux_dws.cli.main``, the service's
``dws.py``), the normalised ``[rabbit]`` table (``rabbitconf.parse``), the
engine's answer to a request (``ENOSYS`` "unknown dws method" for a topic
it does not serve), the jobtap machine's event types (the
``job-manager.dws.*`` methods), and flux itself for its own commands.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from docutils import nodes
from docutils.core import publish_doctree

from flux_dws import inputfile
from flux_dws.cli import config_check
from flux_dws.cli.main import build_parser
from flux_dws.libdws import rabbitconf
from flux_dws.libdws.dataout import SERVICES as DATAOUT_SERVICES
from flux_dws.libdws.dataout import DataoutError, DataoutMachine
from flux_dws.libdws.engine import Engine
from flux_dws.libdws.jobsm import JobMachine, JobMachineError
from flux_dws.service.core import WATCH_TEST

TOP = Path(__file__).resolve().parents[3]
DOC = TOP / "doc"
sys.path.insert(0, str(DOC))
import manpages  # noqa: E402

PAGES = manpages.pages()
OURS = {name: section for section, name, _ in PAGES}
#: flux-core's pages the pages refer to (flux-core's own names; a page of
#: ours is checked against doc/, these against this list)
FLUX_CORE_PAGES = {
    "flux-broker(1)", "flux-config(5)", "flux-jobs(1)", "flux-jobtap-plugins(7)",
    "flux-modprobe(1)", "flux-shell(1)", "flux-shell-plugins(7)",
}
#: the command line of the page's program: flux-dws SUB, or the service
COMMANDS = {
    "flux-dws2jgf": ["dws2jgf"],
    "flux-getrabbit": ["getrabbit"],
    "flux-rabbitmapping": ["rabbitmapping"],
}
#: topics the service shell answers itself (the rest go to the engine), and
#: those flux-core's broker answers for every module (flux_module_register)
SHELL_TOPICS = {WATCH_TEST, "dws.config-reload"} | {
    f"dws.{m}" for m in ("shutdown", "stats-get", "stats-clear", "debug", "rusage")}


def documents_program(name: str) -> bool:
    return name.startswith("flux-dws-") or name in COMMANDS


#: the pages of a program (the rest document plugins and the configuration)
PROGRAM_PAGES = [p for p in PAGES if documents_program(p[1])]


def ids(pages: list[tuple[str, str, str]]) -> list[str]:
    return [f"{name}({section})" for section, name, _ in pages]


@pytest.fixture(scope="module")
def roff(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The man pages as `meson compile` builds them, warnings as errors."""
    out = tmp_path_factory.mktemp("man")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "man", "-W", "--keep-going", "-q", "-E",
         "-d", str(out / ".doctrees"), str(DOC), str(out)],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"sphinx-build -b man:\n{done.stdout}{done.stderr}"
    return out


def test_every_page_is_built(roff: Path) -> None:
    sources = {f"{p.stem}.{p.parent.name[3:]}" for p in DOC.glob("man[0-9]/*.rst")}
    built = {p.name for p in roff.iterdir() if p.is_file()}
    assert sources == {f"{name}.{section}" for section, name, _ in PAGES}
    assert built == sources


@pytest.mark.parametrize(("section", "name", "description"), PAGES, ids=ids(PAGES))
def test_page_renders_without_warning(roff: Path, section: str, name: str,
                                      description: str) -> None:
    groff = shutil.which("groff")
    assert groff, "groff is not installed (Debian groff-base; scripts/setup.sh installs it)"
    page = roff / f"{name}.{section}"
    done = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(page)],
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    text = page.read_text(encoding="utf-8")
    assert text.count(".SH NAME\n") == 1, "one NAME section (Sphinx's)"
    assert f'.TH "{name.upper()}" "{section}"' in text
    assert re.search(r"^\.SH NAME\n" + re.escape(name) + r" \\- \S", text, re.M)
    assert description and "``" not in description


# --- what a page names --------------------------------------------------------


@cache
def doctree(section: str, name: str) -> nodes.document:
    source = (DOC / f"man{section}" / f"{name}.rst").read_text(encoding="utf-8")
    return publish_doctree(source, settings_overrides={"report_level": 5,
                                                       "halt_level": 5})


def sections(tree: nodes.document, title: str) -> Iterator[nodes.section]:
    for sec in tree.findall(nodes.section):
        if sec.next_node(nodes.title).astext() == title:
            yield sec


def literals(tree: nodes.Node) -> Iterator[str]:
    for n in tree.findall(lambda n: isinstance(n, (nodes.literal, nodes.literal_block))):
        yield n.astext()


def prose(tree: nodes.Node) -> Iterator[str]:
    """Text outside literal blocks (which hold examples, also of errors)."""
    for n in tree.findall(nodes.Text):
        if not any(isinstance(a, nodes.literal_block) for a in _ancestors(n)):
            yield n.astext()


def _ancestors(n: nodes.Node) -> Iterator[nodes.Node]:
    while n.parent is not None:
        n = n.parent
        yield n


def option_words(text: str) -> list[str]:
    """The options a bold or italic phrase that begins with one names:
    '-k, --kubeconfig' -> ['-k', '--kubeconfig']; '--kind KIND' -> ['--kind'];
    'python3 -m MODULE' (a program) -> []"""
    words = [w for w in re.split(r"[\s,|\[\]]+", text) if w]
    if not words or not words[0].startswith("-"):
        return []
    return [w.split("=")[0] for w in words if w.startswith("-")]


def subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def all_options(p: argparse.ArgumentParser) -> set[str]:
    """Options of a parser and of every subcommand below it."""
    opts = set(p._option_string_actions)
    for child in subparsers(p).values():
        opts |= all_options(child)
    return opts


def accepts(opts: set[str], word: str) -> bool:
    # -vv is -v counted twice
    return word in opts or bool(re.fullmatch(r"-([a-zA-Z])\1+", word) and word[:2] in opts)


@cache
def service_parser() -> argparse.ArgumentParser:
    spec = importlib.util.spec_from_file_location("dws_module", TOP / "src/modules/dws.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parser: argparse.ArgumentParser = module.parser()
    return parser


def page_parser(name: str) -> argparse.ArgumentParser:
    """The parser of the program a page documents."""
    if name == "flux-dws-service":
        return service_parser()
    words = COMMANDS.get(name) or ([name[len("flux-dws-"):]] if name.startswith("flux-dws-")
                                   else None)
    assert words is not None, f"{name} documents no program"
    p: argparse.ArgumentParser = build_parser()
    for w in words:
        sub = subparsers(p)
        assert w in sub, f"{name}: flux-dws has no subcommand {w!r}"
        p = sub[w]
    return p


@pytest.mark.parametrize(("section", "name", "description"), PROGRAM_PAGES,
                         ids=ids(PROGRAM_PAGES))
def test_options_exist(section: str, name: str, description: str) -> None:
    """Every option of the SYNOPSIS and OPTIONS sections, and every
    subcommand of the SYNOPSIS, is the program's."""
    parser = page_parser(name)
    opts = all_options(parser)
    tree = doctree(section, name)
    named = []
    for title in ("SYNOPSIS", "OPTIONS"):
        for sec in sections(tree, title):
            for n in sec.findall(lambda n: isinstance(n, (nodes.strong, nodes.emphasis))):
                named += option_words(n.astext())
    assert any(True for _ in sections(tree, "SYNOPSIS")), f"{name}({section}): no SYNOPSIS"
    assert [w for w in named if not accepts(opts, w)] == []
    # the SYNOPSIS' bold words after the program's name: its subcommands
    if parser is service_parser():
        return
    program = {"flux", "dws", "flux-dws", name.removeprefix("flux-dws-"),
               name.removeprefix("flux-")}
    subs = {w for p in (parser, *subparsers(parser).values()) for w in subparsers(p)}
    for sec in sections(tree, "SYNOPSIS"):
        # (a bold phrase with a blank is a whole invocation: python3 -m M)
        words = [n.astext() for n in sec.findall(nodes.strong) if " " not in n.astext()]
        assert [w for w in words if w not in program | subs and not w.startswith("-")] == []


#: a command line in a literal: flux SUB ..., flux-dws SUB ..., flux-NAME ...
_COMMAND = re.compile(r"(?:^|(?<=[\s|;(`$]))(flux(?:-[a-z0-9-]+)?)((?:[ \t]+[^\s|;&)]+)*)", re.M)


def command_lines() -> Iterator[tuple[str, list[str]]]:
    """(page, argv) of every command line in a literal of any page."""
    for section, name, _ in PAGES:
        for text in literals(doctree(section, name)):
            for m in _COMMAND.finditer(text):
                argv = [m.group(1), *m.group(2).split()]
                if argv[0] == "flux" and len(argv) > 1 and argv[1] in ("dws", "dws2jgf",
                                                                         "getrabbit",
                                                                         "rabbitmapping"):
                    argv = [f"flux-{argv[1]}", *argv[2:]]
                yield f"{name}({section})", argv


def test_our_commands_exist() -> None:
    """flux dws SUB / flux-dws SUB, their nested subcommands and their
    options, wherever a page shows one in a literal."""
    top = build_parser()
    bad = []
    checked = 0
    for page, argv in command_lines():
        prog = argv[0]
        if prog == "flux-dws" and len(argv) > 1 and not argv[1].startswith(("-", "$", "<")):
            sub = subparsers(top)
            if argv[1] not in sub:
                bad.append((page, " ".join(argv), f"no subcommand {argv[1]}"))
                continue
            p, rest = sub[argv[1]], argv[2:]
        elif prog in ("flux-dws2jgf", "flux-getrabbit", "flux-rabbitmapping"):
            p, rest = subparsers(top)[prog[len("flux-"):]], argv[1:]
        else:
            continue
        nested = subparsers(p)
        if rest and nested and rest[0] in nested:
            p, rest = nested[rest[0]], rest[1:]
        opts = all_options(p)
        checked += 1
        bad += [(page, " ".join(argv), f"no option {w}") for w in rest
                if w.startswith("-") and w != "-" and not accepts(opts, w.split("=")[0])]
    assert bad == []
    assert checked >= 20, "the pages' command lines were not found"


def test_flux_commands_exist() -> None:
    """flux-core's commands a page shows (flux job, flux module, ...)."""
    flux = shutil.which("flux")
    if flux is None:
        pytest.skip("flux-core is not installed: its commands cannot be asked")
    wanted = {argv[1] for _, argv in command_lines()
              if argv[0] == "flux" and len(argv) > 1 and re.fullmatch(r"[a-zA-Z][\w-]*", argv[1])}
    assert "submit" in wanted
    missing = []
    for cmd in sorted(wanted):
        done = subprocess.run([flux, cmd, "--help"], capture_output=True, text=True,
                              check=False, timeout=60)
        if "is not a flux command" in done.stderr:
            missing.append(cmd)
    assert missing == []


def test_pages_named_exist() -> None:
    """NAME(N): a page of ours in doc/, or one of flux-core's."""
    bad = []
    for section, name, _ in PAGES:
        for text in prose(doctree(section, name)):
            for m in re.finditer(r"(?<![\w/.-])([a-z][a-z0-9-]*)\(([1-8])\)", text):
                ref = m.group(0)
                if OURS.get(m.group(1)) != m.group(2) and ref not in FLUX_CORE_PAGES:
                    bad.append((f"{name}({section})", ref))
    assert bad == []


def _key_exists(path: list[str]) -> bool:
    # [rabbit.limits] is absent from the parsed table unless given
    table: Any = rabbitconf.parse({"limits": {"max_user_gib": 1, "max_user_jobs": 1}})
    if path == ["restrict_persistent"]:  # flux-coral2's name, accepted as an alias
        return True
    for i, key in enumerate(path):
        if path[:i] == ["policy", "maximums"]:
            return key in ("xfs", "gfs2", "raw", "lustre")
        if path[:i] == ["presets"] or not isinstance(table, dict) or key not in table:
            return path[:i] == ["presets"]
        table = table[key]
    return True


def test_rabbit_keys_documented_exist() -> None:
    """flux-config-rabbit(5)'s KEYS are the table's keys, all of them."""
    keys = set()
    for sec in sections(doctree("5", "flux-config-rabbit"), "KEYS"):
        for item in sec.findall(nodes.definition_list_item):
            outer = [a for a in _ancestors(item) if isinstance(a, nodes.definition_list_item)]
            prefix = [a.next_node(nodes.term).astext() for a in reversed(outer)]
            for key in item.next_node(nodes.term).astext().split(","):
                keys.add(".".join([*prefix, key.strip()]))
    assert "tc_timeout" in keys and "lustre.spread" in keys
    assert sorted(k for k in keys if not _key_exists(k.split("."))) == []
    table = rabbitconf.parse({})
    every = {k for k in table} | {f"lustre.{k}" for k in table["lustre"]}
    every.discard("policy")
    every.add("policy.maximums")
    documented = keys | {"dws_api_version", "nnf_api_version"}
    assert sorted(every - documented) == []


def test_rabbit_keys_named_exist() -> None:
    """rabbit.KEY in any page's text (not in its examples of errors)."""
    bad = []
    for section, name, _ in PAGES:
        for text in prose(doctree(section, name)):
            for m in re.finditer(r"(?<![\w./-])rabbit\.([a-z_]+(?:\.[a-z_]+)*)", text):
                path = m.group(1).split(".")
                if path[-1] not in ("toml",) and not _key_exists(path):
                    bad.append((f"{name}({section})", m.group(0)))
    assert bad == []


def test_toml_examples_are_valid() -> None:
    """A page's TOML example of [rabbit] or of the jobtap plugin's conf is
    one flux-dws takes (the checks of flux dws config-check)."""
    seen = 0
    for section, name, _ in PAGES:
        for n in doctree(section, name).findall(nodes.literal_block):
            text = n.astext()
            if not re.search(r"^\s*\[+(rabbit|job-manager)\b", text, re.M):
                continue
            seen += 1
            where = f"{name}({section}): {text[:60]!r}"
            conf = inputfile.parse_toml(text, where)
            problems = config_check.jobtap_problems(conf)
            if "rabbit" in conf:
                problems += config_check.rabbit_problems(conf["rabbit"])
            assert problems == [], where
    assert seen >= 2


def rpcs() -> Iterator[tuple[str, str]]:
    for section, name, _ in PAGES:
        for text in [*prose(doctree(section, name)), *literals(doctree(section, name))]:
            for m in re.finditer(r"(?<![\w./-])((?:job-manager\.)?dws\.[a-z][a-z_-]*)\b(?![.\w])",
                                 text):
                if m.group(1).rsplit(".", 1)[1] not in ("py", "toml", "h", "disabled", "args"):
                    yield f"{name}({section})", m.group(1)


def test_rpcs_exist() -> None:
    """dws.METHOD: one the service answers (the engine, or its shell);
    job-manager.dws.METHOD: one the jobtap plugin serves."""
    named = set(rpcs())
    assert {t for _, t in named} >= {"dws.create", "job-manager.dws.prolog-remove"}
    bad = []
    for page, topic in sorted(named):
        method = topic.rsplit(".", 1)[1]
        if topic.startswith("job-manager.") and method in DATAOUT_SERVICES:
            # dws-jobtap.so serves these with libdws dataout.h
            try:
                DataoutMachine().event({"type": DATAOUT_SERVICES[method], "id": 1, "ok": True})
            except DataoutError:
                bad.append((page, topic))
        elif topic.startswith("job-manager."):
            try:
                JobMachine().event({"type": topic.rsplit(".", 1)[1]})
            except JobMachineError as exc:
                if "unknown event type" in str(exc):
                    bad.append((page, topic))
        elif topic not in SHELL_TOPICS:
            answer = Engine().event({"type": "request", "topic": topic, "msgid": 1,
                                     "userid": 0, "payload": {}})
            if any(a.get("errstr") == "unknown dws method" for a in answer):
                bad.append((page, topic))
    assert bad == []


def test_the_rpm_packages_every_page() -> None:
    """flux-dws.spec names its man pages one by one: a page added without
    its %files line fails rpmbuild ("Installed (but unpackaged) file(s)
    found"), which only the release step's t3402 would show."""
    spec = (TOP / "flux-dws.spec").read_text()
    listed = set(re.findall(r"^%\{_mandir\}/man(\d)/(\S+)\.\1\*$", spec, re.M))
    built = {(section, name) for section, name, _ in PAGES}
    assert built - listed == set(), "man pages missing from flux-dws.spec %files"
    assert listed - built == set(), "flux-dws.spec lists man pages that are not built"
