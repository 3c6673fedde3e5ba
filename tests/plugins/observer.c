/* SPDX-License-Identifier: MIT */
/* observer.c: test plugin "observer": depends on "destroyer" (so its manager updates after
 * destroyer's) and checks every entities_destroyed batch; logs a summary at unload. */
#include "ecs_plugin.h"

#define MAX_SEEN 4096

/* The API "test.destroyer" v1 as destroyer.c publishes it. */
typedef struct test_destroyer_api {
    uint32_t struct_size;
    const void *ctx;
    bool (*destroyed_by_me)(const void *ctx, ecs_entity e);
    uint64_t (*updated_frame)(const void *ctx);
} test_destroyer_api;

/* What the summary line reports; every counter but batches and entities must stay 0. */
typedef struct observer {
    const ecs_host *host;
    const test_destroyer_api *destroyer;
    uint64_t updated_frame; /* last frame this manager was updated, UINT64_MAX if none */
    ecs_entity seen[MAX_SEEN];
    uint32_t batches, entities;
    uint32_t duplicates; /* ids announced more than once */
    uint32_t unknown;    /* ids destroyer did not destroy */
    uint32_t alive;      /* ids still alive when announced */
    uint32_t early;      /* ids announced before every update of the frame ran */
    uint64_t id_sum;
} observer;

static void observer_update(void *state, const ecs_frame_info *frame)
{
    ((observer *)state)->updated_frame = frame->frame;
}

static bool seen_before(const observer *o, ecs_entity e)
{
    for (uint32_t i = 0; i < o->entities && i < MAX_SEEN; i++)
        if (ecs_entity_eq(o->seen[i], e)) return true;
    return false;
}

static void observer_destroyed(void *state, const ecs_entity *list, uint32_t count)
{
    observer *o = state;
    uint64_t now = o->host->frame->frame;
    bool after_updates =
        o->updated_frame == now && o->destroyer->updated_frame(o->destroyer->ctx) == now;
    o->batches++;
    for (uint32_t i = 0; i < count; i++) {
        ecs_entity e = list[i];
        o->duplicates += seen_before(o, e);
        o->unknown += !o->destroyer->destroyed_by_me(o->destroyer->ctx, e);
        o->alive += ecs_alive(o->host, e);
        o->early += !after_updates;
        if (o->entities < MAX_SEEN) o->seen[o->entities] = e;
        o->entities++;
        o->id_sum += e.id;
    }
}

static ecs_status observer_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    size_t size = 0;
    const test_destroyer_api *api = h->api_find(h, "test.destroyer", 1, &size);
    if (!api || size < sizeof *api) return ECS_ERR_NOT_FOUND;
    observer *o = h->alloc(h, sizeof *o);
    if (!o) return ECS_ERR_NO_MEMORY;
    *o = (observer){.host = h, .destroyer = api, .updated_frame = UINT64_MAX};
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = "observer",
                          .state = o,
                          .update = observer_update,
                          .entities_destroyed = observer_destroyed};
    ecs_status s = h->register_manager(h, &m);
    if (s != ECS_OK) {
        h->free(h, o);
        return s;
    }
    *state = o;
    return ECS_OK;
}

static void observer_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    observer *o = state;
    h->log(h, ECS_LOG_INFO,
           "observer heard %u batches, %u entities, id sum %llu; duplicates %u, unknown %u, "
           "alive %u, before updates %u",
           o->batches, o->entities, (unsigned long long)o->id_sum, o->duplicates, o->unknown,
           o->alive, o->early);
    h->free(h, o);
}

static const char *const observer_deps[] = {"destroyer", NULL};

static const ecs_plugin_desc observer_plugin = {
    ECS_PLUGIN_DESC_HEADER, "observer",    "1.0.0",         1,
    observer_deps,          observer_load, observer_unload, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(observer_plugin)
