/* SPDX-License-Identifier: MIT */
/* jwrite.c: JSON text out in cJSON_Print's layout, with exact shortest numbers (jwrite.h). */
#include "jwrite.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jplain.h"
#include "mem.h"
#include "number.h"

/* ---- numbers ---- */

/* Decimal digits of v (1-20). */
static int digit_count(uint64_t v)
{
    static const uint64_t pow10[19] = {10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
    int n = 1;
    while (n < 20 && v >= pow10[n - 1]) n++;
    return n;
}

/* The n digits of v as characters at out[0..n), two at a time (32-bit steps when they
 * fit, as for every float). */
static void put_digits(char *out, uint64_t v, int n)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    char *o = out + n;
    while (v > UINT32_MAX) {
        unsigned k = (unsigned)(v % 100) * 2;
        v /= 100;
        *--o = pairs[k + 1];
        *--o = pairs[k];
    }
    uint32_t u = (uint32_t)v;
    while (u >= 100) {
        unsigned k = u % 100 * 2;
        u /= 100;
        *--o = pairs[k + 1];
        *--o = pairs[k];
    }
    if (u >= 10) {
        *--o = pairs[u * 2 + 1];
        *--o = pairs[u * 2];
    } else {
        *--o = (char)('0' + u);
    }
}

/* sig * 10^k (sig without trailing zeros) laid out as printf's %.<p>g (p = 15, or 17
 * past 15 digits): fixed notation for exponents -4 <= e < p, else d.ddde+XX. Into out
 * (at most 25 bytes and a NUL); returns the length. Byte by byte: the digits were just
 * stored one by one, and wide loads of them would stall. */
static size_t layout(char *out, bool negative, uint64_t sig, int k)
{
    char d[24];
    int n = digit_count(sig);
    put_digits(d, sig, n);
    int p = n <= 15 ? 15 : 17, e = k + n - 1;
    char *o = out;
    if (negative) *o++ = '-';
    if (e < -4 || e >= p) {
        *o++ = d[0];
        if (n > 1) *o++ = '.';
        for (int i = 1; i < n; i++) *o++ = d[i];
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        int a = e < 0 ? -e : e;
        if (a >= 100) *o++ = (char)('0' + a / 100);
        *o++ = (char)('0' + a / 10 % 10);
        *o++ = (char)('0' + a % 10);
    } else if (e < 0) {
        *o++ = '0';
        *o++ = '.';
        for (int z = -e - 1; z > 0; z--) *o++ = '0';
        for (int i = 0; i < n; i++) *o++ = d[i];
    } else {
        for (int i = 0; i < n; i++) {
            *o++ = d[i];
            if (i == e && i + 1 < n) *o++ = '.';
        }
        for (int z = n; z <= e; z++) *o++ = '0'; /* an integer's zeros */
    }
    *o = '\0';
    return (size_t)(o - out);
}

/* Decimal digits of v (1-10): from its bit length, one comparison. */
static int digit_count32(uint32_t v)
{
    static const uint32_t pow10[10] = {1u,      10u,      100u,      1000u,      10000u,
                                       100000u, 1000000u, 10000000u, 100000000u, 1000000000u};
    int n = ((32 - __builtin_clz(v | 1u)) * 1233) >> 12; /* bits * log10(2), at most 1 low */
    return n + (n < 10 && v >= pow10[n]);
}

/* low (< 10^8) as eight ASCII digits, zeros in front, the first in the lowest byte: the
 * digits computed side by side in one 64-bit word (two 4-digit halves, then four 2-digit
 * quarters, then tens and ones; the multipliers are exact for these ranges), so the text
 * is built in a register and stored at once, never stored piecemeal and read back. */
static uint64_t eight_digits(uint32_t low)
{
    uint64_t x = (uint64_t)(low / 10000u) | (uint64_t)(low % 10000u) << 32;
    uint64_t hundreds = ((x * 10486u) >> 20) & 0x0000007F0000007Full; /* x / 100 */
    x -= hundreds * 100u;
    uint64_t z = hundreds | x << 16;                            /* four 2-digit lanes */
    uint64_t tens = ((z * 103u) >> 10) & 0x000F000F000F000Full; /* z / 10 */
    return (tens | (z - tens * 10u) << 8) + 0x3030303030303030ull;
}

/* layout() for a float's digits (at most 9), built in registers and stored in 16-byte
 * pieces; the exponent form goes to layout(). Writes up to 26 bytes of out (past the
 * text's end): out must hold 32. */
