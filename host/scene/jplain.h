/* SPDX-License-Identifier: MIT */
/* jplain.h: the scan both JSON directions share: where a plain run of string bytes ends
 * (the parser's strings, the writer's quoting). */
#ifndef HOST_JPLAIN_H
#define HOST_JPLAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* JSON's white space: nothing else. */
static inline bool host_json_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* The first byte of [p, end) that is no JSON white space (end when none). */
static inline const char *host_json_skip_space(const char *p, const char *end)
{
    while (p < end && host_json_space(*p)) p++;
    return p;
}

/* The first byte of [s, end) that ends a plain run of a string: '"', '\' or a control
 * character; end when none. 8 bytes at a time: a byte of x is flagged by
 * (x - ONES*k) & ~x & HIGHS when it is below k (k <= 0x80); a borrow can only flag bytes
 * above a flagged one, so the lowest flag is exact. */
static inline const char *host_json_plain_end(const char *s, const char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8((char)(0x20 ^ 0x80)), flip = _mm_set1_epi8((char)0x80);
    for (; end - s >= 16; s += 16) { /* a control byte: signed (x ^ 0x80) < (0x20 ^ 0x80) */
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i ctl = _mm_cmpgt_epi8(space, _mm_xor_si128(x, flip));
        __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, slash)), ctl);
        int mask = _mm_movemask_epi8(hit);
        if (mask) return s + __builtin_ctz((unsigned)mask);
    }
#endif
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; end - s >= 8; s += 8) {
        uint64_t w, q, b;
        memcpy(&w, s, 8);
        q = w ^ (ONES * '"');
        b = w ^ (ONES * '\\');
        uint64_t hit = ((q - ONES) & ~q) | ((b - ONES) & ~b) | ((w - ONES * 0x20) & ~w);
        hit &= HIGHS;
        if (hit) return s + (__builtin_ctzll(hit) >> 3);
    }
#endif
    while (s < end && *s != '"' && *s != '\\' && (unsigned char)*s >= 0x20) s++;
    return s;
}

#endif
