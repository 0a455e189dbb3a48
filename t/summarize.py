"""Print the test command's closing line: "total: N passed, M failed[, K skipped]".

Counts every test point the runners reported:
- pytest JUnit XML files in RESULTS (pytest.xml, pytest-asan.xml, ...),
- meson testlog.json files (each TAP "ok"/"not ok" line of a C test),
- RESULTS/sharness*.log (prove -v: each sharness test point, "ok N" passed,
  "not ok N" failed unless a known breakage (# TODO), "# skip" skipped; a
  script skipped whole ("1..0 # SKIP reason") counts one skip, whether
  prove put "skipped: reason" after the script's name or on a line of its
  own, and its reason is printed above the total; a script that died
  without failing a point (prove's summary: a non-zero wait status,
  Failed: 0) counts one failure).

Above the total, each failed test by name ("failed: RUNNER: NAME: first
line of why"), so the last lines of a run (all a CI page may keep) say what
failed, not only how many.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any


def junit_counts(path: Path) -> tuple[int, int, int]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = failed = skipped = 0
    for s in suites:
        total += int(s.get("tests", 0))
        failed += int(s.get("failures", 0)) + int(s.get("errors", 0))
        skipped += int(s.get("skipped", 0))
    return total - failed - skipped, failed, skipped


def junit_failures(path: Path) -> list[str]:
    """Each failed or erroring testcase: "file::name: first line of why"."""
    out: list[str] = []
    for case in ET.parse(path).getroot().iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is None:
            continue
        where = (case.get("classname") or "").replace(".", "/")
        why = (bad.get("message") or "").strip().splitlines()
        out.append(f"{where}::{case.get('name')}: {why[0] if why else bad.tag}"[:300])
    return out


def meson_failures(path: Path) -> list[str]:
    """Each C test that failed: its name, and its failed points."""
    out: list[str] = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("result") in ("OK", "EXPECTEDFAIL", "SKIP"):
            continue
        points = re.findall(r"^not ok\b.*$", rec.get("stdout", ""), re.M)
        name = rec.get("name", "?")
        out.extend(f"{name}: {p}"[:300] for p in points or [str(rec.get("result"))])
    return out


def sharness_failures(path: Path) -> list[str]:
    """Each failed sharness point, "script: not ok N - what"."""
    out: list[str] = []
    script = ""
    for line in path.read_text(errors="replace").splitlines():
        if m := _HEADER.match(line):
            script = m.group(1)
        elif (m := _TAP_POINT.match(line)) and m.group(1) == "not ok" \
                and "# TODO" not in m.group(2) and "# skip" not in m.group(2).lower():
            out.append(f"{script}: {line}"[:300])
        elif (m := _DIED.match(line)) and int(m.group(1)) != 0 and int(m.group(2)) == 0:
            out.append(f"{line.split()[0]}: died ({line.strip()})"[:300])
    return out


def meson_counts(path: Path) -> tuple[int, int, int]:
    passed = failed = skipped = 0
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        out = rec.get("stdout", "")
        points = re.findall(r"^(not ok|ok)\b.*$", out, re.M)
        if not points:  # not a TAP test: count the test itself
            ok = rec.get("result") in ("OK", "EXPECTEDFAIL")
            passed += ok
            failed += not ok
            continue
        for p in points:
            if p == "ok":
                passed += 1
            else:
                failed += 1
        if rec.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP") and "not ok" not in points:
            failed += 1  # crashed or timed out after its last test point
    return passed, failed, skipped


_TAP_POINT = re.compile(r"^(not ok|ok) \d+\b(.*)$")
_DIED = re.compile(r"^\S+\.t \(Wstat: (\d+).*Failed: (\d+)\)")
_TIMER = r"(?:\[[\d:]+\]\s+)?"  # prove --timer's start time
# a script's header ("t3100-dws-jobtap.t .. "), maybe with its result
_HEADER = re.compile(rf"^{_TIMER}(\S+\.t) \.+(?: (.*))?$")
# prove's word for a whole-script skip, after the header or on its own line
_SKIPPED = re.compile(rf"^{_TIMER}(?:(\S+\.t) \.+ )?skipped: ?(.*)$")
# the script's own plan, where the log has it (a script run by hand)
_PLAN_SKIP = re.compile(r"^1\.\.0\s*#\s*skip\b\s*(.*)$", re.I)


def whole_script_skips(path: Path) -> list[tuple[str, str]]:
    """(script, reason) of each script that skipped whole ("1..0 # SKIP
    reason"), once each, however the log shows it: prove's "NAME .. skipped:
    REASON", the same with "skipped: REASON" on a line of its own (prove
    printed the header before the script's output), or the plan line
    itself."""
    found: dict[str, str] = {}
    script = ""
    for line in path.read_text(errors="replace").splitlines():
        if m := _SKIPPED.match(line):
            script = m.group(1) or script or f"(unnamed script {len(found) + 1})"
            found[script] = m.group(2).strip() or found.get(script, "")
        elif m := _PLAN_SKIP.match(line):
            script = script or f"(unnamed script {len(found) + 1})"
            found[script] = found.get(script) or m.group(1).strip()
        elif m := _HEADER.match(line):
            script = m.group(1)
    return list(found.items())


def sharness_counts(path: Path) -> tuple[int, int, int]:
    passed = failed = skipped = 0
    for line in path.read_text(errors="replace").splitlines():
        if m := _TAP_POINT.match(line):
            directive = m.group(2)
            if "# skip" in directive.lower():
                skipped += 1
            elif m.group(1) == "ok" or "# TODO" in directive:
                passed += m.group(1) == "ok"
            else:
                failed += 1
        elif (m := _DIED.match(line)) and int(m.group(1)) != 0 and int(m.group(2)) == 0:
            failed += 1
    return passed, failed, skipped + len(whole_script_skips(path))


def main(argv: list[str]) -> int:
    results = Path(argv[1])
    totals = [0, 0, 0]
    parts = []
    failures: list[str] = []
    sources: list[tuple[str, Path, Any, Any]] = []
    for xml in sorted(results.glob("*.xml")):
        sources.append((xml.stem, xml, junit_counts, junit_failures))
    for log in argv[2:]:
        p = Path(log)
        sources.append((f"meson:{p.parent.parent.name}", p, meson_counts, meson_failures))
    # sharness.log, and sharness-release.log (the t34xx scripts run from
    # the release tarball)
    for log_path in sorted(results.glob("sharness*.log")):
        sources.append((log_path.stem, log_path, sharness_counts, sharness_failures))
    for name, path, count, failed in sources:
        if not path.exists():
            continue
        counts = count(path)
        parts.append(f"{name} {counts[0]}/{counts[1]}/{counts[2]}")
        for i in range(3):
            totals[i] += counts[i]
        failures.extend(f"failed: {name}: {f}" for f in failed(path))
    print("by runner (passed/failed/skipped): " + ", ".join(parts))
    for f in failures:
        print(f)
    for log_path in sorted(results.glob("sharness*.log")):
        for script, reason in whole_script_skips(log_path):
            print(f"skipped whole: {script}: {reason or '(no reason given)'}")
    line = f"total: {totals[0]} passed, {totals[1]} failed"
    if totals[2]:
        line += f", {totals[2]} skipped"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
