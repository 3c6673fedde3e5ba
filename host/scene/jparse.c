/* SPDX-License-Identifier: MIT */
/* jparse.c: strict, fast JSON into a cJSON tree (jparse.h).
 *
 * One pass and no recursion: the arrays and objects still open are a stack of their
 * nodes (at most HOST_JPARSE_MAX_DEPTH). Each new node is linked into its parent at once,
 * keeping cJSON's invariant at every step: parent->child is the first child, its prev the
 * last child, whose next is NULL. So a parse that fails half-way leaves a well-formed
 * tree, freed whole by cJSON_Delete (malloc mode) or with its arena.
 *
 * Where the time goes, and how little of it: strings without escapes are found 8 bytes
 * at a time and copied once; escaped ones are decoded into a scratch buffer, then copied
 * at their exact size; numbers are checked against the grammar here and converted by
 * host_number_parse (fast_float, correctly rounded like strtod); in arena mode a node is
 * a pointer bump at the bottom of a block and a string one at its top.
 */
#include "jparse.h"
#include "jplain.h"

#include "log.h"
#include "mem.h"
#include "number.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- the arena ----------------------------------------------------------------------
 * A list of blocks, newest first. In the newest, nodes are taken upwards from `low`
 * (keeping their alignment: every node is sizeof(cJSON) bytes) and strings downwards from
 * `high`; the free space is [low, high). When a request does not fit, a new block at
 * least as large as all the others together is added, so n bytes take O(log n) blocks;
 * the rest of the old block stays unused. */

typedef struct arena_block {
    struct arena_block *next; /* the older blocks */
    size_t size;              /* bytes, this header included */
} arena_block;                /* 16 bytes: what follows is aligned for a cJSON node */

_Static_assert(sizeof(arena_block) % _Alignof(cJSON) == 0, "nodes follow the block header");
_Static_assert(sizeof(cJSON) % _Alignof(cJSON) == 0, "nodes follow each other");

struct host_json_arena {
    arena_block *blocks; /* newest first */
    char *low, *high;    /* the free space of the newest block */
    size_t first_size;   /* bytes of the first block, from the text's length */
    size_t reserved;     /* bytes of all blocks */
    size_t retired_used; /* bytes given out from the blocks before the newest */
    size_t count;        /* blocks */
};

/* The first block holds the tree of a typical file of text_len bytes: a scene of small
 * objects of short arrays of numbers (examples/gen_scene.c) takes about 5 bytes of nodes
 * and strings per byte of text; a glTF file (few nodes, long strings) much less. Memory
 * of the block that is never touched costs no RAM. */
#define ARENA_BYTES_PER_TEXT_BYTE 6
#define ARENA_MIN_BLOCK           4096

host_json_arena *host_json_arena_new(size_t text_len)
{
    host_json_arena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    size_t max = (SIZE_MAX - ARENA_MIN_BLOCK) / ARENA_BYTES_PER_TEXT_BYTE;
    a->first_size = (text_len < max ? text_len : max) * ARENA_BYTES_PER_TEXT_BYTE + ARENA_MIN_BLOCK;
    return a;
}

