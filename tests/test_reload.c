/* SPDX-License-Identifier: MIT */
/* test_reload.c: integration tests of hot reload: the real ecs-host runs in the background
 * (--watch --fps 100 --reload-quiet 50 --scene S --save OUT DIR) on a plugin folder the
 * test owns, while the test puts new builds there the ways build tools do (cp over the
 * file, write-and-rename like lld, GNU ld relinking in place, failed links, deletes);
 * then SIGTERM, and the log, the --stats table and the saved scene are checked.
 *
 * The test plugins (tests/plugins_reload/) make values checkable: each version of "rl"
 * adds its step (v1: 1, v2: 10, v3: 100) to every value per frame and logs at unload how
 * many updates it ran. So after any sequence of reloads, every entity's saved value must
 * be its value in the scene plus the sum over the versions that ran of step x updates
 * (nothing lost, nothing counted twice), and while rl was never away the updates of all
 * its versions add up to the host's frame count (the old version kept running until the
 * very frame the new one took over).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ecs_plugin.h"
#include "harness.h"

#if !defined(ECS_HOST_PATH) || !defined(RELOAD_PLUGIN_DIR) || !defined(TRANSFORM_SO) ||            \
    !defined(JOBBER_SO) || !defined(MESH_SO) || !defined(SDK_DIR) || !defined(SOURCE_ROOT)
#error "tests/meson.build defines ECS_HOST_PATH, RELOAD_PLUGIN_DIR, TRANSFORM_SO, MESH_SO, ..."
#endif

#define WAIT       10.0 /* seconds to wait for a log line, or for the exit after SIGTERM */
#define ENTITIES   8    /* scene entities e1..e8 with rl values 1000, 2000, ... */
#define MAX_ARGS   32
#define CYCLES     1000 /* reloads in the endurance test */
#define RSS_GROWTH 2048 /* kB the host may grow between reload 100 and reload 1000 */
#define RL_SOURCE  SOURCE_ROOT "/tests/plugins_reload/reloadee.c"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
#define MAPS_SLACK       8   /* ASan's allocator maps and unmaps regions of its own */
#define FILES_MAPS_SLACK 100 /* ...and 40-50 for 300 refused files applied in one go */
#else
#define MAPS_SLACK       2  /* a leaked dlopen would add about 5 per reload */
#define FILES_MAPS_SLACK 50 /* 300 refused files kept mapped would add about 1,500 */
#endif

/* ---- Fixture: a temp root (0700) with the plugin folder, the scene and the output ---- */

typedef struct fixture {
    char *root;         /* removed with everything under it at teardown */
    char *dir;          /* root/plugins: the PLUGIN_DIR (0700) */
    char *scene, *out;  /* root/scene.json (--scene), root/out.json (--save) */
    char cmd[4096];     /* the command line, for failure messages */
    harness_proc proc;  /* the host while it runs */
    harness_output run; /* the host once it stopped */
} fixture;

static int write_scene(const char *path, int entities)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "{\"version\": 1, \"entities\": [");
    for (int i = 1; i <= entities; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s\n  {\"id\": \"e%d\", \"rl\": %d}",
                              i > 1 ? "," : "", i, 1000 * i);
    snprintf(text + n, sizeof text - n, "\n]}\n");
    return harness_write_file(path, text, 0600);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->proc.fd[0] = f->proc.fd[1] = -1;
    f->root = harness_make_tmpdir("ecs-reload-test");
    f->dir = f->root ? harness_join(f->root, "plugins") : NULL;
    f->scene = f->root ? harness_join(f->root, "scene.json") : NULL;
    f->out = f->root ? harness_join(f->root, "out.json") : NULL;
    if (!f->dir || !f->scene || !f->out || mkdir(f->dir, 0700) != 0 || chmod(f->dir, 0700) != 0 ||
        write_scene(f->scene, ENTITIES) != 0) {
        print_error("cannot make a temporary plugin folder: %s\n", strerror(errno));
        if (f->root) harness_remove_tree(f->root);
        free(f->root), free(f->dir), free(f->scene), free(f->out), free(f);
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
    free(f->root), free(f->dir), free(f->scene), free(f->out), free(f);
    return 0;
}

/* ---- Output ---- */

static const char *out_of(const fixture *f)
{
    return f->proc.pid > 0 ? f->proc.result.out : f->run.out;
}

static const char *err_of(const fixture *f)
{
    return f->proc.pid > 0 ? f->proc.result.err : f->run.err;
}

/* Print the command and its output so far to stderr (whole: print_error cuts). */
static void dump(const fixture *f)
{
    fprintf(stderr, "command: %s\n--- stdout ---\n%s--- stderr ---\n%s---\n", f->cmd,
            out_of(f) ? out_of(f) : "", err_of(f) ? err_of(f) : "");
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *at = text ? strstr(text, needle) : NULL; at; at = strstr(at + 1, needle)) n++;
    return n;
}

/* The line of text holding needle, copied into buf (cut to size); "" when none. */
static const char *line_of(const char *text, const char *needle, char *buf, size_t size)
{
    const char *at = text ? strstr(text, needle) : NULL;
    buf[0] = '\0';
    if (!at) return buf;
    while (at > text && at[-1] != '\n') at--;
    size_t len = strcspn(at, "\n");
    snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), at);
    return buf;
}

static void check_count(const fixture *f, const char *needle, int want, const char *file, int line)
{
    int n = count_of(err_of(f), needle);
    if (n == want) return;
    fprintf(stderr, "'%s' appears %d times in stderr, expected %d\n", needle, n, want);
    dump(f);
    _fail(file, line);
}

static void check_out(const fixture *f, const char *needle, const char *file, int line)
{
    if (strstr(out_of(f), needle)) return;
    fprintf(stderr, "'%s' missing from stdout\n", needle);
    dump(f);
    _fail(file, line);
}

#define EXPECT_ONCE(f, needle)   check_count(f, needle, 1, __FILE__, __LINE__)
#define EXPECT_COUNT(f, n, want) check_count(f, n, want, __FILE__, __LINE__)
#define EXPECT_ABSENT(f, needle) check_count(f, needle, 0, __FILE__, __LINE__)
#define EXPECT_OUT(f, needle)    check_out(f, needle, __FILE__, __LINE__)

/* ---- The plugin folder ---- */

static void path_in_dir(const fixture *f, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", f->dir, name);
}

/* The built file of a variant: a full path (contains '/') or a name in RELOAD_PLUGIN_DIR. */
static void built(const char *variant, char *buf, size_t size)
{
    if (strchr(variant, '/'))
        snprintf(buf, size, "%s", variant);
    else
        snprintf(buf, size, "%s/%s.so", RELOAD_PLUGIN_DIR, variant);
}

/* cp: write the variant into the folder as `as` (an existing file keeps its inode). */
static void put_copy(const fixture *f, const char *variant, const char *as)
{
    char src[4096], dst[4096];
    built(variant, src, sizeof src);
    path_in_dir(f, as, dst, sizeof dst);
    if (harness_copy_file(src, dst, 0755) == 0) return;
    print_error("cannot copy %s to %s: %s\n", src, dst, strerror(errno));
    fail();
}

/* Like lld: write DIR/.as.tmp, then rename it over DIR/as (a new inode, one event). */
static void put_rename(const fixture *f, const char *variant, const char *as)
{
    char name[512], tmp[4096], dst[4096];
    snprintf(name, sizeof name, ".%s.tmp", as);
    put_copy(f, variant, name);
    path_in_dir(f, name, tmp, sizeof tmp);
    path_in_dir(f, as, dst, sizeof dst);
    if (rename(tmp, dst) == 0) return;
    print_error("rename %s -> %s: %s\n", tmp, dst, strerror(errno));
    fail();
}

static void remove_in_dir(const fixture *f, const char *name)
{
    char path[4096];
    path_in_dir(f, name, path, sizeof path);
    if (unlink(path) == 0) return;
    print_error("unlink %s: %s\n", path, strerror(errno));
    fail();
}

/* The usual folder: rl.so (the variant) between two neighbours in the update order. */
static void put_rl_with_peers(const fixture *f, const char *variant)
{
    put_copy(f, "peer_a", "a_peer.so");
    put_copy(f, variant, "rl.so");
    put_copy(f, "peer_z", "z_peer.so");
}

/* ---- Running the host ---- */

/* Start ecs-host --watch --fps 100 --reload-quiet 50 --scene S --save OUT --stats, then
 * args (NULL-terminated; a later --fps or --reload-quiet wins), then the folder. Returns
 * once `ready` is in the log. */
static void start(fixture *f, const char *ready, const char *const *args)
{
    const char *argv[MAX_ARGS] = {ECS_HOST_PATH,    "--watch", "--fps",   "100",
                                  "--reload-quiet", "50",      "--scene", f->scene,
                                  "--save",         f->out,    "--stats"};
    size_t n = 11;
    for (; *args && n < MAX_ARGS - 2; args++) argv[n++] = *args;
    argv[n++] = f->dir;
    argv[n] = NULL;
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof f->cmd; i++)
        used +=
            (size_t)snprintf(f->cmd + used, sizeof f->cmd - used, "%s%s", i ? " " : "", argv[i]);
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

/* Wait until needle appears `times` times in the host's output. */
static bool wait_times(fixture *f, const char *needle, int times, double timeout)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (count_of(f->proc.result.err, needle) + count_of(f->proc.result.out, needle) >= times)
            return true;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double left =
            timeout - (double)(t.tv_sec - t0.tv_sec) - (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        if (left <= 0) return false;
        if (times == 1) return harness_wait_output(&f->proc, needle, left);
        if (!harness_wait_output(&f->proc, "\x01 never printed", left < 0.005 ? left : 0.005) &&
            f->proc.fd[0] < 0 && f->proc.fd[1] < 0)
            return count_of(f->proc.result.err, needle) >= times; /* the host is gone */
    }
}

static void wait_line(fixture *f, const char *needle, int times, const char *file, int line)
{
    if (wait_times(f, needle, times, WAIT)) return;
    fprintf(stderr, "'%s' did not appear %d time(s) within %.0f s\n", needle, times, WAIT);
    dump(f);
    _fail(file, line);
}

/* Wait for the n-th occurrence of a log line. */
#define WAIT_LINE(f, needle)   wait_line(f, needle, 1, __FILE__, __LINE__)
#define WAIT_NTH(f, needle, n) wait_line(f, needle, n, __FILE__, __LINE__)

/* Let the host run about ms milliseconds (some frames at --fps 100). */
static void let_run(fixture *f, int ms)
{
    harness_wait_output(&f->proc, "\x01 never printed", ms / 1000.0);
}

/* SIGTERM, wait for the exit, keep the output in f->run; the host must exit 0. */
static void stop(fixture *f, const char *file, int line)
{
    pid_t pid = f->proc.pid;
    if (pid <= 0 || kill(pid, SIGTERM) != 0) {
        dump(f);
        _fail(file, line);
    }
    harness_finish(&f->proc, WAIT);
    harness_output_free(&f->run);
    f->run = f->proc.result;
    memset(&f->proc.result, 0, sizeof f->proc.result);
    if (!f->run.timed_out && f->run.exit_code == 0 && f->run.term_signal == 0) return;
    fprintf(stderr, "after SIGTERM: exit code %d, signal %d%s\n", f->run.exit_code,
            f->run.term_signal, f->run.timed_out ? ", killed after the timeout" : "");
    dump(f);
    _fail(file, line);
}

#define STOP(f) stop(f, __FILE__, __LINE__)

/* ---- What the log says ---- */

/* The step of an rl version, as tests/plugins_reload/meson.build builds it. */
static long long step_of(const char *version)
{
    return !strcmp(version, "1") || !strcmp(version, "1a")   ? 1
           : !strcmp(version, "2")                           ? 10
           : !strcmp(version, "3") || !strcmp(version, "3s") ? 100
                                                             : 0;
}

/* From the unload lines of plugin `name` (a build of reloadee.c): the sum of step x
 * updates over every version that ran (into *added) and of the updates (into *updates). */
static void updates_of(const char *err, const char *name, long long *added, long long *updates)
{
    char head[96], format[160];
    snprintf(head, sizeof head, "] %s: %s ", name, name);
    snprintf(format, sizeof format, "%s%%31s unload (%%*[^)]): %%llu updates run", head);
    *added = *updates = 0;
    for (const char *at = strstr(err, head); at; at = strstr(at + 1, head)) {
        char version[32];
        unsigned long long n;
        if (sscanf(at, format, version, &n) != 2) continue;
        *added += step_of(version) * (long long)n;
        *updates += (long long)n;
    }
}

static void rl_updates(const char *err, long long *added, long long *updates)
{
    updates_of(err, "rl", added, updates);
}

/* The frame count of "stopping after N frames (signal)", or -1. */
static long long frames_run(const fixture *f)
{
    const char *at = strstr(f->run.err, "stopping after ");
    unsigned long long n;
    return at && sscanf(at, "stopping after %llu frames", &n) == 1 ? (long long)n : -1;
}

/* Fail unless the versions of plugin `name` ran exactly once per frame, between them: no
 * frame was missed or run twice around a reload. */
static void check_continuous(const fixture *f, const char *name, const char *file, int line)
{
    long long added, updates, frames = frames_run(f);
    updates_of(f->run.err, name, &added, &updates);
    if (frames > 0 && updates == frames) return;
    fprintf(stderr, "%s's versions ran %lld updates in all, the host %lld frames\n", name, updates,
            frames);
    dump(f);
    _fail(file, line);
}

#define EXPECT_CONTINUOUS(f)          check_continuous(f, "rl", __FILE__, __LINE__)
#define EXPECT_CONTINUOUS_OF(f, name) check_continuous(f, name, __FILE__, __LINE__)

/* Fail unless the saved scene holds every entity e1..e<entities> with `key` == its value
 * in the scene (1000 x its number) plus what the versions of plugin `key` that ran added
 * (from their unload lines). */
static void check_saved_of(const fixture *f, const char *key, int entities, const char *file,
                           int line)
{
    long long added, updates;
    updates_of(f->run.err, key, &added, &updates);
    char *text = harness_read_file(f->out, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    const cJSON *e, *list = cJSON_GetObjectItemCaseSensitive(root, "entities");
    int found = 0, bad = 0;
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
        int k;
        if (!cJSON_IsString(id) || sscanf(id->valuestring, "e%d", &k) != 1) continue;
        double want = 1000.0 * k + (double)added;
        if (cJSON_IsNumber(v) && v->valuedouble == want) {
            found++;
        } else if (bad++ == 0) {
            fprintf(stderr, "%s: entity %s: %s is %s%.0f, expected %.0f (scene value %d + %lld)\n",
                    f->out, id->valuestring, key,
                    cJSON_IsNumber(v) ? "" : "missing: ", cJSON_IsNumber(v) ? v->valuedouble : 0.0,
                    want, 1000 * k, added);
        }
    }
    cJSON_Delete(root);
    free(text);
    if (found == entities && bad == 0) return;
    fprintf(stderr, "%s: %d of %d entities have the expected %s value\n", f->out, found, entities,
            key);
    dump(f);
    _fail(file, line);
}

#define EXPECT_SAVED(f)          check_saved_of(f, "rl", ENTITIES, __FILE__, __LINE__)
#define EXPECT_SAVED_OF(f, name) check_saved_of(f, name, ENTITIES, __FILE__, __LINE__)

/* Fail unless the --stats table lists the managers in this order (NULL-terminated). */
static void check_order(const fixture *f, const char *const *names, const char *file, int line)
{
    const char *at = f->run.out;
    for (const char *const *n = names; *n; n++) {
        char row[80];
        snprintf(row, sizeof row, "\n%s ", *n); /* a row starts with the manager's name */
        const char *found = strstr(at, row);
        if (!found) {
            fprintf(stderr, "--stats: no row '%s' after '%s'\n", *n,
                    n == names ? "the start" : n[-1]);
            dump(f);
            _fail(file, line);
        }
        at = found + 1;
    }
}

