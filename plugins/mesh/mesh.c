/* SPDX-License-Identifier: MIT */
/* mesh.c: the mesh plugin: several meshes per entity (the seed's MeshComponentManager), as
 * the manager "mesh" (scene value: an array of mesh objects) and the API "ecs.mesh" v1
 * (mesh_api.h), and the SDK's "ecs.bounds" v1 (ecs_describe.h) for tools. Its update recomputes
 * every mesh's world bounds from its entity's world matrix, read through the transform plugin's
 * API.
 *
 * Data: one ecs_soa (one allocation) holding, per instance i: entity[i]; next[i] and
 * prev[i], links among the meshes of the same entity; mesh[i] and material[i], copies
 * from host->alloc (material NULL: none); visible[i]; local[i] and world[i] bounds. An
 * ecs_entity_map gives each entity's first mesh (its head).
 *
 * Invariants: the meshes of an entity form one list in the order they were added:
 * map[index(e)] == head + 1; next[] runs head -> tail and ends with ECS_SOA_NONE; prev[]
 * runs backwards and prev[head] == tail, so appending is O(1). Hence an instance is a
 * head exactly when next[prev[i]] != i. Removal unlinks the mesh, then swaps the last
 * instance into the hole and re-points the links that named the moved one (the map or
 * its predecessor's next; its successor's prev or, for a tail, its head's prev).
 *
 * Views want each entity once: owners[0..owner_count) lists the entities with at least one
 * mesh, and owner[head] is the position of the head's entity in it (owner[] of other
 * instances is unused). A new head (the first mesh of an entity, or the second one when
 * the head goes) takes over the position; an entity's last mesh going swaps the last
 * owner into its position. The same two events are reported to the host's signatures
 * (component_added / component_removed) when the host offers them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_describe.h"
#include "ecs_json.h"
#include "ecs_math.h"
#include "ecs_plugin.h"
#include "ecs_soa.h"
#include "mesh_api.h"
#include "transform_api.h"

#define STATE_LAYOUT 2u /* == state_version: checked when a state is adopted (2: owners) */
#define MANAGER_NAME "mesh"
#define NONE         ECS_SOA_NONE
#define NO_BIT       UINT32_MAX /* no signatures: a host without them */

enum {
    F_ENTITY,
    F_NEXT,
    F_PREV,
    F_MESH,
    F_MATERIAL,
    F_VISIBLE,
    F_LOCAL,
    F_WORLD,
    F_OWNER,
    F_COUNT
};

typedef struct mesh_state {
    uint32_t layout; /* STATE_LAYOUT */
    uint32_t bit;    /* the signature bit of "mesh"; NO_BIT: not reported */
    const ecs_host *host;
    /* The host's copy of the transform API: valid while the host runs, rewritten in place
     * when transform reloads (zeroed while it is away), so always call through it. */
    const ecs_transform_api *tf;
    ecs_soa soa;
    ecs_entity_map map; /* entity -> head */
    ecs_entity *owners; /* the entities with a mesh, each once (host->alloc) */
    uint32_t owner_count, owner_cap;
} mesh_state;

/* ---- field access ---- */

static ecs_entity *ents(const mesh_state *s)
{
    return (ecs_entity *)s->soa.field[F_ENTITY];
}
static uint32_t *nexts(const mesh_state *s)
{
    return (uint32_t *)s->soa.field[F_NEXT];
}
static uint32_t *prevs(const mesh_state *s)
{
    return (uint32_t *)s->soa.field[F_PREV];
}
static char **meshes(const mesh_state *s)
{
    return (char **)s->soa.field[F_MESH];
}
static char **materials(const mesh_state *s)
{
    return (char **)s->soa.field[F_MATERIAL];
}
static bool *visibles(const mesh_state *s)
{
    return (bool *)s->soa.field[F_VISIBLE];
}
static ecs_aabb *locals(const mesh_state *s)
{
    return (ecs_aabb *)s->soa.field[F_LOCAL];
}
static ecs_aabb *worlds(const mesh_state *s)
{
    return (ecs_aabb *)s->soa.field[F_WORLD];
}
static uint32_t *owner_at(const mesh_state *s)
{
    return (uint32_t *)s->soa.field[F_OWNER];
}

/* ---- checking values ---- */

/* What is wrong with a resource or material name, or NULL when it is good: up to
 * ECS_MESH_NAME_MAX - 1 bytes of UTF-8 without control characters, empty only when
 * allowed. */
static const char *text_problem(const char *text, bool allow_empty)
{
    if (!text) return "it is NULL";
    size_t len = strnlen(text, ECS_MESH_NAME_MAX);
    if (len == 0 && !allow_empty) return "it is empty";
    if (len >= ECS_MESH_NAME_MAX) return "it is longer than 255 bytes";
    const unsigned char *p = (const unsigned char *)text;
    for (size_t i = 0, n; i < len; i += n) {
        uint32_t cp = 0;
        if (!(n = ecs_utf8_decode(p + i, &cp))) return "it is not valid UTF-8";
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return "it has a control character";
    }
    return NULL;
}

/* What is wrong with box as local bounds, or NULL: finite, min <= max on every axis. */
static const char *bounds_problem(ecs_aabb b)
{
    if (!ecs_finite3(b.min) || !ecs_finite3(b.max)) return "a coordinate is not finite";
    if (b.min.x > b.max.x || b.min.y > b.max.y || b.min.z > b.max.z)
        return "min is above max on an axis";
    return NULL;
}

/* Check desc: ECS_OK, ECS_ERR_INVALID_ARGUMENT for a NULL desc or mesh name,
 * ECS_ERR_BAD_VALUE for a bad name or bounds; what is wrong written into why. */
