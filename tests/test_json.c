/* SPDX-License-Identifier: MIT */
/* test_json.c: cmocka tests of JSON file reading (host/scene/json.c): missing file, directory,
 * empty and blank files, syntax errors at file:line:col, trailing text, valid files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

/* ---- Fixture: a private temporary folder ------------------------------------------ */

typedef struct fixture {
    char dir[64];
    char path[PATH_MAX]; /* the file of the current test */
    char err[512];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/ecs-test-json-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d = opendir(f->dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(f->path, sizeof f->path, "%s/%s", f->dir, e->d_name);
        unlink(f->path);
    }
    if (d) closedir(d);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Write text (len bytes) as dir/name; returns its path. */
static const char *write_file(fixture *f, const char *name, const char *text, size_t len)
{
    snprintf(f->path, sizeof f->path, "%s/%s", f->dir, name);
    FILE *fp = fopen(f->path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(text, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    return f->path;
}

static const char *write_text(fixture *f, const char *name, const char *text)
{
    return write_file(f, name, text, strlen(text));
}

/* Read path expecting failure; the message must contain every string of want. */
static void expect_error(fixture *f, const char *path, const char *want1, const char *want2)
{
    memset(f->err, 0, sizeof f->err);
    cJSON *root = host_json_read_file(path, f->err, sizeof f->err);
    if (root) {
        cJSON_Delete(root);
        fail_msg("%s was accepted", path);
    }
    if (!strstr(f->err, want1) || (want2 && !strstr(f->err, want2)))
        fail_msg("message '%s' lacks '%s'%s%s", f->err, want1, want2 ? " or " : "",
                 want2 ? want2 : "");
}

/* The "path:line:col:" prefix of a syntax error at line, col. */
static const char *at(const fixture *f, int line, int col)
{
    static char buf[PATH_MAX + 32];
    snprintf(buf, sizeof buf, "%s:%d:%d: ", f->path, line, col);
    return buf;
}

/* ---- Failures --------------------------------------------------------------------- */

static void Json_missing_file_message_names_path(void **state)
{
    fixture *f = *state;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/no-such-file.json", f->dir);
    expect_error(f, path, path, "No such file");
}

static void Json_directory_is_refused_with_path(void **state)
{
    fixture *f = *state;
    expect_error(f, f->dir, f->dir, "directory");
}

static void Json_empty_file_is_refused(void **state)
{
    fixture *f = *state;
    const char *path = write_text(f, "empty.json", "");
    expect_error(f, path, path, "empty");
}

static void Json_whitespace_only_file_is_refused_as_empty(void **state)
{
    fixture *f = *state;
    const char *path = write_text(f, "blank.json", "  \n\t\r\n   \n");
    expect_error(f, path, path, "empty");
}

static void Json_syntax_error_reports_exact_line_and_column(void **state)
{
    fixture *f = *state;
    /* line 3, column 8 is the ']' where a value should be */
    write_text(f, "bad.json", "{\n  \"a\": 1,\n  \"b\": ]\n}\n");
    expect_error(f, f->path, at(f, 3, 8), "expected a JSON value, found ']'");
    assert_true(strncmp(f->err, f->path, strlen(f->path)) == 0); /* starts with the file */
}

static void Json_syntax_error_missing_comma_points_at_next_member(void **state)
{
    fixture *f = *state;
    write_text(f, "comma.json", "{\n\t\"k\": [1,\n\t\t2 3]}");
    /* the '3' (a tab is one column) */
    expect_error(f, f->path, at(f, 3, 5), "expected ',' or ']' after an array element, found '3'");
}

static void Json_syntax_error_on_later_line_after_long_lines(void **state)
{
    fixture *f = *state;
    char text[4096] = "[\n";
    for (int i = 0; i < 40; i++) strcat(text, "  \"a long enough string\",\n");
    strcat(text, "  @\n]\n"); /* line 42, column 3 */
    write_text(f, "long.json", text);
    expect_error(f, f->path, at(f, 42, 3), "expected a JSON value, found '@'");
}

static void Json_truncated_file_is_a_syntax_error(void **state)
{
    fixture *f = *state;
    write_text(f, "cut.json", "{\n  \"a\": [1, 2");
    expect_error(f, f->path, at(f, 2, 13), "unexpected end of the file"); /* after the '2' */
    assert_true(strncmp(f->err, f->path, strlen(f->path)) == 0);
}

static void Json_syntax_error_message_is_one_line(void **state)
{
    fixture *f = *state;
    /* The message goes to the log as one line ("[error] manifest: <message>"): the text
     * quoted after "found" must not carry the file's newlines into it. */
    write_text(f, "nl.json", "{\n  \"b\": ]\n}\n");
    expect_error(f, f->path, at(f, 2, 8), "expected a JSON value, found ']'");
    if (strchr(f->err, '\n') || strchr(f->err, '\r')) {
        char shown[sizeof f->err * 2], *o = shown; /* the message with "\n" made visible */
        for (const char *c = f->err; *c; c++) {
            if (*c == '\n' || *c == '\r')
                *o++ = '\\', *o++ = *c == '\n' ? 'n' : 'r';
            else
                *o++ = *c;
        }
        *o = '\0';
        fail_msg("message spans several lines: '%s'", shown);
    }
}

static void Json_trailing_text_after_value_is_refused_with_position(void **state)
{
    fixture *f = *state;
    write_text(f, "trail.json", "{\"a\": 1}\n\n   x\n");
    expect_error(f, f->path, at(f, 3, 4), "unexpected text");
    write_text(f, "trail.json", "[1] [2]");
    expect_error(f, f->path, at(f, 1, 5), "unexpected text");
}

static void Json_message_truncated_to_buffer_size(void **state)
{
    fixture *f = *state;
    write_text(f, "small.json", "");
    char err[12];
    memset(err, 'X', sizeof err);
    assert_null(host_json_read_file(f->path, err, sizeof err));
    assert_int_equal(err[sizeof err - 1], '\0'); /* truncated, terminated, no overflow */
    assert_int_equal(strlen(err), sizeof err - 1);
    assert_true(strncmp(err, f->path, sizeof err - 1) == 0);
}

/* ---- Success ---------------------------------------------------------------------- */

static void Json_valid_file_parses(void **state)
{
    fixture *f = *state;
    write_text(f, "ok.json", "\n  {\"name\": \"x\", \"list\": [1, 2, 3], \"on\": true}  \n\n");
    f->err[0] = '\0';
    cJSON *root = host_json_read_file(f->path, f->err, sizeof f->err);
    assert_non_null(root);
    assert_string_equal(f->err, ""); /* no message on success */
    assert_true(cJSON_IsObject(root));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(root, "name")->valuestring, "x");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "list");
    assert_int_equal(cJSON_GetArraySize(list), 3);
    assert_int_equal(cJSON_GetArrayItem(list, 2)->valueint, 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "on")));
    cJSON_Delete(root);
}