void host_json_arena_free(host_json_arena *a)
{
    if (!a) return;
    for (arena_block *b = a->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

void host_json_arena_reset(host_json_arena *a)
{
    arena_block *keep = a->blocks;
    if (!keep) return;
    for (arena_block *b = keep->next, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    keep->next = NULL;
    a->low = (char *)(keep + 1);
    a->high = (char *)keep + keep->size;
    a->reserved = keep->size;
    a->retired_used = 0;
    a->count = 1;
}

size_t host_json_arena_blocks(const host_json_arena *a, size_t *used)
{
    if (used) {
        size_t newest = a->blocks ? a->blocks->size - sizeof(arena_block) : 0;
        *used = a->retired_used + newest - (size_t)(a->high - a->low);
    }
    return a->count;
}

/* Add a block with room for `need` bytes: as large as all the others together (the
 * first: first_size), or smaller when that much memory is refused. False when even
 * `need` bytes are refused. */
static bool arena_grow(host_json_arena *a, size_t need)
{
    size_t min = sizeof(arena_block) + need;
    size_t size = a->blocks ? a->reserved : a->first_size;
    arena_block *b;
    if (size < min) size = min;
    while (!(b = malloc(size)) && size > min) size = size / 2 > min ? size / 2 : min;
    if (!b) return false;
    host_mem_advise_huge(b, size);
    if (a->blocks)
        a->retired_used += a->blocks->size - sizeof(arena_block) - (size_t)(a->high - a->low);
    *b = (arena_block){a->blocks, size};
    a->blocks = b;
    a->low = (char *)(b + 1);
    a->high = (char *)b + size;
    a->reserved += size;
    a->count++;
    return true;
}

/* ---- the parser's state ------------------------------------------------------------ */

/* A key of an open object: where its '"' is, and its length when it has no escape
 * (KEY_ESCAPED otherwise: decoded when compared). */
typedef struct key_note {
    const char *at;
    size_t plain_len;
} key_note;

#define KEY_ESCAPED SIZE_MAX

typedef struct parser {
    const char *p, *end;    /* the next byte to read; the end of the text */
    host_json_arena *arena; /* NULL: malloc mode */
    char *scratch;          /* where escaped strings are decoded */
    size_t scratch_cap;
    host_jparse_status status; /* the first error */
    const char *error_at;
    bool unique_keys; /* refuse a key twice in one object, and \u0000 in a string */
    key_note *keys;   /* unique_keys: where each key of the open objects starts */
    size_t nkeys, capkeys;
    const char *first_at; /* HOST_JPARSE_DUPLICATE_KEY: the first occurrence */
} parser;

static bool fail(parser *p, host_jparse_status status, const char *at)
{
    p->status = status;
    p->error_at = at;
    return false;
}

/* A zeroed node, as cJSON_New_Item makes; NULL when out of memory. */
static cJSON *new_node(parser *p)
{
    host_json_arena *a = p->arena;
    if (!a) return calloc(1, sizeof(cJSON));
    if ((size_t)(a->high - a->low) < sizeof(cJSON) && !arena_grow(a, sizeof(cJSON))) return NULL;
    cJSON *n = (cJSON *)(void *)a->low;
    a->low += sizeof(cJSON);
    memset(n, 0, sizeof *n);
    return n;
}

/* A NUL-terminated copy of s[0..n); NULL when out of memory. */
static char *new_string(parser *p, const char *s, size_t n)
{
    host_json_arena *a = p->arena;
    char *out;
    if (!a) {
        out = malloc(n + 1);
        if (!out) return NULL;
    } else {
        if ((size_t)(a->high - a->low) <= n && !arena_grow(a, n + 1)) return NULL;
        out = a->high -= n + 1;
    }
    memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

/* Append v to parent's children: cJSON's links (the first child's prev is the last). */
static void link_child(cJSON *parent, cJSON *v)
{
    cJSON *first = parent->child;
    if (!first) {
        parent->child = v;
        v->prev = v;
        return;
    }
    first->prev->next = v;
    v->prev = first->prev;
    first->prev = v;
}

static inline void skip_space(parser *p)
{
    const char *s = p->p;
    while (s < p->end && host_json_space(*s)) s++;
    p->p = s;
}

static inline bool is_digit(char c)
{
    return (unsigned char)(c - '0') < 10;
}

/* ---- strings ------------------------------------------------------------------------ */

/* Room for n bytes in the scratch buffer (allocated even for 0: memcpy wants a pointer). */
static bool scratch_reserve(parser *p, size_t n)
{
    if (n <= p->scratch_cap && p->scratch) return true;
    size_t cap = p->scratch_cap ? p->scratch_cap * 2 : 256;
    if (cap < n) cap = n;
    char *bigger = realloc(p->scratch, cap);
    if (!bigger) return false;
    p->scratch = bigger;
    p->scratch_cap = cap;
    return true;
}

/* The 4 hex digits of the \u escape at s (its '\'), or -1 with the error set; open is the
 * string's opening quote. */
static long hex4(parser *p, const char *s, const char *open)
{
    long v = 0;
    for (const char *h = s + 2; h < s + 6; h++) {
        if (h == p->end) return fail(p, HOST_JPARSE_UNTERMINATED_STRING, open), -1;
        char c = *h, l = (char)(c | 0x20);
        if (is_digit(c))
            v = v << 4 | (c - '0');
        else if (l >= 'a' && l <= 'f')
            v = v << 4 | (l - 'a' + 10);
        else
            return fail(p, HOST_JPARSE_INVALID_UNICODE_ESCAPE, s), -1;
    }
    return v;
}

/* Code point cp (at most 0x10FFFF) as UTF-8 at out; returns the bytes written. */
static size_t utf8_put(char *out, long cp)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The \u escape at *at (a surrogate pair takes two) appended as UTF-8 to the scratch
 * buffer at *n (4 bytes reserved); *at moves past it. */
static bool decode_unicode(parser *p, const char *open, const char **at, size_t *n)
{
    const char *s = *at, *second = s + 6;
    long cp = hex4(p, s, open);
    if (cp < 0) return false;
    if (cp == 0 && p->unique_keys) return fail(p, HOST_JPARSE_NUL_ESCAPE, s);
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(p, HOST_JPARSE_UNPAIRED_SURROGATE, s);
    if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate: its low one must follow */
        if (second == p->end || (*second == '\\' && second + 1 == p->end))
            return fail(p, HOST_JPARSE_UNTERMINATED_STRING, open);
        if (second[0] != '\\' || second[1] != 'u')
            return fail(p, HOST_JPARSE_UNPAIRED_SURROGATE, s);
        long low = hex4(p, second, open);
        if (low < 0) return false;
        if (low < 0xDC00 || low > 0xDFFF) return fail(p, HOST_JPARSE_UNPAIRED_SURROGATE, s);
        cp = 0x10000 + ((cp & 0x3FF) << 10 | (low & 0x3FF));
        second += 6;
    }
    *n += utf8_put(p->scratch + *n, cp);
    *at = second;
    return true;
}

/* The escape at *at ('\') appended to the scratch buffer at *n; *at moves past it. */
static bool decode_escape(parser *p, const char *open, const char **at, size_t *n)
{
    static const char simple[256] = {['"'] = '"',  ['\\'] = '\\', ['/'] = '/',  ['b'] = '\b',
                                     ['f'] = '\f', ['n'] = '\n',  ['r'] = '\r', ['t'] = '\t'};
    const char *s = *at;
    if (s + 1 == p->end) return fail(p, HOST_JPARSE_UNTERMINATED_STRING, open);
    if (!scratch_reserve(p, *n + 4)) return fail(p, HOST_JPARSE_OUT_OF_MEMORY, s);
    if (s[1] == 'u') return decode_unicode(p, open, at, n);
    char c = simple[(unsigned char)s[1]];
    if (!c) return fail(p, HOST_JPARSE_INVALID_ESCAPE, s);
    p->scratch[(*n)++] = c;
    *at = s + 2;
    return true;
}

/* The rest of a string with escapes: open is its '"', at the first byte after its plain
 * start (the '\', a control character, or the end of the text). Decoded into the
 * scratch buffer: *out points there, *n bytes. */
static bool lex_escaped(parser *p, const char *open, const char *at, const char **out, size_t *len)
{
    size_t n = (size_t)(at - open - 1);
    if (!scratch_reserve(p, n)) return fail(p, HOST_JPARSE_OUT_OF_MEMORY, open);
    memcpy(p->scratch, open + 1, n);
    for (;;) {
        if (at == p->end) return fail(p, HOST_JPARSE_UNTERMINATED_STRING, open);
        if (*at == '"') break;
        if ((unsigned char)*at < 0x20) return fail(p, HOST_JPARSE_CONTROL_CHARACTER, at);
        if (*at == '\\') {
            if (!decode_escape(p, open, &at, &n)) return false;
            continue;
        }
        const char *run = at; /* a plain run up to the next '"', '\' or control */
        at = host_json_plain_end(at, p->end);
        if (!scratch_reserve(p, n + (size_t)(at - run)))
            return fail(p, HOST_JPARSE_OUT_OF_MEMORY, run);
        memcpy(p->scratch + n, run, (size_t)(at - run));
        n += (size_t)(at - run);
    }
    *out = p->scratch;
    *len = n;
    p->p = at + 1;
    return true;
}

/* The string at p->p (its '"'), checked and decoded: *out is its text (in the input when
 * it has no escape, else in the scratch buffer; not NUL-terminated), *n its bytes;
 * *escaped says which. p->p moves past it. */
static bool lex_string(parser *p, const char **out, size_t *n, bool *escaped)
{
    const char *open = p->p, *at = host_json_plain_end(open + 1, p->end);
    *escaped = at == p->end || *at != '"';
    if (*escaped) return lex_escaped(p, open, at, out, n);
    *out = open + 1;
    *n = (size_t)(at - open - 1);
    p->p = at + 1;
    return true;
}

/* The string at p->p (its '"') decoded into a new buffer *out, as cJSON decodes it: a
 * \u0000 ends the C string there. */
static bool parse_string(parser *p, char **out)
{
    const char *open = p->p, *s;
    size_t n;
    bool escaped;
    if (!lex_string(p, &s, &n, &escaped)) return false;
    if (!(*out = new_string(p, s, n))) return fail(p, HOST_JPARSE_OUT_OF_MEMORY, open);
    return true;
}

/* ---- numbers, literals, values ------------------------------------------------------ */

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The value of the k digits (1-8) that start w (8 bytes of text, the first lowest). */
static inline uint64_t digits_value(uint64_t w, int k)
{
    uint64_t x = w ^ (ONES * '0'); /* a digit: its value */
    int shift = 4 * (8 - k);       /* twice: a shift by 64 is undefined */
    x = (x << shift) << shift;     /* the k digits last, zeros before them */
    x = x * 10 + (x >> 8);
    return (uint32_t)((((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
                       (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
                      32);
}
#endif

/* One or more digits at s, counted into *n and appended to *m (m * 10 + digit, wrapping
 * after 19 digits: then unused); returns the byte after them, or NULL with the error
 * set. */
static inline const char *digits(parser *p, const char *s, uint64_t *m, int *n)
{
    const char *start = s;
    uint64_t v = *m;
    if (s == p->end) return fail(p, HOST_JPARSE_END_OF_TEXT, s), NULL;
    if (!is_digit(*s)) return fail(p, HOST_JPARSE_NUMBER_EXPECTED_DIGIT, s), NULL;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* 8 bytes at a time: the digits among them found and converted without a branch per
     * digit (a run of 7 or 8 digits, as in most floats written by a program, in one step) */
    static const uint64_t pow10[9] = {1,      10,      100,      1000,     10000,
                                      100000, 1000000, 10000000, 100000000};
    while (p->end - s >= 8) {
        uint64_t w, x, stop;
        memcpy(&w, s, 8);
        x = w ^ (ONES * '0'); /* a digit: its value, 0-9; anything else: 10 or more */
        stop = (((x & (ONES * 0x7F)) + ONES * 0x76) | x) & HIGHS; /* high bit: not a digit */
        int k = stop ? __builtin_ctzll(stop) >> 3 : 8;
        if (k == 0) break;
        v = v * pow10[k] + digits_value(w, k);
        s += k;
        if (k < 8) {
            *m = v;
            *n += (int)(s - start);
            return s;
        }
    }
#endif
    while (s < p->end && is_digit(*s)) v = v * 10 + (uint64_t)(*s++ - '0');
    *m = v;
    *n += (int)(s - start);
    return s;
}

/* 10^0 .. 10^22: the powers of ten a double holds exactly. */
static const double exact_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* digits * 10^exp10 (negated when neg) into *d when one exact operation computes it
 * (Clinger's fast path): digits at most 2^53 and |exp10| <= 22 make both operands exact
 * doubles, and IEEE multiplication and division round correctly, so the result is the
 * nearest double, as fast_float's or strtod's. Most numbers of a scene take this path.
 * False (nothing done) otherwise, or where double arithmetic is wider than double. */
static bool exact_number(uint64_t digits, int exp10, bool neg, double *d)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    if (digits > (uint64_t)1 << 53 || exp10 < -22 || exp10 > 22) return false;
    double x = (double)digits;
    x = exp10 < 0 ? x / exact_pow10[-exp10] : x * exact_pow10[exp10];
    *d = neg ? -x : x;
    return true;
#else
    (void)digits, (void)exp10, (void)neg, (void)d;
    return false;
#endif
}

#if defined(__SSE2__) && defined(__GNUC__) && defined(__BYTE_ORDER__) &&                           \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define HAVE_SHORT_NUMBER 1
/* The short number at s, as programs write floats: -?D{1,7}(\.D{1,8})? with no exponent
 * and no leading zero, at least 17 bytes before end; its value (exact: at most 15 digits,
 * one correctly rounded division) into *d, the byte after it returned. NULL for anything
 * else (lex_number reads that, and says what is wrong). Where it ends comes from one
 * 16-byte compare (digits, '.', '-'), not from the digits one part after the other: the
 * next number's read need not wait for this one's. */
static inline const char *short_number(const char *s, const char *end, double *d)
{
    static const double pow10[9] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
    if (end - s < 17) return NULL;
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i digit = _mm_cmplt_epi8(_mm_sub_epi8(x, _mm_set1_epi8((char)('0' + 128))),
                                   _mm_set1_epi8((char)(10 - 128))); /* '0'-'9': -128..-119 */
    __m128i dot = _mm_cmpeq_epi8(x, _mm_set1_epi8('.'));
    __m128i minus = _mm_cmpeq_epi8(x, _mm_set1_epi8('-'));
    unsigned run = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(digit, dot), minus));
    int len = __builtin_ctz(~run); /* 0-16 */
    unsigned in = (1u << len) - 1, dots = (unsigned)_mm_movemask_epi8(dot) & in,
             signs = (unsigned)_mm_movemask_epi8(minus) & in;
    bool neg = signs & 1;
    int at = dots ? __builtin_ctz(dots) : len, k1 = at - neg, k2 = dots ? len - at - 1 : 0;
    if (signs != (unsigned)neg || (dots & (dots - 1)) || k1 < 1 || k1 > 7 || k2 > 8 ||
        (dots && k2 < 1) || (s[neg] == '0' && k1 > 1) || (s[len] | 0x20) == 'e' ||
        (len == 16 && (is_digit(s[16]) || s[16] == '.' || s[16] == '-'))) /* it goes on */
        return NULL;
    uint64_t w, ip, fp = 0;
    memcpy(&w, s + neg, 8);
    ip = digits_value(w, k1);
    if (dots) {
        memcpy(&w, s + at + 1, 8);
        fp = digits_value(w, k2);
    }
    double v = ((double)ip * pow10[k2] + (double)fp) / pow10[k2];
    *d = neg ? -v : v;
    return s + len;
}
#endif

/* The number at p->p, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (RFC 8259), checked
 * and (out not NULL) converted: the nearest double, +-inf beyond the range (as strtod). */
static bool lex_number(parser *p, double *out)
{
#ifdef HAVE_SHORT_NUMBER
    double quick;
    const char *after = short_number(p->p, p->end, &quick);
    if (after) {
        if (out) *out = quick;
        p->p = after;
        return true;
    }
#endif
    const char *s = p->p + (*p->p == '-'), *end = p->end;
    uint64_t m = 0, e = 0; /* the digits (while at most 19), the exponent's */
    int n = 0, exp10 = 0, en = 0;
    if (s < end && *s == '0') {
        if (++s < end && is_digit(*s)) return fail(p, HOST_JPARSE_NUMBER_LEADING_ZERO, s - 1);
    } else if (!(s = digits(p, s, &m, &n))) {
        return false;
    }
    if (s < end && *s == '.') {
        int before = n;
        if (!(s = digits(p, s + 1, &m, &n))) return false;
        exp10 = before - n;
    }
    if (s < end && (*s == 'e' || *s == 'E')) {
        bool minus = ++s < end && *s == '-';
        s += s < end && (*s == '+' || *s == '-');
        if (!(s = digits(p, s, &e, &en))) return false;
        if (en > 6)
            n = INT_MAX; /* no fast path: fast_float sorts out huge exponents */
        else
            exp10 += minus ? -(int)e : (int)e;
    }
    if (out && (n > 19 || !exact_number(m, exp10, *p->p == '-', out))) {
        const char *parsed = host_number_parse(p->p, s, out);
        assert(parsed == s); /* fast_float reads the JSON grammar whole */
        (void)parsed;
    }
    p->p = s;
    return true;
}

/* The number at p->p into v: valuedouble, and valueint saturated as cJSON 1.7.15 does. */
static bool parse_number(parser *p, cJSON *v)
{
    double d = 0;
    if (!lex_number(p, &d)) return false;
    v->type = cJSON_Number;
    v->valuedouble = d;
    v->valueint = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
    return true;
}

/* true, false or null (word, n bytes) at p->p. */
static bool parse_literal(parser *p, cJSON *v, const char *word, size_t n, int type)
{
    size_t left = (size_t)(p->end - p->p);
    if (left >= n && memcmp(p->p, word, n) == 0) {
        if (v) {
            v->type = type;
            v->valueint = type == cJSON_True; /* as cJSON sets it */
        }
        p->p += n;
        return true;
    }
    if (left < n && memcmp(p->p, word, left) == 0) /* cut short */
        return fail(p, HOST_JPARSE_END_OF_TEXT, p->end);
    return fail(p, HOST_JPARSE_EXPECTED_VALUE, p->p);
}

/* A value other than an array or object at p->p (not the end) into v; with v NULL only
 * checked and passed over. */
static bool parse_scalar(parser *p, cJSON *v)
{
    const char *s;
    size_t n;
    bool escaped;
    switch (*p->p) {
    case '"':
        if (!v) return lex_string(p, &s, &n, &escaped);
        v->type = cJSON_String;
        return parse_string(p, &v->valuestring);
    case 't':
        return parse_literal(p, v, "true", 4, cJSON_True);
    case 'f':
        return parse_literal(p, v, "false", 5, cJSON_False);
    case 'n':
        return parse_literal(p, v, "null", 4, cJSON_NULL);
    case '+':
        return fail(p, HOST_JPARSE_NUMBER_PLUS_SIGN, p->p);
    case '.':
        return fail(p, HOST_JPARSE_NUMBER_LEADING_POINT, p->p);
    default:
        if (*p->p == '-' || is_digit(*p->p)) return v ? parse_number(p, v) : lex_number(p, NULL);
        return fail(p, HOST_JPARSE_EXPECTED_VALUE, p->p);
    }
}

/* ---- the tree ----------------------------------------------------------------------- */

/* A new last child of parent (an open array or object) with, in an object, its key and
 * ':' read; p->p is left at its value. NULL with the error set. */
/* unique_keys: remember where the key of a new object member starts (its object's keys
 * start at p->keys[base], checked when it closes: keys_unique). */
static bool note_key(parser *p, const char *key_at, size_t plain_len)
{
    if (p->nkeys == p->capkeys) {
        size_t cap = p->capkeys ? p->capkeys * 2 : 64;
        key_note *keys = realloc(p->keys, cap * sizeof *keys);
        if (!keys) return fail(p, HOST_JPARSE_OUT_OF_MEMORY, key_at);
        p->keys = keys;
        p->capkeys = cap;
    }
    p->keys[p->nkeys++] = (key_note){key_at, plain_len};
    return true;
}

/* ---- a key twice in one object (jparse.h) ---- */

static int key_order(const void *a, const void *b)
{
    const host_json_key *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
    if (!c) c = (x->n > y->n) - (x->n < y->n);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static bool key_same(const host_json_key *x, const host_json_key *y)
{
    return x->n == y->n && memcmp(x->s, y->s, x->n) == 0;
}

size_t host_json_first_duplicate(host_json_key *keys, size_t n, size_t *first)
{
    size_t dup = n;
    if (n <= 16) {
        for (size_t j = 1; j < n && dup == n; j++)
            for (size_t i = 0; i < j; i++)
                if (key_same(&keys[i], &keys[j])) {
                    dup = keys[j].i, *first = keys[i].i;
                    break;
                }
        return dup;
    }
    qsort(keys, n, sizeof *keys, key_order);
    for (size_t i = 1; i < n; i++)
        if (key_same(&keys[i - 1], &keys[i]) && keys[i].i < dup &&
            (i < 2 || !key_same(&keys[i - 2], &keys[i])))
            dup = keys[i].i, *first = keys[i - 1].i; /* the second of its run */
    return dup;
}

/* The key noted at note (its '"' already checked) into *k, decoded: the input's text, or
 * an owned copy when it has escapes. */
static bool key_text(parser *p, const key_note *note, size_t i, host_json_key *k)
{
    const char *at = note->at;
    if (note->plain_len != KEY_ESCAPED) { /* its text as it stands */
        *k = (host_json_key){at + 1, note->plain_len, i, false};
        return true;
    }
    const char *s, *saved = p->p;
    size_t n;
    bool escaped;
    p->p = at;
    bool ok = lex_string(p, &s, &n, &escaped);
    p->p = saved;
    *k = (host_json_key){s, n, i, false};
    if (!ok || !escaped) return ok;
    char *copy = malloc(n + 1);
    if (!copy) return fail(p, HOST_JPARSE_OUT_OF_MEMORY, at);
    memcpy(copy, s, n);
    *k = (host_json_key){copy, n, i, true};
    return true;
}

/* unique_keys: does every key of the object just closed (its keys start at
 * p->keys[base..nkeys)) stand once? Else the error at the earliest second occurrence,
 * p->first_at at its first. */
static bool keys_unique(parser *p, size_t base)
{
    size_t n = p->nkeys - base, got = 0, dup = n, first = 0;
    if (n < 2) return true;
    host_json_key small[16], *refs = n <= 16 ? small : malloc(n * sizeof *refs);
    if (!refs) return fail(p, HOST_JPARSE_OUT_OF_MEMORY, p->keys[base].at);
    while (got < n && key_text(p, &p->keys[base + got], got, &refs[got])) got++;
    if (got == n) dup = host_json_first_duplicate(refs, n, &first);
    for (size_t i = 0; i < got; i++)
        if (refs[i].owned) free((void *)refs[i].s);
    if (refs != small) free(refs);
    if (got < n) return false;
    if (dup == n) return true;
    p->first_at = p->keys[base + first].at;
    return fail(p, HOST_JPARSE_DUPLICATE_KEY, p->keys[base + dup].at);
}

static cJSON *new_child(parser *p, cJSON *parent)
{
    cJSON *v = new_node(p);
    if (!v) return fail(p, HOST_JPARSE_OUT_OF_MEMORY, p->p), NULL;
    link_child(parent, v); /* at once: a failure below leaves a whole tree */
    if (parent->type == cJSON_Object) {
        if (p->p == p->end) return fail(p, HOST_JPARSE_END_OF_TEXT, p->p), NULL;
        if (*p->p != '"') return fail(p, HOST_JPARSE_EXPECTED_KEY, p->p), NULL;
        const char *key_at = p->p;
        if (!parse_string(p, &v->string)) return NULL;
        size_t raw = (size_t)(p->p - key_at) - 2; /* an escape always makes a key shorter */
        if (p->unique_keys && !note_key(p, key_at, strlen(v->string) == raw ? raw : KEY_ESCAPED))
            return NULL;
        skip_space(p);
        if (p->p == p->end) return fail(p, HOST_JPARSE_END_OF_TEXT, p->p), NULL;
        if (*p->p != ':') return fail(p, HOST_JPARSE_EXPECTED_COLON, p->p), NULL;
        p->p++;
        skip_space(p);
    }
    if (p->p == p->end) return fail(p, HOST_JPARSE_END_OF_TEXT, p->p), NULL;
    return v;
}

/* After a complete value: read the ']' and '}' that follow (closing their arrays and
 * objects) up to a ',', and return the next value's new node. NULL once the root is
 * complete (status OK) or with the error set. */
static cJSON *next_value(parser *p, cJSON **open, const size_t *key_base, int *depth)
{
    while (*depth > 0) {
        cJSON *parent = open[*depth - 1];
        bool array = parent->type == cJSON_Array;
        skip_space(p);
        if (p->p == p->end) return fail(p, HOST_JPARSE_END_OF_TEXT, p->p), NULL;
        if (*p->p == ',') {
            const char *comma = p->p++;
            skip_space(p);
            if (p->p < p->end && *p->p == (array ? ']' : '}'))
                return fail(p, HOST_JPARSE_TRAILING_COMMA, comma), NULL;
            return new_child(p, parent);
        }
        if (*p->p != (array ? ']' : '}'))
            return fail(p,
                        array ? HOST_JPARSE_EXPECTED_ARRAY_COMMA
                              : HOST_JPARSE_EXPECTED_OBJECT_COMMA,
                        p->p),
                   NULL;
        p->p++;
        (*depth)--;
        if (!array && p->unique_keys) {
            if (!keys_unique(p, key_base[*depth])) return NULL;
            p->nkeys = key_base[*depth]; /* its keys are no longer open */
        }
    }
    return NULL;
}

/* The value at p->p (not the end) into root, with everything nested in it. */
static bool parse_tree(parser *p, cJSON *root)
{
    cJSON *open[HOST_JPARSE_MAX_DEPTH];     /* the arrays and objects being filled */
    size_t key_base[HOST_JPARSE_MAX_DEPTH]; /* unique_keys: each one's first in p->keys */
    int depth = 0;
    cJSON *v = root;
    for (;;) {
        char c = *p->p;
        if (c == '[' || c == '{') {
            if (depth == HOST_JPARSE_MAX_DEPTH) return fail(p, HOST_JPARSE_TOO_DEEP, p->p);
            v->type = c == '[' ? cJSON_Array : cJSON_Object;
            p->p++;
            skip_space(p);
            if (p->p == p->end) return fail(p, HOST_JPARSE_END_OF_TEXT, p->p);
            if (*p->p != (c == '[' ? ']' : '}')) { /* not empty: fill it */
                key_base[depth] = p->nkeys;
                open[depth++] = v;
                if (!(v = new_child(p, v))) return false;
                continue;
            }
            p->p++;
        } else if (!parse_scalar(p, v)) {
            return false;
        }
        if (!(v = next_value(p, open, key_base, &depth))) return p->status == HOST_JPARSE_OK;
    }
}

cJSON *host_jparse(const char *text, size_t len, host_json_arena *arena, host_jparse_error *error)
{
    return host_jparse_keys(text, len, arena, false, error);
}

cJSON *host_jparse_keys(const char *text, size_t len, host_json_arena *arena, bool unique_keys,
                        host_jparse_error *error)
{
    if (!text) text = "", len = 0;
    parser p = {.p = text, .end = text + len, .arena = arena, .unique_keys = unique_keys};
    cJSON *root = NULL;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) p.p += 3; /* a UTF-8 BOM */
    skip_space(&p);
    if (p.p == p.end)
        fail(&p, HOST_JPARSE_EMPTY, p.p);
    else if (!(root = new_node(&p)))
        fail(&p, HOST_JPARSE_OUT_OF_MEMORY, p.p);
    else if (parse_tree(&p, root)) {
        skip_space(&p);
        if (p.p != p.end) fail(&p, HOST_JPARSE_TRAILING_TEXT, p.p);
    }
    if (p.status != HOST_JPARSE_OK && root) {
        if (!arena) cJSON_Delete(root);
        root = NULL;
    }
    free(p.scratch);
    free(p.keys);
    if (error)
        *error = (host_jparse_error){p.status, root ? 0 : (size_t)(p.error_at - text),
                                     p.first_at ? (size_t)(p.first_at - text) : 0};
    return root;
}

/* ---- messages ----------------------------------------------------------------------- */

#define STR_(x) #x
#define STR(x)  STR_(x)

static const char *const messages[HOST_JPARSE_STATUS_COUNT] = {
    [HOST_JPARSE_OK] = "no error",
    [HOST_JPARSE_EMPTY] = "the file is empty, expected a JSON value",
    [HOST_JPARSE_TRAILING_TEXT] = "unexpected text after the JSON value",
    [HOST_JPARSE_END_OF_TEXT] = "unexpected end of the file",
    [HOST_JPARSE_EXPECTED_VALUE] = "expected a JSON value",
    [HOST_JPARSE_EXPECTED_KEY] = "expected a string key",
    [HOST_JPARSE_EXPECTED_COLON] = "expected ':' after an object key",
    [HOST_JPARSE_EXPECTED_OBJECT_COMMA] = "expected ',' or '}' after an object member",
    [HOST_JPARSE_EXPECTED_ARRAY_COMMA] = "expected ',' or ']' after an array element",
    [HOST_JPARSE_TRAILING_COMMA] = "a ',' before ']' or '}' (JSON has no trailing commas)",
    [HOST_JPARSE_TOO_DEEP] = "nesting deeper than " STR(HOST_JPARSE_MAX_DEPTH) " levels",
    [HOST_JPARSE_UNTERMINATED_STRING] = "unterminated string",
    [HOST_JPARSE_CONTROL_CHARACTER] = "control character in a string (escape it)",
    [HOST_JPARSE_INVALID_ESCAPE] = "invalid escape in a string",
    [HOST_JPARSE_INVALID_UNICODE_ESCAPE] = "invalid \\u escape (expected 4 hex digits)",
    [HOST_JPARSE_UNPAIRED_SURROGATE] = "unpaired UTF-16 surrogate",
    [HOST_JPARSE_NUL_ESCAPE] = "\\u0000 in a string: a NUL character would cut it short (cJSON "
                               "strings end at a NUL)",
    [HOST_JPARSE_NUMBER_LEADING_ZERO] = "invalid number: a leading zero",
    [HOST_JPARSE_NUMBER_PLUS_SIGN] = "invalid number: a '+' sign",
    [HOST_JPARSE_NUMBER_LEADING_POINT] = "invalid number: no digit before the '.'",
    [HOST_JPARSE_NUMBER_EXPECTED_DIGIT] = "invalid number: expected a digit",
    [HOST_JPARSE_DUPLICATE_KEY] = "a key that stands twice in one object",
    [HOST_JPARSE_OUT_OF_MEMORY] = "out of memory",
};

const char *host_jparse_message(host_jparse_status status)
{
    return (unsigned)status < HOST_JPARSE_STATUS_COUNT ? messages[status] : "unknown error";
}

static bool is_word(char c)
{
    return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_' || c == '-' ||
           c == '+' || c == '.';
}

/* The length of the UTF-8 character at s (left bytes) when it is a valid one from U+00A0
 * up (printable enough to quote), else 0. */
static size_t utf8_printable(const unsigned char *s, size_t left)
{
    size_t n = *s >= 0xC2 && *s < 0xE0   ? 2
               : *s >= 0xE0 && *s < 0xF0 ? 3
               : *s >= 0xF0 && *s < 0xF5 ? 4
                                         : 0;
    if (!n || n > left) return 0;
    long cp = *s & (0x7F >> n);
    for (size_t k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[k] & 0x3F);
    }
    bool shortest = cp >= (n == 2 ? 0xA0 : n == 3 ? 0x800 : 0x10000);
    return shortest && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) ? n : 0;
}

/* What stands at `at` (left bytes), for "found ...": a word ('NaN', 'tru'), a printable
 * character, or a byte's value. */
static void describe_found(const char *at, size_t left, char *out, size_t outlen)
{
    unsigned char c = left ? (unsigned char)*at : 0;
    size_t n = 0, u;
    while (n < left && n < 24 && is_word(at[n])) n++;
    if (!left)
        host_format(out, outlen, "the end of the file");
    else if (n)
        host_format(out, outlen, "'%.*s'", (int)n, at);
    else if (c == '\'')
        host_format(out, outlen, "\"'\" (JSON strings take '\"')");
    else if (c == '/')
        host_format(out, outlen, "'/' (JSON has no comments)");
    else if (c > ' ' && c < 0x7F)
        host_format(out, outlen, "'%c'", c);
    else if (c == 0)
        host_format(out, outlen, "a NUL byte");
    else if ((u = utf8_printable((const unsigned char *)at, left)))
        host_format(out, outlen, "'%.*s'", (int)u, at);
    else
        host_format(out, outlen, "byte 0x%02X", c);
}

void host_jparse_describe(const char *text, size_t len, const host_jparse_error *e, char *out,
                          size_t outlen)
{
    const char *msg = host_jparse_message(e->status), *at = text + e->offset;
    size_t left = e->offset < len ? len - e->offset : 0;
    char found[64];
    switch (e->status) {
    case HOST_JPARSE_EXPECTED_VALUE:
    case HOST_JPARSE_EXPECTED_KEY:
    case HOST_JPARSE_EXPECTED_COLON:
    case HOST_JPARSE_EXPECTED_OBJECT_COMMA:
    case HOST_JPARSE_EXPECTED_ARRAY_COMMA:
    case HOST_JPARSE_NUMBER_EXPECTED_DIGIT:
        describe_found(at, left, found, sizeof found);
        host_format(out, outlen, "%s, found %s", msg, found);
        return;
    case HOST_JPARSE_DUPLICATE_KEY: {
        int line, col;
        size_t n = 1;
        while (n < left && n < 48 && at[n] != '"') n++;
        host_jparse_position(text, text + e->first, &line, &col);
        host_format(out, outlen,
                    "duplicate key %.*s\" (its first at line %d, column %d): a "
                    "key stands once in an object",
                    (int)n, at, line, col);
        return;
    }
    case HOST_JPARSE_INVALID_ESCAPE:
        if (left >= 2 && at[1] > ' ' && at[1] < 0x7F) {
            host_format(out, outlen, "invalid escape '\\%c' in a string", at[1]);
            return;
        }
        break;
    default:
        break;
    }
    host_format(out, outlen, "%s", msg);
}

/* ---- the pull reader (ecs_json_reader) ----------------------------------------------
 * The same lexer over the same text, driven by the caller one value at a time. Each open
 * array or object is a level: its kind, whether it has had an element yet, and (keys
 * checked) where its keys start in p->keys. `due` says a value stands next: the document's
 * one value, an object member's after its key, an array element after more(). */

#define JR_INLINE_LEVELS 32

typedef struct jr_level {
    const char *open; /* its '[' or '{' */
    size_t key_base;  /* where its keys start in p.keys */
    uint8_t flags;    /* LEVEL_OBJECT, LEVEL_ITEMS */
} jr_level;

struct host_jreader {
    ecs_json_reader api; /* first: the manager's pointer is the reader's */
    parser p;
    const char *text;   /* the whole document: offsets count from here */
    const char *last;   /* the value or key read last: errors point here */
    const char *top_at; /* where the one value starts */
    int depth;
    bool due, done;
    bool peeked;     /* due: peek() read the ',' before this array element */
    bool checked;    /* no duplicate key checks: the text was checked */
    bool skim;       /* skip() matches brackets and strings only */
    bool keys_read;  /* key() refuses to pass over the value of the key before it unread */
    jr_level *level; /* the open arrays and objects: inline_level, or on the heap */
    int cap;
    jr_level inline_level[JR_INLINE_LEVELS];
    /* the first failure: a syntax error (p.status), or a message (status OK) */
    bool failed;
    const char *fail_at;
    char message[400];
    host_jr_resolve_fn resolve;
    void *resolve_ctx;
    host_jr_tape *rec;                  /* recording: the tape (host_jr_record) */
    const host_jr_token *tok, *tok_end; /* read ahead: the tokens not yet passed */
};

enum { LEVEL_OBJECT = 1, LEVEL_ITEMS = 2 };

static host_jreader *R(ecs_json_reader *api)
{
    return (host_jreader *)(void *)api;
}

static bool jr_message(host_jreader *r, const char *at, const char *fmt, ...) ECS_PRINTF(3, 4);
static bool jr_message(host_jreader *r, const char *at, const char *fmt, ...)
{
    if (r->failed) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
    r->failed = true;
    r->fail_at = at;
    return false;
}

/* After the lexer failed: the reader has. */
static bool jr_syntax(host_jreader *r)
{
    if (!r->failed) {
        r->failed = true;
        r->fail_at = r->p.error_at;
        host_jparse_error e = {r->p.status, (size_t)(r->p.error_at - r->text),
                               r->p.first_at ? (size_t)(r->p.first_at - r->text) : 0};
        host_jparse_describe(r->text, (size_t)(r->p.end - r->text), &e, r->message,
                             sizeof r->message);
    }
    return false;
}

static bool jr_lex_fail(host_jreader *r, host_jparse_status status, const char *at)
{
    fail(&r->p, status, at);
    return jr_syntax(r);
}

/* ---- tokens: recorded (host_jr_record), or taken instead of lexing (host_jr_use) ---- */

static void tape_put(host_jr_tape *t, const char *at, const char *end, const char *s, size_t n,
                     double d)
{
    if (t->full) return;
    if (t->n == t->cap || (s && t->size - t->used < n + 1)) {
        t->full = true;
        return;
    }
    host_jr_token *k = &t->tok[t->n++];
    k->at = at;
    k->end = end;
    k->str = NULL;
    k->v.number = d;
    if (s) {
        char *c = t->bytes + t->used;
        memcpy(c, s, n);
        c[n] = '\0';
        t->used += n + 1;
        k->str = c;
        k->v.len = n;
    }
}

/* The token standing at p, if any (the ones before it were passed over). */
static inline const host_jr_token *jr_token(host_jreader *r)
{
    const host_jr_token *t = r->tok;
    while (t < r->tok_end && t->at < r->p.p) t++;
    r->tok = t;
    return t < r->tok_end && t->at == r->p.p ? t : NULL;
}

/* The number at p: its token's, or lexed. */
static inline bool jr_lex_number(host_jreader *r, double *d)
{
    const host_jr_token *t = jr_token(r);
    if (!t || t->str) return lex_number(&r->p, d);
    *d = t->v.number;
    r->p.p = t->end;
    r->tok = t + 1;
    return true;
}

/* The string at p (lex_string's *s, *n, *escaped): its token's (then *done: *s is
 * NUL-terminated already), or lexed. */
static inline bool jr_lex_string(host_jreader *r, const char **s, size_t *n, bool *escaped,
                                 bool *done)
{
    const host_jr_token *t = jr_token(r);
    *done = t && t->str;
    if (!*done) return lex_string(&r->p, s, n, escaped);
    *s = t->str;
    *n = t->v.len;
    *escaped = t->v.len != (size_t)(t->end - t->at - 2);
    r->p.p = t->end;
    r->tok = t + 1;
    return true;
}

/* skip() of a recording reader: the scalar at p lexed whole and kept. */
static inline bool jr_record_scalar(host_jreader *r)
{
    const char *at = r->p.p, *s;
    size_t n;
    bool escaped;
    double d;
    if (*at == '"') {
        if (!lex_string(&r->p, &s, &n, &escaped)) return false;
        tape_put(r->rec, at, r->p.p, s, n, 0);
        return true;
    }
    if (*at != '-' && !is_digit(*at)) return parse_scalar(&r->p, NULL);
    if (!lex_number(&r->p, &d)) return false;
    tape_put(r->rec, at, r->p.p, NULL, 0, d);
    return true;
}

static void jr_value_done(host_jreader *r);

/* skip() of a recording reader: the common values lexed and recorded in one walk each, the
 * same tokens as the element by element walk records (test_jread compares them): an array
 * of numbers only (a vector: the array's own token, then its numbers), and a component's
 * object (keys without escapes, each once, at most FAST_KEYS to an object; values numbers,
 * strings, literals, arrays of numbers, and such objects up to FAST_DEPTH deep). Anything
 * else (or anything wrong), and the tape and reader are left as they were: the walk then
 * reads it and says what is wrong. */
#define FAST_KEYS  16
#define FAST_DEPTH 4

/* The scalar at q (a string, number or literal) recorded: the byte after it, or NULL. */
static const char *rec_scalar(host_jreader *r, const char *q)
{
    r->p.p = q;
    return jr_record_scalar(r) ? r->p.p : NULL;
}

/* At least one number (an empty array: the walk, as rare). */
static const char *rec_numbers(host_jreader *r, const char *open)
{
    host_jr_tape *t = r->rec;
    const char *end = r->p.end, *q = host_json_skip_space(open + 1, end);
    size_t n0 = t->n;
    tape_put(t, open, open, NULL, 0, 0); /* the array's own token: its end, its count */
    for (;;) {
        if (q == end || (*q != '-' && !is_digit(*q))) return NULL;
#ifdef HAVE_SHORT_NUMBER
        double d;
        const char *after = short_number(q, end, &d);
        if (after) { /* the common number: lexed here, put as jr_record_scalar puts one */
            tape_put(t, q, after, NULL, 0, d);
            q = after;
        } else if (!(q = rec_scalar(r, q))) {
            return NULL;
        }
#else
        if (!(q = rec_scalar(r, q))) return NULL;
#endif
        if ((q = host_json_skip_space(q, end)) == end) return NULL;
        if (*q == ']') break;
        if (*q != ',') return NULL;
        q = host_json_skip_space(q + 1, end);
    }
    if (!t->full) {
        t->tok[n0].end = q + 1;
        t->tok[n0].v.len = t->n - n0 - 1;
    }
    return q + 1;
}

static const char *rec_object(host_jreader *r, const char *open, int depth)
{
    const char *end = r->p.end, *q = host_json_skip_space(open + 1, end);
    const char *key[FAST_KEYS];
    size_t klen[FAST_KEYS];
    int nk = 0;
    if (q < end && *q == '}') return q + 1; /* {}: no tokens */
    for (;;) {
        if (q == end || *q != '"' || nk == FAST_KEYS) return NULL;
        const char *k = q + 1, *close = host_json_plain_end(k, end);
        if (close == end || *close != '"') return NULL; /* escaped, or no string */
        size_t n = (size_t)(close - k);
        for (int i = 0; i < nk; i++)
            if (klen[i] == n && memcmp(key[i], k, n) == 0) return NULL;
        key[nk] = k;
        klen[nk++] = n;
        tape_put(r->rec, q, close + 1, k, n, 0);
        q = host_json_skip_space(close + 1, end);
        if (q == end || *q != ':') return NULL;
        if ((q = host_json_skip_space(q + 1, end)) == end) return NULL;
        if (*q == '[')
            q = rec_numbers(r, q);
        else if (*q == '{')
            q = depth < FAST_DEPTH ? rec_object(r, q, depth + 1) : NULL;
        else
            q = rec_scalar(r, q);
        if (!q || (q = host_json_skip_space(q, end)) == end) return NULL;
        if (*q == '}') return q + 1;
        if (*q != ',') return NULL;
        q = host_json_skip_space(q + 1, end);
    }
}

static const char *rec_value_object(host_jreader *r, const char *open)
{
    return rec_object(r, open, 1);
}

/* The value at p recorded by rec (rec_numbers, rec_value_object): false, nothing changed,
 * when it is not of rec's common kind. */
static bool jr_record(host_jreader *r, const char *(*rec)(host_jreader *, const char *))
{
    host_jr_tape *t = r->rec;
    size_t n0 = t->n, used0 = t->used;
    bool full0 = t->full;
    const char *open = r->p.p, *after = rec(r, open);
    if (!after) {
        r->p.p = open;
        r->p.status = HOST_JPARSE_OK; /* a value that broke off above is read again */
        t->n = n0;
        t->used = used0;
        t->full = full0; /* the walk records them again */
        return false;
    }
    r->p.p = after;
    r->last = open;
    jr_value_done(r);
    return true;
}

static ecs_json_type type_at(const char *s)
{
    switch (*s) {
    case '{':
        return ECS_JSON_OBJECT;
    case '[':
        return ECS_JSON_ARRAY;
    case '"':
        return ECS_JSON_STRING;
    case 't':
        return ECS_JSON_TRUE;
    case 'f':
        return ECS_JSON_FALSE;
    case 'n':
        return ECS_JSON_NULL;
    default:
        return *s == '-' || is_digit(*s) ? ECS_JSON_NUMBER : ECS_JSON_END;
    }
}

const char *host_jr_type_name(ecs_json_type t)
{
    return ecs_json_type_text(t);
}

static bool jr_more(ecs_json_reader *api);

/* A value is read next: one must be due (inside an array, a read without more() is an
 * element if there is one). Leaves p at its first byte. */
static bool jr_due(host_jreader *r)
{
    if (r->failed) return false;
    if (!r->due) {
        if (r->depth > 0 && !(r->level[r->depth - 1].flags & LEVEL_OBJECT)) {
            const char *at = r->p.p;
            if (!jr_more(&r->api))
                return jr_message(r, at, "expected another element, found the end of the array");
        } else if (r->depth > 0) {
            return jr_message(r, r->p.p, "a value read where a key is due (call key() first)");
        } else {
            return jr_message(r, r->top_at, "read past the end of the value");
        }
    }
    skip_space(&r->p);
    if (r->p.p == r->p.end) return jr_lex_fail(r, HOST_JPARSE_END_OF_TEXT, r->p.p);
    r->last = r->p.p;
    return true;
}

/* The value just read is complete. */
static void jr_value_done(host_jreader *r)
{
    r->due = false;
    r->peeked = false;
    if (r->depth == 0) r->done = true;
}

/* The value at p is not of the kind a read wants: true with the syntax error when it is
 * no JSON value at all ("tru", "01", "+1", an unterminated string: checked as far as a
 * scalar goes, p left where it was), else false (then its kind is the news). */
static bool jr_malformed(host_jreader *r)
{
    const char *at = r->p.p;
    ecs_json_type t = type_at(at);
    if (t == ECS_JSON_ARRAY || t == ECS_JSON_OBJECT) return false;
    if (!parse_scalar(&r->p, NULL)) return jr_syntax(r), true;
    r->p.p = at;
    return false;
}

static bool jr_expected(host_jreader *r, const char *what)
{
    if (jr_malformed(r)) return false;
    return jr_message(r, r->p.p, "expected %s, found %s", what, host_jr_type_name(type_at(r->p.p)));
}

static ecs_json_type jr_peek(ecs_json_reader *api)
{
    host_jreader *r = R(api);
    if (r->failed || r->done) return ECS_JSON_END;
    if (!r->due) { /* inside an array: look past the ',' (the next more() knows) */
        if (r->depth == 0 || (r->level[r->depth - 1].flags & LEVEL_OBJECT)) return ECS_JSON_END;
        skip_space(&r->p);
        if (r->p.p < r->p.end && *r->p.p == ']') return ECS_JSON_END; /* more() closes it */
        if (!jr_more(api)) return ECS_JSON_END;
        r->peeked = true;
    }
    skip_space(&r->p);
    if (r->p.p == r->p.end) return jr_lex_fail(r, HOST_JPARSE_END_OF_TEXT, r->p.p), ECS_JSON_END;
    ecs_json_type t = type_at(r->p.p);
    if (t == ECS_JSON_END) jr_expected(r, "a value");
    return t;
}

static bool jr_push(host_jreader *r, uint8_t kind)
{
    if (r->depth == HOST_JPARSE_MAX_DEPTH) return jr_lex_fail(r, HOST_JPARSE_TOO_DEEP, r->p.p);
    if (r->depth == r->cap) {
        int cap = r->cap * 2;
        bool heap = r->level != r->inline_level;
        jr_level *level = realloc(heap ? r->level : NULL, (size_t)cap * sizeof *level);
        if (!level) return jr_lex_fail(r, HOST_JPARSE_OUT_OF_MEMORY, r->p.p);
        if (!heap) memcpy(level, r->inline_level, sizeof r->inline_level);
        r->level = level;
        r->cap = cap;
    }
    r->level[r->depth] = (jr_level){r->p.p, r->p.nkeys, kind};
    r->peeked = false;
    r->depth++;
    r->due = false;
    r->p.p++;
    return true;
}

static bool jr_begin(host_jreader *r, char open, const char *what)
{
    if (!jr_due(r)) return false;
    if (*r->p.p != open) return jr_expected(r, what);
    return jr_push(r, open == '{' ? LEVEL_OBJECT : 0);
}

static bool jr_begin_object(ecs_json_reader *api)
{
    return jr_begin(R(api), '{', "an object");
}

static bool jr_begin_array(ecs_json_reader *api)
{
    return jr_begin(R(api), '[', "an array");
}

static bool jr_skip(ecs_json_reader *api);

/* Close the open level (p at its ']' or '}'). */
static bool jr_close(host_jreader *r)
{
    r->p.p++;
    r->depth--;
    const jr_level *closed = &r->level[r->depth];
    r->last = closed->open; /* the value read last is now the whole array or object */
    if ((closed->flags & LEVEL_OBJECT) && !r->checked) {
        if (!keys_unique(&r->p, closed->key_base)) return jr_syntax(r);
        r->p.nkeys = closed->key_base;
    }
    jr_value_done(r);
    return false;
}

/* Inside an array or object: past the ',' before the next element or member, or the
 * closing bracket (closed: false). A value left unread is passed over first. */
/* The manager asked for the next key without reading the value of the last (at r->last):
 * a key it does not know, refused (host_jr_refuse_unread_keys). */
static bool unread_key(host_jreader *r)
{
    const char *at = r->last, *end = at + 1;
    while (end < r->p.end && *end != '"' && end - at < 80) end += 1 + (*end == '\\');
    return jr_message(r, at, "unknown key %.*s\": the manager reads no such key", (int)(end - at),
                      at);
}

static bool jr_next(host_jreader *r, bool object)
{
    if (r->failed) return false;
    if (r->depth == 0 || !(r->level[r->depth - 1].flags & LEVEL_OBJECT) != !object)
        return jr_message(r, r->p.p, "%s called outside an %s", object ? "key()" : "more()",
                          object ? "object" : "array");
    if (r->peeked && r->due) { /* peek() went past the ',' already: this element */
        r->peeked = false;
        return true;
    }
    if (r->due && object && r->keys_read) return unread_key(r);
    if (r->due && !jr_skip(&r->api)) return false;
    uint8_t *level = &r->level[r->depth - 1].flags;
    char close = object ? '}' : ']';
    skip_space(&r->p);
    if (r->p.p == r->p.end) return jr_lex_fail(r, HOST_JPARSE_END_OF_TEXT, r->p.p);
    if (*r->p.p == close) return jr_close(r);
    if (*level & LEVEL_ITEMS) {
        if (*r->p.p != ',')
            return jr_lex_fail(
                r, object ? HOST_JPARSE_EXPECTED_OBJECT_COMMA : HOST_JPARSE_EXPECTED_ARRAY_COMMA,
                r->p.p);
        const char *comma = r->p.p++;
        skip_space(&r->p);
        if (r->p.p < r->p.end && *r->p.p == close)
            return jr_lex_fail(r, HOST_JPARSE_TRAILING_COMMA, comma);
    }
    if (r->p.p == r->p.end) return jr_lex_fail(r, HOST_JPARSE_END_OF_TEXT, r->p.p);
    *level |= LEVEL_ITEMS;
    return true;
}

static bool jr_more(ecs_json_reader *api)
{
    host_jreader *r = R(api);
    if (!jr_next(r, false)) return false;
    r->due = true;
    return true;
}

/* s[0..n) as a NUL-terminated string in the scratch buffer. */
static const char *jr_terminated(host_jreader *r, const char *s, size_t n, bool escaped)
{
    if (!scratch_reserve(&r->p, n + 1))
        return jr_lex_fail(r, HOST_JPARSE_OUT_OF_MEMORY, r->last), NULL;
    if (!escaped) memcpy(r->p.scratch, s, n);
    r->p.scratch[n] = '\0';
    return r->p.scratch;
}

static bool jr_key(ecs_json_reader *api, const char **key)
{
    host_jreader *r = R(api);
    const char *s;
    size_t n;
    bool escaped;
    if (key) *key = NULL;
    if (!jr_next(r, true)) return false;
    const char *at = r->p.p;
    if (*at != '"') return jr_lex_fail(r, HOST_JPARSE_EXPECTED_KEY, at);
    bool done;
    if (!jr_lex_string(r, &s, &n, &escaped, &done)) return jr_syntax(r);
    if (!r->checked && !note_key(&r->p, at, escaped ? KEY_ESCAPED : n)) return jr_syntax(r);
    if (r->rec) tape_put(r->rec, at, r->p.p, s, n, 0);
    skip_space(&r->p);
    if (r->p.p == r->p.end) return jr_lex_fail(r, HOST_JPARSE_END_OF_TEXT, r->p.p);
    if (*r->p.p != ':') return jr_lex_fail(r, HOST_JPARSE_EXPECTED_COLON, r->p.p);
    r->p.p++;
    skip_space(&r->p);
    if (r->p.p == r->p.end) return jr_lex_fail(r, HOST_JPARSE_END_OF_TEXT, r->p.p);
    r->last = at;
    r->due = true;
    if (!key) return true; /* passed over: no copy */
    return (*key = done ? s : jr_terminated(r, s, n, escaped)) != NULL;
}

static bool jr_number(ecs_json_reader *api, double *x)
{
    host_jreader *r = R(api);
    double d = 0;
    if (x) *x = 0;
    if (!jr_due(r)) return false;
    if (type_at(r->p.p) != ECS_JSON_NUMBER) return jr_expected(r, "a number");
    if (!jr_lex_number(r, &d)) return jr_syntax(r);
    if (x) *x = d;
    jr_value_done(r);
    return true;
}

/* The text of the number at `at` for a message (at most 24 bytes). */
static int number_len(const char *at, const char *end)
{
    int n = 0;
    while (at + n < end && n < 24 && (is_digit(at[n]) || strchr("+-.eE", at[n]))) n++;
    return n;
}

static bool jr_number_f32(ecs_json_reader *api, float *x)
{
    host_jreader *r = R(api);
    double d;
    if (x) *x = 0;
    if (!jr_due(r)) return false;
    if (type_at(r->p.p) != ECS_JSON_NUMBER) return jr_expected(r, "a finite number");
    const char *at = r->p.p;
    if (!jr_number(api, &d)) return false;
    float f = (float)d;
    if (!isfinite(f))
        return jr_message(r, at, "expected a finite number (float range), found %.*s",
                          number_len(at, r->p.end), at);
    if (x) *x = f;
    return true;
}

/* The numbers of tokens t[0..n) (n <= 16) into x[0..n) as floats: true when all are
 * finite (else x is left as it was). Three or four are converted in a register and stored
 * in one piece (16 bytes; 8 and 4 for three), never put together in memory first: a load
 * that spans two smaller stores, or a younger store in part, waits for them to reach the
 * cache instead of taking the bytes from them, and a plugin loads a vector whole (8 + 4,
 * or 16 bytes). That stall, here and in the plugin, was a third of array_f32's time. */
static inline bool tokens_f32(float *x, const host_jr_token *t, uint32_t n)
{
#if defined(__SSE2__)
    if (n == 3 || n == 4) {
        __m128 v = _mm_setr_ps((float)t[0].v.number, (float)t[1].v.number, (float)t[2].v.number,
                               n == 4 ? (float)t[3].v.number : 0.0f);
        __m128 zero = _mm_sub_ps(v, v); /* 0 where finite, NaN where infinite */
        if ((_mm_movemask_ps(_mm_cmpeq_ps(zero, zero)) & 15) != 15) return false;
        if (n == 4) {
            _mm_storeu_ps(x, v);
        } else {
            _mm_storel_epi64((__m128i *)(void *)x, _mm_castps_si128(v)); /* unaligned */
            _mm_store_ss(x + 2, _mm_movehl_ps(v, v));
        }
        return true;
    }
#endif
    float v[16]; /* n <= 16; x untouched unless all are finite, as above */
    for (uint32_t k = 0; k < n; k++)
        if (!isfinite(v[k] = (float)t[k].v.number)) return false;
    memcpy(x, v, n * sizeof *x);
    return true;
}

static bool jr_array_f32(ecs_json_reader *api, float *x, uint32_t n)
{
    host_jreader *r = R(api);
    if (!jr_due(r)) return false;
    const char *open = r->p.p;
    ecs_json_type t = type_at(open);
    if (t != ECS_JSON_ARRAY) {
        if (jr_malformed(r)) return false;
        return jr_message(r, open, "expected an array of %u finite numbers, found %s", n,
                          host_jr_type_name(t));
    }
    const host_jr_token *a = jr_token(r);
    if (a && *a->at == '[' && a->v.len == n && n <= 16) { /* read ahead: its numbers */
        if (tokens_f32(x, a + 1, n)) {
            r->p.p = a->end;
            r->tok = a + 1 + n;
            r->last = open;
            jr_value_done(r);
            return true;
        }
    }
    if (n >= 1 && n <= 16) { /* the common case in one loop: n numbers, then the "]" */
        float v[16];
        const char *q = open + 1, *end = r->p.end;
        uint32_t k = 0;
        for (; k < n; k++) {
            while (q < end && host_json_space(*q)) q++;
            if (q == end || (*q != '-' && !is_digit(*q))) break;
            double d;
            r->p.p = q;
            if (!jr_lex_number(r, &d)) break;
            v[k] = (float)d;
            if (!isfinite(v[k])) break;
            for (q = r->p.p; q < end && host_json_space(*q);) q++;
            if (q == end || *q != (k + 1 < n ? ',' : ']')) break;
            q++;
        }
        if (k == n) { /* all there and nothing more: done */
            memcpy(x, v, n * sizeof *x);
            r->p.p = q;
            r->p.status = HOST_JPARSE_OK; /* a number that broke off above is read again */
            r->last = open;
            jr_value_done(r);
            return true;
        }
        r->p.p = open; /* the slow way says what is wrong */
        r->p.status = HOST_JPARSE_OK;
    }
    if (!jr_push(r, 0)) return false;
    uint32_t i = 0;
    for (; jr_more(api); i++) {
        if (i >= n) { /* count them all for the message */
            if (!jr_skip(api)) return false;
            continue;
        }
        if (!jr_number_f32(api, &x[i])) return false;
    }
    if (r->failed) return false;
    r->last = open;
    if (i != n)
        return jr_message(r, open, "expected an array of %u finite numbers, found %u element%s", n,
                          i, i == 1 ? "" : "s");
    return true;
}

static bool jr_string(ecs_json_reader *api, const char **out, size_t *len)
{
    host_jreader *r = R(api);
    const char *s;
    size_t n;
    bool escaped;
    if (out) *out = NULL;
    if (len) *len = 0;
    if (!jr_due(r)) return false;
    if (*r->p.p != '"') return jr_expected(r, "a string");
    bool done;
    if (!jr_lex_string(r, &s, &n, &escaped, &done)) return jr_syntax(r);
    const char *t = done ? s : jr_terminated(r, s, n, escaped);
    if (!t) return false;
    if (out) *out = t;
    if (len) *len = n;
    jr_value_done(r);
    return true;
}

static bool jr_boolean(ecs_json_reader *api, bool *b)
{
    host_jreader *r = R(api);
    if (b) *b = false;
    if (!jr_due(r)) return false;
    size_t left = (size_t)(r->p.end - r->p.p);
    bool t = left >= 4 && memcmp(r->p.p, "true", 4) == 0;
    if (!t && !(left >= 5 && memcmp(r->p.p, "false", 5) == 0))
        return jr_expected(r, "true or false");
    r->p.p += t ? 4 : 5;
    if (b) *b = t;
    jr_value_done(r);
    return true;
}

/* The end of the string whose '"' is at s, passed over (escapes not decoded); NULL when
 * it is not terminated or holds a control character. */
static const char *skim_string(const char *s, const char *end)
{
    for (s++;;) {
        s = host_json_plain_end(s, end);
        if (s >= end || (unsigned char)*s < 0x20) return NULL;
        if (*s == '"') return s + 1;
        if ((s += 2) > end) return NULL; /* an escape: its second byte cannot end the string */
    }
}

/* A byte of [s, end) at or before the first '"', '[', ']', '{' or '}'; end when none. 8
 * bytes at a time, as scan_plain: x | 6 folds '[' and ']' (and 'Y', '_') into 0x5F, '{'
 * and '}' (and 'y', DEL) into 0x7F, so the caller checks the byte it gets. */
static const char *next_structural(const char *s, const char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), six = _mm_set1_epi8(6);
    const __m128i square = _mm_set1_epi8(']' | 6), curly = _mm_set1_epi8('}' | 6);
    for (; end - s >= 16; s += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s), f = _mm_or_si128(x, six);
        __m128i hit =
            _mm_or_si128(_mm_cmpeq_epi8(x, quote),
                         _mm_or_si128(_mm_cmpeq_epi8(f, square), _mm_cmpeq_epi8(f, curly)));
        int mask = _mm_movemask_epi8(hit);
        if (mask) return s + __builtin_ctz((unsigned)mask);
    }
#endif
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; end - s >= 8; s += 8) {
        uint64_t w, q, a, b;
        memcpy(&w, s, 8);
        q = w ^ (ONES * '"');
        a = (w | (ONES * 6)) ^ (ONES * (']' | 6));
        b = (w | (ONES * 6)) ^ (ONES * ('}' | 6));
        uint64_t hit = ((q - ONES) & ~q) | ((a - ONES) & ~a) | ((b - ONES) & ~b);
        hit &= HIGHS;
        if (hit) return s + (__builtin_ctzll(hit) >> 3);
    }
#endif
    while (s < end && *s != '"' && *s != '[' && *s != ']' && *s != '{' && *s != '}') s++;
    return s;
}

