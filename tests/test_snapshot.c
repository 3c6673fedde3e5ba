/* SPDX-License-Identifier: MIT */
/* test_snapshot.c: snapshots and the live loop, against the real ecs-host binary: a run
 * restored from a snapshot with --fixed-dt is the same run as a straight one (byte-identical
 * saves); a loop replayed 20 times saves the same world; a reload during a loop replays its
 * frames with the new code; a snapshot file that is truncated, damaged, from a future
 * version, missing a manager, holding one not loaded, or of a changed layout is refused with
 * one line and nothing else happens.
 *
 * Plugins: the demo's (transform, spin, debug_name, mesh: binary parts) from the build, and
 * the reload tests' rl (tests/plugins_reload: rl_v1 adds 1 per frame, rl_v2 10; it offers no
 * snapshot, so its part goes the JSON path).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#if !defined(ECS_HOST_PATH) || !defined(PLUGIN_DIR) || !defined(DEMO_SCENE) ||                     \
    !defined(RELOAD_PLUGIN_DIR)
#error "ECS_HOST_PATH, PLUGIN_DIR, DEMO_SCENE and RELOAD_PLUGIN_DIR must be defined"
#endif

#define MAX_ARGS 32

typedef struct snap_test {
    char *dir;
    harness_output run;
    harness_proc proc;
} snap_test;

static int setup(void **state)
{
    snap_test *t = calloc(1, sizeof *t);
    if (!t || !(t->dir = harness_make_tmpdir("ecs-test-snapshot"))) return -1;
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    snap_test *t = *state;
    harness_proc_discard(&t->proc);
    harness_output_free(&t->run);
    harness_remove_tree(t->dir);
    free(t->dir);
    free(t);
    return 0;
}

/* t->dir/name, kept until the test ends (a small leak per call is not worth the noise). */
static const char *at(const snap_test *t, const char *name)
{
    static char paths[16][4096];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, sizeof paths[0], "%s/%s", t->dir, name);
    return p;
}

/* argv for ecs-host: the fixed options, args (NULL-terminated), then the folder. */
static void make_argv(const char *argv[MAX_ARGS], const char *folder, const char *const *args)
{
    size_t k = 0;
    argv[k++] = ECS_HOST_PATH;
    argv[k++] = "--no-installed-plugins";
    argv[k++] = "--fixed-dt";
    argv[k++] = "16";
    for (size_t i = 0; args[i] && k < MAX_ARGS - 2; i++) argv[k++] = args[i];
    argv[k++] = folder;
    argv[k] = NULL;
}

/* Run ecs-host on folder with args; expect exit status `code`. */
static void host(snap_test *t, int code, const char *folder, const char *const *args)
{
    const char *argv[MAX_ARGS];
    make_argv(argv, folder, args);
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 120, argv), 0);
    if (t->run.exit_code != code)
        fail_msg("ecs-host exited %d, not %d; stderr:\n%s", t->run.exit_code, code, t->run.err);
}

#define HOST(t, code, folder, ...) host(t, code, folder, (const char *const[]){__VA_ARGS__, NULL})

static void expect_same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = harness_read_file(a, &la), *y = harness_read_file(b, &lb);
    if (!x || !y || la != lb || memcmp(x, y, la) != 0)
        fail_msg("%s (%zu bytes) and %s (%zu bytes) differ:\n%.400s\n---\n%.400s", a, x ? la : 0, b,
                 y ? lb : 0, x ? x : "(none)", y ? y : "(none)");
    free(x), free(y);
}

static bool same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = harness_read_file(a, &la), *y = harness_read_file(b, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x), free(y);
    return same;
}