#define EXPECT_UPDATE_ORDER(f, ...)                                                                \
    check_order(f, (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)

/* ---- Each way a new build arrives ---- */

/* v1 runs, v2 (same state layout, step 10) arrives by `put`; it must take over at a frame
 * boundary with the state handed over: its behaviour, every value continued, the order. */
static void check_same_layout_reload(fixture *f,
                                     void (*put)(const fixture *, const char *, const char *))
{
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    put(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    let_run(f, 100);
    STOP(f);
    EXPECT_ONCE(f, "rl 2 load: adopted the previous state (reload 1), 8 components");
    EXPECT_ONCE(f, "rl 1 unload (keep state):");
    EXPECT_ABSENT(f, "[error]");
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "rl", "peer_z");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

static void Reload_cp_over_the_file_switches_behaviour_and_keeps_values(void **state)
{
    check_same_layout_reload(*state, put_copy);
}

static void Reload_write_and_rename_like_lld_switches_behaviour_and_keeps_values(void **state)
{
    check_same_layout_reload(*state, put_rename);
}

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

/* Build rl version 2 with cc straight into DIR/rl.so, linked by `linker` (bfd, lld). */
static void relink_in_place(fixture *f, const char *linker)
{
    char out[4096], fuse[32];
    path_in_dir(f, "rl.so", out, sizeof out);
    snprintf(fuse, sizeof fuse, "-fuse-ld=%s", linker);
    const char *const cc[] = {"cc",           "-shared", "-fPIC", "-fvisibility=hidden",
                              fuse,           "-I",      SDK_DIR, "-DRL_VERSION=\"2\"",
                              "-DRL_STEP=10", "-o",      out,     RL_SOURCE,
                              "-lcjson",      "-lm",     NULL};
    harness_output r;
    int rc = harness_run(&r, 60.0, cc);
    if (rc != 0 || r.exit_code != 0) {
        fprintf(stderr, "cc failed (%s): %s\n", rc ? strerror(rc) : "exit status", r.err);
        harness_output_free(&r);
        fail();
    }
    harness_output_free(&r);
}

/* GNU ld deletes the output, creates it empty, links, writes it and chmods it. Run with
 * the default quiet period (50 ms): the link must be loaded once, never half-written.
 * (A link slower than the quiet period: the next test.) */
static void Reload_relink_in_place_by_gnu_ld_reloads_once(void **state)
{
    fixture *f = *state;
    if (!program_in_path("cc") || !program_in_path("ld.bfd")) {
        print_message("# no cc or ld.bfd in PATH: test skipped\n");
        skip();
    }
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", "--reload-quiet", "200");
    relink_in_place(f, "bfd");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ABSENT(f, "refused");
    EXPECT_ABSENT(f, "[error]");
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "rl", "peer_z");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* What GNU ld does to its output (strace of ld.bfd 2.40): unlink it, create it empty
 * (open O_CREAT|O_TRUNC, mode 0666 & ~umask), link for a while with the file open and
 * empty, write it (the ELF header last), close it, chmod it 0755. link_ms: the link. */
static void link_like_gnu_ld(const fixture *f, const char *variant, int link_ms)
{
    char src[4096], dst[4096];
    size_t len = 0;
    built(variant, src, sizeof src);
    path_in_dir(f, "rl.so", dst, sizeof dst);
    char *bytes = harness_read_file(src, &len);
    assert_non_null(bytes);
    assert_int_equal(unlink(dst), 0);
    int fd = open(dst, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    assert_true(fd >= 0);
    struct timespec pause = {link_ms / 1000, (long)(link_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    bool ok = pwrite(fd, bytes + 64, len - 64, 64) == (ssize_t)(len - 64) &&
              pwrite(fd, bytes, 64, 0) == 64; /* the header last, like ld */
    ok = close(fd) == 0 && ok;
    ok = chmod(dst, 0755) == 0 && ok;
    free(bytes);
    assert_true(ok);
}

/* A GNU ld link that takes longer than the quiet period (a big plugin, a busy machine):
 * the file sits there empty and open for writing, with no event, for the whole link. The
 * host must wait for ld to close it, not load it half-written. */
static void Reload_gnu_ld_link_slower_than_the_quiet_period_is_loaded_once_complete(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    link_like_gnu_ld(f, "rl_v2", 300); /* 6 quiet periods */
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "refused");
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* What lld does to its output (strace of ld.lld 14): unlink the old output first (in a
 * background thread, so that freeing a big file costs no link time), link, write
 * OUTPUT.tmpXXXXXX beside it, rename that over OUTPUT. link_ms: the link. */
static void link_like_lld(const fixture *f, const char *variant, int link_ms)
{
    char dst[4096];
    path_in_dir(f, "rl.so", dst, sizeof dst);
    assert_int_equal(unlink(dst), 0);
    struct timespec pause = {link_ms / 1000, (long)(link_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    put_copy(f, variant, "rl.so.tmpf827904");
    char tmp[4096];
    path_in_dir(f, "rl.so.tmpf827904", tmp, sizeof tmp);
    assert_int_equal(rename(tmp, dst), 0);
}

/* An lld link that takes longer than the quiet period: for the whole link there is no
 * rl.so. It is a new build of the running plugin all the same, and must reload in place:
 * state handed over, same place in the update order, no unload in between. */
static void Reload_lld_link_slower_than_the_quiet_period_reloads_in_place(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    link_like_lld(f, "rl_v2", 300); /* 6 quiet periods */
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ONCE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    EXPECT_ABSENT(f, "was deleted");
    EXPECT_ABSENT(f, "[warn]");
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "rl", "peer_z");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* lld writes OUTPUT.tmpXXXXXX beside the output and renames it over: one event. */
static void Reload_relink_by_lld_reloads_once(void **state)
{
    fixture *f = *state;
    if (!program_in_path("cc") || !program_in_path("ld.lld")) {
        print_message("# no cc or ld.lld in PATH: test skipped\n");
        skip();
    }
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    relink_in_place(f, "lld");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ABSENT(f, "refused");
    EXPECT_ABSENT(f, "[error]");
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* Write garbage to DIR/name (a partial link). */
static void write_garbage(const fixture *f, const char *name)
{
    char path[4096];
    path_in_dir(f, name, path, sizeof path);
    if (harness_write_file(path,
                           "\x7f"
                           "ELF but cut short by a failed link",
                           0755) == 0)
        return;
    print_error("cannot write %s: %s\n", path, strerror(errno));
    fail();
}

/* A link of a new plugin that fails (partial file, deleted again within the quiet
 * period), and a failed lld link (its temporary file, deleted): nothing happens. */
static void Reload_failed_link_of_a_new_file_is_a_logged_non_event(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    write_garbage(f, "fresh.so");
    remove_in_dir(f, "fresh.so");
    write_garbage(f, "rl.so.tmp1a2b3c"); /* lld's temporary name: not a plugin name */
    remove_in_dir(f, "rl.so.tmp1a2b3c");
    WAIT_LINE(f, "watch: fresh.so changed and settled as it was: nothing to do");
    let_run(f, 200);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "[warn]");
    EXPECT_ABSENT(f, "rl.so.tmp");
    EXPECT_ABSENT(f, "rl 1 unload (keep state)");
    EXPECT_OUT(f, "reloads: 0 done, 0 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* GNU ld failing to relink an existing plugin: it deletes the output, writes part of it
 * and deletes it again, all within the quiet period. What settles is a deleted file: the
 * host must never try the partial file, must not crash, must keep running the last good
 * build (one warning), and the next good link reloads it with its state handed over. */
static void Reload_failed_relink_in_place_never_loads_the_partial_file(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    remove_in_dir(f, "rl.so");
    write_garbage(f, "rl.so");
    remove_in_dir(f, "rl.so");
    WAIT_LINE(f, "[warn] reload: rl.so: source deleted: still running rl 1");
    let_run(f, 100);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "not a shared object");
    EXPECT_COUNT(f, "[warn]", 1);
    EXPECT_ABSENT(f, "rl 1 unload (shutdown)"); /* never unloaded: its state went to build 2 */
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* Two builds within the same second: two reloads, both logged. */
static void Reload_two_builds_within_one_second_reload_twice(void **state)
{
    fixture *f = *state;
    struct timespec t0, t1;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    put_copy(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout");
    put_copy(f, "rl_v1", "rl.so"); /* same inode, maybe the same size: only mtime differs */
    WAIT_LINE(f, "reload: rl 2 -> 1: same state layout");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    STOP(f);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    /* a report, not a check: how fast builds reach the world is ecs-bench's (R1) */
    print_message("# two builds %.0f ms apart, both reloaded\n", s * 1e3);
    EXPECT_ONCE(f, "rl 1 -> 2");
    EXPECT_ONCE(f, "rl 2 -> 1");
    EXPECT_ONCE(f, "rl 1 load: adopted the previous state (reload 2)");
    EXPECT_OUT(f, "reloads: 2 done, 0 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "rl", "peer_z");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* Delete the file: the plugin keeps running (one warning, every frame updated); copy it
 * back: a reload of the same build, the state handed over. */
static void Reload_deleted_plugin_keeps_running_and_a_new_file_reloads_it(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    remove_in_dir(f, "rl.so");
    WAIT_LINE(f, "[warn] reload: rl.so: source deleted: still running rl 1 (a new file here, "
                 "or any file of plugin 'rl', reloads it; manifest.json unloads it)");
    let_run(f, 100); /* frames without its file: it still runs */
    put_copy(f, "rl_v1", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 1: same state layout");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ONCE(f, "rl 1 unload (keep state)"); /* the reload */
    EXPECT_ONCE(f, "rl 1 unload (shutdown)");   /* the exit, not the deletion */
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_CONTINUOUS(f); /* no frame without rl */
    EXPECT_SAVED(f);
}

/* mv rl.so rl-v2.so, and a new build written under another name after the old file went:
 * a move, not a loss; the record follows the new file. */
static void Reload_renamed_plugin_file_is_a_move(void **state)
{
    fixture *f = *state;
    char from[4096], to[4096];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    path_in_dir(f, "rl.so", from, sizeof from);
    path_in_dir(f, "rl-v2.so", to, sizeof to);
    assert_int_equal(rename(from, to), 0);
    WAIT_LINE(f, "plugin 'rl' moved here from rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 1: same state layout");
    put_copy(f, "rl_v2", "rl-v2.so"); /* the moved file changes: a reload of the same plugin */
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout");
    assert_int_equal(rename(to, from), 0); /* and back */
    WAIT_LINE(f, "plugin 'rl' moved here from rl-v2.so");
    WAIT_LINE(f, "reload: rl 2 -> 2: same state layout");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_COUNT(f, "unload (keep state)", 3);
    EXPECT_ONCE(f, "rl 2 unload (shutdown)"); /* at exit only */
    EXPECT_ABSENT(f, "rl 1 unload (shutdown)");
    EXPECT_OUT(f, "reloads: 3 done, 0 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* mv rl.so ../other/rlx.so is a move into another plugin folder; then the build writes
 * rl.so again where it always did. The newer file of the same plugin is a new build of it,
 * whichever folder: it reloads, and the plugin follows that file (every later build
 * reloads too), instead of "already loaded from rlx.so: ignored" for ever. */
static void Reload_rename_then_rebuild_is_a_new_build_whichever_folder(void **state)
{
    fixture *f = *state;
    char other[4096], from[4096], to[4200];
    snprintf(other, sizeof other, "%s/other", f->root);
    assert_int_equal(mkdir(other, 0700), 0);
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", other);
    path_in_dir(f, "rl.so", from, sizeof from);
    snprintf(to, sizeof to, "%s/rlx.so", other);
    assert_int_equal(rename(from, to), 0);
    WAIT_LINE(f, "plugin 'rl' moved here from rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 1: same state layout, 8 components kept");
    put_rename(f, "rl_v2", "rl.so"); /* the next build, where the build writes it */
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    put_rename(f, "rl_v1", "rl.so"); /* and the one after */
    WAIT_LINE(f, "reload: rl 2 -> 1: same state layout, 8 components kept");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "ignored");
    EXPECT_ONCE(f, "rl.so: plugin 'rl' has a newer file here than rlx.so: a new build of it, "
                   "and the plugin follows this file from now on");
    EXPECT_OUT(f, "reloads: 3 done, 0 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* An older file of a loaded plugin (a copy of an old build, cp -p) is not a new build:
 * ignored, with a line that says what makes it one; touching it does. */
static void Reload_older_file_of_a_loaded_plugin_is_ignored_until_touched(void **state)
{
    fixture *f = *state;
    char old[4096];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    put_copy(f, "rl_v2", ".rl-old.so.tmp");
    path_in_dir(f, ".rl-old.so.tmp", old, sizeof old);
    struct timespec hour_ago[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    assert_int_equal(utimensat(AT_FDCWD, old, hour_ago, 0), 0);
    char to[4096];
    path_in_dir(f, "rl-old.so", to, sizeof to);
    assert_int_equal(rename(old, to), 0); /* appears at once, an hour old */
    WAIT_LINE(f, "rl-old.so: plugin name 'rl' is already loaded from rl.so, a newer file: "
                 "ignored (touch this file to make it the plugin's new build)");
    assert_int_equal(utimensat(AT_FDCWD, to, NULL, 0), 0); /* touch rl-old.so */
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    STOP(f);
    EXPECT_ONCE(f, "rl-old.so: plugin 'rl' has a newer file here than rl.so");
    EXPECT_OUT(f, "reloads: 1 done, 1 refused"); /* the file ignored counts as refused */
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* Unloading is asked for: "disabled": true in the manifest unloads the plugin with its
 * components kept as JSON; taking it out loads it again with every component restored. */
static void Reload_manifest_disabled_unloads_and_enabling_restores_components(void **state)
{
    fixture *f = *state;
    char manifest[4096];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    path_in_dir(f, "manifest.json", manifest, sizeof manifest);
    assert_int_equal(harness_write_file(manifest,
                                        "{\"plugins\": [{\"name\": \"rl\", \"disabled\": true}]}\n",
                                        0644),
                     0);
    WAIT_LINE(f, "rl.so: disabled by manifest.json: plugin 'rl' unloaded; its components are "
                 "kept and come back with it");
    WAIT_LINE(f, "rl 1 unload (shutdown)");
    let_run(f, 100); /* frames without rl: its values must not move */
    assert_int_equal(harness_write_file(manifest, "{\"plugins\": []}\n", 0644), 0);
    WAIT_LINE(f, "restored the kept components of 8 entities");
    WAIT_NTH(f, "rl 1 first update", 2);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_COUNT(f, "rl 1 load: new state", 2);
    long long added, updates;
    rl_updates(f->run.err, &added, &updates);
    assert_true(updates < frames_run(f)); /* it was away for some frames */
    EXPECT_SAVED(f);
}

/* New files under --watch that are not plugins: one line each saying why, once per file
 * version; a plugin cut short is refused, never mapped (no SIGBUS); the world runs on. */
static void Reload_new_files_that_are_not_plugins_get_one_line_each(void **state)
{
    fixture *f = *state;
    char src[4096], dst[4096];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    write_garbage(f, "junk.so");
    WAIT_LINE(f, "junk.so: refused: truncated: ");
    built("rl_v2", src, sizeof src);
    path_in_dir(f, "cut.so", dst, sizeof dst);
    size_t size = 0;
    char *bytes = harness_read_file(src, &size);
    assert_non_null(bytes);
    FILE *out = fopen(dst, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, size / 2, out), size / 2); /* half a plugin */
    assert_int_equal(fclose(out), 0);
    chmod(dst, 0755);
    free(bytes);
    WAIT_LINE(f, "cut.so: refused: truncated: ");
    path_in_dir(f, "text.so", dst, sizeof dst);
    assert_int_equal(harness_write_file(dst, "not even ELF\n", 0755), 0);
    WAIT_LINE(f, "text.so: refused: not a shared object (no ELF header)");
    let_run(f, 100);
    STOP(f);
    EXPECT_ONCE(f, "junk.so: refused");
    EXPECT_ONCE(f, "cut.so: refused");
    EXPECT_ONCE(f, "text.so: refused");
    EXPECT_OUT(f, "reloads: 0 done, 3 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* A bad build (refused in `why`) keeps the old version running; the next good one
 * reloads normally. */
static void check_bad_build(fixture *f, const char *variant, const char *why)
{
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    put_copy(f, variant, "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: ");
    let_run(f, 200); /* v1 must go on updating: checked by EXPECT_CONTINUOUS */
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ONCE(f, "new build refused");
    EXPECT_ONCE(f, why);
    EXPECT_ONCE(f, "rl 1 unload (keep state)");
    EXPECT_OUT(f, "reloads: 1 done, 1 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "rl", "peer_z");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

static void Reload_abi_mismatch_is_refused_and_the_old_version_keeps_running(void **state)
{
    char why[160];
    snprintf(why, sizeof why,
             "rl: new build refused, version 1 keeps running: built for ABI %d.%d, this host "
             "speaks %d.%d",
             ECS_ABI_MAJOR + 1, ECS_ABI_MINOR, ECS_ABI_MAJOR, ECS_ABI_MINOR);
    check_bad_build(*state, "rl_badabi", why);
}

/* A bad build is reported in one clear line: the refusal, with the reason. */
static void Reload_bad_build_is_reported_in_one_log_line(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    put_copy(f, "rl_badabi", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: built for ABI");
    let_run(f, 100);
    STOP(f);
    EXPECT_COUNT(f, "[error]", 1);
}

static void Reload_failing_load_is_refused_and_the_old_version_keeps_running(void **state)
{
    fixture *f = *state;
    check_bad_build(f, "rl_loadfail",
                    "rl: new build refused, version 1 keeps running: its load() failed: plugin "
                    "failure");
    EXPECT_ONCE(f, "rl loadfail load: failing on purpose");
    EXPECT_ABSENT(f, "leaked");
}

/* rl 1 runs, `build` (another state layout) arrives: every component migrates through
 * JSON; `swapped` is the host's reload line, `first` the new version's first update. */
static void check_migration(fixture *f, const char *build, const char *swapped, const char *first)
{
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", "-v");
    put_rename(f, build, "rl.so");
    WAIT_LINE(f, swapped);
    WAIT_LINE(f, first);
    let_run(f, 100);
    STOP(f);
    EXPECT_ONCE(f, "rl 1 unload (migrated)");
    /* -v: how long each side of the migration took */
    EXPECT_ONCE(f, "reload: rl: JSON migration: the old version wrote the components in ");
    EXPECT_ONCE(f, " ms, the new one read them in ");
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "leaked");
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "rl", "peer_z");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* A new state layout (state_version 2) migrates every component through JSON. */
static void Reload_changed_state_layout_migrates_through_json(void **state)
{
    fixture *f = *state;
    check_migration(f, "rl_v3", "reload: rl 1 -> 3: JSON migration, 8 components kept",
                    "rl 3 first update");
    EXPECT_COUNT(f, "rl 3 load: new state", 1);
}

/* The same from a version saving cJSON trees to one reading with the host's reader
 * (read_component). */
static void Reload_migration_into_a_reader_keeps_every_component(void **state)
{
    fixture *f = *state;
    check_migration(f, "rl_v3_stream", "reload: rl 1 -> 3s: JSON migration, 8 components kept",
                    "rl 3s first update");
    /* the scene's 8 at start, then the 8 migrated: the manager told once each time, before
     * its reads, and not inside the load (scene_resolve refused there); the peers, with
     * nothing in the scene, not at all */
    EXPECT_ONCE(f, "rl 1 reserve: 8 coming, 0 held; scene_resolve: not allowed at this point");
    EXPECT_ONCE(f, "rl 3s reserve: 8 coming, 0 held; scene_resolve: not allowed at this point");
    EXPECT_COUNT(f, "reserve: ", 2);
}

/* rl 1 runs, then `build` arrives and refuses the value of e5 (over 5000): one line names the
 * manager's plugin, the entity (its scene id and id) and the JSON path, then the refusal; the old
 * version keeps running with every component. */
static void check_refused_migration(fixture *f, const char *build)
{
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    let_run(f, 100);
    put_rename(f, build, "rl.so");
    WAIT_LINE(f, "[error] reload: rl: entity 'e5' (5.0): rl: expected at most 5000, found 50");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: the new version could not load "
                 "the components (see above)");
    STOP(f);
    EXPECT_OUT(f, "reloads: 0 done, 1 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* A migration the new version's load_component refuses. */
static void Reload_failed_migration_names_the_entity_and_path(void **state)
{
    check_refused_migration(*state, "rl_v3_limit");
}

/* The same refused through the reader (read_component and r->error). */
static void Reload_failed_migration_through_a_reader_names_the_entity_and_path(void **state)
{
    check_refused_migration(*state, "rl_v3_stream_limit");
}

/* A plugin without save/load_component cannot migrate: a new state_version is refused
 * with a clear message and the old version keeps running with its components. */
static void Reload_layout_change_without_json_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_equal(write_scene(f->scene, 0), 0); /* the scene cannot give it components */
    put_copy(f, "rl_nojson_v1", "rl.so");
    START(f, "rl 1 first update", NULL);
    put_copy(f, "rl_nojson_v3", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: state version 1 -> 2 needs a "
                 "JSON migration, but manager 'rl' cannot save its components");
    let_run(f, 100);
    STOP(f);
    EXPECT_ONCE(f, "new build refused");
    EXPECT_ABSENT(f, "rl 3 load"); /* refused before the new code ran */
    EXPECT_ONCE(f, "rl 1 unload (shutdown): ");
    EXPECT_ONCE(f, "updates run, 3 components");
    EXPECT_OUT(f, "reloads: 0 done, 1 refused");
    EXPECT_CONTINUOUS(f);
}

/* ---- State layouts: a changed state without a state_version bump (issue 32) ---- */

#define PHYS_ENTITIES 32 /* the outside author's world */

/* The scene: p1..p32 with a physics velocity [i, 0, -i] (and no rl). */
static void write_physics_scene(const fixture *f)
{
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text, "{\"version\": 1, \"entities\": [");
    for (int i = 1; i <= PHYS_ENTITIES; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "%s\n  {\"id\": \"p%d\", \"physics\": {\"velocity\": [%d, 0, %d]}}",
                              i > 1 ? "," : "", i, i, -i);
    snprintf(text + n, sizeof text - n, "\n]}\n");
    assert_int_equal(harness_write_file(f->scene, text, 0600), 0);
}

/* Fail unless the saved scene holds p1..p32, each with its velocity [i, 0, -i]. */
static void check_physics_saved(const fixture *f, const char *file, int line)
{
    char *text = harness_read_file(f->out, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    const cJSON *e;
    int found = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "entities"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(e, "physics"), "velocity");
        int k;
        if (!cJSON_IsString(id) || sscanf(id->valuestring, "p%d", &k) != 1) continue;
        const cJSON *x = cJSON_GetArrayItem(v, 0), *z = cJSON_GetArrayItem(v, 2);
        if (cJSON_GetArraySize(v) == 3 && cJSON_IsNumber(x) && x->valuedouble == k &&
            cJSON_IsNumber(z) && z->valuedouble == -k)
            found++;
    }
    cJSON_Delete(root);
    free(text);
    if (found == PHYS_ENTITIES) return;
    fprintf(stderr, "%s: %d of %d physics components saved as loaded\n", f->out, found,
            PHYS_ENTITIES);
    dump(f);
    _fail(file, line);
}

#define EXPECT_PHYSICS_SAVED(f) check_physics_saved(f, __FILE__, __LINE__)

/* physics `from` runs with 32 components; `to` arrives and must be refused with the one
 * line `refusal`, the old build keeping all 32 (saved at exit). */
static void check_physics_refused(fixture *f, const char *from, const char *to, const char *refusal,
                                  const char *file, int line)
{
    write_physics_scene(f);
    put_copy(f, from, "physics.so");
    START(f, "loaded 32 entities", NULL);
    put_rename(f, to, "physics.so");
    wait_line(f, refusal, 1, file, line);
    let_run(f, 100);
    stop(f, file, line);
    check_count(f, "[error]", 1, file, line); /* one line */
    check_count(f, "components kept", 0, file, line);
    check_count(f, "physics 1 unload (shutdown): 32 components", 1, file, line);
    check_out(f, "reloads: 0 done, 1 refused", file, line);
    check_physics_saved(f, file, line);
}

#define EXPECT_PHYSICS_REFUSED(f, from, to, refusal)                                               \
    check_physics_refused(f, from, to, refusal, __FILE__, __LINE__)

/* The author's case: a double added before the ecs_soa of physics' state, state_version
 * left at 1, 32 components. The description records the layout (ECS_STATE_LAYOUT), so the
 * build is refused before its code sees the state: one line that says to bump
 * state_version, and the old build keeps running with all 32 components. */
static void Reload_changed_state_layout_without_a_version_bump_is_refused(void **state)
{
    fixture *f = *state;
    EXPECT_PHYSICS_REFUSED(f, "physics_v1", "physics_gravity",
                           "physics: new build refused, version 1 keeps running: its state "
                           "layout changed under the same state_version 1 (the state is ");
    EXPECT_ONCE(f, "bump state_version so the components migrate through JSON");
    EXPECT_ABSENT(f, "physics 2 load");    /* refused before its code ran */
    EXPECT_ABSENT(f, "records no layout"); /* both builds record it */
}

/* A build that records no layout reads the state through another one: its manager counts
 * far more components than there can be entities. Never trusted: refused, and the old
 * build keeps running with all 32. */
static void Reload_count_beyond_2_22_in_a_handed_over_state_is_refused(void **state)
{
    fixture *f = *state;
    EXPECT_PHYSICS_REFUSED(f, "physics_v1_nolayout", "physics_misread",
                           "physics: new build refused, version 1 keeps running: manager "
                           "'physics' counts 4026531872 components in the state handed over, "
                           "more than there can be entities (2^22)");
    /* built for ABI 1.1 with a state and no ECS_STATE_LAYOUT: said at its load */
    EXPECT_ONCE(f, "plugin 'physics' keeps a state but records no layout of it");
}

/* Builds for ABI 1.0 record no layout: they reload as before, also after or before a build
 * that records one. */
static void Reload_abi_1_0_builds_without_a_layout_reload_as_before(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1_abi10");
    START(f, "rl 1 first update", NULL);
    put_rename(f, "rl_v2_abi10", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    put_rename(f, "rl_v1", "rl.so"); /* records its layout: nothing to compare it with */
    WAIT_LINE(f, "reload: rl 2 -> 1: same state layout, 8 components kept");
    put_rename(f, "rl_v2_abi10", "rl.so");
    WAIT_NTH(f, "reload: rl 1 -> 2: same state layout, 8 components kept", 2);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_OUT(f, "reloads: 3 done, 0 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* ---- --safe: a build that crashes ---- */

/* With --safe, a new build (same state layout) that loads but crashes in its first update
 * is rolled back at the end of that frame to the version before it, which takes the state
 * back and keeps its place in the update order; the next good build reloads normally. */
/* The rollback line names both builds by the time of their file and a hash of its bytes,
 * "(build of HH:MM:SS, 1234abcd)": two builds of one version are told apart. */
static void check_rollback_builds(const fixture *f, const char *file, int line)
{
    char text[1024], crashed[16], good[16];
    unsigned h1, m1, s1, h2, m2, s2;
    line_of(f->proc.result.err, "rolled back from", text, sizeof text);
    const char *at = strstr(text, "rolled back from");
    if (at &&
        sscanf(at,
               "rolled back from the crashed version crash (build of %u:%u:%u, %15[0-9a-f]) "
               "to version 1 (build of %u:%u:%u, %15[0-9a-f]), state kept",
               &h1, &m1, &s1, crashed, &h2, &m2, &s2, good) == 8 &&
        strlen(crashed) == 8 && strlen(good) == 8 && strcmp(crashed, good) != 0)
        return;
    fprintf(stderr, "no rollback line with two build ids: '%s'\n", text);
    dump(f);
    _fail(file, line);
}

static void Reload_safe_crash_after_reload_rolls_back_to_the_last_good_version(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", "--safe");
    put_rename(f, "rl_crash", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> crash: same state layout, 8 components kept");
    WAIT_LINE(f, "[error] guard: plugin 'rl' (rl.so) crashed with SIGSEGV in rl");
    WAIT_LINE(f, "[warn] guard: rl: rolled back from the crashed version crash (build of ");
    check_rollback_builds(f, __FILE__, __LINE__);
    let_run(f, 100);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ONCE(f, "crashed with");
    EXPECT_ABSENT(f, "rl crash unload"); /* a crashed plugin's unload() is not called */
    EXPECT_ABSENT(f, "unloaded after its crash");
    EXPECT_OUT(f, "reloads: 2 done, 0 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "rl", "peer_z"); /* rl kept its place throughout */
}

/* With --safe, a new build that crashes in its load() (abort), while loading the migrated
 * components (SIGFPE) or in the reserve() hint before them (SIGSEGV) is refused: the old
 * version never stopped running, and the next good build reloads normally. */
static void Reload_safe_crash_in_load_or_migration_keeps_the_old_version(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", "--safe");
    put_rename(f, "rl_loadcrash", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: its load() crashed with "
                 "SIGABRT (abort)");
    put_rename(f, "rl_migcrash", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: the new version crashed with "
                 "SIGFPE loading the components");
    put_rename(f, "rl_rescrash", "rl.so"); /* in reserve(), before the first read */
    WAIT_LINE(f, "[error] reload: rl: manager 'rl' crashed with SIGSEGV in reserve()");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: the new version crashed with "
                 "SIGSEGV loading the components");
    let_run(f, 100);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    STOP(f);
    EXPECT_OUT(f, "reloads: 1 done, 3 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "rl", "peer_z");
}

/* With --safe, a build that crashes in a migration never frees the new state it made
 * (its unload() is not called after a crash): the host frees it when it refuses the build
 * and says so then, instead of counting it to the running build and reporting a leak of
 * rl's at exit. */
static void Reload_refused_migration_memory_is_freed_when_refused(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", "--safe");
    put_rename(f, "rl_migcrash", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: the new version crashed with "
                 "SIGFPE loading the components");
    WAIT_LINE(f, "the refused build migcrash held ");
    STOP(f);
    EXPECT_ONCE(f, "allocations when it was refused: freed by the host");
    EXPECT_ABSENT(f, "leaked");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* With --safe, a plugin whose unload() crashes at exit (as one did with an ELF file whose
 * relocations were never applied) costs one line: the world was saved before any unload,
 * the other plugins are unloaded, and the host exits 0. */
static void Reload_safe_crash_in_unload_at_exit_keeps_the_save(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_unloadcrash");
    START(f, "rl 1 first update", "--safe");
    let_run(f, 100);
    STOP(f);
    EXPECT_ONCE(f, "[error] guard: plugin 'rl' (rl.so) crashed with SIGSEGV in unload()");
    EXPECT_ONCE(f, "peer_z 1 unload (shutdown)");
    EXPECT_ONCE(f, "peer_a 1 unload (shutdown)");
    assert_true(strstr(f->run.err, "saved 8 entities") < strstr(f->run.err, "unload (shutdown)"));
    EXPECT_SAVED(f);
}

/* With --safe, a crash in write_component while the world is saved at exit fails that save
 * cleanly (the old file untouched, one line naming the manager, exit 1); a crash in
 * count() (--stats) costs its row's count and one line. Neither ends the host by a signal. */
static void Reload_safe_crash_in_the_save_or_count_at_exit_is_caught(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *variant, *said;
        int code;
    } cases[] = {
        {"rl_savecrash", "manager 'rl' crashed with SIGSEGV in write_component, writing entity", 1},
        {"rl_countcrash", "plugin 'rl' (rl.so) crashed with SIGSEGV in count()", 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        put_rl_with_peers(f, cases[k].variant);
        assert_int_equal(harness_write_file(f->out, "{\"old\": 1}\n", 0600), 0);
        const char *const argv[] = {ECS_HOST_PATH, "--safe",  "--frames", "3",      "--fps",
                                    "0",           "--stats", "--scene",  f->scene, "--save",
                                    f->out,        f->dir,    NULL};
        harness_output r = {0};
        assert_int_equal(harness_run(&r, 60.0, argv), 0);
        char *saved = harness_read_file(f->out, NULL);
        bool kept_old = saved && !strcmp(saved, "{\"old\": 1}\n");
        free(saved);
        if (r.exit_code != cases[k].code || r.term_signal || !strstr(r.err, cases[k].said) ||
            kept_old != (cases[k].code != 0))
            fail_msg("%s: exit %d (signal %d), expected %d with '%s'; old file %s:\n%s",
                     cases[k].variant, r.exit_code, r.term_signal, cases[k].code, cases[k].said,
                     kept_old ? "kept" : "replaced", r.err);
        harness_check_sanitizers(&r);
        harness_output_free(&r);
    }
}

/* With --safe, a plugin that crashes in its reserve() hint or in load_component while a
 * large scene loads (over 1 MiB: pass one shared by two threads, the read-ahead thread
 * started before the hint, for the transforms) fails that load cleanly: the error names
 * the callback it crashed in, the second thread is stopped, and the host exits with the
 * load's failure, not a signal. */
static void Reload_safe_crash_while_a_large_scene_loads_fails_it_cleanly(void **state)
{
    fixture *f = *state;
    enum { BIG = 20000 };
    size_t cap = (size_t)BIG * 128 + 64, n = 0;
    char *text = malloc(cap), tf[4096];
    assert_non_null(text);
    n += (size_t)snprintf(text + n, cap - n, "{\"version\": 1, \"entities\": [");
    for (int i = 1; i <= BIG; i++)
        n += (size_t)snprintf(text + n, cap - n,
                              "%s\n{\"id\": \"e%d\", \"rl\": %d, \"transform\": "
                              "{\"position\": [%d, 1.5, 2.25]}}",
                              i > 1 ? "," : "", i, 1000 * i, i);
    snprintf(text + n, cap - n, "\n]}\n");
    assert_true(strlen(text) > (1u << 20));
    assert_int_equal(harness_write_file(f->scene, text, 0600), 0);
    free(text);
    path_in_dir(f, "transform.so", tf, sizeof tf);
    assert_int_equal(harness_copy_file(TRANSFORM_SO, tf, 0755), 0);
    static const struct {
        const char *variant, *said, *guard;
    } cases[] = {
        {"rl_rescrash", "manager 'rl' crashed with SIGSEGV in reserve()", "SIGSEGV in reserve"},
        {"rl_migcrash", "entities[0].rl: manager 'rl' crashed with SIGFPE",
         "SIGFPE in load_component"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        put_copy(f, cases[c].variant, "rl.so");
        const char *const argv[] = {ECS_HOST_PATH, "-v", "--safe",  "--no-installed-plugins",
                                    "--frames",    "2",  "--scene", f->scene,
                                    f->dir,        NULL};
        harness_output r = {0};
        assert_int_equal(harness_run(&r, 60.0, argv), 0);
        if (r.exit_code != 1 || !strstr(r.err, cases[c].said) || !strstr(r.err, cases[c].guard) ||
            !strstr(r.err, "pass one shared"))
            fail_msg("%s: exit %d (signal %d), expected 1 with '%s' and '%s':\n%s",
                     cases[c].variant, r.exit_code, r.term_signal, cases[c].said, cases[c].guard,
                     r.err);
        harness_check_sanitizers(&r);
        harness_output_free(&r);
    }
}

/* With --safe, a plugin that crashes in update with no earlier version to go back to is
 * unloaded at the end of that frame, its components kept (saved by its own, working, save
 * code); the next good build loads with every value as the crash left it. The neighbours
 * never stop. */
static void Reload_safe_crash_without_earlier_version_unloads_and_the_next_restores(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_crash");
    START(f, "[error] guard: plugin 'rl' (rl.so) crashed with SIGSEGV in rl", "--safe");
    WAIT_LINE(f, "[warn] guard: plugin 'rl' unloaded after its crash; its components are kept");
    let_run(f, 100);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "restored the kept components of 8 entities");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ONCE(f, "crashed with");
    EXPECT_ABSENT(f, "rl crash unload");
    /* what it held is freed by the host and said as that, not as a leak */
    EXPECT_ONCE(f, "allocations the plugin held when it crashed (its unload() is not called");
    EXPECT_ABSENT(f, "leaked");
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_UPDATE_ORDER(f, "peer_a", "peer_z", "rl");
}

/* ---- Dependencies known to the host ---- */

/* rluser uses rl's API through api_find without declaring it: a build of rl that no
 * longer publishes the API is refused naming rluser; rl 1 and rluser go on. */
static void Reload_provider_build_withdrawing_a_used_api_is_refused(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    put_copy(f, "rluser", "rluser.so");
    put_copy(f, "rluser2", "rluser2.so");
    START(f, "rluser2 first update: 8 rl components", NULL);
    put_rename(f, "rl_noapi", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: it no longer publishes API "
                 "'test.reloadee' (version 1 or later), which plugins 'rluser' and 'rluser2' "
                 "use");
    let_run(f, 200);
    STOP(f);
    EXPECT_ONCE(f, "rluser unload"); /* at exit only */
    EXPECT_ONCE(f, "rluser2 unload");
    EXPECT_OUT(f, "reloads: 0 done, 1 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* A build refused after its load() adopted the state (here: it withdraws an API rluser
 * uses) must leave that state as the running build has it: rl counts the reloads its state
 * went through, and the refused build's adoption is not one of them. The next good build
 * is reload 1 of that state. (Two-phase adoption: rl changes the state only when the host
 * accepted it, ecs_on_commit.) */
static void Reload_refused_build_leaves_the_running_state_as_it_was(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    put_copy(f, "rluser", "rluser.so");
    START(f, "rluser first update: 8 rl components", NULL);
    put_rename(f, "rl_noapi", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: it no longer publishes API");
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ONCE(f, "rl 2 load: adopted the previous state (reload 1), 8 components");
    EXPECT_ONCE(f, "rl noapi commit: refused, the state left as it was");
    EXPECT_ONCE(f, "rl noapi unload (keep state)"); /* and not freed */
    EXPECT_OUT(f, "reloads: 1 done, 1 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* ---- Builds that wait for their provider (issue 32 item 4) ---- */

/* physics (32 components) and spawner, which finds "game.physics" version 1, in the
 * folder; the manifest loads physics first (spawner declares no dependency: it only uses
 * the API). */
static void put_physics_and_spawner(fixture *f)
{
    char manifest[4096];
    write_physics_scene(f);
    path_in_dir(f, "manifest.json", manifest, sizeof manifest);
    assert_int_equal(harness_write_file(manifest,
                                        "{\"plugins\": [{\"name\": \"physics\"}, "
                                        "{\"name\": \"spawner\"}]}\n",
                                        0600),
                     0);
    put_copy(f, "physics_v1", "physics.so");
    put_copy(f, "spawner_v1", "a_spawner.so");
}

/* A spawner build that needs "game.physics" version 2 arrives before the physics build
 * that publishes it: refused, naming the API and the version, and tried again when that
 * physics build lands (not left on its old code until its source is touched). */
static void Reload_build_refused_for_want_of_an_api_is_retried_when_its_provider_lands(void **state)
{
    fixture *f = *state;
    put_physics_and_spawner(f);
    START(f, "spawner 1 first update: physics counts 32 components", NULL);
    put_rename(f, "spawner_v2", "a_spawner.so");
    WAIT_LINE(f, "spawner: new build refused, version 1 keeps running: its load() failed: not "
                 "found: it asked api_find for API 'game.physics' version 2 or later; plugin "
                 "'physics' publishes version 1");
    let_run(f, 200); /* nothing retries it while nothing changes */
    put_rename(f, "physics_api2", "physics.so");
    WAIT_LINE(f, "reload: physics 1 -> 3: same state layout, 32 components kept");
    WAIT_LINE(f, "reload: spawner 1 -> 2: same state layout");
    WAIT_LINE(f, "spawner 2 first update: physics counts 32 components");
    STOP(f);
    EXPECT_COUNT(f, "[error]", 1);
    EXPECT_ONCE(f, "spawner 2 load: game.physics found");
    EXPECT_OUT(f, "reloads: 2 done, 1 refused");
    EXPECT_PHYSICS_SAVED(f);
}

/* At start spawner loads first (file order; it declares no dependency, it only finds
 * physics' API): its load() fails, naming the API it wanted. Under --watch it is tried
 * again once physics has published that API, at the first frame boundary. */
static void Reload_plugin_refused_at_start_for_want_of_an_api_loads_once_it_is_there(void **state)
{
    fixture *f = *state;
    write_physics_scene(f);
    put_copy(f, "physics_v1", "physics.so");
    put_copy(f, "spawner_v1", "a_spawner.so");
    START(f, "loaded 32 entities", NULL);
    WAIT_LINE(f, "spawner 1 first update: physics counts 32 components");
    STOP(f);
    EXPECT_ONCE(f, "a_spawner.so: skipped: load() failed: not found: it asked api_find for API "
                   "'game.physics' version 1 or later; no plugin publishes it");
    EXPECT_ONCE(f, "a_spawner.so: API 'game.physics' version 1 is published now: its refused "
                   "build is tried again");
    EXPECT_ONCE(f, "loaded spawner 1 from a_spawner.so");
    EXPECT_PHYSICS_SAVED(f);
}

/* ---- Plugin-wide state outside components (issue 32 item 3) ---- */

/* The number after `prefix` in the last line holding it, or -1. */
static long long last_number_after(const char *text, const char *prefix)
{
    long long n = -1;
    for (const char *at = text ? strstr(text, prefix) : NULL; at; at = strstr(at + 1, prefix))
        if (sscanf(at + strlen(prefix), "%lld", &n) != 1) n = -1;
    return n;
}

/* spawner's counter (its plugin state, no component) survives a reload that changes its
 * state_version: the old build writes it, the new one reads it after the components, so
 * at exit it has counted every frame of the run, not only those since the migration. */
static void Reload_json_migration_keeps_the_plugin_state(void **state)
{
    fixture *f = *state;
    put_physics_and_spawner(f);
    START(f, "spawner 1 first update", NULL);
    let_run(f, 200);
    put_rename(f, "spawner_layout2", "a_spawner.so");
    WAIT_LINE(f, "reload: spawner 1 -> 3: JSON migration");
    WAIT_LINE(f, "spawner 3 first update");
    STOP(f);
    long long read = last_number_after(f->run.err, "spawner 3 state read: counter ");
    long long at_exit = last_number_after(f->run.err, "spawner 3 unload (shutdown): counter ");
    if (read <= 0 || at_exit != frames_run(f)) {
        fprintf(stderr, "counter read %lld, at exit %lld, frames %lld\n", read, at_exit,
                frames_run(f));
        dump(f);
        fail();
    }
    EXPECT_ABSENT(f, "[error]");
    EXPECT_PHYSICS_SAVED(f);
}

/* A build that offers no plugin state (built before ABI 1.1, or simply without) does not
 * lose the old build's: it is kept, saved in the scene under "plugins", and a later build
 * that offers it reads it back. */
static void Reload_plugin_state_no_build_reads_is_kept_for_one_that_does(void **state)
{
    fixture *f = *state;
    put_physics_and_spawner(f);
    START(f, "spawner 1 first update", NULL);
    put_rename(f, "spawner_nostate", "a_spawner.so");
    WAIT_LINE(f, "spawner: the new version offers no plugin state: the old one's is kept");
    put_rename(f, "spawner_v1", "a_spawner.so");
    WAIT_LINE(f, "spawner 1 state read: counter ");
    STOP(f);
    long long kept = last_number_after(f->run.err, "spawner 1 unload (migrated): counter ");
    long long read = last_number_after(f->run.err, "spawner 1 state read: counter ");
    if (kept <= 0 || read != kept) {
        fprintf(stderr, "counter kept %lld, read back %lld\n", kept, read);
        dump(f);
        fail();
    }
    EXPECT_ABSENT(f, "[error]");
}

/* A plugin parked while its provider is away keeps its plugin state (beside the
 * components it has none of) and reads it back when it comes back. */
static void Reload_parked_plugin_gets_its_plugin_state_back(void **state)
{
    fixture *f = *state;
    char manifest[4096];
    put_physics_and_spawner(f);
    START(f, "spawner 1 first update", NULL);
    path_in_dir(f, "manifest.json", manifest, sizeof manifest);
    assert_int_equal(harness_write_file(manifest,
                                        "{\"plugins\": [{\"name\": \"physics\", "
                                        "\"disabled\": true}, {\"name\": \"spawner\"}]}\n",
                                        0600),
                     0);
    WAIT_LINE(f, "plugin 'spawner' parked");
    let_run(f, 100);
    assert_int_equal(harness_write_file(manifest,
                                        "{\"plugins\": [{\"name\": \"physics\"}, "
                                        "{\"name\": \"spawner\"}]}\n",
                                        0600),
                     0);
    WAIT_LINE(f, "spawner 1 state read: counter ");
    STOP(f);
    long long parked = last_number_after(f->run.err, "spawner 1 unload (shutdown): counter ");
    long long read = last_number_after(f->run.err, "spawner 1 state read: counter ");
    const char *first = strstr(f->run.err, "spawner 1 unload (shutdown): counter ");
    long long at_park =
        first ? strtoll(first + strlen("spawner 1 unload (shutdown): counter "), NULL, 10) : -1;
    if (at_park <= 0 || read != at_park || parked < read) {
        fprintf(stderr, "counter at park %lld, read back %lld, at exit %lld\n", at_park, read,
                parked);
        dump(f);
        fail();
    }
    EXPECT_ABSENT(f, "[error]");
}

/* A plugin that offers its state twice in one load() is refused with one line naming the
 * call, and the old build keeps running (as for any refused registration). */
static void Reload_plugin_state_offered_twice_is_refused(void **state)
{
    fixture *f = *state;
    put_physics_and_spawner(f);
    START(f, "spawner 1 first update", NULL);
    put_rename(f, "spawner_twice", "a_spawner.so");
    WAIT_LINE(f, "spawner: new build refused, version 1 keeps running: its load() failed: "
                 "already exists");
    STOP(f);
    EXPECT_ONCE(f, "[error] spawner: plugin_state: the plugin offers its state twice (already "
                   "exists)");
    EXPECT_ABSENT(f, "spawner 5 state read");
    EXPECT_OUT(f, "reloads: 0 done, 1 refused");
}

/* Scenes keep plugin states under "plugins": a save writes spawner's counter and seed, a
 * load into a new host gives them back (after the components), and the new run counts on. */
static void Scene_save_and_load_keep_the_plugin_state(void **state)
{
    fixture *f = *state;
    char second[4200];
    put_physics_and_spawner(f);
    START(f, "spawner 1 first update", NULL);
    let_run(f, 100);
    STOP(f);
    long long saved = last_number_after(f->run.err, "spawner 1 unload (shutdown): counter ");
    char *text = harness_read_file(f->out, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    const cJSON *own = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "plugins"), "spawner");
    const cJSON *counter = cJSON_GetObjectItemCaseSensitive(own, "counter");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(own, "seed");
    bool ok = cJSON_IsNumber(counter) && counter->valuedouble == (double)saved && saved > 0 &&
              cJSON_IsString(seed);
    cJSON_Delete(root);
    free(text);
    if (!ok) {
        fprintf(stderr, "%s holds no \"plugins\": {\"spawner\": {\"counter\": %lld, ...}}\n",
                f->out, saved);
        dump(f);
        fail();
    }
    snprintf(second, sizeof second, "%s/second.json", f->root);
    const char *const argv[] = {ECS_HOST_PATH, "--fps",  "0",    "--frames", "10", "--scene",
                                f->out,        "--save", second, f->dir,     NULL};
    harness_output r;
    assert_int_equal(harness_run(&r, 60.0, argv), 0);
    char want[128];
    snprintf(want, sizeof want, "spawner 1 state read: counter %lld", saved);
    long long after = last_number_after(r.err, "spawner 1 unload (shutdown): counter ");
    bool again = r.exit_code == 0 && strstr(r.err, want) && after == saved + 10;
    if (!again)
        fprintf(stderr, "expected '%s', then counter %lld at exit:\n%s", want, saved + 10, r.err);
    harness_output_free(&r);
    assert_true(again);
}

/* A plugin state the plugin refuses fails the scene load like a bad component: one line
 * with file:line:column and JSON path, exit status 1, and nothing loaded. */
static void Scene_plugin_state_it_refuses_fails_the_load_at_its_place(void **state)
{
    fixture *f = *state;
    put_physics_and_spawner(f);
    assert_int_equal(harness_write_file(f->scene,
                                        "{\"version\": 1, \"entities\": [],\n"
                                        " \"plugins\": {\"spawner\": {\"counter\": -3, "
                                        "\"seed\": \"2a\"}}}\n",
                                        0600),
                     0);
    const char *const argv[] = {ECS_HOST_PATH, "--frames", "1", "--scene", f->scene, f->dir, NULL};
    harness_output r;
    assert_int_equal(harness_run(&r, 60.0, argv), 0);
    bool ok = r.exit_code == 1 &&
              strstr(r.err, "scene.json:2:25: plugins.spawner: plugin 'spawner' refused its "
                            "state: expected \"counter\": a count") &&
              !strstr(r.err, "state read");
    if (!ok) fprintf(stderr, "exit %d:\n%s", r.exit_code, r.err);
    harness_output_free(&r);
    assert_true(ok);
}

/* meson compile relinks the spawner before physics, within one quiet period: the host
 * loads them in dependency order (spawner uses physics' API), so both land, no refusal.
 * (physics comes 50 ms after spawner, so spawner's quiet period ends first: applied alone,
 * it would be refused.) */
static void Reload_files_changed_together_reload_in_dependency_order(void **state)
{
    fixture *f = *state;
    put_physics_and_spawner(f);
    START(f, "spawner 1 first update: physics counts 32 components", "--reload-quiet", "300");
    put_rename(f, "spawner_v2", "a_spawner.so"); /* first, as meson happened to link it */
    let_run(f, 50);
    put_rename(f, "physics_api2", "physics.so");
    WAIT_LINE(f, "reload: spawner 1 -> 2: same state layout");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "refused");
    const char *phys = strstr(f->run.err, "reload: physics 1 -> 3");
    const char *spawn = strstr(f->run.err, "reload: spawner 1 -> 2");
    if (!phys || phys > spawn) {
        fprintf(stderr, "physics did not reload before spawner\n");
        dump(f);
        fail();
    }
    EXPECT_OUT(f, "reloads: 2 done, 0 refused");
    EXPECT_PHYSICS_SAVED(f);
}

/* --safe: rl crashes in its first update with no earlier build to roll back to. rluser,
 * which uses rl's API, is parked first (components kept, unload() called), rl is
 * unloaded; the next rl build brings rl back and then rluser. */
static void Reload_safe_provider_crash_parks_its_users_until_it_is_back(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_crash");
    put_copy(f, "rluser", "rluser.so");
    START(f, "[error] guard: plugin 'rl' (rl.so) crashed with SIGSEGV in rl", "--safe");
    WAIT_LINE(f, "[warn] loader: plugin 'rluser' parked: it depends on plugin 'rl', which "
                 "crashed; "); /* rluser saves no components: nothing to keep */
    WAIT_LINE(f, "[warn] guard: plugin 'rl' unloaded after its crash");
    let_run(f, 100);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "restored the kept components of 8 entities");
    WAIT_LINE(f, "plugin 'rluser' comes back: what it needs is there again");
    WAIT_NTH(f, "rluser first update: 8 rl components", 2);
    STOP(f);
    EXPECT_ONCE(f, "crashed with");
    EXPECT_COUNT(f, "rluser unload", 2); /* parked, and at exit */
    EXPECT_UPDATE_ORDER(f, "peer_a", "peer_z", "rl", "rluser");
}

/* "disabled": true for rl in the manifest parks rluser first; enabling rl brings both back. */
static void Reload_manifest_disabling_a_provider_parks_its_users(void **state)
{
    fixture *f = *state;
    char manifest[4096];
    put_rl_with_peers(f, "rl_v1");
    put_copy(f, "rluser", "rluser.so");
    START(f, "rluser first update: 8 rl components", NULL);
    path_in_dir(f, "manifest.json", manifest, sizeof manifest);
    assert_int_equal(harness_write_file(manifest,
                                        "{\"plugins\": [{\"name\": \"rl\", \"disabled\": true}]}\n",
                                        0644),
                     0);
    WAIT_LINE(f, "plugin 'rluser' parked: it depends on plugin 'rl', which is disabled by "
                 "manifest.json; it has no components to keep, and it comes back when 'rl' "
                 "does"); /* not "its components could not be kept": it has none */
    WAIT_LINE(f, "disabled by manifest.json: plugin 'rl' unloaded");
    let_run(f, 100);
    assert_int_equal(harness_write_file(manifest, "{\"plugins\": []}\n", 0644), 0);
    WAIT_LINE(f, "plugin 'rluser' comes back");
    WAIT_NTH(f, "rluser first update: 8 rl components", 2);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "could not be kept");
    EXPECT_SAVED(f);
}

/* ---- Chains of dependencies: a needs b needs c ---- */

/* The scene e1..e8 with a, b and c values 1000, 2000, ... (each plugin's own manager). */
static void write_chain_scene(const fixture *f)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "{\"version\": 1, \"entities\": [");
    for (int i = 1; i <= ENTITIES; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "%s\n  {\"id\": \"e%d\", \"a\": %d, \"b\": %d, \"c\": %d}",
                              i > 1 ? "," : "", i, 1000 * i, 1000 * i, 1000 * i);
    snprintf(text + n, sizeof text - n, "\n]}\n");
    assert_int_equal(harness_write_file(f->scene, text, 0600), 0);
}

/* c.so publishes test.c; b.so needs c (and calls test.c); a.so needs b (calls test.b). */
static void put_chain(const fixture *f)
{
    write_chain_scene(f);
    put_copy(f, "dep_c", "c.so");
    put_copy(f, "dep_b", "b.so");
    put_copy(f, "dep_a", "a.so");
}

/* A build of c that declares a dependency on a closes the cycle c -> a -> b -> c: at start
 * such files are refused ("dependency cycle"), so the reload is refused the same way,
 * naming the cycle, before the new code runs; c 1 runs on, and so do b and a. */
static void Reload_build_closing_a_dependency_cycle_is_refused_naming_it(void **state)
{
    fixture *f = *state;
    put_chain(f);
    START(f, "a 1 first update", NULL);
    put_rename(f, "dep_c_needs_a", "c.so");
    WAIT_LINE(f, "[error] reload: c: new build refused, version 1 keeps running: dependency "
                 "cycle: c needs a, a needs b, b needs c");
    let_run(f, 100);
    STOP(f);
    EXPECT_ABSENT(f, "c cyc"); /* its code never ran in the host */
    EXPECT_ABSENT(f, "parked");
    EXPECT_OUT(f, "reloads: 0 done, 1 refused");
    EXPECT_CONTINUOUS_OF(f, "a");
    EXPECT_CONTINUOUS_OF(f, "b");
    EXPECT_CONTINUOUS_OF(f, "c");
    EXPECT_SAVED_OF(f, "a");
    EXPECT_SAVED_OF(f, "b");
    EXPECT_SAVED_OF(f, "c");
}

/* Write the manifest of the plugin folder. */
static void write_manifest(const fixture *f, const char *text)
{
    char manifest[4096];
    path_in_dir(f, "manifest.json", manifest, sizeof manifest);
    assert_int_equal(harness_write_file(manifest, text, 0644), 0);
}

/* c finds a's API in an update (a lazy find is allowed), which closes the cycle c -> a ->
 * b -> c while running. Disabling c parks b and a (whatever the graph holds, each plugin
 * once: no endless walk), a before b; enabling c brings back all three with their
 * components. */
static void Reload_parking_walks_a_cycle_made_by_a_lazy_api_find_once(void **state)
{
    fixture *f = *state;
    put_chain(f);
    put_copy(f, "dep_c_late_a", "c.so");
    START(f, "c 1 found API late", NULL);
    write_manifest(f, "{\"plugins\": [{\"name\": \"c\", \"disabled\": true}]}\n");
    WAIT_LINE(f, "disabled by manifest.json: plugin 'c' unloaded");
    let_run(f, 100);
    write_manifest(f, "{\"plugins\": []}\n");
    WAIT_LINE(f, "plugin 'a' comes back");
    WAIT_NTH(f, "a 1 first update", 2);
    STOP(f);
    EXPECT_ONCE(f, "plugin 'a' parked: it depends on plugin 'b', which depends on plugin 'c', "
                   "which is disabled by manifest.json; its components are kept");
    EXPECT_ONCE(f, "plugin 'b' parked: it depends on plugin 'c', which is disabled by "
                   "manifest.json; its components are kept");
    EXPECT_ABSENT(f, "[error]");
    assert_true(strstr(f->run.err, "plugin 'a' parked") < strstr(f->run.err, "plugin 'b' parked"));
    EXPECT_SAVED_OF(f, "a");
    EXPECT_SAVED_OF(f, "b");
    EXPECT_SAVED_OF(f, "c");
}

/* The edges a build made with api_find are that build's: c 1 -> a build that finds x's
 * API in load() -> one that does not. Disabling x then unloads x alone: c (and b and a
 * after it) no longer depends on x, so nothing is parked. And a build of c that finds a's
 * API in load() closes the cycle c -> a -> b -> c: refused like a declared one. */
static void Reload_api_find_edges_belong_to_the_build_that_made_them(void **state)
{
    fixture *f = *state;
    put_chain(f);
    put_copy(f, "dep_x", "x.so");
    START(f, "a 1 first update", NULL);
    put_rename(f, "dep_c_uses_x", "c.so");
    WAIT_LINE(f, "reload: c 1 -> ux: same state layout");
    put_rename(f, "dep_c_plain", "c.so");
    WAIT_LINE(f, "reload: c ux -> plain: same state layout");
    put_rename(f, "dep_c_uses_a", "c.so");
    WAIT_LINE(f, "c: new build refused, version plain keeps running: dependency cycle: c needs "
                 "a, a needs b, b needs c");
    write_manifest(f, "{\"plugins\": [{\"name\": \"x\", \"disabled\": true}]}\n");
    WAIT_LINE(f, "disabled by manifest.json: plugin 'x' unloaded");
    let_run(f, 100);
    STOP(f);
    EXPECT_ABSENT(f, "parked");
    EXPECT_ABSENT(f, "c ua first update"); /* the refused build never ran a frame */
    EXPECT_OUT(f, "reloads: 2 done, 1 refused");
    EXPECT_CONTINUOUS_OF(f, "a");
    EXPECT_CONTINUOUS_OF(f, "b");
    EXPECT_SAVED_OF(f, "a");
    EXPECT_SAVED_OF(f, "b");
}

/* ---- Lifecycle: the transitions a planted bug would break ---- */

/* --safe: rl 1a runs, a new build (same layout) crashes in its first update, and the way
 * back fails: 1a's load() refuses the state it is handed. Then the plugin is unloaded with
 * its components kept (the crashed build can still save them), never left half rolled
 * back; the next good build restores every value. */
static void Reload_safe_rollback_whose_old_load_fails_unloads_keeping_components(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_adoptfail");
    START(f, "rl 1a first update", "--safe");
    put_rename(f, "rl_crash", "rl.so");
    WAIT_LINE(f, "reload: rl 1a -> crash: same state layout, 8 components kept");
    WAIT_LINE(f, "could not take over again: the plugin is unloaded");
    EXPECT_ONCE(f, "[error] guard: rl: version 1a (build of ");
    WAIT_LINE(f, "[warn] guard: plugin 'rl' unloaded after its crash; its components are kept");
    let_run(f, 100);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "restored the kept components of 8 entities");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ONCE(f, "rl 1a load: failing to adopt on purpose");
    EXPECT_ABSENT(f, "rolled back");
    EXPECT_ABSENT(f, "leaked");
    EXPECT_SAVED(f);
}

/* a needs b needs c, each calling its provider's API every update and in unload().
 * Disabling c parks a first, then b (a's unload() still reaches b), then c goes;
 * enabling c brings back c, b and a with every component. */
static void Reload_disabling_the_end_of_a_chain_of_three_parks_it_from_the_top(void **state)
{
    fixture *f = *state;
    put_chain(f);
    START(f, "a 1 first update", NULL);
    write_manifest(f, "{\"plugins\": [{\"name\": \"c\", \"disabled\": true}]}\n");
    WAIT_LINE(f, "disabled by manifest.json: plugin 'c' unloaded");
    let_run(f, 100);
    write_manifest(f, "{\"plugins\": []}\n");
    WAIT_LINE(f, "plugin 'a' comes back");
    WAIT_NTH(f, "a 1 first update", 2);
    STOP(f);
    EXPECT_ONCE(f, "plugin 'a' parked: it depends on plugin 'b', which depends on plugin 'c', "
                   "which is disabled by manifest.json; its components are kept");
    EXPECT_ONCE(f, "plugin 'b' parked: it depends on plugin 'c', which is disabled by "
                   "manifest.json; its components are kept");
    const char *a = strstr(f->run.err, "plugin 'a' parked"),
               *b = strstr(f->run.err, "plugin 'b' parked"),
               *c = strstr(f->run.err, "plugin 'c' unloaded");
    assert_true(a && b && c && a < b && b < c);
    EXPECT_COUNT(f, "a 1 unload: its provider has 8 components", 2); /* parked, and at exit */
    EXPECT_COUNT(f, "b 1 unload: its provider has 8 components", 2);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_SAVED_OF(f, "a");
    EXPECT_SAVED_OF(f, "b");
    EXPECT_SAVED_OF(f, "c");
}

/* rluser found test.reloadee at version 1 or later: a build of rl that offers it again at
 * version 0 is refused naming rluser, and rl 1 goes on. */
static void Reload_provider_build_offering_a_used_api_at_a_lower_version_is_refused(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    put_copy(f, "rluser", "rluser.so");
    START(f, "rluser first update: 8 rl components", NULL);
    put_rename(f, "rl_api_v0", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: it no longer publishes API "
                 "'test.reloadee' (version 1 or later), which plugin 'rluser' uses");
    let_run(f, 100);
    STOP(f);
    EXPECT_ABSENT(f, "rl v0 first update");
    EXPECT_OUT(f, "reloads: 0 done, 1 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* A build whose load() has a registration refused (its API published twice) but returns
 * ECS_OK is refused as such; it hears of the refusal, and rl 1 goes on with its state. */
static void Reload_build_whose_load_went_on_after_a_refused_registration_is_refused(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    put_rename(f, "rl_ignores_refusal", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: its load() went on after a "
                 "refused registration: ");
    let_run(f, 100);
    STOP(f);
    EXPECT_ONCE(f, "rl ir load: publishing again: ");
    EXPECT_ABSENT(f, "rl ir first update");
    EXPECT_OUT(f, "reloads: 0 done, 1 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* A load whose commit fails keeps nothing it published: rl crashes with nothing to roll back
 * to (--safe; its API withdrawn, its components kept); the next file publishes test.first,
 * then test.reloadee grown past the room the host keeps for that name: the commit fails
 * (it used to fail half-way, after test.first), and test.first must not stay published by
 * a plugin that never loaded. So the next build, which publishes test.first too, loads and
 * gets every value. */
static void Reload_commit_failing_half_way_keeps_none_of_its_apis(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_crash");
    START(f, "[warn] guard: plugin 'rl' unloaded after its crash; its components are kept",
          "--safe");
    put_rename(f, "rl_grown_api", "rl.so");
    WAIT_LINE(f, "rl grown unload (shutdown)"); /* refused after its load(): it frees */
    put_rename(f, "rl_first", "rl.so");
    WAIT_LINE(f, "restored the kept components of 8 entities");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ONCE(f, "rl.so: registering failed: API 'test.reloadee' is 1064 bytes, more than "
                   "the 256 the host keeps for it");
    EXPECT_ABSENT(f, "already published");
    EXPECT_SAVED(f);
}

/* A build of rl whose API struct grew past the room the host keeps for test.reloadee
 * (pointers to it must stay valid, so it never moves) is refused naming the API and the
 * sizes; rl 1 goes on, and rluser keeps calling it through its pointer. */
static void Reload_provider_build_whose_api_outgrew_its_storage_is_refused(void **state)
{
    fixture *f = *state;
    put_rl_with_peers(f, "rl_v1");
    put_copy(f, "rluser", "rluser.so");
    START(f, "rluser first update: 8 rl components", NULL);
    put_rename(f, "rl_grown", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 1 keeps running: API 'test.reloadee' is 1064 "
                 "bytes, more than the 256 the host keeps for it");
    let_run(f, 100);
    STOP(f);
    EXPECT_ABSENT(f, "rl g first update");
    EXPECT_OUT(f, "reloads: 0 done, 1 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* ---- A dependency reloaded under its user ---- */

/* Reload the real transform.so (the same file copied over it) under the real mesh.so and
 * tfprobe, which check every frame through the API pointers they got at load that
 * transform's world matrices and mesh's world bounds are right. */
static void Reload_transform_under_mesh_keeps_world_matrices_and_bounds(void **state)
{
    fixture *f = *state;
    assert_int_equal(write_scene(f->scene, 0), 0);
    put_copy(f, TRANSFORM_SO, "transform.so");
    put_copy(f, MESH_SO, "mesh.so");
    put_copy(f, "tfprobe", "tfprobe.so");
    START(f, "loaded tfprobe", NULL);
    let_run(f, 200);
    put_copy(f, TRANSFORM_SO, "transform.so");
    WAIT_LINE(f, "reload: transform 1.0.0 -> 1.0.0: same state layout, 2 components kept");
    WAIT_LINE(f, "tfprobe: transform code changed at frame ");
    let_run(f, 300);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_UPDATE_ORDER(f, "transform", "mesh", "tfprobe");
    unsigned long long checked = 0, after = 0, bad = 1;
    const char *at = strstr(f->run.err, "frames checked");
    while (at && at > f->run.err && at[0] != ':') at--;
    if (!at || sscanf(at, ": %llu frames checked, %llu after the transform code changed, %llu",
                      &checked, &after, &bad) != 3) {
        dump(f);
        fail();
    }
    print_message("# tfprobe: %llu frames checked, %llu after the reload, %llu mismatches\n",
                  checked, after, bad);
    assert_true(after >= 5 && checked > after);
    assert_int_equal(bad, 0);
}

/* A plugin whose every update runs a parallel_for over 1,000,000 items on 3 threads is
 * reloaded while the workers exist (between frames, when no job runs): the new build's
 * jobs give the same sum, on the same threads, and nothing is said wrong. */
static void Reload_while_job_threads_run_the_plugins_jobs(void **state)
{
    fixture *f = *state;
    assert_int_equal(write_scene(f->scene, 0), 0);
    put_copy(f, JOBBER_SO, "jobber.so");
    START(f, "jobber: update 1:", "--threads", "3");
    let_run(f, 100);
    put_copy(f, JOBBER_SO, "jobber.so");
    WAIT_LINE(f, "reload: jobber 1.0.0 -> 1.0.0");
    WAIT_NTH(f, "jobber: update 1:", 2);
    let_run(f, 100);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    check_count(f,
                "[info] jobber: update 0: parallel_for: ok; threads 3; items 1000000 of 1000000; "
                "sum 499500000",
                2, __FILE__, __LINE__);
}

/* The manifest disables transform: mesh, which depends on it, is parked first; both keep
 * their components as JSON, references (parents) included. Enabled again, both come back
 * and every parent, position and bound is what the scene said. */
/* The scene of the hierarchy tests: a <- b <- c, and d (with a mesh) under a; parents
 * listed first, or children first (a save, or a migration's capture, must then put the
 * referenced entities first itself). */
static void write_hierarchy_scene(fixture *f, bool children_first)
{
    static const char *const line[] = {
        " {\"id\": \"a\", \"transform\": {\"position\": [1, 0, 0]}}",
        " {\"id\": \"b\", \"transform\": {\"position\": [0, 2, 0], \"parent\": \"a\"}}",
        " {\"id\": \"c\", \"transform\": {\"position\": [0, 0, 3], \"parent\": \"b\"}}",
        " {\"id\": \"d\", \"transform\": {\"parent\": \"a\"}, \"mesh\": [{\"mesh\": \"m\", "
        "\"bounds\": {\"min\": [-1, -1, -1], \"max\": [1, 1, 1]}}]}"};
    char text[1024];
    int o[4] = {0, 1, 2, 3}, r[4] = {2, 1, 3, 0}; /* c, b, d, a */
    const int *order = children_first ? r : o;
    snprintf(text, sizeof text, "{\"version\": 1, \"entities\": [\n%s,\n%s,\n%s,\n%s]}\n",
             line[order[0]], line[order[1]], line[order[2]], line[order[3]]);
    assert_int_equal(harness_write_file(f->scene, text, 0600), 0);
}

/* The file saved at exit holds that hierarchy again: every parent, position and bound. */
static void check_hierarchy_saved(fixture *f)
{
    char *saved = harness_read_file(f->out, NULL);
    cJSON *doc = saved ? cJSON_Parse(saved) : NULL, *e;
    assert_non_null(doc);
    int checked = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "entities"))
    {
        const char *id = cJSON_GetObjectItemCaseSensitive(e, "id")->valuestring;
        const cJSON *tf = cJSON_GetObjectItemCaseSensitive(e, "transform");
        const cJSON *parent = cJSON_GetObjectItemCaseSensitive(tf, "parent");
        const cJSON *pos = cJSON_GetObjectItemCaseSensitive(tf, "position");
        assert_non_null(tf);
        if (!strcmp(id, "b")) {
            assert_string_equal(parent->valuestring, "a");
            assert_int_equal(cJSON_GetArrayItem(pos, 1)->valuedouble, 2);
            checked++;
        } else if (!strcmp(id, "c")) {
            assert_string_equal(parent->valuestring, "b");
            assert_int_equal(cJSON_GetArrayItem(pos, 2)->valuedouble, 3);
            checked++;
        } else if (!strcmp(id, "d")) {
            assert_string_equal(parent->valuestring, "a");
            const cJSON *mesh = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "mesh"), 0);
            char *text = cJSON_PrintUnformatted(mesh);
            assert_non_null(strstr(text, "\"max\":[1,1,1]"));
            cJSON_free(text);
            checked++;
        } else if (!strcmp(id, "a")) {
            assert_null(parent);
            assert_int_equal(cJSON_GetArrayItem(pos, 0)->valuedouble, 1);
            checked++;
        }
    }
    assert_int_equal(checked, 4);
    cJSON_Delete(doc);
    free(saved);
}

/* A manifest seen between its truncation and its writing (an editor, `>`, the test's own
 * writer under load) is one being written: nothing is applied and nothing said until it
 * changes again. Before, "manifest.json: not applied: the file is empty" (an error line:
 * Reload_disabled_transform_comes_back_with_its_hierarchy failed on it now and then). */
static void Reload_an_empty_manifest_is_one_being_written(void **state)
{
    fixture *f = *state;
    char manifest[4096];
    put_copy(f, TRANSFORM_SO, "transform.so");
    START(f, "loaded transform", NULL);
    path_in_dir(f, "manifest.json", manifest, sizeof manifest);
    assert_int_equal(harness_write_file(manifest, "", 0644), 0);
    let_run(f, 400); /* the manifest is looked at every 100 ms */
    assert_int_equal(
        harness_write_file(
            manifest, "{\"plugins\": [{\"name\": \"transform\", \"disabled\": true}]}\n", 0644),
        0);
    WAIT_LINE(f, "plugin 'transform' unloaded");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
}

static void Reload_disabled_transform_comes_back_with_its_hierarchy(void **state)
{
    fixture *f = *state;
    char manifest[4096];
    write_hierarchy_scene(f, false);
    put_copy(f, TRANSFORM_SO, "transform.so");
    put_copy(f, MESH_SO, "mesh.so");
    START(f, "loaded mesh", NULL);
    path_in_dir(f, "manifest.json", manifest, sizeof manifest);
    assert_int_equal(
        harness_write_file(
            manifest, "{\"plugins\": [{\"name\": \"transform\", \"disabled\": true}]}\n", 0644),
        0);
    WAIT_LINE(f, "plugin 'mesh' parked: it depends on plugin 'transform', which is disabled by "
                 "manifest.json; its components are kept");
    WAIT_LINE(f, "plugin 'transform' unloaded; its components are kept");
    let_run(f, 100);
    assert_int_equal(harness_write_file(manifest, "{\"plugins\": []}\n", 0644), 0);
    WAIT_LINE(f, "plugin 'mesh' comes back");
    WAIT_NTH(f, "restored the kept components of", 2);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    check_hierarchy_saved(f);
}

/* A reload of transform to another state_version migrates the whole hierarchy through
 * JSON. Parents listed first: the capture is in order, so the new version's readers start
 * at the values the capture noted, and the parents resolve through ids read only then.
 * Children first: the capture reorders its text, and the restore reads it whole. */
static void check_layout_change_migrates_hierarchy(fixture *f, bool children_first)
{
    write_hierarchy_scene(f, children_first);
    put_copy(f, TRANSFORM_SO, "transform.so");
    put_copy(f, MESH_SO, "mesh.so");
    START(f, "loaded mesh", NULL);
    put_rename(f, "transform_layout3", "transform.so");
    WAIT_LINE(f, "reload: transform 1.0.0 -> 1.0.0: JSON migration, 4 components kept");
    let_run(f, 100);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    check_hierarchy_saved(f);
}

static void Reload_transform_layout_change_migrates_its_hierarchy(void **state)
{
    check_layout_change_migrates_hierarchy(*state, false);
}

static void Reload_transform_layout_change_migrates_a_hierarchy_listed_children_first(void **state)
{
    check_layout_change_migrates_hierarchy(*state, true);
}

/* ---- Polling ---- */

static void Reload_poll_mode_detects_a_new_build(void **state)
{
    fixture *f = *state;
    char watching[4200];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", "--poll", NULL);
    snprintf(watching, sizeof watching, "reload: watching %s (polling)", f->dir);
    EXPECT_ONCE(f, watching);
    put_copy(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_OUT(f, "reloads: 1 done, 0 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* ---- Watching: each case with inotify and with --poll ---- */

/* rl v1 and its peers under the host, with inotify (poll 0) or --poll (1), -v, and a
 * quiet period of quiet_ms. */
static void start_watching(fixture *f, int poll, const char *quiet_ms)
{
    const char *with_poll[] = {"-v", "--reload-quiet", quiet_ms, "--poll", NULL};
    if (!poll) with_poll[3] = NULL;
    put_rl_with_peers(f, "rl_v1");
    start(f, "rl 1 first update", with_poll);
}

/* Write one byte at the end of path and close it, n times: two inotify events each
 * (IN_MODIFY, IN_CLOSE_WRITE), never two alike in a row, so none are merged. */
static void append_bytes(const char *path, long n)
{
    for (long i = 0; i < n; i++) {
        FILE *out = fopen(path, "a");
        assert_non_null(out);
        fputc('.', out);
        assert_int_equal(fclose(out), 0);
    }
}

/* The events of a stopped host overflow its inotify queue (more than the kernel's
 * max_queued_events), then a new build lands, its events lost: the host must look at
 * every file again (it says so with -v; proof that the queue really overflowed) and
 * reload. With --poll, the same storm and build: one reload. */
static void Reload_after_an_inotify_queue_overflow_the_build_is_seen(void **state)
{
    fixture *f = *state;
    char *limit = harness_read_file("/proc/sys/fs/inotify/max_queued_events", NULL), noise[4200];
    long max_queued = limit ? atol(limit) : 16384;
    free(limit);
    path_in_dir(f, "noise.txt", noise, sizeof noise);
    for (int poll = 0; poll < 2; poll++) {
        start_watching(f, poll, "50");
        assert_int_equal(kill(f->proc.pid, SIGSTOP), 0); /* it reads no event now */
        append_bytes(noise, max_queued / 2 + 1000);
        put_rename(f, "rl_v2", "rl.so"); /* past the overflow: these events are lost */
        assert_int_equal(kill(f->proc.pid, SIGCONT), 0);
        WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
        if (!poll) WAIT_LINE(f, "events were lost (inotify's queue overflowed)");
        STOP(f);
        EXPECT_COUNT(f, "reload: rl ", 1);
        EXPECT_ABSENT(f, "[error]");
        EXPECT_CONTINUOUS(f);
        EXPECT_SAVED(f);
        unlink(noise);
    }
}

/* Seconds on the monotonic clock. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The quiet period counts from a file's last change, not its first: builds land every
 * 100 ms for 2.5 s (v2, v1, v2, ... v2, each written and renamed in place like lld) under
 * a quiet period of 1 s (1.25 s polled), so the file never stands still that long until
 * the last: one reload, to v2, and none on the way. Should the test itself be held up for
 * 0.7 s between two builds (a loaded machine), that round proves nothing and runs again. */
static void Reload_quiet_period_counts_from_the_last_change(void **state)
{
    fixture *f = *state;
    for (int poll = 0; poll < 2; poll++) {
        bool conclusive = false;
        for (int round = 0; round < 3 && !conclusive; round++) {
            start_watching(f, poll, "1000");
            double last = now_s(), longest = 0;
            for (int i = 0; i < 25; i++) {
                put_rename(f, i % 2 ? "rl_v1" : "rl_v2", "rl.so");
                double t = now_s();
                if (t - last > longest) longest = t - last;
                last = t;
                if (i < 24) let_run(f, 100);
            }
            WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
            let_run(f, 1500); /* another quiet period and more: nothing else comes */
            STOP(f);
            conclusive = longest < 0.7;
            if (!conclusive) {
                print_message("# round %d: held up %.2f s between two builds: again\n", round,
                              longest);
                continue;
            }
            EXPECT_COUNT(f, "reload: rl ", 1);
            EXPECT_ABSENT(f, "[error]");
            EXPECT_CONTINUOUS(f);
            EXPECT_SAVED(f);
        }
        assert_true(conclusive);
    }
}

/* An empty file is never a finished build (a linker creates its output empty first): rl.so
 * emptied and left so, then a new plugin x.so added; once x has loaded, the empty rl.so has
 * been past its quiet period as long, and it was not tried. The full build then reloads. */
static void Reload_an_empty_file_is_never_tried(void **state)
{
    fixture *f = *state;
    for (int poll = 0; poll < 2; poll++) {
        char rl[4200];
        start_watching(f, poll, "50");
        path_in_dir(f, "rl.so", rl, sizeof rl);
        assert_int_equal(truncate(rl, 0), 0);
        let_run(f, 20);
        put_copy(f, "dep_x", "x.so");
        WAIT_LINE(f, "loaded x 1 from x.so");
        let_run(f, 300);
        put_rename(f, "rl_v2", "rl.so");
        WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
        STOP(f);
        EXPECT_ABSENT(f, "refused");
        EXPECT_ABSENT(f, "[error]");
        EXPECT_COUNT(f, "reload: rl ", 1);
        EXPECT_CONTINUOUS(f);
        EXPECT_SAVED(f);
        remove_in_dir(f, "x.so");
    }
}

/* The plugin folder removed and made again with files it never had (a new plugin beside
 * the new build): the new plugin loads, the build reloads. */
static void Reload_folder_that_comes_back_with_new_files_loads_them(void **state)
{
    fixture *f = *state;
    for (int poll = 0; poll < 2; poll++) {
        start_watching(f, poll, "50");
        assert_int_equal(harness_remove_tree(f->dir), 0);
        let_run(f, 400);
        assert_int_equal(mkdir(f->dir, 0700), 0);
        put_rl_with_peers(f, "rl_v2");
        put_copy(f, "dep_x", "x.so");
        WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
        WAIT_LINE(f, "loaded x 1 from x.so");
        WAIT_LINE(f, "x 1 first update");
        STOP(f);
        EXPECT_ABSENT(f, "[error]");
        EXPECT_CONTINUOUS(f);
        EXPECT_SAVED(f);
        remove_in_dir(f, "x.so");
    }
}

/* --trace holds a slice for each reload, named after the file, beside the frames'. */
static void Reload_has_its_slice_in_the_trace(void **state)
{
    fixture *f = *state;
    char *trace = harness_join(f->root, "trace.json");
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", "--trace", trace);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout");
    STOP(f);
    char *text = harness_read_file(trace, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL, *e;
    assert_non_null(root);
    int reloads = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        reloads +=
            !strcmp(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, "reload rl.so") &&
            !strcmp(cJSON_GetObjectItemCaseSensitive(e, "cat")->valuestring, "reload");
    }
    assert_int_equal(reloads, 1);
    cJSON_Delete(root);
    free(text);
    free(trace);
}

/* ---- Links, folders that go and come back, rename storms ---- */

/* root/NAME, a folder outside the plugin folder (0700) */
static void outside(const fixture *f, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", f->root, name);
    if (mkdir(buf, 0700) == 0 || errno == EEXIST) return;
    print_error("mkdir %s: %s\n", buf, strerror(errno));
    fail();
}

static void copy_to(const char *variant, const char *dst)
{
    char src[4096];
    built(variant, src, sizeof src);
    if (harness_copy_file(src, dst, 0755) == 0) return;
    print_error("cannot copy %s to %s: %s\n", src, dst, strerror(errno));
    fail();
}

/* Two plugin folders under --watch: both are watched, each with its own manifest. */
static void Reload_watches_every_plugin_folder(void **state)
{
    fixture *f = *state;
    char second[4096], target[4200], tmp[4200], manifest[4200];
    outside(f, "second", second, sizeof second);
    snprintf(target, sizeof target, "%s/rl.so", second);
    snprintf(tmp, sizeof tmp, "%s/.rl.so.tmp", second);
    copy_to("rl_v1", target);
    put_copy(f, "peer_a", "a_peer.so");
    START(f, "rl 1 first update", second); /* folders: second, then the fixture's */
    copy_to("rl_v2", tmp);
    assert_int_equal(rename(tmp, target), 0);
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    snprintf(manifest, sizeof manifest, "%s/manifest.json", second);
    assert_int_equal(harness_write_file(manifest,
                                        "{\"plugins\": [{\"name\": \"rl\", \"disabled\": true}]}\n",
                                        0644),
                     0);
    WAIT_LINE(f, "rl.so: disabled by manifest.json: plugin 'rl' unloaded");
    put_copy(f, "peer_z", "z_peer.so"); /* the other folder is watched too */
    WAIT_LINE(f, "loaded peer_z");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    char watching[4200];
    snprintf(watching, sizeof watching, "watching %s (inotify)", second);
    EXPECT_ONCE(f, watching);
}

/* rl.so a symlink into another folder (as the tutorial links transform.so): a new build
 * of the target reloads it under inotify, in place (cp) or renamed over (lld); a link
 * pointed elsewhere (ln -sf) reloads too. */
static void Reload_symlinked_plugin_reloads_when_its_target_changes(void **state)
{
    fixture *f = *state;
    char out[4096], target[4200], other[4200], link[4096], tmp[4200];
    outside(f, "out", out, sizeof out);
    snprintf(target, sizeof target, "%s/rl.so", out);
    snprintf(other, sizeof other, "%s/rl-other.so", out);
    copy_to("rl_v1", target);
    put_copy(f, "peer_a", "a_peer.so");
    path_in_dir(f, "rl.so", link, sizeof link);
    assert_int_equal(symlink(target, link), 0);
    START(f, "rl 1 first update", NULL);
    copy_to("rl_v2", target); /* cp over the target: the same inode */
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    snprintf(tmp, sizeof tmp, "%s/.rl.so.tmp", out); /* lld: a new inode renamed over it */
    copy_to("rl_v1", tmp);
    assert_int_equal(rename(tmp, target), 0);
    WAIT_LINE(f, "reload: rl 2 -> 1: same state layout, 8 components kept");
    copy_to("rl_v2", other); /* ln -sf: the link pointed at another file */
    snprintf(tmp, sizeof tmp, "%s/.rl.link", f->dir);
    assert_int_equal(symlink(other, tmp), 0);
    assert_int_equal(rename(tmp, link), 0);
    WAIT_NTH(f, "reload: rl 1 -> 2: same state layout, 8 components kept", 2);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_OUT(f, "reloads: 3 done, 0 refused");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* PLUGIN_DIR/dev a symlink to a build folder: watched like a subfolder, with inotify and
 * with --poll. */
static void Reload_symlinked_subfolder_is_watched(void **state)
{
    fixture *f = *state;
    char build[4096], link[4096], target[4200], tmp[4200];
    outside(f, "build", build, sizeof build);
    snprintf(target, sizeof target, "%s/rl.so", build);
    snprintf(tmp, sizeof tmp, "%s/.rl.so.tmp", build);
    path_in_dir(f, "dev", link, sizeof link);
    assert_int_equal(symlink(build, link), 0);
    put_copy(f, "peer_a", "a_peer.so");
    for (int poll = 0; poll < 2; poll++) {
        copy_to("rl_v1", target);
        if (poll)
            START(f, "rl 1 first update", "--poll");
        else
            START(f, "rl 1 first update", NULL);
        copy_to("rl_v2", tmp);
        assert_int_equal(rename(tmp, target), 0);
        WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
        WAIT_LINE(f, "rl 2 first update");
        STOP(f);
        EXPECT_ABSENT(f, "[error]");
        EXPECT_OUT(f, "reloads: 1 done, 0 refused");
        EXPECT_CONTINUOUS(f);
    }
}

/* ln -s during --watch: a new link is complete at once (no writer to wait for). */
static void Reload_new_symlinked_plugin_loads_at_once(void **state)
{
    fixture *f = *state;
    char src[4096], link[4096];
    put_copy(f, "peer_a", "a_peer.so");
    START(f, "loaded peer_a", NULL);
    built("rl_v1", src, sizeof src);
    path_in_dir(f, "rl.so", link, sizeof link);
    assert_int_equal(symlink(src, link), 0);
    WAIT_LINE(f, "rl 1 first update"); /* within WAIT (10 s), not a writer timeout (60 s) */
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
}

/* Folders and files that appear or change during --watch pass the checks of the start:
 * a new subfolder others may write, the plugin folder made writable, a symlink whose
 * target lies in a folder others may write. The running version goes on; fixed, the next
 * build loads. */
static void Reload_new_folders_and_links_pass_the_permission_checks(void **state)
{
    fixture *f = *state;
    char sub[4200], shared[4096], target[4200], link[4096], want[8400];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    snprintf(sub, sizeof sub, "%s/open", f->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(chmod(sub, 0777), 0);
    put_copy(f, "rl_v2", "open/rl.so");
    snprintf(want, sizeof want, "open/rl.so: refused: its folder %s is writable by others", sub);
    WAIT_LINE(f, want);
    assert_int_equal(chmod(f->dir, 0777), 0);
    put_rename(f, "rl_v2", "rl.so");
    snprintf(want, sizeof want, "rl.so: refused: its folder %s is writable by others", f->dir);
    WAIT_LINE(f, want);
    assert_int_equal(chmod(f->dir, 0700), 0);
    assert_int_equal(chmod(f->root, 0777), 0); /* a parent others may write, not sticky */
    put_rename(f, "rl_v2", "rl.so");
    snprintf(want, sizeof want,
             "rl.so: refused: its folder %s is inside %s, which is writable by others", f->dir,
             f->root);
    WAIT_LINE(f, want);
    assert_int_equal(chmod(f->root, 0700), 0);
    outside(f, "shared", shared, sizeof shared);
    assert_int_equal(chmod(shared, 0777), 0);
    snprintf(target, sizeof target, "%s/rl.so", shared);
    copy_to("rl_v2", target);
    assert_int_equal(chmod(f->dir, 0700), 0);
    path_in_dir(f, "linked.so", link, sizeof link);
    assert_int_equal(symlink(target, link), 0);
    snprintf(want, sizeof want, "linked.so: refused: its target's folder %s is writable by others",
             shared);
    WAIT_LINE(f, want);
    put_rename(f, "rl_v2", "rl.so"); /* all fixed but the two: the build loads */
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    STOP(f);
    EXPECT_ABSENT(f, "already loaded");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* rm -rf the watched folder (or a subfolder) and build it again: watched again when it
 * is back, the plugins reload with their components kept. */
static void Reload_deleted_and_recreated_folder_is_watched_again(void **state)
{
    fixture *f = *state;
    char sub[4200];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    assert_int_equal(harness_remove_tree(f->dir), 0); /* rm -rf build */
    let_run(f, 300);
    assert_int_equal(mkdir(f->dir, 0700), 0); /* meson setup build; meson compile */
    put_rl_with_peers(f, "rl_v2");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    snprintf(sub, sizeof sub, "%s/build", f->dir); /* the same for a subfolder */
    assert_int_equal(mkdir(sub, 0700), 0);
    put_copy(f, "rl_v1", "build/rl.so");
    remove_in_dir(f, "rl.so");
    WAIT_LINE(f, "plugin 'rl' moved here from rl.so");
    WAIT_LINE(f, "reload: rl 2 -> 1: same state layout, 8 components kept");
    assert_int_equal(harness_remove_tree(sub), 0);
    let_run(f, 300);
    assert_int_equal(mkdir(sub, 0700), 0);
    put_copy(f, "rl_v2", "build/rl.so");
    WAIT_NTH(f, "reload: rl 1 -> 2: same state layout, 8 components kept", 2);
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "rl 1 unload (shutdown)");
    EXPECT_ABSENT(f, "rl 2 unload (shutdown)\n[");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* An ECS_PLUGIN_PATH folder that is not there at start (and its parent neither) is skipped
 * with one warning and watched for, inotify or --poll: made later, with a plugin copied
 * in, the plugin loads (issue 32: it was never watched, and the log said both "cannot
 * watch it" and "watching"). */
static void Reload_plugin_folder_missing_at_start_loads_when_it_appears(void **state)
{
    fixture *f = *state;
    for (int poll = 0; poll < 2; poll++) {
        char parent[4096], later[4200], dst[4300], want[4400];
        snprintf(parent, sizeof parent, "%s/later%d", f->root, poll);
        snprintf(later, sizeof later, "%s/plugins", parent);
        put_rl_with_peers(f, "rl_v1");
        setenv("ECS_PLUGIN_PATH", later, 1);
        if (poll)
            START(f, "rl 1 first update", "--poll");
        else
            START(f, "rl 1 first update", NULL);
        unsetenv("ECS_PLUGIN_PATH");
        snprintf(want, sizeof want, "[warn] loader: %s: ECS_PLUGIN_PATH names a folder", later);
        WAIT_LINE(f, want);
        snprintf(want, sizeof want, "watching for %s to appear", later);
        WAIT_LINE(f, want);
        let_run(f, 300);
        assert_int_equal(mkdir(parent, 0700), 0);
        assert_int_equal(mkdir(later, 0700), 0);
        snprintf(dst, sizeof dst, "%s/x.so", later);
        copy_to("dep_x", dst);
        WAIT_LINE(f, "loaded x 1 from x.so");
        WAIT_LINE(f, "x 1 first update");
        STOP(f);
        EXPECT_ABSENT(f, "cannot watch");
        EXPECT_ABSENT(f, "[error]");
        EXPECT_COUNT(f, "[warn]", 1);
        EXPECT_CONTINUOUS(f);
        EXPECT_SAVED(f);
    }
}

/* 3,000 renames of one file, back and forth: the plugin is never lost; a last rename is a
 * move, and the next build reloads it. */
static void Reload_rename_storm_keeps_the_plugin(void **state)
{
    fixture *f = *state;
    char a[4096], b[4096];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    path_in_dir(f, "rl.so", a, sizeof a);
    path_in_dir(f, "rl-b.so", b, sizeof b);
    for (int i = 0; i < 3000; i++) assert_int_equal(rename(i % 2 ? b : a, i % 2 ? a : b), 0);
    let_run(f, 2500); /* past the grace a deleted file gets */
    assert_int_equal(rename(a, b), 0);
    WAIT_LINE(f, "plugin 'rl' moved here from rl.so");
    put_copy(f, "rl_v2", "rl-b.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    WAIT_LINE(f, "rl 2 first update");
    STOP(f);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "rl 1 unload (shutdown)");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* ---- 1,000 reloads: nothing may grow ---- */

typedef struct footprint {
    long rss_kb;   /* VmRSS */
    int fds, maps; /* entries of /proc/PID/fd, lines of /proc/PID/maps */
    int copies;    /* files in the private folder */
} footprint;

static int entries_of(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return d ? n : -1;
}

static footprint footprint_of(pid_t pid, const char *private_dir)
{
    footprint fp = {-1, -1, -1, -1};
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *status = harness_read_file(path, NULL);
    const char *rss = status ? strstr(status, "VmRSS:") : NULL;
    if (rss) sscanf(rss, "VmRSS: %ld", &fp.rss_kb);
    free(status);
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    char *maps = harness_read_file(path, NULL);
    fp.maps = maps ? count_of(maps, "\n") : -1;
    free(maps);
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    fp.fds = entries_of(path);
    fp.copies = entries_of(private_dir);
    return fp;
}

static void Reload_1000_cycles_keep_memory_fds_maps_and_copies_flat(void **state)
{
    fixture *f = *state;
    char line[4200], private_dir[4096] = "", needle[64];
    footprint at100 = {0}, at1000 = {0};
    struct timespec t0, t1;
    put_copy(f, "rl_v1", "rl.so");
    START(f, "rl 1 first update", "--fps", "0", "--reload-quiet", "1");
    line_of(f->proc.result.err, "private copies in ", line, sizeof line);
    assert_int_equal(
        sscanf(strstr(line, "private copies in "), "private copies in %4095s", private_dir), 1);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 1; i <= CYCLES; i++) {
        put_rename(f, i % 2 ? "rl_v2" : "rl_v1", "rl.so");
        snprintf(needle, sizeof needle, "(reload %d)", i);
        if (!wait_times(f, needle, 1, WAIT)) {
            fprintf(stderr, "reload %d did not come\n", i);
            dump(f);
            fail();
        }
        if (i != 100 && i != CYCLES) continue;
        /* "(reload i)" comes from the new code's load(): wait for the swap to finish */
        if (!wait_times(f, "same state layout", i, WAIT)) {
            dump(f);
            fail();
        }
        *(i == 100 ? &at100 : &at1000) = footprint_of(f->proc.pid, private_dir);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    STOP(f);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    print_message("# %d reloads in %.2f s (%.2f ms each, file write + rename included)\n", CYCLES,
                  s, s * 1e3 / CYCLES);
    print_message("# after reload 100: VmRSS %ld kB, %d fds, %d maps, %d private copies\n",
                  at100.rss_kb, at100.fds, at100.maps, at100.copies);
    print_message("# after reload %d: VmRSS %ld kB, %d fds, %d maps, %d private copies\n", CYCLES,
                  at1000.rss_kb, at1000.fds, at1000.maps, at1000.copies);
    struct stat st;
    assert_int_not_equal(stat(private_dir, &st), 0); /* removed at exit */
    assert_int_equal(errno, ENOENT);
    assert_int_equal(at1000.fds, at100.fds);
    assert_true(at1000.maps <= at100.maps + MAPS_SLACK);
    assert_int_equal(at100.copies, 2); /* the running version and the one to roll back to */
    assert_int_equal(at1000.copies, 2);
#ifndef UNDER_ASAN /* its quarantine keeps freed memory on purpose */
    assert_true(at100.rss_kb > 0 && at1000.rss_kb - at100.rss_kb < RSS_GROWTH);
#endif
    char done[64];
    snprintf(done, sizeof done, "reloads: %d done, 0 refused", CYCLES);
    EXPECT_OUT(f, done);
    EXPECT_ABSENT(f, "[error]");
    EXPECT_ABSENT(f, "[warn]");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* 200 older files of a plugin that is loaded already, and 100 refused ones: one line
 * each, and none of them keeps a mapping or a private copy (16,000 exhausted the map
 * limit). */
static void Reload_refused_and_duplicate_files_keep_no_mapping(void **state)
{
    fixture *f = *state;
    char line[4200], private_dir[4096] = "", name[64];
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    line_of(f->proc.result.err, "private copies in ", line, sizeof line);
    assert_int_equal(
        sscanf(strstr(line, "private copies in "), "private copies in %4095s", private_dir), 1);
    footprint before = footprint_of(f->proc.pid, private_dir);
    for (int i = 0; i < 200; i++) { /* older copies of rl: a newer file would be its build */
        char dup[4096];
        snprintf(name, sizeof name, "dup%03d.so", i);
        put_copy(f, "rl_v2", name);
        path_in_dir(f, name, dup, sizeof dup);
        /* both times, as touch sets them: an mtime alone reaches inotify as IN_MODIFY */
        struct timespec hour_ago[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
        assert_int_equal(utimensat(AT_FDCWD, dup, hour_ago, 0), 0);
    }
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "junk%03d.so", i);
        write_garbage(f, name);
    }
    WAIT_NTH(f, "plugin name 'rl' is already loaded from rl.so, a newer file: ignored", 200);
    WAIT_NTH(f, ": refused: ", 100);
    let_run(f, 100);
    footprint after = footprint_of(f->proc.pid, private_dir);
    STOP(f);
    print_message("# before: %d maps, %d copies; after 300 refused files: %d maps, %d copies\n",
                  before.maps, before.copies, after.maps, after.copies);
    /* one mapping kept per file would be 200 or more (about 5 each); the allocator maps a
     * few regions of its own for 300 log lines, ASan's 40-50 when the 300 files of one
     * quiet period are applied together (none here without it) */
    assert_true(after.maps < before.maps + FILES_MAPS_SLACK);
    assert_int_equal(after.copies, before.copies);
    assert_int_equal(after.fds, before.fds);
    EXPECT_COUNT(f, "already loaded from rl.so", 200);
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* ---- The private folder ---- */

/* The private folder of the host started last (from its log line). */
static void private_dir_of(const fixture *f, char *buf, size_t size)
{
    char line[4200];
    assert_non_null(line_of(f->proc.result.err, "private copies in ", line, sizeof line));
    char fmt[32];
    snprintf(fmt, sizeof fmt, "private copies in %%%zus", size - 1);
    assert_int_equal(sscanf(strstr(line, "private copies in "), fmt, buf), 1);
}

/* rl v1 and its peers under the host with XDG_RUNTIME_DIR=root/run (into run, 4096
 * bytes), its private folder (into priv, 4096 bytes) checked to be there. */
static void start_in_runtime_dir(fixture *f, char *run, char *priv)
{
    outside(f, "run", run, 4096);
    setenv("XDG_RUNTIME_DIR", run, 1);
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", NULL);
    unsetenv("XDG_RUNTIME_DIR");
    private_dir_of(f, priv, 4096);
    assert_int_equal(strncmp(priv, run, strlen(run)), 0); /* under $XDG_RUNTIME_DIR */
}

/* Copies go through the descriptor of the folder the host made, never its name: moved
 * away and a symlink to another user's folder put in its place, the copies still land in
 * the host's own folder. Made readable by others (not 0700), it is refused before a copy,
 * and the running version goes on. */
static void Reload_private_folder_is_used_by_descriptor_and_checked_before_each_copy(void **state)
{
    fixture *f = *state;
    char run[4096], priv[4096], moved[4200], attacker[4096];
    start_in_runtime_dir(f, run, priv);
    snprintf(moved, sizeof moved, "%s.moved", priv);
    outside(f, "attacker", attacker, sizeof attacker);
    assert_int_equal(rename(priv, moved), 0);
    assert_int_equal(symlink(attacker, priv), 0);
    int copies = entries_of(moved);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    assert_int_equal(entries_of(attacker), 0);
    assert_true(entries_of(moved) >= copies);
    assert_int_equal(chmod(moved, 0755), 0);
    put_rename(f, "rl_v1", "rl.so");
    WAIT_LINE(f, "rl: new build refused, version 2 keeps running: the private folder");
    WAIT_LINE(f, "is not private any more (mode 0755, not 0700)");
    assert_int_equal(chmod(moved, 0700), 0);
    put_rename(f, "rl_v1", "rl.so");
    WAIT_LINE(f, "reload: rl 2 -> 1: same state layout, 8 components kept");
    STOP(f);
    assert_int_equal(entries_of(attacker), 0);
    EXPECT_ONCE(f, "was moved or replaced: not removed by name");
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

/* The one entry of folder dir (its full path into buf). */
static void only_entry(const char *dir, char *buf, size_t size)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' && n++ == 0) snprintf(buf, size, "%s/%s", dir, e->d_name);
    closedir(d);
    assert_int_equal(n, 1);
}

/* A tmp cleaner removes the private folder under a running host (as systemd-tmpfiles or
 * tmpreaper do): removal is no attack, so the next build gets a new private folder, made
 * and checked as at start, with one warning naming both, and reloads. Twice; the last
 * folder is removed at exit. A folder opened up is still refused (the test above). */
static void Reload_removed_private_folder_is_made_again_with_one_warning(void **state)
{
    fixture *f = *state;
    char run[4096], priv[4096], again[4200], last[4200];
    start_in_runtime_dir(f, run, priv);
    assert_int_equal(harness_remove_tree(priv), 0);
    put_rename(f, "rl_v2", "rl.so");
    WAIT_LINE(f, "reload: rl 1 -> 2: same state layout, 8 components kept");
    EXPECT_ONCE(f, "was removed: private copies now in ");
    only_entry(run, again, sizeof again); /* a new one, beside where the old one was */
    assert_string_not_equal(again, priv);
    assert_int_equal(harness_remove_tree(again), 0);
    put_rename(f, "rl_v1", "rl.so");
    WAIT_LINE(f, "reload: rl 2 -> 1: same state layout, 8 components kept");
    EXPECT_COUNT(f, "was removed: private copies now in ", 2);
    only_entry(run, last, sizeof last);
    struct stat st;
    assert_int_equal(stat(last, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    STOP(f);
    EXPECT_ABSENT(f, "is not private any more");
    assert_int_equal(entries_of(run), 0); /* the last one removed at exit */
    EXPECT_CONTINUOUS(f);
    EXPECT_SAVED(f);
}

static void make_folder_with_file(const char *dir, mode_t mode)
{
    char file[4200];
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(file, sizeof file, "%s/keep.so", dir);
    assert_int_equal(harness_write_file(file, "keep", 0600), 0);
    assert_int_equal(chmod(dir, mode), 0);
}

/* The sweep of folders left by dead hosts removes only real folders of this user, mode
 * 0700: never a planted symlink (nor what it points to), another user's folder, or a
 * folder others may read. */
static void Reload_sweep_of_stale_private_folders_never_follows_a_link(void **state)
{
    fixture *f = *state;
    char run[4096], victim[4096], path[4200], link[4200], ours[4200], open_one[4200], foreign[4200];
    outside(f, "run", run, sizeof run);
    outside(f, "victim", victim, sizeof victim);
    snprintf(path, sizeof path, "%s/keep.so", victim);
    assert_int_equal(harness_write_file(path, "keep", 0600), 0);
    snprintf(link, sizeof link, "%s/ecs-host-999999999-AAAAAA", run); /* no such pid */
    assert_int_equal(symlink(victim, link), 0);
    snprintf(ours, sizeof ours, "%s/ecs-host-999999998-BBBBBB", run);
    make_folder_with_file(ours, 0700);
    snprintf(open_one, sizeof open_one, "%s/ecs-host-999999997-CCCCCC", run);
    make_folder_with_file(open_one, 0755);
    snprintf(foreign, sizeof foreign, "%s/ecs-host-999999996-DDDDDD", run);
    make_folder_with_file(foreign, 0700);
    bool root = geteuid() == 0;
    if (root) assert_int_equal(chown(foreign, 65534, 65534), 0); /* nobody's */
    setenv("XDG_RUNTIME_DIR", run, 1);
    put_rl_with_peers(f, "rl_v1");
    START(f, "rl 1 first update", "-v");
    unsetenv("XDG_RUNTIME_DIR");
    STOP(f);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);      /* the link's target untouched */
    assert_int_equal(lstat(link, &st), 0);     /* the link itself left */
    assert_int_not_equal(lstat(ours, &st), 0); /* a stale folder of ours: removed */
    assert_int_equal(entries_of(open_one), 1); /* not 0700: left alone */
    assert_int_equal(entries_of(foreign), 1);  /* another user's: left alone */
    EXPECT_ONCE(f, "removing ");
    EXPECT_ONCE(f, "ecs-host-999999998-BBBBBB, left by a host that died");
    EXPECT_ONCE(f, "ecs-host-999999997-CCCCCC: left alone: mode 0755, not 0700");
    if (root) EXPECT_ONCE(f, "ecs-host-999999996-DDDDDD: left alone: owned by uid 65534");
    EXPECT_ONCE(f, "ecs-host-999999999-AAAAAA: left alone: ");
}

/* ---- main ---- */

static int check_host_exists(void **state)
{
    umask(022); /* what cc creates must not be group-writable, or the host refuses it */
    if (access(ECS_HOST_PATH, X_OK) == 0) return 0;
    print_error("%s is not an executable: build it first\n", ECS_HOST_PATH);
    return -1;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(Reload_cp_over_the_file_switches_behaviour_and_keeps_values),
        TEST(Reload_write_and_rename_like_lld_switches_behaviour_and_keeps_values),
        TEST(Reload_relink_in_place_by_gnu_ld_reloads_once),
        TEST(Reload_gnu_ld_link_slower_than_the_quiet_period_is_loaded_once_complete),
        TEST(Reload_relink_by_lld_reloads_once),
        TEST(Reload_lld_link_slower_than_the_quiet_period_reloads_in_place),
        TEST(Reload_failed_link_of_a_new_file_is_a_logged_non_event),
        TEST(Reload_failed_relink_in_place_never_loads_the_partial_file),
        TEST(Reload_two_builds_within_one_second_reload_twice),
        TEST(Reload_deleted_plugin_keeps_running_and_a_new_file_reloads_it),
        TEST(Reload_renamed_plugin_file_is_a_move),
        TEST(Reload_rename_then_rebuild_is_a_new_build_whichever_folder),
        TEST(Reload_older_file_of_a_loaded_plugin_is_ignored_until_touched),
        TEST(Reload_new_files_that_are_not_plugins_get_one_line_each),
        TEST(Reload_manifest_disabled_unloads_and_enabling_restores_components),
        TEST(Reload_abi_mismatch_is_refused_and_the_old_version_keeps_running),
        TEST(Reload_bad_build_is_reported_in_one_log_line),
        TEST(Reload_failing_load_is_refused_and_the_old_version_keeps_running),
        TEST(Reload_changed_state_layout_migrates_through_json),
        TEST(Reload_failed_migration_names_the_entity_and_path),
        TEST(Reload_migration_into_a_reader_keeps_every_component),
        TEST(Reload_failed_migration_through_a_reader_names_the_entity_and_path),
        TEST(Reload_layout_change_without_json_is_refused),
        TEST(Reload_changed_state_layout_without_a_version_bump_is_refused),
        TEST(Reload_count_beyond_2_22_in_a_handed_over_state_is_refused),
        TEST(Reload_abi_1_0_builds_without_a_layout_reload_as_before),
        TEST(Reload_safe_crash_after_reload_rolls_back_to_the_last_good_version),
        TEST(Reload_safe_crash_without_earlier_version_unloads_and_the_next_restores),
        TEST(Reload_safe_crash_in_load_or_migration_keeps_the_old_version),
        TEST(Reload_refused_migration_memory_is_freed_when_refused),
        TEST(Reload_safe_crash_in_unload_at_exit_keeps_the_save),
        TEST(Reload_safe_crash_in_the_save_or_count_at_exit_is_caught),
        TEST(Reload_safe_crash_while_a_large_scene_loads_fails_it_cleanly),
        TEST(Reload_provider_build_withdrawing_a_used_api_is_refused),
        TEST(Reload_refused_build_leaves_the_running_state_as_it_was),
        TEST(Reload_build_refused_for_want_of_an_api_is_retried_when_its_provider_lands),
        TEST(Reload_files_changed_together_reload_in_dependency_order),
        TEST(Reload_plugin_refused_at_start_for_want_of_an_api_loads_once_it_is_there),
        TEST(Reload_json_migration_keeps_the_plugin_state),
        TEST(Reload_plugin_state_no_build_reads_is_kept_for_one_that_does),
        TEST(Reload_parked_plugin_gets_its_plugin_state_back),
        TEST(Reload_plugin_state_offered_twice_is_refused),
        TEST(Scene_save_and_load_keep_the_plugin_state),
        TEST(Scene_plugin_state_it_refuses_fails_the_load_at_its_place),
        TEST(Reload_safe_provider_crash_parks_its_users_until_it_is_back),
        TEST(Reload_manifest_disabling_a_provider_parks_its_users),
        TEST(Reload_build_closing_a_dependency_cycle_is_refused_naming_it),
        TEST(Reload_parking_walks_a_cycle_made_by_a_lazy_api_find_once),
        TEST(Reload_api_find_edges_belong_to_the_build_that_made_them),
        TEST(Reload_safe_rollback_whose_old_load_fails_unloads_keeping_components),
        TEST(Reload_disabling_the_end_of_a_chain_of_three_parks_it_from_the_top),
        TEST(Reload_provider_build_offering_a_used_api_at_a_lower_version_is_refused),
        TEST(Reload_build_whose_load_went_on_after_a_refused_registration_is_refused),
        TEST(Reload_commit_failing_half_way_keeps_none_of_its_apis),
        TEST(Reload_provider_build_whose_api_outgrew_its_storage_is_refused),
        TEST(Reload_transform_under_mesh_keeps_world_matrices_and_bounds),
        TEST(Reload_while_job_threads_run_the_plugins_jobs),
        TEST(Reload_an_empty_manifest_is_one_being_written),
        TEST(Reload_disabled_transform_comes_back_with_its_hierarchy),
        TEST(Reload_transform_layout_change_migrates_its_hierarchy),
        TEST(Reload_transform_layout_change_migrates_a_hierarchy_listed_children_first),
        TEST(Reload_poll_mode_detects_a_new_build),
        TEST(Reload_after_an_inotify_queue_overflow_the_build_is_seen),
        TEST(Reload_quiet_period_counts_from_the_last_change),
        TEST(Reload_an_empty_file_is_never_tried),
        TEST(Reload_folder_that_comes_back_with_new_files_loads_them),
        TEST(Reload_has_its_slice_in_the_trace),
        TEST(Reload_watches_every_plugin_folder),
        TEST(Reload_symlinked_plugin_reloads_when_its_target_changes),
        TEST(Reload_symlinked_subfolder_is_watched),
        TEST(Reload_new_symlinked_plugin_loads_at_once),
        TEST(Reload_new_folders_and_links_pass_the_permission_checks),
        TEST(Reload_deleted_and_recreated_folder_is_watched_again),
        TEST(Reload_plugin_folder_missing_at_start_loads_when_it_appears),
        TEST(Reload_rename_storm_keeps_the_plugin),
        TEST(Reload_refused_and_duplicate_files_keep_no_mapping),
        TEST(Reload_private_folder_is_used_by_descriptor_and_checked_before_each_copy),
        TEST(Reload_sweep_of_stale_private_folders_never_follows_a_link),
        TEST(Reload_removed_private_folder_is_made_again_with_one_warning),
        TEST(Reload_1000_cycles_keep_memory_fds_maps_and_copies_flat),
    };
    harness_select_tests();
    return cmocka_run_group_tests_name("reload", tests, check_host_exists, NULL);
}
