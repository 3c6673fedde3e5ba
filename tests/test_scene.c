/* SPDX-License-Identifier: MIT */
/* test_scene.c: scenes end to end: the real ecs-host binary (harness.h) on the transform,
 * debug_name and mesh plugins with scene files written into a temporary folder, and an
 * in-process world (fixture.h) where the world's state must be compared before and after.
 *
 * Error cases write a scene in which '@' marks the character the error must point at; the
 * '@' is removed, its line and column computed, and the run must exit 1 with exactly one
 * error line "FILE:LINE:COL: JSON.PATH: ...what was expected...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debug_name_api.h"
#include "ecs_plugin.h"
#include "fixture.h"
#include "harness.h"
#include "mesh_api.h"
#include "json.h"
#include "jwrite.h"
#include "scene.h"
#include "transform_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(ECS_HOST_PATH) || !defined(TRANSFORM_SO) || !defined(DEBUG_NAME_SO) ||                \
    !defined(MESH_SO) || !defined(SOURCE_ROOT) || !defined(GEN_SCENE_PATH)
#error "tests/meson.build defines the ecs-host, plugin, gen-scene and source paths"
#endif

#define RUN_TIMEOUT    60.0 /* seconds for one run; most take milliseconds */
#define SIGNAL_TIMEOUT 20.0
#define MAX_ARGS       24
#define PATH_SIZE      4096

/* ---- the fixture: a temporary folder with two plugin folders and scratch files ---- */

/* An in-process world with the three plugins, for what the binary cannot show. */
typedef struct world_test {
    fixture f;
    const ecs_transform_api *tf;
    const ecs_debug_name_api *dn;
    const ecs_mesh_api *mesh;
} world_test;

typedef struct scene_test {
    char *root;    /* removed with everything under it at teardown */
    char *plugins; /* root/plugins: transform, debug_name, mesh */
    char *no_mesh; /* root/no_mesh: transform and debug_name only */
    char cmd[8192];
    harness_output run; /* the last finished run */
    harness_proc proc;  /* a run in the background (signal tests) */
    char *locked;       /* a folder a test made unwritable: writable again at teardown */
    bool immutable;     /* ... through the immutable attribute (root ignores modes) */
    world_test world;   /* open when world.f.w is set: closed at teardown */
} scene_test;

static void copy_plugin(const char *so, const char *dir)
{
    const char *base = strrchr(so, '/');
    char dst[PATH_SIZE];
    snprintf(dst, sizeof dst, "%s/%s", dir, base ? base + 1 : so);
    if (harness_copy_file(so, dst, 0755) != 0) {
        print_error("cannot copy %s to %s: %s\n", so, dst, strerror(errno));
        fail();
    }
}

static int setup(void **state)
{
    scene_test *t = calloc(1, sizeof *t);
    if (!t) return -1;
    t->proc.fd[0] = t->proc.fd[1] = -1;
    t->root = harness_make_tmpdir("ecs-scene-test");
    t->plugins = t->root ? harness_join(t->root, "plugins") : NULL;
    t->no_mesh = t->root ? harness_join(t->root, "no_mesh") : NULL;
    if (!t->plugins || !t->no_mesh || mkdir(t->plugins, 0700) != 0 ||
        mkdir(t->no_mesh, 0700) != 0) {
        print_error("cannot make the temporary folders: %s\n", strerror(errno));
        return -1;
    }
    copy_plugin(TRANSFORM_SO, t->plugins);
    copy_plugin(DEBUG_NAME_SO, t->plugins);
    copy_plugin(MESH_SO, t->plugins);
    copy_plugin(TRANSFORM_SO, t->no_mesh);
    copy_plugin(DEBUG_NAME_SO, t->no_mesh);
    *state = t;
    return 0;
}

/* Make dir writable again (clear the immutable attribute, mode 0700). */
static void unlock_folder(scene_test *t)
{
    if (!t->locked) return;
    if (t->immutable) {
        int fd = open(t->locked, O_RDONLY | O_DIRECTORY), attr = 0;
        if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &attr) == 0) {
            attr &= ~FS_IMMUTABLE_FL;
            ioctl(fd, FS_IOC_SETFLAGS, &attr);
        }
        if (fd >= 0) close(fd);
    }
    chmod(t->locked, 0700);
    free(t->locked);
    t->locked = NULL;
    t->immutable = false;
}

static int teardown(void **state)
{
    scene_test *t = *state;
    if (t->world.f.w) fixture_close(&t->world.f);
    unlock_folder(t);
    harness_proc_discard(&t->proc);
    harness_output_free(&t->run);
    if (t->root && harness_remove_tree(t->root) != 0)
        print_error("could not remove %s: %s\n", t->root, strerror(errno));
    free(t->root);
    free(t->plugins);
    free(t->no_mesh);
    free(t);
    return 0;
}

/* ---- files ---- */

/* root/name into out (PATH_SIZE bytes). */
static char *path_in(const scene_test *t, const char *name, char *out)
{
    snprintf(out, PATH_SIZE, "%s/%s", t->root, name);
    return out;
}

/* Write text as root/name; its full path into path (PATH_SIZE bytes). */
static void write_scene(const scene_test *t, const char *name, const char *text, char *path)
{
    path_in(t, name, path);
    if (harness_write_file(path, text, 0644) != 0) {
        print_error("cannot write %s: %s\n", path, strerror(errno));
        fail();
    }
}

/* The whole file (malloc'd), failing the test when it cannot be read. */
static char *read_all(const char *path)
{
    size_t len;
    char *text = harness_read_file(path, &len);
    if (!text) {
        print_error("cannot read %s: %s\n", path, strerror(errno));
        fail();
    }
    return text;
}

static cJSON *read_json(const char *path)
{
    char *text = read_all(path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    if (!j) {
        print_error("%s is not JSON\n", path);
        fail();
    }
    return j;
}

/* Names in dir other than . and .., as one string "a b c " (for messages and checks). */
static void list_folder(const char *dir, char *out, size_t size)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t used = 0;
    out[0] = '\0';
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && used < size)
            used += (size_t)snprintf(out + used, size - used, "%s ", de->d_name);
    if (d) closedir(d);
}

/* ---- running ecs-host ---- */

static void dump(const scene_test *t)
{
    fprintf(stderr,
            "command: %s\nexit code %d, signal %d\n--- stdout ---\n%s--- stderr ---\n%s---\n",
            t->cmd, t->run.exit_code, t->run.term_signal, t->run.out ? t->run.out : "",
            t->run.err ? t->run.err : "");
}

/* argv for ecs-host --fps 0 ARGS... PLUGIN_DIR into argv (MAX_ARGS), the command into cmd. */
static void host_argv(scene_test *t, const char *dir, const char *const *args, const char **argv)
{
    size_t n = 0, used = 0;
    argv[n++] = ECS_HOST_PATH;
    argv[n++] = "--fps";
    argv[n++] = "0";
    for (; *args && n < MAX_ARGS - 2; args++) argv[n++] = *args;
    argv[n++] = dir;
    argv[n] = NULL;
    t->cmd[0] = '\0';
    for (size_t i = 0; i < n && used < sizeof t->cmd; i++)
        used +=
            (size_t)snprintf(t->cmd + used, sizeof t->cmd - used, "%s%s", i ? " " : "", argv[i]);
}

static void host_run(scene_test *t, const char *dir, const char *const *args)
{
    const char *argv[MAX_ARGS];
    host_argv(t, dir, args, argv);
    harness_output_free(&t->run);
    int rc = harness_run(&t->run, RUN_TIMEOUT, argv);
    if (rc != 0 || t->run.timed_out) {
        print_error("%s: %s\n", t->cmd, rc ? strerror(rc) : "timed out");
        dump(t);
        fail();
    }
}

/* HOST(t, "--frames", "0"): ecs-host --fps 0 --frames 0 ROOT/plugins. */
#define HOST(t, ...)         host_run(t, (t)->plugins, (const char *const[]){__VA_ARGS__, NULL})
#define HOST_IN(t, dir, ...) host_run(t, dir, (const char *const[]){__VA_ARGS__, NULL})

static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* The line of text (copied into out) holding needle; false when there is none. */
static bool line_with(const char *text, const char *needle, char *out, size_t size)
{
    const char *at = strstr(text, needle);
    if (!at) return false;
    const char *start = at, *end = strchr(at, '\n');
    while (start > text && start[-1] != '\n') start--;
    size_t len = end ? (size_t)(end - start) : strlen(start);
    snprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), start);
    return true;
}

static void check_exit(const scene_test *t, int code, const char *file, int line)
{
    if (t->run.exit_code == code && t->run.term_signal == 0) return;
    print_error("expected exit code %d\n", code);
    dump(t);
    _fail(file, line);
}

static void check_err(const scene_test *t, const char *needle, const char *file, int line)
{
    if (strstr(t->run.err, needle)) return;
    print_error("stderr lacks '%s'\n", needle);
    dump(t);
    _fail(file, line);
}

#define EXPECT_EXIT(t, code) check_exit(t, code, __FILE__, __LINE__)
#define EXPECT_ERR(t, s)     check_err(t, s, __FILE__, __LINE__)

/* A clean run: exit 0, no error and no warning. */
static void check_clean(const scene_test *t, const char *file, int line)
{
    check_exit(t, 0, file, line);
    if (!strstr(t->run.err, "[error]") && !strstr(t->run.err, "[warn]")) return;
    print_error("an error or warning in a clean run\n");
    dump(t);
    _fail(file, line);
}

#define EXPECT_CLEAN(t) check_clean(t, __FILE__, __LINE__)

/* Load `in` and save it to `out` (--frames 0) with the plugins of dir; a clean run. */
static void convert(scene_test *t, const char *dir, const char *in, const char *out)
{
    HOST_IN(t, dir, "--frames", "0", "--scene", in, "--save", out);
    EXPECT_CLEAN(t);
}

static void check_same_file(const char *a, const char *b, const char *file, int line)
{
    char *x = read_all(a), *y = read_all(b);
    bool same = strcmp(x, y) == 0;
    if (!same) {
        size_t i = 0;
        while (x[i] && x[i] == y[i]) i++;
        print_error("%s and %s differ at byte %zu:\n--- %s\n%.200s\n--- %s\n%.200s\n", a, b, i, a,
                    x + (i > 40 ? i - 40 : 0), b, y + (i > 40 ? i - 40 : 0));
    }
    free(x);
    free(y);
    if (!same) _fail(file, line);
}

#define EXPECT_SAME_FILE(a, b) check_same_file(a, b, __FILE__, __LINE__)

/* ---- error cases ---- */

typedef struct error_case {
    const char *text;    /* the scene; '@' marks where the error must point (no '@': none) */
    const char *path;    /* the JSON path printed after the position, "" for none */
    const char *message; /* a part of the message: what was expected */
} error_case;

/* Run one error case: exit 1, one error line "FILE:LINE:COL: PATH: ...MESSAGE...", no
 * entity reported loaded. */
static void check_error_case(scene_test *t, const error_case *c, const char *file, int line)
{
    char path[PATH_SIZE], want[PATH_SIZE + 512], got[4096];
    char *text = malloc(strlen(c->text) + 1);
    int l = 1, col = 1, has_at = 0;
    size_t n = 0;
    assert_non_null(text);
    for (const char *p = c->text; *p; p++) {
        if (*p == '@' && !has_at) {
            has_at = 1;
            continue;
        }
        text[n++] = *p;
        if (has_at) continue;
        if (*p == '\n')
            l++, col = 1;
        else
            col++;
    }
    text[n] = '\0';
    write_scene(t, "case.json", text, path);
    HOST(t, "--frames", "0", "--scene", path);
    if (!has_at)
        snprintf(want, sizeof want, "%s: ", path);
    else if (*c->path)
        snprintf(want, sizeof want, "%s:%d:%d: %s: ", path, l, col, c->path);
    else
        snprintf(want, sizeof want, "%s:%d:%d: ", path, l, col);
    int errors = count_lines(t->run.err, "[error]");
    bool ok = t->run.exit_code == 1 && errors == 1 &&
              line_with(t->run.err, "[error]", got, sizeof got) && strstr(got, want) &&
              strstr(strstr(got, want), c->message) && !strstr(t->run.err, "scene: loaded");
    if (!ok)
        print_error("scene:\n%.2000s\nexpected exit 1 and one error line with '%s' then '%s' (%d "
                    "error lines)\n",
                    text, want, c->message, errors);
    free(text);
    if (ok) return;
    dump(t);
    _fail(file, line);
}

