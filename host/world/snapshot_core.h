/* SPDX-License-Identifier: MIT */
/* snapshot_core.h: the world core's part of a snapshot: frame, entities, signatures
 * (snapshot_core.c has the layout). Files, managers' data and the scene store are the
 * business of the layers above (host/snapshot.c). */
#ifndef HOST_SNAPSHOT_CORE_H
#define HOST_SNAPSHOT_CORE_H

#include <stddef.h>

#include "ecs_plugin.h"
#include "entity.h"
#include "signature.h"

/* What of the core a snapshot holds: pointers into the world. */
typedef struct host_core_view {
    host_entities *entities;
    host_signatures *sig;
    ecs_frame_info *frame;
    uint64_t *seed; /* the session's seed (frame seeds derive from it), or NULL */
} host_core_view;

/* The bytes host_core_snapshot_write would write now. */
size_t host_core_snapshot_size(const host_core_view *c);

/* Write the core into out (host_core_snapshot_size bytes). Cannot fail. */
void host_core_snapshot_write(const host_core_view *c, void *out);

/* ECS_OK when in[0..size) are consistent core bytes (what host_core_snapshot_read checks
 * before it changes anything), else ECS_ERR_BAD_VALUE. */
ecs_status host_core_snapshot_check(const host_core_view *c, const void *in, size_t size);

/* Make the core what in[0..size) holds: entities, signatures (matched by name; collections
 * rebuild at the next frame), frame number, time, dt and seed. With check,
 * ECS_ERR_BAD_VALUE when the bytes are not consistent, nothing changed then (without: bytes
 * this process wrote, the entity check skipped); ECS_ERR_NO_MEMORY when a column for a
 * name new to this world could not be had (the signatures are then partly restored). */
ecs_status host_core_snapshot_read(host_core_view *c, const void *in, size_t size, bool check);

#endif
