/* SPDX-License-Identifier: MIT */
/* bench_views.c: workload "views", BENCH.md V1: transform on all N = 1,000,000 entities, a
 * mesh on about half of them, a debug name on about a tenth (each entity draws two floats
 * from a second BENCH.md RNG, seeded BENCH_SEED + 1: mesh when the first is below 0.5, a
 * name when the second is below 0.1). Iterate {transform, mesh} and {transform, not
 * debug_name} in ns per matched entity:
 *
 * - view: view_init + view_next through the host table (the shortest `with` manager's
 *   dense entity list, the other managers asked through their has());
 * - view, cursor: the same entities one at a time through the SDK's ecs_view_cursor_next
 *   (inline; a view_next_many call per ECS_VIEW_CURSOR_BATCH entities);
 * - view, batches of 256: view_next_many into the caller's array;
 * - collection: collection_entities, the host's dense array kept from signatures;
 * - baseline, in the same run: a hand-written loop over the same dense entity array the
 *   view walks, the other component's membership read from one byte per entity index
 *   (built before the timing).
 *
 * Each loop sums the ids of the entities it visits; the three sums (and counts) must agree,
 * else the workload fails. A note gives the same walk calling the managers' has() directly
 * (no host in between): what the view costs beyond the managers' own lookups.
 *
 * Ours is the real transform, mesh and debug_name plugins plus bench_queries.so (which
 * keeps the two collections) loaded by the real loader, a fresh world per repetition; one
 * frame runs before the timing, so the collections are up to date.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_queries.h"
#include "debug_name_api.h"
#include "mesh_api.h"
#include "transform_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(MESH_SO) || !defined(TRANSFORM_SO) || !defined(DEBUG_NAME_SO) ||                      \
    !defined(BENCH_QUERIES_SO)
#error "the plugin paths must be defined by meson"
#endif

#define N 1000000u

typedef struct views_world {
    bench_world bw;
    host_session *s; /* its session */
    host_world *w;
    const ecs_host *h; /* bench_queries' table: the bench calls the host as that plugin */
    const bench_queries_api *queries;
    const ecs_manager_index *tf, *mesh, *dn;
    uint8_t *in_tf, *in_dn; /* a byte per entity index: the baseline's membership */
} views_world;

static void world_close(views_world *vw)
{
    bench_world_close(&vw->bw);
    free(vw->in_tf);
    free(vw->in_dn);
    memset(vw, 0, sizeof *vw);
}

/* The index the manager called name offers, or NULL. */
static const ecs_manager_index *index_of(const host_world *w, const char *name)
{
    for (size_t i = 0; i < w->manager_count; i++)
        if (strcmp(w->managers[i]->name, name) == 0 && w->managers[i]->index.has)
            return &w->managers[i]->index;
    return NULL;
}

static int world_open(views_world *vw)
{
    static const char *const paths[] = {TRANSFORM_SO, MESH_SO, DEBUG_NAME_SO, BENCH_QUERIES_SO};
    memset(vw, 0, sizeof *vw);
    if (bench_world_open(&vw->bw, "views", paths, 4, NULL) != 0) return -1;
    vw->s = vw->bw.s;
    vw->w = vw->bw.w;
    host_plugin *p = host_plugin_named(vw->s, "bench_queries");
    vw->h = p ? &p->table : NULL;
    vw->queries = host_registry_find(&vw->s->registry, BENCH_QUERIES_API_NAME, 1, NULL);
    vw->tf = index_of(vw->w, "transform");
    vw->mesh = index_of(vw->w, "mesh");
    vw->dn = index_of(vw->w, "debug_name");
    return vw->h && vw->queries && vw->tf && vw->mesh && vw->dn ? 0 : -1;
}

/* Membership bytes of a manager's entities (index -> 1). NULL when memory ran out. */
static uint8_t *members(const ecs_manager_index *ix)
{
    uint8_t *in = calloc(ECS_ENTITY_MAX_INDEX + 1, 1);
    const ecs_entity *list = NULL;
    uint32_t n = ix->entities(ix->state, &list);
    for (uint32_t i = 0; in && i < n; i++) in[ecs_entity_index(list[i])] = 1;
    return in;
}

/* Build the V1 world: N entities, transforms, meshes on ~half, names on ~a tenth; one
 * frame. 0, or -1 (said on stderr). */
