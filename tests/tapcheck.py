# SPDX-License-Identifier: MIT
"""tapcheck.py: what the check_*.py tests share: reading a file that may be missing, and
reporting named checks as TAP (one case per check, each problem a comment line)."""


def read(path):
    """A text file's content; a note that it cannot be read instead (the check then fails,
    naming it)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        return f"(cannot read {path}: {e})"


def report(checks):
    """Print [(name, [problem, ...]), ...] as TAP; return the exit status (1: a problem)."""
    print(f"1..{len(checks)}")
    for n, (name, problems) in enumerate(checks, 1):
        print(f"{'not ok' if problems else 'ok'} {n} - {name}")
        for p in problems:
            print("# " + str(p).replace("\n", "\n# "))
    return 1 if any(p for _, p in checks) else 0
