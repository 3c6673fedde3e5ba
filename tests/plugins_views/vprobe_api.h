/* SPDX-License-Identifier: MIT */
/* vprobe_api.h: the API of the views test plugin (vprobe.c), "test.vprobe" v1: its
 * managers' components, the log of its updates and system runs, what each system saw. */
#ifndef VPROBE_API_H
#define VPROBE_API_H

#include "ecs_plugin.h"

#define VPROBE_API_NAME    "test.vprobe"
#define VPROBE_API_VERSION 1u

/* One update (kind 'm') or system run (kind 's'), in the order they ran. */
typedef struct vprobe_event {
    char kind;
    uint32_t index; /* the manager's or system's position in the config */
    uint32_t tag;   /* the build that ran it (VPROBE_TAG) */
    uint64_t frame;
} vprobe_event;

typedef struct vprobe_api {
    uint32_t struct_size;
    void *self;
    uint32_t tag; /* VPROBE_TAG of the build that published it */
    /* Give / take e the component of manager k (reported to the host). */
    ecs_status (*add)(void *self, uint32_t k, ecs_entity e);
    ecs_status (*remove)(void *self, uint32_t k, ecs_entity e);
    bool (*has)(void *self, uint32_t k, ecs_entity e);
    uint32_t (*manager_count)(void *self);
    uint32_t (*system_count)(void *self);
    /* The events since the last clear. */
    uint32_t (*events)(void *self, const vprobe_event **out);
    void (*clear_events)(void *self);
    /* What system k received in its last run (valid until its next run) and when. */
    uint32_t (*seen)(void *self, uint32_t k, const ecs_entity **out, uint64_t *frame);
    /* Its collection handle (from collection_create, the same query as the system's). */
    ecs_collection (*collection)(void *self, uint32_t k);
} vprobe_api;

#endif
