/* SPDX-License-Identifier: MIT */
/* sdk_cpp17.cpp: sdk/ecs_plugin.h built as C++17 -pedantic -Wall -Wextra -Werror (the build
 * is the compile-only test), the header's run-time checks, and C/C++ struct layout parity. */
#include "sdk_layout.h"

static void layout_matches_c99(void);

#define SDK_LANG        "cpp17"
#define SDK_EXTRA_TESTS {"layout_matches_c99", layout_matches_c99},
#include "sdk_checks.inc"

/* Every size and offset the C++ compiler sees equals the C99 one (sdk_layout_c99.c). */
static void layout_matches_c99(void)
{
    static const char *const label[] = {
#define SDK_LABEL(label, value) label,
        SDK_LAYOUT(SDK_LABEL)
#undef SDK_LABEL
    };
    const size_t cpp[] = {
#define SDK_VALUE(label, value) value,
        SDK_LAYOUT(SDK_VALUE)
#undef SDK_VALUE
    };
    enum { N = sizeof cpp / sizeof cpp[0] };
    size_t c[N];
    CHECK(sdk_layout_c(c, N) == N);
    for (size_t i = 0; i < N; i++) {
        if (c[i] != cpp[i]) printf("# %s: C99 %zu, C++17 %zu\n", label[i], c[i], cpp[i]);
        CHECK(c[i] == cpp[i]);
    }
}
