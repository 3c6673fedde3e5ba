/* SPDX-License-Identifier: MIT */
/* inspect_search.c: GET /api/entities?name=TEXT as a job (inspect_int.h): the live
 * entities whose name or scene id contains TEXT (ASCII letters in any case), walked in
 * index order a slice at a time, so that a search of 4 M entities never holds a frame.
 *
 * Names come from whichever plugin publishes the SDK's "ecs.names" API (ecs_describe.h;
 * the bundled debug_name does), looked up again at every slice (its provider may be
 * reloaded or leave between two), scene ids from the scene store. The walk keeps a cursor
 * (the next entity index), the number of matches so far and the ids of the page asked for
 * (matches offset .. offset + limit - 1); the page's items are written when the walk ends,
 * from what the entities hold then. An entity created behind the cursor during the walk is
 * not seen, one destroyed after it matched is left out of the page.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_describe.h"
#include "inspect_int.h"
#include "scene.h"

#define NEEDLE_MAX  256u /* longer than any name (debug_name: 255 bytes) */
#define CLOCK_EVERY 256u /* entities between two looks at the clock (a few microseconds) */

typedef struct search_job {
    inspect_job job;
    char needle[NEEDLE_MAX]; /* folded to lower case */
    size_t n;
    long offset, limit;
    bool full;
    uint32_t cursor; /* the next entity index to look at */
    uint64_t matched;
    ecs_entity *page; /* limit entries */
    uint32_t page_n;
} search_job;

static unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

/* Does hay contain the folded needle[0..n) (n > 0), in any case? */
static bool contains(const char *hay, const char *needle, size_t n)
{
    unsigned char first = (unsigned char)needle[0];
    for (const unsigned char *h = (const unsigned char *)hay; *h; h++) {
        if (fold(*h) != first) continue;
        size_t k = 1;
        while (k < n && h[k] && fold(h[k]) == (unsigned char)needle[k]) k++;
        if (k == n) return true;
    }
    return false;
}

/* Does e match: its name (names may be NULL) or its scene id (or e<index> without one)? */
static bool matches(const host_world *w, const ecs_names_api *names, ecs_entity e,
                    const search_job *s)
{
    const char *name = names ? names->get(names->self, e) : NULL;
    if (name && contains(name, s->needle, s->n)) return true;
    const char *id = host_scene_stored_id(w, e);
    char made[16];
    if (!id) snprintf(made, sizeof made, "e%u", ecs_entity_index(e)), id = made;
    return contains(id, s->needle, s->n);
}

/* The names provider now, or NULL; its plugin in j->crashed (a crash is blamed on it). */
static const ecs_names_api *names_now(host_world *w, inspect_job *j)
{
    size_t size = 0;
    const ecs_names_api *names =
        host_registry_find(&w->registry, ECS_NAMES_API_NAME, ECS_NAMES_API_VERSION, &size);
    if (!names || size < offsetof(ecs_names_api, get) + sizeof names->get || !names->get)
        return NULL;
    const host_api_entry *entry = host_registry_entry(&w->registry, ECS_NAMES_API_NAME);
    j->crashed = entry ? entry->owner : NULL;
    j->crash_in = "get() of its ecs.names API";
    return names;
}

static bool search_step(host_inspector *in, inspect_job *j, uint64_t until)
{
    search_job *s = (search_job *)j;
    host_world *w = in->w;
    const ecs_names_api *names = names_now(w, j);
    ecs_entity e;
    for (;;) {
        for (unsigned k = 0; k < CLOCK_EVERY; k++) {
            if (!host_entities_next_live(w->entities, s->cursor, &e)) return true;
            s->cursor = ecs_entity_index(e) + 1;
            if (!matches(w, names, e, s)) continue;
            if (s->matched >= (uint64_t)s->offset && s->page_n < (uint32_t)s->limit)
                s->page[s->page_n++] = e;
            s->matched++;
        }
        if (host_now_ns() >= until) return false;
    }
}

static cJSON *search_answer(host_inspector *in, inspect_job *j, unsigned *status)
{
    search_job *s = (search_job *)j;
    cJSON *v = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(v, "items");
    if (!inspect_entity_items(in->w, s->page, s->page_n, s->full, items)) {
        cJSON_Delete(v);
        *status = 500;
        v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "error",
                                "a manager could not save its components (see the log)");
        return v;
    }
    cJSON_AddNumberToObject(v, "offset", (double)s->offset);
    cJSON_AddNumberToObject(v, "total", (double)s->matched);
    return v;
}

static void search_free(inspect_job *j)
{
    search_job *s = (search_job *)j;
    free(s->page);
    free(s);
}

static const inspect_job_kind search_kind = {"search", search_step, search_answer, search_free};

enum MHD_Result inspect_search_start(host_inspector *in, struct MHD_Connection *c, request *r,
                                     const char *needle, long offset, long limit, bool full)
{
    size_t n = strlen(needle);
    if (n >= NEEDLE_MAX)
        return inspect_reply_error(c, 400, "name: at most 255 bytes (no name is longer)");
    search_job *s = calloc(1, sizeof *s);
    if (s) s->page = malloc((limit ? (size_t)limit : 1) * sizeof *s->page);
    if (!s || !s->page) {
        if (s) free(s);
        return inspect_reply_error(c, 500, "out of memory");
    }
    s->job.kind = &search_kind;
    for (size_t i = 0; i < n; i++) s->needle[i] = (char)fold((unsigned char)needle[i]);
    s->n = n;
    s->offset = offset;
    s->limit = limit;
    s->full = full;
    return inspect_job_start(in, c, r, &s->job);
}
