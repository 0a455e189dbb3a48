"""The referee's verdict: the emulator's API server against a real
kube-apiserver (flux_dws.realstack.controlplane, built by t/k8s/build.sh)
given the emulator's CRDs with their schemas and the WLM roles.  Fails on any difference
that referee.ACCEPTED does not list (doc/guide/emulator.rst, "Differences
from a real kube-apiserver"), and on an accepted one that no longer
shows.  Skipped with the reason when the servers are not built; failed
instead under FLUX_DWS_REQUIRE_REALK8S=1 (CI)."""

from __future__ import annotations

import json

from t.python.realk8s import require_binaries

from flux_dws.emulator import Emulator
from flux_dws.realstack.controlplane import ControlPlane
from flux_dws.referee import referee


def test_emulator_agrees_with_kube_apiserver(tmp_path):
    bins = require_binaries()
    with ControlPlane(tmp_path / "cp", bins) as cp:
        cp.install_crds()
        referee.install_schemas(cp)
        cp.apply_rbac()
        real = referee.run(referee.controlplane_target(cp))
    with Emulator() as emu:
        emulated = referee.run(referee.emulator_target(emu))
    for t in (emulated, real):
        (tmp_path / f"{t['target']}.json").write_text(json.dumps(t, indent=1))
        assert not [s for s, steps in t["scenarios"].items()
                    if "<scenario failed>" in dict(map(tuple, steps))], t["target"]
    lines = referee.compare(emulated, real)
    new = [line for line in lines if referee.accepted(line) is None]
    assert not new, "differences not accepted:\n" + "\n".join(new)
    used = {referee.accepted(line) for line in lines}
    stale = [e.where for e in referee.ACCEPTED if e not in used]
    assert not stale, f"accepted differences that no longer show: {stale}"
