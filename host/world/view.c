/* SPDX-License-Identifier: MIT */
/* view.c: views: pick the shortest `with` list, store the checks, walk (view.h). */
#include "view.h"

#include <stdlib.h>
#include <string.h>

#include "signature.h"
#include "world.h"

/* The loaded manager of bit b with an index, or NULL. */
static host_manager *indexed(const host_world *w, uint32_t b)
{
    host_manager *m = b < w->sched.by_bit_cap ? w->sched.by_bit[b] : NULL;
    return m && m->index.has && m->index.entities ? m : NULL;
}

/* The plan holding ix[0..n), the existing one or a new one; NULL when memory ran out. */
static const host_view_plan *plan_of(host_view_plans *plans, const ecs_manager_index **ix,
                                     uint32_t n)
{
    for (uint32_t p = 0; p < plans->count; p++) {
        const host_view_plan *pl = plans->v[p];
        if (pl->count == n && memcmp(pl->ix, ix, n * sizeof *ix) == 0) return pl;
    }
    if (plans->count == plans->cap) {
        uint32_t cap = plans->cap ? plans->cap * 2 : 4;
        host_view_plan **v = realloc(plans->v, cap * sizeof *v);
        if (!v) return NULL;
        plans->v = v;
        plans->cap = cap;
    }
    host_view_plan *pl = malloc(sizeof *pl);
    const ecs_manager_index **copy = malloc(n * sizeof *copy);
    if (!pl || !copy) {
        free(pl);
        free(copy);
        return NULL;
    }
    memcpy(copy, ix, n * sizeof *copy);
    *pl = (host_view_plan){n, copy};
    plans->v[plans->count++] = pl;
    return pl;
}

/* Collect the checks into ix: the `with` managers but `list` (their number in *n_with),
 * then the loaded `without` ones. Returns how many in all, or -1 with *missing set. */
static long collect(const host_world *w, const uint32_t *with, uint32_t nw, const uint32_t *without,
                    uint32_t nwo, const host_manager *list, const ecs_manager_index **ix,
                    uint32_t *n_with, uint32_t *missing)
{
    long n = 0;
    for (uint32_t k = 0; k < nw; k++) {
        host_manager *m = indexed(w, with[k]);
        if (m != list) ix[n++] = &m->index; /* a repeated name is asked again: harmless */
    }
    *n_with = (uint32_t)n;
    for (uint32_t k = 0; k < nwo; k++) {
        host_manager *m = without[k] < w->sched.by_bit_cap ? w->sched.by_bit[without[k]] : NULL;
        if (!m) continue; /* not loaded: nobody has it */
        if (!indexed(w, without[k])) return *missing = without[k], -1;
        ix[n++] = &m->index;
    }
    return n;
}

/* Set v up to test signature columns (HOST_VIEW_SIG) when every manager of the query but
 * the walked one reports its bit and there are at most HOST_VIEW_INLINE of them. False
 * (v untouched) otherwise. */
static bool sig_view(const host_world *w, const uint32_t *with, uint32_t nw,
                     const uint32_t *without, uint32_t nwo, const host_manager *list, ecs_view *v)
{
    const void *column[HOST_VIEW_INLINE];
    uint32_t n = 0, n_with = 0;
    for (uint32_t k = 0; k < nw + nwo; k++) {
        uint32_t b = k < nw ? with[k] : without[k - nw];
        const host_manager *m = b < w->sched.by_bit_cap ? w->sched.by_bit[b] : NULL;
        if (!m && k >= nw) continue; /* a `without` manager not loaded: nobody has it */
        if (m == list) continue;     /* the walked list: its entities have it */
        if (!m || !m->index.signature || n == HOST_VIEW_INLINE) return false;
        column[n++] = host_sig_column(&w->sig, b);
        n_with += k < nw;
    }
    v->host[0] = (void *)(uintptr_t)(HOST_VIEW_SIG | n_with | n << 8);
    for (uint32_t k = 0; k < n; k++) v->host[1 + k] = (void *)(uintptr_t)column[k];
    return true;
}

