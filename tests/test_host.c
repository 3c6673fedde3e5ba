/* SPDX-License-Identifier: MIT */
/* test_host.c: integration tests of the ecs-host binary: each runs the real program on a
 * fresh folder of chosen test plugins (tests/plugins/) and checks stdout, stderr and exit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ecs_plugin.h"
#include "harness.h"

#if !defined(ECS_HOST_PATH) || !defined(TEST_PLUGIN_DIR) || !defined(SDK_DIR) ||                   \
    !defined(SOURCE_ROOT) || !defined(ECS_DEFAULT_PLUGIN_DIR)
#error "tests/meson.build defines ECS_HOST_PATH, TEST_PLUGIN_DIR, SDK_DIR, SOURCE_ROOT, ..."
#endif

#define RUN_TIMEOUT    20.0 /* seconds for one run; a normal run takes milliseconds */
#define SIGNAL_TIMEOUT 10.0 /* seconds to wait for a line, or for exit after a signal */
#define MAX_ARGS       32

/* ---- Fixture: a temp root (0700) holding the plugin folder `dir` and scratch files ---- */

typedef struct fixture {
    char *root;         /* removed with everything under it at teardown */
    char *dir;          /* root/plugins: the PLUGIN_DIR given to ecs-host */
    char cmd[2048];     /* the last command line, for failure messages */
    harness_output run; /* the last finished run */
    harness_proc proc;  /* a run in the background (signal tests) */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->proc.fd[0] = f->proc.fd[1] = -1;
    f->root = harness_make_tmpdir("ecs-host-test");
    f->dir = f->root ? harness_join(f->root, "plugins") : NULL;
    if (!f->dir || mkdir(f->dir, 0700) != 0 || chmod(f->dir, 0700) != 0) {
        print_error("cannot make a temporary plugin folder: %s\n", strerror(errno));
        if (f->root) harness_remove_tree(f->root);
        free(f->root);
        free(f->dir);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    harness_proc_discard(&f->proc);
    harness_output_free(&f->run);
    if (harness_remove_tree(f->root) != 0)
        print_error("could not remove %s: %s\n", f->root, strerror(errno));
    free(f->root);
    free(f->dir);
    free(f);
    return 0;
}

/* ---- Building the plugin folder ---- */

/* Copy the built test plugin NAME.so into the folder (as `as`, or NAME.so), mode 0755. */
static void add_plugin_as(fixture *f, const char *name, const char *as)
{
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/%s.so", TEST_PLUGIN_DIR, name);
    if (as)
        snprintf(dst, sizeof dst, "%s/%s", f->dir, as);
    else
        snprintf(dst, sizeof dst, "%s/%s.so", f->dir, name);
    if (harness_copy_file(src, dst, 0755) != 0) {
        print_error("cannot copy %s to %s: %s\n", src, dst, strerror(errno));
        fail();
    }
}

/* Copy each named plugin (NULL-terminated list) into the folder. */
static void add_plugins(fixture *f, const char *const *names)
{
    for (; *names; names++) add_plugin_as(f, *names, NULL);
}

#define ADD(f, ...) add_plugins(f, (const char *const[]){__VA_ARGS__, NULL})

/* Write text into file `name` of the plugin folder, mode 0644. */
static void write_in_dir(fixture *f, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    if (harness_write_file(path, text, 0644) != 0) {
        print_error("cannot write %s: %s\n", path, strerror(errno));
        fail();
    }
}

static void chmod_in_dir(fixture *f, const char *name, mode_t mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", f->dir, *name ? "/" : "", name);
    if (chmod(path, mode) != 0) {
        print_error("chmod %s: %s\n", path, strerror(errno));
        fail();
    }
}

/* ---- Running ecs-host ---- */

/* Run argv[0..] (NULL-terminated) and keep the result in f->run. */
static void run_argv(fixture *f, const char *const *argv, double timeout)
{
    size_t used = 0;
    f->cmd[0] = '\0';
    for (const char *const *a = argv; *a && used < sizeof f->cmd; a++)
        used +=
            (size_t)snprintf(f->cmd + used, sizeof f->cmd - used, "%s%s", a == argv ? "" : " ", *a);
    harness_output_free(&f->run);
    int rc = harness_run(&f->run, timeout, argv);
    if (rc != 0) {
        print_error("cannot run %s: %s\n", f->cmd, strerror(rc));
        fail();
    }
    if (f->run.timed_out) {
        fprintf(stderr, "%s: killed after %.0f s\nstdout:\n%s\nstderr:\n%s\n", f->cmd, timeout,
                f->run.out, f->run.err);
        fail();
    }
}

/* Run ecs-host with args; with in_dir, "--fps 0" goes first and the plugin folder last. */
static void host_run(fixture *f, bool in_dir, const char *const *args)
{
    const char *argv[MAX_ARGS];
    size_t n = 0;
    argv[n++] = ECS_HOST_PATH;
    if (in_dir) argv[n++] = "--fps", argv[n++] = "0";
    for (; *args && n < MAX_ARGS - 2; args++) argv[n++] = *args;
    if (in_dir) argv[n++] = f->dir;
    argv[n] = NULL;
    run_argv(f, argv, RUN_TIMEOUT);
}

/* HOST(f, "--frames", "3"): ecs-host --fps 0 --frames 3 DIR. */
#define HOST(f, ...) host_run(f, true, (const char *const[]){__VA_ARGS__, NULL})
/* HOST_RAW(f, "--help"): ecs-host --help, nothing added. */
#define HOST_RAW(f, ...) host_run(f, false, (const char *const[]){__VA_ARGS__, NULL})

/* ---- Checking the output ---- */

/* Print the last run to stderr (whole: cmocka's print_error cuts long messages). */
static void dump(const fixture *f)
{
    fprintf(stderr,
            "command: %s\nexit code %d, signal %d\n--- stdout ---\n%s--- stderr ---\n%s---\n",
            f->cmd, f->run.exit_code, f->run.term_signal, f->run.out ? f->run.out : "",
            f->run.err ? f->run.err : "");
}

/* The first line of text holding both a and b (b may be NULL), or NULL. */
static const char *line_with(const char *text, const char *a, const char *b)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[4096];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        if (strstr(buf, a) && (!b || strstr(buf, b))) return line;
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

static int count_lines(const char *text, const char *a, const char *b)
{
    int n = 0;
    for (const char *l = line_with(text, a, b); l; l = line_with(strchr(l, '\n'), a, b)) n++;
    return n;
}

static void check_exit(const fixture *f, int code, const char *file, int line)
{
    if (f->run.exit_code == code && f->run.term_signal == 0) return;
    print_error("expected exit code %d\n", code);
    dump(f);
    _fail(file, line);
}

/* Fail unless a line of the stream has both a and b (b may be NULL); a needle with a
 * newline in it (b NULL) is looked for in the whole text. */
static void check_line(const fixture *f, bool in_out, const char *a, const char *b,
                       const char *file, int line)
{
    const char *text = in_out ? f->run.out : f->run.err;
    if (!b && strchr(a, '\n') ? strstr(text, a) != NULL : line_with(text, a, b) != NULL) return;
    fprintf(stderr, "no line of %s holds '%s'%s%s%s\n", in_out ? "stdout" : "stderr", a,
            b ? " and '" : "", b ? b : "", b ? "'" : "");
    dump(f);
    _fail(file, line);
}

static void check_absent(const fixture *f, const char *needle, const char *file, int line)
{
    if (!strstr(f->run.out, needle) && !strstr(f->run.err, needle)) return;
    fprintf(stderr, "'%s' should not appear\n", needle);
    dump(f);
    _fail(file, line);
}

/* Fail unless the needles (NULL-terminated) appear in stderr in this order. */
static void check_order(const fixture *f, const char *const *needles, const char *file, int line)
{
    const char *at = f->run.err;
    for (const char *const *n = needles; *n; n++) {
        const char *found = strstr(at, *n);
        if (!found) {
            print_error("'%s' missing from stderr after '%s' (or out of order)\n", *n,
                        n == needles ? "the start" : n[-1]);
            dump(f);
            _fail(file, line);
        }
        at = found + strlen(*n);
    }
}

#define EXPECT_EXIT(f, code)     check_exit(f, code, __FILE__, __LINE__)
#define EXPECT_ERR(f, a)         check_line(f, false, a, NULL, __FILE__, __LINE__)
#define EXPECT_ERR_LINE(f, a, b) check_line(f, false, a, b, __FILE__, __LINE__)
#define EXPECT_OUT(f, a)         check_line(f, true, a, NULL, __FILE__, __LINE__)
#define EXPECT_ABSENT(f, a)      check_absent(f, a, __FILE__, __LINE__)
#define EXPECT_ORDER(f, ...)                                                                       \
    check_order(f, (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)

/* Fail unless the plugin folder's file `file` has exactly one "skipped" line naming the
 * reason: "DIR/FILE: skipped: ...reason...". */
static void check_skipped(const fixture *f, const char *file_name, const char *reason,
                          const char *file, int line)
{
    char tag[4200], path[4200];
    snprintf(tag, sizeof tag, "%s/%s: skipped: ", f->dir, file_name);
    snprintf(path, sizeof path, "%s/%s", f->dir, file_name);
    check_line(f, false, tag, reason, file, line);
    int n = count_lines(f->run.err, path, NULL); /* every line naming the file, any wording */
    if (n == 1) return;
    print_error("%d lines name '%s', expected one (its skip)\n", n, path);
    dump(f);
    _fail(file, line);
}

#define EXPECT_SKIPPED(f, name, reason) check_skipped(f, name, reason, __FILE__, __LINE__)

/* ---- Good plugins ---- */

static void Host_runs_counter_and_user_for_n_frames(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user");
    HOST(f, "--frames", "5");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "loaded counter 1.0.0 from counter.so (1 managers, 1 APIs)");
    EXPECT_ERR(f, "loaded user 1.0.0 from user.so (1 managers, 0 APIs)");
    EXPECT_ERR(f, "[info] counter: counter saw 5 frames");
    EXPECT_ERR(f, "[info] user: user read count 5 after 5 updates"); /* counter runs first */
    EXPECT_ORDER(f, "user read count", "counter saw"); /* unload in reverse load order */
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "leaked");
}