/* skim_value's walk, from s with `depth` levels open (their kinds in objects) and s not
 * inside a string: one structural byte at a time. */
static const char *skim_from(const char *s, const char *end, uint64_t *objects, int depth)
{
    do {
        char c = *s;
        if (c == '"') {
            if (!(s = skim_string(s, end))) return NULL;
        } else if (c == '{' || c == '[') {
            if (depth == HOST_JPARSE_MAX_DEPTH) return NULL;
            uint64_t bit = (uint64_t)1 << (depth & 63);
            objects[depth >> 6] = c == '{' ? objects[depth >> 6] | bit : objects[depth >> 6] & ~bit;
            depth++, s++;
        } else if (c == ']' || c == '}') {
            depth--;
            if (depth < 0 || (c == '}') != ((objects[depth >> 6] >> (depth & 63)) & 1)) return NULL;
            s++;
        } else {
            s++; /* 'Y', '_', 'y' or DEL: the quick scan flags them too */
        }
        if (depth > 0) s = next_structural(s, end);
    } while (depth > 0 && s < end);
    return depth == 0 ? s : NULL;
}

#if defined(__SSE2__)
/* The bytes of the 64 in x equal to c, as bits. */
static inline uint64_t eq64(const __m128i *x, char c)
{
    const __m128i k = _mm_set1_epi8(c);
    uint64_t m = 0;
    for (int i = 0; i < 4; i++)
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x[i], k)) << (16 * i);
    return m;
}

