#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The scene loader's prefetches are in the machine code (TAP).

A scene load asks for each value's text a few values before it reads it
(host_ahead_prefetch in host/scene/ahead.h): the loader in call_components
(host/scene/scene.c), the read-ahead thread in its run loop (host/scene/ahead.c).
A prefetch changes no result, so no other test notices when the compiler drops
one; GCC 12 did drop all of them for sessions (it took the helper for a function
without side effects and deleted its calls). This reads the built library's code:
each of those functions holds a prefetch instruction.

usage: check_prefetch.py LIBHOST_CORE_A   (x86-64 only; skipped elsewhere)
"""
import os
import platform
import re
import shutil
import subprocess
import sys

# (archive member, function): the places that must prefetch
PLACES = [("scene_scene.c.o", "call_components"), ("scene_ahead.c.o", "run")]


def functions_of(disassembly):
    """{(member, function): [instruction lines]} of objdump -d over an archive."""
    member, function, out = None, None, {}
    for line in disassembly.splitlines():
        m = re.match(r"^In archive .*|^(\S+\.o):\s+file format", line)
        if m and m.group(1):
            member, function = os.path.basename(m.group(1)), None
            continue
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            function = m.group(1)
            out.setdefault((member, function), [])
            continue
        if function and line.strip():
            out[(member, function)].append(line)
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if platform.machine() not in ("x86_64", "AMD64"):
        print("1..0 # SKIP prefetch instructions are checked on x86-64 only")
        return 0
    objdump = shutil.which("objdump")
    if not objdump:
        print("1..0 # SKIP no objdump")
        return 0
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", sys.argv[1]],
                          capture_output=True, text=True, check=True).stdout
    funcs = functions_of(text)
    print(f"1..{len(PLACES)}")
    failed = 0
    for n, (member, function) in enumerate(PLACES, 1):
        code = funcs.get((member, function))
        what = f"{function} ({member})"
        if code is None:
            print(f"not ok {n} - {what} holds a prefetch: no such function in {sys.argv[1]}")
            failed += 1
        elif not any(re.search(r"\tprefetch", ins) for ins in code):
            print(f"not ok {n} - {what} holds a prefetch: none in its "
                  f"{len(code)} instructions (the compiler dropped host_ahead_prefetch)")
            failed += 1
        else:
            count = sum(1 for ins in code if re.search(r"\tprefetch", ins))
            print(f"ok {n} - {what} holds a prefetch ({count} of {len(code)} instructions)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