static ecs_status desc_check(const ecs_mesh_desc *desc, char *why, size_t size)
{
    const char *p;
    if (!desc || !desc->mesh) {
        snprintf(why, size, "%s is NULL", desc ? "desc->mesh" : "desc");
        return ECS_ERR_INVALID_ARGUMENT;
    }
    if ((p = text_problem(desc->mesh, false)))
        snprintf(why, size, "desc->mesh: %s", p);
    else if (desc->material && (p = text_problem(desc->material, true)))
        snprintf(why, size, "desc->material: %s", p);
    else if ((p = bounds_problem(desc->local_bounds)))
        snprintf(why, size, "desc->local_bounds: %s", p);
    return p ? ECS_ERR_BAD_VALUE : ECS_OK;
}

/* A host-allocated copy of text, NULL for NULL or "" (and *failed = true when memory ran
 * out). */
static char *copy_text(const mesh_state *s, const char *text, bool *failed)
{
    if (!text || !*text) return NULL;
    size_t len = strlen(text);
    char *copy = (char *)s->host->alloc(s->host, len + 1);
    if (copy)
        memcpy(copy, text, len + 1);
    else
        *failed = true;
    return copy;
}

/* Log a refused call and return its status. */
static ecs_status refuse(const mesh_state *s, ecs_status st, const char *call, ecs_entity e,
                         const char *why)
{
    s->host->log(s->host, ECS_LOG_ERROR, "%s: entity %u.%u: %s (%s)", call, ecs_entity_index(e),
                 ecs_entity_generation(e), why, ecs_status_text(st));
    return st;
}

/* ---- world matrices ---- */

/* e's world matrix through the transform API into *m. False when e has no transform (or
 * the transform plugin is away): then the identity applies. */
static bool world_of(const mesh_state *s, ecs_entity e, ecs_mat4 *m)
{
    const ecs_transform_api *tf = s->tf;
    return tf && tf->get_world && tf->get_world(tf->self, e, m) == ECS_OK;
}

/* Recompute the world bounds of the meshes head, next[head], ... under matrix m (NULL:
 * the identity). */
static void update_list(mesh_state *s, uint32_t head, const ecs_mat4 *m)
{
    const uint32_t *next = nexts(s);
    const ecs_aabb *local = locals(s);
    ecs_aabb *world = worlds(s);
    if (m)
        for (uint32_t i = head; i != NONE; i = next[i]) world[i] = ecs_aabb_transform(m, local[i]);
    else
        for (uint32_t i = head; i != NONE; i = next[i]) world[i] = local[i];
}

/* ---- instances and per-entity lists ---- */

/* e's first mesh (e alive), or NONE. */
static uint32_t head_of(const mesh_state *s, ecs_entity e)
{
    if (!ecs_alive(s->host, e)) return NONE;
    return ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
}

/* The k-th mesh of the list starting at head, or NONE. */
static uint32_t nth(const mesh_state *s, uint32_t head, uint32_t k)
{
    uint32_t i = head;
    while (i != NONE && k-- > 0) i = nexts(s)[i];
    return i;
}

/* ---- the owner list: each entity with a mesh once ---- */

/* Tell the host that e gained (on) or lost its meshes, for its signatures. */
static void report(const mesh_state *s, ecs_entity e, bool on)
{
    if (s->bit == NO_BIT) return;
    if (on)
        s->host->component_added(s->host, s->bit, e);
    else
        s->host->component_removed(s->host, s->bit, e);
}

/* Room for one more owner. ECS_ERR_NO_MEMORY changes nothing. */
static ecs_status owners_reserve(mesh_state *s)
{
    if (s->owner_count < s->owner_cap) return ECS_OK;
    uint32_t cap = s->owner_cap < 64 ? 64 : s->owner_cap * 2;
    ecs_entity *v = (ecs_entity *)s->host->realloc(s->host, s->owners, cap * sizeof *v);
    if (!v) return ECS_ERR_NO_MEMORY;
    s->owners = v;
    s->owner_cap = cap;
    return ECS_OK;
}

/* Head i of entity e starts e's list: e becomes an owner (room reserved). */
static void owner_add(mesh_state *s, uint32_t i, ecs_entity e)
{
    owner_at(s)[i] = s->owner_count;
    s->owners[s->owner_count++] = e;
    report(s, e, true);
}

/* Head i of entity e was its last mesh: the last owner takes e's position. */
static void owner_remove(mesh_state *s, uint32_t i, ecs_entity e)
{
    uint32_t k = owner_at(s)[i];
    ecs_entity last = s->owners[--s->owner_count];
    if (k != s->owner_count) {
        s->owners[k] = last;
        owner_at(s)[ecs_entity_map_get(&s->map, last)] = k; /* its head */
    }
    report(s, e, false);
}

/* Take instance i out of its entity's list (head: the list's head). */
static void list_unlink(mesh_state *s, uint32_t head, uint32_t i)
{
    uint32_t *next = nexts(s), *prev = prevs(s);
    if (i == head) {
        uint32_t second = next[i];
        if (second != NONE) {
            prev[second] = prev[i];               /* the tail */
            owner_at(s)[second] = owner_at(s)[i]; /* the new head keeps the position */
        } else {
            owner_remove(s, i, ents(s)[i]);
        }
        ecs_entity_map_set(&s->map, ents(s)[i], second); /* existing slot: cannot fail */
        return;
    }
    next[prev[i]] = next[i];
    if (next[i] != NONE)
        prev[next[i]] = prev[i];
    else
        prev[head] = prev[i]; /* i was the tail */
}

/* The instance that lived at `from` now lives at `to` (its fields already copied): point
 * the links that named `from` at `to`. */
