/* SPDX-License-Identifier: MIT */
/* vprobe.c: a test plugin for views, collections and systems (tests/test_views.c).
 *
 * Its manifest config says what it registers, in this order:
 *   "managers": N        managers "c0" .. "c<N-1>" first (a shorthand, default 0);
 *   "quiet_destroy": true  its managers do not report the components of destroyed
 *                        entities (the host must clear their bits by itself);
 *   "signature": true    its indexes say the managers report their bits
 *                        (ecs_manager_index.signature: views test the bits, not has());
 *   "items": [...]       then each item in turn:
 *     {"manager": "x", "index": false}   a manager (with its index unless "index" is false);
 *     {"index": "x"}                     manager_index() for x (refused unless x is ours);
 *     {"system": "s", "with": [...], "without": [...], "weight": w, "mode": m}
 *                                        a system, and collection_create() of its query;
 *                                        m: "record" (default), "mutate", "destroy",
 *                                        "crash".
 * A manager is a sparse set (dense entities + index map) whose update logs an event; its
 * adds and removes are reported to the host's signatures; save/load_component write and
 * read `true`. A "record" system copies what it receives; "mutate" also takes its first
 * `with` manager's component from every entity it receives (if that manager is ours) and
 * destroys the first entity; "destroy" only destroys the first; "crash" raises SIGSEGV. Every
 * update and run is logged with the build's tag (VPROBE_TAG), so a reload shows which code ran.
 *
 * Builds differ by -D: VPROBE_NAME (plugin name), VPROBE_DEP (a dependency), VPROBE_TAG,
 * VPROBE_API (the API's name).
 */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "ecs_plugin.h"
#include "vprobe_api.h"

#ifndef VPROBE_NAME
#define VPROBE_NAME "vprobe"
#endif
#ifndef VPROBE_TAG
#define VPROBE_TAG 1
#endif
#ifndef VPROBE_API
#define VPROBE_API VPROBE_API_NAME
#endif

#define NAME_MAX_LEN 64
#define MAX_TERMS    16

typedef struct vp_state vp_state;

typedef struct vp_set { /* one manager */
    vp_state *s;
    uint32_t k, bit;
    char name[NAME_MAX_LEN];
    ecs_entity *dense;
    uint32_t count, cap;
    uint32_t *pos; /* index -> position + 1 */
    uint32_t pos_cap;
} vp_set;

enum { MODE_RECORD, MODE_MUTATE, MODE_DESTROY, MODE_CRASH };

typedef struct vp_system {
    vp_state *s;
    uint32_t k;
    int mode;
    char name[NAME_MAX_LEN];
    char terms[2][MAX_TERMS][NAME_MAX_LEN]; /* with, without */
    const char *lists[2][MAX_TERMS + 1];
    ecs_collection collection;
    ecs_entity *seen;
    uint32_t seen_count, seen_cap;
    uint64_t seen_frame;
} vp_system;

struct vp_state {
    uint32_t layout;
    const ecs_host *h;
    vp_set *sets;
    uint32_t nsets;
    vp_system *systems;
    uint32_t nsystems;
    vprobe_event *events;
    uint32_t nevents, events_cap;
    bool quiet_destroy;
};

/* ---- managers ---- */

static void log_event(vp_state *s, char kind, uint32_t index)
{
    if (s->nevents == s->events_cap) {
        uint32_t cap = s->events_cap ? s->events_cap * 2 : 256;
        vprobe_event *v = s->h->realloc(s->h, s->events, cap * sizeof *v);
        if (!v) return;
        s->events = v;
        s->events_cap = cap;
    }
    s->events[s->nevents++] = (vprobe_event){kind, index, VPROBE_TAG, s->h->frame->frame};
}

static bool set_has(const vp_set *m, ecs_entity e)
{
    uint32_t i = ecs_entity_index(e);
    return i < m->pos_cap && m->pos[i] && m->dense[m->pos[i] - 1].id == e.id;
}

static ecs_status set_add(vp_set *m, ecs_entity e)
{
    const ecs_host *h = m->s->h;
    uint32_t i = ecs_entity_index(e);
    if (!ecs_alive(h, e)) return ECS_ERR_STALE_ENTITY;
    if (set_has(m, e)) return ECS_OK;
    if (i >= m->pos_cap) {
        uint32_t cap = m->pos_cap ? m->pos_cap : 256;
        while (cap <= i) cap *= 2;
        uint32_t *pos = h->realloc(h, m->pos, cap * sizeof *pos);
        if (!pos) return ECS_ERR_NO_MEMORY;
        memset(pos + m->pos_cap, 0, (cap - m->pos_cap) * sizeof *pos);
        m->pos = pos;
        m->pos_cap = cap;
    }
    if (m->count == m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 64;
        ecs_entity *d = h->realloc(h, m->dense, cap * sizeof *d);
        if (!d) return ECS_ERR_NO_MEMORY;
        m->dense = d;
        m->cap = cap;
    }
    m->dense[m->count++] = e;
    m->pos[i] = m->count;
    h->component_added(h, m->bit, e);
    return ECS_OK;
}