static size_t layout_f32(char *out, bool negative, uint32_t sig, int k)
{
    int n = digit_count32(sig), e = k + n - 1;
    if (n > 9 || e < -4 || e >= 15) return layout(out, negative, sig, k);
    __extension__ typedef unsigned __int128 u128;
    u128 d = (u128)('0' + sig / 100000000u) | (u128)eight_digits(sig % 100000000u) << 8;
    d >>= 8 * (9 - n); /* the n digits in the low bytes, zero bytes above */
    char *o = out;
    *o = '-';
    o += negative;
    if (e < 0) { /* 0.000ddd: at most three zeros after the point */
        memcpy(o, "0.000", 5);
        o += 1 - e;
        memcpy(o, &d, 16);
        o += n;
    } else if (e + 1 >= n) { /* an integer: its digits, then zeros (at most 14) */
        memcpy(o, &d, 16);
        memcpy(o + n, "00000000000000", 14);
        o += e + 1;
    } else { /* d.ddd: the digits, the point over the first one after it, the rest on */
        u128 rest = d >> (8 * (e + 1));
        memcpy(o, &d, 16);
        o[e + 1] = '.';
        memcpy(o + e + 2, &rest, 16);
        o += n + 1;
    }
    *o = '\0';
    return (size_t)(o - out);
}

static size_t special(double x, char *out)
{
    const char *t = isnan(x) || isinf(x) ? "null" : signbit(x) ? "-0" : "0";
    size_t n = strlen(t);
    memcpy(out, t, n + 1);
    return n;
}

size_t host_json_number_text(double x, char *out)
{
    if (x == 0 || !isfinite(x)) return special(x, out);
    int k;
    uint64_t sig = host_number_shortest_f64(x, &k);
    return layout(out, signbit(x), sig, k);
}

size_t host_json_f32_text(float x, char *out)
{
    if (x == 0 || !isfinite(x)) return special(x, out);
    int k;
    uint64_t sig = host_number_shortest_f32(x, &k);
    return layout_f32(out, signbit(x), (uint32_t)sig, k);
}

/* ---- the buffer ---- */

bool host_jw_reserve(host_jwriter *w, size_t n)
{
    if (w->cap - w->len >= n) return true;
    if (w->no_memory) return false;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap - w->len < n) cap *= 2;
    char *b = realloc(w->buf, cap);
    if (!b) {
        w->no_memory = true;
        if (!w->error) w->error = "out of memory";
        return false;
    }
    w->buf = b;
    w->cap = cap;
    if (cap >= ((size_t)4 << 20)) host_mem_advise_huge(b, cap); /* a whole scene's text */
    return true;
}