/* Set v up to walk the signature columns in index order (HOST_VIEW_SIG | HOST_VIEW_COLS)
 * when every manager of the query, the walked one too, reports its bit, there are at most
 * HOST_VIEW_INLINE of them, and the shortest list (count entities) holds at least one
 * index in HOST_VIEW_DENSE of those ever given a bit: a word of each column then covers 64
 * indices, and no entity is read from a list. False (v untouched) otherwise. */
static bool cols_view(const host_world *w, const uint32_t *with, uint32_t nw,
                      const uint32_t *without, uint32_t nwo, uint32_t count, ecs_view *v)
{
    const void *column[HOST_VIEW_INLINE];
    uint32_t n = 0, n_with = 0;
    if ((uint64_t)count * HOST_VIEW_DENSE < w->sig.used) return false;
    for (uint32_t k = 0; k < nw + nwo; k++) {
        uint32_t b = k < nw ? with[k] : without[k - nw];
        const host_manager *m = b < w->sched.by_bit_cap ? w->sched.by_bit[b] : NULL;
        if (!m && k >= nw) continue; /* a `without` manager not loaded: nobody has it */
        if (!m || !m->index.signature || n == HOST_VIEW_INLINE) return false;
        if (!(column[n++] = host_sig_column(&w->sig, b))) return false;
        n_with += k < nw;
    }
    v->list = NULL;
    v->count = w->sig.used; /* every column bit at or past `used` is 0 */
    v->host[0] = (void *)(uintptr_t)(HOST_VIEW_SIG | HOST_VIEW_COLS | n_with | n << 8);
    for (uint32_t k = 0; k < n; k++) v->host[1 + k] = (void *)(uintptr_t)column[k];
    return true;
}

ecs_status host_view_init(host_world *w, const uint32_t *with, uint32_t nw, const uint32_t *without,
                          uint32_t nwo, ecs_view *v, uint32_t *missing)
{
    if ((uint64_t)nw + nwo > HOST_VIEW_MAX) return ECS_ERR_UNSUPPORTED;
    host_manager *list = NULL;
    const ecs_entity *entities = NULL;
    uint32_t count = 0;
    for (uint32_t k = 0; k < nw; k++) { /* the shortest list is the one walked */
        host_manager *m = indexed(w, with[k]);
        if (!m) return *missing = with[k], ECS_ERR_NOT_FOUND;
        const ecs_entity *e = NULL;
        uint32_t n = m->index.entities(m->index.state, &e);
        if (!list || n < count) list = m, entities = e, count = n;
    }
    const ecs_manager_index **ix = malloc(((size_t)nw + nwo) * sizeof *ix);
    if (!ix) return ECS_ERR_NO_MEMORY;
    uint32_t n_with = 0;
    long n = collect(w, with, nw, without, nwo, list, ix, &n_with, missing);
    ecs_status s = n < 0 ? ECS_ERR_NOT_FOUND : ECS_OK;
    const host_view_plan *plan = NULL;
    if (s == ECS_OK && n > (long)HOST_VIEW_INLINE && !(plan = plan_of(&w->views, ix, (uint32_t)n)))
        s = ECS_ERR_NO_MEMORY;
    if (s == ECS_OK) {
        memset(v, 0, sizeof *v);
        v->list = count ? entities : NULL;
        v->count = count;
    }
    if (s == ECS_OK && !cols_view(w, with, nw, without, nwo, count, v) &&
        !sig_view(w, with, nw, without, nwo, list, v)) {
        v->host[0] = (void *)(uintptr_t)(n_with | (uint32_t)n << 16);
        if (plan)
            v->host[1] = (void *)(uintptr_t)plan; /* the host's: never written through */
        else
            for (long k = 0; k < n; k++) v->host[1 + k] = (void *)(uintptr_t)ix[k];
    }
    free(ix);
    return s;
}

