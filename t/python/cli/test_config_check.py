"""flux-dws config-check: a Flux config checked off-line, every problem named."""

from __future__ import annotations

from pathlib import Path

import pytest

from flux_dws.cli.main import main

BAD = """\
[rabbit]
setup_timeout = "ten"
frobnicate = 1
drain_queues = ["pbatch"]
restrict_persistant = true
[queues.pbatch]
requires = ["batch"]
[[resource.config]]
hosts = "c[1-4]"
cores = "0-3"
[[resource.config]]
hosts = "c[1-3]"
properties = ["batch"]
[job-manager]
plugins = [ { load = "dws-jobtap.so", conf = { epilog-timeout = "soon" } } ]
"""

GOOD = """\
[rabbit]
setup_timeout = 60
drain_queues = ["pbatch"]
[[resource.config]]
hosts = "c[1-4]"
cores = "0-3"
[[resource.config]]
hosts = "c[1-3]"
properties = ["pbatch"]
[job-manager]
plugins = [
  { load = "/usr/lib/flux/job-manager/plugins/dws-jobtap.so", conf = { epilog-timeout = 300.0 } },
  { load = "other.so", conf = { anything = "goes" } },
]
"""


def check(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str],
          name: str = "conf.toml") -> tuple[int, list[str]]:
    f = tmp_path / name
    f.write_text(text)
    rc = main(["config-check", str(f)])
    out = capsys.readouterr().out
    return rc, [line.split(": ", 1)[1] for line in out.splitlines()]


def test_every_problem_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, lines = check(tmp_path, BAD, capsys)
    assert rc == 1
    assert lines[0] == 'rabbit.setup_timeout: must be a number of seconds >= 0, got "ten"'
    assert lines[1].startswith("rabbit.frobnicate: unknown key (valid keys: ")
    assert lines[2] == ("rabbit.restrict_persistant: unknown key (did you mean"
                        " restrict_persistent_creation?)")
    # a [queues] entry of that name does not make it a property of any node
    assert lines[3] == ('rabbit.drain_queues: no node has the property "pbatch": drain queues'
                        " name node properties (the nodes' properties: batch)")
    assert lines[4] == ("job-manager.plugins[0] (dws-jobtap.so): conf: dws jobtap config:"
                        " epilog-timeout must be a number of seconds")
    assert len(lines) == 5


def test_a_good_config_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(tmp_path, GOOD, capsys) == (0, ["OK ([rabbit] OK)"])
    early = GOOD.replace("[rabbit]\n", '[rabbit]\nrelease_computes = "after-unmount"\n')
    assert check(tmp_path, early, capsys) == (0, ["OK ([rabbit] OK)"])


def test_release_computes_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = GOOD.replace("[rabbit]\n", '[rabbit]\nrelease_computes = "early"\n')
    assert check(tmp_path, bad, capsys) == (1, [
        'rabbit.release_computes: must be "after-unmount" or "after-teardown", got "early"'])


def test_drain_queues_need_no_queues_table(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Drain queues name node properties: the nodes of [[resource.config]]
    are checked, [queues] is not; without resource.config the nodes come
    from elsewhere (R, hwloc) and only the service can check."""
    nodes = '[[resource.config]]\nhosts = "c[1-2]"\ncores = "0"\n'
    rc, lines = check(tmp_path, '[rabbit]\ndrain_queues = ["pbatch"]\n' + nodes, capsys)
    assert rc == 1
    assert lines == ['rabbit.drain_queues: no node has the property "pbatch": drain queues'
                     ' name node properties, and no node has any (leave drain_queues out to'
                     ' drain nodes of the whole instance)']
    assert check(tmp_path, '[rabbit]\ndrain_queues = ["pbatch"]\n', capsys) == \
        (0, ["OK ([rabbit] OK)"])
    assert check(tmp_path, '[rabbit]\ndrain_queues = ["pbatch", "x"]\n' + nodes
                 + 'properties = ["pbatch"]\n', capsys) == (0, ["OK ([rabbit] OK)"])


def test_conflicting_keys_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, lines = check(tmp_path, "[rabbit]\nrestrict_persistent = false\n"
                      "restrict_persistent_creation = true\n", capsys)
    assert rc == 1 and lines[0].startswith("rabbit.restrict_persistent: conflicts with")


def test_a_directory_is_read_as_the_broker_reads_it(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-rabbit.toml").write_text('[rabbit]\ndrain_queues = ["pbatch"]\n')
    (tmp_path / "b-resource.toml").write_text('[[resource.config]]\nhosts = "c1"\n'
                                              'properties = ["pbatch"]\n')
    assert main(["config-check", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"{tmp_path}: OK ([rabbit] OK)\n"


def test_no_rabbit_table_and_unreadable(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert check(tmp_path, "[resource]\nnoverify = true\n", capsys) == \
        (0, ["OK (no [rabbit] table)"])
    assert main(["config-check", str(tmp_path / "missing.toml")]) == 2
    assert "No such file or directory" in capsys.readouterr().err
    (tmp_path / "broken.toml").write_text("[rabbit\n")
    assert main(["config-check", str(tmp_path / "broken.toml")]) == 2
    assert "broken.toml" in capsys.readouterr().err
