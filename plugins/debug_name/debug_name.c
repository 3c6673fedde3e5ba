/* SPDX-License-Identifier: MIT */
/* debug_name.c: the debug_name plugin: at most one name per entity (the seed's
 * DebugNameComponentManager), as the manager "debug_name" (scene value: a string) and the
 * API "ecs.debug_name" v1 (debug_name_api.h), and the SDK's "ecs.names" v1 (ecs_describe.h),
 * through which the host's tools read names without knowing this plugin.
 *
 * Data: one ecs_soa (one allocation) holding, per instance i:
 *   entity[i]  the named entity          name[i]  the handle of its name's slot
 * and an ecs_entity_map (entity index -> instance). 8 bytes per name beside its slot.
 * Names live in slabs: slots of 12 to 264 bytes in steps of about a half (the smallest that
 * holds the name, its NUL and a 4-byte sequence number) cut from 64 KiB chunks, a freed slot
 * kept on its size's free list. A slot never moves while its name is set (get() hands out
 * its address), and a short name costs its slot, not a heap block with its headers. A
 * handle is the slot's chunk (chunk[handle >> 14]) and its offset in 4-byte units (the low
 * 14 bits): half a pointer.
 * The sequence number, stored in the slot after the NUL, says when the name was given (a
 * counter that only grows; renumbered in order when it would wrap): several entities may
 * share a name, and find() takes the highest one among the live holders, i.e. the entity
 * that most recently received the name and still has it.
 *
 * The name index is built at the first find() and kept from then on (a world that never
 * looks a name up does not pay 8 bytes per name for it, nor the time to keep it): a chained
 * hash table, bucket[b] the first instance whose name's FNV-1a hash & (bucket_count - 1)
 * == b, chain[i] the next instance in i's chain, ECS_SOA_NONE ending a chain.
 *
 * Invariants: map[index(entity[i])] == i + 1 for every instance i < count; every slot in use
 * holds one instance's name; when the index is built (bucket != NULL): every instance is in
 * exactly one chain, the one of its name's hash, bucket_count is a power of two >= count
 * (load factor <= 1, so chains are short) and chain_cap >= count. Removal unlinks the
 * instance, swaps the last instance into the hole and re-points the two links that named the
 * moved one (map slot; bucket head or chain predecessor).
 *
 * Views and collections: the manager offers its index (has, and the dense entity array)
 * and reports every name given to an entity without one, and every name removed, to the
 * host's signatures (component_added / component_removed), when the host offers them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug_name_api.h"
#include "ecs_describe.h"
#include "ecs_json.h"
#include "ecs_plugin.h"
#include "ecs_soa.h"

#define STATE_LAYOUT  3u         /* == state_version: checked when a state is adopted */
#define SLAB_CLASSES  10u        /* slot sizes: slab_size[] */
#define SLAB_CHUNK    65536u     /* bytes of a slab chunk */
#define SLOT_UNIT     4u         /* a handle's offset counts these */
#define OFFSET_BITS   14u        /* SLAB_CHUNK / SLOT_UNIT offsets */
#define SEQ_BYTES     4u         /* the sequence number after a name's NUL */
#define NO_BIT        UINT32_MAX /* no signatures: a host without them */
#define MIN_BUCKETS   64u
#define MANAGER_NAME  "debug_name"
#define NAME_EXPECTED "a name of 1-255 bytes of UTF-8 without control characters"
#ifndef SEQ_LIMIT /* a test build lowers it to make the renumbering happen */
#define SEQ_LIMIT UINT32_MAX
#endif

/* Slot sizes, multiples of SLOT_UNIT: the first holds a name of up to 7 bytes, the last
 * one of 255; each with its NUL and sequence. */
static const uint16_t slab_size[SLAB_CLASSES] = {12, 16, 24, 32, 48, 64, 96, 128, 192, 264};

enum { F_ENTITY, F_NAME, F_COUNT };

typedef struct dn_state {
    uint32_t layout; /* STATE_LAYOUT */
    /* The signature bit of "debug_name" (NO_BIT: not reported). Set by every load(), in
     * what was padding before `host` on 64-bit targets: the layout is unchanged there. */
    uint32_t bit;
    const ecs_host *host;
    ecs_soa soa;
    ecs_entity_map map;
    uint32_t *bucket; /* bucket_count heads, from host->alloc; NULL until the first find() */
    uint32_t *chain;  /* chain_cap links, from host->alloc, with bucket */
    uint32_t bucket_count, chain_cap;
    uint32_t next_seq;
    uint32_t chunk_count, chunk_cap;
    char **chunk; /* every slab chunk, from host->alloc; a handle's high bits index it */
    struct {
        uint32_t free;  /* 1 + the handle of a freed slot (which holds the next one's), or 0 */
        uint32_t chunk; /* the newest chunk of this size, cut from its start */
        uint32_t used;  /* bytes of it cut already; SLAB_CHUNK when there is none */
    } slab[SLAB_CLASSES];
} dn_state;

