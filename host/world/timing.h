/* SPDX-License-Identifier: MIT */
/* timing.h: per-manager update times: count, total, max and a log-linear histogram for
 * percentiles (16 buckets per power of two: a p99 within about 6% of the true value,
 * in fixed memory whatever the number of frames). */
#ifndef HOST_TIMING_H
#define HOST_TIMING_H

#include <stdint.h>

#define HOST_TIMING_BUCKETS (64 * 16)

/* Steps are timed on one frame in this many by default (host_world.time_every,
 * --timing-every). */
#define HOST_TIME_EVERY 8u

typedef struct host_timing {
    uint64_t count, total_ns, max_ns;
    uint32_t bucket[HOST_TIMING_BUCKETS];
} host_timing;

void host_timing_record(host_timing *t, uint64_t ns);
/* The value below which a fraction q (0..1) of the samples fall (upper bucket edge). */
uint64_t host_timing_quantile(const host_timing *t, double q);
double host_timing_mean(const host_timing *t);

#endif
