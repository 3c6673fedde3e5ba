/* SPDX-License-Identifier: MIT */
/* test_log.c: the host's log lines (host/log.c): escaping of what plugins and files say,
 * the four verbosity levels, --log-time, colour only where it belongs; in-process for the
 * formatting and against the real ecs-host binary for the options (on the demo's plugins:
 * transform, debug_name, mesh, spin). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"

#if !defined(ECS_HOST_PATH) || !defined(PLUGIN_DIR)
#error "ECS_HOST_PATH and PLUGIN_DIR must be defined"
#endif

/* ---- in-process: formatting ---- */

static void Log_escape_keeps_text_and_utf8_and_escapes_the_rest(void **state)
{
    (void)state;
    char out[64];
    static const struct {
        const char *in, *want;
    } c[] = {
        {"plain text", "plain text"},
        {"two\nlines", "two\\nlines"},
        {"tab\there", "tab\\there"},
        {"\x1b[31mred", "\\x1B[31mred"},
        {"caf\xC3\xA9 \xE2\x82\xAC", "caf\xC3\xA9 \xE2\x82\xAC"}, /* valid UTF-8 stays */
        {"bad \xFF byte", "bad \\xFF byte"},
        {"overlong \xC0\xAF", "overlong \\xC0\\xAF"},
        {"C1 \xC2\x85 next line", "C1 \\xC2\\x85 next line"},
        {"del \x7F", "del \\x7F"},
        {"cut \xE2\x82", "cut \\xE2\\x82"}, /* a sequence cut short */
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        host_log_escape(out, sizeof out, c[k].in);
        if (strcmp(out, c[k].want) != 0) fail_msg("case %zu: '%s', want '%s'", k, out, c[k].want);
    }
    assert_int_equal(host_log_escape(out, 5, "ab\ncd"), 4); /* "ab\\n" fits, "c" would not */
    assert_string_equal(out, "ab\\n");
    assert_int_equal(host_log_escape(out, 4, "\x01"), 0); /* "\x01" is 4 bytes: not cut */
    assert_string_equal(out, "");
}

/* What one call logs into a file, as text (malloc'd). */
static char *logged(bool time, int colour, ecs_log_level level, const char *who, const char *msg)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    host_log_configure(f, time, colour);
    host_log(level, who, "%s", msg);
    long n = ftell(f);
    char *text = calloc((size_t)n + 1, 1);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    host_log_configure(NULL, false, 0);
    return text;
}

static void Log_a_line_is_one_line_whatever_the_message_holds(void **state)
{
    (void)state;
    host_log_set_verbosity(0);
    char *t = logged(false, 0, ECS_LOG_ERROR, "plug\nin", "id 'x\n[error] forged: line'");
    assert_string_equal(t, "[error] plug\\nin: id 'x\\n[error] forged: line'\n");
    free(t);
}

static void Log_time_prefix_and_colour_on_request(void **state)
{
    (void)state;
    host_log_set_verbosity(0);
    char *t = logged(true, 0, ECS_LOG_WARN, "w", "m");
    double ms = -1;
    char rest[64];
    assert_int_equal(sscanf(t, "%lf %63[^\n]", &ms, rest), 2);
    assert_true(ms >= 0 && ms < 60000);
    assert_string_equal(rest, "[warn] w: m");
    free(t);
    t = logged(false, 1, ECS_LOG_ERROR, "w", "m");
    assert_string_equal(t, "\033[1;31m[error]\033[0m w: m\n");
    free(t);
    t = logged(false, -1, ECS_LOG_ERROR, "w", "m"); /* auto: a file is not a terminal */
    assert_string_equal(t, "[error] w: m\n");
    free(t);
}

static void Log_four_levels_from_quiet_to_debug(void **state)
{
    (void)state;
    static const int shown[4][5] = {
        /* -q */ {1, 0, 0, 0, 0},
        /* default */ {1, 1, 1, 0, 0},
        /* -v */ {1, 1, 1, 1, 0},
        /* -vv */ {1, 1, 1, 1, 1},
    };
    for (int v = -1; v <= 2; v++) {
        FILE *f = tmpfile();
        host_log_configure(f, false, 0);
        host_log_set_verbosity(v);
        host_error("t", "error");
        host_warn("t", "warn");
        host_info("t", "info");
        host_detail("t", "detail");
        host_debug("t", "debug");
        char text[512] = "";
        rewind(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
        static const char *const names[] = {"[error]", "[warn]", "[info]", "[detail]", "[debug]"};
        for (int k = 0; k < 5; k++)
            if ((strstr(text, names[k]) != NULL) != shown[v + 1][k])
                fail_msg("verbosity %d: %s %s: %s", v, names[k],
                         shown[v + 1][k] ? "missing" : "shown", text);
    }
    host_log_configure(NULL, false, 0);
    host_log_set_verbosity(0);
}

/* ---- the binary ---- */

static void run(harness_output *r, const char *const *extra, size_t n)
{
    const char *argv[16] = {ECS_HOST_PATH, "--frames", "1"};
    size_t k = 3;
    for (size_t i = 0; i < n; i++) argv[k++] = extra[i];
    argv[k++] = PLUGIN_DIR;
    argv[k] = NULL;
    assert_int_equal(harness_run(r, 60, argv), 0);
    if (r->exit_code != 0) fail_msg("exit %d: %s", r->exit_code, r->err);
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++) n++;
    return n;
}

