/* SPDX-License-Identifier: MIT */
/* signature.h: entity signatures (seeds 003, 004): one bit per manager name, per entity.
 *
 * A name gets the next bit the first time it is seen (register_manager) and keeps it for as
 * long as the host runs, across unloads and reloads, so a collection outlives the managers
 * it names. Each bit has a column: one bit per entity index (columns[b], bit i & 63 of word
 * i >> 6), so a view testing one manager reads 1 bit per entity (a million entities'
 * column is 128 KB: it stays in cache while a view walks another manager's list), and a
 * 65th name costs one more column and nothing else moves: no limit of 32 or 64. Like the
 * entity manager's generations, every column is reserved once for all 2^22 indices (mmap,
 * committed by the OS as it is touched): nothing is ever copied or cleared to grow, which
 * keeps a report at a few nanoseconds when a million entities get their first component.
 * `used` bounds the indices ever given a bit, for the loops that visit them all.
 *
 * Whose bits index i holds is not stored: the entity manager's alive keys (`keys`, set by
 * the world) say which entity holds i now, and an index is handed out again only after the
 * death of its last holder was announced, which clears its bits (host_sig_forget). So the
 * bits of i belong to its live holder, or to a holder that died and is not announced yet,
 * and a report about a stale id whose index another live entity holds changes nothing.
 * (Per-entity 64-bit words beside the columns and an owner id per index held the same
 * facts: 12 bytes per entity, dropped.)
 *
 * While `tracking` (some collection is kept up to date), every index whose bits change is
 * queued once (flag[i] set while queued); the collections apply the queue at the start of
 * the next frame. A queue that could not grow sets `overflow`: the collections then rebuild.
 *
 * Invariants: the bits of index i are zero unless its holder is alive or died and its death
 * is not yet announced, and zero at every index >= used; queue[0..queued) are distinct
 * indices, each with flag[i] == 1, and every other flag is 0; capacity is 0 (nothing
 * reserved yet) or 2^22.
 */
#ifndef HOST_SIGNATURE_H
#define HOST_SIGNATURE_H

#include <stdbool.h>
#include <stdint.h>

#include "ecs_plugin.h"

typedef struct host_signatures {
    char **names; /* names[b]: the manager name of bit b */
    uint32_t name_count, name_cap;
    uint64_t **columns; /* columns[b]: 2^22 bits, one per entity index (reserved with the name) */
    uint32_t column_cap;
    const uint16_t *keys; /* the entity manager's alive keys (host_entities_alive_keys) */
    uint8_t *flag;        /* capacity entries: 1 while the index is queued */
    uint32_t capacity;    /* entity indices covered: 0 before the first bit, then 2^22 */
    uint32_t used;        /* 1 + the highest index ever given a bit (0: none) */
    uint32_t *queue;
    uint32_t queued, queue_cap;
    bool tracking; /* queue changes: some collection is kept */
    bool overflow; /* a change could not be queued: rebuild every collection */
} host_signatures;

/* The bit of name into *bit. A name without one gets the next bit when create is set, else
 * ECS_ERR_NOT_FOUND. ECS_ERR_NO_MEMORY leaves everything as it was. */
ecs_status host_sig_bit(host_signatures *s, const char *name, bool create, uint32_t *bit);

/* The name of bit, or NULL when no name has it. */
const char *host_sig_name(const host_signatures *s, uint32_t bit);

/* Give live entity e the bit. ECS_ERR_NO_MEMORY (no name has the bit) changes nothing. */
ecs_status host_sig_add(host_signatures *s, uint32_t bit, ecs_entity e);

/* Take the bit from e; nothing when another live entity holds e's index. */
void host_sig_remove(host_signatures *s, uint32_t bit, ecs_entity e);

/* Clear every bit of these entities (their death is being announced). */
void host_sig_forget(host_signatures *s, const ecs_entity *list, uint32_t n);

/* Clear the bit on every entity: its manager is gone (its components with it). */
void host_sig_clear_bit(host_signatures *s, uint32_t bit);

/* Queue index i for the collections (when tracking and not queued yet). */
void host_sig_touch(host_signatures *s, uint32_t i);

/* Empty the queue (after the collections applied it). */
void host_sig_clear_queue(host_signatures *s);

/* Bit b of index i (0 for a bit no name has). */
static inline bool host_sig_has(const host_signatures *s, uint32_t b, uint32_t i)
{
    return b < s->name_count && (s->columns[b][i >> 6] >> (i & 63) & 1u);
}

/* The entity that holds index i now, or the null entity (i is free, or its holder died). */
static inline ecs_entity host_sig_holder(const host_signatures *s, uint32_t i)
{
    uint16_t key = s->keys ? s->keys[i] : 0;
    return key ? ecs_entity_make(i, key - 256u) : ecs_entity_null();
}

/* Bit b's column (one bit per entity index), or NULL when no name has bit b. */
static inline const uint64_t *host_sig_column(const host_signatures *s, uint32_t b)
{
    return b < s->name_count ? s->columns[b] : NULL;
}

/* Free everything (at exit). */
void host_sig_free(host_signatures *s);

#endif
