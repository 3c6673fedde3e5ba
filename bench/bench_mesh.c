/* SPDX-License-Identifier: MIT */
/* bench_mesh.c: workload "mesh": the mesh manager's update, which recomputes the world
 * bounds of every mesh from its entity's world matrix (read through the transform API,
 * one get_world per entity), in ns per mesh, beside a plain loop applying
 * ecs_aabb_transform over dense arrays (one matrix per entity, meshes grouped by entity).
 *
 * Ours is the real mesh.so and transform.so loaded by the real loader into a fresh world
 * per repetition; the timed call is the mesh manager's update alone. ENTITIES root
 * entities get the BENCH.md deterministic local transforms, then K meshes each, added
 * entity by entity (grouped) or round by round (interleaved: an entity's meshes lie
 * ENTITIES instances apart, as after much churn). Every world box ours computed must equal
 * the baseline's bit for bit (same matrices, same inline function), else the workload
 * fails; the checksum is over the baseline's boxes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "jobs.h"
#include "mesh_api.h"
#include "transform_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(MESH_SO) || !defined(TRANSFORM_SO)
#error "MESH_SO and TRANSFORM_SO must name the built mesh.so and transform.so"
#endif

#define ENTITIES 100000u

/* ---- a world with transform and mesh loaded ---- */

typedef struct mesh_world {
    bench_world bw;
    host_session *s; /* its session */
    host_world *w;   /* bw.w */
    const ecs_transform_api *tf;
    const ecs_mesh_api *mesh;
    const ecs_manager_desc *manager; /* "mesh" */
} mesh_world;

static void world_close(mesh_world *mw)
{
    bench_world_close(&mw->bw);
    mw->w = NULL;
}

/* Load transform.so and mesh.so into a new world. 0, or -1 (said on stderr). */
static int world_open(mesh_world *mw)
{
    static const char *const paths[] = {MESH_SO, TRANSFORM_SO};
    memset(mw, 0, sizeof *mw);
    if (bench_world_open(&mw->bw, "mesh", paths, 2, NULL) != 0) return -1;
    mw->s = mw->bw.s;
    mw->w = mw->bw.w;
    mw->tf = host_registry_find(&mw->s->registry, ECS_TRANSFORM_API_NAME, 1, NULL);
    mw->mesh = host_registry_find(&mw->s->registry, ECS_MESH_API_NAME, 1, NULL);
    for (size_t i = 0; i < mw->w->manager_count; i++)
        if (strcmp(mw->w->managers[i]->name, "mesh") == 0) mw->manager = &mw->w->managers[i]->desc;
    return mw->tf && mw->mesh && mw->manager ? 0 : -1;
}

/* ---- deterministic data ---- */

/* BENCH.md's local transform of the next entity. */
static ecs_transform_local bench_local(bench_rng *r)
{
    ecs_transform_local l;
    float p[3], q[4], s[3];
    for (int c = 0; c < 3; c++) p[c] = 3.0f * (bench_rng_float(r) * 2.0f - 1.0f);
    for (int c = 0; c < 4; c++) q[c] = bench_rng_float(r) + (c == 3 ? 0.5f : -0.5f);
    for (int c = 0; c < 3; c++) s[c] = 3.0f * (0.9f + 0.2f * bench_rng_float(r));
    float n = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], inv = 1.0f;
    for (int k = 0; k < 6; k++) inv = inv * (1.5f - 0.5f * n * inv * inv);
    l.position = ecs_vec3_make(p[0], p[1], p[2]);
    l.rotation = (ecs_quat){q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv};
    l.scale = ecs_vec3_make(s[0], s[1], s[2]);
    return l;
}

/* Local bounds: a corner in [-1, 1)^3, extents in [0.1, 2.1). */
static ecs_aabb bench_bounds(bench_rng *r)
{
    ecs_aabb b;
    b.min = ecs_vec3_make(bench_rng_float(r) * 2 - 1, bench_rng_float(r) * 2 - 1,
                          bench_rng_float(r) * 2 - 1);
    b.max = ecs_vec3_make(b.min.x + 0.1f + 2 * bench_rng_float(r),
                          b.min.y + 0.1f + 2 * bench_rng_float(r),
                          b.min.z + 0.1f + 2 * bench_rng_float(r));
    return b;
}

