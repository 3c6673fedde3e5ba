/* SPDX-License-Identifier: MIT */
/* plugin.h: one plugin's life (plugin.c): its record, its states and the transitions
 * between them. The loader (loader.h) finds files and calls these at start; the reloader
 * (reload.h) calls them when files change; the frame loop (world.h) when code crashes.
 *
 * States (host_plugin.status) and how a record gets there:
 *
 *   FOUND     host_plugin_open: the file passed the checks before mapping (plugin_file.h),
 *             the probe in a child (probe.h), dlopen, the entry call and the description
 *             check; not loaded yet.
 *   SKIPPED   host_plugin_open or any later step refused it (reason says why, one log
 *             line); nothing of it stays mapped or copied (host_plugin_release).
 *   DISABLED  the manifest of its folder says "disabled": true (at start, or later: its
 *             components kept as JSON, it loads again when taken out).
 *   LOADED    host_plugin_load: its load() returned ECS_OK and every registration it made
 *             was committed at once (a refused load leaves no trace: registrations,
 *             entities and memory taken back).
 *   PARKED    host_plugin_park_dependents: a plugin it depends on (declared, or found with
 *             api_find) had to go; components kept, unload() called, file closed; it loads
 *             again when what it needs is back.
 *   UNLOADED  host_plugin_unload (exit, disable, a crash with nothing to roll back to:
 *             host_reload_drop_crashed), or a parked plugin that could not come back.
 *
 * A crash under --safe marks the record (crashed) until the end of the frame, when
 * host_reload_drop_crashed rolls it back to its last good build (reload.h) or unloads it,
 * parking its dependents first. A reload swaps a LOADED record's code in place
 * (reload.c): the record stays LOADED throughout.
 */
#ifndef HOST_PLUGIN_H
#define HOST_PLUGIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ecs_plugin.h"
#include "mem.h"

typedef struct host_session host_session;
typedef struct host_plugin host_plugin;
typedef struct host_manager host_manager;
typedef struct host_system host_system;
struct cJSON;

#define HOST_FOLDER_RANKS 1000000 /* manifest positions per plugin folder (host_plugin.rank) */

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

/* What a plugin's history notes (host_plugin_note). */
typedef enum host_event {
    HOST_EVENT_RELOAD,   /* a new build swapped in */
    HOST_EVENT_REFUSED,  /* a new build refused: the running one goes on */
    HOST_EVENT_CRASH,    /* its code crashed, or never returned (--safe) */
    HOST_EVENT_ROLLBACK, /* after a crash: back to its last good build */
    HOST_EVENT_UNLOAD, /* unloaded: after a crash, disabled by the manifest, could not come back */
    HOST_EVENT_PARK,   /* parked: a plugin it needs went away */
    HOST_EVENT_BACK,   /* loaded again after an unload or a park */
} host_event;
#define HOST_HISTORY 16

struct host_plugin {
    ecs_host table;        /* first: a plugin's calls pass it back, the host casts it back */
    host_session *session; /* the session that loaded it */
    char *path;            /* as found in the folder */
    char *copy_path;       /* the private copy that was dlopen()ed, or NULL (opened in place) */
    /* the version before the last same-layout reload, kept mapped so a crash of the new
     * one (--safe) can roll back to it; NULL when there is none */
    void *prev_dl;
    const ecs_plugin_desc *prev_desc;
    char *prev_copy, *prev_version;
    /* which build of a version: "build of 14:03:22, 5d41402a", its file's mtime and a hash
     * of its bytes (made with the private copy, so under --watch; "" without), and the one
     * to roll back to's */
    char build[40], prev_build[40];
    char *file; /* relative to the folder: messages and ties */
    void *dl;
    const ecs_plugin_desc *desc;   /* inside the shared object, valid while dl is open */
    char *name, *version;          /* copies of desc's strings */
    uint16_t abi_major, abi_minor; /* copies: --list shows them after a skip */
    uint32_t state_version;
    uint32_t state_size, state_hash; /* the layout its description records (0: none) */
    char **deps;                     /* copy of desc->dependencies, NULL-terminated */
    void *state;
    host_mem_account mem;
    /* a migration's new build allocates here until the host accepted it (then its blocks
     * join mem) or refused it (then what it left is freed and said at once) */
    host_mem_account attempt_mem;
    bool attempting;
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
    /* what happened to it since its start (a ring of the last HOST_HISTORY): the
     * inspector's history; host_plugin_note writes it */
    struct host_reload_note {
        double time;  /* the world's time (frame.time) */
        bool done;    /* a build swapped in or back; false: refused, crashed, gone */
        uint8_t kind; /* host_event */
        char what[200];
    } reloads[HOST_HISTORY];
    uint32_t reload_count;
    /* calls from another thread, refused: counted there, reported at a frame boundary */
    _Atomic uint32_t thread_calls;
    _Atomic(const char *) thread_call; /* the first such call's name */
    uint32_t thread_calls_reported;
    /* collections it holds a reference to: taken at commit, dropped at unload */
    ecs_collection *pending_collections, *collections;
    size_t pending_collection_count, collection_count;
    bool in_unload; /* inside its unload(): its signature reports are ignored */
    /* two-phase adoption: the function the running load() gave ecs_host.on_commit, called
     * once the host accepted or refused that load (host_plugin_outcome); NULL: none */
    void (*commit_fn)(const ecs_host *h, void *arg, bool accepted);
    void *commit_arg;
    /* the API a load() of this record's plugin asked api_find for in vain (and the version),
     * kept while that load is refused: the reloader tries the build again once the API is
     * published (host_plugin_missing_api); "" when none */
    char missing_api[64];
    uint32_t missing_version;
    /* the plugin-wide state it offered (ecs_host.plugin_state): pending during load(),
     * committed with it; has_pstate false when it offers none */
    ecs_plugin_state_desc pstate, pending_pstate;
    bool has_pstate, has_pending_pstate;
};

