/* SPDX-License-Identifier: MIT */
/* test_sdk.c: the SDK as a third party gets it. The group setup installs this build into
 * a temporary folder (meson install --destdir) and points PATH and pkg-config at that
 * install only (PKG_CONFIG_PATH at its pkgconfig folder, PKG_CONFIG_SYSROOT_DIR at the
 * destdir, so the paths in ecs-plugin.pc resolve inside it). The tests then check what was
 * installed; build examples/plugin-template with cc + pkg-config, with its Makefile and
 * with its meson.build, never with an -I into the source tree; run the installed ecs-host
 * on the installed plugins plus the template with the template's scene; check that every
 * plugin exports exactly one dynamic symbol. And, apart from that install: every command
 * of README.md and then of docs/writing-a-plugin.md, as written, on a fresh copy of the
 * repository's files with a fresh home folder (the README builds, installs into ~/.local,
 * and the tutorial builds its plugins against that). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#if !defined(MESON_PATH) || !defined(BUILD_ROOT) || !defined(SOURCE_ROOT) ||                       \
    !defined(INSTALL_MANDIR) || !defined(INSTALL_DOCDIR) ||                                        \
    !defined(INSTALL_BASH_COMPLETION_DIR) || !defined(INSTALL_ZSH_COMPLETION_DIR) ||               \
    !defined(INSTALL_BINDIR) || !defined(INSTALL_LIBDIR) || !defined(INSTALL_INCLUDEDIR) ||        \
    !defined(TRANSFORM_SO) || !defined(MESH_SO) || !defined(DEBUG_NAME_SO)
#error "tests/meson.build defines the build, source and install paths this test uses"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_SANITIZERS 1
#endif
#endif

#define TEMPLATE_DIR SOURCE_ROOT "/examples/plugin-template"
#define DOC_PATH     SOURCE_ROOT "/docs/writing-a-plugin.md"
#define RUN_TIMEOUT  120.0 /* seconds for one command (a meson setup, a compile, a run) */
#define DOCS_TIMEOUT 480.0 /* seconds for every command of the README and the tutorial */
#define MAX_ARGS     64
#define PATH_SIZE    4096

static const char *const plugin_names[] = {"debug_name", "mesh", "transform"};
static const char *const sdk_headers[] = {"ecs_plugin.h",    "ecs_soa.h",  "ecs_math.h",
                                          "transform_api.h", "mesh_api.h", "debug_name_api.h"};

/* ---- the installed tree, made once for the whole group ---- */

typedef struct sdk {
    char *root; /* temporary folder; everything below is under it */
    char destdir[PATH_SIZE], bindir[PATH_SIZE], includedir[PATH_SIZE], libdir[PATH_SIZE];
    char plugindir[PATH_SIZE], pcdir[PATH_SIZE], host[PATH_SIZE];
    char template_so[PATH_SIZE]; /* bob.so built by Sdk_template_builds_with_cc_and_pkg_config */
    char cmd[8192];              /* the last command line, for messages */
    char user_path[PATH_SIZE];   /* PATH as the tests started, before the install's */
    harness_output run;          /* the last finished run */
} sdk;

static sdk *S; /* the group's state (cmocka passes it to each test too) */

/* printf into out (PATH_SIZE bytes); a path that does not fit fails the test. */
__attribute__((format(printf, 2, 3))) static void pathf(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, PATH_SIZE, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= PATH_SIZE) fail_msg("path too long: %s...", out);
}

/* out = a followed by b. */
static void path(char *out, const char *a, const char *b)
{
    pathf(out, "%s%s", a, b);
}

/* Run argv (NULL-terminated) into S->run. Returns 0, or an errno value when the program
 * could not be started (ENOENT: not installed). */
static int run_argv(const char *const *argv, double timeout)
{
    size_t used = 0;
    S->cmd[0] = '\0';
    for (const char *const *a = argv; *a && used < sizeof S->cmd; a++)
        used +=
            (size_t)snprintf(S->cmd + used, sizeof S->cmd - used, "%s%s", a == argv ? "" : " ", *a);
    harness_output_free(&S->run);
    return harness_run(&S->run, timeout, argv);
}

