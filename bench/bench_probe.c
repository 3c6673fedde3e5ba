/* SPDX-License-Identifier: MIT */
/* bench_probe.c: workload "probe", BENCH.md P1: the child-process check of a new plugin
 * file before the host maps it (host/plugin/probe.c), in milliseconds per plugin, beside a bare
 * dlopen + dlclose of the same file in this process.
 *
 * host_probe_file() with the built ecs-host as the probe program, on each of the real
 * plugins (transform, mesh, debug_name) and on the probe tests' small plugin: it spawns
 * `ecs-host --probe-plugin FILE` (posix_spawn), which dlopens the file, calls its entry
 * function, checks the description, dlcloses it and reports on a pipe; the parent reads
 * the report and reaps the child. A repetition times PER_REP probes of a file, then
 * PER_REP dlopen + dlclose of it, and takes the mean of each. Every probe must pass and
 * name the plugin (the checksum counts the name bytes reported).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "probe.h"

#if !defined(ECS_HOST_PATH) || !defined(PB_GOOD_SO) || !defined(TRANSFORM_SO) ||                   \
    !defined(MESH_SO) || !defined(DEBUG_NAME_SO)
#error "bench/meson.build defines ECS_HOST_PATH, PB_GOOD_SO, TRANSFORM_SO, MESH_SO, ..."
#endif

#define PER_REP 20 /* probes (and dlopen + dlclose) per repetition */

typedef struct probe_file {
    const char *row, *path, *name; /* the row's name, the file, the plugin name it reports */
} probe_file;

static const probe_file files[] = {
    {"probe, transform.so", TRANSFORM_SO, "transform"},
    {"probe, mesh.so", MESH_SO, "mesh"},
    {"probe, debug_name.so", DEBUG_NAME_SO, "debug_name"},
    {"probe, test plugin pb_good.so", PB_GOOD_SO, "pb"},
};

/* PER_REP probes of f: mean ms per probe; -1 when one failed (said on stderr). */
static double probe_ms(const probe_file *f, uint64_t *checksum)
{
    host_probe_config cfg = {ECS_HOST_PATH, HOST_PROBE_DEFAULT_LIMIT_MS};
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < PER_REP; i++) {
        host_probe_report rep;
        char why[512];
        if (!host_probe_file(&cfg, f->path, &rep, why, sizeof why) || !rep.described ||
            strcmp(rep.name, f->name) != 0) {
            fprintf(stderr, "probe: %s: %s\n", f->path, rep.described ? rep.name : why);
            return -1;
        }
        *checksum += strlen(rep.name);
    }
    return (double)(bench_now_ns() - t0) / 1e6 / PER_REP;
}

/* PER_REP dlopen + dlclose of f in this process: mean ms per pair; -1 on failure. */
static double dlopen_ms(const probe_file *f)
{
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < PER_REP; i++) {
        void *dl = dlopen(f->path, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
            fprintf(stderr, "probe: dlopen %s: %s\n", f->path, dlerror());
            return -1;
        }
        dlclose(dl);
    }
    return (double)(bench_now_ns() - t0) / 1e6 / PER_REP;
}

static int run_probe(const bench_config *cfg)
{
    static double ours[BENCH_MAX_REPS], base[BENCH_MAX_REPS];
    bench_begin(cfg, "probe", "P1: the child-process probe of a new plugin file");
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        uint64_t checksum = 0;
        for (int r = 0; r < cfg->reps; r++) {
            ours[r] = probe_ms(&files[k], &checksum);
            base[r] = dlopen_ms(&files[k]);
            if (ours[r] < 0 || base[r] < 0) return 1;
        }
        bench_row row = {"P1",
                         files[k].row,
                         "ms/plugin",
                         "dlopen+dlclose",
                         1,
                         bench_stats_of(ours, (size_t)cfg->reps),
                         bench_stats_of(base, (size_t)cfg->reps),
                         checksum,
                         k == 0 ? "a spawn of ecs-host --probe-plugin: dlopen, entry, checks, "
                                  "dlclose, report on a pipe, reap"
                                : NULL};
        bench_report(cfg, "probe", &row);
    }
    return 0;
}

const bench_workload bench_probe_workload = {
    "probe", "P1: child-process probe of a plugin file vs dlopen + dlclose", run_probe};