/* The control bytes (below 0x20) of the 64 in x, as bits. */
static inline uint64_t control64(const __m128i *x)
{
    const __m128i top = _mm_set1_epi8(0x1F);
    uint64_t m = 0;
    for (int i = 0; i < 4; i++) {
        __m128i below = _mm_cmpeq_epi8(_mm_max_epu8(x[i], top), top); /* x <= 0x1F */
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(below) << (16 * i);
    }
    return m;
}

/* Bit i: an odd number of the bits 0..i of x are set. */
static inline uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* An object or array at s (its '{' or '['), 64 bytes at a time: its strings found as bit
 * masks (a quote and the bytes up to the next), its brackets outside them taken one by one.
 * *fallback set (NULL returned) where the walk must say it: a block with a backslash, or a
 * control byte in a string; a text that ends inside a string. */
static const char *skim_blocks(const char *s, const char *end, uint64_t *objects, bool *fallback)
{
    const char *b = s;
    uint64_t inside = 0; /* all ones: b is inside a string */
    int depth = 0;
    *fallback = false;
    for (; end - b >= 64; b += 64) {
        __m128i x[4];
        for (int i = 0; i < 4; i++)
            x[i] = _mm_loadu_si128((const __m128i *)(const void *)(b + 16 * i));
        uint64_t str = prefix_xor(eq64(x, '"')) ^ inside;
        if (eq64(x, '\\') || (control64(x) & str)) break;
        uint64_t brackets = eq64(x, '{') | eq64(x, '[') | eq64(x, '}') | eq64(x, ']');
        for (uint64_t at = brackets & ~str; at; at &= at - 1) {
            int i = __builtin_ctzll(at);
            char c = b[i];
            if (c == '{' || c == '[') {
                if (depth == HOST_JPARSE_MAX_DEPTH) return NULL;
                uint64_t bit = (uint64_t)1 << (depth & 63);
                objects[depth >> 6] =
                    c == '{' ? objects[depth >> 6] | bit : objects[depth >> 6] & ~bit;
                depth++;
            } else {
                depth--;
                if (depth < 0 || (c == '}') != ((objects[depth >> 6] >> (depth & 63)) & 1))
                    return NULL;
                if (depth == 0) return b + i + 1;
            }
        }
        inside = (uint64_t)0 - (str >> 63);
    }
    if (end - b < 64 && !inside && b < end) return skim_from(b, end, objects, depth);
    *fallback = end - b >= 64 || inside;
    return NULL; /* the text ended with brackets open, or the walk says it */
}
#endif

