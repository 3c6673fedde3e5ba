/* SPDX-License-Identifier: MIT */
/* test_probe.c: new plugin code runs first in a short-lived child process (host/plugin/probe.c),
 * --safe guards the host's own dlopen and entry call, and a second SIGINT/SIGTERM ends a
 * host stuck in plugin code.
 *
 * The real ecs-host runs on a folder the test owns, holding pb.so (a good build of
 * tests/plugins_probe/probee.c: manager "pb" adds 1 to every value per update and logs
 * its update count at unload) and a bad build beside it or copied over it. Each bad file
 * must be refused with one line saying why, the host must go on, and the saved scene
 * must hold every pb value as the scene had it plus the updates pb ran (nothing lost).
 * Every constructor run appends a line to $PB_RUNS, which shows where code ran.
 *
 * A few cases call host_probe_file() in-process, with the built ecs-host as the probe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "probe.h"

#if !defined(ECS_HOST_PATH) || !defined(PROBE_PLUGIN_DIR)
#error "tests/meson.build defines ECS_HOST_PATH and PROBE_PLUGIN_DIR"
#endif

#define WAIT     20.0 /* seconds to wait for a log line or an exit (hangs take 2 s each) */
#define ENTITIES 4    /* scene entities e1..e4: pb 1000, 2000, ...; hang 10, 20, ... */
#define MAX_ARGS 32

/* ---- Fixture: a temp root (0700) with the plugin folder, the scene and the output ---- */

typedef struct fixture {
    char *root, *dir;         /* root/plugins: the PLUGIN_DIR */
    char *scene, *out, *runs; /* --scene, --save, $PB_RUNS */
    char *trigger;            /* $PB_TRIGGER: its existence makes hang.so's update loop */
    char cmd[4096];
    harness_proc proc;  /* the host while it runs */
    harness_output run; /* the host once it stopped */
} fixture;

static int write_scene(const char *path)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "{\"version\": 1, \"entities\": [");
    for (int i = 1; i <= ENTITIES; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "%s\n  {\"id\": \"e%d\", \"pb\": %d, \"hang\": %d}", i > 1 ? "," : "",
                              i, 1000 * i, 10 * i);
    snprintf(text + n, sizeof text - n, "\n]}\n");
    return harness_write_file(path, text, 0600);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->proc.fd[0] = f->proc.fd[1] = -1;
    f->root = harness_make_tmpdir("ecs-probe-test");
    if (f->root) {
        f->dir = harness_join(f->root, "plugins");
        f->scene = harness_join(f->root, "scene.json");
        f->out = harness_join(f->root, "out.json");
        f->runs = harness_join(f->root, "runs.txt");
        f->trigger = harness_join(f->root, "trigger");
    }
    if (!f->trigger || !f->runs || !f->out || !f->scene || !f->dir || mkdir(f->dir, 0700) != 0 ||
        write_scene(f->scene) != 0) {
        print_error("cannot make a temporary plugin folder: %s\n", strerror(errno));
        return -1;
    }
    setenv("PB_RUNS", f->runs, 1); /* the host and its probes inherit both */
    setenv("PB_TRIGGER", f->trigger, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    harness_proc_discard(&f->proc);
    harness_output_free(&f->run);
    if (f->root && harness_remove_tree(f->root) != 0)
        print_error("could not remove %s: %s\n", f->root, strerror(errno));
    free(f->root), free(f->dir), free(f->scene), free(f->out), free(f->runs), free(f->trigger);
    free(f);
    return 0;
}

/* ---- Output ---- */

static void dump(const fixture *f)
{
    const harness_output *r = f->proc.pid > 0 ? &f->proc.result : &f->run;
    fprintf(stderr, "command: %s\n--- stdout ---\n%s--- stderr ---\n%s---\n", f->cmd,
            r->out ? r->out : "", r->err ? r->err : "");
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *at = text ? strstr(text, needle) : NULL; at; at = strstr(at + 1, needle)) n++;
    return n;
}

/* Fail unless needle appears `want` times in the finished host's stderr. */
static void check_count(const fixture *f, const char *needle, int want, const char *file, int line)
{
    int n = count_of(f->run.err, needle);
    if (n == want) return;
    fprintf(stderr, "'%s' appears %d times in stderr, expected %d\n", needle, n, want);
    dump(f);
    _fail(file, line);
}

