/* SPDX-License-Identifier: MIT */
/* test_jwrite.c: cmocka tests of the JSON writer (host/scene/jwrite.c) and of number.cc.
 * Numbers: the shortest text that reads back exactly, checked against strtod/strtof, a
 * printf reference and cJSON's %1.15g text; layout: random cJSON trees printed by
 * host_json_print and by cJSON_Print, byte for byte; the plugin-facing ecs_json_writer
 * calls, every misuse the writer reports, and host_number_parse against strtod; a save's
 * deferred floats (host_jw_expand) and its writer thread (spool.c).
 * Random inputs come from fixed seeds; a failure prints the input (and seed) at fault. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jwrite.h"
#include "number.h"
#include "spool.h"

/* ---- Helpers: random numbers, bits, digit counts ----------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t below(rng *r, uint64_t n)
{
    return next(r) % n;
}

static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double double_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint32_t fbits_of(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static float float_of(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint64_t pow10u(int p)
{
    uint64_t v = 1;
    while (p-- > 0) v *= 10;
    return v;
}

/* The decimal a number's text stands for: *d * 10^*k, *d without trailing zeros (0 for
 * "0"); returns its digit count. */
static int decimal_of(const char *t, uint64_t *d, int *k)
{
    uint64_t m = 0;
    int n = 0, shift = 0, zeros = 0; /* zeros: trailing zeros not yet in m */
    bool point = false;
    for (; *t && *t != 'e'; t++) {
        if (*t == '.') point = true;
        if (*t < '0' || *t > '9') continue;
        if (point) shift--;
        if (*t == '0') {
            zeros += n > 0;
            continue;
        }
        for (; zeros; zeros--, n++) m *= 10;
        m = m * 10 + (uint64_t)(*t - '0');
        n++;
    }
    *d = m;
    *k = shift + zeros + (*t == 'e' ? atoi(t + 1) : 0);
    return n;
}

/* Does s read back (strtof when f32, else strtod) as exactly x? */
static bool reads_back(const char *s, double x, bool f32)
{
    if (f32) return fbits_of(strtof(s, NULL)) == fbits_of((float)x);
    return bits_of(strtod(s, NULL)) == bits_of(x);
}

/* Does some decimal of fewer than n digits read back as a (> 0), given d * 10^k of n
 * digits (the last not 0) that does? Only the two (n-1)-digit decimals around d * 10^k need
 * a look: the decimals that read back as a form an interval, so if one beyond them did, the
 * one between it and d * 10^k would too. A decimal of fewer digits is one of n-1 as well. */
static bool fewer_digits_read_back(double a, uint64_t d, int k, bool f32)
{
    char s[48];
    snprintf(s, sizeof s, "%" PRIu64 "e%d", d / 10, k + 1);
    if (reads_back(s, a, f32)) return true;
    snprintf(s, sizeof s, "%" PRIu64 "e%d", d / 10 + 1, k + 1);
    return reads_back(s, a, f32);
}

/* The reference: the first p for which printf's nearest p digits read back as a. */
static int reference_digits(double a, bool f32)
{
    char s[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*e", p - 1, a);
        if (reads_back(s, a, f32)) return p;
    }
    return 99;
}

/* cJSON_PrintUnformatted of x as a number must be exactly t. */
static void expect_cjson_text(double x, const char *t, const char *what)
{
    cJSON *v = cJSON_CreateNumber(x);
    char *s = cJSON_PrintUnformatted(v);
    assert_non_null(s);
    if (strcmp(s, t))
        fail_msg("%s %a (bits %016" PRIx64 "): wrote '%s', cJSON prints '%s'", what, x, bits_of(x),
                 t, s);
    cJSON_free(s);
    cJSON_Delete(v);
}

/* t is laid out as printf's %.15g (%.17g past 15 digits) would lay out its n digits:
 * printed from a long double nearest t, whose 15 or 17 nearest digits are t's own. */
static void expect_g_layout(const char *t, int n, double x)
{
#if LDBL_MANT_DIG >= 64
    char s[64];
    snprintf(s, sizeof s, "%.*Lg", n <= 15 ? 15 : 17, strtold(t, NULL));
    if (strcmp(s, t)) fail_msg("%a: wrote '%s', %%g layout is '%s'", x, t, s);
#else
    (void)t, (void)n, (void)x;
#endif
}

typedef struct number_stats {
    long checked, cjson_compared, referenced, shorter_than_reference;
    int max_digits;
} number_stats;

enum { CHECK_LAYOUT = 1, CHECK_REFERENCE = 2, CHECK_ALL = 3 };

/* Where the shortest may have fewer digits than printf's nearest ones: at a power of two,
 * where the decimals that read back reach twice as far above it as below. */
static bool is_power_of_two(double a, bool f32)
{
    if (f32) return (fbits_of((float)a) & 0x7fffff) == 0;
    return (bits_of(a) & 0xfffffffffffffu) == 0;
}

/* Every promise of host_json_number_text for x: it reads back bitwise, no text of
 * fewer digits does, cJSON's text when <= 15 digits and x normal; with CHECK_LAYOUT the
 * %g layout, with CHECK_REFERENCE as many digits as the printf reference (or fewer at a
 * power of two). Returns the digit count. */
static int check_f64(double x, unsigned checks, number_stats *st)
{
    char t[48];
    memset(t, 'x', sizeof t);
    size_t len = host_json_number_text(x, t);
    if (len >= 32 || strlen(t) != len) fail_msg("%a: length %zu for '%.40s'", x, len, t);
    st->checked++;
    if (x == 0) {
        assert_string_equal(t, signbit(x) ? "-0" : "0");
        return 1;
    }
    char *end;
    double back = strtod(t, &end);
    if (end != t + len || bits_of(back) != bits_of(x))
        fail_msg("%a (bits %016" PRIx64 "): wrote '%s', which reads back as %a", x, bits_of(x), t,
                 back);
    uint64_t d;
    int k, n = decimal_of(t, &d, &k);
    if (n < 1 || n > 17) fail_msg("%a: '%s' has %d digits", x, t, n);
    if (n > 1 && fewer_digits_read_back(fabs(x), d, k, false))
        fail_msg("%a (bits %016" PRIx64 "): wrote '%s' (%d digits), %d digits suffice", x,
                 bits_of(x), t, n, n - 1);
    if (checks & CHECK_LAYOUT) expect_g_layout(t, n, x);
    if (n <= 15 && isnormal(x)) {
        expect_cjson_text(x, t, "double");
        st->cjson_compared++;
    }
    if (checks & CHECK_REFERENCE) {
        int r = reference_digits(fabs(x), false);
        if (r != n && (r < n || !is_power_of_two(fabs(x), false)))
            fail_msg("%a: wrote '%s' (%d digits), the reference needs %d", x, t, n, r);
        st->referenced++;
        st->shorter_than_reference += r > n;
    }
    if (n > st->max_digits) st->max_digits = n;
    return n;
}

/* A random finite double: any bit pattern, often a subnormal or a power of two. */
static double random_double(rng *r)
{
    for (;;) {
        uint64_t b = next(r);
        switch (b & 15) {
        case 0: /* subnormal (or zero) */
            b &= 0x800fffffffffffffu;
            break;
        case 1: /* a power of two, or just below one */
            b = (b & 0xfff0000000000000u) | (((b >> 4) & 1) ? 0 : 0xfffffffffffffu);
            break;
        }
        double x = double_of(b);
        if (isfinite(x)) return x;
    }
}

/* A decimal of 1-15 random digits times a random power of ten, read by strtod; its
 * digit count in *digits. */
static double random_decimal(rng *r, int min_exp, int max_exp, int *digits)
{
    int d = 1 + (int)below(r, 15);
    uint64_t m = pow10u(d - 1) + below(r, pow10u(d) - pow10u(d - 1));
    int e = min_exp + (int)below(r, (uint64_t)(max_exp - min_exp + 1));
    char s[64];
    snprintf(s, sizeof s, "%s%" PRIu64 "e%d", below(r, 4) ? "" : "-", m, e);
    *digits = d;
    return strtod(s, NULL);
}

enum { RANDOM_DOUBLES = 1500000, LAYOUT_EVERY = 16, REFERENCE_EVERY = 128, DOUBLE_SEED = 0x5eed1 };

/* ---- 1. Numbers -------------------------------------------------------------------- */

