/* SPDX-License-Identifier: MIT */
/* bench_probe.c: workload "probe", BENCH.md P1: the child-process check of a new plugin
 * file before the host maps it (host/plugin/probe.c), in milliseconds per plugin, beside a bare
 * dlopen + dlclose of the same file in this process.
 *
 * host_probe_file() with the built ecs-host as the probe program, on each of the real
 * plugins (transform, mesh, debug_name) and on the probe tests' small plugin: the probe's
 * helper (`ecs-host --probe-helper`, started at a session's first probe) makes a child
 * with clone(CLONE_PARENT), which dlopens the file, calls its entry function, checks the
 * description, dlcloses it and reports on a pipe; the parent reads the report and reaps
 * the child. A repetition times PER_REP probes of a file (the helper running, as in a
 * session after its first probe), then PER_REP dlopen + dlclose of it, and takes the mean
 * of each. A last row times the first probe of a session: the helper stopped before each
 * probe, so each one starts it. Every probe must pass and name the plugin (the checksum
 * counts the name bytes reported).
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

/* One probe of f (after host_probe_stop() when `first`, so it starts the helper): its
 * ms, or -1 when it failed (said on stderr). */
static double one_probe_ms(const probe_file *f, bool first, uint64_t *checksum)
{
    host_probe_config cfg = {ECS_HOST_PATH, HOST_PROBE_DEFAULT_LIMIT_MS};
    host_probe_report rep;
    char why[512];
    if (first) host_probe_stop();
    uint64_t t0 = bench_now_ns();
    if (!host_probe_file(&cfg, f->path, &rep, why, sizeof why) || !rep.described ||
        strcmp(rep.name, f->name) != 0) {
        fprintf(stderr, "probe: %s: %s\n", f->path, rep.described ? rep.name : why);
        return -1;
    }
    *checksum += strlen(rep.name);
    return (double)(bench_now_ns() - t0) / 1e6;
}

/* PER_REP probes of f (each the first of a session when `first`): mean ms per probe; -1
 * when one failed. */
static double probe_ms(const probe_file *f, bool first, uint64_t *checksum)
{
    double sum = 0;
    for (int i = 0; i < PER_REP; i++) {
        double ms = one_probe_ms(f, first, checksum);
        if (ms < 0) return -1;
        sum += ms;
    }
    return sum / PER_REP;
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

/* The rows of file k (first: the first probe of a session) beside dlopen + dlclose. */
static int probe_rows(const bench_config *cfg, size_t k, bool first)
{
    static double ours[BENCH_MAX_REPS], base[BENCH_MAX_REPS];
    uint64_t checksum = 0;
    if (!first && one_probe_ms(&files[k], false, &checksum) < 0) return 1; /* the helper up */
    checksum = 0;
    for (int r = 0; r < cfg->reps; r++) {
        ours[r] = probe_ms(&files[k], first, &checksum);
        base[r] = dlopen_ms(&files[k]);
        if (ours[r] < 0 || base[r] < 0) return 1;
    }
    bench_row row = {"P1",
                     first ? "probe, first of a session, pb_good.so" : files[k].row,
                     "ms/plugin",
                     "dlopen+dlclose",
                     1,
                     bench_stats_of(ours, (size_t)cfg->reps),
                     bench_stats_of(base, (size_t)cfg->reps),
                     checksum,
                     first    ? "each probe starts the helper (a spawn of ecs-host --probe-helper) "
                                "first, as a session's first probe does"
                     : k == 0 ? "a child cloned by the running helper: dlopen, entry, checks, "
                                "dlclose, report on a pipe, reap"
                              : NULL};
    bench_report(cfg, "probe", &row);
    return 0;
}

static int run_probe(const bench_config *cfg)
{
    bench_begin(cfg, "probe", "P1: the child-process probe of a new plugin file");
    size_t n = sizeof files / sizeof *files;
    for (size_t k = 0; k < n; k++)
        if (probe_rows(cfg, k, false)) return 1;
    int rc = probe_rows(cfg, n - 1, true);
    host_probe_stop();
    return rc;
}

const bench_workload bench_probe_workload = {
    "probe", "P1: child-process probe of a plugin file vs dlopen + dlclose", run_probe};
