/* SPDX-License-Identifier: MIT */
/* physics_api.h: the API "game.physics" of the test plugin physics.c, which its users
 * (spawner.c) find with api_find. Every build publishes this layout, at the version its
 * PHYS_API_VERSION says.
 */
#ifndef PHYSICS_API_H
#define PHYSICS_API_H

#include "ecs_plugin.h"

#define GAME_PHYSICS_API_NAME "game.physics"

typedef struct game_physics_api {
    uint32_t struct_size;
    void *self;                    /* the first argument of every function */
    uint32_t (*count)(void *self); /* the physics components */
    uint64_t (*steps)(void *self); /* updates run on this state */
} game_physics_api;

#endif