static void Host_frames_0_loads_and_unloads_without_updating(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user");
    HOST(f, "--frames", "0");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "loaded user");
    EXPECT_ERR(f, "counter saw 0 frames");
    EXPECT_ERR(f, "user read count 0 after 0 updates");
}

static void Host_runs_with_empty_plugin_folder(void **state)
{
    fixture *f = *state;
    HOST(f, "--frames", "3");
    EXPECT_EXIT(f, 0);
    EXPECT_ABSENT(f, "[error]");
}

static void Host_loads_symlinked_plugins(void **state)
{
    fixture *f = *state;
    char target[4096], link[4096];
    struct stat st;
    snprintf(target, sizeof target, "%s/counter.so", TEST_PLUGIN_DIR);
    snprintf(link, sizeof link, "%s/counter.so", f->dir);
    assert_int_equal(stat(target, &st), 0);
    if (st.st_mode & (S_IWGRP | S_IWOTH)) { /* the host would rightly refuse it */
        print_message("# %s is group/world-writable (umask of the build): skipped\n", target);
        skip();
    }
    assert_int_equal(harness_symlink(target, link), 0);
    HOST(f, "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "counter saw 2 frames");
}

static void Host_loads_plugins_one_subfolder_down(void **state)
{
    fixture *f = *state;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/more", f->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    chmod_in_dir(f, "more", 0700);
    add_plugin_as(f, "counter", "more/counter.so");
    ADD(f, "user");
    HOST(f, "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "loaded counter 1.0.0 from more/counter.so");
    EXPECT_ERR(f, "user read count 2 after 2 updates");
}

/* ---- Bad plugins: one line naming the file and the reason; the others run ---- */

/* Run the folder (counter, user and what the test added) without and with --strict:
 * counter and user must run all frames both times; exit 0, then 1 with --strict. */
static void check_others_run(fixture *f, int bad, const char *file, int line)
{
    char strict[64];
    snprintf(strict, sizeof strict, "--strict: %d bad plugin(s)", bad);
    HOST(f, "--frames", "4");
    check_exit(f, 0, file, line);
    check_line(f, false, "counter saw 4 frames", NULL, file, line);
    check_line(f, false, "user read count 4 after 4 updates", NULL, file, line);
    HOST(f, "--strict", "--frames", "4");
    check_exit(f, 1, file, line);
    check_line(f, false, strict, NULL, file, line);
    check_line(f, false, "counter saw 4 frames", NULL, file, line);
}

#define EXPECT_OTHERS_RUN(f, bad) check_others_run(f, bad, __FILE__, __LINE__)

static void Host_skips_file_that_is_not_a_shared_object(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user");
    write_in_dir(f, "bad_notelf.so", "this is text, not a shared object\n");
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "bad_notelf.so", "not a shared object (no ELF header)");
}

static void Host_skips_shared_object_without_entry_symbol(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user", "noentry");
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "noentry.so", "no entry symbol 'ecs_plugin_entry'");
    EXPECT_ABSENT(f, "load() was called");
}

static void Host_skips_plugin_built_for_other_abi_major(void **state)
{
    fixture *f = *state;
    char why[128];
    snprintf(why, sizeof why, "built for ABI %d.%d, this host speaks %d.%d", ECS_ABI_MAJOR + 1,
             ECS_ABI_MINOR, ECS_ABI_MAJOR, ECS_ABI_MINOR);
    ADD(f, "counter", "user", "badabi_major");
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "badabi_major.so", why);
    EXPECT_ABSENT(f, "load() was called");
}

static void Host_skips_plugin_built_for_newer_abi_minor(void **state)
{
    fixture *f = *state;
    char why[128];
    snprintf(why, sizeof why, "built for ABI %d.%d, newer than this host's %d.%d", ECS_ABI_MAJOR,
             ECS_ABI_MINOR + 1, ECS_ABI_MAJOR, ECS_ABI_MINOR);
    ADD(f, "counter", "user", "badabi_minor");
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "badabi_minor.so", why);
    EXPECT_ABSENT(f, "load() was called");
}

static void Host_skips_plugin_with_too_small_struct_size(void **state)
{
    fixture *f = *state;
    char why[128];
    snprintf(why, sizeof why, "ecs_plugin_desc.struct_size is %zu, at least %zu expected",
             offsetof(ecs_plugin_desc, unload),
             offsetof(ecs_plugin_desc, unload) + sizeof(void *)); /* ABI 1.0's description */
    ADD(f, "counter", "user", "badabi_size");
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "badabi_size.so", why);
    EXPECT_ABSENT(f, "load() was called");
}

static void Host_skips_plugin_whose_load_fails_and_drops_its_registrations(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user", "loadfail");
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "loadfail.so", "load() failed: plugin failure");
    EXPECT_ERR(f, "[warn] loadfail: leaked 32 bytes in 1 allocations after its failed load");
    EXPECT_ERR(f, "load loadfail");               /* its load() did run */
    EXPECT_ABSENT(f, "first update of loadfail"); /* but its managers never update */
    EXPECT_ABSENT(f, "unload loadfail");          /* and a failed load is not unloaded */
    /* its API, system and collection went with it: another plugin finds no API, no system
     * runs and --stats has no row of it */
    ADD(f, "finder");
    HOST(f, "--stats", "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "[info] finder: no test.loadfail");
    EXPECT_ABSENT(f, "found test.loadfail");
    EXPECT_ABSENT(f, "first run of loadfail.sys");
    if (strstr(f->run.out, "loadfail")) {
        dump(f);
        fail_msg("--stats shows a row of the plugin whose load failed");
    }
}

/* A refused load() leaves no trace: the entities it created are destroyed, whether it
 * failed or returned ECS_OK after a refused registration. unload() runs only for the
 * second (its load() said it succeeded: its state is freed there); a load that stands
 * keeps its entities. */
static void Host_refused_load_destroys_the_entities_it_created(void **state)
{
    fixture *f = *state;
    ADD(f, "dupmgr_a", "mkents_refused", "mkents_fail", "mkents_ok");
    HOST(f, "--stats", "-v", "--frames", "1");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "mkents_refused created 3 entities");
    EXPECT_ERR(f, "mkents_fail created 4 entities");
    EXPECT_ERR(f, "mkents_ok created 2 entities");
    EXPECT_SKIPPED(f, "mkents_refused.so", "load() went on after a refused registration");
    EXPECT_SKIPPED(f, "mkents_fail.so", "load() failed: plugin failure");
    EXPECT_ERR(f, "mkents_refused: destroyed the 3 entities its refused load() created");
    EXPECT_ERR(f, "mkents_fail: destroyed the 4 entities its refused load() created");
    EXPECT_ERR(f, "unload mkents_refused");
    EXPECT_ABSENT(f, "unload mkents_fail");
    assert_non_null(strstr(f->run.out, "entities alive: 2\n"));
}

/* The host table is for the thread that runs the frames: calls from a plugin's own thread
 * are refused (ECS_ERR_WRONG_TIME, NULL, false; a log call says nothing) and reported in
 * one line per frame boundary, with the count and the first call. */
static void Host_calls_from_another_thread_are_refused_and_reported(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "threaded");
    HOST(f, "--stats", "--frames", "3");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "[info] threaded: entity_create from a thread: not allowed at this point; "
                  "alloc: NULL");
    EXPECT_ERR(f, "[error] threaded: 3 calls to the host from a thread other than the main "
                  "thread or from a job refused (the first: entity_create): plugins call the "
                  "host from the thread that runs the frames");
    EXPECT_ERR(f, "[info] threaded: entity_alive from a thread: false");
    EXPECT_ERR(f, "[error] threaded: 1 call to the host from a thread other than the main "
                  "thread or from a job refused (the first: entity_create)");
    EXPECT_ABSENT(f, "this line must not appear");
    EXPECT_ERR(f, "counter saw 3 frames");
    assert_non_null(strstr(f->run.out, "entities alive: 0\n"));
}

/* parallel_for from an update: the same sum with 1 thread, with 2 and with 64 (more
 * threads than this machine's CPUs), every item counted once; --stats names each thread. */
