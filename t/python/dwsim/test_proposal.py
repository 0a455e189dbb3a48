"""nnf-sos Proposal checks of whole workflows (spec §2.4B)."""

from __future__ import annotations

import pytest

from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim.proposal import Cluster, staging_name, validate_workflow

LUS = Cluster(
    psis={"pers": {"metadata": {}, "spec": {"fsType": "lustre", "userID": 1000}},
          "rawp": {"metadata": {}, "spec": {"fsType": "raw", "userID": 1000}},
          "theirs": {"metadata": {}, "spec": {"fsType": "lustre", "userID": 9}},
          "anyone": {"metadata": {"annotations": {"dataworkflowservices.github.io/ignore-uid":
                                                  "true"}},
                     "spec": {"fsType": "gfs2", "userID": 7}},
          "going": {"metadata": {"deletionTimestamp": "x"}, "spec": {"fsType": "xfs",
                                                                     "userID": 1000}}},
    lustre_roots=["/lus/global"],
    container_profiles={
        "foo": {"data": {"storages": [{"name": "DW_JOB_foo_local_storage"},
                                      {"name": "DW_PERSISTENT_foo_persistent_storage",
                                       "optional": True},
                                      {"name": "DW_GLOBAL_lus", "optional": True}]}},
        "mine": {"data": {"storages": [], "userID": 42}},
        "pinned": {"data": {"pinned": True, "storages": []}},
    },
)


def wf(*directives, uid=1000, gid=1000):
    return {"spec": {"dwDirectives": list(directives), "userID": uid, "groupID": gid}}


JOB = "#DW jobdw type=xfs capacity=1GiB name=my-job"


def test_staging_name():
    assert staging_name("$DW_JOB_my_job/in/x") == "my-job"
    assert staging_name("$DW_PERSISTENT_p") == "p"
    assert staging_name("/lus/global/x") == ""


@pytest.mark.parametrize("directives", [
    (JOB, "#DW copy_in source=/lus/global/in destination=$DW_JOB_my_job/in"),
    ("#DW persistentdw name=pers",
     "#DW copy_out source=$DW_PERSISTENT_pers/o destination=/lus/global/o"),
    ("#DW persistentdw name=anyone",),
    ("#DW create_persistent type=lustre capacity=1TiB name=new",),
    ("#DW jobdw type=gfs2 capacity=1GiB name=g2",
     "#DW container name=cc profile=foo DW_JOB_foo_local_storage=g2"
     " DW_GLOBAL_lus=/lus/global/x"),
])
def test_valid(directives):
    validate_workflow(wf(*directives), LUS)


@pytest.mark.parametrize(("directives", "message"), [
    ((JOB, "#DW copy_in source=/lus/global/in destination=$DW_JOB_other/in"),
     "User error: job storage instance 'other' not found"),
    (("#DW jobdw type=raw capacity=1GiB name=rr", "#DW copy_in source=/lus/global/a"
      " destination=$DW_JOB_rr/"),
     "User error: data movement can not be used with raw allocations"),
    ((JOB, "#DW copy_in source=/elsewhere/in destination=$DW_JOB_my_job/in"),
     "User error: global Lustre file system containing '/elsewhere/in' not found"),
    (("#DW copy_in source=$DW_PERSISTENT_nope/a destination=/lus/global/b",),
     "User error: persistent storage instance 'nope' not found"),
    (("#DW copy_in source=$DW_PERSISTENT_rawp/a destination=/lus/global/b",),
     "User error: persistent storage instance 'rawp' not found"),
    (("#DW copy_in source=$DW_PERSISTENT_pers/a destination=/lus/global/b",),
     "User error: persistentdw directive mentioning 'pers' not found"),
    (("#DW persistentdw name=nope",), "User error: PersistentStorageInstance 'nope' not found"),
    (("#DW persistentdw name=going",),
     "User error: Persistent storage instance 'going' is deleting"),
    (("#DW persistentdw name=theirs",),
     "User error: User ID does not match existing persistent storage"),
    ((JOB, "#DW create_persistent type=xfs capacity=1GiB name=pp"),
     "User error: only a single create_persistent or destroy_persistent directive is allowed per"
     " workflow"),
    (("#DW container name=aa profile=pinned", "#DW container name=bb profile=pinned"),
     "Internal error: no valid container profile found"),
    (("#DW container name=aa profile=mine",),
     "User error: container profile 'mine' is restricted to UserID 42"),
    (("#DW jobdw type=xfs capacity=1GiB name=x1",
      "#DW container name=cc profile=foo DW_JOB_foo_local_storage=x1"),
     "User error: unsupported container filesystem: xfs"),
    (("#DW jobdw type=gfs2 capacity=1GiB name=g2", "#DW container name=cc profile=foo"
      " DW_JOB_other=g2 DW_JOB_foo_local_storage=g2"),
     "User error: storage 'DW_JOB_other' not found in container profile 'foo'"),
    (("#DW container name=cc profile=foo DW_JOB_foo_local_storage=none",),
     "User error: jobdw directive mentioning 'none' not found"),
    (("#DW container name=cc profile=foo",),
     "User error: storage 'DW_JOB_foo_local_storage' in container profile 'foo' is not optional:"
     " storage argument not found in the supplied arguments"),
])
def test_refused(directives, message):
    with pytest.raises(rerr.ResourceError) as exc:
        validate_workflow(wf(*directives), LUS)
    assert str(exc.value) == message
    assert exc.value.severity == "Fatal"
