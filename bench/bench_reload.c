/* SPDX-License-Identifier: MIT */
/* bench_reload.c: workload "reload", BENCH.md R1: hot reload of a plugin holding
 * 1,000,000 components, from the change being seen to the swap being done, on the
 * same-layout path (the state is handed over) and on the JSON-migration path (the old
 * code saves every component, the new code loads them), beside a bare dlopen + dlclose
 * of the same file in the same run.
 *
 * In process, through the host's own modules: a host_world with a reloader
 * (host_reloader_new, inotify, quiet period 0) on a temporary folder holding rl.so, a
 * build of the hot-reload test plugin (tests/plugins_reload/reloadee.c); its API fills it
 * with N components (values 1..N). A new build is written beside it and renamed over it,
 * as lld does; then host_reloader_poll() runs until the reload count goes up. Timed: that
 * one poll call (it reads the inotify event, copies the file, dlopens it, validates it,
 * hands the state over or migrates, unloads and dlcloses the old code); also reported:
 * the host's own log figure ("ms from change to swap", from the first change the
 * watcher saw) and the time from the rename. Every repetition checks that the N values
 * came through unchanged (their sum is the checksum).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "log.h"
#include "reload.h"
#include "reloadee_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(BENCH_RL_V1_SO) || !defined(BENCH_RL_V2_SO) || !defined(BENCH_RL_V3_SO) ||            \
    !defined(BENCH_RL_V2S_SO) || !defined(BENCH_RL_V3S_SO)
#error "bench/meson.build defines BENCH_RL_V1_SO, BENCH_RL_V2_SO and BENCH_RL_V3_SO"
#endif

#define N       1000000u
#define SMALL_N 1000u /* the same-layout path once more: its cost must not depend on N */

/* One repetition's figures, in milliseconds. */
typedef struct reload_sample {
    double poll_ms, from_rename_ms, log_ms; /* the swapping poll; rename -> swap; host's log */
} reload_sample;

/* Copy src to dst with mode 0755. 0, or -1 (said on stderr). */
static int copy_file(const char *src, const char *dst)
{
    char buf[65536];
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ssize_t n = 0;
    bool ok = out >= 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) ok = write(out, buf, (size_t)n) == n;
    ok = ok && n == 0 && fchmod(out, 0755) == 0;
    if (out >= 0 && close(out) != 0) ok = false;
    if (in >= 0) close(in);
    if (!ok) fprintf(stderr, "reload: cannot copy %s to %s: %s\n", src, dst, strerror(errno));
    return ok ? 0 : -1;
}

/* ---- the world under test ---- */

typedef struct rig {
    char dir[64];    /* the watched folder */
    uint32_t n;      /* components */
    host_session *s; /* its session */
    host_world *w;
    host_reloader *r;
    const reloadee_api *api;
} rig;

