/* SPDX-License-Identifier: MIT */
/* bench.c: the shared pieces of ecs-bench: timer, statistics, the table/JSON printer and
 * the registry of workloads (see bench.h).
 *
 * Text mode prints one aligned line per row under its workload's title; JSON mode prints
 * nothing but one object per row, each on its own line (JSON Lines), so stdout can be fed
 * to `jq -s` as it is.
 */
#include "bench.h"

#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

const bench_workload *const bench_workloads[] = {
    &bench_entities_workload,  /* W1-W4 */
    &bench_dispatch_workload,  /* D1 */
    &bench_mesh_workload,      /* M1 */
    &bench_transform_workload, /* W6 */
    &bench_scene_workload,     /* W7 */
    &bench_reload_workload,    /* R1 */
    &bench_views_workload,     /* V1 */
    &bench_scale_workload,     /* W8 */
    &bench_probe_workload,     /* P1 */
    &bench_latency_workload,   /* R1: build end -> running */
    &bench_inspect_workload,   /* I1 */
    &bench_jobs_workload,      /* J1 */
    &bench_snapshot_workload,  /* S1 */
    &bench_spin_workload,      /* M1t: spin */
    NULL,
};

const bench_workload *bench_workload_find(const char *name)
{
    for (size_t i = 0; bench_workloads[i]; i++)
        if (strcmp(bench_workloads[i]->name, name) == 0) return bench_workloads[i];
    return NULL;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A fixed amount of work within one CPU's L2 (256 KiB, four independent chains): ms. */
static double cpu_kernel_ms(void)
{
    static uint64_t arr[32768];
    uint64_t a0 = 1, a1 = 2, a2 = 3, a3 = 4, t0 = bench_now_ns();
    for (int pass = 0; pass < 100; pass++)
        for (size_t i = 0; i < 32768; i += 4) {
            a0 += arr[i] ^ (a0 >> 3);
            a1 += arr[i + 1] ^ (a1 >> 5);
            a2 += arr[i + 2] ^ (a2 >> 7);
            a3 += arr[i + 3] ^ (a3 >> 11);
            arr[i] = a1;
        }
    double ms = (double)(bench_now_ns() - t0) * 1e-6;
    arr[1] = a0 + a2 + a3; /* consumed: the passes cannot be dropped */
    return ms;
}

bench_cpus bench_cpu_probe(void)
{
    bench_cpus c = {0};
    cpu_set_t old, one;
    if (sched_getaffinity(0, sizeof old, &old) != 0) return c;
    for (int cpu = 0; cpu < CPU_SETSIZE && c.n < BENCH_CPUS_MAX; cpu++) {
        if (!CPU_ISSET(cpu, &old)) continue;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) break;
        cpu_kernel_ms(); /* the array into this CPU's cache */
        c.ms[c.n++] = cpu_kernel_ms();
    }
    if (sched_setaffinity(0, sizeof old, &old) != 0) c.n = 0; /* cannot be: it was ours */
    return c;
}

double bench_cpus_slowest(const bench_cpus *c)
{
    double ms[BENCH_CPUS_MAX];
    memcpy(ms, c->ms, sizeof ms);
    return bench_stats_of(ms, (size_t)c->n).max;
}

double bench_cpus_fastest(const bench_cpus *c)
{
    double ms[BENCH_CPUS_MAX];
    memcpy(ms, c->ms, sizeof ms);
    return bench_stats_of(ms, (size_t)c->n).min;
}

void bench_local_draw(bench_rng *r, float position[3], float rotation[4], float scale[3])
{
    for (int c = 0; c < 3; c++) position[c] = bench_rng_float(r) * 2.0f - 1.0f;
    for (int c = 0; c < 4; c++) rotation[c] = bench_rng_float(r) + (c == 3 ? 0.5f : -0.5f);
    for (int c = 0; c < 3; c++) scale[c] = 0.9f + 0.2f * bench_rng_float(r);
    float n = rotation[0] * rotation[0] + rotation[1] * rotation[1] + rotation[2] * rotation[2] +
              rotation[3] * rotation[3],
          inv = 1.0f;
    for (int k = 0; k < 6; k++) inv = inv * (1.5f - 0.5f * n * inv * inv);
    for (int c = 0; c < 4; c++) rotation[c] *= inv;
}

/* ---- plugins through the real loader ---- */