/* A folder t->dir/name holding the given plugin files (pairs: source path, name there). */
static const char *folder(snap_test *t, const char *name, const char *const *files)
{
    const char *dir = at(t, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    for (size_t i = 0; files[i]; i += 2) {
        char *dst = harness_join(dir, files[i + 1]);
        if (harness_copy_file(files[i], dst, 0755) != 0)
            fail_msg("copy %s -> %s: %s", files[i], dst, strerror(errno));
        free(dst);
    }
    return dir;
}

#define SO(p) PLUGIN_DIR "/" p "/" p ".so"
#define DEMO_FILES                                                                                 \
    SO("transform"), "transform.so", SO("debug_name"), "debug_name.so", SO("mesh"), "mesh.so"

#define RL_SCENE                                                                                   \
    "{\"version\": 1, \"entities\": [{\"id\": \"a\", \"rl\": 0}, {\"id\": \"b\", \"rl\": 500}]}\n"

/* --fixed-dt 16 --frames 100 --snapshot F, then --restore F --frames 100 --save B: the same
 * bytes as --frames 200 --save A (and A is not the world after 100 frames: spin turned). */
static void Snapshot_restored_run_equals_a_straight_run(void **state)
{
    snap_test *t = *state;
    const char *f = at(t, "f.snap"), *a = at(t, "a.json"), *b = at(t, "b.json");
    const char *s100 = at(t, "s100.json");
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "100", "--scene", DEMO_SCENE, "--snapshot", f,
         "--save", s100);
    assert_non_null(strstr(t->run.err, "the world after frame 100"));
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--restore", f, "--frames", "100", "--save", b);
    assert_non_null(strstr(t->run.err, "restored, frame 100 next"));
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "200", "--scene", DEMO_SCENE, "--save", a);
    expect_same_file(a, b);
    if (same_file(a, s100)) fail_msg("the world after 200 frames is the one after 100: no spin?");
}

/* Two runs from one snapshot with the same code and --fixed-dt save the same bytes; so do
 * two snapshots taken at the same frame of the same run. */
static void Snapshot_two_runs_from_one_snapshot_save_the_same_bytes(void **state)
{
    snap_test *t = *state;
    const char *f = at(t, "f.snap"), *g = at(t, "g.snap");
    const char *x = at(t, "x.json"), *y = at(t, "y.json");
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "37", "--scene", DEMO_SCENE, "--snapshot", f);
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--restore", f, "--frames", "55", "--save", x,
         "--snapshot", g);
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--restore", f, "--frames", "55", "--save", y);
    expect_same_file(x, y);
    const char *h = at(t, "h.snap");
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--restore", f, "--frames", "55", "--snapshot", h);
    expect_same_file(g, h);
}

/* A plugin drawing from frame->seed: a run restored from a snapshot draws what a straight
 * run draws (the session's seed is in the snapshot), and another --seed draws otherwise. */
static void Snapshot_keeps_the_seed_and_frames_draw_the_same_numbers(void **state)
{
    snap_test *t = *state;
    const char *scene = at(t, "rl.json"), *f = at(t, "f.snap");
    const char *a = at(t, "a.json"), *b = at(t, "b.json"), *c = at(t, "c.json");
    assert_int_equal(harness_write_file(scene, RL_SCENE, 0644), 0);
    const char *dir =
        folder(t, "r", (const char *const[]){RELOAD_PLUGIN_DIR "/rl_random.so", "rl.so", NULL});
    HOST(t, 0, dir, "--seed", "7", "--frames", "30", "--scene", scene, "--snapshot", f);
    HOST(t, 0, dir, "--restore", f, "--frames", "30", "--save", b); /* no --seed: the file's */
    HOST(t, 0, dir, "--seed", "7", "--frames", "60", "--scene", scene, "--save", a);
    expect_same_file(a, b);
    HOST(t, 0, dir, "--seed", "8", "--frames", "60", "--scene", scene, "--save", c);
    if (same_file(a, c)) fail_msg("seeds 7 and 8 drew the same numbers");
}

/* A plugin's own state (spawner's counter of its updates and its seed, ecs_host.plugin_state)
 * is in the snapshot: a restored run saves the counter a straight run does. */