static void rig_close(rig *g)
{
    char path[128];
    host_reloader_free(g->r);
    host_session_free(g->s); /* removes the private folder too */
    g->r = NULL;
    g->s = NULL;
    g->w = NULL;
    if (!g->dir[0]) return;
    snprintf(path, sizeof path, "%s/rl.so", g->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/.rl.so.tmp", g->dir);
    unlink(path);
    rmdir(g->dir);
    g->dir[0] = '\0';
}

/* A world watching a new folder with v1 loaded and filled with n components. 0 or -1. */
static int rig_open(rig *g, uint32_t n)
{
    char path[128];
    memset(g, 0, sizeof *g);
    g->n = n;
    snprintf(g->dir, sizeof g->dir, "/tmp/ecs-bench-reload-XXXXXX");
    if (!mkdtemp(g->dir)) return perror("reload: mkdtemp"), g->dir[0] = '\0', -1;
    snprintf(path, sizeof path, "%s/rl.so", g->dir);
    if (copy_file(BENCH_RL_V1_SO, path) != 0) return -1;
    host_reload_options ro = {false, 0, 0, false}; /* inotify, no quiet period */
    host_load_options lo = {0};
    g->s = host_session_new();
    g->w = g->s ? g->s->world : NULL;
    if (!g->s ||
        !(g->r = host_reloader_new(g->s, (const char *const[]){g->dir}, 1, &ro)) ||
        host_load_dir(g->s, g->dir, &lo) != ECS_OK || g->s->bad_plugins) {
        fprintf(stderr, "reload: could not load %s with a reloader\n", path);
        return -1;
    }
    host_plugin *p = host_plugin_named(g->s, "rl");
    g->api = p ? p->table.api_find(&p->table, RELOADEE_API_NAME, RELOADEE_API_VERSION, NULL) : NULL;
    if (!g->api || g->api->populate(g->api->self, n, 1) != ECS_OK) {
        fprintf(stderr, "reload: could not give rl %u components\n", n);
        return -1;
    }
    return 0;
}

/* Rename a new build (src) over rl.so and poll until the reloader swapped it in. The
 * host's log lines of the swap are captured to read its own figure. 0, or -1 when the
 * reload was refused, did not come or lost a value. */
static int swap_in(rig *g, const char *src, const char *what, reload_sample *out)
{
    char tmp[128], dst[128], log[4096] = "";
    snprintf(tmp, sizeof tmp, "%s/.rl.so.tmp", g->dir);
    snprintf(dst, sizeof dst, "%s/rl.so", g->dir);
    int64_t sum = g->api->sum(g->api->self);
    unsigned done0, failed0, done, failed;
    host_reloader_counts(g->r, &done0, &failed0);
    done = done0, failed = failed0;
    if (copy_file(src, tmp) != 0) return -1;
    FILE *capture = tmpfile();
    int saved = dup(STDERR_FILENO);
    if (!capture || saved < 0) return perror("reload: capturing the log"), -1;
    fflush(stderr);
    dup2(fileno(capture), STDERR_FILENO);
    ecs_log_level level = host_log_level();
    host_log_set_level(ECS_LOG_INFO);
    uint64_t renamed = bench_now_ns(), t0 = 0, t1 = 0;
    int rc = rename(tmp, dst);
    for (int i = 0; rc == 0 && done == done0 && failed == failed0 && i < 10000000; i++) {
        t0 = bench_now_ns();
        host_reloader_poll(g->r);
        t1 = bench_now_ns();
        host_reloader_counts(g->r, &done, &failed);
    }
    host_log_set_level(level);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(capture);
    size_t got = fread(log, 1, sizeof log - 1, capture);
    log[got] = '\0';
    fclose(capture);
    const char *figure = strstr(log, " ms from change to swap");
    while (figure && figure > log && figure[-1] != ' ') figure--;
    out->poll_ms = (double)(t1 - t0) / 1e6;
    out->from_rename_ms = (double)(t1 - renamed) / 1e6;
    out->log_ms = figure ? strtod(figure, NULL) : -1;
    bool kept = g->api->count(g->api->self) == g->n && g->api->sum(g->api->self) == sum;
    if (rc == 0 && done == done0 + 1 && failed == failed0 && figure && kept) return 0;
    fprintf(stderr, "reload: %s: %s%s\n%s", what, rc ? strerror(errno) : "",
            kept ? "the reload did not happen" : "values were lost", log);
    return -1;
}

/* A bare dlopen + dlclose of path, in milliseconds; -1 on failure. */
static double dlopen_close_ms(const char *path)
{
    uint64_t t0 = bench_now_ns();
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) return fprintf(stderr, "reload: dlopen %s: %s\n", path, dlerror()), -1;
    dlclose(dl);
    return (double)(bench_now_ns() - t0) / 1e6;
}

/* ---- rows ---- */

static void report(const bench_config *cfg, const char *name, const char *unit, double *ours,
                   double *base, uint64_t checksum, const char *note)
{
    bench_row row = {"R1",
                     name,
                     unit,
                     "dlopen+dlclose",
                     1,
                     bench_stats_of(ours, (size_t)cfg->reps),
                     bench_stats_of(base, (size_t)cfg->reps),
                     checksum,
                     note};
    bench_report(cfg, "reload", &row);
}

static double median_of(const double *v, int n)
{
    double copy[BENCH_MAX_REPS];
    memcpy(copy, v, (size_t)n * sizeof *v);
    return bench_stats_of(copy, (size_t)n).median;
}

