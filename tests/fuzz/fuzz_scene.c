/* SPDX-License-Identifier: MIT */
/* fuzz_scene.c: libFuzzer target for the scene loader and saver (host/scene/scene.c,
 * host/scene/json.c) with the transform, debug_name and mesh plugins loaded once, as instrumented
 * copies (tests/fuzz/meson.build), so coverage and the sanitizers reach their JSON code too.
 *
 * Each input is written to a temporary .json file and loaded with host_scene_load():
 * - a failed load must leave the world empty (all or nothing): no live entity, no
 *   component in any manager, nothing left to announce;
 * - a load that succeeds must have read valid JSON: the strict parser (unique keys) takes
 *   the same input (the loader's first pass only matches the brackets of component values;
 *   this checks that every byte was checked by someone all the same);
 * - a load that succeeds is saved, the world emptied, the saved file loaded again (it must
 *   load) and saved again: both saves must hold the same scene (see same_scene). Then
 *   everything is destroyed and announced and the world must be empty again.
 * A broken property aborts (a finding), as does a crash, a leak or undefined behaviour.
 * FUZZ_SCENE_VERBOSE=1 in the environment shows the host's log lines (quiet otherwise).
 * Build: meson setup -Dfuzz=true with CC=clang (tests/fuzz/meson.build); run:
 *   mkdir -p /tmp/new && build/tests/fuzz/fuzz_scene /tmp/new tests/fuzz/corpus_scene
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fixture.h"
#include "jparse.h"
#include "json.h"
#include "log.h"
#include "scene.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(FUZZ_TRANSFORM_SO) || !defined(FUZZ_DEBUG_NAME_SO) || !defined(FUZZ_MESH_SO)
#error "tests/fuzz/meson.build defines the paths of the instrumented plugins"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fixture world; /* the three plugins, loaded once */
static char dir[64];  /* a private scratch folder for the inputs and the saves */
static char input[128], saved[128], saved_again[128];

static void cleanup(void)
{
    unlink(input);
    unlink(saved);
    unlink(saved_again);
    rmdir(dir);
    fixture_close(&world);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *verbose = getenv("FUZZ_SCENE_VERBOSE");
    if (!verbose || strcmp(verbose, "1") != 0)
        host_log_set_level((ecs_log_level)-1); /* below errors: one line per input is slow */
    const char *const plugins[] = {FUZZ_TRANSFORM_SO, FUZZ_DEBUG_NAME_SO, FUZZ_MESH_SO, NULL};
    snprintf(dir, sizeof dir, "/tmp/fuzz-scene-XXXXXX");
    if (!mkdtemp(dir) || fixture_open(&world, plugins) != 0 || world.w->manager_count != 3) {
        fprintf(stderr, "fuzz_scene: cannot set up the world (plugins: %s %s %s)\n",
                FUZZ_TRANSFORM_SO, FUZZ_DEBUG_NAME_SO, FUZZ_MESH_SO);
        abort();
    }
    snprintf(input, sizeof input, "%s/input.json", dir);
    snprintf(saved, sizeof saved, "%s/saved.json", dir);
    snprintf(saved_again, sizeof saved_again, "%s/saved-again.json", dir);
    atexit(cleanup);
    return 0;
}

/* Abort with a message: a property of the loader does not hold. */
static void finding(const char *what)
{
    fprintf(stderr, "fuzz_scene: %s\n", what);
    abort();
}

/* True when the world holds nothing: no live or unannounced entity, no component. */
static bool world_empty(void)
{
    host_world *w = world.w;
    if (host_entities_live(w->entities) || host_entities_unannounced(w->entities)) return false;
    for (size_t m = 0; m < w->manager_count; m++) {
        const ecs_manager_desc *d = &w->managers[m]->desc;
        if (d->count && d->count(d->state) != 0) return false;
    }
    return true;
}

/* Destroy every live entity, announce it, and start a new scene store (unknown top-level
 * keys are kept per world, not per entity). The world is empty afterwards. */
static void empty_world(void)
{
    host_world *w = world.w;
    ecs_entity e;
    for (uint32_t i = 1; host_entities_next_live(w->entities, i, &e); i = ecs_entity_index(e) + 1)
        host_entity_destroy(w->entities, e);
    host_world_announce_destroyed(w);
    host_scene_store *fresh = host_scene_store_new(w); /* no plugin here keeps a state */
    if (!fresh) finding("out of memory for a scene store");
    host_scene_store_free(world.s->scene);
    world.s->scene = fresh;
    if (!world_empty()) finding("the world is not empty after destroying every entity");
}

/* The entity with this id in a saved scene's "entities", or NULL. */
static const cJSON *entity_by_id(const cJSON *list, const char *id)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *i = cJSON_GetObjectItemCaseSensitive(e, "id");
        if (cJSON_IsString(i) && strcmp(i->valuestring, id) == 0) return e;
    }
    return NULL;
}

/* True when a and b print the same (cJSON_Compare is false for an object with a repeated
 * key, even against itself). */
static bool same_json(const cJSON *a, const cJSON *b)
{
    char *x = a ? cJSON_PrintUnformatted(a) : NULL, *y = b ? cJSON_PrintUnformatted(b) : NULL;
    bool same = x && y && strcmp(x, y) == 0;
    free(x);
    free(y);
    return same;
}

/* True when two saves hold the same scene: the same top-level keys and values, and the
 * same entities (by id) with the same components. The order of the entities may differ:
 * a save lists them in entity index order, and indices freed by earlier inputs come back
 * in the order they were freed, not in file order. */
static bool same_scene(const char *path_a, const char *path_b)
{
    char err[512];
    cJSON *a = host_json_read_file(path_a, err, sizeof err);
    cJSON *b = host_json_read_file(path_b, err, sizeof err);
    const cJSON *la = cJSON_GetObjectItemCaseSensitive(a, "entities");
    const cJSON *lb = cJSON_GetObjectItemCaseSensitive(b, "entities"), *x, *y;
    bool same = a && b && cJSON_GetArraySize(a) == cJSON_GetArraySize(b) &&
                cJSON_GetArraySize(la) == cJSON_GetArraySize(lb);
    for (x = a ? a->child : NULL, y = b ? b->child : NULL; same && x && y;
         x = x->next, y = y->next) /* top-level keys: in the same order */
        same = !strcmp(x->string, y->string) && (x == la || same_json(x, y));
    const cJSON *walk = same ? la : NULL;
    cJSON_ArrayForEach(x, walk)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(x, "id");
        same = same && cJSON_IsString(id) && same_json(x, entity_by_id(lb, id->valuestring));
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(input, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) finding("cannot write the input");
    if (host_scene_load(world.s->scene, input) != ECS_OK) {
        if (!world_empty()) finding("a failed load left entities or components behind");
        empty_world(); /* the store's top-level keys */
        return 0;
    }
    cJSON *strict = host_jparse_keys((const char *)data, size, NULL, true, NULL);
    if (!strict) finding("a scene that is not valid JSON loaded");
    cJSON_Delete(strict);
    if (host_scene_save(world.s->scene, saved) != ECS_OK)
        finding("a loaded scene could not be saved");
    empty_world();
    if (host_scene_load(world.s->scene, saved) != ECS_OK) finding("a saved scene does not load");
    if (host_scene_save(world.s->scene, saved_again) != ECS_OK) finding("the second save failed");
    if (!same_scene(saved, saved_again)) finding("saving a saved scene again gives another scene");
    empty_world();
    return 0;
}
