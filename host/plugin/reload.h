/* SPDX-License-Identifier: MIT */
/* reload.h: hot reload: new builds of plugins swapped in at a frame boundary, data kept.
 *
 * With --watch, every plugin is loaded from a private copy (a 0700 folder the host
 * creates and removes at exit), never from the build output, so a linker or cp may
 * rewrite the original at any time. A changed file is loaded and validated (ELF, entry,
 * ABI, its own load()) beside the running version; only then is state handed over:
 * the same state_version passes the state pointer, another migrates every component
 * through JSON (the old code saves, the new code loads). Managers keep their place in
 * the update order, APIs are rewritten in place. Any failure keeps the old version
 * running and says why in one line. A new file loads as a new plugin; a deleted one
 * unloads, its components kept as JSON for when it comes back.
 */
#ifndef HOST_RELOAD_H
#define HOST_RELOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef struct host_session host_session;
struct host_plugin;
typedef struct host_reloader host_reloader;

typedef struct host_reload_options {
    bool poll;         /* scan the folder instead of using inotify */
    uint64_t quiet_ns; /* wait this long after the last change of a file */
    uint64_t poll_ns;  /* scan period when polling */
    bool allow_insecure;
} host_reload_options;

/* Create the private folder (host_private_make: call before loading the plugins) and
 * start watching dirs. NULL with an error logged when the folder cannot be made. */
host_reloader *host_reloader_new(host_session *hs, const char *const *dirs, size_t n,
                                 const host_reload_options *opt);

/* Apply what changed: call at a frame boundary. Never blocks. */
void host_reloader_poll(host_reloader *r);

/* --safe: p's code crashed; give its place back to the version before its last
 * same-layout reload, which takes the state back (its load() with previous_state). True
 * when that worked; false when there is no such version or it failed (then unload p). */
bool host_reload_rollback(host_session *hs, struct host_plugin *p);

/* End of a --safe frame: every plugin that crashed rolls back (host_reload_rollback) or is
 * unloaded, without calling into it again except to keep its
 * components as JSON (itself guarded); its dependents are parked first. */
void host_reload_drop_crashed(host_session *hs);

/* Call fn(arg, plugin) at the frame boundary just before a new build of loaded plugin
 * `plugin` is tried in its place (the live loop restores the loop's start then, so the new
 * code runs the same frames). NULL fn: none. */
void host_reloader_on_swap(host_reloader *r, void (*fn)(void *arg, const char *plugin), void *arg);

/* Reloads done and refused so far (for --stats). */
void host_reloader_counts(const host_reloader *r, unsigned *done, unsigned *failed);

/* Stop watching; the private folder is removed by host_private_remove() (private.h)
 * after the plugins were freed. */
void host_reloader_free(host_reloader *r);

#endif