static void Snapshot_keeps_the_plugins_own_state(void **state)
{
    snap_test *t = *state;
    const char *f = at(t, "f.snap"), *a = at(t, "a.json"), *b = at(t, "b.json");
    const char *dir =
        folder(t, "sp",
               (const char *const[]){RELOAD_PLUGIN_DIR "/physics_v1.so", "physics.so",
                                     RELOAD_PLUGIN_DIR "/spawner_v1.so", "spawner.so", NULL});
    HOST(t, 0, dir, "--frames", "12", "--snapshot", f);
    HOST(t, 0, dir, "--restore", f, "--frames", "8", "--save", b);
    assert_non_null(strstr(t->run.err, "state read: counter 12"));
    HOST(t, 0, dir, "--frames", "20", "--save", a);
    expect_same_file(a, b);
    char *text = harness_read_file(b, NULL);
    if (!text || !strstr(text, "\"counter\":\t20"))
        fail_msg("no counter 20 in the saved plugin state:\n%s", text ? text : "(none)");
    free(text);
}

/* --loop 100:200 for 20 passes saves the world after frame 200, as a straight run does; so
 * does a loop stopped after 7 passes. */
static void Loop_replayed_20_times_saves_the_same_world(void **state)
{
    snap_test *t = *state;
    const char *a = at(t, "a.json"), *l20 = at(t, "l20.json"), *l7 = at(t, "l7.json");
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "200", "--scene", DEMO_SCENE, "--save", a);
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "2100", "--loop", "100:200", "--scene",
         DEMO_SCENE, "--save", l20);
    assert_non_null(strstr(t->run.err, "looping frames 100-200"));
    expect_same_file(a, l20);
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "800", "--loop", "100:200", "--scene",
         DEMO_SCENE, "--save", l7);
    expect_same_file(a, l7);
}

/* The frames the host says it ran ("stopping after N frames (signal)"), or -1. */
static long frames_said(const char *err)
{
    const char *p = strstr(err, "stopping after ");
    return p ? strtol(p + strlen("stopping after "), NULL, 10) : -1;
}

/* A reload during --loop 10:60 replays the loop with the new code: the log says "replaying
 * frames 10-60 with rl 2", and the world saved when the host stops (at frame N) is what the
 * new build makes of the loop's start in N - 10 frames. */
static void Loop_reload_replays_the_same_frames_with_the_new_code(void **state)
{
    snap_test *t = *state;
    const char *scene = at(t, "rl.json"), *s10 = at(t, "s10.snap");
    const char *live = at(t, "live.json"), *want = at(t, "want.json");
    assert_int_equal(harness_write_file(scene, RL_SCENE, 0644), 0);
    const char *v1 =
        folder(t, "v1", (const char *const[]){RELOAD_PLUGIN_DIR "/rl_v1.so", "rl.so", NULL});
    const char *v2 =
        folder(t, "v2", (const char *const[]){RELOAD_PLUGIN_DIR "/rl_v2.so", "rl.so", NULL});
    const char *w =
        folder(t, "w", (const char *const[]){RELOAD_PLUGIN_DIR "/rl_v1.so", "rl.so", NULL});
    HOST(t, 0, v1, "--fps", "0", "--frames", "10", "--scene", scene, "--snapshot", s10);
    const char *argv[MAX_ARGS];
    make_argv(argv, w,
              (const char *const[]){"--watch", "--fps", "200", "--loop", "10:60", "--scene", scene,
                                    "--save", live, NULL});
    assert_int_equal(harness_start(&t->proc, argv), 0);
    assert_true(harness_wait_output(&t->proc, "looping frames 10-60", 60));
    char *tmp = harness_join(w, ".rl.so.tmp"), *dst = harness_join(w, "rl.so");
    assert_int_equal(harness_copy_file(RELOAD_PLUGIN_DIR "/rl_v2.so", tmp, 0755), 0);
    assert_int_equal(rename(tmp, dst), 0); /* a new inode, as lld writes it */
    free(tmp), free(dst);
    if (!harness_wait_output(&t->proc, "replaying frames 10-60 with rl 2", 60))
        fail_msg("no replay said; stderr:\n%s", t->proc.result.err);
    assert_int_equal(kill(t->proc.pid, SIGTERM), 0);
    assert_int_equal(harness_finish(&t->proc, 60), 0);
    assert_int_equal(t->proc.result.exit_code, 0);
    long n = frames_said(t->proc.result.err);
    if (n < 10 || n > 60)
        fail_msg("stopped at frame %ld, not inside the loop:\n%s", n, t->proc.result.err);
    char frames[32];
    snprintf(frames, sizeof frames, "%ld", n - 10);
    HOST(t, 0, v2, "--fps", "0", "--restore", s10, "--frames", frames, "--save", want);
    expect_same_file(want, live);
}

