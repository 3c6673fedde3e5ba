/* SPDX-License-Identifier: MIT */
/* bench_queries.c: a plugin for ecs-bench's V1: creates the collections {transform, mesh}
 * and {transform, not debug_name} in its load() (the only time a plugin may) and publishes
 * their handles as the API "bench.queries" (bench_queries.h). */
#include "bench_queries.h"

static const char *const transform_mesh[] = {"transform", "mesh", NULL};
static const char *const transform[] = {"transform", NULL};
static const char *const debug_name[] = {"debug_name", NULL};

static ecs_status load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    (void)args;
    bench_queries_api api = {sizeof api, 0, 0};
    ecs_query_desc a = {sizeof a, transform_mesh, NULL}, b = {sizeof b, transform, debug_name};
    ecs_status s = h->collection_create(h, &a, &api.with_mesh);
    if (s == ECS_OK) s = h->collection_create(h, &b, &api.without_name);
    if (s == ECS_OK) s = h->api_publish(h, BENCH_QUERIES_API_NAME, 1, &api, sizeof api);
    *state = NULL;
    return s;
}

static const char *const deps[] = {"transform", "mesh", "debug_name", NULL};

static const ecs_plugin_desc desc = {
    ECS_PLUGIN_DESC_HEADER, "bench_queries", "1.0", 1, deps, load, NULL, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(desc)