static void Json_valid_scalar_and_large_file_parse(void **state)
{
    fixture *f = *state;
    write_text(f, "num.json", "42");
    cJSON *root = host_json_read_file(f->path, f->err, sizeof f->err);
    assert_non_null(root);
    assert_true(cJSON_IsNumber(root) && root->valueint == 42);
    cJSON_Delete(root);

    enum { N = 20000 }; /* about 200 KB: more than one read buffer */
    size_t cap = (size_t)N * 12 + 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    text[len++] = '[';
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s%d", i ? ",\n" : "", i);
    text[len++] = ']';
    write_file(f, "big.json", text, len);
    free(text);
    root = host_json_read_file(f->path, f->err, sizeof f->err);
    assert_non_null(root);
    assert_int_equal(cJSON_GetArraySize(root), N);
    assert_int_equal(cJSON_GetArrayItem(root, N - 1)->valueint, N - 1);
    cJSON_Delete(root);
}

/* A file over 4 MiB (read by two threads, each half with pread) reads byte for byte, its
 * length exact, odd or even, the halves' seam in the middle of a token. */
static void Json_large_file_reads_whole_in_two_halves(void **state)
{
    fixture *f = *state;
    for (size_t extra = 0; extra < 2; extra++) {
        size_t len = ((size_t)5 << 20) + 12345 + extra;
        char *text = malloc(len);
        assert_non_null(text);
        for (size_t i = 0; i < len; i++) text[i] = (char)('a' + (i * 7 + i / 4093) % 26);
        write_file(f, "huge.txt", text, len);
        size_t got = 0;
        char *read = host_json_read_text(f->path, &got, f->err, sizeof f->err);
        assert_non_null(read);
        assert_int_equal(got, len);
        assert_int_equal(read[len], '\0');
        assert_memory_equal(read, text, len);
        free(read);
        free(text);
    }
}

