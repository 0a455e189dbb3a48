"""The flux-dws2jgf and flux-getrabbit commands (no Flux needed)."""

from __future__ import annotations

import io
import json

import pytest
from t.python.jgf.conftest import make_R

from flux_dws.cli import dws2jgf, getrabbit

MAPPING = {
    "computes": {"compute-01": "kind-worker2", "compute-02": "kind-worker2",
                 "compute-03": "kind-worker2", "compute-04": "kind-worker3"},
    "rabbits": {"kind-worker2": {"capacity": 39582418599936, "hostlist": "compute-[01-03]"},
                "kind-worker3": {"capacity": 39582418599936, "hostlist": "compute-04"}},
}


@pytest.fixture
def mapping_file(tmp_path):
    p = tmp_path / "rabbitmapping.json"
    p.write_text(json.dumps(MAPPING))
    return str(p)


@pytest.fixture(autouse=True)
def no_flux(monkeypatch):
    monkeypatch.delenv("FLUX_URI", raising=False)


def run_dws2jgf(monkeypatch, capfd, argv, stdin=""):
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    rc = dws2jgf.main(argv)
    out, err = capfd.readouterr()
    return rc, out, err


def test_dws2jgf_reads_R_from_stdin(monkeypatch, capfd, mapping_file):
    R = make_R({"hosts": "compute-[01-04]", "cores": "0-1"})
    rc, out, err = run_dws2jgf(monkeypatch, capfd, ["--cluster-name", "kind", mapping_file],
                               json.dumps(R))
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["execution"] == R["execution"]
    assert doc["scheduling"]["graph"]["nodes"][0]["metadata"]["name"] == "kind"


def test_dws2jgf_from_config_with_exclude(monkeypatch, capfd, mapping_file, tmp_path):
    cfg = tmp_path / "resource.toml"
    cfg.write_text('[resource]\nexclude = "compute-04"\n'
                   '[[resource.config]]\nhosts = "compute-[01-04]"\ncores = "0"\n')
    monkeypatch.setenv("PATH", "/nonexistent")  # no flux: use libdws' parser
    rc, out, err = run_dws2jgf(monkeypatch, capfd, ["--from-config", str(cfg), "--only-sched",
                                                    "--cluster-name", "kind", mapping_file])
    assert rc == 0, err
    names = [v["metadata"].get("name") for v in json.loads(out)["graph"]["nodes"]]
    assert "compute-03" in names and "compute-04" not in names


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["MAPPING"], "{", "R: invalid JSON"),
        (["/nonexistent/map.json"], "{}", "rabbitmapping /nonexistent/map.json"),
        ([], "{}", "no RABBITMAPPING given and rabbit.mapping is not configured"),
        (["--from-config", "/nonexistent.toml", "MAPPING"], "", "nonexistent.toml"),
    ],
)
def test_dws2jgf_errors_print_nothing_on_stdout(monkeypatch, capfd, mapping_file, argv, stdin,
                                                 message):
    argv = [mapping_file if a == "MAPPING" else a for a in argv]
    rc, out, err = run_dws2jgf(monkeypatch, capfd, argv, stdin)
    assert rc == 1
    assert out == ""
    assert message in err
    assert err.startswith("flux-dws2jgf: ")


@pytest.mark.parametrize("chunks", ["0", "-3", "x"])
def test_dws2jgf_rejects_bad_chunks(capsys, chunks):
    with pytest.raises(SystemExit) as exc:
        dws2jgf.main(["-c", chunks, "m.json"])
    assert exc.value.code == 2
    assert "--chunks-per-nnf" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "kind-worker[2-3]"),
        (["kind-worker2"], "compute-[01-03]"),
        (["kind-worker[2-3]"], "compute-[01-04]"),
        (["-c", "compute-04"], "kind-worker3"),
        (["-c", "compute-[03-04]"], "kind-worker[2-3]"),
        (["--computes", "compute-01", "compute-02"], "kind-worker2"),
    ],
)
def test_getrabbit_lookups(capsys, mapping_file, argv, expected):
    assert getrabbit.main(["-m", mapping_file, *argv]) == 0
    assert capsys.readouterr().out.strip() == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-c", "compute-99"], "compute node 'compute-99' is not attached to any rabbit"),
        (["compute-01"], "'compute-01' is not a rabbit"),
        (["kind-worker2", "-c", "compute-01"], "cannot be combined"),
        (["-c", "compute-[01-"], "compute-[01-"),
        (["-j", "f123"], "FLUX_URI"),
    ],
)
def test_getrabbit_errors(capsys, mapping_file, argv, message):
    assert getrabbit.main(["-m", mapping_file, *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


def test_getrabbit_without_mapping_or_flux(capsys):
    assert getrabbit.main([]) == 1
    assert "FLUX_URI" in capsys.readouterr().err
