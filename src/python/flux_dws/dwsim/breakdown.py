"""nnf-sos: the DirectiveBreakdown status for a directive (§3.1-§3.4).

``storage_breakdown`` builds ``status.storage.allocationSets`` from a jobdw
or create_persistent directive and the pinned NnfStorageProfile ``data``;
``compute_breakdown`` builds ``status.compute`` for jobdw.  Errors are
ResourceErrors with nnf-sos' user messages.
"""

from __future__ import annotations

from typing import Any

from flux_dws.dwsim import resource_error as rerr
from flux_dws.libdws.directives import DirectiveError, parse_capacity, parse_directive

STORAGE_LABEL = "dataworkflowservices.github.io/storage=Rabbit"
_PER_COMPUTE_KEY = {"raw": "rawStorage", "xfs": "xfsStorage", "gfs2": "gfs2Storage"}
_TARGET_KEY = {"ost": "ostOptions", "mdt": "mdtOptions", "mgt": "mgtOptions",
               "mgtmdt": "mgtMdtOptions"}


def section(data: dict[str, Any], key: str) -> dict[str, Any]:
    """A profile section; absent, null or not an object reads as empty (Go's
    zero value), so a profile with ``lustreStorage: null`` is no crash."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _capacity(text: str | None) -> int:
    try:
        return parse_capacity(text or "")
    except DirectiveError:
        return 0  # nnf ignores the error and treats the capacity as 0


def scaled_and_padded(capacity: int, options: dict[str, Any]) -> int:
    """getScaledAndPaddedCapacity: scaling factor, then % or size padding."""
    factor = options.get("capacityScalingFactor", "")
    if factor:
        try:
            capacity = int(float(factor) * capacity)
        except ValueError:
            raise rerr.internal("invalid capacityScalingFactor for gfs2 allocation") from None
    padding = options.get("allocationPadding", "")
    if not padding:
        return capacity
    if padding.endswith("%"):
        try:
            pct = float(padding[:-1])
        except ValueError:
            raise rerr.internal("invalid allocationPadding percentage") from None
        return int(pct * 0.01 * capacity) + capacity
    try:
        return capacity + parse_capacity(padding)
    except DirectiveError:
        raise rerr.internal("invalid allocationPadding value") from None


def _set(strategy: str, capacity: int, label: str, options: dict[str, Any],
         colocation: dict[str, str] | None = None) -> dict[str, Any]:
    constraints: dict[str, Any] = {
        "labels": [*(options.get("storageLabels") or []), STORAGE_LABEL]}
    if options.get("scale"):
        constraints["scale"] = options["scale"]
    if options.get("count"):
        constraints["count"] = options["count"]
    if colocation is not None:
        constraints["colocation"] = [colocation]
    return {"allocationStrategy": strategy, "minimumCapacity": capacity, "label": label,
            "constraints": constraints}


def storage_breakdown(directive: str, profile: dict[str, Any]) -> list[dict[str, Any]]:
    """allocationSets for a jobdw/create_persistent directive."""
    command, args = parse_directive(directive)
    argmap = {k: (v or "") for k, v in args}
    fs = argmap.get("type", "")
    lustre = section(profile, "lustreStorage")
    if command == "create_persistent":
        # the PSI controller's capacity rule: a standalone MGT has a fixed
        # size, every other persistent file system needs one
        standalone = fs == "lustre" and section(lustre, "mgtOptions").get(
            "standaloneMgtPoolName")
        if standalone and "capacity" in argmap:
            raise rerr.user("creating persistent MGT does not accept 'capacity' argument")
        if not standalone and "capacity" not in argmap:
            raise rerr.user("creating persistent storage requires 'capacity' argument")
    capacity = _capacity(argmap.get("capacity"))
    if capacity == 0 and "capacity" in argmap:
        raise rerr.internal("'capacity' must be a non-zero value")
    if fs in _PER_COMPUTE_KEY:
        opts = section(profile, _PER_COMPUTE_KEY[fs])
        return [_set("AllocatePerCompute", scaled_and_padded(capacity, opts), fs, opts)]
    if fs != "lustre":
        raise rerr.internal("invalid DW directive", f"invalid DW directive file system type: {fs}")
    ost = section(lustre, "ostOptions")
    try:
        ost_cap = int(float(ost.get("capacityScalingFactor", "1.0")) * capacity)
    except ValueError:
        raise rerr.internal("invalid capacityScalingFactor for lustre allocation") from None
    mdt_cap = _capacity(section(lustre, "mdtOptions").get("capacity", "5GiB"))
    mgt_cap = _capacity(section(lustre, "mgtOptions").get("capacity", "5GiB"))
    mgt_key = {"type": "exclusive", "key": "lustre-mgt"}
    mdt_key = {"type": "exclusive", "key": ""} if section(lustre, "mdtOptions").get(
        "exclusive") else None
    parts: list[tuple[str, int, str, dict[str, str] | None]] = [
        ("AllocateAcrossServers", ost_cap, "ost", None)]
    mgt = section(lustre, "mgtOptions")
    if lustre.get("combinedMgtMdt"):
        parts.append(("AllocateAcrossServers", mdt_cap, "mgtmdt", mdt_key or mgt_key))
    elif mgt.get("externalMgs"):
        parts.append(("AllocateAcrossServers", mdt_cap, "mdt", mdt_key))
    elif mgt.get("standaloneMgtPoolName"):
        if command != "create_persistent":
            raise rerr.user("standaloneMgtPoolName option can only be used with"
                            " 'create_persistent' directive")
        parts = [("AllocateSingleServer", mgt_cap, "mgt", mgt_key)]
    else:
        parts.append(("AllocateAcrossServers", mdt_cap, "mdt", mdt_key))
        parts.append(("AllocateSingleServer", mgt_cap, "mgt", mgt_key))
    return [_set(strategy, cap, label, section(lustre, _TARGET_KEY[label]), key)
            for strategy, cap, label, key in parts]


def compute_breakdown(directive: str, profile: dict[str, Any], servers_name: str,
                      namespace: str, allocation_sets: list[dict[str, Any]]) -> dict[str, Any]:
    """status.compute for a jobdw: one location constraint per allocation set."""
    _, args = parse_directive(directive)
    fs = dict(args).get("type") or ""
    lustre = section(profile, "lustreStorage")
    location = []
    for k, aset in enumerate(allocation_sets):
        if fs == "lustre":
            access = [{"type": "network", "priority": "mandatory"}]
            opts = section(lustre, _TARGET_KEY.get(aset["label"], ""))
            if opts.get("colocateComputes"):
                access.append({"type": "physical", "priority": "bestEffort"})
        elif fs == "gfs2":
            access = [{"type": "network", "priority": "mandatory"},
                      {"type": "physical", "priority": "mandatory"}]
        else:
            access = [{"type": "physical", "priority": "mandatory"}]
        location.append({"access": access, "reference": {
            "kind": "Servers", "name": servers_name, "namespace": namespace,
            "fieldPath": f"servers.spec.allocationSets[{k}]"}})
    return {"constraints": {"location": location}}


def persistent_compute_breakdown(servers: dict[str, Any], namespace: str) -> dict[str, Any]:
    """status.compute for a persistentdw: one constraint per allocation set of
    the PSI's Servers spec.  nnf-sos picks the access type from the
    directive's ``type`` argument, which persistentdw lacks, so it is always
    physical/mandatory, even for Lustre (a quirk kept on purpose)."""
    name = servers.get("metadata", {}).get("name", "")
    sets = (servers.get("spec") or {}).get("allocationSets") or []
    return {"constraints": {"location": [
        {"access": [{"type": "physical", "priority": "mandatory"}],
         "reference": {"kind": "Servers", "name": name, "namespace": namespace,
                       "fieldPath": f"servers.spec.allocationSets[{k}]"}}
        for k in range(len(sets))]}}