static void Jwrite_random_doubles_print_shortest_exact_round_trip(void **state)
{
    rng r = {DOUBLE_SEED};
    number_stats st = {0};
    long subnormal = 0;
    for (long i = 0; i < RANDOM_DOUBLES; i++) {
        double x = random_double(&r);
        subnormal += fpclassify(x) == FP_SUBNORMAL;
        check_f64(x,
                  (i % LAYOUT_EVERY ? 0u : CHECK_LAYOUT) |
                      (i % REFERENCE_EVERY ? 0u : CHECK_REFERENCE),
                  &st);
    }
    print_message("# %ld random doubles (%ld subnormal), %ld against the reference (%ld "
                  "shorter than it), %ld against cJSON\n",
                  st.checked, subnormal, st.referenced, st.shorter_than_reference,
                  st.cjson_compared);
    assert_true(subnormal > RANDOM_DOUBLES / 32);
    assert_int_equal(st.max_digits, 17);
}

static void Jwrite_nice_doubles_print_shortest_and_as_cjson_does(void **state)
{
    static const struct {
        double x;
        const char *text; /* NULL: only check_f64's checks */
    } fixed[] = {
        {0.1, "0.1"},
        {0.2, "0.2"},
        {123.456, "123.456"},
        {1e-7, "1e-07"},
        {1e-5, "1e-05"},
        {0.0001, "0.0001"},
        {0.001, "0.001"},
        {-2.75, "-2.75"},
        {1e15, "1e+15"},
        {1e16, "1e+16"},
        {999999999999999.0, "999999999999999"},
        {123456789012345.0, "123456789012345"},
        {1234567890123450.0, "1.23456789012345e+15"},
        {123456789012345e-20, "1.23456789012345e-06"},
        {1e21, "1e+21"},
        {1e23, "1e+23"},
        {1e-100, "1e-100"},
        {1e308, "1e+308"},
        {DBL_MAX, "1.7976931348623157e+308"},
        {-DBL_MAX, "-1.7976931348623157e+308"},
        {DBL_MIN, "2.2250738585072014e-308"},
        {-DBL_MIN, "-2.2250738585072014e-308"},
        {DBL_EPSILON, "2.220446049250313e-16"},
        {5e-324, "5e-324"},
        {-5e-324, "-5e-324"},
        {2.2250738585072009e-308, "2.225073858507201e-308"}, /* the largest subnormal */
        {0.0, "0"},
        {-0.0, "-0"},
        {2147483647.0, "2147483647"},
        {2147483648.0, "2147483648"},
        {-2147483648.0, "-2147483648"},
        {-2147483649.0, "-2147483649"},
        {9007199254740991.0, "9007199254740991"},
        {3.14159265358979, "3.14159265358979"},
        {2.718281828459045, "2.718281828459045"},
        {100.0, "100"},
        {9.5367431640625e-07, "9.5367431640625e-07"},
        {NAN, "null"},
        {-INFINITY, "null"},
    };
    number_stats st = {0};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        char t[32];
        host_json_number_text(fixed[i].x, t);
        if (strcmp(t, fixed[i].text))
            fail_msg("%a: '%s', expected '%s'", fixed[i].x, t, fixed[i].text);
        if (isfinite(fixed[i].x)) check_f64(fixed[i].x, CHECK_ALL, &st);
    }

    /* powers of two (asymmetric rounding intervals) and their neighbours, powers of ten */
    for (int k = -1074; k <= 1023; k++) {
        double x = ldexp(1.0, k);
        check_f64(x, CHECK_ALL, &st);
        check_f64(-x, CHECK_LAYOUT, &st);
        check_f64(nextafter(x, 0), CHECK_ALL, &st);
        check_f64(nextafter(x, INFINITY), CHECK_ALL, &st);
    }
    for (int k = -323; k <= 308; k++) {
        char s[16];
        snprintf(s, sizeof s, "1e%d", k);
        double x = strtod(s, NULL);
        int n = check_f64(x, CHECK_ALL, &st);
        if (n != 1) fail_msg("10^%d printed with %d digits", k, n);
    }
    /* integers, exact up to 2^53 */
    rng r = {0x1a7e9e5};
    for (int i = 0; i < 100000; i++) {
        int shift = 11 + (int)below(&r, 53); /* 1 to 53 bits */
        int64_t v = (int64_t)(next(&r) >> shift);
        if (below(&r, 2)) v = -v;
        check_f64((double)v, i % 8 ? CHECK_LAYOUT : CHECK_ALL, &st);
    }
    /* random decimals of 1-15 digits over the whole normal range and beyond */
    for (int i = 0; i < 200000; i++) {
        int d;
        double x = random_decimal(&r, i % 4 ? -30 : -340, i % 4 ? 30 : 300, &d);
        if (x == 0 || !isfinite(x)) continue;
        int n = check_f64(x, i % 8 ? CHECK_LAYOUT : CHECK_ALL, &st);
        if (n > d) fail_msg("%a came from %d digits, printed with %d", x, d, n);
    }
    print_message("# %ld nice doubles, %ld against cJSON, %ld against the reference (%ld "
                  "shorter than it)\n",
                  st.checked, st.cjson_compared, st.referenced, st.shorter_than_reference);
    assert_true(st.cjson_compared > 250000);
}

/* Where the shortest needs 16-17 digits, cJSON's %1.15g accepts 15 digits that read
 * back only "nearly" equal (within DBL_EPSILON relative), losing the last bits; this
 * writer keeps every bit. Other cases where the shortest differs from cJSON's text, and
 * -0, are shown too. */