static void check_error_cases(scene_test *t, const error_case *cases, size_t n, const char *file,
                              int line)
{
    for (size_t i = 0; i < n; i++) check_error_case(t, &cases[i], file, line);
}

#define EXPECT_ERRORS(t, cases)                                                                    \
    check_error_cases(t, cases, sizeof cases / sizeof cases[0], __FILE__, __LINE__)

static void Scene_syntax_errors_name_the_line_and_column(void **state)
{
    static const error_case cases[] = {
        {"{\"version\": 1 @\"entities\": []}", "",
         "expected ',' or '}' after an object member, found '\"'"},
        {"{\"version\": @tru, \"entities\": []}", "", "expected a JSON value, found 'tru'"},
        {"{\"version\": 1, \"entities\": []} @x", "", "unexpected text after the JSON value"},
        {"{\"version\": 1,\n  \"entities\": [\n    {\"id\": \"a\"},\n    {\"id\": \"b\"\n  @]\n}",
         "", "expected ',' or '}' after an object member, found ']'"},
        {"{\"version\": 1, \"entities\": [1@, ]}", "",
         "a ',' before ']' or '}' (JSON has no trailing commas)"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
}

/* A key twice in one object would be read once and the other dropped in silence: the
 * top level, an entity and a component each refuse it at the second. */
static void Scene_a_key_twice_in_one_object_is_refused(void **state)
{
    static const error_case cases[] = {
        {"{\"version\": 1, \"entities\": [],\n @\"entities\": [{\"id\": \"a\"}]}", "",
         "duplicate key \"entities\" (its first at line 1, column 16)"},
        {"{\"version\": 1, \"entities\": [{\"id\": \"a\", \"debug_name\": \"x\", @\"id\": "
         "\"b\"}]}",
         "", "duplicate key \"id\" (its first at line 1, column 30)"},
        {"{\"version\": 1, \"entities\": [{\"id\": \"a\",\n  \"transform\": {\"position\": "
         "[1, 2, 3],\n    @\"position\": [4, 5, 6]}}]}",
         "", "duplicate key \"position\" (its first at line 2, column 17)"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
    /* More than 16 keys (sorted, not compared pairwise) whose smallest stands twice: in an
     * entity ("id" before "m01".."m16") and in a kept component's value. */
    char entity[1024], component[1024];
    int n = snprintf(entity, sizeof entity, "{\"version\": 1, \"entities\": [{\"id\": \"a\"");
    for (int k = 16; k >= 1; k--)
        n += snprintf(entity + n, sizeof entity - (size_t)n, ", \"m%02d\": {}", k);
    snprintf(entity + n, sizeof entity - (size_t)n, ", @\"id\": \"b\"}]}");
    n = snprintf(component, sizeof component,
                 "{\"version\": 1, \"entities\": [{\"id\": \"a\", \"kept\": {");
    for (int k = 16; k >= 0; k--)
        n += snprintf(component + n, sizeof component - (size_t)n, "\"k%02d\": %d, ", k, k);
    snprintf(component + n, sizeof component - (size_t)n, "@\"k00\": 0}}]}");
    const error_case large[] = {
        {entity, "", "duplicate key \"id\" (its first at line 1, column 30)"},
        {component, "", "duplicate key \"k00\""},
    };
    EXPECT_ERRORS((scene_test *)*state, large);
}

static void Scene_top_level_must_be_an_object_with_version_1(void **state)
{
    static const error_case cases[] = {
        {"@[{\"id\": \"a\"}]", "",
         "expected an object {\"version\": 1, \"entities\": [...]}, found an array"},
        {"@\"scene\"", "", "found a string"},
        {"@{\"entities\": []}", "", "expected \"version\": 1"},
        {"{\"version\": @\"1\", \"entities\": []}", "version", "expected \"version\": 1"},
        {"{\"version\": @2, \"entities\": []}", "version",
         "scene format version 2 is not supported (this host reads 1)"},
        {"{\"entities\": [],\n \"version\": @1.5}", "version", "version 1.5 is not supported"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
}

static void Scene_entities_must_be_an_array_of_objects_with_unique_ids(void **state)
{
    static const error_case cases[] = {
        {"@{\"version\": 1}", "", "expected \"entities\": an array, found nothing"},
        {"{\"version\": 1, \"entities\": @{\"a\": {}}}", "entities",
         "expected \"entities\": an array, found an object"},
        {"{\"version\": 1, \"entities\": [{\"id\": \"a\"}, @\"b\"]}", "entities[1]",
         "expected an entity object, found a string"},
        {"{\"version\": 1, \"entities\": [@{\"debug_name\": \"x\"}]}", "entities[0]",
         "expected \"id\": a non-empty string"},
        {"{\"version\": 1, \"entities\": [{\"id\": @5}]}", "entities[0].id",
         "expected \"id\": a non-empty string"},
        {"{\"version\": 1, \"entities\": [{\"id\": @\"\"}]}", "entities[0].id",
         "expected \"id\": a non-empty string"},
        {"{\"version\": 1, \"entities\": [\n {\"id\": \"a\"},\n {\"id\": \"b\"},\n {\"id\": "
         "@\"a\"}]}",
         "entities[2].id", "duplicate id 'a' (entities[0] has it too)"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
}

/* A reference the host cannot resolve is reported at the value that makes it. */
static void Scene_unknown_references_and_parent_cycles_are_refused(void **state)
{
    static const error_case cases[] = {
        {"{\"version\": 1, \"entities\": [{\"id\": \"a\", \"transform\": {\"parent\": "
         "@\"nobody\"}}]}",
         "entities[0].transform.parent", "reference to an unknown id 'nobody'"},
        {"{\"version\": 1, \"entities\": [\n"
         "  {\"id\": \"a\", \"transform\": {\"parent\": \"b\"}},\n"
         "  {\"id\": \"b\", \"transform\": {\"parent\": @\"a\"}}]}",
         "entities[1].transform.parent",
         "reference cycle: 'a' refers (through its transform) back"},
        {"{\"version\": 1, \"entities\": [\n"
         "  {\"id\": \"a\", \"transform\": {\"parent\": \"b\"}},\n"
         "  {\"id\": \"b\", \"transform\": {\"parent\": \"c\"}},\n"
         "  {\"id\": \"c\", \"transform\": {\"parent\": @\"a\"}}]}",
         "entities[2].transform.parent", "reference cycle: 'a'"},
        {"{\"version\": 1, \"entities\": [{\"id\": \"x\"}, {\"id\": \"self\", \"transform\": "
         "{\"parent\": @\"self\"}}]}",
         "entities[1].transform.parent", "reference cycle: 'self'"},
        /* the cycle is found even when the entities that close it come first */
        {"{\"version\": 1, \"entities\": [\n"
         "  {\"id\": \"leaf\", \"transform\": {\"parent\": \"a\"}},\n"
         "  {\"id\": \"a\", \"transform\": {\"parent\": \"b\"}},\n"
         "  {\"id\": \"b\", \"transform\": {\"parent\": @\"a\"}}]}",
         "entities[2].transform.parent", "reference cycle"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
}

#define ENTITY(component) "{\"version\": 1, \"entities\": [{\"id\": \"a\", " component "}]}"

static void Scene_transform_values_are_checked_where_they_are(void **state)
{
    static const error_case cases[] = {
        {ENTITY("\"transform\": @[1, 2, 3]"), "entities[0].transform",
         "expected an object {\"position\": [x, y, z]"},
        {ENTITY("\"transform\": {\"position\": @\"here\"}"), "entities[0].transform.position",
         "expected an array of 3 finite numbers, found a string"},
        {ENTITY("\"transform\": {\"position\": @[1, 2]}"), "entities[0].transform.position",
         "expected an array of 3 finite numbers, found 2 elements"},
        {ENTITY("\"transform\": {\"scale\": @[1, 2, 3, 4]}"), "entities[0].transform.scale",
         "expected an array of 3 finite numbers, found 4 elements"},
        {ENTITY("\"transform\": {\"rotation\": @[0, 0, 1]}"), "entities[0].transform.rotation",
         "expected an array of 4 finite numbers, found 3 elements"},
        {ENTITY("\"transform\": {\"position\": [1, @\"2\", 3]}"),
         "entities[0].transform.position[1]", "expected a finite number, found a string"},
        {ENTITY("\"transform\": {\"rotation\": [0, 0, @null, 1]}"),
         "entities[0].transform.rotation[2]", "expected a finite number, found null"},
        {ENTITY("\"transform\": {\"position\": [1, @1e999, 2]}"),
         "entities[0].transform.position[1]",
         "expected a finite number (float range), found 1e999"},
        {ENTITY("\"transform\": {\"scale\": [1, 1, @-1e999]}"), "entities[0].transform.scale[2]",
         "found -1e999"},
        {ENTITY("\"transform\": {\"position\": [@1e39, 0, 0]}"),
         "entities[0].transform.position[0]", "(float range), found 1e39"},
        {ENTITY("\"transform\": {\"rotation\": @[0, 0, 0, 0]}"), "entities[0].transform.rotation",
         "expected a non-zero quaternion"},
        {ENTITY("\"transform\": {\"parent\": @5}"), "entities[0].transform.parent",
         "expected a scene id (a string) or null, found a number"},
        {"{\"version\": 1, \"entities\": [\n"
         "  {\"id\": \"p\", \"transform\": {}},\n"
         "  {\"id\": \"c\", \"transform\": {\"parent\": \"p\", \"position\": [0, 0, @true]}}]}",
         "entities[1].transform.position[2]", "expected a finite number, found true"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
}

static void Scene_debug_name_values_are_checked_where_they_are(void **state)
{
    static const error_case cases[] = {
        {ENTITY("\"debug_name\": \"ab@\\u0000cd\""), "",
         "\\u0000 in a string: a NUL character "
         "would cut it short"},
        {ENTITY("\"debug_name\": @5"), "entities[0].debug_name",
         "expected a name of 1-255 bytes of UTF-8 without control characters, found a number"},
        {ENTITY("\"debug_name\": @[\"door\"]"), "entities[0].debug_name", "found an array"},
        {ENTITY("\"debug_name\": @\"\""), "entities[0].debug_name",
         "found a string: the name is empty"},
        {ENTITY("\"debug_name\": @\"a\\nb\""), "entities[0].debug_name",
         "the name has a control character"},
        {ENTITY("\"debug_name\": @null"), "entities[0].debug_name", "found null"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
}

#define BOUNDS "\"bounds\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}"

static void Scene_mesh_values_are_checked_where_they_are(void **state)
{
    static const error_case cases[] = {
        {ENTITY("\"mesh\": @{\"mesh\": \"a\"}"), "entities[0].mesh",
         "expected an array of mesh objects, found an object"},
        {ENTITY("\"mesh\": [@1]"), "entities[0].mesh[0]", "expected a mesh object"},
        {ENTITY("\"mesh\": [@{" BOUNDS "}]"), "entities[0].mesh[0]",
         "expected \"mesh\": a string of 1-255 bytes"},
        {ENTITY("\"mesh\": [{\"mesh\": @5, " BOUNDS "}]"), "entities[0].mesh[0].mesh",
         "found a number"},
        {ENTITY("\"mesh\": [{\"mesh\": \"a\", \"material\": @3, " BOUNDS "}]"),
         "entities[0].mesh[0].material", "expected a string of 0-255 bytes"},
        {ENTITY("\"mesh\": [{\"mesh\": \"a\", \"visible\": @\"yes\", " BOUNDS "}]"),
         "entities[0].mesh[0].visible", "expected true or false, found a string"},
        {ENTITY("\"mesh\": [@{\"mesh\": \"a\"}]"), "entities[0].mesh[0]",
         "expected \"bounds\": an object"},
        {ENTITY("\"mesh\": [{\"mesh\": \"a\", \"bounds\": @[0, 0, 0]}]"),
         "entities[0].mesh[0].bounds", "found an array"},
        {ENTITY("\"mesh\": [{\"mesh\": \"a\", \"bounds\": {\"min\": @[0, 0], \"max\": [1, 1, "
                "1]}}]"),
         "entities[0].mesh[0].bounds.min",
         "expected an array of 3 finite numbers, found 2 elements"},
        {ENTITY("\"mesh\": [{\"mesh\": \"a\", \"bounds\": @{\"min\": [0, 0, 0]}}]"),
         "entities[0].mesh[0].bounds", "expected \"max\": an array of 3 finite numbers"},
        {ENTITY("\"mesh\": [{\"mesh\": \"a\", \"bounds\": {\"min\": [0, 0, 0], \"max\": [1, "
                "@\"1\", 1]}}]"),
         "entities[0].mesh[0].bounds.max[1]", "expected a finite number, found a string"},
        {ENTITY("\"mesh\": [{\"mesh\": \"a\", \"bounds\": {\"min\": [0, 0, @-1e999], \"max\": "
                "[1, 1, 1]}}]"),
         "entities[0].mesh[0].bounds.min[2]",
         "expected a finite number (float range), found -1e999"},
        {ENTITY("\"mesh\": [{\"mesh\": \"a\", \"bounds\": @{\"min\": [0, 2, 0], \"max\": [1, 1, "
                "1]}}]"),
         "entities[0].mesh[0].bounds", "expected min <= max on every axis"},
        {ENTITY("\"mesh\": [{\"mesh\": \"ok\", " BOUNDS "},\n  {\"mesh\": \"bad\", \"bounds\": "
                "{\"min\": [0, 0, 0], \"max\": @[1, 1]}}]"),
         "entities[0].mesh[1].bounds.max", "found 2 elements"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
}

/* The error that ends a load comes late: after many entities were given components. */
/* JSON kept as it is (a component of a manager that is not loaded, a top-level key the
 * host does not know) comes back on save: a number out of a double's range in it could
 * never be saved, so the load refuses it where it stands. */
static void Scene_kept_json_with_a_number_out_of_range_is_refused(void **state)
{
    static const error_case cases[] = {
        {ENTITY("\"t{}ransform\": {\"scale\": [1, 1, @-1e999]}"),
         "entities[0].t{}ransform.scale[2]",
         "expected a finite number, found -inf (out of a "
         "double's range; kept as it is, it could not be saved)"},
        {"{\"version\": 1, \"entities\": [], \"editor\": {\"zoom\": [@1e400]}}", "editor.zoom[0]",
         "expected a finite number, found inf"},
    };
    EXPECT_ERRORS((scene_test *)*state, cases);
}

static void Scene_late_errors_are_reported_at_the_bad_entity(void **state)
{
    scene_test *t = *state;
    size_t cap = 400000, used = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    used += (size_t)snprintf(text + used, cap - used, "{\"version\": 1, \"entities\": [\n");
    for (int i = 0; i < 2000; i++)
        used +=
            (size_t)snprintf(text + used, cap - used,
                             "{\"id\": \"e%d\", \"debug_name\": \"e%d\", \"transform\": "
                             "{\"parent\": \"e%d\"}, \"mesh\": [{\"mesh\": \"m\", " BOUNDS "}]},\n",
                             i, i, i ? i / 2 : 0);
    snprintf(text + used, cap - used,
             "{\"id\": \"last\", \"mesh\": [{\"mesh\": \"m\", \"bounds\": {\"min\": [0, 0, 0], "
             "\"max\": [1, 1, @1e999]}}]}]}");
    memcpy(strstr(text, "\"parent\": \"e0\"}"), "\"parent\": null}", 15); /* e0: a root */
    error_case c = {text, "entities[2000].mesh[0].bounds.max[2]",
                    "expected a finite number (float range), found 1e999"};
    check_error_case(t, &c, __FILE__, __LINE__);
    free(text);
}

static void Scene_empty_missing_and_folder_files_are_refused(void **state)
{
    scene_test *t = *state;
    static const error_case cases[] = {
        {"", "", "the file is empty, expected a JSON value"},
        {" \n\t\n", "", "the file is empty"},
    };
    EXPECT_ERRORS(t, cases);
    char path[PATH_SIZE], line[4096];
    HOST(t, "--frames", "0", "--scene", path_in(t, "does-not-exist.json", path));
    EXPECT_EXIT(t, 1);
    assert_int_equal(count_lines(t->run.err, "[error]"), 1);
    assert_true(line_with(t->run.err, "[error]", line, sizeof line));
    assert_non_null(strstr(line, path));
    assert_non_null(strstr(line, "cannot open: No such file or directory"));
    HOST(t, "--frames", "0", "--scene", t->root);
    EXPECT_EXIT(t, 1);
    assert_int_equal(count_lines(t->run.err, "[error]"), 1);
    assert_true(line_with(t->run.err, "[error]", line, sizeof line));
    assert_non_null(strstr(line, t->root));
    assert_non_null(strstr(line, "is a directory, expected a JSON file"));
}

/* A scene that does not load is not followed by a save: the file --save names is untouched
 * (a failed load must not overwrite a good scene with an empty world). */
static void Scene_failed_load_saves_nothing(void **state)
{
    scene_test *t = *state;
    char in[PATH_SIZE], out[PATH_SIZE];
    write_scene(t, "bad.json", ENTITY("\"debug_name\": 5"), in);
    write_scene(t, "out.json", "{\"old\": true}\n", out);
    HOST(t, "--frames", "0", "--scene", in, "--save", out);
    EXPECT_EXIT(t, 1);
    assert_null(strstr(t->run.err, "scene: saved"));
    char *text = read_all(out);
    assert_string_equal(text, "{\"old\": true}\n");
    free(text);
}

/* ---- the in-process world: all or nothing ---- */

/* Open t's world (closing the one open before). */
static world_test *world_open(scene_test *t)
{
    world_test *w = &t->world;
    const char *const so[] = {TRANSFORM_SO, DEBUG_NAME_SO, MESH_SO, NULL};
    if (w->f.w) fixture_close(&w->f);
    assert_int_equal(fixture_open(&w->f, so), 0);
    w->tf = fixture_api(&w->f, ECS_TRANSFORM_API_NAME);
    w->dn = fixture_api(&w->f, ECS_DEBUG_NAME_API_NAME);
    w->mesh = fixture_api(&w->f, ECS_MESH_API_NAME);
    assert_non_null(w->tf);
    assert_non_null(w->dn);
    assert_non_null(w->mesh);
    return w;
}

/* What a world holds: live entities, each manager's count. */
typedef struct world_counts {
    uint32_t live, managers[8];
} world_counts;

static world_counts counts_of(const world_test *w)
{
    world_counts c = {host_entities_live(w->f.w->entities), {0}};
    for (size_t m = 0; m < w->f.w->manager_count && m < 8; m++) {
        const ecs_manager_desc *d = &w->f.w->managers[m]->desc;
        c.managers[m] = d->count ? d->count(d->state) : 0;
    }
    return c;
}

static void check_counts(const world_test *w, world_counts want, const char *what)
{
    world_counts got = counts_of(w);
    if (!memcmp(&got, &want, sizeof got)) return;
    fail_msg("%s: live %u (was %u), managers %u %u %u (were %u %u %u)", what, got.live, want.live,
             got.managers[0], got.managers[1], got.managers[2], want.managers[0], want.managers[1],
             want.managers[2]);
}

/* A scene of n entities "<prefix><i>" named alike, in binary trees listed child first
 * (forward references), each with a transform and a mesh, and `tail` (JSON text with a
 * leading comma, may be "") after them. malloc'd. */
static char *tree_scene(const char *prefix, int n, const char *tail)
{
    size_t cap = (size_t)n * 300 + strlen(tail) + 100, used = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    used += (size_t)snprintf(text, cap, "{\"version\": 1, \"entities\": [");
    for (int k = 0; k < n; k++) {
        int i = n - 1 - k; /* children before parents */
        char parent[64] = "null";
        if (i) snprintf(parent, sizeof parent, "\"%s%d\"", prefix, (i - 1) / 2);
        used += (size_t)snprintf(text + used, cap - used,
                                 "%s\n{\"id\": \"%s%d\", \"debug_name\": \"%s%d\", \"transform\": "
                                 "{\"position\": [1, 0, 0], \"parent\": %s}, \"mesh\": "
                                 "[{\"mesh\": \"m%d\", " BOUNDS "}]}",
                                 k ? "," : "", prefix, i, prefix, i, parent, i);
    }
    snprintf(text + used, cap - used, "%s]}\n", tail);
    return text;
}

/* text (a tree_scene) with a top-level member put before "entities" (a new buffer). */
static char *with_top_level(char *text, const char *member)
{
    const char *at = strstr(text, "\"entities\"");
    assert_non_null(at);
    size_t head = (size_t)(at - text), n = strlen(text) + strlen(member) + 4;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s, %s", (int)head, text, member, at);
    free(text);
    return out;
}

/* Load a good scene, then bad scenes that fail late in each manager: every time the world
 * must be exactly as before: entities, components, names, the scene's unknown top-level
 * keys (the good one's kept, the bad one's not taken), and what a save writes. */
static void Scene_failed_load_leaves_the_world_as_it_was(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    char good[PATH_SIZE], before[PATH_SIZE], after[PATH_SIZE], bad[PATH_SIZE];
    char *text = with_top_level(tree_scene("good", 100, ""), "\"editor\": {\"grid\": 1}");
    write_scene(t, "good.json", text, good);
    free(text);
    assert_int_equal(host_scene_load(w->f.s->scene, good), ECS_OK);
    fixture_frames(&w->f, 2);
    world_counts counts = counts_of(w);
    assert_int_equal(counts.live, 100);
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "before.json", before)), ECS_OK);
    static const char *const tails[] = {
        /* mesh, the last manager: every name and transform was loaded */
        ",\n{\"id\": \"z\", \"mesh\": [{\"mesh\": \"m\", \"bounds\": {\"min\": [0, 0, 0], "
        "\"max\": [1, 1, 1e999]}}]}",
        /* transform: names loaded, implicit parents made by forward references */
        ",\n{\"id\": \"z\", \"transform\": {\"parent\": \"nobody\"}}",
        ",\n{\"id\": \"z\", \"transform\": {\"parent\": \"y\"}},"
        "{\"id\": \"y\", \"transform\": {\"parent\": \"z\"}}",
        /* debug_name, the first manager */
        ",\n{\"id\": \"z\", \"debug_name\": \"\"}",
        /* a kept component before the error must not stay behind */
        ",\n{\"id\": \"z\", \"physics\": {\"mass\": 1}, \"debug_name\": 7}",
    };
    for (size_t k = 0; k < sizeof tails / sizeof tails[0]; k++) {
        text = with_top_level(tree_scene("bad", 3000, tails[k]), "\"bad_extra\": [1, 2]");
        write_scene(t, "bad.json", text, bad);
        free(text);
        if (host_scene_load(w->f.s->scene, bad) == ECS_OK) fail_msg("bad scene %zu loaded", k);
        check_counts(w, counts, tails[k]);
        for (int i = 0; i < 3000; i += 97) {
            char name[32];
            snprintf(name, sizeof name, "bad%d", i);
            if (!ecs_entity_is_null(w->dn->find(w->dn->self, name)))
                fail_msg("%s: '%s' is still named", tails[k], name);
        }
        for (int i = 0; i < 100; i++) {
            char name[32];
            snprintf(name, sizeof name, "good%d", i);
            ecs_entity e = w->dn->find(w->dn->self, name);
            if (!host_entity_alive(w->f.w->entities, e) || w->mesh->count_of(w->mesh->self, e) != 1)
                fail_msg("%s: '%s' lost", tails[k], name);
        }
        fixture_frames(&w->f, 1);
        check_counts(w, counts, tails[k]);
        assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "after.json", after)), ECS_OK);
        EXPECT_SAME_FILE(before, after);
    }
    char *saved = read_all(after);
    assert_non_null(strstr(saved, "\"editor\"")); /* the good scene's key, still there */
    assert_null(strstr(saved, "bad_extra"));
    free(saved);
}

/* World x of entity `name`'s origin. */
static float world_x(const world_test *w, const char *name)
{
    ecs_entity e = w->dn->find(w->dn->self, name);
    ecs_mat4 m;
    if (w->tf->get_world(w->tf->self, e, &m) != ECS_OK) fail_msg("%s has no transform", name);
    return m.m[12];
}

/* Children before their parents, a chain of 1000 listed leaf first, a parent without a
 * transform of its own: every parent link and world matrix comes out right. */
static void Scene_forward_references_resolve_in_any_order(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    enum { CHAIN = 1000 };
    size_t cap = CHAIN * 160 + 1000, used = 0;
    char *text = malloc(cap), path[PATH_SIZE];
    assert_non_null(text);
    used += (size_t)snprintf(text, cap,
                             "{\"version\": 1, \"entities\": [\n"
                             "{\"id\": \"kid\", \"debug_name\": \"kid\", \"transform\": "
                             "{\"position\": [1, 0, 0], \"parent\": \"mum\"}},\n"
                             "{\"id\": \"mum\", \"debug_name\": \"mum\", \"transform\": "
                             "{\"position\": [10, 0, 0], \"parent\": \"gran\"}},\n"
                             "{\"id\": \"gran\", \"debug_name\": \"gran\", \"transform\": "
                             "{\"position\": [100, 0, 0]}},\n"
                             "{\"id\": \"orphan\", \"debug_name\": \"orphan\", \"transform\": "
                             "{\"position\": [1, 0, 0], \"parent\": \"bare\"}},\n"
                             "{\"id\": \"bare\", \"debug_name\": \"bare\"}");
    for (int i = 0; i < CHAIN; i++) { /* c0 (the leaf) first, c999 (the root) last */
        char parent[32] = "null";
        if (i + 1 < CHAIN) snprintf(parent, sizeof parent, "\"c%d\"", i + 1);
        used += (size_t)snprintf(text + used, cap - used,
                                 ",\n{\"id\": \"c%d\", \"debug_name\": \"c%d\", \"transform\": "
                                 "{\"position\": [1, 0, 0], \"parent\": %s}}",
                                 i, i, parent);
    }
    snprintf(text + used, cap - used, "]}\n");
    write_scene(t, "forward.json", text, path);
    free(text);
    assert_int_equal(host_scene_load(w->f.s->scene, path), ECS_OK);
    assert_float_equal(world_x(w, "kid"), 111, 0);
    assert_float_equal(world_x(w, "mum"), 110, 0);
    assert_float_equal(world_x(w, "orphan"), 1, 0);
    assert_float_equal(world_x(w, "bare"), 0, 0); /* an identity transform made for it */
    ecs_entity mum = w->dn->find(w->dn->self, "mum"), kid = w->dn->find(w->dn->self, "kid");
    assert_int_equal(w->tf->parent(w->tf->self, kid).id, mum.id);
    assert_float_equal(world_x(w, "c0"), CHAIN, 0);
    assert_float_equal(world_x(w, "c500"), CHAIN - 500, 0);
    fixture_frames(&w->f, 1);
    assert_float_equal(world_x(w, "c0"), CHAIN, 0);
    /* saved and loaded again (into a second world): the same hierarchy */
    char saved[PATH_SIZE];
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "forward-saved.json", saved)),
                     ECS_OK);
    w = world_open(t);
    assert_int_equal(host_scene_load(w->f.s->scene, saved), ECS_OK);
    assert_float_equal(world_x(w, "kid"), 111, 0);
    assert_float_equal(world_x(w, "c0"), CHAIN, 0);
}

/* Entities made at run time (no scene id) are saved as "e<index>", unique also beside
 * scene ids that look alike, and references to them hold. */
static void Scene_entities_made_at_run_time_get_unique_ids(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    char path[PATH_SIZE], saved[PATH_SIZE], again[PATH_SIZE];
    write_scene(t, "ids.json",
                "{\"version\": 1, \"entities\": [{\"id\": \"e2\", \"debug_name\": \"loaded\"}]}",
                path);
    assert_int_equal(host_scene_load(w->f.s->scene, path), ECS_OK);
    ecs_entity made[3];
    const ecs_host *h = &w->f.s->plugins[0]->table;
    for (int i = 0; i < 3; i++) assert_int_equal(h->entity_create(h, &made[i]), ECS_OK);
    assert_int_equal(w->tf->add(w->tf->self, made[0], NULL, ecs_entity_null()), ECS_OK);
    assert_int_equal(w->tf->add(w->tf->self, made[1], NULL, made[0]), ECS_OK);
    assert_int_equal(w->dn->set(w->dn->self, made[2], "run time"), ECS_OK);
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "ids-saved.json", saved)), ECS_OK);
    cJSON *doc = read_json(saved), *list = cJSON_GetObjectItem(doc, "entities"), *e;
    assert_int_equal(cJSON_GetArraySize(list), 4);
    int seen = 0;
    cJSON_ArrayForEach(e, list)
    {
        const char *id = cJSON_GetObjectItem(e, "id")->valuestring;
        for (const cJSON *other = e->next; other; other = other->next)
            assert_string_not_equal(id, cJSON_GetObjectItem(other, "id")->valuestring);
        seen += !strcmp(id, "e2");
    }
    assert_int_equal(seen, 1); /* the scene's "e2" kept its id */
    cJSON_Delete(doc);
    w = world_open(t);
    assert_int_equal(host_scene_load(w->f.s->scene, saved), ECS_OK);
    assert_int_equal(host_entities_live(w->f.w->entities), 4);
    assert_int_equal(w->tf->count(w->tf->self), 2);
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "ids-again.json", again)), ECS_OK);
    EXPECT_SAME_FILE(saved, again);
}

/* A world built at run time with every child created before its parent, 1500 deep: the
 * host saves referenced entities first, so its own file loads back (no nesting). */
static void Scene_saved_deep_hierarchy_loads_back(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    enum { N = 1500 };
    static ecs_entity e[N];
    const ecs_host *h = &w->f.s->plugins[0]->table;
    assert_int_equal(h->entity_create_many(h, e, N), ECS_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(w->tf->add(w->tf->self, e[i], NULL, ecs_entity_null()), ECS_OK);
    for (int i = 0; i + 1 < N; i++) /* e[i] under e[i + 1]: parents at higher indices */
        assert_int_equal(w->tf->set_parent(w->tf->self, e[i], e[i + 1]), ECS_OK);
    char saved[PATH_SIZE], again[PATH_SIZE];
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "deep.json", saved)), ECS_OK);
    w = world_open(t);
    assert_int_equal(host_scene_load(w->f.s->scene, saved), ECS_OK);
    assert_int_equal(w->tf->count(w->tf->self), N);
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "deep-again.json", again)), ECS_OK);
    EXPECT_SAME_FILE(saved, again);
}

