/* SPDX-License-Identifier: MIT */
/* sdk_c11.c: sdk/ecs_plugin.h built as C11 -pedantic -Wall -Wextra -Werror (the build is
 * the compile-only test), then the header's run-time checks (sdk_checks.inc) as TAP. */
#define SDK_LANG "c11"
#include "sdk_checks.inc"
