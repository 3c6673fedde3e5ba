/* SPDX-License-Identifier: MIT */
/* counter.c: test plugin "counter": a manager that counts the frames it is updated in,
 * publishes the API "test.counter" v1 to read the count, and logs the total at unload. */
#include "ecs_plugin.h"

/* The API "test.counter", version 1. user.c declares the same layout: it is the contract
 * between the two plugins, the host only copies the bytes. */
typedef struct test_counter_api {
    uint32_t struct_size;
    const void *ctx;                     /* the counter's state, passed back to frames() */
    uint64_t (*frames)(const void *ctx); /* frames updated so far */
} test_counter_api;

typedef struct counter {
    const ecs_host *host;
    uint64_t frames;
} counter;

#define REPORT_FRAME 3 /* logs once at this frame, so a test knows frames are running */

static uint64_t counter_frames(const void *ctx)
{
    return ((const counter *)ctx)->frames;
}

static void counter_update(void *state, const ecs_frame_info *frame)
{
    counter *c = state;
    if (frame->frame != c->frames) /* frames are numbered 0, 1, 2... with no gap */
        c->host->log(c->host, ECS_LOG_ERROR, "frame %llu after %llu updates",
                     (unsigned long long)frame->frame, (unsigned long long)c->frames);
    c->frames++;
    if (frame->frame == REPORT_FRAME)
        c->host->log(c->host, ECS_LOG_INFO, "reached frame %d", REPORT_FRAME);
}

static uint32_t counter_count(void *state)
{
    return (uint32_t)((counter *)state)->frames;
}

static ecs_status counter_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    counter *c = h->alloc(h, sizeof *c);
    if (!c) return ECS_ERR_NO_MEMORY;
    *c = (counter){h, 0};
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = "counter",
                          .state = c,
                          .update = counter_update,
                          .count = counter_count};
    test_counter_api api = {sizeof api, c, counter_frames};
    ecs_status s = h->register_manager(h, &m);
    if (s == ECS_OK) s = h->api_publish(h, "test.counter", 1, &api, sizeof api);
    if (s != ECS_OK) {
        h->free(h, c);
        return s;
    }
    *state = c;
    return ECS_OK;
}

static void counter_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    counter *c = state;
    h->log(h, ECS_LOG_INFO, "counter saw %llu frames", (unsigned long long)c->frames);
    h->free(h, c);
}

static const ecs_plugin_desc counter_plugin = {
    ECS_PLUGIN_DESC_HEADER, "counter",      "1.0.0",        1, NULL,
    counter_load,           counter_unload, ECS_STATE_LAYOUT(counter, host, frames),
};

ECS_PLUGIN_EXPORT(counter_plugin)
