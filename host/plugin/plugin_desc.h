/* SPDX-License-Identifier: MIT */
/* plugin_desc.h: is what a plugin's entry function returned a description this host can
 * load: its size, its ABI version, its name, a load()? Knows only the SDK. */
#ifndef HOST_PLUGIN_DESC_H
#define HOST_PLUGIN_DESC_H

#include <stdbool.h>
#include <stddef.h>

#include "ecs_plugin.h"

/* Check a description; on error write the reason into why and return false. */
bool host_plugin_desc_ok(const ecs_plugin_desc *d, char *why, size_t len);

#endif