/* Adopting a state of an older build of the same STATE_LAYOUT reads `bit` from its padding
 * (zero from the memset), then load() sets it: the field must not move anything. */
_Static_assert(sizeof(void *) != 8 || offsetof(dn_state, host) == 8, "bit must fit the padding");

/* ---- field access ---- */

static ecs_entity *ents(const dn_state *s)
{
    return (ecs_entity *)s->soa.field[F_ENTITY];
}
static uint32_t *handles(const dn_state *s)
{
    return (uint32_t *)s->soa.field[F_NAME];
}

/* ---- names: validation and hashing ---- */

/* What is wrong with name as a debug name, or NULL when it is good: 1 to
 * ECS_DEBUG_NAME_MAX - 1 bytes of UTF-8, no control character (C0, DEL, C1). Its first
 * `from` bytes are known to be printable ASCII (and no more than the name has). */
static const char *name_problem_from(const char *name, size_t from, size_t *length)
{
    if (!name) return "the name is NULL";
    const unsigned char *p = (const unsigned char *)name;
    size_t i = from, n;
    for (; i < ECS_DEBUG_NAME_MAX && p[i]; i += n) {
        uint32_t cp = p[i];
        if (cp >= 0x20 && cp < 0x7F) { /* ASCII, printable: most names are only that */
            n = 1;
            continue;
        }
        const char *problem = !(n = ecs_utf8_decode(p + i, &cp)) ? "the name is not valid UTF-8"
                              : cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)
                                  ? "the name has a control character"
                                  : NULL;
        if (problem) /* its length is the first thing said */
            return strnlen(name, ECS_DEBUG_NAME_MAX) >= ECS_DEBUG_NAME_MAX
                       ? "the name is longer than 255 bytes"
                       : problem;
    }
    if (i == 0) return "the name is empty";
    if (i >= ECS_DEBUG_NAME_MAX) return "the name is longer than 255 bytes";
    if (length) *length = i;
    return NULL;
}

static const char *name_problem(const char *name, size_t *length)
{
    return name_problem_from(name, 0, length);
}

/* Are all eight bytes of x printable ASCII (0x20-0x7E)? No byte has its high bit, none is
 * below 0x20 and none is 0x7F (the bit tricks' "has less than" and "has zero" are exact
 * when no byte has its high bit, and a byte that has it fails anyway). */
static int printable8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t del = x ^ (ones * 0x7F);
    return !((x | ((x - ones * 0x20) & ~x) | ((del - ones) & ~del)) & highs);
}

/* name_problem of a name whose length n is known (a reader's string): the same answer,
 * its printable ASCII passed over eight bytes at a time (a byte at a time took a load of
 * 200,000 names 13 ns a name). */
static const char *name_problem_n(const char *name, size_t n, size_t *length)
{
    size_t i = 0, limit = n < ECS_DEBUG_NAME_MAX ? n : ECS_DEBUG_NAME_MAX;
    uint64_t x;
    while (name && i + 8 <= limit) {
        memcpy(&x, name + i, 8);
        if (!printable8(x)) break;
        i += 8;
    }
    return name_problem_from(name, i, length);
}

static uint32_t name_hash(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
    return h;
}

/* ---- slots ---- */

/* The slab class of a name of len bytes: the smallest slot for it, its NUL and sequence. */
static unsigned slab_class(size_t len)
{
    unsigned k = 0;
    while (slab_size[k] < len + 1 + SEQ_BYTES) k++;
    return k; /* < SLAB_CLASSES: names are at most 255 bytes */
}

/* The slot of handle h. */
static char *slot_at(const dn_state *s, uint32_t h)
{
    return s->chunk[h >> OFFSET_BITS] + (size_t)(h & ((1u << OFFSET_BITS) - 1)) * SLOT_UNIT;
}

/* The name of instance i. */
static char *name_of(const dn_state *s, uint32_t i)
{
    return slot_at(s, handles(s)[i]);
}

/* The sequence number stored after a name of len bytes. */
static uint32_t seq_of(const char *name, size_t len)
{
    uint32_t q;
    memcpy(&q, name + len + 1, sizeof q);
    return q;
}

static void seq_put(char *name, size_t len, uint32_t q)
{
    memcpy(name + len + 1, &q, sizeof q);
}