static void Host_jobs_give_one_threads_result_at_any_thread_count(void **state)
{
    fixture *f = *state;
    ADD(f, "jobber");
    static const char *const counts[] = {"1", "2", "64"};
    for (int i = 0; i < 3; i++) {
        HOST(f, "--stats", "--frames", "2", "--threads", counts[i]);
        EXPECT_EXIT(f, 0);
        char want[160];
        snprintf(want, sizeof want,
                 "[info] jobber: update 0: parallel_for: ok; threads %s; items 1000000 of "
                 "1000000; sum 499500000\n",
                 counts[i]);
        EXPECT_ERR(f, want);
        snprintf(want, sizeof want, "jobs: %s thread%s; busy in jobs since start: main ", counts[i],
                 i ? "s" : "");
        assert_non_null(strstr(f->run.out, want));
        if (i) assert_non_null(strstr(f->run.out, i == 1 ? ", ecs-job-1 " : ", ecs-job-63 "));
        harness_output_free(&f->run);
    }
}

/* Inside a job only the calls tagged [job] pass: entity_create is refused in every chunk
 * (on the main thread too) and reported once at the frame boundary; entity_alive answers;
 * a nested parallel_for runs inline. Nothing was made. */
static void Host_jobs_refuse_host_calls_not_tagged_job(void **state)
{
    fixture *f = *state;
    ADD(f, "jobcall");
    HOST(f, "--stats", "--frames", "2", "--threads", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "[info] jobcall: update 0: parallel_for: ok; threads 2; items 64 of 64");
    EXPECT_ERR(f, "[info] jobcall: in jobs: entity_create refused 64, entity_alive answered 64, "
                  "nested 640");
    EXPECT_ERR(f, "[error] jobcall: 64 calls to the host from a thread other than the main "
                  "thread or from a job refused (the first: entity_create)");
    assert_non_null(strstr(f->run.out, "entities alive: 0\n"));
}

/* --safe: a chunk that writes to an unmapped address, on whichever thread runs it, is caught
 * there; parallel_for returns the failure to the update, and the plugin goes as after a
 * crash in its update (unloaded: no build to go back to) while the host runs on. */
static void Host_jobs_crash_in_a_job_under_safe_unloads_the_plugin(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "jobcrash");
    HOST(f, "--safe", "--frames", "4", "--threads", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "[info] jobcrash: update 0: parallel_for: ok; threads 2; items 64 of 64");
    EXPECT_ERR(f, "[info] jobcrash: update 1: parallel_for: plugin failure; threads 2");
    EXPECT_ERR(f, "[error] guard: plugin 'jobcrash' (");
    EXPECT_ERR(f, ") crashed with SIGSEGV in jobcrash: at the end of this frame it goes back");
    EXPECT_ERR(f, "counter saw 4 frames");
}

static void Host_skips_second_plugin_registering_same_manager(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user", "dupmgr_a", "dupmgr_b");
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "dupmgr_b.so", "load() failed: already exists");
    EXPECT_ERR_LINE(f, "[error] dupmgr_b: register_manager: manager 'shared'",
                    "already registered by plugin 'dupmgr_a' (dupmgr_a.so)");
    assert_int_equal(count_lines(f->run.err, "first update of shared", NULL), 1);
}

static void Host_skips_second_plugin_publishing_same_api(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user", "dupapi_a", "dupapi_b");
    EXPECT_OTHERS_RUN(f, 1);
    /* dupapi_b ignores the refusal and returns ECS_OK: the host skips it all the same */
    EXPECT_SKIPPED(f, "dupapi_b.so",
                   "load() went on after a refused registration: api_publish: API 'test.shared'");
    EXPECT_ERR_LINE(f, "[error] dupapi_b: api_publish: API 'test.shared'",
                    "already published by plugin 'dupapi_a' (dupapi_a.so)");
    EXPECT_ERR(f, "first update of dupapi_a.first");
    EXPECT_ABSENT(f, "first update of dupapi_b");
}

static void Host_skips_plugin_with_missing_dependency(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user", "needs_ghost");
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "needs_ghost.so", "missing dependency 'ghost'");
    EXPECT_ABSENT(f, "load needs_ghost");
}

/* The line naming the skipped file should say which name clashed, not only "already
 * exists": today that detail is on another line, which names the plugin but not its file. */
static void Host_skip_line_names_the_clashing_manager_or_api(void **state)
{
    fixture *f = *state;
    ADD(f, "dupmgr_a", "dupmgr_b", "dupapi_a", "dupapi_b");
    HOST(f, "--frames", "1");
    EXPECT_EXIT(f, 0);
    EXPECT_SKIPPED(f, "dupmgr_b.so", "'shared'");
    EXPECT_SKIPPED(f, "dupapi_b.so", "'test.shared'");
}

static void Host_skips_both_plugins_of_a_dependency_cycle(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user", "cyc_a", "cyc_b");
    EXPECT_OTHERS_RUN(f, 2);
    EXPECT_SKIPPED(f, "cyc_a.so", "dependency cycle: 'cyc_a' and 'cyc_b'");
    EXPECT_SKIPPED(f, "cyc_b.so", "dependency cycle: 'cyc_b' and 'cyc_a'");
    EXPECT_ABSENT(f, "load cyc_");
}

static void Host_skips_second_file_with_same_plugin_name(void **state)
{
    fixture *f = *state;
    char why[4200];
    ADD(f, "counter", "user", "ord_a", "twin"); /* twin.so also calls itself ord_a */
    snprintf(why, sizeof why, "plugin name 'ord_a' is already used by %s/ord_a.so", f->dir);
    EXPECT_OTHERS_RUN(f, 1);
    EXPECT_SKIPPED(f, "twin.so", why);
    EXPECT_ERR(f, "first update of ord_a.first");
    EXPECT_ABSENT(f, "first update of twin");
}

static void Host_skips_dependent_of_plugin_whose_load_failed(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user", "loadfail", "needs_loadfail");
    EXPECT_OTHERS_RUN(f, 2);
    EXPECT_SKIPPED(f, "loadfail.so", "load() failed: plugin failure");
    EXPECT_SKIPPED(f, "needs_loadfail.so", "its dependency 'loadfail' failed to load");
    EXPECT_ABSENT(f, "load needs_loadfail");
}

static void Host_warns_on_plugin_registering_nothing_but_loads_it(void **state)
{
    fixture *f = *state;
    char where[4200];
    ADD(f, "counter", "empty");
    snprintf(where, sizeof where, "[warn] loader: %s/empty.so", f->dir);
    HOST(f, "--strict", "--frames", "2"); /* a warning, not an error: --strict still exits 0 */
    EXPECT_EXIT(f, 0);
    EXPECT_ERR_LINE(f, where,
                    "plugin 'empty' loaded but registered no manager and published no API");
    EXPECT_ERR(f, "loaded empty 1.0.0 from empty.so (0 managers, 0 APIs)");
    EXPECT_ERR(f, "counter saw 2 frames");
    EXPECT_ABSENT(f, "skipped");
}

/* ---- Order: dependencies, then manifest, then file name ---- */

static void Host_updates_in_dependency_then_file_order(void **state)
{
    fixture *f = *state;
    ADD(f, "ord_d", "ord_c", "ord_b", "ord_a"); /* ord_b depends on ord_c */
    HOST(f, "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ORDER(f, "load ord_a", "load ord_c", "load ord_b", "load ord_d");
    EXPECT_ORDER(f, "first update of ord_a.first", "first update of ord_a.second",
                 "first update of ord_c.first", "first update of ord_c.second",
                 "first update of ord_b.first", "first update of ord_b.second",
                 "first update of ord_d.first", "first update of ord_d.second");
    EXPECT_ORDER(f, "unload ord_d", "unload ord_b", "unload ord_c", "unload ord_a");
}

static void Host_manifest_orders_plugins_but_dependencies_come_first(void **state)
{
    fixture *f = *state;
    ADD(f, "ord_a", "ord_b", "ord_c", "ord_d");
    write_in_dir(f, "manifest.json",
                 "{\"plugins\": [{\"name\": \"ord_d\"}, {\"name\": \"ord_b\"}, "
                 "{\"name\": \"ord_a\"}]}\n");
    HOST(f, "--frames", "1");
    EXPECT_EXIT(f, 0);
    /* ord_b is listed before ord_a but needs ord_c, which is not listed: ranked last */
    EXPECT_ORDER(f, "first update of ord_d.first", "first update of ord_a.first",
                 "first update of ord_c.first", "first update of ord_b.first");
}

static void Host_manifest_config_reaches_the_plugin(void **state)
{
    fixture *f = *state;
    ADD(f, "ord_a", "ord_b", "ord_c");
    write_in_dir(f, "manifest.json",
                 "{\"plugins\": [\n"
                 "  {\"name\": \"ord_a\", \"config\": {\"speed\": 3, \"tags\": [\"x\", \"y\"]}},\n"
                 "  {\"name\": \"ord_c\", \"config\": {}},\n"
                 "  {\"name\": \"ghost\"}\n"
                 "]}\n");
    HOST(f, "--frames", "1");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR_LINE(f, "[warn] manifest:", "plugins[2]: no plugin named 'ghost'");
    EXPECT_ERR(f, "[info] ord_a: config of ord_a: {\"speed\":3,\"tags\":[\"x\",\"y\"]}");
    EXPECT_ERR(f, "[info] ord_c: config of ord_c: {}");
    EXPECT_ERR(f, "[info] ord_b: config of ord_b: none");
    EXPECT_ERR(f, "load ord_a (plugin_name ord_a)");
}

static void Host_manifest_disabled_plugin_and_its_dependent_are_not_loaded(void **state)
{
    fixture *f = *state;
    ADD(f, "ord_a", "ord_b", "ord_c", "ord_d"); /* ord_b depends on ord_c */
    write_in_dir(f, "manifest.json", "{\"plugins\": [{\"name\": \"ord_c\", \"disabled\": true}]}");
    HOST(f, "--frames", "1");
    EXPECT_EXIT(f, 0);
    EXPECT_ABSENT(f, "load ord_c");
    EXPECT_SKIPPED(f, "ord_b.so", "its dependency 'ord_c' is disabled by manifest.json");
    EXPECT_ABSENT(f, "load ord_b");
    EXPECT_ERR(f, "first update of ord_a.first");
    EXPECT_ERR(f, "first update of ord_d.first");
    HOST(f, "--list");
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "  status: disabled: disabled by manifest.json");
}

