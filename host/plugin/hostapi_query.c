/* SPDX-License-Identifier: MIT */
/* hostapi_query.c: the host table's views, collections and systems (seeds 002-004):
 * manager_index, signature_bit, component_added/removed, view_init/view_next,
 * collection_create/collection_entities, register_system.
 *
 * Like hostapi.c, every entry checks what the plugin passed: a bad call is refused with a
 * status and one log line naming the plugin and the call. What a plugin registers in
 * load() (indexes, collection references, systems) is pending until load() succeeds and
 * then committed with its managers (loader.c), or replaces its old version's in place
 * (reload.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#define QUERY_LOCAL 32 /* names resolved without an allocation */

static host_plugin *plugin_of(const ecs_host *h)
{
    return (host_plugin *)(uintptr_t)h;
}

/* A refused registration during load(): logged, remembered, load() must fail. */
static ecs_status refuse_in_load(host_plugin *p, ecs_status s, const char *call, const char *what)
{
    host_api_refuse(p, s, call, what);
    p->registration_failed = true;
    return s;
}

/* p's manager called name registered in this load(), or NULL. */
static host_manager *pending_manager(const host_plugin *p, const char *name)
{
    for (size_t i = 0; i < p->pending_manager_count; i++)
        if (strcmp(p->pending_managers[i]->name, name) == 0) return p->pending_managers[i];
    return NULL;
}

/* Does bit b belong to one of p's managers: committed, or registered in this load()? */
static inline bool owns_bit(const host_session *hs, const host_plugin *p, uint32_t b)
{
    if (b < hs->world->sched.by_bit_cap && hs->world->sched.by_bit[b] &&
        hs->world->sched.by_bit[b]->owner == p)
        return true;
    for (size_t i = 0; i < p->pending_manager_count; i++) /* only during a load() */
        if (p->pending_managers[i]->bit == b) return true;
    return false;
}

/* ---- managers: index and signature bits ---- */

