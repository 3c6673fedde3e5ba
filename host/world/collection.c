/* SPDX-License-Identifier: MIT */
/* collection.c: collections kept from the signature queue at frame starts (collection.h).
 *
 * Apply: queue the indices of entities destroyed and not yet announced (dead now, still
 * holding bits until the announcement) -> rebuild the collections that need it from every
 * signature -> re-test each queued index against every other active collection -> empty
 * the queue. Re-testing an index is O(words) per collection, so a frame costs
 * O(changed entities x active collections), nothing when nothing changed.
 */
#include "collection.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

/* ---- bit sets ---- */

/* A new zeroed set of `words` words with bits[0..n) set; NULL when memory ran out. */
static uint64_t *bitset(const uint32_t *bits, uint32_t n, uint32_t words)
{
    uint64_t *set = calloc(words ? words : 1, sizeof *set);
    for (uint32_t k = 0; set && k < n; k++) set[bits[k] / 64] |= 1ull << (bits[k] % 64);
    return set;
}

/* The number of words bits[0..n) need. */
static uint32_t words_for(const uint32_t *bits, uint32_t n, uint32_t words)
{
    for (uint32_t k = 0; k < n; k++)
        if (bits[k] / 64 + 1 > words) words = bits[k] / 64 + 1;
    return words;
}

static bool same_set(const uint64_t *a, const uint64_t *b, uint32_t words)
{
    return memcmp(a, b, words * sizeof *a) == 0;
}

/* Do index i's bits match c? One column read per bit the query names. */
static inline bool matches(const host_collection *c, const host_signatures *sig, uint32_t i)
{
    for (uint32_t k = 0; k < c->words; k++) {
        for (uint64_t m = c->required[k]; m; m &= m - 1)
            if (!host_sig_has(sig, k * 64 + (uint32_t)__builtin_ctzll(m), i)) return false;
        for (uint64_t m = c->excluded[k]; m; m &= m - 1)
            if (host_sig_has(sig, k * 64 + (uint32_t)__builtin_ctzll(m), i)) return false;
    }
    return true;
}

/* ---- the table ---- */

host_collection *host_collections_get(const host_collections *cs, ecs_collection c)
{
    return c >= 1 && c <= cs->count ? cs->v[c - 1] : NULL;
}

static void collection_free(host_collection *c)
{
    if (!c) return;
    free(c->required);
    free(c->excluded);
    free(c->dense);
    free(c->pos);
    free(c);
}

ecs_status host_collections_find(host_collections *cs, const uint32_t *with, uint32_t nw,
                                 const uint32_t *without, uint32_t nwo, ecs_collection *out)
{
    uint32_t words = words_for(without, nwo, words_for(with, nw, 1));
    host_collection *c = calloc(1, sizeof *c);
    if (!c || !(c->required = bitset(with, nw, words)) ||
        !(c->excluded = bitset(without, nwo, words))) {
        collection_free(c);
        return ECS_ERR_NO_MEMORY;
    }
    c->words = words;
    for (uint32_t h = 0; h < cs->count; h++) { /* the same query gives the same one */
        const host_collection *o = cs->v[h];
        if (o->words == words && same_set(o->required, c->required, words) &&
            same_set(o->excluded, c->excluded, words)) {
            collection_free(c);
            *out = h + 1;
            return ECS_OK;
        }
    }
    if (cs->count == cs->cap) {
        uint32_t cap = cs->cap ? cs->cap * 2 : 8;
        host_collection **v = realloc(cs->v, cap * sizeof *v);
        if (!v) {
            collection_free(c);
            return ECS_ERR_NO_MEMORY;
        }
        cs->v = v;
        cs->cap = cap;
    }
    cs->v[cs->count++] = c;
    *out = cs->count;
    return ECS_OK;
}

/* Empty c (keeping its memory). */
static void clear(host_collection *c)
{
    for (uint32_t k = 0; k < c->count; k++) c->pos[ecs_entity_index(c->dense[k])] = 0;
    c->count = 0;
}

void host_collections_ref(host_collections *cs, host_signatures *sig, ecs_collection c)
{
    host_collection *col = host_collections_get(cs, c);
    if (!col || col->refs++ > 0) return;
    col->rebuild = true; /* dormant until now: its entities are unknown */
    if (cs->active++ == 0) sig->tracking = true;
}

