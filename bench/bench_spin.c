/* SPDX-License-Identifier: MIT */
/* bench_spin.c: workload "spin", the spin plugin's system (BENCH.md, with M1: "the spin
 * system >= 1.6x with 2 threads"): 100,000 and 1,000,000 root entities with a transform
 * (BENCH.md's locals) and a spin rate, the system's run over all of them (their rotations
 * turned by rate * dt, then handed to transform in one set_local_many), on 2 job threads (a
 * pool in the world, as --threads 2) beside the same run on one thread, in the same run.
 * The real transform.so and spin.so through the real loader, a fresh world per
 * repetition. The locals after the first run on 2 threads must equal those after the
 * first run on one thread, bit for bit (both start from the same locals).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "jobs.h"
#include "log.h"
#include "session.h"
#include "spin_api.h"
#include "transform_api.h"
#include "world.h"

#if !defined(SPIN_SO) || !defined(TRANSFORM_SO)
#error "SPIN_SO and TRANSFORM_SO must name the built spin.so and transform.so"
#endif

typedef struct spin_bench {
    bench_world bw;
    const ecs_transform_api *tf;
    const ecs_spin_api *spin;
    const host_system *sys;
    ecs_entity *ents;
    ecs_transform_local *start;
    uint32_t n;
} spin_bench;

/* A world with n spinning entities. 0, or -1 (said on stderr). */
static int open_bench(spin_bench *b, uint32_t n)
{
    static const char *const paths[] = {TRANSFORM_SO, SPIN_SO};
    memset(b, 0, sizeof *b);
    b->n = n;
    if (bench_world_open(&b->bw, "spin", paths, 2, NULL) != 0) return -1;
    host_world *w = b->bw.w;
    b->tf = host_registry_find(&b->bw.s->registry, ECS_TRANSFORM_API_NAME, 1, NULL);
    b->spin = host_registry_find(&b->bw.s->registry, ECS_SPIN_API_NAME, 1, NULL);
    b->sys = w->system_count ? w->systems[0] : NULL;
    b->ents = malloc(n * sizeof *b->ents);
    b->start = malloc(n * sizeof *b->start);
    if (!b->tf || !b->spin || !b->sys || !b->ents || !b->start ||
        host_entity_create_many(w->entities, b->ents, n) != ECS_OK)
        return fprintf(stderr, "spin: could not set the world up\n"), -1;
    bench_rng r = bench_rng_seeded(BENCH_SEED);
    for (uint32_t i = 0; i < n; i++) {
        ecs_transform_local l;
        float p[3], q[4], s[3];
        bench_local_draw(&r, p, q, s);
        l.position = ecs_vec3_make(p[0], p[1], p[2]);
        l.rotation = (ecs_quat){q[0], q[1], q[2], q[3]};
        l.scale = ecs_vec3_make(s[0], s[1], s[2]);
        ecs_vec3 rate = ecs_vec3_make(bench_rng_float(&r), bench_rng_float(&r), 1.0f);
        if (b->tf->add(b->tf->self, b->ents[i], &l, ecs_entity_null()) != ECS_OK ||
            b->spin->set(b->spin->self, b->ents[i], rate) != ECS_OK ||
            b->tf->get_local(b->tf->self, b->ents[i], &b->start[i]) != ECS_OK)
            return fprintf(stderr, "spin: could not add entity %u\n", i), -1;
    }
    return 0;
}

static void close_bench(spin_bench *b)
{
    free(b->ents);
    free(b->start);
    bench_world_close(&b->bw);
}

/* ns per entity of one system run. */
static double run_once(spin_bench *b)
{
    ecs_frame_info frame = {.frame = 1, .dt = 1.0 / 60, .time = 1.0};
    uint64_t t0 = bench_now_ns();
    b->sys->desc.run(b->sys->desc.state, b->ents, b->n, &frame);
    return (double)(bench_now_ns() - t0) / b->n;
}

/* The locals back to the start (untimed). */
static void restart(spin_bench *b)
{
    b->tf->set_local_many(b->tf->self, b->ents, b->start, b->n, NULL);
}

/* A checksum of every local's rotation. */
static double rotations(spin_bench *b)
{
    double sum = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        ecs_transform_local l;
        b->tf->get_local(b->tf->self, b->ents[i], &l);
        sum += (double)l.rotation.x + 2.0 * l.rotation.y + 3.0 * l.rotation.z + 4.0 * l.rotation.w;
    }
    return sum;
}

/* One repetition: BENCH_PASSES runs on one thread, then on two; medians into *one, *two.
 * -1 when the results differ or no worker started. */
static int repetition(uint32_t n, double *one, double *two, double *sum)
{
    spin_bench b;
    double o[BENCH_PASSES], t[BENCH_PASSES], first_one = 0, first_two = 1;
    host_jobs *pool = host_jobs_start(2);
    int rc = host_jobs_threads(pool) == 2 ? open_bench(&b, n) : -1;
    for (int p = 0; rc == 0 && p < BENCH_PASSES; p++) {
        restart(&b);
        o[p] = run_once(&b);
        if (p == 0) first_one = rotations(&b);
    }
    b.bw.w->jobs = pool;
    for (int p = 0; rc == 0 && p < BENCH_PASSES; p++) {
        restart(&b);
        t[p] = run_once(&b);
        if (p == 0) first_two = rotations(&b);
    }
    if (rc == 0) b.bw.w->jobs = NULL;
    if (rc == 0 && first_one != first_two)
        rc = -1, fprintf(stderr, "spin: 2 threads turned otherwise than one\n");
    if (rc == 0) {
        *one = bench_stats_of(o, BENCH_PASSES).median;
        *two = bench_stats_of(t, BENCH_PASSES).median;
        *sum = first_two;
    }
    if (pool && rc == 0) close_bench(&b);
    host_jobs_stop(pool);
    return rc;
}

static int run_row(const bench_config *cfg, uint32_t n)
{
    double one[BENCH_MAX_REPS], two[BENCH_MAX_REPS], sum = 0;
    for (int r = 0; r < cfg->reps; r++)
        if (repetition(n, &one[r], &two[r], &sum) != 0) return 1;
    char name[96];
    snprintf(name, sizeof name, "spin system, %u entities, --threads 2", n);
    bench_row row = {"M1t",
                     name,
                     "ns/entity",
                     "the same run, one thread",
                     BENCH_PASSES,
                     bench_stats_of(two, (size_t)cfg->reps),
                     bench_stats_of(one, (size_t)cfg->reps),
                     (uint64_t)(sum * 1000.0),
                     "ratio < 1: faster (target <= 0.625, i.e. >= 1.6x); the turn on job threads, "
                     "then transform's set_local_many on one; rotations identical"};
    bench_report(cfg, "spin", &row);
    return 0;
}

static int run(const bench_config *cfg)
{
    bench_begin(cfg, "spin",
                "M1t: the spin system over every entity on 2 job threads, beside one thread");
    ecs_log_level level = host_log_level();
    host_log_set_level(ECS_LOG_WARN); /* no "loaded" line per repetition */
    int rc = run_row(cfg, 100000) | run_row(cfg, 1000000);
    host_log_set_level(level);
    return rc;
}

const bench_workload bench_spin_workload = {"spin", "M1t: the spin system on 2 job threads vs one",
                                            run};
