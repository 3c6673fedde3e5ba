/* SPDX-License-Identifier: MIT */
/* scene.h: scenes: loading a JSON (or glTF) file into the world, saving the world back.
 *
 * A scene file: {"version": 1, "entities": [{"id": "door", "transform": {...},
 * "debug_name": "door", ...}, ...]}. Each entity has a scene-local string id; every other
 * key names the manager that owns the value. See docs/scene-format.md.
 *
 * The store (one per session, bound to its world) remembers, per entity index, the scene id an
 * entity was loaded under and the JSON of components whose manager is not loaded (kept, written
 * back on save: nothing in a scene is lost by a round trip), plus unknown top-level keys.
 * Invariant: an entry belongs to the entity whose full id it records; it is dropped when
 * that entity's destruction is announced.
 *
 * The scene layer knows managers and the world, never plugins: a manager's owner is the
 * world's opaque tag, and a crash in a manager's code is reported through the world's
 * hooks (host_world_crashed), which the layer above installed.
 */
#ifndef HOST_SCENE_H
#define HOST_SCENE_H

#include <stdbool.h>

#include "ecs_plugin.h"

typedef struct host_world host_world;
typedef struct host_scene_store host_scene_store;
typedef struct host_manager host_manager;

#define HOST_SCENE_VERSION 1

/* A new, empty store for the scenes of world w; NULL when memory ran out. */
host_scene_store *host_scene_store_new(host_world *w);

/* States beside the components: holders (the layer above's records, the world's owner
 * tags: plugins) that keep a state of their own, saved under the scene's top-level
 * "plugins" object by name. The layer above lends them (host_scene_set_states); a store
 * without keeps that object as it found it. */
typedef struct host_scene_states {
    void *ctx;
    /* The i-th holder whose state a save writes now (loaded, offers one, not crashed);
     * NULL past the last. */
    void *(*holder)(void *ctx, size_t i);
    /* The holder called name whose state a load can read now, or NULL. */
    void *(*named)(void *ctx, const char *name);
    /* holder's name (the key under "plugins"). */
    const char *(*name)(const void *holder);
    /* holder's state as JSON text, malloc'd, *len bytes; NULL with the reason in why. */
    char *(*text)(void *holder, size_t *len, char *why, size_t whylen);
    /* Give holder the value at text[at] (text[0..len)), under the guard: ECS_OK, or the
     * error with why and where (*err_at); a crash's signal in *sig (NULL allowed). */
    ecs_status (*read)(void *holder, const char *text, size_t len, size_t at, size_t *err_at,
                       int *sig, char *why, size_t whylen);
} host_scene_states;

/* Lend sc the state holders (copied). */
void host_scene_set_states(host_scene_store *sc, const host_scene_states *states);
void host_scene_store_free(host_scene_store *s);
/* Drop what the store holds for these (destroyed) entities. */
void host_scene_forget(host_scene_store *s, const ecs_entity *list, uint32_t n);

/* Load path into w: all or nothing. On failure one error line names the file, line,
 * column, JSON path and what was expected, and the world is as it was (every entity the
 * load created is destroyed and announced). Returns ECS_OK or the error. */
ecs_status host_scene_load(host_scene_store *sc, const char *path);

/* Load the scene document text[0..len) (named `name` in errors), like host_scene_load:
 * the error goes to error (not the log), the first entity made to *first (may be NULL). */
ecs_status host_scene_load_text(host_scene_store *sc, const char *name, const char *text,
                                size_t len, ecs_entity *first, char *error, size_t errlen);

/* Save every live entity that has a component (or was loaded from a scene) to path, in
 * index order, keys in a stable order: writes path.tmp-XXXXXX in the same folder, then
 * renames it over path, so a failure never leaves a half-written scene. */
ecs_status host_scene_save(host_scene_store *sc, const char *path);

/* Can path be a save's target? Its symlink resolved into resolved (size bytes): it must be
 * a regular file or nothing, in an existing folder the host may write. ECS_OK, or an error
 * with the reason in why. */
ecs_status host_scene_check_target(const char *path, char *resolved, size_t size, char *why,
                                   size_t len);

/* Write bytes[0..size) to path the way a save writes a scene (the same checks, a temporary
 * file renamed over it, the old file's mode kept): a snapshot file. ECS_OK, or the error
 * after one line naming the file. */
ecs_status host_scene_write_bytes(const char *path, const void *bytes,
                                  size_t size); /* savefile.c */

/* The components of some managers captured as a scene document (host_scene_capture). */
typedef struct host_scene_captured {
    char *text; /* the document, NUL-terminated */
    size_t len;
    ecs_entity *ents; /* the entity of entities[i] */
    uint32_t n;
    size_t count;  /* the managers captured */
    char **names;  /* their names */
    uint64_t *at;  /* NULL, or n x count: where each manager's value of entities[i] starts
                      in text, + 1 (0: none), so that a restore need not read the text */
    size_t *id_at; /* with at: where entities[i]'s id (a string) starts */
} host_scene_captured;