/* A second entry for the same plugin is a mistake the host should name (it must not
 * silently replace the first entry's rank and config, nor leak the first config). */
static void Host_manifest_listing_a_plugin_twice_is_reported(void **state)
{
    fixture *f = *state;
    ADD(f, "ord_a");
    write_in_dir(f, "manifest.json",
                 "{\"plugins\": [{\"name\": \"ord_a\", \"config\": {\"a\": 1}},\n"
                 "              {\"name\": \"ord_a\", \"config\": {\"b\": 2}}]}\n");
    HOST(f, "--frames", "1");
    EXPECT_EXIT(f, 1); /* the folder's manifest is wrong: nothing is loaded from it */
    EXPECT_ERR_LINE(f, "[error] manifest: ",
                    "manifest.json: plugins[1]: 'ord_a' is already listed at plugins[0]");
    assert_int_equal(count_lines(f->run.err, "ord_a", NULL), 1); /* that line only */
    EXPECT_ABSENT(f, "config of ord_a"); /* neither entry's config reached a load() */
}

/* "plugins" twice: cJSON would read the first and drop the second in silence. */
static void Host_manifest_with_a_key_twice_names_both_places(void **state)
{
    fixture *f = *state;
    char where[4200];
    ADD(f, "ord_a");
    write_in_dir(f, "manifest.json",
                 "{\"plugins\": [{\"name\": \"ord_a\", \"config\": {\"a\": 1}}],\n"
                 " \"plugins\": [{\"name\": \"ord_a\", \"disabled\": true}]}\n");
    snprintf(where, sizeof where,
             "%s/manifest.json:2:2: duplicate key \"plugins\" (its first at line 1, column 2)",
             f->dir);
    HOST(f, "--frames", "1");
    EXPECT_EXIT(f, 1);
    EXPECT_ERR(f, where);
    EXPECT_ABSENT(f, "loaded ord_a");
}

static void Host_manifest_syntax_error_gives_file_line_column_and_exit_1(void **state)
{
    fixture *f = *state;
    char where[4200];
    ADD(f, "counter");
    write_in_dir(f, "manifest.json",
                 "{\n"
                 "  \"plugins\": [\n"
                 "    {\"name\": counter}\n" /* a bare word: line 3, column 14 */
                 "  ]\n"
                 "}\n");
    snprintf(where, sizeof where, "%s/manifest.json:3:14: expected a JSON value, found 'counter'",
             f->dir);
    HOST(f, "--frames", "1");
    EXPECT_EXIT(f, 1);
    EXPECT_ERR(f, where);
    EXPECT_ABSENT(f, "loaded counter");
}

static void Host_manifest_with_wrong_shape_exits_1(void **state)
{
    fixture *f = *state;
    ADD(f, "counter");
    write_in_dir(f, "manifest.json", "{\"plugins\": [{\"name\": 5}]}");
    HOST(f, "--frames", "1");
    EXPECT_EXIT(f, 1);
    EXPECT_ERR(f, "manifest.json: plugins[0].name: expected a string, found a number");
    EXPECT_ABSENT(f, "loaded counter");
}

/* ---- --list, --stats, --trace ---- */

static void Host_list_shows_each_plugin_and_whether_it_loads(void **state)
{
    fixture *f = *state;
    char bad_abi[128];
    ADD(f, "counter", "user", "empty", "badabi_major");
    write_in_dir(f, "bad_notelf.so", "text\n");
    HOST(f, "--list");
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "counter.so\n"
                  "  name: counter  version: 1.0.0  abi: 1.1  state: 1\n"
                  "  depends on: -\n"
                  "  managers: counter\n"
                  "  apis: test.counter\n"
                  "  status: loads\n");
    EXPECT_OUT(f, "user.so\n"
                  "  name: user  version: 1.0.0  abi: 1.1  state: 1\n"
                  "  depends on: counter\n"
                  "  managers: user\n"
                  "  apis: -\n"
                  "  status: loads\n");
    EXPECT_OUT(f, "empty.so\n"
                  "  name: empty  version: 1.0.0  abi: 1.1  state: 1\n"
                  "  depends on: -\n"
                  "  managers: -\n"
                  "  apis: -\n"
                  "  status: loads\n");
    snprintf(bad_abi, sizeof bad_abi, "badabi_major.so\n  status: does not load: built for ABI %d.",
             ECS_ABI_MAJOR + 1);
    EXPECT_OUT(f, bad_abi);
    EXPECT_OUT(f, "bad_notelf.so\n  status: does not load: not a shared object");
    EXPECT_ABSENT(f, "counter saw 1"); /* no frame ran */
}

static void Host_list_shows_abi_of_plugin_skipped_for_its_dependencies(void **state)
{
    fixture *f = *state;
    ADD(f, "needs_ghost");
    HOST(f, "--list");
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "needs_ghost.so\n"
                  "  name: needs_ghost  version: 0.1.0  abi: 1.1  state: 1\n"
                  "  depends on: ghost\n"
                  "  managers: -\n"
                  "  apis: -\n"
                  "  status: does not load: missing dependency 'ghost'");
}

/* Does any line of text start with prefix? */
static bool line_starts(const char *text, const char *prefix)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, prefix, strlen(prefix)) == 0) return true;
    return false;
}

/* What a plugin and the file system give (a version, a dependency's name, a file name, a
 * folder name) may hold a newline or a terminal's escape: --list escapes each as the log
 * does (\n, \xNN), so every line it prints is its own and nothing forges a log line. */
static void Host_list_escapes_plugin_text_file_and_folder_names(void **state)
{
    fixture *f = *state;
    char dir[4096], src[4096], dst[4200];
    snprintf(dir, sizeof dir, "%s/odd\n[error] forged by a folder", f->root);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(src, sizeof src, "%s/oddtext.so", TEST_PLUGIN_DIR);
    snprintf(dst, sizeof dst, "%s/odd\n[error] forged by a file.so", dir);
    assert_int_equal(harness_copy_file(src, dst, 0755), 0);
    HOST_RAW(f, "--list", dir);
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "odd\\n[error] forged by a file.so\n"
                  "  name: oddtext  version: 1.0\\n[error] forged by the version\\x1B[31m  abi: ");
    EXPECT_OUT(f, "  depends on: ghost\\n[error] forged by a dependency\n");
    EXPECT_OUT(f, "  status: does not load: missing dependency 'ghost\\n[error] forged by a "
                  "dependency'");
    EXPECT_OUT(f, "/odd\\n[error] forged by a folder\n");
    if (line_starts(f->run.out, "[error] forged") || line_starts(f->run.err, "[error] forged") ||
        strchr(f->run.out, '\x1b') || strchr(f->run.err, '\x1b')) {
        dump(f);
        fail_msg("a line forged, or an escape byte printed");
    }
}

static void Host_stats_prints_a_row_per_manager(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user", "destroyer", "observer", "dupmgr_a");
    HOST(f, "--stats", "--frames", "5");
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "manager");
    EXPECT_OUT(f, "frames: 5,");
    const char *const rows[][2] = {
        {"counter ", "counter "},   {"user ", "user "},       {"destroyer ", "destroyer "},
        {"observer ", "observer "}, {"shared ", "dupmgr_a "}, /* a manager named unlike its plugin:
                                                                 the plugin column */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *row = line_with(f->run.out, rows[i][0], NULL);
        if (!row || strncmp(row, rows[i][0], strlen(rows[i][0])) != 0 ||
            !strstr(row + strlen(rows[i][0]), rows[i][1])) {
            print_error("no --stats row for manager '%s' of plugin '%s'\n", rows[i][0], rows[i][1]);
            dump(f);
            fail();
        }
    }
    /* the count column: '-' for a manager without count() (dupmgr_a's), a number otherwise */
    const char *shared = line_with(f->run.out, "shared ", NULL);
    char mgr[32], plugin[32], count[16];
    assert_int_equal(sscanf(shared, "%31s %31s %15s", mgr, plugin, count), 3);
    assert_string_equal(count, "-");
    const char *counter = line_with(f->run.out, "counter ", NULL);
    assert_int_equal(sscanf(counter, "%31s %31s %15s", mgr, plugin, count), 3);
    assert_string_not_equal(count, "-");
}

/* Is e a metadata event that names a thread's track ("main", "ecs-job-N")? */
static bool is_thread_name(const cJSON *e)
{
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *name = args ? cJSON_GetObjectItemCaseSensitive(args, "name") : NULL;
    return cJSON_IsString(ph) && !strcmp(ph->valuestring, "M") && cJSON_IsString(name) &&
           (!strcmp(name->valuestring, "main") || !strncmp(name->valuestring, "ecs-job-", 8));
}

/* Count the trace's "X" events named name in category cat; fail on a malformed event (the
 * tracks' names aside). */