/* The end of the value at s passed over by its brackets and strings alone: each closing
 * bracket must match its opening one, each string be terminated; what lies between is not
 * checked. NULL when they do not match, or the text ends first. An object or array goes
 * 64 bytes at a time (skim_blocks), handing what it cannot say to the byte walk
 * (skim_from), from the value's start: the same answer for every text (test_jparse
 * compares them). */
static const char *skim_value(const char *s, const char *end)
{
    uint64_t objects[HOST_JPARSE_MAX_DEPTH / 64 + 1]; /* bit d: level d is an object */
    if (*s != '"' && *s != '[' && *s != '{') {        /* a number or literal: at least a byte */
        const char *start = s;
        while (s < end && !host_json_space(*s) && *s != ',' && *s != ']' && *s != '}') s++;
        return s > start ? s : NULL;
    }
#if defined(__SSE2__)
    if (*s != '"') {
        bool fallback;
        const char *after = skim_blocks(s, end, objects, &fallback);
        if (!fallback) return after;
    }
#endif
    return skim_from(s, end, objects, 0);
}

const char *host_jr_skim(const char *s, const char *end)
{
    return s < end ? skim_value(s, end) : NULL;
}

static bool jr_skip(ecs_json_reader *api)
{
    host_jreader *r = R(api);
    if (!jr_due(r)) return false;
    if (r->skim) { /* what is passed over is checked elsewhere, or was */
        const char *after = skim_value(r->p.p, r->p.end);
        if (!after) return jr_lex_fail(r, HOST_JPARSE_END_OF_TEXT, r->p.p);
        r->p.p = after;
        jr_value_done(r);
        return true;
    }
    int depth = r->depth;
    const char *value = r->last; /* jr_key() below moves last to each key passed over */
    do {
        if (r->due) { /* a value starts here */
            skip_space(&r->p);
            if (r->p.p == r->p.end) return jr_lex_fail(r, HOST_JPARSE_END_OF_TEXT, r->p.p);
            char c = *r->p.p;
            if (c == '[' && r->rec && jr_record(r, rec_numbers)) continue;
            if (c == '{' && r->rec && r->depth == 0 && jr_record(r, rec_value_object)) continue;
            if (c == '{' || c == '[') {
                if (!jr_push(r, c == '{' ? LEVEL_OBJECT : 0)) return false;
            } else if (r->rec ? jr_record_scalar(r) : parse_scalar(&r->p, NULL)) {
                jr_value_done(r);
            } else {
                return jr_syntax(r);
            }
        } else if (r->level[r->depth - 1].flags & LEVEL_OBJECT) {
            if (!jr_key(api, NULL) && r->failed) return false;
        } else if (!jr_more(api) && r->failed) {
            return false;
        }
    } while (r->depth > depth || r->due);
    r->last = value; /* the value passed over is the one read last, as when skimmed */
    return !r->failed;
}

