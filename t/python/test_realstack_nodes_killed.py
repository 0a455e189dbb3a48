"""The host put back when a test process running nodes that run Pods
(flux_dws.realstack.nodes) is killed (SIGKILL) with a Pod running: the
host guard, a process of its own, sees the test's pipe close and puts
back what the kubelet and containerd changed.  A module of its own: the
nodes of test_realstack_nodes.py are up for that whole module, and one
set of nodes runs at a time (nodes.NODES_LOCK)."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from t.python.realk8s import require_binaries, require_nodes
from t.python.test_realstack_nodes import until

from flux_dws.realstack.hostguard import HostState

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

KILLED = '''
import sys, time
from pathlib import Path
from flux_dws.realstack.controlplane import ControlPlane
from flux_dws.realstack.nodes import PodNodes
cp = ControlPlane(Path(sys.argv[1]) / "cp").start()
pn = PodNodes(cp, ["kind-worker2"], Path(sys.argv[1]) / "nodes").start()
cp.request("POST", "/api/v1/namespaces/default/pods", {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "left"},
    "spec": {"nodeName": "kind-worker2", "tolerations": [{"operator": "Exists"}],
             "containers": [{"name": "c", "image": "flux-dws.local/busybox:1",
                             "imagePullPolicy": "Never", "command": ["sleep", "3600"]}]}})
while cp.request("GET", "/api/v1/namespaces/default/pods/left")[1].get(
        "status", {}).get("phase") != "Running":
    time.sleep(0.2)
print(pn.root, flush=True)
time.sleep(3600)
'''


def test_the_host_put_back_when_the_test_is_killed(tmp_path: Path) -> None:
    require_binaries()
    require_nodes()
    before = HostState.read()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path)],
                             stdout=subprocess.PIPE, text=True, env=env,
                             start_new_session=True)
    try:
        assert child.stdout is not None
        # the child's nodes up and a Pod running (bounded: the child waits
        # for another run's nodes at most nodes.LOCK_TIMEOUT)
        ready, _, _ = select.select([child.stdout], [], [], 540)
        assert ready, "the child's nodes not up within 540 s"
        root = Path(child.stdout.readline().strip())
        assert root.is_dir() and before.differences(HostState.read()) != []
    finally:
        child.kill()
        child.wait(30)
    # the guard puts the host back, then says what it left (nothing)
    until(lambda: (root / "host-left.txt").exists(), "the guard's end", timeout=180)
    assert (root / "host-left.txt").read_text() == ""
    # the control plane's own processes (a test's atexit does not run
    # under SIGKILL): stopped here, they touch nothing of the host
    for pid in _processes_under(tmp_path):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(root)
    assert before.differences(HostState.read()) == []


def _processes_under(path: Path) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and str(path).encode() in (p / "cmdline").read_bytes():
                out.append(int(p.name))
        except OSError:
            pass
    return out