/* The handle of a slot for a name of len bytes into *h. ECS_ERR_NO_MEMORY changes nothing. */
static ecs_status slot_take(dn_state *s, size_t len, uint32_t *h)
{
    unsigned k = slab_class(len);
    uint32_t size = slab_size[k];
    if (s->slab[k].free) {
        *h = s->slab[k].free - 1;
        memcpy(&s->slab[k].free, slot_at(s, *h), sizeof s->slab[k].free);
        return ECS_OK;
    }
    if (s->slab[k].used + size > SLAB_CHUNK) { /* a new chunk */
        if (s->chunk_count == s->chunk_cap) {
            uint32_t cap = s->chunk_cap ? s->chunk_cap * 2 : 16;
            if (cap > 1u << (32 - OFFSET_BITS)) return ECS_ERR_NO_MEMORY; /* 16 GiB of names */
            char **v = (char **)s->host->realloc(s->host, s->chunk, cap * sizeof *v);
            if (!v) return ECS_ERR_NO_MEMORY;
            s->chunk = v;
            s->chunk_cap = cap;
        }
        char *chunk = (char *)s->host->alloc(s->host, SLAB_CHUNK);
        if (!chunk) return ECS_ERR_NO_MEMORY;
        memset(chunk, 0, SLAB_CHUNK); /* a snapshot copies it whole: the same bytes each time */
        s->chunk[s->chunk_count] = chunk;
        s->slab[k].chunk = s->chunk_count++;
        s->slab[k].used = 0;
    }
    *h = s->slab[k].chunk << OFFSET_BITS | s->slab[k].used / SLOT_UNIT;
    s->slab[k].used += size;
    return ECS_OK;
}

/* Give slot h, holding a name of len bytes, back to its free list. */
static void slot_give(dn_state *s, uint32_t h, size_t len)
{
    unsigned k = slab_class(len);
    memcpy(slot_at(s, h), &s->slab[k].free, sizeof s->slab[k].free);
    s->slab[k].free = h + 1;
}

/* Free every chunk and the chunk table. */
static void slabs_free(dn_state *s, const ecs_host *h)
{
    for (uint32_t c = 0; c < s->chunk_count; c++) h->free(h, s->chunk[c]);
    if (s->chunk) h->free(h, s->chunk);
}

/* A copy of name (len bytes) and its sequence number q in a new slot, its handle into *h.
 * ECS_ERR_NO_MEMORY changes nothing. */
static ecs_status copy_name(dn_state *s, const char *name, size_t len, uint32_t q, uint32_t *h)
{
    ecs_status st = slot_take(s, len, h);
    if (st != ECS_OK) return st;
    char *slot = slot_at(s, *h);
    memcpy(slot, name, len + 1);
    seq_put(slot, len, q);
    return ECS_OK;
}

/* Number the names 0..count-1 in the order of their sequence numbers, so that the counter
 * can go on without wrapping (after SEQ_LIMIT names given). ECS_ERR_NO_MEMORY changes
 * nothing. */
static int seq_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static ecs_status renumber(dn_state *s)
{
    uint32_t n = s->soa.count;
    uint64_t *order = (uint64_t *)s->host->alloc(s->host, (n ? n : 1) * sizeof *order);
    if (!order) return ECS_ERR_NO_MEMORY;
    for (uint32_t i = 0; i < n; i++) { /* sequence in the high half: sorted by it */
        const char *name = name_of(s, i);
        order[i] = (uint64_t)seq_of(name, strlen(name)) << 32 | i;
    }
    qsort(order, n, sizeof *order, seq_order);
    for (uint32_t r = 0; r < n; r++) {
        char *name = name_of(s, (uint32_t)order[r]);
        seq_put(name, strlen(name), r);
    }
    s->host->free(s->host, order);
    s->next_seq = n;
    return ECS_OK;
}

/* ---- the name index ---- */

/* The link (bucket head or chain successor) that holds instance i in the chain of hash
 * h. i must be in that chain. */
static uint32_t *link_to(dn_state *s, uint32_t h, uint32_t i)
{
    uint32_t *link = &s->bucket[h & (s->bucket_count - 1)];
    while (*link != i) link = &s->chain[*link];
    return link;
}

static void chain_insert(dn_state *s, uint32_t i)
{
    uint32_t *head = &s->bucket[name_hash(name_of(s, i)) & (s->bucket_count - 1)];
    s->chain[i] = *head;
    *head = i;
}

static void chain_unlink(dn_state *s, uint32_t i)
{
    *link_to(s, name_hash(name_of(s, i)), i) = s->chain[i];
}

/* Make the index hold at least `need` instances at load factor <= 1: the chains when they
 * grow, the buckets rebuilt into a new array when they double. ECS_ERR_NO_MEMORY leaves
 * everything as it was. */
static ecs_status index_reserve(dn_state *s, uint32_t need)
{
    if (need > s->chain_cap) {
        uint32_t cap = s->chain_cap ? s->chain_cap : MIN_BUCKETS;
        while (cap < need) {
            if (cap > UINT32_MAX / 2) return ECS_ERR_NO_MEMORY;
            cap *= 2;
        }
        uint32_t *chain = (uint32_t *)s->host->realloc(s->host, s->chain, cap * sizeof *chain);
        if (!chain) return ECS_ERR_NO_MEMORY;
        s->chain = chain;
        s->chain_cap = cap;
    }
    if (need <= s->bucket_count) return ECS_OK;
    uint32_t count = s->bucket_count ? s->bucket_count : MIN_BUCKETS;
    while (count < need) {
        if (count > UINT32_MAX / 2) return ECS_ERR_NO_MEMORY;
        count *= 2;
    }
    uint32_t *bucket = (uint32_t *)s->host->alloc(s->host, (size_t)count * sizeof *bucket);
    if (!bucket) return ECS_ERR_NO_MEMORY;
    memset(bucket, 0xFF, (size_t)count * sizeof *bucket); /* every head ECS_SOA_NONE */
    if (s->bucket) s->host->free(s->host, s->bucket);
    s->bucket = bucket;
    s->bucket_count = count;
    for (uint32_t i = 0; i < s->soa.count; i++) chain_insert(s, i);
    return ECS_OK;
}

