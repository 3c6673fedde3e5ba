/* SPDX-License-Identifier: MIT */
/* scene_int.h: what the scene layer's files share inside it, not outside (scene.h is the
 * layer's interface): the store's record and entries (store.c) and the calls the loader,
 * the writer and the inspector's views (scene.c) make on them. */
#ifndef HOST_SCENE_INT_H
#define HOST_SCENE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scene.h"

struct cJSON;

typedef struct store_entry {
    uint32_t entity;    /* the full id the entry belongs to; 0: empty */
    char *id;           /* scene id, or NULL */
    struct cJSON *kept; /* object: manager name -> JSON of a manager not loaded, or NULL */
    uint64_t seq;       /* when it was loaded (file order); 0: made at run time */
} store_entry;

typedef struct host_scene_view host_scene_view;

struct host_scene_store {
    host_world *world;        /* the world its entities live in */
    struct scene_load *load;  /* the load under way (entity references resolve in it), or NULL */
    struct scene_save *save;  /* the save under way, or NULL */
    host_scene_states states; /* the layer above's, or none (holder NULL) */
    store_entry *entry;       /* by entity index */
    uint32_t cap;
    host_scene_view *view; /* the inspector's reads (host_scene_entities_text), or NULL */
    void (*view_free)(host_scene_view *view); /* frees view (scene.c sets both) */
    struct cJSON *extra;                      /* unknown top-level keys, in file order */
    uint64_t next_seq; /* load sequence numbers: saving lists loaded entities in this order */
};

/* The store's scene ids: those of one load in one block (an id_chunk), each id after a
 * pointer to its chunk, the chunk freed with its last id. */
typedef struct id_chunk {
    size_t live; /* ids of it still in the store */
} id_chunk;

#define ID_HEAD sizeof(id_chunk *) /* before each id: its chunk */

/* Bytes an id of n bytes takes in a chunk: its head, the id, its NUL, rounded up. */
size_t scene_id_room(size_t n);
/* A chunk of `bytes` for ids, *next its first free byte; NULL when memory ran out. */
id_chunk *scene_id_chunk_new(size_t bytes, char **next);
/* Copy id[0..n) into chunk c at *next (room reserved by the caller) and move *next past
 * it; returns the copy (freed with the chunk's last id). */
char *scene_id_put(id_chunk *c, char **next, const char *id, size_t n);
/* Empty entry e: its id released, its kept JSON freed. */
void scene_entry_clear(store_entry *e);
/* The entry of the live entity e, or NULL when the store holds none for it. */
store_entry *scene_entry_of(const host_scene_store *s, ecs_entity e);
/* Room in s for the entry of entity index `index`: 0, or -1 when memory ran out (s as it
 * was). */
int scene_store_reserve(host_scene_store *s, uint32_t index);

#endif