static void Jwrite_doubles_needing_17_digits_keep_every_bit_where_cjson_loses_some(void **state)
{
    static const struct {
        double x;
        const char *ours, *cjson;
        bool cjson_exact; /* cJSON's text reads back as x */
    } cases[] = {
        {0.1 + 0.2, "0.30000000000000004", "0.3", false},
        {9007199254740992.0, "9007199254740992", "9.00719925474099e+15", false}, /* 2^53 */
        {9007199254740998.0, "9007199254740998", "9.007199254741e+15", false},   /* 2^53 + 6 */
        {110.00000000000001, "110.00000000000001", "110", false},
        /* 2^53 + 2: cJSON's 15 digits miss by 2 ulp, so it falls back to %1.17g */
        {9007199254740994.0, "9007199254740994", "9007199254740994", true},
        /* 1/3: cJSON falls back to 17 digits; the shortest has 16 */
        {1.0 / 3.0, "0.3333333333333333", "0.33333333333333331", true},
        /* the smallest subnormal: cJSON's 15 digits read back, the shortest is 1 */
        {5e-324, "5e-324", "4.94065645841247e-324", true},
        /* -0: the sign kept, as cJSON keeps it */
        {-0.0, "-0", "-0", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[32];
        host_json_number_text(cases[i].x, t);
        assert_string_equal(t, cases[i].ours);
        assert_true(bits_of(strtod(t, NULL)) == bits_of(cases[i].x));
        cJSON *v = cJSON_CreateNumber(cases[i].x);
        char *s = cJSON_PrintUnformatted(v);
        assert_string_equal(s, cases[i].cjson);
        if ((bits_of(strtod(s, NULL)) == bits_of(cases[i].x)) != cases[i].cjson_exact)
            fail_msg("cJSON's '%s' for %a: exact is not %d", s, cases[i].x, cases[i].cjson_exact);
        cJSON_free(s);
        cJSON_Delete(v);
    }
}

/* Every promise of host_json_f32_text for f: it reads back bitwise (strtof), no text of
 * fewer digits does, the double read from it prints the same; with CHECK_LAYOUT cJSON
 * prints that double the same, with CHECK_REFERENCE as many digits as the printf
 * reference (or fewer at a power of two). Returns the digit count. */
static int check_f32(float f, unsigned checks, number_stats *st)
{
    char t[48];
    size_t len = host_json_f32_text(f, t);
    if (len >= 32 || strlen(t) != len) fail_msg("float %a: length %zu", (double)f, len);
    st->checked++;
    if (f == 0) {
        assert_string_equal(t, signbit(f) ? "-0" : "0");
        return 1;
    }
    char *end;
    float back = strtof(t, &end);
    if (end != t + len || fbits_of(back) != fbits_of(f))
        fail_msg("float %a (bits %08" PRIx32 "): wrote '%s', which reads back as %a", (double)f,
                 fbits_of(f), t, (double)back);
    uint64_t d;
    int k, n = decimal_of(t, &d, &k);
    if (n < 1 || n > 9) fail_msg("float %a: '%s' has %d digits", (double)f, t, n);
    double a = fabs((double)f);
    if (n > 1 && fewer_digits_read_back(a, d, k, true))
        fail_msg("float %a (bits %08" PRIx32 "): wrote '%s' (%d digits), %d suffice", (double)f,
                 fbits_of(f), t, n, n - 1);
    /* the double a scene file gives back prints as t again: a float saved, loaded through
     * cJSON and saved again keeps its text */
    double x = strtod(t, NULL);
    char u[32];
    host_json_number_text(x, u);
    if (strcmp(u, t)) fail_msg("float %a: wrote '%s', its double %a prints '%s'", a, t, x, u);
    if (checks & CHECK_LAYOUT) {
        expect_cjson_text(x, t, "float as double");
        st->cjson_compared++;
    }
    if (checks & CHECK_REFERENCE) {
        int r = reference_digits(a, true);
        if (r != n && (r < n || !is_power_of_two(a, true)))
            fail_msg("float %a: wrote '%s' (%d digits), the reference needs %d", a, t, n, r);
        st->referenced++;
        st->shorter_than_reference += r > n;
    }
    if (n > st->max_digits) st->max_digits = n;
    return n;
}

enum { FLOAT_STRIDE = 2039, FLOAT_CHECK_ALL_EVERY = 64 };

static void Jwrite_floats_print_shortest_exact_round_trip_in_a_strided_sweep(void **state)
{
    number_stats st = {0};
    for (uint64_t b = 1, i = 0; b < (1ull << 32); b += FLOAT_STRIDE) {
        float f = float_of((uint32_t)b);
        if (isfinite(f)) check_f32(f, i++ % FLOAT_CHECK_ALL_EVERY ? 0u : CHECK_ALL, &st);
    }
    print_message("# %ld floats (every %dth bit pattern), %ld against cJSON and the reference "
                  "(%ld shorter than it)\n",
                  st.checked, FLOAT_STRIDE, st.cjson_compared, st.shorter_than_reference);
    assert_int_equal(st.max_digits, 9);
}

static void Jwrite_float_extremes_print_shortest(void **state)
{
    static const struct {
        float f;
        const char *t;
    } cases[] = {
        {0.1f, "0.1"},
        {1.0f / 3.0f, "0.33333334"},
        {FLT_MAX, "3.4028235e+38"},
        {FLT_MIN, "1.1754944e-38"},
        {1e-45f, "1e-45"},
        {-0.0f, "-0"},
        {16777216.0f, "16777216"},
        {1e10f, "10000000000"},
        {1e15f, "1e+15"},
        {123456.789f, "123456.79"},
        {-2.5e-5f, "-2.5e-05"},
        {0.0001f, "0.0001"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[32];
        host_json_f32_text(cases[i].f, t);
        assert_string_equal(t, cases[i].t);
    }
    /* every power of two, its neighbours, powers of ten, the extremes */
    number_stats st = {0};
    for (int e = -149; e <= 127; e++) {
        float f = ldexpf(1.0f, e);
        check_f32(f, CHECK_ALL, &st);
        check_f32(-f, CHECK_ALL, &st);
        check_f32(nextafterf(f, 0), CHECK_ALL, &st);
        check_f32(nextafterf(f, INFINITY), CHECK_ALL, &st);
    }
    for (int e = -45; e <= 38; e++) {
        char s[16];
        snprintf(s, sizeof s, "1e%d", e);
        check_f32(strtof(s, NULL), CHECK_ALL, &st);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_f32(cases[i].f, CHECK_ALL, &st);
    check_f32(FLT_TRUE_MIN, CHECK_ALL, &st);
    check_f32(nextafterf(FLT_MIN, 0), CHECK_ALL, &st);
    print_message("# %ld special floats, %ld shorter than the reference\n", st.checked,
                  st.shorter_than_reference);
    char t[32];
    host_json_f32_text(NAN, t);
    assert_string_equal(t, "null");
    host_json_f32_text(INFINITY, t);
    assert_string_equal(t, "null");
}

/* ---- 2. Layout: random cJSON trees ------------------------------------------------- */

/* A random string of bytes cJSON escapes (every control byte, quotes, backslashes) and
 * bytes it does not ('/', 0x7f, UTF-8, a stray 0xff). */
static char *random_string(rng *r, char *s, size_t cap)
{
    static const char *const pieces[] = {"\"",
                                         "\\",
                                         "/",
                                         "\x7f",
                                         "\xc3\xa9",
                                         "\xe2\x82\xac",
                                         "\xf0\x9f\x98\x80",
                                         "\xc2\x80",
                                         "\xff",
                                         " ",
                                         "u",
                                         "\\u0041",
                                         "a",
                                         "Z",
                                         "0",
                                         "{",
                                         "}",
                                         "[",
                                         ":",
                                         ","};
    size_t len = 0, n = below(r, 13);
    for (size_t i = 0; i < n; i++) {
        char one[2] = {(char)(1 + below(r, 0x1f)), 0};
        const char *p = below(r, 3) ? pieces[below(r, sizeof pieces / sizeof pieces[0])] : one;
        size_t pl = strlen(p);
        if (len + pl >= cap) break;
        memcpy(s + len, p, pl);
        len += pl;
    }
    s[len] = '\0';
    return s;
}

/* A number whose shortest text has at most 15 digits (where cJSON prints the same),
 * now and then NaN or an infinity (null). */
static double random_tree_number(rng *r)
{
    char t[32];
    int d;
    switch (below(r, 8)) {
    case 0:
    case 1: { /* a float as the double a scene file gives back */
        float f;
        do f = float_of((uint32_t)next(r));
        while (!isfinite(f) || f == 0);
        host_json_f32_text(f, t);
        return strtod(t, NULL);
    }
    case 2: /* an int */
        return (double)(int32_t)next(r);
    case 3: /* a small integer, or a large one of <= 15 digits */
        return below(r, 2) ? (double)below(r, 100) : (double)(int64_t)below(r, 999999999999999);
    case 4:
    case 5:
        return random_decimal(r, -20, 20, &d);
    case 6:
        return random_decimal(r, -300, 290, &d);
    default:
        switch (below(r, 6)) {
        case 0:
            return NAN;
        case 1:
            return INFINITY;
        case 2:
            return -INFINITY;
        case 3:
            return below(r, 2) ? 0.0 : -0.0;
        case 4:
            return 1e308;
        default:
            return -1e-300;
        }
    }
}

static cJSON *random_tree(rng *r, int depth)
{
    char s[64];
    /* containers: always at the top, often near it, never below depth 8 */
    uint64_t kind = depth >= 8 ? 2 + below(r, 6) : below(r, depth == 0 ? 2 : depth < 4 ? 4 : 8);
    if (kind < 2) {
        bool object = kind == 0;
        cJSON *c = object ? cJSON_CreateObject() : cJSON_CreateArray();
        int n = below(r, 5) ? 1 + (int)below(r, 7) : 0;
        for (int i = 0; i < n; i++) {
            cJSON *child = random_tree(r, depth + 1);
            if (object)
                cJSON_AddItemToObject(c, random_string(r, s, sizeof s), child);
            else
                cJSON_AddItemToArray(c, child);
        }
        return c;
    }
    switch (kind) {
    case 2:
    case 3:
        return cJSON_CreateString(random_string(r, s, sizeof s));
    case 4:
    case 5:
        return cJSON_CreateNumber(random_tree_number(r));
    case 6:
        return cJSON_CreateBool(below(r, 2) != 0);
    default:
        return cJSON_CreateNull();
    }
}

/* Index of the first byte where a and b differ. */
static size_t first_difference(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    return i;
}

enum { RANDOM_TREES = 4000, TREE_SEED = 0x7ee5 };

/* Does an object of v (at any depth) hold a key twice? Pairwise: the reference. */
static bool tree_has_duplicate_key(const cJSON *v)
{
    for (const cJSON *c = v->child; c; c = c->next) {
        if (tree_has_duplicate_key(c)) return true;
        if (!cJSON_IsObject(v)) continue;
        for (const cJSON *d = c->next; d; d = d->next)
            if (!strcmp(c->string, d->string)) return true;
    }
    return false;
}

/* Random trees (keys drawn with repeats: some objects hold a key twice) print as
 * cJSON_Print does; a tree with a key twice in one object is refused (a load would). */
static void Jwrite_print_of_random_trees_equals_cjson_print_byte_for_byte(void **state)
{
    rng r = {TREE_SEED};
    size_t bytes = 0;
    int refused = 0;
    for (int i = 0; i < RANDOM_TREES; i++) {
        cJSON *tree = random_tree(&r, 0);
        char *want = cJSON_Print(tree);
        size_t len = 0;
        char *got = host_json_print(tree, &len);
        assert_non_null(want);
        if (tree_has_duplicate_key(tree)) {
            if (got) fail_msg("tree %d (seed %#x): a key twice, printed: %s", i, TREE_SEED, got);
            refused++;
            cJSON_free(want);
            cJSON_Delete(tree);
            continue;
        }
        if (!got) fail_msg("tree %d (seed %#x): host_json_print failed", i, TREE_SEED);
        size_t wl = strlen(want);
        if (len != wl + 1 || memcmp(got, want, wl) || got[wl] != '\n' || got[len] != '\0') {
            size_t at = first_difference(got, want);
            fail_msg("tree %d (seed %#x) differs at byte %zu: ours '%.40s', cJSON '%.40s'", i,
                     TREE_SEED, at, got + at, want + at);
        }
        bytes += len;
        cJSON_free(want);
        free(got);
        cJSON_Delete(tree);
    }
    assert_true(refused > 0 && refused < RANDOM_TREES / 3); /* both kinds were tried */
    print_message("# %d random trees, %zu bytes, equal to cJSON_Print; %d with a key twice "
                  "refused\n",
                  RANDOM_TREES, bytes, refused);
}

static void Jwrite_print_of_scalars_empty_and_special_values(void **state)
{
    static const struct {
        const char *json; /* parsed by cJSON */
        const char *want;
    } cases[] = {
        {"{}", "{\n}\n"},
        {"[]", "[]\n"},
        {"[{}, [], {\"a\": {}}]", "[{\n\t}, [], {\n\t\t\"a\":\t{\n\t\t}\n\t}]\n"},
        {"\"\\u0001\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\\u007f\"",
         "\"\\u0001\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\x7f\"\n"},
        {"true", "true\n"},
        {"null", "null\n"},
        {"-12.5e3", "-12500\n"},
        {"{\"\": [1, 2.5, \"x\"]}", "{\n\t\"\":\t[1, 2.5, \"x\"]\n}\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *v = cJSON_Parse(cases[i].json);
        assert_non_null(v);
        size_t len;
        char *got = host_json_print(v, &len);
        assert_non_null(got);
        assert_string_equal(got, cases[i].want);
        assert_int_equal(len, strlen(cases[i].want));
        char *c = cJSON_Print(v);
        assert_int_equal(strncmp(got, c, strlen(c)), 0);
        cJSON_free(c);
        free(got);
        cJSON_Delete(v);
    }
    /* NaN and infinities in a tree are null, as cJSON prints them */
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber(NAN));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(INFINITY));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(-INFINITY));
    size_t len;
    char *got = host_json_print(a, &len);
    assert_string_equal(got, "[null, null, null]\n");
    char *c = cJSON_Print(a);
    assert_string_equal(c, "[null, null, null]");
    cJSON_free(c);
    free(got);
    cJSON_Delete(a);
}

/* A chain of `levels` arrays (innermost empty), or arrays holding objects. */
static cJSON *deep_tree(int levels, bool objects)
{
    cJSON *v = objects ? cJSON_CreateObject() : cJSON_CreateArray();
    for (int i = 1; i < levels; i++) {
        cJSON *outer = objects && i % 2 ? cJSON_CreateObject() : cJSON_CreateArray();
        if (cJSON_IsObject(outer))
            cJSON_AddItemToObject(outer, "k", v);
        else
            cJSON_AddItemToArray(outer, v);
        v = outer;
    }
    return v;
}

static void Jwrite_print_of_trees_nested_64_deep_equals_cjson(void **state)
{
    for (int objects = 0; objects < 2; objects++) {
        cJSON *v = deep_tree(HOST_JW_MAX_LEVELS, objects);
        size_t len;
        char *got = host_json_print(v, &len);
        char *want = cJSON_Print(v);
        assert_non_null(got);
        assert_int_equal(len, strlen(want) + 1);
        assert_int_equal(memcmp(got, want, len - 1), 0);
        cJSON_free(want);
        free(got);
        cJSON_Delete(v);
    }
}

/* ---- 3. The writer API ------------------------------------------------------------- */

/* Write v through the ecs_json_writer calls; now and then (r) a subtree through value(). */
/* Does v hold a NaN or an infinity (which value() refuses, as number() does)? */
static bool tree_has_non_finite(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return !isfinite(v->valuedouble);
    for (const cJSON *c = v->child; c; c = c->next)
        if (tree_has_non_finite(c)) return true;
    return false;
}

static void emit(ecs_json_writer *a, const cJSON *v, rng *r)
{
    if (r && below(r, 10) == 0 && !tree_has_non_finite(v)) {
        a->value(a, v);
    } else if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        bool object = cJSON_IsObject(v);
        object ? a->begin_object(a) : a->begin_array(a);
        for (const cJSON *c = v->child; c; c = c->next) {
            if (object) a->key(a, c->string);
            emit(a, c, r);
        }
        object ? a->end_object(a) : a->end_array(a);
    } else if (cJSON_IsString(v)) {
        a->string(a, v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        if (isfinite(v->valuedouble))
            a->number(a, v->valuedouble);
        else
            a->null(a);
    } else if (cJSON_IsBool(v)) {
        a->boolean(a, cJSON_IsTrue(v));
    } else {
        a->null(a);
    }
}

/* cJSON_Print's text of v when it sits `base` objects deep ({"k": {"k": v}}), cut out. */
static char *cjson_text_at(cJSON *v, int base)
{
    cJSON *outer = NULL, *inner = NULL;
    for (int i = 0; i < base; i++) {
        cJSON *o = cJSON_CreateObject();
        if (inner)
            cJSON_AddItemToObject(inner, "k", o);
        else
            outer = o;
        inner = o;
    }
    if (!base) return cJSON_Print(v);
    cJSON_AddItemReferenceToObject(inner, "k", v);
    char *all = cJSON_Print(outer);
    cJSON_Delete(outer);
    size_t pre = 0, suf = 0; /* "{\n<i+1 tabs>\"k\":\t" per level; "\n<i tabs>}" */
    for (int i = 0; i < base; i++) pre += 2 + (size_t)i + 1 + 5, suf += 1 + (size_t)i + 1;
    size_t n = strlen(all);
    assert_true(n > pre + suf);
    assert_memory_equal(all + pre - 5, "\"k\":\t", 5);
    memmove(all, all + pre, n - pre - suf);
    all[n - pre - suf] = '\0';
    return all;
}

static void Jwrite_api_calls_write_what_print_writes_at_every_base(void **state)
{
    rng r = {TREE_SEED + 1};
    host_jwriter w;
    host_jw_init(&w);
    for (int i = 0; i < 2000; i++) {
        cJSON *tree = random_tree(&r, 0);
        int base = i % 6;
        char *want = cjson_text_at(tree, base);
        size_t before = w.len; /* values append to the same text */
        host_jw_start(&w, base);
        emit(&w.api, tree, i % 2 ? &r : NULL);
        if (tree_has_duplicate_key(tree)) { /* refused, whichever way it was written */
            if (host_jw_finish(&w) || !strstr(w.error, "duplicate key"))
                fail_msg("tree %d: a key twice, error '%s'", i, w.error ? w.error : "(none)");
            w.len = before;
            cJSON_free(want);
            cJSON_Delete(tree);
            continue;
        }
        if (!host_jw_finish(&w)) fail_msg("tree %d: %s", i, w.error);
        size_t wl = strlen(want);
        if (w.len - before != wl || memcmp(w.buf + before, want, wl))
            fail_msg("tree %d at base %d (seed %#x) differs: ours '%.*s', cJSON '%s'", i, base,
                     TREE_SEED + 1, (int)(w.len - before), w.buf + before, want);
        if (i % 50 == 0) w.len = 0;
        cJSON_free(want);
        cJSON_Delete(tree);
    }
    host_jw_free(&w);
}

static void Jwrite_api_at_base_two_indents_by_two_more_tabs(void **state)
{
    host_jwriter w;
    host_jw_init(&w);
    host_jw_start(&w, 2);
    ecs_json_writer *a = &w.api;
    a->begin_object(a);
    a->key(a, "a");
    a->begin_array(a);
    a->number(a, 1);
    a->number_f32(a, 2.5f);
    a->end_array(a);
    a->key(a, "b");
    a->begin_object(a);
    a->end_object(a);
    a->key(a, "c\n");
    a->string(a, "\"q\"");
    a->end_object(a);
    assert_true(host_jw_finish(&w));
    assert_null(w.error);
    const char *want = "{\n\t\t\t\"a\":\t[1, 2.5],\n\t\t\t\"b\":\t{\n\t\t\t},\n\t\t\t\"c\\n\":\t"
                       "\"\\\"q\\\"\"\n\t\t}";
    assert_int_equal(w.len, strlen(want));
    assert_memory_equal(w.buf, want, w.len);
    /* a second value appends after the first */
    host_jw_start(&w, 0);
    a->boolean(a, false);
    assert_true(host_jw_finish(&w));
    assert_memory_equal(w.buf + strlen(want), "false", 5);
    host_jw_free(&w);
}

/* Keys are written in one pass while short and plain, the general way otherwise: every
 * length from empty to past the short limit, plain or with a byte to escape at each
 * place, two keys in one object (the comma), at bases from 0 to past the short path's
 * tabs, each the text cJSON prints. */
static void Jwrite_keys_of_every_length_and_escape_print_as_cjson(void **state)
{
    host_jwriter w;
    host_jw_init(&w);
    char key[80];
    static const char escapes[] = {'"', '\\', '\n', '\x01', '\x1f'};
    for (int base = 0; base <= 70; base += base < 4 ? 1 : 33)
        for (int n = 0; n <= 60; n++)
            for (int at = -1; at < n; at++) {
                for (int i = 0; i < n; i++) key[i] = (char)('a' + i % 26);
                if (at >= 0) key[at] = escapes[(at + n) % 5];
                key[n] = '\0';
                cJSON *o = cJSON_CreateObject();
                cJSON_AddNumberToObject(o, key, 1);
                cJSON_AddNumberToObject(o, "z", 2);
                char *want = cjson_text_at(o, base);
                w.len = 0;
                host_jw_start(&w, base);
                w.api.begin_object(&w.api);
                w.api.key(&w.api, key);
                w.api.number(&w.api, 1);
                w.api.key(&w.api, "z");
                w.api.number(&w.api, 2);
                w.api.end_object(&w.api);
                assert_true(host_jw_finish(&w));
                if (w.len != strlen(want) || memcmp(w.buf, want, w.len))
                    fail_msg("base %d, key of %d with an escape at %d: '%.*s', cJSON '%s'", base, n,
                             at, (int)w.len, w.buf, want);
                free(want);
                cJSON_Delete(o);
            }
    host_jw_free(&w);
}

static void Jwrite_array_f32_equals_begin_array_number_f32_end_array(void **state)
{
    rng r = {0xf32};
    host_jwriter w1, w2;
    host_jw_init(&w1);
    host_jw_init(&w2);
    float x[40];
    for (int i = 0; i < 3000; i++) {
        uint32_t n = i < 3 ? (uint32_t)i : (uint32_t)below(&r, 40);
        for (uint32_t j = 0; j < n; j++) {
            do x[j] = float_of((uint32_t)next(&r));
            while (!isfinite(x[j]));
            if (below(&r, 4) == 0) x[j] = (float)(int)below(&r, 1000) / 8 - 60;
        }
        w1.len = w2.len = 0;
        int base = (int)below(&r, 4);
        host_jw_start(&w1, base);
        host_jw_start(&w2, base);
        w1.api.begin_object(&w1.api);
        w2.api.begin_object(&w2.api);
        w1.api.key(&w1.api, "v");
        w2.api.key(&w2.api, "v");
        w1.api.array_f32(&w1.api, n ? x : NULL, n);
        w2.api.begin_array(&w2.api);
        for (uint32_t j = 0; j < n; j++) w2.api.number_f32(&w2.api, x[j]);
        w2.api.end_array(&w2.api);
        w1.api.end_object(&w1.api);
        w2.api.end_object(&w2.api);
        assert_true(host_jw_finish(&w1));
        assert_true(host_jw_finish(&w2));
        if (w1.len != w2.len || memcmp(w1.buf, w2.buf, w1.len))
            fail_msg("array %d of %u: '%.*s' vs '%.*s'", i, n, (int)w1.len, w1.buf, (int)w2.len,
                     w2.buf);
        /* and that is each element's f32 text */
        char want[40 * 20 + 64];
        size_t wl = 0;
        wl += (size_t)sprintf(want + wl, "{\n%.*s\"v\":\t[", base + 1, "\t\t\t\t\t");
        for (uint32_t j = 0; j < n; j++) {
            if (j) wl += (size_t)sprintf(want + wl, ", ");
            wl += host_json_f32_text(x[j], want + wl);
        }
        wl += (size_t)sprintf(want + wl, "]\n%.*s}", base, "\t\t\t\t\t");
        if (w2.len != wl || memcmp(w2.buf, want, wl))
            fail_msg("array %d: '%.*s', expected '%s'", i, (int)w2.len, w2.buf, want);
    }
    host_jw_start(&w1, 0);
    w1.len = 0;
    w1.api.array_f32(&w1.api, NULL, 0);
    assert_true(host_jw_finish(&w1));
    assert_int_equal(w1.len, 2);
    assert_memory_equal(w1.buf, "[]", 2);
    host_jw_free(&w1);
    host_jw_free(&w2);
}

/* One document written twice, with deferred floats and without: a random mix of floats
 * (number_f32, array_f32), doubles and strings holding the token's own byte. */
static void write_float_document(host_jwriter *w, uint64_t seed, bool defer)
{
    rng r = {seed};
    w->len = 0;
    w->defer_f32 = defer;
    host_jw_start(w, 1);
    w->api.begin_array(&w->api);
    float x[8];
    char s[8];
    for (int i = 0; i < 60; i++) {
        switch (below(&r, 4)) {
        case 0:
            do x[0] = float_of((uint32_t)next(&r));
            while (!isfinite(x[0]));
            w->api.number_f32(&w->api, x[0]);
            break;
        case 1: {
            uint32_t n = (uint32_t)below(&r, 8);
            for (uint32_t j = 0; j < n; j++) x[j] = (float)(int)below(&r, 100000) / 64 - 700;
            w->api.array_f32(&w->api, x, n);
            break;
        }
        case 2:
            w->api.number(&w->api, (double)below(&r, 1000) / 3);
            break;
        default: /* the token's byte in a string: escaped, so never taken for a float */
            s[0] = 'a', s[1] = HOST_JW_F32, s[2] = 'b', s[3] = HOST_JW_F32, s[4] = '\0';
            w->api.string(&w->api, s);
        }
    }
    w->api.end_array(&w->api);
    assert_true(host_jw_finish(w));
}

/* A save's floats go to its spool as a byte and their 4 bytes; expanded, the text is the
 * one written without deferring, wherever the pieces cut it (inside a token too). */
static void Jwrite_deferred_floats_expand_to_the_same_text_cut_anywhere(void **state)
{
    host_jwriter plain, deferred;
    host_jw_init(&plain);
    host_jw_init(&deferred);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        write_float_document(&plain, seed, false);
        write_float_document(&deferred, seed, true);
        assert_null(memchr(plain.buf, HOST_JW_F32, plain.len));
        assert_non_null(memchr(deferred.buf, HOST_JW_F32, deferred.len));
        assert_true(deferred.len < plain.len);
        char *out = malloc(HOST_JW_EXPANDED(deferred.len) * 2);
        assert_non_null(out);
        /* one piece; two pieces cut at every byte; pieces of 1 to 7 bytes */
        for (size_t cut = 0; cut <= deferred.len; cut++) {
            host_jw_expander x = {0};
            size_t n = host_jw_expand(&x, deferred.buf, cut, out);
            n += host_jw_expand(&x, deferred.buf + cut, deferred.len - cut, out + n);
            assert_int_equal(x.have, 0);
            if (n != plain.len || memcmp(out, plain.buf, n))
                fail_msg("seed %" PRIu64 " cut at %zu: '%.*s'", seed, cut, (int)n, out);
        }
        for (size_t step = 1; step <= 7; step++) {
            host_jw_expander x = {0};
            size_t n = 0;
            for (size_t at = 0; at < deferred.len; at += step) {
                size_t k = deferred.len - at < step ? deferred.len - at : step;
                n += host_jw_expand(&x, deferred.buf + at, k, out + n);
            }
            assert_int_equal(n, plain.len);
            assert_memory_equal(out, plain.buf, n);
        }
        free(out);
    }
    host_jw_free(&plain);
    host_jw_free(&deferred);
}