static bool jr_entity(ecs_json_reader *api, ecs_entity *e)
{
    host_jreader *r = R(api);
    const char *id;
    if (e) *e = ecs_entity_null();
    if (!jr_due(r)) return false;
    const char *at = r->p.p;
    if (*at != '"') return jr_expected(r, "a scene id (a string)");
    if (!jr_string(api, &id, NULL)) return false;
    char why[300] = "";
    ecs_entity out = ecs_entity_null();
    r->last = at;
    if (!r->resolve) return jr_message(r, at, "no entity references here");
    if (!r->resolve(r->resolve_ctx, id, &out, why, sizeof why))
        return r->failed ? false : jr_message(r, at, "%s", why);
    if (e) *e = out;
    return true;
}

static void jr_error(ecs_json_reader *api, const char *fmt, ...)
{
    host_jreader *r = R(api);
    if (r->failed) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt ? fmt : "(no message)", ap);
    va_end(ap);
    r->failed = true;
    r->fail_at = r->last ? r->last : r->top_at;
}

static bool jr_failed(ecs_json_reader *api)
{
    return R(api)->failed;
}

host_jreader *host_jr_new(void)
{
    host_jreader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->api = (ecs_json_reader){sizeof(ecs_json_reader),
                               jr_peek,
                               jr_begin_object,
                               jr_key,
                               jr_begin_array,
                               jr_more,
                               jr_number,
                               jr_number_f32,
                               jr_array_f32,
                               jr_string,
                               jr_boolean,
                               jr_skip,
                               jr_entity,
                               jr_error,
                               jr_failed};
    r->level = r->inline_level;
    r->cap = JR_INLINE_LEVELS;
    r->p.unique_keys = true;
    return r;
}

