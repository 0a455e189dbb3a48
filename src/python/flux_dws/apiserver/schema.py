"""What the CRDs enforce on write: types, required fields, enums, defaults,
and pruning of fields the schema does not know (as a real API server does
for structural schemas).

Schemas are written in a compact form here (our own reading of the DWS
and nnf-sos CRDs) for the fields doc/guide/emulator.rst lists (What the schemas check); a
sub-tree marked ``preserve`` keeps fields it does not list (as
``x-kubernetes-preserve-unknown-fields``), and kinds without a schema here
keep everything.  What is checked: JSON types (integer, string, boolean,
object, array, int-or-string), enums, required fields, minimum, maxLength;
``default`` values are filled in where the field is missing.  Unknown
fields are dropped (pruned) and reported to the caller so that the API
server can warn (fieldValidation=Warn) or refuse (Strict).  Violations
become ``422 Invalid`` with Kubernetes' wording, e.g.
``Workflow.dataworkflowservices.github.io "w" is invalid:
spec.desiredState: Unsupported value: "Bogus": supported values: ...``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from flux_dws.dwsim.gotime import RFC3339
from flux_dws.dwsim.storage import MODES, RESOURCE_STATUSES
from flux_dws.dwsim.storage import STATES as STORAGE_STATES
from flux_dws.libdws.wfstates import STATES

PRESERVE = "preserve"
DRIVER_STATUS = ["Pending", "Queued", "Running", "Completed", "TransientCondition", "Error",
                 "DriverWait"]


@dataclass
class S:
    """A schema node."""

    type: str = "object"                   # object array string integer boolean number any
    props: dict[str, S] = field(default_factory=dict)
    items: S | None = None
    values: S | None = None                # additionalProperties (maps)
    required: tuple[str, ...] = ()
    enum: tuple[Any, ...] = ()
    default: Any = None
    preserve: bool = False                 # x-kubernetes-preserve-unknown-fields
    int_or_string: bool = False
    minimum: int | None = None
    maximum: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None              # "date-time" (RFC 3339), as the CRDs declare


def obj(required: tuple[str, ...] = (), preserve: bool = False, **props: S) -> S:
    return S("object", props=props, required=required, preserve=preserve)


def m(values: S) -> S:
    return S("object", values=values)


def arr(items: S) -> S:
    return S("array", items=items)


STR, INT, BOOL, ANY = S("string"), S("integer"), S("boolean"), S("any")
TIME = S("string", format="date-time")   # metav1.Time / MicroTime
REF = obj(kind=STR, name=STR, namespace=STR, uid=STR, apiVersion=STR, fieldPath=STR,
          resourceVersion=STR)
RESOURCE_ERROR = obj(userMessage=STR, debugMessage=STR,
                     type=S("string", enum=("Internal", "User", "WLM")),
                     severity=S("string", enum=("Minor", "Major", "Fatal")))

WORKFLOW = obj(
    spec=obj(
        required=("desiredState", "dwDirectives", "forceReady", "groupID", "jobID", "userID",
                  "wlmID"),
        desiredState=S("string", enum=STATES),
        wlmID=STR, jobID=S("any", int_or_string=True), userID=INT, groupID=INT,
        dwDirectives=arr(STR), forceReady=S("boolean", default=False),
        hurry=S("boolean", default=False),
    ),
    status=obj(
        state=S("string", enum=STATES), ready=BOOL,
        status=S("string", enum=("Completed", "DriverWait", "TransientCondition", "Error")),
        message=STR, env=m(STR), requires=arr(STR),
        drivers=arr(obj(required=("completed", "driverID", "dwdIndex", "lastHB", "taskID",
                                  "watchState"),
                        driverID=STR, taskID=STR, dwdIndex=INT,
                        watchState=S("string", enum=STATES), lastHB=INT,
                        completed=BOOL, status=S("string", enum=tuple(DRIVER_STATUS)),
                        message=STR, error=STR, completeTime=TIME)),
        directiveBreakdowns=arr(REF), computes=REF,
        workflowToken=obj(secretName=STR, secretNamespace=STR),
        desiredStateChange=TIME, readyChange=TIME, elapsedTimeLastState=STR,
    ),
)

ALLOCATION_SET = obj(
    required=("allocationStrategy", "minimumCapacity", "label"),
    allocationStrategy=S("string", enum=("AllocatePerCompute", "AllocatePerServer",
                                         "AllocateAcrossServers", "AllocateSingleServer")),
    minimumCapacity=S("integer", minimum=1), label=STR,
    constraints=obj(labels=arr(STR), scale=INT, count=INT,
                    colocation=arr(obj(type=S("string", enum=("exclusive",)), key=STR))),
)
DIRECTIVE_BREAKDOWN = obj(
    spec=obj(directive=STR, userID=INT),
    status=obj(ready=BOOL, requires=arr(STR), error=RESOURCE_ERROR,
               storage=obj(lifetime=S("string", enum=("job", "persistent")), reference=REF,
                           allocationSets=arr(ALLOCATION_SET)),
               compute=obj(constraints=obj(location=arr(obj(
                   access=arr(obj(type=S("string", enum=("physical", "network")),
                                  priority=S("string", enum=("mandatory", "bestEffort")))),
                   reference=REF))))),
)
SERVERS = obj(
    spec=obj(allocationSets=arr(obj(
        required=("label", "allocationSize", "storage"),
        label=STR, allocationSize=S("integer", minimum=1),
        storage=arr(obj(required=("name", "allocationCount"), name=STR,
                        allocationCount=S("integer", minimum=1)))))),
    status=obj(ready=BOOL, lastUpdate=TIME, error=RESOURCE_ERROR,
               allocationSets=arr(obj(label=STR, storage=m(obj(allocationSize=INT,
                                                               ready=BOOL))))),
)
COMPUTES = obj(data=arr(obj(name=STR)))
STORAGE = obj(
    spec=obj(state=S("string", enum=STORAGE_STATES, default="Enabled"),
             mode=S("string", enum=MODES, default="Live")),
    status=obj(type=S("string", enum=("NVMe",)), capacity=S("integer", default=0),
               status=S("string", enum=RESOURCE_STATUSES), rebootRequired=BOOL,
               message=STR, devices=arr(obj(preserve=True)),
               access=obj(protocol=STR, servers=arr(obj(name=STR, status=STR)),
                          computes=arr(obj(name=STR, status=STR)))),
)
SYSTEM_CONFIGURATION = obj(
    spec=obj(storageNodes=arr(obj(type=STR, name=STR,
                                  computesAccess=arr(obj(name=STR, index=INT)))),
             externalComputeNodes=arr(obj(name=STR)),
             ports=arr(S("any", int_or_string=True)),
             portsCooldownInSeconds=S("integer", default=60)),
    status=obj(ready=BOOL, error=RESOURCE_ERROR),
)

PSI = obj(
    spec=obj(required=("dwDirective", "fsType", "name", "state", "userID"),
             name=STR, dwDirective=STR, userID=INT,
             fsType=S("string", enum=("raw", "xfs", "gfs2", "lustre")),
             state=S("string", enum=("Active", "Destroying")),
             consumerReferences=arr(REF)),
    status=obj(servers=REF, error=RESOURCE_ERROR,
               state=S("string", enum=("Creating", "Active", "Destroying", "Degraded"))),
)
CLIENT_MOUNT = obj(
    spec=obj(required=("node", "desiredState", "mounts"),
             node=STR, desiredState=S("string", enum=("mounted", "unmounted")),
             mounts=S("array", items=obj(
                 required=("options", "setPermissions"),
                 preserve=True, mountPath=STR, userID=INT, groupID=INT,
                 setPermissions=BOOL, options=STR, compute=STR,
                 type=S("string", enum=("lustre", "xfs", "gfs2", "none")),
                 targetType=S("string", enum=("file", "directory")),
                 device=obj(preserve=True,
                            type=S("string", enum=("lustre", "lvm", "reference"))))),
             ),
    status=obj(preserve=True, allReady=BOOL, error=RESOURCE_ERROR,
               mounts=arr(obj(preserve=True, state=S("string", enum=("mounted", "unmounted")),
                              ready=BOOL))),
)
SYSTEM_STATUS = obj(data=obj(preserve=True, nodes=m(S("string", enum=("Enabled", "Disabled")))))
LUSTRE_FS = obj(
    spec=obj(required=("name", "mgsNids", "mountRoot"), preserve=True,
             name=S("string", min_length=1, max_length=8), mgsNids=STR, mountRoot=STR,
             storageClassName=STR, namespaces=m(obj(preserve=True))),
    status=obj(preserve=True),
)
_FS_STORAGE = obj(preserve=True, capacityScalingFactor=S("string", default="1.0"),
                  allocationPadding=STR, storageLabels=arr(STR), sharedAllocation=BOOL)
STORAGE_PROFILE = obj(data=obj(
    preserve=True, default=BOOL, pinned=BOOL,
    xfsStorage=_FS_STORAGE, gfs2Storage=_FS_STORAGE, rawStorage=_FS_STORAGE,
    lustreStorage=obj(
        preserve=True, combinedMgtMdt=BOOL,
        mgtOptions=obj(preserve=True, externalMgs=STR, standaloneMgtPoolName=STR,
                       capacity=S("string", default="5GiB"), colocateComputes=BOOL,
                       count=S("integer", minimum=1), scale=S("integer", minimum=1, maximum=10)),
        mdtOptions=obj(preserve=True, capacity=S("string", default="5GiB"), exclusive=BOOL,
                       colocateComputes=BOOL, count=S("integer", minimum=1),
                       scale=S("integer", minimum=1, maximum=10)),
        mgtMdtOptions=obj(preserve=True, capacity=S("string", default="5GiB")),
        ostOptions=obj(preserve=True, capacityScalingFactor=S("string", default="1.0"),
                       colocateComputes=BOOL, count=S("integer", minimum=1),
                       scale=S("integer", minimum=1, maximum=10)))))
CONTAINER_PROFILE = obj(data=obj(
    preserve=True, pinned=BOOL, createContainer=S("boolean", default=True),
    storages=arr(obj(preserve=True, required=("name",), name=STR,
                     optional=S("boolean", default=False),
                     pvcMode=S("string", enum=("ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany",
                                               "ReadWriteOncePod")))),
    preRunTimeoutSeconds=S("integer", default=300, minimum=0),
    postRunTimeoutSeconds=S("integer", default=300, minimum=0),
    retryLimit=S("integer", default=6, minimum=0),
    userID=INT, groupID=INT, numPorts=S("integer", minimum=0),
    spec=obj(preserve=True), mpiSpec=obj(preserve=True)))
PORT_MANAGER = obj(
    spec=obj(preserve=True, systemConfiguration=REF,
             allocations=arr(obj(preserve=True, requester=REF, count=INT))),
    status=obj(preserve=True, status=S("string", enum=("Ready", "SystemConfigurationNotFound")),
               allocations=arr(obj(preserve=True, requester=REF, ports=arr(INT),
                                   status=S("string", enum=(
                                       "InUse", "Free", "Cooldown", "InvalidConfiguration",
                                       "InsufficientResources"))))),
)
DATA_MOVEMENT = obj(
    spec=obj(preserve=True, userId=INT, groupId=INT, cancel=BOOL),
    status=obj(preserve=True, state=S("string", enum=("Starting", "Running", "Finished")),
               status=S("string", enum=("Success", "Failed", "Invalid", "Cancelled")),
               message=STR, restarts=INT),
)
SYSTEM_STORAGE = obj(
    spec=obj(required=("capacity", "ignoreOfflineComputes", "makeClientMounts", "shared",
                       "storageProfile"),
             systemConfiguration=REF, excludeRabbits=arr(STR), includeRabbits=arr(STR),
             excludeDisabledRabbits=S("boolean", default=False),
             excludeComputes=arr(STR), includeComputes=arr(STR),
             computesTarget=S("string", enum=("all", "even", "odd", "pattern"), default="all"),
             computesPattern=arr(S("integer", minimum=0, maximum=15)),
             capacity=S("integer", default=1073741824),
             type=S("string", enum=("raw", "xfs", "gfs2"), default="raw"),
             shared=S("boolean", default=True), storageProfile=REF,
             ignoreOfflineComputes=S("boolean", default=False),
             makeClientMounts=S("boolean", default=False), clientMountPath=STR),
    status=obj(required=("ready",), ready=BOOL, error=RESOURCE_ERROR),
)

SCHEMAS: dict[tuple[str, str], S] = {
    ("dataworkflowservices.github.io", "Workflow"): WORKFLOW,
    ("dataworkflowservices.github.io", "DirectiveBreakdown"): DIRECTIVE_BREAKDOWN,
    ("dataworkflowservices.github.io", "Servers"): SERVERS,
    ("dataworkflowservices.github.io", "Computes"): COMPUTES,
    ("dataworkflowservices.github.io", "Storage"): STORAGE,
    ("dataworkflowservices.github.io", "SystemConfiguration"): SYSTEM_CONFIGURATION,
    ("dataworkflowservices.github.io", "SystemStatus"): SYSTEM_STATUS,
    ("dataworkflowservices.github.io", "PersistentStorageInstance"): PSI,
    ("dataworkflowservices.github.io", "ClientMount"): CLIENT_MOUNT,
    ("lus.cray.hpe.com", "LustreFileSystem"): LUSTRE_FS,
    ("nnf.cray.hpe.com", "NnfStorageProfile"): STORAGE_PROFILE,
    ("nnf.cray.hpe.com", "NnfContainerProfile"): CONTAINER_PROFILE,
    ("nnf.cray.hpe.com", "NnfPortManager"): PORT_MANAGER,
    ("nnf.cray.hpe.com", "NnfDataMovement"): DATA_MOVEMENT,
    ("nnf.cray.hpe.com", "NnfSystemStorage"): SYSTEM_STORAGE,
}
# top-level fields every object may carry besides those of its schema
TYPE_META = ("apiVersion", "kind", "metadata")


class SchemaError(Exception):
    """The object violates its schema: a list of field errors."""

    def __init__(self, causes: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{f}: {m}" for f, m in causes))
        self.causes = causes


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float)}

# A field's path is built only when an error names it: (parent path, key or
# list index), flattened by _p.
Path = Any


def _p(path: Path) -> str:
    parts: list[str] = []
    while isinstance(path, tuple):
        path, part = path
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
    return str(path) + "".join(reversed(parts))


def _typeok(s: S, v: Any) -> bool:
    if s.type == "any" or v is None:
        return True
    if s.int_or_string:
        return isinstance(v, (int, str)) and not isinstance(v, bool)
    if isinstance(v, bool) and s.type in ("integer", "number"):
        return False
    return isinstance(v, _TYPES[s.type])


_SCALARS = {"string": str, "boolean": bool}


def _bounds(s: S, v: Any, path: Path, errors: list[tuple[str, str]]) -> None:
    if isinstance(v, int) and not isinstance(v, bool):
        if s.minimum is not None and v < s.minimum:
            errors.append((_p(path), f"Invalid value: {v}: {_p(path)} in body should be greater"
                                     f" than or equal to {s.minimum}"))
        if s.maximum is not None and v > s.maximum:
            errors.append((_p(path), f"Invalid value: {v}: {_p(path)} in body should be less"
                                     f" than or equal to {s.maximum}"))
    if isinstance(v, str):
        if s.max_length is not None and len(v) > s.max_length:
            errors.append((_p(path), f'Too long: may not be longer than {s.max_length}'))
        if s.min_length is not None and len(v) < s.min_length:
            errors.append((_p(path), f'Invalid value: "{v}": {_p(path)} in body should be at'
                                     f" least {s.min_length} chars long"))
        if s.format == "date-time" and not RFC3339.fullmatch(v):
            errors.append((_p(path), f'Invalid value: "{v}": {_p(path)} in body must be of'
                                     f' type date-time: "{v}"'))


def _walk(s: S, v: Any, path: Path, errors: list[tuple[str, str]], unknown: list[str]) -> Any:
    if v is None:
        return v
    # fast path: a plain string or boolean field (most leaves)
    scalar = _SCALARS.get(s.type)
    if scalar is not None and not s.enum and type(v) is scalar and s.max_length is None \
            and s.min_length is None and s.format is None:
        return v
    if not _typeok(s, v):
        errors.append((_p(path), f'Invalid value: "{_go_type(v)}": {_p(path)} in body must be'
                                 f" of type {s.type}: \"{_go_type(v)}\""))
        return v
    if s.enum and v not in s.enum:
        allowed = ", ".join(f'"{e}"' for e in s.enum)
        errors.append((_p(path), f'Unsupported value: {_go_value(v)}: supported values:'
                                 f' {allowed}'))
    _bounds(s, v, path, errors)
    if s.type == "object" and isinstance(v, dict):
        if s.values is not None:
            return {k: _walk(s.values, x, (path, k), errors, unknown)
                    for k, x in v.items()}
        if s.props or not s.preserve:
            out = {}
            for k, x in v.items():
                if k in s.props:
                    out[k] = _walk(s.props[k], x, (path, k), errors, unknown)
                elif s.preserve:
                    out[k] = x
                else:  # pruned, as a structural schema prunes unknown fields
                    unknown.append(f"{_p(path)}.{k}")
            v = out
            for k, sub in s.props.items():
                if k not in v and sub.default is not None:
                    v[k] = copy.deepcopy(sub.default)
            for k in s.required:
                if k not in v:
                    errors.append((f"{_p(path)}.{k}", "Required value"))
        return v
    if s.type == "array" and isinstance(v, list) and s.items is not None:
        return [_walk(s.items, x, (path, i), errors, unknown) for i, x in enumerate(v)]
    return v


def _go_type(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
            float: "number"}.get(type(v), "null")


def _go_value(v: Any) -> str:
    return f'"{v}"' if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


def apply(group: str, kind: str, body: dict[str, Any], old: dict[str, Any] | None = None,
          unknown: list[str] | None = None) -> dict[str, Any]:
    """Default, prune and validate the fields of body outside metadata.

    Top-level sub-trees that are the very objects of ``old`` (an update
    that did not touch them) were checked when old was written and are
    skipped.  Paths of pruned fields are appended to ``unknown``.  Returns
    the new body or raises SchemaError.
    """
    schema = SCHEMAS.get((group, kind))
    if schema is None:
        return body
    pruned: list[str] = [] if unknown is None else unknown
    out: dict[str, Any] = {}
    errors: list[tuple[str, str]] = []
    for top, value in body.items():
        sub = schema.props.get(top)
        if sub is None:
            if top in TYPE_META:
                out[top] = value
            else:
                pruned.append(top)
        elif old is not None and old.get(top) is value:
            out[top] = value
        else:
            out[top] = _walk(sub, value, top, errors, pruned)
    for top, sub in schema.props.items():
        if top not in out and (sub.required or any(p.default is not None
                                                   for p in sub.props.values())):
            if top == "spec":
                out[top] = _walk(sub, {}, top, errors, pruned)
    if errors:
        raise SchemaError(errors)
    return out


def _openapi(s: S) -> dict[str, Any]:
    """One schema node as a CRD's structural OpenAPI v3 schema node."""
    out: dict[str, Any] = {}
    if s.int_or_string:
        out["x-kubernetes-int-or-string"] = True
    elif s.type == "any":
        out["x-kubernetes-preserve-unknown-fields"] = True
    else:
        out["type"] = s.type
    if s.props:
        out["properties"] = {k: _openapi(v) for k, v in s.props.items()}
    if s.values is not None:
        out["additionalProperties"] = _openapi(s.values)
    if s.items is not None:
        out["items"] = _openapi(s.items)
    if s.type == "array" and s.items is None:
        out["items"] = {"x-kubernetes-preserve-unknown-fields": True}
    if s.preserve:
        out["x-kubernetes-preserve-unknown-fields"] = True
    if s.required:
        out["required"] = list(s.required)
    if s.enum:
        out["enum"] = list(s.enum)
    for key, value in (("default", s.default), ("minimum", s.minimum),
                       ("maximum", s.maximum), ("minLength", s.min_length),
                       ("maxLength", s.max_length), ("format", s.format)):
        if value is not None:
            out[key] = copy.deepcopy(value)
    return out


def openapi(group: str, kind: str) -> dict[str, Any]:
    """The openAPIV3Schema of a CRD that enforces what ``apply`` does for
    the kind (one that keeps every field when the kind has no schema
    here): what a real API server given the emulator's CRDs checks."""
    schema = SCHEMAS.get((group, kind))
    root: dict[str, Any] = {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"}}}
    if schema is None:
        root["x-kubernetes-preserve-unknown-fields"] = True
        return root
    node = _openapi(schema)
    root["properties"].update(node.get("properties", {}))
    if node.get("x-kubernetes-preserve-unknown-fields"):
        root["x-kubernetes-preserve-unknown-fields"] = True
    return root
