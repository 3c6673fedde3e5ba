/* SPDX-License-Identifier: MIT */
/* bench_managers.c: a plugin for ecs-bench's D1: registers K managers whose update is
 * empty, K from its manifest config {"managers": K} (default 3). Also the table through
 * which D1 measures a plugin's liveness checks. */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "ecs_plugin.h"

#define MAX_MANAGERS 1024

static void empty_update(void *state, const ecs_frame_info *frame)
{
    (void)state;
    (void)frame;
}

static ecs_status load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    (void)args;
    const cJSON *k = h->config ? cJSON_GetObjectItemCaseSensitive(h->config, "managers") : NULL;
    int count = cJSON_IsNumber(k) ? k->valueint : 3;
    if (count < 1 || count > MAX_MANAGERS) return ECS_ERR_BAD_VALUE;
    for (int i = 0; i < count; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        ecs_manager_desc d = {.struct_size = sizeof d, .name = name, .update = empty_update};
        ecs_status s = h->register_manager(h, &d);
        if (s != ECS_OK) return s;
    }
    *state = NULL;
    return ECS_OK;
}

static const ecs_plugin_desc desc = {
    ECS_PLUGIN_DESC_HEADER, "bench_managers", "1.0", 1, NULL, load, NULL, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(desc)