static void dump(void)
{
    fprintf(stderr,
            "command: %s\nexit code %d, signal %d%s\n--- stdout ---\n%s--- stderr ---\n%s---\n",
            S->cmd, S->run.exit_code, S->run.term_signal, S->run.timed_out ? " (timed out)" : "",
            S->run.out ? S->run.out : "", S->run.err ? S->run.err : "");
}

/* Run argv and fail the test unless it exits with `code`. */
static void run_expect(const char *const *argv, int code, const char *file, int line)
{
    int rc = run_argv(argv, RUN_TIMEOUT);
    if (rc != 0) {
        print_error("cannot run %s: %s\n", argv[0], strerror(rc));
        _fail(file, line);
    }
    if (S->run.exit_code == code && S->run.term_signal == 0 && !S->run.timed_out) return;
    print_error("expected exit code %d\n", code);
    dump();
    _fail(file, line);
}
#define RUN(code, ...)                                                                             \
    run_expect((const char *const[]){__VA_ARGS__, NULL}, code, __FILE__, __LINE__)

/* Fail unless the last run's stdout (out) or stderr (err) holds needle. */
static void expect_in(const char *text, const char *needle, const char *file, int line)
{
    if (text && strstr(text, needle)) return;
    print_error("expected to find \"%s\"\n", needle);
    dump();
    _fail(file, line);
}
#define EXPECT_OUT(s) expect_in(S->run.out, s, __FILE__, __LINE__)
#define EXPECT_ERR(s) expect_in(S->run.err, s, __FILE__, __LINE__)

static void expect_not_in(const char *text, const char *needle, const char *file, int line)
{
    if (!text || !strstr(text, needle)) return;
    print_error("did not expect \"%s\"\n", needle);
    dump();
    _fail(file, line);
}
#define EXPECT_ERR_ABSENT(s) expect_not_in(S->run.err, s, __FILE__, __LINE__)

/* Is name an executable in PATH? */
static bool program_in_path(const char *name)
{
    const char *p = getenv("PATH");
    while (p && *p) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char full[PATH_SIZE];
        snprintf(full, sizeof full, "%.*s/%s", (int)len, p, name);
        if (access(full, X_OK) == 0) return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

#define NEED_PROGRAM(name)                                                                         \
    do {                                                                                           \
        if (!program_in_path(name)) {                                                              \
            print_message("# no '%s' in PATH: test skipped\n", name);                              \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static int set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) == 0) return 0;
    fprintf(stderr, "setenv %s: %s\n", name, strerror(errno));
    return -1;
}

/* meson install --destdir ROOT/destdir; PATH and pkg-config pointed at the result. */
static int group_setup(void **state)
{
    static sdk s;
    S = &s;
    if (!(s.root = harness_make_tmpdir("ecs-sdk-test"))) {
        fprintf(stderr, "cannot make a temporary folder: %s\n", strerror(errno));
        return -1;
    }
    path(s.destdir, s.root, "/destdir");
    path(s.bindir, s.destdir, INSTALL_BINDIR);
    path(s.includedir, s.destdir, INSTALL_INCLUDEDIR "/ecs-host");
    path(s.libdir, s.destdir, INSTALL_LIBDIR);
    path(s.plugindir, s.libdir, "/ecs-host/plugins");
    path(s.pcdir, s.libdir, "/pkgconfig");
    path(s.host, s.bindir, "/ecs-host");
    const char *const install[] = {MESON_PATH, "install",   "-C",      BUILD_ROOT, "--no-rebuild",
                                   "--quiet",  "--destdir", s.destdir, NULL};
    int rc = run_argv(install, RUN_TIMEOUT);
    if (rc != 0 || s.run.exit_code != 0) {
        fprintf(stderr, "meson install failed (%s)\n", rc ? strerror(rc) : "exit status");
        dump();
        harness_remove_tree(s.root); /* the group teardown does not run after this */
        return -1;
    }
    char search[2 * PATH_SIZE + 8];
    const char *old_path = getenv("PATH");
    snprintf(s.user_path, sizeof s.user_path, "%s", old_path ? old_path : "/usr/bin:/bin");
    snprintf(search, sizeof search, "%s:%s", s.bindir, old_path ? old_path : "/usr/bin:/bin");
    if (set_env("PATH", search) || set_env("PKG_CONFIG_PATH", s.pcdir) ||
        set_env("PKG_CONFIG_SYSROOT_DIR", s.destdir))
        return -1;
    *state = &s;
    return 0;
}

