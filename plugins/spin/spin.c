/* SPDX-License-Identifier: MIT */
/* spin.c: the spin plugin, an example of a system (seed 004). The manager "spin" keeps an
 * angular rate per entity (radians per second about the local x, y, z axes; scene value
 * {"rate": [x, y, z]}); the system "spin.rotate" runs every frame over the collection
 * {transform, spin} and turns each entity's local rotation by rate * dt through the
 * transform API (one set_local_many call per frame), with weight 10 so it runs before the
 * managers' updates. API "ecs.spin" v1 (spin_api.h).
 *
 * Why {transform, spin}, excluding nothing: the system needs a rotation to change and a
 * rate, nothing more. Requiring a mesh ({transform, mesh}) would leave a pivot without
 * geometry standing still, such as the demo's carousel hub, whose children carry the
 * meshes and move in the world because their parent turns.
 *
 * Data: one ecs_soa with entity[i] and rate[i], an ecs_entity_map (entity -> instance),
 * and scratch arrays (entities and locals) for the system's batch. Invariant:
 * map[index(entity[i])] == i + 1 for every instance; the host's signature bit of "spin" is
 * set exactly for the entities with an instance (reported on add and remove).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_math.h"
#include "ecs_plugin.h"
#include "ecs_soa.h"
#include "spin_api.h"
#include "transform_api.h"

#define STATE_LAYOUT 1u /* == state_version: checked when a state is adopted */
#define MANAGER_NAME "spin"
#define SYSTEM_NAME  "spin.rotate"
#define NONE         ECS_SOA_NONE
#define NO_BIT       UINT32_MAX /* no signatures: a host without them */
/* Run before the managers (weight 0): the ones that read world matrices (mesh bounds) see
 * this frame's rotation rather than the last one's. */
#define SYSTEM_WEIGHT 10
#define RATE_WANTED   "\"rate\": an array of 3 finite numbers (radians per second)"

enum { F_ENTITY, F_RATE, F_COUNT };

typedef struct spin_state {
    uint32_t layout; /* STATE_LAYOUT */
    uint32_t bit;    /* the signature bit of "spin"; NO_BIT: not reported */
    const ecs_host *host;
    /* The host's copy of the transform API: valid while the host runs, rewritten in place
     * when transform reloads (zeroed while it is away), so always call through it. */
    const ecs_transform_api *tf;
    ecs_soa soa;
    ecs_entity_map map;
    ecs_entity *batch_entities; /* scratch for the system (host->alloc) */
    ecs_transform_local *batch_locals;
    uint32_t batch_cap;
} spin_state;

static ecs_entity *ents(const spin_state *s)
{
    return (ecs_entity *)s->soa.field[F_ENTITY];
}
static ecs_vec3 *rates(const spin_state *s)
{
    return (ecs_vec3 *)s->soa.field[F_RATE];
}

/* ---- instances ---- */

/* Tell the host that e gained (on) or lost its spin, for its signatures. */
static void report(const spin_state *s, ecs_entity e, bool on)
{
    if (s->bit == NO_BIT) return;
    if (on)
        s->host->component_added(s->host, s->bit, e);
    else
        s->host->component_removed(s->host, s->bit, e);
}

static uint32_t lookup(const spin_state *s, ecs_entity e)
{
    return ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
}

static void remove_instance(spin_state *s, uint32_t i)
{
    ecs_entity gone = ents(s)[i];
    report(s, gone, false);
    ecs_entity_map_set(&s->map, gone, NONE);
    uint32_t moved = ecs_soa_remove(&s->soa, i);
    if (moved != NONE) ecs_entity_map_set(&s->map, ents(s)[i], i); /* an existing slot */
}

/* ---- the API ---- */

