/* SPDX-License-Identifier: MIT */
/* snapshot.h: snapshots of a running session's world (docs/snapshot-format.md): the world
 * core's part (snapshot_core.h), every manager's state (its snapshot bytes, or its
 * components through the JSON path when it offers none), every plugin's own state, the
 * scene store; in memory (the loop, the inspector) or in a file (--snapshot, --restore).
 *
 * A restore checks everything it can before it changes anything: the container (size,
 * checksum, version), that every loaded manager has its part and every part its loaded
 * manager, with the same snapshot_version, and the core's bytes. A refused snapshot leaves
 * the world as it was, with one line saying why.
 */
#ifndef HOST_SNAPSHOT_H
#define HOST_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ecs_plugin.h"

typedef struct host_session host_session;
typedef struct host_plugin host_plugin;

/* A snapshot in memory: its bytes (a sealed container), the room allocated for them, and the
 * frame it was taken at. Zero-initialized: empty. */
typedef struct host_snapshot {
    char *bytes;
    size_t size, cap;
    uint64_t frame;
} host_snapshot;

/* Take a snapshot of hs at a frame boundary into *out (its checksum is written only when it
 * goes to a file) (zeroed, or an earlier snapshot whose
 * buffer is used again when it is big enough: a loop taking its start again pays no page
 * faults; host_snapshot_free it). ECS_OK, or the error with the reason in why (a manager
 * whose snapshot_write failed or crashed, memory), *out then empty. */
ecs_status host_snapshot_take(host_session *hs, host_snapshot *out, char *why, size_t len);

/* host_snapshot_take, but the managers of plugin json_for (NULL: none) go the JSON path even
 * when they offer snapshots: a snapshot that must outlive a reload of that plugin which may
 * change their layout (a JSON part has no layout version). */
ecs_status host_snapshot_take_json(host_session *hs, host_snapshot *out,
                                   const host_plugin *json_for, char *why, size_t len);

/* Make hs the world of bytes[0..size) (a container from host_snapshot_take or a file). ECS_OK,
 * or the error with the reason in why: refused before anything changed (*changed false: a
 * bad container, a manager missing on either side, a changed snapshot_version, bad core
 * bytes), or, rarely, failed while applying (*changed true: a manager that refused its
 * bytes or crashed; the world is then incomplete). */
ecs_status host_snapshot_restore(host_session *hs, const void *bytes, size_t size, bool *changed,
                                 char *why, size_t len);

/* host_snapshot_restore of a snapshot this process took and kept (host_snapshot_take: the
 * loop's, the inspector's): its bytes never left memory, so they are not checked again (no
 * checksum, which only a file carries, and no pass over every entity index). */
ecs_status host_snapshot_restore_own(host_session *hs, const host_snapshot *s, bool *changed,
                                     char *why, size_t len);

/* Free a snapshot's bytes; NULL and an empty one are fine. */
void host_snapshot_free(host_snapshot *s);

/* --snapshot FILE: take a snapshot and write it to path (a temporary file renamed over it,
 * as a scene save). ECS_OK, or the error after one line naming the file. */
ecs_status host_snapshot_save_file(host_session *hs, const char *path);

/* --restore FILE: read path and restore it. ECS_OK, or the error after one line naming the
 * file and the reason. */
ecs_status host_snapshot_load_file(host_session *hs, const char *path);

#endif