static int group_teardown(void **state)
{
    harness_output_free(&S->run);
    if (S->root && harness_remove_tree(S->root) != 0)
        fprintf(stderr, "could not remove %s: %s\n", S->root, strerror(errno));
    free(S->root);
    return 0;
}

/* ---- helpers on files ---- */

static void expect_file(const char *file_path, const char *file, int line)
{
    struct stat st;
    if (stat(file_path, &st) == 0 && S_ISREG(st.st_mode)) return;
    print_error("%s: not installed (%s)\n", file_path, strerror(errno));
    _fail(file, line);
}
#define EXPECT_FILE(p) expect_file(p, __FILE__, __LINE__)

/* Fail unless `nm -D --defined-only so` lists exactly one symbol: ecs_plugin_entry, a
 * function (T). */
static void expect_one_export(const char *so, const char *file, int line)
{
    run_expect((const char *const[]){"nm", "-D", "--defined-only", so, NULL}, 0, file, line);
    int lines = 0;
    for (const char *l = S->run.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
        if (*l != '\n') lines++;
    if (lines == 1 && strstr(S->run.out, " T ecs_plugin_entry\n")) return;
    print_error("%s: expected one exported symbol, ecs_plugin_entry; nm lists %d:\n%s", so, lines,
                S->run.out);
    _fail(file, line);
}
#define EXPECT_ONE_EXPORT(so) expect_one_export(so, __FILE__, __LINE__)

/* Split s (modified) at blanks into argv[*n...]; pkg-config output has no quoting. */
static void split_words(char *s, const char **argv, size_t *n)
{
    for (char *w = strtok(s, " \t\n"); w && *n < MAX_ARGS - 8; w = strtok(NULL, " \t\n"))
        argv[(*n)++] = w;
}

/* The output of `pkg-config ARG ecs-plugin`, malloc'd. */
static char *pkg_config(const char *arg)
{
    RUN(0, "pkg-config", arg, "ecs-plugin");
    char *copy = strdup(S->run.out);
    assert_non_null(copy);
    return copy;
}

/* The JSON of entity `id` in a saved scene, or NULL. */
static const cJSON *scene_entity(const cJSON *scene, const char *id)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(scene, "entities"))
    {
        const cJSON *eid = cJSON_GetObjectItemCaseSensitive(e, "id");
        if (cJSON_IsString(eid) && strcmp(eid->valuestring, id) == 0) return e;
    }
    return NULL;
}

