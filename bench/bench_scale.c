/* SPDX-License-Identifier: MIT */
/* bench_scale.c: workload "scale", BENCH.md W8: 4,000,000 entities, each with a debug name
 * and a transform, in 4,000 trees of 1,000 nodes (the W6 layout), near the 22-bit index
 * limit: the world update pass, a scene save and load, and bytes of memory per entity.
 *
 * Ours is the real transform.so and debug_name.so loaded by the real loader into a fresh
 * world per repetition. Data: entity i is named "e<i>" (2-8 characters; the BENCH.md
 * memory row counts a 16-byte name) and gets the i-th BENCH.md local (RNG seeded
 * 0x1234567), created tree by tree, breadth-first. One repetition:
 *   1. build (untimed), with the process's resident memory read before the world opens
 *      and after the build (/proc/self/statm, after malloc_trim): (after - before) / N.
 *   2. update pass: recompute_all(), the median of 5 passes, ns per entity.
 *   3. save: host_scene_save to a file on /dev/shm (when there is one), entities/s.
 *   4. load: host_scene_load of that file into a fresh world, entities/s; the loaded world
 *      must hold N entities, N names and N transforms, else the workload fails.
 * There is no in-run baseline for this row (BENCH.md: the flecs and EnTT figures of its
 * table): each row's baseline column holds that figure, constant, and says so. Memory is
 * measured in the first repetition only (later ones reuse memory the allocator kept).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "debug_name_api.h"
#include "log.h"
#include "scene.h"
#include "transform_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(TRANSFORM_SO) || !defined(DEBUG_NAME_SO)
#error "TRANSFORM_SO and DEBUG_NAME_SO must name the built plugins"
#endif

#define TREES  4000u
#define NODES  1000u /* per tree */
#define N      (TREES * NODES)
#define ROOT   UINT32_MAX
#define PASSES 5

/* BENCH.md's figures for the same components, same machine kind (2026-11-23). */
#define FLECS_BYTES     160.0 /* plain parent component; 242 with Parent storage */
#define ENTT_BYTES_64   208.0 /* 64-bit ids, which 4 M entities need */
#define FLECS_UPDATE_NS 16.5  /* Parent storage, iterated depth by depth */
#define FLECS_SAVE_MPS  0.46  /* W7 with ChildOf trees, M entities/s */
#define FLECS_LOAD_MPS  0.21

/* Parent of node k of a tree (ROOT for node 0), BENCH.md "Trees". */
static uint32_t tree_parent(uint32_t k)
{
    if (k == 0) return ROOT;
    if (k <= 10) return 0;
    if (k <= 110) return 1 + (k - 11) / 10;
    return 11 + (k - 111) / 10;
}

/* Resident bytes of this process now, after giving free heap memory back. */
static double resident_bytes(void)
{
    malloc_trim(0);
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    if (f) fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

typedef struct scale_world {
    bench_world bw;
    const ecs_transform_api *tf;
    const ecs_debug_name_api *dn;
} scale_world;

static int world_open(scale_world *sw)
{
    static const char *const paths[] = {TRANSFORM_SO, DEBUG_NAME_SO};
    memset(sw, 0, sizeof *sw);
    if (bench_world_open(&sw->bw, "scale", paths, 2, NULL) != 0) return -1;
    const host_registry *reg = &sw->bw.s->registry;
    sw->tf = host_registry_find(reg, ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, NULL);
    sw->dn = host_registry_find(reg, ECS_DEBUG_NAME_API_NAME, ECS_DEBUG_NAME_API_VERSION, NULL);
    if (sw->tf && sw->dn) return 0;
    fprintf(stderr, "scale: a plugin's API is missing\n");
    return -1;
}

int bench_named_trees(struct host_world *w, const ecs_transform_api *tf,
                      const ecs_debug_name_api *dn, ecs_entity *ents, uint32_t n)
{
    bench_rng r = bench_rng_seeded(BENCH_SEED);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = tree_parent(i % NODES);
        ecs_entity parent = p == ROOT ? ecs_entity_null() : ents[i - i % NODES + p];
        float pos[3], q[4], s[3];
        bench_local_draw(&r, pos, q, s);
        ecs_transform_local l = {ecs_vec3_make(pos[0], pos[1], pos[2]),
                                 {q[0], q[1], q[2], q[3]},
                                 ecs_vec3_make(s[0], s[1], s[2])};
        char name[16];
        snprintf(name, sizeof name, "e%u", i);
        if (host_entity_create(w->entities, &ents[i]) != ECS_OK ||
            tf->add(tf->self, ents[i], &l, parent) != ECS_OK ||
            dn->set(dn->self, ents[i], name) != ECS_OK)
            return fprintf(stderr, "building entity %u failed\n", i), -1;
    }
    return 0;
}

/* Create the N entities tree by tree, each with its name and local. 0 or -1 (said). */
static int populate(scale_world *sw, ecs_entity *ents)
{
    return bench_named_trees(sw->bw.w, sw->tf, sw->dn, ents, N);
}

typedef struct sample {
    double update_ns, save_s, load_s, bytes_per_entity;
} sample;

static const char *scene_path(char *buf, size_t size, const scale_world *sw)
{
    bool shm = access("/dev/shm", W_OK) == 0;
    snprintf(buf, size, "%s/ecs-bench-scale-%ld.json", shm ? "/dev/shm" : sw->bw.dir,
             (long)getpid());
    return buf;
}

/* The update pass: the median of PASSES recompute_all() passes, ns per entity. */
static double update_pass(const scale_world *sw)
{
    double pass[PASSES];
    for (int k = 0; k < PASSES; k++) {
        uint64_t t0 = bench_now_ns();
        uint32_t n = sw->tf->recompute_all(sw->tf->self);
        pass[k] = n == N ? (double)(bench_now_ns() - t0) / N : -1.0;
    }
    return bench_stats_of(pass, PASSES).median;
}

