/* SPDX-License-Identifier: MIT */
/* bob.c: the plugin template. Plugin "bob", one component manager "bob": an entity with a
 * bob component moves up and down (along any axis) around a centre, through the transform
 * plugin's API. Copy this folder, rename bob, keep the shape.
 *
 * Data: structure of arrays in one allocation (ecs_soa.h), one instance per entity:
 *   F_ENTITY  ecs_entity  the owner
 *   F_MOTION  bob_motion  axis, amplitude, frequency, phase: what the scene file says
 *   F_CENTER  ecs_vec3    where the entity rests; taken from its transform on the first
 *                         update when the scene gives none
 *   F_FLAGS   uint8_t     FLAG_HAS_CENTER
 * Invariant: map[index(entity[i])] == i + 1 for every instance i (ecs_entity_map); the
 * instances are dense, a removal moves the last one into the hole.
 *
 * Every frame: local position = centre + axis * amplitude * sin(2 pi frequency t + phase),
 * t the host's frame time. An entity without a transform is left alone.
 *
 * Scene JSON (every key optional; unknown keys and bad values are errors that name the
 * file, line, column and JSON path, through the host's reader):
 *   "bob": { "axis": [0, 1, 0], "amplitude": 1, "frequency": 1, "phase": 0,
 *            "center": [x, y, z] }
 *
 * Reload: the state starts with its layout number (BOB_STATE_VERSION, also the plugin's
 * state_version); a new build with the same number adopts the old state, a different one
 * gets the components back through write_component / read_component (the host's JSON
 * writer and reader: no JSON library in the plugin).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_math.h"
#include "ecs_plugin.h"
#include "ecs_soa.h"
#include "transform_api.h"

#define BOB_STATE_VERSION 1u /* change it whenever bob_state or the fields change */
#define BOB_TWO_PI        6.28318530717958647692

enum { F_ENTITY, F_MOTION, F_CENTER, F_FLAGS, F_COUNT };
enum { FLAG_HAS_CENTER = 1 };

typedef struct bob_motion {
    ecs_vec3 axis;
    float amplitude, frequency, phase; /* units, hertz, radians */
} bob_motion;

typedef struct bob_state {
    uint32_t layout; /* BOB_STATE_VERSION: checked when a reload hands the state over */
    const ecs_host *host;
    const ecs_transform_api *tf;
    ecs_soa soa;
    ecs_entity_map map;
} bob_state;

static ecs_entity *ents(bob_state *b)
{
    return (ecs_entity *)b->soa.field[F_ENTITY];
}
static bob_motion *motions(bob_state *b)
{
    return (bob_motion *)b->soa.field[F_MOTION];
}
static ecs_vec3 *centers(bob_state *b)
{
    return (ecs_vec3 *)b->soa.field[F_CENTER];
}
static uint8_t *flags(bob_state *b)
{
    return (uint8_t *)b->soa.field[F_FLAGS];
}

/* ---- instances ---- */

/* A new zeroed instance for e into *i. ECS_ERR_NO_MEMORY leaves nothing behind. */
static ecs_status add_instance(bob_state *b, ecs_entity e, uint32_t *i)
{
    uint32_t k = ecs_soa_push(&b->soa);
    if (k == ECS_SOA_NONE) return ECS_ERR_NO_MEMORY;
    if (ecs_entity_map_set(&b->map, e, k) != ECS_OK) {
        ecs_soa_remove(&b->soa, k); /* the last one: nothing moves */
        return ECS_ERR_NO_MEMORY;
    }
    ents(b)[k] = e;
    *i = k;
    return ECS_OK;
}

/* Remove instance i; the last instance moves into its place and its map slot follows. */
static void remove_instance(bob_state *b, uint32_t i)
{
    ecs_entity gone = ents(b)[i];
    uint32_t moved = ecs_soa_remove(&b->soa, i);
    (void)ecs_entity_map_set(&b->map, gone, ECS_SOA_NONE); /* clearing never allocates */
    if (moved != ECS_SOA_NONE) (void)ecs_entity_map_set(&b->map, ents(b)[i], i);
}

/* ---- the manager's callbacks ---- */

