/* SPDX-License-Identifier: MIT */
/* bench.h: the shared pieces of ecs-bench: a monotonic timer, the BENCH.md RNG,
 * median/min/max, the result printer (a text table or one JSON object per row) and the
 * registry of workloads.
 *
 * A workload measures its rows, each ours beside a baseline timed in the same run, and
 * hands every row to bench_report(). To add one: write bench_<name>.c defining
 * `const bench_workload bench_<name>_workload`, declare it in the list at the end of this
 * file, add it to bench_workloads[] in bench.c and the file to meson.build.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ecs_plugin.h"

/* ---- Method (BENCH.md "Method") ----------------------------------------------------- */

#define BENCH_DEFAULT_REPS 5    /* repetitions, each from a fresh state (at least 5) */
#define BENCH_MAX_REPS     1000 /* the most --reps accepts: sample arrays are fixed */
#define BENCH_PASSES       20   /* passes per repetition of an iteration workload */
#define BENCH_SEED         0x1234567u

/* What the command line asked for; every workload reads it. */
typedef struct bench_config {
    int reps;  /* repetitions per figure, 1..BENCH_MAX_REPS */
    bool json; /* one JSON object per row on stdout instead of the table */
} bench_config;

/* ---- Timer -------------------------------------------------------------------------- */

/* Nanoseconds on the monotonic clock (an arbitrary origin). */
uint64_t bench_now_ns(void);

/* ---- The machine's CPUs: each as fast as it can be? ---------------------------------
 * On these VMs a vCPU is at times slowed 1.3-1.8x for seconds by work outside the VM (the
 * other hyperthread of its physical core busy with another guest), while the other vCPU is
 * not (bench/README.md, "Session 13"). A probe times a fixed L2-bound kernel (about 1 ms)
 * pinned to each CPU the process may run on, one after the other, and restores the
 * affinity: it is untimed context for a row, never part of a figure. */

#define BENCH_CPUS_MAX 8 /* CPUs probed at most (the first ones the process may use) */

typedef struct bench_cpus {
    int n;                     /* CPUs probed (0: the affinity could not be set) */
    double ms[BENCH_CPUS_MAX]; /* the kernel's time on each */
} bench_cpus;

bench_cpus bench_cpu_probe(void);

/* The slowest and the fastest CPU of a probe (0 when none was probed). */
double bench_cpus_slowest(const bench_cpus *c);
double bench_cpus_fastest(const bench_cpus *c);

/* ---- RNG: xorshift64*, exactly as BENCH.md "Deterministic data" defines it ----------- */

typedef struct bench_rng {
    uint64_t state; /* never 0 */
} bench_rng;

static inline bench_rng bench_rng_seeded(uint64_t seed)
{
    bench_rng r;
    r.state = seed ? seed : BENCH_SEED;
    return r;
}