static void list_moved(mesh_state *s, uint32_t from, uint32_t to)
{
    uint32_t *next = nexts(s), *prev = prevs(s);
    uint32_t head = ecs_entity_map_get(&s->map, ents(s)[to]);
    if (head == from) {
        ecs_entity_map_set(&s->map, ents(s)[to], to); /* existing slot: cannot fail */
        head = to;
    } else {
        next[prev[to]] = to;
    }
    if (next[to] != NONE)
        prev[next[to]] = to;
    else
        prev[head] = to; /* a tail (for a lone mesh: prev[to] = to) */
}

/* Remove instance i (of the list starting at head): free its names, fill its slot with
 * the last instance. */
static void remove_instance(mesh_state *s, uint32_t head, uint32_t i)
{
    list_unlink(s, head, i);
    s->host->free(s->host, meshes(s)[i]);
    if (materials(s)[i]) s->host->free(s->host, materials(s)[i]);
    uint32_t moved = ecs_soa_remove(&s->soa, i);
    if (moved != NONE) list_moved(s, moved, i);
}

/* Remove every mesh of the list starting at head. */
static void remove_list(mesh_state *s, ecs_entity e, uint32_t head)
{
    while (head != NONE) {
        remove_instance(s, head, head);
        head = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    }
}

/* Append a zeroed instance to e's list; its position in *k (may be NULL). NONE when
 * memory ran out (then nothing changed). */
static uint32_t append_instance(mesh_state *s, ecs_entity e, uint32_t *k)
{
    uint32_t head = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (head == NONE && owners_reserve(s) != ECS_OK) return NONE;
    uint32_t i = ecs_soa_push(&s->soa);
    if (i == NONE) return NONE;
    if (head == NONE && ecs_entity_map_set(&s->map, e, i) != ECS_OK) {
        s->soa.count--; /* the pushed instance was the last one */
        return NONE;
    }
    ents(s)[i] = e;
    nexts(s)[i] = NONE;
    if (k) *k = 0;
    if (head == NONE) {
        prevs(s)[i] = i;
        owner_add(s, i, e);
        return i;
    }
    for (uint32_t j = head; k && j != NONE; j = nexts(s)[j]) ++*k; /* only when asked */
    uint32_t tail = prevs(s)[head];
    nexts(s)[tail] = i;
    prevs(s)[i] = tail;
    prevs(s)[head] = i;
    return i;
}

/* ---- the API ---- */

/* Add a mesh to e after its others; its position in *k (may be NULL). On error nothing
 * changes and one line is logged: ECS_ERR_STALE_ENTITY, ECS_ERR_INVALID_ARGUMENT (NULL
 * desc or mesh), ECS_ERR_BAD_VALUE (bad name, bounds), ECS_ERR_NO_MEMORY. */
static ecs_status mesh_add(void *self, ecs_entity e, const ecs_mesh_desc *desc, uint32_t *k)
{
    mesh_state *s = (mesh_state *)self;
    char why[96];
    if (!ecs_alive(s->host, e)) return refuse(s, ECS_ERR_STALE_ENTITY, "add", e, "not alive");
    ecs_status st = desc_check(desc, why, sizeof why);
    if (st != ECS_OK) return refuse(s, st, "add", e, why);
    bool failed = false;
    char *mesh = copy_text(s, desc->mesh, &failed);
    char *material = copy_text(s, desc->material, &failed);
    uint32_t i = failed ? NONE : append_instance(s, e, k);
    if (i == NONE) {
        if (mesh) s->host->free(s->host, mesh);
        if (material) s->host->free(s->host, material);
        return refuse(s, ECS_ERR_NO_MEMORY, "add", e, "out of memory");
    }
    meshes(s)[i] = mesh;
    materials(s)[i] = material;
    visibles(s)[i] = desc->visible;
    locals(s)[i] = desc->local_bounds;
    ecs_mat4 m; /* world bounds are right from the start, not only after an update */
    worlds(s)[i] =
        world_of(s, e, &m) ? ecs_aabb_transform(&m, desc->local_bounds) : desc->local_bounds;
    return ECS_OK;
}

/* Remove e's mesh k; the later ones move down by one. ECS_ERR_STALE_ENTITY,
 * ECS_ERR_NOT_FOUND when k >= count_of(e). */
static ecs_status mesh_remove(void *self, ecs_entity e, uint32_t k)
{
    mesh_state *s = (mesh_state *)self;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t head = head_of(s, e), i = nth(s, head, k);
    if (i == NONE) return ECS_ERR_NOT_FOUND;
    remove_instance(s, head, i);
    return ECS_OK;
}

/* Remove every mesh of e (ECS_OK also when it had none). ECS_ERR_STALE_ENTITY. */
static ecs_status mesh_remove_all(void *self, ecs_entity e)
{
    mesh_state *s = (mesh_state *)self;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    remove_list(s, e, head_of(s, e));
    return ECS_OK;
}

/* How many meshes e has (0 for a dead entity). */
static uint32_t mesh_count_of(void *self, ecs_entity e)
{
    const mesh_state *s = (const mesh_state *)self;
    uint32_t n = 0;
    for (uint32_t i = head_of(s, e); i != NONE; i = nexts(s)[i]) n++;
    return n;
}

/* e's mesh k into *out (material "" when it has none; strings valid until e's meshes
 * change). ECS_ERR_INVALID_ARGUMENT (NULL out), ECS_ERR_STALE_ENTITY, ECS_ERR_NOT_FOUND. */
