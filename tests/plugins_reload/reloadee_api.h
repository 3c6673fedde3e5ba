/* SPDX-License-Identifier: MIT */
/* reloadee_api.h: the API "test.reloadee" v1 of the hot-reload test plugin (reloadee.c),
 * for callers in the same process: ecs-bench's R1 fills the plugin with components
 * through it and checks that a reload kept them. Every version of the plugin publishes the
 * same layout; the host rewrites its copy in place at each reload, so a pointer from
 * api_find stays valid.
 */
#ifndef RELOADEE_API_H
#define RELOADEE_API_H

#include "ecs_plugin.h"

#define RELOADEE_API_NAME    "test.reloadee"
#define RELOADEE_API_VERSION 1u

typedef struct reloadee_api {
    uint32_t struct_size;
    void *self; /* the first argument of every function */
    /* Create n entities (one batch) and give the i-th the value first + i. All or
     * nothing: ECS_ERR_NO_MEMORY or ECS_ERR_FULL leave no component behind. */
    ecs_status (*populate)(void *self, uint32_t n, int64_t first);
    /* The sum of every component's value, and how many there are. */
    int64_t (*sum)(void *self);
    uint32_t (*count)(void *self);
} reloadee_api;

#endif
