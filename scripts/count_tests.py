#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""count_tests.py: read meson's testlog.json and print "N passed, N failed, N skipped" over
test cases.

Every test program speaks TAP, read strictly: "ok N ..." is a passed case, "not ok N ..." a
failed one, and an "ok N ... # SKIP reason" line a skipped one (not a pass). A program
that died before reporting all the cases its plan announced ("1..N") counts every missing
case as failed, and a failed program that reported no case at all counts as one failure,
so a crash is never lost in the count. A program meson marks SKIP is named.
Exit status: 1 when anything failed, 0 otherwise.
"""
import json
import re
import sys

OK = re.compile(r"^ok \d+\b(.*)$", re.M)
NOT_OK = re.compile(r"^not ok \d+\b", re.M)
PLAN = re.compile(r"^1\.\.(\d+)", re.M)
SKIP = re.compile(r"#\s*skip\b", re.I)

passed = failed = skipped = 0
skipped_programs = []
with open(sys.argv[1], encoding="utf-8") as log:
    for line in log:
        entry = json.loads(line)
        out = entry.get("stdout") or ""
        oks = OK.findall(out)
        skips = sum(1 for rest in oks if SKIP.search(rest))
        ok = len(oks) - skips
        bad = len(NOT_OK.findall(out))
        plan = PLAN.search(out)
        missing = max(0, int(plan.group(1)) - len(oks) - bad) if plan else 0
        result = entry.get("result")
        if result == "SKIP":
            skipped_programs.append(entry.get("name", "?"))
        elif result not in ("OK", "EXPECTEDFAIL") and bad + missing == 0:
            missing = 1
        passed += ok
        skipped += skips
        failed += bad + missing
for name in skipped_programs:
    print(f"skipped program: {name}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