static ecs_status mesh_get(void *self, ecs_entity e, uint32_t k, ecs_mesh_info *out)
{
    const mesh_state *s = (const mesh_state *)self;
    if (!out) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = nth(s, head_of(s, e), k);
    if (i == NONE) return ECS_ERR_NOT_FOUND;
    out->mesh = meshes(s)[i];
    out->material = materials(s)[i] ? materials(s)[i] : "";
    out->visible = visibles(s)[i];
    out->local_bounds = locals(s)[i];
    out->world_bounds = worlds(s)[i];
    return ECS_OK;
}

/* Show or hide e's mesh k. ECS_ERR_STALE_ENTITY, ECS_ERR_NOT_FOUND. */
static ecs_status mesh_set_visible(void *self, ecs_entity e, uint32_t k, bool visible)
{
    mesh_state *s = (mesh_state *)self;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = nth(s, head_of(s, e), k);
    if (i == NONE) return ECS_ERR_NOT_FOUND;
    visibles(s)[i] = visible;
    return ECS_OK;
}

static uint32_t mesh_count(void *self)
{
    return ((const mesh_state *)self)->soa.count;
}

/* [main-thread] Does e have a mesh? For views. */
static bool mesh_has(void *self, ecs_entity e)
{
    return head_of((const mesh_state *)self, e) != NONE;
}

/* [main-thread] The entities with a mesh, each once, valid until meshes are added to an
 * entity without or an entity's last is removed. For views. */
static uint32_t mesh_entities(void *self, const ecs_entity **out)
{
    const mesh_state *s = (const mesh_state *)self;
    *out = s->owners;
    return s->owner_count;
}

/* ---- the manager ---- */

#define UPDATE_GRAIN 8192u /* meshes per chunk of the update's parallel_for */

/* [job] The heads among instances [begin, end) and their lists: each mesh is in exactly
 * one list, so chunks write disjoint bounds; get_world only reads. */
static void update_range(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    mesh_state *s = (mesh_state *)ctx;
    const uint32_t *next = nexts(s), *prev = prevs(s);
    const ecs_entity *ent = ents(s);
    for (uint32_t i = begin; i < end; i++) {
        if (next[prev[i]] == i) continue; /* not a head: done with its head */
        ecs_mat4 m;
        update_list(s, i, world_of(s, ent[i], &m) ? &m : NULL);
    }
}

/* [frame] World bounds of every mesh: one get_world per entity, at its head; the other
 * meshes of the entity are done with it. Spread over the host's job threads. */
static void mesh_update(void *state, const ecs_frame_info *frame)
{
    (void)frame;
    mesh_state *s = (mesh_state *)state;
    ecs_parallel_for(s->host, s->soa.count, UPDATE_GRAIN, update_range, s);
}

/* [frame] Drop the meshes of destroyed entities (their ids are already dead). */
static void mesh_entities_destroyed(void *state, const ecs_entity *list, uint32_t count)
{
    mesh_state *s = (mesh_state *)state;
    for (uint32_t k = 0; k < count; k++)
        remove_list(s, list[k], ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, list[k]));
}

/* ---- JSON: "mesh": [{"mesh", "material", "visible", "bounds": {"min", "max"}}] ---- */

/* e's meshes as a JSON array through w (nothing when e has none):
 * [{"mesh": ..., "material": ..., "visible": ..., "bounds": {"min": [..], "max": [..]}}].
 * ECS_ERR_INVALID_ARGUMENT for a NULL w, ECS_ERR_STALE_ENTITY for a dead e. */
static ecs_status mesh_write(void *state, ecs_entity e, ecs_json_writer *w)
{
    const mesh_state *s = (const mesh_state *)state;
    if (!w) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t head = head_of(s, e);
    if (head == NONE) return ECS_OK;
    w->begin_array(w);
    for (uint32_t i = head; i != NONE; i = nexts(s)[i]) {
        const ecs_aabb *b = &locals(s)[i];
        const float min[3] = {b->min.x, b->min.y, b->min.z};
        const float max[3] = {b->max.x, b->max.y, b->max.z};
        w->begin_object(w);
        w->key(w, "mesh");
        w->string(w, meshes(s)[i]);
        w->key(w, "material");
        w->string(w, materials(s)[i] ? materials(s)[i] : "");
        w->key(w, "visible");
        w->boolean(w, visibles(s)[i]);
        w->key(w, "bounds");
        w->begin_object(w);
        w->key(w, "min");
        w->array_f32(w, min, 3);
        w->key(w, "max");
        w->array_f32(w, max, 3);
        w->end_object(w);
        w->end_object(w);
    }
    w->end_array(w);
    return ECS_OK;
}

/* Where a scene value is being read, for warnings: entity e, mesh k. */
typedef struct json_where {
    const mesh_state *s;
    ecs_entity e;
    int k;
} json_where;

/* What each value of a mesh object must be, for "expected X, found Y" messages. */
#define MESH_WANTED     "a string of 1-255 bytes of UTF-8 without control characters"
#define MATERIAL_WANTED "a string of 0-255 bytes of UTF-8 without control characters"
#define BOUNDS_WANTED   "an object {\"min\": [x,y,z], \"max\": [x,y,z]}"
#define VEC3_WANTED     "an array of 3 finite numbers"

/* One mesh object as it is read: its strings copied out of the reader (they last only
 * until its next call), which keys were found. */
typedef struct json_mesh_read {
    char mesh[ECS_MESH_NAME_MAX], material[ECS_MESH_NAME_MAX];
    bool has_mesh, has_bounds;
    ecs_mesh_desc d; /* its strings point into mesh and material */
} json_mesh_read;

/* Fail the reader for key, missing from the object just read (the error points at the
 * value read last). Returns false. */
static bool json_missing(ecs_json_reader *r, const char *key, const char *expected)
{
    r->error(r, "expected \"%s\": %s, found nothing", key, expected);
    return false;
}

