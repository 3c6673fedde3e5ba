/* SPDX-License-Identifier: MIT */
/* inspect_index.c: the entity lists the inspector pages through (inspect_int.h): every
 * live entity, the roots of the hierarchy, a parent's children, the entities whose name
 * or scene id holds a text, the entities a query matches. GET /api/entities (with
 * roots=1, name=, query=) and GET /api/entities/{id}/children.
 *
 * An index is the list of one such set, in entity index order (a parent's children in
 * their own order), made by a walk over the world done as a job: a slice of at most 1 ms
 * at each frame boundary and in the time the loop would sleep, so that a walk of 4 M
 * entities never holds a frame. A made index serves every page asked of it for
 * INDEX_FRESH_NS (a page at any offset costs what its items cost: the last of 4 M entities
 * as cheap as the first), then the next request walks again. The last few are kept
 * (INDEX_KEPT, least recently used out first). Invariant: an index is walked by at most one
 * walk at a time; its `ids` are a finished walk's, `walk` the one under way.
 *
 * What the walks read comes through the SDK's describing APIs (ecs_describe.h): names
 * ("ecs.names"), the tree ("ecs.hierarchy"), looked up again at each slice (a provider may
 * be reloaded or leave between two); a query tests the managers' signature bits, or their
 * has() when they report none. An entity that dies after it was walked is left out of the
 * pages; one born behind the walk waits for the next.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_describe.h"
#include "guard.h"
#include "inspect_int.h"
#include "log.h"
#include "scene.h"

#define INDEX_FRESH_NS 1000000000ull /* an index serves pages this long after its walk */
#define INDEX_KEPT     8u            /* indexes kept at most */
#define KEY_MAX        256u          /* a text searched or a query: longer than any name */
#define CLOCK_EVERY    256u          /* entities between two looks at the clock */
#define QUERY_MAX      16u           /* managers named in a query */
#define CHILDREN_CAP   100u          /* an item's children counted up to this ("100+") */
#define PATH_MAX_DEPTH 32u           /* ancestors shown before a search's or query's item */

typedef enum ix_kind { IX_ALL, IX_ROOTS, IX_NAME, IX_QUERY, IX_CHILDREN } ix_kind;

typedef struct query_term {
    const host_manager *m; /* checked alive at each walk's slice: by name again */
    char name[128];
    uint32_t bit;
    bool by_bit, without;
} query_term;

struct inspect_index {
    ix_kind kind;
    char key[KEY_MAX]; /* the text folded to lower case, the query, the parent's id */
    size_t key_len;
    ecs_entity parent; /* IX_CHILDREN */
    query_term terms[QUERY_MAX];
    uint32_t term_count;
    ecs_entity *ids; /* the last finished walk's, in order; room for ids_cap */
    uint32_t n, ids_cap;
    uint64_t built_ns, used_ns; /* when that walk ended (0: none yet), when last asked */
    /* the walk under way */
    bool walking;
    uint32_t cursor;   /* the next entity index to look at */
    ecs_entity child;  /* IX_CHILDREN: the next child to look at */
    ecs_entity *w_ids; /* what it found so far */
    uint32_t w_n, w_cap;
    uint64_t w_start, w_work, w_longest, w_frame0;
    uint32_t w_slices;
    /* the finished walk's cost, for the answers */
    double cost_ms, cost_work_ms, cost_longest_ms;
    uint32_t cost_slices;
    uint64_t cost_frames;
    unsigned users; /* page jobs that will read it: not dropped while there are any */
    inspect_index *next;
};

/* ---- the world through the describing APIs ---- */

/* The SDK API name (version 1) if its provider has the field at `need` bytes, else NULL;
 * its plugin into j->crashed (a crash is blamed on it), `call` into j->crash_in. */