static ecs_status spin_set(void *self, ecs_entity e, ecs_vec3 rate)
{
    spin_state *s = (spin_state *)self;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    if (!ecs_finite3(rate)) return ECS_ERR_BAD_VALUE;
    uint32_t i = lookup(s, e);
    if (i == NONE) {
        if ((i = ecs_soa_push(&s->soa)) == NONE) return ECS_ERR_NO_MEMORY;
        if (ecs_entity_map_set(&s->map, e, i) != ECS_OK) {
            s->soa.count--; /* the pushed instance was the last one */
            return ECS_ERR_NO_MEMORY;
        }
        ents(s)[i] = e;
        report(s, e, true);
    }
    rates(s)[i] = rate;
    return ECS_OK;
}

static ecs_status spin_get(void *self, ecs_entity e, ecs_vec3 *out)
{
    const spin_state *s = (const spin_state *)self;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = lookup(s, e);
    if (i == NONE) return ECS_ERR_NOT_FOUND;
    if (out) *out = rates(s)[i];
    return ECS_OK;
}

static ecs_status spin_remove(void *self, ecs_entity e)
{
    spin_state *s = (spin_state *)self;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = lookup(s, e);
    if (i == NONE) return ECS_ERR_NOT_FOUND;
    remove_instance(s, i);
    return ECS_OK;
}

static uint32_t spin_count(void *self)
{
    return ((const spin_state *)self)->soa.count;
}

/* ---- the index (views) ---- */

static bool spin_has(void *self, ecs_entity e)
{
    const spin_state *s = (const spin_state *)self;
    return ecs_alive(s->host, e) && lookup(s, e) != NONE;
}

static uint32_t spin_entities(void *self, const ecs_entity **out)
{
    const spin_state *s = (const spin_state *)self;
    *out = ents(s);
    return s->soa.count;
}

/* ---- the system ---- */

/* The rotation of angle |v| about v / |v|; the identity for a zero v. */
static ecs_quat rotation_of(ecs_vec3 v)
{
    float angle = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z);
    if (!(angle > 0.0f)) return ecs_quat_identity();
    float k = sinf(0.5f * angle) / angle;
    ecs_quat q;
    q.x = v.x * k, q.y = v.y * k, q.z = v.z * k, q.w = cosf(0.5f * angle);
    return q;
}

/* Room for n entries in the batch arrays. False when memory ran out. */
static bool batch_reserve(spin_state *s, uint32_t n)
{
    if (n <= s->batch_cap) return true;
    const ecs_host *h = s->host;
    ecs_entity *e = (ecs_entity *)h->realloc(h, s->batch_entities, n * sizeof *e);
    if (e) s->batch_entities = e;
    ecs_transform_local *l = (ecs_transform_local *)h->realloc(h, s->batch_locals, n * sizeof *l);
    if (l) s->batch_locals = l;
    if (!e || !l) return false;
    s->batch_cap = n;
    return true;
}

/* Set the turned locals one by one (a batch failed: an entity died during the frame). */
static void set_each(spin_state *s, uint32_t n)
{
    const ecs_transform_api *tf = s->tf;
    for (uint32_t k = 0; k < n; k++)
        tf->set_local(tf->self, s->batch_entities[k], &s->batch_locals[k]);
}

#define TURN_GRAIN 4096u /* entities per chunk of the system's parallel_for */

typedef struct turn_job {
    spin_state *s;
    const ecs_entity *entities;
    float dt;
    _Atomic(uint32_t) gone; /* entities that died this frame: their slots hold null */
} turn_job;

/* [job] Entities [begin, end) of the collection turned into batch slots begin..end (slot k
 * for entity k: chunks write disjoint slots; get_local only reads). A dead one's slot gets
 * the null entity. */
static void turn_range(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    turn_job *j = (turn_job *)ctx;
    spin_state *s = j->s;
    const ecs_transform_api *tf = s->tf;
    float dt = j->dt;
    for (uint32_t k = begin; k < end; k++) {
        ecs_entity e = j->entities[k];
        uint32_t i = lookup(s, e);
        ecs_transform_local *l = &s->batch_locals[k];
        if (i == NONE || tf->get_local(tf->self, e, l) != ECS_OK) { /* died this frame */
            s->batch_entities[k] = ecs_entity_null();
            atomic_fetch_add(&j->gone, 1);
            continue;
        }
        ecs_vec3 r = rates(s)[i];
        l->rotation = ecs_quat_normalize(
            ecs_quat_mul(l->rotation, rotation_of(ecs_vec3_make(r.x * dt, r.y * dt, r.z * dt))));
        s->batch_entities[k] = e;
    }
}

