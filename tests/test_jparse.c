/* SPDX-License-Identifier: MIT */
/* test_jparse.c: cmocka tests of the host's JSON parser (host/scene/jparse.c, through json.c):
 * trees identical to cJSON_ParseWithLength's on the repository's JSON files, on the glTF
 * files of Debian's assimp-testmodels and on thousands of random documents, in malloc and
 * arena modes; every syntax error with its message and exact line:col; every truncation
 * of a document refused; the nesting limit; the arena's blocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jparse.h"
#include "json.h"

#ifndef SOURCE_ROOT
#error "tests/meson.build defines SOURCE_ROOT"
#endif
#define GLTF_MODELS "/usr/share/assimp/models" /* Debian's assimp-testmodels */

/* ---- Comparing trees --------------------------------------------------------------- */

/* Whether the list starting at first is linked as cJSON links children: each next's prev
 * is the one before it, the first's prev is the last (whose next is NULL). */
static bool list_linked_as_cJSON(const cJSON *first)
{
    const cJSON *last = first;
    for (const cJSON *c = first; c && c->next; c = c->next, last = c)
        if (c->next->prev != c) return false;
    return !first || first->prev == last;
}

/* The first difference between trees a (ours) and b (cJSON's) as text in diff (its JSON
 * path first), or false when they are identical: types, keys, strings, valuedouble bit for
 * bit, valueint, and the child/next/prev links of every list. path has 512 bytes. */
static bool tree_differs(const cJSON *a, const cJSON *b, char *path, size_t at, char *diff,
                         size_t difflen)
{
#define DIFF(...) return snprintf(diff, difflen, __VA_ARGS__), true
    if (a->type != b->type) DIFF("%s: type %d, cJSON has %d", path, a->type, b->type);
    if (!a->string != !b->string || (a->string && strcmp(a->string, b->string)))
        DIFF("%s: key '%s', cJSON has '%s'", path, a->string ? a->string : "(none)",
             b->string ? b->string : "(none)");
    if (!a->valuestring != !b->valuestring ||
        (a->valuestring && strcmp(a->valuestring, b->valuestring)))
        DIFF("%s: string '%s', cJSON has '%s'", path, a->valuestring ? a->valuestring : "(none)",
             b->valuestring ? b->valuestring : "(none)");
    if (memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)))
        DIFF("%s: valuedouble %.17g, cJSON has %.17g", path, a->valuedouble, b->valuedouble);
    if (a->valueint != b->valueint)
        DIFF("%s: valueint %d, cJSON has %d", path, a->valueint, b->valueint);
    if (!list_linked_as_cJSON(a->child) || !list_linked_as_cJSON(b->child))
        DIFF("%s: children not linked as cJSON links them (%s)", path,
             list_linked_as_cJSON(a->child) ? "cJSON's" : "ours");
    const cJSON *x = a->child, *y = b->child;
    for (int i = 0; x || y; i++, x = x->next, y = y->next) {
        if (!x || !y) DIFF("%s: %s children than cJSON's", path, x ? "more" : "fewer");
        int n = snprintf(path + at, 512 - at, "/%d", i);
        size_t deeper = n > 0 && at + (size_t)n < 512 ? at + (size_t)n : at;
        if (tree_differs(x, y, path, deeper, diff, difflen)) return true;
        path[at] = '\0';
    }
    return false;
#undef DIFF
}

/* Parse text both ways and with cJSON_ParseWithLength: all three accept it and build
 * the same tree. `what` names the input in a failure's message. */
static void expect_same_tree(const char *text, size_t len, const char *what)
{
    char path[512] = "", diff[768];
    host_jparse_error e = {0};
    cJSON *ref = cJSON_ParseWithLength(text, len);
    cJSON *ours = host_jparse(text, len, NULL, &e);
    host_json_arena *arena = host_json_arena_new(len);
    assert_non_null(arena);
    cJSON *in_arena = host_jparse(text, len, arena, NULL);
    if (!ref) fail_msg("%s: cJSON refuses it", what);
    if (!ours || !in_arena) {
        char msg[256];
        host_jparse_describe(text, len, &e, msg, sizeof msg);
        fail_msg("%s: refused at byte %zu: %s", what, e.offset, msg);
    }
    if (tree_differs(ours, ref, path, 0, diff, sizeof diff))
        fail_msg("%s: malloc mode: %s", what, diff);
    if (ours->prev || ours->next || in_arena->prev || in_arena->next)
        fail_msg("%s: the root has siblings", what);
    path[0] = '\0';
    if (tree_differs(in_arena, ref, path, 0, diff, sizeof diff))
        fail_msg("%s: arena mode: %s", what, diff);
    cJSON_Delete(ours); /* malloc mode frees as cJSON's trees (ASan checks) */
    cJSON_Delete(ref);
    host_json_arena_free(arena);
}

/* ---- Files ------------------------------------------------------------------------- */

static int files_checked;
static const char *file_suffix;

/* A file we accept gives cJSON's tree; one we refuse (the scene fuzzer's seeds include
 * syntax errors) must be refused by cJSON too, when it is asked for the whole text. */
static int check_file(const char *path, const struct stat *st, int kind, struct FTW *ftw)
{
    (void)st, (void)ftw;
    size_t n = strlen(path), len = 0, k = strlen(file_suffix);
    if (kind != FTW_F || n < k || strcmp(path + n - k, file_suffix) != 0) return 0;
    char err[512];
    char *text = host_json_read_text(path, &len, err, sizeof err); /* NUL-terminated */
    if (!text) fail_msg("%s", err);
    cJSON *ours = host_json_parse(path, text, len, err, sizeof err);
    if (ours) {
        cJSON_Delete(ours);
        expect_same_tree(text, len, path);
    } else {
        cJSON *strict = cJSON_ParseWithLengthOpts(text, len + 1, NULL, true);
        cJSON_Delete(strict);
        if (strict) fail_msg("%s (cJSON reads it)", err);
    }
    free(text);
    files_checked++;
    return 0;
}

static void Jparse_same_tree_as_cJSON_on_every_json_file_of_the_repository(void **state)
{
    (void)state;
    files_checked = 0;
    file_suffix = ".json";
    assert_int_equal(nftw(SOURCE_ROOT "/examples", check_file, 16, FTW_PHYS), 0);
    assert_int_equal(nftw(SOURCE_ROOT "/tests", check_file, 16, FTW_PHYS), 0);
    if (files_checked < 60) fail_msg("only %d .json files found", files_checked);
}

