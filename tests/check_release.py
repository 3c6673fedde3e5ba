#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check_release.py: one version everywhere a user reads it (TAP).

- CHANGELOG.md's newest entry is the version meson.build gives the project, and every
  entry has an ABI line ("**ABI M.m...**"); the newest names the ABI of sdk/ecs_plugin.h.
- `ecs-host --version` prints "ecs-host VERSION (plugin ABI M.m)" with that version and
  the header's ABI.
- debian/changelog's newest entry packages that version ("ecs-host (VERSION-N) ...").

usage: check_release.py ECS_HOST SOURCE_ROOT VERSION
"""
import os
import re
import subprocess
import sys

from tapcheck import read, report

ENTRY = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (Unreleased|\d{4}-\d{2}-\d{2})$", re.M)
ABI_LINE = re.compile(r"^\*\*ABI (\d+)\.(\d+)\b", re.M)


def header_abi(root):
    text = read(os.path.join(root, "sdk", "ecs_plugin.h"))
    major = re.search(r"^#define ECS_ABI_MAJOR (\d+)$", text, re.M)
    minor = re.search(r"^#define ECS_ABI_MINOR (\d+)$", text, re.M)
    return f"{major.group(1)}.{minor.group(1)}" if major and minor else "?"


def changelog_problems(root, version, abi):
    text = read(os.path.join(root, "CHANGELOG.md"))
    entries = list(ENTRY.finditer(text))
    if not entries:
        return ["CHANGELOG.md has no entry '## [X.Y.Z] - YYYY-MM-DD' (or '- Unreleased')"]
    problems = []
    if entries[0].group(1) != version:
        problems.append(f"the newest entry is {entries[0].group(1)}, meson.build says "
                        f"{version}: add an entry '## [{version}] - Unreleased'")
    for i, e in enumerate(entries):
        end = entries[i + 1].start() if i + 1 < len(entries) else len(text)
        body = text[e.end():end]
        line = ABI_LINE.search(body)
        if not line:
            problems.append(f"entry {e.group(1)} has no line '**ABI M.m.** what a plugin "
                            "built against the older header may rely on'")
        elif i == 0 and f"{line.group(1)}.{line.group(2)}" != abi:
            problems.append(f"entry {e.group(1)} says ABI {line.group(1)}.{line.group(2)}, "
                            f"sdk/ecs_plugin.h is {abi}: say what the new ABI adds")
    unreleased = [e.group(1) for e in entries[1:] if e.group(2) == "Unreleased"]
    if unreleased:
        problems.append(f"only the newest entry may be Unreleased, not {', '.join(unreleased)}")
    return problems


def version_problems(ecs_host, version, abi):
    r = subprocess.run([ecs_host, "--version"], capture_output=True, text=True)
    want = f"ecs-host {version} (plugin ABI {abi})"
    if r.returncode != 0 or r.stdout.strip() != want:
        return [f"ecs-host --version printed {r.stdout.strip()!r} (exit {r.returncode}), "
                f"not {want!r}"]
    return []


def debian_problems(root, version):
    first = read(os.path.join(root, "debian", "changelog")).split("\n", 1)[0]
    m = re.match(r"^ecs-host \(([^)-]+)-[^)]+\) ", first)
    if not m:
        return [f"debian/changelog starts with {first!r}, not 'ecs-host (VERSION-N) ...'"]
    if m.group(1) != version:
        return [f"debian/changelog's newest entry packages {m.group(1)}, meson.build says "
                f"{version}: add an entry 'ecs-host ({version}-1) UNRELEASED; urgency=medium' "
                "(dch -v, or by hand)"]
    return []


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    ecs_host, root, version = sys.argv[1:]
    abi = header_abi(root)
    checks = [
        ("CHANGELOG.md: newest entry is this version, every entry has its ABI line",
         changelog_problems(root, version, abi)),
        ("ecs-host --version prints this version and the header's ABI",
         version_problems(ecs_host, version, abi)),
        ("debian/changelog packages this version", debian_problems(root, version)),
    ]
    return report(checks)


if __name__ == "__main__":
    sys.exit(main())
