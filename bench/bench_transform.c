/* SPDX-License-Identifier: MIT */
/* bench_transform.c: workload "transform", BENCH.md W6: 1,000 trees of 1,000 nodes built
 * through the transform plugin's API (the real transform.so, loaded by the real loader
 * into a host_world), then the world update pass, each beside a plain C loop over arrays
 * already sorted parents-first with scalar math, in the same run.
 *
 * Data, exactly as BENCH.md: trees created one after the other, breadth-first inside a
 * tree (node 0 the root, 1-10 under 0, 11-110 under 1 + (k-11)/10, 111-999 under
 * 11 + (k-111)/10); the i-th created entity's local from one xorshift64* seeded 0x1234567
 * (drawn untimed, before the repetitions). Every repetition starts from a fresh state: a
 * new world with the plugin loaded, new baseline arrays. Ours and the baseline alternate
 * inside each repetition. The checksum (sum over entities in creation order of
 * (double)World[k] * (k+1)) of both is checked against 20938116.452487 (relative 1e-6)
 * after the build and after the update passes: a mismatch fails the workload.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "jobs.h"
#include "log.h"
#include "transform_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#ifndef TRANSFORM_SO
#error "TRANSFORM_SO must name the built transform.so"
#endif

#define TREES     1000u
#define NODES     1000u /* per tree */
#define N         (TREES * NODES)
#define ROOT      UINT32_MAX
#define REFERENCE 20938116.452487
#define TOLERANCE 1e-6 /* relative */

/* Parent of node k of a tree (ROOT for node 0), BENCH.md "Trees". */
static uint32_t tree_parent(uint32_t k)
{
    if (k == 0) return ROOT;
    if (k <= 10) return 0;
    if (k <= 110) return 1 + (k - 11) / 10;
    return 11 + (k - 111) / 10;
}

/* The N locals in creation order, BENCH.md "Deterministic data". */
static void make_locals(ecs_transform_local *out)
{
    bench_rng r = bench_rng_seeded(BENCH_SEED);
    for (uint32_t i = 0; i < N; i++) {
        ecs_transform_local *l = &out[i];
        l->position.x = bench_rng_float(&r) * 2.0f - 1.0f; /* "3 x": three of them */
        l->position.y = bench_rng_float(&r) * 2.0f - 1.0f;
        l->position.z = bench_rng_float(&r) * 2.0f - 1.0f;
        ecs_quat q;
        q.x = bench_rng_float(&r) - 0.5f;
        q.y = bench_rng_float(&r) - 0.5f;
        q.z = bench_rng_float(&r) - 0.5f;
        q.w = bench_rng_float(&r) + 0.5f;
        /* normalized exactly, as BENCH.md defines it: in double, each component rounded once */
        double n = (double)q.x * q.x + (double)q.y * q.y + (double)q.z * q.z + (double)q.w * q.w;
        double len = sqrt(n);
        l->rotation.x = (float)((double)q.x / len);
        l->rotation.y = (float)((double)q.y / len);
        l->rotation.z = (float)((double)q.z / len);
        l->rotation.w = (float)((double)q.w / len);
        l->scale.x = 0.9f + 0.2f * bench_rng_float(&r);
        l->scale.y = 0.9f + 0.2f * bench_rng_float(&r);
        l->scale.z = 0.9f + 0.2f * bench_rng_float(&r);
    }
}

static double checksum_add(double sum, const ecs_mat4 *m)
{
    for (int k = 0; k < 16; k++) sum += (double)m->m[k] * (k + 1);
    return sum;
}

/* ---- ours: the real plugin in a host_world ---- */

typedef struct tf_world {
    bench_world bw;
    host_session *s; /* its session */
    host_world *w;   /* bw.w */
    const ecs_transform_api *api;
} tf_world;

static void world_close(tf_world *t)
{
    bench_world_close(&t->bw);
    t->w = NULL;
}

/* A world with transform.so loaded from a fresh folder holding a link to it. Returns 0,
 * or -1 (said on stderr). */