/* Capture the components of mgrs for every live entity into *out (free it with
 * host_scene_captured_free). False when a manager failed or memory ran out (*out empty).
 * The old version of a plugin captures, the new one restores: a JSON migration. */
bool host_scene_capture(host_scene_store *sc, host_manager *const *mgrs, size_t count,
                        host_scene_captured *out);
void host_scene_captured_free(host_scene_captured *c);

/* Give the existing entities of doc their components through mgrs (matched by name; they
 * need not be registered yet). Errors are logged naming `what`. With --safe, a manager
 * that crashes fails it (ECS_ERR_PLUGIN) with the signal in *crashed (may be NULL; 0 when
 * nothing crashed). */
ecs_status host_scene_restore(host_scene_store *sc, const host_scene_captured *doc,
                              host_manager *const *mgrs, size_t count, const char *what,
                              int *crashed);

/* Keep the components of a captured document in the store (a plugin whose file was
 * deleted): they are written on save and restored when the plugin comes back. False when
 * memory ran out. */
bool host_scene_keep(host_scene_store *sc, const host_scene_captured *doc);

/* Keep every component of the managers owned by owner (the world's tag: a plugin going
 * away, its file deleted, or it crashed) in the store. False when a manager cannot save or
 * memory ran out. */
bool host_scene_keep_owner(host_scene_store *sc, const void *owner);

/* Keep plugin `name`'s own state, the JSON text[0..len), in the store under the top-level
 * "plugins" object (written on save); an empty text keeps nothing (and drops what was
 * kept). False when the text is not JSON or memory ran out. */
bool host_scene_keep_state(host_scene_store *sc, const char *name, const char *text, size_t len);

/* The state kept for plugin `name` (host_scene_keep_state, or a scene's "plugins" member
 * no loaded plugin read) as a malloc'd text of *len bytes, dropped from the store; NULL
 * when none is kept. */
char *host_scene_take_state(host_scene_store *sc, const char *name, size_t *len);

/* Give the kept components of mgrs (a plugin loaded again) back to their entities and
 * drop them from the store. Nothing kept: ECS_OK. */
ecs_status host_scene_restore_kept(host_scene_store *sc, host_manager *const *mgrs, size_t count);

/* The inspector's view of entities list[0..n) (dead ones left out): a JSON array of
 * entity objects as a save writes them ("id" first, then each manager's component, kept
 * ones too), in *len bytes. NULL when a manager failed or memory ran out, or crashed (under
 * --safe: one line naming it, its plugin marked crashed). free() it. */
char *host_scene_entities_text(host_scene_store *sc, const ecs_entity *list, uint32_t n,
                               size_t *len);

/* The inspector's download: the text of a document (as a save writes it) before its
 * entities (up to the "[" of the array) into *head and after them (from its "]", with the
 * unknown top-level keys of the loaded files) into *tail, each malloc'd, NUL-terminated, its
 * length in *head_len, *tail_len; the objects between come from host_scene_entities_text,
 * joined with ", ". False when memory ran out or a plugin could not write its plugin state
 * (said in the log; nothing to free). */
bool host_scene_document_ends(host_scene_store *sc, char **head, size_t *head_len, char **tail,
                              size_t *tail_len);

/* The inspector's edit: replace e's component of `manager` by the JSON text[0..len),
 * through the manager's read_component (or load_component) with the checks of a scene load
 * (references name live entities by scene id or e<index>). On error e keeps its old value and error
 * holds the message with its JSON path. */
ecs_status host_scene_edit(host_scene_store *sc, ecs_entity e, const char *manager,
                           const char *text, size_t len, char *error, size_t errlen);

/* The live entity with scene id `id`, or named e<index>; null when there is none. */
ecs_entity host_scene_entity_named(host_scene_store *sc, const char *id);

/* The scene id e was loaded (or created) under, or NULL when it has none (a save then
 * names it e<index>). Valid until e is destroyed. Cheap: for a walk over every entity. */
const char *host_scene_stored_id(const host_scene_store *sc, ecs_entity e);

/* For hostapi.c: the calls of the ecs_host table, valid during a load or save only. */
ecs_status host_scene_resolve(host_scene_store *sc, const char *scene_id, ecs_entity *out);
const char *host_scene_id_of(host_scene_store *sc, ecs_entity e);
void host_scene_error(host_scene_store *sc, const struct cJSON *at, const char *message);
/* Is a load running in sc now (its managers' read or load calls under way)? */
bool host_scene_loading(const host_scene_store *sc);

/* Snapshots (docs/snapshot-format.md, section "scene store"): the store's scene ids, kept
 * components, load order and unknown top-level keys as bytes, malloc'd, *len of them; NULL
 * when memory ran out. */
char *host_scene_store_snapshot_write(const host_scene_store *s, size_t *len);
/* Make the store what in[0..size) holds. ECS_ERR_BAD_VALUE (bytes that do not add up) or
 * ECS_ERR_NO_MEMORY leave it as it was. */
ecs_status host_scene_store_snapshot_read(host_scene_store *s, const char *in, size_t size);

#endif