/* Close the gaps the dead left in the batch; how many entries remain. */
static uint32_t batch_compact(spin_state *s, uint32_t count)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < count; k++) {
        if (ecs_entity_is_null(s->batch_entities[k])) continue;
        s->batch_entities[n] = s->batch_entities[k];
        s->batch_locals[n++] = s->batch_locals[k];
    }
    return n;
}

/* [frame] The system: turn every entity of {transform, spin} by rate * dt (the rotations
 * spread over the host's job threads), then hand them to transform in one batch. */
static void spin_rotate(void *state, const ecs_entity *entities, uint32_t count,
                        const ecs_frame_info *frame)
{
    spin_state *s = (spin_state *)state;
    const ecs_transform_api *tf = s->tf;
    float dt = (float)frame->dt;
    if (count == 0 || !(dt > 0.0f) || !tf || !tf->set_local_many) return;
    if (!batch_reserve(s, count)) {
        s->host->log(s->host, ECS_LOG_ERROR, "%s: out of memory: no entity turned", SYSTEM_NAME);
        return;
    }
    turn_job j = {s, entities, dt, 0};
    if (ecs_parallel_for(s->host, count, TURN_GRAIN, turn_range, &j) != ECS_OK) return;
    uint32_t n = atomic_load(&j.gone) ? batch_compact(s, count) : count;
    uint32_t bad = 0;
    if (n && tf->set_local_many(tf->self, s->batch_entities, s->batch_locals, n, &bad) != ECS_OK)
        set_each(s, n);
}

/* ---- the manager ---- */

static void spin_entities_destroyed(void *state, const ecs_entity *list, uint32_t count)
{
    spin_state *s = (spin_state *)state;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t i = lookup(s, list[k]);
        if (i != NONE) remove_instance(s, i);
    }
}

/* [scene-save] {"rate": [x, y, z]}, or nothing without a spin. */
static ecs_status spin_write(void *state, ecs_entity e, ecs_json_writer *w)
{
    const spin_state *s = (const spin_state *)state;
    if (!w) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = lookup(s, e);
    if (i == NONE) return ECS_OK;
    ecs_vec3 r = rates(s)[i];
    const float v[3] = {r.x, r.y, r.z};
    w->begin_object(w);
    w->key(w, "rate");
    w->array_f32(w, v, 3);
    w->end_object(w);
    return ECS_OK;
}

/* The rate of the scene value r stands before, {"rate": [x, y, z]}, into *out; a bad value
 * fails the reader at the most precise place (the reader's own messages for the array and
 * its elements): false. Unknown keys are warned about as they come (a typo loses data). */
static bool read_rate(const spin_state *s, ecs_json_reader *r, ecs_vec3 *out)
{
    ecs_json_type type = r->peek(r);
    const char *key;
    float v[3];
    bool has_rate = false;
    if (type != ECS_JSON_OBJECT) {
        r->skip(r); /* the value is the one read last: the error points at it */
        r->error(r, "expected an object {" RATE_WANTED "}, found %s", ecs_json_type_text(type));
        return false;
    }
    r->begin_object(r);
    while (r->key(r, &key)) {
        if (ecs_json_key_is(key, "rate"))
            has_rate = r->array_f32(r, v, 3);
        else /* key() passes over its value */
            s->host->log(s->host, ECS_LOG_WARN, "unknown key \"%s\" ignored (known: rate)", key);
    }
    if (r->failed(r)) return false;
    if (!has_rate) {
        r->error(r, "expected " RATE_WANTED ", found nothing");
        return false;
    }
    *out = ecs_vec3_make(v[0], v[1], v[2]);
    return true;
}