void host_view_plans_free(host_view_plans *plans)
{
    for (uint32_t p = 0; p < plans->count; p++) {
        free(plans->v[p]->ix);
        free(plans->v[p]);
    }
    free(plans->v);
    memset(plans, 0, sizeof *plans);
}

/* Check k of a view of n checks. */
static inline const ecs_manager_index *check_of(const ecs_view *v, uint32_t n, uint32_t k)
{
    if (n <= HOST_VIEW_INLINE) return (const ecs_manager_index *)v->host[1 + k];
    return ((const host_view_plan *)v->host[1])->ix[k];
}

/* Does e pass the checks of v: accepted by the n_with first, refused by the rest? */
static bool passes(const ecs_view *v, uint32_t n_with, uint32_t n, ecs_entity e)
{
    for (uint32_t k = 0; k < n; k++) {
        const ecs_manager_index *ix = check_of(v, n, k);
        if (ix->has(ix->state, e) != (k < n_with)) return false;
    }
    return true;
}

/* Bit i of a column. */
static inline uint32_t column_bit(const uint64_t *column, uint32_t i)
{
    return (uint32_t)(column[i >> 6] >> (i & 63)) & 1u;
}

/* One column test per entity (two managers in the query, the common case), entities
 * list[i..end) into out from out[got]; returns the new got. No branch per entity: each
 * entity is stored at out[got] and got grows by its verdict, so a query whose outcome is a
 * coin toss (a tenth of the entities named, say) costs what a predictable one does. The
 * caller makes sure out has end - i slots from got. */
static uint32_t sig1_scalar(const ecs_entity *restrict list, uint32_t i, uint32_t end,
                            const uint64_t *column, uint32_t flip, const uint16_t *keys,
                            ecs_entity *restrict out, uint32_t got)
{
    for (; i < end; i++) {
        ecs_entity e = list[i];
        out[got] = e;
        got +=
            (column_bit(column, e.id & ECS_ENTITY_INDEX_MASK) ^ flip) & ecs_alive_exact_in(keys, e);
    }
    return got;
}

typedef uint32_t (*sig1_fn)(const ecs_entity *restrict, uint32_t, uint32_t, const uint64_t *,
                            uint32_t, const uint16_t *, ecs_entity *restrict, uint32_t);

/* The column walk's step: of the eight indices base..base+7, those whose bit is set in m
 * (bit b: index base + b) and whose holder is alive, as entities into out from out[got];
 * returns the new got. Stores without a branch: the caller makes sure out has 8 slots
 * from got. */
typedef uint32_t (*cols8_fn)(uint32_t base, uint32_t m, const uint16_t *keys,
                             ecs_entity *restrict out, uint32_t got);

static uint32_t cols8_scalar(uint32_t base, uint32_t m, const uint16_t *keys,
                             ecs_entity *restrict out, uint32_t got)
{
    for (; m; m &= m - 1) {
        uint32_t i = base + (uint32_t)__builtin_ctz(m), key = keys[i];
        out[got] = ecs_entity_make(i, key - 256u);
        got += key != 0;
    }
    return got;
}

/* Word k of a column view's query: the `with` columns ANDed, the `without` ones taken out
 * (n_with >= 1, so the word is 0 past the indices ever given a bit). */
static inline uint64_t cols_word(const ecs_view *v, uint32_t n_with, uint32_t n, uint32_t k)
{
    uint64_t w = ((const uint64_t *)v->host[1])[k];
    for (uint32_t c = 1; c < n; c++) {
        uint64_t x = ((const uint64_t *)v->host[1 + c])[k];
        w &= c < n_with ? x : ~x;
    }
    return w;
}

/* The column walk (HOST_VIEW_COLS): v->next is the next index to look at, v->count the end.
 * Each word of the query is taken eight bits at a time by step while out has room for
 * eight, then bit by bit up to max. Inlined into each caller with its step. */