#define EXPECT_ONCE(f, needle)   check_count(f, needle, 1, __FILE__, __LINE__)
#define EXPECT_ABSENT(f, needle) check_count(f, needle, 0, __FILE__, __LINE__)

/* Fail unless the finished host exited with `code` (not by a signal, not timed out). */
static void check_exit(const fixture *f, int code, const char *file, int line)
{
    if (!f->run.timed_out && f->run.term_signal == 0 && f->run.exit_code == code) return;
    fprintf(stderr, "exit code %d (expected %d), signal %d%s\n", f->run.exit_code, code,
            f->run.term_signal, f->run.timed_out ? ", killed after the timeout" : "");
    dump(f);
    _fail(file, line);
}

#define EXPECT_EXIT(f, code) check_exit(f, code, __FILE__, __LINE__)

/* The number after `prefix` in the finished host's stderr; -1 when absent. */
static long long number_after(const fixture *f, const char *prefix)
{
    const char *at = f->run.err ? strstr(f->run.err, prefix) : NULL;
    return at ? strtoll(at + strlen(prefix), NULL, 10) : -1;
}

/* The saved value of manager `key` for every entity e1..eN into v[1..N] (-1: missing). */
static void saved_values(const fixture *f, const char *key, long long v[ENTITIES + 1])
{
    for (int i = 0; i <= ENTITIES; i++) v[i] = -1;
    char *text = harness_read_file(f->out, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    const cJSON *e, *list = cJSON_GetObjectItemCaseSensitive(root, "entities");
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(e, key);
        int k;
        if (cJSON_IsString(id) && sscanf(id->valuestring, "e%d", &k) == 1 && k >= 1 &&
            k <= ENTITIES && cJSON_IsNumber(val))
            v[k] = (long long)val->valuedouble;
    }
    cJSON_Delete(root);
    free(text);
}

/* Fail unless the saved scene holds pb == 1000 k + the updates pb 1 logged at unload. */
static void check_pb_saved(const fixture *f, const char *file, int line)
{
    long long updates = number_after(f, "pb 1 unload: "), v[ENTITIES + 1];
    saved_values(f, "pb", v);
    for (int k = 1; updates >= 0 && k <= ENTITIES; k++) {
        if (v[k] == 1000 * k + updates) continue;
        fprintf(stderr, "%s: e%d: pb is %lld, expected %d + %lld updates\n", f->out, k, v[k],
                1000 * k, updates);
        updates = -1;
    }
    if (updates >= 0) return;
    if (number_after(f, "pb 1 unload: ") < 0) fprintf(stderr, "no 'pb 1 unload' line\n");
    dump(f);
    _fail(file, line);
}

#define EXPECT_PB_SAVED(f) check_pb_saved(f, __FILE__, __LINE__)

/* ---- The plugin folder and the host ---- */

/* Copy the built variant (PROBE_PLUGIN_DIR/variant.so) into the folder as `as`. */
static void put(const fixture *f, const char *variant, const char *as)
{
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/%s.so", PROBE_PLUGIN_DIR, variant);
    snprintf(dst, sizeof dst, "%s/%s", f->dir, as);
    if (harness_copy_file(src, dst, 0755) == 0) return;
    print_error("cannot copy %s to %s: %s\n", src, dst, strerror(errno));
    fail();
}

/* argv: ecs-host, the NULL-terminated args, then the folder; also into f->cmd. */
static void make_argv(fixture *f, const char *argv[MAX_ARGS], const char *const *args)
{
    size_t n = 0, used = 0;
    argv[n++] = ECS_HOST_PATH;
    for (; *args && n < MAX_ARGS - 2; args++) argv[n++] = *args;
    argv[n++] = f->dir;
    argv[n] = NULL;
    for (size_t i = 0; i < n && used < sizeof f->cmd; i++)
        used +=
            (size_t)snprintf(f->cmd + used, sizeof f->cmd - used, "%s%s", i ? " " : "", argv[i]);
}

/* Run the host to its end (args NULL-terminated, the folder added last) into f->run. */
static void run(fixture *f, const char *const *args)
{
    const char *argv[MAX_ARGS];
    make_argv(f, argv, args);
    int rc = harness_run(&f->run, WAIT, argv);
    if (rc == 0) return;
    print_error("cannot run %s: %s\n", f->cmd, strerror(rc));
    fail();
}

#define RUN(f, ...) run(f, (const char *const[]){__VA_ARGS__, NULL})