/* write_float_document(seed) twice: as text into plain, with deferred floats into deferred. */
static void both_documents(host_jwriter *plain, host_jwriter *deferred, uint64_t seed)
{
    host_jw_init(plain);
    host_jw_init(deferred);
    write_float_document(plain, seed, false);
    write_float_document(deferred, seed, true);
}

/* The spool writes a stream handed over in pieces of any size, through every slot many
 * times, with its floats laid out; a failed write is its errno, and a float cut at the very
 * end is EIO. */
static void Jwrite_spool_writes_the_expanded_stream_and_reports_a_failed_write(void **state)
{
    host_jwriter plain, deferred;
    both_documents(&plain, &deferred, 99);
    char path[] = "/tmp/ecs-spool-test-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    host_spool *s = host_spool_start(fd);
    assert_non_null(s);
    assert_true(host_spool_keeps_up(s)); /* nothing handed over yet */
    rng r = {7};
    enum { COPIES = 1500 }; /* several MB: every slot, many times over */
    for (int i = 0; i < COPIES; i++)
        for (size_t at = 0; at < deferred.len;) {
            size_t k = 1 + (size_t)below(&r, i % 3 == 0 ? 16 : 4096);
            if (k > deferred.len - at) k = deferred.len - at;
            host_spool_write(s, deferred.buf + at, k);
            at += k;
        }
    assert_int_equal(host_spool_finish(s), 0);
    off_t size = lseek(fd, 0, SEEK_END);
    assert_int_equal(size, (off_t)plain.len * COPIES);
    char *back = malloc(plain.len);
    assert_non_null(back);
    for (int i = 0; i < COPIES; i++) { /* each in its place: no slot written out of turn */
        assert_int_equal(pread(fd, back, plain.len, (off_t)plain.len * i), (ssize_t)plain.len);
        assert_memory_equal(back, plain.buf, plain.len);
    }
    free(back);
    close(fd);

    /* a descriptor open for reading only: every write fails, the first errno is kept */
    fd = open("/dev/null", O_RDONLY);
    assert_true(fd >= 0);
    s = host_spool_start(fd);
    for (int i = 0; i < 300; i++) host_spool_write(s, deferred.buf, deferred.len);
    assert_int_equal(host_spool_finish(s), EBADF);
    close(fd);

    /* the stream ends inside a float */
    fd = open("/dev/null", O_WRONLY);
    assert_true(fd >= 0);
    s = host_spool_start(fd);
    const char cut[] = {'[', HOST_JW_F32, 0, 0};
    host_spool_write(s, cut, sizeof cut);
    assert_int_equal(host_spool_finish(s), EIO);
    close(fd);
    assert_int_equal(host_spool_finish(NULL), 0);
    host_jw_free(&plain);
    host_jw_free(&deferred);
}