static int populate(views_world *vw)
{
    host_world *w = vw->w;
    const host_registry *reg = &vw->s->registry;
    const ecs_transform_api *tf = host_registry_find(reg, ECS_TRANSFORM_API_NAME, 1, NULL);
    const ecs_mesh_api *mesh = host_registry_find(reg, ECS_MESH_API_NAME, 1, NULL);
    const ecs_debug_name_api *dn = host_registry_find(reg, ECS_DEBUG_NAME_API_NAME, 1, NULL);
    ecs_entity *e = malloc(N * sizeof *e);
    int rc = tf && mesh && dn && e ? 0 : -1;
    if (rc == 0 && host_entity_create_many(w->entities, e, N) != ECS_OK) rc = -1;
    bench_rng r = bench_rng_seeded(BENCH_SEED), pick = bench_rng_seeded(BENCH_SEED + 1);
    ecs_mesh_desc md = {"bench.mesh", NULL, true, {{-1, -1, -1}, {1, 1, 1}}};
    for (uint32_t i = 0; rc == 0 && i < N; i++) {
        float pos[3], rot[4], scl[3];
        bench_local_draw(&r, pos, rot, scl);
        ecs_transform_local l = {ecs_vec3_make(pos[0], pos[1], pos[2]),
                                 {rot[0], rot[1], rot[2], rot[3]},
                                 ecs_vec3_make(scl[0], scl[1], scl[2])};
        bool with_mesh = bench_rng_float(&pick) < 0.5f, with_name = bench_rng_float(&pick) < 0.1f;
        if (tf->add(tf->self, e[i], &l, ecs_entity_null()) != ECS_OK ||
            (with_mesh && mesh->add(mesh->self, e[i], &md, NULL) != ECS_OK) ||
            (with_name && dn->set(dn->self, e[i], "v1") != ECS_OK))
            rc = -1;
    }
    free(e);
    if (rc == 0) host_world_frame(w); /* the collections take in the changes */
    if (rc == 0 && (!(vw->in_tf = members(vw->tf)) || !(vw->in_dn = members(vw->dn)))) rc = -1;
    if (rc != 0) fprintf(stderr, "views: could not build the V1 world\n");
    return rc;
}

/* ---- the loops: each sums the ids it visits ---- */

typedef struct tally {
    uint64_t sum;
    uint32_t n;
} tally;

static tally by_view(const views_world *vw, const ecs_query_desc *q)
{
    tally t = {0, 0};
    ecs_view v;
    if (vw->h->view_init(vw->h, q, &v) != ECS_OK) return t;
    ecs_entity e;
    while (vw->h->view_next(vw->h, &v, &e)) {
        t.sum += e.id;
        t.n++;
    }
    return t;
}

/* The view one entity at a time through the SDK's cursor (ecs_view_cursor_next: batches of
 * ECS_VIEW_CURSOR_BATCH from view_next_many, handed out inline). */
static tally by_cursor(const views_world *vw, const ecs_query_desc *q)
{
    tally t = {0, 0};
    ecs_view_cursor c;
    if (ecs_view_cursor_init(vw->h, q, &c) != ECS_OK) return t;
    ecs_entity e;
    while (ecs_view_cursor_next(vw->h, &c, &e)) {
        t.sum += e.id;
        t.n++;
    }
    return t;
}

/* The view in batches of 256 (view_next_many): one call per batch. */
static tally by_view_many(const views_world *vw, const ecs_query_desc *q)
{
    tally t = {0, 0};
    ecs_view v;
    if (vw->h->view_init(vw->h, q, &v) != ECS_OK) return t;
    ecs_entity batch[256];
    uint32_t got;
    while ((got = vw->h->view_next_many(vw->h, &v, batch, 256)) > 0) {
        for (uint32_t i = 0; i < got; i++) t.sum += batch[i].id;
        t.n += got;
    }
    return t;
}

static tally by_collection(const views_world *vw, ecs_collection c)
{
    tally t = {0, 0};
    const ecs_entity *list = NULL;
    t.n = vw->h->collection_entities(vw->h, c, &list);
    for (uint32_t i = 0; i < t.n; i++) t.sum += list[i].id;
    return t;
}

/* The baseline: list's entities whose byte in `in` equals want. */
static tally by_hand(const ecs_manager_index *list_of, const uint8_t *in, uint8_t want)
{
    tally t = {0, 0};
    const ecs_entity *list = NULL;
    uint32_t n = list_of->entities(list_of->state, &list);
    for (uint32_t i = 0; i < n; i++) {
        if (in[ecs_entity_index(list[i])] != want) continue;
        t.sum += list[i].id;
        t.n++;
    }
    return t;
}

/* The note: the same walk, the managers' has() called directly. */
static tally by_has(const ecs_manager_index *list_of, const ecs_manager_index *ix, bool want)
{
    tally t = {0, 0};
    const ecs_entity *list = NULL;
    uint32_t n = list_of->entities(list_of->state, &list);
    for (uint32_t i = 0; i < n; i++) {
        if (ix->has(ix->state, list[i]) != want) continue;
        t.sum += list[i].id;
        t.n++;
    }
    return t;
}

