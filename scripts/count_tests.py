#!/usr/bin/env python3
"""count_tests.py: read meson's testlog.json and print "N passed, N failed" over test cases.

Every test program speaks TAP: each "ok" line is a passed case and each "not ok" line a
failed one. A program that died before reporting all the cases its plan announced
("1..N") counts every missing case as failed, and a failed program that reported no case
at all counts as one failure, so a crash is never lost in the count.
Exit status: 1 when anything failed, 0 otherwise.
"""
import json
import re
import sys

passed = failed = 0
with open(sys.argv[1], encoding="utf-8") as log:
    for line in log:
        entry = json.loads(line)
        out = entry.get("stdout") or ""
        ok = len(re.findall(r"^ok\b", out, re.M))
        bad = len(re.findall(r"^not ok\b", out, re.M))
        plan = re.search(r"^1\.\.(\d+)", out, re.M)
        missing = max(0, int(plan.group(1)) - ok - bad) if plan else 0
        if entry.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL") and bad + missing == 0:
            missing = 1
        passed += ok
        failed += bad + missing
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