int bench_world_open(bench_world *bw, const char *who, const char *const *paths, size_t n,
                     const char *manifest)
{
    char path[256];
    memset(bw, 0, sizeof *bw);
    snprintf(bw->dir, sizeof bw->dir, "/tmp/ecs-bench-%s-XXXXXX", who);
    if (!mkdtemp(bw->dir)) {
        fprintf(stderr, "%s: mkdtemp %s: %s\n", who, bw->dir, strerror(errno));
        bw->dir[0] = '\0';
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(paths[i], '/');
        snprintf(path, sizeof path, "%s/%s", bw->dir, base ? base + 1 : paths[i]);
        if (symlink(paths[i], path) != 0)
            return fprintf(stderr, "%s: symlink %s: %s\n", who, path, strerror(errno)), -1;
    }
    if (manifest) {
        snprintf(path, sizeof path, "%s/manifest.json", bw->dir);
        FILE *f = fopen(path, "w");
        bool ok = f && fputs(manifest, f) >= 0;
        if (f) ok = fclose(f) == 0 && ok;
        if (!ok) return fprintf(stderr, "%s: cannot write %s\n", who, path), -1;
    }
    host_load_options opt = {0};
    bw->s = host_session_new();
    bw->w = bw->s ? bw->s->world : NULL;
    if (!bw->s || host_load_dir(bw->s, bw->dir, &opt) != ECS_OK || bw->s->bad_plugins) {
        fprintf(stderr, "%s: could not load the plugins linked in %s\n", who, bw->dir);
        return -1;
    }
    return 0;
}

void bench_world_close(bench_world *bw)
{
    char path[512];
    host_session_free(bw->s);
    bw->s = NULL;
    bw->w = NULL;
    if (!bw->dir[0]) return;
    DIR *d = opendir(bw->dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", bw->dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(bw->dir);
    bw->dir[0] = '\0';
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_stats bench_stats_of(double *v, size_t n)
{
    bench_stats s = {0, 0, 0};
    if (n == 0) return s;
    qsort(v, n, sizeof *v, compare_doubles);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

/* Write s as a JSON string: quotes, backslashes and control characters escaped. */
static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* A JSON number, or null for what JSON cannot hold (inf, nan). */
static void print_json_number(double x)
{
    if (isfinite(x))
        printf("%.4f", x);
    else
        fputs("null", stdout);
}

static double ratio_of(const bench_row *row)
{
    return row->base.median > 0 ? row->ours.median / row->base.median : NAN;
}

static void report_json(const bench_config *cfg, const char *workload, const bench_row *row)
{
    fputs("{\"workload\":", stdout);
    print_json_string(workload);
    fputs(",\"id\":", stdout);
    print_json_string(row->id);
    fputs(",\"name\":", stdout);
    print_json_string(row->name);
    fputs(",\"unit\":", stdout);
    print_json_string(row->unit);
    printf(",\"reps\":%d,\"passes\":%d,\"ours_median\":", cfg->reps,
           row->passes > 0 ? row->passes : 1);
    print_json_number(row->ours.median);
    fputs(",\"ours_min\":", stdout);
    print_json_number(row->ours.min);
    fputs(",\"ours_max\":", stdout);
    print_json_number(row->ours.max);
    fputs(",\"baseline\":", stdout);
    print_json_string(row->baseline);
    fputs(",\"baseline_median\":", stdout);
    print_json_number(row->base.median);
    fputs(",\"baseline_min\":", stdout);
    print_json_number(row->base.min);
    fputs(",\"baseline_max\":", stdout);
    print_json_number(row->base.max);
    fputs(",\"ratio\":", stdout);
    print_json_number(ratio_of(row));
    printf(",\"checksum\":%llu", (unsigned long long)row->checksum);
    if (row->note) {
        fputs(",\"note\":", stdout);
        print_json_string(row->note);
    }
    fputs("}\n", stdout);
}

void bench_begin(const bench_config *cfg, const char *workload, const char *title)
{
    if (cfg->json) return;
    printf("\n== %s: %s\n", workload, title);
    printf("%-3s %-40s %-10s %26s   %26s  %9s  %s\n", "id", "row", "unit", "ours median (min-max)",
           "baseline median (min-max)", "ours/base", "checksum");
}

void bench_report(const bench_config *cfg, const char *workload, const bench_row *row)
{
    if (cfg->json) {
        report_json(cfg, workload, row);
    } else {
        printf("%-3s %-40s %-10s %9.3f (%7.3f-%7.3f)   %9.3f (%7.3f-%7.3f)  %9.3f  %llu\n", row->id,
               row->name, row->unit, row->ours.median, row->ours.min, row->ours.max,
               row->base.median, row->base.min, row->base.max, ratio_of(row),
               (unsigned long long)row->checksum);
        if (row->note) printf("    %s\n", row->note);
    }
    fflush(stdout);
}
