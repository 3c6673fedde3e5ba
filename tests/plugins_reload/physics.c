/* SPDX-License-Identifier: MIT */
/* physics.c: the outside author's physics plugin (issue 32) as a test plugin of
 * test_reload.c, built as several versions from this one source with -D flags.
 *
 * Plugin "physics" with one manager of the same name: a velocity per entity (scene value
 * {"velocity": [x, y, z]}), kept the way the tutorial keeps data: an ecs_soa (entity,
 * velocity) and an entity map behind one state struct, handed over on a same-layout
 * reload. It publishes the API "game.physics" (PHYS_API_VERSION) for its users (spawner.c).
 *
 * Build flags:
 *   PHYS_VERSION="v"  version string, in every log line (default "1")
 *   PHYS_GRAVITY      a double added to the state before the ecs_soa, state_version not
 *                     bumped: the author's mistake the host must refuse
 *   PHYS_NO_LAYOUT    the description records no state layout (ECS_STATE_NONE)
 *   PHYS_MISREAD      count() reads a word beside the count (as code reading the state
 *                     through another layout does): far more components than entities
 *   PHYS_API_VERSION=n  the version of "game.physics" it publishes (default 1)
 *
 * Log lines (info), "physics 1" standing for the name and PHYS_VERSION:
 *   "physics 1 load: new state" | "physics 1 load: adopted N components"
 *   "physics 1 unload (shutdown|keep state|refused|migrated): N components"
 */
#include <string.h>

#include "ecs_plugin.h"
#include "ecs_soa.h"
#include "physics_api.h"
#include "unload_reason.h"

#ifndef PHYS_VERSION
#define PHYS_VERSION "1"
#endif
#ifndef PHYS_API_VERSION
#define PHYS_API_VERSION 1u
#endif
#define WHO "physics " PHYS_VERSION

enum { F_ENTITY, F_VELOCITY, F_COUNT };

typedef struct phys_state {
    uint32_t layout; /* 1: checked when a state is adopted */
#ifdef PHYS_GRAVITY
    double gravity; /* added, and state_version left at 1 */
#endif
    const ecs_host *host;
    ecs_soa soa; /* F_ENTITY ecs_entity, F_VELOCITY float[3] */
    ecs_entity_map map;
    uint64_t steps;
} phys_state;

static ecs_entity *ents(const phys_state *s)
{
    return (ecs_entity *)s->soa.field[F_ENTITY];
}

static float *velocity(const phys_state *s, uint32_t i)
{
    return (float *)s->soa.field[F_VELOCITY] + 3u * i;
}

static void phys_update(void *state, const ecs_frame_info *frame)
{
    (void)frame;
    ((phys_state *)state)->steps++;
}

static void phys_destroyed(void *state, const ecs_entity *list, uint32_t n)
{
    phys_state *s = state;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, list[k]);
        if (i == ECS_SOA_NONE) continue;
        ecs_entity gone = ents(s)[i];
        uint32_t moved = ecs_soa_remove(&s->soa, i);
        ecs_entity_map_set(&s->map, gone, ECS_SOA_NONE);
        if (moved != ECS_SOA_NONE) ecs_entity_map_set(&s->map, ents(s)[i], i);
    }
}

static uint32_t phys_count(void *state)
{
    const phys_state *s = state;
#ifdef PHYS_MISREAD
    return s->soa.count | 0xF0000000u; /* what a word beside the count holds, say */
#else
    return s->soa.count;
#endif
}

static ecs_status phys_write(void *state, ecs_entity e, ecs_json_writer *w)
{
    phys_state *s = state;
    uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (i == ECS_SOA_NONE) return ECS_OK;
    w->begin_object(w);
    w->key(w, "velocity");
    w->array_f32(w, velocity(s, i), 3);
    w->end_object(w);
    return ECS_OK;
}

static ecs_status phys_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    phys_state *s = state;
    float v[3] = {0, 0, 0};
    const char *key;
    if (!r->begin_object(r)) return ECS_ERR_BAD_VALUE;
    while (r->key(r, &key))
        if (ecs_json_key_is(key, "velocity")) r->array_f32(r, v, 3);
    if (r->failed(r)) return ECS_ERR_BAD_VALUE;
    uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (i == ECS_SOA_NONE) {
        if ((i = ecs_soa_push(&s->soa)) == ECS_SOA_NONE) return ECS_ERR_NO_MEMORY;
        if (ecs_entity_map_set(&s->map, e, i) != ECS_OK) {
            ecs_soa_remove(&s->soa, i);
            return ECS_ERR_NO_MEMORY;
        }
        ents(s)[i] = e;
    }
    memcpy(velocity(s, i), v, sizeof v);
    return ECS_OK;
}

/* ---- the API ---- */

static uint32_t api_count(void *self)
{
    return ((phys_state *)self)->soa.count;
}

static uint64_t api_steps(void *self)
{
    return ((phys_state *)self)->steps;
}

/* ---- the plugin ---- */

static void state_free(phys_state *s)
{
    const ecs_host *h = s->host;
    ecs_soa_free(&s->soa);
    ecs_entity_map_free(&s->map);
    h->free(h, s);
}

static ecs_status phys_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    static const size_t sizes[F_COUNT] = {sizeof(ecs_entity), 3 * sizeof(float)};
    phys_state *s = ecs_load_args_previous_state(args);
    bool adopted = s != NULL;
    if (s && s->layout != 1u) return ECS_ERR_ABI;
    if (!s) {
        if (!(s = h->alloc(h, sizeof *s))) return ECS_ERR_NO_MEMORY;
        memset(s, 0, sizeof *s);
        s->layout = 1u;
        s->host = h;
        ecs_soa_init(&s->soa, h, F_COUNT, sizes);
        ecs_entity_map_init(&s->map, h);
    }
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = "physics",
                          .state = s,
                          .update = phys_update,
                          .entities_destroyed = phys_destroyed,
                          .count = phys_count,
                          .write_component = phys_write,
                          .read_component = phys_read};
    game_physics_api api = {sizeof api, s, api_count, api_steps};
    ecs_status st = h->register_manager(h, &m);
    if (st == ECS_OK)
        st = h->api_publish(h, GAME_PHYSICS_API_NAME, PHYS_API_VERSION, &api, sizeof api);
    if (st != ECS_OK) {
        if (!adopted) state_free(s);
        return st;
    }
    if (adopted)
        h->log(h, ECS_LOG_INFO, WHO " load: adopted %u components", phys_count(s));
    else
        h->log(h, ECS_LOG_INFO, WHO " load: new state");
    *state = s;
    return ECS_OK;
}

static void phys_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    phys_state *s = state;
    h->log(h, ECS_LOG_INFO, WHO " unload (%s): %u components", unload_reason_text(reason),
           s ? s->soa.count : 0);
    if (s && reason != ECS_UNLOAD_RELOAD_KEEP_STATE) state_free(s);
}

#ifdef PHYS_NO_LAYOUT
#define PHYS_STATE_LAYOUT ECS_STATE_NONE
#elif defined(PHYS_GRAVITY)
#define PHYS_STATE_LAYOUT ECS_STATE_LAYOUT(phys_state, layout, gravity, host, soa, map, steps)
#else
#define PHYS_STATE_LAYOUT ECS_STATE_LAYOUT(phys_state, layout, host, soa, map, steps)
#endif

static const ecs_plugin_desc phys_plugin = {
    ECS_PLUGIN_DESC_HEADER, "physics", PHYS_VERSION, 1, NULL, phys_load, phys_unload,
    PHYS_STATE_LAYOUT,
};

ECS_PLUGIN_EXPORT(phys_plugin)
