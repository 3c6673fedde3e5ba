/* SPDX-License-Identifier: MIT */
/* timing.c: update-time statistics in a fixed log-linear histogram (timing.h). */
#include "timing.h"

#include <math.h>

static unsigned bucket_of(uint64_t ns)
{
    if (ns < 16) return (unsigned)ns; /* exact below 16 ns */
    unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
    unsigned sub = (unsigned)(ns >> (msb - 4)) & 15u; /* next 4 bits below the top one */
    unsigned b = (msb - 3) * 16 + sub;
    return b < HOST_TIMING_BUCKETS ? b : HOST_TIMING_BUCKETS - 1;
}

static uint64_t bucket_top(unsigned b)
{
    if (b < 16) return b;
    unsigned msb = b / 16 + 3, sub = b % 16;
    return ((16ull + sub + 1) << (msb - 4)) - 1;
}

void host_timing_record(host_timing *t, uint64_t ns)
{
    t->count++;
    t->total_ns += ns;
    if (ns > t->max_ns) t->max_ns = ns;
    t->bucket[bucket_of(ns)]++;
}

uint64_t host_timing_quantile(const host_timing *t, double q)
{
    if (t->count == 0) return 0;
    /* the smallest rank with at least a fraction q of the samples at or below it */
    uint64_t want = (uint64_t)ceil(q * (double)t->count - 1e-9), seen = 0;
    if (want == 0) want = 1;
    for (unsigned b = 0; b < HOST_TIMING_BUCKETS; b++) {
        seen += t->bucket[b];
        if (seen >= want) {
            uint64_t top = bucket_top(b);
            return top < t->max_ns ? top : t->max_ns;
        }
    }
    return t->max_ns;
}

double host_timing_mean(const host_timing *t)
{
    return t->count ? (double)t->total_ns / (double)t->count : 0.0;
}