static ecs_status manager_index(const ecs_host *h, const char *manager,
                                const ecs_manager_index *index)
{
    HOST_MAIN_THREAD_OR(h, "manager_index", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    const char *call = "manager_index";
    char what[300];
    if (!p->in_load)
        return host_api_refuse(p, ECS_ERR_WRONG_TIME, call, "only allowed inside load()");
    if (!manager || !index)
        return refuse_in_load(p, ECS_ERR_INVALID_ARGUMENT, call, "manager or index is NULL");
    const size_t v1 = offsetof(ecs_manager_index, entities) + sizeof index->entities;
    if (index->struct_size < v1)
        return refuse_in_load(p, ECS_ERR_ABI, call, "ecs_manager_index.struct_size is too small");
    if (!index->has || !index->entities)
        return refuse_in_load(p, ECS_ERR_INVALID_ARGUMENT, call, "has() or entities() is NULL");
    host_manager *m = pending_manager(p, manager);
    if (!m || m->index.has) {
        snprintf(what, sizeof what,
                 m ? "manager '%s' offered its index twice"
                   : "no manager '%s' registered by this plugin in this load()",
                 manager);
        return refuse_in_load(p, m ? ECS_ERR_EXISTS : ECS_ERR_NOT_FOUND, call, what);
    }
    memset(&m->index, 0, sizeof m->index); /* fields the plugin does not know stay zero */
    memcpy(&m->index, index,
           index->struct_size < sizeof *index ? index->struct_size : sizeof *index);
    m->index.struct_size = sizeof m->index;
    return ECS_OK;
}

static ecs_status signature_bit(const ecs_host *h, const char *manager, uint32_t *bit)
{
    HOST_MAIN_THREAD_OR(h, "signature_bit", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    char what[300];
    if (!manager || !bit)
        return host_api_refuse(p, ECS_ERR_INVALID_ARGUMENT, "signature_bit",
                               "manager or bit is NULL");
    if (host_sig_bit(&p->session->world->sig, manager, false, bit) == ECS_OK) return ECS_OK;
    snprintf(what, sizeof what, "no manager named '%s' was ever registered", manager);
    return host_api_refuse(p, ECS_ERR_NOT_FOUND, "signature_bit", what);
}

/* Is a report of bit for e acceptable from p? Logs why not. */
static bool report_ok(host_plugin *p, const char *call, uint32_t bit, ecs_entity e, bool added)
{
    host_session *hs = p->session;
    char what[300], text[300];
    if (!owns_bit(hs, p, bit)) {
        const char *name = host_sig_name(&hs->world->sig, bit);
        snprintf(what, sizeof what,
                 "bit %u%s%s%s is not the signature bit of a manager of this plugin", bit,
                 name ? " ('" : "", name ? name : "", name ? "')" : "");
    } else if (added && !host_entity_alive(hs->world->entities, e)) {
        snprintf(what, sizeof what, "entity %s is not alive",
                 host_registry_entity_text(&hs->registry, e, text, sizeof text));
    } else {
        return true;
    }
    host_api_refuse(p, ECS_ERR_INVALID_ARGUMENT, call, what);
    return false;
}

static void component_added(const ecs_host *h, uint32_t bit, ecs_entity e)
{
    HOST_MAIN_THREAD(h, "component_added");
    host_plugin *p = plugin_of(h);
    if (p->in_unload || !report_ok(p, "component_added", bit, e, true)) return;
    if (host_sig_add(&p->session->world->sig, bit, e) != ECS_OK)
        host_api_refuse(p, ECS_ERR_NO_MEMORY, "component_added", "out of memory");
}

static void component_removed(const ecs_host *h, uint32_t bit, ecs_entity e)
{
    HOST_MAIN_THREAD(h, "component_removed");
    host_plugin *p = plugin_of(h);
    if (p->in_unload || !report_ok(p, "component_removed", bit, e, false)) return;
    host_sig_remove(&p->session->world->sig, bit, e); /* a dead e: cleared at its announcement */
}

/* ---- queries: manager names to bits ---- */

typedef struct query_bits {
    uint32_t *with, *without;
    uint32_t nw, nwo;
    uint32_t local[QUERY_LOCAL];
    uint32_t *heap;
} query_bits;

static uint32_t list_length(const char *const *list)
{
    uint32_t n = 0;
    while (list && list[n]) n++;
    return n;
}

/* Bits of names[0..n) into out; a name no manager ever had is refused. */
static ecs_status names_to_bits(host_plugin *p, const char *call, const char *const *names,
                                uint32_t n, uint32_t *out)
{
    for (uint32_t k = 0; k < n; k++) {
        if (host_sig_bit(&p->session->world->sig, names[k], false, &out[k]) == ECS_OK) continue;
        char what[300];
        snprintf(what, sizeof what, "no manager named '%s' was ever registered", names[k]);
        return host_api_refuse(p, ECS_ERR_NOT_FOUND, call, what);
    }
    return ECS_OK;
}

/* Resolve query's names into q (free with query_free). Refusals are logged: a NULL or
 * too small query, an empty `with`, an unknown name, a name both required and excluded. */
static ecs_status query_resolve(host_plugin *p, const char *call, const ecs_query_desc *query,
                                query_bits *q)
{
    memset(q, 0, sizeof *q);
    if (!query) return host_api_refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "query is NULL");
    if (query->struct_size < sizeof *query)
        return host_api_refuse(p, ECS_ERR_ABI, call, "ecs_query_desc.struct_size is too small");
    q->nw = list_length(query->with);
    q->nwo = list_length(query->without);
    if (q->nw == 0)
        return host_api_refuse(p, ECS_ERR_INVALID_ARGUMENT, call,
                               "`with` names no manager: a query needs at least one");
    uint32_t n = q->nw + q->nwo;
    q->with = n <= QUERY_LOCAL ? q->local : (q->heap = malloc(n * sizeof *q->heap));
    if (!q->with) return host_api_refuse(p, ECS_ERR_NO_MEMORY, call, "out of memory");
    q->without = q->with + q->nw;
    ecs_status s = names_to_bits(p, call, query->with, q->nw, q->with);
    if (s == ECS_OK) s = names_to_bits(p, call, query->without, q->nwo, q->without);
    for (uint32_t a = 0; s == ECS_OK && a < q->nw; a++)
        for (uint32_t b = 0; s == ECS_OK && b < q->nwo; b++) {
            if (q->with[a] != q->without[b]) continue;
            char what[300];
            snprintf(what, sizeof what, "manager '%s' is both in `with` and in `without`",
                     query->with[a]);
            s = host_api_refuse(p, ECS_ERR_INVALID_ARGUMENT, call, what);
        }
    return s;
}

static void query_free(query_bits *q)
{
    free(q->heap);
}

/* ---- views ---- */

static ecs_status view_init(const ecs_host *h, const ecs_query_desc *query, ecs_view *v)
{
    HOST_MAIN_THREAD_OR(h, "view_init", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    const char *call = "view_init";
    if (!v) return host_api_refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "v is NULL");
    memset(v, 0, sizeof *v); /* a refused view is an empty one */
    query_bits q;
    ecs_status s = query_resolve(p, call, query, &q);
    uint32_t missing = 0;
    if (s != ECS_OK) { /* refused there */
        query_free(&q);
        return s;
    }
    s = host_view_init(p->session->world, q.with, q.nw, q.without, q.nwo, v, &missing);
    query_free(&q);
    if (s == ECS_OK) return s;
    char what[300];
    const host_session *hs = p->session;
    if (s == ECS_ERR_NOT_FOUND)
        snprintf(what, sizeof what, "manager '%s' %s", host_sig_name(&hs->world->sig, missing),
                 missing < hs->world->sched.by_bit_cap && hs->world->sched.by_bit[missing]
                     ? "offers no index (manager_index)"
                     : "is not loaded");
    else
        snprintf(what, sizeof what, "%s",
                 s == ECS_ERR_NO_MEMORY ? "out of memory" : "more managers than a view takes");
    return host_api_refuse(p, s, call, what);
}

static bool view_next(const ecs_host *h, ecs_view *v, ecs_entity *out)
{
    HOST_MAIN_THREAD_OR(h, "view_next", false);
    if (v && out) return host_view_next(v, h->alive_keys, out);
    host_api_refuse(plugin_of(h), ECS_ERR_INVALID_ARGUMENT, "view_next", "v or out is NULL");
    return false;
}

static uint32_t view_next_many(const ecs_host *h, ecs_view *v, ecs_entity *out, uint32_t max)
{
    HOST_MAIN_THREAD_OR(h, "view_next_many", 0);
    if (v && out) return host_view_next_many(v, h->alive_keys, out, max);
    host_api_refuse(plugin_of(h), ECS_ERR_INVALID_ARGUMENT, "view_next_many", "v or out is NULL");
    return 0;
}

/* ---- collections ---- */

/* The collection of q, with a pending reference for p, into *out. */
static ecs_status take_collection(host_plugin *p, const char *call, const query_bits *q,
                                  ecs_collection *out)
{
    host_session *hs = p->session;
    ecs_collection c = 0;
    size_t n = p->pending_collection_count;
    ecs_collection *v = realloc(p->pending_collections, (n + 1) * sizeof *v);
    if (v) p->pending_collections = v;
    if (!v || host_collections_find(&hs->world->collections, q->with, q->nw, q->without, q->nwo,
                                    &c) != ECS_OK)
        return refuse_in_load(p, ECS_ERR_NO_MEMORY, call, "out of memory");
    v[p->pending_collection_count++] = c;
    *out = c;
    return ECS_OK;
}

static ecs_status collection_create(const ecs_host *h, const ecs_query_desc *query,
                                    ecs_collection *out)
{
    HOST_MAIN_THREAD_OR(h, "collection_create", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    const char *call = "collection_create";
    if (out) *out = 0; /* none, whatever happens */
    if (!p->in_load)
        return host_api_refuse(p, ECS_ERR_WRONG_TIME, call, "only allowed inside load()");
    if (!out) return refuse_in_load(p, ECS_ERR_INVALID_ARGUMENT, call, "out is NULL");
    query_bits q;
    ecs_status s = query_resolve(p, call, query, &q);
    if (s == ECS_OK)
        s = take_collection(p, call, &q, out);
    else
        p->registration_failed = true;
    query_free(&q);
    return s;
}

static uint32_t collection_entities(const ecs_host *h, ecs_collection c, const ecs_entity **out)
{
    HOST_MAIN_THREAD_OR(h, "collection_entities", 0);
    host_plugin *p = plugin_of(h);
    const host_collection *col = host_collections_get(&p->session->world->collections, c);
    if (out && col) return *out = col->dense, col->count;
    char what[64];
    snprintf(what, sizeof what, out ? "no collection %u" : "out is NULL", c);
    host_api_refuse(p, out ? ECS_ERR_NOT_FOUND : ECS_ERR_INVALID_ARGUMENT, "collection_entities",
                    what);
    if (out) *out = NULL;
    return 0;
}

/* ---- systems ---- */

host_system *host_system_named(host_session *hs, host_plugin *p, const char *name)
{
    for (size_t i = 0; i < hs->world->system_count; i++) {
        host_system *s = hs->world->systems[i];
        if (strcmp(s->name, name) == 0 && !(p->reloading && s->owner == p)) return s;
    }
    for (size_t i = 0; i < p->pending_system_count; i++)
        if (strcmp(p->pending_systems[i]->name, name) == 0) return p->pending_systems[i];
    return NULL;
}

void host_system_free(host_system *s)
{
    if (!s) return;
    free(s->name);
    free(s);
}

/* What is wrong with desc's name (NULL when nothing), written into what. */
static ecs_status system_name_problem(host_plugin *p, const char *name, char *what, size_t size)
{
    if (!host_api_valid_name(name)) {
        snprintf(what, size, "name must be 1-63 of [A-Za-z0-9_.-]");
        return ECS_ERR_INVALID_ARGUMENT;
    }
    const host_manager *m = host_manager_named(p->session, p, name);
    const host_system *s = m ? NULL : host_system_named(p->session, p, name);
    if (!m && !s) return ECS_OK;
    const host_plugin *o = m ? m->owner : s->owner;
    snprintf(what, size, "%s '%s' is already registered by plugin '%s' (%s)",
             m ? "a manager" : "system", name, o->name, o->file);
    return ECS_ERR_EXISTS;
}

/* A new system record for desc, run over collection c; NULL when memory ran out. */
static host_system *system_new(host_plugin *p, const ecs_system_desc *desc, ecs_collection c)
{
    host_system *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(desc->name))) {
        free(s);
        return NULL;
    }
    s->desc = *desc;
    s->desc.struct_size = sizeof s->desc;
    s->desc.name = s->name;
    s->desc.query = (ecs_query_desc){0, NULL, NULL}; /* the plugin's lists: not kept */
    s->owner = p;
    s->world = p->session->world;
    s->collection = c;
    s->seq = p->session->world->sched.next_seq++;
    s->call = (host_call){p->name, "run", s->name};
    return s;
}

