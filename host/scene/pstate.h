/* SPDX-License-Identifier: MIT */
/* pstate.h: a plugin's own state (ecs_host.plugin_state, ecs_plugin_state_desc) as JSON
 * text: written through the host's writer, read through its reader (pstate.c). Scenes keep
 * it under the plugin's name in the top-level "plugins" object (scene.h); a reload's
 * migration and a plugin's time away carry it as this text (plugin.c, reload.c).
 *
 * Both functions run plugin code: call them under the crash guard (guard.h).
 */
#ifndef HOST_PSTATE_H
#define HOST_PSTATE_H

#include <stddef.h>

#include "ecs_plugin.h"

/* The top-level key of a scene that holds the plugins' own states, by plugin name. */
#define HOST_PSTATE_KEY "plugins"

/* What d->write wrote: a malloc'd, NUL-terminated text of *len bytes ("" when it wrote
 * nothing). NULL when it failed, misused the writer or memory ran out, with the reason in
 * why. */
char *host_pstate_write(const ecs_plugin_state_desc *d, size_t *len, char *why, size_t whylen);

/* Give d->read the one value that starts at text[at] (text[0..len)). Returns ECS_OK, or the
 * error with the reason in why and where in the text it was found in *err_at (the value's
 * start when the plugin refused it without pointing at a value). */
ecs_status host_pstate_read(const ecs_plugin_state_desc *d, const char *text, size_t len, size_t at,
                            size_t *err_at, char *why, size_t whylen);

#endif