static const void *describer(host_session *hs, const char *name, size_t need, inspect_job *j,
                             const char *call)
{
    size_t size = 0;
    const void *api = host_registry_find(&hs->registry, name, 1, &size);
    if (!api || size < need) return NULL;
    const host_api_entry *e = host_registry_entry(&hs->registry, name);
    if (j) j->crashed = e ? e->owner : NULL, j->crash_in = call;
    return api;
}

static const ecs_names_api *names_of(host_session *hs, inspect_job *j)
{
    const ecs_names_api *a =
        describer(hs, ECS_NAMES_API_NAME, offsetof(ecs_names_api, get) + sizeof(void (*)(void)), j,
                  "get() of its ecs.names API");
    return a && a->get ? a : NULL;
}

static const ecs_hierarchy_api *tree_of(host_session *hs, inspect_job *j)
{
    const ecs_hierarchy_api *a =
        describer(hs, ECS_HIERARCHY_API_NAME,
                  offsetof(ecs_hierarchy_api, next_sibling) + sizeof(void (*)(void)), j,
                  "its ecs.hierarchy API");
    return a && a->parent && a->first_child && a->next_sibling ? a : NULL;
}

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

/* Does e's name or scene id (e<index> without one) hold ix's text? */
static bool name_matches(const host_session *hs, const ecs_names_api *names, ecs_entity e,
                         const inspect_index *ix)
{
    const char *name = names ? names->get(names->self, e) : NULL;
    if (name && contains(name, ix->key, ix->key_len)) return true;
    const char *id = host_scene_stored_id(hs->scene, e);
    char made[16];
    if (!id) snprintf(made, sizeof made, "e%u", ecs_entity_index(e)), id = made;
    return contains(id, ix->key, ix->key_len);
}

/* Has e (alive) the component of term t's manager? */
static bool term_has(const host_session *hs, const query_term *t, ecs_entity e)
{
    if (!t->by_bit) return t->m->index.has(t->m->index.state, e);
    uint32_t i = ecs_entity_index(e);
    const host_signatures *s = &hs->world->sig;
    return i < s->used && t->bit < s->name_count && s->columns[t->bit] &&
           (s->columns[t->bit][i >> 6] >> (i & 63) & 1);
}

static bool query_matches(const host_session *hs, const inspect_index *ix, ecs_entity e)
{
    for (uint32_t k = 0; k < ix->term_count; k++)
        if (term_has(hs, &ix->terms[k], e) == ix->terms[k].without) return false;
    return true;
}

/* The managers of ix's query as registered now (a reload may have replaced one): false
 * with *why when one is gone. */
static bool query_bind(host_session *hs, inspect_index *ix, const char **why)
{
    for (uint32_t k = 0; k < ix->term_count; k++) {
        query_term *t = &ix->terms[k];
        t->m = NULL;
        for (size_t i = 0; i < hs->world->manager_count && !t->m; i++)
            if (!strcmp(hs->world->managers[i]->name, t->name)) t->m = hs->world->managers[i];
        if (!t->m || !t->m->index.has) return *why = "a manager of the query is gone", false;
        t->by_bit = t->m->index.signature;
        t->bit = t->m->bit;
    }
    return true;
}

/* ---- walks ---- */

static bool walk_push(inspect_index *ix, ecs_entity e)
{
    if (ix->w_n == ix->w_cap) {
        uint32_t cap = ix->w_cap ? ix->w_cap * 2 : 4096;
        ecs_entity *v = realloc(ix->w_ids, cap * sizeof *v);
        if (!v) return false;
        ix->w_ids = v, ix->w_cap = cap;
    }
    ix->w_ids[ix->w_n++] = e;
    return true;
}

