/* view.c: views: pick the shortest `with` list, store the checks, walk (view.h). */
#include "view.h"

#include <stdlib.h>
#include <string.h>

#include "signature.h"
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
        const host_manager *m = b < w->by_bit_cap ? w->by_bit[b] : NULL;
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
    if (s == ECS_OK && !sig_view(w, with, nw, without, nwo, list, v)) {
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

/* The signature walk: n column tests per entity, the first n_with wanting 1. Branches, not
 * a branch-free count: the outcome is usually predictable, and a count would make each
 * entity's store wait for the previous entity's loads. Two managers (one column) is the
 * common case and has its own loop. */
static uint32_t next_sig(ecs_view *v, uint32_t n_with, uint32_t n, const uint16_t *keys,
                         ecs_entity *restrict out, uint32_t max)
{
    const ecs_entity *restrict list = v->list;
    const uint64_t *c0 = (const uint64_t *)v->host[1];
    uint32_t i = v->next, count = v->count, got = 0;
    if (n == 1) {
        uint32_t want = n_with;
        for (; i < count && got < max; i++) {
            ecs_entity e = list[i];
            if (column_bit(c0, e.id & ECS_ENTITY_INDEX_MASK) == want && ecs_alive_exact_in(keys, e))
                out[got++] = e;
        }
    } else {
        for (; i < count && got < max; i++) {
            ecs_entity e = list[i];
            uint32_t x = e.id & ECS_ENTITY_INDEX_MASK, ok = 1;
            for (uint32_t k = 0; k < n; k++) /* none: the walked manager alone */
                ok &= column_bit((const uint64_t *)v->host[1 + k], x) == (k < n_with);
            if (ok && ecs_alive_exact_in(keys, e)) out[got++] = e;
        }
    }
    v->next = i;
    return got;
}

uint32_t host_view_next_many(ecs_view *v, const uint16_t *alive_keys, ecs_entity *out, uint32_t max)
{
    uintptr_t counts = (uintptr_t)v->host[0];
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
