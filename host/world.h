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
#include "mem.h"
#include "probe.h"
#include "registry.h"
#include "schedule.h"
#include "signature.h"
#include "timing.h"
#include "view.h"

typedef struct host_world host_world;

#define HOST_FOLDER_RANKS 1000000 /* manifest positions per plugin folder (host_plugin.rank) */
typedef struct host_plugin host_plugin;

typedef struct host_manager {
    ecs_manager_desc desc; /* the plugin's desc, fields it did not know zeroed */
    char *name;            /* desc.name points here */
    host_plugin *owner;
    host_timing timing;
    ecs_manager_index index; /* offered through manager_index(); has == NULL: none */
    uint32_t bit;            /* its name's signature bit (signature.h) */
    uint64_t seq;            /* registration order, shared with systems (schedule.h) */
} host_manager;

/* Can m write its components as JSON (write_component or save_component)? */
static inline bool host_manager_saves(const host_manager *m)
{
    return m->desc.write_component || m->desc.save_component;
}

/* A system: run every frame over its collection, in the ordered list. */
typedef struct host_system {
    ecs_system_desc desc; /* the plugin's desc; desc.name points at name, query unused */
    char *name;
    host_plugin *owner;
    host_timing timing;
    ecs_collection collection;
    uint64_t seq;
} host_system;

/* An API a plugin found (api_find): it depends on the API's provider from then on. */
typedef struct host_api_use {
    char *name;
    uint32_t min_version; /* the highest it asked for */
} host_api_use;

typedef struct host_pending_api {
    char *name;
    uint32_t version;
    void *bytes;
    size_t size;
} host_pending_api;

typedef enum host_plugin_status {
    HOST_PLUGIN_FOUND = 0, /* opened and valid, not loaded yet */
    HOST_PLUGIN_LOADED,
    HOST_PLUGIN_SKIPPED,  /* bad: reason says why */
    HOST_PLUGIN_DISABLED, /* the manifest disables it */
    HOST_PLUGIN_UNLOADED,
    HOST_PLUGIN_PARKED /* unloaded while a plugin it depends on is away: back when it is */
} host_plugin_status;

struct host_plugin {
    ecs_host table; /* first: a plugin's calls pass it back, the host casts it back */
    host_world *world;
    char *path;      /* as found in the folder */
    char *copy_path; /* the private copy that was dlopen()ed, or NULL (opened in place) */
    /* the version before the last same-layout reload, kept mapped so a crash of the new
     * one (--safe) can roll back to it; NULL when there is none */
    void *prev_dl;
    const ecs_plugin_desc *prev_desc;
    char *prev_copy, *prev_version;
    char *file; /* relative to the folder: messages and ties */
    void *dl;
    const ecs_plugin_desc *desc;   /* inside the shared object, valid while dl is open */
    char *name, *version;          /* copies of desc's strings */
    uint16_t abi_major, abi_minor; /* copies: --list shows them after a skip */
    uint32_t state_version;
    char **deps; /* copy of desc->dependencies, NULL-terminated */
    void *state;
    host_mem_account mem;
    struct cJSON *config; /* owned: from the manifest */
    int folder;           /* which plugin folder it is in (their order: the command line's,
                             ECS_PLUGIN_PATH's, then the installed one) */
    int rank;             /* folder * HOST_FOLDER_RANKS + manifest position (+ RANKS - 1
                             when not listed): the load order after dependencies */
    int listed_at;        /* manifest entry that named it, -1 when none */
    host_plugin_status status;
    char reason[512];
    /* registrations during load(), committed when it succeeds */
    bool in_load;
    bool reloading; /* a new version's load() runs beside this one: same names allowed */
    bool registration_failed;
    bool crashed; /* --safe caught a crash in its code: dropped at the end of the frame */
    host_manager **pending_managers;
    size_t pending_manager_count;
    host_pending_api *pending_apis;
    size_t pending_api_count;
    size_t manager_count, api_count; /* committed */
    char **api_names;                /* committed, for --list */
    host_system **pending_systems;
    size_t pending_system_count, system_count; /* system_count: committed */
    host_api_use *uses;                        /* the APIs it found, so the plugins it depends on */
    size_t use_count;
    ecs_entity *pending_entities; /* created during load(): destroyed if the load is refused */
    size_t pending_entity_count, pending_entity_cap;
    /* the last reloads of it (a ring): for the inspector */
    struct host_reload_note {
        double time; /* the world's time (frame.time) */
        bool done;   /* swapped in; false: refused */
        char what[160];
    } reloads[8];
    uint32_t reload_count;
    /* calls from another thread, refused: counted there, reported at a frame boundary */
    _Atomic uint32_t thread_calls;
    _Atomic(const char *) thread_call; /* the first such call's name */
    uint32_t thread_calls_reported;
    /* collections it holds a reference to: taken at commit, dropped at unload */
    ecs_collection *pending_collections, *collections;
    size_t pending_collection_count, collection_count;
    bool in_unload; /* inside its unload(): its signature reports are ignored */
};