static inline uint64_t bench_rng_next(bench_rng *r)
{
    uint64_t x = r->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* A float in [0, 1). */
static inline float bench_rng_float(bench_rng *r)
{
    return (float)(bench_rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

/* An integer in [0, n). */
static inline uint32_t bench_rng_below(bench_rng *r, uint32_t n)
{
    return (uint32_t)(((bench_rng_next(r) >> 32) * n) >> 32);
}

/* BENCH.md's local transform of the next created entity, drawn from r in that order:
 * position (3 draws of f*2-1), rotation (4 draws of f-0.5, f+0.5 for w, normalized by 6
 * Newton steps from inv = 1), scale (3 draws of 0.9+0.2f). */
void bench_local_draw(bench_rng *r, float position[3], float rotation[4], float scale[3]);

/* ---- Plugins: real shared objects through the real loader --------------------------- */

struct host_world;

/* A world that loaded plugins from a temporary folder of symbolic links to them. */
typedef struct bench_world {
    struct host_session *s; /* NULL when not loaded */
    struct host_world *w;   /* s->world */
    char dir[96];           /* the mkdtemp folder ("" when none): the workload may add files */
} bench_world;

/* Make a folder /tmp/ecs-bench-<who>-XXXXXX holding a link to each of paths[0..n) (named
 * by its file name) and, when manifest is not NULL, manifest.json with that text; load it
 * into a new session with host_load_dir. Returns 0, or -1 after saying on stderr what
 * failed (also when a plugin was skipped as bad). Call bench_world_close() either way. */
int bench_world_open(bench_world *bw, const char *who, const char *const *paths, size_t n,
                     const char *manifest);

/* Free the world and remove the folder with every file in it. */
void bench_world_close(bench_world *bw);

struct ecs_transform_api;
struct ecs_debug_name_api;

/* W8's world (bench_scale.c): n entities into ents, in trees of 1,000 nodes (BENCH.md
 * "Trees"), each with the BENCH.md local of its place in creation order and the name
 * "e<i>". 0, or -1 after saying which entity failed. */
int bench_named_trees(struct host_world *w, const struct ecs_transform_api *tf,
                      const struct ecs_debug_name_api *dn, ecs_entity *ents, uint32_t n);

/* ---- Statistics --------------------------------------------------------------------- */

typedef struct bench_stats {
    double median, min, max;
} bench_stats;

/* Median (the mean of the middle two for an even n), min and max of v[0..n). Sorts v in
 * place. n == 0 gives all zeros. */
bench_stats bench_stats_of(double *v, size_t n);

/* ---- Results ------------------------------------------------------------------------ */

/* One row of results: ours beside the baseline, over cfg->reps repetitions. */
typedef struct bench_row {
    const char *id;       /* BENCH.md id: "W1" */
    const char *name;     /* what the row measures: "create, one by one" */
    const char *unit;     /* "ns/entity", "ns/op" */
    const char *baseline; /* the baseline's name: "hash set" */
    int passes;           /* passes per repetition (iteration workloads), else 1 */
    bench_stats ours, base;
    uint64_t checksum; /* the consumed results of ours and the baseline */
    const char *note;  /* printed under the row; NULL for none */
} bench_row;

/* Start a workload's section: a title line (text mode only). */
void bench_begin(const bench_config *cfg, const char *workload, const char *title);

/* Print one row: a table line (and its note) or one JSON object on one line. The ratio
 * is ours/baseline of the medians (null in JSON when the baseline median is 0). */
void bench_report(const bench_config *cfg, const char *workload, const bench_row *row);

/* ---- Workloads ---------------------------------------------------------------------- */

typedef struct bench_workload {
    const char *name;    /* the command-line name: "entities" */
    const char *summary; /* one line for --help */
    /* Measure and report every row. Returns 0 on success, 1 when the workload could not
     * run (no memory) or a result failed its check (it says why on stderr). */
    int (*run)(const bench_config *cfg);
} bench_workload;

/* Every workload, in the order `ecs-bench` with no argument runs them; NULL-terminated. */
extern const bench_workload *const bench_workloads[];

/* The workload called name, or NULL. */
const bench_workload *bench_workload_find(const char *name);

extern const bench_workload bench_entities_workload;  /* bench_entities.c: W1-W4 */
extern const bench_workload bench_dispatch_workload;  /* bench_dispatch.c: D1 */
extern const bench_workload bench_mesh_workload;      /* bench_mesh.c: M1 */
extern const bench_workload bench_transform_workload; /* bench_transform.c: W6 */
extern const bench_workload bench_scene_workload;     /* bench_scene.c: W7 */
extern const bench_workload bench_reload_workload;    /* bench_reload.c: R1 */
extern const bench_workload bench_views_workload;     /* bench_views.c: V1 */
extern const bench_workload bench_scale_workload;     /* bench_scale.c: W8 */
extern const bench_workload bench_probe_workload;     /* bench_probe.c: P1 */
extern const bench_workload bench_latency_workload;   /* bench_latency.c: R1 build end */
extern const bench_workload bench_inspect_workload;   /* bench_inspect.c: I1 */
extern const bench_workload bench_jobs_workload;      /* bench_jobs.c: J1 */
extern const bench_workload bench_snapshot_workload;  /* bench_snapshot.c: S1 */
extern const bench_workload bench_spin_workload;      /* bench_spin.c: M1t, spin */

#endif