/* ---- one repetition ---- */

typedef struct layout {
    uint32_t per_entity; /* K */
    bool interleaved;
} layout;

/* The data both sides use: entities, their world matrices, the meshes' local bounds
 * (mesh k of entity i at i * K + k), the baseline's output. */
typedef struct arrays {
    ecs_entity *ents;
    ecs_mat4 *world;
    ecs_aabb *local, *out;
} arrays;

static void arrays_free(arrays *a)
{
    free(a->ents);
    free(a->world);
    free(a->local);
    free(a->out);
}

static int arrays_alloc(arrays *a, uint32_t meshes)
{
    a->ents = malloc(ENTITIES * sizeof *a->ents);
    a->world = malloc(ENTITIES * sizeof *a->world);
    a->local = malloc(meshes * sizeof *a->local);
    a->out = malloc(meshes * sizeof *a->out);
    return a->ents && a->world && a->local && a->out ? 0 : -1;
}

/* Give the world's entities their transforms and meshes. 0, or -1 (said on stderr). */
static int populate(mesh_world *mw, arrays *a, layout lay)
{
    bench_rng tr = bench_rng_seeded(BENCH_SEED), br = bench_rng_seeded(BENCH_SEED + 1);
    const uint32_t K = lay.per_entity;
    if (host_entity_create_many(mw->w->entities, a->ents, ENTITIES) != ECS_OK) return -1;
    for (uint32_t i = 0; i < ENTITIES; i++) {
        ecs_transform_local l = bench_local(&tr);
        if (mw->tf->add(mw->tf->self, a->ents[i], &l, ecs_entity_null()) != ECS_OK ||
            mw->tf->get_world(mw->tf->self, a->ents[i], &a->world[i]) != ECS_OK)
            return fprintf(stderr, "mesh: transform add failed\n"), -1;
        for (uint32_t k = 0; k < K; k++) a->local[i * K + k] = bench_bounds(&br);
    }
    for (uint32_t n = 0; n < ENTITIES * K; n++) {
        uint32_t i = lay.interleaved ? n % ENTITIES : n / K,
                 k = lay.interleaved ? n / ENTITIES : n % K;
        ecs_mesh_desc d = {"crate.mesh", "wood", true, a->local[i * K + k]};
        if (mw->mesh->add(mw->mesh->self, a->ents[i], &d, NULL) != ECS_OK)
            return fprintf(stderr, "mesh: mesh add failed\n"), -1;
    }
    return 0;
}

static double time_ours(mesh_world *mw, uint32_t meshes)
{
    double pass[BENCH_PASSES];
    for (int p = 0; p < BENCH_PASSES; p++) {
        uint64_t t0 = bench_now_ns();
        mw->manager->update(mw->manager->state, &mw->w->frame);
        pass[p] = (double)(bench_now_ns() - t0) / meshes;
    }
    return bench_stats_of(pass, BENCH_PASSES).median;
}

static double time_base(arrays *a, uint32_t K)
{
    double pass[BENCH_PASSES];
    for (int p = 0; p < BENCH_PASSES; p++) {
        uint64_t t0 = bench_now_ns();
        for (uint32_t i = 0; i < ENTITIES; i++)
            for (uint32_t k = 0; k < K; k++)
                a->out[i * K + k] = ecs_aabb_transform(&a->world[i], a->local[i * K + k]);
        __asm__ volatile("" : : "r"(a->out) : "memory"); /* the stores are results */
        pass[p] = (double)(bench_now_ns() - t0) / ((double)ENTITIES * K);
    }
    return bench_stats_of(pass, BENCH_PASSES).median;
}

/* Compare ours with the baseline box by box; add the boxes into *sum. -1 on a mismatch. */
static int check(mesh_world *mw, const arrays *a, uint32_t K, double *sum)
{
    for (uint32_t i = 0; i < ENTITIES; i++) {
        for (uint32_t k = 0; k < K; k++) {
            ecs_mesh_info info;
            const ecs_aabb *want = &a->out[i * K + k];
            if (mw->mesh->get(mw->mesh->self, a->ents[i], k, &info) != ECS_OK ||
                memcmp(&info.world_bounds, want, sizeof *want) != 0) {
                fprintf(stderr, "mesh: entity %u mesh %u: world bounds differ\n", i, k);
                return -1;
            }
            *sum += (double)want->min.x + 2.0 * want->min.y + 3.0 * want->min.z +
                    4.0 * want->max.x + 5.0 * want->max.y + 6.0 * want->max.z;
        }
    }
    return 0;
}