/* Build the index (the first find()). ECS_ERR_NO_MEMORY leaves it unbuilt. */
static ecs_status index_build(dn_state *s)
{
    ecs_status st = index_reserve(s, s->soa.count ? s->soa.count : 1);
    if (st == ECS_OK || !s->chain) return st;
    s->host->free(s->host, s->chain); /* the chains grew, the buckets could not be had */
    s->chain = NULL;
    s->chain_cap = 0;
    return st;
}

/* ---- instances ---- */

/* Tell the host that e gained (on) or lost its name, for its signatures. */
static void report(const dn_state *s, ecs_entity e, bool on)
{
    if (s->bit == NO_BIT) return;
    if (on)
        s->host->component_added(s->host, s->bit, e);
    else
        s->host->component_removed(s->host, s->bit, e);
}

/* e's instance (e alive and named), or ECS_SOA_NONE. */
static uint32_t instance_of(const dn_state *s, ecs_entity e)
{
    if (!ecs_alive(s->host, e)) return ECS_SOA_NONE;
    return ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
}

/* Remove instance i: unlink it, free its name, move the last instance into its place. */
static void remove_instance(dn_state *s, uint32_t i)
{
    if (s->bucket) chain_unlink(s, i);
    slot_give(s, handles(s)[i], strlen(name_of(s, i)));
    report(s, ents(s)[i], false);
    ecs_entity_map_set(&s->map, ents(s)[i], ECS_SOA_NONE);
    uint32_t moved = ecs_soa_remove(&s->soa, i);
    if (moved == ECS_SOA_NONE) return; /* i was the last one */
    if (s->bucket) {                   /* its chain still names the old instance */
        s->chain[i] = s->chain[moved];
        *link_to(s, name_hash(name_of(s, i)), moved) = i;
    }
    ecs_entity_map_set(&s->map, ents(s)[i], i); /* an existing slot: cannot fail */
}

/* A new instance for e (its name not set, not chained yet). ECS_SOA_NONE when memory ran
 * out (then nothing changed). */
static uint32_t add_instance(dn_state *s, ecs_entity e)
{
    if (s->bucket && index_reserve(s, s->soa.count + 1) != ECS_OK) return ECS_SOA_NONE;
    uint32_t i = ecs_soa_push(&s->soa);
    if (i == ECS_SOA_NONE) return ECS_SOA_NONE;
    if (ecs_entity_map_set(&s->map, e, i) != ECS_OK) {
        s->soa.count--; /* the pushed instance was the last one */
        return ECS_SOA_NONE;
    }
    ents(s)[i] = e;
    report(s, e, true);
    return i;
}

/* Log a refused call and return its status. */
static ecs_status refuse(const dn_state *s, ecs_status st, const char *call, ecs_entity e,
                         const char *why)
{
    s->host->log(s->host, ECS_LOG_ERROR, "%s: entity %u.%u: %s (%s)", call, ecs_entity_index(e),
                 ecs_entity_generation(e), why, ecs_status_text(st));
    return st;
}

/* ---- the API ---- */

/* Name e, replacing its name. ECS_ERR_STALE_ENTITY (dead e), ECS_ERR_INVALID_ARGUMENT
 * (NULL name), ECS_ERR_BAD_VALUE (bad name), ECS_ERR_NO_MEMORY; on error nothing changes
 * and one line is logged. */
static ecs_status set_checked(dn_state *s, ecs_entity e, const char *name, size_t len);

static ecs_status dn_set(void *self, ecs_entity e, const char *name)
{
    dn_state *s = (dn_state *)self;
    if (!ecs_alive(s->host, e)) return refuse(s, ECS_ERR_STALE_ENTITY, "set", e, "not alive");
    size_t len = 0;
    const char *problem = name_problem(name, &len);
    if (problem)
        return refuse(s, name ? ECS_ERR_BAD_VALUE : ECS_ERR_INVALID_ARGUMENT, "set", e, problem);
    return set_checked(s, e, name, len);
}

/* dn_set of a live e and a good name of len bytes. */
static ecs_status set_checked(dn_state *s, ecs_entity e, const char *name, size_t len)
{
    uint32_t copy;
    if ((s->next_seq >= SEQ_LIMIT && renumber(s) != ECS_OK) ||
        copy_name(s, name, len, s->next_seq, &copy) != ECS_OK)
        return refuse(s, ECS_ERR_NO_MEMORY, "set", e, "out of memory");
    uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (i != ECS_SOA_NONE) { /* replacing: leave the old name's chain */
        if (s->bucket) chain_unlink(s, i);
        slot_give(s, handles(s)[i], strlen(name_of(s, i)));
    } else if ((i = add_instance(s, e)) == ECS_SOA_NONE) {
        slot_give(s, copy, len);
        return refuse(s, ECS_ERR_NO_MEMORY, "set", e, "out of memory");
    }
    handles(s)[i] = copy;
    s->next_seq++;
    if (s->bucket) chain_insert(s, i);
    return ECS_OK;
}