static void Jparse_same_tree_as_cJSON_on_every_gltf_of_assimp_testmodels(void **state)
{
    (void)state;
    files_checked = 0;
    file_suffix = ".gltf";
    if (nftw(GLTF_MODELS, check_file, 16, FTW_PHYS) != 0 || files_checked < 40)
        fail_msg("%s: %d .gltf files: install the Debian package assimp-testmodels", GLTF_MODELS,
                 files_checked);
}

/* ---- Random documents -------------------------------------------------------------- */

typedef struct gen {
    uint64_t state;
    char *text;
    size_t len, cap;
} gen;

static uint64_t next_random(gen *g) /* xorshift64* */
{
    g->state ^= g->state >> 12;
    g->state ^= g->state << 25;
    g->state ^= g->state >> 27;
    return g->state * 0x2545F4914F6CDD1Dull;
}

static unsigned below(gen *g, unsigned n)
{
    return (unsigned)(next_random(g) >> 33) % n;
}

static void put(gen *g, const char *s, size_t n)
{
    if (g->len + n + 1 > g->cap) {
        g->cap = (g->len + n + 1) * 2;
        g->text = realloc(g->text, g->cap);
        assert_non_null(g->text);
    }
    memcpy(g->text + g->len, s, n);
    g->len += n;
}

static void puts_(gen *g, const char *s)
{
    put(g, s, strlen(s));
}