/* The far end of a pipe, read slowly: a file slower than the caller, so every slot fills
 * and the caller must wait for the spool's thread. */
typedef struct slow_reader {
    int fd;
    char *got;
    size_t len, cap;
} slow_reader;

static void *read_slowly(void *arg)
{
    slow_reader *r = arg;
    for (unsigned reads = 0;; reads++) {
        if (r->len == r->cap) return NULL; /* more than was written: the check fails */
        ssize_t k = read(r->fd, r->got + r->len, r->cap - r->len < 4096 ? r->cap - r->len : 4096);
        if (k <= 0) return NULL;
        r->len += (size_t)k;
        if (reads % 64 == 0) usleep(1000);
    }
}

/* With the file slower than the caller, every slot is handed over and waited for many
 * times: the text still arrives whole and in order (a slot refilled before the thread
 * wrote it would show up as a copy out of place). */
static void Jwrite_spool_keeps_order_when_the_file_is_slower_than_the_caller(void **state)
{
    host_jwriter plain, deferred;
    both_documents(&plain, &deferred, 5);
    enum { COPIES = 600 };
    int p[2];
    assert_int_equal(pipe(p), 0);
    slow_reader r = {p[0], malloc(plain.len * COPIES + 1), 0, plain.len * COPIES + 1};
    assert_non_null(r.got);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_slowly, &r), 0);
    host_spool *s = host_spool_start(p[1]);
    assert_non_null(s);
    bool lagged = false; /* the thread fell behind at least once */
    for (int i = 0; i < COPIES; i++) {
        host_spool_write(s, deferred.buf, deferred.len);
        lagged = lagged || !host_spool_keeps_up(s);
    }
    assert_int_equal(host_spool_finish(s), 0);
    close(p[1]);
    pthread_join(t, NULL);
    close(p[0]);
    assert_true(lagged);
    assert_int_equal(r.len, plain.len * COPIES);
    for (int i = 0; i < COPIES; i++)
        if (memcmp(r.got + plain.len * (size_t)i, plain.buf, plain.len))
            fail_msg("copy %d of %d differs", i, (int)COPIES);
    free(r.got);
    host_jw_free(&plain);
    host_jw_free(&deferred);
}

