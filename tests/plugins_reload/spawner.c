/* SPDX-License-Identifier: MIT */
/* spawner.c: a user of physics' API "game.physics" (physics.c) in the reload tests
 * (test_reload.c), as the outside author's spawner of issue 32: it finds the API with
 * api_find only (no declared dependency) at the version SPAWN_NEEDS says, and keeps
 * plugin-wide state outside components: a counter of its updates and a random seed.
 *
 * Its one manager "spawner" holds no components (count() is 0; it writes none and refuses
 * any it is given). Its counter and seed are its plugin state (ecs_host.plugin_state):
 * {"counter": C, "seed": "hex"}, kept in scenes, through migrations and while it is away.
 *
 * Build flags:
 *   SPAWN_VERSION="v"  version string, in every log line (default "1")
 *   SPAWN_NEEDS=n      the version of "game.physics" it asks api_find for (default 1)
 *   SPAWN_LAYOUT=2     another state layout (state_version 2): a reload migrates
 *   SPAWN_NO_STATE     offers no plugin state (as a build before ABI 1.1 would)
 *   SPAWN_STATE_TWICE  offers it twice (the host refuses the second, and the load fails)
 *
 * Log lines (info), "spawner 1" standing for the name and SPAWN_VERSION:
 *   "spawner 1 load: game.physics found" (else the load fails with ECS_ERR_NOT_FOUND)
 *   "spawner 1 state read: counter C, seed S" (its plugin state given back)
 *   "spawner 1 first update: physics counts N components"
 *   "spawner 1 unload (reason): counter C, seed S"
 */
#include <stdio.h>
#include <string.h>

#include "ecs_plugin.h"
#include "physics_api.h"
#include "unload_reason.h"

#ifndef SPAWN_VERSION
#define SPAWN_VERSION "1"
#endif
#ifndef SPAWN_NEEDS
#define SPAWN_NEEDS 1u
#endif
#define WHO "spawner " SPAWN_VERSION

#ifndef SPAWN_LAYOUT
#define SPAWN_LAYOUT 1
#endif

#if SPAWN_LAYOUT == 1
typedef struct spawn_state {
    uint32_t layout; /* SPAWN_LAYOUT */
    const ecs_host *host;
    const game_physics_api *physics; /* the host's copy: valid across physics' reloads */
    uint64_t counter;                /* updates run on this state */
    uint64_t seed;                   /* advanced every update (xorshift64) */
} spawn_state;
#else
typedef struct spawn_state {
    uint32_t layout;
    uint64_t seed, counter; /* the other way round */
    const game_physics_api *physics;
    const ecs_host *host;
} spawn_state;
#endif

static bool updated; /* by this copy of the code */

static void spawn_update(void *state, const ecs_frame_info *frame)
{
    spawn_state *s = state;
    (void)frame;
    s->counter++;
    s->seed ^= s->seed << 13, s->seed ^= s->seed >> 7, s->seed ^= s->seed << 17;
    if (!updated)
        s->host->log(s->host, ECS_LOG_INFO, WHO " first update: physics counts %u components",
                     s->physics->count(s->physics->self));
    updated = true;
}

static uint32_t spawn_count(void *state)
{
    (void)state;
    return 0;
}

/* Components: none written, none taken. */
static ecs_status spawn_write(void *state, ecs_entity e, ecs_json_writer *w)
{
    (void)state, (void)e, (void)w;
    return ECS_OK;
}

static ecs_status spawn_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    (void)state, (void)e;
    r->skip(r);
    r->error(r, "spawner holds no components");
    return ECS_ERR_BAD_VALUE;
}

/* The plugin state: {"counter": C, "seed": "hex"} (a 64-bit seed is no JSON number). */
static ecs_status state_write(void *state, ecs_json_writer *w)
{
    const spawn_state *s = state;
    char seed[24];
    snprintf(seed, sizeof seed, "%016llx", (unsigned long long)s->seed);
    w->begin_object(w);
    w->key(w, "counter");
    w->number(w, (double)s->counter);
    w->key(w, "seed");
    w->string(w, seed);
    w->end_object(w);
    return ECS_OK;
}

