/* SPDX-License-Identifier: MIT */
/* ecs_describe.h: APIs a plugin may publish so that tools see into its data without
 * knowing the plugin (C11, also valid C++; needs only ecs_plugin.h).
 *
 * The host's tools (the inspector's list and search, log lines) look these up in the API
 * registry by name, like any plugin would with api_find(): a plugin that publishes one is
 * described, one that does not is shown by what its scene JSON says. Each is a plain
 * named, versioned API: one provider per name (a second publisher's load is refused, as for
 * every API name), struct_size first, fields only appended within a version.
 *
 *   "ecs.names" v1      a name per entity (the bundled debug_name plugin publishes it)
 *   "ecs.hierarchy" v1  parents and children (transform)
 *   "ecs.position" v1   where an entity is in the world (transform)
 *   "ecs.bounds" v1     the box an entity fills in the world (mesh)
 *
 * Every function is [main-thread] and must be cheap: a tool may call it once per entity of
 * a world of millions, a slice of them per frame.
 */
#ifndef ECS_DESCRIBE_H
#define ECS_DESCRIBE_H

#include "ecs_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ECS_NAMES_API_NAME    "ecs.names"
#define ECS_NAMES_API_VERSION 1u

/* Entity names: what a person calls an entity ("House 1 door"), any UTF-8 without
 * control characters. */
typedef struct ecs_names_api {
    uint32_t struct_size; /* sizeof(ecs_names_api) as the provider was built */
    void *self;
    /* e's name, NUL-terminated, or NULL when it has none (or is not alive). Valid until
     * e's name changes or e is destroyed; the caller copies what it keeps. */
    const char *(*get)(void *self, ecs_entity e);
} ecs_names_api;

#define ECS_HIERARCHY_API_NAME    "ecs.hierarchy"
#define ECS_HIERARCHY_API_VERSION 1u

/* A tree of entities: each has at most one parent; its children are a list. An entity
 * outside the hierarchy reads as a root without children. */
typedef struct ecs_hierarchy_api {
    uint32_t struct_size;
    void *self;
    /* e's parent, or the null entity (a root, or not in the hierarchy). */
    ecs_entity (*parent)(void *self, ecs_entity e);
    /* e's first child, or the null entity. */
    ecs_entity (*first_child)(void *self, ecs_entity e);
    /* The child after e among its parent's children, or the null entity. */
    ecs_entity (*next_sibling)(void *self, ecs_entity e);
} ecs_hierarchy_api;

#define ECS_POSITION_API_NAME    "ecs.position"
#define ECS_POSITION_API_VERSION 1u

typedef struct ecs_position_api {
    uint32_t struct_size;
    void *self;
    /* e's position in the world into out[0..3) (x, y, z) as of the last update; false (out
     * untouched) when e has none. */
    bool (*position)(void *self, ecs_entity e, float out[3]);
} ecs_position_api;

#define ECS_BOUNDS_API_NAME    "ecs.bounds"
#define ECS_BOUNDS_API_VERSION 1u

typedef struct ecs_bounds_api {
    uint32_t struct_size;
    void *self;
    /* The axis-aligned box e fills in the world (all it holds, together) into min[0..3) and
     * max[0..3) as of the last update; false (untouched) when e fills none. */
    bool (*bounds)(void *self, ecs_entity e, float min[3], float max[3]);
} ecs_bounds_api;

#ifdef __cplusplus
}
#endif

#endif