static void putf(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(gen *g, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    if (g->len + (size_t)n + 1 > g->cap) {
        g->cap = (g->len + (size_t)n + 1) * 2;
        g->text = realloc(g->text, g->cap);
        assert_non_null(g->text);
    }
    vsnprintf(g->text + g->len, (size_t)n + 1, fmt, again);
    va_end(again);
    g->len += (size_t)n;
}

static void gen_space(gen *g)
{
    static const char space[] = " \t\n\r";
    for (unsigned n = below(g, 5) < 3 ? 0 : below(g, 4); n; n--) put(g, &space[below(g, 4)], 1);
}

/* Any decimal digits, n of them. */
static void gen_digits(gen *g, unsigned n)
{
    for (; n; n--) putf(g, "%u", below(g, 10));
}

static void gen_number(gen *g)
{
    static const char *const special[] = {"0",
                                          "-0",
                                          "-0.0",
                                          "0e0",
                                          "0E+00",
                                          "2147483647",
                                          "2147483648",
                                          "-2147483648",
                                          "-2147483649",
                                          "2147483646.9",
                                          "-2147483648.5",
                                          "9007199254740993",
                                          "9007199254740992",
                                          "18446744073709551615",
                                          "18446744073709551616",
                                          "1.7976931348623157e308",
                                          "1.7976931348623159e308",
                                          "1e308",
                                          "1e309",
                                          "-1e400",
                                          "4.9e-324",
                                          "5e-324",
                                          "2.4703282292062327e-324",
                                          "2.4703282292062328e-324",
                                          "2.2250738585072011e-308",
                                          "2.2250738585072014e-308",
                                          "1e-400",
                                          "0.1",
                                          "0.30000000000000004",
                                          "123456789012345678",
                                          "1234567890123456789012345678901234567890",
                                          "3.141592653589793238462643383279",
                                          "1e22",
                                          "1e23",
                                          "9e-22",
                                          "8.98846567431158e307",
                                          "0.000000000000000000000000001"};
    const char *sign = below(g, 3) ? "" : "-";
    switch (below(g, 8)) {
    case 0:
        puts_(g, special[below(g, sizeof special / sizeof special[0])]);
        return;
    case 1:
        putf(g, "%s%u", sign, below(g, 1000));
        return;
    case 2: /* an integer of 1 to 25 digits */
        putf(g, "%s%u", sign, 1 + below(g, 9));
        gen_digits(g, below(g, 25));
        return;
    case 3: /* a fraction */
        putf(g, "%s%u.", sign, below(g, 100));
        gen_digits(g, 1 + below(g, 20));
        return;
    case 4: /* an exponent */
        putf(g, "%s%u", sign, below(g, 10));
        if (below(g, 2)) {
            puts_(g, ".");
            gen_digits(g, 1 + below(g, 17));
        }
        putf(g, "%s%s%u", below(g, 2) ? "e" : "E",
             below(g, 3) == 0 ? "+"
             : below(g, 2)    ? "-"
                              : "",
             below(g, 2) ? below(g, 30) : below(g, 400));
        return;
    case 5: /* subnormal and near the bottom of the range */
        putf(g, "%s%u.", sign, 1 + below(g, 9));
        gen_digits(g, 1 + below(g, 17));
        putf(g, "e-%u", 300 + below(g, 30));
        return;
    case 6: /* near the top of the range */
        putf(g, "%s%u.", sign, 1 + below(g, 9));
        gen_digits(g, 1 + below(g, 17));
        putf(g, "e%u", 300 + below(g, 10));
        return;
    default: /* a number of a scene: a float's shortest digits */
        putf(g, "%.*g", 1 + (int)below(g, 9),
             ((double)next_random(g) / (double)UINT64_MAX - 0.5) * 10);
        return;
    }
}

/* A string: printable ASCII, every escape, \u escapes (BMP and surrogate pairs, upper and
 * lower case hex), raw UTF-8, raw bytes that are not UTF-8, and a rare \u0000. */
static void gen_string(gen *g)
{
    static const char *const escapes[] = {"\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"};
    static const char *const raw[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                      "\x80",     "\xFF",         "\xC3"};
    unsigned n = below(g, 8) ? below(g, 10) : below(g, 80);
    puts_(g, "\"");
    while (n--) {
        unsigned k = below(g, 20);
        if (k < 12) {
            char c = (char)(0x20 + below(g, 95));
            if (c == '"' || c == '\\') c = 'x';
            put(g, &c, 1);
        } else if (k < 14) {
            puts_(g, escapes[below(g, 8)]);
        } else if (k < 16) {
            unsigned cp = below(g, 2) ? below(g, 0x800) + 1 : 0xE000 + below(g, 0x2000);
            putf(g, below(g, 2) ? "\\u%04x" : "\\u%04X", cp);
        } else if (k < 17) {
            putf(g, "\\u%04X\\u%04x", 0xD800 + below(g, 0x400), 0xDC00 + below(g, 0x400));
        } else if (k < 19) {
            puts_(g, raw[below(g, 6)]);
        } else {
            puts_(g, below(g, 20) ? "\\u00e9" : "\\u0000");
        }
    }
    puts_(g, "\"");
}

static void gen_value(gen *g, int depth)
{
    static const char *const keys[] = {"\"id\"", "\"a\"", "\"\"", "\"transform\""};
    unsigned k = depth == 0 ? below(g, 4) : depth > 6 ? 4 + below(g, 6) : below(g, 10);
    if (k < 4) {
        bool object = k < 2;
        unsigned n = below(g, 6);
        puts_(g, object ? "{" : "[");
        gen_space(g);
        for (unsigned i = 0; i < n; i++) {
            if (i) puts_(g, ","), gen_space(g);
            if (object) {
                if (below(g, 3))
                    gen_string(g);
                else
                    puts_(g, keys[below(g, 4)]); /* duplicate keys too */
                gen_space(g);
                puts_(g, ":");
                gen_space(g);
            }
            gen_value(g, depth + 1);
            gen_space(g);
        }
        puts_(g, object ? "}" : "]");
    } else if (k < 6) {
        gen_number(g);
    } else if (k < 8) {
        gen_string(g);
    } else {
        static const char *const words[] = {"true", "false", "null"};
        puts_(g, words[below(g, 3)]);
    }
}

static void Jparse_same_tree_as_cJSON_on_random_documents(void **state)
{
    (void)state;
    enum { DOCUMENTS = 4000 };
    gen g = {0};
    for (unsigned seed = 1; seed <= DOCUMENTS; seed++) {
        char what[64];
        g.state = 0x9E3779B97F4A7C15ull * seed;
        g.len = 0;
        gen_space(&g);
        if (seed % 50 == 0) { /* now and then a deep one */
            unsigned depth = 20 + below(&g, 200);
            for (unsigned i = 0; i < depth; i++) puts_(&g, i % 2 ? "[" : "{\"k\":");
            gen_value(&g, 0);
            for (unsigned i = depth; i-- > 0;) puts_(&g, i % 2 ? "]" : "}");
        } else {
            gen_value(&g, 0);
        }
        gen_space(&g);
        snprintf(what, sizeof what, "random document of seed %u", seed);
        char *text = malloc(g.len ? g.len : 1); /* no NUL after it: ASan sees overreads */
        assert_non_null(text);
        memcpy(text, g.text, g.len);
        expect_same_tree(text, g.len, what);
        free(text);
    }
    free(g.text);
}

/* Random documents with a few bytes changed, removed or added: each one we accept,
 * cJSON reads as the same tree; none crashes or reads out of bounds; every error has an
 * offset inside the text and a message. */
static void Jparse_mutated_documents_accepted_only_as_cJSON_reads_them(void **state)
{
    (void)state;
    static const char bytes[] = "{}[],:\"\\0123456789eE+-. \n\tatrufnlsu/\x00\x1f\x80\xff";
    enum { DOCUMENTS = 20000 };
    gen g = {0};
    unsigned accepted = 0;
    for (unsigned seed = 1; seed <= DOCUMENTS; seed++) {
        char what[64], msg[256];
        g.state = 0xD1B54A32D192ED03ull * seed;
        g.len = 0;
        gen_value(&g, 0);
        for (unsigned m = 1 + below(&g, 3); m && g.len; m--) {
            size_t at = below(&g, (unsigned)g.len);
            char c = bytes[below(&g, sizeof bytes - 1)];
            switch (below(&g, 3)) {
            case 0:
                g.text[at] = c;
                break;
            case 1:
                memmove(g.text + at, g.text + at + 1, g.len - at - 1), g.len--;
                break;
            default:
                put(&g, "", 1); /* room for one more */
                memmove(g.text + at + 1, g.text + at, g.len - at - 1);
                g.text[at] = c;
            }
        }
        char *text = malloc(g.len ? g.len : 1); /* no NUL after it: ASan sees overreads */
        assert_non_null(text);
        memcpy(text, g.text, g.len);
        host_jparse_error e = {0};
        cJSON *ours = host_jparse(text, g.len, NULL, &e);
        snprintf(what, sizeof what, "mutated document of seed %u", seed);
        if (ours) {
            accepted++;
            cJSON_Delete(ours);
            expect_same_tree(text, g.len, what);
        } else {
            if (e.status == HOST_JPARSE_OK || e.offset > g.len) fail_msg("%s: no error", what);
            host_jparse_describe(text, g.len, &e, msg, sizeof msg);
            assert_true(msg[0] != '\0');
        }
        free(text);
    }
    if (accepted < DOCUMENTS / 50 || accepted > DOCUMENTS / 2)
        fail_msg("%u of %d mutated documents accepted: the mutations are off", accepted, DOCUMENTS);
    free(g.text);
}

/* Numbers of hundreds and thousands of digits: the nearest double still (Debian's cJSON
 * 1.7.15 reads them too, since its fix of CVE-2023-26819). */
static void Jparse_long_numbers_are_read_exactly(void **state)
{
    (void)state;
    static char text[12000];
    snprintf(text, sizeof text, "[0.%0200d1e200, -1%0150d.5, 1%05000d.5e-4990, 0.%05000d]", 0, 0, 0,
             0);
    cJSON *root = host_jparse(text, strlen(text), NULL, NULL);
    assert_non_null(root);
    assert_true(cJSON_GetArrayItem(root, 0)->valuedouble == 0.1);
    assert_true(cJSON_GetArrayItem(root, 1)->valuedouble == -1e150);
    assert_int_equal(cJSON_GetArrayItem(root, 1)->valueint, INT_MIN);
    assert_true(cJSON_GetArrayItem(root, 2)->valuedouble == 1e10);
    assert_true(cJSON_GetArrayItem(root, 3)->valuedouble == 0);
    cJSON_Delete(root);
    expect_same_tree(text, strlen(text), "long numbers");
}

/* Every digit run length (1-24, in the integer and in the fraction) before every kind of
 * byte that ends it, and at the very end of a text of exactly its length (nothing past it
 * may be read), reads as strtod reads it. */
static void Jparse_digit_runs_of_every_length_read_as_strtod(void **state)
{
    (void)state;
    static const char *const after[] = {"]", ",1]", " ]", "e3]", "E-2]", "\n]"};
    char num[64], text[128];
    for (int a = 1; a <= 24; a++)
        for (int b = 0; b <= 24; b++) {
            int n = 0;
            for (int i = 0; i < a; i++) num[n++] = (char)('1' + (i * 7 + a) % 9);
            if (b) num[n++] = '.';
            for (int i = 0; i < b; i++) num[n++] = (char)('0' + (i * 3 + b) % 10);
            num[n] = '\0';
            for (size_t k = 0; k < sizeof after / sizeof after[0]; k++) {
                snprintf(text, sizeof text, "[%s%s", num, after[k]);
                cJSON *root = host_jparse(text, strlen(text), NULL, NULL);
                if (!root) fail_msg("'%s' refused", text);
                double want = strtod(text + 1, NULL);
                if (cJSON_GetArrayItem(root, 0)->valuedouble != want)
                    fail_msg("'%s': %.17g, strtod %.17g", text,
                             cJSON_GetArrayItem(root, 0)->valuedouble, want);
                cJSON_Delete(root);
            }
            /* bytes next to the digits in ASCII, and one with the high bit over a digit's
             * low bits, end the number too: refused where they stand */
            static const char *const wrong[] = {"/]", ":]", "\xb5]", "\x80]"};
            for (size_t k = 0; k < sizeof wrong / sizeof wrong[0]; k++) {
                snprintf(text, sizeof text, "[%s%s", num, wrong[k]);
                host_jparse_error e = {HOST_JPARSE_OK, 0, 0};
                cJSON *root = host_jparse(text, strlen(text), NULL, &e);
                if (root || e.offset != 1 + strlen(num))
                    fail_msg("'%s': %s at %zu, expected refused at %zu", text,
                             root ? "read" : "refused", e.offset, 1 + strlen(num));
                cJSON_Delete(root);
            }
            /* the number alone: the text ends right after it (no byte past it is read) */
            size_t len = strlen(num);
            char *alone = malloc(len);
            assert_non_null(alone);
            memcpy(alone, num, len);
            cJSON *root = host_jparse(alone, len, NULL, NULL);
            if (!root || root->valuedouble != strtod(num, NULL)) fail_msg("'%s' alone", num);
            cJSON_Delete(root);
            free(alone);
        }
}

/* Numbers as programs write floats (-?D{1,7}.D{1,8}, no exponent) are read in one step
 * when 17 bytes or more are left (their end from one 16-byte compare, each part's digits 8
 * at a time): the same value, bit for bit,
 * and the same end or error as the read of the same number alone at the end of a text
 * (digit by digit where it is shorter than 17 bytes), read exactly where the grammar says
 * it is a number, for 20,000 random numbers of that form and
 * next to it (a leading zero, 8 digits before the point, 9 after it, an exponent, a point
 * with no digit after it, a sign alone; an error where the text alone ends is its end). */
static void Jparse_short_numbers_read_in_one_step_as_digit_by_digit(void **state)
{
    (void)state;
    uint64_t s = 0x2545F4914F6CDD1Dull;
    char num[48], padded[160];
    for (int round = 0; round < 20000; round++) {
        size_t n = 0;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint64_t bits = s;
        if (bits & 1) num[n++] = '-';
        int a = 1 + (int)((bits >> 1) % 9), b = (int)((bits >> 5) % 11) - 1; /* b -1: no '.' */
        for (int i = 0; i < a; i++) num[n++] = (char)('0' + (bits >> (9 + i * 3)) % 10);
        if (round % 5 && a > 1 && num[n - a] == '0') num[n - a] = '1'; /* mostly no leading 0 */
        if (b >= 0) num[n++] = '.';
        for (int i = 0; i < b; i++) num[n++] = (char)('0' + (bits >> (36 + i * 2)) % 10);
        if ((bits >> 60) == 0) n += (size_t)snprintf(num + n, sizeof num - n, "e%d", (int)a - 4);
        num[n] = '\0';
        const char *digits1 = num + (num[0] == '-');
        bool valid = b != 0 && !(a > 1 && digits1[0] == '0'); /* JSON's grammar */
        /* alone: the text ends with the number, under 17 bytes: digit by digit */
        char *alone = malloc(n);
        assert_non_null(alone);
        memcpy(alone, num, n);
        host_jparse_error e1 = {HOST_JPARSE_OK, 0, 0}, e2 = {HOST_JPARSE_OK, 0, 0};
        cJSON *v1 = host_jparse(alone, n, NULL, &e1);
        snprintf(padded, sizeof padded, "%s%*s", num, 20 + (int)(bits >> 58), "");
        cJSON *v2 = host_jparse(padded, strlen(padded), NULL, &e2);
        if (!v1 != !v2 || (v1 && memcmp(&v1->valuedouble, &v2->valuedouble, sizeof(double))) ||
            (!v1 && (e1.offset != e2.offset || (e1.offset < n && e1.status != e2.status))))
            fail_msg("'%s': alone %s %.17g (error %d at %zu), followed by spaces %s %.17g "
                     "(error %d at %zu)",
                     num, v1 ? "read" : "refused", v1 ? v1->valuedouble : 0, e1.status, e1.offset,
                     v2 ? "read" : "refused", v2 ? v2->valuedouble : 0, e2.status, e2.offset);
        if (!v1 != !valid)
            fail_msg("'%s': %s, but it is %s JSON", num, v1 ? "read" : "refused",
                     valid ? "valid" : "no");
        if (v1 && v1->valuedouble != strtod(num, NULL))
            fail_msg("'%s': %.17g, strtod %.17g", num, v1->valuedouble, strtod(num, NULL));
        cJSON_Delete(v1);
        cJSON_Delete(v2);
        free(alone);
    }
    /* floats as a program prints them (%.9g and %.8g), in an array as a scene has them */
    for (int round = 0; round < 20000; round++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        float f = (float)((double)(s >> 11) / 9007199254740992.0 * 8.0 - 4.0);
        snprintf(num, sizeof num, round & 1 ? "%.9g" : "%.8g", (double)f);
        snprintf(padded, sizeof padded, "[%s, %s, 0.5]", num, num);
        cJSON *v = host_jparse(padded, strlen(padded), NULL, NULL);
        if (!v || cJSON_GetArrayItem(v, 0)->valuedouble != strtod(num, NULL))
            fail_msg("'%s' in '%s': %.17g, strtod %.17g", num, padded,
                     v ? cJSON_GetArrayItem(v, 0)->valuedouble : 0, strtod(num, NULL));
        cJSON_Delete(v);
    }
}

/* ---- Strings and values, beside cJSON ---------------------------------------------- */

static void Jparse_strings_decode_as_cJSON_does(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "[\"\\u0041\\u00e9\\u20AC\\uD83D\\uDE00\\uDBFF\\uDFFF\"]", /* 1 to 4 UTF-8 bytes */
        "[\"a\\u0000b\", \"\\u0000\"]",                            /* \u0000 ends the C string */
        "[\"\\b\\f\\n\\r\\t\\\"\\\\\\/\"]",
        "[\"\xFF\xC3 raw bytes \x80 as they are\"]",
        "{\"k\": 1, \"k\": 2, \"\": {\"\": []}}", /* duplicate and empty keys, in order */
        "\xEF\xBB\xBF {\"bom\": true}",           /* a BOM, skipped */
        "[-0, 0, 1e400, -1e400, 2147483648, -2147483649, 2147483647.9, -2147483648.9]",
        "\"a lone string\"",
        "  17  ",
        "null",
        "[[], {}, [[]], {\"a\": {}}]",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        expect_same_tree(docs[i], strlen(docs[i]), docs[i]);
    cJSON *r = host_jparse("[\"a\\u0000b\"]", 12, NULL, NULL);
    assert_non_null(r);
    assert_string_equal(r->child->valuestring, "a");
    cJSON_Delete(r);
}

/* ---- Errors: message and exact line:col -------------------------------------------- */

typedef struct error_case {
    const char *text;
    size_t len;    /* 0: strlen(text) */
    int line, col; /* 0: no position (an empty file) */
    const char *what;
} error_case;

static void expect_parse_error(const error_case *c)
{
    char err[512], want[512];
    size_t len = c->len ? c->len : strlen(c->text);
    char *text = malloc(len ? len : 1); /* exactly len bytes, no NUL after them */
    assert_non_null(text);
    memcpy(text, c->text, len);
    cJSON *root = host_json_parse("t.json", text, len, err, sizeof err);
    if (root) fail_msg("'%s' was accepted", c->text);
    if (c->line)
        snprintf(want, sizeof want, "t.json:%d:%d: %s", c->line, c->col, c->what);
    else
        snprintf(want, sizeof want, "t.json: %s", c->what);
    if (strcmp(err, want) != 0) fail_msg("'%s':\n got  %s\n want %s", c->text, err, want);
    static char dummy;
    host_json_arena *arena = (host_json_arena *)(void *)&dummy; /* must come back NULL */
    err[0] = '\0';
    assert_null(host_json_parse_arena("t.json", text, len, &arena, err, sizeof err));
    assert_null(arena);
    if (strcmp(err, want) != 0) fail_msg("'%s' (arena):\n got  %s\n want %s", c->text, err, want);
    free(text);
}

static void Jparse_errors_name_what_and_where(void **state)
{
    (void)state;
    static const error_case cases[] = {
        {"", 0, 0, 0, "the file is empty, expected a JSON value"},
        {" \n\t\r ", 0, 0, 0, "the file is empty, expected a JSON value"},
        {"\xEF\xBB\xBF  ", 0, 0, 0, "the file is empty, expected a JSON value"},
        {"[1] x", 0, 1, 5, "unexpected text after the JSON value"},
        {"{\"a\": 1}\n\n   x\n", 0, 3, 4, "unexpected text after the JSON value"},
        {"[1]\0", 4, 1, 4, "unexpected text after the JSON value"},
        {"{\"a\":1 \"b\":2}", 0, 1, 8, "expected ',' or '}' after an object member, found '\"'"},
        {"[1 2]", 0, 1, 4, "expected ',' or ']' after an array element, found '2'"},
        {"{\n\t\"k\": [1,\n\t\t2 3]}", 0, 3, 5,
         "expected ',' or ']' after an array element, found '3'"},
        {"{1: 2}", 0, 1, 2, "expected a string key, found '1'"},
        {"{\"a\": 1, 'b': 2}", 0, 1, 10,
         "expected a string key, found \"'\" (JSON strings take '\"')"},
        {"{\"a\" 1}", 0, 1, 6, "expected ':' after an object key, found '1'"},
        {"[1,]", 0, 1, 3, "a ',' before ']' or '}' (JSON has no trailing commas)"},
        {"{\"a\":\n  [1,\n   2,\n  ]}", 0, 3, 5,
         "a ',' before ']' or '}' (JSON has no trailing commas)"},
        {"{\"a\": 1,}", 0, 1, 8, "a ',' before ']' or '}' (JSON has no trailing commas)"},
        {"\"abc", 0, 1, 1, "unterminated string"},
        {"[\"a\", \"b\\", 0, 1, 7, "unterminated string"},
        {"[\"\\u12", 0, 1, 2, "unterminated string"},
        {"[\"\\uD800", 0, 1, 2, "unterminated string"},
        {"[\"\\uD800\\", 0, 1, 2, "unterminated string"},
        {"[\"a\nb\"]", 0, 1, 4, "control character in a string (escape it)"},
        {"[\"a\tb\"]", 0, 1, 4, "control character in a string (escape it)"},
        {"[\"a\\nb\\q\"]", 0, 1, 7, "invalid escape '\\q' in a string"},
        {"[\"\\\x01\"]", 0, 1, 3, "invalid escape in a string"},
        {"[\"\\u12G4\"]", 0, 1, 3, "invalid \\u escape (expected 4 hex digits)"},
        {"[\"\\uD800\\u00G0\"]", 0, 1, 9, "invalid \\u escape (expected 4 hex digits)"},
        {"[\"\\uD800\"]", 0, 1, 3, "unpaired UTF-16 surrogate"},
        {"[\"a\\u0000b\"]", 0, 1, 4,
         "\\u0000 in a string: a NUL character would cut it short (cJSON strings end at a NUL)"},
        {"{\"k\\u0000\": 1}", 0, 1, 4,
         "\\u0000 in a string: a NUL character would cut it short (cJSON strings end at a NUL)"},
        {"[\"\\uDC00\"]", 0, 1, 3, "unpaired UTF-16 surrogate"},
        {"[\"\\uD800\\u0041\"]", 0, 1, 3, "unpaired UTF-16 surrogate"},
        {"[\"\\uD800\\uD800\"]", 0, 1, 3, "unpaired UTF-16 surrogate"},
        {"[\"x\\uD83D x\"]", 0, 1, 4, "unpaired UTF-16 surrogate"},
        {"[01]", 0, 1, 2, "invalid number: a leading zero"},
        {"[-00.5]", 0, 1, 3, "invalid number: a leading zero"},
        {"[+1]", 0, 1, 2, "invalid number: a '+' sign"},
        {"[.5]", 0, 1, 2, "invalid number: no digit before the '.'"},
        {"[1.]", 0, 1, 4, "invalid number: expected a digit, found ']'"},
        {"[1.e5]", 0, 1, 4, "invalid number: expected a digit, found 'e5'"},
        {"[1e]", 0, 1, 4, "invalid number: expected a digit, found ']'"},
        {"[1E+]", 0, 1, 5, "invalid number: expected a digit, found ']'"},
        {"[-]", 0, 1, 3, "invalid number: expected a digit, found ']'"},
        {"[-Infinity]", 0, 1, 3, "invalid number: expected a digit, found 'Infinity'"},
        {"[NaN]", 0, 1, 2, "expected a JSON value, found 'NaN'"},
        {"{\"a\": Infinity}", 0, 1, 7, "expected a JSON value, found 'Infinity'"},
        {"{\"a\": tru}", 0, 1, 7, "expected a JSON value, found 'tru'"},
        {"[nul, 1]", 0, 1, 2, "expected a JSON value, found 'nul'"},
        {"{\n  \"a\": 1,\n  \"b\": ]\n}\n", 0, 3, 8, "expected a JSON value, found ']'"},
        {"[1, // a comment\n 2]", 0, 1, 5,
         "expected a JSON value, found '/' (JSON has no comments)"},
        {"/* a comment */ 1", 0, 1, 1, "expected a JSON value, found '/' (JSON has no comments)"},
        {"[1,\0 2]", 7, 1, 4, "expected a JSON value, found a NUL byte"},
        {"[\"a\0\"]", 6, 1, 4, "control character in a string (escape it)"},
        {"[\xE2\x80\x9Cx\xE2\x80\x9D]", 0, 1, 2, "expected a JSON value, found '\xE2\x80\x9C'"},
        {"[\x01]", 0, 1, 2, "expected a JSON value, found byte 0x01"},
        {"[\xFF]", 0, 1, 2, "expected a JSON value, found byte 0xFF"},
        {"\f1", 0, 1, 1, "expected a JSON value, found byte 0x0C"},
        {"{\"a\":[1,2", 0, 1, 10, "unexpected end of the file"},
        {"{\"a\"", 0, 1, 5, "unexpected end of the file"},
        {"{\"a\":", 0, 1, 6, "unexpected end of the file"},
        {"[tr", 0, 1, 4, "unexpected end of the file"},
        {"[-", 0, 1, 3, "unexpected end of the file"},
        {"[1.5e", 0, 1, 6, "unexpected end of the file"},
        {"[\n", 0, 2, 1, "unexpected end of the file"},
        {"\xEF\xBB\xBF[1,]", 0, 1, 6, "a ',' before ']' or '}' (JSON has no trailing commas)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_parse_error(&cases[i]);
}

/* A document with every kind of value; its every proper prefix is an error, never a
 * crash or an overread (each is copied to a buffer of exactly its size). */
/* A key twice in one object: cJSON keeps both and a lookup finds one, so what the file
 * says would be dropped in silence. The host's reads refuse it, naming both places; the
 * same key in sibling or nested objects is fine. */
static void Jparse_a_key_twice_in_one_object_is_refused_naming_both(void **state)
{
    (void)state;
    static const error_case cases[] = {
        {"{\"a\": 1, \"a\": 2}", 0, 1, 10,
         "duplicate key \"a\" (its first at line 1, column 2): a key stands once in an object"},
        {"{\n  \"a\": 1,\n  \"b\": {\"a\": 1},\n  \"a\": 3\n}", 0, 4, 3,
         "duplicate key \"a\" (its first at line 2, column 3): a key stands once in an object"},
        {"[{\"x\": {\"k\": 1, \"j\": 2, \"k\": 3}}]", 0, 1, 25,
         "duplicate key \"k\" (its first at line 1, column 9): a key stands once in an object"},
        {"{\"b\": 1, \"c\": 1, \"c\": 1, \"b\": 1}", 0, 1, 18,
         "duplicate key \"c\" (its first at line 1, column 10): a key stands once in an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_parse_error(&cases[i]);

    /* A large object (sorted, not pairwise): the earliest second occurrence is named. */
    char big[4096];
    size_t n = 0;
    n += (size_t)snprintf(big + n, sizeof big - n, "{");
    for (int i = 0; i < 40; i++) {
        int key = i == 30 ? 7 : i == 35 ? 3 : i == 38 ? 30 : i; /* k7 again at 30, k3 at 35 */
        n += (size_t)snprintf(big + n, sizeof big - n, "%s\"k%d\": %d", i ? ", " : "", key, i);
    }
    snprintf(big + n, sizeof big - n, "}");
    char err[512];
    assert_null(host_json_parse("t.json", big, strlen(big), err, sizeof err));
    int col_30 = (int)(strstr(big, "\"k7\": 30") - big) + 1,
        col_7 = (int)(strstr(big, "\"k7\": 7") - big) + 1;
    char want[512];
    snprintf(want, sizeof want,
             "t.json:1:%d: duplicate key \"k7\" (its first at line 1, column %d): a key stands "
             "once in an object",
             col_30, col_7);
    assert_string_equal(err, want);

    /* The smallest key of a large object twice: the first two of the sorted keys. */
    for (int objects = 17; objects <= 40; objects += 23) {
        n = 0;
        n += (size_t)snprintf(big + n, sizeof big - n, "{");
        for (int i = objects - 1; i >= 0; i--) /* largest first, "k00" last */
            n += (size_t)snprintf(big + n, sizeof big - n, "\"k%02d\": %d, ", i, i);
        snprintf(big + n, sizeof big - n, "\"k00\": 0}");
        assert_null(host_json_parse("t.json", big, strlen(big), err, sizeof err));
        snprintf(want, sizeof want,
                 "t.json:1:%d: duplicate key \"k00\" (its first at line 1, column %d): a key "
                 "stands once in an object",
                 (int)(strrchr(big, 'k') - big), (int)(strstr(big, "\"k00\"") - big) + 1);
        assert_string_equal(err, want);
    }

    /* Accepted: the same key in siblings and nested, and 40 distinct keys. */
    static const char *const fine[] = {
        "[{\"a\": 1}, {\"a\": 2}]",
        "{\"a\": {\"a\": {\"a\": 1}}, \"b\": {\"a\": 2}}",
        "{\"a\": [{\"b\": 1, \"c\": 2}, {\"b\": 1, \"c\": 2}], \"b\": 3}",
    };
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        cJSON *r = host_json_parse("t.json", fine[i], strlen(fine[i]), err, sizeof err);
        if (!r) fail_msg("'%s' refused: %s", fine[i], err);
        cJSON_Delete(r);
    }
    n = 1;
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s\"k%d\": %d", i ? ", " : "", i, i);
    snprintf(big + n, sizeof big - n, "}");
    cJSON *r = host_json_parse("t.json", big, strlen(big), err, sizeof err);
    if (!r) fail_msg("40 distinct keys refused: %s", err);
    cJSON_Delete(r);

    /* host_jparse itself reads as cJSON does: both members kept. */
    r = host_jparse("{\"a\": 1, \"a\": 2}", 16, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(cJSON_GetArraySize(r), 2);
    cJSON_Delete(r);
}

static void Jparse_every_truncation_is_refused_at_its_end(void **state)
{
    (void)state;
    static const char doc[] =
        "\xEF\xBB\xBF{\"version\": 1, \"list\": [true, false, null, -0.5e-3, 12, 0, "
        "\"s\\u00e9\\n\","
        "\n  {\"nested\": [[], {}, \"\\uD83D\\uDE00\"], \"k\\\"ey\": -1E+2}],\r\n\t\"end\": \"x\"}";
    size_t len = sizeof doc - 1;
    char err[512];
    for (size_t n = 0; n < len; n++) {
        char *text = malloc(n ? n : 1);
        assert_non_null(text);
        memcpy(text, doc, n);
        host_jparse_error e = {0};
        cJSON *root = host_jparse(text, n, NULL, &e);
        if (root) fail_msg("the first %zu bytes were accepted", n);
        bool ok = (n < 3 && e.status == HOST_JPARSE_EXPECTED_VALUE) || /* part of the BOM */
                  e.status == HOST_JPARSE_EMPTY || e.status == HOST_JPARSE_UNTERMINATED_STRING ||
                  (e.status == HOST_JPARSE_END_OF_TEXT && e.offset == n);
        if (!ok) fail_msg("the first %zu bytes: status %d at %zu", n, (int)e.status, e.offset);
        assert_null(host_json_parse("cut.json", text, n, err, sizeof err));
        host_json_arena *arena = NULL;
        assert_null(host_json_parse_arena("cut.json", text, n, &arena, err, sizeof err));
        free(text);
    }
    expect_same_tree(doc, len, "the whole document");
}

/* 1000 nested arrays and objects are read (cJSON's limit); the 1001st is refused at its
 * bracket. */
static void Jparse_nesting_1000_accepted_1001_refused(void **state)
{
    (void)state;
    enum { N = HOST_JPARSE_MAX_DEPTH + 1 };
    char *text = malloc(2 * 5 * N + 16), err[512];
    assert_non_null(text);
    for (int deep = N - 1; deep <= N; deep++) {
        size_t len = 0;
        for (int i = 0; i < deep; i++) len += (size_t)sprintf(text + len, i % 3 ? "[" : "{\"a\":");
        text[len++] = '0';
        for (int i = deep; i-- > 0;) text[len++] = i % 3 ? ']' : '}';
        cJSON *root = host_json_parse("deep.json", text, len, err, sizeof err);
        if (deep == N - 1) {
            if (!root) fail_msg("%s", err);
            expect_same_tree(text, len, "1000 levels");
            int levels = 0;
            for (cJSON *v = root; v->child; v = v->child) levels++; /* the containers */
            assert_int_equal(levels, N - 1);
            cJSON_Delete(root);
        } else {
            assert_null(root);
            assert_null(cJSON_ParseWithLength(text, len)); /* cJSON's limit too */
            /* the 1001st opener, after 334 '{"a":' and 666 '[' */
            char want[128];
            snprintf(want, sizeof want, "deep.json:1:%d: nesting deeper than 1000 levels",
                     334 * 5 + 666 + 1);
            assert_string_equal(err, want);
        }
    }
    free(text);
}

/* ---- The arena ----------------------------------------------------------------------- */

/* A scene as examples/gen_scene.c writes them: the first block holds it all. */
/* Every byte value at every place of a long string (the quick scans take 16 and 8 bytes
 * at a time): a control byte is refused where it stands, '"' ends the string early, every
 * other byte is part of it. */
static void Jparse_every_byte_at_every_place_of_a_long_string(void **state)
{
    (void)state;
    for (int at = 0; at < 40; at++) {
        for (int c = 1; c < 256; c++) {
            char text[64];
            memset(text, 'a', sizeof text);
            text[0] = '"';
            text[1 + at] = (char)c;
            text[50] = '"';
            host_jparse_error e;
            cJSON *v = host_jparse(text, 51, NULL, &e);
            if (c < 0x20) {
                assert_null(v);
                assert_int_equal(e.status, HOST_JPARSE_CONTROL_CHARACTER);
                assert_int_equal(e.offset, 1 + at);
            } else if (c == '"') {
                assert_null(v);
                assert_int_equal(e.status, HOST_JPARSE_TRAILING_TEXT);
            } else if (c == '\\') {
                assert_null(v); /* "\a" is no escape */
                assert_int_equal(e.status, HOST_JPARSE_INVALID_ESCAPE);
                assert_int_equal(e.offset, 1 + at);
            } else {
                assert_non_null(v);
                assert_int_equal(strlen(v->valuestring), 49);
                assert_int_equal((unsigned char)v->valuestring[at], c);
                cJSON_Delete(v);
            }
        }
    }
}

/* A SKIM reader passes over a value by its brackets and strings: brackets inside strings
 * and the bytes the quick scan also flags ('Y', '_', 'y', DEL) do not count; a bracket
 * that closes the wrong kind, a string that does not end, a text that ends inside fail. */
static void Jparse_skim_matches_brackets_and_strings(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok;
    } cases[] = {
        {"{\"a\": [1, \"Y_y]}\\\"\", {\"b\": null}], \"Yy_\\u0041\": 5, \"z\": \"\x7f\"} ,", true},
        {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"YYYYYYYYYYYYYYYYYYYYYYYYY]\"]]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]",
         true},
        {"[1, 2}", false},
        {"{\"a\": [}]", false},
        {"[\"never ends]", false},
        {"[[1]", false},
        {"]", false},
        {"-12.5e3, 4", true},
    };
    host_jreader *r = host_jr_new();
    assert_non_null(r);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *t = cases[i].text;
        ecs_json_reader *api = host_jr_api(r);
        host_jr_start(r, t, strlen(t), 0, HOST_JR_SKIM);
        bool ok = (api->skip)(api); /* cmocka has a skip() macro */
        if (ok != cases[i].ok) fail_msg("skim of %s: %s", t, ok ? "passed" : "failed");
        if (ok) {
            size_t end = host_jr_offset(r);
            const char *comma = strrchr(t, ',');
            assert_true(host_jr_complete(r));
            if (comma)
                assert_int_equal(end, (size_t)(comma - t) - (comma[-1] == ' '));
            else
                assert_int_equal(end, strlen(t));
        }
    }
    host_jr_free(r);
}

/* The skim's answer by its definition, a byte at a time: the end of the value at t[0]
 * (brackets matched, strings terminated, an escape's next byte passed over, no control
 * byte in a string), or -1. */
static long skim_reference(const char *t, size_t len)
{
    char kinds[1001];
    size_t i = 0;
    int depth = 0;
    if (t[0] != '"' && t[0] != '[' && t[0] != '{') {
        while (i < len && !strchr(" \t\r\n,]}", t[i])) i++;
        return i ? (long)i : -1;
    }
    do {
        char c = t[i];
        if (c == '"') {
            for (i++;; i++) {
                if (i >= len || (unsigned char)t[i] < 0x20) return -1;
                if (t[i] == '"') break;
                if (t[i] == '\\' && ++i >= len) return -1;
            }
            i++;
        } else if (c == '{' || c == '[') {
            if (depth == 1000) return -1;
            kinds[depth++] = c;
            i++;
        } else if (c == '}' || c == ']') {
            if (--depth < 0 || kinds[depth] != (c == '}' ? '{' : '[')) return -1;
            i++;
        } else {
            i++;
        }
    } while (depth > 0 && i < len);
    return depth == 0 ? (long)i : -1;
}

/* The skim (the load's first pass over components) gives its definition's answer for
 * random texts of brackets, strings, escapes, control and high bytes, short and long (its
 * 64-byte blocks, a string across their edges, a text ending anywhere). */
static void Jparse_skim_answers_as_its_definition(void **state)
{
    (void)state;
    static const char *const parts[] = {"{",
                                        "}",
                                        "[",
                                        "]",
                                        "\"",
                                        "\"abc\"",
                                        "\\\"",
                                        "\\\\",
                                        "\\",
                                        "x",
                                        " ",
                                        ", ",
                                        ":",
                                        "\x01",
                                        "\xc3\xa9",
                                        "\x7f",
                                        "\"a long string that crosses the edge of a block\"",
                                        "1.5",
                                        "{\"k\": [1, 2, 3]}"};
    host_jreader *r = host_jr_new();
    assert_non_null(r);
    uint32_t seed = 12345;
    char text[1200];
    for (int round = 0; round < 60000; round++) {
        size_t n = 0;
        text[n++] = "{[\"x"[round % 4];
        int want_parts = 1 + (int)((seed >> 8) % (round % 7 == 0 ? 200 : 24));
        for (int k = 0; k < want_parts && n < 1000; k++) {
            seed = seed * 1103515245u + 12345u;
            const char *part = parts[(seed >> 16) % (sizeof parts / sizeof parts[0])];
            size_t m = strlen(part);
            memcpy(text + n, part, m);
            n += m;
        }
        /* often a balanced close, so that texts end well too */
        for (int k = 0; k < 3 && n < 1100 && (seed & (1u << k)); k++) text[n++] = "}]\""[k];
        char *exact = malloc(n); /* nothing past the text can be read */
        assert_non_null(exact);
        memcpy(exact, text, n);
        long want = skim_reference(exact, n);
        ecs_json_reader *api = host_jr_api(r);
        host_jr_start(r, exact, n, 0, HOST_JR_SKIM);
        bool ok = (api->skip)(api);
        long got = ok ? (long)host_jr_offset(r) : -1;
        if (got != want)
            fail_msg("round %d: skim %ld, by definition %ld, of '%.*s'", round, got, want, (int)n,
                     exact);
        free(exact);
    }
    host_jr_free(r);
}

static void Jparse_arena_holds_a_scene_in_one_block(void **state)
{
    (void)state;
    gen g = {0};
    puts_(&g, "{\n  \"version\": 1,\n  \"entities\": [\n");
    for (int i = 0; i < 20000; i++)
        putf(&g,
             "%s    {\"id\": \"n%d\", \"debug_name\": \"tree 0 node %d\", \"transform\": "
             "{\"position\": [%.8g, %.8g, %.8g], \"rotation\": [0.5127606, 0.027629333, "
             "0.33113128, 0.79162186], \"scale\": [3.2894912, 3.228569, 2.897981]%s}}",
             i ? ",\n" : "", i, i, i * 0.37, -i * 1.3e-3, i * 12.5,
             i ? ", \"parent\": \"n0\"" : "");
    puts_(&g, "\n  ]\n}\n");
    char err[256];
    host_json_arena *arena = NULL;
    cJSON *root = host_json_parse_arena("scene.json", g.text, g.len, &arena, err, sizeof err);
    if (!root) fail_msg("%s", err);
    size_t used = 0;
    assert_int_equal(host_json_arena_blocks(arena, &used), 1);
    assert_true(used > g.len); /* 20000 * 19 nodes of 64 bytes at least */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "entities")), 20000);
    host_json_arena_free(arena);
    expect_same_tree(g.text, g.len, "a generated scene");
    free(g.text);
}

