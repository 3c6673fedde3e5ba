/* SPDX-License-Identifier: MIT */
/* bench_dispatch.c: workload "dispatch", BENCH.md D1: one frame of the real host loop
 * (host_world_frame) with 3 and with 64 managers whose update is empty, registered by a
 * real plugin (bench_managers.so) loaded through the real loader, beside direct calls
 * through a static array of function pointers. Reported per manager, with the host's
 * per-manager timing as it is by default (every update timed on one frame in 8, the mean
 * over all frames), on every frame (--timing-every 1) and off (--no-timing). Also the liveness
 * check a plugin makes: inline through the host's generation array vs a call through its table.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#ifndef BENCH_MANAGERS_SO
#error "BENCH_MANAGERS_SO must name the built bench_managers.so"
#endif

#define ALIVE_N 1000000u

/* ---- a world with the bench plugin loaded, K managers ---- */

typedef bench_world loaded;

static void unload(loaded *l)
{
    bench_world_close(l);
}

/* Load bench_managers.so with K managers. Returns 0, or -1 (said on stderr). */
static int load_managers(loaded *l, int k)
{
    static const char *const paths[] = {BENCH_MANAGERS_SO};
    char manifest[128];
    snprintf(manifest, sizeof manifest,
             "{\"plugins\": [{\"name\": \"bench_managers\", \"config\": {\"managers\": %d}}]}\n",
             k);
    if (bench_world_open(l, "dispatch", paths, 1, manifest) != 0) return -1;
    if (l->w->manager_count == (size_t)k) return 0;
    fprintf(stderr, "dispatch: could not load %d managers from %s\n", k, BENCH_MANAGERS_SO);
    return -1;
}

/* ---- baseline: direct calls through a static array ---- */

typedef void (*update_fn)(void *, const ecs_frame_info *);

__attribute__((noinline)) static void base_update(void *state, const ecs_frame_info *frame)
{
    (void)state;
    (void)frame;
    __asm__ volatile("" ::: "memory"); /* an empty body the compiler must keep */
}

static update_fn base_table[64];

static double base_frames(int k, int frames)
{
    ecs_frame_info info = {0, 0.0, 0.0, 0};
    uint64_t t0 = bench_now_ns();
    for (int f = 0; f < frames; f++) {
        for (int i = 0; i < k; i++) base_table[i](NULL, &info);
        info.frame++;
    }
    return (double)(bench_now_ns() - t0) / ((double)frames * k);
}

static double host_frames(host_world *w, int k, int frames)
{
    uint64_t t0 = bench_now_ns();
    for (int f = 0; f < frames; f++) host_world_frame(w);
    return (double)(bench_now_ns() - t0) / ((double)frames * k);
}

/* every: time the updates on one frame in `every`; 0: --no-timing. */
static int run_rows(const bench_config *cfg, int k, uint32_t every)
{
    int frames = k == 3 ? 200000 : 20000;
    double ours[BENCH_MAX_REPS], base[BENCH_MAX_REPS];
    for (int i = 0; i < k; i++) base_table[i] = base_update;
    for (int r = 0; r < cfg->reps; r++) {
        loaded l;
        if (load_managers(&l, k) != 0) {
            unload(&l);
            return 1;
        }
        l.w->timing.time_managers = every > 0;
        l.w->timing.time_every = every;
        host_frames(l.w, k, frames / 10); /* warm up */
        ours[r] = host_frames(l.w, k, frames);
        base[r] = base_frames(k, frames);
        if (l.w->frame.frame != (uint64_t)(frames + frames / 10)) {
            fprintf(stderr, "dispatch: the host ran %llu frames, expected %d\n",
                    (unsigned long long)l.w->frame.frame, frames + frames / 10);
            unload(&l);
            return 1;
        }
        unload(&l);
    }
    char name[96];
    char how[32];
    snprintf(how, sizeof how, every == HOST_TIME_EVERY ? "timed (default)" : "--timing-every %u",
             every);
    snprintf(name, sizeof name, "frame, %d managers, %s", k, every ? how : "--no-timing");
    bench_row row = {"D1",
                     name,
                     "ns/manager",
                     "static fn array",
                     1,
                     bench_stats_of(ours, (size_t)cfg->reps),
                     bench_stats_of(base, (size_t)cfg->reps),
                     (uint64_t)frames,
                     every == HOST_TIME_EVERY
                         ? "timed: one clock read per manager on one frame in 8, as --stats needs"
                         : NULL};
    bench_report(cfg, "dispatch", &row);
    return 0;
}

/* ---- liveness from a plugin: inline vs through the table ---- */

static int run_alive(const bench_config *cfg)
{
    double inl[BENCH_MAX_REPS], call[BENCH_MAX_REPS];
    uint64_t sum = 0;
    ecs_entity *ids = malloc(ALIVE_N * sizeof *ids);
    if (!ids) return 1;
    for (int r = 0; r < cfg->reps; r++) {
        loaded l;
        if (load_managers(&l, 3) != 0 ||
            host_entity_create_many(l.w->entities, ids, ALIVE_N) != ECS_OK) {
            unload(&l);
            free(ids);
            return 1;
        }
        const ecs_host *h = &l.s->plugins[0]->table; /* the plugin's own table */
        double best_inline[BENCH_PASSES], best_call[BENCH_PASSES];
        for (int p = 0; p < BENCH_PASSES; p++) {
            uint64_t t0 = bench_now_ns();
            for (uint32_t i = 0; i < ALIVE_N; i++) sum += ecs_alive(h, ids[i]);
            uint64_t t1 = bench_now_ns();
            for (uint32_t i = 0; i < ALIVE_N; i++) sum += h->entity_alive(h, ids[i]);
            uint64_t t2 = bench_now_ns();
            best_inline[p] = (double)(t1 - t0) / ALIVE_N;
            best_call[p] = (double)(t2 - t1) / ALIVE_N;
        }
        inl[r] = bench_stats_of(best_inline, BENCH_PASSES).median;
        call[r] = bench_stats_of(best_call, BENCH_PASSES).median;
        unload(&l);
    }
    free(ids);
    uint64_t want = (uint64_t)cfg->reps * BENCH_PASSES * ALIVE_N * 2;
    if (sum != want) {
        fprintf(stderr, "dispatch: alive said no %llu times\n", (unsigned long long)(want - sum));
        return 1;
    }
    bench_row row = {"D1",
                     "alive() from a plugin: inline vs table call",
                     "ns/call",
                     "h->entity_alive()",
                     BENCH_PASSES,
                     bench_stats_of(inl, (size_t)cfg->reps),
                     bench_stats_of(call, (size_t)cfg->reps),
                     sum,
                     "ours: ecs_alive(h, e), one byte load through h->generations"};
    bench_report(cfg, "dispatch", &row);
    return 0;
}

static int run(const bench_config *cfg)
{
    bench_begin(cfg, "dispatch",
                "D1: one frame of empty manager updates through the host, "
                "beside direct calls through a static array");
    int rc = 0;
    for (int k = 3; k <= 64; k += 61) {
        rc |= run_rows(cfg, k, HOST_TIME_EVERY);
        rc |= run_rows(cfg, k, 1);
        rc |= run_rows(cfg, k, 0);
    }
    rc |= run_alive(cfg);
    return rc;
}

const bench_workload bench_dispatch_workload = {
    "dispatch", "D1: frame dispatch for 3 and 64 managers; inline vs called alive()", run};