static void walk_begin(host_inspector *in, inspect_index *ix)
{
    ix->walking = true;
    ix->cursor = 0;
    ix->w_n = 0;
    uint32_t most =
        ix->kind == IX_CHILDREN ? 4096 : host_entities_live(in->hs->world->entities) + 1;
    free(ix->w_ids);
    if (ix->ids && ix->ids_cap >= most) { /* the last walk's room: no free, no new pages */
        ix->w_ids = ix->ids, ix->w_cap = ix->ids_cap;
        ix->ids = NULL, ix->n = ix->ids_cap = 0;
    } else { /* room for every match at once (pages only where they are written) */
        free(ix->ids);
        ix->ids = NULL, ix->n = ix->ids_cap = 0;
        ix->w_ids = malloc((size_t)most * sizeof *ix->w_ids);
        ix->w_cap = ix->w_ids ? most : 0;
    }
    ix->w_start = host_now_ns();
    ix->w_work = ix->w_longest = 0;
    ix->w_slices = 0;
    ix->w_frame0 = in->hs->world->frame.frame;
    const ecs_hierarchy_api *tree = ix->kind == IX_CHILDREN ? tree_of(in->hs, NULL) : NULL;
    ix->child = tree && host_entity_alive(in->hs->world->entities, ix->parent)
                    ? tree->first_child(tree->self, ix->parent)
                    : ecs_entity_null();
}

static int by_index(const void *a, const void *b)
{
    uint32_t x = ecs_entity_index(*(const ecs_entity *)a),
             y = ecs_entity_index(*(const ecs_entity *)b);
    return (x > y) - (x < y);
}

static void walk_end(host_inspector *in, inspect_index *ix, uint64_t now)
{
    if (ix->kind == IX_CHILDREN) /* a list's order is its own (newest first): shown by index */
        qsort(ix->w_ids, ix->w_n, sizeof *ix->w_ids, by_index);
    free(ix->ids); /* none but a walk's failed start leaves one here */
    ix->ids = ix->w_ids, ix->n = ix->w_n, ix->ids_cap = ix->w_cap; /* kept whole for the next
        walk: freeing 16 MB of written pages (4 M entities) costs a millisecond of a slice */
    ix->w_ids = NULL, ix->w_n = ix->w_cap = 0;
    ix->walking = false;
    ix->built_ns = now;
    ix->cost_ms = (double)(now - ix->w_start) / 1e6;
    ix->cost_work_ms = (double)ix->w_work / 1e6;
    ix->cost_longest_ms = (double)ix->w_longest / 1e6;
    ix->cost_slices = ix->w_slices;
    ix->cost_frames = in->hs->world->frame.frame - ix->w_frame0;
}

/* One slice of a walk over the children of ix->parent: the sibling list. */
static bool walk_children(host_inspector *in, inspect_index *ix, inspect_job *j, uint64_t until)
{
    const ecs_hierarchy_api *tree = tree_of(in->hs, j);
    for (;;) {
        for (unsigned k = 0; k < CLOCK_EVERY; k++) {
            if (!tree || ecs_entity_is_null(ix->child) ||
                !host_entity_alive(in->hs->world->entities, ix->child))
                return true;
            if (!walk_push(ix, ix->child)) return true;
            ix->child = tree->next_sibling(tree->self, ix->child);
        }
        if (host_now_ns() >= until) return false;
    }
}

/* One slice of a walk over the live entities in index order: true when it reached the end. */
static bool walk_world(host_inspector *in, inspect_index *ix, inspect_job *j, uint64_t until)
{
    host_session *hs = in->hs;
    const ecs_names_api *names = ix->kind == IX_NAME ? names_of(hs, j) : NULL;
    const ecs_hierarchy_api *tree = ix->kind == IX_ROOTS ? tree_of(hs, j) : NULL;
    const char *why;
    if (ix->kind == IX_QUERY && !query_bind(hs, ix, &why)) return true; /* nothing matches */
    ecs_entity e;
    for (;;) {
        for (unsigned k = 0; k < CLOCK_EVERY; k++) {
            if (!host_entities_next_live(hs->world->entities, ix->cursor, &e)) return true;
            ix->cursor = ecs_entity_index(e) + 1;
            bool in_it = ix->kind == IX_ALL ||
                         (ix->kind == IX_ROOTS &&
                          (!tree || ecs_entity_is_null(tree->parent(tree->self, e)))) ||
                         (ix->kind == IX_NAME && name_matches(hs, names, e, ix)) ||
                         (ix->kind == IX_QUERY && query_matches(hs, ix, e));
            if (in_it && !walk_push(ix, e)) return true;
        }
        if (host_now_ns() >= until) return false;
    }
}