/* Start the host in the background and wait until `ready` is in its log. */
static void start(fixture *f, const char *ready, const char *const *args)
{
    const char *argv[MAX_ARGS];
    make_argv(f, argv, args);
    int rc = harness_start(&f->proc, argv);
    if (rc != 0) {
        print_error("cannot run %s: %s\n", f->cmd, strerror(rc));
        fail();
    }
    if (harness_wait_output(&f->proc, ready, WAIT)) return;
    fprintf(stderr, "'%s' did not come within %.0f s\n", ready, WAIT);
    dump(f);
    fail();
}

#define START(f, ready, ...) start(f, ready, (const char *const[]){__VA_ARGS__, NULL})

/* Wait until needle appears `times` times in the running host's stderr. */
static void wait_times(fixture *f, const char *needle, int times, const char *file, int line)
{
    for (int i = 0; i < (int)(WAIT * 100); i++) {
        if (count_of(f->proc.result.err, needle) >= times) return;
        harness_wait_output(&f->proc, "\x01 never printed", 0.01);
    }
    fprintf(stderr, "'%s' did not appear %d time(s) within %.0f s\n", needle, times, WAIT);
    dump(f);
    _fail(file, line);
}

#define WAIT_NTH(f, needle, n) wait_times(f, needle, n, __FILE__, __LINE__)

/* Send sig to the running host; then (when finish) wait for its end into f->run. */
static void signal_host(fixture *f, int sig, bool finish)
{
    if (f->proc.pid <= 0 || kill(f->proc.pid, sig) != 0) {
        dump(f);
        fail();
    }
    if (!finish) return;
    harness_finish(&f->proc, WAIT);
    harness_output_free(&f->run);
    f->run = f->proc.result;
    memset(&f->proc.result, 0, sizeof f->proc.result);
}

/* The lines of $PB_RUNS: one per constructor run. */
static int constructor_runs(const fixture *f)
{
    char *text = harness_read_file(f->runs, NULL);
    int n = count_of(text, "constructor ");
    free(text);
    return n;
}

/* ---- At start: each bad build beside a good one ---- */

typedef struct bad_case {
    const char *variant; /* tests/plugins_probe/<variant>.so, copied in as bad.so */
    const char *reason;  /* the refusal's words after "bad.so: skipped: " */
    bool safe;           /* needs --safe: it misbehaves only in the host, after the probe */
} bad_case;

static const bad_case bad_cases[] = {
    {"pb_ctor_segv", "its constructor crashed with SIGSEGV", false},
    {"pb_ctor_abort", "its constructor crashed with SIGABRT (abort)", false},
    {"pb_ctor_exit", "exit(3) while loading", false},
    {"pb_ctor_hang", "did not finish loading within 2 s", false},
    {"pb_ctor_garbage", "the probe's report is garbled", false},
    {"pb_entry_segv", "its entry function ecs_plugin_entry() crashed with SIGSEGV", false},
    {"pb_entry_hang", "its entry function ecs_plugin_entry() did not return within 2 s", false},
    {"pb_ctor_segv_second", "its constructor crashed with SIGSEGV in the host", true},
    {"pb_entry_segv_second",
     "its entry function ecs_plugin_entry() crashed with SIGSEGV in the host", true},
};

/* Each bad build, found at start beside pb.so: refused with its one line, pb loads and
 * runs, its values are saved whole, the host exits 0. */
static void probe_refuses_each_bad_build_at_start(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        const bad_case *c = &bad_cases[i];
        char line[512];
        unlink(f->out);
        unlink(f->runs);
        put(f, c->variant, "bad.so");
        put(f, "pb_good", "pb.so");
        if (c->safe)
            RUN(f, "--frames", "5", "--fps", "0", "--scene", f->scene, "--save", f->out, "--safe");
        else
            RUN(f, "--frames", "5", "--fps", "0", "--scene", f->scene, "--save", f->out);
        fprintf(stderr, "# %s\n", c->variant);
        snprintf(line, sizeof line, "bad.so: skipped: %s", c->reason);
        EXPECT_ONCE(f, line);
        EXPECT_ONCE(f, "bad.so");    /* that one line, and nothing else about it */
        EXPECT_ONCE(f, "loaded pb"); /* the good one beside it */
        EXPECT_EXIT(f, 0);
        EXPECT_PB_SAVED(f);
        assert_int_equal(number_after(f, "pb 1 unload: "), 5);
        harness_output_free(&f->run);
    }
}