/* A save writes its text to the file in pieces while no entity has referred forward; from
 * the first that does, the rest waits for the reordering. A world of 6000 named entities
 * (over a megabyte of text, several pieces before and after), in chains of ten, whose
 * entity 2000 (a chain's root) becomes the child of the last one: the last one's chain is
 * saved before entity 2000, every other entity in index order, and the file loads back
 * and saves again byte for byte. */
static void Scene_save_in_pieces_still_puts_a_late_reference_first(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    enum { N = 6000, CHILD = 2000 };
    static ecs_entity e[N];
    const ecs_host *h = &w->f.s->plugins[0]->table;
    assert_int_equal(h->entity_create_many(h, e, N), ECS_OK);
    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof name, "entity %04d of the streamed save", i);
        assert_int_equal(w->dn->set(w->dn->self, e[i], name), ECS_OK);
        ecs_entity parent = i % 10 ? e[i - 1] : ecs_entity_null(); /* chains of ten */
        assert_int_equal(w->tf->add(w->tf->self, e[i], NULL, parent), ECS_OK);
    }
    assert_int_equal(w->tf->set_parent(w->tf->self, e[CHILD], e[N - 1]), ECS_OK);
    char saved[PATH_SIZE], again[PATH_SIZE];
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "pieces.json", saved)), ECS_OK);
    size_t len = 0;
    char *text = harness_read_file(saved, &len);
    assert_non_null(text);
    assert_true(len > 4 * (256u << 10)); /* pieces were written before and after entity 2000 */
    free(text);
    cJSON *doc = read_json(saved);
    const cJSON *list = cJSON_GetObjectItem(doc, "entities");
    assert_int_equal(cJSON_GetArraySize(list), N);
    for (int k = 0; k < N; k++) { /* 0..1999, 5990..5999 (5999's chain), 2000..5989 */
        int want = k < CHILD ? k : k < CHILD + 10 ? N - 10 + (k - CHILD) : k - 10;
        char name[64];
        snprintf(name, sizeof name, "entity %04d of the streamed save", want);
        const cJSON *dn = cJSON_GetObjectItem(cJSON_GetArrayItem(list, k), "debug_name");
        if (!cJSON_IsString(dn) || strcmp(dn->valuestring, name) != 0)
            fail_msg("entities[%d] is '%s', expected '%s'", k,
                     cJSON_IsString(dn) ? dn->valuestring : "?", name);
    }
    cJSON_Delete(doc);
    w = world_open(t);
    assert_int_equal(host_scene_load(w->f.s->scene, saved), ECS_OK);
    assert_int_equal(w->tf->count(w->tf->self), N);
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "pieces-again.json", again)),
                     ECS_OK);
    EXPECT_SAME_FILE(saved, again);
}