/* Walk ix until `until` (starting a walk when none is under way): true when it is done. */
static bool walk(host_inspector *in, inspect_index *ix, inspect_job *j, uint64_t until)
{
    if (!ix->walking) walk_begin(in, ix);
    uint64_t t0 = host_now_ns();
    bool done =
        ix->kind == IX_CHILDREN ? walk_children(in, ix, j, until) : walk_world(in, ix, j, until);
    uint64_t t1 = host_now_ns();
    ix->w_work += t1 - t0;
    ix->w_slices++;
    if (t1 - t0 > ix->w_longest) ix->w_longest = t1 - t0;
    if (done) walk_end(in, ix, t1);
    return done;
}

/* ---- the indexes kept ---- */

static bool same_index(const inspect_index *ix, ix_kind kind, const char *key, size_t len)
{
    return ix->kind == kind && ix->key_len == len && !memcmp(ix->key, key, len);
}

/* The index of (kind, key), kept or new (the least recently used one out when there are
 * INDEX_KEPT and none is walking); NULL when out of memory. */
static inspect_index *index_for(host_inspector *in, ix_kind kind, const char *key, size_t len)
{
    unsigned kept = 0;
    inspect_index **oldest = NULL;
    for (inspect_index **at = &in->indexes; *at; at = &(*at)->next, kept++) {
        if (same_index(*at, kind, key, len)) return (*at)->used_ns = host_now_ns(), *at;
        if (!(*at)->walking && !(*at)->users && (!oldest || (*at)->used_ns < (*oldest)->used_ns))
            oldest = at;
    }
    if (kept >= INDEX_KEPT && oldest) {
        inspect_index *gone = *oldest;
        *oldest = gone->next;
        free(gone->ids), free(gone->w_ids), free(gone);
    }
    inspect_index *ix = calloc(1, sizeof *ix);
    if (!ix) return NULL;
    ix->kind = kind;
    memcpy(ix->key, key, len);
    ix->key_len = len;
    ix->used_ns = host_now_ns();
    ix->next = in->indexes;
    in->indexes = ix;
    return ix;
}

void inspect_index_free_all(host_inspector *in)
{
    while (in->indexes) {
        inspect_index *ix = in->indexes;
        in->indexes = ix->next;
        free(ix->ids), free(ix->w_ids), free(ix);
    }
}

/* ---- pages ---- */

typedef struct page_job {
    inspect_job job;
    inspect_index *ix;
    long offset, limit;
    bool full, paths;
    uint64_t asked_ns;
    bool walked;                /* the index is ready: the items are being written */
    uint32_t from, count, done; /* the page's items in ix->ids, and how many are written */
    cJSON *answer;              /* made in the last steps (under the crash guard) */
    unsigned status;
} page_job;

/* e's ancestors, the root first, as [{"id", "name"}] (names may be NULL). */
static cJSON *path_json(const ecs_hierarchy_api *tree, const ecs_names_api *names, ecs_entity e)
{
    ecs_entity up[PATH_MAX_DEPTH];
    uint32_t n = 0;
    for (ecs_entity p = tree->parent(tree->self, e); !ecs_entity_is_null(p) && n < PATH_MAX_DEPTH;
         p = tree->parent(tree->self, p))
        up[n++] = p;
    cJSON *path = cJSON_CreateArray();
    while (n--) {
        char id[32];
        inspect_id_text(up[n], id, sizeof id);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", id);
        const char *name = names ? names->get(names->self, up[n]) : NULL;
        cJSON_AddStringToObject(o, "name", name ? name : "");
        cJSON_AddItemToArray(path, o);
    }
    return path;
}

