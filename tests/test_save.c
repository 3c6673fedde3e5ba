/* SPDX-License-Identifier: MIT */
/* test_save.c: what a save does to what is already there, against the real ecs-host binary
 * on the demo's plugins and scene: only a regular file (or nothing) is replaced, checked
 * before the session and again at save time; the mode (and, for root, the owner) of the
 * file is kept; a symlink is written through; the temporary files of a killed save are
 * removed by the next save of that file; any file name the file system allows can be saved;
 * a failed or short write never replaces the old file; one file never serves two roles; a
 * plugin that writes what a load refuses fails the save, naming it and the entity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#if !defined(ECS_HOST_PATH) || !defined(PLUGIN_DIR) || !defined(DEMO_SCENE) ||                     \
    !defined(TEST_PLUGIN_DIR) || !defined(GEN_SCENE_PATH)
#error "ECS_HOST_PATH, PLUGIN_DIR, DEMO_SCENE, TEST_PLUGIN_DIR and GEN_SCENE_PATH must be defined"
#endif

#define OLD_TEXT "{\"old\": true}\n"

typedef struct save_test {
    char *dir;
    harness_output run;
} save_test;

static int setup(void **state)
{
    save_test *t = calloc(1, sizeof *t);
    if (!t || !(t->dir = harness_make_tmpdir("ecs-test-save"))) return -1;
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    save_test *t = *state;
    harness_output_free(&t->run);
    harness_remove_tree(t->dir);
    free(t->dir);
    free(t);
    return 0;
}

static char *in_dir(const save_test *t, const char *name)
{
    return harness_join(t->dir, name);
}

/* ecs-host --frames 1 --scene DEMO [extra...] PLUGIN_DIR. */
static void run(save_test *t, const char *const *extra)
{
    const char *argv[24] = {ECS_HOST_PATH, "--frames", "1", "--scene", DEMO_SCENE};
    size_t k = 5;
    for (size_t i = 0; extra && extra[i] && k < 22; i++) argv[k++] = extra[i];
    argv[k++] = PLUGIN_DIR;
    argv[k] = NULL;
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 60, argv), 0);
}

static int error_lines(const char *err)
{
    int n = 0;
    for (const char *p = err; (p = strstr(p, "[error]")); p++) n++;
    return n;
}

static void expect_file(const char *path, const char *text)
{
    char *got = harness_read_file(path, NULL);
    if (!got || strcmp(got, text) != 0) fail_msg("%s holds '%s', not '%s'", path, got, text);
    free(got);
}

/* A saved scene at path: it parses as JSON with the demo's entities (a cheap check: its
 * first entity's id). */
static void expect_saved_scene(const char *path)
{
    char *got = harness_read_file(path, NULL);
    if (!got || !strstr(got, "\"entities\"") || !strstr(got, "\"street\""))
        fail_msg("%s is not the saved demo scene: %.200s", path, got ? got : "(none)");
    free(got);
}

/* --save onto a FIFO or (as root) a character device: refused before the session, exit 2,
 * one line; the node is still what it was. */
