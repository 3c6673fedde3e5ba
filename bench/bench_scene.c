/* SPDX-License-Identifier: MIT */
/* bench_scene.c: workload "scene", BENCH.md W7: host_scene_save and host_scene_load of
 * 100,000 entities, each with a debug name and a transform in a hierarchy (and, as
 * separate rows, with one or two meshes each too), in entities/s and MB/s each way,
 * beside cJSON's own parse and print of the same file in the same run.
 *
 * Ours is the real transform.so, debug_name.so (and mesh.so) loaded by the real loader
 * into a fresh world per repetition (bench_world_open). Data, built untimed through the
 * plugins' APIs: 100 trees of 1,000 nodes in the W6 layout (BENCH.md "Trees"), created
 * tree by tree, breadth-first; entity i is named "e<i>" and gets the i-th BENCH.md local
 * (RNG seeded 0x1234567); its K meshes get local bounds from a second RNG seeded
 * 0x1234568. One repetition:
 *   1. ours, save: host_scene_save(world, file) timed whole: every manager's
 *      write_component into the text, write, fsync, rename. The files live in a folder
 *      on /dev/shm when there is one (tmpfs: fsync costs nothing), so the figure is the
 *      host's work rather than the disk's; the note line says where they were.
 *   2. baseline: the saved text read into memory (untimed); cJSON_Parse(text) timed (the
 *      load baseline), then cJSON_Print(that tree) timed (the save baseline). Its output
 *      plus a newline must be the file, byte for byte.
 *   3. ours, load: host_scene_load(fresh world, file) timed whole: read, parse, shape
 *      check, batch create, every manager's load_component, the scene store commit.
 *   4. checks (untimed): the load succeeded with N live entities and the right count in
 *      each manager; the loaded world saved again is byte-identical to the file; the file
 *      is the same in every repetition. Any failure fails the workload.
 * Rates are N / time and file bytes / time (MB = 10^6 bytes), the same file size for
 * ours and the baseline; the ratio ours/baseline of rates is above 1 when ours is faster.
 * The checksum is the FNV-1a 64 hash of the saved file.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "debug_name_api.h"
#include "json.h"
#include "log.h"
#include "mesh_api.h"
#include "scene.h"
#include "transform_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(TRANSFORM_SO) || !defined(DEBUG_NAME_SO) || !defined(MESH_SO)
#error "TRANSFORM_SO, DEBUG_NAME_SO and MESH_SO must name the built plugins"
#endif

#define TREES      100u
#define NODES      1000u /* per tree */
#define N          (TREES * NODES)
#define MAX_MESHES 2u /* per entity */
#define ROOT       UINT32_MAX

/* Parent of node k of a tree (ROOT for node 0), BENCH.md "Trees". */
static uint32_t tree_parent(uint32_t k)
{
    if (k == 0) return ROOT;
    if (k <= 10) return 0;
    if (k <= 110) return 1 + (k - 11) / 10;
    return 11 + (k - 111) / 10;
}

/* ---- the data, drawn once ---- */

typedef struct scene_data {
    ecs_transform_local *local; /* N, creation order */
    ecs_aabb *bounds;           /* N * MAX_MESHES: mesh k of entity i at i * MAX_MESHES + k */
} scene_data;