/* The same scene loaded twice into one world: the save still has unique ids, and loads. */
static void Scene_same_scene_loaded_twice_saves_unique_ids(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    char in[PATH_SIZE], saved[PATH_SIZE];
    char *text = tree_scene("t", 10, "");
    write_scene(t, "twice.json", text, in);
    free(text);
    assert_int_equal(host_scene_load(w->f.s->scene, in), ECS_OK);
    assert_int_equal(host_scene_load(w->f.s->scene, in), ECS_OK);
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "twice-saved.json", saved)), ECS_OK);
    w = world_open(t);
    assert_int_equal(host_scene_load(w->f.s->scene, saved), ECS_OK);
    assert_int_equal(host_entities_live(w->f.w->entities), 20);
    assert_int_equal(w->tf->count(w->tf->self), 20);
    /* each copy kept its own tree: two roots "t0", ten entities under each, and every
     * "t<i>" has "t<(i-1)/2>" as its parent, as tree_scene made them */
    ecs_entity e, roots[2] = {{0}, {0}};
    int nroots = 0, under[2] = {0, 0};
    for (uint32_t i = 1; host_entities_next_live(w->f.w->entities, i, &e);
         i = ecs_entity_index(e) + 1) {
        int k = -1;
        assert_int_equal(sscanf(w->dn->get(w->dn->self, e), "t%d", &k), 1);
        ecs_entity p = w->tf->parent(w->tf->self, e);
        if (k == 0) {
            assert_true(ecs_entity_is_null(p));
            assert_true(nroots < 2);
            roots[nroots++] = e;
        } else {
            char want[16];
            snprintf(want, sizeof want, "t%d", (k - 1) / 2);
            assert_string_equal(w->dn->get(w->dn->self, p), want);
        }
    }
    assert_int_equal(nroots, 2);
    for (uint32_t i = 1; host_entities_next_live(w->f.w->entities, i, &e);
         i = ecs_entity_index(e) + 1) { /* the roots known: whose tree is each entity in? */
        ecs_entity top = e;
        while (!ecs_entity_is_null(w->tf->parent(w->tf->self, top)))
            top = w->tf->parent(w->tf->self, top);
        for (int r = 0; r < 2; r++) under[r] += ecs_entity_eq(top, roots[r]) ? 1 : 0;
    }
    assert_int_equal(under[0] + under[1], 20);
    assert_int_equal(under[0], 10);
}

