/* SPDX-License-Identifier: MIT */
/* world.h: the ECS core: entities, managers and systems as registered records, the
 * ordered schedule, signatures, collections, views, timing, and the frame.
 *
 * The world knows no file, no dlopen, no scene and no plugin record. A manager or system
 * belongs to an owner, an opaque tag of the layer above (the session's plugin record);
 * the world calls owner code through the hooks that layer installs (host_world_hooks): a
 * guard that runs a call catching a crash (--safe), a callback that marks an owner as
 * crashed, the owner's name for messages, and what else happens around a frame (entities
 * forgotten by the scene store, crashed owners dropped, trace slices).
 *
 * Invariants: managers[] is in registration order; what an owner registers while it loads
 * is committed by the layer above at once. Systems (host_system) are registered,
 * committed and replaced like managers. Frame: bring collections up to date
 * (collection.h) -> run the ordered list of manager updates and systems (schedule.h) ->
 * announce destroyed entities (one batch per round, until no manager destroys more; their
 * signatures cleared) -> recycle their indices -> record timings.
 */
#ifndef HOST_WORLD_H
#define HOST_WORLD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "collection.h"
#include "ecs_plugin.h"
#include "entity.h"
#include "call.h"
#include "mem.h"
#include "schedule.h"
#include "signature.h"
#include "timing.h"
#include "view.h"

typedef struct host_world host_world;

typedef struct host_manager {
    ecs_manager_desc desc; /* the plugin's desc, fields it did not know zeroed */
    char *name;            /* desc.name points here */
    void *owner;           /* the layer above's tag (its plugin record): opaque here */
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

/* m's count() of its components into *n, under w's guard (--safe): 0, or the signal that
 * stopped it (*n = 0). *n = 0 when it offers no count(). */
int host_manager_count_guarded(host_world *w, const host_manager *m, uint32_t *n);

/* m's count() of its components, under w's guard: 0 when it offers none, or its owner
 * crashed (then, or before: it is marked crashed, dropped at the end of the frame). */
uint32_t host_manager_count(host_world *w, const host_manager *m);

/* Can m load components from JSON (read_component or load_component)? */
static inline bool host_manager_loads(const host_manager *m)
{
    return m->desc.read_component || m->desc.load_component;
}

/* A system: run every frame over its collection, in the ordered list. */
typedef struct host_system {
    ecs_system_desc desc; /* the plugin's desc; desc.name points at name, query unused */
    char *name;
    void *owner;       /* as host_manager.owner */
    host_world *world; /* the world it runs in (its step reads the collection there) */
    host_timing timing;
    ecs_collection collection;
    uint64_t seq;
    host_call call; /* its run, named for the watchdog (guard.h) */
} host_system;

/* What the layer above lends the world to call owner code. Every hook may be NULL (a bare
 * world: tests, benchmarks): calls then run directly, named, and a crash is not caught. */
typedef struct host_world_hooks {
    void *ctx; /* passed to the hooks that take one: the layer above's record */
    /* Run fn(arg) as call c, catching a crash (--safe): 0, or the signal that stopped it. */
    int (*guard)(const host_call *c, void (*fn)(void *), void *arg);
    /* owner's code stopped with sig in `what`: mark it crashed (its calls are skipped from
     * now on) and say so. */
    void (*crashed)(void *ctx, void *owner, int sig, const char *what);
    /* Has owner crashed (its calls are skipped until it is dropped)? */
    bool (*owner_crashed)(const void *owner);
    /* owner's name, for messages and --stats. */
    const char *(*owner_name)(const void *owner);
    /* These entities were destroyed and are announced now: forget what is kept of them. */
    void (*forget)(void *ctx, const ecs_entity *list, uint32_t n);
    /* End of a --safe frame: drop the owners that crashed in it. */
    void (*drop_crashed)(void *ctx);
    /* One slice [t0, t1] (host_now_ns) of the trace; NULL: no trace is written. */
    void (*trace)(void *ctx, const char *name, const char *cat, uint64_t t0, uint64_t t1);
} host_world_hooks;

/* The world's frame clock and what it times: when frames ran, how long they took, and
 * which frames time their steps. */
typedef struct host_world_timing {
    uint64_t start_ns, last_frame_ns; /* the first frame's start; the last one's (for dt) */
    host_timing frame_timing;         /* every frame's duration */
    bool time_managers; /* time each manager's update (default); off: a bare dispatch loop */
    /* Time the steps on one frame in time_every (HOST_TIME_EVERY by default; 1: every
     * frame): a clock read costs more than an empty update, so timing every step of every
     * frame would cost more than the dispatch itself. A trace times every frame. */
    uint32_t time_every;
    uint64_t timed_frames, timed_frames_ns; /* frames whose steps were timed, and their time */
} host_world_timing;

/* The ECS and nothing else: 20 fields, grouped by concern. */
struct host_world {
    host_entities *entities;
    host_manager **managers; /* registration order */
    size_t manager_count, manager_cap;
    host_system **systems; /* registration order (seed 004) */
    size_t system_count, system_cap;
    host_schedule sched; /* the ordered list a frame runs, bits to managers (schedule.h) */
    host_signatures sig; /* signature.h (seed 003) */
    host_collections collections;
    host_view_plans views; /* seed 002 */
    ecs_frame_info frame;
    host_world_timing timing;
    /* Deterministic frames: fixed_dt > 0 (--fixed-dt) gives every frame that dt and time
     * frame * dt; each frame's seed is host_frame_seed(seed, frame). Both kept in snapshots. */
    double fixed_dt;
    uint64_t seed;
    double time_scale;     /* the inspector's time scale: dt is multiplied by it (0: 1) */
    ecs_entity *destroyed; /* announcement buffer */
    size_t destroyed_cap;
    bool safe;              /* --safe: owner calls run through hooks.guard */
    host_world_hooks hooks; /* owner code is called through them */
    struct host_jobs *jobs; /* the worker pool of parallel_for (jobs.h); NULL: all inline */
};

/* A new world with no managers and no hooks; NULL when memory ran out. */
host_world *host_world_new(void);
/* Free the world and its records (the layer above unloaded their owners first). NULL is
 * allowed. */
void host_world_free(host_world *w);

/* Run fn(arg) as call c through the guard hook (directly, named, without one): 0, or the
 * signal that stopped it. The caller then reports the crash (host_world_crashed). */
int host_world_guard(host_world *w, const host_call *c, void (*fn)(void *), void *arg);

/* owner's code stopped with sig in `what`: through the crashed hook (nothing without one). */
void host_world_crashed(host_world *w, void *owner, int sig, const char *what);

/* Has owner crashed (false without the hook)? */
bool host_world_owner_crashed(const host_world *w, const void *owner);

/* owner's name for messages ("?" without the hook). */
const char *host_world_owner_name(const host_world *w, const void *owner);

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
void host_world_print_stats(host_world *w, FILE *out);

/* One slice [t0, t1] (host_now_ns) through the trace hook, when there is one: a scene
 * load or save, a reload. */
void host_world_trace_slice(host_world *w, const char *name, const char *cat, uint64_t t0,
                            uint64_t t1);

/* Monotonic time in nanoseconds. */
uint64_t host_now_ns(void);

#endif