/* --list shows the refusal too, and --strict counts it. */
static void probe_refusal_is_listed_and_strict_counts_it(void **state)
{
    fixture *f = *state;
    put(f, "pb_ctor_exit", "bad.so");
    put(f, "pb_good", "pb.so");
    RUN(f, "--list");
    EXPECT_EXIT(f, 0);
    if (!strstr(f->run.out, "status: does not load: exit(3) while loading")) {
        dump(f);
        fail();
    }
    harness_output_free(&f->run);
    RUN(f, "--strict", "--frames", "1");
    EXPECT_EXIT(f, 1);
    EXPECT_ONCE(f, "--strict: 1 bad plugin(s)");
}

/* Every constructor runs twice: once in the probe (another process), once in the host. */
static void probe_runs_constructors_in_a_child_then_in_the_host(void **state)
{
    fixture *f = *state;
    put(f, "pb_good", "pb.so");
    RUN(f, "--frames", "1");
    EXPECT_EXIT(f, 0);
    EXPECT_ONCE(f, "pb 1 load: constructor run 2");
    assert_int_equal(constructor_runs(f), 2);
}

/* --probe-timeout 0 turns the probe off: a constructor's exit(3) then ends the host. */
static void probe_timeout_zero_turns_the_probe_off(void **state)
{
    fixture *f = *state;
    put(f, "pb_ctor_exit", "bad.so");
    put(f, "pb_good", "pb.so");
    RUN(f, "--probe-timeout", "0", "--frames", "1");
    EXPECT_EXIT(f, 3);
    assert_int_equal(constructor_runs(f), 1);
    harness_output_free(&f->run);
    RUN(f, "--probe-timeout", "0.5", "--frames", "1");
    EXPECT_EXIT(f, 0);
    EXPECT_ONCE(f, "bad.so: skipped: exit(3) while loading");
    harness_output_free(&f->run);
    RUN(f, "--probe-timeout", "-1", "--frames", "1");
    EXPECT_EXIT(f, 2);
}

/* ---- Under --watch: bad builds copied over the running one ---- */

static void probe_refuses_bad_builds_under_watch(void **state)
{
    fixture *f = *state;
    static const char *const variants[] = {"pb_ctor_segv", "pb_ctor_exit", "pb_ctor_hang",
                                           "pb_entry_segv", "pb_ctor_garbage"};
    static const char *const reasons[] = {
        "its constructor crashed with SIGSEGV", "exit(3) while loading",
        "did not finish loading within 2 s",
        "its entry function ecs_plugin_entry() crashed with SIGSEGV",
        "the probe's report is garbled"};
    put(f, "pb_good", "pb.so");
    START(f, "loaded pb", "--watch", "--fps", "100", "--reload-quiet", "50", "--scene", f->scene,
          "--save", f->out);
    for (int i = 0; i < 5; i++) {
        put(f, variants[i], "pb.so"); /* cp over it: the same inode, rewritten */
        WAIT_NTH(f, "new build refused, version 1 keeps running", i + 1);
        char line[512];
        snprintf(line, sizeof line, "version 1 keeps running: %s", reasons[i]);
        WAIT_NTH(f, line, 1);
    }
    signal_host(f, SIGTERM, true);
    EXPECT_EXIT(f, 0);
    EXPECT_ONCE(f, "pb 1 load");
    EXPECT_ABSENT(f, "bad 1 load");
    EXPECT_PB_SAVED(f);
    if (number_after(f, "pb 1 unload: ") != number_after(f, "stopping after ")) {
        fprintf(stderr, "pb did not run every frame\n");
        dump(f);
        fail();
    }
}

/* ---- What the child is given, and its deadline ---- */

/* One line of $PB_RUNS: what a constructor run saw of its process. */
typedef struct run_line {
    int pid, pgid;
    char in[16], fds[256], ignored[256], blocked[256];
} run_line;

/* The k-th line (from 0) of $PB_RUNS into *l; false when there is no such line. */
static bool run_line_of(const fixture *f, int k, run_line *l)
{
    char *text = harness_read_file(f->runs, NULL), *at = text;
    for (int i = 0; at && i < k; i++) at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
    bool ok = at && sscanf(at,
                           "constructor %d pgid %d stdin %15s fds %255s ignored %255s "
                           "blocked %255s",
                           &l->pid, &l->pgid, l->in, l->fds, l->ignored, l->blocked) == 6;
    free(text);
    return ok;
}

/* Is n one of the comma-separated numbers of list? */
static bool listed(const char *list, int n)
{
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (atoi(p) == n) return true;
    return false;
}