/* write_component stand-ins for transform's: misuses of the writer, and depths. */
static int deep_levels; /* how deep deep_write nests */

static ecs_status bad_write(void *state, ecs_entity e, ecs_json_writer *wr)
{
    (void)state, (void)e;
    wr->key(wr, "outside"); /* a key outside any object */
    return ECS_OK;
}

static ecs_status deep_write(void *state, ecs_entity e, ecs_json_writer *wr)
{
    (void)state, (void)e;
    for (int i = 0; i < deep_levels; i++) wr->begin_array(wr);
    for (int i = 0; i < deep_levels; i++) wr->end_array(wr);
    return ECS_OK;
}

static ecs_status nan_write(void *state, ecs_entity e, ecs_json_writer *wr)
{
    (void)state, (void)e;
    cJSON *v = cJSON_CreateObject();
    cJSON_AddNumberToObject(v, "x", NAN); /* as a save_component would hand it over */
    wr->value(wr, v);
    cJSON_Delete(v);
    return ECS_OK;
}

/* transform's manager record in w. */
static host_manager *transform_manager(world_test *w)
{
    for (size_t m = 0; m < w->f.w->manager_count; m++)
        if (!strcmp(w->f.w->managers[m]->name, "transform")) return w->f.w->managers[m];
    fail_msg("no manager named transform");
    return NULL;
}

/* stderr (where the host logs) into the file `name` of t until stderr_back(); returns the
 * saved descriptor. */
static int stderr_to(scene_test *t, const char *name, char *path)
{
    fflush(stderr);
    int saved_fd = dup(2), fd = open(path_in(t, name, path), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved_fd >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    return saved_fd;
}

/* stderr back; what was logged meanwhile (malloc'd). */
static char *stderr_back(int saved_fd, const char *path)
{
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    return read_all(path);
}

/* Save w with transform's write_component replaced by `writer`; the status, and what the
 * host logged in *said (malloc'd). */
static ecs_status save_with(scene_test *t, world_test *w, const char *out,
                            ecs_status (*writer)(void *, ecs_entity, ecs_json_writer *),
                            char **said)
{
    char log[PATH_SIZE];
    host_manager *tf = transform_manager(w);
    ecs_status (*real)(void *, ecs_entity, ecs_json_writer *) = tf->desc.write_component;
    tf->desc.write_component = writer;
    int saved_fd = stderr_to(t, "save-log.txt", log);
    ecs_status s = host_scene_save(w->f.s->scene, out);
    *said = stderr_back(saved_fd, log);
    tf->desc.write_component = real;
    return s;
}

/* A manager that writes invalid JSON (a misuse, a value nested deeper than a scene may be,
 * a NaN in a cJSON value) fails the save with one line naming it, the entity and the
 * mistake; the old file stays; a value exactly as deep as allowed saves and loads back. */
/* Managers that misuse the reader (read_component), for Scene_load_refuses_misused_readers. */
static ecs_status lazy_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    (void)state, (void)e, (void)r;
    return ECS_OK; /* reads nothing */
}

static ecs_status open_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    (void)state, (void)e;
    r->begin_object(r); /* and never closes it */
    return ECS_OK;
}

static ecs_status greedy_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    (void)state, (void)e;
    double x;
    (r->skip)(r);
    return r->number(r, &x) ? ECS_OK : ECS_ERR_BAD_VALUE; /* past its value */
}

static ecs_status silent_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    (void)state, (void)e;
    (r->skip)(r);
    return ECS_ERR_BAD_VALUE; /* refuses without a word */
}

/* Load in with transform's read_component replaced by `reader` (NULL: its own); the
 * status, and what the host logged in *said (free it). */
static ecs_status load_with(scene_test *t, world_test *w, const char *in,
                            ecs_status (*reader)(void *, ecs_entity, ecs_json_reader *),
                            char **said)
{
    char log[PATH_SIZE];
    host_manager *tf = transform_manager(w);
    ecs_status (*real)(void *, ecs_entity, ecs_json_reader *) = tf->desc.read_component;
    if (reader) tf->desc.read_component = reader; /* NULL: the real one */
    int saved_fd = stderr_to(t, "load-log.txt", log);
    ecs_status s = host_scene_load(w->f.s->scene, in);
    *said = stderr_back(saved_fd, log);
    tf->desc.read_component = real;
    return s;
}

/* A manager that misuses its reader fails the load with a message naming it and the
 * place, and the world is as it was: no entity made by the load is left. */
static void Scene_load_refuses_misused_readers(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    char in[PATH_SIZE];
    char *text = tree_scene("t", 3, "");
    write_scene(t, "misread.json", text, in);
    free(text);
    static const struct {
        ecs_status (*reader)(void *, ecs_entity, ecs_json_reader *);
        const char *why;
    } c[] = {
        {lazy_read, "manager 'transform' returned from read_component before reading its whole "
                    "value (a plugin bug)"},
        {open_read, "before reading its whole value"},
        {greedy_read, "read past the end of the value"},
        {silent_read, "manager 'transform' refused it: "},
    };
    world_counts before = counts_of(w);
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        char *said = NULL;
        assert_int_not_equal(load_with(t, w, in, c[k].reader, &said), ECS_OK);
        if (!strstr(said, c[k].why) || !strstr(said, "misread.json:") ||
            !strstr(said, "entities[0].transform"))
            fail_msg("case %zu: unclear log: %s", k, said);
        free(said);
        world_counts after = counts_of(w);
        assert_memory_equal(&after, &before, sizeof after);
    }
    char *said = NULL; /* and the real reader loads it */
    assert_int_equal(load_with(t, w, in, NULL, &said), ECS_OK);
    free(said);
    assert_int_equal(host_entities_live(w->f.w->entities), before.live + 3);
}

static void Scene_save_refuses_invalid_writer_output(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    char in[PATH_SIZE], out[PATH_SIZE];
    char *text = tree_scene("t", 3, "");
    write_scene(t, "bad.json", text, in);
    free(text);
    assert_int_equal(host_scene_load(w->f.s->scene, in), ECS_OK);
    path_in(t, "bad-saved.json", out);
    static const struct {
        ecs_status (*writer)(void *, ecs_entity, ecs_json_writer *);
        int levels;
        const char *why;
    } c[] = {
        {bad_write, 0, "key() outside an object"},
        {deep_write, HOST_JW_MAX_LEVELS + 1, "nested deeper than 997 levels"},
        {nan_write, 0, "a NaN or infinite number"},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        assert_int_equal(harness_write_file(out, "{\"old\": true}\n", 0644), 0);
        deep_levels = c[k].levels;
        char *said = NULL;
        assert_int_not_equal(save_with(t, w, out, c[k].writer, &said), ECS_OK);
        if (!strstr(said, "plugin 'transform', manager 'transform' wrote invalid JSON for "
                          "entity '") ||
            !strstr(said, c[k].why))
            fail_msg("case %zu: unclear log: %s", k, said);
        free(said);
        char *kept = read_all(out);
        assert_string_equal(kept, "{\"old\": true}\n");
        free(kept);
    }
    deep_levels = HOST_JW_MAX_LEVELS; /* the deepest a save writes: it loads back */
    char *said = NULL;
    assert_int_equal(save_with(t, w, out, deep_write, &said), ECS_OK);
    free(said);
    host_json_arena *arena = NULL; /* the parser takes what the writer wrote at its deepest */
    size_t len = 0;
    char *saved = host_json_read_text(out, &len, NULL, 0);
    assert_non_null(saved);
    char err[512];
    cJSON *root = host_json_parse_arena(out, saved, len, &arena, err, sizeof err);
    if (!root) fail_msg("the save at the deepest level does not parse: %s", err);
    host_json_arena_free(arena);
    free(saved);
    assert_int_equal(host_scene_save(w->f.s->scene, out), ECS_OK);
}

/* Loading, emptying the world and loading again reuses entity indices (past the 1024 that
 * must wait): the save is the same bytes whatever indices the entities got. */
static void Scene_save_order_survives_index_reuse(void **state)
{
    scene_test *t = *state;
    world_test *w = world_open(t);
    char in[PATH_SIZE], first[PATH_SIZE], later[PATH_SIZE];
    char *text = tree_scene("r", 1200, "");
    write_scene(t, "reuse.json", text, in);
    free(text);
    assert_int_equal(host_scene_load(w->f.s->scene, in), ECS_OK);
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "reuse-1.json", first)), ECS_OK);
    for (int round = 0; round < 3; round++) {
        ecs_entity e;
        while (host_entities_next_live(w->f.w->entities, 1, &e))
            host_entity_destroy(w->f.w->entities, e);
        host_world_announce_destroyed(w->f.w);
        assert_int_equal(host_scene_load(w->f.s->scene, first), ECS_OK);
    }
    assert_int_equal(host_scene_save(w->f.s->scene, path_in(t, "reuse-4.json", later)), ECS_OK);
    EXPECT_SAME_FILE(first, later);
}

/* ---- round trips through ecs-host ---- */

static const char mixed_scene[] =
    "{\"version\": 1, \"editor\": {\"grid\": [1, 2], \"note\": \"kept\"},\n"
    " \"entities\": [\n"
    "  {\"id\": \"child\", \"debug_name\": \"Kind \\u00e9\\u6f22\", \"transform\": {\"position\": "
    "[0.1, -2.5e-3, 1e20], \"rotation\": [0, 0.70710677, 0, 0.70710677], \"parent\": "
    "\"root\"}},\n"
    "  {\"id\": \"root\", \"transform\": {\"scale\": [2, 2, 2]}, \"mesh\": [{\"mesh\": \"a.mesh\", "
    "\"material\": \"m\", \"visible\": false, \"bounds\": {\"min\": [-1, -1, -1], \"max\": [1, "
    "1, 1]}}, {\"mesh\": \"b.mesh\", " BOUNDS "}]},\n"
    "  {\"id\": \"ghost\", \"physics\": {\"mass\": 2.5, \"shape\": [\"box\", {\"x\": null}], "
    "\"on\": true}},\n"
    "  {\"id\": \"lonely\"}\n"
    " ],\n"
    " \"zzz\": 1}\n";

static void Scene_round_trip_is_byte_identical(void **state)
{
    scene_test *t = *state;
    char in[PATH_SIZE], a[PATH_SIZE], b[PATH_SIZE], a2[PATH_SIZE], demo[PATH_SIZE];
    write_scene(t, "mixed.json", mixed_scene, in);
    convert(t, t->plugins, in, path_in(t, "a.json", a));
    convert(t, t->plugins, a, path_in(t, "b.json", b));
    EXPECT_SAME_FILE(a, b);
    convert(t, t->plugins, in, path_in(t, "a2.json", a2)); /* saving is deterministic */
    EXPECT_SAME_FILE(a, a2);
    cJSON *doc = read_json(a);
    const cJSON *list = cJSON_GetObjectItem(doc, "entities");
    assert_int_equal(cJSON_GetArraySize(list), 4); /* "lonely" too: it had an id */
    /* a referenced entity is saved before the ones referring to it: root, then child */
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "id")->valuestring,
                        "root");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "debug_name")->valuestring,
                        "Kind \xc3\xa9\xe6\xbc\xa2");
    assert_non_null(cJSON_GetObjectItem(doc, "zzz"));
    cJSON_Delete(doc);
    snprintf(demo, sizeof demo, "%s/examples/demo.json", SOURCE_ROOT);
    convert(t, t->plugins, demo, a);
    convert(t, t->plugins, a, b);
    EXPECT_SAME_FILE(a, b);
}

