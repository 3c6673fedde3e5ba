/* SPDX-License-Identifier: MIT */
/* noentry.c: bad test plugin: a valid shared object that exports a misspelled entry point
 * (plugin_entry) instead of ecs_plugin_entry, as if ECS_PLUGIN_EXPORT had been forgotten. */
#include "ecs_plugin.h"

static ecs_status noentry_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    h->log(h, ECS_LOG_ERROR, "noentry: load() was called");
    return ECS_OK;
}

static const ecs_plugin_desc noentry_plugin = {
    ECS_PLUGIN_DESC_HEADER, "noentry", "1.0.0", 1, NULL, noentry_load, NULL, ECS_STATE_NONE,
};

ECS_EXPORT const ecs_plugin_desc *plugin_entry(void);
ECS_EXPORT const ecs_plugin_desc *plugin_entry(void)
{
    return &noentry_plugin;
}
