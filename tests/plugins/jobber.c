/* SPDX-License-Identifier: MIT */
/* jobber.c: a plugin whose update fans work out with parallel_for (test_host.c,
 * test_reload.c).
 *
 * Default: every frame, a sum over 1,000,000 items with a partial sum per thread; on the
 * first two updates of this build ("update 0", "update 1": a reloaded build starts again)
 * it logs the thread count, the sum and how many items were counted. Variants:
 * -DJOBBER_FORBIDDEN: frame 0's chunks call the host: entity_create (refused in a job),
 * entity_alive (allowed: [job]) and a nested parallel_for (runs inline); the update logs
 * what they got. -DJOBBER_CRASH: on update 1 one chunk of 64 writes to an unmapped address;
 * the update logs what parallel_for returned (under --safe it returns, and the plugin then
 * goes as after a crash in its update). -DJOBBER_WAIT: the jobs are two chunks, and on the
 * first update each waits until the other started on the other kind of thread (the main
 * thread, a worker), so both tracks of a --trace show a slice. */
#include <stdatomic.h>
#include <time.h>

#include "ecs_plugin.h"

#ifndef JOBBER_NAME
#define JOBBER_NAME "jobber"
#endif
#define ITEMS   1000000u
#define THREADS 64u

typedef struct jobber {
    const ecs_host *host;
    uint64_t partial[THREADS][8]; /* a cache line each */
    _Atomic(uint32_t) items, refused, alive_ok, nested_ok;
    uint64_t updates; /* of this build */
} jobber;

static jobber self;
#ifdef JOBBER_CRASH
static int *volatile nowhere = (int *)(uintptr_t)16;
#endif

#ifdef JOBBER_FORBIDDEN
static void nested(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    atomic_fetch_add(&((jobber *)ctx)->nested_ok, end - begin);
}
#endif

static void chunk(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    jobber *j = ctx;
    uint64_t sum = 0;
    for (uint32_t i = begin; i < end; i++) sum += i % 1000u;
    j->partial[thread % THREADS][0] += sum;
    atomic_fetch_add(&j->items, end - begin);
#ifdef JOBBER_FORBIDDEN
    ecs_entity e = {0};
    if (j->host->entity_create(j->host, &e) == ECS_ERR_WRONG_TIME) atomic_fetch_add(&j->refused, 1);
    if (!j->host->entity_alive(j->host, e)) atomic_fetch_add(&j->alive_ok, 1);
    if (j->host->parallel_for(j->host, 10, 1, nested, j) != ECS_OK)
        atomic_fetch_add(&j->nested_ok, 1000);
#endif
#ifdef JOBBER_CRASH
    if (begin == 37 && j->updates == 1) *nowhere = 1;
#endif
#ifdef JOBBER_WAIT
    /* Each of the two chunks waits for the other to start on another kind of thread: one
     * thread cannot take both (its first waits until the other thread took the second). */
    _Atomic(uint32_t) *mine = thread ? &j->alive_ok : &j->nested_ok;
    _Atomic(uint32_t) *other = thread ? &j->nested_ok : &j->alive_ok;
    atomic_store(mine, 1);
    struct timespec ms = {0, 1000000};
    for (int i = 0; j->updates == 0 && i < 10000 && !atomic_load(other); i++)
        nanosleep(&ms, NULL); /* a deadline (10 s), not a timing */
#endif
}

static void jobber_update(void *state, const ecs_frame_info *frame)
{
    jobber *j = state;
    const ecs_host *h = j->host;
    for (uint32_t t = 0; t < THREADS; t++) j->partial[t][0] = 0;
    atomic_store(&j->items, 0);
#if defined(JOBBER_WAIT)
    uint32_t count = 2, grain = 1;
#elif defined(JOBBER_FORBIDDEN) || defined(JOBBER_CRASH)
    uint32_t count = 64, grain = 1;
#else
    uint32_t count = ITEMS, grain = 4096;
#endif
    (void)frame;
    ecs_status s = ecs_parallel_for(h, count, grain, chunk, j);
    uint64_t sum = 0, n = j->updates++;
    for (uint32_t t = 0; t < THREADS; t++) sum += j->partial[t][0];
    if (n > 1) return;
    h->log(h, ECS_LOG_INFO, "update %llu: parallel_for: %s; threads %u; items %u of %u; sum %llu",
           (unsigned long long)n, ecs_status_text(s), ecs_job_threads(h), atomic_load(&j->items),
           count, (unsigned long long)sum);
#ifdef JOBBER_FORBIDDEN
    h->log(h, ECS_LOG_INFO,
           "in jobs: entity_create refused %u, entity_alive answered %u, nested %u",
           atomic_load(&j->refused), atomic_load(&j->alive_ok), atomic_load(&j->nested_ok));
#endif
}

static ecs_status jobber_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    (void)args;
    self.host = h;
    self.updates = 0;
    ecs_manager_desc d = {
        .struct_size = sizeof d, .name = JOBBER_NAME, .state = &self, .update = jobber_update};
    *state = &self;
    return h->register_manager(h, &d);
}

static void jobber_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    (void)state, (void)reason;
    h->log(h, ECS_LOG_INFO, "unloaded");
}

static const ecs_plugin_desc jobber_plugin = {
    ECS_PLUGIN_DESC_HEADER,
    JOBBER_NAME,
    "1.0.0",
    1,
    NULL,
    jobber_load,
    jobber_unload,
    ECS_STATE_LAYOUT(jobber, host, partial, items, updates),
};

ECS_PLUGIN_EXPORT(jobber_plugin)