static ecs_status register_system(const ecs_host *h, const ecs_system_desc *desc)
{
    HOST_MAIN_THREAD_OR(h, "register_system", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    const char *call = "register_system";
    char what[300];
    if (!p->in_load)
        return host_api_refuse(p, ECS_ERR_WRONG_TIME, call, "only allowed inside load()");
    if (!desc || !desc->name || !desc->run)
        return refuse_in_load(p, ECS_ERR_INVALID_ARGUMENT, call, "desc, its name or run is NULL");
    if (desc->struct_size < sizeof *desc)
        return refuse_in_load(p, ECS_ERR_ABI, call, "ecs_system_desc.struct_size is too small");
    ecs_status s = system_name_problem(p, desc->name, what, sizeof what);
    if (s != ECS_OK) return refuse_in_load(p, s, call, what);
    query_bits q;
    ecs_collection c = 0;
    s = query_resolve(p, call, &desc->query, &q);
    if (s == ECS_OK) s = take_collection(p, call, &q, &c);
    query_free(&q);
    host_system *sys = NULL, **v = NULL;
    if (s == ECS_OK &&
        (!(v = realloc(p->pending_systems, (p->pending_system_count + 1) * sizeof *v)) ||
         !(sys = system_new(p, desc, c)))) {
        if (v) p->pending_systems = v;
        s = host_api_refuse(p, ECS_ERR_NO_MEMORY, call, "out of memory");
    }
    if (s != ECS_OK) {
        p->registration_failed = true;
        return s;
    }
    p->pending_systems = v;
    v[p->pending_system_count++] = sys;
    return ECS_OK;
}

void host_api_init_query(ecs_host *t)
{
    t->manager_index = manager_index;
    t->signature_bit = signature_bit;
    t->component_added = component_added;
    t->component_removed = component_removed;
    t->view_init = view_init;
    t->view_next = view_next;
    t->view_next_many = view_next_many;
    t->collection_create = collection_create;
    t->collection_entities = collection_entities;
    t->register_system = register_system;
}
