/* SPDX-License-Identifier: MIT */
/* transform_api.h: the API the transform plugin publishes ("ecs.transform", version 1).
 *
 * Find it in your plugin's load() (declare "transform" as a dependency):
 *     const ecs_transform_api *tf = host->api_find(host, ECS_TRANSFORM_API_NAME,
 *                                                  ECS_TRANSFORM_API_VERSION, NULL);
 *     tf->get_world(tf->self, e, &m);
 * The pointer stays valid while the host runs, across reloads of the transform plugin.
 *
 * Each entity has at most one transform: a local position, unit rotation quaternion and
 * scale, a world matrix (parent's world * TRS(local); a root's world is TRS(local)), and
 * hierarchy links. A world matrix read through this API is always up to date: a change
 * updates the entity's subtree at once. Destroying an entity (host entity_destroy)
 * destroys its children too. Calls that can fail return an ecs_status: a dead entity or
 * one without a transform is ECS_ERR_STALE_ENTITY / ECS_ERR_NOT_FOUND, a non-finite
 * value ECS_ERR_BAD_VALUE, a parent change that would make a cycle ECS_ERR_CYCLE.
 * [main-thread] everything.
 */
#ifndef ECS_TRANSFORM_API_H
#define ECS_TRANSFORM_API_H

#include "ecs_math.h"
#include "ecs_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ECS_TRANSFORM_API_NAME    "ecs.transform"
#define ECS_TRANSFORM_API_VERSION 1u

typedef struct ecs_transform_local {
    ecs_vec3 position;
    ecs_quat rotation; /* unit quaternion */
    ecs_vec3 scale;
} ecs_transform_local;

typedef struct ecs_transform_api {
    uint32_t struct_size;
    void *self; /* pass as the first argument of every function */

    /* Give e a transform with the given local (NULL: identity) under parent (the null
     * entity: a root). ECS_ERR_EXISTS if e has one already. */
    ecs_status (*add)(void *self, ecs_entity e, const ecs_transform_local *local,
                      ecs_entity parent);
    /* Remove e's transform; its children become roots (keeping their world matrices). */
    ecs_status (*remove)(void *self, ecs_entity e);
    bool (*has)(void *self, ecs_entity e);

    ecs_status (*get_local)(void *self, ecs_entity e, ecs_transform_local *out);
    ecs_status (*get_world)(void *self, ecs_entity e, ecs_mat4 *out);
    /* Set e's local; e's subtree's world matrices are updated before this returns. */
    ecs_status (*set_local)(void *self, ecs_entity e, const ecs_transform_local *local);
    /* Set n locals at once; the world matrices of everything changed are recomputed in
     * one linear pass. All or nothing: on error (the index of the first bad entry in
     * *bad, may be NULL) nothing changes. */
    ecs_status (*set_local_many)(void *self, const ecs_entity *entities,
                                 const ecs_transform_local *locals, uint32_t n, uint32_t *bad);

    /* Move e under parent (null: make it a root), keeping its local. ECS_ERR_CYCLE if
     * parent is e or one of its descendants. */
    ecs_status (*set_parent)(void *self, ecs_entity e, ecs_entity parent);
    /* The same as set_parent(e, null). */
    ecs_status (*detach)(void *self, ecs_entity e);

    /* Hierarchy links; the null entity when there is none (or e has no transform). */
    ecs_entity (*parent)(void *self, ecs_entity e);
    ecs_entity (*first_child)(void *self, ecs_entity e);
    ecs_entity (*next_sibling)(void *self, ecs_entity e);
    ecs_entity (*prev_sibling)(void *self, ecs_entity e);

    /* Number of transforms. */
    uint32_t (*count)(void *self);
    /* The dense arrays: entities[i] has world matrix world[i], parents before children.
     * Valid until the next change to the manager. Returns the count. */
    uint32_t (*instances)(void *self, const ecs_entity **entities, const ecs_mat4 **world);

    /* Recompute every world matrix from the locals: the one linear pass over the dense
     * arrays (parents first) that set_local_many and the manager's update run, over every
     * transform. World matrices are always up to date, so correctness never needs it: it is
     * there for tools, for a reload whose new code computes differently, and for the W6
     * benchmark, which times it beside a plain loop. Returns the count. */
    uint32_t (*recompute_all)(void *self);

    /* Make room for n transforms in all, so that adding up to n moves nothing (one
     * allocation instead of a copy per doubling: a loader or a level builder that knows its
     * count calls it first). n at or below the room there is already: nothing happens.
     * ECS_ERR_INVALID_ARGUMENT beyond the entity limit (ECS_ENTITY_INDEX_MASK),
     * ECS_ERR_NO_MEMORY when the room cannot be had; either way nothing changes. Added after
     * the first release of version 1: check struct_size before calling it,
     *     if (tf->struct_size >= offsetof(ecs_transform_api, reserve) + sizeof tf->reserve) */
    ecs_status (*reserve)(void *self, uint32_t n);
} ecs_transform_api;

#ifdef __cplusplus
}
#endif

#endif
