"""The rabbit frobnicator and validator decisions (no Flux needed)."""

from __future__ import annotations

import copy

import pytest

from flux_dws import ingest
from flux_dws.cli import check
from flux_dws.cli.main import main as flux_dws_main
from flux_dws.ingest import IngestError, rabbit_constraints, validate_dw

GOOD = "#DW jobdw type=xfs capacity=10GiB name=scratch"
QUEUE = {"properties": ["pbatch"]}


def js(**system):
    return {"version": 1, "resources": [], "tasks": [], "attributes": {"system": system}}


# --- frobnicator -----------------------------------------------------------

def test_dw_and_allow_rabbits_widen_the_constraints():
    spec = js(dw=GOOD, allow_rabbits=True, constraints=QUEUE)
    before = copy.deepcopy(spec)
    assert rabbit_constraints(spec) == {"or": [QUEUE, {"properties": ["rabbit"]}]}
    assert spec == before  # the plugin sets the result; the function changes nothing


def test_compound_constraints_are_wrapped_whole():
    existing = {"and": [QUEUE, {"not": [{"hostlist": ["x[1-2]"]}]}]}
    out = rabbit_constraints(js(dw=[GOOD], allow_rabbits=True, constraints=existing))
    assert out == {"or": [existing, {"properties": ["rabbit"]}]}


@pytest.mark.parametrize("system", [
    {"constraints": QUEUE},                                  # no dw, no allow_rabbits
    {"dw": GOOD, "constraints": QUEUE},                      # dw without allow_rabbits
    {"allow_rabbits": True, "constraints": QUEUE},           # allow_rabbits without dw
    {"dw": GOOD, "allow_rabbits": False, "constraints": QUEUE},
    {"dw": GOOD, "allow_rabbits": 1, "constraints": QUEUE},  # true, as libdws: not 1
    {"dw": GOOD, "allow_rabbits": "true", "constraints": QUEUE},
])
def test_other_jobs_are_left_alone(system):
    assert rabbit_constraints(js(**system)) is None


@pytest.mark.parametrize("spec", [{}, {"attributes": None}, {"attributes": {"system": []}}])
def test_jobspecs_without_system_attributes_are_left_alone(spec):
    assert rabbit_constraints(spec) is None


@pytest.mark.parametrize("constraints", [None, {}])
def test_no_constraints_is_an_error_naming_the_constraints_plugin(constraints):
    system = {"dw": GOOD, "allow_rabbits": True}
    if constraints is not None:
        system["constraints"] = constraints
    with pytest.raises(IngestError, match=r"Is the constraints frobnicator plugin loaded\?$"):
        rabbit_constraints(js(**system))


# --- validator ---------------------------------------------------------------

@pytest.mark.parametrize("system", [
    {},
    {"dw": GOOD},
    {"dw": [GOOD, "#DW copy_in source=/a destination=$DW_JOB_scratch/"]},
    {"dw": GOOD, "dw_failure_tolerance": 0},
    {"dw": GOOD, "dw_failure_tolerance": 3},
    {"dw_failure_tolerance": "ignored without dw"},
])
def test_valid_jobs_pass(system):
    validate_dw(js(**system))


@pytest.mark.parametrize("system, message", [
    ({"dw": 5}, "Malformed #DW directives: dw must be a string or a list of strings"),
    ({"dw": [GOOD, 3]}, "Malformed #DW directives: dw must be a string or a list of strings"),
    ({"dw": {"a": GOOD}}, "Malformed #DW directives: dw must be a string or a list of strings"),
    ({"dw": GOOD, "dw_failure_tolerance": -1}, "dw_failure_tolerance must be"),
    ({"dw": GOOD, "dw_failure_tolerance": "1"}, "dw_failure_tolerance must be"),
    ({"dw": GOOD, "dw_failure_tolerance": 1.5}, "dw_failure_tolerance must be"),
    ({"dw": ""}, "Malformed #DW directives: no #DW directive found"),
    ({"dw": "#DW jobdw type=zfs capacity=1GiB name=a"},
     "admission webhook \"vworkflow.kb.io\" denied the request: argument 'type' invalid"),
    ({"dw": "#DW jobdw type=xfs name=scratch"}, "denied the request"),
    ({"dw": "hello"}, "missing '#DW' prefix in directive 'hello'"),
])
def test_invalid_jobs_are_refused_in_one_line(system, message):
    with pytest.raises(IngestError) as info:
        validate_dw(js(**system))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("value", [
    "#DW jobdw type=zfs capacity=1GiB name=a",
    "#DW jobdw type=xfs name=scratch",
    "hello",
    "",
    GOOD + " #DW copy_in source=/a",
])
def test_messages_equal_flux_dws_check(value, capsys):
    """flux dws check prints the job's exception note: its prefix + the
    validator's message."""
    with pytest.raises(IngestError) as info:
        validate_dw(js(dw=value))
    assert flux_dws_main(["check", value]) == 1
    out = capsys.readouterr().out.strip()
    assert out == check.EXCEPTION_PREFIX + str(info.value)


def test_presets_from_the_rabbit_table_are_expanded():
    rabbit = {"presets": {"scratch": GOOD}}
    validate_dw(js(dw="scratch"), rabbit)
    with pytest.raises(IngestError, match="missing '#DW' prefix"):
        validate_dw(js(dw="scratch"))
    # a malformed table is ignored, not a crash
    with pytest.raises(IngestError):
        validate_dw(js(dw="scratch"), {"presets": ["not", "a", "table"]})


def test_ingest_exports():
    assert set(ingest.__all__) == {"RABBIT_PROPERTY", "IngestError", "rabbit_constraints",
                                   "validate_dw"}
