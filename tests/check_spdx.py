#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check_spdx.py: every source file says its license on its first line (TAP).

ecs-host is MIT-licensed (LICENSE). Every source file opens with the line
`SPDX-License-Identifier: MIT` in its own comment syntax (after a `#!`,
`<!doctype html>` or zsh's `#compdef` line, the only things allowed above it), and the file's overview
comment follows right after it, as STYLE.md asks of every file. The files checked are
git's tracked files in a checkout, or every file of the tree in a source tarball (which
holds no .git; build folders left out). In a checkout, a file of a kind this script does
not know fails too: say below whether it is a source file or data.

usage: check_spdx.py SOURCE_ROOT [BUILT_PC_FILE]
"""
import fnmatch
import os
import re
import subprocess
import sys

from tapcheck import read, report

SPDX = "SPDX-License-Identifier: MIT"

# (patterns of a path or a file name, the SPDX line, what may open the overview after it)
C_LIKE = ("/* " + SPDX + " */", ("/*", "//"))
HASH = ("# " + SPDX, ("#",))
PYTHON = ("# " + SPDX, ("#", '"""'))
HTML = ("<!-- " + SPDX + " -->", ("<!--",))
ROFF = ('.\\" ' + SPDX, ('.\\"',))
SOURCE_KINDS = [
    (("*.c", "*.h", "*.cc", "*.cpp", "*.inc"), C_LIKE),
    (("*.py",), PYTHON),
    (("*.sh", "meson.build", "meson_options.txt", "Makefile", ".clang-format", "*.dict",
      "*.pc.in", ".ci/*", "completion/*", "debian/rules", "debian/tests/*"), HASH),
    (("*.html",), HTML),
    (("man/*.in",), ROFF),
]
# Data and prose: no comment syntax (JSON, glTF, images, snapshots) or not code (Markdown, the
# license itself, git's list of ignored files, Debian's packaging metadata, which
# debian/copyright covers).
DATA = ("*.md", "*.json", "*.gltf", "*.glb", "*.png", "*.snap", "LICENSE", ".gitignore", "debian/*")
NOT_SOURCE = ("debian/tests/control",)  # data, though a source pattern above matches it
FIRST_LINES = ("#!", "<!doctype", "#compdef")  # may stand above the SPDX line


def matches(path, patterns):
    name = os.path.basename(path)
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(name, p) for p in patterns)


def kind_of(path):
    """The (SPDX line, overview openers) of a source file; None for data; "?" if unknown."""
    if path in NOT_SOURCE:
        return None
    for patterns, kind in SOURCE_KINDS:
        if matches(path, patterns):
            return kind
    return None if matches(path, DATA) else "?"


def tracked_files(root):
    """(paths relative to root, whether git listed them). A tarball has no .git: walk it,
    leaving out build folders (meson's)."""
    if os.path.exists(os.path.join(root, ".git")):
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             check=True).stdout.decode()
        return [p for p in out.split("\0") if p], True
    paths = []
    for top, dirs, files in os.walk(root):
        rel = os.path.relpath(top, root)
        dirs[:] = [d for d in dirs if not os.path.exists(os.path.join(top, d, "meson-private"))]
        paths += [os.path.normpath(os.path.join(rel, f)) for f in files]
    return paths, False


def problem_of(root, path):
    """What is wrong with the head of one file, or None."""
    kind = kind_of(path)
    if kind is None:
        return None
    if kind == "?":
        return "a file of a kind tests/check_spdx.py does not know: source or data?"
    spdx, openers = kind
    try:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            lines = [f.readline().rstrip("\n") for _ in range(3)]
    except (OSError, UnicodeDecodeError) as e:
        return f"cannot be read as text ({e})"
    at = 1 if lines[0].lower().startswith(FIRST_LINES) else 0
    if lines[at] != spdx:
        return f"line {at + 1} is not '{spdx}'"
    if not lines[at + 1].startswith(openers):
        return f"line {at + 2} (after the SPDX line) does not open the file's overview"
    return None


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    paths, from_git = tracked_files(root)
    checks = []

    bad = [(p, problem_of(root, p)) for p in sorted(paths)]
    bad = [(p, why) for p, why in bad if why and (from_git or kind_of(p) != "?")]
    checks.append(("every source file opens with its SPDX line and then its overview", bad))

    license_text = read(os.path.join(root, "LICENSE"))
    mit = ("Permission is hereby granted, free of charge" in license_text and
           'THE SOFTWARE IS PROVIDED "AS IS"' in license_text and
           license_text.startswith("MIT License"))
    checks.append(("LICENSE holds the MIT license", [] if mit else [("LICENSE", "not MIT")]))

    meson = read(os.path.join(root, "meson.build"))
    in_project = re.search(r"project\((.*?)\)\n", meson, re.S)
    ok = in_project and re.search(r"license\s*:\s*'MIT'", in_project.group(1))
    checks.append(("meson.build's project() says license 'MIT'",
                   [] if ok else [("meson.build", "no license : 'MIT' in project()")]))

    if len(sys.argv) == 3:
        pc = read(sys.argv[2])
        ok = re.search(r"^License: MIT$", pc, re.M)
        checks.append(("the pkg-config file says License: MIT",
                       [] if ok else [(sys.argv[2], "no 'License: MIT' line")]))

    return report([(name, [f"{path}: {why}" for path, why in problems])
                   for name, problems in checks])


if __name__ == "__main__":
    sys.exit(main())