/* The plugin record behind a world owner tag (host_manager.owner, host_system.owner): in
 * a session every owner is a plugin record. */
static inline host_plugin *host_owner_plugin(const void *owner)
{
    return (host_plugin *)(uintptr_t)owner;
}

/* Load p: call its load(), commit its registrations. Returns ECS_OK or the error (with
 * p->reason set and every trace of the attempt removed). */
ecs_status host_plugin_load(host_session *hs, host_plugin *p);

/* Unload p: call unload(), drop its managers and APIs, report and free leaked memory. */
void host_plugin_unload(host_session *hs, host_plugin *p, ecs_unload_reason why);

/* Close the shared object (its destructors under the crash guard) and delete its private
 * copy; the record stays, with its name, version and reason. A refused, duplicate or
 * unloaded file keeps no mapping and no copy: thousands of them cost nothing. */
void host_plugin_release(host_plugin *p);

/* Close the shared object, delete its private copy and free the record. */
void host_plugin_free(host_plugin *p);

/* A new plugin record for path (file: relative to the plugin folder), opened and
 * checked: through a private copy when hs->private_dir is set. Bad plugins come back
 * SKIPPED with the reason logged. NULL: out of memory. */
host_plugin *host_plugin_open(host_session *hs, const char *path, const char *file);

/* The state layout d records (ECS_STATE_LAYOUT; zeros for a build of ABI 1.0) into p. */
void host_plugin_desc_layout(host_plugin *p, const ecs_plugin_desc *d);

/* Room in hs for p's pending managers and systems beside the current ones, and their steps
 * in the schedule. ECS_ERR_NO_MEMORY changes nothing the frame reads. */
ecs_status host_plugin_reserve_for(host_session *hs, const host_plugin *p);

/* Can every API p's load() published (pending) be published now: no other plugin holds
 * the name, and it fits the storage the host keeps for that name? False with the reason
 * in why. */
bool host_plugin_apis_fit(host_session *hs, const host_plugin *p, char *why, size_t len);

/* Drop what p registered during a load() that is being undone. */
void host_plugin_discard_pending(host_plugin *p);

/* Call unload() of desc (p's code, or a new build of it) with p's table, its signature
 * reports ignored meanwhile: a state being freed must not clear bits another version
 * holds. Under the crash guard (--safe): returns 0, or the signal that stopped it (one
 * error line said so). Nothing when desc has no unload(). */
int host_plugin_call_unload(host_plugin *p, const ecs_plugin_desc *desc, void *state,
                            ecs_unload_reason why);

/* dlclose(dl) under the crash guard (--safe: a destructor that crashes leaves it mapped,
 * with one error line naming the plugin). Returns 0 or the signal. Nothing when dl is
 * NULL. */
int host_plugin_dlclose(void *dl, const char *name);

/* Tell the load() that just ran (p's table, its code in desc's build) that the host
 * accepted (true) or refused (false) it: the function it gave on_commit, if any, under the
 * crash guard; then none is pending. A crash while accepted marks p crashed (dropped at the
 * end of the frame); while refused it is only said. Returns the signal, or 0. */
int host_plugin_outcome(host_plugin *p, bool accepted);

/* A load() of desc's build that returned ECS_OK is refused after all: its on_commit
 * function hears so, then its unload(why) runs (state: what that load() stored). */
void host_plugin_undo_load(host_plugin *p, const ecs_plugin_desc *desc, void *state,
                           ecs_unload_reason why);

/* Before a load() of p's plugin: no API missing yet. */
void host_plugin_begin_load(host_plugin *p);

/* What p's last load() asked api_find for in vain, as text for its refusal ("it asked
 * api_find for API 'x' version 2 or later; plugin 'y' publishes version 1"), into buf;
 * false (buf "") when it asked for nothing it did not get. */
bool host_plugin_missing_api(const host_session *hs, const host_plugin *p, char *buf, size_t len);

