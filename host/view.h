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
 * Layout of ecs_view.host: [0] = the counts, (n_with_checks | n_checks << 16);
 * [1..] = the checks' ecs_manager_index pointers, or [1] = the plan when they do not fit.
 */
#ifndef HOST_VIEW_H
#define HOST_VIEW_H

#include <stdint.h>

#include "ecs_plugin.h"

#define HOST_VIEW_INLINE 7u /* checks stored in ecs_view.host[1..7] */
#define HOST_VIEW_MAX    0xFFFFu

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

/* Check k of view v. */
static inline const ecs_manager_index *host_view_check(const ecs_view *v, uint32_t n, uint32_t k)
{
    if (n <= HOST_VIEW_INLINE) return (const ecs_manager_index *)v->host[1 + k];
    return ((const host_view_plan *)v->host[1])->ix[k];
}

/* Does e pass the checks of v: accepted by the n_with first, refused by the rest? */
static inline bool host_view_passes(const ecs_view *v, uint32_t n_with, uint32_t n, ecs_entity e)
{
    uint32_t k = 0;
    for (; k < n_with; k++) {
        const ecs_manager_index *ix = host_view_check(v, n, k);
        if (!ix->has(ix->state, e)) return false;
    }
    for (; k < n; k++) {
        const ecs_manager_index *ix = host_view_check(v, n, k);
        if (ix->has(ix->state, e)) return false;
    }
    return true;
}

/* The next entity of v into *out: alive (generations), accepted by every `with` check and
 * refused by every `without` check. False at the end. The cursor lives in locals while
 * the managers are asked (their calls are opaque: v would be read again after each). */
static inline bool host_view_next(ecs_view *v, const uint8_t *generations, ecs_entity *out)
{
    uintptr_t counts = (uintptr_t)v->host[0];
    uint32_t n_with = (uint32_t)(counts & 0xFFFFu), n = (uint32_t)(counts >> 16);
    const ecs_entity *list = v->list;
    uint32_t i = v->next, count = v->count;
    if (n == 1) { /* two managers, the common case: one check, few registers to save */
        const ecs_manager_index *ix = (const ecs_manager_index *)v->host[1];
        bool want = n_with == 1;
        while (i < count) {
            ecs_entity e = list[i++];
            if (!ecs_alive_in(generations, e) || ix->has(ix->state, e) != want) continue;
            v->next = i;
            *out = e;
            return true;
        }
        v->next = i;
        return false;
    }
    while (i < count) {
        ecs_entity e = list[i++];
        if (!ecs_alive_in(generations, e)) continue; /* destroyed, not yet announced */
        if (!host_view_passes(v, n_with, n, e)) continue;
        v->next = i;
        *out = e;
        return true;
    }
    v->next = i;
    return false;
}

#endif
