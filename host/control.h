/* SPDX-License-Identifier: MIT */
/* control.h: the session's frame controls: pause, resume, step N frames, a time scale,
 * snapshots kept in memory under names, and the live loop (loop.h), driven by --loop and by
 * the inspector's page (docs/inspector.md, "Controls"). The frame loop asks it at every
 * boundary whether a frame runs; the inspector changes it between frames (main thread).
 * Invariant: held is the sum of the kept snapshots' buffers and the loop's.
 */
#ifndef HOST_CONTROL_H
#define HOST_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "snapshot.h"

typedef struct host_session host_session;

#define HOST_CONTROL_NAME_MAX 64 /* a kept snapshot's name, its NUL included */

typedef struct host_kept_snapshot {
    char name[HOST_CONTROL_NAME_MAX];
    host_snapshot snap;
} host_kept_snapshot;

typedef struct host_control {
    host_session *hs;
    bool paused;
    uint64_t steps;    /* frames still to run while paused (step N) */
    double time_scale; /* dt is multiplied by it; 1 by default */
    host_loop loop;
    host_kept_snapshot *kept; /* in the order they were taken */
    size_t kept_count, kept_cap;
} host_control;

/* Controls for hs, running, time scale 1, no snapshot, the loop from..to (from < 0: none). */
void host_control_init(host_control *c, host_session *hs, int64_t from, int64_t to);
void host_control_free(host_control *c);

/* At a frame boundary, before the reloads: the loop's start taken or its end rewound. */
void host_control_boundary(host_control *c);

/* Should a frame run now (not paused, or a step asked for)? Counts the step taken. */
bool host_control_runs(host_control *c);

/* Pause, resume, step n frames (pausing first), set the time scale (0 < scale <= 100):
 * false with why for a bad value. */
void host_control_pause(host_control *c, bool paused);
void host_control_step(host_control *c, uint64_t n);
bool host_control_set_scale(host_control *c, double scale, char *why, size_t len);

/* Take a snapshot now, kept under name ([A-Za-z0-9_.-], 1-63 characters; the same name
 * again replaces it). ECS_OK, or the error with why (a bad name, a manager's failure, memory). */
ecs_status host_control_snapshot(host_control *c, const char *name, char *why, size_t len);

/* Restore the kept snapshot name (the loop stops). ECS_ERR_NOT_FOUND for no such name;
 * another error with why when the restore was refused (the world untouched unless *changed). */
ecs_status host_control_restore(host_control *c, const char *name, bool *changed, char *why,
                                size_t len);

/* Drop the kept snapshot name: ECS_OK or ECS_ERR_NOT_FOUND. */
ecs_status host_control_drop(host_control *c, const char *name);

/* Loop from kept snapshot name for frames frames (restore it; loop its frame to its frame +
 * frames); name NULL: from now. ECS_OK, or the error with why. */
ecs_status host_control_loop(host_control *c, const char *name, uint64_t frames, char *why,
                             size_t len);

/* Stop the loop (the world stays where it is). */
void host_control_loop_stop(host_control *c);

/* The reloader's on_swap hook (reload.h; arg: the controls), before a new build of plugin
 * is tried: the loop goes back to its start (host_loop_before_swap), and the kept snapshots
 * take that plugin's parts as JSON, so that they can still be restored if the new build
 * lays its state out anew (each is restored and taken again: the world comes back as it
 * was). */
void host_control_before_swap(void *arg, const char *plugin);

/* Bytes held by kept snapshots and the loop's. */
size_t host_control_bytes(const host_control *c);

#endif
