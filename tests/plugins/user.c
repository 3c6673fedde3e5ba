/* SPDX-License-Identifier: MIT */
/* user.c: test plugin "user": depends on "counter", finds its API "test.counter" v1 in
 * load(), reads the count in every update and logs the last value at unload. */
#include "ecs_plugin.h"

/* The API "test.counter" v1 as counter.c publishes it. */
typedef struct test_counter_api {
    uint32_t struct_size;
    const void *ctx;
    uint64_t (*frames)(const void *ctx);
} test_counter_api;

typedef struct user {
    const test_counter_api *counter; /* the host's copy: valid until the host exits */
    uint64_t last, updates;
} user;

static void user_update(void *state, const ecs_frame_info *frame)
{
    user *u = state;
    u->last = u->counter->frames(u->counter->ctx);
    u->updates++;
}

static ecs_status user_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    size_t size = 0;
    const test_counter_api *api = h->api_find(h, "test.counter", 1, &size);
    if (!api || size < sizeof *api) {
        h->log(h, ECS_LOG_ERROR, "API test.counter v1 not found");
        return ECS_ERR_NOT_FOUND;
    }
    user *u = h->alloc(h, sizeof *u);
    if (!u) return ECS_ERR_NO_MEMORY;
    *u = (user){api, 0, 0};
    ecs_manager_desc m = {
        .struct_size = sizeof m, .name = "user", .state = u, .update = user_update};
    ecs_status s = h->register_manager(h, &m);
    if (s != ECS_OK) {
        h->free(h, u);
        return s;
    }
    *state = u;
    return ECS_OK;
}

static void user_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    user *u = state;
    h->log(h, ECS_LOG_INFO, "user read count %llu after %llu updates", (unsigned long long)u->last,
           (unsigned long long)u->updates);
    h->free(h, u);
}

static const char *const user_deps[] = {"counter", NULL};

static const ecs_plugin_desc user_plugin = {
    ECS_PLUGIN_DESC_HEADER, "user", "1.0.0", 1, user_deps, user_load, user_unload, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(user_plugin)