static int count_slices(const cJSON *events, const char *name, const char *cat)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (is_thread_name(e)) continue;
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *ct = cJSON_GetObjectItemCaseSensitive(e, "cat");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
        const cJSON *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
        assert_true(cJSON_IsString(ph) && cJSON_IsString(nm) && cJSON_IsString(ct));
        assert_true(cJSON_IsNumber(ts) && cJSON_IsNumber(dur));
        assert_true(dur->valuedouble >= 0 && ts->valuedouble >= 0);
        if (strcmp(ph->valuestring, "X") == 0 && strcmp(nm->valuestring, name) == 0 &&
            strcmp(ct->valuestring, cat) == 0)
            n++;
    }
    return n;
}

/* The updates are timed on one frame in 8 by default (frames 0, 8, 16 of 17), on every
 * frame with --timing-every 1, and --stats says on how many. */
static void Host_stats_says_on_how_many_frames_updates_were_timed(void **state)
{
    fixture *f = *state;
    ADD(f, "counter");
    HOST(f, "--stats", "--frames", "17");
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "updates timed on 3 of the 17 frames (--timing-every 8)");
    HOST(f, "--stats", "--timing-every", "1", "--frames", "5");
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "updates timed on 5 of the 5 frames (--timing-every 1)");
}

static void Host_stats_with_no_timing_still_counts_frames(void **state)
{
    fixture *f = *state;
    ADD(f, "counter");
    HOST(f, "--stats", "--no-timing", "--frames", "5"); /* help: "shows frame times only" */
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "counter ");
    EXPECT_OUT(f, "frames: 5,");
}

static void Host_trace_writes_one_slice_per_manager_update_per_frame(void **state)
{
    fixture *f = *state;
    char *path = harness_join(f->root, "trace.json");
    assert_non_null(path);
    ADD(f, "counter", "user");
    HOST(f, "--trace", path, "--frames", "4");
    char *text = harness_read_file(path, NULL);
    free(path);
    EXPECT_EXIT(f, 0);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    if (!root) fprintf(stderr, "the trace is not valid JSON:\n%s\n", text);
    free(text);
    assert_non_null(root);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    bool is_array = cJSON_IsArray(events);
    int counter = is_array ? count_slices(events, "counter", "update") : -1;
    int user = is_array ? count_slices(events, "user", "update") : -1;
    int announce = is_array ? count_slices(events, "destroyed", "announce") : -1;
    int total = 0, tracks = 0;
    double last_ts = -1; /* slices are written in time order: counter, user, announce */
    bool ordered = true;
    const cJSON *e, *second = NULL;
    cJSON_ArrayForEach(e, events)
    {
        if (is_thread_name(e)) { /* first, one per job thread: not slices */
            tracks++;
            ordered = ordered && total == 0;
            continue;
        }
        if (++total == 2) second = e;
        double ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble;
        ordered = ordered && ts >= last_ts;
        last_ts = ts;
    }
    const cJSON *second_name = second ? cJSON_GetObjectItemCaseSensitive(second, "name") : NULL;
    is_array = is_array && total > 0;
    bool user_second = cJSON_IsString(second_name) && !strcmp(second_name->valuestring, "user");
    cJSON_Delete(root);
    assert_true(is_array);
    assert_int_equal(counter, 4);
    assert_int_equal(user, 4);
    assert_int_equal(announce, 4);
    assert_int_equal(total, 12);
    assert_true(tracks >= 1);
    assert_true(ordered);
    assert_true(user_second);
}

/* With job threads, the trace has a track per thread, named ("main", "ecs-job-1"), and a
 * slice of category "job" on each thread for what it ran of a job (jobwait: a worker is
 * sure to run a chunk of frame 0's job), named after the step that started it. */
static void Host_trace_has_a_track_per_job_thread(void **state)
{
    fixture *f = *state;
    char *path = harness_join(f->root, "trace.json");
    ADD(f, "jobwait");
    HOST(f, "--trace", path, "--frames", "2", "--threads", "2");
    char *text = harness_read_file(path, NULL);
    free(path);
    EXPECT_EXIT(f, 0);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    assert_non_null(root);
    const cJSON *e;
    bool main_named = false, worker_named = false, main_job = false, worker_job = false;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (is_thread_name(e)) {
            const char *n = cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(e, "args"), "name")
                                ->valuestring;
            main_named |= !strcmp(n, "main") && tid->valueint == 1;
            worker_named |= !strcmp(n, "ecs-job-1") && tid->valueint == 2;
        } else if (!strcmp(cat->valuestring, "job") && !strcmp(name->valuestring, "jobwait")) {
            main_job |= tid->valueint == 1;
            worker_job |= tid->valueint == 2;
        }
    }
    cJSON_Delete(root);
    assert_true(main_named);
    assert_true(worker_named);
    assert_true(main_job);
    assert_true(worker_job);
}

/* A --trace into a folder that does not exist is refused before anything runs: exit 2,
 * one line naming the folder. */
static void Host_trace_to_missing_folder_exits_2_at_start(void **state)
{
    fixture *f = *state;
    char *path = harness_join(f->root, "no/such/folder/trace.json");
    assert_non_null(path);
    ADD(f, "counter");
    HOST(f, "--trace", path, "--frames", "1");
    free(path);
    EXPECT_EXIT(f, 2);
    EXPECT_ERR(f, "/no/such/folder does not exist");
    EXPECT_ABSENT(f, "loaded counter"); /* nothing ran */
}

/* ---- Command line ---- */

static void Host_quiet_logs_errors_only(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "noentry");
    HOST(f, "-q", "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_SKIPPED(f, "noentry.so", "no entry symbol");
    EXPECT_ABSENT(f, "[info]");
    EXPECT_ABSENT(f, "[warn]");
}

static void Host_usage_errors_exit_2(void **state)
{
    fixture *f = *state;
    const char *const cases[][4] = {
        /* args (up to 3), then what stderr must say */
        {"--frobnicate", "DIR", NULL, "unknown option '--frobnicate'"},
        {"-x", "DIR", NULL, "unknown option '-x'"},
        {"--frames", "abc", "DIR", "--frames needs a whole number >= 0, not 'abc'"},
        {"--frames", "-1", "DIR", "--frames needs a whole number >= 0, not '-1'"},
        {"--frames", "1.5", "DIR", "--frames needs a whole number >= 0, not '1.5'"},
        {"--frames", "", "DIR", "--frames needs a whole number >= 0, not ''"},
        {"--fps", "fast", "DIR", "--fps needs a number from 0 to 1e6, not 'fast'"},
        {"--timing-every", "0", "DIR",
         "--timing-every needs a whole number from 1 to 1000000, not '0'"},
        {"DIR", "--frames", NULL, "option '--frames' needs a value"},
        {"--no-installed-plugins", NULL, NULL,
         "no plugin folder: --no-installed-plugins needs a PLUGIN_DIR or ECS_PLUGIN_PATH"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[6] = {ECS_HOST_PATH};
        size_t n = 1;
        for (size_t k = 0; k < 3 && cases[i][k]; k++)
            argv[n++] = strcmp(cases[i][k], "DIR") == 0 ? f->dir : cases[i][k];
        argv[n] = NULL;
        run_argv(f, argv, RUN_TIMEOUT);
        EXPECT_EXIT(f, 2);
        EXPECT_ERR(f, cases[i][3]);
        EXPECT_ERR(f, "Try 'ecs-host --help'.");
        assert_string_equal(f->run.out, "");
    }
}

static void Host_help_and_version_exit_0(void **state)
{
    fixture *f = *state;
    char version[64];
    HOST_RAW(f, "--help");
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "usage: ecs-host [options] [PLUGIN_DIR...]");
    EXPECT_OUT(f, "installed plugin folder, " ECS_DEFAULT_PLUGIN_DIR);
    EXPECT_OUT(f, "--allow-insecure-plugins");
    assert_string_equal(f->run.err, "");
    HOST_RAW(f, "-h");
    EXPECT_EXIT(f, 0);
    EXPECT_OUT(f, "usage: ecs-host");
    HOST_RAW(f, "--version");
    EXPECT_EXIT(f, 0);
    snprintf(version, sizeof version, "(plugin ABI %d.%d)", ECS_ABI_MAJOR, ECS_ABI_MINOR);
    EXPECT_OUT(f, "ecs-host ");
    EXPECT_OUT(f, version);
    assert_string_equal(f->run.err, "");
}

/* No PLUGIN_DIR: the folder `meson install` puts plugins in (prefix/libdir/ecs-host/
 * plugins). Where nothing is installed, exit 1 with a line that names that folder. */
static void Host_without_plugin_dir_uses_the_installed_folder(void **state)
{
    fixture *f = *state;
    struct stat st;
    HOST_RAW(f, "--frames", "0");
    if (stat(ECS_DEFAULT_PLUGIN_DIR, &st) != 0) {
        EXPECT_EXIT(f, 1);
        EXPECT_ERR(f, "no PLUGIN_DIR given and the installed plugin folder " ECS_DEFAULT_PLUGIN_DIR
                      " cannot be used");
        assert_string_equal(f->run.out, "");
    } else { /* installed on this machine: used (whether its plugins load is theirs) */
        print_message("# %s exists: checking that it is the folder used\n", ECS_DEFAULT_PLUGIN_DIR);
        EXPECT_ABSENT(f, "no PLUGIN_DIR given");
        HOST_RAW(f, "-v", "--frames", "0");
        EXPECT_ERR(f, "[detail] ecs-host: plugins from " ECS_DEFAULT_PLUGIN_DIR ",");
        if (f->run.exit_code != 0 && f->run.exit_code != 1) fail_msg("exit %d", f->run.exit_code);
    }
}

