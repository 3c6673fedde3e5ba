/* SPDX-License-Identifier: MIT */
/* bench_snapshot.c: workload "snapshot", BENCH.md S1: a snapshot and a restore of the
 * W8-style world at 1 M entities (a debug name, a transform with its world matrix and
 * parent, one mesh each; 1,000 trees of 1,000 nodes, the BENCH.md locals), beside a plain
 * memcpy of the same number of bytes in the same run.
 *
 * Ours: the real transform.so, debug_name.so and mesh.so through the real loader, and
 * host_snapshot_take / host_snapshot_restore (the loop's path: in memory, checksummed, no
 * file). The world is built once (untimed); each repetition takes a snapshot into a fresh
 * buffer (malloc'd by the snapshot: its page faults are part of its cost), and restores it.
 * Then a snapshot is taken again into the kept buffer (the loop after a reload).
 * Baseline: memcpy of as many bytes into a fresh malloc'd buffer (faults included, as ours),
 * and into that buffer again (warm, as a restore writes into arrays already there). Checks:
 * the restored world holds N entities, N names, N transforms, N meshes, and its world
 * matrices' BENCH.md checksum equals the one before the snapshot. GB/s = snapshot bytes /
 * time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "debug_name_api.h"
#include "log.h"
#include "mesh_api.h"
#include "snapshot.h"
#include "transform_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(TRANSFORM_SO) || !defined(DEBUG_NAME_SO) || !defined(MESH_SO)
#error "TRANSFORM_SO, DEBUG_NAME_SO and MESH_SO must name the built plugins"
#endif

#define TREES 1000u
#define NODES 1000u
#define N     (TREES * NODES)

typedef struct snap_world {
    bench_world bw;
    const ecs_transform_api *tf;
    const ecs_debug_name_api *dn;
    const ecs_mesh_api *mesh;
    ecs_entity *ents;
} snap_world;

static int world_build(snap_world *sw)
{
    static const char *const paths[] = {TRANSFORM_SO, DEBUG_NAME_SO, MESH_SO};
    if (bench_world_open(&sw->bw, "snapshot", paths, 3, NULL) != 0) return -1;
    const host_registry *reg = &sw->bw.s->registry;
    sw->tf = host_registry_find(reg, ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, NULL);
    sw->dn = host_registry_find(reg, ECS_DEBUG_NAME_API_NAME, ECS_DEBUG_NAME_API_VERSION, NULL);
    sw->mesh = host_registry_find(reg, ECS_MESH_API_NAME, ECS_MESH_API_VERSION, NULL);
    if (!sw->tf || !sw->dn || !sw->mesh)
        return fprintf(stderr, "snapshot: an API is missing\n"), -1;
    ecs_mesh_desc md = {"meshes/box.mesh", NULL, true, {{-1, -1, -1}, {1, 1, 1}}};
    if (bench_named_trees(sw->bw.w, sw->tf, sw->dn, sw->ents, N) != 0) return -1;
    for (uint32_t i = 0; i < N; i++)
        if (sw->mesh->add(sw->mesh->self, sw->ents[i], &md, NULL) != ECS_OK)
            return fprintf(stderr, "snapshot: the mesh of entity %u failed\n", i), -1;
    return 0;
}

/* BENCH.md's checksum of the world matrices, in creation order. */
static double world_checksum(const snap_world *sw)
{
    double sum = 0;
    for (uint32_t i = 0; i < N; i++) {
        ecs_mat4 m;
        if (sw->tf->get_world(sw->tf->self, sw->ents[i], &m) != ECS_OK) return -1;
        for (int k = 0; k < 16; k++) sum += (double)m.m[k] * (k + 1);
    }
    return sum;
}

/* Does the restored world hold what the snapshot did? */
static int check(const snap_world *sw, double want)
{
    uint32_t live = host_entities_live(sw->bw.w->entities), names = 0, tfs = 0, meshes = 0;
    for (size_t m = 0; m < sw->bw.w->manager_count; m++) {
        const host_manager *mg = sw->bw.w->managers[m];
        uint32_t c = mg->desc.count ? mg->desc.count(mg->desc.state) : 0;
        if (!strcmp(mg->name, "debug_name")) names = c;
        if (!strcmp(mg->name, "transform")) tfs = c;
        if (!strcmp(mg->name, "mesh")) meshes = c;
    }
    double got = world_checksum(sw);
    if (live == N && names == N && tfs == N && meshes == N && got == want) return 0;
    fprintf(stderr,
            "snapshot: restored %u entities, %u names, %u transforms, %u meshes, "
            "checksum %.6f (want %u each, %.6f)\n",
            live, names, tfs, meshes, got, N, want);
    return -1;
}

typedef struct sample {
    double take_ms, again_ms, restore_ms, cold_ms, warm_ms;
    size_t bytes;
} sample;

