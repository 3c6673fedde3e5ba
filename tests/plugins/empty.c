/* SPDX-License-Identifier: MIT */
/* empty.c: test plugin "empty": loads fine but registers no manager and publishes no API,
 * which the host must report as a warning (the plugin still loads). */
#include "ecs_plugin.h"

static ecs_status empty_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    *state = NULL;
    return ECS_OK;
}

static const ecs_plugin_desc empty_plugin = {
    ECS_PLUGIN_DESC_HEADER, "empty", "1.0.0", 1, NULL, empty_load, NULL, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(empty_plugin)