/* A reload that changes a manager's layout during a loop (transform built with another
 * STATE_LAYOUT: its snapshot bytes change version) goes through JSON, as any migration: the
 * old code restores the loop's start, the components migrate, the loop goes on with the new
 * build. transform_layout3 computes as transform does, so the world saved when the host
 * stops at frame N is a straight run's after N frames. */
static void Loop_reload_that_changes_a_layout_migrates_and_replays(void **state)
{
    snap_test *t = *state;
    const char *live = at(t, "live.json"), *want = at(t, "want.json");
    const char *w = folder(t, "w", (const char *const[]){DEMO_FILES, SO("spin"), "spin.so", NULL});
    const char *argv[MAX_ARGS];
    make_argv(argv, w,
              (const char *const[]){"--watch", "--fps", "200", "--loop", "10:60", "--scene",
                                    DEMO_SCENE, "--save", live, NULL});
    assert_int_equal(harness_start(&t->proc, argv), 0);
    assert_true(harness_wait_output(&t->proc, "looping frames 10-60", 60));
    char *tmp = harness_join(w, ".transform.so.tmp"), *dst = harness_join(w, "transform.so");
    assert_int_equal(harness_copy_file(RELOAD_PLUGIN_DIR "/transform_layout3.so", tmp, 0755), 0);
    assert_int_equal(rename(tmp, dst), 0);
    free(tmp), free(dst);
    if (!harness_wait_output(&t->proc, "replaying frames 10-60 with transform", 60))
        fail_msg("no replay said; stderr:\n%s", t->proc.result.err);
    assert_int_equal(kill(t->proc.pid, SIGTERM), 0);
    assert_int_equal(harness_finish(&t->proc, 60), 0);
    assert_int_equal(t->proc.result.exit_code, 0);
    if (!strstr(t->proc.result.err, "migrat") || strstr(t->proc.result.err, "[error]"))
        fail_msg("no migration, or an error:\n%s", t->proc.result.err);
    long n = frames_said(t->proc.result.err);
    if (n < 10 || n > 60) fail_msg("stopped at frame %ld, not inside the loop", n);
    char frames[32];
    snprintf(frames, sizeof frames, "%ld", n);
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", frames, "--scene", DEMO_SCENE, "--save", want);
    expect_same_file(want, live);
}

/* Write bytes[0..n) to path. */
static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* --restore bad with --save out: exit 1, one error line holding `reason`, no save made. */
static void expect_refused(snap_test *t, const char *folder_, const char *bad, const char *reason)
{
    const char *out = at(t, "never.json");
    HOST(t, 1, folder_, "--restore", bad, "--frames", "1", "--save", out);
    int errors = 0;
    for (const char *p = t->run.err; (p = strstr(p, "[error]")); p++) errors++;
    if (errors != 1 || !strstr(t->run.err, reason) || !strstr(t->run.err, "world untouched"))
        fail_msg("wanted one error line saying '%s', got:\n%s", reason, t->run.err);
    assert_int_equal(access(out, F_OK), -1);
}

/* A snapshot file cut short, with a byte changed, or from a future format version: refused,
 * one line each, nothing saved. */
static void Snapshot_damaged_file_is_refused_with_one_line(void **state)
{
    snap_test *t = *state;
    const char *f = at(t, "f.snap"), *bad = at(t, "bad.snap");
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "5", "--scene", DEMO_SCENE, "--snapshot", f);
    size_t n;
    char *bytes = harness_read_file(f, &n);
    assert_non_null(bytes);
    write_bytes(bad, bytes, n / 2);
    expect_refused(t, PLUGIN_DIR, bad, "truncated");
    bytes[n / 2] ^= 0x40;
    write_bytes(bad, bytes, n);
    expect_refused(t, PLUGIN_DIR, bad, "checksum mismatch");
    bytes[n / 2] ^= 0x40;
    uint32_t future = 2;
    memcpy(bytes + 8, &future, sizeof future); /* the format version, after the magic */
    write_bytes(bad, bytes, n);
    expect_refused(t, PLUGIN_DIR, bad, "format version 2 is newer");
    write_bytes(bad, "{\"version\": 1}", 14);
    expect_refused(t, PLUGIN_DIR, bad, "not an ecs-host snapshot");
    free(bytes);
}