/* Each item's children counted (up to CHILDREN_CAP: "children_more") and, with paths,
 * its ancestors. */
static void describe_items(host_session *hs, inspect_job *j, cJSON *items, bool paths)
{
    const ecs_hierarchy_api *tree = tree_of(hs, j);
    const ecs_names_api *names = paths ? names_of(hs, NULL) : NULL;
    cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        const cJSON *raw = cJSON_GetObjectItemCaseSensitive(it, "raw");
        ecs_entity e = {(uint32_t)raw->valuedouble};
        uint32_t n = 0;
        for (ecs_entity c = tree ? tree->first_child(tree->self, e) : ecs_entity_null();
             !ecs_entity_is_null(c) && n < CHILDREN_CAP; c = tree->next_sibling(tree->self, c))
            n++;
        cJSON_AddNumberToObject(it, "children", n);
        if (n == CHILDREN_CAP) cJSON_AddBoolToObject(it, "children_more", true);
        if (paths && tree) cJSON_AddItemToObject(it, "path", path_json(tree, names, e));
    }
}

#define ITEMS_EVERY 16u /* items written between two looks at the clock */

/* The answer's frame, its items still to come: p->from and p->count set. */
static cJSON *page_begin(page_job *p)
{
    inspect_index *ix = p->ix;
    p->from = p->offset < (long)ix->n ? (uint32_t)p->offset : ix->n;
    p->count = ix->n - p->from < (uint32_t)p->limit ? ix->n - p->from : (uint32_t)p->limit;
    cJSON *v = cJSON_CreateObject();
    cJSON_AddArrayToObject(v, "items");
    cJSON_AddNumberToObject(v, "offset", (double)p->offset);
    cJSON_AddNumberToObject(v, "total", ix->n);
    cJSON *walk = cJSON_AddObjectToObject(v, "walk"); /* the walk this page was cut from */
    cJSON_AddNumberToObject(walk, "ms", ix->cost_ms);
    cJSON_AddNumberToObject(walk, "work_ms", ix->cost_work_ms);
    cJSON_AddNumberToObject(walk, "slices", ix->cost_slices);
    cJSON_AddNumberToObject(walk, "longest_slice_ms", ix->cost_longest_ms);
    cJSON_AddNumberToObject(walk, "frames", (double)ix->cost_frames);
    cJSON_AddNumberToObject(walk, "age_ms", (double)(host_now_ns() - ix->built_ns) / 1e6);
    return v;
}

/* Write the page's items until `until`, ITEMS_EVERY at a time (a thousand with their
 * components take milliseconds): true when all are written (or a manager failed: 500). */
static bool page_items(host_inspector *in, page_job *p, uint64_t until)
{
    cJSON *items = cJSON_GetObjectItemCaseSensitive(p->answer, "items");
    while (p->done < p->count) {
        uint32_t n = p->count - p->done < ITEMS_EVERY ? p->count - p->done : ITEMS_EVERY;
        cJSON *some = cJSON_CreateArray();
        if (!inspect_entity_items(in->hs, p->ix->ids + p->from + p->done, n, p->full, some)) {
            cJSON_Delete(some);
            cJSON_Delete(p->answer);
            p->status = 500;
            p->answer = cJSON_CreateObject();
            cJSON_AddStringToObject(p->answer, "error",
                                    "a manager could not save its components (see the log)");
            return true;
        }
        describe_items(in->hs, &p->job, some, p->paths);
        while (some->child)
            cJSON_AddItemToArray(items, cJSON_DetachItemViaPointer(some, some->child));
        cJSON_Delete(some);
        p->done += n;
        if (p->done < p->count && host_now_ns() >= until) return false;
    }
    return true;
}