/* Element k of the number array at obj.a.b, or NAN. */
static double number_at(const cJSON *obj, const char *a, const char *b, int k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
    if (k >= 0) x = cJSON_GetArrayItem(x, k);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static cJSON *read_json(const char *file_path)
{
    char *text = harness_read_file(file_path, NULL);
    if (!text) fail_msg("cannot read %s", file_path);
    cJSON *j = cJSON_Parse(text);
    if (!j) fail_msg("%s is not JSON:\n%s", file_path, text);
    free(text);
    return j;
}

/* ---- what is installed ---- */

static void Sdk_install_puts_host_headers_plugins_and_pc_file_in_place(void **state)
{
    char p[PATH_SIZE];
    EXPECT_FILE(S->host);
    for (size_t i = 0; i < sizeof sdk_headers / sizeof sdk_headers[0]; i++) {
        pathf(p, "%s/%s", S->includedir, sdk_headers[i]);
        EXPECT_FILE(p);
    }
    for (size_t i = 0; i < sizeof plugin_names / sizeof plugin_names[0]; i++) {
        pathf(p, "%s/%s.so", S->plugindir, plugin_names[i]);
        EXPECT_FILE(p);
    }
    path(p, S->pcdir, "/ecs-plugin.pc");
    EXPECT_FILE(p);
    char *pc = harness_read_file(p, NULL);
    assert_non_null(pc);
    assert_non_null(strstr(pc, "\nRequires: libcjson\n"));
    assert_non_null(strstr(pc, "\nplugindir=${libdir}/ecs-host/plugins\n"));
    assert_non_null(strstr(pc, "\nCflags: -I${includedir}/ecs-host\n"));
    assert_null(strstr(pc, "\nLibs:")); /* header-only: Cflags only */
    assert_non_null(strstr(pc, "\nLicense: MIT\n"));
    free(pc);
    RUN(0, S->host, "--version");
    EXPECT_OUT("ecs-host ");
}

static void Sdk_pkg_config_points_into_the_install_only(void **state)
{
    char want[PATH_SIZE];
    char *cflags = pkg_config("--cflags");
    pathf(want, "-I%s", S->includedir);
    if (!strstr(cflags, want)) fail_msg("--cflags lacks %s: %s", want, cflags);
    if (strstr(cflags, SOURCE_ROOT)) fail_msg("--cflags names the source tree: %s", cflags);
    free(cflags);
    char *dir = pkg_config("--variable=plugindir");
    dir[strcspn(dir, "\n")] = '\0';
    assert_string_equal(dir, S->plugindir);
    free(dir);
    char *libs = pkg_config("--libs");
    assert_non_null(strstr(libs, "-lcjson")); /* through Requires: libcjson */
    free(libs);
}

/* ---- exported symbols ---- */

static void Sdk_each_plugin_exports_exactly_one_symbol(void **state)
{
    NEED_PROGRAM("nm");
    char p[PATH_SIZE];
    static const char *const built[] = {TRANSFORM_SO, MESH_SO, DEBUG_NAME_SO};
    for (size_t i = 0; i < sizeof built / sizeof built[0]; i++) EXPECT_ONE_EXPORT(built[i]);
    for (size_t i = 0; i < sizeof plugin_names / sizeof plugin_names[0]; i++) {
        pathf(p, "%s/%s.so", S->plugindir, plugin_names[i]);
        EXPECT_ONE_EXPORT(p);
    }
}

/* The manual pages, the completions, the guides and the template: what `man ecs-plugin`
 * points to is there, and the pages name this install's folders (filled in by
 * man/meson.build); bash-completion finds its file by the command's name. */
static void Sdk_install_puts_man_pages_completions_guides_and_template_in_place(void **state)
{
    char p[PATH_SIZE];
    pathf(p, "%s%s/ecs-host", S->destdir, INSTALL_BASH_COMPLETION_DIR);
    EXPECT_FILE(p);
    pathf(p, "%s%s/_ecs-host", S->destdir, INSTALL_ZSH_COMPLETION_DIR);
    EXPECT_FILE(p);
    static const char *const docs[] = {"README.md",
                                       "writing-a-plugin.md",
                                       "abi.md",
                                       "scene-format.md",
                                       "inspector.md",
                                       "examples/plugin-template/bob.c",
                                       "examples/plugin-template/Makefile",
                                       "examples/plugin-template/meson.build",
                                       "examples/cpp-plugin/cpp_counter.cpp"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        pathf(p, "%s%s/%s", S->destdir, INSTALL_DOCDIR, docs[i]);
        EXPECT_FILE(p);
    }
    pathf(p, "%s%s/man1/ecs-host.1", S->destdir, INSTALL_MANDIR);
    EXPECT_FILE(p);
    char *page = harness_read_file(p, NULL);
    assert_non_null(page);
    if (!strstr(page, "\n.Pa " INSTALL_LIBDIR "/ecs-host/plugins"))
        fail_msg("ecs-host(1) does not name the installed plugin folder");
    assert_null(strstr(page, "@PLUGINDIR@"));
    free(page);
    pathf(p, "%s%s/man7/ecs-plugin.7", S->destdir, INSTALL_MANDIR);
    EXPECT_FILE(p);
    page = harness_read_file(p, NULL);
    assert_non_null(page);
    if (!strstr(page, "\n.It Pa " INSTALL_DOCDIR "/writing-a-plugin.md\n"))
        fail_msg("ecs-plugin(7) does not name the installed guide");
    free(page);
    RUN(0, S->host, "--help"); /* it names where they are */
    EXPECT_OUT("the plugin template and a C++ plugin are installed in " INSTALL_DOCDIR "\n");
}

/* ---- the template, built three ways against the install ---- */

static void Sdk_template_builds_with_cc_and_pkg_config(void **state)
{
    NEED_PROGRAM("cc");
    NEED_PROGRAM("nm");
    char *cflags = pkg_config("--cflags"), *libs = pkg_config("--libs");
    const char *argv[MAX_ARGS] = {"cc",         "-std=c11", "-Wall",
                                  "-Wextra",    "-Werror",  "-O2",
                                  "-shared",    "-fPIC",    "-fvisibility=hidden",
                                  "-Wl,-z,defs"};
    size_t n = 10;
    split_words(cflags, argv, &n);
    path(S->template_so, S->root, "/bob.so");
    argv[n++] = "-o";
    argv[n++] = S->template_so;
    argv[n++] = TEMPLATE_DIR "/bob.c";
    split_words(libs, argv, &n);
    argv[n++] = "-lm";
    argv[n] = NULL;
    run_expect(argv, 0, __FILE__, __LINE__);
    free(cflags);
    free(libs);
    EXPECT_ONE_EXPORT(S->template_so);
}

static void Sdk_template_builds_with_its_makefile(void **state)
{
    NEED_PROGRAM("make");
    NEED_PROGRAM("cc");
    char dir[PATH_SIZE], so[PATH_SIZE];
    path(dir, S->root, "/make");
    path(so, dir, "/bob.so");
    assert_int_equal(mkdir(dir, 0700), 0);
    RUN(0, "make", "-C", dir, "-f", TEMPLATE_DIR "/Makefile", "CFLAGS=-O2 -Werror");
    EXPECT_ONE_EXPORT(so);
}

static void Sdk_template_builds_with_its_meson_build(void **state)
{
    char dir[PATH_SIZE], so[PATH_SIZE];
    path(dir, S->root, "/meson-build");
    path(so, dir, "/bob.so");
    RUN(0, MESON_PATH, "setup", "--werror", dir, TEMPLATE_DIR);
    EXPECT_OUT("Run-time dependency ecs-plugin found: YES");
    RUN(0, MESON_PATH, "compile", "-C", dir);
    EXPECT_ONE_EXPORT(so);
}

/* ---- the installed host on the installed plugins plus the template ---- */

/* ROOT/run/plugins (0700) with copies of the installed plugins and the template. */
static void make_run_dir(char *dir)
{
    char p[PATH_SIZE], src[PATH_SIZE];
    path(p, S->root, "/run");
    assert_int_equal(mkdir(p, 0700), 0);
    path(dir, p, "/plugins");
    assert_int_equal(mkdir(dir, 0700), 0);
    for (size_t i = 0; i < sizeof plugin_names / sizeof plugin_names[0]; i++) {
        pathf(src, "%s/%s.so", S->plugindir, plugin_names[i]);
        pathf(p, "%s/%s.so", dir, plugin_names[i]);
        assert_int_equal(harness_copy_file(src, p, 0755), 0);
    }
    if (!S->template_so[0]) fail_msg("bob.so was not built (see the cc test)");
    path(p, dir, "/bob.so");
    assert_int_equal(harness_copy_file(S->template_so, p, 0755), 0);
}

static void Sdk_installed_host_runs_the_template_with_its_scene(void **state)
{
    char dir[PATH_SIZE], saved[PATH_SIZE];
    make_run_dir(dir);
    path(saved, S->root, "/run/saved.json");
    RUN(0, S->host, "--list", dir);
    EXPECT_OUT("name: bob  version: 1.0.0");
    EXPECT_OUT("depends on: transform");
    RUN(0, S->host, "--strict", "--fps", "0", "--frames", "10", "--scene",
        TEMPLATE_DIR "/scene.json", "--save", saved, dir);
    EXPECT_ERR("loaded bob 1.0.0 from bob.so (1 managers, 0 APIs)");
    EXPECT_ERR("loaded 2 entities");
    EXPECT_ERR_ABSENT("[error]");
    EXPECT_ERR_ABSENT("[warn]");

    cJSON *scene = read_json(saved);
    const cJSON *buoy = scene_entity(scene, "buoy"), *lamp = scene_entity(scene, "lamp");
    assert_non_null(buoy);
    assert_non_null(lamp);
    /* bob's data came back, with the centre it took from the transform */
    assert_true(number_at(buoy, "bob", "amplitude", -1) == 0.5);
    assert_true(number_at(lamp, "bob", "frequency", -1) == 2.0);
    assert_true(number_at(lamp, "bob", "center", 1) == 2.0);
    assert_true(number_at(buoy, "bob", "center", 1) == 0.0);
    /* and its update moved the transforms: the lamp swings along x by 0.1 cos(4 pi t),
     * about 0.1 in the first 10 fast frames; the buoy by at most 0.5 along y */
    double x = number_at(lamp, "transform", "position", 0);
    if (!(x > 0.05 && x < 0.1001)) fail_msg("lamp x = %g, expected about 0.1", x);
    assert_true(number_at(lamp, "transform", "position", 1) == 2.0);
    assert_true(fabs(number_at(buoy, "transform", "position", 1)) <= 0.5);
    cJSON_Delete(scene);

    RUN(0, S->host, "--strict", "--frames", "1", "--scene", saved, dir); /* loads back */
    EXPECT_ERR("loaded 2 entities");
}

static void Sdk_template_reports_bad_scene_values_with_their_place(void **state)
{
    char dir[PATH_SIZE], bad[PATH_SIZE];
    path(dir, S->root, "/run/plugins");
    path(bad, S->root, "/run/bad.json");
    assert_int_equal(harness_write_file(bad,
                                        "{\"version\": 1, \"entities\": [\n"
                                        "  {\"id\": \"a\", \"bob\": {\"amplitude\": \"loud\"}}]}\n",
                                        0644),
                     0);
    RUN(1, S->host, "--frames", "0", "--scene", bad, dir);
    EXPECT_ERR("bad.json:2:");
    EXPECT_ERR("entities[0].bob.amplitude: expected a finite number");
}

/* Under the sanitizers the docs' commands build plain binaries of their own: nothing the
 * sanitizers could check, so the sanitizer build leaves them to the plain one. */
#ifndef UNDER_SANITIZERS
/* ---- README.md and docs/writing-a-plugin.md, every command as written ---- */

/* One line of a ```sh block into out: as it is, or, when its comment says it runs until
 * Ctrl-C, started in the background (its pid kept in $ecs_bg, stopped at the block's end). */
static void doc_command(const char *line, int len, FILE *out, bool *background)
{
    const char *hash = NULL;
    for (const char *p = line; p + 1 < line + len; p++)
        if (p[0] == ' ' && p[1] == '#') hash = p; /* the last " #": the comment */
    bool until = hash && memmem(hash, (size_t)(line + len - hash), "until Ctrl-C", 12);
    if (!until) {
        fprintf(out, "%.*s\n", len, line);
        return;
    }
    fprintf(out, "%.*s &\necs_bg=\"$ecs_bg $!\"\n", (int)(hash - line), line);
    *background = true;
}

/* After a block that started commands in the background: let them run three seconds more,
 * then SIGTERM, and each must exit 0 (set -e). */
static void doc_stop_background(FILE *out)
{
    fprintf(out, "sleep 3\nfor p in $ecs_bg; do kill -TERM \"$p\"; done\n"
                 "for p in $ecs_bg; do wait \"$p\"; done\necs_bg=\n");
}

/* Write the runnable blocks of the markdown md (named name in the markers) to out, as a
 * shell script: ```sh blocks as they are (but ```sh test=skip; a command whose comment says
 * "until Ctrl-C" in the background, doc_command), ```LANG file=NAME blocks as heredocs that
 * write NAME (append to it when an earlier block wrote it). Other blocks (```json without
 * file=, ```text, ```meson...) are shown, not run. Returns the number of blocks taken. */
static int doc_script(const char *md, const char *name, FILE *out)
{
    char written[64][128];
    int nwritten = 0, blocks = 0, line_no = 0;
    bool in_block = false, take = false, heredoc = false, background = false;
    for (const char *line = md; line && *line;) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        int indent = (int)strspn(line, " ");
        bool fence = len - indent >= 3 && strncmp(line + indent, "```", 3) == 0;
        line_no++;
        if (fence && !in_block) {
            char info[256];
            snprintf(info, sizeof info, "%.*s", len - indent - 3, line + indent + 3);
            const char *file = strstr(info, " file=");
            bool sh = strcmp(info, "sh") == 0;
            in_block = true;
            take = sh || file;
            blocks += take;
            if (sh) {
                fprintf(out, "echo '### %s:%d' >&2\n", name, line_no);
            } else if (file) {
                bool again = false;
                file += strlen(" file=");
                for (int i = 0; i < nwritten; i++) again |= strcmp(written[i], file) == 0;
                if (!again && nwritten < 64)
                    snprintf(written[nwritten++], sizeof written[0], "%s", file);
                fprintf(out, "cat %s '%s' <<'ECS_DOC_EOF'\n", again ? ">>" : ">", file);
                heredoc = true;
            }
        } else if (fence) {
            if (heredoc) fprintf(out, "ECS_DOC_EOF\n");
            if (background) doc_stop_background(out);
            in_block = heredoc = background = false;
        } else if (in_block && take && heredoc) {
            fprintf(out, "%.*s\n", len, line);
        } else if (in_block && take) {
            doc_command(line, len, out, &background);
        }
        line = end ? end + 1 : NULL;
    }
    return blocks;
}

