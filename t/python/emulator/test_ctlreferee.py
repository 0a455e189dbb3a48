"""The referee of the emulator's controllers (flux_dws.referee.ctlreferee):
the same Workflows, played as flux-dws plays them, on the emulator's
DWS/nnf-sos model and on the real DWS, nnf-sos and nnf-dm managers; a
difference ACCEPTED does not list fails.

The real side needs the control plane (t/k8s/build.sh) and the managers
(t/nnf/build.sh from ../shared/nnf): skipped with the reason when the NNF
source is absent; without a build, skipped, or failed under
FLUX_DWS_REQUIRE_REALK8S=1 (CI).
"""

from __future__ import annotations

import os

import pytest
from t.python.realk8s import require_binaries, require_nodes

from flux_dws.realstack import nnf
from flux_dws.referee import ctlreferee

#: the release sets the referee runs: March's (../shared/nnf, or
#: FLUX_DWS_NNF_DIR) and May's (its 2026-05/, or FLUX_DWS_NNF_DIR_2026_05,
#: which scripts/test.sh sets once t/nnf/build.sh has built it)
RELEASES = ["2026-03", "2026-05"]


def use_release(release: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point nnf.build() at ``release``'s build."""
    if release == "2026-03":
        return
    built = os.environ.get("FLUX_DWS_NNF_DIR_2026_05")
    if built:
        monkeypatch.setenv("FLUX_DWS_NNF_DIR", built)
    else:
        monkeypatch.delenv("FLUX_DWS_NNF_DIR", raising=False)
        monkeypatch.setenv("FLUX_DWS_NNF_SRC", str(nnf.source_dir() / release))


def require_nnf() -> nnf.NnfBuild:
    if not (nnf.source_dir() / "SHA256SUMS").is_file() \
            and not os.environ.get("FLUX_DWS_NNF_DIR"):
        pytest.skip(f"no NNF source to build the real controllers from ({nnf.source_dir()})")
    try:
        return nnf.build()
    except nnf.NnfUnavailable as exc:
        if os.environ.get("FLUX_DWS_REQUIRE_REALK8S") == "1":
            pytest.fail(f"{exc} (FLUX_DWS_REQUIRE_REALK8S=1)")
        pytest.skip(str(exc))


def test_compare_names_each_difference_and_accepted_covers_it():
    a = {"xfs": {"PreRun": {"state": "PreRun", "seconds": "<1 s", "env": {"A": "1"}}}}
    b = {"xfs": {"PreRun": {"state": "PreRun", "seconds": "1-10 s", "env": {"A": "2"}},
                 "delete": {"seconds": "<1 s"}}}
    lines = ctlreferee.compare(a, b)
    assert lines == ['xfs/PreRun: env.A: emulator="1" real="2"',
                     'xfs/PreRun: seconds: emulator="<1 s" real="1-10 s"',
                     "xfs/delete: step: emulator=False real=True"]
    assert ctlreferee.accepted(lines[0]) is None
    assert ctlreferee.accepted(lines[1])
    assert ctlreferee.compare(a, a) == []


@pytest.mark.slow
@pytest.mark.timeout(900)  # two control planes; the real managers: about 3 min
@pytest.mark.parametrize("release", RELEASES)
def test_the_emulator_does_what_the_real_controllers_do(tmp_path, monkeypatch, release):
    require_binaries()
    use_release(release, monkeypatch)
    require_nnf()
    emu, real = ctlreferee.both(tmp_path)
    assert set(emu) == set(real) == {s.name for s in ctlreferee.SCENARIOS}
    # the scenarios went where they should on the real controllers
    assert real["xfs"]["Teardown"]["ready"] and real["xfs"]["delete"]["seconds"] != "never"
    assert "invalid string 'zfs'" in real["refused-type"]["create"]["refused"]
    assert real["proposal-error"]["Proposal"]["status"] == "Error"
    assert real["too-few-allocations"]["PreRun"]["message"] == "DW Directive 0: pending mount"
    assert real["persistent-create"]["psi"]["exists"] is True
    assert real["persistent-destroy"]["psi"]["exists"] is False
    new = [line for line in ctlreferee.compare(emu, real) if ctlreferee.accepted(line) is None]
    assert new == []


@pytest.mark.slow
@pytest.mark.timeout(900)  # two control planes, nodes that run Pods
def test_the_emulator_runs_user_containers_as_the_real_controllers(tmp_path):
    """The container scenarios (issue 78): the real side on rabbits that
    run Pods, with mpi-operator; the emulator follows it or the
    difference is ACCEPTED with its reason."""
    require_binaries()
    require_nodes()
    require_nnf()
    emu, real = ctlreferee.containers(tmp_path)
    names = {s.name for s in ctlreferee.CONTAINER_SCENARIOS}
    assert set(emu) == set(real) == names
    # the containers ran where they should on the real controllers
    assert real["container"]["PreRun"]["env"]["NNF_CONTAINER_PORTS"]
    assert real["container"]["Teardown"]["ready"]
    assert real["container-mpi"]["PostRun"]["ready"], real["container-mpi"]
    assert real["container-fail"]["PostRun"]["status"] == "Error"
    new = [line for line in ctlreferee.compare(emu, real) if ctlreferee.accepted(line) is None]
    assert new == []


def test_what_is_missing_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("FLUX_DWS_NNF_DIR", raising=False)
    monkeypatch.setenv("FLUX_DWS_NNF_SRC", str(tmp_path / "none"))
    with pytest.raises(nnf.NnfUnavailable, match=r"no NNF source \(.*none/SHA256SUMS"):
        nnf.build()
    monkeypatch.setenv("FLUX_DWS_NNF_DIR", str(tmp_path))
    with pytest.raises(nnf.NnfUnavailable,
                       match=r"dws-manager, nnf-sos-manager, nnf-dm-manager, clientmountd "
                             r"missing .*run t/nnf/build.sh"):
        nnf.build()


def test_a_manager_nobody_runs_is_named(tmp_path):
    from typing import Any, cast

    rc = nnf.RealControllers(cast(Any, None), tmp_path)
    with pytest.raises(ValueError, match=r"no manager 'nnf-dm-nowhere'; the managers: "
                                         r"\(none started\)"):
        rc.pause("nnf-dm-nowhere")