/* Read a string value into out (ECS_MESH_NAME_MAX bytes): a resource name (allow_empty
 * false) or a material name. False with the reader failed otherwise. */
static bool json_text(ecs_json_reader *r, bool allow_empty, char *out)
{
    const char *expected = allow_empty ? MATERIAL_WANTED : MESH_WANTED, *text;
    ecs_json_type type = r->peek(r);
    if (type != ECS_JSON_STRING) return ecs_json_refuse(r, type, expected);
    if (!r->string(r, &text, NULL)) return false;
    const char *why = text_problem(text, allow_empty);
    if (why) {
        r->error(r, "expected %s, found a string where %s", expected, why);
        return false;
    }
    memcpy(out, text, strlen(text) + 1); /* shorter than ECS_MESH_NAME_MAX: checked */
    return true;
}

/* Read the "bounds" object into *out: "min" and "max", arrays of 3 finite numbers (the
 * reader's messages point at the array or its bad element), min <= max on every axis. */
static bool json_bounds(ecs_json_reader *r, ecs_aabb *out)
{
    const char *key;
    float lo[3], hi[3];
    bool has_min = false, has_max = false;
    ecs_json_type type = r->peek(r);
    if (type != ECS_JSON_OBJECT) return ecs_json_refuse(r, type, BOUNDS_WANTED);
    r->begin_object(r);
    while (r->key(r, &key)) { /* other keys: key() passes over their values */
        if (ecs_json_key_is(key, "min"))
            has_min = r->array_f32(r, lo, 3);
        else if (ecs_json_key_is(key, "max"))
            has_max = r->array_f32(r, hi, 3);
    }
    if (r->failed(r)) return false;
    if (!has_min) return json_missing(r, "min", VEC3_WANTED);
    if (!has_max) return json_missing(r, "max", VEC3_WANTED);
    out->min = ecs_vec3_make(lo[0], lo[1], lo[2]);
    out->max = ecs_vec3_make(hi[0], hi[1], hi[2]);
    if (!bounds_problem(*out)) return true;
    int axis = lo[0] > hi[0] ? 0 : lo[1] > hi[1] ? 1 : 2; /* finite: only the order is wrong */
    r->error(r, "expected min <= max on every axis, found min %g above max %g on axis %c",
             (double)lo[axis], (double)hi[axis], "xyz"[axis]);
    return false;
}

/* Read one mesh object into *m. Keys, in any order: "mesh" (required), "material" (default
 * none), "visible" (default true), "bounds" (required); others are ignored with a warning
 * as they come (a typo loses data). False with the reader failed otherwise. */
static bool json_mesh(const json_where *at, ecs_json_reader *r, json_mesh_read *m)
{
    const char *key;
    ecs_json_type type = r->peek(r);
    if (type != ECS_JSON_OBJECT)
        return ecs_json_refuse(r, type, "a mesh object {\"mesh\": ..., \"bounds\": ...}");
    m->has_mesh = m->has_bounds = false;
    m->material[0] = '\0';
    m->d.visible = true;
    r->begin_object(r);
    while (r->key(r, &key)) {
        if (ecs_json_key_is(key, "mesh")) {
            m->has_mesh = json_text(r, false, m->mesh);
        } else if (ecs_json_key_is(key, "material")) {
            json_text(r, true, m->material);
        } else if (ecs_json_key_is(key, "visible")) {
            r->boolean(r, &m->d.visible); /* "expected true or false, found ..." */
        } else if (ecs_json_key_is(key, "bounds")) {
            m->has_bounds = json_bounds(r, &m->d.local_bounds);
        } else { /* key() passes over its value */
            const ecs_host *h = at->s->host;
            h->log(h, ECS_LOG_WARN,
                   "read_component: entity %u.%u: \"%s\"[%d]: unknown key \"%s\" ignored "
                   "(known: mesh, material, visible, bounds)",
                   ecs_entity_index(at->e), ecs_entity_generation(at->e), MANAGER_NAME, at->k, key);
        }
    }
    if (r->failed(r)) return false;
    if (!m->has_mesh) return json_missing(r, "mesh", MESH_WANTED);
    if (!m->has_bounds) return json_missing(r, "bounds", BOUNDS_WANTED);
    m->d.mesh = m->mesh;
    m->d.material = m->material;
    return true;
}

/* [scene-load] Give e the meshes of the scene value r stands before, replacing those it
 * had: an array of mesh objects, each added as soon as it is read. On error e is left
 * without meshes (all or nothing); a bad value fails the reader at the most precise place
 * (the key, the array element) with what was expected: ECS_ERR_BAD_VALUE,
 * ECS_ERR_STALE_ENTITY, ECS_ERR_INVALID_ARGUMENT, ECS_ERR_NO_MEMORY. */
static ecs_status mesh_read_component(void *state, ecs_entity e, ecs_json_reader *r)
{
    mesh_state *s = (mesh_state *)state;
    json_where at = {s, e, -1};
    json_mesh_read m;
    if (!ecs_alive(s->host, e))
        return refuse(s, ECS_ERR_STALE_ENTITY, "read_component", e, "not alive");
    if (!r) return refuse(s, ECS_ERR_INVALID_ARGUMENT, "read_component", e, "the reader is NULL");
    remove_list(s, e, head_of(s, e));
    ecs_json_type type = r->peek(r);
    if (type != ECS_JSON_ARRAY) {
        ecs_json_refuse(r, type, "an array of mesh objects");
        return ECS_ERR_BAD_VALUE;
    }
    ecs_status st = ECS_OK;
    r->begin_array(r);
    while (st == ECS_OK && r->more(r)) {
        at.k++;
        st = json_mesh(&at, r, &m) ? mesh_add(s, e, &m.d, NULL) : ECS_ERR_BAD_VALUE;
    }
    if (st == ECS_OK && r->failed(r)) st = ECS_ERR_BAD_VALUE;
    if (st != ECS_OK) remove_list(s, e, head_of(s, e)); /* all or nothing */
    return st;
}

