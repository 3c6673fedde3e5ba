/* SPDX-License-Identifier: MIT */
/* clock.h: a cheap monotonic clock for the per-step timing of every frame.
 *
 * On x86-64 with an invariant time-stamp counter (cpuid 0x80000007, EDX bit 8: constant
 * rate, runs in every power state) a reading is one `rdtsc`, about 4x cheaper than
 * clock_gettime(CLOCK_MONOTONIC) through the vDSO; elsewhere it is clock_gettime. Ticks
 * become nanoseconds with a factor calibrated against CLOCK_MONOTONIC once per process
 * (host_clock_init: about 0.2 ms), as (ticks * mult) >> 32.
 *
 * Invariant: after host_clock_init, host_clock_ns(a, b) for readings a <= b is the time
 * between them in nanoseconds within the calibration error (under 0.1 %).
 */
#ifndef HOST_CLOCK_H
#define HOST_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

typedef struct host_clock {
    bool tsc;      /* readings are TSC ticks; else nanoseconds of CLOCK_MONOTONIC */
    uint64_t mult; /* ns per tick, times 2^32 */
} host_clock;

extern host_clock host_clock_global;

/* Choose the source and calibrate it (once per process; later calls return at once).
 * Never fails: without an invariant TSC the clock is CLOCK_MONOTONIC. */
void host_clock_init(void);

/* Monotonic time in nanoseconds (CLOCK_MONOTONIC). */
uint64_t host_clock_mono_ns(void);

/* One reading, in the clock's own ticks. */
static inline uint64_t host_clock_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (host_clock_global.tsc) return __rdtsc();
#endif
    return host_clock_mono_ns();
}

/* Nanoseconds between readings a and b (a <= b; 0 when the counter went back). */
static inline uint64_t host_clock_ns(uint64_t a, uint64_t b)
{
    if (b <= a) return 0;
    if (!host_clock_global.tsc) return b - a;
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)(((u128)(b - a) * host_clock_global.mult) >> 32);
}

#endif
