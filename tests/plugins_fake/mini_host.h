/* SPDX-License-Identifier: MIT */
/* mini_host.h: a fake host for tests of a plugin's own life cycle (header-only).
 *
 * The real host cannot yet hand a plugin's state to its next version, so reload tests
 * drive a plugin through this small ecs_host instead: dlopen the .so, call its load()
 * (optionally with a previous state), unload(reason), and load it again. The table
 * counts every byte and block the plugin holds (so a test can prove a shutdown frees
 * everything and a keep-state unload frees nothing), keeps what the plugin registers and
 * publishes, offers APIs a test provides (a fake transform), and counts error logs.
 * Entities: index i is alive while generations[i] equals the id's generation; the test
 * makes and kills them with mini_entity() / mini_kill().
 */
#ifndef TESTS_MINI_HOST_H
#define TESTS_MINI_HOST_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_plugin.h"

#define MINI_ENTITIES 256
#define MINI_APIS     4

typedef struct mini_api {
    char name[64];
    uint32_t version;
    const void *bytes; /* published: points into `copy`; provided: the test's struct */
    size_t size;
    unsigned char copy[512];
} mini_api;

typedef struct mini_account {
    size_t bytes, blocks; /* held by the plugin now */
} mini_account;

typedef struct mini_host {
    ecs_host table; /* first: the callbacks cast the table back */
    uint8_t generations[MINI_ENTITIES];
    uint16_t keys[MINI_ENTITIES]; /* alive keys: generation + 256 (0 for index 0) */
    ecs_frame_info frame;
    ecs_manager_desc manager; /* the last manager registered */
    int managers;
    mini_api apis[MINI_APIS];
    int api_count;
    mini_account own;
    mini_account *account; /* &own, or a previous table's: memory outlives a reload */
    int errors;            /* ECS_LOG_ERROR lines */
    bool retired;          /* a reload replaced this table: the plugin must not call it */
    int retired_calls;
    bool in_load;
    void *dl;
    const ecs_plugin_desc *desc;
} mini_host;

typedef struct mini_block { /* in front of every allocation, keeps 16-byte alignment */
    size_t size;
    size_t magic;
} mini_block;

#define MINI_MAGIC ((size_t)0x6d696e69686f7374ull)

/* The mini host of table h, counting a call through a retired table. */
static inline mini_host *mini_of(const ecs_host *h)
{
    mini_host *m = (mini_host *)(uintptr_t)h;
    if (m->retired) m->retired_calls++;
    return m;
}

static inline void *mini_alloc(const ecs_host *h, size_t size)
{
    if (size == 0) return NULL;
    mini_block *b = (mini_block *)malloc(sizeof *b + size);
    if (!b) return NULL;
    b->size = size;
    b->magic = MINI_MAGIC;
    mini_of(h)->account->bytes += size;
    mini_of(h)->account->blocks++;
    return b + 1;
}

static inline void mini_free(const ecs_host *h, void *ptr)
{
    if (!ptr) return;
    mini_block *b = (mini_block *)ptr - 1;
    if (b->magic != MINI_MAGIC) {
        mini_of(h)->errors++;
        return;
    }
    mini_of(h)->account->bytes -= b->size;
    mini_of(h)->account->blocks--;
    b->magic = 0;
    free(b);
}

static inline void *mini_realloc(const ecs_host *h, void *ptr, size_t size)
{
    if (!ptr) return mini_alloc(h, size);
    if (size == 0) return mini_free(h, ptr), NULL;
    void *out = mini_alloc(h, size);
    if (!out) return NULL;
    size_t old = ((mini_block *)ptr - 1)->size;
    memcpy(out, ptr, old < size ? old : size);
    mini_free(h, ptr);
    return out;
}

