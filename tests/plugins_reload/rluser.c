/* SPDX-License-Identifier: MIT */
/* rluser.c: a plugin that uses the API "test.reloadee" of rl (reloadee.c) through
 * api_find only, without declaring the dependency: the host must still know that it
 * depends on rl (park it before rl goes, refuse an rl build that withdraws the API).
 *
 * RLUSER_NAME="x" builds it as plugin and manager x (default "rluser"): a second user.
 *
 * Log lines (info): "rluser load: found test.reloadee" (or "no test.reloadee", and the load
 * fails), "rluser first update: N rl components" (through the API, in its first update
 * after each load), RLUSER_NAME " unload".
 */
#include "ecs_plugin.h"
#include "reloadee_api.h"

#ifndef RLUSER_NAME
#define RLUSER_NAME "rluser"
#endif

typedef struct rluser {
    const ecs_host *host;
    const reloadee_api *api;
    bool updated;
} rluser;

static rluser self;

static void rluser_update(void *state, const ecs_frame_info *frame)
{
    rluser *u = state;
    (void)frame;
    uint32_t n = u->api->count(u->api->self); /* into rl's code, every frame */
    if (!u->updated)
        u->host->log(u->host, ECS_LOG_INFO, RLUSER_NAME " first update: %u rl components", n);
    u->updated = true;
}

static ecs_status rluser_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    (void)args;
    self = (rluser){h, h->api_find(h, RELOADEE_API_NAME, RELOADEE_API_VERSION, NULL), false};
    h->log(h, ECS_LOG_INFO, RLUSER_NAME " load: %s " RELOADEE_API_NAME, self.api ? "found" : "no");
    if (!self.api) return ECS_ERR_NOT_FOUND;
    ecs_manager_desc d = {
        .struct_size = sizeof d, .name = RLUSER_NAME, .state = &self, .update = rluser_update};
    *state = &self;
    return h->register_manager(h, &d);
}

static void rluser_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    (void)state, (void)reason;
    h->log(h, ECS_LOG_INFO, RLUSER_NAME " unload");
}

static const ecs_plugin_desc rluser_plugin = {
    ECS_PLUGIN_DESC_HEADER, RLUSER_NAME, "1", 1, NULL, rluser_load, rluser_unload, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(rluser_plugin)