/* [scene-load] Give e the spin r stands before (replacing its rate). On error e is left
 * without a spin. */
static ecs_status spin_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    spin_state *s = (spin_state *)state;
    if (!r) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    ecs_vec3 rate;
    ecs_status st = read_rate(s, r, &rate) ? spin_set(s, e, rate) : ECS_ERR_BAD_VALUE;
    if (st != ECS_OK && lookup(s, e) != NONE) remove_instance(s, lookup(s, e));
    return st;
}

/* ---- plugin life ---- */

/* Point every stored host pointer at h (a reload hands the state to a new table). */
static void bind_host(spin_state *s, const ecs_host *h, const ecs_transform_api *tf)
{
    s->host = h;
    s->soa.host = h;
    s->map.host = h;
    s->tf = tf;
}

static void state_free(spin_state *s, const ecs_host *h)
{
    bind_host(s, h, s->tf);
    ecs_soa_free(&s->soa);
    ecs_entity_map_free(&s->map);
    if (s->batch_entities) h->free(h, s->batch_entities);
    if (s->batch_locals) h->free(h, s->batch_locals);
    h->free(h, s);
}

static spin_state *state_new(const ecs_host *h, const ecs_transform_api *tf)
{
    spin_state *s = (spin_state *)h->alloc(h, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->layout = STATE_LAYOUT;
    s->bit = NO_BIT;
    const size_t sizes[F_COUNT] = {sizeof(ecs_entity), sizeof(ecs_vec3)};
    ecs_soa_init(&s->soa, h, F_COUNT, sizes);
    ecs_entity_map_init(&s->map, h);
    bind_host(s, h, tf);
    return s;
}

/* The transform API (large enough for set_local_many), or NULL with a log line. */
static const ecs_transform_api *find_transform(const ecs_host *h)
{
    size_t size = 0;
    const ecs_transform_api *tf = (const ecs_transform_api *)h->api_find(
        h, ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, &size);
    if (tf && size >= offsetof(ecs_transform_api, set_local_many) + sizeof tf->set_local_many)
        return tf;
    h->log(h, ECS_LOG_ERROR, "load: no API \"%s\" v%u: is the transform plugin loaded?",
           ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION);
    return NULL;
}

/* A scene load's hint: room for its rates at once. */
static void spin_reserve(void *self, uint32_t count)
{
    (void)ecs_soa_reserve_more(&((spin_state *)self)->soa, count); /* else: grows as it reads */
}

/* Snapshots: the rates and their entities as they are; the map rebuilt from them. */
static size_t spin_snapshot_size(void *self)
{
    return ecs_soa_snapshot_size(&((spin_state *)self)->soa);
}

static ecs_status spin_snapshot_write(void *state, void *out, size_t size)
{
    return ecs_soa_snapshot_put(&((spin_state *)state)->soa, out, size);
}

/* The map is the one thing not in the bytes: rebuilt from the entity array. */
static ecs_status spin_snapshot_read(void *state, const void *in, size_t size)
{
    spin_state *s = (spin_state *)state;
    return ecs_soa_snapshot_take(&s->soa, &s->map, F_ENTITY, in, size);
}

/* Register the manager, its index and the system, publish the API; the signature bit into
 * *bit (NO_BIT on a host without systems, where nothing turns: said in the log). */
static ecs_status register_all(const ecs_host *h, spin_state *s, uint32_t *bit)
{
    static const char *const with[] = {"transform", MANAGER_NAME, NULL};
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = MANAGER_NAME,
                          .state = s,
                          .entities_destroyed = spin_entities_destroyed,
                          .count = spin_count,
                          .write_component = spin_write,
                          .read_component = spin_read,
                          .reserve = spin_reserve,
                          .snapshot_version = STATE_LAYOUT,
                          .snapshot_size = spin_snapshot_size,
                          .snapshot_write = spin_snapshot_write,
                          .snapshot_read = spin_snapshot_read};
    ecs_manager_index ix = {.struct_size = sizeof ix,
                            .state = s,
                            .has = spin_has,
                            .entities = spin_entities,
                            .signature = true}; /* it reports its bit */
    ecs_system_desc sys = {sizeof sys,    SYSTEM_NAME, {sizeof(ecs_query_desc), with, NULL},
                           SYSTEM_WEIGHT, s,           spin_rotate};
    ecs_spin_api api = {sizeof api, s, spin_set, spin_get, spin_remove, spin_count};
    *bit = NO_BIT;
    ecs_status st = h->register_manager(h, &m);
    if (st == ECS_OK)
        st = h->api_publish(h, ECS_SPIN_API_NAME, ECS_SPIN_API_VERSION, &api, sizeof api);
    if (st != ECS_OK) return st;
    if (!ecs_host_has_queries(h)) {
        h->log(h, ECS_LOG_WARN, "this host runs no systems: nothing will turn");
        return ECS_OK;
    }
    st = h->manager_index(h, MANAGER_NAME, &ix);
    if (st == ECS_OK) st = h->signature_bit(h, MANAGER_NAME, bit);
    if (st == ECS_OK) st = h->register_system(h, &sys);
    return st;
}

