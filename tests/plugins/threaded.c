/* SPDX-License-Identifier: MIT */
/* threaded.c: a plugin that calls the host from a thread of its own, in load() and in its
 * first update: each call must be refused (ECS_ERR_WRONG_TIME, NULL, false), counted, and
 * reported by the host in one line at the next frame boundary. */
#include <pthread.h>

#include "ecs_plugin.h"

typedef struct threaded {
    const ecs_host *host;
    ecs_status create;
    void *memory;
    bool alive;
} threaded;

static threaded self;

static void *from_thread(void *arg)
{
    threaded *t = arg;
    ecs_entity e = {0};
    t->create = t->host->entity_create(t->host, &e);
    t->memory = t->host->alloc(t->host, 16);
    t->host->log(t->host, ECS_LOG_INFO, "this line must not appear");
    return NULL;
}

static void *alive_from_thread(void *arg)
{
    threaded *t = arg;
    t->alive = t->host->entity_alive(t->host, (ecs_entity){0});
    return NULL;
}

static void threaded_update(void *state, const ecs_frame_info *frame)
{
    threaded *t = state;
    if (frame->frame != 0) return;
    pthread_t th;
    if (pthread_create(&th, NULL, alive_from_thread, t) == 0) pthread_join(th, NULL);
    t->host->log(t->host, ECS_LOG_INFO, "entity_alive from a thread: %s",
                 t->alive ? "true" : "false");
}

static ecs_status threaded_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    (void)args;
    self.host = h;
    pthread_t th;
    if (pthread_create(&th, NULL, from_thread, &self) != 0) return ECS_ERR_PLUGIN;
    pthread_join(th, NULL);
    h->log(h, ECS_LOG_INFO, "entity_create from a thread: %s; alloc: %s",
           ecs_status_text(self.create), self.memory ? "memory" : "NULL");
    ecs_manager_desc d = {
        .struct_size = sizeof d, .name = "threaded", .state = &self, .update = threaded_update};
    *state = &self;
    return h->register_manager(h, &d);
}

static void threaded_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    (void)h, (void)state, (void)reason;
}

static const ecs_plugin_desc threaded_plugin = {
    ECS_PLUGIN_DESC_HEADER, "threaded",      "1.0.0",        1, NULL,
    threaded_load,          threaded_unload, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(threaded_plugin)
