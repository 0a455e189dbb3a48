"""Print the test command's closing line: "total: N passed, M failed[, K skipped]".

Counts every test point the runners reported:
- pytest JUnit XML files in RESULTS (pytest.xml, pytest-asan.xml, ...),
- meson testlog.json files (each TAP "ok"/"not ok" line of a C test),
- RESULTS/sharness.log (TAP from prove's verbose-free output is not itemised,
  so the sharness counts come from prove's "Tests=" summary line).
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def junit_counts(path: Path) -> tuple[int, int, int]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = failed = skipped = 0
    for s in suites:
        total += int(s.get("tests", 0))
        failed += int(s.get("failures", 0)) + int(s.get("errors", 0))
        skipped += int(s.get("skipped", 0))
    return total - failed - skipped, failed, skipped


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


def sharness_counts(path: Path) -> tuple[int, int, int]:
    text = path.read_text()
    m = re.search(r"Tests=(\d+)", text)
    total = int(m.group(1)) if m else 0
    failed = sum(int(n) for n in re.findall(r"Failed (\d+)/\d+ subtests", text))
    skipped = len(re.findall(r"skipped:", text))
    return total - failed, failed, skipped


def main(argv: list[str]) -> int:
    results = Path(argv[1])
    totals = [0, 0, 0]
    parts = []
    sources: list[tuple[str, Path, object]] = []
    for xml in sorted(results.glob("*.xml")):
        sources.append((xml.stem, xml, junit_counts))
    for log in argv[2:]:
        p = Path(log)
        sources.append((f"meson:{p.parent.parent.name}", p, meson_counts))
    sharness = results / "sharness.log"
    sources.append(("sharness", sharness, sharness_counts))
    for name, path, fn in sources:
        if not path.exists():
            continue
        counts = fn(path)  # type: ignore[operator]
        parts.append(f"{name} {counts[0]}/{counts[1]}/{counts[2]}")
        for i in range(3):
            totals[i] += counts[i]
    print("by runner (passed/failed/skipped): " + ", ".join(parts))
    line = f"total: {totals[0]} passed, {totals[1]} failed"
    if totals[2]:
        line += f", {totals[2]} skipped"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
