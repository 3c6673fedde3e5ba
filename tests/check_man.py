#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check_man.py: the manual pages say what the program does, and render cleanly (TAP).

- Every option `ecs-host --help` lists is an item under OPTIONS in ecs-host(1), with an
  argument exactly when --help shows one, and the page lists no option --help does not.
  A new option is documented in man/ecs-host.1.in (`.It Fl -name Ar value`) or this fails.
- `mandoc -Tlint` and `groff -ww -z` find nothing to say about either page.
- The example plugin of ecs-plugin(7) builds as the page says (-Wl,-z,defs, hidden
  visibility, warnings as errors) against the SDK headers and exports one symbol.

usage: check_man.py ECS_HOST MAN_DIR SDK_DIR    (MAN_DIR: the built ecs-host.1, ecs-plugin.7)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tapcheck import read, report

PAGES = ("ecs-host.1", "ecs-plugin.7")
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def help_options(ecs_host):
    """{option: takes an argument} from the first column of `ecs-host --help`."""
    text = subprocess.run([ecs_host, "--help"], capture_output=True, text=True,
                          check=True).stdout
    options = {}
    for line in text.splitlines():
        m = re.match(r"^  (-\S.*)$", line)  # an option's line, not a continuation
        if not m:
            continue
        column = re.split(r"\s{2,}", m.group(1))[0]  # "-q, --quiet", "--scene FILE"
        names = OPTION.findall(column)
        rest = OPTION.sub("", column).replace(",", "").strip()
        for name in names:
            options[name] = bool(rest)
    return options


def page_options(page_text):
    """{option: takes an argument} from the `.It Fl ...` items of the OPTIONS section."""
    section = re.search(r"^\.Sh OPTIONS\n(.*?)^\.Sh ", page_text, re.M | re.S)
    options = {}
    for line in (section.group(1) if section else "").splitlines():
        if not line.startswith(".It Fl "):
            continue
        takes = bool(re.search(r"\bAr\b", line))
        for flag in re.findall(r"\bFl\s+(\S+)", line):
            options["-" + flag.replace("\\-", "-")] = takes
    return options


def sync_problems(ecs_host, man_dir):
    in_help = help_options(ecs_host)
    page = read(os.path.join(man_dir, "ecs-host.1"))
    in_page = page_options(page)
    problems = []
    if not in_help:
        problems.append("no option found in `ecs-host --help`")
    for name, takes in sorted(in_help.items()):
        if name not in in_page:
            problems.append(f"{name} (in --help) is not under OPTIONS in man/ecs-host.1.in: "
                            f"add `.It Fl {name[1:]}{' Ar value' if takes else ''}` and say "
                            "what it does")
        elif in_page[name] != takes:
            problems.append(f"{name}: --help shows {'an' if takes else 'no'} argument, the "
                            "man page the other")
    for name in sorted(set(in_page) - set(in_help)):
        problems.append(f"{name} is in the man page but not in --help: take it out")
    return problems


# What mandoc says of this machine rather than of a page: the two pages refer to each
# other and are not installed yet (both are built, so the references hold), and the
# system's manuals have no mandoc.db (Debian indexes them with man-db).
NOT_ABOUT_THE_PAGE = re.compile(r"referenced manual not found: Xr (ecs-host 1|ecs-plugin 7)"
                                r"( \(\d+ times\))?$|^mandoc: outdated mandoc\.db ")


def lint_problems(man_dir):
    problems = []
    for tool, args in (("mandoc", ["-Tlint"]), ("groff", ["-mandoc", "-ww", "-z"])):
        exe = shutil.which(tool)
        if not exe:
            problems.append(f"{tool} is not installed (scripts/setup.sh installs it)")
            continue
        for page in PAGES:
            path = os.path.join(man_dir, page)
            r = subprocess.run([exe] + args + [path], capture_output=True, text=True)
            said = [line for line in (r.stdout + r.stderr).splitlines()
                    if line.strip() and not NOT_ABOUT_THE_PAGE.search(line)]
            if said or (r.returncode and tool == "groff"):
                problems.append(f"{tool} {' '.join(args)} {page} (exit {r.returncode}): " +
                                "\n".join(said))
    return problems


def example_problems(man_dir, sdk_dir):
    """Build the C example of ecs-plugin(7) (its first literal block holding #include)."""
    page = read(os.path.join(man_dir, "ecs-plugin.7"))
    blocks = re.findall(r"^\.Bd -literal[^\n]*\n(.*?)^\.Ed$", page, re.M | re.S)
    code = next((b for b in blocks if "#include" in b), None)
    if code is None:
        return ["ecs-plugin.7 has no example plugin"]
    code = code.replace("\\e", "\\")
    cjson = subprocess.run(["pkg-config", "--cflags", "libcjson"], capture_output=True,
                           text=True).stdout.split()
    with tempfile.TemporaryDirectory() as tmp:
        src, so = os.path.join(tmp, "hello.c"), os.path.join(tmp, "hello.so")
        with open(src, "w", encoding="utf-8") as f:
            f.write(code)
        build = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                 "-fvisibility=hidden", "-Wl,-z,defs", "-I", sdk_dir] + cjson + \
                ["-o", so, src]
        r = subprocess.run(build, capture_output=True, text=True)
        if r.returncode:
            return [f"the example does not build: {r.stderr.strip()}"]
        nm = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True,
                            text=True).stdout
        exported = [line.split()[-1] for line in nm.splitlines() if " T " in line]
        if exported != ["ecs_plugin_entry"]:
            return [f"the example exports {exported}, not ecs_plugin_entry alone"]
    return []


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    ecs_host, man_dir, sdk_dir = sys.argv[1:]
    checks = [
        ("every option of ecs-host --help is documented in ecs-host(1), and no other",
         sync_problems(ecs_host, man_dir)),
        ("mandoc -Tlint and groff -ww -z are silent on both pages", lint_problems(man_dir)),
        ("the example plugin of ecs-plugin(7) builds and exports one symbol",
         example_problems(man_dir, sdk_dir)),
    ]
    return report(checks)


if __name__ == "__main__":
    sys.exit(main())
