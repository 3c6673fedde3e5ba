/* SPDX-License-Identifier: MIT */
/* store.c: the scene store (scene.h, scene_int.h): per entity index, the scene id an entity
 * was loaded or saved under and the JSON of its components no loaded manager holds; the
 * unknown top-level keys; the load or save under way; the state holders the session lends;
 * and the store as bytes in a snapshot. Ids live in chunks, one per load, each freed with
 * its last id. Invariant: an entry belongs to the entity whose full id it records; it is
 * dropped when that entity's destruction is announced (host_scene_forget). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "pstate.h"
#include "scene.h"
#include "scene_int.h"
#include "world.h"

/* ---- the store ---- */

host_scene_store *host_scene_store_new(host_world *w)
{
    host_scene_store *s = calloc(1, sizeof(host_scene_store));
    if (s) s->world = w;
    return s;
}

bool host_scene_loading(const host_scene_store *sc)
{
    return sc->load != NULL;
}

void host_scene_set_states(host_scene_store *sc, const host_scene_states *states)
{
    sc->states = *states;
}

/* Room for an id of n bytes in a chunk: its head, the id, its NUL, rounded up. */
size_t scene_id_room(size_t n)
{
    return ID_HEAD + ((n + 1 + ID_HEAD - 1) & ~(ID_HEAD - 1));
}

/* A chunk for ids taking `bytes` (the sum of their id_room), with no id yet; NULL when out
 * of memory. Ids go at *next (id_put). */
id_chunk *scene_id_chunk_new(size_t bytes, char **next)
{
    id_chunk *c = malloc(sizeof *c + bytes);
    if (!c) return NULL;
    c->live = 0;
    *next = (char *)(c + 1);
    return c;
}

/* id (n bytes) copied into chunk c at *next: the stored id. */
char *scene_id_put(id_chunk *c, char **next, const char *id, size_t n)
{
    memcpy(*next, &c, ID_HEAD);
    char *out = *next + ID_HEAD;
    memcpy(out, id, n);
    out[n] = '\0';
    *next += scene_id_room(n);
    c->live++;
    return out;
}

static void scene_id_release(char *id)
{
    id_chunk *c;
    if (!id) return;
    memcpy(&c, id - ID_HEAD, ID_HEAD);
    if (--c->live == 0) free(c);
}

void scene_entry_clear(store_entry *e)
{
    scene_id_release(e->id);
    cJSON_Delete(e->kept);
    memset(e, 0, sizeof *e);
}

void host_scene_store_free(host_scene_store *s)
{
    if (!s) return;
    for (uint32_t i = 0; i < s->cap; i++) scene_entry_clear(&s->entry[i]);
    free(s->entry);
    cJSON_Delete(s->extra);
    if (s->view) s->view_free(s->view);
    free(s);
}

void host_scene_forget(host_scene_store *s, const ecs_entity *list, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t idx = ecs_entity_index(list[i]);
        if (idx < s->cap && s->entry[idx].entity == list[i].id) scene_entry_clear(&s->entry[idx]);
    }
}

/* The entry of a live entity e, or NULL. */
store_entry *scene_entry_of(const host_scene_store *s, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    return idx < s->cap && s->entry[idx].entity == e.id ? &s->entry[idx] : NULL;
}

int scene_store_reserve(host_scene_store *s, uint32_t index)
{
    if (index < s->cap) return 0;
    uint32_t cap = s->cap ? s->cap : 1024;
    while (cap <= index) cap *= 2;
    store_entry *v = realloc(s->entry, cap * sizeof *v);
    if (!v) return -1;
    memset(v + s->cap, 0, (cap - s->cap) * sizeof *v);
    s->entry = v;
    s->cap = cap;
    return 0;
}

/* ---- the store in a snapshot (host_scene_store_snapshot_*) ----
 *
 * u64 next_seq, u32 entries, u32 length of the unknown top-level keys' JSON, that JSON;
 * then per entry: u32 entity, u32 id length (UINT32_MAX: none), u64 seq, u32 length of
 * its kept components' JSON (0: none), the id's bytes, that JSON. */

typedef struct store_snap_entry {
    uint32_t entity, id_len;
    uint64_t seq;
    uint32_t kept_len;
} store_snap_entry;

#define STORE_SNAP_ENTRY (4u + 4u + 8u + 4u) /* packed: no padding in the bytes */

/* Append n bytes of p to the growing buffer b (NULL p: room only); false when memory ran out. */
static bool snap_put(char **b, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n) c *= 2;
        char *v = realloc(*b, c);
        if (!v) return false;
        *b = v, *cap = c;
    }
    if (n) memcpy(*b + *len, p, n);
    *len += n;
    return true;
}