/* The probe's child has what the README promises whatever the host was given: its own
 * process group (a Ctrl-C reaches the host only), stdin /dev/null, no open file but 0-2
 * and the report pipe (3), every signal at its default and none blocked. The host runs
 * with a file as stdin, file descriptor 7 open, SIGHUP, SIGPIPE and SIGUSR1 ignored and
 * SIGUSR2 and SIGWINCH blocked (sh and env set them up); pb's constructor writes what it
 * finds, once in the probe and once in the host (whose line shows the set-up worked). */
static void probe_child_gets_none_of_what_the_host_was_given(void **state)
{
    fixture *f = *state;
    put(f, "pb_good", "pb.so");
    const char *argv[] = {"sh",
                          "-c",
                          "exec 7<\"$0\" <\"$0\" env --ignore-signal=HUP,PIPE,USR1 "
                          "--block-signal=USR2,WINCH \"$@\"",
                          f->scene,
                          ECS_HOST_PATH,
                          "--frames",
                          "1",
                          f->dir,
                          NULL};
    snprintf(f->cmd, sizeof f->cmd, "%s -c '%s' ...", argv[0], argv[2]);
    assert_int_equal(harness_run(&f->run, WAIT, argv), 0);
    EXPECT_EXIT(f, 0);
    run_line probe, host;
    if (!run_line_of(f, 0, &probe) || !run_line_of(f, 1, &host)) {
        char *text = harness_read_file(f->runs, NULL);
        fail_msg("two constructor lines expected in $PB_RUNS: %s", text ? text : "(none)");
    }
    if (strcmp(host.in, "other") || !listed(host.fds, 7) || !listed(host.ignored, SIGUSR1) ||
        !listed(host.blocked, SIGUSR2)) /* else this test proves nothing */
        fail_msg("the host was not given what the test set up: stdin %s, fds %s, ignored %s, "
                 "blocked %s",
                 host.in, host.fds, host.ignored, host.blocked);
    if (probe.pgid != probe.pid || probe.pgid == host.pgid || strcmp(probe.in, "null") ||
        strcmp(probe.fds, "0,1,2,3") || strcmp(probe.ignored, "-") || strcmp(probe.blocked, "-"))
        fail_msg("the probe (pid %d) has: process group %d (the host's %d), stdin %s, fds %s, "
                 "ignored %s, blocked %s; expected its own group, stdin null, fds 0,1,2,3, "
                 "none ignored or blocked",
                 probe.pid, probe.pgid, host.pgid, probe.in, probe.fds, probe.ignored,
                 probe.blocked);
}

/* A probe that hangs where its own alarm cannot end it (SIGALRM blocked, then a loop
 * forever) is killed by the host at the deadline: the host refuses the file with its line
 * and goes on to its end. Were it not killed, the host would wait for it forever: the
 * bound here (WAIT, 20 s) is generous against the 0.3 s limit. */
static void probe_hung_past_its_deadline_is_killed(void **state)
{
    fixture *f = *state;
    put(f, "pb_entry_hang_noalarm", "bad.so");
    put(f, "pb_good", "pb.so");
    RUN(f, "--probe-timeout", "0.3", "--frames", "1");
    if (f->run.timed_out) {
        dump(f);
        fail_msg("the host was still waiting for the hung probe after %.0f s", WAIT);
    }
    EXPECT_EXIT(f, 0);
    EXPECT_ONCE(f, "bad.so: skipped: its entry function ecs_plugin_entry() did not return "
                   "within 0.3 s");
    EXPECT_ONCE(f, "loaded pb");
}

/* A word of the protocol out of its turn (a constructor writing "desc" while "entry" is
 * due, or a whole "ok" line) is a garbled report, never a step taken. */
static void probe_file_refuses_protocol_words_out_of_turn(void **state)
{
    (void)state;
    static const char *const variants[] = {"pb_ctor_word_desc", "pb_ctor_word_ok"};
    static const char *const reasons[] = {"the probe's report is garbled (\"desc\" after "
                                          "\"dlopen\")",
                                          "the probe's report is garbled (\"ok pb 1 1 1\" after "
                                          "\"dlopen\")"};
    for (int i = 0; i < 2; i++) {
        host_probe_config cfg = {ECS_HOST_PATH, 5000};
        host_probe_report rep;
        char path[4096], why[512] = "";
        snprintf(path, sizeof path, "%s/%s.so", PROBE_PLUGIN_DIR, variants[i]);
        bool ok = host_probe_file(&cfg, path, &rep, why, sizeof why);
        if (ok || !strstr(why, reasons[i]))
            fail_msg("%s: %s '%s', expected '%s'", variants[i], ok ? "accepted" : "refused:", why,
                     reasons[i]);
    }
}