void host_jw_raw(host_jwriter *w, const char *s, size_t n)
{
    if (!host_jw_reserve(w, n)) return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

void host_jw_newline(host_jwriter *w, int tabs)
{
    if (!host_jw_reserve(w, (size_t)tabs + 1)) return;
    char *o = w->buf + w->len;
    *o++ = '\n';
    memset(o, '\t', (size_t)tabs);
    w->len += (size_t)tabs + 1;
}

/* Bytes that cJSON escapes: '"', '\\' and every control character. */
static bool needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

static void quoted_n(host_jwriter *w, const char *s, size_t n);

void host_jw_quoted(host_jwriter *w, const char *s)
{
    if (!s) s = "";
    quoted_n(w, s, strlen(s));
}

/* s (n bytes before its NUL) quoted and escaped. */
static void quoted_n(host_jwriter *w, const char *s, size_t n)
{
    if (!host_jw_reserve(w, n * 6 + 2)) return;
    char *o = w->buf + w->len;
    *o++ = '"';
    const unsigned char *p =
        (const unsigned char *)host_json_plain_end(s, s + n); /* most: the end */
    memcpy(o, s, (size_t)(p - (const unsigned char *)s));
    o += p - (const unsigned char *)s;
    for (; *p; p++) {
        unsigned char c = *p;
        if (!needs_escape(c)) {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"':
            *o++ = '"';
            break;
        case '\\':
            *o++ = '\\';
            break;
        case '\b':
            *o++ = 'b';
            break;
        case '\f':
            *o++ = 'f';
            break;
        case '\n':
            *o++ = 'n';
            break;
        case '\r':
            *o++ = 'r';
            break;
        case '\t':
            *o++ = 't';
            break;
        default: /* \u00XX, lower-case hex as cJSON */
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = "0123456789abcdef"[c >> 4];
            *o++ = "0123456789abcdef"[c & 15];
        }
    }
    *o++ = '"';
    w->len = (size_t)(o - w->buf);
}

#define SHORT_KEY 48 /* a key up to this long is written in one pass */

void host_jw_key(host_jwriter *w, bool comma, int tabs, const char *key)
{
    if (tabs >= 0 && tabs < 64 && host_jw_reserve(w, (size_t)tabs + SHORT_KEY + 6)) {
        char *o = w->buf + w->len;
        if (comma) *o++ = ',';
        *o++ = '\n';
        for (int t = 0; t < tabs; t++) *o++ = '\t';
        *o++ = '"';
        size_t i = 0; /* copied and checked in one pass, its end found on the way */
        for (; i < SHORT_KEY && key[i] && !needs_escape((unsigned char)key[i]); i++) o[i] = key[i];
        if (!key[i]) { /* short and plain: most keys */
            memcpy(o + i, "\":\t", 3);
            w->len = (size_t)(o + i + 3 - w->buf);
            return;
        }
    }
    size_t n = strlen(key);
    if (!host_jw_reserve(w, (size_t)tabs + n * 6 + 6)) return;
    char *o = w->buf + w->len;
    if (comma) *o++ = ',';
    *o++ = '\n';
    memset(o, '\t', (size_t)tabs);
    o += tabs;
    w->len = (size_t)(o - w->buf);
    quoted_n(w, key, n); /* room reserved */
    w->buf[w->len++] = ':';
    w->buf[w->len++] = '\t';
}

/* ---- the value state machine ---- */

static void fail(host_jwriter *w, const char *why)
{
    if (!w->error) w->error = why;
}

/* Before any value: check that one may come here and write what precedes it. */
static bool value_begins(host_jwriter *w)
{
    if (w->error) return false;
    if (w->level == 0) {
        if (w->done) return fail(w, "a second value after the complete one"), false;
        return true;
    }
    int top = w->level - 1;
    if (w->is_object[top]) {
        if (w->key_due) return fail(w, "a value where a key was due (call key() first)"), false;
        w->key_due = true;
    } else if (w->items[top]) {
        host_jw_raw(w, ", ", 2);
    }
    w->items[top]++;
    return true;
}

static void value_ends(host_jwriter *w)
{
    if (w->level == 0) w->done = true;
}

static host_jwriter *self(ecs_json_writer *api)
{
    return (host_jwriter *)api; /* api is the first member */
}

static void open_container(host_jwriter *w, bool object)
{
    if (!value_begins(w)) return;
    if (w->level == HOST_JW_MAX_LEVELS) {
        _Static_assert(HOST_JW_MAX_LEVELS == 997, "the message below says 997");
        fail(w, "nested deeper than 997 levels (a scene file nests 1000 at most, 3 of them "
                "around each component)");
        return;
    }
    host_jw_raw(w, object ? "{" : "[", 1);
    w->is_object[w->level] = object;
    w->items[w->level] = 0;
    w->level++;
    w->key_due = object;
}

/* Note the key just written at the end of the text (`"key":<TAB>`, its text from `at`):
 * where its text between the quotes stands, for keys_unique. */
static void note_key(host_jwriter *w, size_t at)
{
    if (w->nkeys == w->capkeys) {
        size_t cap = w->capkeys ? w->capkeys * 2 : 64;
        struct host_jw_key_at *k = realloc(w->keys, cap * sizeof *k);
        if (!k) {
            w->no_memory = true;
            fail(w, "out of memory");
            return;
        }
        w->keys = k;
        w->capkeys = cap;
    }
    w->keys[w->nkeys++] = (struct host_jw_key_at){at, w->len - 3 - at}; /* '":\t' after */
}

/* The object closing holds its keys as the last n noted: forget them, and fail naming
 * the first key that stands twice (false), as a load would. */
static bool keys_unique(host_jwriter *w, size_t n)
{
    assert(n <= w->nkeys);
    w->nkeys -= n;
    if (n < 2) return true; /* keys may be NULL: no key was ever noted */
    const struct host_jw_key_at *k = w->keys + w->nkeys;
    host_json_key small[16], *refs = n <= 16 ? small : malloc(n * sizeof *refs);
    if (!refs) {
        w->no_memory = true;
        fail(w, "out of memory");
        return false;
    }
    for (size_t i = 0; i < n; i++) refs[i] = (host_json_key){w->buf + k[i].at, k[i].n, i, false};
    size_t first, dup = host_json_first_duplicate(refs, n, &first);
    if (refs != small) free(refs);
    if (dup == n) return true;
    snprintf(w->detail, sizeof w->detail,
             "duplicate key \"%.*s%s\" in one object (a load would refuse the file)",
             (int)(k[dup].n < 48 ? k[dup].n : 48), w->buf + k[dup].at, k[dup].n > 48 ? "..." : "");
    fail(w, w->detail);
    return false;
}

static void close_container(host_jwriter *w, bool object)
{
    if (w->error) return;
    if (w->level == 0 || w->is_object[w->level - 1] != object) {
        fail(w,
             object ? "end_object() without an open object" : "end_array() without an open array");
        return;
    }
    if (object && !w->key_due) {
        fail(w, "end_object() after a key with no value");
        return;
    }
    if (object && !keys_unique(w, w->items[w->level - 1])) return;
    w->level--;
    if (object) host_jw_newline(w, w->base + w->level);
    host_jw_raw(w, object ? "}" : "]", 1);
    w->key_due = w->level > 0 && w->is_object[w->level - 1];
    value_ends(w);
}

static void api_begin_object(ecs_json_writer *a)
{
    open_container(self(a), true);
}

static void api_end_object(ecs_json_writer *a)
{
    close_container(self(a), true);
}

static void api_begin_array(ecs_json_writer *a)
{
    open_container(self(a), false);
}

static void api_end_array(ecs_json_writer *a)
{
    close_container(self(a), false);
}

static void api_key(ecs_json_writer *a, const char *key)
{
    host_jwriter *w = self(a);
    if (w->error) return;
    if (w->level == 0 || !w->is_object[w->level - 1]) {
        fail(w, "key() outside an object");
        return;
    }
    if (!w->key_due) {
        fail(w, "two keys in a row (a value is due)");
        return;
    }
    if (!key) {
        fail(w, "key(NULL)");
        return;
    }
    bool comma = w->items[w->level - 1] > 0;
    int tabs = w->base + w->level;
    size_t at = w->len + comma + 1 + (size_t)tabs + 1; /* [","] "\n" tabs '"' */
    host_jw_key(w, comma, tabs, key);
    if (w->no_memory) return;
    note_key(w, at);
    w->key_due = false;
}

static void scalar(host_jwriter *w, const char *text, size_t n)
{
    if (!value_begins(w)) return;
    host_jw_raw(w, text, n);
    value_ends(w);
}

static void api_string(ecs_json_writer *a, const char *s)
{
    host_jwriter *w = self(a);
    if (!s) {
        fail(w, "string(NULL)");
        return;
    }
    if (!value_begins(w)) return;
    host_jw_quoted(w, s);
    value_ends(w);
}

static void api_number(ecs_json_writer *a, double x)
{
    host_jwriter *w = self(a);
    if (!isfinite(x)) {
        fail(w, "a NaN or infinite number (JSON has none)");
        return;
    }
    char t[32];
    scalar(w, t, host_json_number_text(x, t));
}

/* x as text, or as a deferred token (defer_f32), at o; returns the bytes written (at most
 * 16, and up to 26 more past them may be scribbled). */
static inline size_t f32_out(const host_jwriter *w, float x, char *o)
{
    if (!w->defer_f32) return host_json_f32_text(x, o);
    *o = HOST_JW_F32;
    memcpy(o + 1, &x, 4);
    return 5;
}

static void api_number_f32(ecs_json_writer *a, float x)
{
    host_jwriter *w = self(a);
    if (!isfinite(x)) {
        fail(w, "a NaN or infinite number (JSON has none)");
        return;
    }
    char t[32];
    scalar(w, t, f32_out(w, x, t));
}

size_t host_jw_expand(host_jw_expander *x, const char *in, size_t n, char *out)
{
    char *o = out;
    const char *end = in + n;
    if (x->have) { /* finish the token the last piece cut */
        size_t k = 5 - x->have < n ? 5 - x->have : n;
        memcpy(x->part + x->have, in, k);
        in += k;
        if ((x->have += (uint32_t)k) < 5) return 0;
        float f;
        memcpy(&f, x->part + 1, 4);
        o += host_json_f32_text(f, o);
        x->have = 0;
    }
    while (in < end) {
        const char *t = memchr(in, HOST_JW_F32, (size_t)(end - in));
        size_t run = (size_t)((t ? t : end) - in);
        memcpy(o, in, run);
        o += run;
        in += run;
        if (!t) break;
        if (end - in < 5) { /* cut: keep its bytes for the next piece */
            x->have = (uint32_t)(end - in);
            memcpy(x->part, in, x->have);
            break;
        }
        float f;
        memcpy(&f, in + 1, 4);
        o += host_json_f32_text(f, o);
        in += 5;
    }
    return (size_t)(o - out);
}

static void api_array_f32(ecs_json_writer *a, const float *x, uint32_t n)
{
    host_jwriter *w = self(a);
    if (n && !x) {
        fail(w, "array_f32(NULL, n)");
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(x[i])) {
            fail(w, "a NaN or infinite number (JSON has none)");
            return;
        }
    if (!value_begins(w) || !host_jw_reserve(w, (size_t)n * 18 + 34)) return;
    char *o = w->buf + w->len;
    *o++ = '[';
    for (uint32_t i = 0; i < n; i++) {
        if (i) *o++ = ',', *o++ = ' ';
        o += f32_out(w, x[i], o);
    }
    *o++ = ']';
    w->len = (size_t)(o - w->buf);
    value_ends(w);
}

static void api_boolean(ecs_json_writer *a, bool b)
{
    scalar(self(a), b ? "true" : "false", b ? 4 : 5);
}

static void api_null(ecs_json_writer *a)
{
    scalar(self(a), "null", 4);
}

/* A cJSON value through the state machine: the same layout whoever writes it. */
static void put_value(host_jwriter *w, const cJSON *v)
{
    if (w->error) return;
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        bool object = cJSON_IsObject(v);
        open_container(w, object);
        for (const cJSON *c = v->child; c && !w->error; c = c->next) {
            if (object) api_key(&w->api, c->string ? c->string : "");
            put_value(w, c);
        }
        close_container(w, object);
    } else if (cJSON_IsString(v)) {
        api_string(&w->api, v->valuestring ? v->valuestring : "");
    } else if (cJSON_IsNumber(v)) {
        char t[32];
        scalar(w, t, host_json_number_text(v->valuedouble, t)); /* NaN: null, as cJSON */
    } else if (cJSON_IsBool(v)) {
        api_boolean(&w->api, cJSON_IsTrue(v));
    } else if (cJSON_IsNull(v)) {
        api_null(&w->api);
    } else {
        fail(w, "a cJSON value of no JSON type (raw or invalid)");
    }
}

