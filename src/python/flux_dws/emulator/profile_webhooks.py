"""nnf-sos' validating webhooks for its profiles (doc/guide/emulator.rst).

NnfStorageProfile, NnfContainerProfile and NnfDataMovementProfile share
the pinning rules: a profile users may select (not pinned) lives in
``nnf-system``; the ``pinned`` flag never changes; the data of a pinned
container or data-movement profile never changes (a storage profile's
may).  A storage profile is also checked for content: not both default and
pinned, the Lustre MGT choices that exclude each other, ``count`` and
``scale`` not both on a Lustre target, and ``variableOverride`` keys from
nnf-sos' fixed list.  A refusal is a 403 worded as the API server words a
webhook denial.
"""

from __future__ import annotations

from typing import Any

from flux_dws.apiserver.api_resources import NNF
from flux_dws.apiserver.store import ApiError, StoreApi

PROFILE_NAMESPACE = "nnf-system"
WEBHOOKS = {"nnfstorageprofiles": "vnnfstorageprofile.kb.io",
            "nnfcontainerprofiles": "vnnfcontainerprofile.kb.io",
            "nnfdatamovementprofiles": "vnnfdatamovementprofile.kb.io"}
VARIABLES = frozenset((
    "$FS_NAME", "$MGS_NID", "$INDEX", "$BACKFS", "$POOL_NAME", "$ZPOOL_NAME",
    "$ZPOOL_DATA_SET", "$ZVOL_NAME", "$DEVICE", "$DEVICE_LIST", "$DEVICE_NUM", "$MOUNT_PATH",
    "$TARGET_TYPE", "$TARGET_PATH", "$VG_NAME", "$LV_NAME", "$LV_SIZE", "$LV_INDEX",
    "$PERCENT_VG", "$FSTYPE", "$MOUNT_TARGET", "$TEMP_DIR", "$JOBID", "$USERID", "$GROUPID",
    "$CLUSTER_NAME", "$LOCK_SPACE", "$PROTOCOL", "$NUM_OSTS", "$NUM_NNFNODES"))
LUSTRE_TARGETS = ("mgtOptions", "mdtOptions", "mgtMdtOptions", "ostOptions")


class Denied(Exception):
    """What the webhook answers; the caller words it as the API server does."""


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _overrides(where: str, value: Any) -> None:
    for key in _obj(value):
        if key == "":
            raise Denied(f"{where}variableOverride key cannot be empty")
        if not key.startswith("$"):
            raise Denied(f"{where}variableOverride key '{key}' must start with '$'")
        if key not in VARIABLES:
            raise Denied(f"{where}variableOverride key '{key}' is not a recognized variable"
                         f" name")


def check_storage_profile_data(data: dict[str, Any]) -> None:
    """validateContent of an NnfStorageProfile's data; raises Denied."""
    if data.get("default") and data.get("pinned"):
        raise Denied("the NnfStorageProfile cannot be both default and pinned")
    lustre = _obj(data.get("lustreStorage"))
    mgt = _obj(lustre.get("mgtOptions"))
    if lustre.get("combinedMgtMdt") and mgt.get("externalMgs"):
        raise Denied("cannot set both combinedMgtMdt and externalMgs")
    if mgt.get("standaloneMgtPoolName") and mgt.get("externalMgs"):
        raise Denied("cannot set both standaloneMgtPoolName and externalMgs")
    if mgt.get("standaloneMgtPoolName") and lustre.get("combinedMgtMdt"):
        raise Denied("cannot set standaloneMgtPoolName and combinedMgtMdt")
    for target in LUSTRE_TARGETS:
        opts = _obj(lustre.get(target))
        if (opts.get("count") or 0) > 0 and (opts.get("scale") or 0) > 0:
            raise Denied("count and scale cannot both be specified in Lustre target options")
        _overrides("", opts.get("variableOverride"))
    _overrides("", _obj(lustre.get("clientOptions")).get("variableOverride"))
    for key in ("xfsStorage", "gfs2Storage", "rawStorage"):
        _overrides(f"{key}: ", _obj(data.get(key)).get("variableOverride"))


def check_profile(plural: str, op: str, old: dict[str, Any] | None,
                  new: dict[str, Any]) -> None:
    """The webhook of profile kind ``plural`` on CREATE or UPDATE; raises Denied."""
    data = _obj(new.get("data"))
    if op == "CREATE":
        ns = new.get("metadata", {}).get("namespace")
        if not data.get("pinned") and ns != PROFILE_NAMESPACE:
            raise Denied(f"incorrect namespace for profile that is intended to be selected by"
                         f" users; the namespace should be '{PROFILE_NAMESPACE}'")
    else:
        old_data = _obj((old or {}).get("data"))
        if bool(old_data.get("pinned")) != bool(data.get("pinned")):
            raise Denied("the pinned flag is immutable")
        # only a storage profile's data may change once pinned
        if plural != "nnfstorageprofiles" and old_data.get("pinned") and old_data != data:
            raise Denied("update on pinned resource not allowed")
    if plural == "nnfstorageprofiles":
        check_storage_profile_data(data)


def install(store: StoreApi) -> None:
    """Register the three profile webhooks with the store's admission."""
    for plural, webhook in WEBHOOKS.items():
        def admit(op: str, old: dict[str, Any] | None, new: dict[str, Any],
                  plural: str = plural, webhook: str = webhook) -> dict[str, Any]:
            try:
                check_profile(plural, op, old, new)
            except Denied as exc:
                raise ApiError(403, "Forbidden", f'admission webhook "{webhook}" denied the'
                                                 f" request: {exc}") from None
            return new
        store.admission[(NNF, plural)] = admit