void host_jr_free(host_jreader *r)
{
    if (!r) return;
    if (r->level != r->inline_level) free(r->level);
    free(r->p.scratch);
    free(r->p.keys);
    free(r);
}

void host_jr_start(host_jreader *r, const char *text, size_t len, size_t at, host_jr_mode mode)
{
    bool checked = mode == HOST_JR_TRUSTED;
    r->p.p = text + at;
    r->p.end = text + len;
    r->p.status = HOST_JPARSE_OK;
    r->p.error_at = r->p.first_at = NULL;
    r->p.nkeys = 0;
    r->text = text;
    if (at == 0 && len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) r->p.p += 3;
    skip_space(&r->p);
    r->top_at = r->last = r->p.p;
    r->depth = 0;
    r->due = true;
    r->done = r->failed = r->peeked = false;
    r->checked = checked;
    r->skim = mode != HOST_JR_STRICT;
    r->keys_read = false;
    r->fail_at = NULL;
    r->message[0] = '\0';
    r->rec = NULL;
    r->tok = r->tok_end = NULL;
    if (!checked && r->p.p == r->p.end) {
        fail(&r->p, HOST_JPARSE_EMPTY, r->p.p);
        jr_syntax(r);
    }
}

void host_jr_refuse_unread_keys(host_jreader *r)
{
    r->keys_read = true;
}

