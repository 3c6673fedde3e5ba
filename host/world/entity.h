/* SPDX-License-Identifier: MIT */
/* entity.h: the host's EntityManager (Bitsquid, seed 000/001), with the seed's bugs fixed.
 *
 * Entities are 32-bit ids (22-bit index, 8-bit generation, see sdk/ecs_plugin.h). The
 * manager keeps one generation byte per index in an array reserved once at full size
 * (4 MiB, committed lazily by the OS), so its address never changes and plugins can test
 * liveness inline. Freed indices wait in a FIFO ring and are reused only while more than
 * ECS_MINIMUM_FREE_INDICES of them are reusable, so an id comes back only after its index
 * went 256 times through the queue.
 *
 * Destroyed indices pass three stages in the ring, oldest first:
 *   [head, reusable_end)           announced to every manager: may be reused;
 *   [reusable_end, announced_end)  announced in the current announcement, not yet reusable;
 *   [announced_end, tail)          destroyed, not yet announced.
 * An index is therefore never reused before every manager heard that it died.
 */
#ifndef HOST_ENTITY_H
#define HOST_ENTITY_H

#include "ecs_plugin.h"

typedef struct host_entities host_entities;

/* A new, empty manager. NULL when the address space could not be reserved. */
host_entities *host_entities_new(void);
/* Release the manager and its reservations. NULL is allowed. */
void host_entities_free(host_entities *em);

/* The stable generation array: ecs_alive_in(host_entities_generations(em), e). */
const uint8_t *host_entities_generations(const host_entities *em);
/* The stable alive keys (generation + 256 per live index, else 0): the exact inline check
 * ecs_alive_exact_in(host_entities_alive_keys(em), e). */
const uint16_t *host_entities_alive_keys(const host_entities *em);

/* True when e is alive (the null entity never is). Exact: unlike the one-load inline
 * check, also false for an id never handed out and for a stale id whose index's
 * generation byte wrapped around to its value. */
bool host_entity_alive(const host_entities *em, ecs_entity e);

/* Create one entity into *out. On exhaustion *out is the null entity and ECS_ERR_FULL is
 * returned; nothing else changes. */
ecs_status host_entity_create(host_entities *em, ecs_entity *out);

/* Create n entities into out[0..n). All or nothing: ECS_ERR_FULL creates none. */
ecs_status host_entity_create_many(host_entities *em, ecs_entity *out, uint32_t n);

/* Destroy e. A dead, stale or null id changes nothing and returns ECS_ERR_STALE_ENTITY,
 * so no index is ever queued twice. */
ecs_status host_entity_destroy(host_entities *em, ecs_entity e);

/* Destroy every live id of list[0..n) (a repeated id counts once). *destroyed (may be
 * NULL) receives how many were destroyed. ECS_ERR_STALE_ENTITY when any was skipped. */
ecs_status host_entity_destroy_many(host_entities *em, const ecs_entity *list, uint32_t n,
                                    uint32_t *destroyed);

/* The first live entity whose index is >= from, into *out; false when there is none.
 * Walks the live bitset a word at a time: iterate with from = index(*out) + 1. */
bool host_entities_next_live(const host_entities *em, uint32_t from, ecs_entity *out);

/* The index just past the first n live entities at or after index from (a page's start). */
uint32_t host_entities_skip_live(const host_entities *em, uint32_t from, uint64_t n);

/* Number of live entities. */
uint32_t host_entities_live(const host_entities *em);

/* Number of destroyed entities not yet taken by host_entities_take_destroyed(). */
uint32_t host_entities_unannounced(const host_entities *em);

/* The k-th destroyed-but-unannounced id (k < host_entities_unannounced()), as it was when
 * alive, oldest first; nothing is marked. Collections drop these at the start of a frame. */
ecs_entity host_entities_unannounced_at(const host_entities *em, uint32_t k);

/* Copy up to max destroyed-but-unannounced ids (as they were when alive) into out, oldest
 * first, and mark them announced. Returns how many were copied. Call it until it returns
 * 0: managers that destroy more entities while hearing of a batch (a parent's children)
 * extend the list. */
uint32_t host_entities_take_destroyed(host_entities *em, ecs_entity *out, uint32_t max);

/* Make every announced index reusable. Call after every manager heard of them. */
void host_entities_recycle(host_entities *em);

/* Announce nothing and make every destroyed index reusable now: for callers that have no
 * managers to tell (benchmarks, tests of the manager alone). */
void host_entities_flush(host_entities *em);

/* Snapshots (docs/snapshot-format.md, the "entities" part): the bytes that
 * host_entities_snapshot_write will write now. */
size_t host_entities_snapshot_size(const host_entities *em);
/* Write the manager (generations, alive keys, the free queue with its stages) into out,
 * host_entities_snapshot_size() bytes. Cannot fail. */
void host_entities_snapshot_write(const host_entities *em, void *out);
/* ECS_OK when in[0..size) is a consistent snapshot (what host_entities_snapshot_read
 * checks first), else ECS_ERR_BAD_VALUE. */
ecs_status host_entities_snapshot_check(const void *in, size_t size);
/* Make the manager what in[0..size) describes. With check, ECS_ERR_BAD_VALUE when the bytes
 * are not a consistent snapshot (sizes, a key that disagrees with its generation, a queued
 * index that is live, ...): nothing changed then. Without (bytes this process wrote and
 * kept: a loop's), no pass over every index first. Nobody is told of the entities that died
 * or came back: the caller restores the managers' data with it. */
ecs_status host_entities_snapshot_read(host_entities *em, const void *in, size_t size, bool check);

#endif