static int data_make(scene_data *d)
{
    bench_rng tr = bench_rng_seeded(BENCH_SEED), br = bench_rng_seeded(BENCH_SEED + 1);
    d->local = malloc(N * sizeof *d->local);
    d->bounds = malloc(N * MAX_MESHES * sizeof *d->bounds);
    if (!d->local || !d->bounds) return -1;
    for (uint32_t i = 0; i < N; i++) {
        float p[3], q[4], s[3];
        bench_local_draw(&tr, p, q, s);
        d->local[i].position = ecs_vec3_make(p[0], p[1], p[2]);
        d->local[i].rotation = (ecs_quat){q[0], q[1], q[2], q[3]};
        d->local[i].scale = ecs_vec3_make(s[0], s[1], s[2]);
    }
    for (uint32_t m = 0; m < N * MAX_MESHES; m++) { /* a corner in [-1,1)^3, sides 0.1-2.1 */
        ecs_aabb *b = &d->bounds[m];
        b->min = ecs_vec3_make(bench_rng_float(&br) * 2 - 1, bench_rng_float(&br) * 2 - 1,
                               bench_rng_float(&br) * 2 - 1);
        b->max = ecs_vec3_make(b->min.x + 0.1f + 2 * bench_rng_float(&br),
                               b->min.y + 0.1f + 2 * bench_rng_float(&br),
                               b->min.z + 0.1f + 2 * bench_rng_float(&br));
    }
    return 0;
}

static void data_free(scene_data *d)
{
    free(d->local);
    free(d->bounds);
}

/* ---- a world with the plugins ---- */

typedef struct scene_world {
    bench_world bw;
    const ecs_transform_api *tf;
    const ecs_debug_name_api *dn;
    const ecs_mesh_api *mesh; /* NULL when K == 0: mesh.so is not loaded then */
} scene_world;

/* Load transform.so, debug_name.so and, when meshes > 0, mesh.so. 0, or -1 (said). */
static int world_open(scene_world *sw, uint32_t meshes)
{
    static const char *const paths[] = {TRANSFORM_SO, DEBUG_NAME_SO, MESH_SO};
    memset(sw, 0, sizeof *sw);
    if (bench_world_open(&sw->bw, "scene", paths, meshes ? 3 : 2, NULL) != 0) return -1;
    const host_registry *reg = &sw->bw.s->registry;
    sw->tf = host_registry_find(reg, ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, NULL);
    sw->dn = host_registry_find(reg, ECS_DEBUG_NAME_API_NAME, ECS_DEBUG_NAME_API_VERSION, NULL);
    if (meshes) sw->mesh = host_registry_find(reg, ECS_MESH_API_NAME, ECS_MESH_API_VERSION, NULL);
    if (sw->tf && sw->dn && (sw->mesh || !meshes)) return 0;
    fprintf(stderr, "scene: a plugin's API is missing\n");
    return -1;
}

/* Create the N entities tree by tree with their names, transforms and K meshes each.
 * 0, or -1 (said on stderr). */
static int populate(scene_world *sw, const scene_data *d, uint32_t K, ecs_entity *ents)
{
    static const char *const material[] = {"wood", "stone", "metal"};
    const ecs_transform_api *tf = sw->tf;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t p = tree_parent(i % NODES);
        ecs_entity parent = p == ROOT ? ecs_entity_null() : ents[i - i % NODES + p];
        char name[32], mesh[48];
        snprintf(name, sizeof name, "e%u", i);
        if (host_entity_create(sw->bw.w->entities, &ents[i]) != ECS_OK ||
            tf->add(tf->self, ents[i], &d->local[i], parent) != ECS_OK ||
            sw->dn->set(sw->dn->self, ents[i], name) != ECS_OK)
            return fprintf(stderr, "scene: building entity %u failed\n", i), -1;
        for (uint32_t k = 0; k < K; k++) {
            snprintf(mesh, sizeof mesh, "meshes/prop_%02u.mesh", (i * MAX_MESHES + k) % 64);
            ecs_mesh_desc md = {mesh, material[(i + k) % 3], (i + k) % 8 != 0,
                                d->bounds[i * MAX_MESHES + k]};
            if (sw->mesh->add(sw->mesh->self, ents[i], &md, NULL) != ECS_OK)
                return fprintf(stderr, "scene: mesh %u of entity %u failed\n", k, i), -1;
        }
    }
    return 0;
}

/* ---- one repetition ---- */

typedef struct sample {
    double save_s, load_s, print_s, parse_s; /* seconds */
    double cpu_slowest, cpu_fastest;         /* ms: the CPU probes just before and after the load */
    size_t bytes;                            /* the file */
    uint64_t hash;                           /* FNV-1a 64 of the file */
} sample;

