/* SPDX-License-Identifier: MIT */
/* entity.c: the host's EntityManager: generation bytes, alive keys, a FIFO ring of freed
 * indices.
 *
 * Invariants: key[i] is generation[i] + 256 exactly while index i belongs to a live entity,
 * else 0 (key[0] is always 0, so the null entity is never alive): e is alive iff
 * key[index(e)] == generation(e) + 256, one load, published for the inline ecs_alive().
 * Every index in the ring is dead and appears there once: destroy refuses an id whose key
 * does not match, which also covers an id never handed out and a stale id whose generation
 * byte wrapped around to its value while the index was free. The cursors
 * are free-running uint32_t counters, head <= reusable_end <= announced_end <= tail, and tail -
 * head < 2^22 because at most 2^22 - 1 indices exist; the ring has 2^22 slots.
 */
#include "entity.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"

#define INDEX_COUNT (1u << ECS_ENTITY_INDEX_BITS)
#define RING_MASK   (INDEX_COUNT - 1u)
/* The alive keys and 64 bytes more: a view reads each key as the low half of a 32-bit word
 * (view.c, eight at a time), which for the last index reaches 2 bytes past the keys. */
#define KEY_BYTES ((size_t)INDEX_COUNT * sizeof(uint16_t) + 64u)

struct host_entities {
    uint8_t *generation; /* INDEX_COUNT bytes, reserved once */
    uint16_t *key;       /* INDEX_COUNT alive keys: generation + 256 while live, else 0 */
    uint32_t *ring;      /* INDEX_COUNT freed indices, reserved once */
    uint32_t head, reusable_end, announced_end, tail;
    uint32_t next_fresh; /* next index never handed out yet; 1..INDEX_COUNT */
    uint32_t live;
};

/* The keys and the ring are written front to back as indices are handed out and freed:
 * huge pages (host_mem_reserve), one fault per 2 MiB. Not the generations: their first
 * byte is written at once (index 0 is never alive), which would commit 2 MiB for nothing
 * in a small world, and destroys write them less often than creates write keys. */
host_entities *host_entities_new(void)
{
    host_entities *em = calloc(1, sizeof *em);
    if (!em) return NULL;
    em->generation = host_mem_reserve(INDEX_COUNT, 0);
    em->ring = host_mem_reserve((size_t)INDEX_COUNT * sizeof(uint32_t), 1);
    em->key = host_mem_reserve(KEY_BYTES, 1);
    if (!em->generation || !em->ring || !em->key) goto error;
    em->generation[0] = 0xFF; /* index 0 is never handed out: null is never alive */
    em->next_fresh = 1;
    return em;
error:
    host_entities_free(em);
    return NULL;
}

void host_entities_free(host_entities *em)
{
    if (!em) return;
    host_mem_unreserve(em->generation, INDEX_COUNT);
    host_mem_unreserve(em->ring, (size_t)INDEX_COUNT * sizeof(uint32_t));
    host_mem_unreserve(em->key, KEY_BYTES);
    free(em);
}

static inline bool is_live(const host_entities *em, uint32_t i)
{
    return em->key[i] != 0;
}

const uint8_t *host_entities_generations(const host_entities *em)
{
    return em->generation;
}

const uint16_t *host_entities_alive_keys(const host_entities *em)
{
    return em->key;
}

bool host_entity_alive(const host_entities *em, ecs_entity e)
{
    return ecs_alive_exact_in(em->key, e);
}

bool host_entities_next_live(const host_entities *em, uint32_t from, ecs_entity *out)
{
    uint32_t end = em->next_fresh; /* no index at or above it was ever handed out */
    for (uint32_t i = from; i < end;) {
        if ((i & 3) == 0 && i + 4 <= end) { /* four keys at a time */
            uint64_t word;
            memcpy(&word, em->key + i, sizeof word);
            if (!word) {
                i += 4;
                continue;
            }
        }
        if (is_live(em, i)) {
            *out = ecs_entity_make(i, em->generation[i]);
            return true;
        }
        i++;
    }
    return false;
}

uint32_t host_entities_skip_live(const host_entities *em, uint32_t from, uint64_t n)
{
    uint32_t end = em->next_fresh, i = from;
    while (n && i < end) {
        if ((i & 3) == 0 && i + 4 <= end) { /* four keys at a time: count the live ones */
            uint64_t word;
            memcpy(&word, em->key + i, sizeof word);
            unsigned live = ((word & 0xFFFFu) != 0) + ((word >> 16 & 0xFFFFu) != 0) +
                            ((word >> 32 & 0xFFFFu) != 0) + ((word >> 48) != 0);
            if (live <= n) {
                n -= live;
                i += 4;
                continue;
            }
        }
        n -= is_live(em, i);
        i++;
    }
    return i;
}

