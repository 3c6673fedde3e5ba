/* SPDX-License-Identifier: MIT */
/* schedule.h: what the world derives from its managers and systems: the ordered list the
 * frame runs, and the manager of each signature bit.
 *
 * The frame runs managers' updates and systems in one list (seed 004): registration order
 * (host_manager.seq, host_system.seq: one counter for both), except that a higher weight
 * runs earlier; ties keep registration order. A manager's weight is 0. Managers without an
 * update are not in the list (but are in the --stats order, host_schedule_all).
 *
 * Invariant: after host_world_managers_changed(), w->sched.steps is that list over the
 * committed managers and systems (the copies of update and state agree with the managers'
 * descriptions: a reload rebuilds the list), and it does not change during a frame;
 * w->sched.by_bit[b] the committed manager whose name has bit b (NULL for none),
 * w->sched.step_managers == w->manager_count and w->sched.stale is false. The arrays are reserved
 * before anything changes (host_schedule_reserve), so rebuilding never allocates and never fails.
 */
#ifndef HOST_SCHEDULE_H
#define HOST_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ecs_plugin.h"

typedef struct host_world host_world;
typedef struct host_manager host_manager;
typedef struct host_system host_system;

/* One entry of the ordered list: a manager's update (m, with its update and state copied
 * so the frame's loop makes one load per call) or a system (s; update is then
 * host_system_step and state the system, so the loop calls every step the same way). */
typedef struct host_step {
    void (*update)(void *state, const ecs_frame_info *frame);
    void *state;
    struct host_timing *timing; /* the manager's or the system's */
    host_manager *m;
    host_system *s;
    const struct host_call *call; /* the step's call, named for the watchdog (guard.h) */
} host_step;

/* What the world derives from its managers and systems (host_world.sched). */
typedef struct host_schedule {
    host_step *steps; /* what a frame runs, in order */
    size_t step_count, step_cap;
    size_t step_managers;  /* manager_count when steps was built */
    bool stale;            /* rebuild steps before the next frame */
    host_manager **by_bit; /* the committed manager of each signature bit, or NULL */
    size_t by_bit_cap;
    uint64_t next_seq; /* registration order of managers and systems */
} host_schedule;

/* The update of a system's step: run the system (state) over its collection, as of the
 * start of the frame. Not guarded: the frame guards systems itself under --safe. */
void host_system_step(void *state, const ecs_frame_info *frame);

/* Room for `entries` steps and for the manager of every signature bit assigned so far.
 * ECS_ERR_NO_MEMORY changes nothing the frame reads. */
ecs_status host_schedule_reserve(host_world *w, size_t entries);

/* Rebuild the list and the bit table after managers or systems were committed, replaced
 * or dropped. The caller reserved room first; a frame that finds the list stale (a test
 * that pushed managers itself) rebuilds it there (host_schedule_ensure). */
void host_world_managers_changed(host_world *w);

/* Rebuild when the list does not match the managers. False when that needed memory that
 * could not be had (then the list is empty and an error was logged). */
bool host_schedule_ensure(host_world *w);

/* Every committed manager and system in run order, managers without update included, into
 * out (room for manager_count + system_count). Returns how many. */
size_t host_schedule_all(const host_world *w, host_step *out);

#endif
