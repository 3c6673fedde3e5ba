/* SPDX-License-Identifier: MIT */
/* clock.c: choosing and calibrating the cheap clock (clock.h). */
#include "clock.h"

#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

host_clock host_clock_global; /* zero: CLOCK_MONOTONIC until host_clock_init */

uint64_t host_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Does the CPU say its TSC runs at a constant rate in every state? */
static bool invariant_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d)) return false;
    return (d >> 8) & 1u;
#else
    return false;
#endif
}

void host_clock_init(void)
{
    static bool done;
    if (done) return;
    done = true;
    if (!invariant_tsc()) return;
#if defined(__x86_64__) || defined(__i386__)
    /* ticks against CLOCK_MONOTONIC over at least 200 us: a reading's jitter (tens of ns)
     * is then under 0.05 % of the span */
    uint64_t n0 = host_clock_mono_ns(), t0 = __rdtsc(), n1, t1;
    do {
        n1 = host_clock_mono_ns();
        t1 = __rdtsc();
    } while (n1 - n0 < 200000);
    if (t1 <= t0) return; /* a counter that does not move: keep clock_gettime */
    __extension__ typedef unsigned __int128 u128;
    host_clock_global.mult = (uint64_t)(((u128)(n1 - n0) << 32) / (t1 - t0));
    host_clock_global.tsc = host_clock_global.mult != 0;
#endif
}