static int world_open(tf_world *t)
{
    static const char *const paths[] = {TRANSFORM_SO};
    memset(t, 0, sizeof *t);
    if (bench_world_open(&t->bw, "transform", paths, 1, NULL) != 0) return -1;
    t->s = t->bw.s;
    t->w = t->bw.w;
    if ((t->api = host_registry_find(&t->s->registry, ECS_TRANSFORM_API_NAME, 1, NULL))) return 0;
    fprintf(stderr, "transform: %s did not publish %s\n", TRANSFORM_SO, ECS_TRANSFORM_API_NAME);
    return -1;
}

/* Timed: create each entity and add its transform, tree by tree. ns per entity, or a
 * negative number when a call failed. */
static double ours_build(tf_world *t, ecs_entity *ents, const ecs_transform_local *locals,
                         bool reserve)
{
    const ecs_transform_api *api = t->api;
    host_entities *em = t->w->entities;
    uint32_t fails = 0;
    uint64_t t0 = bench_now_ns();
    if (reserve) fails += api->reserve(api->self, N) != ECS_OK;
    for (uint32_t tree = 0, i = 0; tree < TREES; tree++) {
        const uint32_t base = tree * NODES;
        for (uint32_t k = 0; k < NODES; k++, i++) {
            uint32_t p = tree_parent(k);
            fails += host_entity_create(em, &ents[i]) != ECS_OK;
            fails += api->add(api->self, ents[i], &locals[i],
                              p == ROOT ? ecs_entity_null() : ents[base + p]) != ECS_OK;
        }
    }
    uint64_t t1 = bench_now_ns();
    return fails ? -1.0 : (double)(t1 - t0) / N;
}

/* Timed: the world update pass over every transform, recompute_all(): the plugin's one
 * linear pass (the one its update() and set_local_many run) with every instance marked.
 * ns per entity, negative on failure. */
static double ours_recompute(tf_world *t)
{
    const ecs_transform_api *api = t->api;
    uint64_t t0 = bench_now_ns();
    uint32_t n = api->recompute_all(api->self);
    uint64_t t1 = bench_now_ns();
    return n != N ? -1.0 : (double)(t1 - t0) / N;
}

/* Timed: a world update pushed through set_local_many of every entity's local (the call a
 * game makes to hand over a frame's locals: checks every entry, stores the locals and
 * recomputes every world matrix in the same linear pass). ns per entity, negative on
 * failure. */
static double ours_update(tf_world *t, const ecs_entity *ents, const ecs_transform_local *locals)
{
    const ecs_transform_api *api = t->api;
    uint64_t t0 = bench_now_ns();
    ecs_status s = api->set_local_many(api->self, ents, locals, N, NULL);
    uint64_t t1 = bench_now_ns();
    return s != ECS_OK ? -1.0 : (double)(t1 - t0) / N;
}

/* The checksum of ours, read through get_world in creation order (NAN on a failure). */
static double ours_checksum(tf_world *t, const ecs_entity *ents)
{
    double sum = 0;
    for (uint32_t i = 0; i < N; i++) {
        ecs_mat4 m;
        if (t->api->get_world(t->api->self, ents[i], &m) != ECS_OK) return NAN;
        sum = checksum_add(sum, &m);
    }
    return sum;
}

/* ---- baseline: plain arrays, parents first, scalar math ---- */

typedef struct plain {
    uint32_t *parent; /* ROOT for a root */
    ecs_transform_local *local;
    ecs_mat4 *world;
    uint32_t count, cap;
} plain;

static void plain_free(plain *b)
{
    free(b->parent);
    free(b->local);
    free(b->world);
    memset(b, 0, sizeof *b);
}

/* The arrays resized to cap entries. False when out of memory. */
static bool plain_room(plain *b, uint32_t cap)
{
    uint32_t *p = realloc(b->parent, cap * sizeof *p);
    if (p) b->parent = p;
    ecs_transform_local *l = p ? realloc(b->local, cap * sizeof *l) : NULL;
    if (l) b->local = l;
    ecs_mat4 *w = l ? realloc(b->world, cap * sizeof *w) : NULL;
    if (w) b->world = w;
    if (!w) return false;
    b->cap = cap;
    return true;
}