/* Several plugin folders, as PATH: the command line's, then ECS_PLUGIN_PATH's; a plugin
 * name in an earlier folder wins (one info line, not a bad plugin for --strict); each
 * folder's manifest applies to its own plugins; --list names each plugin's folder. */
static void Host_several_plugin_folders_the_first_wins(void **state)
{
    fixture *f = *state;
    char second[4096], third[4096], src[8300], dst[8300], want[9000];
    snprintf(second, sizeof second, "%s/second", f->root);
    snprintf(third, sizeof third, "%s/third", f->root);
    assert_int_equal(mkdir(second, 0700), 0);
    assert_int_equal(mkdir(third, 0700), 0);
    ADD(f, "counter", "ord_a");
    snprintf(src, sizeof src, "%s/ord_a.so", TEST_PLUGIN_DIR);
    snprintf(dst, sizeof dst, "%s/ord_a.so", second); /* the same plugin, a later folder */
    assert_int_equal(harness_copy_file(src, dst, 0755), 0);
    snprintf(src, sizeof src, "%s/user.so", TEST_PLUGIN_DIR);
    snprintf(dst, sizeof dst, "%s/user.so", second);
    assert_int_equal(harness_copy_file(src, dst, 0755), 0);
    snprintf(src, sizeof src, "%s/ord_d.so", TEST_PLUGIN_DIR);
    snprintf(dst, sizeof dst, "%s/ord_d.so", third);
    assert_int_equal(harness_copy_file(src, dst, 0755), 0);
    snprintf(src, sizeof src, "%s/ord_c.so", TEST_PLUGIN_DIR);
    snprintf(dst, sizeof dst, "%s/ord_c.so", third);
    assert_int_equal(harness_copy_file(src, dst, 0755), 0);
    snprintf(dst, sizeof dst, "%s/manifest.json", third); /* disables its own ord_c only */
    assert_int_equal(harness_write_file(dst,
                                        "{\"plugins\": [{\"name\": \"ord_d\"}, "
                                        "{\"name\": \"ord_c\", \"disabled\": true}]}",
                                        0644),
                     0);
    setenv("ECS_PLUGIN_PATH", third, 1);
    const char *argv[] = {
        ECS_HOST_PATH, "--fps", "0", "--frames", "1", "--strict", "--no-installed-plugins",
        f->dir,        second,  NULL};
    run_argv(f, argv, RUN_TIMEOUT);
    unsetenv("ECS_PLUGIN_PATH");
    EXPECT_EXIT(f, 0); /* the duplicate in a later folder is the rule, not a bad plugin */
    snprintf(want, sizeof want,
             "[info] loader: %s/ord_a.so: skipped: plugin 'ord_a' is loaded from %s/ord_a.so, "
             "an earlier folder",
             second, f->dir);
    EXPECT_ERR(f, want);
    EXPECT_ERR(f, "loaded user 1.0.0 from user.so");
    EXPECT_ERR(f, "counter saw 1 frames");
    EXPECT_ABSENT(f, "loaded ord_c"); /* disabled by its own folder's manifest */
    EXPECT_ERR(f, "loaded ord_d 0.1.0 from ord_d.so");
    setenv("ECS_PLUGIN_PATH", third, 1);
    const char *list[] = {ECS_HOST_PATH, "--list", "--no-installed-plugins", f->dir, second, NULL};
    run_argv(f, list, RUN_TIMEOUT);
    unsetenv("ECS_PLUGIN_PATH");
    EXPECT_EXIT(f, 0);
    snprintf(want, sizeof want, "  folder: %s\n", second);
    EXPECT_OUT(f, want);
    snprintf(want, sizeof want, "ord_d.so\n  name: ord_d");
    EXPECT_OUT(f, want);
    snprintf(want, sizeof want, "  folder: %s\n", third);
    EXPECT_OUT(f, want);
}

/* Copy the built test plugin NAME.so into folder dir as `as`. */
static void copy_plugin_to(const char *name, const char *dir, const char *as)
{
    char src[4096], dst[8300];
    snprintf(src, sizeof src, "%s/%s.so", TEST_PLUGIN_DIR, name);
    snprintf(dst, sizeof dst, "%s/%s", dir, as);
    if (harness_copy_file(src, dst, 0755) != 0) fail_msg("cannot copy %s to %s", src, dst);
}

/* The command line's folders come before ECS_PLUGIN_PATH's, whatever their names: a
 * plugin name in both is loaded from the command line's folder (the other file skipped,
 * naming it), and the folders' plugins load, update and unload in that order. */
static void Host_command_line_folders_come_before_ECS_PLUGIN_PATH_ones(void **state)
{
    fixture *f = *state;
    char env[4096], want[9000];
    snprintf(env, sizeof env, "%s/aaa-env", f->root); /* sorts before the plugin folder */
    assert_int_equal(mkdir(env, 0700), 0);
    ADD(f, "ord_d");
    add_plugin_as(f, "twin", "a_twin.so"); /* plugin name ord_a, manager "twin" */
    copy_plugin_to("ord_a", env, "ord_a.so");
    copy_plugin_to("ord_c", env, "ord_c.so");
    setenv("ECS_PLUGIN_PATH", env, 1);
    const char *argv[] = {
        ECS_HOST_PATH, "--fps", "0", "--frames", "1", "--strict", "--no-installed-plugins",
        f->dir,        NULL};
    run_argv(f, argv, RUN_TIMEOUT);
    unsetenv("ECS_PLUGIN_PATH");
    EXPECT_EXIT(f, 0);
    snprintf(want, sizeof want,
             "[info] loader: %s/ord_a.so: skipped: plugin 'ord_a' is loaded from %s/a_twin.so, an "
             "earlier folder",
             env, f->dir);
    EXPECT_ERR(f, want);
    EXPECT_ORDER(f, "loaded ord_a 0.1.0 from a_twin.so", "loaded ord_d", "loaded ord_c",
                 "first update of twin", "first update of ord_d.first",
                 "first update of ord_c.first", "unload ord_c", "unload ord_d", "unload ord_a");
}

/* An ECS_PLUGIN_PATH entry that does not exist is passed over, as PATH's are: one warning
 * naming it, the other folders load (not a bad plugin for --strict). A folder named on the
 * command line that does not exist stays an error (the test below). */
static void Host_missing_ECS_PLUGIN_PATH_entry_is_skipped_with_one_warning(void **state)
{
    fixture *f = *state;
    char path[9000], missing[4096], want[4200];
    snprintf(missing, sizeof missing, "%s/gone", f->root);
    snprintf(path, sizeof path, "%s:%s/also-gone/sub:%s", missing, f->root, f->dir);
    ADD(f, "counter");
    setenv("ECS_PLUGIN_PATH", path, 1);
    const char *argv[] = {ECS_HOST_PATH, "--frames", "1", "--strict", "--no-installed-plugins",
                          NULL};
    run_argv(f, argv, RUN_TIMEOUT);
    unsetenv("ECS_PLUGIN_PATH");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "counter saw 1 frames");
    snprintf(want, sizeof want, "[warn] loader: %s: ECS_PLUGIN_PATH names a folder that is not",
             missing);
    EXPECT_ERR(f, want);
    snprintf(want, sizeof want, "[warn] loader: %s/also-gone/sub: ECS_PLUGIN_PATH names a folder",
             f->root);
    EXPECT_ERR(f, want);
    assert_int_equal(count_lines(f->run.err, "[warn]", NULL), 2);
    assert_int_equal(count_lines(f->run.err, "[error]", NULL), 0);
}

static void Host_missing_plugin_dir_exits_1(void **state)
{
    fixture *f = *state;
    char *missing = harness_join(f->root, "nowhere");
    assert_non_null(missing);
    HOST_RAW(f, "--frames", "1", missing);
    free(missing);
    EXPECT_EXIT(f, 1);
    EXPECT_ERR(f, "plugin folder not found");
}

static void Host_file_as_plugin_dir_exits_1(void **state)
{
    fixture *f = *state;
    char *file = harness_join(f->root, "a_file");
    assert_non_null(file);
    assert_int_equal(harness_write_file(file, "x\n", 0600), 0);
    HOST_RAW(f, "--frames", "1", file);
    free(file);
    EXPECT_EXIT(f, 1);
    EXPECT_ERR(f, "not a folder");
}

/* ---- Security: plugins others may write are refused ---- */

static void Host_refuses_plugin_file_writable_by_others(void **state)
{
    fixture *f = *state;
    char tag[4200];
    ADD(f, "counter", "user", "ord_a");
    chmod_in_dir(f, "ord_a.so", 0666);
    snprintf(tag, sizeof tag, "%s/ord_a.so", f->dir);
    HOST(f, "--frames", "3");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR_LINE(f, tag, "chmod go-w");
    EXPECT_ERR_LINE(f, tag, "--allow-insecure-plugins");
    EXPECT_ABSENT(f, "load ord_a");
    EXPECT_ERR(f, "counter saw 3 frames");
    HOST(f, "--strict", "--frames", "3");
    EXPECT_EXIT(f, 1);
}