/* The repository's files as git tracks them (their working-tree contents: what a commit
 * would hold), or, outside a git checkout (a release tarball), the source tree without
 * its build folders, into dir. */
static void copy_sources(const char *dir)
{
    char cmd[3 * PATH_SIZE];
    pathf(cmd, /* the checkout's top is the source root (not a tarball unpacked inside one) */
          "cd '%s' && if [ \"$(git rev-parse --show-toplevel 2>/dev/null)\" = \"$(pwd -P)\" ]; "
          "then git ls-files -z | tar --null -T - -cf - | tar -xf - -C '%s'; "
          "else tar --exclude='./build*' -cf - . | tar -xf - -C '%s'; fi",
          SOURCE_ROOT, dir, dir);
    RUN(0, "sh", "-c", cmd);
}

/* README.md, then docs/writing-a-plugin.md in an empty folder, as one shell script run with
 * a user's environment: HOME (a fresh one: the install's prefix is ~/.local), the PATH the
 * tests started with, EDITOR=touch, and ECS_NO_INSTALL=1 (the scripts never install
 * packages here: what they need is there when the suite runs). */
static void run_docs(const char *copy, const char *home, const char *tutorial)
{
    char script[PATH_SIZE], env_home[PATH_SIZE + 8], env_path[PATH_SIZE + 8];
    path(script, S->root, "/docs.sh");
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f, "set -eu\necs_bg=\ncd '%s'\n", copy);
    char *readme = harness_read_file(SOURCE_ROOT "/README.md", NULL);
    char *guide = harness_read_file(DOC_PATH, NULL);
    assert_non_null(readme);
    assert_non_null(guide);
    int blocks = doc_script(readme, "README.md", f);
    fprintf(f, "cd '%s'\n", tutorial);
    blocks += doc_script(guide, "writing-a-plugin.md", f);
    assert_int_equal(fclose(f), 0);
    free(readme);
    free(guide);
    assert_true(blocks >= 15);
    pathf(env_home, "HOME=%s", home);
    pathf(env_path, "PATH=%s", S->user_path);
    const char *const argv[] = {
        "env", "-i", env_home, env_path, "EDITOR=touch", "ECS_NO_INSTALL=1", "bash", script, NULL};
    int rc = run_argv(argv, DOCS_TIMEOUT);
    if (rc != 0 || S->run.exit_code != 0 || S->run.term_signal || S->run.timed_out) {
        print_error("the commands of the docs failed (the last '###' line names the block)\n");
        dump();
        fail();
    }
}

