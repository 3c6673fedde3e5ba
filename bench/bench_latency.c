/* SPDX-License-Identifier: MIT */
/* bench_latency.c: workload "latency", BENCH.md R1 (build end -> new code running): how
 * long after a build of a plugin finishes its new code runs in a real `ecs-host --watch`,
 * with the default options (quiet period, 60 fps), beside the same with the quiet period
 * of 200 ms that was the default before (the baseline).
 *
 * The built ecs-host runs on a temporary folder holding rl.so (the hot-reload test plugin,
 * tests/plugins_reload/reloadee.c, which logs "rl V first update" in the first update of
 * each version). Each repetition writes the other version (1 or 2) the way a build does:
 *   cp      the bytes written over the same file (one open, one close);
 *   lld     written to a temporary file beside it, renamed over it;
 *   GNU ld  `cc -shared -fuse-ld=bfd` linking a prebuilt object (ld deletes the output,
 *           creates it and writes it in place).
 * and times from the end of that (the close, the rename, the linker's exit) to the log
 * line of the new version's first update read from the host's stderr. The checksum sums
 * the versions seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#if !defined(ECS_HOST_PATH) || !defined(BENCH_RL_V1_SO) || !defined(BENCH_RL_V2_SO) ||             \
    !defined(RELOADEE_SOURCE) || !defined(SDK_DIR)
#error "bench/meson.build defines ECS_HOST_PATH, BENCH_RL_V1_SO, BENCH_RL_V2_SO, ..."
#endif

extern char **environ;

#define WAIT_NS 10000000000ull /* a new version that does not run within 10 s: a failure */

typedef struct host_run {
    pid_t pid;
    int err; /* the host's stderr, non-blocking */
    char buf[1 << 16];
    size_t len; /* unread text in buf */
} host_run;

static int spawn_wait(const char *const argv[])
{
    pid_t pid;
    int status = 0;
    if (posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *)argv, environ) != 0) return -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int start_host(host_run *h, const char *dir, const char *quiet)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    const char *argv[] = {ECS_HOST_PATH,        "--watch",          quiet ? "--reload-quiet" : dir,
                          quiet ? quiet : NULL, quiet ? dir : NULL, NULL};
    int rc = posix_spawn(&h->pid, ECS_HOST_PATH, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    h->err = fds[0];
    h->len = 0;
    fcntl(h->err, F_SETFL, O_NONBLOCK);
    return rc == 0 ? 0 : -1;
}

static void stop_host(host_run *h)
{
    kill(h->pid, SIGTERM);
    waitpid(h->pid, NULL, 0);
    close(h->err);
}

/* Read the host's stderr until a line holds needle: the time it was read, 0 on timeout. */
static uint64_t wait_for(host_run *h, const char *needle)
{
    uint64_t until = bench_now_ns() + WAIT_NS;
    for (;;) {
        h->buf[h->len] = '\0';
        char *hit = strstr(h->buf, needle);
        uint64_t now = bench_now_ns();
        if (hit) {
            char *end = strchr(hit, '\n');
            size_t used = end ? (size_t)(end + 1 - h->buf) : h->len;
            memmove(h->buf, h->buf + used, h->len - used);
            h->len -= used;
            return now;
        }
        char *last = strrchr(h->buf, '\n'); /* keep only the unfinished line */
        if (last) {
            size_t used = (size_t)(last + 1 - h->buf);
            memmove(h->buf, h->buf + used, h->len - used);
            h->len -= used;
        }
        if (now > until) return 0;
        struct pollfd p = {h->err, POLLIN, 0};
        poll(&p, 1, 100);
        ssize_t n = read(h->err, h->buf + h->len, sizeof h->buf - 1 - h->len);
        if (n == 0) return 0; /* the host is gone */
        if (n > 0) h->len += (size_t)n;
    }
}

static int copy_file(const char *src, const char *dst, int flags)
{
    int in = open(src, O_RDONLY | O_CLOEXEC), out = open(dst, O_WRONLY | O_CLOEXEC | flags, 0755);
    char buf[1 << 16];
    ssize_t n = 0;
    bool ok = in >= 0 && out >= 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) ok = write(out, buf, (size_t)n) == n;
    if (in >= 0) close(in);
    if (out >= 0 && close(out) != 0) ok = false;
    return ok && n == 0 ? 0 : -1;
}

typedef enum method { BY_CP, BY_LLD, BY_GNU_LD, METHODS } method;

static const char *const method_names[METHODS] = {
    "build end -> new code running, cp over the file",
    "build end -> new code running, lld (temporary file, rename)",
    "build end -> new code running, GNU ld (cc -fuse-ld=bfd)",
};

typedef struct scratch {
    char dir[256], plugins[300], so[320], tmp[320], obj[2][320];
} scratch;