/* e's name, or NULL (no name, dead e). Valid until e's name changes or e is destroyed. */
static const char *dn_get(void *self, ecs_entity e)
{
    dn_state *s = (dn_state *)self;
    uint32_t i = instance_of(s, e);
    return i == ECS_SOA_NONE ? NULL : name_of(s, i);
}

/* Remove e's name. ECS_ERR_STALE_ENTITY for a dead e, ECS_ERR_NOT_FOUND without one. */
static ecs_status dn_clear(void *self, ecs_entity e)
{
    dn_state *s = (dn_state *)self;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (i == ECS_SOA_NONE) return ECS_ERR_NOT_FOUND;
    remove_instance(s, i);
    return ECS_OK;
}

/* Is instance i a live holder of name (len bytes) given after *best_seq (or the first one
 * found: *best null)? Then it becomes *best. */
static void consider(const dn_state *s, uint32_t i, const char *name, size_t len, ecs_entity *best,
                     uint32_t *best_seq)
{
    const char *own = name_of(s, i);
    if (own[0] != name[0] || strcmp(own, name) != 0) return;
    if (!ecs_alive(s->host, ents(s)[i])) return; /* destroyed, not yet announced */
    uint32_t q = seq_of(own, len);
    if (ecs_entity_is_null(*best) || q > *best_seq) *best = ents(s)[i], *best_seq = q;
}

/* The live entity that most recently received name and still has it; the null entity
 * when there is none (also for a NULL or invalid name). One chain walk: O(1) expected; the
 * first call builds the index (O(names)), and without memory for it every call is a scan. */
static ecs_entity dn_find(void *self, const char *name)
{
    dn_state *s = (dn_state *)self;
    ecs_entity best = ecs_entity_null();
    uint32_t best_seq = 0;
    if (!name || !name[0] || s->soa.count == 0) return best;
    size_t len = strlen(name);
    if (!s->bucket && index_build(s) != ECS_OK) {
        for (uint32_t i = 0; i < s->soa.count; i++) consider(s, i, name, len, &best, &best_seq);
        return best;
    }
    uint32_t h = name_hash(name);
    for (uint32_t i = s->bucket[h & (s->bucket_count - 1)]; i != ECS_SOA_NONE; i = s->chain[i])
        consider(s, i, name, len, &best, &best_seq);
    return best;
}

/* Write "name#index.gen" ("#index.gen" without a name) into buf, truncated to size
 * bytes (always terminated when size > 0). Returns buf. */
static const char *dn_format(void *self, ecs_entity e, char *buf, size_t size)
{
    if (!buf || size == 0) return buf;
    const char *name = dn_get(self, e);
    snprintf(buf, size, "%s#%u.%u", name ? name : "", ecs_entity_index(e),
             ecs_entity_generation(e));
    return buf;
}

static uint32_t dn_count(void *self)
{
    return ((const dn_state *)self)->soa.count;
}

/* [main-thread] Does e have a name? For views. */
static bool dn_has(void *self, ecs_entity e)
{
    return instance_of((const dn_state *)self, e) != ECS_SOA_NONE;
}

/* [main-thread] The named entities, each once: the dense array, valid until a name is
 * given or removed. For views. */
static uint32_t dn_entities(void *self, const ecs_entity **out)
{
    const dn_state *s = (const dn_state *)self;
    *out = ents(s);
    return s->soa.count;
}

/* ---- the manager ---- */

/* Forget the names of destroyed entities (their ids are already dead). */
static void dn_entities_destroyed(void *state, const ecs_entity *list, uint32_t count)
{
    dn_state *s = (dn_state *)state;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, list[k]);
        if (i != ECS_SOA_NONE) remove_instance(s, i);
    }
}

/* e's name as a JSON string through w (nothing when e has none). ECS_ERR_INVALID_ARGUMENT
 * for a NULL w, ECS_ERR_STALE_ENTITY for a dead e. */
static ecs_status dn_write(void *state, ecs_entity e, ecs_json_writer *w)
{
    dn_state *s = (dn_state *)state;
    if (!w) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (i != ECS_SOA_NONE) w->string(w, name_of(s, i));
    return ECS_OK;
}

/* Name e from the scene value r stands before: a JSON string. On error e is left without a
 * name; a bad value fails the reader (the host adds file, line, column and JSON path) with
 * what was expected: ECS_ERR_BAD_VALUE, ECS_ERR_STALE_ENTITY, ECS_ERR_INVALID_ARGUMENT (NULL
 * r), ECS_ERR_NO_MEMORY. */