/* A snapshot naming a manager that is not loaded, one lacking a loaded manager, and one
 * whose manager changed its layout (transform built with another STATE_LAYOUT): refused,
 * naming the manager. */
static void Snapshot_of_other_managers_is_refused_naming_them(void **state)
{
    snap_test *t = *state;
    const char *f = at(t, "f.snap"), *g = at(t, "g.snap");
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "5", "--scene", DEMO_SCENE, "--snapshot", f);
    const char *nospin = folder(t, "nospin", (const char *const[]){DEMO_FILES, NULL});
    expect_refused(t, nospin, f, "manager 'spin' is in the snapshot but not loaded");
    HOST(t, 0, nospin, "--frames", "5", "--scene", DEMO_SCENE, "--snapshot", g);
    expect_refused(t, PLUGIN_DIR, g, "manager 'spin' (plugin 'spin') is loaded but not in the");
    const char *l3 = folder(t, "l3",
                            (const char *const[]){RELOAD_PLUGIN_DIR "/transform_layout3.so",
                                                  "transform.so", SO("debug_name"), "debug_name.so",
                                                  SO("mesh"), "mesh.so", NULL});
    expect_refused(t, l3, g, "manager 'transform': layout version 2 in the snapshot, 3 in the");
}

/* The options' mistakes are usage errors (exit 2) naming the option. */
static void Snapshot_options_refuse_bad_values(void **state)
{
    snap_test *t = *state;
    HOST(t, 2, PLUGIN_DIR, "--loop", "20:10");
    assert_non_null(strstr(t->run.err, "--loop needs A:B"));
    HOST(t, 2, PLUGIN_DIR, "--loop", "x");
    HOST(t, 2, PLUGIN_DIR, "--fixed-dt", "0");
    assert_non_null(strstr(t->run.err, "--fixed-dt needs"));
    HOST(t, 2, PLUGIN_DIR, "--restore", "a", "--scene", DEMO_SCENE);
    assert_non_null(strstr(t->run.err, "give one"));
    HOST(t, 2, PLUGIN_DIR, "--frames", "1", "--snapshot", t->dir);
    assert_non_null(strstr(t->run.err, "--snapshot"));
    HOST(t, 1, PLUGIN_DIR, "--frames", "1", "--restore", at(t, "none.snap"));
    assert_non_null(strstr(t->run.err, "cannot read it"));
    const char *f = at(t, "f.snap"); /* a loop whose start is before the restored frame */
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--frames", "20", "--scene", DEMO_SCENE, "--snapshot", f);
    HOST(t, 0, PLUGIN_DIR, "--fps", "0", "--restore", f, "--frames", "5", "--loop", "10:30");
    assert_non_null(
        strstr(t->run.err, "the world is at frame 20 already, past the loop's start 10"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(Snapshot_restored_run_equals_a_straight_run),
        T(Snapshot_two_runs_from_one_snapshot_save_the_same_bytes),
        T(Snapshot_keeps_the_seed_and_frames_draw_the_same_numbers),
        T(Snapshot_keeps_the_plugins_own_state),
        T(Loop_replayed_20_times_saves_the_same_world),
        T(Loop_reload_replays_the_same_frames_with_the_new_code),
        T(Loop_reload_that_changes_a_layout_migrates_and_replays),
        T(Snapshot_damaged_file_is_refused_with_one_line),
        T(Snapshot_of_other_managers_is_refused_naming_them),
        T(Snapshot_options_refuse_bad_values),
    };
    harness_select_tests();
    return cmocka_run_group_tests_name("snapshot", tests, NULL, NULL);
}
