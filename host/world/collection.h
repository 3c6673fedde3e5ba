/* SPDX-License-Identifier: MIT */
/* collection.h: collections (seed 004): the live entities whose signature has every
 * required bit and no excluded one, kept by the host, changed only at the start of a frame.
 *
 * A collection is a dense entity array plus an index map (pos[entity index] = position + 1,
 * 0 when absent); removal moves the last entity into the hole. Membership of signature
 * bits: (~bits & required) == 0 && (bits & excluded) == 0, word by word. Handles are table
 * positions + 1 and are never reused: a collection lives as long as the world. While no
 * loaded plugin holds a reference it is dormant (empty, not kept up to date); when one
 * takes it again it is rebuilt from the signatures at the next apply.
 *
 * Invariant, after host_collections_apply: every active collection holds exactly the live
 * entities whose signature matches, each once, and pos agrees with dense.
 */
#ifndef HOST_COLLECTION_H
#define HOST_COLLECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "ecs_plugin.h"
#include "entity.h"
#include "signature.h"

typedef struct host_collection {
    uint64_t *required, *excluded; /* `words` words each */
    uint32_t words;
    ecs_entity *dense;
    uint32_t count, cap;
    uint32_t *pos; /* pos_cap entries */
    uint32_t pos_cap;
    uint32_t refs;
    bool rebuild; /* fill from every signature at the next apply */
} host_collection;

typedef struct host_collections {
    host_collection **v; /* handle h is v[h - 1] */
    uint32_t count, cap;
    uint32_t active; /* collections with refs > 0 */
} host_collections;

/* The collection of entities with every bit of with[0..nw) and none of without[0..nwo):
 * the existing one for the same bit sets, else a new dormant one. *out receives its
 * handle. ECS_ERR_NO_MEMORY (nothing made). */
ecs_status host_collections_find(host_collections *cs, const uint32_t *with, uint32_t nw,
                                 const uint32_t *without, uint32_t nwo, ecs_collection *out);

/* The collection of handle c, or NULL for 0 or an unknown handle. */
host_collection *host_collections_get(const host_collections *cs, ecs_collection c);

/* A plugin takes (ref) or drops (unref) a reference to c. The first reference makes it
 * active (rebuilt at the next apply) and turns signature tracking on; dropping the last
 * empties it, and tracking stops with the last active collection. Unknown handles are
 * ignored. */
void host_collections_ref(host_collections *cs, host_signatures *sig, ecs_collection c);
void host_collections_unref(host_collections *cs, host_signatures *sig, ecs_collection c);

/* Bring every active collection up to date: rebuild those that need it, apply the queued
 * signature changes, drop entities destroyed and not yet announced. Returns true when it
 * had anything to do. Out of memory: a collection is rebuilt again at the next apply (and
 * an error is logged). */
bool host_collections_apply(host_collections *cs, host_signatures *sig, const host_entities *em);

/* Free every collection (at exit). */
void host_collections_free(host_collections *cs);

#endif
