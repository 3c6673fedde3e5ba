/* SPDX-License-Identifier: MIT */
/* spin_api.h: the API the spin plugin publishes ("ecs.spin", version 1).
 *
 * An entity with a spin component turns: every frame, the system "spin.rotate" multiplies
 * its local rotation by the rotation of angle |rate| * dt about the axis rate / |rate|
 * (local axes, radians per second), through the transform API. Only entities with a
 * transform turn (the system's collection is {transform, spin}). [main-thread] everything.
 */
#ifndef ECS_SPIN_API_H
#define ECS_SPIN_API_H

#include "ecs_math.h"
#include "ecs_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ECS_SPIN_API_NAME    "ecs.spin"
#define ECS_SPIN_API_VERSION 1u

typedef struct ecs_spin_api {
    uint32_t struct_size;
    void *self; /* pass as the first argument of every function */

    /* Give e a spin of `rate` radians per second about its local x, y, z axes (replacing
     * its rate). ECS_ERR_STALE_ENTITY, ECS_ERR_BAD_VALUE (a non-finite rate),
     * ECS_ERR_NO_MEMORY. */
    ecs_status (*set)(void *self, ecs_entity e, ecs_vec3 rate);
    /* e's rate into *out. ECS_ERR_STALE_ENTITY, ECS_ERR_NOT_FOUND (no spin). */
    ecs_status (*get)(void *self, ecs_entity e, ecs_vec3 *out);
    /* Remove e's spin. ECS_ERR_STALE_ENTITY, ECS_ERR_NOT_FOUND. */
    ecs_status (*remove)(void *self, ecs_entity e);
    /* Number of spin components. */
    uint32_t (*count)(void *self);
} ecs_spin_api;

#ifdef __cplusplus
}
#endif

#endif