/* [frame] Move every entity that has a transform. */
static void bob_update(void *state, const ecs_frame_info *frame)
{
    bob_state *b = (bob_state *)state;
    const ecs_transform_api *tf = b->tf;
    for (uint32_t i = 0; i < b->soa.count; i++) {
        ecs_transform_local l;
        if (tf->get_local(tf->self, ents(b)[i], &l) != ECS_OK) continue; /* no transform */
        if (!(flags(b)[i] & FLAG_HAS_CENTER)) {
            centers(b)[i] = l.position;
            flags(b)[i] |= FLAG_HAS_CENTER;
        }
        const bob_motion *m = &motions(b)[i];
        float s =
            m->amplitude * (float)sin(BOB_TWO_PI * m->frequency * frame->time + (double)m->phase);
        const ecs_vec3 c = centers(b)[i];
        l.position = ecs_vec3_make(c.x + m->axis.x * s, c.y + m->axis.y * s, c.z + m->axis.z * s);
        (void)tf->set_local(tf->self, ents(b)[i], &l); /* cannot fail: values are finite */
    }
}

/* [frame] Forget the components of destroyed entities. */
static void bob_entities_destroyed(void *state, const ecs_entity *list, uint32_t n)
{
    bob_state *b = (bob_state *)state;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = ecs_soa_lookup(&b->soa, F_ENTITY, &b->map, list[k]);
        if (i != ECS_SOA_NONE) remove_instance(b, i);
    }
}

static uint32_t bob_count(void *state)
{
    return ((bob_state *)state)->soa.count;
}

/* [scene-save] e's component through the host's JSON writer; nothing when e has none. */
static ecs_status bob_write(void *state, ecs_entity e, ecs_json_writer *w)
{
    bob_state *b = (bob_state *)state;
    uint32_t i = ecs_soa_lookup(&b->soa, F_ENTITY, &b->map, e);
    if (i == ECS_SOA_NONE) return ECS_OK;
    const bob_motion *m = &motions(b)[i];
    const ecs_vec3 c = centers(b)[i];
    const float axis[3] = {m->axis.x, m->axis.y, m->axis.z}, center[3] = {c.x, c.y, c.z};
    w->begin_object(w);
    w->key(w, "axis");
    w->array_f32(w, axis, 3);
    w->key(w, "amplitude");
    w->number_f32(w, m->amplitude);
    w->key(w, "frequency");
    w->number_f32(w, m->frequency);
    w->key(w, "phase");
    w->number_f32(w, m->phase);
    if (flags(b)[i] & FLAG_HAS_CENTER) {
        w->key(w, "center");
        w->array_f32(w, center, 3);
    }
    w->end_object(w);
    return ECS_OK;
}

/* The value of key (r stands before it) into *m, or into *center (setting
 * FLAG_HAS_CENTER in *fl). On a bad value the reader fails, naming it. */
static void read_key(ecs_json_reader *r, const char *key, bob_motion *m, ecs_vec3 *center,
                     uint8_t *fl)
{
    float v[3];
    if (ecs_json_key_is(key, "axis")) {
        if (r->array_f32(r, v, 3)) m->axis = ecs_vec3_make(v[0], v[1], v[2]);
    } else if (ecs_json_key_is(key, "amplitude")) {
        r->number_f32(r, &m->amplitude);
    } else if (ecs_json_key_is(key, "phase")) {
        r->number_f32(r, &m->phase);
    } else if (ecs_json_key_is(key, "frequency")) {
        if (r->number_f32(r, &m->frequency) && !(m->frequency >= 0))
            r->error(r, "expected a frequency >= 0 (hertz)");
    } else if (ecs_json_key_is(key, "center")) {
        *fl |= FLAG_HAS_CENTER;
        if (r->array_f32(r, v, 3)) *center = ecs_vec3_make(v[0], v[1], v[2]);
    } else {
        r->error(r, "unknown key (expected axis, amplitude, frequency, phase or center)");
    }
}

/* [scene-load] Give e the component r stands before, replacing the one it has (an
 * inspector edit). Every value is read before anything changes, so on error e keeps
 * what it had. */
