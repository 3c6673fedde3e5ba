/* SPDX-License-Identifier: MIT */
/* harness.c: running programs with captured output and a timeout (posix_spawnp, poll),
 * and throwaway folders for plugins (harness.h). Used by the integration tests. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define OUTPUT_LIMIT (32u << 20) /* bytes kept per stream; a runaway program is cut */

/* Every test program linked with this file runs only the cases $CMOCKA_TEST_FILTER
 * selects, without a call of its own (harness.h). */
__attribute__((constructor)) static void select_cases(void)
{
    harness_select_tests();
}

/* ---- time ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Milliseconds left until deadline, for poll(): 0 when it passed. */
static int ms_left(double deadline)
{
    double left = deadline - now_s();
    return left <= 0 ? 0 : left > 3600 ? 3600000 : (int)(left * 1000) + 1;
}

/* ---- output buffers ---- */

static int append(char **buf, size_t *len, const char *data, size_t n)
{
    if (*len + n > OUTPUT_LIMIT) n = OUTPUT_LIMIT - *len;
    char *bigger = realloc(*buf, *len + n + 1);
    if (!bigger) return -1;
    memcpy(bigger + *len, data, n);
    *len += n;
    bigger[*len] = '\0';
    *buf = bigger;
    return 0;
}

void harness_output_free(harness_output *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

static void close_fd(harness_proc *p, int i)
{
    if (p->fd[i] >= 0) close(p->fd[i]);
    p->fd[i] = -1;
}

/* Wait up to timeout_ms for output and read what is there. Returns the number of pipes
 * still open. */
static int read_some(harness_proc *p, int timeout_ms)
{
    struct pollfd pf[2];
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (p->fd[i] >= 0) pf[n++] = (struct pollfd){p->fd[i], POLLIN, 0};
    if (n == 0) return 0;
    if (poll(pf, (nfds_t)n, timeout_ms) <= 0) return n;
    for (int k = 0; k < n; k++) {
        if (!pf[k].revents) continue;
        int i = pf[k].fd == p->fd[0] ? 0 : 1;
        char chunk[8192];
        ssize_t got = read(p->fd[i], chunk, sizeof chunk);
        if (got > 0) {
            harness_output *r = &p->result;
            if (i == 0)
                append(&r->out, &r->out_len, chunk, (size_t)got);
            else
                append(&r->err, &r->err_len, chunk, (size_t)got);
        } else if (got == 0 || errno != EINTR) {
            close_fd(p, i);
        }
    }
    return (p->fd[0] >= 0) + (p->fd[1] >= 0);
}

/* ---- processes ---- */

static void close_pipe(int fds[2])
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0) close(fds[i]);
}

static int spawn(pid_t *pid, const char *const argv[], int out_fd, int err_fd)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, defaults;
    sigemptyset(&none);
    sigfillset(&defaults); /* every catchable signal back to its default action */
    sigdelset(&defaults, SIGKILL);
    sigdelset(&defaults, SIGSTOP);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &defaults);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawnp(pid, argv[0], &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc;
}

int harness_start(harness_proc *p, const char *const argv[])
{
    memset(p, 0, sizeof *p);
    p->fd[0] = p->fd[1] = -1;
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        int e = errno;
        close_pipe(out);
        close_pipe(err);
        return e;
    }
    p->result.out = calloc(1, 1);
    p->result.err = calloc(1, 1);
    pid_t pid = 0;
    int rc = !p->result.out || !p->result.err ? ENOMEM : spawn(&pid, argv, out[1], err[1]);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
        close(out[0]);
        close(err[0]);
        harness_output_free(&p->result);
        return rc;
    }
    p->pid = pid;
    p->fd[0] = out[0];
    p->fd[1] = err[0];
    return 0;
}

bool harness_wait_output(harness_proc *p, const char *needle, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    for (;;) {
        if (p->result.out && strstr(p->result.out, needle)) return true;
        if (p->result.err && strstr(p->result.err, needle)) return true;
        if (now_s() >= deadline || read_some(p, ms_left(deadline)) == 0) break;
    }
    return (p->result.out && strstr(p->result.out, needle)) ||
           (p->result.err && strstr(p->result.err, needle));
}