uint32_t host_entities_live(const host_entities *em)
{
    return em->live;
}

/* How many indices create can still hand out, queued ones included. */
static uint32_t available(const host_entities *em)
{
    return (em->reusable_end - em->head) + (INDEX_COUNT - em->next_fresh);
}

/* Hand out the queued index at the head (the caller checked there is one). */
static inline ecs_entity pop_queued(host_entities *em)
{
    uint32_t idx = em->ring[em->head++ & RING_MASK];
    em->key[idx] = (uint16_t)(em->generation[idx] + 256u);
    return ecs_entity_make(idx, em->generation[idx]);
}

ecs_status host_entity_create(host_entities *em, ecs_entity *out)
{
    uint32_t reusable = em->reusable_end - em->head;
    if (reusable > ECS_MINIMUM_FREE_INDICES ||
        (em->next_fresh == INDEX_COUNT && reusable > 0)) { /* nearly full: any queued one */
        *out = pop_queued(em);
    } else if (em->next_fresh < INDEX_COUNT) {
        em->key[em->next_fresh] = 256; /* a fresh index has generation 0 */
        out->id = em->next_fresh++;
    } else {
        out->id = 0; /* 2^22 - 1 alive or awaiting announcement */
        return ECS_ERR_FULL;
    }
    em->live++;
    return ECS_OK;
}

ecs_status host_entity_create_many(host_entities *em, ecs_entity *out, uint32_t n)
{
    if (n > available(em)) return ECS_ERR_FULL;
    uint32_t reusable = em->reusable_end - em->head;
    uint32_t i = 0;
    if (reusable > ECS_MINIMUM_FREE_INDICES) { /* the queue part, in one tight loop */
        uint32_t k = reusable - ECS_MINIMUM_FREE_INDICES;
        if (k > n) k = n;
        for (; i < k; i++) out[i] = pop_queued(em);
    }
    uint32_t fresh = INDEX_COUNT - em->next_fresh;
    uint32_t k = n - i < fresh ? n - i : fresh;
    for (uint32_t j = 0; j < k; j++, i++) { /* fresh indices start at generation 0 */
        em->key[em->next_fresh] = 256;
        out[i].id = em->next_fresh++;
    }
    for (; i < n; i++) out[i] = pop_queued(em); /* nearly full: the rest from the queue */
    em->live += n;
    return ECS_OK;
}

ecs_status host_entity_destroy(host_entities *em, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    if (!ecs_alive_exact_in(em->key, e)) return ECS_ERR_STALE_ENTITY;
    em->key[idx] = 0;
    em->generation[idx]++; /* wraps at 256: the FIFO margin makes that safe */
    em->ring[em->tail++ & RING_MASK] = idx;
    em->live--;
    return ECS_OK;
}

ecs_status host_entity_destroy_many(host_entities *em, const ecs_entity *list, uint32_t n,
                                    uint32_t *destroyed)
{
    uint32_t done = 0;
    for (uint32_t i = 0; i < n; i++) done += host_entity_destroy(em, list[i]) == ECS_OK;
    if (destroyed) *destroyed = done;
    return done == n ? ECS_OK : ECS_ERR_STALE_ENTITY;
}

uint32_t host_entities_unannounced(const host_entities *em)
{
    return em->tail - em->announced_end;
}

ecs_entity host_entities_unannounced_at(const host_entities *em, uint32_t k)
{
    uint32_t idx = em->ring[(em->announced_end + k) & RING_MASK];
    return ecs_entity_make(idx, (uint32_t)(uint8_t)(em->generation[idx] - 1u));
}

uint32_t host_entities_take_destroyed(host_entities *em, ecs_entity *out, uint32_t max)
{
    uint32_t n = em->tail - em->announced_end;
    if (n > max) n = max;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t idx = em->ring[em->announced_end++ & RING_MASK];
        /* the id as it was: the generation before destroy bumped it */
        out[i] = ecs_entity_make(idx, (uint32_t)(uint8_t)(em->generation[idx] - 1u));
    }
    return n;
}

void host_entities_recycle(host_entities *em)
{
    em->reusable_end = em->announced_end;
}

void host_entities_flush(host_entities *em)
{
    em->announced_end = em->tail;
    em->reusable_end = em->tail;
}

/* ---- snapshots: the manager as bytes (host_entities_snapshot_*) ----
 *
 * Six 32-bit words (next_fresh, live, then how many ring entries are reusable, announced
 * and unannounced), the generation bytes and alive keys of indices [0, next_fresh), the
 * ring's queued indices oldest first. The cursors restart at 0: only their distances
 * matter. */

