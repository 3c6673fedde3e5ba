/* SPDX-License-Identifier: MIT */
/* main.c: the ecs-bench command line: `ecs-bench [--json] [--reps N] [WORKLOAD...]`.
 *
 * Parses the options, checks every workload name before running any (an unknown one is a
 * usage error, exit 2), then runs the named workloads in the order given, or all of them
 * in registry order. Exit 0 when every workload ran and passed its checks, 1 otherwise.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

#define EXIT_USAGE    2
#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)
#define REPS_RANGE    "--reps wants a count from 1 to " STRINGIFY(BENCH_MAX_REPS)

static void usage(FILE *out)
{
    fputs("usage: ecs-bench [--json] [--reps N] [WORKLOAD...]\n"
          "Runs the BENCH.md workloads, each row beside its baseline (all of them when no\n"
          "WORKLOAD is named).\n"
          "  --json     one JSON object per row on stdout (JSON Lines)\n"
          "  --reps N   repetitions per figure, each from a fresh state (default 5)\n"
          "  --help     this text\n"
          "workloads:\n",
          out);
    for (size_t i = 0; bench_workloads[i]; i++)
        fprintf(out, "  %-10s %s\n", bench_workloads[i]->name, bench_workloads[i]->summary);
}

/* Parse a repetition count into *reps. False when s is not a number in range. */
static bool parse_reps(const char *s, int *reps)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > BENCH_MAX_REPS) return false;
    *reps = (int)v;
    return true;
}

/* Complain about a bad command line and give the exit status for it. */
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "ecs-bench: %s: %s\n", what, arg);
    usage(stderr);
    return EXIT_USAGE;
}

/* The numbers are defined for -O2 with NDEBUG (BENCH.md): say so on stderr, in text and
 * JSON mode alike, when this build is anything else. */
static void warn_if_not_release(void)
{
    bool release = strcmp(BENCH_OPTIMIZATION, "2") == 0;
#ifndef NDEBUG
    release = false;
#endif
    if (!release)
        fprintf(stderr,
                "ecs-bench: warning: not a release build (built with -O%s%s; the numbers are "
                "defined at -O2 with NDEBUG): numbers are not the ones to report\n",
                BENCH_OPTIMIZATION,
#ifdef NDEBUG
                ""
#else
                ", asserts on"
#endif
        );
}

int main(int argc, char **argv)
{
    bench_config cfg = {BENCH_DEFAULT_REPS, false};
    host_mem_policy(); /* the host's heap, as ecs-host sets it (mem.h) */
    const bench_workload *chosen[64];
    size_t n_chosen = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            cfg.json = true;
        } else if (strcmp(a, "--reps") == 0) {
            if (i + 1 >= argc) return usage_error("--reps needs a value", a);
            if (!parse_reps(argv[++i], &cfg.reps)) return usage_error(REPS_RANGE, argv[i]);
        } else if (strncmp(a, "--reps=", 7) == 0) {
            if (!parse_reps(a + 7, &cfg.reps)) return usage_error(REPS_RANGE, a);
        } else if (a[0] == '-') {
            return usage_error("unknown option", a);
        } else {
            const bench_workload *w = bench_workload_find(a);
            if (!w) return usage_error("unknown workload", a);
            if (n_chosen == sizeof chosen / sizeof chosen[0])
                return usage_error("too many workloads", a);
            chosen[n_chosen++] = w;
        }
    }
    if (n_chosen == 0) /* no workload named: run them all */
        for (size_t i = 0; bench_workloads[i] && n_chosen < 64; i++)
            chosen[n_chosen++] = bench_workloads[i];

    warn_if_not_release();
    int status = 0;
    for (size_t i = 0; i < n_chosen; i++)
        if (chosen[i]->run(&cfg) != 0) status = 1;
    return status;
}