/* The pid of the running host's probe helper (a child of it running --probe-helper), or 0. */
static pid_t helper_of(pid_t host)
{
    DIR *d = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char path[300], stat[512], cmd[512] = "";
        int ppid = 0;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
        if (f) fclose(f);
        stat[n] = '\0';
        const char *after = strrchr(stat, ')'); /* "pid (comm) state ppid ..." */
        if (!after || sscanf(after + 1, " %*c %d", &ppid) != 1 || ppid != host) continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        f = fopen(path, "r");
        n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
        if (f) fclose(f);
        for (size_t i = 0; i < n; i++) cmd[i] = cmd[i] ? cmd[i] : ' ';
        if (strstr(cmd, "--probe-helper")) found = (pid_t)atoi(e->d_name);
    }
    if (d) closedir(d);
    return found;
}

/* The probe's helper, killed while the host runs (a tidy-up of stray processes), is
 * started again at the next build: bad builds are still refused with their lines, pb runs
 * on and every value is saved. */
static void probe_helper_killed_is_started_again(void **state)
{
    fixture *f = *state;
    put(f, "pb_good", "pb.so");
    START(f, "loaded pb", "--watch", "--fps", "100", "--reload-quiet", "50", "--scene", f->scene,
          "--save", f->out);
    pid_t helper = helper_of(f->proc.pid);
    if (!helper) {
        dump(f);
        fail_msg("no --probe-helper child of the host");
    }
    assert_int_equal(kill(helper, SIGKILL), 0);
    put(f, "pb_ctor_exit", "pb.so");
    WAIT_NTH(f, "new build refused, version 1 keeps running: exit(3) while loading", 1);
    pid_t again = helper_of(f->proc.pid);
    assert_true(again > 0 && again != helper);
    put(f, "pb_ctor_segv", "pb.so");
    WAIT_NTH(f, "new build refused, version 1 keeps running: its constructor crashed", 1);
    signal_host(f, SIGTERM, true);
    EXPECT_EXIT(f, 0);
    EXPECT_PB_SAVED(f);
}

/* ---- The second SIGINT / SIGTERM ---- */

/* The host is stuck in hang.so's update (a loop that never ends). */
static void start_and_hang(fixture *f, bool safe)
{
    put(f, "pb_good", "pb.so");
    put(f, "hang_update", "hang.so");
    if (safe)
        START(f, "loaded pb", "--fps", "100", "--scene", f->scene, "--save", f->out, "--safe");
    else
        START(f, "loaded pb", "--fps", "100", "--scene", f->scene, "--save", f->out);
    if (harness_write_file(f->trigger, "", 0600) != 0) fail();
    WAIT_NTH(f, "hang: looping forever", 1);
}

/* The first signal changes nothing visible: the host is still there, silent. */
static void expect_first_signal_waits(fixture *f, int sig)
{
    signal_host(f, sig, false);
    harness_wait_output(&f->proc, "\x01 never printed", 0.3);
    int status;
    if (waitpid(f->proc.pid, &status, WNOHANG) == 0 && !strstr(f->proc.result.err, "stopping"))
        return;
    fprintf(stderr, "the host stopped at the first signal\n");
    dump(f);
    fail();
}

/* With --safe: the second SIGINT abandons the update that never returns; the host saves
 * the world and exits 0; hang's components are saved as its code left them. */
static void probe_second_sigint_ends_a_stuck_host_and_saves_with_safe(void **state)
{
    fixture *f = *state;
    start_and_hang(f, true);
    expect_first_signal_waits(f, SIGINT);
    signal_host(f, SIGINT, true);
    EXPECT_EXIT(f, 0);
    EXPECT_ONCE(f, "plugin 'hang' (hang.so) did not return from hang and was abandoned at "
                   "the second SIGINT");
    EXPECT_PB_SAVED(f);
    long long v[ENTITIES + 1];
    saved_values(f, "hang", v);
    for (int k = 1; k <= ENTITIES; k++) { /* all moved on by the same count of updates */
        if (v[k] >= 10 * k && v[k] - 10 * k == v[1] - 10) continue;
        fprintf(stderr, "e%d: hang is %lld (scene %d, e1 %lld)\n", k, v[k], 10 * k, v[1]);
        dump(f);
        fail();
    }
}