static uint64_t fnv1a64(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* The file at path in a new buffer (its length in *len); NULL (said) on failure. */
static char *read_file(const char *path, size_t *len)
{
    char err[256];
    char *text = host_json_read_text(path, len, err, sizeof err);
    if (!text) fprintf(stderr, "scene: %s\n", err);
    return text;
}

/* Baseline: cJSON_Parse of the saved text, then cJSON_Print of that tree. Its output and
 * a newline must be the file. 0, or -1 (said). */
static int baseline(const char *text, size_t len, sample *out)
{
    uint64_t t0 = bench_now_ns();
    cJSON *root = cJSON_Parse(text);
    uint64_t t1 = bench_now_ns();
    char *printed = root ? cJSON_Print(root) : NULL;
    uint64_t t2 = bench_now_ns();
    out->parse_s = (double)(t1 - t0) * 1e-9;
    out->print_s = (double)(t2 - t1) * 1e-9;
    int rc = printed && strlen(printed) + 1 == len && memcmp(printed, text, len - 1) == 0 ? 0 : -1;
    if (rc) fprintf(stderr, "scene: cJSON's own print of the file differs from the file\n");
    free(printed);
    cJSON_Delete(root);
    return rc;
}

/* The loaded world holds what was saved: N live entities, N transforms and names,
 * N * K meshes; saved again into path it is byte-identical to text. 0, or -1 (said). */
static int check_loaded(scene_world *sw, uint32_t K, const char *path, const char *text, size_t len)
{
    uint32_t live = host_entities_live(sw->bw.w->entities), tfs = sw->tf->count(sw->tf->self),
             names = sw->dn->count(sw->dn->self), meshes = K ? sw->mesh->count(sw->mesh->self) : 0;
    if (live != N || tfs != N || names != N || meshes != N * K) {
        fprintf(stderr,
                "scene: loaded %u entities, %u transforms, %u names, %u meshes; expected %u, "
                "%u, %u, %u\n",
                live, tfs, names, meshes, N, N, N, N * K);
        return -1;
    }
    size_t len2 = 0;
    char *again = host_scene_save(sw->bw.s->scene, path) == ECS_OK ? read_file(path, &len2) : NULL;
    int rc = again && len2 == len && memcmp(again, text, len) == 0 ? 0 : -1;
    if (rc) fprintf(stderr, "scene: the loaded world saved again differs from the file\n");
    free(again);
    return rc;
}

/* Where the scene files go: a new folder on /dev/shm, or the plugin folder of the world. */
static char shm_dir[64];

static const char *scene_dir(const scene_world *sw)
{
    if (!shm_dir[0]) {
        snprintf(shm_dir, sizeof shm_dir, "/dev/shm/ecs-bench-scene-XXXXXX");
        if (!mkdtemp(shm_dir)) strcpy(shm_dir, "-");
    }
    return strcmp(shm_dir, "-") ? shm_dir : sw->bw.dir;
}

static void scene_dir_remove(void)
{
    char path[128];
    if (!shm_dir[0] || !strcmp(shm_dir, "-")) return;
    snprintf(path, sizeof path, "%s/scene.json", shm_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/again.json", shm_dir);
    unlink(path);
    rmdir(shm_dir);
    shm_dir[0] = '\0';
}

/* The slowest and the fastest CPU of two probes (0 when either probed none). */
static void probes_summary(const bench_cpus *a, const bench_cpus *b, sample *out)
{
    out->cpu_slowest = out->cpu_fastest = 0;
    if (a->n == 0 || b->n == 0) return;
    double ha = bench_cpus_slowest(a), hb = bench_cpus_slowest(b);
    double la = bench_cpus_fastest(a), lb = bench_cpus_fastest(b);
    out->cpu_slowest = ha > hb ? ha : hb;
    out->cpu_fastest = la < lb ? la : lb;
}

static int repetition(const scene_data *d, uint32_t K, ecs_entity *ents, sample *out)
{
    scene_world a, b;
    char path[160], path2[160];
    char *text = NULL;
    int rc = world_open(&a, K);
    if (rc == 0) rc = populate(&a, d, K, ents);
    if (rc == 0) { /* 1. ours, save */
        snprintf(path, sizeof path, "%s/scene.json", scene_dir(&a));
        uint64_t t0 = bench_now_ns();
        ecs_status s = host_scene_save(a.bw.s->scene, path);
        out->save_s = (double)(bench_now_ns() - t0) * 1e-9;
        if (s != ECS_OK) rc = -1, fprintf(stderr, "scene: save failed: %s\n", ecs_status_text(s));
    }
    if (rc == 0) rc = (text = read_file(path, &out->bytes)) ? 0 : -1;
    if (rc == 0) rc = baseline(text, out->bytes, out); /* 2. */
    bool opened_b = rc == 0;
    if (opened_b) rc = world_open(&b, K);
    if (rc == 0) { /* 3. ours, load, between two CPU probes (untimed) */
        bench_cpus before = bench_cpu_probe();
        uint64_t t0 = bench_now_ns();
        ecs_status s = host_scene_load(b.bw.s->scene, path);
        out->load_s = (double)(bench_now_ns() - t0) * 1e-9;
        bench_cpus after = bench_cpu_probe();
        probes_summary(&before, &after, out);
        if (s != ECS_OK) rc = -1, fprintf(stderr, "scene: load failed: %s\n", ecs_status_text(s));
        snprintf(path2, sizeof path2, "%s/again.json", scene_dir(&b));
        if (rc == 0) rc = check_loaded(&b, K, path2, text, out->bytes); /* 4. */
    }
    if (opened_b) bench_world_close(&b.bw);
    if (text) out->hash = fnv1a64(text, out->bytes);
    free(text);
    bench_world_close(&a.bw);
    return rc;
}

/* ---- rows ---- */

static void report_pair(const bench_config *cfg, const char *what, const char *variant,
                        const double *ours_s, const double *base_s, size_t bytes, uint64_t hash,
                        const char *note)
{
    double oe[BENCH_MAX_REPS], be[BENCH_MAX_REPS], ob[BENCH_MAX_REPS], bb[BENCH_MAX_REPS];
    for (int r = 0; r < cfg->reps; r++) {
        oe[r] = N / ours_s[r] * 1e-6;
        be[r] = N / base_s[r] * 1e-6;
        ob[r] = (double)bytes / ours_s[r] * 1e-6;
        bb[r] = (double)bytes / base_s[r] * 1e-6;
    }
    char name[64];
    const char *base_name = strcmp(what, "save") == 0 ? "cJSON_Print" : "cJSON_Parse";
    snprintf(name, sizeof name, "%s, %s", what, variant);
    bench_row row = {"W7",
                     name,
                     "M ent/s",
                     base_name,
                     1,
                     bench_stats_of(oe, (size_t)cfg->reps),
                     bench_stats_of(be, (size_t)cfg->reps),
                     hash,
                     NULL};
    bench_report(cfg, "scene", &row);
    row.unit = "MB/s";
    row.ours = bench_stats_of(ob, (size_t)cfg->reps);
    row.base = bench_stats_of(bb, (size_t)cfg->reps);
    row.note = note;
    bench_report(cfg, "scene", &row);
}

#define CPU_SLOWED 1.2 /* a CPU probe this much slower than the run's fastest: slowed */

/* What the CPU probes around the loads say, for the load row's note: in how many
 * repetitions every CPU ran at full speed, and the loads' max/min over those. */
static void steady_note(const sample *s, const double *load_s, int reps, char *out, size_t len)
{
    double fastest = 0, kept[BENCH_MAX_REPS];
    int steady = 0;
    for (int r = 0; r < reps; r++)
        if (s[r].cpu_fastest > 0 && (fastest == 0 || s[r].cpu_fastest < fastest))
            fastest = s[r].cpu_fastest;
    if (fastest == 0) {
        snprintf(out, len, "CPUs not probed (the affinity could not be set)");
        return;
    }
    for (int r = 0; r < reps; r++)
        if (s[r].cpu_slowest <= CPU_SLOWED * fastest) kept[steady++] = load_s[r];
    bench_stats st = bench_stats_of(kept, (size_t)steady);
    int n = snprintf(out, len,
                     "CPUs at full speed around %d of %d loads (a probe pinned to each CPU "
                     "before and after; slowed: >= %.1fx the fastest, %.2f ms)",
                     steady, reps, CPU_SLOWED, fastest);
    if (steady > 1 && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, "; max/min of those loads %.2f", st.max / st.min);
}

static int run_variant(const bench_config *cfg, const scene_data *d, uint32_t K,
                       const char *variant)
{
    sample all[BENCH_MAX_REPS];
    double save[BENCH_MAX_REPS], load[BENCH_MAX_REPS], print[BENCH_MAX_REPS], parse[BENCH_MAX_REPS];
    ecs_entity *ents = malloc(N * sizeof *ents);
    sample first = {0};
    if (!ents) return 1;
    for (int r = 0; r < cfg->reps; r++) {
        sample s = {0};
        if (repetition(d, K, ents, &s) != 0) return scene_dir_remove(), free(ents), 1;
        if (r == 0) first = s;
        if (s.bytes != first.bytes || s.hash != first.hash) {
            fprintf(stderr, "scene: repetition %d saved a different file\n", r + 1);
            return scene_dir_remove(), free(ents), 1;
        }
        save[r] = s.save_s, load[r] = s.load_s, print[r] = s.print_s, parse[r] = s.parse_s;
        all[r] = s;
    }
    free(ents);
    char save_note[256], load_note[512], cpus[200];
    steady_note(all, load, cfg->reps, cpus, sizeof cpus);
    snprintf(save_note, sizeof save_note,
             "file %.2f MB (%.0f B/entity) in %s; ours: host_scene_save whole (text, write, "
             "fsync, rename); base: cJSON_Print of the parsed file",
             (double)first.bytes * 1e-6, (double)first.bytes / N,
             strncmp(shm_dir, "/dev/shm/", 9) ? "the plugin folder (/tmp)" : "/dev/shm");
    scene_dir_remove();
    snprintf(load_note, sizeof load_note,
             "ours: host_scene_load whole (read, parse, check, create, load_component x "
             "managers, store); base: cJSON_Parse of the text in memory; checked: counts ok, "
             "re-save after load byte-identical; %s",
             cpus);
    report_pair(cfg, "save", variant, save, print, first.bytes, first.hash, save_note);
    report_pair(cfg, "load", variant, load, parse, first.bytes, first.hash, load_note);
    return 0;
}

static int run(const bench_config *cfg)
{
    scene_data d = {0};
    ecs_log_level level = host_log_level();
    bench_begin(cfg, "scene",
                "W7: scene save/load of 100,000 entities (100 trees x 1,000), rates (higher is "
                "better), beside cJSON's own print/parse of the same file");
    if (data_make(&d) != 0) return data_free(&d), fprintf(stderr, "scene: no memory\n"), 1;
    host_log_set_level(ECS_LOG_WARN); /* no "saved/loaded N entities" lines per repetition */
    int rc = 0;
    rc |= run_variant(cfg, &d, 0, "name + transform");
    rc |= run_variant(cfg, &d, 1, "name + transform + 1 mesh");
    rc |= run_variant(cfg, &d, 2, "name + transform + 2 meshes");
    host_log_set_level(level);
    data_free(&d);
    return rc;
}

const bench_workload bench_scene_workload = {
    "scene", "W7: scene save/load of 100,000 named transforms (+ meshes) vs cJSON print/parse",
    run};
