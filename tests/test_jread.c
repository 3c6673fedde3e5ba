/* SPDX-License-Identifier: MIT */
/* test_jread.c: cmocka tests of the pull reader (host/scene/jparse.c, ecs_json_reader of
 * sdk/ecs_plugin.h): documents read whole value by value, array_f32's counts and ranges,
 * the first error kept and every later call refused, values passed over by key(), more()
 * and skip(), syntax errors with the offset of the offending byte in STRICT mode, what
 * TRUSTED mode does not check, reading from an offset, entity references, where error()
 * points, misuse refused, deep nesting, and a reader reused after a failure. Offsets are
 * found in the text (strstr) wherever a few bytes name the place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ahead.h"
#include "jdump.h"
#include "jparse.h"
#include "jplain.h"

/* ---- Helpers ----------------------------------------------------------------------- */

/* Each test gets a fresh reader in *state. */
static int reader_new(void **state)
{
    host_jreader *r = host_jr_new();
    if (!r) return -1;
    *state = r;
    return 0;
}

static int reader_free(void **state)
{
    host_jr_free(*state);
    return 0;
}

/* The reader r started on the NUL-terminated text from offset at. */
static ecs_json_reader *start(host_jreader *r, const char *text, size_t at, host_jr_mode mode)
{
    host_jr_start(r, text, strlen(text), at, mode);
    return host_jr_api(r);
}

/* Where needle first stands in text (a byte offset); the test fails when it does not. */
static size_t offset_of(const char *text, const char *needle)
{
    const char *s = strstr(text, needle);
    if (!s) fail_msg("'%s' not found in '%s'", needle, text);
    return (size_t)(s - text);
}

/* The reader failed on text at byte `at` with a message containing `part`, and syntax is
 * its syntax error (HOST_JPARSE_OK for an error about a value). */
static void expect_error(const host_jreader *r, const char *text, size_t at,
                         host_jparse_status syntax, const char *part)
{
    size_t got_at = 0;
    host_jparse_status got_syntax = HOST_JPARSE_OK;
    const char *message = NULL;
    if (!host_jr_error(r, &got_at, &got_syntax, &message))
        fail_msg("'%s': no error, expected '%s' at byte %zu", text, part, at);
    if (got_at != at || got_syntax != syntax || !strstr(message, part))
        fail_msg("'%s':\n got  '%s' (syntax %d) at byte %zu\n want '%s' (syntax %d) at byte %zu",
                 text, message, (int)got_syntax, got_at, part, (int)syntax, at);
}

/* The reader has not failed (else its error is the test's message). */
static void expect_ok(const host_jreader *r, const char *text)
{
    size_t at;
    const char *message;
    if (host_jr_error(r, &at, NULL, &message))
        fail_msg("'%s': failed at byte %zu: %s", text, at, message);
}

/* The value the reader stands before read whole with the calls a manager makes (null is
 * passed over: the reader has no call for it). False when the reader failed. */
static bool read_any(ecs_json_reader *api)
{
    const char *s;
    double x;
    bool b;
    switch (api->peek(api)) {
    case ECS_JSON_OBJECT:
        if (!api->begin_object(api)) return false;
        while (api->key(api, &s))
            if (!read_any(api)) return false;
        return !api->failed(api);
    case ECS_JSON_ARRAY:
        if (!api->begin_array(api)) return false;
        while (api->more(api))
            if (!read_any(api)) return false;
        return !api->failed(api);
    case ECS_JSON_STRING:
        return api->string(api, &s, NULL);
    case ECS_JSON_NUMBER:
        return api->number(api, &x);
    case ECS_JSON_TRUE:
    case ECS_JSON_FALSE:
        return api->boolean(api, &b);
    case ECS_JSON_NULL:
        return (api->skip)(api); /* cmocka has a skip() macro */
    default:
        return false;
    }
}

/* The next key is want. */
static void expect_key(ecs_json_reader *api, const char *want)
{
    const char *k = NULL;
    assert_true(api->key(api, &k));
    assert_non_null(k);
    assert_string_equal(k, want);
}

/* ---- Reading ----------------------------------------------------------------------- */

/* A nested document read value by value: keys in order, numbers exact, the string's
 * escapes decoded to UTF-8, each peek naming what comes, complete only at the end. */
static void Jread_a_nested_document_is_read_whole_in_order(void **state)
{
    host_jreader *r = *state;
    const char *doc = "{\"a\": [1, 2.5, -3e2], \"b\": {\"c\": \"x\\u00e9\\n\", \"d\": true, "
                      "\"e\": false}, \"f\": null}";
    ecs_json_reader *api = start(r, doc, 0, HOST_JR_STRICT);
    double x = -1;
    const char *s = NULL;
    size_t len = 0;
    bool b = false;
    assert_int_equal(api->struct_size, sizeof(ecs_json_reader));
    assert_int_equal(api->peek(api), ECS_JSON_OBJECT);
    assert_true(api->begin_object(api));
    expect_key(api, "a");
    assert_int_equal(api->peek(api), ECS_JSON_ARRAY);
    assert_true(api->begin_array(api));
    assert_true(api->more(api));
    assert_int_equal(api->peek(api), ECS_JSON_NUMBER);
    assert_true(api->number(api, &x));
    assert_true(x == 1.0);
    assert_true(api->more(api));
    assert_true(api->number(api, &x));
    assert_true(x == 2.5);
    assert_true(api->more(api));
    assert_true(api->number(api, &x));
    assert_true(x == -300.0);
    assert_false(api->more(api)); /* the ']' closes the array */
    assert_false(host_jr_complete(r));
    expect_key(api, "b");
    assert_int_equal(api->peek(api), ECS_JSON_OBJECT);
    assert_true(api->begin_object(api));
    expect_key(api, "c");
    assert_int_equal(api->peek(api), ECS_JSON_STRING);
    assert_true(api->string(api, &s, &len));
    assert_int_equal(len, 4);
    assert_memory_equal(s, "x\xC3\xA9\n", 5); /* U+00E9 as UTF-8, and the NUL */
    expect_key(api, "d");
    assert_int_equal(api->peek(api), ECS_JSON_TRUE);
    assert_true(api->boolean(api, &b));
    assert_true(b);
    expect_key(api, "e");
    assert_int_equal(api->peek(api), ECS_JSON_FALSE);
    assert_true(api->boolean(api, &b));
    assert_false(b);
    assert_false(api->key(api, &s)); /* closes "b" */
    expect_key(api, "f");
    assert_int_equal(api->peek(api), ECS_JSON_NULL);
    assert_true((api->skip)(api));
    assert_false(host_jr_complete(r));
    assert_false(api->key(api, &s)); /* closes the document's object */
    assert_false(api->failed(api));
    assert_true(host_jr_complete(r));
    assert_int_equal(api->peek(api), ECS_JSON_END);
    assert_true(host_jr_finish_document(r));
    assert_false(host_jr_error(r, NULL, NULL, NULL));
    assert_int_equal(host_jr_offset(r), strlen(doc));
}

/* array_f32 fills exactly n floats; a count, an element or a value of the wrong kind fails
 * at the array's '[' (a count) or at the element (its kind, its range). */