/* Does the loaded world hold what was saved (counts)? */
static int check_loaded(const scale_world *sw)
{
    uint32_t live = host_entities_live(sw->bw.w->entities);
    uint32_t names = 0, transforms = 0;
    for (size_t m = 0; m < sw->bw.w->manager_count; m++) {
        const host_manager *mg = sw->bw.w->managers[m];
        uint32_t c = mg->desc.count ? mg->desc.count(mg->desc.state) : 0;
        if (!strcmp(mg->name, "debug_name")) names = c;
        if (!strcmp(mg->name, "transform")) transforms = c;
    }
    if (live == N && names == N && transforms == N) return 0;
    fprintf(stderr, "scale: loaded %u entities, %u names, %u transforms; want %u each\n", live,
            names, transforms, N);
    return -1;
}

static int repetition(ecs_entity *ents, bool measure_memory, sample *out)
{
    scale_world a, b;
    char path[256];
    double before = measure_memory ? resident_bytes() : 0;
    int rc = world_open(&a);
    if (rc == 0) rc = populate(&a, ents);
    if (rc == 0 && measure_memory) out->bytes_per_entity = (resident_bytes() - before) / N;
    if (rc == 0) out->update_ns = update_pass(&a);
    if (rc == 0 && out->update_ns < 0) rc = -1, fprintf(stderr, "scale: recompute_all failed\n");
    if (rc == 0) {
        scene_path(path, sizeof path, &a);
        uint64_t t0 = bench_now_ns();
        ecs_status s = host_scene_save(a.bw.s->scene, path);
        out->save_s = (double)(bench_now_ns() - t0) * 1e-9;
        if (s != ECS_OK) rc = -1, fprintf(stderr, "scale: save failed: %s\n", ecs_status_text(s));
    }
    bench_world_close(&a.bw); /* before the load: one world in memory at a time */
    bool opened_b = rc == 0;
    if (opened_b) rc = world_open(&b);
    if (rc == 0) {
        uint64_t t0 = bench_now_ns();
        ecs_status s = host_scene_load(b.bw.s->scene, path);
        out->load_s = (double)(bench_now_ns() - t0) * 1e-9;
        if (s != ECS_OK) rc = -1, fprintf(stderr, "scale: load failed: %s\n", ecs_status_text(s));
        if (rc == 0) rc = check_loaded(&b);
    }
    if (opened_b) bench_world_close(&b.bw);
    unlink(path);
    return rc;
}

/* A row whose baseline is a constant from BENCH.md. */
static void report(const bench_config *cfg, const char *name, const char *unit, double *ours,
                   size_t n, double base, const char *base_name, const char *note)
{
    double b[1] = {base};
    bench_row row = {"W8", name, unit, base_name, 1, bench_stats_of(ours, n), bench_stats_of(b, 1),
                     N,    note};
    bench_report(cfg, "scale", &row);
}

static int run(const bench_config *cfg)
{
    ecs_entity *ents = malloc(N * sizeof *ents);
    if (!ents) return fprintf(stderr, "scale: out of memory\n"), 1;
    /* Touched before the memory is measured, and not with zeros: the compiler turns malloc +
     * memset(0) into calloc, whose fresh pages stay untouched until populate() writes the
     * ids, which then counted 4 bytes per entity of this array as the world's. */
    memset(ents, 0xFF, N * sizeof *ents);
    bench_begin(cfg, "scale",
                "W8: 4,000,000 entities with a debug name and a transform (4,000 trees of "
                "1,000), beside BENCH.md's flecs figures (not measured in this run)");
    ecs_log_level level = host_log_level();
    host_log_set_level(ECS_LOG_WARN);
    double upd[BENCH_MAX_REPS], save[BENCH_MAX_REPS], load[BENCH_MAX_REPS], mem[1] = {0};
    int rc = 0;
    for (int r = 0; rc == 0 && r < cfg->reps; r++) {
        sample s = {0};
        rc = repetition(ents, r == 0, &s);
        upd[r] = s.update_ns;
        save[r] = N / s.save_s / 1e6;
        load[r] = N / s.load_s / 1e6;
        if (r == 0) mem[0] = s.bytes_per_entity;
    }
    host_log_set_level(level);
    free(ents);
    if (rc != 0) return 1;
    size_t n = (size_t)cfg->reps;
    report(cfg, "update pass, recompute_all", "ns/entity", upd, n, FLECS_UPDATE_NS,
           "flecs, BENCH.md", "baseline: flecs' W6 update with Parent storage (1 M entities)");
    report(cfg, "scene save", "M ent/s", save, n, FLECS_SAVE_MPS, "flecs, BENCH.md",
           "baseline: flecs' W7 JSON save with ChildOf trees (100 k entities); ratio above 1: "
           "ours is faster");
    report(cfg, "scene load", "M ent/s", load, n, FLECS_LOAD_MPS, "flecs, BENCH.md",
           "baseline: flecs' W7 JSON load with ChildOf trees; ratio above 1: ours is faster");
    char note[160];
    snprintf(note, sizeof note,
             "resident memory growth / N, first repetition; EnTT with 64-bit ids: %.0f B "
             "(BENCH.md)",
             ENTT_BYTES_64);
    report(cfg, "memory per entity", "bytes", mem, 1, FLECS_BYTES, "flecs, BENCH.md", note);
    return 0;
}

const bench_workload bench_scale_workload = {
    "scale", "W8: 4,000,000 entities with a name and a transform: update, save, load, memory", run};
