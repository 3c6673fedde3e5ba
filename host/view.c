/* view.c: starting views: pick the shortest `with` list, store the checks (view.h). */
#include "view.h"

#include <stdlib.h>
#include <string.h>

#include "world.h"

/* The loaded manager of bit b with an index, or NULL. */
static host_manager *indexed(const host_world *w, uint32_t b)
{
    host_manager *m = b < w->by_bit_cap ? w->by_bit[b] : NULL;
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
        host_manager *m = without[k] < w->by_bit_cap ? w->by_bit[without[k]] : NULL;
        if (!m) continue; /* not loaded: nobody has it */
        if (!indexed(w, without[k])) return *missing = without[k], -1;
        ix[n++] = &m->index;
    }
    return n;
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