static int run_reload(const bench_config *cfg)
{
    static double same[BENCH_MAX_REPS], small[BENCH_MAX_REPS], json[BENCH_MAX_REPS],
        base_same[BENCH_MAX_REPS], base_small[BENCH_MAX_REPS], base_json[BENCH_MAX_REPS],
        per_component[BENCH_MAX_REPS], same_rename[BENCH_MAX_REPS], same_log[BENCH_MAX_REPS],
        json_log[BENCH_MAX_REPS], stream[BENCH_MAX_REPS], base_stream[BENCH_MAX_REPS],
        stream_per_component[BENCH_MAX_REPS];
    ecs_log_level level = host_log_level();
    int status = 0;
    bench_begin(cfg, "reload", "hot reload of a plugin with 1,000,000 components (R1)");
    host_log_set_level(ECS_LOG_WARN); /* no "loaded" line per repetition */
    for (int r = 0; r < cfg->reps && status == 0; r++) {
        rig g;
        reload_sample s1 = {0, 0, 0}, s2 = {0, 0, 0}, s3 = {0, 0, 0};
        if (rig_open(&g, SMALL_N) != 0 || (base_small[r] = dlopen_close_ms(BENCH_RL_V2_SO)) < 0 ||
            swap_in(&g, BENCH_RL_V2_SO, "same layout, small (v1 -> v2)", &s1) != 0)
            status = 1;
        rig_close(&g);
        if (status != 0 || rig_open(&g, N) != 0 ||
            (base_same[r] = dlopen_close_ms(BENCH_RL_V2_SO)) < 0 ||
            swap_in(&g, BENCH_RL_V2_SO, "same layout (v1 -> v2)", &s2) != 0 ||
            (base_json[r] = dlopen_close_ms(BENCH_RL_V3_SO)) < 0 ||
            swap_in(&g, BENCH_RL_V3_SO, "JSON migration (v2 -> v3)", &s3) != 0)
            status = 1;
        rig_close(&g);
        reload_sample s4 = {0, 0, 0}, s5 = {0, 0, 0};
        if (status != 0 || rig_open(&g, N) != 0 ||
            swap_in(&g, BENCH_RL_V2S_SO, "same layout (v1 -> v2s)", &s4) != 0 ||
            (base_stream[r] = dlopen_close_ms(BENCH_RL_V3S_SO)) < 0 ||
            swap_in(&g, BENCH_RL_V3S_SO, "JSON migration (v2s -> v3s)", &s5) != 0)
            status = 1;
        rig_close(&g);
        stream[r] = s5.poll_ms;
        stream_per_component[r] = s5.poll_ms * 1e6 / N;
        small[r] = s1.poll_ms;
        same[r] = s2.poll_ms;
        same_rename[r] = s2.from_rename_ms;
        same_log[r] = s2.log_ms;
        json[r] = s3.poll_ms;
        json_log[r] = s3.log_ms;
        per_component[r] = s3.poll_ms * 1e6 / N;
    }
    host_log_set_level(level);
    if (status != 0) return status;
    char note_same[256], note_json[256], note_stream[256];
    snprintf(note_same, sizeof note_same,
             "the swapping poll; from the rename %.3f ms; host log \"ms from change to swap\" "
             "%.2f (medians); target < 5 ms",
             median_of(same_rename, cfg->reps), median_of(same_log, cfg->reps));
    snprintf(note_json, sizeof note_json,
             "the swapping poll: 1M components saved as JSON by the old code, loaded by the "
             "new; %.0f ns per component; host log %.2f ms (medians)",
             median_of(per_component, cfg->reps), median_of(json_log, cfg->reps));
    snprintf(note_stream, sizeof note_stream,
             "the same through write_component/read_component (the host's JSON writer and "
             "reader, no cJSON tree); %.0f ns per component; target <= 300 ms",
             median_of(stream_per_component, cfg->reps));
    /* checksums: the sum of the values, the same before and after every reload */
    report(cfg, "same layout, 1,000 components", "ms", small, base_small,
           (uint64_t)SMALL_N * (SMALL_N + 1) / 2, "the swapping poll; target < 5 ms");
    report(cfg, "same layout, 1M components", "ms", same, base_same, (uint64_t)N * (N + 1) / 2,
           note_same);
    report(cfg, "JSON migration, 1M components", "ms", json, base_json, (uint64_t)N * (N + 1) / 2,
           note_json);
    report(cfg, "JSON migration, 1M components, writer/reader", "ms", stream, base_stream,
           (uint64_t)N * (N + 1) / 2, note_stream);
    return 0;
}

const bench_workload bench_reload_workload = {
    "reload", "R1: hot reload with 1M components, same layout and JSON migration", run_reload};