/* What README.md's commands must have done (S->run: their output). */
static void check_readme(const char *copy, const char *home)
{
    char p[PATH_SIZE];
    EXPECT_OUT("== ecs-host on "); /* scripts/demo.sh */
    path(p, home, "/.local/bin/ecs-host");
    EXPECT_FILE(p); /* Install, from source: a prefix of its own */
    path(p, home, "/.local/lib/ecs-host/plugins/transform.so");
    EXPECT_FILE(p);
    EXPECT_ERR("[info] inspect: open http://127.0.0.1:"); /* See the live world */
    EXPECT_ERR("[info] counter: saw 60 frames");          /* In short */
    pathf(p, "-I%s/.local/include/ecs-host", home);       /* the installed SDK */
    EXPECT_OUT(p);
    path(p, copy, "/counter.so");
    EXPECT_FILE(p);
    EXPECT_ERR("reload: transform 1.0.0 -> 1.0.0: same state layout"); /* Hot reload */
}

/* What docs/writing-a-plugin.md's commands must have done. */
static void check_tutorial(const char *tutorial)
{
    char p[PATH_SIZE];
    EXPECT_OUT("ecs-host ");       /* section 1 */
    EXPECT_ERR_ABSENT("warning:"); /* the doc's code compiles clean with -Wall -Wextra */
    EXPECT_ERR("[info] hello: updated 3 times");
    EXPECT_OUT("name: turn  version: 1.0.0");
    EXPECT_OUT("depends on: transform");
    EXPECT_OUT("transform.so\n  name: transform"); /* from the installed folder, as it says */
    EXPECT_ERR_ABSENT("skipped");
    EXPECT_ERR("loaded 3 entities from scene.json");
    EXPECT_ERR("saved 3 entities to saved.json");
    EXPECT_OUT("\"turn\":");
    EXPECT_ERR("bad.json:1:59: entities[0].turn.speed: expected a number (degrees)");
    EXPECT_OUT("ecs-host refused bad.json (exit status 1)");
    EXPECT_OUT("reload: turn 1.0.0 -> 1.0.1: same state layout, 2 components kept"); /* 7 */
    /* two `nm` runs, each listing the entry point alone */
    const char *first = strstr(S->run.out, " T ecs_plugin_entry\n");
    assert_non_null(first);
    assert_non_null(strstr(first + 1, " T ecs_plugin_entry\n"));

    path(p, tutorial, "/my-plugins/saved.json");
    cJSON *scene = read_json(p);
    const cJSON *wheel = scene_entity(scene, "wheel");
    assert_non_null(wheel);
    assert_true(number_at(wheel, "turn", "speed", -1) == 90.0);
    double angle = number_at(wheel, "turn", "angle", -1);
    if (!(angle > 0.0 && angle < 360.0)) fail_msg("wheel angle %g after one second", angle);
    assert_non_null(scene_entity(scene, "sign")); /* no turn, still saved */
    cJSON_Delete(scene);
    path(p, tutorial, "/my-plugins/reloaded.json"); /* saved after the hot reload */
    scene = read_json(p);
    wheel = scene_entity(scene, "wheel");
    assert_non_null(wheel);
    assert_true(number_at(wheel, "turn", "speed", -1) == 90.0);
    assert_non_null(scene_entity(scene, "valve"));
    cJSON_Delete(scene);
}

