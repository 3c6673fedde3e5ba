/* SPDX-License-Identifier: MIT */
/* registry.c: named, versioned APIs in host-owned, never-moving storage (registry.h).
 * A linear list: plugins publish a handful of APIs and look them up at load time. */
#include "registry.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_describe.h"

#define MIN_CAPACITY 256 /* room for an API struct to grow across reloads */

host_api_entry *host_registry_entry(const host_registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->count; i++)
        if (strcmp(reg->entries[i]->name, name) == 0) return reg->entries[i];
    return NULL;
}

static host_api_entry *entry_new(host_registry *reg, const char *name, size_t size)
{
    if (reg->count == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 16;
        host_api_entry **v = realloc(reg->entries, cap * sizeof *v);
        if (!v) return NULL;
        reg->entries = v;
        reg->cap = cap;
    }
    host_api_entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->capacity = size * 2 > MIN_CAPACITY ? size * 2 : MIN_CAPACITY;
    e->storage = calloc(1, e->capacity);
    e->name = strdup(name);
    if (!e->storage || !e->name) {
        free(e->storage);
        free(e->name);
        free(e);
        return NULL;
    }
    reg->entries[reg->count++] = e;
    return e;
}

ecs_status host_registry_check(const host_registry *reg, const void *owner, const char *name,
                               size_t size, size_t *room)
{
    const host_api_entry *e = host_registry_entry(reg, name);
    if (e && e->owner && e->owner != owner) return ECS_ERR_EXISTS;
    if (room) *room = e ? e->capacity : 0;
    return e && size > e->capacity ? ECS_ERR_BAD_VALUE : ECS_OK;
}

ecs_status host_registry_publish(host_registry *reg, const void *owner, const char *name,
                                 uint32_t version, const void *api, size_t size)
{
    host_api_entry *e = host_registry_entry(reg, name);
    ecs_status s = host_registry_check(reg, owner, name, size, NULL);
    if (s != ECS_OK) return s;
    if (!e && !(e = entry_new(reg, name, size))) return ECS_ERR_NO_MEMORY;
    memcpy(e->storage, api, size);
    memset((char *)e->storage + size, 0, e->capacity - size);
    e->size = size;
    e->version = version;
    e->owner = owner;
    return ECS_OK;
}

const void *host_registry_find(const host_registry *reg, const char *name, uint32_t min_version,
                               size_t *size)
{
    const host_api_entry *e = host_registry_entry(reg, name);
    if (!e || !e->owner || e->version < min_version) return NULL;
    if (size) *size = e->size;
    return e->storage;
}

void host_registry_withdraw(host_registry *reg, const void *owner)
{
    for (size_t i = 0; i < reg->count; i++) {
        host_api_entry *e = reg->entries[i];
        if (e->owner != owner) continue;
        memset(e->storage, 0, e->capacity);
        e->owner = NULL;
    }
}

void host_registry_free(host_registry *reg)
{
    for (size_t i = 0; i < reg->count; i++) {
        free(reg->entries[i]->storage);
        free(reg->entries[i]->name);
        free(reg->entries[i]);
    }
    free(reg->entries);
    memset(reg, 0, sizeof *reg);
}

const char *host_registry_entity_text(const host_registry *reg, ecs_entity e, char *buf,
                                      size_t size)
{
    size_t n = 0;
    const ecs_names_api *names =
        host_registry_find(reg, ECS_NAMES_API_NAME, ECS_NAMES_API_VERSION, &n);
    bool has_get = names && n >= offsetof(ecs_names_api, get) + sizeof names->get && names->get;
    const char *name = has_get ? names->get(names->self, e) : NULL;
    snprintf(buf, size, "%s#%u.%u", name ? name : "", ecs_entity_index(e),
             ecs_entity_generation(e));
    return buf;
}