typedef struct host_load_options {
    bool allow_insecure; /* load plugins others may write (with a warning) */
} host_load_options;

struct host_world {
    host_entities *entities;
    host_registry registry;
    host_plugin **plugins; /* load order */
    size_t plugin_count, plugin_cap;
    host_manager **managers; /* registration order */
    size_t manager_count, manager_cap;
    ecs_frame_info frame;
    uint64_t start_ns, last_frame_ns;
    ecs_entity *destroyed; /* announcement buffer */
    size_t destroyed_cap;
    host_timing frame_timing;
    bool time_managers; /* time each manager's update (default); off: a bare dispatch loop */
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

/* Find, validate, order and load every plugin of dir (and of its subfolders, one level
 * down). Bad plugins are logged, counted in w->bad_plugins and skipped. Returns ECS_OK,
 * or an error when the folder or its manifest cannot be used (nothing is loaded then). */
ecs_status host_world_load_dir(host_world *w, const char *dir, const host_load_options *opt);

/* Load the plugins of several folders: each folder's files, then each folder's manifest,
 * in folder order; a plugin name found in an earlier folder wins (one info line names the
 * file skipped); load order: dependencies, folder, manifest, file name. */
ecs_status host_world_load_dirs(host_world *w, const char *const *dirs, size_t n,
                                const host_load_options *opt);

/* Unload every loaded plugin in reverse load order, reporting leaks by plugin name. */
void host_world_unload_all(host_world *w);

/* Run one frame. */
void host_world_frame(host_world *w);

/* Announce destroyed entities to every manager and recycle their indices. */
void host_world_announce_destroyed(host_world *w);

/* Print the plugins found, one block each (for --list). */
void host_world_print_list(const host_world *w, FILE *out);

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

/* Fill p->table for plugin p. */
void host_api_init(host_plugin *p);

/* Load p: call its load(), commit its registrations. Returns ECS_OK or the error (with
 * p->reason set and every trace of the attempt removed). */
ecs_status host_plugin_load(host_world *w, host_plugin *p);

/* Unload p: call unload(), drop its managers and APIs, report and free leaked memory. */
void host_plugin_unload(host_world *w, host_plugin *p, ecs_unload_reason why);

/* Close the shared object (its destructors under the crash guard) and delete its private
 * copy; the record stays, with its name, version and reason. A refused, duplicate or
 * unloaded file keeps no mapping and no copy: thousands of them cost nothing. */
void host_plugin_release(host_plugin *p);

/* Close the shared object, delete its private copy and free the record. */
void host_plugin_free(host_plugin *p);

/* A new plugin record for path (file: relative to the plugin folder), opened and
 * checked: through a private copy when w->private_dir is set. Bad plugins come back
 * SKIPPED with the reason logged. NULL: out of memory. */
host_plugin *host_plugin_open(host_world *w, const char *path, const char *file);

/* Check a description; on error write the reason into why and return false. */
bool host_plugin_desc_ok(const ecs_plugin_desc *d, char *why, size_t len);

/* Room in w for p's pending managers and systems beside the current ones, and their steps
 * in the schedule. ECS_ERR_NO_MEMORY changes nothing the frame reads. */
ecs_status host_world_reserve_for(host_world *w, const host_plugin *p);

/* Drop what p registered during a load() that is being undone. */
void host_plugin_discard_pending(host_plugin *p);

/* Call unload() of desc (p's code, or a new build of it) with p's table, its signature
 * reports ignored meanwhile: a state being freed must not clear bits another version
 * holds. Nothing when desc has no unload(). */
void host_plugin_call_unload(host_plugin *p, const ecs_plugin_desc *desc, void *state,
                             ecs_unload_reason why);

/* Refuse a plugin's call: one error line naming the plugin and the call; during load() the
 * first refusal is also kept as the plugin's reason. Returns s. (hostapi.c) */
ecs_status host_api_refuse(host_plugin *p, ecs_status s, const char *call, const char *what);

/* Is s a good manager or system name: 1-63 of [A-Za-z0-9_.-]? (hostapi.c) */
bool host_api_valid_name(const char *s);

/* The manager called name, committed (not self's own while self reloads: it registers them
 * again) or pending in self; NULL when none. (hostapi.c) */
host_manager *host_manager_named(host_world *w, host_plugin *self, const char *name);

/* Fill the table entries of views, collections and systems. (hostapi_query.c) */
void host_api_init_query(ecs_host *t);

/* The system called name, committed (not p's own while p reloads) or pending in p; NULL
 * when none. (hostapi_query.c) */
host_system *host_system_named(host_world *w, host_plugin *p, const char *name);

/* Free a system record. */
void host_system_free(host_system *s);

/* Append p to w->plugins. -1 when memory ran out. */
int host_world_push_plugin(host_world *w, host_plugin *p);

/* The loaded plugin named name, or NULL. */
host_plugin *host_world_plugin_named(host_world *w, const char *name);

/* May users other than the owner (or root) write path? True (with the reason and the fix
 * in why) when so and not allowed; with allow, warns and returns false. */
/* host_plugin_insecure for file (relative to the plugin folder dir) and every folder on
 * its way: dir itself when check_dir, its subfolder, and for a symlink (or a file in a
 * symlinked subfolder) the folder that really holds the file. why: "" when safe. */
bool host_plugin_path_insecure(const char *dir, const char *file, bool check_dir, bool allow,
                               char *why, size_t len);

bool host_plugin_insecure(const char *what, const char *path, bool allow, char *why, size_t len);

/* Write e for a log line into buf: "name#index.gen" through the debug_name plugin's API
 * when it is loaded and e has a name, else "#index.gen". Returns buf. */
const char *host_world_entity_text(const host_world *w, ecs_entity e, char *buf, size_t size);

/* Note that p's code crashed (signal sig, in `what`): it is skipped from now on and
 * dropped at the end of the frame (host_world_drop_crashed). */
void host_plugin_crashed(host_world *w, host_plugin *p, int sig, const char *what);

/* Does loaded plugin q depend on p: does it declare p, or use an API p publishes now? */
bool host_plugin_depends_on(const host_world *w, const host_plugin *q, const host_plugin *p);

/* Before p goes (crashed with nothing to roll back to, disabled): park every loaded plugin
 * that depends on it, dependents of dependents first, each with its components kept as
 * JSON (as on a reload), its unload() called, its file closed; status PARKED. `why` says
 * why p goes. host_reloader_poll brings them back once what they need is there. */
void host_world_park_dependents(host_world *w, host_plugin *p, const char *why);

/* Unload every plugin that crashed, without calling into it again except to keep its
 * components as JSON (itself guarded). */
void host_world_drop_crashed(host_world *w);

/* Monotonic time in nanoseconds. */
uint64_t host_now_ns(void);

/* The host table is for the thread that runs the frames: true on it. The thread that
 * makes the first world claims it (host_world_new). */
extern _Thread_local bool host_on_main_thread;

/* A host call from another thread: counted for the plugin of h (thread-safe), reported by
 * host_world_report_thread_calls. */
void host_api_other_thread(const ecs_host *h, const char *call);

/* First in every host table function: refuse a call from another thread, returning
 * `refusal` (HOST_MAIN_THREAD: nothing, in a void function). One thread-local read
 * otherwise. */
#define HOST_MAIN_THREAD_OR(h, call, refusal)                                                      \
    do {                                                                                           \
        if (__builtin_expect(!host_on_main_thread, 0)) {                                           \
            host_api_other_thread(h, call);                                                        \
            return refusal;                                                                        \
        }                                                                                          \
    } while (0)
#define HOST_MAIN_THREAD(h, call)                                                                  \
    do {                                                                                           \
        if (__builtin_expect(!host_on_main_thread, 0)) {                                           \
            host_api_other_thread(h, call);                                                        \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* At a frame boundary, on the main thread: one error line per plugin whose code called the
 * host from another thread since the last report (the count and the first call). */
void host_world_report_thread_calls(host_world *w);

#endif