/* Frames between the load and the save change nothing the plugins save. */
static void Scene_frames_then_save_writes_the_same_scene(void **state)
{
    scene_test *t = *state;
    char in[PATH_SIZE], a[PATH_SIZE], b[PATH_SIZE];
    write_scene(t, "mixed.json", mixed_scene, in);
    convert(t, t->plugins, in, path_in(t, "a.json", a));
    HOST(t, "--frames", "30", "--scene", in, "--save", path_in(t, "b.json", b));
    EXPECT_CLEAN(t);
    EXPECT_SAME_FILE(a, b);
    const char *loaded = strstr(t->run.err, "scene: loaded 4 entities");
    const char *saved = strstr(t->run.err, "scene: saved 4 entities");
    assert_true(loaded && saved && loaded < saved);
}

/* Find the entity with this id in a saved scene's list. */
static const cJSON *entity_by_id(const cJSON *doc, const char *id)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "entities"))
    {
        const cJSON *i = cJSON_GetObjectItem(e, "id");
        if (cJSON_IsString(i) && !strcmp(i->valuestring, id)) return e;
    }
    return NULL;
}

/* Without the mesh plugin, every "mesh" value (and every other unknown component, and
 * unknown top-level keys) comes back unchanged; with it again, the scene is whole. */
static void Scene_kept_components_survive_without_their_plugin(void **state)
{
    scene_test *t = *state;
    char demo[PATH_SIZE], kept[PATH_SIZE], kept2[PATH_SIZE], full[PATH_SIZE], back[PATH_SIZE];
    snprintf(demo, sizeof demo, "%s/examples/demo.json", SOURCE_ROOT);
    convert(t, t->no_mesh, demo, path_in(t, "kept.json", kept));
    assert_null(strstr(t->run.err, "mesh.so"));
    convert(t, t->no_mesh, kept, path_in(t, "kept2.json", kept2));
    EXPECT_SAME_FILE(kept, kept2);
    cJSON *original = read_json(demo), *saved = read_json(kept);
    const cJSON *e;
    int meshes = 0, others = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(original, "entities"))
    {
        const cJSON *id = cJSON_GetObjectItem(e, "id"), *c;
        const cJSON *s = entity_by_id(saved, id->valuestring);
        if (!s) fail_msg("entity '%s' was not saved", id->valuestring);
        cJSON_ArrayForEach(c, e)
        {
            if (!strcmp(c->string, "mesh") || !strcmp(c->string, "light") ||
                !strcmp(c->string, "camera")) {
                if (!cJSON_Compare(c, cJSON_GetObjectItem(s, c->string), true))
                    fail_msg("entity '%s': \"%s\" changed", id->valuestring, c->string);
                meshes += !strcmp(c->string, "mesh");
                others += !!strcmp(c->string, "mesh");
            }
        }
    }
    assert_true(meshes >= 20 && others >= 3);
    assert_true(cJSON_Compare(cJSON_GetObjectItem(original, "editor"),
                              cJSON_GetObjectItem(saved, "editor"), true));
    cJSON_Delete(original);
    cJSON_Delete(saved);
    /* the mesh plugin back: the same file as a save that never lost it */
    convert(t, t->plugins, demo, path_in(t, "full.json", full));
    convert(t, t->plugins, kept, path_in(t, "back.json", back));
    EXPECT_SAME_FILE(full, back);
}

/* Pass one reads the common entity object straight from the text (plain keys, a plain id,
 * each key once, up to 8 of them) and hands anything else to its reader: both index the
 * same. The same entities written both ways (white space of every kind; the reader's
 * copy with its id key spelled with an escape, and one entity with 9 keys) load and save
 * to the same file, kept unknown components and forward references included. */
static void Scene_entities_read_straight_and_by_the_reader_index_the_same(void **state)
{
    scene_test *t = *state;
    enum { N = 60 };
    char *texts[2], in[2][PATH_SIZE], out[2][PATH_SIZE];
    for (int v = 0; v < 2; v++) {
        size_t cap = (size_t)N * 400 + 4096, n = 0;
        char *text = texts[v] = malloc(cap);
        assert_non_null(text);
        n += (size_t)snprintf(text + n, cap - n, "{\"version\": 1, \"entities\": [");
        for (int i = 0; i < N; i++) {
            static const char *const spaces[] = {" ", "\n\t", "\r\n  ", ""};
            const char *sp = spaces[i % 4];
            char parent[48] = ""; /* a later entity (a forward reference), or e0 */
            if (i % 5 == 1)
                snprintf(parent, sizeof parent, ", \"parent\": \"e%d\"", i + 3 < N ? i + 3 : 0);
            n += (size_t)snprintf(
                text + n, cap - n,
                "%s%s{%s\"%s\"%s:%s\"e%d\",%s\"debug_name\": \"name %d\","
                "\"transform\":%s{\"position\": [%d, 1, 2]%s}, \"extra\": "
                "{\"k\": [%d, \"}]\"]}%s}",
                i ? "," : "", sp, sp, v ? "\\u0069d" : "id", sp, sp, i, sp, i, sp, i, parent, i,
                i == 7 ? ", \"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4, \"f\": 5" : "");
        }
        snprintf(text + n, cap - n, "%s]}\n", v ? "\n" : "");
        char name[32];
        snprintf(name, sizeof name, "straight%d.json", v);
        write_scene(t, name, text, in[v]);
        snprintf(name, sizeof name, "saved%d.json", v);
        convert(t, t->plugins, in[v], path_in(t, name, out[v]));
        EXPECT_ERR(t, "scene: loaded 60 entities");
    }
    EXPECT_SAME_FILE(out[0], out[1]);
    cJSON *saved = read_json(out[0]);
    const cJSON *e7 = entity_by_id(saved, "e7"), *e1 = entity_by_id(saved, "e1");
    assert_non_null(e7);
    assert_non_null(e1);
    assert_int_equal(cJSON_GetObjectItem(e7, "f")->valueint, 5); /* 9 keys: all kept */
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(e7, "extra"), "k")->child->next->valuestring, "}]");
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(e1, "transform"), "parent"));
    cJSON_Delete(saved);
    free(texts[0]);
    free(texts[1]);
}

static void Scene_save_of_an_empty_world(void **state)
{
    scene_test *t = *state;
    char out[PATH_SIZE], again[PATH_SIZE];
    HOST(t, "--frames", "0", "--save", path_in(t, "empty.json", out));
    EXPECT_CLEAN(t);
    cJSON *doc = read_json(out);
    assert_int_equal(cJSON_GetObjectItem(doc, "version")->valueint, HOST_SCENE_VERSION);
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(doc, "entities")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "entities")), 0);
    cJSON_Delete(doc);
    convert(t, t->plugins, out, path_in(t, "empty-again.json", again));
    EXPECT_ERR(t, "scene: loaded 0 entities");
    EXPECT_SAME_FILE(out, again);
}

/* The log line starting with `start` ends by saying how long it took: " in <ms> ms". */
static void expect_timed_line(scene_test *t, const char *start)
{
    const char *p = strstr(t->run.err, start);
    if (!p) fail_msg("no line '%s' in:\n%s", start, t->run.err);
    size_t n = strcspn(p, "\n");
    const char *in = NULL; /* the last " in " of the line */
    for (const char *q = p; (q = strstr(q, " in ")) && q < p + n; q++) in = q;
    double ms = -1;
    char unit[4] = "", after = 0;
    if (!in || sscanf(in, " in %lf %3s%c", &ms, unit, &after) < 2 || ms < 0 ||
        strcmp(unit, "ms") != 0 || (after && after != '\n'))
        fail_msg("'%.*s' does not end saying how long it took", (int)n, p);
}

/* --save writes at exit after SIGTERM just as after the last frame. */
static void Scene_save_happens_after_sigterm(void **state)
{
    scene_test *t = *state;
    char in[PATH_SIZE], want[PATH_SIZE], got[PATH_SIZE];
    write_scene(t, "mixed.json", mixed_scene, in);
    convert(t, t->plugins, in, path_in(t, "want.json", want));
    const char *argv[MAX_ARGS];
    host_argv(t, t->plugins,
              (const char *const[]){"--scene", in, "--save", path_in(t, "got.json", got), NULL},
              argv);
    argv[2] = "60"; /* --fps 60: frames until the signal */
    assert_int_equal(harness_start(&t->proc, argv), 0);
    if (!harness_wait_output(&t->proc, "scene: loaded 4 entities", SIGNAL_TIMEOUT))
        fail_msg("%s: never said it loaded the scene", t->cmd);
    usleep(100 * 1000);                      /* a few frames */
    assert_int_equal(access(got, F_OK), -1); /* nothing saved before exit */
    assert_int_equal(kill(t->proc.pid, SIGTERM), 0);
    assert_int_equal(harness_finish(&t->proc, SIGNAL_TIMEOUT), 0);
    harness_output_free(&t->run);
    t->run = t->proc.result;
    memset(&t->proc.result, 0, sizeof t->proc.result);
    t->proc.pid = 0;
    EXPECT_CLEAN(t);
    EXPECT_ERR(t, "(signal)");
    EXPECT_ERR(t, "scene: saved 4 entities");
    expect_timed_line(t, "scene: loaded 4 entities from ");
    expect_timed_line(t, "scene: saved 4 entities to ");
    EXPECT_SAME_FILE(want, got);
}

/* Make dir unwritable, even for root (the immutable attribute). False when it cannot be. */
static bool lock_folder(scene_test *t, const char *dir)
{
    t->locked = strdup(dir);
    assert_non_null(t->locked);
    assert_int_equal(chmod(dir, 0555), 0);
    char probe[PATH_SIZE + 16];
    snprintf(probe, sizeof probe, "%s/probe", dir);
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return true; /* the mode is enough */
    close(fd);
    unlink(probe);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY), attr = 0;
    if (dfd >= 0 && ioctl(dfd, FS_IOC_GETFLAGS, &attr) == 0) {
        attr |= FS_IMMUTABLE_FL;
        t->immutable = ioctl(dfd, FS_IOC_SETFLAGS, &attr) == 0;
    }
    if (dfd >= 0) close(dfd);
    fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return true;
    close(fd);
    unlink(probe);
    return false;
}

/* A save that cannot write its temporary file fails with exit 1 and one clear line; the
 * scene already there is untouched and nothing is left beside it. */
static void Scene_save_into_an_unwritable_folder_keeps_the_old_file(void **state)
{
    scene_test *t = *state;
    char in[PATH_SIZE], dir[PATH_SIZE], old[PATH_SIZE], files[1024], line[4096];
    write_scene(t, "mixed.json", mixed_scene, in);
    assert_int_equal(mkdir(path_in(t, "locked", dir), 0700), 0);
    path_in(t, "locked/scene.json", old);
    assert_int_equal(harness_write_file(old, "{\"old\": true}\n", 0644), 0);
    if (!lock_folder(t, dir)) {
        unlock_folder(t);
        print_message("# SKIP: neither mode 0555 nor the immutable attribute (needs "
                      "CAP_LINUX_IMMUTABLE and a file system that has it) keeps this user "
                      "from writing into a folder\n");
        skip();
    }
    HOST(t, "--frames", "0", "--scene", in, "--save", old);
    EXPECT_EXIT(t, 2); /* known before the session starts, not after it */
    assert_int_equal(count_lines(t->run.err, "[error]"), 1);
    assert_true(line_with(t->run.err, "[error]", line, sizeof line));
    if (!strstr(line, old) || !strstr(line, "is not writable")) {
        dump(t);
        fail_msg("unclear error line: %s", line);
    }
    char *text = read_all(old);
    assert_string_equal(text, "{\"old\": true}\n");
    free(text);
    list_folder(dir, files, sizeof files);
    assert_string_equal(files, "scene.json ");
    unlock_folder(t);
}

/* A folder where the save should go: refused before the session (exit 2, one line), the
 * folder untouched and no temporary file left. */
