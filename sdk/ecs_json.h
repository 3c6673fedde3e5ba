/* SPDX-License-Identifier: MIT */
/* ecs_json.h: header-only helpers for a plugin's JSON (scenes, reload migration): what
 * every component manager that saves floats and names needs, written once. C11 and C++.
 *
 * - ecs_json_float(f): the double with the fewest significant digits (1-9) that converts
 *   back to the float f. cJSON prints doubles with %.15g, so 0.1f is saved as 0.1 rather
 *   than 0.10000000149011612, and a scene reads back bit for bit.
 * - ecs_json_type_name(v): "a string", "an array", ... for "expected X, found Y" errors.
 * - ecs_utf8_decode(p, &cp): one UTF-8 sequence, strictly (no overlongs, surrogates or
 *   code points above U+10FFFF), for checking names.
 */
#ifndef ECS_JSON_H
#define ECS_JSON_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline double ecs_json_pow10_(int k) /* 10^k, 0 <= k <= 22: exact in a double */
{
    static const double t[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    return t[k];
}

/* x (0 <= x < 2^52) rounded to the nearest integer, ties to even: adding 2^52 leaves no
 * bits below the units, so the IEEE addition does the rounding (no fast-math here). */
static inline double ecs_json_round_int_(double x)
{
    return (x + 0x1p52) - 0x1p52;
}

/* a > 0 rounded to `digits` significant digits, where 10^e <= a < 10^(e+1): the double
 * nearest m * 10^k (k = e - digits + 1, |k| <= 22), found by one correctly rounded
 * multiplication or division of exact values, as strtod finds it from the digits. */
static inline double ecs_json_round_digits_(double a, int e, int digits)
{
    int k = e - digits + 1;
    if (k >= 0) return ecs_json_round_int_(a / ecs_json_pow10_(k)) * ecs_json_pow10_(k);
    return ecs_json_round_int_(a * ecs_json_pow10_(-k)) / ecs_json_pow10_(-k);
}

/* ecs_json_float through the C library: print 1, 2, ... 9 significant digits until strtod
 * gives f back (9 always do). About 30 times slower than the arithmetic. */
static inline double ecs_json_float_printf_(float f)
{
    char buf[32];
    double d = f;
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if ((float)(d = strtod(buf, NULL)) == f) break;
    }
    return d;
}

/* The double with the fewest significant digits (1-9) that converts back to f, so 0.1f
 * is written 0.1 rather than 0.10000000149011612 and a scene reads back bit for bit
 * (cJSON prints it with %.15g, which gives exactly those digits). Arithmetic only, no
 * printf/strtod: tries 7 digits, then fewer while they round-trip, or 8 then 9. Outside
 * [1e-12, 1e22), where the powers of ten involved are not exact, through the C library;
 * 0, inf and nan as they are. */
static inline double ecs_json_float(float f)
{
    const double a = fabs((double)f);
    if (a == 0 || !isfinite(a)) return f;
    if (!(a >= 1e-12 && a < 1e22)) return ecs_json_float_printf_(f);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    int b = (int)(bits >> 23 & 0xff) - 127; /* 2^b <= a < 2^(b+1): a is a normal float */
    int e = b >= 0 ? b * 78913 >> 18 : -((-b * 78913 + 262143) >> 18); /* floor(b log10 2) */
    if (e + 1 >= 0 ? a >= ecs_json_pow10_(e + 1) : a * ecs_json_pow10_(-e - 1) >= 1.0) e++;
    const float fa = (float)a; /* now 10^e <= a < 10^(e+1) */
    double best = ecs_json_round_digits_(a, e, 7);
    if ((float)best == fa) {
        for (int digits = 6; digits >= 1; digits--) {
            double c = ecs_json_round_digits_(a, e, digits);
            if ((float)c != fa) break;
            best = c;
        }
    } else if ((float)(best = ecs_json_round_digits_(a, e, 8)) != fa) {
        best = ecs_json_round_digits_(a, e, 9); /* 9 significant digits always round-trip a float */
    }
    return f < 0 ? -best : best;
}

/* What kind of JSON value v is, for messages: "a number", "an object", ... ("nothing"
 * for NULL). */
static inline const char *ecs_json_type_name(const cJSON *v)
{
    if (!v) return "nothing";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "an invalid value";
}

/* Decode the UTF-8 sequence at p into *cp. Returns its length, or 0 when it is malformed
 * (bad lead or continuation byte, overlong, a surrogate, above U+10FFFF). p must be
 * NUL-terminated: a sequence cut short by the NUL is malformed. */
static inline size_t ecs_utf8_decode(const unsigned char *p, uint32_t *cp)
{
    size_t n;
    uint32_t v, min;
    if (p[0] < 0x80) return *cp = p[0], 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        n = 2, v = p[0] & 0x1Fu, min = 0x80;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF)
        n = 3, v = p[0] & 0x0Fu, min = 0x800;
    else if (p[0] >= 0xF0 && p[0] <= 0xF4)
        n = 4, v = p[0] & 0x07u, min = 0x10000;
    else
        return 0;
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xC0u) != 0x80u) return 0; /* also stops at the terminating NUL */
        v = (v << 6) | (p[k] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

#ifdef __cplusplus
}
#endif

#endif /* ECS_JSON_H */