/* Trees of several parses share an arena; dense documents grow it by a few blocks. */
static void Jparse_arena_grows_and_holds_several_trees(void **state)
{
    (void)state;
    enum { N = 100000 };
    char *text = malloc(2 * N + 2);
    assert_non_null(text);
    size_t len = 0;
    text[len++] = '[';
    for (int i = 0; i < N; i++) text[len++] = '0', text[len++] = ',';
    text[len - 1] = ']'; /* [0,0,...]: 32 bytes of nodes per byte of text */
    host_json_arena *arena = host_json_arena_new(16);
    assert_non_null(arena);
    assert_int_equal(host_json_arena_blocks(arena, NULL), 0);
    cJSON *a = host_jparse(text, len, arena, NULL);
    cJSON *b = host_jparse("{\"name\": \"kept\"}", 16, arena, NULL);
    assert_non_null(a);
    assert_non_null(b);
    size_t used = 0, blocks = host_json_arena_blocks(arena, &used);
    assert_true(blocks >= 2 && blocks <= 20);
    assert_true(used >= (size_t)(N + 1) * sizeof(cJSON));
    assert_int_equal(cJSON_GetArraySize(a), N);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(b, "name")->valuestring, "kept");
    host_json_arena_free(arena);
    host_json_arena_free(NULL);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Jparse_same_tree_as_cJSON_on_every_json_file_of_the_repository),
        cmocka_unit_test(Jparse_same_tree_as_cJSON_on_every_gltf_of_assimp_testmodels),
        cmocka_unit_test(Jparse_every_byte_at_every_place_of_a_long_string),
        cmocka_unit_test(Jparse_skim_matches_brackets_and_strings),
        cmocka_unit_test(Jparse_skim_answers_as_its_definition),
        cmocka_unit_test(Jparse_same_tree_as_cJSON_on_random_documents),
        cmocka_unit_test(Jparse_mutated_documents_accepted_only_as_cJSON_reads_them),
        cmocka_unit_test(Jparse_long_numbers_are_read_exactly),
        cmocka_unit_test(Jparse_digit_runs_of_every_length_read_as_strtod),
        cmocka_unit_test(Jparse_short_numbers_read_in_one_step_as_digit_by_digit),
        cmocka_unit_test(Jparse_strings_decode_as_cJSON_does),
        cmocka_unit_test(Jparse_errors_name_what_and_where),
        cmocka_unit_test(Jparse_a_key_twice_in_one_object_is_refused_naming_both),
        cmocka_unit_test(Jparse_every_truncation_is_refused_at_its_end),
        cmocka_unit_test(Jparse_nesting_1000_accepted_1001_refused),
        cmocka_unit_test(Jparse_arena_holds_a_scene_in_one_block),
        cmocka_unit_test(Jparse_arena_grows_and_holds_several_trees),
    };
    return cmocka_run_group_tests_name("jparse", tests, NULL, NULL);
}