void host_jr_record(host_jreader *r, host_jr_tape *tape)
{
    r->rec = tape;
}

void host_jr_use(host_jreader *r, const host_jr_token *tok, size_t n)
{
    r->tok = tok;
    r->tok_end = tok ? tok + n : NULL;
}

void host_jr_on_entity(host_jreader *r, host_jr_resolve_fn resolve, void *ctx)
{
    r->resolve = resolve;
    r->resolve_ctx = ctx;
}

ecs_json_reader *host_jr_api(host_jreader *r)
{
    return &r->api;
}

bool host_jr_complete(const host_jreader *r)
{
    return !r->failed && r->done;
}

bool host_jr_finish_document(host_jreader *r)
{
    if (r->failed) return false;
    skip_space(&r->p);
    if (r->p.p != r->p.end) return jr_lex_fail(r, HOST_JPARSE_TRAILING_TEXT, r->p.p);
    return true;
}

bool host_jr_error(const host_jreader *r, size_t *offset, host_jparse_status *syntax,
                   const char **message)
{
    if (!r->failed) return false;
    if (offset) *offset = (size_t)((r->fail_at ? r->fail_at : r->top_at) - r->text);
    if (syntax) *syntax = r->p.status;
    if (message) *message = r->message;
    return true;
}

size_t host_jr_offset(const host_jreader *r)
{
    return (size_t)(r->p.p - r->text);
}

size_t host_jr_last(const host_jreader *r)
{
    return (size_t)(r->last - r->text);
}

bool host_jr_pass_elements(host_jreader *r, size_t end)
{
    if (r->failed || !r->due || r->depth == 0 || (r->level[r->depth - 1].flags & LEVEL_OBJECT) ||
        end < (size_t)(r->p.p - r->text) || end > (size_t)(r->p.end - r->text))
        return false;
    r->p.p = r->text + end;
    r->due = r->peeked = false;
    return true;
}

bool host_jr_skip_rest(host_jreader *r)
{
    while (!r->failed && (r->depth > 0 || r->due)) {
        if (r->due)
            jr_skip(&r->api);
        else if (r->level[r->depth - 1].flags & LEVEL_OBJECT)
            jr_key(&r->api, NULL);
        else
            jr_more(&r->api);
    }
    return !r->failed;
}

void host_jparse_position(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *c = text; c < at && *c; c++) {
        if (*c == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}