static inline __attribute__((always_inline)) uint32_t cols_walk(ecs_view *v, uint32_t n_with,
                                                                uint32_t n, const uint16_t *keys,
                                                                ecs_entity *restrict out,
                                                                uint32_t max, cols8_fn step)
{
    uint32_t i = v->next, end = v->count, got = 0;
    while (i < end && got < max) {
        uint32_t base = i & ~63u;
        uint64_t w = cols_word(v, n_with, n, i >> 6) & (~0ull << (i & 63));
        if (w && (uint32_t)__builtin_popcountll(w) + 8 <= max - got) {
            /* room for the whole word, each step writing eight: eight steps, no search */
            for (uint32_t shift = 0; shift < 64; shift += 8)
                got = step(base + shift, (uint32_t)(w >> shift) & 0xFFu, keys, out, got);
            w = 0;
        }
        while (w) {
            uint32_t shift = (uint32_t)__builtin_ctzll(w) & ~7u, m = (uint32_t)(w >> shift) & 0xFFu;
            w &= ~(0xFFull << shift);
            if (max - got >= 8) {
                got = step(base + shift, m, keys, out, got);
                continue;
            }
            for (; m; m &= m - 1) { /* the last few: stop where out is full */
                uint32_t x = base + shift + (uint32_t)__builtin_ctz(m), key = keys[x];
                if (got == max) return v->next = x, got;
                if (key) out[got++] = ecs_entity_make(x, key - 256u);
            }
        }
        i = base + 64;
    }
    v->next = i;
    return got;
}

/* cols_walk for one entity (view_next): stops at the first match. */
static uint32_t cols_one(ecs_view *v, uint32_t n_with, uint32_t n, const uint16_t *keys,
                         ecs_entity *out)
{
    uint32_t i = v->next, end = v->count;
    for (; i < end; i = (i & ~63u) + 64) {
        for (uint64_t w = cols_word(v, n_with, n, i >> 6) & (~0ull << (i & 63)); w; w &= w - 1) {
            uint32_t x = (i & ~63u) + (uint32_t)__builtin_ctzll(w), key = keys[x];
            if (key) {
                *out = ecs_entity_make(x, key - 256u);
                v->next = x + 1;
                return 1;
            }
        }
    }
    v->next = i;
    return 0;
}

static uint32_t cols_scalar(ecs_view *v, uint32_t n_with, uint32_t n, const uint16_t *keys,
                            ecs_entity *restrict out, uint32_t max)
{
    return cols_walk(v, n_with, n, keys, out, max, cols8_scalar);
}

typedef uint32_t (*cols_fn)(ecs_view *, uint32_t, uint32_t, const uint16_t *, ecs_entity *restrict,
                            uint32_t);

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* lanes[m]: the lanes set in the 8-bit mask m, in order, 4 bits each (the rest 0): the
 * permutation that packs an AVX2 vector's chosen entities to its front. */
static uint32_t lanes[256];

static void lanes_init(void)
{
    for (uint32_t m = 0; m < 256; m++) {
        uint32_t packed = 0, n = 0;
        for (uint32_t b = 0; b < 8; b++)
            if (m >> b & 1u) packed |= b << (4 * n++);
        lanes[m] = packed;
    }
}

/* sig1_scalar, eight entities at a time with AVX2: the column words and the alive keys
 * gathered, the verdicts as a mask, the chosen entities packed and stored at out[got]
 * (eight lanes written, got grows by the number chosen). The keys are gathered as 32-bit
 * words at key i's address (the entity manager pads its keys so the last one can be read
 * that way) and the upper half dropped. */