static ecs_status state_read(void *state, ecs_json_reader *r)
{
    spawn_state *s = state;
    double counter = -1;
    const char *key, *text = NULL;
    unsigned long long seed = 0;
    if (!r->begin_object(r)) return ECS_ERR_BAD_VALUE;
    while (r->key(r, &key)) {
        if (ecs_json_key_is(key, "counter")) {
            r->number(r, &counter);
        } else if (ecs_json_key_is(key, "seed") && r->string(r, &text, NULL)) {
            if (sscanf(text, "%16llx", &seed) != 1 || seed == 0)
                r->error(r, "expected a seed of 1-16 hex digits, not 0");
        }
    }
    if (!r->failed(r) && !(counter >= 0 && counter <= 9007199254740992.0))
        r->error(r, "expected \"counter\": a count");
    if (r->failed(r)) return ECS_ERR_BAD_VALUE; /* the state stays as it was */
    s->counter = (uint64_t)counter;
    s->seed = seed;
    s->host->log(s->host, ECS_LOG_INFO, WHO " state read: counter %llu, seed %llu",
                 (unsigned long long)s->counter, (unsigned long long)s->seed);
    return ECS_OK;
}

static ecs_status spawn_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    const game_physics_api *api =
        (const game_physics_api *)h->api_find(h, GAME_PHYSICS_API_NAME, SPAWN_NEEDS, NULL);
    if (!api) return ECS_ERR_NOT_FOUND;
    spawn_state *s = (spawn_state *)ecs_load_args_previous_state(args);
    bool adopted = s != NULL;
    if (s && s->layout != SPAWN_LAYOUT) return ECS_ERR_ABI;
    if (!s) {
        if (!(s = (spawn_state *)h->alloc(h, sizeof *s))) return ECS_ERR_NO_MEMORY;
        memset(s, 0, sizeof *s);
        s->layout = SPAWN_LAYOUT;
        s->host = h;
        s->physics = api;
        s->seed = 0x9e3779b97f4a7c15u;
    }
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = "spawner",
                          .state = s,
                          .update = spawn_update,
                          .count = spawn_count,
                          .write_component = spawn_write,
                          .read_component = spawn_read};
    ecs_status st = h->register_manager(h, &m);
#ifndef SPAWN_NO_STATE
    ecs_plugin_state_desc own = {sizeof own, s, state_write, state_read};
    size_t need = offsetof(ecs_host, plugin_state) + sizeof h->plugin_state;
    if (st == ECS_OK && h->struct_size >= need) st = h->plugin_state(h, &own);
#ifdef SPAWN_STATE_TWICE
    if (st == ECS_OK) st = h->plugin_state(h, &own); /* refused: one per plugin */
#endif
#else
    (void)state_write, (void)state_read;
#endif
    if (st != ECS_OK) {
        if (!adopted) h->free(h, s);
        return st;
    }
    h->log(h, ECS_LOG_INFO, WHO " load: " GAME_PHYSICS_API_NAME " found");
    *state = s;
    return ECS_OK;
}

static void spawn_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    spawn_state *s = state;
    h->log(h, ECS_LOG_INFO, WHO " unload (%s): counter %llu, seed %llu", unload_reason_text(reason),
           (unsigned long long)s->counter, (unsigned long long)s->seed);
    if (reason != ECS_UNLOAD_RELOAD_KEEP_STATE) h->free(h, s);
}

static const ecs_plugin_desc spawn_plugin = {
    ECS_PLUGIN_DESC_HEADER,
    "spawner",
    SPAWN_VERSION,
    SPAWN_LAYOUT,
    NULL,
    spawn_load,
    spawn_unload,
    ECS_STATE_LAYOUT(spawn_state, layout, host, physics, counter, seed),
};

ECS_PLUGIN_EXPORT(spawn_plugin)
