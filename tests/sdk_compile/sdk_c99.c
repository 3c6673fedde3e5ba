/* SPDX-License-Identifier: MIT */
/* sdk_c99.c: sdk/ecs_plugin.h built as C99 -pedantic -Wall -Wextra -Werror (the build is
 * the compile-only test), then the header's run-time checks (sdk_checks.inc) as TAP. */
#define SDK_LANG "c99"
#include "sdk_checks.inc"