void host_collections_unref(host_collections *cs, host_signatures *sig, ecs_collection c)
{
    host_collection *col = host_collections_get(cs, c);
    if (!col || col->refs == 0 || --col->refs > 0) return;
    clear(col);
    col->rebuild = false;
    if (--cs->active == 0) { /* nobody reads signature changes any more */
        sig->tracking = false;
        host_sig_clear_queue(sig);
    }
}

/* ---- keeping one collection ---- */

/* Room in c for `indices` indices and one more entity. -1 when memory ran out. */
static int reserve(host_collection *c, uint32_t indices)
{
    if (indices > c->pos_cap) {
        uint32_t cap = c->pos_cap ? c->pos_cap : 1024;
        while (cap < indices) cap *= 2; /* indices <= 2^22: no overflow */
        uint32_t *pos = realloc(c->pos, (size_t)cap * sizeof *pos);
        if (!pos) return -1;
        memset(pos + c->pos_cap, 0, (size_t)(cap - c->pos_cap) * sizeof *pos);
        c->pos = pos;
        c->pos_cap = cap;
    }
    if (c->count == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 64;
        ecs_entity *dense = realloc(c->dense, (size_t)cap * sizeof *dense);
        if (!dense) return -1;
        c->dense = dense;
        c->cap = cap;
    }
    return 0;
}

static void take_out(host_collection *c, uint32_t at)
{
    ecs_entity last = c->dense[--c->count];
    c->pos[ecs_entity_index(c->dense[at])] = 0;
    if (at == c->count) return;
    c->dense[at] = last;
    c->pos[ecs_entity_index(last)] = at + 1;
}

/* Make c agree with index i: in when its live holder matches, out otherwise. -1 when memory
 * ran out (c unchanged). */
static int update(host_collection *c, const host_signatures *sig, uint32_t i)
{
    ecs_entity e = host_sig_holder(sig, i);
    bool want = !ecs_entity_is_null(e) && matches(c, sig, i);
    uint32_t at = i < c->pos_cap ? c->pos[i] : 0;
    if (at && (!want || c->dense[at - 1].id != e.id)) { /* out, or an older owner's */
        take_out(c, at - 1);
        at = 0;
    }
    if (!want || at) return 0;
    if (reserve(c, sig->used) != 0) return -1;
    c->pos[i] = c->count + 1;
    c->dense[c->count++] = e;
    return 0;
}

/* Fill c from every signature. -1 when memory ran out (then c stays marked). */
static int rebuild(host_collection *c, const host_signatures *sig)
{
    clear(c);
    for (uint32_t i = 1; i < sig->used; i++)
        if (update(c, sig, i) != 0) return -1;
    c->rebuild = false;
    return 0;
}

/* ---- applying ---- */

/* Queue the indices of entities that are dead but still hold bits (unannounced). */
static void touch_unannounced(host_signatures *sig, const host_entities *em)
{
    uint32_t n = host_entities_unannounced(em);
    for (uint32_t k = 0; k < n; k++) {
        ecs_entity e = host_entities_unannounced_at(em, k);
        host_sig_touch(sig, ecs_entity_index(e)); /* no live holder: out of every collection */
    }
}

bool host_collections_apply(host_collections *cs, host_signatures *sig, const host_entities *em)
{
    if (cs->active == 0) return false;
    touch_unannounced(sig, em);
    bool work = sig->queued > 0 || sig->overflow;
    for (uint32_t h = 0; h < cs->count; h++) {
        host_collection *c = cs->v[h];
        if (!c->refs || !(c->rebuild || sig->overflow)) continue;
        work = true;
        if (rebuild(c, sig) != 0) {
            c->rebuild = true;
            host_error("collections", "out of memory keeping a collection: retried next frame");
        }
    }
    for (uint32_t h = 0; h < cs->count && sig->queued && !sig->overflow; h++) {
        host_collection *c = cs->v[h];
        if (!c->refs || c->rebuild) continue; /* rebuilt above, or retried next frame */
        for (uint32_t q = 0; q < sig->queued && !c->rebuild; q++) {
            if (update(c, sig, sig->queue[q]) == 0) continue;
            c->rebuild = true;
            host_error("collections", "out of memory keeping a collection: retried next frame");
        }
    }
    host_sig_clear_queue(sig);
    return work;
}

void host_collections_free(host_collections *cs)
{
    for (uint32_t h = 0; h < cs->count; h++) collection_free(cs->v[h]);
    free(cs->v);
    memset(cs, 0, sizeof *cs);
}