static void Jread_array_f32_wants_exactly_n_finite_numbers(void **state)
{
    host_jreader *r = *state;
    float v[3] = {0};
    const char *k;
    const char *ok = "{\"v\": [1, -2.5, 3e1]}";
    ecs_json_reader *api = start(r, ok, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    assert_true(api->key(api, &k));
    assert_true(api->array_f32(api, v, 3));
    assert_true(v[0] == 1.0f && v[1] == -2.5f && v[2] == 30.0f);
    assert_false(api->key(api, &k));
    assert_true(host_jr_complete(r));

    static const struct {
        const char *text, *at, *message; /* at: what the error points at */
    } cases[] = {
        {"{\"v\": [1, 2]}", "[", "expected an array of 3 finite numbers, found 2 elements"},
        {"{\"v\": [1, 2, 3, 4]}", "[", "expected an array of 3 finite numbers, found 4 elements"},
        {"{\"v\": [1, 2, 3, [4, 5], {\"a\": 1}]}", "[",
         "expected an array of 3 finite numbers, found 5 elements"},
        {"{\"v\": []}", "[", "expected an array of 3 finite numbers, found 0 elements"},
        {"{\"v\": [1, \"two\", 3]}", "\"two\"", "expected a finite number, found a string"},
        {"{\"v\": [1, null, 3]}", "null", "expected a finite number, found null"},
        {"{\"v\": [1, 1e39, 3]}", "1e39", "(float range)"},
        {"{\"v\": [1, 2, -1e39]}", "-1e39", "(float range)"},
        {"{\"v\": \"abc\"}", "\"abc\"", "expected an array of 3 finite numbers, found a string"},
        {"{\"v\": {\"x\": 1}}", "{\"x\"", "expected an array of 3 finite numbers, found an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *t = cases[i].text;
        api = start(r, t, 0, HOST_JR_STRICT);
        assert_true(api->begin_object(api));
        assert_true(api->key(api, &k));
        if (api->array_f32(api, v, 3)) fail_msg("'%s': array_f32 passed", t);
        assert_true(api->failed(api));
        expect_error(r, t, offset_of(t, cases[i].at), HOST_JPARSE_OK, cases[i].message);
    }

    /* number_f32 alone: the nearest float; out of a float's range fails at the number */
    const char *big = "[0.1, 3.5e38]";
    float f = 0;
    api = start(r, big, 0, HOST_JR_STRICT);
    assert_true(api->begin_array(api));
    assert_true(api->more(api));
    assert_true(api->number_f32(api, &f));
    assert_true(f == 0.1f);
    assert_true(api->more(api));
    assert_false(api->number_f32(api, &f));
    expect_error(r, big, offset_of(big, "3.5e38"), HOST_JPARSE_OK,
                 "expected a finite number (float range), found 3.5e38");
}

/* A value of the wrong kind fails the reader for good: every later call returns false,
 * peek ECS_JSON_END, and the first error stays the one reported. */
static void Jread_a_type_mismatch_fails_the_reader_and_keeps_the_first_error(void **state)
{
    host_jreader *r = *state;
    const char *t = "{\"a\": \"abc\", \"b\": [1, 2], \"c\": {\"d\": 1}}";
    ecs_json_reader *api = start(r, t, 0, HOST_JR_STRICT);
    double x = 5;
    assert_true(api->begin_object(api));
    expect_key(api, "a");
    assert_false(api->number(api, &x));
    assert_true(x == 0);
    assert_true(api->failed(api));
    expect_error(r, t, offset_of(t, "\"abc\""), HOST_JPARSE_OK,
                 "expected a number, found a string");

    const char *s = "x", *k = "x";
    size_t len = 9;
    float f[2] = {1, 1};
    bool b = true;
    ecs_entity e = ecs_entity_make(1, 1);
    assert_int_equal(api->peek(api), ECS_JSON_END);
    assert_false(api->string(api, &s, &len));
    assert_null(s);
    assert_int_equal(len, 0);
    assert_false(api->key(api, &k));
    assert_null(k);
    assert_false(api->begin_object(api));
    assert_false(api->begin_array(api));
    assert_false(api->more(api));
    assert_false(api->number(api, &x));
    assert_false(api->number_f32(api, f));
    assert_false(api->array_f32(api, f, 2));
    assert_false(api->boolean(api, &b));
    assert_false(b);
    assert_false((api->skip)(api));
    assert_false(api->entity(api, &e));
    assert_true(ecs_entity_is_null(e));
    api->error(api, "a later error %d", 2); /* does not replace the first */
    assert_true(api->failed(api));
    assert_int_equal(api->peek(api), ECS_JSON_END);
    assert_false(host_jr_complete(r));
    assert_false(host_jr_skip_rest(r));
    assert_false(host_jr_finish_document(r));
    expect_error(r, t, offset_of(t, "\"abc\""), HOST_JPARSE_OK,
                 "expected a number, found a string");
}

/* What the caller does not read is passed over: a member's value by the next key(), an
 * element by the next more(), any value by skip(); in an array, a read without more() takes
 * the next element, and one past the last fails. In every mode. */
static void Jread_values_left_unread_are_passed_over(void **state)
{
    host_jreader *r = *state;
    static const host_jr_mode modes[] = {HOST_JR_STRICT, HOST_JR_SKIM, HOST_JR_TRUSTED};
    for (size_t m = 0; m < 3; m++) {
        host_jr_mode mode = modes[m];
        double x = 0;
        bool b = false;
        const char *k;

        /* key() passes over the member's value: nested arrays, objects, brackets in strings */
        const char *members = "{\"a\": [1, {\"x\": [2, 3]}, \"]\"], \"b\": {\"c\": {\"d\": []}, "
                              "\"e\": \"}\"}, \"f\": 5}";
        ecs_json_reader *api = start(r, members, 0, mode);
        assert_true(api->begin_object(api));
        expect_key(api, "a");
        expect_key(api, "b");
        expect_key(api, "f");
        assert_true(api->number(api, &x));
        assert_true(x == 5);
        assert_false(api->key(api, &k));
        assert_true(host_jr_complete(r));
        assert_true(host_jr_finish_document(r));

        /* more() passes over the element */
        const char *elements = "[[1, [2]], {\"x\": 3, \"y\": [\"[\"]}, \"s\", null, 4]";
        api = start(r, elements, 0, mode);
        assert_true(api->begin_array(api));
        for (int i = 0; i < 5; i++) assert_true(api->more(api));
        assert_true(api->number(api, &x));
        assert_true(x == 4);
        assert_false(api->more(api));
        assert_true(host_jr_complete(r));

        /* skip() passes over one whole value and stops right after it */
        const char *nested = "{\"a\": {\"b\": [1, {\"c\": null}], \"d\": \"}\"}, \"z\": true}";
        api = start(r, nested, 0, mode);
        assert_true(api->begin_object(api));
        expect_key(api, "a");
        assert_true((api->skip)(api));
        assert_int_equal(host_jr_offset(r), offset_of(nested, ", \"z\""));
        expect_key(api, "z");
        assert_true(api->boolean(api, &b));
        assert_true(b);
        assert_false(api->key(api, &k));
        assert_true(host_jr_complete(r));

        /* skip() of the document's value */
        api = start(r, nested, 0, mode);
        assert_true((api->skip)(api));
        assert_true(host_jr_complete(r));
        assert_true(host_jr_finish_document(r));

        /* host_jr_skip_rest: what is left of every open level */
        api = start(r, nested, 0, mode);
        assert_true(api->begin_object(api));
        expect_key(api, "a");
        assert_true(api->begin_object(api));
        expect_key(api, "b");
        assert_true(api->begin_array(api));
        assert_true(api->number(api, &x)); /* without more(): the first element */
        assert_true(host_jr_skip_rest(r));
        assert_true(host_jr_complete(r));
        assert_true(host_jr_finish_document(r));

        /* elements read without more(), until there is none */
        const char *implicit = "[10, 20 ,30 ]";
        api = start(r, implicit, 0, mode);
        assert_true(api->begin_array(api));
        for (int i = 1; i <= 3; i++) {
            assert_true(api->number(api, &x));
            assert_true(x == 10.0 * i);
        }
        assert_false(api->number(api, &x));
        expect_error(r, implicit, offset_of(implicit, " ]"), HOST_JPARSE_OK,
                     "expected another element, found the end of the array");

        /* and with peek() telling when they end */
        api = start(r, implicit, 0, mode);
        double sum = 0;
        assert_true(api->begin_array(api));
        while (api->peek(api) == ECS_JSON_NUMBER) {
            assert_true(api->number(api, &x));
            sum += x;
        }
        assert_true(sum == 60);
        assert_false(host_jr_complete(r)); /* peek() reads nothing: the ']' is more()'s */
        assert_false(api->more(api));
        assert_false(api->failed(api));
        assert_true(host_jr_complete(r));

        /* peek() before more() changes nothing: every element is read once */
        const char *pairs = "[1, 2]";
        api = start(r, pairs, 0, mode);
        assert_true(api->begin_array(api));
        for (int i = 1; i <= 2; i++) {
            assert_int_equal(api->peek(api), ECS_JSON_NUMBER);
            assert_true(api->more(api));
            assert_true(api->number(api, &x));
            assert_true(x == i);
        }
        assert_int_equal(api->peek(api), ECS_JSON_END);
        assert_false(api->more(api));
        assert_true(host_jr_complete(r));
        api = start(r, "[]", 0, mode);
        assert_true(api->begin_array(api));
        assert_int_equal(api->peek(api), ECS_JSON_END);
        assert_false(api->more(api));
        assert_false(api->failed(api));
        assert_true(host_jr_complete(r));
    }
}

/* ---- Syntax ------------------------------------------------------------------------ */

/* A STRICT reader checks what it reads and what it passes over as host_jparse does: each
 * syntax error with its status and the offset of the offending byte. */
static void Jread_strict_mode_reports_syntax_errors_where_they_stand(void **state)
{
    host_jreader *r = *state;
    static const struct {
        const char *text;
        const char *at; /* NULL: the end of the text */
        host_jparse_status status;
        const char *message;
    } cases[] = {
        {"{\"a\": 1,}", ",}", HOST_JPARSE_TRAILING_COMMA, "no trailing commas"},
        {"{\"a\": [1, 2,\n ]}", ",\n", HOST_JPARSE_TRAILING_COMMA, "no trailing commas"},
        {"{\"a\" 1}", "1", HOST_JPARSE_EXPECTED_COLON, "expected ':' after an object key"},
        {"{\"a\": 1, \"b\": 2, \"a\": 3}", "\"a\": 3", HOST_JPARSE_DUPLICATE_KEY,
         "duplicate key \"a\" (its first at line 1, column 2)"},
        {"[{\"k\": {\"x\": 1, \"k\": 2, \"x\": 3}}]", "\"x\": 3", HOST_JPARSE_DUPLICATE_KEY,
         "duplicate key \"x\""},
        {"[\"ab\\u0000c\"]", "\\u0000", HOST_JPARSE_NUL_ESCAPE, "\\u0000 in a string"},
        {"{\"k\\u0000\": 1}", "\\u0000", HOST_JPARSE_NUL_ESCAPE, "\\u0000 in a string"},
        {"[1, 01]", "01", HOST_JPARSE_NUMBER_LEADING_ZERO, "a leading zero"},
        {"-012", "012", HOST_JPARSE_NUMBER_LEADING_ZERO, "a leading zero"},
        {"[1, \"abc]", "\"abc", HOST_JPARSE_UNTERMINATED_STRING, "unterminated string"},
        {"[1] x", "x", HOST_JPARSE_TRAILING_TEXT, "unexpected text after the JSON value"},
        {"{\"a\": {}}]", "]", HOST_JPARSE_TRAILING_TEXT, "unexpected text after"},
        {"[1, truex]", "x]", HOST_JPARSE_EXPECTED_ARRAY_COMMA, "found 'x'"},
        {"", NULL, HOST_JPARSE_EMPTY, "the file is empty"},
        {"[1 2]", "2", HOST_JPARSE_EXPECTED_ARRAY_COMMA, "expected ',' or ']'"},
        {"{\"a\": 1 \"b\": 2}", "\"b\"", HOST_JPARSE_EXPECTED_OBJECT_COMMA, "expected ',' or '}'"},
        {"{1: 2}", "1", HOST_JPARSE_EXPECTED_KEY, "expected a string key"},
        {"[1, +2]", "+2", HOST_JPARSE_NUMBER_PLUS_SIGN, "a '+' sign"},
        {"[.5]", ".5", HOST_JPARSE_NUMBER_LEADING_POINT, "no digit before the '.'"},
        {"[1.e5]", "e5", HOST_JPARSE_NUMBER_EXPECTED_DIGIT, "expected a digit, found 'e5'"},
        {"[\"a\\qb\"]", "\\q", HOST_JPARSE_INVALID_ESCAPE, "invalid escape '\\q'"},
        {"[\"a\tb\"]", "\t", HOST_JPARSE_CONTROL_CHARACTER, "control character"},
        {"[\"\\uD800\"]", "\\uD800", HOST_JPARSE_UNPAIRED_SURROGATE, "unpaired UTF-16"},
        {"{\"a\": [1, 2", NULL, HOST_JPARSE_END_OF_TEXT, "unexpected end of the file"},
        {"[nul]", "nul", HOST_JPARSE_EXPECTED_VALUE, "expected a JSON value, found 'nul'"},
        {"[1, NaN]", "NaN", HOST_JPARSE_EXPECTED_VALUE, "expected a JSON value, found 'NaN'"},
        {"[tru]", "tru", HOST_JPARSE_EXPECTED_VALUE, "expected a JSON value, found 'tru'"},
        {"{\"a\": falsy}", "falsy", HOST_JPARSE_EXPECTED_VALUE, "expected a JSON value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *t = cases[i].text;
        size_t at = cases[i].at ? offset_of(t, cases[i].at) : strlen(t);
        /* read with key(), more() and the value calls, then passed over by skip() */
        for (int by_skip = 0; by_skip < 2; by_skip++) {
            ecs_json_reader *api = start(r, t, 0, HOST_JR_STRICT);
            bool ok = by_skip ? (api->skip)(api) : read_any(api);
            if (ok && host_jr_finish_document(r))
                fail_msg("'%s' (%s): accepted", t, by_skip ? "skip" : "read");
            assert_true(api->failed(api));
            assert_false(host_jr_complete(r));
            expect_error(r, t, at, cases[i].status, cases[i].message);
        }
    }
}

/* What a read of one kind finds is a value of another kind ("expected a number, found a
 * string") only when it is a JSON value at all: a malformed one is its syntax error. */
typedef enum {
    READ_NUMBER,
    READ_STRING,
    READ_BOOLEAN,
    READ_ARRAY_F32,
    READ_ENTITY,
    READ_OBJECT
} read_kind;

static bool read_one(ecs_json_reader *api, read_kind kind)
{
    double x;
    const char *s;
    bool b;
    float v[3];
    ecs_entity e;
    switch (kind) {
    case READ_NUMBER:
        return api->number(api, &x);
    case READ_STRING:
        return api->string(api, &s, NULL);
    case READ_BOOLEAN:
        return api->boolean(api, &b);
    case READ_ARRAY_F32:
        return api->array_f32(api, v, 3);
    case READ_ENTITY:
        return api->entity(api, &e);
    default:
        return api->begin_object(api);
    }
}

static void Jread_a_read_of_the_wrong_kind_on_a_malformed_value_is_a_syntax_error(void **state)
{
    host_jreader *r = *state;
    static const struct {
        read_kind kind;
        const char *text, *at; /* at NULL: the end of the text */
        host_jparse_status status;
        const char *message;
    } cases[] = {
        {READ_BOOLEAN, "[tru]", "tru", HOST_JPARSE_EXPECTED_VALUE, "found 'tru'"},
        {READ_BOOLEAN, "[tr", NULL, HOST_JPARSE_END_OF_TEXT, "unexpected end of the file"},
        {READ_BOOLEAN, "[nul]", "nul", HOST_JPARSE_EXPECTED_VALUE, "found 'nul'"},
        {READ_NUMBER, "[nul]", "nul", HOST_JPARSE_EXPECTED_VALUE, "found 'nul'"},
        {READ_NUMBER, "[\"ab]", "\"ab", HOST_JPARSE_UNTERMINATED_STRING, "unterminated"},
        {READ_STRING, "[01]", "01", HOST_JPARSE_NUMBER_LEADING_ZERO, "a leading zero"},
        {READ_STRING, "[-]", "]", HOST_JPARSE_NUMBER_EXPECTED_DIGIT, "expected a digit"},
        {READ_ARRAY_F32, "[fals]", "fals", HOST_JPARSE_EXPECTED_VALUE, "found 'fals'"},
        {READ_ARRAY_F32, "[+1]", "+1", HOST_JPARSE_NUMBER_PLUS_SIGN, "a '+' sign"},
        {READ_ENTITY, "[1.]", "]", HOST_JPARSE_NUMBER_EXPECTED_DIGIT, "expected a digit"},
        {READ_OBJECT, "[\"a\\x\"]", "\\x", HOST_JPARSE_INVALID_ESCAPE, "invalid escape"},
        /* well-formed values of another kind: the kind is the news */
        {READ_BOOLEAN, "[null]", "null", HOST_JPARSE_OK, "expected true or false, found null"},
        {READ_STRING, "[-0.5e3]", "-0.5e3", HOST_JPARSE_OK, "expected a string, found a number"},
        {READ_ARRAY_F32, "[true]", "true", HOST_JPARSE_OK,
         "expected an array of 3 finite numbers, found true"},
        {READ_ENTITY, "[[]]", "[]", HOST_JPARSE_OK,
         "expected a scene id (a string), found an array"},
        {READ_OBJECT, "[\"x\"]", "\"x\"", HOST_JPARSE_OK, "expected an object, found a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *t = cases[i].text;
        ecs_json_reader *api = start(r, t, 0, HOST_JR_STRICT);
        assert_true(api->begin_array(api));
        assert_true(api->more(api));
        if (read_one(api, cases[i].kind)) fail_msg("'%s': read %d passed", t, (int)cases[i].kind);
        expect_error(r, t, cases[i].at ? offset_of(t, cases[i].at) : strlen(t), cases[i].status,
                     cases[i].message);
    }
}

/* A key twice in one object read with key() is refused when the object closes (its keys are
 * compared then), at the second; until then the reader reads on. */
static void Jread_a_duplicate_key_read_with_key_fails_when_its_object_closes(void **state)
{
    host_jreader *r = *state;
    const char *t = "{\"a\": 1, \"b\": 2, \"a\": 3}";
    double x;
    const char *k;
    static const host_jr_mode modes[] = {HOST_JR_STRICT, HOST_JR_SKIM};
    for (size_t m = 0; m < 2; m++) {
        ecs_json_reader *api = start(r, t, 0, modes[m]);
        assert_true(api->begin_object(api));
        expect_key(api, "a");
        assert_true(api->number(api, &x));
        expect_key(api, "b"); /* the value passed over by key() */
        expect_key(api, "a");
        assert_true(api->number(api, &x));
        assert_true(x == 3);
        assert_false(api->failed(api));
        assert_false(api->key(api, &k)); /* the '}' */
        assert_true(api->failed(api));
        expect_error(r, t, offset_of(t, "\"a\": 3"), HOST_JPARSE_DUPLICATE_KEY, "duplicate key");
    }
}

/* TRUSTED: the text was checked before, so keys are not compared; SKIM's skip() passes over
 * a value by its brackets and strings alone. Neither refuses a duplicate key there. */
static void Jread_trusted_mode_does_not_refuse_duplicate_keys(void **state)
{
    host_jreader *r = *state;
    const char *t = "{\"a\": 1, \"b\": {\"x\": 1, \"x\": 2}, \"a\": 3}";
    ecs_json_reader *api = start(r, t, 0, HOST_JR_TRUSTED);
    assert_true(read_any(api));
    assert_true(host_jr_complete(r));
    assert_true(host_jr_finish_document(r));

    api = start(r, t, 0, HOST_JR_TRUSTED);
    assert_true((api->skip)(api));
    assert_true(host_jr_complete(r));

    api = start(r, t, 0, HOST_JR_SKIM);
    assert_true((api->skip)(api));
    assert_true(host_jr_complete(r));

    api = start(r, t, 0, HOST_JR_STRICT); /* the same text: STRICT refuses it */
    assert_false((api->skip)(api));
    expect_error(r, t, offset_of(t, "\"x\": 2"), HOST_JPARSE_DUPLICATE_KEY, "duplicate key");
}

/* ---- Where and what ---------------------------------------------------------------- */

/* A reader started inside a document reads that one value; offsets still count from the
 * start of the whole text. */
static void Jread_a_reader_started_at_an_offset_reads_only_that_value(void **state)
{
    host_jreader *r = *state;
    const char *doc = "{\"a\": [1, 2], \"b\":  {\"c\": [3, 4], \"d\": \"x\"}, \"e\": 5}";
    const char *k, *s;
    float v[2];
    double x;
    /* at the value's '{', and before the white space in front of it */
    size_t starts[] = {offset_of(doc, "{\"c\""), offset_of(doc, "  {\"c\"")};
    for (size_t i = 0; i < 2; i++) {
        ecs_json_reader *api = start(r, doc, starts[i], HOST_JR_STRICT);
        assert_int_equal(api->peek(api), ECS_JSON_OBJECT);
        assert_true(api->begin_object(api));
        expect_key(api, "c");
        assert_true(api->array_f32(api, v, 2));
        assert_true(v[0] == 3 && v[1] == 4);
        expect_key(api, "d");
        assert_true(api->string(api, &s, NULL));
        assert_string_equal(s, "x");
        assert_false(api->key(api, &k));
        assert_true(host_jr_complete(r));
        assert_int_equal(host_jr_offset(r), offset_of(doc, ", \"e\""));
        assert_int_equal(api->peek(api), ECS_JSON_END); /* the value is read: nothing next */
    }

    /* skip() from an offset stops after that value */
    ecs_json_reader *api = start(r, doc, offset_of(doc, "[1, 2]"), HOST_JR_STRICT);
    assert_true((api->skip)(api));
    assert_true(host_jr_complete(r));
    assert_int_equal(host_jr_offset(r), offset_of(doc, ", \"b\""));

    /* the number of "e", at the end of the object */
    api = start(r, doc, offset_of(doc, "5}"), HOST_JR_STRICT);
    assert_true(api->number(api, &x));
    assert_true(x == 5);
    assert_true(host_jr_complete(r));

    /* an error inside points into the whole text */
    api = start(r, doc, offset_of(doc, "{\"c\""), HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    expect_key(api, "c");
    assert_false(api->begin_object(api));
    expect_error(r, doc, offset_of(doc, "[3, 4]"), HOST_JPARSE_OK,
                 "expected an object, found an array");
}

/* A test resolver: "p1" is entity 7 (generation 3); any other id is unknown. */
static bool resolve_p1(void *ctx, const char *id, ecs_entity *out, char *why, size_t why_len)
{
    int *calls = ctx;
    (*calls)++;
    if (strcmp(id, "p1") == 0) {
        *out = ecs_entity_make(7, 3);
        return true;
    }
    snprintf(why, why_len, "no entity has the scene id \"%s\"", id);
    return false;
}

/* entity(): a string id through the resolver (escapes decoded first); an unknown id fails
 * with the resolver's reason at the string; a value of another kind, or no resolver, fails. */
static void Jread_entity_resolves_scene_ids_through_the_callback(void **state)
{
    host_jreader *r = *state;
    const char *t = "{\"parent\": \"p1\", \"same\": \"p\\u0031\", \"other\": \"p2\", \"n\": 5}";
    int calls = 0;
    ecs_entity e = ecs_entity_null();
    host_jr_on_entity(r, resolve_p1, &calls);

    ecs_json_reader *api = start(r, t, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    expect_key(api, "parent");
    assert_true(api->entity(api, &e));
    assert_int_equal(e.id, ecs_entity_make(7, 3).id);
    expect_key(api, "same");
    e = ecs_entity_null();
    assert_true(api->entity(api, &e));
    assert_int_equal(e.id, ecs_entity_make(7, 3).id);
    assert_int_equal(calls, 2);
    expect_key(api, "other");
    assert_false(api->entity(api, &e));
    assert_true(ecs_entity_is_null(e));
    assert_int_equal(calls, 3);
    expect_error(r, t, offset_of(t, "\"p2\""), HOST_JPARSE_OK, "no entity has the scene id \"p2\"");

    api = start(r, t, 0, HOST_JR_STRICT); /* the resolver stays across starts */
    assert_true(api->begin_object(api));
    expect_key(api, "parent");
    expect_key(api, "same");
    expect_key(api, "other");
    expect_key(api, "n");
    assert_false(api->entity(api, &e));
    assert_int_equal(calls, 3); /* not asked */
    expect_error(r, t, offset_of(t, "5}"), HOST_JPARSE_OK,
                 "expected a scene id (a string), found a number");

    host_jreader *bare = host_jr_new(); /* no resolver: no references */
    assert_non_null(bare);
    api = start(bare, t, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    expect_key(api, "parent");
    assert_false(api->entity(api, &e));
    expect_error(bare, t, offset_of(t, "\"p1\""), HOST_JPARSE_OK, "no entity references here");
    host_jr_free(bare);
}

/* error() points at what was read last: a key, a number, a string, an array_f32's '['; before
 * anything, at the value. */
static void Jread_error_points_at_the_key_or_value_read_last(void **state)
{
    host_jreader *r = *state;
    const char *t = "{\"speed\": -4.5, \"name\": \"x\", \"v\": [1, 2]}";
    double x;
    const char *s;
    float v[2];

    ecs_json_reader *api = start(r, t, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    expect_key(api, "speed");
    api->error(api, "unknown key '%s'", "speed");
    assert_true(api->failed(api));
    expect_error(r, t, offset_of(t, "\"speed\""), HOST_JPARSE_OK, "unknown key 'speed'");

    api = start(r, t, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    expect_key(api, "speed");
    assert_true(api->number(api, &x));
    api->error(api, "speed %g is negative", x);
    expect_error(r, t, offset_of(t, "-4.5"), HOST_JPARSE_OK, "speed -4.5 is negative");

    api = start(r, t, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    expect_key(api, "speed");
    expect_key(api, "name");
    assert_true(api->string(api, &s, NULL));
    api->error(api, "bad name");
    expect_error(r, t, offset_of(t, "\"x\""), HOST_JPARSE_OK, "bad name");

    api = start(r, t, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    expect_key(api, "speed");
    expect_key(api, "name");
    expect_key(api, "v");
    assert_true(api->array_f32(api, v, 2));
    api->error(api, "bad vector");
    expect_error(r, t, offset_of(t, "[1, 2]"), HOST_JPARSE_OK, "bad vector");

    /* a value passed over by skip() is the value read last, whatever it holds, in any mode */
    static const host_jr_mode modes[] = {HOST_JR_STRICT, HOST_JR_SKIM, HOST_JR_TRUSTED};
    const char *nested = "{\"mesh\": {\"mesh\": \"a\", \"m\": [{\"k\": 1}]}, \"n\": 1}";
    for (size_t m = 0; m < 3; m++) {
        api = start(r, nested, 0, modes[m]);
        assert_true(api->begin_object(api));
        expect_key(api, "mesh");
        assert_true((api->skip)(api));
        api->error(api, "expected an array, found an object");
        expect_error(r, nested, offset_of(nested, "{\"mesh\": \"a\""), HOST_JPARSE_OK,
                     "expected an array");
    }

    api = start(r, t, 0, HOST_JR_STRICT);
    api->error(api, "not wanted");
    expect_error(r, t, 0, HOST_JPARSE_OK, "not wanted");
}

/* Calls out of order fail the reader with a message, never read out of bounds. */
static void Jread_misuse_fails_with_a_message(void **state)
{
    host_jreader *r = *state;
    const char *k;
    double x;

    const char *arr = "[1, 2]";
    ecs_json_reader *api = start(r, arr, 0, HOST_JR_STRICT);
    assert_true(api->begin_array(api));
    assert_false(api->key(api, &k));
    expect_error(r, arr, 1, HOST_JPARSE_OK, "key() called outside an object");

    const char *obj = "{\"a\": 1}";
    api = start(r, obj, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    assert_false(api->more(api));
    expect_error(r, obj, 1, HOST_JPARSE_OK, "more() called outside an array");

    api = start(r, obj, 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    assert_false(api->number(api, &x)); /* a value where a key is due */
    expect_error(r, obj, 1, HOST_JPARSE_OK, "call key() first");

    const char *num = " 5 ";
    api = start(r, num, 0, HOST_JR_STRICT);
    assert_true(api->number(api, &x));
    assert_true(host_jr_complete(r));
    assert_false(api->number(api, &x)); /* the document has one value: the error is its */
    expect_error(r, num, 1, HOST_JPARSE_OK, "read past the end of the value");

    api = start(r, arr, 0, HOST_JR_STRICT);
    assert_true((api->skip)(api));
    assert_false((api->skip)(api));
    expect_error(r, arr, 0, HOST_JPARSE_OK, "read past the end of the value");

    api = start(r, num, 0, HOST_JR_STRICT);
    assert_false(api->begin_object(api));
    expect_error(r, num, 1, HOST_JPARSE_OK, "expected an object, found a number");

    api = start(r, num, 0, HOST_JR_STRICT);
    assert_false(api->key(api, &k)); /* at the top: no object open */
    expect_error(r, num, 1, HOST_JPARSE_OK, "key() called outside an object");

    api = start(r, num, 0, HOST_JR_STRICT);
    assert_false(api->more(api));
    expect_error(r, num, 1, HOST_JPARSE_OK, "more() called outside an array");

    api = start(r, obj, 0, HOST_JR_STRICT);
    assert_false(api->begin_array(api));
    expect_error(r, obj, 0, HOST_JPARSE_OK, "expected an array, found an object");

    api = start(r, obj, 0, HOST_JR_STRICT);
    api->error(api, NULL); /* no format: still a message */
    expect_error(r, obj, 0, HOST_JPARSE_OK, "(no message)");
}

/* ---- Depth and reuse --------------------------------------------------------------- */

/* 2000 nested '[' fail at the 1001st (HOST_JPARSE_MAX_DEPTH), read or passed over; 100
 * levels (more than the 32 the reader holds inline) are read whole, with objects' keys
 * compared per object as the stack grows. */
static void Jread_deep_nesting_grows_the_stack_and_stops_at_the_limit(void **state)
{
    host_jreader *r = *state;
    enum { DEEP = 2000, LEVELS = 100 };
    static char t[2 * DEEP + 1];
    memset(t, '[', DEEP);
    memset(t + DEEP, ']', DEEP);
    t[2 * DEEP] = '\0';
    ecs_json_reader *api = start(r, t, 0, HOST_JR_STRICT);
    int opened = 0;
    while (api->begin_array(api)) opened++; /* begin_array after begin_array: implicit */
    assert_int_equal(opened, HOST_JPARSE_MAX_DEPTH);
    expect_error(r, "2000 '['", HOST_JPARSE_MAX_DEPTH, HOST_JPARSE_TOO_DEEP, "nesting deeper");
    api = start(r, t, 0, HOST_JR_STRICT);
    assert_false((api->skip)(api));
    expect_error(r, "2000 '[' skipped", HOST_JPARSE_MAX_DEPTH, HOST_JPARSE_TOO_DEEP,
                 "nesting deeper");

    char nested[LEVELS * 2 + 8];
    memset(nested, '[', LEVELS);
    memcpy(nested + LEVELS, "7", 1);
    memset(nested + LEVELS + 1, ']', LEVELS);
    nested[2 * LEVELS + 1] = '\0';
    double x = 0;
    api = start(r, nested, 0, HOST_JR_STRICT);
    for (int i = 0; i < LEVELS; i++) {
        assert_true(api->begin_array(api));
        assert_true(api->more(api));
    }
    assert_true(api->number(api, &x));
    assert_true(x == 7);
    for (int i = 0; i < LEVELS; i++) assert_false(api->more(api));
    assert_false(api->failed(api));
    assert_true(host_jr_complete(r));
    assert_true(host_jr_finish_document(r));

    /* {"x": 0, "y": {"x": 1, "y": ... {"x": 99, "y": null} ... }}: the same keys at every
     * level, and the deepest member read first: keys compared per object */
    static char objects[LEVELS * 24 + 8];
    size_t len = 0;
    for (int i = 0; i < LEVELS; i++)
        len += (size_t)sprintf(objects + len, "{\"x\": %d, \"y\": ", i);
    len += (size_t)sprintf(objects + len, "null");
    for (int i = 0; i < LEVELS; i++) objects[len++] = '}';
    objects[len] = '\0';
    static const host_jr_mode modes[] = {HOST_JR_STRICT, HOST_JR_SKIM, HOST_JR_TRUSTED};
    for (size_t m = 0; m < 3; m++) {
        api = start(r, objects, 0, modes[m]);
        for (int i = 0; i < LEVELS; i++) {
            assert_true(api->begin_object(api));
            expect_key(api, "x");
            assert_true(api->number(api, &x));
            assert_true(x == i);
            expect_key(api, "y");
        }
        assert_int_equal(api->peek(api), ECS_JSON_NULL);
        assert_true((api->skip)(api));
        const char *k;
        for (int i = 0; i < LEVELS; i++) assert_false(api->key(api, &k));
        expect_ok(r, "100 nested objects");
        assert_true(host_jr_complete(r));

        api = start(r, objects, 0, modes[m]); /* and passed over whole */
        assert_true(read_any(api));
        assert_true(host_jr_complete(r));
        assert_true(host_jr_finish_document(r));
    }
}

/* A reader started again forgets its error, its open levels and the keys it noted. */
static void Jread_a_reader_reused_after_a_failure_starts_clean(void **state)
{
    host_jreader *r = *state;
    double x = 0;
    const char *k;

    const char *bad = "[\"s\"]";
    ecs_json_reader *api = start(r, bad, 0, HOST_JR_STRICT);
    assert_true(api->begin_array(api));
    assert_false(api->number(api, &x));
    assert_true(api->failed(api));

    const char *good = "[1.5]";
    api = start(r, good, 0, HOST_JR_STRICT);
    assert_false(api->failed(api));
    assert_false(host_jr_error(r, NULL, NULL, NULL));
    assert_true(api->begin_array(api));
    assert_true(api->more(api));
    assert_true(api->number(api, &x));
    assert_true(x == 1.5);
    assert_false(api->more(api));
    assert_true(host_jr_complete(r));
    assert_true(host_jr_finish_document(r));

    /* failed deep inside objects, keys noted: the next text's same keys are no duplicates */
    const char *cut = "{\"a\": {\"b\": {\"c\": 1, \"d\": 2";
    api = start(r, cut, 0, HOST_JR_STRICT);
    assert_false(read_any(api));
    expect_error(r, cut, strlen(cut), HOST_JPARSE_END_OF_TEXT, "unexpected end");
    const char *again = "{\"a\": 1, \"b\": {\"c\": 1, \"d\": 2}, \"c\": 3, \"d\": 4}";
    api = start(r, again, 0, HOST_JR_STRICT);
    assert_true(read_any(api));
    assert_true(host_jr_complete(r));
    assert_true(host_jr_finish_document(r));

    /* a syntax error, then the same reader on a good text in another mode, from an offset */
    const char *syntax = "[1,,2]";
    api = start(r, syntax, 0, HOST_JR_STRICT);
    assert_false(read_any(api));
    expect_error(r, syntax, offset_of(syntax, ",2"), HOST_JPARSE_EXPECTED_VALUE,
                 "expected a JSON value");
    api = start(r, again, offset_of(again, "{\"c\""), HOST_JR_TRUSTED);
    assert_true(api->begin_object(api));
    expect_key(api, "c");
    expect_key(api, "d");
    assert_true(api->number(api, &x));
    assert_true(x == 2);
    assert_false(api->key(api, &k));
    assert_true(host_jr_complete(r));
    assert_false(host_jr_error(r, NULL, NULL, NULL));

    /* a finished document, started again */
    api = start(r, good, 0, HOST_JR_STRICT);
    assert_true(read_any(api));
    api = start(r, good, 0, HOST_JR_STRICT);
    assert_false(host_jr_complete(r));
    assert_true(read_any(api));
    assert_true(host_jr_complete(r));
}

/* ---- Reading ahead (tokens) ----------------------------------------------------------- */

/* Record the value at text's start with a STRICT reader into tape (tok[cap], bytes[size]):
 * whether it was sound. */
static bool record(host_jreader *r, const char *text, host_jr_tape *tape)
{
    host_jr_start(r, text, strlen(text), 0, HOST_JR_STRICT);
    host_jr_record(r, tape);
    ecs_json_reader *api = host_jr_api(r);
    return (api->skip)(api) && host_jr_complete(r);
}

/* Read text whole (jdump_value) with r, with the tokens of tape or without; the dump and
 * the error (offset and message) into out. */
static void read_dump(host_jreader *r, const char *text, const host_jr_tape *tape, char *out,
                      size_t size)
{
    size_t n = 0, at;
    const char *message;
    host_jr_start(r, text, strlen(text), 0, tape ? HOST_JR_TRUSTED : HOST_JR_STRICT);
    if (tape) host_jr_use(r, tape->tok, tape->n);
    jdump_value(host_jr_api(r), 0, out, size, &n);
    if (host_jr_error(r, &at, NULL, &message))
        snprintf(out + n, n < size ? size - n : 0, " error at %zu: %s", at, message);
}

/* A value recorded by one reader and read by another with its tokens reads as the text:
 * keys and strings with escapes (decoded, their lengths), numbers of every form (the
 * exact path, beyond 19 digits, huge and tiny exponents, -0), arrays of numbers (whose
 * own token gives array_f32 its numbers) and of anything, empty ones, literals. */
static void Jread_tokens_recorded_ahead_read_as_the_text(void **state)
{
    host_jreader *r = *state, *rec = host_jr_new();
    assert_non_null(rec);
    static const char *const docs[] = {
        "{\"a\": [1, 2.5, -3e2], \"b\": {\"c\": \"x\\u00e9\\n\", \"d\": true, \"e\": false}, "
        "\"f\": null}",
        "{\"k\\u00e9y\": \"a\\\"b\", \"\\ud83d\\ude00\": [\"\", \"plain\", \"t\\/ab\\t\"]}",
        "[0, -0, 1e300, 1.5E-7, 123456789012345678901234567890, -0.0000001, 9007199254740993, "
        "0.1, 2.2250738585072014e-308, 1e-400, 17.5e+3]",
        "[[], {}, [[1, 2], [3]], [1, \"two\", 3], {\"x\": [true, null, false]}]",
        "{\"position\": [1.0385917, -0.34117806, -2.1055384], \"rotation\": [0.5127606, "
        "0.027629333, 0.33113128, 0.79162186], \"parent\": \"n0\"}",
        "\"just a string\"",
        "-42.5",
    };
    host_jr_token tok[64];
    char bytes[256], with[2048], without[2048];
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        host_jr_tape tape = {tok, 0, 64, bytes, 0, sizeof bytes, false};
        if (!record(rec, docs[i], &tape)) fail_msg("'%s': not recorded as sound", docs[i]);
        assert_false(tape.full);
        assert_true(tape.n > 0);
        read_dump(r, docs[i], &tape, with, sizeof with);
        read_dump(r, docs[i], NULL, without, sizeof without);
        assert_string_equal(with, without);
    }
    host_jr_free(rec);
}

/* array_f32 with tokens: the numbers of the array's own token when their count is n (3
 * and 4, the two stored whole); a count or a float range that is wrong fails as without
 * tokens, at the same byte, with the same message and the same floats left in x; values
 * passed over by key() leave the tokens after them in step. */
static void Jread_array_f32_with_tokens_reads_and_fails_as_without(void **state)
{
    host_jreader *r = *state, *rec = host_jr_new();
    assert_non_null(rec);
    static const char *const docs[] = {
        "{\"v\": [1, -2.5, 3e1]}",
        "{\"v\": [1, 2]}",
        "{\"v\": [1, 2, 3, 4]}",
        "{\"v\": [1, 1e39, 3]}",
        "{\"v\": [1, 2, -1e39]}",
        "{\"v\": [1, \"two\", 3]}",
        "{\"v\": []}",
        "{\"v\": [[1], 2, 3]}",
        "{\"skipped\": [9, 8, 7], \"also\": {\"x\": \"y\"}, \"v\": [4, 5, 6]}",
        "{\"v\": [0.5, -0.25, 0.125, 0.75]}",
        "{\"v\": [0.5, -0.25, 0.125, 1e39]}",
        "{\"v\": [-1e39, -0.25, 0.125, 1]}",
    };
    host_jr_token tok[32];
    char bytes[128];
    for (size_t i = 0; i < 2 * sizeof docs / sizeof *docs; i++) {
        const char *t = docs[i / 2];
        uint32_t n = 3 + (uint32_t)(i % 2); /* a vector, a quaternion */
        float got[2][4] = {{0}};
        size_t at[2] = {0, 0};
        char message[2][400] = {"", ""};
        bool ok[2];
        host_jr_tape tape = {tok, 0, 32, bytes, 0, sizeof bytes, false};
        assert_true(record(rec, t, &tape));
        for (int with = 0; with < 2; with++) {
            const char *k = NULL, *m = NULL;
            ecs_json_reader *api = start(r, t, 0, with ? HOST_JR_TRUSTED : HOST_JR_STRICT);
            if (with) host_jr_use(r, tape.tok, tape.n);
            assert_true(api->begin_object(api));
            while (api->key(api, &k) && strcmp(k, "v") != 0) {
            }
            ok[with] = api->array_f32(api, got[with], n) && !api->key(api, &k);
            if (host_jr_error(r, &at[with], NULL, &m)) snprintf(message[with], 400, "%s", m);
        }
        if (ok[0] != ok[1] || at[0] != at[1] || strcmp(message[0], message[1]) != 0 ||
            memcmp(got[0], got[1], sizeof got[0]) != 0)
            fail_msg("'%s', %u: with tokens %d at %zu '%s', without %d at %zu '%s'", t, n, ok[1],
                     at[1], message[1], ok[0], at[0], message[0]);
    }
    host_jr_free(rec);
}

/* A recording reader says when the tape was too small (tokens or string bytes), and an
 * unsound value fails its skip() with STRICT's own error. */
static void Jread_a_recording_reader_says_when_it_did_not_keep_everything(void **state)
{
    host_jreader *r = *state;
    host_jr_token tok[4];
    char bytes[8];
    host_jr_tape tape = {tok, 0, 4, bytes, 0, sizeof bytes, false};
    assert_true(record(r, "[1, 2, 3, 4, 5]", &tape)); /* the array's token and 5 numbers */
    assert_true(tape.full);
    tape = (host_jr_tape){tok, 0, 4, bytes, 0, sizeof bytes, false};
    assert_true(record(r, "{\"a long key\": 1}", &tape)); /* 11 bytes with its NUL */
    assert_true(tape.full);
    tape = (host_jr_tape){tok, 0, 4, bytes, 0, sizeof bytes, false};
    assert_true(record(r, "{\"a\": [1, 2]}", &tape));
    assert_false(tape.full);
    assert_int_equal(tape.n, 4); /* the key, the array, two numbers */
    const char *bad = "{\"a\": [1, 2,]}";
    tape = (host_jr_tape){tok, 0, 4, bytes, 0, sizeof bytes, false};
    assert_false(record(r, bad, &tape));
    expect_error(r, bad, offset_of(bad, ",]"), HOST_JPARSE_TRAILING_COMMA, "");
    const char *dup = "{\"a\": 1, \"a\": 2}";
    tape = (host_jr_tape){tok, 0, 4, bytes, 0, sizeof bytes, false};
    assert_false(record(r, dup, &tape));
    expect_error(r, dup, offset_of(dup, "\"a\": 2"), HOST_JPARSE_DUPLICATE_KEY, "");
}

/* ecs_json_key_is (the SDK's inline key comparison): equal only when the whole key is the
 * name, byte for byte, as strcmp() == 0 says; the keys it is given as the reader decodes
 * them (escapes decoded). */
static void Jread_key_is_compares_whole_keys(void **state)
{
    static const char *const keys[] = {"position", "positio", "positions",  "Position", "",
                                       "p",        "parent",  "sc\xC3\xA9", "sc"};
    static const char *const names[] = {"position", "parent", "p", "", "scale", "sc\xC3\xA9"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
            if (ecs_json_key_is(keys[k], names[n]) != (strcmp(keys[k], names[n]) == 0))
                fail_msg("ecs_json_key_is(\"%s\", \"%s\") is not strcmp's word", keys[k], names[n]);
    host_jreader *r = *state;
    ecs_json_reader *api = host_jr_api(r);
    const char *text = "{\"pos\\u0069tion\": 1, \"sc\\u00e9\": 2, \"scale\": 3}";
    const char *key;
    host_jr_start(r, text, strlen(text), 0, HOST_JR_STRICT);
    assert_true(api->begin_object(api));
    assert_true(api->key(api, &key));
    assert_true(ecs_json_key_is(key, "position"));
    assert_true((api->skip)(api));
    assert_true(api->key(api, &key));
    assert_true(ecs_json_key_is(key, "sc\xC3\xA9"));
    assert_false(ecs_json_key_is(key, "sc"));
    assert_true((api->skip)(api));
    assert_true(api->key(api, &key));
    assert_false(ecs_json_key_is(key, "scal"));
    assert_true(ecs_json_key_is(key, "scale"));
    assert_true((api->skip)(api));
    assert_false(api->key(api, &key));
    assert_true(host_jr_complete(r));
}

/* ---- the recorder's one-walk path for objects --------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static unsigned rnd(rng *g, unsigned n) /* 0..n-1 */
{
    g->s ^= g->s << 13, g->s ^= g->s >> 7, g->s ^= g->s << 17;
    return (unsigned)(g->s % n);
}

static void put(char *out, size_t size, size_t *n, const char *s)
{
    size_t k = strlen(s);
    if (*n + k < size) memcpy(out + *n, s, k), *n += k, out[*n] = '\0';
}

static void gen_space(rng *g, char *out, size_t size, size_t *n)
{
    static const char *const space[] = {"", "", " ", "\n  ", "\t", "\r\n"};
    put(out, size, n, space[rnd(g, 6)]);
}

/* A value for an object member: mostly what scenes hold, sometimes what they do not. */
static void gen_value(rng *g, char *out, size_t size, size_t *n, int depth)
{
    static const char *const numbers[] = {
        "0",          "-0",    "1.0385917", "-0.34117806",           "0.027629333",  "12",
        "-7",         "3e2",   "1.5E-7",    "123456789012345678901", "0.1234567891", "12345678.5",
        "-0.0000001", "1e400", "2.5e-3"};
    static const char *const strings[] = {"\"n0\"",     "\"\"",         "\"tree 0 node 1\"",
                                          "\"a\\\"b\"", "\"x\\u00e9\"", "\"caf\xC3\xA9\""};
    static const char *const literals[] = {"true", "false", "null"};
    char buf[32];
    switch (rnd(g, depth < 4 ? 7 : 6)) {
    case 0:
    case 1: { /* an array of numbers (sometimes something else in it, or empty) */
        unsigned count = rnd(g, 5);
        put(out, size, n, "[");
        for (unsigned i = 0; i < count; i++) {
            if (i) put(out, size, n, ",");
            gen_space(g, out, size, n);
            put(out, size, n, rnd(g, 12) ? numbers[rnd(g, 15)] : strings[rnd(g, 6)]);
            gen_space(g, out, size, n);
        }
        put(out, size, n, "]");
        break;
    }
    case 2:
        put(out, size, n, numbers[rnd(g, 15)]);
        break;
    case 3:
        snprintf(buf, sizeof buf, "%.9g", (double)rnd(g, 2000001) / 1000.0 - 1000.0);
        put(out, size, n, buf);
        break;
    case 4:
        put(out, size, n, strings[rnd(g, 6)]);
        break;
    case 5:
        put(out, size, n, literals[rnd(g, 3)]);
        break;
    default: { /* an object inside */
        unsigned count = rnd(g, 4);
        put(out, size, n, "{");
        for (unsigned i = 0; i < count; i++) {
            static const char *const keys[] = {"\"a\"", "\"b\"", "\"c\"", "\"k\\u0061\""};
            if (i) put(out, size, n, ",");
            gen_space(g, out, size, n);
            put(out, size, n, keys[rnd(g, 4)]);
            put(out, size, n, ":");
            gen_space(g, out, size, n);
            gen_value(g, out, size, n, depth + 1);
        }
        put(out, size, n, "}");
    }
    }
}

/* An object as the read-ahead records them: a scene component's keys (once, or twice, or
 * escaped, or more than the walk's 16), values of every kind. */
static void gen_object(rng *g, char *out, size_t size)
{
    static const char *const keys[] = {
        "position", "rotation", "scale", "parent", "mesh", "color", "k1",  "k2",  "k3",  "k4",
        "k5",       "k6",       "k7",    "k8",     "k9",   "k10",   "k11", "k12", "k13", "k14"};
    size_t n = 0;
    unsigned count = rnd(g, 8) ? rnd(g, 6) : rnd(g, 20);
    char key[40];
    out[0] = '\0';
    put(out, size, &n, "{");
    for (unsigned i = 0; i < count; i++) {
        unsigned k = count > 6 ? i : rnd(g, 6);
        if (i) put(out, size, &n, ",");
        gen_space(g, out, size, &n);
        snprintf(key, sizeof key, rnd(g, 30) ? "\"%s\"" : "\"\\u0070%s\"", keys[k]);
        put(out, size, &n, key);
        gen_space(g, out, size, &n);
        put(out, size, &n, ":");
        gen_space(g, out, size, &n);
        gen_value(g, out, size, &n, 1);
        gen_space(g, out, size, &n);
    }
    put(out, size, &n, "}");
}

/* One byte changed, or the text cut short: where the walk must say what is wrong. */
static void mutate(rng *g, char *t)
{
    static const char bytes[] = "\"\\{}[]:,-0e .x\n\x01";
    size_t len = strlen(t);
    if (!len) return;
    if (rnd(g, 4) == 0)
        t[rnd(g, (unsigned)len)] = '\0';
    else
        t[rnd(g, (unsigned)len)] = bytes[rnd(g, sizeof bytes - 1)];
}

/* Record text's value with a tape of cap tokens: whether it was sound, and the reader's
 * error (offset, status) when it was not. */
static bool record_into(host_jreader *r, const char *text, host_jr_tape *tape, size_t *at,
                        host_jparse_status *status)
{
    bool ok = record(r, text, tape);
    *at = 0;
    *status = HOST_JPARSE_OK;
    if (!ok) host_jr_error(r, at, status, NULL);
    return ok;
}

/* A value's object is recorded in one walk where it is the common kind (test: the walk
 * member by member, which records an object inside an array): for 20,000 random and
 * mutated objects the same soundness, the same error (byte and kind, as a reader that
 * does not record says it), and the same tokens (where, their text, decoded strings,
 * numbers bit for bit, an array's count), with tapes large and too small. */
static void Jread_objects_recorded_in_one_walk_as_member_by_member(void **state)
{
    host_jreader *r = *state, *plain = host_jr_new();
    assert_non_null(plain);
    enum { TOKENS = 512, BYTES = 4096 };
    static host_jr_token tok[2][TOKENS];
    static char bytes[2][BYTES], text[4096], wrapped[4100];
    rng g = {0x9E3779B97F4A7C15ull};
    unsigned fast = 0, compared = 0;
    for (int round = 0; round < 20000; round++) {
        gen_object(&g, text, sizeof text);
        if (round % 3 == 1) mutate(&g, text);
        size_t len = strlen(text), cap = rnd(&g, 6) ? TOKENS : rnd(&g, 12);
        snprintf(wrapped, sizeof wrapped, "[%s]", text);
        host_jr_tape one = {tok[0], 0, cap, bytes[0], 0, cap < TOKENS ? 24 : BYTES, false};
        host_jr_tape walk = {tok[1], 0, cap, bytes[1], 0, cap < TOKENS ? 24 : BYTES, false};
        size_t at[3];
        host_jparse_status status[3];
        bool ok = record_into(r, text, &one, &at[0], &status[0]);
        /* the reference for soundness and errors: the same reader, not recording */
        host_jr_start(plain, text, len, 0, HOST_JR_STRICT);
        ecs_json_reader *papi = host_jr_api(plain);
        bool plain_ok = (papi->skip)(papi) && host_jr_complete(plain);
        at[1] = 0, status[1] = HOST_JPARSE_OK;
        if (!plain_ok) host_jr_error(plain, &at[1], &status[1], NULL);
        if (ok != plain_ok || at[0] != at[1] || status[0] != status[1])
            fail_msg("round %d '%s': recorded %d (error at %zu, %d), read %d (at %zu, %d)", round,
                     text, ok, at[0], status[0], plain_ok, at[1], status[1]);
        if (!ok || host_json_skip_space(text + host_jr_offset(r), text + len) != text + len)
            continue; /* the wrapped text would fail on what follows the value */
        if (!record_into(plain, wrapped, &walk, &at[2], &status[2]))
            fail_msg("round %d '%s': sound alone, not in an array", round, text);
        compared++;
        fast += one.n > 0 && !one.full && text[0] == '{';
        if (one.full != walk.full || one.n != walk.n)
            fail_msg("round %d '%s': %zu tokens (full %d), the walk %zu (full %d)", round, text,
                     one.n, one.full, walk.n, walk.full);
        for (size_t i = 0; i < one.n; i++) {
            const host_jr_token *a = &one.tok[i], *b = &walk.tok[i];
            bool str = a->str != NULL, array = *a->at == '[';
            if (a->at - text != b->at - (wrapped + 1) || a->end - text != b->end - (wrapped + 1) ||
                str != (b->str != NULL) || (str && strcmp(a->str, b->str) != 0) ||
                ((str || array) && a->v.len != b->v.len) ||
                (!str && !array && memcmp(&a->v.number, &b->v.number, sizeof(double)) != 0))
                fail_msg("round %d '%s': token %zu ('%.*s') differs from the walk's", round, text,
                         i, (int)(a->end - a->at), a->at);
        }
    }
    if (compared < 5000 || fast < 3000)
        fail_msg("%u compared, %u with tokens: the generator is off", compared, fast);
    host_jr_free(plain);
}

/* ---- The read-ahead thread (ahead.c) ---------------------------------------------------- */

/* AHEAD_N entities' values for two managers (a transform-like object, a name; every 9th
 * entity has an array or a number instead of its object, every 13th none), one per line:
 * the text, and at[i * 2 + m] = offset + 1 of entity i's value of manager m (0: none). */
#define AHEAD_N 16000u

static char *ahead_text(uint64_t *at)
{
    size_t cap = (size_t)AHEAD_N * 200, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (uint32_t i = 0; i < AHEAD_N; i++) {
        at[i * 2 + 1] = n + 1;
        n += (size_t)snprintf(text + n, cap - n, "\"name %u\" ", i);
        at[i * 2] = i % 13 == 5 ? 0 : n + 1;
        if (i % 13 == 5) continue;
        if (i % 9 == 4)
            n += (size_t)snprintf(text + n, cap - n, i % 2 ? "[%u, \"x\\u00e9\", null]\n" : "%u\n",
                                  i);
        else
            n += (size_t)snprintf(text + n, cap - n,
                                  "{\"position\": [%u, 1.5, -2e%u], \"rotation\": [0, 0, 0, 1], "
                                  "\"k\\u0065y\": \"n%u\", \"flag\": %s, \"m\": [[1, 2, 3, 4], "
                                  "[5, 6, 7, %u]]}\n",
                                  i, i % 7, i / 3, i % 2 ? "true" : "false", i % 11);
    }
    return text;
}

/* The value at text + at as read without tokens and with tok[0..count): the same dump. */
static void expect_tokens_read_as_text(host_jreader *r, const char *text, size_t at,
                                       const host_jr_token *tok, size_t count, uint64_t seq)
{
    char with[1024], without[1024];
    size_t n = 0, len = strlen(text);
    host_jr_start(r, text, len, at, HOST_JR_TRUSTED);
    host_jr_use(r, tok, count);
    jdump_value(host_jr_api(r), 0, with, sizeof with, &n);
    n = 0;
    host_jr_start(r, text, len, at, HOST_JR_STRICT);
    jdump_value(host_jr_api(r), 0, without, sizeof without, &n);
    if (strcmp(with, without) != 0)
        fail_msg("value %llu: with the thread's tokens '%s', from the text '%s'",
                 (unsigned long long)seq, with, without);
}

/* Whatever the pace of the loader against the thread's (a loader that rushes by, so the
 * thread is behind and jumps ahead of it again and again; one slower than the thread, so
 * the ring fills; the two alternating), every value the thread hands over is that value's
 * tokens: they read as its text, a later value asked for (a reference's target) too, and
 * nothing is handed over for a value that is not an object or an array. */
static void Ahead_tokens_handed_over_read_as_their_values_at_any_pace(void **state)
{
    host_jreader *r = *state;
    static uint64_t at[AHEAD_N * 2];
    char *text = ahead_text(at);
    const bool want[2] = {true, true};
    for (int pace = 0; pace < 3; pace++) {
        host_ahead *a = host_ahead_start(text, strlen(text), at, AHEAD_N, 2, want);
        if (!a) { /* one CPU: nothing is read ahead, and asking says so */
            const host_jr_token *tok;
            size_t count;
            assert_false(host_ahead_get(NULL, 0, &tok, &count));
            break;
        }
        uint64_t handed = 0;
        for (uint64_t seq = 0; seq < 2ull * AHEAD_N; seq++) {
            host_ahead_at(a, seq);
            bool slow = pace == 1 || (pace == 2 && (seq / 500) % 2);
            for (uint64_t ask = seq; ask <= seq + 40 && ask < 2ull * AHEAD_N; ask += 40) {
                uint64_t at1 = at[(ask % AHEAD_N) * 2 + ask / AHEAD_N];
                const host_jr_token *tok = NULL;
                size_t count = 0;
                if (!host_ahead_get(a, ask, &tok, &count)) {
                    if (slow && at1) { /* read from the text, as the loader would */
                        char dump[1024];
                        size_t n = 0;
                        host_jr_start(r, text, strlen(text), (size_t)(at1 - 1), HOST_JR_STRICT);
                        jdump_value(host_jr_api(r), 0, dump, sizeof dump, &n);
                    }
                    continue;
                }
                handed++;
                if (!at1 || (text[at1 - 1] != '{' && text[at1 - 1] != '['))
                    fail_msg("value %llu: tokens handed over for no object or array",
                             (unsigned long long)ask);
                expect_tokens_read_as_text(r, text, (size_t)(at1 - 1), tok, count, ask);
            }
        }
        uint64_t taken = 0;
        host_ahead_stop(a, &taken);
        assert_true(taken == handed);
    }
    free(text);
}

int main(void)
{
#define TEST(f) cmocka_unit_test_setup_teardown(f, reader_new, reader_free)
    const struct CMUnitTest tests[] = {
        TEST(Jread_a_nested_document_is_read_whole_in_order),
        TEST(Jread_array_f32_wants_exactly_n_finite_numbers),
        TEST(Jread_a_type_mismatch_fails_the_reader_and_keeps_the_first_error),
        TEST(Jread_values_left_unread_are_passed_over),
        TEST(Jread_strict_mode_reports_syntax_errors_where_they_stand),
        TEST(Jread_a_read_of_the_wrong_kind_on_a_malformed_value_is_a_syntax_error),
        TEST(Jread_a_duplicate_key_read_with_key_fails_when_its_object_closes),
        TEST(Jread_trusted_mode_does_not_refuse_duplicate_keys),
        TEST(Jread_a_reader_started_at_an_offset_reads_only_that_value),
        TEST(Jread_entity_resolves_scene_ids_through_the_callback),
        TEST(Jread_error_points_at_the_key_or_value_read_last),
        TEST(Jread_misuse_fails_with_a_message),
        TEST(Jread_deep_nesting_grows_the_stack_and_stops_at_the_limit),
        TEST(Jread_a_reader_reused_after_a_failure_starts_clean),
        TEST(Jread_tokens_recorded_ahead_read_as_the_text),
        TEST(Jread_array_f32_with_tokens_reads_and_fails_as_without),
        TEST(Jread_a_recording_reader_says_when_it_did_not_keep_everything),
        TEST(Jread_key_is_compares_whole_keys),
        TEST(Jread_objects_recorded_in_one_walk_as_member_by_member),
        TEST(Ahead_tokens_handed_over_read_as_their_values_at_any_pace),
    };
#undef TEST
    return cmocka_run_group_tests_name("jread", tests, NULL, NULL);
}
