/* SPDX-License-Identifier: MIT */
/* loader.h: finding plugin files in the plugin folders, their manifests, the load order,
 * and loading them all at start (loader.c). One plugin's states and transitions are
 * plugin.h's.
 *
 * A folder's files: every *.so in it and in its subfolders one level down (not hidden,
 * not meson's NAME.p), each checked for permissions on the way (host_plugin_path_insecure),
 * opened (plugin.h), named duplicates skipped (in one folder an error, in a later folder
 * the rule), the folder's manifest applied (rank, config, disabled), ordered (dependencies,
 * folder, manifest, file name) and loaded.
 */
#ifndef HOST_LOADER_H
#define HOST_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ecs_plugin.h"

typedef struct host_session host_session;

typedef struct host_load_options {
    bool allow_insecure;        /* load plugins others may write (with a warning) */
    const bool *may_be_missing; /* per folder (NULL: none): ECS_PLUGIN_PATH's, passed over
                                   with one warning when it is not there, as PATH's are */
} host_load_options;

/* Find, validate, order and load every plugin of dir (and of its subfolders, one level
 * down). Bad plugins are logged, counted in hs->bad_plugins and skipped. Returns ECS_OK,
 * or an error when the folder or its manifest cannot be used (nothing is loaded then). */
ecs_status host_load_dir(host_session *hs, const char *dir, const host_load_options *opt);

/* Load the plugins of several folders: each folder's files, then each folder's manifest,
 * in folder order; a plugin name found in an earlier folder wins (one info line names the
 * file skipped); load order: dependencies, folder, manifest, file name. A folder that does
 * not exist is an error (nothing loads), unless opt->may_be_missing says it may be. */
ecs_status host_load_dirs(host_session *hs, const char *const *dirs, size_t n,
                          const host_load_options *opt);

/* Unload every loaded plugin in reverse load order, reporting leaks by plugin name. */
void host_unload_all(host_session *hs);

/* Print the plugins found, one block each (for --list). */
void host_print_list(const host_session *hs, FILE *out);

#endif
