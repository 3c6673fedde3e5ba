/* SPDX-License-Identifier: MIT */
/* hostapi.c: the ecs_host table each plugin receives: entities, registration, APIs,
 * logging, memory, scenes (views, collections and systems: hostapi_query.c). Every function
 * checks what the plugin passed (ecs_check style): a bad call is refused with a status and one
 * log line naming the plugin, and never reaches an assert. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "log.h"
#include "scene.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

static host_plugin *plugin_of(const ecs_host *h)
{
    return (host_plugin *)(uintptr_t)h;
}

static ecs_status refuse(host_plugin *p, ecs_status s, const char *call, const char *what)
{
    return host_api_refuse(p, s, call, what);
}

/* During load(): remember out[0..n), created by a load the host may still refuse (then
 * they are destroyed: a refused load leaves no trace). ECS_ERR_NO_MEMORY: none kept. */
static ecs_status note_created(host_plugin *p, const ecs_entity *out, uint32_t n)
{
    if (!p->in_load || n == 0) return ECS_OK;
    if (p->pending_entity_count + n > p->pending_entity_cap) {
        size_t cap = p->pending_entity_cap ? p->pending_entity_cap : 16;
        while (cap < p->pending_entity_count + n) cap *= 2;
        ecs_entity *v = realloc(p->pending_entities, cap * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        p->pending_entities = v;
        p->pending_entity_cap = cap;
    }
    memcpy(p->pending_entities + p->pending_entity_count, out, n * sizeof *out);
    p->pending_entity_count += n;
    return ECS_OK;
}

static ecs_status create(host_plugin *p, ecs_entity *out, uint32_t n, const char *call)
{
    if (!out && n) return refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "out is NULL");
    ecs_status s = host_entity_create_many(p->session->world->entities, out, n);
    if (s == ECS_OK && note_created(p, out, n) != ECS_OK) { /* untracked, they could outlive it */
        host_entity_destroy_many(p->session->world->entities, out, n, NULL);
        s = ECS_ERR_NO_MEMORY;
    }
    if (s != ECS_OK) refuse(p, s, call, "no entity created");
    return s;
}

static ecs_status entity_create(const ecs_host *h, ecs_entity *out)
{
    HOST_MAIN_THREAD_OR(h, "entity_create", ECS_ERR_WRONG_TIME);
    return create(plugin_of(h), out, 1, "entity_create");
}

static ecs_status entity_create_many(const ecs_host *h, ecs_entity *out, uint32_t n)
{
    HOST_MAIN_THREAD_OR(h, "entity_create_many", ECS_ERR_WRONG_TIME);
    return create(plugin_of(h), out, n, "entity_create_many");
}