/* [main-thread] Find the transform API, make (or adopt) the state, register. On error a
 * new state is freed; an adopted one is left untouched for the old version. */
/* Two-phase adoption (ecs_on_commit): a state handed over by a reload becomes this build's
 * only once the host accepted it; a build refused after its load() leaves the running
 * build's pointers in it. */
static void spin_commit(const ecs_host *h, void *arg, bool accepted)
{
    spin_state *s = (spin_state *)arg;
    uint32_t bit = NO_BIT;
    if (!accepted) return;
    if (ecs_host_has_queries(h) && h->signature_bit(h, MANAGER_NAME, &bit) != ECS_OK) bit = NO_BIT;
    bind_host(s, h, find_transform(h)); /* the host's copy of the API: the same one */
    s->bit = bit;
}

static ecs_status spin_plugin_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    const ecs_transform_api *tf = find_transform(h);
    if (!tf) return ECS_ERR_NOT_FOUND;
    spin_state *s = (spin_state *)ecs_load_args_previous_state(args);
    bool adopted = s != NULL;
    if (adopted && s->layout != STATE_LAYOUT) {
        h->log(h, ECS_LOG_ERROR, "load: the previous state has layout %u, expected %u", s->layout,
               STATE_LAYOUT);
        return ECS_ERR_ABI;
    }
    if (!adopted && !(s = state_new(h, tf))) return ECS_ERR_NO_MEMORY;
    uint32_t bit = NO_BIT;
    ecs_status st = register_all(h, s, &bit);
    if (st != ECS_OK) {
        if (!adopted) state_free(s, h);
        return st;
    }
    *state = s;
    h->log(h, ECS_LOG_DEBUG, "%s state (layout %u)", adopted ? "adopted the previous" : "a new",
           STATE_LAYOUT);                                 /* shown with ecs-host -vv */
    if (adopted) return ecs_on_commit(h, spin_commit, s); /* not before the host accepts */
    s->bit = bit;
    return ECS_OK;
}

/* [main-thread] Free everything, except for a reload that keeps the state. */
static void spin_plugin_unload(const ecs_host *h, void *state, ecs_unload_reason why)
{
    if (!state || why == ECS_UNLOAD_RELOAD_KEEP_STATE) return; /* the next version adopts it */
    state_free((spin_state *)state, h);
}

static const char *const dependencies[] = {"transform", NULL};

static const ecs_plugin_desc spin_plugin = {
    ECS_PLUGIN_DESC_HEADER,
    "spin",
    "1.0.0",
    STATE_LAYOUT,
    dependencies,
    spin_plugin_load,
    spin_plugin_unload,
    ECS_STATE_LAYOUT(spin_state, layout, bit, host, tf, soa, map, batch_entities, batch_locals,
                     batch_cap),
};

ECS_PLUGIN_EXPORT(spin_plugin)