/* Without --safe nothing can abandon plugin code: the second SIGTERM ends the host at once
 * with 128 + 15, one line saying so, and the old saved file untouched. */
static void probe_second_sigterm_ends_a_stuck_host_without_safe(void **state)
{
    fixture *f = *state;
    if (harness_write_file(f->out, "{\"old\": true}\n", 0600) != 0) fail();
    start_and_hang(f, false);
    expect_first_signal_waits(f, SIGTERM);
    signal_host(f, SIGTERM, true);
    EXPECT_EXIT(f, 128 + SIGTERM);
    EXPECT_ONCE(f, "second SIGTERM: ending now without saving");
    char *text = harness_read_file(f->out, NULL);
    assert_non_null(text);
    assert_string_equal(text, "{\"old\": true}\n");
    free(text);
}

/* Fail unless the finished host was ended by sig (not an exit, not the timeout). */
static void check_killed_by(const fixture *f, int sig, const char *file, int line)
{
    if (!f->run.timed_out && f->run.term_signal == sig) return;
    fprintf(stderr, "exit code %d, signal %d (expected signal %d)%s\n", f->run.exit_code,
            f->run.term_signal, sig, f->run.timed_out ? ", killed after the timeout" : "");
    dump(f);
    _fail(file, line);
}

#define EXPECT_KILLED_BY(f, sig) check_killed_by(f, sig, __FILE__, __LINE__)

/* A plugin's own thread writes to address 16 while its update runs. With --safe the fault
 * is never jumped from (the jump point is the main thread's): one line says a thread other
 * than the main one crashed, in plugin thr's code, at which address, and the host ends as
 * the signal does; without --safe the same. The update is never blamed. */
static void probe_fault_on_a_plugin_thread_ends_the_host_naming_the_plugin(void **state)
{
    fixture *f = *state;
    put(f, "pb_good", "pb.so");
    put(f, "thread_segv", "thr.so");
    for (int safe = 0; safe < 2; safe++) {
        if (safe)
            RUN(f, "--frames", "3", "--scene", f->scene, "--save", f->out, "--safe");
        else
            RUN(f, "--frames", "3", "--scene", f->scene, "--save", f->out);
        EXPECT_KILLED_BY(f, SIGSEGV);
        EXPECT_ONCE(f, "[error] guard: a thread other than the main one crashed with SIGSEGV, "
                       "code of plugin 'thr' (thr.so+0x");
        EXPECT_ONCE(f, "address 0x10: plugin threads are the plugin's own risk");
        EXPECT_ABSENT(f, "crashed with SIGSEGV in thr"); /* not the update's crash */
        harness_output_free(&f->run);
    }
}

/* Without --safe a crash is a crash (the process ends by the signal), but first one line
 * names the plugin, the call, where its code is and the address. */
static void probe_crash_without_safe_names_the_plugin_and_the_call(void **state)
{
    fixture *f = *state;
    put(f, "pb_good", "pb.so");
    put(f, "segv_update", "segv.so");
    RUN(f, "--frames", "3", "--scene", f->scene);
    EXPECT_KILLED_BY(f, SIGSEGV);
    EXPECT_ONCE(f, "[error] guard: plugin 'segv' crashed with SIGSEGV in update of 'segv', code "
                   "of plugin 'segv' (segv.so+0x");
    EXPECT_ONCE(f, "address 0x10: ending as the signal does");
}

/* Under --safe, a hung update is named without any signal once it has run a second, and
 * at once at the first SIGINT (what runs, for how long, what a second one does); the second
 * abandons it and the world is saved. */
static void probe_stuck_call_is_named_at_once_and_after_a_second(void **state)
{
    fixture *f = *state;
    start_and_hang(f, true);
    WAIT_NTH(f, "[warn] ecs-host: plugin 'hang' has been running update of 'hang' for 1.", 1);
    signal_host(f, SIGINT, false);
    WAIT_NTH(f, "[warn] ecs-host: stopping: plugin 'hang' has been running update of 'hang' for ",
             1);
    signal_host(f, SIGINT, true);
    EXPECT_EXIT(f, 0);
    EXPECT_ONCE(f, "[warn] ecs-host: plugin 'hang' has been running"); /* once, not per look */
    EXPECT_ONCE(f, "a second signal abandons it and the world is saved");
    EXPECT_ONCE(f, "did not return from hang and was abandoned at the second SIGINT");
    EXPECT_PB_SAVED(f);
}