/* umask 002 (Debian's default for users) makes every build group-writable: accepted when
 * the group is the owner's private group (its only member, as Debian's OpenSSH decides),
 * refused when the group has another member. Needs root to give a file another group. */
static void Host_group_writable_plugin_is_accepted_only_in_a_private_group(void **state)
{
    fixture *f = *state;
    char path[4200];
    if (geteuid() != 0) {
        print_message("# SKIP: needs root to give a file a group with other members\n");
        skip();
    }
    ADD(f, "counter", "ord_a");
    chmod_in_dir(f, "", 0775);
    chmod_in_dir(f, "ord_a.so", 0775); /* root:root, root's private group */
    HOST(f, "--strict", "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "loaded ord_a");
    EXPECT_ABSENT(f, "writable");
    snprintf(path, sizeof path, "%s/ord_a.so", f->dir);
    assert_int_equal(chown(path, 0, 65534), 0); /* nogroup: nobody's primary group */
    HOST(f, "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR_LINE(f, path, "is writable by its group, which has other members than its owner");
    EXPECT_ABSENT(f, "load ord_a");
    EXPECT_ERR(f, "counter saw 2 frames");
}

/* Like OpenSSH's StrictModes, every folder above a plugin folder, up to '/', counts: a
 * 0755 folder inside a 0777 one that is not sticky is refused (another user could move it
 * away and put theirs in its place), naming the parent and the fix; sticky (as /tmp) is
 * fine; so is a parent others may write with --allow-insecure-plugins (a warning). As
 * root: a parent owned by another user is refused too. */
static void Host_refuses_plugin_folder_inside_a_folder_others_may_write(void **state)
{
    fixture *f = *state;
    char open[4096], dir[4200], so[4300], want[8600];
    snprintf(open, sizeof open, "%s/open", f->root);
    snprintf(dir, sizeof dir, "%s/deeper", open);
    assert_int_equal(mkdir(open, 0700), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(so, sizeof so, "%s/plugins", dir);
    assert_int_equal(mkdir(so, 0755), 0);
    assert_int_equal(chmod(so, 0755), 0);
    copy_plugin_to("counter", so, "counter.so");
    assert_int_equal(chmod(open, 0777), 0);
    HOST_RAW(f, "--frames", "1", so);
    EXPECT_EXIT(f, 1);
    snprintf(want, sizeof want,
             "plugin folder %s is inside %s, which is writable by others (mode 0777, not "
             "sticky): another user could move it away and put theirs in its place",
             so, open);
    EXPECT_ERR(f, want);
    snprintf(want, sizeof want, "fix with 'chmod o-w %s' or 'chmod +t %s'", open, open);
    EXPECT_ERR(f, want);
    EXPECT_ABSENT(f, "loaded counter");
    HOST_RAW(f, "--frames", "1", "--allow-insecure-plugins", so);
    EXPECT_EXIT(f, 0);
    EXPECT_ERR_LINE(f, "[warn] loader:", "loading it anyway");
    EXPECT_ERR(f, "counter saw 1 frames");
    assert_int_equal(chmod(open, 01777), 0); /* sticky, as /tmp */
    HOST_RAW(f, "--frames", "1", "--strict", so);
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "counter saw 1 frames");
    EXPECT_ABSENT(f, "[warn]");
    if (geteuid() != 0) return;
    assert_int_equal(chmod(open, 0755), 0);
    assert_int_equal(chown(open, 65534, 65534), 0); /* nobody's: it may rename what is inside */
    HOST_RAW(f, "--frames", "1", so);
    EXPECT_EXIT(f, 1);
    snprintf(want, sizeof want, "plugin folder %s is inside %s, which is owned by another user", so,
             open);
    EXPECT_ERR(f, want);
    assert_int_equal(chown(open, 0, 0), 0);
}

/* A gid no group of the machine has, from `from` on. */
static gid_t free_gid(gid_t from)
{
    while (getgrgid(from)) from++;
    return from;
}

/* ecs-host [args...] DIR with /etc/group seen as the machine's groups and `extra` lines
 * after them: in a mount namespace of its own (unshare -m, a bind mount), so the machine's
 * groups stay as they are. False when that cannot be done here (not root, no unshare). */
static bool host_with_groups(fixture *f, const char *extra, const char *const *args)
{
    char file[4200], *groups = harness_read_file("/etc/group", NULL);
    snprintf(file, sizeof file, "%s/group", f->root);
    FILE *out = groups ? fopen(file, "w") : NULL;
    if (out) fprintf(out, "%s%s", groups, extra), fclose(out);
    free(groups);
    const char *argv[MAX_ARGS] = {
        "unshare", "-m",         "sh", "-c", "mount --bind \"$0\" /etc/group && exec \"$@\"",
        file,      ECS_HOST_PATH};
    size_t n = 7;
    for (; *args && n < MAX_ARGS - 2; args++) argv[n++] = *args;
    argv[n++] = f->dir;
    argv[n] = NULL;
    run_argv(f, argv, RUN_TIMEOUT);
    return out && !strstr(f->run.err, "unshare:") && !strstr(f->run.err, "mount:");
}

/* A group-writable plugin is refused when its group has another member besides its owner,
 * though the owner is a member too (not a private group: another member could write it);
 * a group whose only member is the owner is its private group: accepted. Needs root (a
 * file of another group, a mount namespace for the groups). */
static void
Host_group_writable_plugin_is_refused_when_its_group_has_members_beside_the_owner(void **state)
{
    fixture *f = *state;
    char path[4200], groups[256];
    if (geteuid() != 0) {
        print_message("# SKIP: needs root to give a file a group and the host its own groups\n");
        skip();
    }
    gid_t shared = free_gid(4242), alone = free_gid(shared + 1);
    snprintf(groups, sizeof groups, "ecs-test-shared:x:%u:root,nobody\necs-test-alone:x:%u:root\n",
             (unsigned)shared, (unsigned)alone);
    ADD(f, "counter", "ord_a");
    chmod_in_dir(f, "ord_a.so", 0775);
    snprintf(path, sizeof path, "%s/ord_a.so", f->dir);
    assert_int_equal(chown(path, 0, shared), 0);
    if (!host_with_groups(f, groups, (const char *const[]){"--frames", "2", NULL})) {
        print_message("# SKIP: no mount namespace here: %s\n", f->run.err);
        skip();
    }
    EXPECT_EXIT(f, 0);
    EXPECT_ERR_LINE(f, path, "is writable by its group, which has other members than its owner");
    EXPECT_ABSENT(f, "load ord_a");
    EXPECT_ERR(f, "counter saw 2 frames");
    assert_int_equal(chown(path, 0, alone), 0);
    assert_true(
        host_with_groups(f, groups, (const char *const[]){"--strict", "--frames", "2", NULL}));
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "loaded ord_a");
    EXPECT_ABSENT(f, "writable");
}

static void Host_refuses_plugin_folder_writable_by_others(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user");
    chmod_in_dir(f, "", 0777);
    HOST(f, "--frames", "3");
    EXPECT_EXIT(f, 1);
    EXPECT_ERR_LINE(f, f->dir, "chmod go-w");
    EXPECT_ABSENT(f, "loaded counter");
}

static void Host_refuses_subfolder_writable_by_others(void **state)
{
    fixture *f = *state;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/more", f->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    add_plugin_as(f, "ord_a", "more/ord_a.so");
    chmod_in_dir(f, "more", 0777);
    ADD(f, "counter");
    HOST(f, "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR_LINE(f, sub, "chmod go-w");
    EXPECT_ABSENT(f, "load ord_a");
    EXPECT_ERR(f, "counter saw 2 frames");
}

static void Host_allow_insecure_plugins_loads_them_with_a_warning(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "user");
    chmod_in_dir(f, "user.so", 0666);
    chmod_in_dir(f, "", 0777);
    HOST(f, "--allow-insecure-plugins", "--strict", "--frames", "3");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR_LINE(f, "[warn] loader: plugin folder", "loading it anyway");
    EXPECT_ERR_LINE(f, "[warn] loader: plugin file", "user.so");
    EXPECT_ERR(f, "user read count 3 after 3 updates");
}

/* ---- Memory and entities ---- */

static void Host_reports_plugin_leak_by_name_and_size(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "allocs");
    HOST(f, "--frames", "3");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "[warn] allocs: leaked 550 bytes in 2 allocations at unload");
    EXPECT_ERR_LINE(f, "[error] allocs: free:", "refused");       /* a double free */
    EXPECT_ERR_LINE(f, "[error] allocs: realloc:", "refused");    /* a pointer not the host's */
    assert_int_equal(count_lines(f->run.err, "leaked", NULL), 1); /* counter leaks nothing */
    EXPECT_ABSENT(f, "misaligned");
    EXPECT_ABSENT(f, "alloc(0) is not NULL");
}

