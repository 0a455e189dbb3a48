"""nnf-sos: what an NnfSystemStorage asks for (nnfsystemstorage_controller.go).

A site or a test creates an NnfSystemStorage to hold storage on rabbits
outside any WLM.  nnf-sos answers with a Servers, a Computes, an NnfStorage
and an NnfAccess of the same name and namespace.  These functions make the
decisions: which rabbits (``includeRabbits``, or the SystemConfiguration's
minus ``excludeRabbits``, minus disabled or not-Ready ones with
``excludeDisabledRabbits``), how many allocations on each (1 when shared,
else 16, 8 or the pattern's length by ``computesTarget``), which computes
(``includeComputes``, or those of the chosen rabbits at the target's
indexes minus ``excludeComputes``) and the children's specs.  Errors are
ResourceErrors with nnf-sos' texts.
"""

from __future__ import annotations

from typing import Any

from flux_dws.dwsim import resource_error as rerr
from flux_dws.libdws.wfstates import POST_RUN

LABEL = "system-storage"
JOB_ID = "SystemStorage"
TARGETS = {"all": list(range(16)), "even": list(range(0, 16, 2)),
           "odd": list(range(1, 16, 2))}


def _fatal(msg: str) -> rerr.ResourceError:
    return rerr.internal("", msg)


def sysconfig_key(spec: dict[str, Any]) -> tuple[str, str]:
    """The SystemConfiguration to read: the named one, else default/default."""
    ref = spec.get("systemConfiguration") or {}
    if not ref:
        return "default", "default"
    if ref.get("kind") != "SystemConfiguration":
        raise _fatal("system configuration is not of kind 'SystemConfiguration'")
    return str(ref.get("namespace", "")), str(ref.get("name", ""))


def profile_key(spec: dict[str, Any]) -> tuple[str, str]:
    """The NnfStorageProfile it names (no default profile is looked for)."""
    ref = spec.get("storageProfile") or {}
    if not ref:
        raise _fatal("StorageProfile must be specified")
    if ref.get("kind") != "NnfStorageProfile":
        raise _fatal("StorageProfile is not of kind 'NnfStorageProfile'")
    return str(ref.get("namespace", "")), str(ref.get("name", ""))


def not_found(what: str, key: tuple[str, str], api_text: str) -> rerr.ResourceError:
    """A failed Get, as nnf-sos wraps it (Minor: retried)."""
    return rerr.internal("", f"could not get {what} '{key[0]}/{key[1]}': {api_text}",
                         severity="Minor")


def rabbits_needing_config(spec: dict[str, Any]) -> bool:
    """Whether choosing the rabbits reads the SystemConfiguration."""
    return not spec.get("includeRabbits")


def select_rabbits(spec: dict[str, Any], sysconfig: dict[str, Any] | None,
                   storages: dict[str, dict[str, Any] | None]) -> list[str]:
    """The rabbits, in SystemConfiguration (or includeRabbits) order.

    ``storages`` maps a rabbit to its Storage object (None: no such Storage);
    it is read only with ``excludeDisabledRabbits``.
    """
    include = list(spec.get("includeRabbits") or [])
    if include:
        if spec.get("excludeRabbits"):
            raise _fatal("IncludeRabbits and ExcludeRabbits can not be used together")
        rabbits = include
    else:
        exclude = set(spec.get("excludeRabbits") or [])
        rabbits = [n["name"] for n in ((sysconfig or {}).get("spec") or {}).get(
            "storageNodes") or [] if n.get("type") == "Rabbit" and n.get("name") not in exclude]
    if not spec.get("excludeDisabledRabbits"):
        return rabbits
    out = []
    for r in rabbits:
        st = storages.get(r)
        if st is None:
            raise not_found("Storage", ("default", r),
                            f'storages.dataworkflowservices.github.io "{r}" not found')
        labels = (st.get("metadata") or {}).get("labels") or {}
        if labels.get("dataworkflowservices.github.io/storage") != "Rabbit":
            continue
        if (st.get("spec") or {}).get("state") == "Disabled" or \
                (st.get("status") or {}).get("status") != "Ready":
            continue
        out.append(r)
    return out