/* ---- plugin life ---- */

/* Point every stored host pointer at h (a reload hands the state to a new table). */
static void bind_host(mesh_state *s, const ecs_host *h, const ecs_transform_api *tf)
{
    s->host = h;
    s->soa.host = h;
    s->map.host = h;
    s->tf = tf;
}

static void state_free(mesh_state *s, const ecs_host *h)
{
    bind_host(s, h, s->tf);
    for (uint32_t i = 0; i < s->soa.count; i++) {
        h->free(h, meshes(s)[i]);
        if (materials(s)[i]) h->free(h, materials(s)[i]);
    }
    ecs_soa_free(&s->soa);
    ecs_entity_map_free(&s->map);
    if (s->owners) h->free(h, s->owners);
    h->free(h, s);
}

/* A new, empty state; NULL when memory ran out. */
static mesh_state *state_new(const ecs_host *h, const ecs_transform_api *tf)
{
    mesh_state *s = (mesh_state *)h->alloc(h, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->layout = STATE_LAYOUT;
    s->bit = NO_BIT;
    const size_t sizes[F_COUNT] = {sizeof(ecs_entity), sizeof(uint32_t), sizeof(uint32_t),
                                   sizeof(char *),     sizeof(char *),   sizeof(bool),
                                   sizeof(ecs_aabb),   sizeof(ecs_aabb), sizeof(uint32_t)};
    ecs_soa_init(&s->soa, h, F_COUNT, sizes);
    ecs_entity_map_init(&s->map, h);
    bind_host(s, h, tf);
    return s;
}

/* The transform API (version 1, large enough to hold get_world), or NULL with a log line. */
static const ecs_transform_api *find_transform(const ecs_host *h)
{
    size_t size = 0;
    const ecs_transform_api *tf = (const ecs_transform_api *)h->api_find(
        h, ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, &size);
    if (tf && size >= offsetof(ecs_transform_api, get_world) + sizeof tf->get_world) return tf;
    h->log(h, ECS_LOG_ERROR, "load: no API \"%s\" v%u%s: is the transform plugin loaded?",
           ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, tf ? " large enough" : "");
    return NULL;
}

/* Offer the index for views and find the signature bit (NO_BIT without them) into *bit. */
static ecs_status offer_index(const ecs_host *h, mesh_state *s, uint32_t *bit)
{
    *bit = NO_BIT;
    if (!ecs_host_has_queries(h)) return ECS_OK;
    ecs_manager_index ix = {.struct_size = sizeof ix,
                            .state = s,
                            .has = mesh_has,
                            .entities = mesh_entities,
                            .signature = true}; /* it reports its bit */
    ecs_status st = h->manager_index(h, MANAGER_NAME, &ix);
    return st == ECS_OK ? h->signature_bit(h, MANAGER_NAME, bit) : st;
}

/* ---- snapshots ----
 * The arrays as they are (the two name fields hold pointers: their bytes are not used), the
 * owners, then each instance's mesh name (u8 length, bytes) and material (u16: 0 for none,
 * else length + 1; bytes). Reading gives each name a new copy; the map (entity -> head) is
 * rebuilt from the links: an instance is a head when next[prev[i]] != i. */

static size_t mesh_snapshot_size(void *self)
{
    const mesh_state *s = (const mesh_state *)self;
    size_t n = ecs_soa_snapshot_size(&s->soa) + 4u + (size_t)s->owner_count * sizeof(ecs_entity);
    for (uint32_t i = 0; i < s->soa.count; i++)
        n += 3u + strlen(meshes(s)[i]) + (materials(s)[i] ? strlen(materials(s)[i]) : 0);
    return n;
}

static ecs_status mesh_snapshot_write(void *self, void *out, size_t size)
{
    const mesh_state *s = (const mesh_state *)self;
    size_t soa = ecs_soa_snapshot_size(&s->soa);
    if (size < mesh_snapshot_size(self) || ecs_soa_snapshot_put(&s->soa, out, soa) != ECS_OK)
        return ECS_ERR_INVALID_ARGUMENT;
    memset(ecs_soa_snapshot_field(&s->soa, out, F_MESH), 0, s->soa.count * sizeof(char *));
    memset(ecs_soa_snapshot_field(&s->soa, out, F_MATERIAL), 0, s->soa.count * sizeof(char *));
    unsigned char *p = (unsigned char *)out + soa; /* the pointers' bytes: the same every time */
    memcpy(p, &s->owner_count, 4), p += 4;
    if (s->owner_count) memcpy(p, s->owners, s->owner_count * sizeof(ecs_entity));
    p += s->owner_count * sizeof(ecs_entity);
    for (uint32_t i = 0; i < s->soa.count; i++) {
        const char *m = meshes(s)[i], *mat = materials(s)[i];
        size_t ml = strlen(m), tl = mat ? strlen(mat) : 0;
        uint16_t tag = mat ? (uint16_t)(tl + 1) : 0;
        *p++ = (unsigned char)ml;
        memcpy(p, m, ml), p += ml;
        memcpy(p, &tag, 2), p += 2;
        if (mat) memcpy(p, mat, tl), p += tl;
    }
    return ECS_OK;
}

/* Do the links of the instances read stay inside the arrays (next, prev; a head's owner
 * position is checked once the owners are known)? Bytes from a file may be made by anything. */
static bool links_sane(const mesh_state *s)
{
    for (uint32_t i = 0; i < s->soa.count; i++)
        if ((nexts(s)[i] != NONE && nexts(s)[i] >= s->soa.count) || prevs(s)[i] >= s->soa.count)
            return false;
    return true;
}

/* A copy of p[0..n) as a host-allocated string: *old itself when it holds that text (taken:
 * *old set to NULL), else a new one; NULL when memory ran out. */
static char *text_of(const mesh_state *s, const unsigned char *p, size_t n, char **old)
{
    if (*old && strncmp(*old, (const char *)p, n) == 0 && (*old)[n] == '\0') {
        char *c = *old;
        *old = NULL;
        return c;
    }
    char *c = (char *)s->host->alloc(s->host, n + 1);
    if (c) memcpy(c, p, n), c[n] = '\0';
    return c;
}

/* Free the names of old[0..n) (mesh and material of each; NULLs passed over). */
static void names_free(const mesh_state *s, char **old, uint32_t n)
{
    for (uint32_t i = 0; i < 2u * n; i++)
        if (old[i]) s->host->free(s->host, old[i]);
}

/* Give every instance of the arrays just read its names from p[0..left); old[2i], old[2i+1]
 * are the names instance i had before (kept when the text is the same: a loop restores the
 * same names again and again). False when the bytes end early or memory ran out: count is
 * then 0, and the names given are back in old. */
static bool names_read(mesh_state *s, const unsigned char *p, size_t left, char **old,
                       uint32_t old_n)
{
    char *none[2] = {NULL, NULL};
    for (uint32_t i = 0; i < s->soa.count; i++) {
        char **was = i < old_n ? &old[2 * i] : none;
        uint16_t tag = 0;
        size_t ml = left ? p[0] : 0, tl = 0;
        if (left >= 3 + ml) memcpy(&tag, p + 1 + ml, 2), tl = tag ? tag - 1u : 0;
        bool ok = left >= 3 + ml && left - 3 - ml >= tl;
        char *m = ok ? text_of(s, p + 1, ml, &was[0]) : NULL;
        char *mat = m && tag ? text_of(s, p + 3 + ml, tl, &was[1]) : NULL;
        meshes(s)[i] = m, materials(s)[i] = mat;
        if (!m || (tag && !mat)) {
            s->soa.count = i + 1; /* the names given so far: freed */
            for (uint32_t j = 0; j < s->soa.count; j++) {
                if (meshes(s)[j]) s->host->free(s->host, meshes(s)[j]);
                if (materials(s)[j]) s->host->free(s->host, materials(s)[j]);
            }
            s->soa.count = 0;
            return false;
        }
        p += 3 + ml + tl, left -= 3 + ml + tl;
    }
    return true;
}

/* The names every instance holds now, as old[2i] (mesh) and old[2i+1] (material), malloc'd;
 * NULL when memory ran out (then the names are freed now: nothing can be kept). */
static char **names_take(mesh_state *s)
{
    char **old = (char **)malloc(((size_t)s->soa.count * 2 + 1) * sizeof *old);
    for (uint32_t i = 0; i < s->soa.count; i++) {
        if (old) old[2 * i] = meshes(s)[i], old[2 * i + 1] = materials(s)[i];
        if (!old) {
            s->host->free(s->host, meshes(s)[i]);
            if (materials(s)[i]) s->host->free(s->host, materials(s)[i]);
        }
    }
    return old;
}

static ecs_status mesh_snapshot_read(void *self, const void *in, size_t size)
{
    mesh_state *s = (mesh_state *)self;
    uint32_t old_n = s->soa.count;
    char **old = names_take(s);
    s->soa.count = 0, s->owner_count = 0;
    size_t soa = ecs_soa_snapshot_read(&s->soa, in, size);
    if (soa && !links_sane(s)) soa = 0, s->soa.count = 0; /* bytes made by anything: none */
    const unsigned char *p = (const unsigned char *)in + soa;
    uint32_t owners = 0;
    if (soa && size - soa >= 4) memcpy(&owners, p, 4);
    size_t obytes = (size_t)owners * sizeof(ecs_entity);
    bool ok = soa && size - soa >= 4 && size - soa - 4 >= obytes && owners <= s->soa.count;
    for (uint32_t i = 0; ok && i < s->soa.count; i++) /* a head's place among the owners */
        ok = nexts(s)[prevs(s)[i]] == i || owner_at(s)[i] < owners;
    if (ok && owners > s->owner_cap) {
        ecs_entity *v = (ecs_entity *)s->host->realloc(s->host, s->owners, obytes);
        if ((ok = v != NULL)) s->owners = v, s->owner_cap = owners;
    }
    ok = ok &&
         names_read(s, p + 4 + obytes, size - soa - 4 - obytes, old ? old : NULL, old ? old_n : 0);
    if (old) names_free(s, old, old_n);
    free(old);
    if (!ok) {
        s->soa.count = 0; /* bytes it cannot use: hold nothing */
        (void)ecs_entity_map_rebuild(&s->map, &s->soa, F_ENTITY);
        return ECS_ERR_BAD_VALUE;
    }
    if (owners) memcpy(s->owners, p + 4, obytes);
    s->owner_count = owners;
    (void)ecs_entity_map_rebuild(&s->map, &s->soa, F_ENTITY); /* cleared; heads set below */
    for (uint32_t i = 0; i < s->soa.count; i++)
        if (nexts(s)[prevs(s)[i]] != i && ecs_entity_map_set(&s->map, ents(s)[i], i) != ECS_OK)
            return ECS_ERR_NO_MEMORY;
    return ECS_OK;
}

/* A scene load's hint: `count` entities' meshes come, one each at least; their owners too. */
static void mesh_reserve(void *self, uint32_t count)
{
    mesh_state *s = (mesh_state *)self;
    if (ecs_soa_reserve_more(&s->soa, count) != ECS_OK) return; /* else: grows as it reads */
    if (count > UINT32_MAX - s->owner_count || s->owner_count + count <= s->owner_cap) return;
    uint32_t cap = s->owner_count + count;
    ecs_entity *v = (ecs_entity *)s->host->realloc(s->host, s->owners, cap * sizeof *v);
    if (!v) return;
    s->owners = v;
    s->owner_cap = cap;
}

/* ecs.bounds: the box of all e's meshes' world bounds together. */
static bool mesh_bounds(void *self, ecs_entity e, float min[3], float max[3])
{
    const mesh_state *s = (const mesh_state *)self;
    uint32_t i = ecs_alive(s->host, e) ? head_of(s, e) : NONE;
    if (i == NONE) return false;
    ecs_aabb b = worlds(s)[i];
    for (i = nexts(s)[i]; i != NONE; i = nexts(s)[i]) {
        const ecs_aabb *w = &worlds(s)[i];
        b.min = ecs_vec3_make(fminf(b.min.x, w->min.x), fminf(b.min.y, w->min.y),
                              fminf(b.min.z, w->min.z));
        b.max = ecs_vec3_make(fmaxf(b.max.x, w->max.x), fmaxf(b.max.y, w->max.y),
                              fmaxf(b.max.z, w->max.z));
    }
    min[0] = b.min.x, min[1] = b.min.y, min[2] = b.min.z;
    max[0] = b.max.x, max[1] = b.max.y, max[2] = b.max.z;
    return true;
}

/* Register the manager and publish the APIs for state s: its own, and the SDK's ecs.bounds
 * (ecs_describe.h), through which tools draw meshes without this header. */
static ecs_status register_all(const ecs_host *h, mesh_state *s)
{
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = MANAGER_NAME,
                          .state = s,
                          .update = mesh_update,
                          .entities_destroyed = mesh_entities_destroyed,
                          .count = mesh_count,
                          .write_component = mesh_write,
                          .read_component = mesh_read_component,
                          .reserve = mesh_reserve,
                          .remove_component = mesh_remove_all,
                          .snapshot_version = STATE_LAYOUT,
                          .snapshot_size = mesh_snapshot_size,
                          .snapshot_write = mesh_snapshot_write,
                          .snapshot_read = mesh_snapshot_read};
    ecs_mesh_api api = {sizeof api,    s,        mesh_add,         mesh_remove, mesh_remove_all,
                        mesh_count_of, mesh_get, mesh_set_visible, mesh_count};
    ecs_bounds_api box = {sizeof box, s, mesh_bounds};
    ecs_status st = h->register_manager(h, &m);
    if (st == ECS_OK)
        st = h->api_publish(h, ECS_MESH_API_NAME, ECS_MESH_API_VERSION, &api, sizeof api);
    if (st == ECS_OK)
        st = h->api_publish(h, ECS_BOUNDS_API_NAME, ECS_BOUNDS_API_VERSION, &box, sizeof box);
    return st;
}