static int repetition(snap_world *sw, double want, sample *out)
{
    char why[512];
    bool changed;
    host_snapshot snap = {NULL, 0, 0, 0};
    uint64_t t0 = bench_now_ns();
    if (host_snapshot_take(sw->bw.s, &snap, why, sizeof why) != ECS_OK)
        return fprintf(stderr, "snapshot: take: %s\n", why), -1;
    uint64_t t1 = bench_now_ns();
    ecs_status s = host_snapshot_restore_own(sw->bw.s, &snap, &changed, why, sizeof why);
    uint64_t t2 = bench_now_ns();
    if (s == ECS_OK && host_snapshot_take(sw->bw.s, &snap, why, sizeof why) != ECS_OK)
        return fprintf(stderr, "snapshot: take again: %s\n", why), -1;
    out->again_ms = (double)(bench_now_ns() - t2) / 1e6;
    out->bytes = snap.size;
    out->take_ms = (double)(t1 - t0) / 1e6, out->restore_ms = (double)(t2 - t1) / 1e6;
    char *copy = malloc(snap.size);
    uint64_t t3 = bench_now_ns();
    if (copy) memcpy(copy, snap.bytes, snap.size);
    uint64_t t4 = bench_now_ns();
    if (copy) memcpy(copy, snap.bytes, snap.size);
    uint64_t t5 = bench_now_ns();
    out->cold_ms = (double)(t4 - t3) / 1e6, out->warm_ms = (double)(t5 - t4) / 1e6;
    int rc = copy && copy[snap.size / 2] == snap.bytes[snap.size / 2] ? 0 : -1; /* kept */
    free(copy);
    host_snapshot_free(&snap);
    if (s != ECS_OK) return fprintf(stderr, "snapshot: restore: %s\n", why), -1;
    return rc == 0 ? check(sw, want) : (fprintf(stderr, "snapshot: out of memory\n"), -1);
}

static void report(const bench_config *cfg, const char *name, const char *unit, double *ours,
                   double *base, size_t n, const char *base_name, const char *note)
{
    bench_row row = {
        "S1", name, unit, base_name, 1, bench_stats_of(ours, n), bench_stats_of(base, n), N, note};
    bench_report(cfg, "snapshot", &row);
}

static int run(const bench_config *cfg)
{
    snap_world sw = {0};
    if (!(sw.ents = malloc(N * sizeof *sw.ents))) return fprintf(stderr, "out of memory\n"), 1;
    bench_begin(cfg, "snapshot",
                "S1: snapshot and restore of 1,000,000 entities (name, transform, world, parent, "
                "one mesh), beside memcpy of the same bytes");
    ecs_log_level level = host_log_level();
    host_log_set_level(ECS_LOG_WARN);
    int rc = world_build(&sw);
    double want = rc == 0 ? world_checksum(&sw) : 0;
    double take[BENCH_MAX_REPS], rest[BENCH_MAX_REPS], cold[BENCH_MAX_REPS], warm[BENCH_MAX_REPS];
    double again[BENCH_MAX_REPS], warm2[BENCH_MAX_REPS], take_gbs[BENCH_MAX_REPS],
        rest_gbs[BENCH_MAX_REPS], cold_gbs[BENCH_MAX_REPS], warm_gbs[BENCH_MAX_REPS];
    size_t bytes = 0;
    for (int r = 0; rc == 0 && r < cfg->reps; r++) {
        sample s = {0};
        rc = repetition(&sw, want, &s);
        take[r] = s.take_ms, rest[r] = s.restore_ms, cold[r] = s.cold_ms, warm[r] = s.warm_ms;
        again[r] = s.again_ms, warm2[r] = s.warm_ms;
        take_gbs[r] = (double)s.bytes / s.take_ms / 1e6;
        rest_gbs[r] = (double)s.bytes / s.restore_ms / 1e6;
        cold_gbs[r] = (double)s.bytes / s.cold_ms / 1e6;
        warm_gbs[r] = (double)s.bytes / s.warm_ms / 1e6;
        bytes = s.bytes;
    }
    host_log_set_level(level);
    bench_world_close(&sw.bw);
    free(sw.ents);
    if (rc != 0) return 1;
    size_t n = (size_t)cfg->reps;
    char note[200];
    snprintf(note, sizeof note, "%.1f MB per snapshot (%.0f bytes per entity); target < 30 ms",
             (double)bytes / 1e6, (double)bytes / N);
    report(cfg, "snapshot (take)", "ms", take, cold, n, "memcpy to a new buffer", note);
    report(cfg, "snapshot (take again, kept buffer)", "ms", again, warm2, n,
           "memcpy to a used buffer", "the loop's case after a reload: no page faults");
    report(cfg, "restore", "ms", rest, warm, n, "memcpy to a used buffer", "target < 30 ms");
    report(cfg, "snapshot (take)", "GB/s", take_gbs, cold_gbs, n, "memcpy to a new buffer",
           "target >= 2 GB/s; ratio below 1: slower than memcpy");
    report(cfg, "restore", "GB/s", rest_gbs, warm_gbs, n, "memcpy to a used buffer",
           "target >= 2 GB/s");
    return 0;
}

const bench_workload bench_snapshot_workload = {
    "snapshot", "S1: snapshot and restore of 1 M entities (name, transform, mesh) vs memcpy", run};
