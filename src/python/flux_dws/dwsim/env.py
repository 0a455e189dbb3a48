"""nnf-sos: the environment a Workflow publishes at the end of PreRun (§4.5).

For each jobdw / persistentdw directive, in order, nnf-sos adds:

- ``DW_JOB_<name>`` / ``DW_PERSISTENT_<name>`` ('-' becomes '_'): the
  compute mount path;
- ``DW_JOB_<TYPE>`` / ``DW_PERSISTENT_<TYPE>`` for the first file system of
  a type -- persistentdw has no type argument, so its key is the literal
  ``DW_PERSISTENT_`` (a quirk kept on purpose);
- ``DW_JOBS`` / ``DW_PERSISTENTS``: ``name:path`` pairs joined by ','.

The path is ``<prefix>/<workflow uid>-<index>`` (prefix COMPUTE_MOUNT_PREFIX,
default /mnt/nnf), or the pinned profile's ``variableOverride["$MOUNT_PATH"]``
(``lustreStorage.clientOptions.variableOverride`` for Lustre) with $JOBID,
$DIRECTIVE_INDEX, $WORKFLOW_UID, $USERID and $GROUPID substituted.
"""

from __future__ import annotations

import posixpath
from typing import Any

from flux_dws.dwsim.breakdown import section
from flux_dws.libdws.directives import parse_directive

DEFAULT_PREFIX = "/mnt/nnf"


def mount_path(wf: dict[str, Any], profile: dict[str, Any], fs_type: str, index: int,
               prefix: str = DEFAULT_PREFIX) -> str:
    uid = wf["metadata"].get("uid", "")
    # Go's filepath.Clean: unlike posixpath.normpath it folds a leading "//"
    path = "/" + posixpath.normpath(f"/{prefix}/{uid}-{index}").lstrip("/")
    if fs_type == "lustre":
        override = section(section(section(profile, "lustreStorage"), "clientOptions"),
                           "variableOverride")
    else:
        key = {"xfs": "xfsStorage", "gfs2": "gfs2Storage", "raw": "rawStorage"}.get(fs_type, "")
        override = section(section(profile, key), "variableOverride")
    path = str(override.get("$MOUNT_PATH") or path)
    spec = wf["spec"]
    for var, value in (("$JOBID", str(spec.get("jobID", ""))), ("$DIRECTIVE_INDEX", str(index)),
                       ("$WORKFLOW_UID", uid), ("$USERID", str(spec.get("userID", ""))),
                       ("$GROUPID", str(spec.get("groupID", "")))):
        path = path.replace(var, value)
    return path


def add_storage_env(env: dict[str, str], directive: str, path: str) -> dict[str, str]:
    """The env after publishing one jobdw/persistentdw directive's path."""
    command, args = parse_directive(directive)
    argmap = {k: (v or "") for k, v in args}
    name = argmap.get("name", "")
    if command == "jobdw":
        unique, common, listname = "DW_JOB_", "DW_JOB_", "DW_JOBS"
    elif command == "persistentdw":
        unique, common, listname = "DW_PERSISTENT_", "DW_PERSISTENT_", "DW_PERSISTENTS"
    else:
        return dict(env)
    out = dict(env)
    out[unique + name.replace("-", "_")] = path
    out.setdefault(common + argmap.get("type", "").upper(), path)
    pair = f"{name}:{path}"
    items = out[listname].split(",") if listname in out else []
    if pair not in items:
        out[listname] = ",".join([*items, pair])
    return out