/* A load() that never returns (--safe), abandoned at the second SIGINT, is said to be
 * abandoned, not to have crashed with SIGINT; the other plugin loads, runs and is saved. */
static void probe_abandoned_load_is_reported_as_abandoned(void **state)
{
    fixture *f = *state;
    put(f, "pb_good", "pb.so");
    put(f, "hang_load", "hangload.so");
    if (harness_write_file(f->trigger, "", 0600) != 0) fail();
    START(f, "hangload: load looping forever", "--fps", "100", "--scene", f->scene, "--save",
          f->out, "--safe");
    WAIT_NTH(f, "plugin 'hangload' has been running load() for 1.", 1);
    signal_host(f, SIGINT, false);
    WAIT_NTH(f, "stopping: plugin 'hangload' has been running load()", 1); /* heard: the */
    signal_host(f, SIGINT, true); /* next is a second signal, not merged with the first */
    EXPECT_EXIT(f, 0);
    EXPECT_ONCE(f, "load() was abandoned at the second SIGINT");
    EXPECT_ABSENT(f, "crashed with SIGINT");
    EXPECT_ONCE(f, "pb 1 unload:");
}

/* ---- host_probe_file in-process ---- */

static void probe_file_reports_the_description(void **state)
{
    (void)state;
    host_probe_config cfg = {ECS_HOST_PATH, 2000};
    host_probe_report rep;
    char why[512] = "";
    bool ok = host_probe_file(&cfg, PROBE_PLUGIN_DIR "/pb_good.so", &rep, why, sizeof why);
    if (!ok) print_error("refused: %s\n", why);
    assert_true(ok);
    assert_string_equal(rep.name, "pb");
    assert_int_equal(rep.state_version, 1);
    assert_true(rep.described);
}

static void probe_file_names_a_missing_probe_program(void **state)
{
    (void)state;
    host_probe_config cfg = {"/nonexistent/ecs-host", 2000};
    host_probe_report rep;
    char why[512] = "";
    assert_false(host_probe_file(&cfg, PROBE_PLUGIN_DIR "/pb_good.so", &rep, why, sizeof why));
    if (!strstr(why, "cannot run the probe /nonexistent/ecs-host")) {
        print_error("reason: %s\n", why);
        fail();
    }
}

static void probe_file_keeps_to_its_time_limit(void **state)
{
    (void)state;
    host_probe_config cfg = {ECS_HOST_PATH, 100};
    host_probe_report rep;
    char why[512] = "";
    assert_false(
        host_probe_file(&cfg, PROBE_PLUGIN_DIR "/pb_entry_hang.so", &rep, why, sizeof why));
    assert_string_equal(why, "its entry function ecs_plugin_entry() did not return within 0.1 s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(probe_file_reports_the_description),
        cmocka_unit_test(probe_file_names_a_missing_probe_program),
        cmocka_unit_test(probe_file_keeps_to_its_time_limit),
        cmocka_unit_test(probe_file_refuses_protocol_words_out_of_turn),
        cmocka_unit_test_setup_teardown(probe_refuses_each_bad_build_at_start, setup, teardown),
        cmocka_unit_test_setup_teardown(probe_refusal_is_listed_and_strict_counts_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(probe_runs_constructors_in_a_child_then_in_the_host, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(probe_timeout_zero_turns_the_probe_off, setup, teardown),
        cmocka_unit_test_setup_teardown(probe_refuses_bad_builds_under_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(probe_child_gets_none_of_what_the_host_was_given, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(probe_hung_past_its_deadline_is_killed, setup, teardown),
        cmocka_unit_test_setup_teardown(probe_helper_killed_is_started_again, setup, teardown),
        cmocka_unit_test_setup_teardown(probe_second_sigint_ends_a_stuck_host_and_saves_with_safe,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(probe_second_sigterm_ends_a_stuck_host_without_safe, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            probe_fault_on_a_plugin_thread_ends_the_host_naming_the_plugin, setup, teardown),
        cmocka_unit_test_setup_teardown(probe_crash_without_safe_names_the_plugin_and_the_call,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(probe_stuck_call_is_named_at_once_and_after_a_second, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(probe_abandoned_load_is_reported_as_abandoned, setup,
                                        teardown),
    };
    harness_select_tests();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