/* ---- Positions and type names ----------------------------------------------------- */

static void Json_position_counts_lines_and_columns_from_1(void **state)
{
    (void)state;
    const char text[128] = "ab\ncd\n\n\tx";
    int line = 0, col = 0;
    host_jparse_position(text, text, &line, &col);
    assert_int_equal(line, 1);
    assert_int_equal(col, 1);
    host_jparse_position(text, text + 1, &line, &col); /* 'b' */
    assert_int_equal(line, 1);
    assert_int_equal(col, 2);
    host_jparse_position(text, text + 2, &line, &col); /* the first '\n' itself */
    assert_int_equal(line, 1);
    assert_int_equal(col, 3);
    host_jparse_position(text, text + 4, &line, &col); /* 'd' */
    assert_int_equal(line, 2);
    assert_int_equal(col, 2);
    host_jparse_position(text, text + 6, &line, &col); /* the empty line 3 */
    assert_int_equal(line, 3);
    assert_int_equal(col, 1);
    host_jparse_position(text, text + 8, &line, &col); /* 'x' after a tab */
    assert_int_equal(line, 4);
    assert_int_equal(col, 2);
    host_jparse_position(text, text + 9, &line, &col); /* the end */
    assert_int_equal(line, 4);
    assert_int_equal(col, 3);
    host_jparse_position(text, text + 100, &line, &col); /* beyond: stops at the NUL */
    assert_int_equal(line, 4);
    assert_int_equal(col, 3);
}

static void Json_type_names_for_every_type(void **state)
{
    (void)state;
    cJSON *root = cJSON_Parse("{\"o\":{},\"a\":[],\"s\":\"\",\"n\":1,\"t\":true,\"f\":false,"
                              "\"z\":null}");
    assert_non_null(root);
    static const struct {
        const char *key, *name;
    } want[] = {{"o", "an object"}, {"a", "an array"},  {"s", "a string"}, {"n", "a number"},
                {"t", "a boolean"}, {"f", "a boolean"}, {"z", "null"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_string_equal(
            host_json_type_name(cJSON_GetObjectItemCaseSensitive(root, want[i].key)), want[i].name);
    assert_string_equal(host_json_type_name(NULL), "nothing");
    cJSON_Delete(root);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(Json_missing_file_message_names_path),
        TEST(Json_directory_is_refused_with_path),
        TEST(Json_empty_file_is_refused),
        TEST(Json_whitespace_only_file_is_refused_as_empty),
        TEST(Json_syntax_error_reports_exact_line_and_column),
        TEST(Json_syntax_error_missing_comma_points_at_next_member),
        TEST(Json_syntax_error_on_later_line_after_long_lines),
        TEST(Json_truncated_file_is_a_syntax_error),
        TEST(Json_syntax_error_message_is_one_line),
        TEST(Json_trailing_text_after_value_is_refused_with_position),
        TEST(Json_message_truncated_to_buffer_size),
        TEST(Json_valid_file_parses),
        TEST(Json_valid_scalar_and_large_file_parse),
        TEST(Json_large_file_reads_whole_in_two_halves),
        TEST(Json_position_counts_lines_and_columns_from_1),
        TEST(Json_type_names_for_every_type),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
