"""t/summarize.py: the closing line of scripts/test.sh counts every test
point, and every sharness script skipped whole, with its reason."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "summarize", Path(__file__).resolve().parents[2] / "summarize.py")
assert _spec is not None and _spec.loader is not None
summarize = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summarize)

WHY = "flux-core is not installed (no 'flux' on PATH): this script needs a broker"

# prove -v --timer as scripts/test.sh runs it: a script that ran, with a
# skipped point and a failure; then whole-script skips in each form
RAN = """\
[10:53:36] t0000-sharness.t .....
ok 1 - flux-dws is on PATH
not ok 2 - usage
ok 3 - a prerequisite # skip missing KUBECTL
1..3
"""
ONE_LINE = f"[10:53:36] t3000-dws-service.t .. skipped: {WHY}\n"
OWN_LINE = f"[10:53:37] t3100-dws-jobtap.t .. \nsome stderr of the script\nskipped: {WHY}\n"
PLAN_AND_WORD = f"t3101-dws-faults.t .. \n1..0 # SKIP {WHY}\nskipped: {WHY}\n"
BY_HAND = "1..0 # SKIP Fluxion (flux-sched) modules do not load in a test instance\n"


def log(tmp_path: Path, text: str) -> Path:
    (tmp_path / "sharness.log").write_text(text)
    return tmp_path / "sharness.log"


@pytest.mark.parametrize("text, script", [
    (ONE_LINE, "t3000-dws-service.t"),
    (OWN_LINE, "t3100-dws-jobtap.t"),
    (PLAN_AND_WORD, "t3101-dws-faults.t"),
], ids=["one-line", "reason-on-its-own-line", "plan-and-prove's-word"])
def test_a_whole_script_skip_counts_once_with_its_reason(tmp_path: Path, text: str,
                                                        script: str) -> None:
    path = log(tmp_path, RAN + text)
    assert summarize.whole_script_skips(path) == [(script, WHY)]
    assert summarize.sharness_counts(path) == (1, 1, 2)  # the skipped point and the script


def test_a_plan_skip_of_a_script_run_by_hand_counts(tmp_path: Path) -> None:
    path = log(tmp_path, BY_HAND)
    assert summarize.sharness_counts(path) == (0, 0, 1)
    assert summarize.whole_script_skips(path) == [
        ("(unnamed script 1)", "Fluxion (flux-sched) modules do not load in a test instance")]


def test_the_summary_prints_each_reason_and_the_skips_in_the_total(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log(tmp_path, RAN + ONE_LINE + OWN_LINE + PLAN_AND_WORD)
    assert summarize.main(["summarize.py", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "total: 1 passed, 1 failed, 4 skipped"
    for script in ("t3000-dws-service.t", "t3100-dws-jobtap.t", "t3101-dws-faults.t"):
        assert f"skipped whole: {script}: {WHY}" in out
    assert "by runner (passed/failed/skipped): sharness 1/1/4" in out
    assert "failed: sharness: t0000-sharness.t: not ok 2 - usage" in out


JUNIT = """\
<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="0" tests="3">
<testcase classname="t.python.service.test_faults" name="test_ok" time="0.1"/>
<testcase classname="t.python.service.test_faults" name="test_lost[x]" time="30">
<failure message="TimeoutError: timed out waiting for every fluxjob Workflow&#10;more">tb</failure>
</testcase>
<testcase classname="t.python.tools.test_a" name="test_setup" time="0">
<error message="failed on setup with &quot;OSError&quot;">tb</error></testcase>
</testsuite></testsuites>
"""

MESON = [
    {"name": "libdws/decide", "result": "FAIL", "stdout": "ok 1 - a\nnot ok 2 - b\n"},
    {"name": "libdws/jgf", "result": "OK", "stdout": "ok 1 - a\n"},
    {"name": "libdws/crash", "result": "ERROR", "stdout": ""},
]


def test_the_summary_names_each_failed_test_above_the_total(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pytest.xml").write_text(JUNIT)
    meson = tmp_path / "build" / "meson-logs" / "testlog.json"
    meson.parent.mkdir(parents=True)
    meson.write_text("".join(json.dumps(r) + "\n" for r in MESON))
    log(tmp_path, RAN)
    assert summarize.main(["summarize.py", str(tmp_path), str(meson)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "total: 4 passed, 5 failed, 1 skipped"
    assert out[1:-1] == [
        "failed: pytest: t/python/service/test_faults::test_lost[x]: "
        "TimeoutError: timed out waiting for every fluxjob Workflow",
        'failed: pytest: t/python/tools/test_a::test_setup: failed on setup with "OSError"',
        "failed: meson:build: libdws/decide: not ok 2 - b",
        "failed: meson:build: libdws/crash: ERROR",
        "failed: sharness: t0000-sharness.t: not ok 2 - usage",
    ]