static bool page_step(host_inspector *in, inspect_job *j, uint64_t until)
{
    page_job *p = (page_job *)j;
    inspect_index *ix = p->ix;
    if (!p->walked) { /* a walk that ended after this page was asked, or a fresh one */
        bool fresh = ix->built_ns && !ix->walking &&
                     (ix->built_ns >= p->asked_ns || p->asked_ns - ix->built_ns < INDEX_FRESH_NS);
        if (!fresh && !walk(in, ix, j, until)) return false;
        p->walked = true;
        p->answer = page_begin(p);
    }
    return page_items(in, p, until);
}

static cJSON *page_answer(host_inspector *in, inspect_job *j, unsigned *status)
{
    (void)in;
    page_job *p = (page_job *)j;
    cJSON *v = p->answer;
    p->answer = NULL;
    *status = p->status;
    return v;
}

static void page_free(inspect_job *j)
{
    page_job *p = (page_job *)j;
    p->ix->users--;
    cJSON_Delete(p->answer);
    free(p);
}

static const inspect_job_kind page_kinds[] = {
    [IX_ALL] = {"list", page_step, page_answer, page_free},
    [IX_ROOTS] = {"roots", page_step, page_answer, page_free},
    [IX_NAME] = {"search", page_step, page_answer, page_free},
    [IX_QUERY] = {"query", page_step, page_answer, page_free},
    [IX_CHILDREN] = {"children", page_step, page_answer, page_free},
};

/* Start the job of one page of ix (its kind's name in the trace and the -v lines). */
static enum MHD_Result page_start(host_inspector *in, struct MHD_Connection *c, request *r,
                                  inspect_index *ix, const inspect_page_args *a)
{
    page_job *p = ix ? calloc(1, sizeof *p) : NULL;
    if (!p) return inspect_reply_error(c, 500, "out of memory");
    p->job.kind = &page_kinds[ix->kind];
    p->ix = ix;
    ix->users++;
    p->offset = a->offset;
    p->limit = a->limit;
    p->full = a->full;
    p->paths = ix->kind == IX_NAME || ix->kind == IX_QUERY;
    p->asked_ns = host_now_ns();
    p->status = 200;
    return inspect_job_start(in, c, r, &p->job);
}

/* ---- queries ---- */

/* Parse "{transform, mesh, not debug_name}" (braces optional; "!" or "not" before a name
 * excludes it) into ix's terms: false with a message in why when a name is not a loaded
 * manager that can be queried (it offers an index), or nothing is asked for. */
static bool query_parse(host_session *hs, inspect_index *ix, const char *text, char *why,
                        size_t len)
{
    char buf[KEY_MAX], *save = NULL;
    snprintf(buf, sizeof buf, "%s", text);
    bool with = false;
    for (char *word = strtok_r(buf, "{}, \t", &save); word;
         word = strtok_r(NULL, "{}, \t", &save)) {
        bool excluded = !strcmp(word, "not");
        if (excluded && !(word = strtok_r(NULL, "{}, \t", &save)))
            return host_format(why, len, "query: 'not' before nothing"), false;
        if (*word == '!') excluded = true, word++;
        if (ix->term_count == QUERY_MAX)
            return host_format(why, len, "query: at most %u managers", QUERY_MAX), false;
        query_term *t = &ix->terms[ix->term_count++];
        snprintf(t->name, sizeof t->name, "%s", word);
        t->without = excluded;
        with = with || !excluded;
    }
    const char *gone;
    if (!with) return host_format(why, len, "query: name at least one manager to have"), false;
    if (!query_bind(hs, ix, &gone)) {
        for (uint32_t k = 0; k < ix->term_count; k++)
            if (!ix->terms[k].m || !ix->terms[k].m->index.has)
                return host_format(why, len,
                                   "query: '%s' is not a loaded manager that offers an index "
                                   "(ecs_manager_index)",
                                   ix->terms[k].name),
                       false;
    }
    return true;
}