static void set_take(vp_set *m, ecs_entity e, bool report)
{
    uint32_t i = ecs_entity_index(e), at = m->pos[i] - 1;
    ecs_entity last = m->dense[--m->count];
    m->pos[i] = 0;
    if (at != m->count) {
        m->dense[at] = last;
        m->pos[ecs_entity_index(last)] = at + 1;
    }
    if (report) m->s->h->component_removed(m->s->h, m->bit, e);
}

static void mgr_update(void *state, const ecs_frame_info *frame)
{
    (void)frame;
    vp_set *m = state;
    log_event(m->s, 'm', m->k);
}

static void mgr_destroyed(void *state, const ecs_entity *list, uint32_t n)
{
    vp_set *m = state;
    for (uint32_t k = 0; k < n; k++)
        if (set_has(m, list[k])) set_take(m, list[k], !m->s->quiet_destroy);
}

static uint32_t mgr_count(void *state)
{
    return ((vp_set *)state)->count;
}

static ecs_status mgr_save(void *state, ecs_entity e, cJSON **out)
{
    *out = set_has(state, e) ? cJSON_CreateTrue() : NULL;
    return ECS_OK;
}

static ecs_status mgr_load(void *state, ecs_entity e, const cJSON *json)
{
    (void)json;
    return set_add(state, e);
}

static bool ix_has(void *state, ecs_entity e)
{
    return ecs_alive(((vp_set *)state)->s->h, e) && set_has(state, e);
}

static uint32_t ix_entities(void *state, const ecs_entity **out)
{
    vp_set *m = state;
    *out = m->dense;
    return m->count;
}

/* ---- systems ---- */

static void sys_run(void *state, const ecs_entity *list, uint32_t n, const ecs_frame_info *frame)
{
    vp_system *y = state;
    vp_state *s = y->s;
    const ecs_host *h = s->h;
    log_event(s, 's', y->k);
    if (y->mode == MODE_CRASH) raise(SIGSEGV);
    if (n > y->seen_cap) {
        ecs_entity *v = h->realloc(h, y->seen, n * sizeof *v);
        if (!v) return;
        y->seen = v;
        y->seen_cap = n;
    }
    if (n) memcpy(y->seen, list, n * sizeof *list);
    y->seen_count = n;
    y->seen_frame = frame->frame;
    if (y->mode == MODE_DESTROY && n && ecs_alive(h, list[0])) h->entity_destroy(h, list[0]);
    if (y->mode != MODE_MUTATE) return;
    for (uint32_t m = 0; m < s->nsets; m++) {
        if (strcmp(s->sets[m].name, y->terms[0][0]) != 0) continue;
        for (uint32_t k = 0; k < n; k++)
            if (set_has(&s->sets[m], list[k])) set_take(&s->sets[m], list[k], true);
    }
    if (n && ecs_alive(h, list[0])) h->entity_destroy(h, list[0]);
}

/* ---- the API ---- */

static ecs_status api_add(void *self, uint32_t k, ecs_entity e)
{
    vp_state *s = self;
    return k < s->nsets ? set_add(&s->sets[k], e) : ECS_ERR_NOT_FOUND;
}

static ecs_status api_remove(void *self, uint32_t k, ecs_entity e)
{
    vp_state *s = self;
    if (k >= s->nsets) return ECS_ERR_NOT_FOUND;
    if (!ecs_alive(s->h, e) || !set_has(&s->sets[k], e)) return ECS_ERR_NOT_FOUND;
    set_take(&s->sets[k], e, true);
    return ECS_OK;
}

static bool api_has(void *self, uint32_t k, ecs_entity e)
{
    vp_state *s = self;
    return k < s->nsets && ix_has(&s->sets[k], e);
}

static uint32_t api_managers(void *self)
{
    return ((vp_state *)self)->nsets;
}

static uint32_t api_systems(void *self)
{
    return ((vp_state *)self)->nsystems;
}

static uint32_t api_events(void *self, const vprobe_event **out)
{
    vp_state *s = self;
    *out = s->events;
    return s->nevents;
}