char *host_scene_store_snapshot_write(const host_scene_store *s, size_t *out_len)
{
    size_t len = 0, cap = 0;
    char *b = NULL, *extra = s->extra ? cJSON_PrintUnformatted(s->extra) : NULL;
    uint32_t count = 0, elen = extra ? (uint32_t)strlen(extra) : 0;
    for (uint32_t i = 0; i < s->cap; i++) count += s->entry[i].entity != 0;
    bool ok = (!s->extra || extra) && snap_put(&b, &len, &cap, &s->next_seq, 8) &&
              snap_put(&b, &len, &cap, &count, 4) && snap_put(&b, &len, &cap, &elen, 4) &&
              snap_put(&b, &len, &cap, extra, elen);
    free(extra);
    for (uint32_t i = 0; ok && i < s->cap; i++) {
        const store_entry *e = &s->entry[i];
        if (!e->entity) continue;
        char *kept = e->kept ? cJSON_PrintUnformatted(e->kept) : NULL;
        store_snap_entry h = {e->entity, e->id ? (uint32_t)strlen(e->id) : UINT32_MAX, e->seq,
                              kept ? (uint32_t)strlen(kept) : 0};
        ok = (!e->kept || kept) && snap_put(&b, &len, &cap, &h.entity, 4) &&
             snap_put(&b, &len, &cap, &h.id_len, 4) && snap_put(&b, &len, &cap, &h.seq, 8) &&
             snap_put(&b, &len, &cap, &h.kept_len, 4) &&
             snap_put(&b, &len, &cap, e->id, e->id ? h.id_len : 0) &&
             snap_put(&b, &len, &cap, kept, h.kept_len);
        free(kept);
    }
    if (!ok) free(b);
    *out_len = ok ? len : 0;
    return ok ? b : NULL;
}

/* Entry k's header at in[*at] (bytes checked) into *h, *at moved past it; false when the
 * bytes end early or the entry does not fit. */
static bool snap_entry(const char *in, size_t size, size_t *at, store_snap_entry *h)
{
    if (size - *at < STORE_SNAP_ENTRY) return false;
    memcpy(&h->entity, in + *at, 4), memcpy(&h->id_len, in + *at + 4, 4);
    memcpy(&h->seq, in + *at + 8, 8), memcpy(&h->kept_len, in + *at + 16, 4);
    *at += STORE_SNAP_ENTRY;
    size_t id = h->id_len == UINT32_MAX ? 0 : h->id_len;
    return h->entity != 0 && size - *at >= id && size - *at - id >= h->kept_len;
}

ecs_status host_scene_store_snapshot_read(host_scene_store *s, const char *in, size_t size)
{
    uint64_t next_seq;
    uint32_t count, elen;
    if (size < 16) return ECS_ERR_BAD_VALUE;
    memcpy(&next_seq, in, 8), memcpy(&count, in + 8, 4), memcpy(&elen, in + 12, 4);
    if (size - 16 < elen) return ECS_ERR_BAD_VALUE;
    size_t at = 16 + elen, bytes = 0;
    uint32_t top = 0;
    for (uint32_t k = 0; k < count; k++) { /* check every entry before anything changes */
        store_snap_entry h = {0, 0, 0, 0};
        if (!snap_entry(in, size, &at, &h)) return ECS_ERR_BAD_VALUE;
        if (h.id_len != UINT32_MAX) bytes += scene_id_room(h.id_len);
        at += (h.id_len == UINT32_MAX ? 0 : h.id_len) + h.kept_len;
        if (ecs_entity_index((ecs_entity){h.entity}) > top)
            top = ecs_entity_index((ecs_entity){h.entity});
    }
    if (at != size) return ECS_ERR_BAD_VALUE;
    cJSON *extra = elen ? cJSON_ParseWithLength(in + 16, elen) : NULL;
    char *put = NULL;
    id_chunk *chunk = bytes ? scene_id_chunk_new(bytes, &put) : NULL;
    if ((elen && !extra) || (bytes && !chunk) || (count && scene_store_reserve(s, top) != 0)) {
        cJSON_Delete(extra), free(chunk);
        return ECS_ERR_NO_MEMORY;
    }
    for (uint32_t i = 0; i < s->cap; i++) scene_entry_clear(&s->entry[i]);
    cJSON_Delete(s->extra);
    s->extra = extra, s->next_seq = next_seq, at = 16 + elen;
    for (uint32_t k = 0; k < count; k++) {
        store_snap_entry h = {0, 0, 0, 0};
        (void)snap_entry(in, size, &at, &h); /* checked above */
        store_entry *e = &s->entry[ecs_entity_index((ecs_entity){h.entity})];
        scene_entry_clear(e);
        *e = (store_entry){h.entity, NULL, NULL, h.seq};
        if (h.id_len != UINT32_MAX)
            e->id = scene_id_put(chunk, &put, in + at, h.id_len), at += h.id_len;
        if (h.kept_len) e->kept = cJSON_ParseWithLength(in + at, h.kept_len), at += h.kept_len;
    }
    if (chunk && !chunk->live) free(chunk);
    return ECS_OK;
}