typedef struct id_table {
    char text[32];
    int calls;
} id_table;

static const char *test_id_of(void *ctx, ecs_entity e)
{
    id_table *t = ctx;
    t->calls++;
    if (e.id >= 100) return NULL; /* dead */
    snprintf(t->text, sizeof t->text, "e-%u\"", e.id);
    return t->text;
}

static void Jwrite_entity_writes_the_id_of_callback_and_fails_on_null(void **state)
{
    id_table ids = {0};
    host_jwriter w;
    host_jw_init(&w);
    w.id_of = test_id_of;
    w.ctx = &ids;
    host_jw_start(&w, 0);
    w.api.begin_array(&w.api);
    w.api.entity(&w.api, (ecs_entity){7});
    w.api.entity(&w.api, (ecs_entity){42});
    w.api.end_array(&w.api);
    assert_true(host_jw_finish(&w));
    assert_int_equal(ids.calls, 2);
    assert_int_equal(w.len, strlen("[\"e-7\\\"\", \"e-42\\\"\"]"));
    assert_memory_equal(w.buf, "[\"e-7\\\"\", \"e-42\\\"\"]", w.len);

    w.len = 0;
    host_jw_start(&w, 0);
    w.api.begin_object(&w.api);
    w.api.key(&w.api, "parent");
    w.api.entity(&w.api, (ecs_entity){100});
    w.api.end_object(&w.api);
    assert_false(host_jw_finish(&w));
    assert_non_null(w.error);
    assert_non_null(strstr(w.error, "dead entity"));

    /* no id_of at all (outside a scene save) fails the same way */
    w.id_of = NULL;
    host_jw_start(&w, 0);
    assert_null(w.error);
    w.api.entity(&w.api, (ecs_entity){1});
    assert_false(host_jw_finish(&w));
    assert_non_null(strstr(w.error, "dead entity"));
    host_jw_free(&w);
}

static void Jwrite_value_writes_a_tree_and_number_f32_as_its_text(void **state)
{
    host_jwriter w;
    host_jw_init(&w);
    host_jw_start(&w, 0);
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber(-0.0));
    cJSON_AddItemToArray(a, cJSON_CreateString("s"));
    w.api.begin_array(&w.api);
    w.api.value(&w.api, a);
    w.api.number_f32(&w.api, 0.1f);
    w.api.number(&w.api, 0.1f);
    w.api.null(&w.api);
    w.api.boolean(&w.api, true);
    w.api.end_array(&w.api);
    assert_true(host_jw_finish(&w));
    const char *want = "[[-0, \"s\"], 0.1, 0.10000000149011612, null, true]";
    assert_int_equal(w.len, strlen(want));
    assert_memory_equal(w.buf, want, w.len);
    cJSON_Delete(a);
    host_jw_free(&w);
}

/* A NaN or an infinity handed over in a cJSON value fails like number(NaN): a plugin's NaN
 * must not come back from the file as null without a word. */
static void Jwrite_value_with_a_nan_fails_like_number(void **state)
{
    static const double bad[] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        host_jwriter w;
        host_jw_init(&w);
        host_jw_start(&w, 0);
        cJSON *a = cJSON_CreateObject(), *inner = cJSON_AddArrayToObject(a, "deep");
        cJSON_AddItemToArray(inner, cJSON_CreateNumber(1));
        cJSON_AddItemToArray(inner, cJSON_CreateNumber(bad[k]));
        w.api.value(&w.api, a);
        assert_false(host_jw_finish(&w));
        assert_non_null(strstr(w.error, "NaN or infinite"));
        cJSON_Delete(a);
        host_jw_free(&w);
    }
}

