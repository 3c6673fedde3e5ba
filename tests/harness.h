/* SPDX-License-Identifier: MIT */
/* harness.h: run a program from a test (argv, captured stdout and stderr, exit status,
 * timeout) and build throwaway plugin folders (mkdtemp 0700, copies, symlinks, files).
 * A test program linked with harness.c runs only the cases $CMOCKA_TEST_FILTER selects
 * (harness_select_tests, called for it at start). */
#ifndef TEST_HARNESS_H
#define TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What a finished program left: its output and how it ended. */
typedef struct harness_output {
    char *out, *err; /* all of stdout / stderr, NUL-terminated; never NULL after a run */
    size_t out_len, err_len;
    int exit_code;   /* 0..255 when it exited, -1 when a signal ended it, HARNESS_NOT_REAPED */
    int term_signal; /* the signal that ended it, 0 when it exited */
    bool timed_out;  /* killed with SIGKILL after the timeout */
} harness_output;

/* Exit statuses the sanitizers are given (.ci/run: ASAN_OPTIONS=exitcode=86,
 * UBSAN_OPTIONS=exitcode=87), which nothing else uses; and the status of a program that
 * was never reaped. */
#define HARNESS_ASAN_EXIT  86
#define HARNESS_UBSAN_EXIT 87
#define HARNESS_NOT_REAPED (-2)

/* Fail the running test (cmocka) when r shows a sanitizer error (one of the exit statuses
 * above, or a sanitizer's report in its stderr, printed first) or was never reaped.
 * harness_finish() calls it for every program it reaps. */
void harness_check_sanitizers(const harness_output *r);

/* A running program. Its pipes are read while waiting, so it never blocks on a full one. */
typedef struct harness_proc {
    pid_t pid; /* 0 when nothing runs */
    int fd[2]; /* read ends of its stdout and stderr pipes, -1 once closed */
    harness_output result;
} harness_proc;

/* Start argv[0] (looked up in PATH when it has no '/') with stdin from /dev/null, signals
 * at their defaults and stdout/stderr captured. Returns 0, or an errno value (ENOENT
 * when the program does not exist) with nothing started. */
int harness_start(harness_proc *p, const char *const argv[]);

/* Read p's output until `needle` appears in its stdout or stderr (true), or until the
 * program closes both or timeout_s passes (false). */
bool harness_wait_output(harness_proc *p, const char *needle, double timeout_s);

/* Read p's output until it exits, then reap it into p->result (kept; the caller frees it
 * with harness_output_free). After timeout_s it is killed with SIGKILL and timed_out set.
 * Returns 0, or -1 when p was not running. */
int harness_finish(harness_proc *p, double timeout_s);

/* SIGKILL p if it still runs, reap it and free its output: for a test's teardown. */
void harness_proc_discard(harness_proc *p);

/* Run body() in a forked child that then exits 0 (body may _exit with a status of its
 * own); the child's wait status. For code that may crash the process. */
int harness_in_child(void (*body)(void));

/* Start argv and finish it: harness_start + harness_finish. Returns 0 or an errno value
 * (then *r is empty but freeable). */
int harness_run(harness_output *r, double timeout_s, const char *const argv[]);

/* Free r's buffers and zero it. Safe on a zeroed or already freed output. */
void harness_output_free(harness_output *r);

/* A new empty folder under $TMPDIR (or /tmp) named prefix-XXXXXX, mode 0700. Returns the
 * path (malloc'd; the caller frees it) or NULL with errno set. */
char *harness_make_tmpdir(const char *prefix);

/* Remove dir and everything under it, without following symlinks. Returns 0 or -1. */
int harness_remove_tree(const char *dir);

/* Copy the file src to dst (replaced when it exists) with the given mode bits, set
 * with chmod so the umask does not matter. Returns 0, or -1 with errno set. */
int harness_copy_file(const char *src, const char *dst, mode_t mode);

/* Write text to path (created or truncated) with the given mode bits. 0 or -1. */
int harness_write_file(const char *path, const char *text, mode_t mode);

/* Make path a symlink to target. 0 or -1. */
int harness_symlink(const char *target, const char *path);

/* A malloc'd "a/b"; NULL when out of memory. */
char *harness_join(const char *a, const char *b);

/* Read a whole file into a malloc'd NUL-terminated buffer; NULL on error. */
char *harness_read_file(const char *path, size_t *len);

/* Run only the test cases whose names match $CMOCKA_TEST_FILTER (cmocka's filter: shell
 * wildcards * and ?), when it is set: `CMOCKA_TEST_FILTER='Reload_*cycle*'
 * build/tests/test_reload`. Every program linked with harness.c calls it at start (a
 * constructor); a call before cmocka_run_group_tests does no harm. */
void harness_select_tests(void);

#endif
