"""A job cancelled in any state: Teardown from every state, ready or still
working, leaves nothing behind once the WLM deletes the Workflow.

The workflow uses every kind of object nnf-sos makes for a job: gfs2
storage (breakdown, Servers, pinned profile, NnfStorage, ClientMounts,
NnfAccesses), copy_in and copy_out (pinned DM profiles, NnfDataMovements),
an MPI container with a port and user-container auth (pinned container
profile, token Secrets, port allocation, Service, MPIJob, Pods).
"""

from __future__ import annotations

import pytest
from t.python.emulator.conftest import (
    NNF,
    NV,
    G,
    V,
    eventually,
    fill_servers,
    finish,
    new_workflow,
    port_manager,
    to,
    wait,
)

from flux_dws.apiserver.api_resources import RESOURCES
from flux_dws.emulator.faults import Fault


@pytest.fixture
def kind(kind):
    """conftest's kind system, retrying failed reconciles after 0.1 s."""
    kind.controllers.retry_seconds = 0.1
    return kind

DIRECTIVES = [
    "#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2 requires=user-container-auth",
    "#DW copy_in source=/lus/global/in destination=$DW_JOB_my_gfs2/",
    "#DW container name=mpic profile=example-mpi DW_JOB_foo_local_storage=my-gfs2",
    "#DW copy_out source=$DW_JOB_my_gfs2/out destination=/lus/global/out",
]
ORDER = ["Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut"]


def everything(emu):
    """Every object in the store but the ones that record time passing."""
    return {(r.plural, o["metadata"].get("namespace", ""), o["metadata"]["name"])
            for r in RESOURCES if r.plural not in ("events", "leases")
            for o in emu.store.list_objects(r, None)}


def go_to(api, name, last):
    """Walk the workflow to ``last`` (ready); the WLM's work done on the way."""
    if last != "Proposal":
        to(api, name, DIRECTIVES, last)
        return
    new_workflow(api, name, DIRECTIVES)
    wait(api, name, "Proposal")
    fill_servers(api, name, "compute-[01-04]")


def assert_torn_down(kind, api, name, before):
    wf = wait(api, name, "Teardown")
    assert wf["status"]["status"] == "Completed"
    for group, version, plural in (
            (G, V, "clientmounts"), (NNF, NV, "nnfstorages"), (NNF, NV, "nnfaccesses"),
            (NNF, NV, "nnfdatamovements"), ("kubeflow.org", "v2beta1", "mpijobs")):
        assert api.list_cluster_custom_object(group, version, plural)["items"] == [], plural
    pm = port_manager(api)
    assert pm["spec"]["allocations"] == [] and pm["status"]["allocations"] == []
    finish(api, name)
    # Pods go with their owners through garbage collection: give it a moment
    eventually(lambda: everything(kind) == before)


@pytest.mark.parametrize("last", ORDER)
def test_teardown_after_each_state(kind, last):
    api = kind.custom_objects_api()
    before = everything(kind)
    go_to(api, "cx", last)
    assert everything(kind) > before  # the job's objects exist ...
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "cx",
                                       {"spec": {"desiredState": "Teardown"}})
    assert_torn_down(kind, api, "cx", before)  # ... and all are gone


STATUS_OF = {"Fatal": "Error", "Major": "TransientCondition", "stall": "DriverWait"}
# (state, fault): the state stays unfinished when the WLM gives up on it
STUCK = [
    ("Proposal", Fault(state="Proposal", severity="stall")),
    ("Setup", Fault(state="Setup", severity="stall")),
    ("Setup", Fault(state="Setup", severity="Fatal", type="User", message="no room")),
    ("DataIn", Fault(kind="datamovement", state="DataIn", index=1, severity="stall")),
    ("DataIn", Fault(kind="datamovement", state="DataIn", index=1, severity="Fatal",
                     message="copy failed")),
    ("PreRun", Fault(kind="container", state="PreRun", severity="stall")),
    ("PreRun", Fault(kind="clientmount", compute="compute-03", severity="Major",
                     message="no route")),
    ("PostRun", Fault(kind="container", state="PostRun", severity="stall")),
    ("DataOut", Fault(kind="datamovement", state="DataOut", index=3, severity="stall")),
]


@pytest.mark.parametrize(("state", "fault"), STUCK,
                         ids=[f"{s}-{f.kind}-{f.severity}" for s, f in STUCK])
def test_teardown_of_an_unfinished_state(kind, state, fault):
    api = kind.custom_objects_api()
    before = everything(kind)
    kind.controllers.faults.add(fault)
    if state == "Proposal":
        new_workflow(api, "cx", DIRECTIVES)
    else:
        go_to(api, "cx", ORDER[ORDER.index(state) - 1])
        api.patch_namespaced_custom_object(G, V, "default", "workflows", "cx",
                                           {"spec": {"desiredState": state}})
    wf = wait(api, "cx", state, want=STATUS_OF[fault.severity])
    assert wf["status"]["ready"] is False
    assert everything(kind) > before
    # the WLM cancels the job: Teardown is legal from an unfinished state
    api.patch_namespaced_custom_object(G, V, "default", "workflows", "cx",
                                       {"spec": {"desiredState": "Teardown"}})
    kind.controllers.faults.clear()  # the cause may go away; Teardown must not need it to
    assert_torn_down(kind, api, "cx", before)

