/* SPDX-License-Identifier: MIT */
/* sdk_layout_c99.c: the SDK's struct layout as a C99 compiler sees it, linked into the
 * C++17 check, which compares it with its own (see sdk_layout.h). */
#include "sdk_layout.h"

size_t sdk_layout_c(size_t *out, size_t max)
{
    size_t n = 0;
#define SDK_STORE(label, value)                                                                    \
    if (n < max) out[n] = (value);                                                                 \
    n++;
    SDK_LAYOUT(SDK_STORE)
#undef SDK_STORE
    return n;
}
