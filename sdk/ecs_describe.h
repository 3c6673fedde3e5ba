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
 *   "ecs.names" v1   a name per entity (the bundled debug_name plugin publishes it)
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

#ifdef __cplusplus
}
#endif

#endif