enum { SNAP_WORDS = 6 };

/* Ring entries queued (every stage). */
static uint32_t queued(const host_entities *em)
{
    return em->tail - em->head;
}

size_t host_entities_snapshot_size(const host_entities *em)
{
    return SNAP_WORDS * sizeof(uint32_t) + (size_t)em->next_fresh * 3u +
           (size_t)queued(em) * sizeof(uint32_t);
}

void host_entities_snapshot_write(const host_entities *em, void *out)
{
    uint32_t head[SNAP_WORDS] = {em->next_fresh,
                                 em->live,
                                 em->reusable_end - em->head,
                                 em->announced_end - em->reusable_end,
                                 em->tail - em->announced_end,
                                 0};
    char *p = out;
    memcpy(p, head, sizeof head), p += sizeof head;
    memcpy(p, em->generation, em->next_fresh), p += em->next_fresh;
    memcpy(p, em->key, (size_t)em->next_fresh * 2u), p += (size_t)em->next_fresh * 2u;
    for (uint32_t k = em->head; k != em->tail; k++, p += sizeof(uint32_t))
        memcpy(p, &em->ring[k & RING_MASK], sizeof(uint32_t));
}

/* Do the snapshot's words, generations (gen), keys and ring (bytes, any alignment) agree
 * with each other, so that restoring them keeps every invariant above? */
static bool snapshot_sane(const uint32_t *w, const uint8_t *gen, const char *key, const char *ring)
{
    uint32_t fresh = w[0], n = w[2] + w[3] + w[4], live = 0;
    uint16_t k;
    memcpy(&k, key, sizeof k);
    if (k != 0) return false; /* index 0 is never alive */
    for (uint32_t i = 1; i < fresh; i++) {
        memcpy(&k, key + 2u * i, sizeof k);
        if (k && k != gen[i] + 256u) return false;
        live += k != 0;
    }
    if (live != w[1] || (uint64_t)live + n != fresh - 1u) return false; /* each free one queued */
    for (uint32_t j = 0; j < n; j++) {
        uint32_t idx;
        memcpy(&idx, ring + 4u * j, sizeof idx);
        if (idx == 0 || idx >= fresh) return false;
        memcpy(&k, key + 2u * idx, sizeof k);
        if (k) return false; /* a queued index is free */
    }
    return true;
}

ecs_status host_entities_snapshot_check(const void *in, size_t size)
{
    uint32_t w[SNAP_WORDS];
    const char *p = in;
    if (size < sizeof w) return ECS_ERR_BAD_VALUE;
    memcpy(w, p, sizeof w);
    uint64_t n = (uint64_t)w[2] + w[3] + w[4];
    if (w[0] < 1 || w[0] > INDEX_COUNT || n >= w[0] ||
        size != sizeof w + (uint64_t)w[0] * 3u + n * sizeof(uint32_t))
        return ECS_ERR_BAD_VALUE;
    const uint8_t *gen = (const uint8_t *)p + sizeof w;
    const char *key = (const char *)gen + w[0], *ring = (const char *)gen + (size_t)w[0] * 3u;
    return snapshot_sane(w, gen, key, ring) ? ECS_OK : ECS_ERR_BAD_VALUE;
}

ecs_status host_entities_snapshot_read(host_entities *em, const void *in, size_t size, bool check)
{
    if (check && host_entities_snapshot_check(in, size) != ECS_OK) return ECS_ERR_BAD_VALUE;
    uint32_t w[SNAP_WORDS];
    const char *p = in;
    memcpy(w, p, sizeof w);
    uint64_t n = (uint64_t)w[2] + w[3] + w[4];
    const uint8_t *gen = (const uint8_t *)p + sizeof w;
    const char *key = (const char *)gen + w[0], *ring = (const char *)gen + (size_t)w[0] * 3u;
    uint32_t old = em->next_fresh; /* indices past the snapshot's: fresh again */
    if (old > w[0]) {
        memset(em->generation + w[0], 0, old - w[0]);
        memset(em->key + w[0], 0, (size_t)(old - w[0]) * 2u);
    }
    memcpy(em->generation + 1, gen + 1, w[0] - 1u); /* generation[0] stays 0xFF */
    memcpy(em->key, key, (size_t)w[0] * 2u);
    memcpy(em->ring, ring, n * sizeof(uint32_t));
    em->head = 0, em->reusable_end = w[2], em->announced_end = w[2] + w[3];
    em->tail = (uint32_t)n, em->next_fresh = w[0], em->live = w[1];
    return ECS_OK;
}