static void store_status(harness_output *r, int status)
{
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int harness_finish(harness_proc *p, double timeout_s)
{
    if (p->pid <= 0) return -1;
    double deadline = now_s() + timeout_s;
    while (now_s() < deadline && read_some(p, ms_left(deadline)) > 0) {
    }
    int status = 0;
    pid_t got = 0;
    while ((got = waitpid(p->pid, &status, WNOHANG)) == 0 && now_s() < deadline) {
        struct timespec pause = {0, 2000000}; /* 2 ms */
        nanosleep(&pause, NULL);
    }
    if (got == 0) { /* still running at the deadline */
        kill(p->pid, SIGKILL);
        p->result.timed_out = true;
        while ((got = waitpid(p->pid, &status, 0)) < 0 && errno == EINTR) {
        }
    }
    for (int i = 0; i < 64 && read_some(p, 0) > 0; i++) { /* what is left, but an orphan */
    }                                                     /* may hold a pipe: no waiting */
    close_fd(p, 0);
    close_fd(p, 1);
    if (got == p->pid)
        store_status(&p->result, status);
    else /* never collected: no status to read, and 0 would pass for success */
        p->result.exit_code = HARNESS_NOT_REAPED;
    p->pid = 0;
    harness_check_sanitizers(&p->result);
    return 0;
}

/* The sanitizers' marks in a program's stderr: a memory or undefined-behaviour error. */
static const char *const sanitizer_marks[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                              "runtime error:", "Sanitizer:", NULL};

void harness_check_sanitizers(const harness_output *r)
{
    const char *mark = NULL;
    for (int k = 0; sanitizer_marks[k] && r->err && !mark; k++)
        if (strstr(r->err, sanitizer_marks[k])) mark = sanitizer_marks[k];
    if (!mark && r->exit_code != HARNESS_ASAN_EXIT && r->exit_code != HARNESS_UBSAN_EXIT &&
        r->exit_code != HARNESS_NOT_REAPED)
        return;
    fprintf(stderr, "%s\n", r->err ? r->err : "");
    if (r->exit_code == HARNESS_NOT_REAPED)
        fail_msg("the program was never reaped: its exit status is unknown");
    fail_msg("a sanitizer reported an error in the program (exit %d, '%s' in its stderr above)",
             r->exit_code, mark ? mark : "-");
}

void harness_proc_discard(harness_proc *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        harness_finish(p, 5.0);
    }
    close_fd(p, 0);
    close_fd(p, 1);
    harness_output_free(&p->result);
}

int harness_run(harness_output *r, double timeout_s, const char *const argv[])
{
    harness_proc p;
    memset(r, 0, sizeof *r);
    int rc = harness_start(&p, argv);
    if (rc != 0) return rc;
    harness_finish(&p, timeout_s);
    *r = p.result;
    return 0;
}

/* ---- files and folders ---- */

char *harness_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/%s", a, b);
    return s;
}

char *harness_make_tmpdir(const char *prefix)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    size_t n = strlen(base) + strlen(prefix) + 9;
    char *path = malloc(n);
    if (!path) return NULL;
    snprintf(path, n, "%s/%s-XXXXXX", base, prefix);
    if (!mkdtemp(path) || chmod(path, 0700) != 0) {
        int e = errno;
        free(path);
        errno = e;
        return NULL;
    }
    return path;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    return remove(path);
}

int harness_remove_tree(const char *dir)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int harness_copy_file(const char *src, const char *dst, mode_t mode)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = out < 0 ? -1 : 0;
    char buf[65536];
    ssize_t n;
    while (rc == 0 && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || write(out, buf, (size_t)n) != n) rc = -1;
    }
    if (rc == 0 && fchmod(out, mode) != 0) rc = -1;
    int e = errno;
    close(in);
    if (out >= 0 && close(out) != 0) rc = -1;
    errno = e;
    return rc;
}

int harness_write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    size_t len = strlen(text);
    int rc = write(fd, text, len) == (ssize_t)len && fchmod(fd, mode) == 0 ? 0 : -1;
    if (close(fd) != 0) rc = -1;
    return rc;
}

int harness_symlink(const char *target, const char *path)
{
    return symlink(target, path);
}

char *harness_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0;
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (append(&buf, &n, chunk, got) != 0) {
            free(buf);
            fclose(f);
            return NULL;
        }
    }
    if (!buf) buf = calloc(1, 1);
    fclose(f);
    if (len) *len = n;
    return buf;
}

int harness_in_child(void (*body)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

void harness_select_tests(void)
{
    const char *only = getenv("CMOCKA_TEST_FILTER");
    if (only && *only) cmocka_set_test_filter(only);
}