/* Append p to hs->plugins. -1 when memory ran out. */
int host_plugin_push(host_session *hs, host_plugin *p);

/* The loaded plugin named name, or NULL. */
host_plugin *host_plugin_named(host_session *hs, const char *name);

/* Add an event to p's history (the inspector's), at the world's time: what happened, as
 * printf formats it (cut at 199 bytes). */
void host_plugin_note(host_plugin *p, host_event kind, const char *fmt, ...) ECS_PRINTF(3, 4);

/* Note that p's code crashed (signal sig, in `what`): it is skipped from now on and
 * dropped at the end of the frame (host_reload_drop_crashed). */
void host_plugin_crashed(host_plugin *p, int sig, const char *what);

/* Would loaded plugin p close a dependency cycle if it declared the dependencies deps
 * (NULL-terminated, or NULL) and had found the APIs uses[0..use_count): does the plugin
 * behind one of them need p, directly or not (over declared dependencies and found APIs)?
 * True with the cycle in why ("c needs a, a needs b, b needs c"). */
bool host_plugin_closes_cycle(host_session *hs, const host_plugin *p, char *const *deps,
                              const host_api_use *uses, size_t use_count, char *why, size_t len);

/* After a new build of p was loaded beside the old one (its api_find calls recorded in
 * p->uses, the old build's set aside in old): when it was swapped in, its edges stand and
 * the old ones are freed; else its edges are freed and the old ones put back. The edges a
 * build made belong to that build. */
void host_plugin_keep_uses(host_plugin *p, bool swapped, host_api_use *old, size_t old_count);

/* What became of the components of a plugin that goes (parked, disabled, crashed). */
typedef enum host_kept {
    HOST_KEPT,      /* kept as JSON in the scene store: they come back with it */
    HOST_KEPT_NONE, /* its managers hold none: nothing to keep */
    HOST_KEPT_LOST  /* a manager cannot write them, crashed doing so, or memory ran out */
} host_kept;

/* Keep loaded p's components as JSON before it goes (its code guarded with --safe).
 * Returns what became of them. */
host_kept host_plugin_keep(host_session *hs, host_plugin *p);

/* p's own state (ecs_host.plugin_state) as JSON text, written by its code under the
 * guard: malloc'd, *len bytes ("" when it wrote nothing). NULL when it offers none (why
 * "") or when its write failed or crashed (why says how). */
char *host_plugin_state_text(host_plugin *p, size_t *len, char *why, size_t whylen);

/* Give the read of d (p's state offer, or the pending one of a new build of p) the value at
 * text[at] (text[0..len)), under the guard. ECS_OK, or the error with why and where in
 * text (*err_at). A crash is ECS_ERR_PLUGIN ("its read crashed with SIGSEGV") with the
 * signal in *sig (may be NULL; 0 when nothing crashed). */
ecs_status host_plugin_state_read(host_plugin *p, const ecs_plugin_state_desc *d, const char *text,
                                  size_t len, size_t at, size_t *err_at, int *sig, char *why,
                                  size_t whylen);

/* p loaded again (back from parking, enabled, a new file): its own state kept in the scene
 * store, if any, read back by its read (then dropped from the store). False with one warning
 * when that failed: the state then stays kept. */
bool host_plugin_restore_state(host_session *hs, host_plugin *p);

/* Does loaded plugin q depend on p: does it declare p, or use an API p publishes now? */
bool host_plugin_depends_on(const host_session *hs, const host_plugin *q, const host_plugin *p);

/* Before p goes (crashed with nothing to roll back to, disabled): park every loaded plugin
 * that depends on it, directly or not, dependents of dependents first (on a cycle, which a
 * lazy api_find can make, the one loaded last first), each once with its components kept
 * as JSON (as on a reload), its unload() called, its file closed; status PARKED. `why`
 * says why p goes. host_reloader_poll brings them back once what they need is there. Out
 * of memory: one error line, nothing parked. */
void host_plugin_park_dependents(host_session *hs, host_plugin *p, const char *why);

/* Mark p skipped as bad: one log line naming the file and the reason (unless
 * hs->quiet_skips), counted for --strict, its mapping and copy released. */
void host_plugin_skip(host_session *hs, host_plugin *p, const char *fmt, ...) ECS_PRINTF(3, 4);

/* A record for the plugin file at path (file: relative to its plugin folder), not opened
 * yet. NULL: out of memory. */
host_plugin *host_plugin_new(host_session *hs, const char *path, const char *file);

/* Close a version of p (its library dl and private copy): dlclose, check with RTLD_NOLOAD
 * that it is really gone, delete the copy. */
void host_plugin_close_version(host_plugin *p, void *dl, char *copy);

/* Close the version kept to roll back to (reload.c keeps one after a same-layout reload),
 * if any. */
void host_plugin_forget_previous(host_plugin *p);

#endif