static ecs_status entity_destroy(const ecs_host *h, ecs_entity e)
{
    HOST_MAIN_THREAD_OR(h, "entity_destroy", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    ecs_status s = host_entity_destroy(p->session->world->entities, e);
    if (s != ECS_OK) {
        char text[300];
        host_warn(p->name, "entity_destroy: entity %s is not alive: nothing done",
                  host_registry_entity_text(&p->session->registry, e, text, sizeof text));
    }
    return s;
}

static ecs_status entity_destroy_many(const ecs_host *h, const ecs_entity *list, uint32_t n)
{
    HOST_MAIN_THREAD_OR(h, "entity_destroy_many", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    if (!list && n)
        return refuse(p, ECS_ERR_INVALID_ARGUMENT, "entity_destroy_many", "list is NULL");
    uint32_t done = 0;
    ecs_status s = host_entity_destroy_many(p->session->world->entities, list, n, &done);
    if (s != ECS_OK)
        host_warn(p->name, "entity_destroy_many: %u of %u entities were not alive: skipped",
                  n - done, n);
    return s;
}

static bool entity_alive(const ecs_host *h, ecs_entity e) /* [job] too: it only reads */
{
    if (!host_jobs_in_job()) HOST_MAIN_THREAD_OR(h, "entity_alive", false);
    return host_entity_alive(plugin_of(h)->session->world->entities, e);
}

#define MANAGER_DESC_V1_SIZE (offsetof(ecs_manager_desc, load_component) + sizeof(void *))

static ecs_status register_manager(const ecs_host *h, const ecs_manager_desc *desc)
{
    HOST_MAIN_THREAD_OR(h, "register_manager", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    const char *call = "register_manager";
    ecs_status s = ECS_OK;
    if (!p->in_load) return refuse(p, ECS_ERR_WRONG_TIME, call, "only allowed inside load()");
    if (!desc || !desc->name)
        s = refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "desc or name NULL");
    else if (desc->struct_size < MANAGER_DESC_V1_SIZE)
        s = refuse(p, ECS_ERR_ABI, call, "ecs_manager_desc.struct_size is too small");
    else if (!host_api_valid_name(desc->name))
        s = refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "name must be 1-63 of [A-Za-z0-9_.-]");
    else {
        host_manager *other = host_manager_named(p->session, p, desc->name);
        host_system *sys = other ? NULL : host_system_named(p->session, p, desc->name);
        if (other || sys) {
            const host_plugin *o = other ? other->owner : sys->owner;
            char what[300];
            snprintf(what, sizeof what, "%s '%s' is already registered by plugin '%s' (%s)",
                     other ? "manager" : "system", desc->name, o->name, o->file);
            s = refuse(p, ECS_ERR_EXISTS, call, what);
        }
    }
    host_manager *m = NULL, **v = NULL;
    if (s == ECS_OK &&
        (!(m = calloc(1, sizeof *m)) || !(m->name = strdup(desc->name)) ||
         !(v = realloc(p->pending_managers, (p->pending_manager_count + 1) * sizeof *v)) ||
         host_sig_bit(&p->session->world->sig, desc->name, true, &m->bit) != ECS_OK)) {
        if (v) p->pending_managers = v; /* grown: kept */
        s = refuse(p, ECS_ERR_NO_MEMORY, call, "out of memory");
    }
    if (s != ECS_OK) {
        if (m) free(m->name);
        free(m);
        p->registration_failed = true;
        return s;
    }
    size_t n = desc->struct_size < sizeof m->desc ? desc->struct_size : sizeof m->desc;
    memcpy(&m->desc, desc, n); /* fields of a later minor than the plugin's stay zero */
    m->desc.struct_size = sizeof m->desc;
    m->desc.name = m->name;
    m->owner = p;
    m->seq = p->session->world->sched.next_seq++;
    m->update_call = (host_call){p->name, "update", m->name};
    m->destroyed_call = (host_call){p->name, "entities_destroyed", m->name};
    p->pending_managers = v;
    v[p->pending_manager_count++] = m;
    return ECS_OK;
}

static ecs_status api_publish(const ecs_host *h, const char *name, uint32_t version,
                              const void *api, size_t size)
{
    HOST_MAIN_THREAD_OR(h, "api_publish", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    const char *call = "api_publish";
    if (!p->in_load) return refuse(p, ECS_ERR_WRONG_TIME, call, "only allowed inside load()");
    ecs_status s = ECS_OK;
    if (!name || !api || size == 0 || size > 65536)
        s = refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "need a name and 1..65536 bytes of API");
    else if (!host_api_valid_name(name))
        s = refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "name must be 1-63 of [A-Za-z0-9_.-]");
    const host_api_entry *e = s == ECS_OK ? host_registry_entry(&p->session->registry, name) : NULL;
    if (e && e->owner && e->owner != p) {
        const host_plugin *o = e->owner;
        char what[300];
        snprintf(what, sizeof what, "API '%s' is already published by plugin '%s' (%s)", name,
                 o->name, o->file);
        s = refuse(p, ECS_ERR_EXISTS, call, what);
    }
    for (size_t i = 0; s == ECS_OK && i < p->pending_api_count; i++)
        if (strcmp(p->pending_apis[i].name, name) == 0)
            s = refuse(p, ECS_ERR_EXISTS, call, "the plugin publishes this name twice");
    host_pending_api *v = NULL;
    void *bytes = NULL;
    char *copy = NULL;
    if (s == ECS_OK && (!(bytes = malloc(size)) || !(copy = strdup(name)) ||
                        !(v = realloc(p->pending_apis, (p->pending_api_count + 1) * sizeof *v)))) {
        s = refuse(p, ECS_ERR_NO_MEMORY, call, "out of memory");
    }
    if (s != ECS_OK) {
        free(bytes);
        free(copy);
        p->registration_failed = true;
        return s;
    }
    memcpy(bytes, api, size);
    p->pending_apis = v;
    v[p->pending_api_count++] = (host_pending_api){copy, version, bytes, size};
    return ECS_OK;
}