/* Room for one more, doubling. False when out of memory. */
static bool plain_grow(plain *b)
{
    return b->count < b->cap || plain_room(b, b->cap ? b->cap * 2 : 64);
}

/* world[i] from its local and its parent's world: the scalar SDK math, full 4x4. */
static inline void plain_world(plain *b, uint32_t i)
{
    const ecs_transform_local *l = &b->local[i];
    ecs_mat4 trs = ecs_mat4_trs(l->position, l->rotation, l->scale);
    b->world[i] = b->parent[i] == ROOT ? trs : ecs_mat4_mul(&b->world[b->parent[i]], &trs);
}

/* Timed: append every node (growing arrays) and compute its world. ns per entity. */
static double plain_build(plain *b, const ecs_transform_local *locals, bool presize)
{
    uint32_t fails = 0;
    uint64_t t0 = bench_now_ns();
    if (presize) fails += !plain_room(b, N); /* final size at once: plain_grow never grows */
    for (uint32_t tree = 0, i = 0; tree < TREES; tree++) {
        for (uint32_t k = 0; k < NODES; k++, i++) {
            uint32_t p = tree_parent(k);
            if (!plain_grow(b)) {
                fails++;
                break;
            }
            b->parent[i] = p == ROOT ? ROOT : tree * NODES + p;
            b->local[i] = locals[i];
            b->count++;
            plain_world(b, i);
        }
    }
    uint64_t t1 = bench_now_ns();
    return fails ? -1.0 : (double)(t1 - t0) / N;
}

/* Timed: the plain update pass over the arrays. ns per entity. */
static double plain_update(plain *b)
{
    uint64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < b->count; i++) plain_world(b, i);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / N;
}

static double plain_checksum(const plain *b)
{
    double sum = 0;
    for (uint32_t i = 0; i < b->count; i++) sum = checksum_add(sum, &b->world[i]);
    return sum;
}

/* ---- the workload ---- */

typedef struct samples {
    double build_ours[BENCH_MAX_REPS], build_base[BENCH_MAX_REPS];
    double reserved_ours[BENCH_MAX_REPS], presized_base[BENCH_MAX_REPS];
    double upd_ours[BENCH_MAX_REPS], upd_base[BENCH_MAX_REPS], many_ours[BENCH_MAX_REPS];
    double thr_ours[BENCH_MAX_REPS], thr_base[BENCH_MAX_REPS]; /* W6t: 2 threads, 1 thread */
    double sum_ours, sum_base;                                 /* the last checksums */
    double sum_one, sum_two; /* W6t: after one thread's pass, after two threads' */
} samples;

static bool near(double a, double b)
{
    return fabs(a - b) <= TOLERANCE * fabs(b);
}

/* Check both checksums against BENCH.md's reference (the data and the math are BENCH.md's).
 * 0, or -1 after saying what failed. */
static int check_sums(samples *s, tf_world *t, const ecs_entity *ents, const plain *b,
                      const char *when)
{
    s->sum_ours = ours_checksum(t, ents);
    s->sum_base = plain_checksum(b);
    if (near(s->sum_base, REFERENCE) && near(s->sum_ours, REFERENCE)) return 0;
    fprintf(stderr,
            "transform: %s: checksum plain %.6f, ours %.6f, want %.6f (relative tolerance %g): "
            "FAILED\n",
            when, s->sum_base, s->sum_ours, REFERENCE, TOLERANCE);
    return -1;
}

/* The median of v[0..n) (sorts v). */
static double median_of(double *v, size_t n)
{
    return bench_stats_of(v, n).median;
}

/* The builds again from fresh state, ours after reserve(N), the plain loop into arrays
 * sized N at once; checked. 0, or -1 (said on stderr). */
static int reserved_build(samples *s, int r, const ecs_transform_local *locals, ecs_entity *ents)
{
    tf_world t;
    plain b = {0};
    int rc = world_open(&t);
    if (rc == 0 &&
        t.api->struct_size < offsetof(ecs_transform_api, reserve) + sizeof t.api->reserve)
        rc = -1, fprintf(stderr, "transform: the plugin's API has no reserve()\n");
    if (rc == 0) {
        s->reserved_ours[r] = ours_build(&t, ents, locals, true);
        s->presized_base[r] = plain_build(&b, locals, true);
        if (s->reserved_ours[r] < 0 || s->presized_base[r] < 0)
            rc = -1, fprintf(stderr, "transform: the reserved build failed\n");
    }
    if (rc == 0) rc = check_sums(s, &t, ents, &b, "after the reserved build");
    plain_free(&b);
    if (t.w) world_close(&t);
    return rc;
}

