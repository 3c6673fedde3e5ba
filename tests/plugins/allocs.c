/* SPDX-License-Identifier: MIT */
/* allocs.c: test plugin "allocs": uses host->alloc/realloc/free, makes two bad frees the
 * host must refuse with an error, and leaks exactly 550 bytes in 2 blocks at unload. */
#include <stdint.h>

#include "ecs_plugin.h"

#define LEAK_A 250 /* realloc'd from 200 */
#define LEAK_B 300

typedef struct allocs {
    const ecs_host *host;
    void *leak_a, *leak_b; /* never freed: the host must report 550 bytes in 2 blocks */
} allocs;

static void check_aligned(const ecs_host *h, const void *p)
{
    if ((uintptr_t)p % 16 != 0) h->log(h, ECS_LOG_ERROR, "block %p is misaligned", p);
}

static void allocs_update(void *state, const ecs_frame_info *frame)
{
    const ecs_host *h = ((allocs *)state)->host;
    void *tmp = h->alloc(h, 64); /* allocated and freed each frame: no leak */
    check_aligned(h, tmp);
    h->free(h, tmp);
}

static ecs_status allocs_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    static char not_from_host[16];
    allocs *a = h->alloc(h, sizeof *a);
    if (!a) return ECS_ERR_NO_MEMORY;
    void *first = h->alloc(h, 100);
    a->host = h;
    a->leak_a = h->alloc(h, 200);
    a->leak_b = h->alloc(h, LEAK_B);
    a->leak_a = h->realloc(h, a->leak_a, LEAK_A);
    check_aligned(h, a->leak_a);
    check_aligned(h, a->leak_b);
    h->free(h, first);
    h->free(h, first);                    /* refused: freed already */
    if (h->realloc(h, not_from_host, 32)) /* refused: not the host's */
        h->log(h, ECS_LOG_ERROR, "realloc of a foreign pointer succeeded");
    if (h->alloc(h, 0)) h->log(h, ECS_LOG_ERROR, "alloc(0) is not NULL");
    ecs_manager_desc m = {
        .struct_size = sizeof m, .name = "allocs", .state = a, .update = allocs_update};
    ecs_status s = h->register_manager(h, &m);
    if (s != ECS_OK || !a->leak_a || !a->leak_b) {
        h->free(h, a->leak_a);
        h->free(h, a->leak_b);
        h->free(h, a);
        return s != ECS_OK ? s : ECS_ERR_NO_MEMORY;
    }
    *state = a;
    return ECS_OK;
}

static void allocs_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    h->free(h, state); /* but not leak_a and leak_b */
}

static const ecs_plugin_desc allocs_plugin = {
    ECS_PLUGIN_DESC_HEADER, "allocs", "1.0.0", 1, NULL, allocs_load, allocs_unload, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(allocs_plugin)