/* p found API name (min_version): remember it, p depends on its provider from now on. */
static void note_use(host_plugin *p, const char *name, uint32_t min_version)
{
    for (size_t i = 0; i < p->use_count; i++) {
        if (strcmp(p->uses[i].name, name) != 0) continue;
        if (min_version > p->uses[i].min_version) p->uses[i].min_version = min_version;
        return;
    }
    host_api_use *v = realloc(p->uses, (p->use_count + 1) * sizeof *v);
    char *copy = v ? strdup(name) : NULL;
    if (v) p->uses = v;
    if (!copy) return; /* not known: it is not parked before its provider goes */
    p->uses[p->use_count++] = (host_api_use){copy, min_version};
}

static const void *api_find(const ecs_host *h, const char *name, uint32_t min_version, size_t *size)
{
    HOST_MAIN_THREAD_OR(h, "api_find", NULL);
    if (!name) return NULL;
    host_plugin *p = plugin_of(h);
    const void *api = host_registry_find(&p->session->registry, name, min_version, size);
    const host_api_entry *e = api ? host_registry_entry(&p->session->registry, name) : NULL;
    if (e && e->owner != p) note_use(p, name, min_version);
    if (!api && p->in_load && strlen(name) < sizeof p->missing_api) { /* what a load waits for */
        memcpy(p->missing_api, name, strlen(name) + 1);
        p->missing_version = min_version;
    }
    return api;
}

static void plugin_logv(const ecs_host *h, ecs_log_level level, const char *fmt, va_list ap)
{
    HOST_MAIN_THREAD(h, "logv");
    if (!fmt) return;
    host_logv(level, plugin_of(h)->name, fmt, ap);
}

static void plugin_log(const ecs_host *h, ecs_log_level level, const char *fmt, ...)
{
    HOST_MAIN_THREAD(h, "log");
    va_list ap;
    va_start(ap, fmt);
    plugin_logv(h, level, fmt, ap);
    va_end(ap);
}

static void *mem_alloc(const ecs_host *h, size_t size)
{
    HOST_MAIN_THREAD_OR(h, "alloc", NULL);
    host_plugin *p = plugin_of(h);
    return host_mem_alloc(p->attempting ? &p->attempt_mem : &p->mem, size);
}

static void *mem_realloc(const ecs_host *h, void *ptr, size_t size)
{
    HOST_MAIN_THREAD_OR(h, "realloc", NULL);
    host_plugin *p = plugin_of(h);
    int bad = 0;
    void *out = host_mem_realloc(p->attempting ? &p->attempt_mem : &p->mem, ptr, size, &bad);
    if (bad)
        host_error(p->name, "realloc: %p was not allocated by the host (or freed): refused", ptr);
    return out;
}

static void mem_free(const ecs_host *h, void *ptr)
{
    HOST_MAIN_THREAD(h, "free");
    if (host_mem_free(ptr) != 0)
        host_error(plugin_of(h)->name,
                   "free: %p was not allocated by the host (or freed "
                   "already): refused",
                   ptr);
}

static ecs_status scene_resolve(const ecs_host *h, const char *scene_id, ecs_entity *out)
{
    HOST_MAIN_THREAD_OR(h, "scene_resolve", ECS_ERR_WRONG_TIME);
    return host_scene_resolve(plugin_of(h)->session->scene, scene_id, out);
}