static ecs_status dn_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    dn_state *s = (dn_state *)state;
    const char *call = "read_component", *name = NULL, *problem = "";
    size_t len = 0;
    if (!ecs_alive(s->host, e)) return refuse(s, ECS_ERR_STALE_ENTITY, call, e, "not alive");
    if (!r) return refuse(s, ECS_ERR_INVALID_ARGUMENT, call, e, "the reader is NULL");
    ecs_json_type type = r->peek(r);
    if (type != ECS_JSON_STRING)
        r->skip(r); /* the value is the one read last: the error points at it */
    else if (r->string(r, &name, &len))
        problem = name_problem_n(name, len, &len); /* valid until the next call on r: copied */
    ecs_status st = ECS_ERR_BAD_VALUE;
    if (problem)
        r->error(r, "expected " NAME_EXPECTED ", found %s%s%s", ecs_json_type_text(type),
                 *problem ? ": " : "", problem);
    else
        st = set_checked(s, e, name, len);
    if (st != ECS_OK) dn_clear(s, e); /* the contract: no component after an error */
    return st;
}

/* ---- plugin life ---- */

/* Point every stored host pointer at h (a reload hands the state to a new table). */
static void bind_host(dn_state *s, const ecs_host *h)
{
    s->host = h;
    s->soa.host = h;
    s->map.host = h;
}

static void state_free(dn_state *s, const ecs_host *h)
{
    bind_host(s, h);
    slabs_free(s, h);
    ecs_soa_free(&s->soa);
    ecs_entity_map_free(&s->map);
    if (s->bucket) h->free(h, s->bucket);
    if (s->chain) h->free(h, s->chain);
    h->free(h, s);
}