static void Save_refuses_anything_but_a_regular_file(void **state)
{
    save_test *t = *state;
    char *fifo = in_dir(t, "fifo.json");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    run(t, (const char *[]){"--save", fifo, NULL});
    assert_int_equal(t->run.exit_code, 2);
    assert_int_equal(error_lines(t->run.err), 1);
    assert_non_null(strstr(t->run.err, "not a regular file (a FIFO)"));
    assert_null(strstr(t->run.err, "loaded")); /* before anything ran */
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    free(fifo);
    if (geteuid() != 0) {
        print_message("# not root: no device node made\n");
        return;
    }
    char *dev = in_dir(t, "null.json");
    assert_int_equal(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0); /* like /dev/null */
    run(t, (const char *[]){"--save", dev, NULL});
    assert_int_equal(t->run.exit_code, 2);
    assert_non_null(strstr(t->run.err, "not a regular file (a character device)"));
    assert_int_equal(lstat(dev, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    free(dev);
}

/* An existing 0600 scene stays 0600 (and, when root saves a user's file, that user's); a
 * new file gets 0666 & ~umask. */
static void Save_keeps_the_mode_and_owner_of_the_file_it_replaces(void **state)
{
    save_test *t = *state;
    char *old = in_dir(t, "private.json");
    assert_int_equal(harness_write_file(old, OLD_TEXT, 0600), 0);
    bool root = geteuid() == 0;
    if (root) assert_int_equal(chown(old, 65534, 65534), 0);
    run(t, (const char *[]){"--save", old, NULL});
    assert_int_equal(t->run.exit_code, 0);
    expect_saved_scene(old);
    struct stat st;
    assert_int_equal(stat(old, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    if (root) assert_int_equal(st.st_uid, 65534);
    mode_t before = umask(027);
    char *fresh = in_dir(t, "fresh.json");
    run(t, (const char *[]){"--save", fresh, NULL});
    umask(before);
    assert_int_equal(t->run.exit_code, 0);
    assert_int_equal(stat(fresh, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    free(old);
    free(fresh);
}

/* A save through a symlink writes its target: the link stays a link. A dangling one is
 * refused. */
static void Save_through_a_symlink_writes_its_target(void **state)
{
    save_test *t = *state;
    char *target = in_dir(t, "real.json"), *link = in_dir(t, "link.json");
    assert_int_equal(harness_write_file(target, OLD_TEXT, 0644), 0);
    assert_int_equal(harness_symlink("real.json", link), 0);
    run(t, (const char *[]){"--save", link, NULL});
    assert_int_equal(t->run.exit_code, 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    expect_saved_scene(target);
    unlink(target);
    run(t, (const char *[]){"--save", link, NULL});
    assert_int_equal(t->run.exit_code, 2);
    assert_non_null(strstr(t->run.err, "a symlink to nothing"));
    free(target);
    free(link);
}

/* FNV-1a 64 of s, as the host names a file's temporary files. */
static uint64_t fnv(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

/* The number of files in t->dir whose names start with prefix. */
static int count_prefixed(const save_test *t, const char *prefix)
{
    int n = 0;
    DIR *d = opendir(t->dir);
    struct dirent *de;
    while (d && (de = readdir(d))) n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    if (d) closedir(d);
    return n;
}

/* What a save killed with SIGKILL leaves (a temporary file of a process that is gone) is
 * removed by the next save of the same file; a live writer's is not; any name the file
 * system allows (255 bytes) can be saved. */
static void Save_removes_what_a_killed_save_left_and_takes_long_names(void **state)
{
    save_test *t = *state;
    pid_t dead = fork(); /* a pid that is surely gone */
    if (dead == 0) _exit(0);
    assert_true(dead > 0);
    waitpid(dead, NULL, 0);
    char prefix[64], stale[128], live[128];
    snprintf(prefix, sizeof prefix, ".ecs-save-%016llx-", (unsigned long long)fnv("scene.json"));
    snprintf(stale, sizeof stale, "%s%d-AbCdEf", prefix, (int)dead);
    snprintf(live, sizeof live, "%s%d-GhIjKl", prefix, (int)getpid());
    char *stale_path = in_dir(t, stale), *live_path = in_dir(t, live);
    assert_int_equal(harness_write_file(stale_path, "half a scene", 0600), 0);
    assert_int_equal(harness_write_file(live_path, "another host at work", 0600), 0);
    char *scene = in_dir(t, "scene.json");
    run(t, (const char *[]){"--save", scene, NULL});
    assert_int_equal(t->run.exit_code, 0);
    assert_int_not_equal(access(stale_path, F_OK), 0); /* removed, and said */
    assert_non_null(strstr(t->run.err, "left by a save that was stopped"));
    assert_int_equal(access(live_path, F_OK), 0); /* its writer is alive: kept */
    assert_int_equal(count_prefixed(t, prefix), 1);
    char name[256];
    memset(name, 'n', 250);
    strcpy(name + 250, ".json"); /* 255 bytes: the longest a name may be */
    char *longest = in_dir(t, name);
    run(t, (const char *[]){"--save", longest, NULL});
    assert_int_equal(t->run.exit_code, 0);
    expect_saved_scene(longest);
    free(stale_path);
    free(live_path);
    free(scene);
    free(longest);
}

/* A scene of n named entities (about 100 bytes of saved text each) into path. */
static void write_named_scene(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"version\": 1, \"entities\": [\n");
    for (int i = 0; i < n; i++)
        fprintf(f,
                "%s{\"id\": \"n%d\", \"debug_name\": \"entity %d of a scene saved in pieces\"}\n",
                i ? "," : "", i, i);
    fprintf(f, "]}\n");
    assert_int_equal(fclose(f), 0);
}

/* ecs-host under a file size limit (SIGXFSZ ignored, so a write past it fails with EFBIG):
 * limit 0 fails the first write, a limit inside the scene makes a short write first, and
 * a limit inside a large scene fails a later piece of a save written in pieces. The old
 * file stays byte for byte, exit 1, one line; no temporary file is left. */
static void Save_under_a_failed_or_short_write_keeps_the_old_file(void **state)
{
    save_test *t = *state;
    char *large = in_dir(t, "large.json");
    write_named_scene(large, 20000); /* about 2 MB saved: several pieces */
    static const char *const limits[] = {"0", "4096", "600000"};
    for (int k = 0; k < 3; k++) {
        char *old = in_dir(t, "kept.json");
        assert_int_equal(harness_write_file(old, OLD_TEXT, 0644), 0);
        char limit[32];
        snprintf(limit, sizeof limit, "--fsize=%s", limits[k]);
        const char *argv[] = {"bash",
                              "-c",
                              "trap '' XFSZ; exec \"$@\"",
                              "sh",
                              "prlimit",
                              limit,
                              ECS_HOST_PATH,
                              "--frames",
                              "1",
                              "--scene",
                              k == 2 ? large : DEMO_SCENE,
                              "--save",
                              old,
                              PLUGIN_DIR,
                              NULL};
        harness_output_free(&t->run);
        assert_int_equal(harness_run(&t->run, 60, argv), 0);
        if (t->run.exit_code != 1 || error_lines(t->run.err) != 1 ||
            !strstr(t->run.err, "could not write the scene: File too large"))
            fail_msg("limit %s: exit %d: %s", limits[k], t->run.exit_code, t->run.err);
        assert_null(strstr(t->run.err, "saved"));
        expect_file(old, OLD_TEXT);
        assert_int_equal(count_prefixed(t, ".ecs-save-"), 0);
        free(old);
    }
    free(large);
}

/* --trace naming the scene it reads or the file it saves: refused before anything is
 * truncated (exit 2); --save and --scene the same file is the usual round trip. */
static void Save_one_file_never_serves_two_roles(void **state)
{
    save_test *t = *state;
    char *scene = in_dir(t, "scene.json");
    char *copy = harness_read_file(DEMO_SCENE, NULL);
    assert_int_equal(harness_write_file(scene, copy, 0644), 0);
    const char *argv[] = {ECS_HOST_PATH, "--frames", "1",        "--trace", scene,
                          "--scene",     scene,      PLUGIN_DIR, NULL};
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 60, argv), 0);
    assert_int_equal(t->run.exit_code, 2);
    assert_non_null(strstr(t->run.err, "is also the file of --scene"));
    expect_file(scene, copy); /* not truncated */
    run(t, (const char *[]){"--save", scene, "--trace", scene, NULL});
    assert_int_equal(t->run.exit_code, 2);
    expect_file(scene, copy);
    const char *round[] = {ECS_HOST_PATH, "--frames", "1",        "--scene", scene,
                           "--save",      scene,      PLUGIN_DIR, NULL};
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 60, round), 0);
    assert_int_equal(t->run.exit_code, 0);
    expect_saved_scene(scene);
    free(copy);
    free(scene);
}

/* --trace has a slice for the scene load and one for the save, named so, whole JSON. */
static void Save_and_load_have_their_slices_in_the_trace(void **state)
{
    save_test *t = *state;
    char *out = in_dir(t, "out.json"), *trace = in_dir(t, "trace.json");
    run(t, (const char *[]){"--save", out, "--trace", trace, NULL});
    assert_int_equal(t->run.exit_code, 0);
    char *text = harness_read_file(trace, NULL);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text), *e;
    assert_non_null(root);
    int load = 0, save = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        const char *name = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;
        const char *cat = cJSON_GetObjectItemCaseSensitive(e, "cat")->valuestring;
        load += !strcmp(name, "scene load") && !strcmp(cat, "scene");
        save += !strcmp(name, "scene save") && !strcmp(cat, "scene");
    }
    assert_int_equal(load, 1);
    assert_int_equal(save, 1);
    cJSON_Delete(root);
    free(text);
    free(trace);
    free(out);
}

/* --save into a folder that does not exist, or onto a folder: exit 2 at start. */
static void Save_target_is_checked_before_the_session(void **state)
{
    save_test *t = *state;
    char *missing = in_dir(t, "nowhere/scene.json");
    run(t, (const char *[]){"--save", missing, NULL});
    assert_int_equal(t->run.exit_code, 2);
    assert_non_null(strstr(t->run.err, "/nowhere does not exist"));
    assert_null(strstr(t->run.err, "loaded"));
    run(t, (const char *[]){"--save", t->dir, NULL});
    assert_int_equal(t->run.exit_code, 2);
    assert_non_null(strstr(t->run.err, "not a regular file (a folder)"));
    free(missing);
}

/* A plugin that writes what a load would refuse (a key twice through key() or through a
 * cJSON value, the smallest of 17 keys twice, a NaN in a cJSON value): the save fails with
 * a line naming the plugin and the entity, exit 1, the old file byte for byte. The same
 * plugin writing valid values saves a file that loads back. */
static void Save_refuses_what_a_load_would_refuse_naming_plugin_and_entity(void **state)
{
    save_test *t = *state;
    char *plugins = in_dir(t, "plugins"), *so = harness_join(plugins, "badsave.so");
    char *src = harness_join(TEST_PLUGIN_DIR, "badsave.so");
    assert_int_equal(mkdir(plugins, 0700), 0);
    assert_int_equal(harness_copy_file(src, so, 0755), 0);
    char *scene = in_dir(t, "in.json"), *out = in_dir(t, "out.json");
    static const char *const words[] = {"dup-key", "dup-value", "dup-first-of-17", "nan-value"};
    static const char *const why[] = {"duplicate key \"a\"", "duplicate key \"word\"",
                                      "duplicate key \"k00\"", "NaN or infinite"};
    for (int k = 0; k < 4; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"version\": 1, \"entities\": [{\"id\": \"fine\", \"badsave\": \"ok\"},\n"
                 "  {\"id\": \"culprit\", \"badsave\": \"%s\"}]}\n",
                 words[k]);
        assert_int_equal(harness_write_file(scene, text, 0644), 0);
        assert_int_equal(harness_write_file(out, OLD_TEXT, 0644), 0);
        const char *argv[] = {ECS_HOST_PATH, "--frames", "1",     "--scene", scene,
                              "--save",      out,        plugins, NULL};
        harness_output_free(&t->run);
        assert_int_equal(harness_run(&t->run, 60, argv), 0);
        const char *line = strstr(t->run.err, "wrote invalid JSON");
        if (t->run.exit_code != 1 || !line || !strstr(t->run.err, "plugin 'badsave'") ||
            !strstr(t->run.err, "'culprit'") || !strstr(line, why[k]) ||
            !strstr(t->run.err, "not saved"))
            fail_msg("%s: exit %d, expected 1 and a line naming plugin 'badsave', entity "
                     "'culprit' and '%s':\n%s",
                     words[k], t->run.exit_code, why[k], t->run.err);
        expect_file(out, OLD_TEXT);
    }
    assert_int_equal(harness_write_file(scene,
                                        "{\"version\": 1, \"entities\": [{\"id\": \"fine\", "
                                        "\"badsave\": \"ok\"}]}\n",
                                        0644),
                     0);
    const char *argv[] = {ECS_HOST_PATH, "--frames", "1",     "--scene", scene,
                          "--save",      out,        plugins, NULL};
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 60, argv), 0);
    assert_int_equal(t->run.exit_code, 0);
    const char *again[] = {ECS_HOST_PATH, "--frames", "0", "--scene", out, plugins, NULL};
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 60, again), 0);
    if (t->run.exit_code != 0) fail_msg("the valid save does not load: %s", t->run.err);
    free(plugins);
    free(so);
    free(src);
    free(scene);
    free(out);
}