static void api_clear_events(void *self)
{
    ((vp_state *)self)->nevents = 0;
}

static uint32_t api_seen(void *self, uint32_t k, const ecs_entity **out, uint64_t *frame)
{
    vp_state *s = self;
    if (k >= s->nsystems) return 0;
    *out = s->systems[k].seen;
    if (frame) *frame = s->systems[k].seen_frame;
    return s->systems[k].seen_count;
}

static ecs_collection api_collection(void *self, uint32_t k)
{
    vp_state *s = self;
    return k < s->nsystems ? s->systems[k].collection : 0;
}

/* ---- registration from the config ---- */

static const cJSON *items_of(const ecs_host *h)
{
    return h->config ? cJSON_GetObjectItemCaseSensitive(h->config, "items") : NULL;
}

static int count_shorthand(const ecs_host *h)
{
    const cJSON *n = h->config ? cJSON_GetObjectItemCaseSensitive(h->config, "managers") : NULL;
    return cJSON_IsNumber(n) ? n->valueint : 0;
}

/* How many managers and systems the config asks for. */
static void count_items(const ecs_host *h, uint32_t *managers, uint32_t *systems)
{
    const cJSON *it;
    *managers = (uint32_t)count_shorthand(h);
    *systems = 0;
    cJSON_ArrayForEach(it, items_of(h))
    {
        *managers += cJSON_GetObjectItemCaseSensitive(it, "manager") != NULL;
        *systems += cJSON_GetObjectItemCaseSensitive(it, "system") != NULL;
    }
}

static ecs_status add_manager(vp_state *s, const char *name, bool index)
{
    const ecs_host *h = s->h;
    vp_set *m = &s->sets[s->nsets];
    m->s = s;
    m->k = s->nsets;
    snprintf(m->name, sizeof m->name, "%s", name);
    ecs_manager_desc d = {.struct_size = sizeof d,
                          .name = m->name,
                          .state = m,
                          .update = mgr_update,
                          .entities_destroyed = mgr_destroyed,
                          .count = mgr_count,
                          .save_component = mgr_save,
                          .load_component = mgr_load};
    const cJSON *sig = h->config ? cJSON_GetObjectItemCaseSensitive(h->config, "signature") : NULL;
    ecs_manager_index ix = {.struct_size = sizeof ix,
                            .state = m,
                            .has = ix_has,
                            .entities = ix_entities,
                            .signature = cJSON_IsTrue(sig)};
    ecs_status st = h->register_manager(h, &d);
    if (st == ECS_OK && index) st = h->manager_index(h, m->name, &ix);
    if (st == ECS_OK) st = h->signature_bit(h, m->name, &m->bit);
    if (st == ECS_OK) s->nsets++;
    return st;
}

/* Copy the strings of a JSON array into terms/lists (NULL-terminated). */
static void copy_terms(const cJSON *a, char terms[MAX_TERMS][NAME_MAX_LEN],
                       const char *list[MAX_TERMS + 1])
{
    int n = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, a)
    {
        if (n == MAX_TERMS || !cJSON_IsString(x)) continue;
        snprintf(terms[n], NAME_MAX_LEN, "%s", x->valuestring);
        list[n] = terms[n];
        n++;
    }
    list[n] = NULL;
}

static ecs_status add_system(vp_state *s, const cJSON *it)
{
    const ecs_host *h = s->h;
    vp_system *y = &s->systems[s->nsystems];
    const cJSON *weight = cJSON_GetObjectItemCaseSensitive(it, "weight");
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(it, "mode");
    y->s = s;
    y->k = s->nsystems;
    snprintf(y->name, sizeof y->name, "%s",
             cJSON_GetObjectItemCaseSensitive(it, "system")->valuestring);
    copy_terms(cJSON_GetObjectItemCaseSensitive(it, "with"), y->terms[0], y->lists[0]);
    copy_terms(cJSON_GetObjectItemCaseSensitive(it, "without"), y->terms[1], y->lists[1]);
    y->mode = !cJSON_IsString(mode)                       ? MODE_RECORD
              : strcmp(mode->valuestring, "mutate") == 0  ? MODE_MUTATE
              : strcmp(mode->valuestring, "destroy") == 0 ? MODE_DESTROY
              : strcmp(mode->valuestring, "crash") == 0   ? MODE_CRASH
                                                          : MODE_RECORD;
    ecs_system_desc d = {sizeof d,
                         y->name,
                         {sizeof(ecs_query_desc), y->lists[0], y->lists[1]},
                         cJSON_IsNumber(weight) ? weight->valueint : 0,
                         y,
                         sys_run};
    ecs_status st = h->register_system(h, &d);
    if (st == ECS_OK) st = h->collection_create(h, &d.query, &y->collection);
    if (st == ECS_OK) s->nsystems++;
    return st;
}