__attribute__((target("avx2,popcnt"))) static uint32_t
sig1_avx2(const ecs_entity *restrict list, uint32_t i, uint32_t end, const uint64_t *column,
          uint32_t flip, const uint16_t *keys, ecs_entity *restrict out, uint32_t got)
{
    const __m256i mask = _mm256_set1_epi32((int)ECS_ENTITY_INDEX_MASK);
    const __m256i low16 = _mm256_set1_epi32(0xFFFF), k256 = _mm256_set1_epi32(256);
    const __m256i want = _mm256_set1_epi32((int)(flip ^ 1u)), one = _mm256_set1_epi32(1);
    const __m256i thirty_one = _mm256_set1_epi32(31),
                  nibbles = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    const __m256i fifteen = _mm256_set1_epi32(15);
    const int *words = (const int *)column, *key_words = (const int *)keys;
    for (; end - i >= 8; i += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(list + i));
        __m256i x = _mm256_and_si256(v, mask);
        __m256i w = _mm256_i32gather_epi32(words, _mm256_srli_epi32(x, 5), 4);
        __m256i bit = _mm256_and_si256(_mm256_srlv_epi32(w, _mm256_and_si256(x, thirty_one)), one);
        __m256i k = _mm256_and_si256(_mm256_i32gather_epi32(key_words, x, 2), low16);
        __m256i ok = _mm256_and_si256(
            _mm256_cmpeq_epi32(bit, want),
            _mm256_cmpeq_epi32(k, _mm256_add_epi32(_mm256_srli_epi32(v, 22), k256)));
        uint32_t m = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(ok));
        __m256i perm =
            _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)lanes[m]), nibbles), fifteen);
        _mm256_storeu_si256((__m256i *)(out + got), _mm256_permutevar8x32_epi32(v, perm));
        got += (uint32_t)__builtin_popcount(m);
    }
    return sig1_scalar(list, i, end, column, flip, keys, out, got);
}

/* cols8_scalar with AVX2: the eight alive keys read at once (sequential indices: no
 * gather), the ids built from them, the chosen ones packed and stored as in sig1_avx2. The
 * entity manager pads its keys, so eight can be read from any index below 2^22. */
__attribute__((target("avx2,popcnt"))) static inline uint32_t
cols8_avx2(uint32_t base, uint32_t m, const uint16_t *keys, ecs_entity *restrict out, uint32_t got)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), k256 = _mm256_set1_epi32(256);
    const __m256i nibbles = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    const __m256i fifteen = _mm256_set1_epi32(15);
    __m256i key = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(keys + base)));
    m &= ~(uint32_t)_mm256_movemask_ps(
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(key, _mm256_setzero_si256())));
    __m256i id = _mm256_or_si256(_mm256_add_epi32(_mm256_set1_epi32((int)base), iota),
                                 _mm256_slli_epi32(_mm256_sub_epi32(key, k256), 22));
    __m256i perm =
        _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)lanes[m]), nibbles), fifteen);
    _mm256_storeu_si256((__m256i *)(out + got), _mm256_permutevar8x32_epi32(id, perm));
    return got + (uint32_t)__builtin_popcount(m);
}

__attribute__((target("avx2,popcnt"))) static uint32_t cols_avx2(ecs_view *v, uint32_t n_with,
                                                                 uint32_t n, const uint16_t *keys,
                                                                 ecs_entity *restrict out,
                                                                 uint32_t max)
{
    return cols_walk(v, n_with, n, keys, out, max, cols8_avx2);
}

/* Whether the processor has AVX2 (and lanes is filled then); found once. */
static bool has_avx2(void)
{
    static int known; /* 0: not asked yet, 1: no, 2: yes */
    if (!known) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") ? 2 : 1;
        if (known == 2) lanes_init();
    }
    return known == 2;
}

/* sig1_avx2 where the processor has AVX2, else sig1_scalar. */
static sig1_fn sig1_pick(void)
{
    return has_avx2() ? sig1_avx2 : sig1_scalar;
}

