/* SPDX-License-Identifier: MIT */
/* jobs.h: the worker pool behind the SDK's parallel_for and run_tasks: fork-join, one job
 * at a time, started by the thread that owns the pool (the main thread) and joined before
 * the call returns.
 *
 * A job is `count` items cut into chunks of `grain` items (at most HOST_JOBS_MAX_CHUNKS
 * chunks: a finer grain is raised). The owner publishes the job, wakes sleeping workers
 * and takes chunks itself; every thread takes the next chunk from one shared counter, so
 * each chunk runs exactly once, on whichever thread got to it first. The call returns when
 * every chunk is done. Thread 0 is the owner, workers are 1..threads-1 (named ecs-job-N):
 * a job function gets that index, so per-thread scratch is an array of threads entries.
 *
 * Sleeping: after a job a worker spins for a few microseconds (only where each thread has
 * a CPU of its own), then sleeps on a futex until the next job: between frames the workers
 * use no CPU. Nested calls (a chunk calling parallel_for) run inline on the calling thread.
 *
 * Faults: with a guard set (host_jobs_set_guard, --safe), every chunk runs through it on
 * its own thread; a chunk that faulted makes the remaining chunks be skipped, the call
 * return ECS_ERR_PLUGIN, and host_jobs_take_crash report the signal once.
 *
 * Abandoned: when the owner leaves a job by a jump (the second SIGINT under --safe while a
 * chunk hangs), a worker may still hold a chunk of it. The next call sees the job never
 * joined, says so once, and from then on runs every job inline: the hung worker is left
 * alone, and a chunk it may still finish cannot be counted in a later job.
 *
 * Knows only the SDK's types and the log: it is part of the core (host/world).
 */
#ifndef HOST_JOBS_H
#define HOST_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ecs_plugin.h"

/* Chunks per job at most: a finer grain is raised so the count fits. */
#define HOST_JOBS_MAX_CHUNKS 65536u
/* Threads per pool at most (--threads). */
#define HOST_JOBS_MAX_THREADS 64u

typedef struct host_jobs host_jobs;

/* fn(ctx, begin, end, thread): items [begin, end) on thread `thread` (0 = the owner). */
typedef void (*host_job_fn)(void *ctx, uint32_t begin, uint32_t end, uint32_t thread);

/* Run fn(arg) catching a fault: 0, or the number of the signal that stopped it. Called on
 * the thread that runs the chunk (the owner or a worker). */
typedef int (*host_jobs_guard_fn)(void (*fn)(void *), void *arg);

/* The CPUs this process may run on (its affinity mask), at least 1. */
uint32_t host_jobs_cpus(void);

/* A pool of `threads` threads in all, the calling thread (which owns it) included: threads
 * - 1 workers are started (0: host_jobs_cpus(); more than HOST_JOBS_MAX_THREADS is cut to
 * it). 1 starts none: every job runs inline. When a worker cannot be started the pool
 * runs with those that did (a warning says so). NULL when memory ran out. */
host_jobs *host_jobs_start(uint32_t threads);

/* Stop and join every worker, free the pool (NULL: nothing). Owner, outside a job. */
void host_jobs_stop(host_jobs *j);

/* Threads that run a job's chunks, the owner included (1 without workers). */
uint32_t host_jobs_threads(const host_jobs *j);

/* One task of host_jobs_tasks: fn(ctx, thread) (the SDK's). */
typedef ecs_task host_task;

/* What each thread did in one job, handed to a span function (host_jobs_set_spans) on the
 * owner after the job: from the start of its first chunk to the end of its last (host_now_ns
 * time), and how many chunks it ran. Called only for threads that ran one. */
typedef void (*host_jobs_span_fn)(void *ctx, uint32_t thread, uint64_t t0, uint64_t t1,
                                  uint32_t chunks);

/* Hand every job's spans to fn(ctx, ...) (NULL: stop): the --trace file's track per thread.
 * Owner, outside a job. */
void host_jobs_set_spans(host_jobs *j, host_jobs_span_fn fn, void *ctx);

/* Run every chunk through guard (NULL: directly). Owner, outside a job. */
void host_jobs_set_guard(host_jobs *j, host_jobs_guard_fn guard);

/* Run fn over [0, count) in chunks of grain items (0: the pool picks about four chunks a
 * thread), the owner taking chunks too, and return when all are done. Inline (one call
 * fn(ctx, 0, count, thread)) without workers, when one chunk covers it, and when called
 * from inside a chunk. ECS_OK; ECS_ERR_INVALID_ARGUMENT for a NULL fn (count 0 is ECS_OK
 * with no call); ECS_ERR_WRONG_TIME from a thread that is neither the owner nor running a
 * chunk; ECS_ERR_PLUGIN when a chunk faulted (the rest were skipped). */
ecs_status host_jobs_for(host_jobs *j, uint32_t count, uint32_t grain, host_job_fn fn, void *ctx);

/* Run tasks[0..n) at once, each on one thread, and return when all are done: the same
 * statuses as host_jobs_for (a task with a NULL fn: ECS_ERR_INVALID_ARGUMENT, none run). */
ecs_status host_jobs_tasks(host_jobs *j, const host_task *tasks, uint32_t n);

/* The signal of the first chunk that faulted since the last call, and forget it (0: none).
 * Owner. */
int host_jobs_take_crash(host_jobs *j);

/* Is the calling thread running a chunk now (any pool)? */
bool host_jobs_in_job(void);

/* Is the calling thread one of a pool's workers? */
bool host_jobs_is_worker(void);

/* Nanoseconds each thread spent in chunks since the pool started, into busy[0..max) (the
 * owner first, then worker 1, 2, ...): returns how many were filled. Owner. */
uint32_t host_jobs_busy(const host_jobs *j, uint64_t *busy, uint32_t max);

/* One line for --stats: the thread count and each thread's share of the time since the
 * pool started spent in chunks ("jobs: 2 threads; busy in jobs since start: main 3.10%,
 * ecs-job-1 2.95%"). NULL: says there is no pool. Owner. */
void host_jobs_print_stats(const host_jobs *j, FILE *out);

#endif
