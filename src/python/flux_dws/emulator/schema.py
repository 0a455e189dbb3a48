"""What the CRDs enforce on write: types, required fields, enums, defaults,
and pruning of fields the schema does not know (as a real API server does
for structural schemas).

Schemas are written in a compact form here for the fields a workload
manager and the NNF controllers use (spec/dws-nnf-behaviour.md §1); a
sub-tree marked PRESERVE keeps whatever it holds.  Violations become
``422 Invalid`` with Kubernetes' wording, e.g.
``Workflow.dataworkflowservices.github.io "w" is invalid:
spec.desiredState: Unsupported value: "Bogus": supported values: ...``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

PRESERVE = "preserve"
STATES = ["Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut", "Teardown"]
DRIVER_STATUS = ["Pending", "Queued", "Running", "Completed", "TransientCondition", "Error",
                 "DriverWait"]
RESOURCE_STATUS = ["Starting", "Ready", "Disabled", "NotPresent", "Offline", "Failed",
                   "Degraded", "Drained", "Fenced", "Unknown"]


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


def obj(required: tuple[str, ...] = (), preserve: bool = False, **props: S) -> S:
    return S("object", props=props, required=required, preserve=preserve)


def m(values: S) -> S:
    return S("object", values=values)


def arr(items: S) -> S:
    return S("array", items=items)


STR, INT, BOOL, ANY = S("string"), S("integer"), S("boolean"), S("any")
REF = obj(kind=STR, name=STR, namespace=STR, uid=STR, apiVersion=STR, fieldPath=STR,
          resourceVersion=STR)
RESOURCE_ERROR = obj(userMessage=STR, debugMessage=STR,
                     type=S("string", enum=("Internal", "User", "WLM")),
                     severity=S("string", enum=("Minor", "Major", "Fatal")))

WORKFLOW = obj(
    spec=obj(
        required=("desiredState", "dwDirectives", "forceReady", "groupID", "jobID", "userID",
                  "wlmID"),
        desiredState=S("string", enum=tuple(STATES)),
        wlmID=STR, jobID=S("any", int_or_string=True), userID=INT, groupID=INT,
        dwDirectives=arr(STR), forceReady=S("boolean", default=False), hurry=BOOL,
    ),
    status=obj(
        state=S("string", enum=tuple(STATES)), ready=BOOL,
        status=S("string", enum=("Completed", "DriverWait", "TransientCondition", "Error")),
        message=STR, env=m(STR), requires=arr(STR),
        drivers=arr(obj(required=("completed", "driverID", "dwdIndex", "lastHB", "taskID",
                                  "watchState"),
                        driverID=STR, taskID=STR, dwdIndex=INT,
                        watchState=S("string", enum=tuple(STATES)), lastHB=INT,
                        completed=BOOL, status=S("string", enum=tuple(DRIVER_STATUS)),
                        message=STR, error=STR, completeTime=STR)),
        directiveBreakdowns=arr(REF), computes=REF,
        workflowToken=obj(secretName=STR, secretNamespace=STR),
        desiredStateChange=STR, readyChange=STR, elapsedTimeLastState=STR,
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
    status=obj(ready=BOOL, lastUpdate=STR, error=RESOURCE_ERROR,
               allocationSets=arr(obj(label=STR, storage=m(obj(allocationSize=INT,
                                                               ready=BOOL))))),
)
COMPUTES = obj(data=arr(obj(name=STR)))
STORAGE = obj(
    spec=obj(state=S("string", enum=("Enabled", "Disabled"), default="Enabled"),
             mode=S("string", enum=("Live", "Testing"), default="Live")),
    status=obj(type=S("string", enum=("NVMe",)), capacity=S("integer", default=0),
               status=S("string", enum=tuple(RESOURCE_STATUS)), rebootRequired=BOOL,
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

SCHEMAS: dict[tuple[str, str], S] = {
    ("dataworkflowservices.github.io", "Workflow"): WORKFLOW,
    ("dataworkflowservices.github.io", "DirectiveBreakdown"): DIRECTIVE_BREAKDOWN,
    ("dataworkflowservices.github.io", "Servers"): SERVERS,
    ("dataworkflowservices.github.io", "Computes"): COMPUTES,
    ("dataworkflowservices.github.io", "Storage"): STORAGE,
    ("dataworkflowservices.github.io", "SystemConfiguration"): SYSTEM_CONFIGURATION,
}


class SchemaError(Exception):
    """The object violates its schema: a list of field errors."""

    def __init__(self, causes: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{f}: {m}" for f, m in causes))
        self.causes = causes


def _typeok(s: S, v: Any) -> bool:
    if s.type == "any" or v is None:
        return True
    if s.int_or_string:
        return isinstance(v, (int, str)) and not isinstance(v, bool)
    return {"object": isinstance(v, dict), "array": isinstance(v, list),
            "string": isinstance(v, str), "boolean": isinstance(v, bool),
            "integer": isinstance(v, int) and not isinstance(v, bool),
            "number": isinstance(v, (int, float)) and not isinstance(v, bool)}[s.type]


_SCALARS = {"string": str, "boolean": bool}


def _walk(s: S, v: Any, path: str, errors: list[tuple[str, str]]) -> Any:
    if v is None:
        return v
    # fast path: a plain string or boolean field (most leaves)
    scalar = _SCALARS.get(s.type)
    if scalar is not None and not s.enum and type(v) is scalar:
        return v
    if not _typeok(s, v):
        errors.append((path, f'Invalid value: "{_go_type(v)}": {path} in body must be of type'
                             f" {s.type}: \"{_go_type(v)}\""))
        return v
    if s.enum and v not in s.enum:
        allowed = ", ".join(f'"{e}"' for e in s.enum)
        errors.append((path, f'Unsupported value: "{v}": supported values: {allowed}'))
    if s.minimum is not None and isinstance(v, int) and v < s.minimum:
        errors.append((path, f"Invalid value: {v}: {path} in body should be greater than or"
                             f" equal to {s.minimum}"))
    if s.type == "object" and isinstance(v, dict):
        if s.values is not None:
            return {k: _walk(s.values, x, f"{path}.{k}", errors) for k, x in v.items()}
        if s.props or not s.preserve:
            if s.props or s.required:
                out = {}
                for k, x in v.items():
                    if k in s.props:
                        out[k] = _walk(s.props[k], x, f"{path}.{k}", errors)
                    elif s.preserve:
                        out[k] = x
                    # else: pruned, as a structural schema prunes unknown fields
                v = out
            for k, sub in s.props.items():
                if k not in v and sub.default is not None:
                    v[k] = copy.deepcopy(sub.default)
            for k in s.required:
                if k not in v:
                    errors.append((f"{path}.{k}", "Required value"))
        return v
    if s.type == "array" and isinstance(v, list) and s.items is not None:
        return [_walk(s.items, x, f"{path}[{i}]", errors) for i, x in enumerate(v)]
    return v


def _go_type(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
            float: "number"}.get(type(v), "null")


def apply(group: str, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """Default, prune and validate ``spec``/``status``/``data`` of body.

    Returns the new body or raises SchemaError.
    """
    schema = SCHEMAS.get((group, kind))
    if schema is None:
        return body
    out = dict(body)
    errors: list[tuple[str, str]] = []
    for top, sub in schema.props.items():
        if top in out:
            out[top] = _walk(sub, out[top], top, errors)
        elif sub.required or any(p.default is not None for p in sub.props.values()):
            if top == "spec":
                out[top] = _walk(sub, {}, top, errors)
    if errors:
        raise SchemaError(errors)
    return out