/* Every command of README.md and then of docs/writing-a-plugin.md, as written, from a
 * fresh copy of the repository's files with a fresh home (so a fresh ~/.local prefix):
 * the README's quick start builds build/, its install goes to ~/.local, the tutorial
 * builds its plugins against that install. The next slip in either fails here. */
static void Docs_readme_and_tutorial_run_as_written(void **state)
{
    NEED_PROGRAM("cc");
    NEED_PROGRAM("nm");
    NEED_PROGRAM("tar"); /* and git, when there is a checkout to ask (copy_sources) */
    char copy[PATH_SIZE], home[PATH_SIZE], tutorial[PATH_SIZE];
    path(copy, S->root, "/clone");
    path(home, S->root, "/home");
    path(tutorial, S->root, "/tutorial");
    assert_int_equal(mkdir(copy, 0700), 0);
    assert_int_equal(mkdir(home, 0700), 0);
    assert_int_equal(mkdir(tutorial, 0700), 0);
    copy_sources(copy); /* a package missing fails the quick start, saying which */
    run_docs(copy, home, tutorial);
    check_readme(copy, home);
    check_tutorial(tutorial);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Sdk_install_puts_host_headers_plugins_and_pc_file_in_place),
        cmocka_unit_test(Sdk_pkg_config_points_into_the_install_only),
        cmocka_unit_test(Sdk_install_puts_man_pages_completions_guides_and_template_in_place),
        cmocka_unit_test(Sdk_each_plugin_exports_exactly_one_symbol),
        cmocka_unit_test(Sdk_template_builds_with_cc_and_pkg_config),
        cmocka_unit_test(Sdk_template_builds_with_its_makefile),
        cmocka_unit_test(Sdk_template_builds_with_its_meson_build),
        cmocka_unit_test(Sdk_installed_host_runs_the_template_with_its_scene),
        cmocka_unit_test(Sdk_template_reports_bad_scene_values_with_their_place),
#ifndef UNDER_SANITIZERS /* the docs build plain binaries of their own (above) */
        cmocka_unit_test(Docs_readme_and_tutorial_run_as_written),
#endif
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
