#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test.sh: install what is missing, build, run the whole test suite. Exits non-zero on
# any failure; the last line is "N passed, N failed" (counts of test cases).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ecs_install_missing "${ECS_TEST_PACKAGES[@]}" || exit 1
ecs_build || { echo "0 passed, 1 failed"; exit 1; }
meson test -C "$ECS_BUILD" --print-errorlogs "$@"
status=$?
python3 "$ECS_ROOT/scripts/count_tests.py" "$ECS_BUILD/meson-logs/testlog.json" || status=1
exit $status
