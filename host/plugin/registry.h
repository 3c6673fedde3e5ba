/* SPDX-License-Identifier: MIT */
/* registry.h: the named, versioned APIs plugins publish for each other.
 *
 * The host copies each API struct into storage it owns. An entry is never freed or
 * moved while the host runs: when its provider is reloaded, the new version's bytes are
 * written over the same storage, so a pointer another plugin got from find stays valid
 * and calls the new code. Withdrawing (the provider unloaded) zeroes the bytes and hides
 * the entry from find; publishing the same name again reuses the storage.
 */
#ifndef HOST_REGISTRY_H
#define HOST_REGISTRY_H

#include "ecs_plugin.h"

typedef struct host_api_entry {
    char *name;
    uint32_t version;
    size_t size;     /* bytes of the current struct */
    size_t capacity; /* bytes of storage; a republished struct may grow up to it */
    void *storage;
    const void *owner; /* the plugin that publishes it; NULL when withdrawn */
} host_api_entry;

typedef struct host_registry {
    host_api_entry **entries;
    size_t count, cap;
} host_registry;

/* The entry for name, published or withdrawn; NULL when the name was never used. */
host_api_entry *host_registry_entry(const host_registry *reg, const char *name);

/* Publish api[0..size) under name for owner, or rewrite it in place when the entry
 * exists and is withdrawn or owned by owner. ECS_ERR_EXISTS when another owner holds it,
 * ECS_ERR_BAD_VALUE when size exceeds the entry's capacity, ECS_ERR_NO_MEMORY. On error
 * nothing changes. */
ecs_status host_registry_publish(host_registry *reg, const void *owner, const char *name,
                                 uint32_t version, const void *api, size_t size);

/* Could owner publish size bytes under name now: ECS_OK, ECS_ERR_EXISTS (another owner
 * holds it) or ECS_ERR_BAD_VALUE (more than the entry's storage, its size in *room; room
 * may be NULL). Changes nothing. */
ecs_status host_registry_check(const host_registry *reg, const void *owner, const char *name,
                               size_t size, size_t *room);

/* The published API name with version >= min_version, its size in *size (may be NULL);
 * NULL when there is none. */
const void *host_registry_find(const host_registry *reg, const char *name, uint32_t min_version,
                               size_t *size);

/* Withdraw every API owner published. */
void host_registry_withdraw(host_registry *reg, const void *owner);

/* Free every entry (at exit). */
void host_registry_free(host_registry *reg);

/* Write e for a log line into buf: "name#index.gen" through the SDK's "ecs.names" API
 * (ecs_describe.h) when a plugin publishes it and e has a name, else "#index.gen".
 * Returns buf. */
const char *host_registry_entity_text(const host_registry *reg, ecs_entity e, char *buf,
                                      size_t size);

#endif