/* Write version v (1 or 2) into the folder by method m: 0, or -1 on failure. */
static int build(const scratch *s, method m, int v)
{
    const char *src = v == 1 ? BENCH_RL_V1_SO : BENCH_RL_V2_SO;
    if (m == BY_CP) return copy_file(src, s->so, O_CREAT | O_TRUNC);
    if (m == BY_LLD) {
        if (copy_file(src, s->tmp, O_CREAT | O_TRUNC) != 0) return -1;
        return rename(s->tmp, s->so);
    }
    const char *argv[] = {"cc", "-shared", "-fuse-ld=bfd", "-o", s->so, s->obj[v - 1], NULL};
    return spawn_wait(argv) == 0 ? 0 : -1;
}

/* Compile reloadee.c twice (versions 1 and 2) to objects for the GNU ld rows. */
static int compile_objects(scratch *s)
{
    for (int v = 1; v <= 2; v++) {
        char version[32], step[32];
        snprintf(s->obj[v - 1], sizeof s->obj[v - 1], "%s/rl_v%d.o", s->dir, v);
        snprintf(version, sizeof version, "-DRL_VERSION=\"%d\"", v);
        snprintf(step, sizeof step, "-DRL_STEP=%d", v == 1 ? 1 : 10);
        const char *argv[] = {"cc", "-c",          "-O2",   "-fPIC", "-fvisibility=hidden",
                              "-I", SDK_DIR,       version, step,    RELOADEE_SOURCE,
                              "-o", s->obj[v - 1], NULL};
        if (spawn_wait(argv) != 0) return -1;
    }
    return 0;
}

/* One repetition per sample: the ms from build end to the new version's first update. */
static int measure(const scratch *s, method m, const char *quiet, double *out, int reps,
                   uint64_t *checksum)
{
    host_run h;
    if (build(s, m, 1) != 0 || start_host(&h, s->plugins, quiet) != 0) return -1;
    int v = 1, rc = 0;
    if (!wait_for(&h, "rl 1 first update")) rc = -1;
    for (int r = 0; rc == 0 && r < reps; r++) {
        v = 3 - v;
        char needle[64];
        snprintf(needle, sizeof needle, "rl %d first update", v);
        uint64_t t0 = bench_now_ns();
        if (build(s, m, v) != 0) {
            rc = -1;
            break;
        }
        uint64_t end = bench_now_ns(), seen = wait_for(&h, needle);
        (void)t0;
        if (!seen) {
            fprintf(stderr, "latency: version %d did not run within 10 s\n", v);
            rc = -1;
            break;
        }
        out[r] = (double)(seen - end) / 1e6;
        *checksum += (uint64_t)v;
        usleep(100000); /* let the old copy be deleted and the watcher settle */
    }
    stop_host(&h);
    return rc;
}

static int run_latency(const bench_config *cfg)
{
    static double ours[BENCH_MAX_REPS], base[BENCH_MAX_REPS];
    scratch s;
    snprintf(s.dir, sizeof s.dir, "/tmp/ecs-bench-latency-XXXXXX");
    if (!mkdtemp(s.dir)) return fprintf(stderr, "latency: mkdtemp: %s\n", strerror(errno)), 1;
    snprintf(s.plugins, sizeof s.plugins, "%s/plugins", s.dir);
    snprintf(s.so, sizeof s.so, "%s/rl.so", s.plugins);
    snprintf(s.tmp, sizeof s.tmp, "%s/.rl.so.tmp", s.plugins);
    int rc = mkdir(s.plugins, 0700) == 0 && compile_objects(&s) == 0 ? 0 : 1;
    if (rc) fprintf(stderr, "latency: cannot set up %s (cc needed for the GNU ld row)\n", s.dir);
    bench_begin(cfg, "latency", "R1: from the end of a build to the new code running");
    int reps = cfg->reps < 10 ? 10 : cfg->reps;
    for (int m = 0; rc == 0 && m < METHODS; m++) {
        uint64_t checksum = 0;
        if (measure(&s, (method)m, NULL, ours, reps, &checksum) != 0 ||
            measure(&s, (method)m, "200", base, reps, &checksum) != 0) {
            rc = 1;
            break;
        }
        bench_row row = {"R1",
                         method_names[m],
                         "ms",
                         "quiet 200 ms",
                         1,
                         bench_stats_of(ours, (size_t)reps),
                         bench_stats_of(base, (size_t)reps),
                         checksum,
                         m == 0 ? "the real ecs-host --watch at 60 fps, default options; the "
                                  "baseline with --reload-quiet 200 (the old default)"
                                : NULL};
        bench_report(cfg, "latency", &row);
    }
    const char *rm[] = {"rm", "-rf", s.dir, NULL};
    spawn_wait(rm);
    return rc;
}

const bench_workload bench_latency_workload = {
    "latency", "R1: build end -> new code running in a real ecs-host --watch", run_latency};
