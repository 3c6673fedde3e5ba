/* SPDX-License-Identifier: MIT */
/* debug_name_api.h: the API the debug_name plugin publishes ("ecs.debug_name", v1).
 *
 * At most one name per entity. Names are copied (no pointer into the caller's memory is
 * kept), 1 to ECS_DEBUG_NAME_MAX - 1 bytes, any UTF-8 but no control characters.
 * find() returns the entity that most recently received that name among those that
 * still have it. [main-thread] everything.
 */
#ifndef ECS_DEBUG_NAME_API_H
#define ECS_DEBUG_NAME_API_H

#include "ecs_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ECS_DEBUG_NAME_API_NAME    "ecs.debug_name"
#define ECS_DEBUG_NAME_API_VERSION 1u
#define ECS_DEBUG_NAME_MAX         256u

typedef struct ecs_debug_name_api {
    uint32_t struct_size;
    void *self;

    /* Name e (replacing its name). ECS_ERR_STALE_ENTITY for a dead entity,
     * ECS_ERR_BAD_VALUE for an empty, too long or control-character name. */
    ecs_status (*set)(void *self, ecs_entity e, const char *name);
    /* e's name, or NULL. Valid until e's name changes or e is destroyed. */
    const char *(*get)(void *self, ecs_entity e);
    /* Remove e's name. ECS_ERR_NOT_FOUND when it has none. */
    ecs_status (*clear)(void *self, ecs_entity e);
    /* The entity named name, or the null entity. */
    ecs_entity (*find)(void *self, const char *name);
    /* Write "name#index.gen" (or "#index.gen" without a name) into buf; returns buf. */
    const char *(*format)(void *self, ecs_entity e, char *buf, size_t size);
    uint32_t (*count)(void *self);
} ecs_debug_name_api;

#ifdef __cplusplus
}
#endif

#endif