/* ---- one query ---- */

typedef struct v1_query {
    const char *name;
    ecs_query_desc desc;
    bool with_mesh; /* {transform, mesh}, else {transform, not debug_name} */
} v1_query;

typedef enum { VIEW, VIEW_CURSOR, VIEW_MANY, COLLECTION, HAND, HAS, WAYS } way;

/* One pass of each way; ns per matched entity into ns[]. False when they disagree. */
static bool pass(const views_world *vw, const v1_query *q, double ns[WAYS], tally *out)
{
    tally t[WAYS];
    ecs_collection c = q->with_mesh ? vw->queries->with_mesh : vw->queries->without_name;
    const ecs_manager_index *list = q->with_mesh ? vw->mesh : vw->tf;
    const ecs_manager_index *other = q->with_mesh ? vw->tf : vw->dn;
    const uint8_t *in = q->with_mesh ? vw->in_tf : vw->in_dn;
    for (int k = 0; k < WAYS; k++) {
        uint64_t t0 = bench_now_ns();
        t[k] = k == VIEW          ? by_view(vw, &q->desc)
               : k == VIEW_CURSOR ? by_cursor(vw, &q->desc)
               : k == VIEW_MANY   ? by_view_many(vw, &q->desc)
               : k == COLLECTION  ? by_collection(vw, c)
               : k == HAND        ? by_hand(list, in, q->with_mesh)
                                  : by_has(list, other, q->with_mesh);
        ns[k] = (double)(bench_now_ns() - t0) / (t[k].n ? t[k].n : 1);
    }
    *out = t[HAND];
    for (int k = 0; k < WAYS; k++)
        if (t[k].sum != t[HAND].sum || t[k].n != t[HAND].n || t[k].n == 0) return false;
    return true;
}

static int run_query(const bench_config *cfg, const v1_query *q)
{
    double samples[WAYS][BENCH_MAX_REPS];
    tally last = {0, 0};
    for (int r = 0; r < cfg->reps; r++) {
        views_world vw;
        if (world_open(&vw) != 0 || populate(&vw) != 0) {
            world_close(&vw);
            return 1;
        }
        double per[WAYS][BENCH_PASSES];
        for (int p = 0; p < BENCH_PASSES; p++) {
            double ns[WAYS];
            if (!pass(&vw, q, ns, &last)) {
                fprintf(stderr, "views: %s: view, collection and loops disagree\n", q->name);
                world_close(&vw);
                return 1;
            }
            for (int k = 0; k < WAYS; k++) per[k][p] = ns[k];
        }
        for (int k = 0; k < WAYS; k++) samples[k][r] = bench_stats_of(per[k], BENCH_PASSES).median;
        world_close(&vw);
    }
    bench_stats st[WAYS];
    for (int k = 0; k < WAYS; k++) st[k] = bench_stats_of(samples[k], (size_t)cfg->reps);
    static char note[2][256];
    char *n = note[q->with_mesh];
    snprintf(n, sizeof note[0],
             "%u matched; the same walk calling the managers' has() directly: %.2f ns/entity",
             last.n, st[HAS].median);
    static const char *const way_name[] = {"view", "view, cursor (one at a time)",
                                           "view, batches of 256", "collection"};
    for (int k = VIEW; k <= COLLECTION; k++) {
        char name[96];
        snprintf(name, sizeof name, "%s, %s", q->name, way_name[k]);
        bench_row row = {"V1",  name,     "ns/matched", "hand-written loop", BENCH_PASSES,
                         st[k], st[HAND], last.sum,     k == VIEW ? n : NULL};
        bench_report(cfg, "views", &row);
    }
    return 0;
}

static int run(const bench_config *cfg)
{
    static const char *const tm[] = {"transform", "mesh", NULL}, *const t[] = {"transform", NULL},
                             *const dn[] = {"debug_name", NULL};
    const v1_query queries[] = {
        {"{transform, mesh}", {sizeof(ecs_query_desc), tm, NULL}, true},
        {"{transform, not debug_name}", {sizeof(ecs_query_desc), t, dn}, false},
    };
    bench_begin(cfg, "views",
                "V1: iterate {transform, mesh} and {transform, not debug_name} over 1,000,000 "
                "entities, by view and by collection, beside a hand-written loop");
    int rc = 0;
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++)
        rc |= run_query(cfg, &queries[i]);
    return rc;
}

const bench_workload bench_views_workload = {
    "views", "V1: views and collections, {transform, mesh} and {transform, not debug_name}", run};
