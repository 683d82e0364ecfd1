"""Prints the closing line of each pytest pass that .ci/run ran, then their sum as one line.

Usage: ci_summary.py "LABEL=LOG" ...  A pass whose log has no pytest summary line counts as one failure.
"""

import re
import sys

SUMMARY = re.compile(r"^=*\s*(?P<body>(?:\d+ \w+(?:, )?)+) in [\d.]+s")
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)")


def closing_line(path: str) -> str | None:
    with open(path, encoding="utf-8", errors="replace") as log:
        lines = [line.strip() for line in log if SUMMARY.match(line.strip())]
    return lines[-1] if lines else None


def main(passes: list[str]) -> int:
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    for spec in passes:
        label, _, path = spec.partition("=")
        line = closing_line(path)
        print(f"{label}: {line or 'no pytest summary line (the pass did not finish)'}")
        if line is None:
            totals["failed"] += 1
            continue
        for number, kind in COUNT.findall(line):
            kind = "failed" if kind.startswith("error") else kind
            if kind in totals:
                totals[kind] += int(number)
    print(f"both passes: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