/* A new, empty state; NULL when memory ran out. */
static dn_state *state_new(const ecs_host *h)
{
    dn_state *s = (dn_state *)h->alloc(h, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->layout = STATE_LAYOUT;
    s->bit = NO_BIT;
    s->host = h;
    for (unsigned k = 0; k < SLAB_CLASSES; k++) s->slab[k].used = SLAB_CHUNK; /* no chunk */
    const size_t sizes[F_COUNT] = {sizeof(ecs_entity), sizeof(uint32_t)};
    ecs_soa_init(&s->soa, h, F_COUNT, sizes);
    ecs_entity_map_init(&s->map, h);
    return s;
}

/* Offer the index for views and find the signature bit (NO_BIT without them) into *bit. */
static ecs_status offer_index(const ecs_host *h, dn_state *s, uint32_t *bit)
{
    *bit = NO_BIT;
    if (!ecs_host_has_queries(h)) return ECS_OK;
    ecs_manager_index ix = {.struct_size = sizeof ix,
                            .state = s,
                            .has = dn_has,
                            .entities = dn_entities,
                            .signature = true}; /* it reports its bit */
    ecs_status st = h->manager_index(h, MANAGER_NAME, &ix);
    return st == ECS_OK ? h->signature_bit(h, MANAGER_NAME, bit) : st;
}

/* remove_component: e's name gone (none: nothing to do). */
static ecs_status dn_remove(void *self, ecs_entity e)
{
    ecs_status st = dn_clear(self, e);
    return st == ECS_ERR_NOT_FOUND ? ECS_OK : st;
}

/* A scene load's hint: room for its names at once. */
static void dn_reserve(void *self, uint32_t count)
{
    (void)ecs_soa_reserve_more(&((dn_state *)self)->soa, count); /* else: grows as it reads */
}

/* ---- snapshots ----
 * The name chunks as they are (a handle is a chunk number and an offset: it stays right in
 * chunks copied whole), the slab cursors and sequence counter, then the arrays. The map is
 * rebuilt from the entity array; the name index is dropped and built again at the next
 * find(), as after a load. */

typedef struct dn_snap_head {
    uint32_t chunk_count, next_seq;
    uint32_t slab[SLAB_CLASSES][3]; /* free, chunk, used */
} dn_snap_head;

/* Bytes of chunk c a snapshot keeps: all of a full one, what its class cut of the one it
 * cuts from now (the rest was never used). */
static uint32_t chunk_bytes(const dn_state *s, uint32_t c)
{
    for (unsigned k = 0; k < SLAB_CLASSES; k++)
        if (s->slab[k].used < SLAB_CHUNK && s->slab[k].chunk == c) return s->slab[k].used;
    return SLAB_CHUNK;
}

static size_t dn_snapshot_size(void *self)
{
    dn_state *s = (dn_state *)self;
    size_t n = sizeof(dn_snap_head) + ecs_soa_snapshot_size(&s->soa);
    for (uint32_t c = 0; c < s->chunk_count; c++) n += 4u + chunk_bytes(s, c);
    return n;
}

static ecs_status dn_snapshot_write(void *self, void *out, size_t size)
{
    dn_state *s = (dn_state *)self;
    if (size < dn_snapshot_size(self)) return ECS_ERR_INVALID_ARGUMENT;
    dn_snap_head h = {s->chunk_count, s->next_seq, {{0}}};
    for (unsigned k = 0; k < SLAB_CLASSES; k++)
        h.slab[k][0] = s->slab[k].free, h.slab[k][1] = s->slab[k].chunk,
        h.slab[k][2] = s->slab[k].used;
    char *p = (char *)out;
    memcpy(p, &h, sizeof h), p += sizeof h;
    for (uint32_t c = 0; c < s->chunk_count; c++, p += 4) { /* each chunk's length first */
        uint32_t n = chunk_bytes(s, c);
        memcpy(p, &n, 4);
    }
    for (uint32_t c = 0; c < s->chunk_count; c++) {
        uint32_t n = chunk_bytes(s, c);
        memcpy(p, s->chunk[c], n), p += n;
    }
    return ecs_soa_snapshot_put(&s->soa, p, size - (size_t)(p - (char *)out));
}

/* The bytes of the chunks in a snapshot whose lengths are at p (n of them, left bytes
 * there), or SIZE_MAX when they do not fit or a length is over a chunk. */
static size_t chunks_size(const char *p, uint32_t n, size_t left)
{
    if ((size_t)n > left / 4) return SIZE_MAX;
    size_t total = (size_t)n * 4;
    for (uint32_t c = 0; c < n; c++) {
        uint32_t len;
        memcpy(&len, p + 4 * c, 4);
        if (len > SLAB_CHUNK) return SIZE_MAX;
        total += len;
    }
    return total <= left ? total : SIZE_MAX;
}

/* Exactly n chunks (their bytes undefined): surplus ones freed, missing ones allocated.
 * ECS_ERR_NO_MEMORY leaves at most n. */
static ecs_status chunks_resize(dn_state *s, uint32_t n)
{
    while (s->chunk_count > n) s->host->free(s->host, s->chunk[--s->chunk_count]);
    if (n > s->chunk_cap) {
        char **v = (char **)s->host->realloc(s->host, s->chunk, n * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        s->chunk = v, s->chunk_cap = n;
    }
    for (; s->chunk_count < n; s->chunk_count++)
        if (!(s->chunk[s->chunk_count] = (char *)s->host->alloc(s->host, SLAB_CHUNK)))
            return ECS_ERR_NO_MEMORY;
    return ECS_OK;
}

/* Is h a slot inside the chunks whose name ends (NUL) inside the slot's largest size? */
static bool handle_sane(const dn_state *s, uint32_t h)
{
    size_t off = (size_t)(h & ((1u << OFFSET_BITS) - 1)) * SLOT_UNIT;
    if (h >> OFFSET_BITS >= s->chunk_count || off + slab_size[0] > SLAB_CHUNK) return false;
    size_t room = SLAB_CHUNK - off < 256 ? SLAB_CHUNK - off : 256;
    return memchr(slot_at(s, h), '\0', room) != NULL;
}

/* Do the cursors, the free lists and every instance's handle stay inside the chunks read?
 * Bytes from a file may have been made by anything. */
static bool slabs_sane(const dn_state *s)
{
    for (unsigned k = 0; k < SLAB_CLASSES; k++) {
        if (s->slab[k].used > SLAB_CHUNK ||
            (s->slab[k].used < SLAB_CHUNK && s->slab[k].chunk >= s->chunk_count))
            return false;
        uint32_t f = s->slab[k].free, steps = 0, limit = s->chunk_count * (SLAB_CHUNK / 12u);
        for (; f; steps++) { /* each link is a slot's first word: the next free one + 1 */
            size_t off = (size_t)((f - 1) & ((1u << OFFSET_BITS) - 1)) * SLOT_UNIT;
            if (steps > limit || (f - 1) >> OFFSET_BITS >= s->chunk_count || off + 4 > SLAB_CHUNK)
                return false;
            memcpy(&f, slot_at(s, f - 1), sizeof f);
        }
    }
    for (uint32_t i = 0; i < s->soa.count; i++)
        if (!handle_sane(s, handles(s)[i])) return false;
    return true;
}

static ecs_status dn_snapshot_read(void *self, const void *in, size_t size)
{
    dn_state *s = (dn_state *)self;
    dn_snap_head h;
    const char *p = (const char *)in;
    if (s->bucket) s->host->free(s->host, s->bucket);
    if (s->chain) s->host->free(s->host, s->chain);
    s->bucket = s->chain = NULL, s->bucket_count = s->chain_cap = 0;
    if (size >= sizeof h) memcpy(&h, p, sizeof h);
    size_t chunks =
        size >= sizeof h ? chunks_size(p + sizeof h, h.chunk_count, size - sizeof h) : SIZE_MAX;
    if (chunks == SIZE_MAX || chunks_resize(s, h.chunk_count) != ECS_OK)
        return ecs_soa_snapshot_take(&s->soa, &s->map, F_ENTITY, NULL, 0); /* holds nothing */
    p += sizeof h;
    const char *bytes = p + (size_t)h.chunk_count * 4;
    for (uint32_t c = 0; c < h.chunk_count; c++) {
        uint32_t len;
        memcpy(&len, p + 4 * c, 4);
        memcpy(s->chunk[c], bytes, len), bytes += len;
        memset(s->chunk[c] + len, 0, SLAB_CHUNK - len); /* never used: the same bytes each time */
    }
    p = bytes;
    for (unsigned k = 0; k < SLAB_CLASSES; k++)
        s->slab[k].free = h.slab[k][0], s->slab[k].chunk = h.slab[k][1],
        s->slab[k].used = h.slab[k][2];
    s->next_seq = h.next_seq;
    ecs_status st = ecs_soa_snapshot_take(&s->soa, &s->map, F_ENTITY, p, size - sizeof h - chunks);
    if (st != ECS_OK || slabs_sane(s)) return st;
    for (unsigned k = 0; k < SLAB_CLASSES; k++) /* no slot of these chunks is used again */
        s->slab[k].free = 0, s->slab[k].used = SLAB_CHUNK;
    return ecs_soa_snapshot_take(&s->soa, &s->map, F_ENTITY, NULL, 0); /* hold nothing */
}

/* Register the manager and publish the APIs for state s: its own, and "ecs.names" (the
 * SDK's, ecs_describe.h) for tools that know no plugin. */
static ecs_status register_all(const ecs_host *h, dn_state *s)
{
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = MANAGER_NAME,
                          .state = s,
                          .entities_destroyed = dn_entities_destroyed,
                          .count = dn_count,
                          .write_component = dn_write,
                          .read_component = dn_read,
                          .reserve = dn_reserve,
                          .remove_component = dn_remove,
                          .snapshot_version = 2u, /* 2: each chunk as far as it is used */
                          .snapshot_size = dn_snapshot_size,
                          .snapshot_write = dn_snapshot_write,
                          .snapshot_read = dn_snapshot_read};
    ecs_debug_name_api api = {sizeof api, s,       dn_set,    dn_get,
                              dn_clear,   dn_find, dn_format, dn_count};
    ecs_names_api names = {sizeof names, s, dn_get};
    ecs_status st = h->register_manager(h, &m);
    if (st == ECS_OK)
        st = h->api_publish(h, ECS_DEBUG_NAME_API_NAME, ECS_DEBUG_NAME_API_VERSION, &api,
                            sizeof api);
    if (st == ECS_OK)
        st = h->api_publish(h, ECS_NAMES_API_NAME, ECS_NAMES_API_VERSION, &names, sizeof names);
    return st;
}

/* [main-thread] Make (or adopt) the state, register "debug_name", publish the API. On
 * error a new state is freed; an adopted one is left untouched for the old version. */
/* Two-phase adoption (ecs_on_commit): a state handed over by a reload becomes this build's
 * only once the host accepted it; a build refused after its load() leaves the running
 * build's pointers in it. */
static void dn_commit(const ecs_host *h, void *arg, bool accepted)
{
    dn_state *s = (dn_state *)arg;
    uint32_t bit = NO_BIT;
    if (!accepted) return;
    if (ecs_host_has_queries(h) && h->signature_bit(h, MANAGER_NAME, &bit) != ECS_OK) bit = NO_BIT;
    bind_host(s, h);
    s->bit = bit;
}

static ecs_status dn_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    dn_state *s = (dn_state *)ecs_load_args_previous_state(args);
    bool adopted = s != NULL;
    if (adopted && s->layout != STATE_LAYOUT) {
        h->log(h, ECS_LOG_ERROR, "load: the previous state has layout %u, expected %u", s->layout,
               STATE_LAYOUT);
        return ECS_ERR_ABI;
    }
    if (!adopted && !(s = state_new(h))) return ECS_ERR_NO_MEMORY;
    uint32_t bit = NO_BIT;
    ecs_status st = register_all(h, s);
    if (st == ECS_OK) st = offer_index(h, s, &bit);
    if (st != ECS_OK) {
        if (!adopted) state_free(s, h);
        return st;
    }
    *state = s;
    if (adopted) return ecs_on_commit(h, dn_commit, s); /* not before the host accepts */
    s->bit = bit;
    return ECS_OK;
}

/* [main-thread] Free everything, except for a reload that keeps the state. */
static void dn_unload(const ecs_host *h, void *state, ecs_unload_reason why)
{
    if (!state || why == ECS_UNLOAD_RELOAD_KEEP_STATE) return; /* the next version adopts it */
    state_free((dn_state *)state, h);
}

static const char *const no_dependencies[] = {NULL};

static const ecs_plugin_desc debug_name_plugin = {
    ECS_PLUGIN_DESC_HEADER,
    "debug_name",
    "1.0.0",
    STATE_LAYOUT,
    no_dependencies,
    dn_load,
    dn_unload,
    ECS_STATE_LAYOUT(dn_state, layout, bit, host, soa, map, bucket, chain, bucket_count, chain_cap,
                     next_seq, chunk_count, chunk_cap, chunk, slab),
};

ECS_PLUGIN_EXPORT(debug_name_plugin)