def target_indexes(spec: dict[str, Any]) -> list[int]:
    target = spec.get("computesTarget", "all")
    if target == "pattern":
        return [int(i) for i in spec.get("computesPattern") or []]
    if target not in TARGETS:
        raise _fatal(f"unexpected ComputesTarget type '{target}'")
    return TARGETS[target]


def allocation_count(spec: dict[str, Any]) -> int:
    """Allocations per rabbit: one shared, else one per targeted compute slot."""
    if spec.get("shared", True):
        return 1
    return len(target_indexes(spec))


def select_computes(spec: dict[str, Any], sysconfig: dict[str, Any] | None,
                    rabbits: list[str]) -> list[str]:
    include = list(spec.get("includeComputes") or [])
    if include:
        if spec.get("excludeComputes"):
            raise _fatal("IncludeComputes and ExcludeComputes can not be used together")
        return include
    chosen, indexes = set(rabbits), set(target_indexes(spec))
    exclude = set(spec.get("excludeComputes") or [])
    out = []
    for node in ((sysconfig or {}).get("spec") or {}).get("storageNodes") or []:
        if node.get("type") != "Rabbit" or node.get("name") not in chosen:
            continue
        out += [c["name"] for c in node.get("computesAccess") or []
                if c.get("index") in indexes and c.get("name") not in exclude]
    return out


def servers_spec(spec: dict[str, Any], rabbits: list[str]) -> dict[str, Any]:
    count = allocation_count(spec)
    return {"allocationSets": [{
        "label": LABEL, "allocationSize": int(spec.get("capacity", 1 << 30)),
        "storage": [{"name": r, "allocationCount": count} for r in rabbits]}]}


def nnf_storage_spec(spec: dict[str, Any], meta: dict[str, Any],
                     servers: dict[str, Any]) -> dict[str, Any]:
    """The NnfStorage made from the Servers (``meta``: the NnfSystemStorage's
    metadata); a Minor ResourceError when every rabbit was left out."""
    sets = servers.get("allocationSets") or []
    if not any(s.get("storage") for s in sets):
        raise rerr.internal("", f"no Rabbits available for NnfStorage '{meta['namespace']}/"
                                f"{meta['name']}': all Rabbits are disabled or excluded",
                            severity="Minor")
    uid = meta.get("uid", "")
    pattern = [f"$COMPUTE{i}_HOSTNAME" for i in target_indexes(spec)]
    return {
        "fileSystemType": spec.get("type", "raw"), "userID": 0, "groupID": 0,
        "allocationSets": [{
            "name": s["label"], "capacity": s["allocationSize"], "sharedAllocation": True,
            "nodes": [{"name": e["name"], "count": e["allocationCount"]}
                      for e in s.get("storage") or []],
            "commandVariables": [
                {"name": "$JOBID", "indexed": False, "value": JOB_ID},
                {"name": "$DIRECTIVE_INDEX", "indexed": False, "value": "0"},
                {"name": "$WORKFLOW_UID", "indexed": False, "value": f"systemstorage-{uid}"},
                {"name": "$USERID", "indexed": False, "value": "0"},
                {"name": "$GROUPID", "indexed": False, "value": "0"},
                {"name": "$COMPUTE_HOSTNAME", "indexed": True, "indexedValues": pattern}],
        } for s in sets]}


def access_spec(spec: dict[str, Any], ns: str, name: str) -> dict[str, Any]:
    return {
        "teardownState": POST_RUN, "desiredState": "mounted", "userID": 0, "groupID": 0,
        "target": "shared" if spec.get("shared", True) else "single",
        "ignoreOfflineComputes": bool(spec.get("ignoreOfflineComputes")),
        "makeClientMounts": bool(spec.get("makeClientMounts")),
        "mountPath": spec.get("clientMountPath", ""),
        "clientReference": {"name": name, "namespace": ns, "kind": "Computes"},
        "storageReference": {"name": name, "namespace": ns, "kind": "NnfStorage"}}


def error_status(err: rerr.ResourceError) -> dict[str, Any]:
    """status.error as SetResourceError writes it (the debug text; no user
    message unless the error had one)."""
    out: dict[str, Any] = {"debugMessage": err.debug_message or err.user_message,
                           "type": err.type, "severity": err.severity}
    if err.user_message:
        out["userMessage"] = err.user_message
    return out