/* Two SIGTERMs 30 ms and then 300 ms apart (coreutils' timeout sends one to the command and
 * one to its process group; an impatient Ctrl-C twice does the same) while a 300,000-entity
 * world runs with --save, with --safe and without: no plugin call is stuck (the second
 * one lands in a frame or in the save), so nothing is abandoned, the world is saved and
 * that file loads again. */
static void Save_is_written_whatever_signals_come_while_nothing_is_stuck(void **state)
{
    enum { N = 300000 };
    save_test *t = *state;
    char *scene = in_dir(t, "big.json"), *out = in_dir(t, "out.json"), cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %d > '%s'", GEN_SCENE_PATH, N, scene);
    const char *const gen[] = {"/bin/sh", "-c", cmd, NULL};
    assert_int_equal(harness_run(&t->run, 120.0, gen), 0);
    assert_int_equal(t->run.exit_code, 0);
    harness_output_free(&t->run);
    static const int gaps_ms[] = {30, 300};
    for (int k = 0; k < 4; k++) {
        bool safe = k >= 2;
        int gap = gaps_ms[k % 2];
        unlink(out);
        const char *const argv[] = {
            ECS_HOST_PATH,          "--fps", "60", "--scene", scene, "--save", out, PLUGIN_DIR,
            safe ? "--safe" : NULL, NULL};
        harness_proc p = {.fd = {-1, -1}};
        assert_int_equal(harness_start(&p, argv), 0);
        bool loaded = harness_wait_output(&p, "loaded 300000 entities", 120.0);
        harness_wait_output(&p, "\x01 never printed", 0.1); /* some frames */
        kill(p.pid, SIGTERM);
        nanosleep(&(struct timespec){0, gap * 1000000L}, NULL);
        kill(p.pid, SIGTERM);
        harness_finish(&p, 120.0);
        fprintf(stderr, "# %s, second SIGTERM after %d ms: exit %d\n",
                safe ? "--safe" : "no --safe", gap, p.result.exit_code);
        if (!loaded || p.result.exit_code != 0 || !strstr(p.result.err, "saved 300000 entities"))
            fail_msg("%s, %d ms apart: exit %d (signal %d), expected 0 and the save:\n%s",
                     safe ? "--safe" : "no --safe", gap, p.result.exit_code, p.result.term_signal,
                     p.result.err);
        harness_output_free(&p.result);
        const char *const again[] = {ECS_HOST_PATH, "--frames", "0", "--scene",
                                     out,           PLUGIN_DIR, NULL};
        assert_int_equal(harness_run(&t->run, 120.0, again), 0);
        if (t->run.exit_code != 0 || !strstr(t->run.err, "loaded 300000 entities"))
            fail_msg("the save does not load: exit %d:\n%s", t->run.exit_code, t->run.err);
        harness_output_free(&t->run);
    }
    free(scene);
    free(out);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(Save_refuses_anything_but_a_regular_file),
        T(Save_keeps_the_mode_and_owner_of_the_file_it_replaces),
        T(Save_through_a_symlink_writes_its_target),
        T(Save_removes_what_a_killed_save_left_and_takes_long_names),
        T(Save_under_a_failed_or_short_write_keeps_the_old_file),
        T(Save_one_file_never_serves_two_roles),
        T(Save_and_load_have_their_slices_in_the_trace),
        T(Save_target_is_checked_before_the_session),
        T(Save_refuses_what_a_load_would_refuse_naming_plugin_and_entity),
        T(Save_is_written_whatever_signals_come_while_nothing_is_stuck),
    };
    harness_select_tests();
    return cmocka_run_group_tests_name("save", tests, NULL, NULL);
}