static void Scene_save_that_cannot_rename_leaves_no_temporary_file(void **state)
{
    scene_test *t = *state;
    char in[PATH_SIZE], dir[PATH_SIZE], target[PATH_SIZE], inside[PATH_SIZE], files[1024];
    assert_int_equal(mkdir(path_in(t, "out", dir), 0700), 0);
    path_in(t, "out/scene.json", target);
    assert_int_equal(mkdir(target, 0700), 0);
    path_in(t, "out/scene.json/keep", inside);
    assert_int_equal(harness_write_file(inside, "x", 0644), 0);
    write_scene(t, "mixed.json", mixed_scene, in);
    HOST(t, "--frames", "0", "--scene", in, "--save", target);
    EXPECT_EXIT(t, 2);
    assert_int_equal(count_lines(t->run.err, "[error]"), 1);
    EXPECT_ERR(t, "not a regular file (a folder)");
    list_folder(dir, files, sizeof files);
    assert_string_equal(files, "scene.json ");
    list_folder(target, files, sizeof files);
    assert_string_equal(files, "keep ");
}

/* ---- the documentation and the examples ---- */

/* Every ```json block of docs/scene-format.md is a complete scene that loads cleanly and
 * round-trips. */
static void Scene_doc_examples_load(void **state)
{
    scene_test *t = *state;
    char doc_path[PATH_SIZE];
    snprintf(doc_path, sizeof doc_path, "%s/docs/scene-format.md", SOURCE_ROOT);
    char *doc = read_all(doc_path);
    int blocks = 0;
    for (const char *p = doc; (p = strstr(p, "\n```json\n"));) {
        p += strlen("\n```json\n");
        const char *end = strstr(p, "\n```");
        assert_non_null(end);
        char *block = strndup(p, (size_t)(end - p + 1));
        char name[64], path[PATH_SIZE], a[PATH_SIZE], b[PATH_SIZE];
        snprintf(name, sizeof name, "doc%d.json", blocks++);
        write_scene(t, name, block, path);
        HOST(t, "--frames", "0", "--scene", path, "--save", path_in(t, "doc-a.json", a));
        if (t->run.exit_code != 0 || strstr(t->run.err, "[error]") ||
            strstr(t->run.err, "[warn]")) {
            dump(t);
            fail_msg("example %d of %s does not load cleanly:\n%s", blocks, doc_path, block);
        }
        convert(t, t->plugins, a, path_in(t, "doc-b.json", b));
        EXPECT_SAME_FILE(a, b);
        free(block);
        p = end;
    }
    free(doc);
    assert_true(blocks >= 2);
}

static void Scene_demo_example_loads_with_its_hierarchy(void **state)
{
    scene_test *t = *state;
    char demo[PATH_SIZE], out[PATH_SIZE];
    snprintf(demo, sizeof demo, "%s/examples/demo.json", SOURCE_ROOT);
    HOST(t, "--frames", "10", "--stats", "--scene", demo, "--save", path_in(t, "demo.json", out));
    EXPECT_CLEAN(t);
    cJSON *doc = read_json(out);
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(doc, "entities")), depth = 0, kept = 0;
    assert_true(n >= 20);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "entities"))
    {
        int d = 1;
        for (const cJSON *x = e; x && d < 100; d++) {
            const cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(x, "transform"), "parent");
            x = cJSON_IsString(p) ? entity_by_id(doc, p->valuestring) : NULL;
            if (!x) break;
        }
        if (d > depth) depth = d;
        kept += cJSON_GetObjectItem(e, "light") != NULL;
        assert_non_null(cJSON_GetObjectItem(e, "debug_name"));
    }
    assert_true(depth >= 4); /* street -> house -> door -> handle */
    assert_true(kept >= 1);
    cJSON_Delete(doc);
}

/* ---- a large document, indexed by two threads ---- */

enum { BIG_N = 12000 }; /* entities: about 1.6 MB of text, over the host's 1 MiB threshold */

/* Entity i's parent index, or -1: the one before it (even i), or one 5 ahead (every 7th:
 * references across the middle, forward); no cycles. */
static int big_parent(int i)
{
    if (i % 7 == 0 && i + 5 < BIG_N) return i + 5;
    return i % 2 == 0 && i > 0 ? i - 1 : -1;
}

/* A scene of BIG_N entities, one per line (entity i on line 3 + i), each with a name, a
 * transform and an unknown component "extra" of `extras` objects that have "id" keys of
 * their own; names hold `name_text`. bad >= 0: entity `bad` gets `bad_text` as a member
 * (a syntax or value error). Its '{' offsets into starts[BIG_N] when given. */
static char *big_scene(int extras, const char *name_text, int bad, const char *bad_text,
                       size_t *starts)
{
    size_t cap = (size_t)BIG_N * (220 + strlen(name_text) + 16 * (size_t)extras) + 4096, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    n += (size_t)snprintf(text + n, cap - n, "{\"version\": 1,\n\"entities\": [\n");
    for (int i = 0; i < BIG_N; i++) {
        if (starts) starts[i] = n;
        n += (size_t)snprintf(text + n, cap - n,
                              "{\"id\": \"e%d\", \"debug_name\": \"%s %d\", \"transform\": "
                              "{\"position\": [%d, 1, 2]",
                              i, name_text, i, i);
        int p = big_parent(i);
        if (p >= 0) n += (size_t)snprintf(text + n, cap - n, ", \"parent\": \"e%d\"", p);
        n += (size_t)snprintf(text + n, cap - n, "}, \"extra\": [");
        for (int k = 0; k < extras; k++)
            n += (size_t)snprintf(text + n, cap - n, "%s{\"id\": \"x%d\"}", k ? ", " : "", k);
        n += (size_t)snprintf(text + n, cap - n, "]%s%s}%s\n", i == bad ? ", " : "",
                              i == bad ? bad_text : "", i + 1 < BIG_N ? "," : "");
    }
    snprintf(text + n, cap - n, "]}\n");
    return text;
}

/* The saved world holds exactly what big_scene wrote: every entity once, by its id (the
 * save puts an entity before those that refer to it, so the order is not the file's). */
static void check_big_world(const char *path, int extras, const char *name_text)
{
    cJSON *doc = read_json(path), *ents = cJSON_GetObjectItem(doc, "entities");
    assert_int_equal(cJSON_GetArraySize(ents), BIG_N);
    static bool seen[BIG_N];
    memset(seen, 0, sizeof seen);
    char want[300]; /* a name of up to 255 bytes, a space, its number */
    for (cJSON *e = ents ? ents->child : NULL; e; e = e->next) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(e, "id"));
        int i = id && id[0] == 'e' ? atoi(id + 1) : -1;
        if (i < 0 || i >= BIG_N || seen[i]) fail_msg("an unexpected or repeated id '%s'", id);
        seen[i] = true;
        cJSON *tf = cJSON_GetObjectItem(e, "transform"),
              *parent = cJSON_GetObjectItem(tf, "parent");
        snprintf(want, sizeof want, "%s %d", name_text, i);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(e, "debug_name")), want);
        assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(tf, "position"), 0)->valuedouble == i);
        int p = big_parent(i);
        snprintf(want, sizeof want, "e%d", p);
        if (p >= 0 ? !parent || strcmp(cJSON_GetStringValue(parent), want) : parent != NULL)
            fail_msg("%s: parent %s, expected %s", id, cJSON_GetStringValue(parent),
                     p >= 0 ? want : "none");
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(e, "extra")), extras);
    }
    cJSON_Delete(doc);
}

/* The line of a -v run that says pass one was shared (into line); in *from the first
 * entity the second thread indexed, which must start at byte starts[*from], and the
 * entities it indexed must run to the last: everything else is a wrong index. */
static void expect_shared(scene_test *t, const size_t *starts, int *from)
{
    char line[256];
    if (!line_with(t->run.err, "pass one shared: a second thread indexed", line, sizeof line))
        fail_msg("no 'pass one shared' line in:\n%s", t->run.err);
    unsigned count = 0, total = 0, pieces = 0, of = 0, first = 0;
    size_t byte = 0;
    const char *p = strstr(line, "indexed ");
    if (!p || sscanf(p, "indexed %u of %u entities (%u of %u pieces), from entity %u (byte %zu)",
                     &count, &total, &pieces, &of, &first, &byte) != 6)
        fail_msg("unexpected line '%s'", line);
    if (total != BIG_N || first >= BIG_N || count != BIG_N - first || pieces < 1 || pieces >= of ||
        byte != starts[first])
        fail_msg("'%s': entity %u starts at byte %zu", line, first,
                 first < BIG_N ? starts[first] : 0);
    *from = (int)first;
}

/* big_scene's text (starts: its entities' offsets) loads whole with -v, pass one shared,
 * and is saved as `name` in t's folder into out: what one pass would load. */
static void load_big_shared(scene_test *t, const char *text, const size_t *starts,
                            const char *name_text, const char *name, char *out)
{
    char in[PATH_SIZE], saved[64];
    int from;
    write_scene(t, name, text, in);
    snprintf(saved, sizeof saved, "out-%s", name);
    path_in(t, saved, out);
    HOST(t, "-v", "--frames", "0", "--scene", in, "--save", out);
    EXPECT_CLEAN(t);
    EXPECT_ERR(t, "scene: loaded 12000 entities");
    expect_shared(t, starts, &from);
    check_big_world(out, 0, name_text);
}

/* A scene over 1 MiB is indexed by two threads, the second in pieces from the end down to
 * where it meets the first: what loads is what one pass loads (every entity, references
 * across the meeting point both ways, kept components), and saving it again gives the
 * same file. */
static void Scene_large_scene_indexed_by_two_threads_loads_whole(void **state)
{
    scene_test *t = *state;
    static size_t starts[BIG_N], again_starts[BIG_N];
    char *text = big_scene(0, "node", -1, NULL, starts);
    char out[PATH_SIZE], again[PATH_SIZE];
    int from;
    load_big_shared(t, text, starts, "node", "big.json", out);
    path_in(t, "big-again.json", again);
    HOST(t, "-v", "--frames", "0", "--scene", out, "--save", again);
    EXPECT_CLEAN(t);
    char *saved = read_all(out);             /* the host's own file: shared the same way */
    for (int i = 0, k = 0; i < BIG_N; i++) { /* each entity's '{': the one before its id */
        const char *e = strstr(saved + k, "\"id\":");
        assert_non_null(e);
        k = (int)(e - saved) + 1;
        while (e > saved && *e != '{') e--;
        again_starts[i] = (size_t)(e - saved);
    }
    expect_shared(t, again_starts, &from);
    EXPECT_SAME_FILE(out, again);
    free(saved);
    free(text);
}

/* The second thread's guesses fall where no entity starts. Inside a string: that candidate
 * is no object, and the next one (an entity's) is taken. Inside an array of objects with
 * ids of their own, which read as entities: its work is dropped. Either way what loads is
 * what one pass loads. */
static void Scene_large_scene_split_guess_off_an_entity_is_dropped(void **state)
{
    scene_test *t = *state;
    static size_t starts[BIG_N];
    char in[PATH_SIZE], out[PATH_SIZE];
    /* in a name: "}, {" in every debug_name, so the first candidate past a nominal
     * boundary is a name's, the second the next entity's */
    char *text = big_scene(0, "a}, {b", -1, NULL, starts);
    load_big_shared(t, text, starts, "a}, {b", "names.json", out);
    free(text);
    /* in "extra": 40 objects with "id" keys each, which the second thread reads as
     * entities (and finds the array's ']'); the one-pass reading never arrives exactly
     * there */
    text = big_scene(40, "n", -1, NULL, starts);
    write_scene(t, "extras.json", text, in);
    path_in(t, "extras-out.json", out);
    HOST(t, "-v", "--frames", "0", "--scene", in, "--save", out);
    EXPECT_CLEAN(t);
    EXPECT_ERR(t, "was not an entity's start: pass one went on alone");
    assert_null(strstr(t->run.err, "pass one shared"));
    check_big_world(out, 40, "n");
    free(text);
}