/* [main-thread] Find the transform API, make (or adopt) the state, register "mesh",
 * publish the API. On error a new state is freed; an adopted one is left untouched for
 * the old version. */
/* Two-phase adoption (ecs_on_commit): a state handed over by a reload becomes this build's
 * only once the host accepted it; a build refused after its load() leaves the running
 * build's pointers in it. */
static void mesh_commit(const ecs_host *h, void *arg, bool accepted)
{
    mesh_state *s = (mesh_state *)arg;
    uint32_t bit = NO_BIT;
    if (!accepted) return;
    if (ecs_host_has_queries(h) && h->signature_bit(h, MANAGER_NAME, &bit) != ECS_OK) bit = NO_BIT;
    bind_host(s, h, find_transform(h)); /* the host's copy of the API: the same one */
    s->bit = bit;
}

static ecs_status mesh_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    const ecs_transform_api *tf = find_transform(h);
    if (!tf) return ECS_ERR_NOT_FOUND;
    mesh_state *s = (mesh_state *)ecs_load_args_previous_state(args);
    bool adopted = s != NULL;
    if (adopted && s->layout != STATE_LAYOUT) {
        h->log(h, ECS_LOG_ERROR, "load: the previous state has layout %u, expected %u", s->layout,
               STATE_LAYOUT);
        return ECS_ERR_ABI;
    }
    if (!adopted && !(s = state_new(h, tf))) return ECS_ERR_NO_MEMORY;
    uint32_t bit = NO_BIT;
    ecs_status st = register_all(h, s);
    if (st == ECS_OK) st = offer_index(h, s, &bit);
    if (st != ECS_OK) {
        if (!adopted) state_free(s, h);
        return st;
    }
    *state = s;
    if (adopted) return ecs_on_commit(h, mesh_commit, s); /* not before the host accepts */
    s->bit = bit;
    return ECS_OK;
}

/* [main-thread] Free everything, except for a reload that keeps the state. */
static void mesh_unload(const ecs_host *h, void *state, ecs_unload_reason why)
{
    if (!state || why == ECS_UNLOAD_RELOAD_KEEP_STATE) return; /* the next version adopts it */
    state_free((mesh_state *)state, h);
}

static const char *const dependencies[] = {"transform", NULL};

static const ecs_plugin_desc mesh_plugin = {
    ECS_PLUGIN_DESC_HEADER,
    "mesh",
    "1.0.0",
    STATE_LAYOUT,
    dependencies,
    mesh_load,
    mesh_unload,
    ECS_STATE_LAYOUT(mesh_state, layout, bit, host, tf, soa, map, owners, owner_count, owner_cap),
};

ECS_PLUGIN_EXPORT(mesh_plugin)
