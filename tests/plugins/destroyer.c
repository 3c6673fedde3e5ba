/* SPDX-License-Identifier: MIT */
/* destroyer.c: test plugin "destroyer": creates entities in load(), destroys some in every
 * update and in a cascade, and publishes "test.destroyer" v1 for observer.c to check.
 *
 * Per frame f < 10: parents 2f and 2f+1 singly, five "others" in one entity_destroy_many
 * with a dead id added, two of three entities created that same update; then, hearing a
 * parent died, its child (a second announcement round in the same frame): 11 ids. */
#include "ecs_plugin.h"

#define PARENTS       20  /* ids[0..20): destroyed two per frame in update */
#define CHILDREN      20  /* ids[20..40): child i dies when parent i is announced */
#define OTHERS        200 /* ids[40..240): destroyed five per frame, in a batch */
#define TOTAL         (PARENTS + CHILDREN + OTHERS)
#define MAX_DESTROYED 4096

/* The API "test.destroyer" v1, as observer.c declares it. */
typedef struct test_destroyer_api {
    uint32_t struct_size;
    const void *ctx;
    bool (*destroyed_by_me)(const void *ctx, ecs_entity e); /* did this plugin destroy e? */
    uint64_t (*updated_frame)(const void *ctx); /* last frame updated, UINT64_MAX if none */
} test_destroyer_api;

typedef struct destroyer {
    const ecs_host *host;
    ecs_entity ids[TOTAL];
    ecs_entity destroyed[MAX_DESTROYED]; /* every id this plugin destroyed, in order */
    uint32_t destroyed_count;
    uint64_t id_sum; /* of destroyed[], for the test to compare with observer's */
    uint64_t updated_frame;
} destroyer;

static bool destroyed_by_me(const void *ctx, ecs_entity e)
{
    const destroyer *d = ctx;
    for (uint32_t i = 0; i < d->destroyed_count; i++)
        if (ecs_entity_eq(d->destroyed[i], e)) return true;
    return false;
}

static uint64_t updated_frame(const void *ctx)
{
    return ((const destroyer *)ctx)->updated_frame;
}

static void record(destroyer *d, ecs_entity e)
{
    if (d->destroyed_count == MAX_DESTROYED) return;
    d->destroyed[d->destroyed_count++] = e;
    d->id_sum += e.id;
}

/* Destroy e through entity_destroy and record it when it was alive. */
static void destroy_one(destroyer *d, ecs_entity e)
{
    const ecs_host *h = d->host;
    if (!ecs_alive(h, e)) return;
    if (h->entity_destroy(h, e) == ECS_OK)
        record(d, e);
    else
        h->log(h, ECS_LOG_ERROR, "entity_destroy of a live entity failed");
}

static void destroyer_update(void *state, const ecs_frame_info *frame)
{
    destroyer *d = state;
    const ecs_host *h = d->host;
    uint64_t f = frame->frame;
    for (uint64_t i = f * 2; i < f * 2 + 2 && i < PARENTS; i++) destroy_one(d, d->ids[i]);
    if (40 + f * 5 + 5 <= TOTAL) { /* five others plus one dead id in one call */
        ecs_entity batch[6];
        for (int i = 0; i < 5; i++) batch[i] = d->ids[40 + f * 5 + (uint64_t)i];
        batch[5] = f > 0 ? d->ids[40] : ecs_entity_null(); /* stale: must be skipped */
        for (int i = 0; i < 5; i++) record(d, batch[i]);
        if (h->entity_destroy_many(h, batch, 6) != ECS_ERR_STALE_ENTITY)
            h->log(h, ECS_LOG_ERROR, "entity_destroy_many did not report the dead id");
    }
    ecs_entity brief[3]; /* entities that live less than a frame */
    if (h->entity_create_many(h, brief, 3) == ECS_OK) {
        destroy_one(d, brief[0]);
        destroy_one(d, brief[2]);
        if (f == 0 && h->entity_destroy(h, brief[2]) != ECS_ERR_STALE_ENTITY) /* twice */
            h->log(h, ECS_LOG_ERROR, "destroying a dead entity did not fail");
    }
    d->updated_frame = f;
}

static void destroyer_destroyed(void *state, const ecs_entity *list, uint32_t count)
{
    destroyer *d = state;
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t p = 0; p < PARENTS; p++)
            if (ecs_entity_eq(list[i], d->ids[p])) destroy_one(d, d->ids[PARENTS + p]);
}

static uint32_t destroyer_count(void *state)
{
    destroyer *d = state;
    uint32_t alive = 0;
    for (uint32_t i = 0; i < TOTAL; i++) alive += ecs_alive(d->host, d->ids[i]);
    return alive;
}

static ecs_status destroyer_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    destroyer *d = h->alloc(h, sizeof *d);
    if (!d) return ECS_ERR_NO_MEMORY;
    d->host = h;
    d->destroyed_count = 0;
    d->id_sum = 0;
    d->updated_frame = UINT64_MAX;
    ecs_status s = h->entity_create_many(h, d->ids, TOTAL);
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = "destroyer",
                          .state = d,
                          .update = destroyer_update,
                          .entities_destroyed = destroyer_destroyed,
                          .count = destroyer_count};
    test_destroyer_api api = {sizeof api, d, destroyed_by_me, updated_frame};
    if (s == ECS_OK) s = h->register_manager(h, &m);
    if (s == ECS_OK) s = h->api_publish(h, "test.destroyer", 1, &api, sizeof api);
    if (s != ECS_OK) {
        h->free(h, d);
        return s;
    }
    *state = d;
    return ECS_OK;
}

static void destroyer_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    destroyer *d = state;
    h->log(h, ECS_LOG_INFO, "destroyer destroyed %u entities, id sum %llu", d->destroyed_count,
           (unsigned long long)d->id_sum);
    h->free(h, d);
}

static const ecs_plugin_desc destroyer_plugin = {
    ECS_PLUGIN_DESC_HEADER, "destroyer",      "1.0.0",        1, NULL,
    destroyer_load,         destroyer_unload, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(destroyer_plugin)
