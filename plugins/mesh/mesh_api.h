/* SPDX-License-Identifier: MIT */
/* mesh_api.h: the API the mesh plugin publishes ("ecs.mesh", version 1).
 *
 * An entity may hold several meshes (the seed's MeshComponentManager), kept in the order
 * they were added and addressed by their position k in that order. Each holds a mesh
 * resource name, a material name, a visible flag, local bounds and world bounds; the
 * manager's update recomputes world bounds from the entity's world matrix, read through
 * the transform API (an entity without a transform uses the identity).
 * [main-thread] everything.
 */
#ifndef ECS_MESH_API_H
#define ECS_MESH_API_H

#include "ecs_math.h"
#include "ecs_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ECS_MESH_API_NAME    "ecs.mesh"
#define ECS_MESH_API_VERSION 1u
#define ECS_MESH_NAME_MAX    256u

typedef struct ecs_mesh_desc {
    const char *mesh;     /* resource name, required, copied */
    const char *material; /* may be NULL or "", copied */
    bool visible;
    ecs_aabb local_bounds; /* min <= max on every axis, finite */
} ecs_mesh_desc;

typedef struct ecs_mesh_info {
    const char *mesh, *material; /* valid until the entity's meshes change */
    bool visible;
    ecs_aabb local_bounds, world_bounds;
} ecs_mesh_info;

typedef struct ecs_mesh_api {
    uint32_t struct_size;
    void *self;

    /* Add a mesh to e, after its others; its position in *k (may be NULL). */
    ecs_status (*add)(void *self, ecs_entity e, const ecs_mesh_desc *desc, uint32_t *k);
    /* Remove e's mesh k; the later ones move down by one. */
    ecs_status (*remove)(void *self, ecs_entity e, uint32_t k);
    /* Remove every mesh of e. */
    ecs_status (*remove_all)(void *self, ecs_entity e);
    /* How many meshes e has (0 for a dead entity). */
    uint32_t (*count_of)(void *self, ecs_entity e);
    /* Mesh k of e. ECS_ERR_NOT_FOUND when k >= count_of(e). */
    ecs_status (*get)(void *self, ecs_entity e, uint32_t k, ecs_mesh_info *out);
    ecs_status (*set_visible)(void *self, ecs_entity e, uint32_t k, bool visible);
    /* Meshes in all. */
    uint32_t (*count)(void *self);
} ecs_mesh_api;

#ifdef __cplusplus
}
#endif

#endif