/* ---- 4. Misuse --------------------------------------------------------------------- */

static void value_where_key_due(ecs_json_writer *a)
{
    a->begin_object(a);
    a->number(a, 1);
}

static void string_where_key_due_after_member(ecs_json_writer *a)
{
    a->begin_object(a);
    a->key(a, "a");
    a->null(a);
    a->string(a, "b");
}

static void key_at_top_level(ecs_json_writer *a)
{
    a->key(a, "a");
}

static void key_in_array(ecs_json_writer *a)
{
    a->begin_array(a);
    a->key(a, "a");
}

static void two_keys(ecs_json_writer *a)
{
    a->begin_object(a);
    a->key(a, "a");
    a->key(a, "b");
}

static void end_object_after_key(ecs_json_writer *a)
{
    a->begin_object(a);
    a->key(a, "a");
    a->end_object(a);
}

static void end_array_closing_object(ecs_json_writer *a)
{
    a->begin_object(a);
    a->end_array(a);
}

static void end_object_closing_array(ecs_json_writer *a)
{
    a->begin_array(a);
    a->end_object(a);
}

static void end_object_without_begin(ecs_json_writer *a)
{
    a->end_object(a);
}

static void end_array_without_begin(ecs_json_writer *a)
{
    a->end_array(a);
}

static void end_array_after_value_closed(ecs_json_writer *a)
{
    a->begin_array(a);
    a->end_array(a);
    a->end_array(a);
}

static void second_scalar(ecs_json_writer *a)
{
    a->number(a, 1);
    a->number(a, 2);
}

static void second_container(ecs_json_writer *a)
{
    a->begin_object(a);
    a->end_object(a);
    a->begin_array(a);
}

static void number_nan(ecs_json_writer *a)
{
    a->begin_array(a);
    a->number(a, NAN);
}

static void number_inf(ecs_json_writer *a)
{
    a->number(a, -INFINITY);
}

static void number_f32_nan(ecs_json_writer *a)
{
    a->number_f32(a, NAN);
}

static void number_f32_inf(ecs_json_writer *a)
{
    a->begin_array(a);
    a->number_f32(a, INFINITY);
}

static void array_f32_nan(ecs_json_writer *a)
{
    const float x[] = {1, 2, NAN, 4};
    a->array_f32(a, x, 4);
}

static void array_f32_inf(ecs_json_writer *a)
{
    const float x[] = {-INFINITY};
    a->begin_object(a);
    a->key(a, "v");
    a->array_f32(a, x, 1);
}

static void array_f32_null(ecs_json_writer *a)
{
    a->array_f32(a, NULL, 3);
}

static void string_null(ecs_json_writer *a)
{
    a->begin_array(a);
    a->string(a, NULL);
}

static void key_null(ecs_json_writer *a)
{
    a->begin_object(a);
    a->key(a, NULL);
}

static void value_null(ecs_json_writer *a)
{
    a->value(a, NULL);
}

static void value_raw(ecs_json_writer *a)
{
    cJSON *raw = cJSON_CreateRaw("1");
    a->value(a, raw);
    cJSON_Delete(raw);
}

static void arrays_too_deep(ecs_json_writer *a)
{
    for (int i = 0; i <= HOST_JW_MAX_LEVELS; i++) a->begin_array(a);
}

static void objects_too_deep(ecs_json_writer *a)
{
    for (int i = 0; i <= HOST_JW_MAX_LEVELS; i++) {
        a->begin_object(a);
        a->key(a, "k");
    }
}

static void value_too_deep(ecs_json_writer *a)
{
    cJSON *v = deep_tree(HOST_JW_MAX_LEVELS + 1, true);
    a->value(a, v);
    cJSON_Delete(v);
}

static void value_too_deep_inside(ecs_json_writer *a)
{
    cJSON *v = deep_tree(HOST_JW_MAX_LEVELS - 1, false);
    a->begin_array(a);
    a->begin_array(a);
    a->value(a, v);
    cJSON_Delete(v);
}

static void object_left_open(ecs_json_writer *a)
{
    a->begin_object(a);
    a->key(a, "a");
    a->number(a, 1);
}

static void array_left_open(ecs_json_writer *a)
{
    a->begin_array(a);
    a->begin_object(a);
    a->end_object(a);
}

static void key_twice(ecs_json_writer *a)
{
    a->begin_object(a);
    a->key(a, "a");
    a->number(a, 1);
    a->key(a, "b");
    a->begin_object(a); /* "a" in a nested object is no duplicate */
    a->key(a, "a");
    a->null(a);
    a->end_object(a);
    a->key(a, "a");
    a->number(a, 2);
    a->end_object(a);
}

/* 17 keys written largest first, then the smallest again: a large object's check. */
static void smallest_of_17_twice(ecs_json_writer *a)
{
    a->begin_object(a);
    for (int k = 16; k >= 0; k--) {
        char key[16]; /* room for any int (-Wformat-truncation at -O1) */
        snprintf(key, sizeof key, "k%02d", k);
        a->key(a, key);
        a->number(a, k);
    }
    a->key(a, "k00");
    a->number(a, 0);
    a->end_object(a);
}

static void escaped_key_twice(ecs_json_writer *a)
{
    a->begin_object(a);
    a->key(a, "tab\there");
    a->boolean(a, true);
    a->key(a, "tab\there");
    a->boolean(a, false);
    a->end_object(a);
}

/* cJSON keeps a key added twice (and cJSON_Print prints both): value() refuses it. */
static void value_with_a_key_twice(ecs_json_writer *a)
{
    cJSON *v = cJSON_CreateObject(), *inner = cJSON_AddObjectToObject(v, "inner");
    cJSON_AddNumberToObject(inner, "x", 1);
    cJSON_AddNumberToObject(inner, "x", 2);
    a->value(a, v);
    cJSON_Delete(v);
}

static const struct misuse {
    const char *name;
    void (*write)(ecs_json_writer *a);
    const char *error; /* in w.error */
} misuses[] = {
    {"value where a key is due", value_where_key_due, "a value where a key was due"},
    {"string where the next key is due", string_where_key_due_after_member,
     "a value where a key was due"},
    {"key at the top level", key_at_top_level, "key() outside an object"},
    {"key in an array", key_in_array, "key() outside an object"},
    {"two keys in a row", two_keys, "two keys in a row"},
    {"end_object with a pending key", end_object_after_key, "after a key with no value"},
    {"end_array closing an object", end_array_closing_object, "end_array() without an open array"},
    {"end_object closing an array", end_object_closing_array,
     "end_object() without an open object"},
    {"end_object without begin", end_object_without_begin, "end_object() without an open object"},
    {"end_array without begin", end_array_without_begin, "end_array() without an open array"},
    {"end_array after the value", end_array_after_value_closed,
     "end_array() without an open array"},
    {"a second scalar", second_scalar, "a second value"},
    {"a second container", second_container, "a second value"},
    {"number(NaN)", number_nan, "NaN or infinite"},
    {"number(-inf)", number_inf, "NaN or infinite"},
    {"number_f32(NaN)", number_f32_nan, "NaN or infinite"},
    {"number_f32(inf)", number_f32_inf, "NaN or infinite"},
    {"array_f32 with a NaN", array_f32_nan, "NaN or infinite"},
    {"array_f32 with -inf", array_f32_inf, "NaN or infinite"},
    {"array_f32(NULL, 3)", array_f32_null, "array_f32(NULL, n)"},
    {"string(NULL)", string_null, "string(NULL)"},
    {"key(NULL)", key_null, "key(NULL)"},
    {"value(NULL)", value_null, "value(NULL)"},
    {"value(raw)", value_raw, "no JSON type"},
    {"arrays 998 deep", arrays_too_deep, "nested deeper than 997"},
    {"objects 998 deep", objects_too_deep, "nested deeper than 997"},
    {"value() 998 deep", value_too_deep, "nested deeper than 997"},
    {"value() 996 deep inside 2", value_too_deep_inside, "nested deeper than 997"},
    {"object left open", object_left_open, "left open"},
    {"array left open", array_left_open, "left open"},
    {"a key twice in an object", key_twice, "duplicate key \"a\""},
    {"the smallest of 17 keys twice", smallest_of_17_twice, "duplicate key \"k00\""},
    {"an escaped key twice", escaped_key_twice, "duplicate key \"tab\\there\""},
    {"value() with a key twice", value_with_a_key_twice, "duplicate key \"x\""},
};