static ecs_status register_item(vp_state *s, const cJSON *it)
{
    const cJSON *mgr = cJSON_GetObjectItemCaseSensitive(it, "manager");
    const cJSON *idx = cJSON_GetObjectItemCaseSensitive(it, "index");
    if (cJSON_IsString(mgr)) return add_manager(s, mgr->valuestring, !cJSON_IsFalse(idx));
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, "system"))) return add_system(s, it);
    if (cJSON_IsString(idx)) {
        ecs_manager_index ix = {
            .struct_size = sizeof ix, .state = s->sets, .has = ix_has, .entities = ix_entities};
        return s->h->manager_index(s->h, idx->valuestring, &ix);
    }
    return ECS_ERR_BAD_VALUE;
}

static ecs_status register_all(vp_state *s)
{
    ecs_status st = ECS_OK;
    for (int k = 0; st == ECS_OK && k < count_shorthand(s->h); k++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", k);
        st = add_manager(s, name, true);
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, items_of(s->h))
    {
        if (st == ECS_OK) st = register_item(s, it);
    }
    vprobe_api api = {
        sizeof api,   s,           VPROBE_TAG, api_add,          api_remove, api_has,
        api_managers, api_systems, api_events, api_clear_events, api_seen,   api_collection};
    if (st == ECS_OK)
        st = s->h->api_publish(s->h, VPROBE_API, VPROBE_API_VERSION, &api, sizeof api);
    return st;
}

/* ---- plugin life ---- */

static void state_free(vp_state *s, const ecs_host *h)
{
    for (uint32_t k = 0; k < s->nsets; k++) {
        if (s->sets[k].dense) h->free(h, s->sets[k].dense);
        if (s->sets[k].pos) h->free(h, s->sets[k].pos);
    }
    for (uint32_t k = 0; k < s->nsystems; k++)
        if (s->systems[k].seen) h->free(h, s->systems[k].seen);
    h->free(h, s->sets);
    h->free(h, s->systems);
    if (s->events) h->free(h, s->events);
    h->free(h, s);
}

static vp_state *state_new(const ecs_host *h)
{
    uint32_t managers = 0, systems = 0;
    count_items(h, &managers, &systems);
    vp_state *s = h->alloc(h, sizeof *s);
    vp_set *sets = h->alloc(h, (managers + 1) * sizeof *sets);
    vp_system *sys = h->alloc(h, (systems + 1) * sizeof *sys);
    if (!s || !sets || !sys) {
        h->free(h, s);
        h->free(h, sets);
        h->free(h, sys);
        return NULL;
    }
    memset(s, 0, sizeof *s);
    memset(sets, 0, (managers + 1) * sizeof *sets);
    memset(sys, 0, (systems + 1) * sizeof *sys);
    s->layout = 1;
    s->sets = sets;
    s->systems = sys;
    return s;
}

/* A reload with the same layout keeps the components and events; the registrations are
 * made again from the config (the same one). */
static ecs_status load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    vp_state *prev = args && args->struct_size >= sizeof *args ? args->previous_state : NULL;
    vp_state *s = prev ? prev : state_new(h);
    if (!s) return ECS_ERR_NO_MEMORY;
    const ecs_host *old = s->h;
    uint32_t nsets = s->nsets, nsystems = s->nsystems;
    s->h = h;
    s->nsets = s->nsystems = 0;
    s->quiet_destroy =
        h->config && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h->config, "quiet_destroy"));
    ecs_status st = register_all(s);
    if (st != ECS_OK) {
        if (prev) { /* the old version keeps running on it */
            s->h = old;
            s->nsets = nsets;
            s->nsystems = nsystems;
        } else {
            state_free(s, h);
        }
        return st;
    }
    *state = s;
    return ECS_OK;
}

static void unload(const ecs_host *h, void *state, ecs_unload_reason why)
{
    if (state && why != ECS_UNLOAD_RELOAD_KEEP_STATE) state_free(state, h);
}

#ifdef VPROBE_DEP
static const char *const deps[] = {VPROBE_DEP, NULL};
#else
static const char *const deps[] = {NULL};
#endif

static const ecs_plugin_desc desc = {
    ECS_PLUGIN_DESC_HEADER, VPROBE_NAME, "1.0.0", 1, deps, load, unload, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(desc)
