"""nnf-sos: semantic checks of a whole Workflow in Proposal (§2.4B).

``validate_workflow`` is nnf-sos' validateWorkflow: it runs in the start of
every Proposal driver, stops at the first error and raises a ResourceError
(its user message is the innermost one, as DWS' wrapping keeps it).  The
objects it consults come from a ``Cluster`` view so that it stays pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flux_dws.dwsim import resource_error as rerr
from flux_dws.libdws.directives import parse_directive

IGNORE_UID = "dataworkflowservices.github.io/ignore-uid"


@dataclass
class Cluster:
    """What validation looks up, in the workflow's namespace."""

    psis: dict[str, dict[str, Any]] = field(default_factory=dict)       # by name
    lustre_roots: list[str] = field(default_factory=list)               # spec.mountRoot
    container_profiles: dict[str, dict[str, Any]] = field(default_factory=dict)  # nnf-system


def _args(directive: str) -> tuple[str, dict[str, str]]:
    command, args = parse_directive(directive)
    return command, {k: (v or "") for k, v in args}


def _find(directives: list[str], name: str, command: str) -> int:
    for i, d in enumerate(directives):
        c, a = _args(d)
        if c == command and a.get("name") == name:
            return i
    return -1


def staging_name(arg: str) -> str:
    for prefix in ("$DW_JOB_", "$DW_PERSISTENT_"):
        if arg.startswith(prefix):
            return arg[len(prefix):].split("/", 1)[0].replace("_", "-")
    return ""


def _lustre_has(cluster: Cluster, path: str) -> bool:
    return any(root and path.startswith(root) for root in cluster.lustre_roots)


def _psi_usable(cluster: Cluster, name: str) -> dict[str, Any] | None:
    psi = cluster.psis.get(name)
    if psi is None or psi.get("metadata", {}).get("deletionTimestamp"):
        return None
    return psi


def _check_staging(directives: list[str], cluster: Cluster, arg: str) -> None:
    name = staging_name(arg)
    if arg.startswith("$DW_JOB_"):
        idx = _find(directives, name, "jobdw")
        if idx < 0:
            raise rerr.user(f"job storage instance '{name}' not found")
        if _args(directives[idx])[1].get("type") == "raw":
            raise rerr.user("data movement can not be used with raw allocations")
    elif arg.startswith("$DW_PERSISTENT_"):
        psi = _psi_usable(cluster, name)
        if psi is None or psi.get("spec", {}).get("fsType") == "raw":
            raise rerr.user(f"persistent storage instance '{name}' not found")
        if _find(directives, name, "persistentdw") < 0:
            raise rerr.user(f"persistentdw directive mentioning '{name}' not found")
    elif not _lustre_has(cluster, arg):
        raise rerr.user(f"global Lustre file system containing '{arg}' not found")


def _check_persistentdw(wf: dict[str, Any], cluster: Cluster, name: str) -> None:
    psi = cluster.psis.get(name)
    if psi is None:
        raise rerr.user(f"PersistentStorageInstance '{name}' not found")
    md = psi.get("metadata", {})
    if md.get("deletionTimestamp"):
        raise rerr.user(f"Persistent storage instance '{name}' is deleting")
    owner, user = psi.get("spec", {}).get("userID"), wf["spec"].get("userID")
    if (str((md.get("annotations") or {}).get(IGNORE_UID, "")).lower() != "true"
            and owner != user):
        # nnf-sos #609; the annotation (#616) lets any user's persistentdw in
        raise rerr.ResourceError(
            "User ID does not match existing persistent storage",
            f"existing persistent storage user ID {owner} does not match user ID {user}",
            type="User")


def _check_container(wf: dict[str, Any], cluster: Cluster, index: int) -> None:
    directives = wf["spec"]["dwDirectives"]
    _, args = _args(directives[index])
    pname = args.get("profile", "")
    profile = cluster.container_profiles.get(pname)
    if profile is None or profile.get("data", {}).get("pinned"):
        raise rerr.internal("no valid container profile found")
    data = profile.get("data", {})
    uid, gid = data.get("userID"), data.get("groupID")
    if uid is not None and uid != wf["spec"].get("userID"):
        raise rerr.user(f"container profile '{pname}' is restricted to UserID {uid}")
    if gid is not None and gid != wf["spec"].get("groupID"):
        raise rerr.user(f"container profile '{pname}' is restricted to GroupID {gid}")
    storages = {s.get("name"): s for s in data.get("storages", [])}

    def fs_of(idx: int) -> str:
        command, a = _args(directives[idx])
        if command == "persistentdw":
            return str(cluster.psis.get(a.get("name", ""), {}).get("spec", {}).get("fsType", ""))
        return a.get("type", "")

    def check_fs(idx: int) -> None:
        t = fs_of(idx)
        if t.lower() not in ("lustre", "gfs2", "raw"):
            raise rerr.user(f"unsupported container filesystem: {t}")

    def in_profile(arg: str) -> None:
        if arg not in storages:
            raise rerr.user(f"storage '{arg}' not found in container profile '{pname}'")

    supplied = []
    for arg, value in args.items():
        if arg in ("name", "profile"):
            continue
        if arg.startswith("DW_JOB_"):
            idx = _find(directives, value, "jobdw")
            if idx < 0:
                raise rerr.user(f"jobdw directive mentioning '{value}' not found")
            check_fs(idx)
            in_profile(arg)
        elif arg.startswith("DW_PERSISTENT_"):
            psi = cluster.psis.get(value)
            if psi is None:
                raise rerr.user(f"PersistentStorageInstance '{value}' not found")
            if psi.get("metadata", {}).get("deletionTimestamp"):
                raise rerr.user(f"Persistent storage instance '{value}' is deleting")
            idx = _find(directives, value, "persistentdw")
            if idx < 0:
                raise rerr.user(f"persistentdw directive mentioning '{value}' not found")
            check_fs(idx)
            in_profile(arg)
        elif arg.startswith("DW_GLOBAL_"):
            if not _lustre_has(cluster, value):
                raise rerr.user(f"global Lustre file system containing '{value}' not found")
            in_profile(arg)
        else:
            raise rerr.user(f"unrecognized container argument: {arg}")
        supplied.append(arg)
    for sname, s in storages.items():
        if not s.get("optional") and sname not in supplied:
            raise rerr.user(f"storage '{sname}' in container profile '{pname}' is not optional:"
                            " storage argument not found in the supplied arguments")


def validate_workflow(wf: dict[str, Any], cluster: Cluster) -> None:
    """Raise the ResourceError nnf-sos reports for this Workflow, if any."""
    directives = wf["spec"].get("dwDirectives") or []
    persistent = containers = 0
    for index, directive in enumerate(directives):
        command, args = _args(directive)
        if command in ("copy_in", "copy_out"):
            _check_staging(directives, cluster, args.get("source", ""))
            _check_staging(directives, cluster, args.get("destination", ""))
        elif command in ("create_persistent", "destroy_persistent"):
            persistent += 1
        elif command == "persistentdw":
            _check_persistentdw(wf, cluster, args.get("name", ""))
        elif command == "container":
            containers += 1
            _check_container(wf, cluster, index)
    if len(directives) > 1:
        if persistent:
            raise rerr.user("only a single create_persistent or destroy_persistent directive"
                            " is allowed per workflow")
        if containers > 1:
            raise rerr.user("only a single container directive is supported per workflow")