static void Jwrite_each_misuse_fails_finish_with_its_message_and_start_resets(void **state)
{
    host_jwriter w;
    host_jw_init(&w);
    for (size_t i = 0; i < sizeof misuses / sizeof misuses[0]; i++) {
        const struct misuse *m = &misuses[i];
        for (int base = 0; base < 3; base += 2) {
            host_jw_start(&w, base);
            m->write(&w.api);
            if (host_jw_finish(&w)) fail_msg("%s: accepted", m->name);
            if (!w.error || !strstr(w.error, m->error))
                fail_msg("%s: error '%s', expected '%s'", m->name, w.error ? w.error : "(null)",
                         m->error);
            /* the first mistake stays; later calls write nothing */
            const char *first = w.error;
            size_t len = w.len;
            w.api.end_array(&w.api);
            w.api.key(&w.api, "x");
            w.api.number(&w.api, NAN);
            w.api.string(&w.api, "late");
            w.api.begin_object(&w.api);
            assert_false(host_jw_finish(&w));
            assert_ptr_equal(w.error, first);
            assert_int_equal(w.len, len);
            /* the next value starts clean, after the failed one's bytes */
            host_jw_start(&w, base);
            if (w.error) fail_msg("%s: start kept '%s'", m->name, w.error);
            w.api.begin_array(&w.api);
            w.api.number(&w.api, 1);
            w.api.end_array(&w.api);
            if (!host_jw_finish(&w)) fail_msg("after %s: %s", m->name, w.error);
            assert_true(w.len >= len + 3);
            assert_memory_equal(w.buf + len, "[1]", 3);
            w.len = 0;
        }
    }
    host_jw_free(&w);
}

static void Jwrite_nesting_exactly_64_deep_is_accepted(void **state)
{
    host_jwriter w;
    host_jw_init(&w);
    host_jw_start(&w, 0);
    for (int i = 0; i < HOST_JW_MAX_LEVELS; i++) w.api.begin_array(&w.api);
    for (int i = 0; i < HOST_JW_MAX_LEVELS; i++) w.api.end_array(&w.api);
    assert_true(host_jw_finish(&w));
    assert_int_equal(w.len, 2 * HOST_JW_MAX_LEVELS);
    host_jw_free(&w);
}

/* ---- 5. host_number_parse ---------------------------------------------------------- */

static void Jwrite_number_parse_reads_every_shortest_text_back(void **state)
{
    rng r = {DOUBLE_SEED};
    for (long i = 0; i < RANDOM_DOUBLES; i++) {
        double x = random_double(&r), y = NAN;
        char t[32];
        size_t len = host_json_number_text(x, t);
        const char *end = host_number_parse(t, t + len, &y);
        if (end != t + len || bits_of(y) != bits_of(x))
            fail_msg("'%s' (from %a) parsed as %a, %s", t, x, y,
                     end == t + len ? "to the end" : "stopping early");
    }
    /* and the nice ones */
    for (int i = 0; i < 100000; i++) {
        int d;
        double x = random_decimal(&r, -330, 310, &d), y = NAN;
        char t[32];
        size_t len = host_json_number_text(x, t);
        if (!isfinite(x)) continue;
        const char *end = host_number_parse(t, t + len, &y);
        if (end != t + len || bits_of(y) != bits_of(x))
            fail_msg("'%s' (from %a) parsed as %a", t, x, y);
    }
}

static void expect_parse_as_strtod(const char *s)
{
    double want = strtod(s, NULL), got = NAN;
    const char *end = host_number_parse(s, s + strlen(s), &got);
    if (end != s + strlen(s)) fail_msg("'%s': stopped at offset %td", s, end ? end - s : -1);
    if (bits_of(got) != bits_of(want)) fail_msg("'%s': parsed %a, strtod gives %a", s, got, want);
}

static void Jwrite_number_parse_equals_strtod_on_json_numbers(void **state)
{
    static const char *const numbers[] = {
        "0",
        "-0",
        "1",
        "-1",
        "0.1",
        "-0.0",
        "0e0",
        "0.0e-10",
        "100e-2",
        "1E5",
        "1e+5",
        "1.5E-5",
        "-2.5e-5",
        "1e0",
        "1e400",
        "-1e400",
        "1e-400",
        "-1e-400",
        "1e308",
        "1e309",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "2.2250738585072014e-308",
        "4.9406564584124654e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "5e-324",
        "1e-323",
        "9007199254740993",
        "9007199254740993.0000000000000001",
        "9007199254740992.9999999999999999",
        "123456789012345678901234567890",
        "0.000000000000000000000000000001",
        "3.141592653589793238462643383279502884197",
        "7.2057594037927933e16",
        "1e23",
        "8.98846567431158e307",
        "0.30000000000000004",
        "0.1e1",
        "12345678901234567890e-20",
        "4.35679214579818e-292",
        "1448997445238699",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126",
        "0.0000000000000000000000000000000000000000000000000000000000000000000000000001e-300",
        "100000000000000000000000000000000000000000000000000000000000000000000e240"};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        expect_parse_as_strtod(numbers[i]);
    /* random decimals of up to 30 digits, some with a fraction, all exponents */
    rng r = {0xba5e};
    for (int i = 0; i < 100000; i++) {
        char s[80];
        size_t n = 0, d = 1 + below(&r, 30), point = below(&r, 2) ? below(&r, d) + 1 : d;
        if (below(&r, 2)) s[n++] = '-';
        for (size_t j = 0; j < d; j++) {
            if (j == point) s[n++] = '.';
            s[n++] =
                (char)('0' + (j == 0 && d > 1 && point > 1 ? 1 + below(&r, 9) : below(&r, 10)));
        }
        if (below(&r, 4)) n += (size_t)sprintf(s + n, "e%d", (int)below(&r, 800) - 400);
        s[n] = '\0';
        expect_parse_as_strtod(s);
    }
    /* end bounds the number; no number is NULL */
    double y = 0;
    const char *s = "123456";
    assert_ptr_equal(host_number_parse(s, s + 3, &y), s + 3);
    assert_true(y == 123);
    const char *x = "x1";
    assert_null(host_number_parse(x, x + 2, &y));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Jwrite_random_doubles_print_shortest_exact_round_trip),
        cmocka_unit_test(Jwrite_nice_doubles_print_shortest_and_as_cjson_does),
        cmocka_unit_test(Jwrite_doubles_needing_17_digits_keep_every_bit_where_cjson_loses_some),
        cmocka_unit_test(Jwrite_floats_print_shortest_exact_round_trip_in_a_strided_sweep),
        cmocka_unit_test(Jwrite_float_extremes_print_shortest),
        cmocka_unit_test(Jwrite_print_of_random_trees_equals_cjson_print_byte_for_byte),
        cmocka_unit_test(Jwrite_print_of_scalars_empty_and_special_values),
        cmocka_unit_test(Jwrite_print_of_trees_nested_64_deep_equals_cjson),
        cmocka_unit_test(Jwrite_api_calls_write_what_print_writes_at_every_base),
        cmocka_unit_test(Jwrite_api_at_base_two_indents_by_two_more_tabs),
        cmocka_unit_test(Jwrite_keys_of_every_length_and_escape_print_as_cjson),
        cmocka_unit_test(Jwrite_array_f32_equals_begin_array_number_f32_end_array),
        cmocka_unit_test(Jwrite_deferred_floats_expand_to_the_same_text_cut_anywhere),
        cmocka_unit_test(Jwrite_spool_writes_the_expanded_stream_and_reports_a_failed_write),
        cmocka_unit_test(Jwrite_spool_keeps_order_when_the_file_is_slower_than_the_caller),
        cmocka_unit_test(Jwrite_entity_writes_the_id_of_callback_and_fails_on_null),
        cmocka_unit_test(Jwrite_value_writes_a_tree_and_number_f32_as_its_text),
        cmocka_unit_test(Jwrite_value_with_a_nan_fails_like_number),
        cmocka_unit_test(Jwrite_each_misuse_fails_finish_with_its_message_and_start_resets),
        cmocka_unit_test(Jwrite_nesting_exactly_64_deep_is_accepted),
        cmocka_unit_test(Jwrite_number_parse_reads_every_shortest_text_back),
        cmocka_unit_test(Jwrite_number_parse_equals_strtod_on_json_numbers),
    };
    return cmocka_run_group_tests_name("jwrite", tests, NULL, NULL);
}
