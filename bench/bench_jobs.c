/* SPDX-License-Identifier: MIT */
/* bench_jobs.c: workload "jobs", BENCH.md J1: the host's worker pool (host/world/jobs.c).
 *
 * - An empty parallel_for over 2 threads (the caller and one worker, --threads 2), called
 *   back to back: ns per call (2 chunks) and per chunk (1,024 chunks of one item), beside
 *   a plain loop calling the same empty function on one thread for the same chunks.
 * - The same with every CPU this process may use, when that is more than 2.
 * - The idle workers' CPU between frames: 60 frames of 16.7 ms, one empty parallel_for
 *   each, the process's CPU time less the main thread's over the wall time (share of one
 *   core, %); the baseline is the same frames with --threads 1 (no workers: 0).
 */
#include <stdio.h>
#include <time.h>

#include "bench.h"
#include "jobs.h"

#define CALLS 200000u

__attribute__((noinline)) static void empty(void *ctx, uint32_t begin, uint32_t end,
                                            uint32_t thread)
{
    (void)ctx, (void)begin, (void)end, (void)thread;
    __asm__ volatile("" ::: "memory"); /* an empty body the compiler must keep */
}

/* ns per call of host_jobs_for(j, chunks, 1, empty) over calls calls, or of the plain
 * loop when j is NULL (chunks calls of empty per call). */
static double per_call(host_jobs *j, uint32_t chunks, uint32_t calls, uint64_t *sum)
{
    uint64_t t0 = bench_now_ns();
    for (uint32_t c = 0; c < calls; c++) {
        if (j)
            *sum += host_jobs_for(j, chunks, 1, empty, NULL) == ECS_OK;
        else {
            for (uint32_t k = 0; k < chunks; k++) empty(NULL, k, k + 1, 0);
            *sum += 1;
        }
    }
    return (double)(bench_now_ns() - t0) / calls;
}

static int call_row(const bench_config *cfg, uint32_t threads, uint32_t chunks)
{
    double ours[BENCH_MAX_REPS], base[BENCH_MAX_REPS];
    uint64_t sum = 0;
    uint32_t calls = chunks > 2 ? CALLS / 64 : CALLS;
    for (int r = 0; r < cfg->reps; r++) {
        host_jobs *j = host_jobs_start(threads);
        if (!j || host_jobs_threads(j) != threads) {
            fprintf(stderr, "jobs: could not start %u threads\n", threads);
            host_jobs_stop(j);
            return 1;
        }
        double p[BENCH_PASSES], b[BENCH_PASSES];
        per_call(j, chunks, calls / 10, &sum); /* warm up */
        for (int k = 0; k < BENCH_PASSES; k++) {
            p[k] = per_call(j, chunks, calls / BENCH_PASSES, &sum) / (chunks > 2 ? chunks : 1);
            b[k] = per_call(NULL, chunks, calls / BENCH_PASSES, &sum) / (chunks > 2 ? chunks : 1);
        }
        ours[r] = bench_stats_of(p, BENCH_PASSES).median;
        base[r] = bench_stats_of(b, BENCH_PASSES).median;
        host_jobs_stop(j);
    }
    char name[96];
    snprintf(name, sizeof name, "empty parallel_for, %u threads, %s", threads,
             chunks > 2 ? "per chunk (1,024 chunks)" : "per call (2 chunks)");
    bench_row row = {"J1",
                     name,
                     chunks > 2 ? "ns/chunk" : "ns/call",
                     "plain loop, one thread",
                     BENCH_PASSES,
                     bench_stats_of(ours, (size_t)cfg->reps),
                     bench_stats_of(base, (size_t)cfg->reps),
                     sum,
                     chunks > 2 ? NULL : "target: < 2 us per call on 2 workers"};
    bench_report(cfg, "jobs", &row);
    return 0;
}

static double cpu_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The share of one core (%) the pool's workers used over 60 idle frames. */
static double idle_share(uint32_t threads, uint64_t *sum)
{
    host_jobs *j = host_jobs_start(threads);
    struct timespec frame = {0, 16666667};
    double wall0 = (double)bench_now_ns(), proc0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID),
           self0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int f = 0; f < 60; f++) {
        *sum += host_jobs_for(j, 2, 1, empty, NULL) == ECS_OK;
        nanosleep(&frame, NULL);
    }
    double workers =
        (cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - proc0) - (cpu_ns(CLOCK_THREAD_CPUTIME_ID) - self0);
    double share = 100.0 * workers / ((double)bench_now_ns() - wall0);
    host_jobs_stop(j);
    return share;
}

static int idle_row(const bench_config *cfg)
{
    double ours[BENCH_MAX_REPS], base[BENCH_MAX_REPS];
    uint64_t sum = 0;
    for (int r = 0; r < cfg->reps; r++) {
        ours[r] = idle_share(2, &sum);
        base[r] = idle_share(1, &sum);
    }
    bench_row row = {"J1",
                     "idle workers between frames, 2 threads, 60 Hz",
                     "% of a core",
                     "--threads 1 (no workers)",
                     1,
                     bench_stats_of(ours, (size_t)cfg->reps),
                     bench_stats_of(base, (size_t)cfg->reps),
                     sum,
                     "target: < 0.1% of a core"};
    bench_report(cfg, "jobs", &row);
    return 0;
}

static int run(const bench_config *cfg)
{
    bench_begin(cfg, "jobs",
                "J1: an empty parallel_for over the workers, beside a plain loop on one "
                "thread; idle workers' CPU");
    int rc = call_row(cfg, 2, 2) | call_row(cfg, 2, 1024);
    uint32_t cpus = host_jobs_cpus();
    if (cpus > 2) rc |= call_row(cfg, cpus, 2 * cpus) | call_row(cfg, cpus, 1024);
    rc |= idle_row(cfg);
    return rc;
}

const bench_workload bench_jobs_workload = {
    "jobs", "J1: empty parallel_for per call and per chunk; idle workers' CPU", run};
