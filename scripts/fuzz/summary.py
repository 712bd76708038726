"""One line about a fuzzing run, from Schemathesis' output and the hooks' trace.

    summary.py REPORT_DIR
"""

import collections
import pathlib
import re
import sys

report = pathlib.Path(sys.argv[1])
output = (report / "schemathesis.txt").read_text(errors="replace")
cases = re.search(r"Test cases:\s*\n\s*(\d+) generated", output)
failures = re.search(r"(\d+) unique failures?", output)
operations = re.search(r"Tested: (\d+)", output)

requests = collections.Counter()
statuses = collections.Counter()
tested = set()
trace = report / "trace.tsv"
if trace.exists():
    for line in trace.read_text().splitlines():
        operation, phase, mode, status = line.split("\t")
        tested.add(operation)
        requests[phase if phase == "stateful" else mode] += 1
        statuses[status[0] + "xx"] += 1

parts = [
    f"{operations.group(1) if operations else '?'} operations",
    f"{cases.group(1) if cases else '?'} test cases",
    f"{sum(requests.values())} requests ("
    + ", ".join(f"{name} {count}" for name, count in sorted(requests.items()))
    + "; "
    + ", ".join(f"{name} {count}" for name, count in sorted(statuses.items()))
    + ")",
    f"{failures.group(1) if failures else 0} failures",
]
print(", ".join(parts))