static ecs_status bob_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    bob_state *b = (bob_state *)state;
    bob_motion m = {{0, 1, 0}, 1.0f, 1.0f, 0.0f};
    ecs_vec3 center = {0, 0, 0};
    uint8_t fl = 0;
    const char *key;
    ecs_json_type type = r->peek(r);
    if (type != ECS_JSON_OBJECT) {
        ecs_json_refuse(r, type, "an object {\"amplitude\": 1, ...}");
        return ECS_ERR_BAD_VALUE;
    }
    r->begin_object(r);
    while (r->key(r, &key)) read_key(r, key, &m, &center, &fl);
    if (r->failed(r)) return ECS_ERR_BAD_VALUE;
    uint32_t i = ecs_soa_lookup(&b->soa, F_ENTITY, &b->map, e);
    if (i == ECS_SOA_NONE) {
        ecs_status s = add_instance(b, e, &i);
        if (s != ECS_OK) return s;
    }
    motions(b)[i] = m;
    centers(b)[i] = center;
    flags(b)[i] = fl;
    return ECS_OK;
}

/* ---- the plugin ---- */

/* Point the state at this load's host table (it is new after a reload). */
static void bind(bob_state *b, const ecs_host *h)
{
    b->host = h;
    b->soa.host = h;
    b->map.host = h;
}

static bob_state *state_new(const ecs_host *h)
{
    static const size_t sizes[F_COUNT] = {sizeof(ecs_entity), sizeof(bob_motion), sizeof(ecs_vec3),
                                          sizeof(uint8_t)};
    bob_state *b = (bob_state *)h->alloc(h, sizeof *b);
    if (!b) return NULL;
    memset(b, 0, sizeof *b);
    b->layout = BOB_STATE_VERSION;
    (void)ecs_soa_init(&b->soa, h, F_COUNT, sizes); /* F_COUNT is in range */
    ecs_entity_map_init(&b->map, h);
    bind(b, h);
    return b;
}

static void state_free(bob_state *b)
{
    ecs_soa_free(&b->soa);
    ecs_entity_map_free(&b->map);
    b->host->free(b->host, b);
}

/* [load] Find the transform API, adopt or make the state, register the manager. */
/* Two-phase adoption (ecs_on_commit): a state handed over by a reload becomes this build's
 * only once the host accepted it. Until then the old build runs on it, so a build the host
 * refuses after its load() returned (a failed migration, an API a user needs withdrawn)
 * must not have changed it. */
static void plugin_commit(const ecs_host *h, void *arg, bool accepted)
{
    bob_state *b = (bob_state *)arg;
    if (!accepted) return; /* nothing was prepared: nothing to free */
    bind(b, h);
    b->tf = (const ecs_transform_api *)h->api_find(h, ECS_TRANSFORM_API_NAME,
                                                   ECS_TRANSFORM_API_VERSION, NULL);
}

static ecs_status plugin_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    const ecs_transform_api *tf = (const ecs_transform_api *)h->api_find(
        h, ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, NULL);
    if (!tf) return ECS_ERR_NOT_FOUND; /* "transform" is a dependency: should not happen */
    bob_state *prev = args && args->struct_size >= sizeof *args && args->previous_state
                          ? (bob_state *)args->previous_state
                          : NULL;
    if (prev && prev->layout != BOB_STATE_VERSION) return ECS_ERR_ABI;
    bob_state *b = prev ? prev : state_new(h);
    if (!b) return ECS_ERR_NO_MEMORY;
    if (!prev) b->tf = tf; /* an adopted state changes in plugin_commit, once accepted */
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = "bob",
                          .state = b,
                          .update = bob_update,
                          .entities_destroyed = bob_entities_destroyed,
                          .count = bob_count,
                          .write_component = bob_write,
                          .read_component = bob_read};
    ecs_status s = h->register_manager(h, &m);
    if (s != ECS_OK) {
        if (!prev) state_free(b); /* an adopted state is the old version's, untouched */
        return s;
    }
    *state = b;
    return prev ? ecs_on_commit(h, plugin_commit, b) : ECS_OK;
}

/* [main-thread] Free everything, unless the next version takes the state over. */
static void plugin_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    (void)h;
    if (reason != ECS_UNLOAD_RELOAD_KEEP_STATE) state_free((bob_state *)state);
}

static const char *const bob_dependencies[] = {"transform", NULL};

static const ecs_plugin_desc bob_plugin = {
    ECS_PLUGIN_DESC_HEADER,
    "bob",
    "1.0.0",
    BOB_STATE_VERSION,
    bob_dependencies,
    plugin_load,
    plugin_unload,
    ECS_STATE_LAYOUT(bob_state, layout, host, tf, soa, map), /* what a reload checks */
};

ECS_PLUGIN_EXPORT(bob_plugin)
