"""t/summarize.py: the closing line of scripts/test.sh counts every test
point, and every sharness script skipped whole, with its reason."""

from __future__ import annotations

import importlib.util
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