/* Does v hold a NaN or an infinity anywhere? */
static bool has_non_finite(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return !isfinite(v->valuedouble);
    for (const cJSON *c = v->child; c; c = c->next)
        if (has_non_finite(c)) return true;
    return false;
}

static void api_value(ecs_json_writer *a, const struct cJSON *v)
{
    host_jwriter *w = self(a);
    if (!v) {
        fail(w, "value(NULL)");
        return;
    }
    if (has_non_finite(v)) { /* as number(): a plugin's NaN would come back as null */
        fail(w, "a NaN or infinite number (JSON has none)");
        return;
    }
    put_value(w, v);
}

static void api_entity(ecs_json_writer *a, ecs_entity e)
{
    host_jwriter *w = self(a);
    const char *id = w->id_of ? w->id_of(w->ctx, e) : NULL;
    if (!id) {
        fail(w, "a reference to a dead entity (or outside a scene save)");
        return;
    }
    api_string(a, id);
}

void host_jw_init(host_jwriter *w)
{
    *w = (host_jwriter){.api = {
                            .struct_size = sizeof(ecs_json_writer),
                            .begin_object = api_begin_object,
                            .end_object = api_end_object,
                            .begin_array = api_begin_array,
                            .end_array = api_end_array,
                            .key = api_key,
                            .string = api_string,
                            .number = api_number,
                            .number_f32 = api_number_f32,
                            .array_f32 = api_array_f32,
                            .boolean = api_boolean,
                            .null = api_null,
                            .value = api_value,
                            .entity = api_entity,
                        }};
}

void host_jw_free(host_jwriter *w)
{
    free(w->buf);
    free(w->keys);
    w->buf = NULL;
    w->keys = NULL;
    w->len = w->cap = w->nkeys = w->capkeys = 0;
}

void host_jw_start(host_jwriter *w, int base)
{
    w->base = base;
    w->level = 0;
    w->done = false;
    w->key_due = false;
    w->nkeys = 0;
    if (!w->no_memory) w->error = NULL;
}

bool host_jw_finish(host_jwriter *w)
{
    if (!w->error && w->level > 0) fail(w, "an object or array left open");
    return !w->error;
}

char *host_json_print(const cJSON *v, size_t *len)
{
    host_jwriter w;
    host_jw_init(&w);
    host_jw_start(&w, 0);
    put_value(&w, v);
    host_jw_raw(&w, "\n", 2); /* the newline and the NUL */
    if (!host_jw_finish(&w)) {
        host_jw_free(&w);
        return NULL;
    }
    free(w.keys);
    *len = w.len - 1;
    return w.buf;
}