/* W6t: recompute_all on 2 job threads (a pool in the world, as --threads 2) beside the same
 * pass on one (no pool), BENCH_PASSES of each; the checksum after a 2-thread pass must be
 * the one-thread pass's, bit for bit. 0, or -1 (said on stderr). */
static int threaded_passes(samples *s, int r, tf_world *t, const ecs_entity *ents)
{
    double o[BENCH_PASSES], b[BENCH_PASSES];
    host_jobs *pool = host_jobs_start(2);
    if (host_jobs_threads(pool) != 2) {
        fprintf(stderr, "transform: could not start a job thread\n");
        host_jobs_stop(pool);
        return -1;
    }
    for (int p = 0; p < BENCH_PASSES; p++) { /* one thread's passes, then two threads': */
        b[p] = ours_recompute(t);            /* alternating, each pass would find half */
        if (p == 0) s->sum_one = ours_checksum(t, ents); /* the data in the other core's */
    }                                                    /* cache, slowing both */
    t->w->jobs = pool;
    for (int p = 0; p < BENCH_PASSES; p++) {
        o[p] = ours_recompute(t);
        if (p == 0) s->sum_two = ours_checksum(t, ents);
    }
    t->w->jobs = NULL;
    host_jobs_stop(pool);
    s->thr_ours[r] = median_of(o, BENCH_PASSES);
    s->thr_base[r] = median_of(b, BENCH_PASSES);
    if (s->sum_one == s->sum_two && near(s->sum_two, REFERENCE)) return 0;
    fprintf(stderr, "transform: 2 threads: checksum %.6f, one thread %.6f: FAILED\n", s->sum_two,
            s->sum_one);
    return -1;
}

/* One repetition from fresh state: build (ours, plain), check, BENCH_PASSES update passes
 * alternating, check. Returns 0 or -1 (said on stderr). */
static int repetition(samples *s, int r, const ecs_transform_local *locals, ecs_entity *ents)
{
    tf_world t;
    plain b = {0};
    double ou[BENCH_PASSES], bu[BENCH_PASSES], mu[BENCH_PASSES];
    int rc = world_open(&t);
    if (rc == 0) {
        s->build_ours[r] = ours_build(&t, ents, locals, false);
        s->build_base[r] = plain_build(&b, locals, false);
        if (s->build_ours[r] < 0 || s->build_base[r] < 0) {
            fprintf(stderr, "transform: the build failed (a call or an allocation)\n");
            rc = -1;
        }
    }
    if (rc == 0) rc = check_sums(s, &t, ents, &b, "after the build");
    for (int p = 0; rc == 0 && p < BENCH_PASSES; p++) {
        ou[p] = ours_recompute(&t);
        bu[p] = plain_update(&b);
        mu[p] = ours_update(&t, ents, locals);
        if (ou[p] < 0 || mu[p] < 0)
            rc = -1, fprintf(stderr, "transform: recompute_all or set_local_many failed\n");
    }
    if (rc == 0) {
        s->upd_ours[r] = median_of(ou, BENCH_PASSES);
        s->upd_base[r] = median_of(bu, BENCH_PASSES);
        s->many_ours[r] = median_of(mu, BENCH_PASSES);
        rc = check_sums(s, &t, ents, &b, "after the update passes");
    }
    if (rc == 0) rc = threaded_passes(s, r, &t, ents);
    plain_free(&b);
    if (t.w) world_close(&t);
    return rc == 0 ? reserved_build(s, r, locals, ents) : rc;
}

typedef enum row_kind { ROW_BUILD, ROW_RESERVED, ROW_RECOMPUTE, ROW_SET_MANY } row_kind;