static void Host_v_and_vv_each_show_more_and_q_shows_no_info(void **state)
{
    (void)state;
    harness_output q, d, v, vv;
    run(&q, (const char *[]){"-q"}, 1);
    run(&d, NULL, 0);
    run(&v, (const char *[]){"-v"}, 1);
    run(&vv, (const char *[]){"-vv"}, 1);
    assert_int_equal(count(q.err, "[info]"), 0);
    assert_true(count(d.err, "[info]") > 0);
    assert_int_equal(count(d.err, "[detail]"), 0);
    assert_true(count(v.err, "[detail]") > 0); /* what -v adds */
    assert_int_equal(count(v.err, "[debug]"), 0);
    if (!strstr(vv.err, "[debug] spin: a new state (layout")) /* what -vv adds: plugins' debug */
        fail_msg("-vv: %s", vv.err);
    assert_true(strlen(q.err) < strlen(d.err) && strlen(d.err) < strlen(v.err) &&
                strlen(v.err) < strlen(vv.err));
    harness_output_free(&q);
    harness_output_free(&d);
    harness_output_free(&v);
    harness_output_free(&vv);
}

static void Host_log_time_prefixes_every_line(void **state)
{
    (void)state;
    harness_output r;
    run(&r, (const char *[]){"--log-time"}, 1);
    int lines = 0;
    for (char *line = strtok(r.err, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        double ms;
        char level[16];
        if (sscanf(line, "%lf [%15[a-z]]", &ms, level) != 2) fail_msg("line '%s'", line);
    }
    assert_true(lines > 0);
    harness_output_free(&r);
}

/* A scene id holding a newline and an escape sequence stays inside its one log line. */
static void Host_scene_strings_cannot_forge_a_log_line(void **state)
{
    (void)state;
    char *dir = harness_make_tmpdir("ecs-test-log");
    char *scene = harness_join(dir, "forge.json");
    assert_int_equal(harness_write_file(scene,
                                        "{\"version\": 1, \"entities\": [{\"id\": \"a\", "
                                        "\"transform\": {\"parent\": \"x\\n[error] forged "
                                        "\\u001b[2J\"}}]}",
                                        0600),
                     0);
    const char *argv[] = {ECS_HOST_PATH, "--frames", "0", "--scene", scene, PLUGIN_DIR, NULL};
    harness_output r;
    assert_int_equal(harness_run(&r, 60, argv), 0);
    assert_int_equal(r.exit_code, 1);
    if (!strstr(r.err, "x\\n[error] forged \\x1B[2J") || strstr(r.err, "\n[error] forged") ||
        strchr(r.err, '\033'))
        fail_msg("stderr: %s", r.err);
    harness_output_free(&r);
    harness_remove_tree(dir);
    free(scene);
    free(dir);
}

/* Run ecs-host on a pseudo-terminal (its stderr a terminal) with NO_COLOR as given (NULL:
 * unset) and extra options; what it printed. */
static char *on_terminal(const char *no_color, const char *option)
{
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) {
        if (no_color)
            setenv("NO_COLOR", no_color, 1);
        else
            unsetenv("NO_COLOR");
        execl(ECS_HOST_PATH, ECS_HOST_PATH, "--frames", "1", option ? option : "-v", PLUGIN_DIR,
              (char *)NULL);
        _exit(127);
    }
    char *text = calloc(1, 65536);
    size_t n = 0;
    ssize_t got;
    while (n < 65535 && (got = read(master, text + n, 65535 - n)) > 0) n += (size_t)got;
    close(master);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return text;
}

static void Host_colours_levels_on_a_terminal_only_without_NO_COLOR(void **state)
{
    (void)state;
    char *t = on_terminal(NULL, NULL);
    if (!strstr(t, "\033[32m[info]\033[0m")) fail_msg("no colour on a terminal: %s", t);
    free(t);
    t = on_terminal("1", NULL);
    assert_null(strstr(t, "\033["));
    free(t);
    t = on_terminal("1", "--color=always"); /* an explicit option overrides NO_COLOR */
    assert_non_null(strstr(t, "\033[32m[info]"));
    free(t);
    t = on_terminal(NULL, "--color=never");
    assert_null(strstr(t, "\033["));
    free(t);
    harness_output r; /* a pipe is not a terminal */
    run(&r, NULL, 0);
    assert_null(strstr(r.err, "\033["));
    harness_output_free(&r);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Log_escape_keeps_text_and_utf8_and_escapes_the_rest),
        cmocka_unit_test(Log_a_line_is_one_line_whatever_the_message_holds),
        cmocka_unit_test(Log_time_prefix_and_colour_on_request),
        cmocka_unit_test(Log_four_levels_from_quiet_to_debug),
        cmocka_unit_test(Host_v_and_vv_each_show_more_and_q_shows_no_info),
        cmocka_unit_test(Host_log_time_prefixes_every_line),
        cmocka_unit_test(Host_scene_strings_cannot_forge_a_log_line),
        cmocka_unit_test(Host_colours_levels_on_a_terminal_only_without_NO_COLOR),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