/* The large scene `text` fails to load, at entity `at`'s line, with message. */
static void expect_big_error(scene_test *t, const char *text, int at, const char *message)
{
    char in[PATH_SIZE], want[64];
    write_scene(t, "bad.json", text, in);
    HOST(t, "--frames", "0", "--scene", in);
    EXPECT_EXIT(t, 1);
    snprintf(want, sizeof want, "bad.json:%d:", 3 + at);
    EXPECT_ERR(t, want);
    EXPECT_ERR(t, message);
}

/* Errors in a large scene are the one pass's: the first in the text, at its line and
 * column, whichever thread's piece it is in, a text cut short near the end included; a
 * duplicate id across the pieces names both entities. */
static void Scene_large_scene_errors_are_those_of_one_pass(void **state)
{
    scene_test *t = *state;
    static const struct {
        int at;             /* entity with the bad member (line 3 + at), -1: none */
        const char *member; /* the member */
        const char *message;
    } cases[] = {
        {BIG_N - 10, "@@", "expected a string key, found '@'"},
        {10, "@@", "expected a string key, found '@'"},
        {BIG_N / 2, "@@", "expected a string key, found '@'"}, /* a middle piece: either's */
        {BIG_N - 10, "\"id\": \"x\"", "duplicate key \"id\""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *text = big_scene(0, "n", cases[c].at, cases[c].member, NULL);
        expect_big_error(t, text, cases[c].at, cases[c].message);
        free(text);
    }
    /* errors near both ends: the first one's is the news */
    char *text = big_scene(0, "n", 20, "@@", NULL);
    char *second = strstr(text, "\"id\": \"e11990\"");
    assert_non_null(second);
    second[1] = '@'; /* "@d": a key that is no string's start */
    expect_big_error(t, text, 20, "expected a string key, found '@'");
    free(text);
    /* cut off near the end (a half-written file): the end of the text, on the last line,
     * as one pass says */
    text = big_scene(0, "n", -1, NULL, NULL);
    char *cut = strstr(text, "\"id\": \"e11500\"");
    assert_non_null(cut);
    cut[4] = '\0';
    expect_big_error(t, text, 11500, "unexpected end of the file");
    free(text);
    /* the same id near both ends */
    text = big_scene(0, "n", -1, NULL, NULL);
    second = strstr(text, "\"id\": \"e11000\"");
    memcpy(second, "\"id\": \"e100\"  ", 14);
    expect_big_error(t, text, 11000, "duplicate id 'e100' (entities[100] has it too)");
    free(text);
}

/* A large scene of many pieces (names of 240 bytes with "}, {" in them, so a guessed
 * boundary often falls inside a name first): an error in any one of them, wherever the
 * two threads happened to meet, is the one pass's, at its line; without one it loads
 * whole and the shared line names an entity's own start. */
static void Scene_large_scene_of_many_pieces_fails_and_loads_as_one_pass(void **state)
{
    scene_test *t = *state;
    static size_t starts[BIG_N];
    char name[241], out[PATH_SIZE]; /* a debug name has at most 255 bytes */
    for (int k = 0; k < 240; k++) name[k] = "a}, {b "[k % 7];
    name[240] = '\0';
    for (int k = 1; k < 8; k++) { /* one error in each eighth of the entities */
        int at = BIG_N * k / 8 + 3 * k;
        char *text = big_scene(0, name, at, k % 2 ? "@@" : "\"id\": \"x\"", NULL);
        expect_big_error(t, text, at,
                         k % 2 ? "expected a string key, found '@'" : "duplicate key \"id\"");
        free(text);
    }
    char *text = big_scene(0, name, -1, NULL, starts);
    assert_true(strlen(text) > 3u << 20); /* pieces of 512 KiB: at least 6 */
    load_big_shared(t, text, starts, name, "many.json", out);
    free(text);
}

/* text with its first `from` replaced by `to` (a new string; the test fails without one). */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at) fail_msg("'%s' not in the scene", from);
    size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s%s", (int)head, text, to, at + strlen(from));
    return out;
}

/* A large scene's values are lexed ahead by a second thread while the managers read them
 * (where there are two CPUs: -v says how many): what loads is what one thread loads, names
 * with escapes and keys spelled with escapes included, and an error in a value (a count,
 * a key twice, a float out of range, an unknown parent) is the one thread's, at its line. */
static void Scene_large_scene_read_ahead_loads_and_fails_as_one_thread(void **state)
{
    scene_test *t = *state;
    char in[PATH_SIZE], out[PATH_SIZE];
    char *text = big_scene(2, "q\\\"\\u00e9", -1, NULL, NULL), *spelled;
    spelled = replaced(text, "{\"position\": [5, 1, 2]", "{\"posit\\u0069on\": [5, 1, 2]");
    write_scene(t, "ahead.json", spelled, in);
    path_in(t, "ahead-out.json", out);
    HOST(t, "-v", "--frames", "0", "--scene", in, "--save", out);
    EXPECT_CLEAN(t);
    EXPECT_ERR(t, "scene: loaded 12000 entities");
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
        EXPECT_ERR(t, "objects and arrays lexed ahead by a second thread");
    /* -v: how long each step took, and each manager that loaded components */
    EXPECT_ERR(t, "ahead.json: read ");
    EXPECT_ERR(t, ", components ");
    EXPECT_ERR(t, "(debug_name 12000 in ");
    EXPECT_ERR(t, ", transform 12000 in ");
    check_big_world(out, 2, "q\"\xC3\xA9"); /* decoded */
    free(spelled);
    static const struct {
        int at; /* the entity */
        const char *from, *to, *message;
    } cases[] = {
        {BIG_N - 10, "[11990, 1, 2]", "[11990, 1]", "expected an array of 3 finite numbers"},
        {BIG_N - 10, "[11990, 1, 2]", "[11990, 1, 2], \"position\": [1, 2, 3]",
         "duplicate key \"position\""},
        {BIG_N - 10, "[11990, 1, 2]", "[1e39, 1, 2]", "(float range)"},
        {10, "[10, 1, 2]", "[10, 1, 2], \"parent\": \"nobody\"", "unknown id 'nobody'"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *bad = replaced(text, cases[c].from, cases[c].to);
        expect_big_error(t, bad, cases[c].at, cases[c].message);
        free(bad);
    }
    free(text);
}

/* Whether a thread of this process is named `name` now (/proc/self/task/<tid>/comm). */
static bool thread_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
        if (!f) continue;
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
        found = strcmp(comm, name) == 0;
    }
    closedir(d);
    return found;
}

/* transform's own reader, and whether the read-ahead thread was there, by its name, when
 * the load first called the reader (-1: not called yet). */
#define NAMED_N 40000
static ecs_status (*named_real)(void *, ecs_entity, ecs_json_reader *);
static int named_seen = -1;

static ecs_status naming_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    if (named_seen < 0) named_seen = thread_named("ecs-scene-ahead");
    return named_real(state, e, r);
}

/* A large load's read-ahead thread carries a name (what top -H, gdb and perf show) while
 * the components load, and is gone when the load is done. The scene has more transforms
 * than the thread's ring has room for (32,768 values), so the thread is still there when
 * the first one is read: it cannot have read them all and ended before. */
static void Scene_a_large_load_names_its_read_ahead_thread(void **state)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) skip(); /* one CPU: no second thread */
    scene_test *t = *state;
    world_test *w = world_open(t);
    char in[PATH_SIZE];
    size_t cap = (size_t)NAMED_N * 80 + 64, n = 0;
    char *text = malloc(cap), *said = NULL;
    assert_non_null(text);
    n += (size_t)snprintf(text + n, cap - n, "{\"version\": 1, \"entities\": [\n");
    for (int i = 0; i < NAMED_N; i++)
        n += (size_t)snprintf(text + n, cap - n,
                              "{\"id\": \"e%d\", \"transform\": {\"position\": [%d, 1, 2]}}%s\n", i,
                              i, i + 1 < NAMED_N ? "," : "]}");
    write_scene(t, "named.json", text, in);
    free(text);
    named_real = transform_manager(w)->desc.read_component;
    named_seen = -1;
    assert_int_equal(load_with(t, w, in, naming_read, &said), ECS_OK);
    free(said);
    assert_int_equal(named_seen, 1);
    assert_false(thread_named("ecs-scene-ahead"));
}

/* gen-scene: deterministic for a seed, different for another, loads with ecs-host. */
static void Scene_generated_scenes_load(void **state)
{
    scene_test *t = *state;
    static const char *const variants[][4] = {{"3000", "--meshes", "0", NULL},
                                              {"3000", "--meshes", "1", NULL},
                                              {"2500", "--meshes", "2", NULL}};
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        const char *argv[] = {
            GEN_SCENE_PATH, variants[v][0], variants[v][1], variants[v][2], "--seed", "7", NULL};
        harness_output a = {0}, b = {0}, c = {0};
        assert_int_equal(harness_run(&a, RUN_TIMEOUT, argv), 0);
        assert_int_equal(a.exit_code, 0);
        assert_int_equal(harness_run(&b, RUN_TIMEOUT, argv), 0);
        assert_string_equal(a.out, b.out);
        argv[5] = "8";
        assert_int_equal(harness_run(&c, RUN_TIMEOUT, argv), 0);
        assert_string_not_equal(a.out, c.out);
        char path[PATH_SIZE], want[64];
        write_scene(t, "gen.json", a.out, path);
        HOST(t, "--frames", "2", "--stats", "--scene", path);
        EXPECT_CLEAN(t);
        snprintf(want, sizeof want, "scene: loaded %s entities", variants[v][0]);
        EXPECT_ERR(t, want);
        harness_output_free(&a);
        harness_output_free(&b);
        harness_output_free(&c);
    }
    harness_output r = {0};
    assert_int_equal(harness_run(&r, RUN_TIMEOUT,
                                 (const char *const[]){GEN_SCENE_PATH, "5", "--meshes", "3", NULL}),
                     0);
    assert_int_equal(r.exit_code, 2);
    harness_output_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(Scene_large_scene_indexed_by_two_threads_loads_whole, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_large_scene_split_guess_off_an_entity_is_dropped,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            Scene_large_scene_of_many_pieces_fails_and_loads_as_one_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_large_scene_errors_are_those_of_one_pass, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_large_scene_read_ahead_loads_and_fails_as_one_thread,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_a_large_load_names_its_read_ahead_thread, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_syntax_errors_name_the_line_and_column, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_a_key_twice_in_one_object_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_top_level_must_be_an_object_with_version_1, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_entities_must_be_an_array_of_objects_with_unique_ids,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_unknown_references_and_parent_cycles_are_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_transform_values_are_checked_where_they_are, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_debug_name_values_are_checked_where_they_are, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_mesh_values_are_checked_where_they_are, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_kept_json_with_a_number_out_of_range_is_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_late_errors_are_reported_at_the_bad_entity, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_empty_missing_and_folder_files_are_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_failed_load_saves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_failed_load_leaves_the_world_as_it_was, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_forward_references_resolve_in_any_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_entities_made_at_run_time_get_unique_ids, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_saved_deep_hierarchy_loads_back, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_same_scene_loaded_twice_saves_unique_ids, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_save_order_survives_index_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_save_in_pieces_still_puts_a_late_reference_first,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_round_trip_is_byte_identical, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_frames_then_save_writes_the_same_scene, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_kept_components_survive_without_their_plugin, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            Scene_entities_read_straight_and_by_the_reader_index_the_same, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_save_of_an_empty_world, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_save_happens_after_sigterm, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_save_into_an_unwritable_folder_keeps_the_old_file,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_save_that_cannot_rename_leaves_no_temporary_file,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_save_refuses_invalid_writer_output, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_load_refuses_misused_readers, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_doc_examples_load, setup, teardown),
        cmocka_unit_test_setup_teardown(Scene_demo_example_loads_with_its_hierarchy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(Scene_generated_scenes_load, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