/* cols_avx2 where the processor has AVX2, else cols_scalar. */
static cols_fn cols_pick(void)
{
    return has_avx2() ? cols_avx2 : cols_scalar;
}
#else
static sig1_fn sig1_pick(void)
{
    return sig1_scalar;
}

static cols_fn cols_pick(void)
{
    return cols_scalar;
}
#endif

/* next_sig for one entity (view_next): a plain loop that stops at the first match. */
static uint32_t next_sig_one(ecs_view *v, uint32_t n_with, uint32_t n, const uint16_t *keys,
                             ecs_entity *out)
{
    uint32_t i = v->next, count = v->count;
    for (; i < count; i++) {
        ecs_entity e = v->list[i];
        uint32_t x = e.id & ECS_ENTITY_INDEX_MASK, ok = 1;
        for (uint32_t k = 0; k < n; k++)
            ok &= column_bit((const uint64_t *)v->host[1 + k], x) == (k < n_with);
        if (ok && ecs_alive_exact_in(keys, e)) {
            *out = e;
            v->next = i + 1;
            return 1;
        }
    }
    v->next = i;
    return 0;
}

/* The signature walk: n column tests per entity, the first n_with wanting 1, and the alive
 * check, without a branch per entity (see sig1_scalar). Each round runs at most max - got
 * entities, so the unconditional stores stay inside out. */
static uint32_t next_sig(ecs_view *v, uint32_t n_with, uint32_t n, const uint16_t *keys,
                         ecs_entity *restrict out, uint32_t max)
{
    const ecs_entity *restrict list = v->list;
    uint32_t i = v->next, count = v->count, got = 0;
    if (max == 1) return next_sig_one(v, n_with, n, keys, out);
    sig1_fn sig1 = n == 1 ? sig1_pick() : NULL;
    while (i < count && got < max) {
        uint32_t end = count - i > max - got ? i + (max - got) : count;
        if (sig1) {
            got = sig1(list, i, end, (const uint64_t *)v->host[1], n_with ^ 1u, keys, out, got);
            i = end;
            continue;
        }
        for (; i < end; i++) {
            ecs_entity e = list[i];
            uint32_t x = e.id & ECS_ENTITY_INDEX_MASK, ok = ecs_alive_exact_in(keys, e);
            for (uint32_t k = 0; k < n; k++) /* none: the walked manager alone */
                ok &= column_bit((const uint64_t *)v->host[1 + k], x) == (k < n_with);
            out[got] = e;
            got += ok;
        }
    }
    v->next = i;
    return got;
}

uint32_t host_view_next_many(ecs_view *v, const uint16_t *alive_keys, ecs_entity *out, uint32_t max)
{
    uintptr_t counts = (uintptr_t)v->host[0];
    if ((counts & HOST_VIEW_COLS) && max == 1)
        return cols_one(v, counts & 0xFFu, (counts >> 8) & 0xFFu, alive_keys, out);
    if (counts & HOST_VIEW_COLS)
        return cols_pick()(v, counts & 0xFFu, (counts >> 8) & 0xFFu, alive_keys, out, max);
    if (counts & HOST_VIEW_SIG)
        return next_sig(v, counts & 0xFFu, (counts >> 8) & 0xFFu, alive_keys, out, max);
    uint32_t n_with = (uint32_t)(counts & 0xFFFFu), n = (uint32_t)(counts >> 16);
    uint32_t i = v->next, count = v->count, got = 0;
    for (; i < count && got < max; i++) {
        ecs_entity e = v->list[i];
        if (ecs_alive_exact_in(alive_keys, e) && passes(v, n_with, n, e)) out[got++] = e;
    }
    v->next = i;
    return got;
}

bool host_view_next(ecs_view *v, const uint16_t *alive_keys, ecs_entity *out)
{
    ecs_entity e; /* *out is written only with an entity of the view */
    if (host_view_next_many(v, alive_keys, &e, 1) != 1) return false;
    *out = e;
    return true;
}