static inline void mini_logv(const ecs_host *h, ecs_log_level level, const char *fmt, va_list ap)
{
    if (level == ECS_LOG_ERROR) mini_of(h)->errors++;
    fprintf(stderr, "[mini-host %d] ", (int)level);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

static inline void mini_log(const ecs_host *h, ecs_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mini_logv(h, level, fmt, ap);
    va_end(ap);
}

static inline ecs_status mini_register(const ecs_host *h, const ecs_manager_desc *desc)
{
    mini_host *m = mini_of(h);
    if (!m->in_load) return ECS_ERR_WRONG_TIME;
    m->manager = *desc;
    m->managers++;
    return ECS_OK;
}

static inline mini_api *mini_api_slot(mini_host *m, const char *name)
{
    for (int i = 0; i < m->api_count; i++)
        if (strcmp(m->apis[i].name, name) == 0) return &m->apis[i];
    if (m->api_count == MINI_APIS) return NULL;
    mini_api *a = &m->apis[m->api_count++];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    return a;
}

static inline ecs_status mini_publish(const ecs_host *h, const char *name, uint32_t version,
                                      const void *api, size_t size)
{
    mini_host *m = mini_of(h);
    mini_api *a = mini_api_slot(m, name);
    if (!m->in_load) return ECS_ERR_WRONG_TIME;
    if (!a || size > sizeof a->copy) return ECS_ERR_NO_MEMORY;
    memcpy(a->copy, api, size);
    a->bytes = a->copy;
    a->size = size;
    a->version = version;
    return ECS_OK;
}

static inline const void *mini_find(const ecs_host *h, const char *name, uint32_t min_version,
                                    size_t *size)
{
    mini_host *m = mini_of(h);
    for (int i = 0; i < m->api_count; i++) {
        const mini_api *a = &m->apis[i];
        if (strcmp(a->name, name) == 0 && a->bytes && a->version >= min_version) {
            if (size) *size = a->size;
            return a->bytes;
        }
    }
    return NULL;
}

static inline bool mini_alive(const ecs_host *h, ecs_entity e)
{
    return ecs_alive(h, e);
}

static inline ecs_status mini_resolve(const ecs_host *h, const char *id, ecs_entity *out)
{
    if (out) *out = ecs_entity_null();
    return ECS_ERR_WRONG_TIME;
}

/* Every index but 0 is live at its generation: the alive keys follow the generations. */
static inline void mini_sync_keys(mini_host *m)
{
    m->keys[0] = 0;
    for (uint32_t i = 1; i < MINI_ENTITIES; i++) m->keys[i] = (uint16_t)(m->generations[i] + 256u);
}

/* A fresh table with its own account. Index 0 is never alive (its byte is 0xFF, the null
 * id's generation 0). */
static inline void mini_init(mini_host *m)
{
    memset(m, 0, sizeof *m);
    m->account = &m->own;
    ecs_host *t = &m->table;
    t->struct_size = sizeof *t;
    t->abi_major = ECS_ABI_MAJOR;
    t->abi_minor = ECS_ABI_MINOR;
    t->generations = m->generations;
    t->alive_keys = m->keys;
    t->frame = &m->frame;
    t->entity_alive = mini_alive;
    t->register_manager = mini_register;
    t->api_publish = mini_publish;
    t->api_find = mini_find;
    t->log = mini_log;
    t->logv = mini_logv;
    t->alloc = mini_alloc;
    t->realloc = mini_realloc;
    t->free = mini_free;
    t->scene_resolve = mini_resolve;
    t->plugin_name = "mini";
    m->generations[0] = 0xFF;
    mini_sync_keys(m);
}

/* Offer api[0..size) under name to the plugin (the test keeps it alive). */
static inline void mini_provide(mini_host *m, const char *name, uint32_t version, const void *api,
                                size_t size)
{
    mini_api *a = mini_api_slot(m, name);
    if (!a) return;
    a->bytes = api;
    a->size = size;
    a->version = version;
}

/* The live entity at index (1 <= index < MINI_ENTITIES). */
static inline ecs_entity mini_entity(const mini_host *m, uint32_t index)
{
    return ecs_entity_make(index, m->generations[index]);
}

static inline void mini_kill(mini_host *m, ecs_entity e)
{
    m->generations[ecs_entity_index(e)]++;
    mini_sync_keys(m);
}

/* dlopen path and read its description into m->desc. Returns 0, or -1 with a message. */
static inline int mini_open(mini_host *m, const char *path)
{
    m->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *entry = m->dl ? dlsym(m->dl, ECS_PLUGIN_ENTRY_NAME) : NULL;
    if (!entry) {
        fprintf(stderr, "mini-host: %s: %s\n", path, dlerror());
        return -1;
    }
    ecs_plugin_entry_fn fn;
    memcpy(&fn, &entry, sizeof fn);
    m->desc = fn();
    return m->desc ? 0 : -1;
}

/* Call the plugin's load() with previous (NULL: a fresh load); its state in *state. */
static inline ecs_status mini_load(mini_host *m, void *previous, void **state)
{
    ecs_load_args args = {sizeof args, previous};
    m->in_load = true;
    ecs_status s = m->desc->load(&m->table, &args, state);
    m->in_load = false;
    return s;
}

/* A second table for the next version of m's plugin (open it with mini_open): the same
 * account, entities and provided APIs; m is retired. */
static inline void mini_successor(mini_host *next, mini_host *m)
{
    mini_init(next);
    next->account = m->account;
    memcpy(next->generations, m->generations, sizeof next->generations);
    mini_sync_keys(next);
    memcpy(next->apis, m->apis, sizeof next->apis);
    next->api_count = m->api_count;
    for (int i = 0; i < next->api_count; i++)
        if (m->apis[i].bytes == m->apis[i].copy) next->apis[i].bytes = NULL; /* republished */
    m->retired = true;
}

static inline void mini_close(mini_host *m)
{
    if (m->dl) dlclose(m->dl);
    m->dl = NULL;
}

#endif
