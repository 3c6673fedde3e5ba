/* SPDX-License-Identifier: MIT */
/* world.h: the host's world: entities, loaded plugins, their managers, the frame loop.
 *
 * The world owns every plugin record (host_plugin) and the ordered list of managers.
 * Invariants: plugins[] is in load order and managers[] in registration order (a
 * plugin's managers are registered during its load, so they follow its dependencies');
 * a manager belongs to exactly one loaded plugin; what a plugin registers during its
 * load() is pending until load() succeeds, then committed all at once, so a failed load
 * leaves no trace. Systems (host_system) are registered, committed and replaced like
 * managers. Frame: bring collections up to date (collection.h) -> run the ordered list of
 * manager updates and systems (schedule.h) -> announce destroyed entities (one batch per
 * round, until no manager destroys more; their signatures cleared) -> recycle their
 * indices -> record timings.
 */
#ifndef HOST_WORLD_H
#define HOST_WORLD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "collection.h"
#include "ecs_plugin.h"
#include "entity.h"
#include "guard.h"
#include "mem.h"
#include "probe.h"
#include "registry.h"
#include "schedule.h"
#include "signature.h"
#include "timing.h"
#include "view.h"

typedef struct host_world host_world;

typedef struct host_plugin host_plugin;

typedef struct host_manager {
    ecs_manager_desc desc; /* the plugin's desc, fields it did not know zeroed */
    char *name;            /* desc.name points here */
    host_plugin *owner;
    host_timing timing;
    ecs_manager_index index; /* offered through manager_index(); has == NULL: none */
    uint32_t bit;            /* its name's signature bit (signature.h) */
    uint64_t seq;            /* registration order, shared with systems (schedule.h) */
    host_call update_call, destroyed_call; /* its calls, named for the watchdog (guard.h) */
} host_manager;

/* Can m write its components as JSON (write_component or save_component)? */
static inline bool host_manager_saves(const host_manager *m)
{
    return m->desc.write_component || m->desc.save_component;
}

/* m's count() of its components into *n, under the crash guard (--safe): 0, or the signal
 * that stopped it (*n = 0). *n = 0 when it offers no count(). */
int host_manager_count_guarded(const host_manager *m, uint32_t *n);

/* m's count() of its components, under the crash guard: 0 when it offers none, or its
 * plugin crashed (then, or before: it is marked crashed, dropped at the end of the frame). */
uint32_t host_manager_count(const host_manager *m);

/* Can m load components from JSON (read_component or load_component)? */
static inline bool host_manager_loads(const host_manager *m)
{
    return m->desc.read_component || m->desc.load_component;
}

/* A system: run every frame over its collection, in the ordered list. */
typedef struct host_system {
    ecs_system_desc desc; /* the plugin's desc; desc.name points at name, query unused */
    char *name;
    host_plugin *owner;
    host_timing timing;
    ecs_collection collection;
    uint64_t seq;
    host_call call; /* its run, named for the watchdog (guard.h) */
} host_system;

struct host_world {
    host_entities *entities;
    host_registry registry;
    host_plugin **plugins; /* load order */
    size_t plugin_count, plugin_cap;
    host_manager **managers; /* registration order */
    size_t manager_count, manager_cap;
    ecs_frame_info frame;
    uint64_t start_ns, last_frame_ns;
    /* Deterministic frames: fixed_dt > 0 (--fixed-dt) gives every frame that dt and time
     * frame * dt; each frame's seed is host_frame_seed(seed, frame). Both kept in snapshots. */
    double fixed_dt;
    uint64_t seed;
    double time_scale;     /* the inspector's time scale: dt is multiplied by it (0: 1) */
    ecs_entity *destroyed; /* announcement buffer */
    size_t destroyed_cap;
    host_timing frame_timing;
    bool time_managers; /* time each manager's update (default); off: a bare dispatch loop */
    /* Time the steps on one frame in time_every (HOST_TIME_EVERY by default; 1: every
     * frame): a clock read costs more than an empty update, so timing every step of every
     * frame would cost more than the dispatch itself. A --trace times every frame. */
    uint32_t time_every;
    uint64_t timed_frames, timed_frames_ns; /* frames whose steps were timed, and their time */
    FILE *trace;
    uint64_t trace_origin_ns;
    bool trace_first;
    int bad_plugins;                /* plugins skipped as bad (for --strict) */
    struct host_scene_store *scene; /* scene ids and kept JSON of entities */
    struct scene_load *scene_load;  /* the scene load under way, or NULL */
    struct scene_save *scene_save;  /* the scene save under way, or NULL */
    bool safe;                      /* --safe: plugin calls run under the crash guard */
    bool quiet_skips;               /* the reloader reports bad builds itself */
    char *private_dir;              /* where plugins are copied before dlopen (its name), or NULL */
    int private_fd;                 /* that folder, opened once when made: copies go through it */
    char *private_at;        /* "/proc/PID/fd/N": the folder by its descriptor, never by name */
    host_probe_config probe; /* new plugin files run first in a child (probe.h) */
    unsigned copies;         /* copies made so far: unique names */
    /* views, collections, systems (seeds 002-004) */
    host_system **systems; /* registration order */
    size_t system_count, system_cap;
    host_step *steps; /* what a frame runs, in order (schedule.h) */
    size_t step_count, step_cap;
    size_t step_managers;  /* manager_count when steps was built */
    bool steps_stale;      /* rebuild steps before the next frame */
    host_manager **by_bit; /* the committed manager of each signature bit, or NULL */
    size_t by_bit_cap;
    uint64_t next_seq;   /* registration order of managers and systems */
    host_signatures sig; /* signature.h */
    host_collections collections;
    host_view_plans views;
};

/* A new world with no plugins; NULL when memory ran out. */
host_world *host_world_new(void);
/* Unload every plugin (reverse load order) and free the world. NULL is allowed. */
void host_world_free(host_world *w);

/* Frame `frame`'s random seed (ecs_frame_info.seed) from the session's seed: splitmix64 of
 * the two, so neighbouring frames get unrelated seeds. */
static inline uint64_t host_frame_seed(uint64_t seed, uint64_t frame)
{
    uint64_t z = seed + (frame + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Run one frame. */
void host_world_frame(host_world *w);

/* Announce destroyed entities to every manager and recycle their indices. */
void host_world_announce_destroyed(host_world *w);

/* Print the per-manager timing table (for --stats). */
void host_world_print_stats(const host_world *w, FILE *out);

/* Write a Chrome trace-event JSON file of every manager update from now on. Returns
 * ECS_ERR_IO when the file cannot be created. */
ecs_status host_world_trace_open(host_world *w, const char *path);
void host_world_trace_close(host_world *w);

/* One slice [t0, t1] (host_now_ns) in the --trace file, when there is one: a scene load or
 * save, a reload. */
void host_world_trace_slice(host_world *w, const char *name, const char *cat, uint64_t t0,
                            uint64_t t1);

/* -- internal, between world.c, loader.c and hostapi.c -- */

/* Write e for a log line into buf: "name#index.gen" through the debug_name plugin's API
 * when it is loaded and e has a name, else "#index.gen". Returns buf. */
const char *host_world_entity_text(const host_world *w, ecs_entity e, char *buf, size_t size);

/* Monotonic time in nanoseconds. */
uint64_t host_now_ns(void);

/* At a frame boundary, on the main thread: one error line per plugin whose code called the
 * host from another thread since the last report (the count and the first call). */
void host_world_report_thread_calls(host_world *w);

#include "hostapi.h"
#include "loader.h"
#include "plugin.h"

#endif
