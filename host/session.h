/* SPDX-License-Identifier: MIT */
/* session.h: what a running ecs-host is: the world (the ECS core, world.h) and everything
 * around it that is not the ECS: the plugin records and their lifecycle (host/plugin), the
 * named-API registry, the private copy folder, the probe settings, the scene store, the
 * trace, the inspector's handle.
 *
 * The session installs the world's hooks (world.h): owner code runs under the crash guard
 * (guard.h), a crash marks the owning plugin record, a --safe frame ends by dropping the
 * plugins that crashed, destroyed entities leave the scene store, and trace slices go to
 * the --trace file. Each field lives where its concern does: the plugin layer
 * (plugin.c, loader.c, reload.c, private.c) reads and writes the plugin fields; main.c
 * wires the command line to the session.
 *
 * Invariants: plugins[] is in load order; every manager and system of the world belongs
 * to one plugin record of plugins[] (its owner tag); world->hooks.ctx is this session.
 */
#ifndef HOST_SESSION_H
#define HOST_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "probe.h"
#include "registry.h"
#include "scene.h"
#include "trace.h"
#include "world.h"

typedef struct host_plugin host_plugin;
struct host_inspector;

typedef struct host_session {
    host_world *world;      /* the ECS core */
    host_registry registry; /* the APIs plugins publish for each other */
    host_plugin **plugins;  /* load order */
    size_t plugin_count, plugin_cap;
    int bad_plugins;         /* plugins skipped as bad (for --strict) */
    bool quiet_skips;        /* the reloader reports bad builds itself */
    char *private_dir;       /* where plugins are copied before dlopen (its name), or NULL */
    int private_fd;          /* that folder, opened once when made: copies go through it */
    char *private_at;        /* "/proc/PID/fd/N": the folder by its descriptor, never by name */
    unsigned copies;         /* copies made so far: unique names */
    host_probe_config probe; /* new plugin files run first in a child (probe.h) */
    host_scene_store *scene; /* scene ids and kept JSON of entities (scene.h) */
    host_trace trace;        /* --trace */
    struct host_inspector *inspector; /* --inspect, or NULL (main.c sets it) */
} host_session;

/* A new session: a world with no plugins, its hooks installed, an empty scene store. The
 * first session made claims the calling thread as the main thread (the one plugins call
 * the host from). NULL when memory ran out. */
host_session *host_session_new(void);

/* Unload every plugin (reverse load order), close the trace, remove the private folder,
 * free the session and its world. NULL is allowed. */
void host_session_free(host_session *s);

/* Run one frame (world.h), then report the plugins that called the host from another
 * thread during it. */
void host_session_frame(host_session *s);

/* Write a Chrome trace-event JSON file of every manager update from now on. Returns
 * ECS_ERR_IO when the file cannot be created. */
ecs_status host_session_trace_open(host_session *s, const char *path);
void host_session_trace_close(host_session *s);

#endif
