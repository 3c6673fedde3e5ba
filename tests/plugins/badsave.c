/* SPDX-License-Identifier: MIT */
/* badsave.c: test plugin "badsave": a manager whose component is a word read from the
 * scene ("ok", "dup-key", "dup-value", "dup-first-of-17", "nan-value") and written back
 * as a value shaped by that word: "ok" writes a valid object, the others write what a
 * scene load refuses (a key twice through key(), a cJSON object with a key twice through
 * value(), the smallest of 17 keys twice, a NaN inside a cJSON value). test_save.c saves
 * it and checks that the save fails, naming the plugin and the entity. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ecs_plugin.h"

#define MAX_COMPONENTS 64

typedef struct badsave {
    const ecs_host *host;
    uint32_t count;
    ecs_entity entity[MAX_COMPONENTS];
    char word[MAX_COMPONENTS][24];
} badsave;

static int find(const badsave *b, ecs_entity e)
{
    for (uint32_t i = 0; i < b->count; i++)
        if (b->entity[i].id == e.id) return (int)i;
    return -1;
}

static ecs_status read_component(void *state, ecs_entity e, ecs_json_reader *r)
{
    badsave *b = state;
    const char *s;
    size_t n;
    if (!r->string(r, &s, &n)) return ECS_ERR_BAD_VALUE;
    int i = find(b, e);
    if (i < 0 && b->count == MAX_COMPONENTS) return ECS_ERR_NO_MEMORY;
    if (i < 0) i = (int)b->count++;
    b->entity[i] = e;
    snprintf(b->word[i], sizeof b->word[i], "%.*s", (int)(n < 23 ? n : 23), s);
    return ECS_OK;
}

/* {"k00": 0, ..., "k16": 16} with "k00" once more at the end: the smallest key twice. */
static void dup_first_of_17(ecs_json_writer *w)
{
    w->begin_object(w);
    for (int k = 16; k >= 0; k--) { /* written largest first: "k00" is not the first key */
        char key[16];               /* room for any int: GCC checks -Wformat-truncation at -O1 */
        snprintf(key, sizeof key, "k%02d", k);
        w->key(w, key);
        w->number(w, k);
    }
    w->key(w, "k00");
    w->number(w, 100);
    w->end_object(w);
}

static ecs_status write_component(void *state, ecs_entity e, ecs_json_writer *w)
{
    badsave *b = state;
    int i = find(b, e);
    if (i < 0) return ECS_OK;
    const char *word = b->word[i];
    if (!strcmp(word, "dup-first-of-17")) {
        dup_first_of_17(w);
        return ECS_OK;
    }
    if (!strcmp(word, "dup-key")) {
        w->begin_object(w);
        w->key(w, "a");
        w->number(w, 1);
        w->key(w, "a");
        w->number(w, 2);
        w->end_object(w);
        return ECS_OK;
    }
    if (!strcmp(word, "dup-value") || !strcmp(word, "nan-value")) {
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "word", word);
        if (!strcmp(word, "dup-value"))
            cJSON_AddStringToObject(v, "word", "again"); /* cJSON keeps both */
        else
            cJSON_AddNumberToObject(v, "x", NAN);
        w->value(w, v);
        cJSON_Delete(v);
        return ECS_OK;
    }
    w->string(w, word);
    return ECS_OK;
}

static uint32_t count(void *state)
{
    return ((badsave *)state)->count;
}

static ecs_status load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    (void)args;
    badsave *b = h->alloc(h, sizeof *b);
    if (!b) return ECS_ERR_NO_MEMORY;
    memset(b, 0, sizeof *b);
    b->host = h;
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = "badsave",
                          .state = b,
                          .count = count,
                          .write_component = write_component,
                          .read_component = read_component};
    ecs_status s = h->register_manager(h, &m);
    if (s != ECS_OK) {
        h->free(h, b);
        return s;
    }
    *state = b;
    return ECS_OK;
}

static void unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    (void)reason;
    h->free(h, state);
}

static const ecs_plugin_desc badsave_plugin = {
    ECS_PLUGIN_DESC_HEADER, "badsave", "1.0.0", 1, NULL, load, unload, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(badsave_plugin)