static void Host_announces_each_destroyed_entity_once_after_all_updates(void **state)
{
    fixture *f = *state;
    ADD(f, "counter", "destroyer", "observer");
    HOST(f, "--frames", "8");
    EXPECT_EXIT(f, 0);
    const char *d = line_with(f->run.err, "destroyer destroyed ", NULL);
    const char *o = line_with(f->run.err, "observer heard ", NULL);
    unsigned destroyed = 0, batches = 0, heard = 0, dup = 9, unknown = 9, alive = 9, early = 9;
    unsigned long long d_sum = 0, o_sum = 1;
    int dn = d ? sscanf(strstr(d, "destroyer destroyed"),
                        "destroyer destroyed %u entities, id sum %llu", &destroyed, &d_sum)
               : 0;
    int on = o ? sscanf(strstr(o, "observer heard"),
                        "observer heard %u batches, %u entities, id sum %llu; duplicates %u, "
                        "unknown %u, alive %u, before updates %u",
                        &batches, &heard, &o_sum, &dup, &unknown, &alive, &early)
               : 0;
    if (dn != 2 || on != 7) dump(f);
    assert_int_equal(dn, 2);
    assert_int_equal(on, 7);
    /* per frame: 2 parents, 5 others and 2 short-lived ids in update, then 2 children */
    assert_int_equal(destroyed, 8 * 11);
    assert_int_equal(heard, destroyed); /* every id heard once ... */
    assert_int_equal(o_sum, d_sum);
    assert_int_equal(dup, 0);         /* ... and not twice */
    assert_int_equal(unknown, 0);     /* ... and only ids destroyer destroyed */
    assert_int_equal(alive, 0);       /* already dead when announced */
    assert_int_equal(early, 0);       /* after every update of the frame */
    assert_int_equal(batches, 8 * 2); /* per frame: the updates' batch, then the cascade's */
}

/* ---- Signals ---- */

/* Start ecs-host with args until it logs "reached frame 3", send sig, expect a clean exit. */
static void check_signal_stops(fixture *f, int sig, const char *const *args)
{
    const char *argv[MAX_ARGS] = {ECS_HOST_PATH};
    size_t n = 1;
    for (; *args; args++) argv[n++] = *args;
    argv[n++] = f->dir;
    argv[n] = NULL;
    snprintf(f->cmd, sizeof f->cmd, "%s ... %s (then signal %d)", ECS_HOST_PATH, f->dir, sig);
    ADD(f, "counter", "user");
    assert_int_equal(harness_start(&f->proc, argv), 0);
    bool running = harness_wait_output(&f->proc, "reached frame 3", SIGNAL_TIMEOUT);
    assert_int_equal(kill(f->proc.pid, sig), 0);
    harness_finish(&f->proc, SIGNAL_TIMEOUT);
    harness_output_free(&f->run);
    f->run = f->proc.result;
    memset(&f->proc.result, 0, sizeof f->proc.result);
    if (!running) dump(f);
    assert_true(running);
    assert_false(f->run.timed_out);
    EXPECT_EXIT(f, 0);
    const char *stop = strstr(f->run.err, "stopping after ");
    unsigned long long frames = 0;
    char saw[96];
    if (!stop || sscanf(stop, "stopping after %llu frames (signal)", &frames) != 1) {
        dump(f);
        fail();
    }
    assert_true(frames >= 4);
    snprintf(saw, sizeof saw, "counter saw %llu frames", frames); /* unloaded cleanly */
    EXPECT_ERR(f, saw);
    EXPECT_ERR(f, "user read count");
}

static void Host_sigterm_stops_a_run_without_frame_limit_with_exit_0(void **state)
{
    check_signal_stops(*state, SIGTERM, (const char *const[]){"--fps", "0", NULL});
}

static void Host_sigint_stops_a_paced_run_with_exit_0(void **state)
{
    check_signal_stops(*state, SIGINT, (const char *const[]){"--fps", "60", NULL});
}

/* ---- A plugin built by hand ---- */

static bool program_in_path(const char *name)
{
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *p = path; p && *p;) {
        size_t len = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, name);
        if (access(buf, X_OK) == 0) return true;
        p += len + (p[len] == ':');
    }
    return false;
}

static void Host_loads_plugin_built_by_hand_with_cc(void **state)
{
    fixture *f = *state;
    if (!program_in_path("cc")) {
        print_message("# no 'cc' in PATH: cannot build a plugin by hand, test skipped\n");
        skip();
    }
    char out[4096];
    snprintf(out, sizeof out, "%s/handmade.so", f->dir);
    const char *const cc[] = {
        "cc",
        "-shared",
        "-fPIC",
        "-fvisibility=hidden",
        "-I",
        SDK_DIR,
        "-o",
        out,
        SOURCE_ROOT "/tests/plugins/handmade.c",
        NULL,
    };
    run_argv(f, cc, 60.0);
    EXPECT_EXIT(f, 0);
    chmod_in_dir(f, "handmade.so", 0755);
    HOST(f, "--frames", "2");
    EXPECT_EXIT(f, 0);
    EXPECT_ERR(f, "loaded handmade 1.0.0 from handmade.so (1 managers, 0 APIs)");
    EXPECT_ERR(f, "[info] handmade: hand-built update");
}

/* ---- main ---- */

static int check_host_exists(void **state)
{
    if (access(ECS_HOST_PATH, X_OK) == 0) return 0;
    print_error("%s is not an executable: build it first\n", ECS_HOST_PATH);
    return -1;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(Host_runs_counter_and_user_for_n_frames),
        TEST(Host_frames_0_loads_and_unloads_without_updating),
        TEST(Host_runs_with_empty_plugin_folder),
        TEST(Host_loads_symlinked_plugins),
        TEST(Host_loads_plugins_one_subfolder_down),
        TEST(Host_skips_file_that_is_not_a_shared_object),
        TEST(Host_skips_shared_object_without_entry_symbol),
        TEST(Host_skips_plugin_built_for_other_abi_major),
        TEST(Host_skips_plugin_built_for_newer_abi_minor),
        TEST(Host_skips_plugin_with_too_small_struct_size),
        TEST(Host_skips_plugin_whose_load_fails_and_drops_its_registrations),
        TEST(Host_refused_load_destroys_the_entities_it_created),
        TEST(Host_calls_from_another_thread_are_refused_and_reported),
        TEST(Host_jobs_give_one_threads_result_at_any_thread_count),
        TEST(Host_jobs_refuse_host_calls_not_tagged_job),
        TEST(Host_jobs_crash_in_a_job_under_safe_unloads_the_plugin),
        TEST(Host_trace_has_a_track_per_job_thread),
        TEST(Host_skips_second_plugin_registering_same_manager),
        TEST(Host_skips_second_plugin_publishing_same_api),
        TEST(Host_skips_plugin_with_missing_dependency),
        TEST(Host_skip_line_names_the_clashing_manager_or_api),
        TEST(Host_skips_both_plugins_of_a_dependency_cycle),
        TEST(Host_skips_second_file_with_same_plugin_name),
        TEST(Host_skips_dependent_of_plugin_whose_load_failed),
        TEST(Host_warns_on_plugin_registering_nothing_but_loads_it),
        TEST(Host_updates_in_dependency_then_file_order),
        TEST(Host_manifest_orders_plugins_but_dependencies_come_first),
        TEST(Host_manifest_config_reaches_the_plugin),
        TEST(Host_manifest_disabled_plugin_and_its_dependent_are_not_loaded),
        TEST(Host_manifest_listing_a_plugin_twice_is_reported),
        TEST(Host_manifest_with_a_key_twice_names_both_places),
        TEST(Host_manifest_syntax_error_gives_file_line_column_and_exit_1),
        TEST(Host_manifest_with_wrong_shape_exits_1),
        TEST(Host_list_shows_each_plugin_and_whether_it_loads),
        TEST(Host_list_shows_abi_of_plugin_skipped_for_its_dependencies),
        TEST(Host_list_escapes_plugin_text_file_and_folder_names),
        TEST(Host_stats_prints_a_row_per_manager),
        TEST(Host_stats_with_no_timing_still_counts_frames),
        TEST(Host_trace_writes_one_slice_per_manager_update_per_frame),
        TEST(Host_trace_to_missing_folder_exits_2_at_start),
        TEST(Host_quiet_logs_errors_only),
        TEST(Host_usage_errors_exit_2),
        TEST(Host_stats_says_on_how_many_frames_updates_were_timed),
        TEST(Host_help_and_version_exit_0),
        TEST(Host_without_plugin_dir_uses_the_installed_folder),
        TEST(Host_several_plugin_folders_the_first_wins),
        TEST(Host_command_line_folders_come_before_ECS_PLUGIN_PATH_ones),
        TEST(Host_missing_ECS_PLUGIN_PATH_entry_is_skipped_with_one_warning),
        TEST(Host_missing_plugin_dir_exits_1),
        TEST(Host_file_as_plugin_dir_exits_1),
        TEST(Host_refuses_plugin_file_writable_by_others),
        TEST(Host_group_writable_plugin_is_accepted_only_in_a_private_group),
        TEST(Host_refuses_plugin_folder_writable_by_others),
        TEST(Host_refuses_plugin_folder_inside_a_folder_others_may_write),
        TEST(Host_group_writable_plugin_is_refused_when_its_group_has_members_beside_the_owner),
        TEST(Host_refuses_subfolder_writable_by_others),
        TEST(Host_allow_insecure_plugins_loads_them_with_a_warning),
        TEST(Host_reports_plugin_leak_by_name_and_size),
        TEST(Host_announces_each_destroyed_entity_once_after_all_updates),
        TEST(Host_sigterm_stops_a_run_without_frame_limit_with_exit_0),
        TEST(Host_sigint_stops_a_paced_run_with_exit_0),
        TEST(Host_loads_plugin_built_by_hand_with_cc),
    };
    return cmocka_run_group_tests_name("host", tests, check_host_exists, NULL);
}
