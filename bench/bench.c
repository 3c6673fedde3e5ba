/* bench.c: the shared pieces of ecs-bench: timer, statistics, the table/JSON printer and
 * the registry of workloads (see bench.h).
 *
 * Text mode prints one aligned line per row under its workload's title; JSON mode prints
 * nothing but one object per row, each on its own line (JSON Lines), so stdout can be fed
 * to `jq -s` as it is.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const bench_workload *const bench_workloads[] = {
    &bench_entities_workload,
    &bench_dispatch_workload,
    &bench_mesh_workload,
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
