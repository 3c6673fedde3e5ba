/* SPDX-License-Identifier: MIT */
/* view.h: views (seed 002): the entities present in every `with` manager and in no
 * `without` manager, found by asking the managers, never stored by the host.
 *
 * view_init picks the `with` manager whose dense entity list is shortest, and keeps in the
 * caller's ecs_view the indexes (ecs_manager_index, inside the host's manager records) to
 * ask about each entity of that list: the other `with` managers (has() must say yes),
 * then the `without` managers that are loaded (has() must say no). Up to
 * HOST_VIEW_INLINE checks fit in the view itself; a longer list lives in a plan the host
 * keeps (interned, freed at exit). A manager record keeps its address across a reload of
 * its plugin, so a view built before a reload reads the new code; one built before an
 * unload must not be used (the ABI says: not after the managers change).
 *
 * When every manager of the query but the walked one reports its signature bit
 * (ecs_manager_index.signature), at most HOST_VIEW_INLINE of them, the view tests their
 * signature columns inline instead (signature.h: one bit per entity index): no call per
 * entity, the speed of a collection's loop without the collection's upkeep. A batch
 * (view_next_many) has no branch per entity, and with one column to test (two managers,
 * the common case) takes eight entities at a time where the processor has AVX2 (chosen at
 * run time; the plain loop elsewhere).
 *
 * When the walked manager reports its bit too and its list is not sparse (at least one
 * index in HOST_VIEW_DENSE of those ever given a bit), the view reads no list at all: it
 * walks the query's columns 64 indices a word (the `with` words ANDed, the `without` ones
 * taken out), in index order, and makes each entity from its index and alive key (a zero
 * key: dead, skipped). The indices are consecutive, so eight keys are one load (AVX2), not a
 * gather: the walk costs about what a collection's loop does. ecs_view.list is NULL then,
 * count the end of the indices and next the next index to look at.
 *
 * Layout of ecs_view.host: [0] = the counts, (n_with_checks | n_checks << 16), then
 * [1..] = the checks' ecs_manager_index pointers, or [1] = the plan when they do not fit;
 * or [0] = HOST_VIEW_SIG | n_with_checks | n_checks << 8, then [1..] = the checks'
 * columns, the `with` ones first; or [0] = HOST_VIEW_SIG | HOST_VIEW_COLS | n_with | n << 8,
 * then [1..] = the columns of every manager of the query, the `with` ones first.
 */
#ifndef HOST_VIEW_H
#define HOST_VIEW_H

#include <stdint.h>

#include "ecs_plugin.h"

#define HOST_VIEW_INLINE 7u         /* checks stored in ecs_view.host[1..7] */
#define HOST_VIEW_MAX    0x7FFFu    /* checks in all: 15 bits of host[0] each */
#define HOST_VIEW_SIG    (1u << 31) /* host[0]: the view tests signature words */
#define HOST_VIEW_COLS   (1u << 30) /* host[0]: the view walks the signature columns */
#define HOST_VIEW_DENSE  16u        /* a column walk needs one index in 16 in the shortest list */

typedef struct host_world host_world;

/* A list of checks too long for an ecs_view. */
typedef struct host_view_plan {
    uint32_t count;
    const ecs_manager_index **ix;
} host_view_plan;

typedef struct host_view_plans {
    host_view_plan **v;
    uint32_t count, cap;
} host_view_plans;

/* Start a view of the managers of bits with[0..nw) (nw >= 1) and without[0..nwo) in *v.
 * ECS_ERR_NOT_FOUND when a `with` manager is not loaded or offers no index, or a loaded
 * `without` manager offers none: *missing then names its bit. ECS_ERR_UNSUPPORTED beyond
 * HOST_VIEW_MAX managers, ECS_ERR_NO_MEMORY for a plan. */
ecs_status host_view_init(host_world *w, const uint32_t *with, uint32_t nw, const uint32_t *without,
                          uint32_t nwo, ecs_view *v, uint32_t *missing);

/* Free the plans (at exit). */
void host_view_plans_free(host_view_plans *plans);

/* The next entity of v into *out: alive (alive_keys, exact), accepted by every `with` check
 * and refused by every `without` check. False at the end. */
bool host_view_next(ecs_view *v, const uint16_t *alive_keys, ecs_entity *out);

/* Up to max next entities of v into out[0..); returns how many (0 at the end). */
uint32_t host_view_next_many(ecs_view *v, const uint16_t *alive_keys, ecs_entity *out,
                             uint32_t max);

#endif