static void report_threads(const bench_config *cfg, const samples *sm)
{
    char note[256];
    snprintf(note, sizeof note,
             "ratio < 1: faster (target <= 0.59, i.e. >= 1.7x); checksum 2 threads %.6f, "
             "one thread %.6f (identical)",
             sm->sum_two, sm->sum_one);
    bench_row row = {"W6t",
                     "update pass, recompute_all, --threads 2",
                     "ns/entity",
                     "the same pass, one thread",
                     BENCH_PASSES,
                     bench_stats_of((double *)sm->thr_ours, (size_t)cfg->reps),
                     bench_stats_of((double *)sm->thr_base, (size_t)cfg->reps),
                     (uint64_t)llround(sm->sum_two * 1e6),
                     note};
    bench_report(cfg, "transform", &row);
}

static void report(const bench_config *cfg, const samples *sm, row_kind kind)
{
    static const char *const names[] = {"build, create + add", "build, reserve + create + add",
                                        "update pass, recompute_all",
                                        "update pass, set_local_many(all)"};
    static const char *const notes[] = {
        "ours: host_entity_create + transform add, tree by tree (storage grown by doubling); "
        "plain: append to growing arrays + world",
        "ours: transform reserve(N), then as above; plain: arrays sized N at once, then as "
        "above",
        "ours: recompute_all(): every instance marked, then the plugin's linear pass over "
        "its dense arrays; plain: the loop over the sorted arrays",
        "ours: set_local_many(1M entities, their locals): every entry checked first, then "
        "stored and recomputed in the same pass (the batch is the dense order)"};
    char note[768];
    double *o = (double *)(kind == ROW_BUILD       ? sm->build_ours
                           : kind == ROW_RESERVED  ? sm->reserved_ours
                           : kind == ROW_RECOMPUTE ? sm->upd_ours
                                                   : sm->many_ours);
    double *b = (double *)(kind == ROW_BUILD      ? sm->build_base
                           : kind == ROW_RESERVED ? sm->presized_base
                                                  : sm->upd_base);
    bool build = kind == ROW_BUILD || kind == ROW_RESERVED;
    if (kind == ROW_SET_MANY)
        snprintf(note, sizeof note,
                 "%s.\n    checksum plain %.6f, ours %.6f (BENCH.md's reference %.6f)", notes[kind],
                 sm->sum_base, sm->sum_ours, REFERENCE);
    else
        snprintf(note, sizeof note, "%s", notes[kind]);
    bench_row row = {"W6",
                     names[kind],
                     "ns/entity",
                     "plain C loop, sorted arrays",
                     build ? 1 : BENCH_PASSES,
                     bench_stats_of(o, (size_t)cfg->reps),
                     bench_stats_of(b, (size_t)cfg->reps),
                     (uint64_t)llround(sm->sum_ours * 1e6),
                     note};
    bench_report(cfg, "transform", &row);
}

static int run(const bench_config *cfg)
{
    samples *sm = calloc(1, sizeof *sm);
    ecs_transform_local *locals = malloc(N * sizeof *locals);
    ecs_entity *ents = malloc(N * sizeof *ents);
    int rc = sm && locals && ents ? 0 : -1;
    if (rc != 0) fprintf(stderr, "transform: out of memory\n");
    ecs_log_level level = host_log_level();
    host_log_set_level(ECS_LOG_WARN); /* no "loaded" line per repetition */
    if (rc == 0) {
        bench_begin(cfg, "transform",
                    "W6: 1,000 trees x 1,000 nodes through the transform plugin, beside a plain "
                    "loop");
        make_locals(locals);
    }
    for (int r = 0; rc == 0 && r < cfg->reps; r++) rc = repetition(sm, r, locals, ents);
    host_log_set_level(level);
    if (rc == 0) {
        report(cfg, sm, ROW_BUILD);
        report(cfg, sm, ROW_RESERVED);
        report(cfg, sm, ROW_RECOMPUTE);
        report(cfg, sm, ROW_SET_MANY);
        report_threads(cfg, sm);
    }
    free(sm);
    free(locals);
    free(ents);
    return rc == 0 ? 0 : 1;
}

const bench_workload bench_transform_workload = {
    "transform", "W6: transform hierarchy build and world update vs a plain loop", run};