/* ours on 2 job threads (a pool in the world, as --threads 2); -1 when no worker started. */
static double time_two_threads(mesh_world *mw, uint32_t meshes)
{
    host_jobs *pool = host_jobs_start(2);
    double t = -1;
    if (host_jobs_threads(pool) == 2) {
        mw->w->jobs = pool;
        mw->manager->update(mw->manager->state, &mw->w->frame); /* warm up the workers */
        t = time_ours(mw, meshes);
        mw->w->jobs = NULL;
    }
    host_jobs_stop(pool);
    return t;
}

/* One repetition: fresh world and arrays, ours (one thread, then two: M1t) then the
 * baseline; the boxes checked after both. -1 on failure. */
static int repetition(layout lay, double *ours, double *two, double *base, double *sum)
{
    const uint32_t meshes = ENTITIES * lay.per_entity;
    mesh_world mw;
    arrays a = {0};
    int rc = world_open(&mw);
    if (rc == 0) rc = arrays_alloc(&a, meshes);
    if (rc == 0) rc = populate(&mw, &a, lay);
    if (rc == 0) {
        mw.manager->update(mw.manager->state, &mw.w->frame); /* warm up */
        *ours = time_ours(&mw, meshes);
        *base = time_base(&a, lay.per_entity);
        rc = check(&mw, &a, lay.per_entity, sum);
        if (rc == 0 && (*two = time_two_threads(&mw, meshes)) < 0) rc = -1;
        double again = 0;
        if (rc == 0) rc = check(&mw, &a, lay.per_entity, &again); /* the same boxes */
    }
    arrays_free(&a);
    world_close(&mw);
    return rc;
}

static int run_row(const bench_config *cfg, layout lay, const char *name)
{
    double ours[BENCH_MAX_REPS], two[BENCH_MAX_REPS], base[BENCH_MAX_REPS], sum = 0;
    for (int r = 0; r < cfg->reps; r++)
        if (repetition(lay, &ours[r], &two[r], &base[r], &sum) != 0) return 1;
    bench_row row = {"M1",
                     name,
                     "ns/mesh",
                     "plain aabb loop",
                     BENCH_PASSES,
                     bench_stats_of(ours, (size_t)cfg->reps),
                     bench_stats_of(base, (size_t)cfg->reps),
                     (uint64_t)(sum / cfg->reps * 1000.0),
                     lay.per_entity > 1 && !lay.interleaved
                         ? "ours: one get_world call per entity, then its meshes"
                         : NULL};
    bench_report(cfg, "mesh", &row);
    char threaded[96];
    snprintf(threaded, sizeof threaded, "%s, --threads 2", name);
    bench_row row2 = {"M1t",
                      threaded,
                      "ns/mesh",
                      "the same update, one thread",
                      BENCH_PASSES,
                      bench_stats_of(two, (size_t)cfg->reps),
                      bench_stats_of(ours, (size_t)cfg->reps),
                      (uint64_t)(sum / cfg->reps * 1000.0),
                      "ratio < 1: faster (target <= 0.625, i.e. >= 1.6x); boxes identical"};
    bench_report(cfg, "mesh", &row2);
    return 0;
}

static int run(const bench_config *cfg)
{
    bench_begin(cfg, "mesh",
                "M1: mesh world-bounds update of 100,000 entities, beside a plain "
                "ecs_aabb_transform loop over arrays");
    int rc = 0;
    rc |= run_row(cfg, (layout){1, false}, "update, 1 mesh per entity");
    rc |= run_row(cfg, (layout){4, false}, "update, 4 meshes per entity");
    rc |= run_row(cfg, (layout){4, true}, "update, 4 per entity, interleaved");
    return rc;
}

const bench_workload bench_mesh_workload = {
    "mesh", "M1: mesh world-bounds update through the transform API vs a plain loop", run};
