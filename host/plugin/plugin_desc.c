/* SPDX-License-Identifier: MIT */
/* plugin_desc.c: the check of a plugin's description (plugin_desc.h), for the loader and
 * for the probe's child alike. */
#include "plugin_desc.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The size of the first ABI's description: a description shorter than that was not built
 * against this SDK. */
#define PLUGIN_DESC_V1_SIZE (offsetof(ecs_plugin_desc, unload) + sizeof(void *))

static bool valid_plugin_name(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");
    return n > 0 && n < 64 && s[n] == '\0';
}

bool host_plugin_desc_ok(const ecs_plugin_desc *d, char *why, size_t len)
{
    if (!d)
        snprintf(why, len, "%s() returned NULL", ECS_PLUGIN_ENTRY_NAME);
    else if (d->struct_size < PLUGIN_DESC_V1_SIZE)
        snprintf(why, len,
                 "ecs_plugin_desc.struct_size is %u, at least %zu expected: the "
                 "plugin was not built against this SDK",
                 d->struct_size, PLUGIN_DESC_V1_SIZE);
    else if (d->abi_major != ECS_ABI_MAJOR)
        snprintf(why, len,
                 "built for ABI %u.%u, this host speaks %u.%u: rebuild the plugin "
                 "against this SDK",
                 d->abi_major, d->abi_minor, ECS_ABI_MAJOR, ECS_ABI_MINOR);
    else if (d->abi_minor > ECS_ABI_MINOR)
        snprintf(why, len, "built for ABI %u.%u, newer than this host's %u.%u: update the host",
                 d->abi_major, d->abi_minor, ECS_ABI_MAJOR, ECS_ABI_MINOR);
    else if (!d->name || !valid_plugin_name(d->name))
        snprintf(why, len, "its name must be 1-63 characters of [a-z0-9_]");
    else if (!d->load)
        snprintf(why, len, "its description has no load() function");
    else
        return true;
    return false;
}