static const char *scene_id_of(const ecs_host *h, ecs_entity e)
{
    HOST_MAIN_THREAD_OR(h, "scene_id_of", NULL);
    return host_scene_id_of(plugin_of(h)->session->scene, e);
}

static void scene_error(const ecs_host *h, const struct cJSON *at, const char *fmt, ...)
{
    HOST_MAIN_THREAD(h, "scene_error");
    char msg[512] = "";
    va_list ap;
    va_start(ap, fmt);
    if (fmt) vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    host_plugin *p = plugin_of(h);
    if (host_scene_loading(p->session->scene))
        host_scene_error(p->session->scene, at, msg);
    else
        host_error(p->name, "%s", msg);
}

/* Two-phase adoption: fn hears whether the host accepts this load (plugin.h). */
static ecs_status on_commit(const ecs_host *h, void (*fn)(const ecs_host *h, void *arg, bool),
                            void *arg)
{
    HOST_MAIN_THREAD_OR(h, "on_commit", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    if (!p->in_load)
        return refuse(p, ECS_ERR_WRONG_TIME, "on_commit", "only allowed inside load()");
    p->commit_fn = fn; /* NULL: none */
    p->commit_arg = arg;
    return ECS_OK;
}

/* The plugin's own state, beside its components (plugin.h, pstate.h). */
static ecs_status plugin_state(const ecs_host *h, const ecs_plugin_state_desc *desc)
{
    HOST_MAIN_THREAD_OR(h, "plugin_state", ECS_ERR_WRONG_TIME);
    host_plugin *p = plugin_of(h);
    const char *call = "plugin_state";
    size_t v1 = offsetof(ecs_plugin_state_desc, read) + sizeof desc->read;
    ecs_status s = ECS_OK;
    if (!p->in_load) return refuse(p, ECS_ERR_WRONG_TIME, call, "only allowed inside load()");
    if (!desc || desc->struct_size < v1)
        s = refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "desc NULL or struct_size too small");
    else if (!desc->write || !desc->read)
        s = refuse(p, ECS_ERR_INVALID_ARGUMENT, call, "it needs both write and read");
    else if (p->has_pending_pstate)
        s = refuse(p, ECS_ERR_EXISTS, call, "the plugin offers its state twice");
    if (s != ECS_OK) {
        p->registration_failed = true;
        return s;
    }
    memset(&p->pending_pstate, 0, sizeof p->pending_pstate);
    memcpy(&p->pending_pstate, desc, v1); /* fields of a later minor stay zero */
    p->pending_pstate.struct_size = sizeof p->pending_pstate;
    p->has_pending_pstate = true;
    return ECS_OK;
}

void host_api_init(host_plugin *p)
{
    ecs_host *t = &p->table;
    memset(t, 0, sizeof *t);
    t->struct_size = sizeof *t;
    t->abi_major = ECS_ABI_MAJOR;
    t->abi_minor = ECS_ABI_MINOR;
    t->generations = host_entities_generations(p->session->world->entities);
    t->alive_keys = host_entities_alive_keys(p->session->world->entities);
    t->frame = &p->session->world->frame;
    t->entity_create = entity_create;
    t->entity_create_many = entity_create_many;
    t->entity_destroy = entity_destroy;
    t->entity_destroy_many = entity_destroy_many;
    t->entity_alive = entity_alive;
    t->register_manager = register_manager;
    t->api_publish = api_publish;
    t->api_find = api_find;
    t->log = plugin_log;
    t->logv = plugin_logv;
    t->alloc = mem_alloc;
    t->realloc = mem_realloc;
    t->free = mem_free;
    t->scene_resolve = scene_resolve;
    t->scene_id_of = scene_id_of;
    t->scene_error = scene_error;
    t->plugin_name = p->name;
    t->config = p->config;
    host_api_init_query(t);
    t->on_commit = on_commit;
    t->plugin_state = plugin_state;
    host_api_init_jobs(t);
}
