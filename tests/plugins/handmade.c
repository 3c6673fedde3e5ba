/* SPDX-License-Identifier: MIT */
/* handmade.c: test plugin "handmade", compiled by test_host.c at test time with a bare
 * `cc -shared -fPIC -fvisibility=hidden -I sdk` (no meson) to prove the SDK is enough. */
#include "ecs_plugin.h"

static const ecs_host *handmade_host;

static void handmade_update(void *state, const ecs_frame_info *frame)
{
    if (frame->frame == 0) handmade_host->log(handmade_host, ECS_LOG_INFO, "hand-built update");
}

static ecs_status handmade_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    handmade_host = h;
    ecs_manager_desc m = {.struct_size = sizeof m, .name = "handmade", .update = handmade_update};
    *state = NULL;
    return h->register_manager(h, &m);
}

static const ecs_plugin_desc handmade_plugin = {
    ECS_PLUGIN_DESC_HEADER, "handmade", "1.0.0", 1, NULL, handmade_load, NULL, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(handmade_plugin)