enum MHD_Result inspect_index_page(host_inspector *in, struct MHD_Connection *c, request *r,
                                   const inspect_page_args *a)
{
    char key[KEY_MAX], why[400];
    const char *text = a->query ? a->query : a->name;
    size_t len = text ? strlen(text) : 0;
    if (len >= KEY_MAX) return inspect_reply_error(c, 400, "name, query: at most 255 bytes");
    ix_kind kind = a->query ? IX_QUERY : a->name ? IX_NAME : a->roots ? IX_ROOTS : IX_ALL;
    for (size_t i = 0; i < len; i++)
        key[i] = kind == IX_NAME ? (char)fold((unsigned char)text[i]) : text[i];
    inspect_index probe = {.kind = IX_QUERY}; /* a bad query is answered at once */
    if (kind == IX_QUERY && !query_parse(in->hs, &probe, text, why, sizeof why))
        return inspect_reply_error(c, 400, why);
    inspect_index *ix = index_for(in, kind, key, len);
    if (ix && kind == IX_QUERY && !ix->term_count)
        memcpy(ix->terms, probe.terms, sizeof probe.terms), ix->term_count = probe.term_count;
    return page_start(in, c, r, ix, a);
}

enum MHD_Result inspect_children_page(host_inspector *in, struct MHD_Connection *c, request *r,
                                      ecs_entity parent, const inspect_page_args *a)
{
    char key[32];
    inspect_id_text(parent, key, sizeof key);
    inspect_index *ix = index_for(in, IX_CHILDREN, key, strlen(key));
    if (ix) ix->parent = parent;
    return page_start(in, c, r, ix, a);
}

/* ---- destroying an entity and its descendants ---- */

typedef struct destroy_call {
    host_inspector *in;
    ecs_entity e;
    ecs_entity *ids; /* e and its descendants as the hierarchy says, before */
    uint32_t n, cap;
    bool no_memory;
} destroy_call;

static void destroy_push(destroy_call *d, ecs_entity x)
{
    if (d->n == d->cap) {
        uint32_t cap = d->cap ? d->cap * 2 : 64;
        ecs_entity *v = realloc(d->ids, cap * sizeof *v);
        if (!v) {
            d->no_memory = true;
            return;
        }
        d->ids = v, d->cap = cap;
    }
    d->ids[d->n++] = x;
}

static void call_destroy(void *arg)
{
    destroy_call *d = arg;
    host_session *hs = d->in->hs;
    const ecs_hierarchy_api *tree = tree_of(hs, NULL);
    destroy_push(d, d->e); /* breadth first: d->ids[k] for k < n is e's subtree so far */
    for (uint32_t k = 0; tree && !d->no_memory && k < d->n; k++)
        for (ecs_entity c = tree->first_child(tree->self, d->ids[k]); !ecs_entity_is_null(c);
             c = tree->next_sibling(tree->self, c))
            destroy_push(d, c);
    host_entity_destroy(hs->world->entities, d->e);
    host_world_announce_destroyed(hs->world); /* every manager hears of it: the cascade happens */
}

cJSON *inspect_destroy(host_inspector *in, ecs_entity e)
{
    destroy_call d = {in, e, NULL, 0, 0, false};
    int sig = host_guard_run(call_destroy, &d); /* a crash is the announcement's to report */
    cJSON *v = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(v, "destroyed");
    uint32_t dead = 0;
    for (uint32_t k = 0; k < d.n; k++) {
        if (host_entity_alive(in->hs->world->entities, d.ids[k]))
            continue; /* kept by its manager */
        char id[32];
        inspect_id_text(d.ids[k], id, sizeof id);
        cJSON_AddItemToArray(list, cJSON_CreateString(id));
        dead++;
    }
    cJSON_AddNumberToObject(v, "count", dead);
    if (sig) cJSON_AddStringToObject(v, "warning", "plugin code crashed meanwhile (see the log)");
    free(d.ids);
    return v;
}
