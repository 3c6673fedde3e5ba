/* SPDX-License-Identifier: MIT */
/* test_views.c: views, collections and systems (seeds 002-004) in an in-process world
 * loaded through the real loader: the real transform, mesh and debug_name plugins and the
 * test plugin vprobe (tests/plugins_views/), configured by its manifest entry.
 *
 * What it proves: views and collections equal a brute-force reference (every live entity,
 * asked through the managers' own APIs) after random add/remove/destroy sequences with
 * fixed seeds, every frame, also with 70 managers (two signature words); a collection is
 * stable during a frame and changes at the start of the next; managers and systems run in
 * registration order with higher weights first and ties stable, in --stats too; a
 * collection survives its manager's unload and load; systems survive a hot reload in place;
 * --safe catches a crashing system; bad calls are refused with a line naming the plugin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debug_name_api.h"
#include "guard.h"
#include "harness.h"
#include "mesh_api.h"
#include "reload.h"
#include "scene.h"
#include "transform_api.h"
#include "vprobe_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(TRANSFORM_SO) || !defined(MESH_SO) || !defined(DEBUG_NAME_SO) ||                      \
    !defined(VPROBE_SO) || !defined(VPROBE_V2_SO) || !defined(VPROBE_USER_SO)
#error "the plugin paths must be defined by meson"
#endif

#define MAX_IDS  4096
#define MAX_TERM 12

/* ---- a world over a folder of plugin links and a manifest ---- */

typedef struct vworld {
    host_session *s; /* its session */
    host_world *w;
    char *dir;
    host_reloader *reloader;
    host_plugin *probe; /* the plugin named "vprobe" */
    const ecs_host *h;  /* its table: how the test calls the host like a plugin */
    const vprobe_api *vp;
    const ecs_transform_api *tf;
    const ecs_mesh_api *mesh;
    const ecs_debug_name_api *dn;
} vworld;

/* Link each of paths[] into a new folder (as name[i] when names is given), write manifest,
 * load it (through a reloader when reload is set). Plugins skipped as bad are allowed: the
 * test looks at them. */
static void vworld_open(vworld *v, const char *const *paths, const char *const *names,
                        const char *manifest, bool reload)
{
    memset(v, 0, sizeof *v);
    v->dir = harness_make_tmpdir("ecs-views");
    assert_non_null(v->dir);
    for (size_t i = 0; paths[i]; i++) {
        const char *base = names ? names[i] : strrchr(paths[i], '/') + 1;
        char *link = harness_join(v->dir, base);
        assert_int_equal(
            reload ? harness_copy_file(paths[i], link, 0755) : harness_symlink(paths[i], link), 0);
        free(link);
    }
    char *mf = harness_join(v->dir, "manifest.json");
    assert_int_equal(harness_write_file(mf, manifest, 0644), 0);
    free(mf);
    v->s = host_session_new();
    v->w = v->s ? v->s->world : NULL;
    assert_non_null(v->w);
    if (reload) {
        host_reload_options ro = {true, 20000000u, 5000000u, false}; /* poll, 20 ms quiet */
        v->reloader = host_reloader_new(v->s, (const char *const[]){v->dir}, 1, &ro);
        assert_non_null(v->reloader);
    }
    host_load_options lo = {0};
    assert_int_equal(host_load_dir(v->s, v->dir, &lo), ECS_OK);
    v->probe = host_plugin_named(v->s, "vprobe");
    v->h = v->probe ? &v->probe->table : NULL;
    v->vp = host_registry_find(&v->s->registry, VPROBE_API_NAME, 1, NULL);
    v->tf = host_registry_find(&v->s->registry, ECS_TRANSFORM_API_NAME, 1, NULL);
    v->mesh = host_registry_find(&v->s->registry, ECS_MESH_API_NAME, 1, NULL);
    v->dn = host_registry_find(&v->s->registry, ECS_DEBUG_NAME_API_NAME, 1, NULL);
}

static void vworld_close(vworld *v)
{
    host_reloader_free(v->reloader);
    host_session_free(v->s);
    if (v->dir) harness_remove_tree(v->dir);
    free(v->dir);
    memset(v, 0, sizeof *v);
}

static const char *const real_plugins[] = {TRANSFORM_SO, MESH_SO, DEBUG_NAME_SO, VPROBE_SO, NULL};

/* A manifest loading the real plugins first, then vprobe with `config`. */
static char *manifest_with(const char *config)
{
    static char buf[16384];
    snprintf(buf, sizeof buf,
             "{\"plugins\": [{\"name\": \"transform\"}, {\"name\": \"debug_name\"}, {\"name\": "
             "\"mesh\"}, {\"name\": \"vprobe\", \"config\": %s}]}\n",
             config);
    return buf;
}

/* ---- capturing the log (stderr) ---- */

typedef struct capture {
    int saved;
    char path[64];
} capture;

static void capture_begin(capture *c)
{
    fflush(stderr);
    snprintf(c->path, sizeof c->path, "/tmp/ecs-views-log-XXXXXX");
    int fd = mkstemp(c->path);
    assert_true(fd >= 0);
    c->saved = dup(2);
    assert_true(c->saved >= 0);
    assert_true(dup2(fd, 2) >= 0);
    close(fd);
}

/* The text logged since capture_begin (free it), also copied to stderr. */
static char *capture_end(capture *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    char *text = harness_read_file(c->path, NULL);
    unlink(c->path);
    assert_non_null(text);
    fprintf(stderr, "%s", text);
    return text;
}

#define EXPECT_LOGGED(text, needle)                                                                \
    do {                                                                                           \
        if (!strstr((text), (needle))) fail_msg("log has no '%s':\n%s", (needle), (text));         \
    } while (0)

/* ---- queries and the brute-force reference ---- */

typedef struct query {
    const char *with[MAX_TERM], *without[MAX_TERM]; /* NULL-terminated */
} query;

/* Does e have the component of the manager called name? Asked through the manager's own
 * API, never through the host. */
static bool has_component(const vworld *v, const char *name, ecs_entity e)
{
    if (strcmp(name, "transform") == 0) return v->tf->has(v->tf->self, e);
    if (strcmp(name, "mesh") == 0) return v->mesh->count_of(v->mesh->self, e) > 0;
    if (strcmp(name, "debug_name") == 0) return v->dn->get(v->dn->self, e) != NULL;
    assert_true(name[0] == 'c');
    return v->vp->has(v->vp->self, (uint32_t)atoi(name + 1), e);
}

static bool matches(const vworld *v, const query *q, ecs_entity e)
{
    if (!host_entity_alive(v->w->entities, e)) return false;
    for (const char *const *n = q->with; *n; n++)
        if (!has_component(v, *n, e)) return false;
    for (const char *const *n = q->without; *n; n++)
        if (has_component(v, *n, e)) return false;
    return true;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The ids of the live entities of list[0..n) that match q, sorted, into out. */
static uint32_t reference(const vworld *v, const query *q, const ecs_entity *list, uint32_t n,
                          uint32_t *out)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (matches(v, q, list[i])) out[m++] = list[i].id;
    qsort(out, m, sizeof *out, cmp_u32);
    return m;
}

/* Fail unless got[0..ng) holds exactly the ids want[0..nw) (sorted), each once. */
static void expect_set(const char *what, uint32_t seed, uint64_t frame, const uint32_t *want,
                       uint32_t nw, const ecs_entity *got, uint32_t ng)
{
    static uint32_t ids[MAX_IDS];
    assert_true(ng <= MAX_IDS);
    for (uint32_t i = 0; i < ng; i++) ids[i] = got[i].id;
    qsort(ids, ng, sizeof *ids, cmp_u32);
    uint32_t i = 0;
    while (i < nw && i < ng && want[i] == ids[i]) i++;
    if (i == nw && i == ng) return;
    fail_msg("%s (seed %u, frame %llu): %u entities, expected %u; first difference at %u: "
             "got id %u, expected %u",
             what, seed, (unsigned long long)frame, ng, nw, i, i < ng ? ids[i] : 0,
             i < nw ? want[i] : 0);
}

static ecs_query_desc desc_of(const query *q)
{
    ecs_query_desc d = {sizeof d, q->with, q->without[0] ? q->without : NULL};
    return d;
}

/* Every entity of a view of q, in visiting order, into out: walked with view_next, and
 * again with view_next_many in batches of 1, 3, 64 and 256 (eight at a time inside), which must
 * give the same sequence. */
static uint32_t view_list(const vworld *v, const query *q, ecs_entity *out)
{
    static ecs_entity again[MAX_IDS];
    ecs_query_desc d = desc_of(q);
    ecs_view view;
    assert_int_equal(v->h->view_init(v->h, &d, &view), ECS_OK);
    uint32_t n = 0;
    ecs_entity e;
    while (v->h->view_next(v->h, &view, &e)) {
        assert_true(n < MAX_IDS);
        out[n++] = e;
    }
    static const uint32_t batches[] = {1, 3, 64, 256};
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
        assert_int_equal(v->h->view_init(v->h, &d, &view), ECS_OK);
        uint32_t m = 0, got;
        while ((got = v->h->view_next_many(v->h, &view, again + m, batches[b])) > 0) {
            assert_true(got <= batches[b]);
            m += got;
            assert_true(m + batches[b] <= MAX_IDS);
        }
        assert_int_equal(m, n);
        for (uint32_t i = 0; i < n; i++) assert_int_equal(again[i].id, out[i].id);
    }
    /* the SDK's cursor, one at a time from batches; then on a host without view_next_many */
    uint32_t (*many)(const ecs_host *, ecs_view *, ecs_entity *, uint32_t) =
        v->probe->table.view_next_many;
    for (int fallback = 0; fallback < 2; fallback++) {
        static ecs_view_cursor c;
        v->probe->table.view_next_many = fallback ? NULL : many;
        assert_int_equal(ecs_view_cursor_init(v->h, &d, &c), ECS_OK);
        uint32_t m = 0;
        while (ecs_view_cursor_next(v->h, &c, &e)) {
            assert_true(m < n);
            assert_int_equal(e.id, out[m++].id);
        }
        assert_int_equal(m, n);
        assert_false(ecs_view_cursor_next(v->h, &c, &e)); /* and stays at its end */
    }
    v->probe->table.view_next_many = many;
    return n;
}

/* Check every query against the reference: what each system saw in the frame just run
 * and its collection (as of that frame's start) against before[]; a view now against the
 * live entities now. */
static void check_all(const vworld *v, const query *qs, uint32_t nq, uint32_t seed,
                      uint32_t *const before[], const uint32_t *nbefore, const ecs_entity *live,
                      uint32_t nlive)
{
    static uint32_t now[MAX_IDS];
    static ecs_entity got[MAX_IDS];
    uint64_t frame = v->w->frame.frame - 1;
    for (uint32_t k = 0; k < nq; k++) {
        const ecs_entity *seen = NULL, *coll = NULL;
        uint64_t seen_frame = 0;
        uint32_t ns = v->vp->seen(v->vp->self, k, &seen, &seen_frame);
        assert_int_equal(seen_frame, frame);
        expect_set("system run", seed, frame, before[k], nbefore[k], seen, ns);
        uint32_t nc = v->h->collection_entities(v->h, v->vp->collection(v->vp->self, k), &coll);
        expect_set("collection", seed, frame, before[k], nbefore[k], coll, nc);
        uint32_t nn = reference(v, &qs[k], live, nlive, now);
        uint32_t nv = view_list(v, &qs[k], got);
        expect_set("view", seed, frame, now, nn, got, nv);
    }
}

/* ---- random changes ---- */

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t below(rng *r, uint32_t n)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return (uint32_t)((((x * 0x2545F4914F6CDD1Dull) >> 32) * n) >> 32);
}

typedef struct pool {
    ecs_entity e[MAX_IDS];
    uint32_t n;
} pool;

static void pool_prune(const vworld *v, pool *p)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < p->n; i++)
        if (host_entity_alive(v->w->entities, p->e[i])) p->e[kept++] = p->e[i];
    p->n = kept;
}

static void pool_create(const vworld *v, pool *p, uint32_t cap)
{
    if (p->n >= cap) return;
    assert_int_equal(host_entity_create(v->w->entities, &p->e[p->n]), ECS_OK);
    p->n++;
}

static void pool_destroy(const vworld *v, pool *p, uint32_t i)
{
    assert_int_equal(host_entity_destroy(v->w->entities, p->e[i]), ECS_OK);
    p->e[i] = p->e[--p->n];
}

/* One random change to the real plugins' components of a random live entity. */
static void real_change(const vworld *v, pool *p, rng *r)
{
    uint32_t op = below(r, 100);
    if (op < 10 || p->n == 0) {
        pool_create(v, p, 1500);
        return;
    }
    uint32_t i = below(r, p->n);
    ecs_entity e = p->e[i];
    if (op < 17) {
        pool_destroy(v, p, i);
        return;
    }
    if (op < 35 && !v->tf->has(v->tf->self, e)) {
        ecs_entity parent = p->e[below(r, p->n)];
        if (below(r, 3) || ecs_entity_eq(parent, e) || !v->tf->has(v->tf->self, parent))
            parent = ecs_entity_null();
        assert_int_equal(v->tf->add(v->tf->self, e, NULL, parent), ECS_OK);
    } else if (op < 43) {
        if (v->tf->has(v->tf->self, e)) assert_int_equal(v->tf->remove(v->tf->self, e), ECS_OK);
    } else if (op < 58) {
        ecs_mesh_desc d = {"m.mesh", NULL, true, {{0, 0, 0}, {1, 1, 1}}};
        assert_int_equal(v->mesh->add(v->mesh->self, e, &d, NULL), ECS_OK);
    } else if (op < 64) {
        assert_int_equal(v->mesh->remove_all(v->mesh->self, e), ECS_OK);
    } else if (op < 72) {
        if (v->mesh->count_of(v->mesh->self, e) > 0) /* the first: maybe not the last one */
            assert_int_equal(v->mesh->remove(v->mesh->self, e, 0), ECS_OK);
    } else if (op < 87) {
        assert_int_equal(v->dn->set(v->dn->self, e, below(r, 2) ? "a" : "b"), ECS_OK);
    } else {
        v->dn->clear(v->dn->self, e);
    }
}

static const query real_queries[] = {
    {{"transform", "mesh", NULL}, {NULL}},
    {{"transform", NULL}, {"debug_name", NULL}},
    {{"mesh", "debug_name", NULL}, {NULL}},
    {{"debug_name", NULL}, {"mesh", "transform", NULL}},
    {{"mesh", "transform", "debug_name", NULL}, {NULL}},
};
#define REAL_QUERIES (sizeof real_queries / sizeof real_queries[0])

static const char real_config[] =
    "{\"items\": ["
    "{\"system\": \"q0\", \"with\": [\"transform\", \"mesh\"]},"
    "{\"system\": \"q1\", \"with\": [\"transform\"], \"without\": [\"debug_name\"]},"
    "{\"system\": \"q2\", \"with\": [\"mesh\", \"debug_name\"]},"
    "{\"system\": \"q3\", \"with\": [\"debug_name\"], \"without\": [\"mesh\", \"transform\"]},"
    "{\"system\": \"q4\", \"with\": [\"mesh\", \"transform\", \"debug_name\"]}]}";

/* Run frames of random changes; after each, check every query. */
static void run_random(vworld *v, const query *qs, uint32_t nq, uint32_t seed, int frames,
                       int changes, void (*change)(const vworld *, pool *, rng *))
{
    static pool p;
    static uint32_t before_ids[16][MAX_IDS];
    uint32_t *before[16], nbefore[16];
    assert_true(nq <= 16);
    for (uint32_t k = 0; k < nq; k++) before[k] = before_ids[k];
    uint64_t total[16] = {0};
    rng r = {0x9E3779B97F4A7C15ull ^ seed};
    p.n = 0;
    for (int f = 0; f < frames; f++) {
        for (int c = 0; c < changes; c++) change(v, &p, &r);
        for (uint32_t k = 0; k < nq; k++) {
            nbefore[k] = reference(v, &qs[k], p.e, p.n, before[k]);
            total[k] += nbefore[k];
        }
        host_world_frame(v->w);
        pool_prune(v, &p); /* children of destroyed parents died in the announcement */
        check_all(v, qs, nq, seed, before, nbefore, p.e, p.n);
    }
    for (uint32_t k = 0; k < nq; k++) /* the data must exercise every query */
        if (total[k] < (uint64_t)frames * 2)
            fail_msg("seed %u: query %u matched only %llu entities over %d frames", seed, k,
                     (unsigned long long)total[k], frames);
}

static void Views_and_collections_match_brute_force_over_random_changes(void **state)
{
    (void)state;
    static const uint32_t seeds[] = {1, 2, 3, 20261121};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        vworld v;
        vworld_open(&v, real_plugins, NULL, manifest_with(real_config), false);
        assert_int_equal(v.s->bad_plugins, 0);
        assert_non_null(v.vp);
        run_random(&v, real_queries, REAL_QUERIES, seeds[s], 40, 60, real_change);
        vworld_close(&v);
    }
}

/* ---- more than 64 managers ---- */

static void many_change(const vworld *v, pool *p, rng *r)
{
    static const uint32_t hot[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 64, 65, 66, 67, 68, 69};
    uint32_t op = below(r, 100);
    if (op < 5 || p->n == 0) {
        pool_create(v, p, 200);
        return;
    }
    uint32_t i = below(r, p->n);
    ecs_entity e = p->e[i];
    uint32_t k = below(r, 4) ? hot[below(r, 16)] : below(r, 70);
    if (op < 9) {
        pool_destroy(v, p, i);
        return;
    }
    if (op < 13)
        for (uint32_t j = 1; j <= 9; j++) v->vp->add(v->vp->self, j, e); /* all of q2 */
    else if (op < 75)
        assert_int_equal(v->vp->add(v->vp->self, k, e), ECS_OK);
    else
        v->vp->remove(v->vp->self, k, e);
}

static void Collections_and_views_work_with_more_than_64_managers(void **state)
{
    (void)state;
    static const query qs[] = {
        {{"c0", "c69", NULL}, {NULL}},
        {{"c65", NULL}, {"c30", "c64", NULL}},
        {{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", NULL}, {NULL}}, /* 8 checks */
        {{"c66", NULL}, {"c10", "c11", "c12", "c13", "c14", "c15", "c16", "c17", NULL}},
    };
    const char *config =
        "{\"managers\": 70, \"items\": ["
        "{\"system\": \"q0\", \"with\": [\"c0\", \"c69\"]},"
        "{\"system\": \"q1\", \"with\": [\"c65\"], \"without\": [\"c30\", \"c64\"]},"
        "{\"system\": \"q2\", \"with\": [\"c1\", \"c2\", \"c3\", \"c4\", \"c5\", "
        "\"c6\", \"c7\", \"c8\", \"c9\"]},"
        "{\"system\": \"q3\", \"with\": [\"c66\"], \"without\": [\"c10\", "
        "\"c11\", \"c12\", \"c13\", \"c14\", \"c15\", \"c16\", \"c17\"]}]}";
    char sig_config[1024]; /* the same managers saying they report their bits: views test them */
    snprintf(sig_config, sizeof sig_config, "{\"signature\": true, %s", config + 1);
    for (uint32_t seed = 5; seed < 9; seed++) {
        vworld v;
        vworld_open(&v, (const char *const[]){VPROBE_SO, NULL}, NULL,
                    manifest_with(seed < 7 ? config : sig_config), false);
        assert_non_null(v.vp);
        assert_int_equal(v.vp->manager_count(v.vp->self), 70);
        assert_true(v.w->sig.name_count >= 70); /* bits 64..69: past one 64-bit word */
        run_random(&v, qs, 4, seed, 30, 300, many_change);
        vworld_close(&v);
    }
}

/* ---- a collection during a frame ---- */

static void Collection_is_stable_during_a_frame_and_changes_at_the_next(void **state)
{
    (void)state;
    /* a (weight 2) sees, b (weight 1) takes c0 from all and destroys one, c (0) sees */
    const char *config = "{\"managers\": 1, \"items\": ["
                         "{\"system\": \"c\", \"with\": [\"c0\"]},"
                         "{\"system\": \"b\", \"with\": [\"c0\"], \"weight\": 1, \"mode\": "
                         "\"mutate\"},"
                         "{\"system\": \"a\", \"with\": [\"c0\"], \"weight\": 2}]}";
    vworld v;
    vworld_open(&v, (const char *const[]){VPROBE_SO, NULL}, NULL, manifest_with(config), false);
    ecs_entity e[10];
    assert_int_equal(host_entity_create_many(v.w->entities, e, 10), ECS_OK);
    for (int i = 0; i < 10; i++) assert_int_equal(v.vp->add(v.vp->self, 0, e[i]), ECS_OK);
    const ecs_entity *list;
    assert_int_equal(v.h->collection_entities(v.h, v.vp->collection(v.vp->self, 0), &list), 0);
    host_world_frame(v.w); /* the adds show from this frame's start */
    const ecs_entity *sa, *sc;
    assert_int_equal(v.vp->seen(v.vp->self, 2, &sa, NULL), 10);
    assert_int_equal(v.vp->seen(v.vp->self, 0, &sc, NULL), 10);
    assert_memory_equal(sa, sc, 10 * sizeof *sa);            /* the same list, in the same order */
    assert_int_equal(v.vp->has(v.vp->self, 0, e[5]), false); /* b took them */
    assert_int_equal(v.h->collection_entities(v.h, v.vp->collection(v.vp->self, 0), &list), 10);
    host_world_frame(v.w);
    assert_int_equal(v.vp->seen(v.vp->self, 2, &sa, NULL), 0);
    assert_int_equal(v.h->collection_entities(v.h, v.vp->collection(v.vp->self, 0), &list), 0);
    /* the three systems share one collection: the same query gives the same one */
    assert_int_equal(v.vp->collection(v.vp->self, 0), v.vp->collection(v.vp->self, 1));
    assert_int_equal(v.vp->collection(v.vp->self, 0), v.vp->collection(v.vp->self, 2));
    vworld_close(&v);
}

/* An entity destroyed during a frame leaves its collections at the next frame's start, even
 * when no manager reports the loss of its components: the host clears its bits itself. */
static void Destroyed_entity_leaves_collections_without_manager_reports(void **state)
{
    (void)state;
    const char *config = "{\"managers\": 1, \"quiet_destroy\": true, \"items\": ["
                         "{\"system\": \"d\", \"with\": [\"c0\"], \"mode\": \"destroy\"}]}";
    vworld v;
    vworld_open(&v, (const char *const[]){VPROBE_SO, NULL}, NULL, manifest_with(config), false);
    ecs_entity e[4];
    assert_int_equal(host_entity_create_many(v.w->entities, e, 4), ECS_OK);
    for (int i = 0; i < 4; i++) assert_int_equal(v.vp->add(v.vp->self, 0, e[i]), ECS_OK);
    const ecs_entity *seen;
    for (uint32_t left = 4; left > 0; left--) { /* each frame destroys the first it sees */
        host_world_frame(v.w);
        assert_int_equal(v.vp->seen(v.vp->self, 0, &seen, NULL), left);
        assert_false(host_entity_alive(v.w->entities, seen[0])); /* it destroyed that one */
        for (uint32_t k = 1; k < left; k++) assert_true(host_entity_alive(v.w->entities, seen[k]));
    }
    host_world_frame(v.w);
    assert_int_equal(v.vp->seen(v.vp->self, 0, &seen, NULL), 0);
    vworld_close(&v);
}

/* ---- order ---- */

/* The events as text: "s1 s3 m0 ..." (manager m<index>, system s<index>). */
static const char *events_text(const vworld *v)
{
    static char buf[4096];
    const vprobe_event *ev;
    uint32_t n = v->vp->events(v->vp->self, &ev);
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n && len < sizeof buf - 16; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%c%u", i ? " " : "", ev[i].kind,
                                ev[i].index);
    return buf;
}

static const char order_config[] = "{\"items\": ["
                                   "{\"manager\": \"a\"},"
                                   "{\"system\": \"s0\", \"with\": [\"a\"]},"
                                   "{\"manager\": \"b\"},"
                                   "{\"system\": \"s1\", \"with\": [\"a\"], \"weight\": 3},"
                                   "{\"system\": \"s2\", \"with\": [\"b\"]},"
                                   "{\"system\": \"s3\", \"with\": [\"b\"], \"weight\": 3},"
                                   "{\"system\": \"s4\", \"with\": [\"a\"], \"weight\": -2},"
                                   "{\"manager\": \"c\"}]}";

static void Systems_run_in_registration_order_higher_weight_first_ties_stable(void **state)
{
    (void)state;
    vworld v;
    vworld_open(&v, (const char *const[]){VPROBE_SO, NULL}, NULL, manifest_with(order_config),
                false);
    assert_non_null(v.vp);
    char *trace = harness_join(v.dir, "trace.json");
    assert_int_equal(host_session_trace_open(v.s, trace), ECS_OK);
    host_world_frame(v.w);
    host_world_frame(v.w);
    host_session_trace_close(v.s);
    const char *want = "s1 s3 m0 s0 m1 s2 m2 s4 s1 s3 m0 s0 m1 s2 m2 s4";
    if (strcmp(events_text(&v), want) != 0)
        fail_msg("ran '%s', expected '%s'", events_text(&v), want);

    char *text = harness_read_file(trace, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"name\":\"s3\",\"cat\":\"system\""));
    assert_non_null(strstr(text, "\"name\":\"b\",\"cat\":\"update\""));
    free(text);
    free(trace);

    char *stats = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&stats, &len);
    assert_non_null(out);
    host_world_print_stats(v.w, out);
    fclose(out);
    static const char *const rows[] = {"s1 ", "s3 ", "a ", "s0 ", "b ", "s2 ", "c ", "s4 "};
    const char *at = stats;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char row[32];
        snprintf(row, sizeof row, "\n%s", rows[i]);
        const char *found = strstr(at, row);
        if (!found) fail_msg("--stats: no row '%s' after the previous one:\n%s", rows[i], stats);
        const char *eol = strchr(found + 1, '\n');
        bool system = rows[i][0] == 's';
        const char *kind = system ? "  system\n" : "  manager\n";
        if (!eol || strncmp(eol - strlen(kind) + 1, kind, strlen(kind)) != 0)
            fail_msg("--stats row '%s' is not marked '%s':\n%s", rows[i], kind + 2, stats);
        at = found + 1;
    }
    free(stats);
    vworld_close(&v);
}

/* ---- a collection across its manager's unload ---- */

static void Collection_keeps_working_when_its_manager_is_unloaded_and_loaded(void **state)
{
    (void)state;
    const char *manifest = "{\"plugins\": [{\"name\": \"vprobe\", \"config\": {\"managers\": 1}},"
                           "{\"name\": \"vprobe_user\", \"config\": {\"items\": ["
                           "{\"system\": \"u\", \"with\": [\"c0\"]}]}}]}\n";
    vworld v;
    vworld_open(&v, (const char *const[]){VPROBE_SO, VPROBE_USER_SO, NULL}, NULL, manifest, false);
    host_plugin *user = host_plugin_named(v.s, "vprobe_user");
    assert_non_null(user);
    const vprobe_api *u = host_registry_find(&v.s->registry, "test.vprobe_user", 1, NULL);
    assert_non_null(u);
    ecs_entity e[5];
    assert_int_equal(host_entity_create_many(v.w->entities, e, 5), ECS_OK);
    for (int i = 0; i < 5; i++) assert_int_equal(v.vp->add(v.vp->self, 0, e[i]), ECS_OK);
    host_world_frame(v.w);
    const ecs_entity *seen;
    ecs_collection c = u->collection(u->self, 0);
    assert_int_equal(u->seen(u->self, 0, &seen, NULL), 5);

    /* the manager goes (its file deleted: its components kept as JSON), then comes back */
    assert_true(host_scene_keep_owner(v.s->scene, v.probe));
    host_plugin_unload(v.s, v.probe, ECS_UNLOAD_SHUTDOWN);
    host_world_frame(v.w);
    assert_int_equal(u->seen(u->self, 0, &seen, NULL), 0); /* nobody has c0 now */
    assert_int_equal(host_plugin_load(v.s, v.probe), ECS_OK);
    host_manager *mgrs[1] = {NULL};
    for (size_t i = 0; i < v.w->manager_count; i++)
        if (v.w->managers[i]->owner == v.probe) mgrs[0] = v.w->managers[i];
    assert_non_null(mgrs[0]);
    assert_int_equal(host_scene_restore_kept(v.s->scene, mgrs, 1), ECS_OK);
    host_world_frame(v.w);
    assert_int_equal(u->seen(u->self, 0, &seen, NULL), 5);
    assert_int_equal(u->collection(u->self, 0), c); /* the same handle all along */
    const ecs_entity *list;
    assert_int_equal(user->table.collection_entities(&user->table, c, &list), 5);
    /* and a component added by the new load shows the next frame */
    ecs_entity more;
    assert_int_equal(host_entity_create(v.w->entities, &more), ECS_OK);
    const vprobe_api *vp = host_registry_find(&v.s->registry, VPROBE_API_NAME, 1, NULL);
    assert_int_equal(vp->add(vp->self, 0, more), ECS_OK);
    host_world_frame(v.w);
    assert_int_equal(u->seen(u->self, 0, &seen, NULL), 6);
    vworld_close(&v);
}

/* ---- hot reload ---- */

static void Systems_are_replaced_in_place_by_a_hot_reload(void **state)
{
    (void)state;
    const char *config = "{\"managers\": 1, \"items\": ["
                         "{\"system\": \"s0\", \"with\": [\"c0\"]},"
                         "{\"system\": \"s1\", \"with\": [\"c0\"], \"weight\": 1}]}";
    vworld v;
    vworld_open(&v, (const char *const[]){VPROBE_SO, NULL}, (const char *const[]){"vprobe.so"},
                manifest_with(config), true);
    assert_non_null(v.vp);
    assert_int_equal(v.vp->tag, 1);
    ecs_entity e[3];
    assert_int_equal(host_entity_create_many(v.w->entities, e, 3), ECS_OK);
    for (int i = 0; i < 3; i++) assert_int_equal(v.vp->add(v.vp->self, 0, e[i]), ECS_OK);
    for (int i = 0; i < 3; i++) host_world_frame(v.w);
    assert_int_equal(v.w->system_count, 2);
    host_system *s0 = v.w->systems[0], *s1 = v.w->systems[1];
    host_step first = v.w->sched.steps[0];
    uint64_t runs = s0->timing.count;
    ecs_collection c = s0->collection;

    char *target = harness_join(v.dir, "vprobe.so");
    assert_int_equal(harness_copy_file(VPROBE_V2_SO, target, 0755), 0);
    free(target);
    unsigned done = 0, failed = 0;
    for (int i = 0; i < 400 && done == 0; i++) { /* up to 2 s */
        usleep(5000);
        host_reloader_poll(v.reloader);
        host_world_frame(v.w);
        host_reloader_counts(v.reloader, &done, &failed);
    }
    assert_int_equal(failed, 0);
    assert_int_equal(done, 1);
    assert_int_equal(v.vp->tag, 2); /* the host's copy of the API was rewritten in place */
    assert_int_equal(v.w->system_count, 2);
    assert_ptr_equal(v.w->systems[0], s0); /* same records, same places, timings go on */
    assert_ptr_equal(v.w->systems[1], s1);
    assert_ptr_equal(v.w->sched.steps[0].s, first.s);
    for (uint32_t i = 0; i < v.w->timing.time_every;
         i++) /* steps are timed on one frame in these */
        host_world_frame(v.w);
    assert_true(s0->timing.count > runs);
    assert_int_equal(s0->collection, c);
    v.vp->clear_events(v.vp->self);
    host_world_frame(v.w);
    const vprobe_event *ev;
    uint32_t n = v.vp->events(v.vp->self, &ev);
    assert_int_equal(n, 3); /* s1 (weight 1), c0's update, s0 */
    for (uint32_t i = 0; i < n; i++) assert_int_equal(ev[i].tag, 2); /* the new code ran */
    assert_string_equal(events_text(&v), "s1 m0 s0");
    const ecs_entity *seen;
    assert_int_equal(v.vp->seen(v.vp->self, 0, &seen, NULL), 3); /* the state was kept */
    vworld_close(&v);
}

/* ---- --safe ---- */

/* The committed manager called name, or NULL. */
static host_manager *manager_called(const host_world *w, const char *name)
{
    for (size_t i = 0; i < w->manager_count; i++)
        if (strcmp(w->managers[i]->name, name) == 0) return w->managers[i];
    return NULL;
}

static void Safe_mode_catches_a_crashing_system(void **state)
{
    (void)state;
    const char *config = "{\"managers\": 1, \"items\": ["
                         "{\"system\": \"boom\", \"with\": [\"c0\"], \"mode\": \"crash\"}]}";
    vworld v;
    vworld_open(&v, real_plugins, NULL, manifest_with(config), false);
    assert_true(host_guard_install());
    v.w->safe = true;
    capture cap;
    capture_begin(&cap);
    host_world_frame(v.w);
    char *log = capture_end(&cap);
    EXPECT_LOGGED(log, "plugin 'vprobe' (vprobe.so) crashed with SIGSEGV in boom");
    free(log);
    assert_int_equal(v.probe->status, HOST_PLUGIN_UNLOADED);
    assert_int_equal(v.w->system_count, 0);
    /* the others go on: every other plugin still loaded, its managers updated each frame */
    uint64_t before[3];
    static const char *const others[] = {"transform", "debug_name", "mesh"};
    v.w->timing.time_managers = true; /* each update counted in its timing */
    v.w->timing.time_every = 1;
    for (int k = 0; k < 3; k++) {
        host_plugin *p = host_plugin_named(v.s, others[k]);
        if (!p || p->status != HOST_PLUGIN_LOADED) fail_msg("%s is gone", others[k]);
    }
    for (int k = 0; k < 3; k++) {
        host_manager *m = manager_called(v.w, others[k]);
        assert_non_null(m);
        before[k] = m->timing.count;
    }
    host_world_frame(v.w);
    host_world_frame(v.w);
    for (int k = 0; k < 3; k++) { /* two more updates each (debug_name has no update) */
        const host_manager *m = manager_called(v.w, others[k]);
        assert_int_equal(m->timing.count, before[k] + (m->desc.update ? 2 : 0));
    }
    assert_int_equal(v.w->manager_count, 3); /* vprobe's c0 went with it */
    vworld_close(&v);
}

/* ---- bad calls ---- */

/* Load vprobe with config after the real plugins; it must be skipped with a reason that
 * contains `why`, and the log line must name it. */
static void expect_refused_load(const char *config, const char *why)
{
    vworld v;
    capture cap;
    capture_begin(&cap);
    vworld_open(&v, real_plugins, NULL, manifest_with(config), false);
    char *log = capture_end(&cap);
    host_plugin *p = NULL;
    for (size_t i = 0; i < v.s->plugin_count; i++)
        if (v.s->plugins[i]->name && strcmp(v.s->plugins[i]->name, "vprobe") == 0)
            p = v.s->plugins[i];
    assert_non_null(p);
    assert_int_equal(p->status, HOST_PLUGIN_SKIPPED);
    if (!strstr(p->reason, why)) fail_msg("reason '%s' has no '%s'", p->reason, why);
    char line[600];
    snprintf(line, sizeof line, "[error] vprobe: %s", why);
    EXPECT_LOGGED(log, line);
    free(log);
    assert_int_equal(v.w->system_count, 0); /* nothing of it stays */
    vworld_close(&v);
}

static void Bad_registrations_are_refused_naming_the_plugin(void **state)
{
    (void)state;
    expect_refused_load("{\"items\": [{\"system\": \"s\", \"with\": [\"nope\"]}]}",
                        "register_system: no manager named 'nope' was ever registered");
    expect_refused_load("{\"items\": [{\"system\": \"s\", \"with\": []}]}",
                        "register_system: `with` names no manager");
    expect_refused_load("{\"items\": [{\"system\": \"s\", \"with\": [\"mesh\"]},"
                        "{\"system\": \"s\", \"with\": [\"transform\"]}]}",
                        "register_system: system 's' is already registered by plugin 'vprobe'");
    expect_refused_load("{\"items\": [{\"system\": \"mesh\", \"with\": [\"transform\"]}]}",
                        "register_system: a manager 'mesh' is already registered by plugin 'mesh'");
    expect_refused_load("{\"items\": [{\"system\": \"s\", \"with\": [\"mesh\"], "
                        "\"without\": [\"mesh\"]}]}",
                        "register_system: manager 'mesh' is both in `with` and in `without`");
    expect_refused_load("{\"items\": [{\"index\": \"transform\"}]}",
                        "manager_index: no manager 'transform' registered by this plugin");
    expect_refused_load("{\"items\": [{\"manager\": \"spin.rotate\"}, {\"system\": \"spin.rotate\","
                        " \"with\": [\"transform\"]}]}",
                        "register_system: a manager 'spin.rotate' is already registered");
}

static void Bad_calls_at_run_time_are_refused_naming_the_plugin(void **state)
{
    (void)state;
    const char *config = "{\"managers\": 1, \"items\": [{\"manager\": \"noix\", \"index\": false},"
                         "{\"system\": \"s\", \"with\": [\"c0\"]}]}";
    vworld v;
    vworld_open(&v, real_plugins, NULL, manifest_with(config), false);
    assert_non_null(v.vp);
    const ecs_host *h = v.h;
    static const char *const with[] = {"c0", NULL}, *const none[] = {NULL},
                             *const noix[] = {"noix", NULL}, *const nope[] = {"nope", NULL};
    ecs_query_desc q = {sizeof q, with, NULL};
    ecs_system_desc sd = {sizeof sd, "late", q, 0, NULL, NULL};
    ecs_manager_index ix = {.struct_size = sizeof ix, .state = NULL, .has = NULL, .entities = NULL};
    ecs_collection c = 7;
    ecs_view view;
    ecs_entity e, dead;
    uint32_t bit = 0;
    assert_int_equal(host_entity_create(v.w->entities, &e), ECS_OK);
    assert_int_equal(host_entity_create(v.w->entities, &dead), ECS_OK);
    assert_int_equal(host_entity_destroy(v.w->entities, dead), ECS_OK);
    capture cap;
    capture_begin(&cap);
    assert_int_equal(h->register_system(h, &sd), ECS_ERR_WRONG_TIME);
    assert_int_equal(h->collection_create(h, &q, &c), ECS_ERR_WRONG_TIME);
    assert_int_equal(h->manager_index(h, "c0", &ix), ECS_ERR_WRONG_TIME);
    assert_int_equal(h->signature_bit(h, "nope", &bit), ECS_ERR_NOT_FOUND);
    assert_int_equal(h->signature_bit(h, "transform", &bit), ECS_OK);
    uint32_t tbit = bit;
    h->component_added(h, tbit, e); /* transform's bit, from vprobe */
    assert_int_equal(h->signature_bit(h, "c0", &bit), ECS_OK);
    h->component_added(h, bit, dead);
    q.with = none;
    assert_int_equal(h->view_init(h, &q, &view), ECS_ERR_INVALID_ARGUMENT);
    assert_false(h->view_next(h, &view, &e)); /* a refused view is empty */
    q.with = noix;
    assert_int_equal(h->view_init(h, &q, &view), ECS_ERR_NOT_FOUND);
    q.with = nope;
    assert_int_equal(h->view_init(h, &q, &view), ECS_ERR_NOT_FOUND);
    assert_false(h->view_next(h, NULL, &e));
    ecs_view_cursor cur;
    assert_int_equal(ecs_view_cursor_init(h, &q, &cur), ECS_ERR_NOT_FOUND);
    assert_false(ecs_view_cursor_next(h, &cur, &e)); /* a refused view is empty */
    assert_int_equal(ecs_view_cursor_init(h, &q, NULL), ECS_ERR_INVALID_ARGUMENT);
    assert_false(ecs_view_cursor_next(h, NULL, &e));
    assert_false(ecs_view_cursor_next(h, &cur, NULL));
    ecs_host old = *h; /* a host without views: the cursor is empty and calls nothing */
    old.view_init = NULL;
    assert_int_equal(ecs_view_cursor_init(&old, &q, &cur), ECS_ERR_UNSUPPORTED);
    assert_false(ecs_view_cursor_next(&old, &cur, &e));
    assert_false(ecs_view_cursor_next(&old, NULL, &e));
    old = *h;
    old.struct_size = (uint32_t)offsetof(ecs_host, view_next);
    assert_int_equal(ecs_view_cursor_init(&old, &q, NULL), ECS_ERR_UNSUPPORTED);
    assert_false(ecs_view_cursor_next(&old, &cur, &e));
    const ecs_entity *list = &e;
    assert_int_equal(h->collection_entities(h, 999, &list), 0);
    assert_null(list);
    char *log = capture_end(&cap);
    EXPECT_LOGGED(log, "[error] vprobe: register_system: only allowed inside load()");
    EXPECT_LOGGED(log, "[error] vprobe: collection_create: only allowed inside load()");
    EXPECT_LOGGED(log, "[error] vprobe: manager_index: only allowed inside load()");
    EXPECT_LOGGED(log,
                  "[error] vprobe: signature_bit: no manager named 'nope' was ever registered");
    char line[200];
    snprintf(line, sizeof line,
             "[error] vprobe: component_added: bit %u ('transform') is not the signature bit of a "
             "manager of this plugin",
             tbit);
    EXPECT_LOGGED(log, line);
    EXPECT_LOGGED(log, "[error] vprobe: component_added: entity #");
    EXPECT_LOGGED(log, "is not alive");
    EXPECT_LOGGED(log, "[error] vprobe: view_init: `with` names no manager");
    EXPECT_LOGGED(log, "[error] vprobe: view_init: manager 'noix' offers no index");
    EXPECT_LOGGED(log, "[error] vprobe: view_init: no manager named 'nope'");
    EXPECT_LOGGED(log, "[error] vprobe: view_next: v or out is NULL");
    EXPECT_LOGGED(log, "[error] vprobe: view_init: v is NULL");
    EXPECT_LOGGED(log, "[error] vprobe: collection_entities: no collection 999");
    free(log);
    assert_int_equal(c, 0);
    assert_false(host_sig_has(&v.w->sig, tbit, ecs_entity_index(e))); /* unchanged */
    vworld_close(&v);
}

/* A view walks the shortest list: its length is the smallest manager's. */
static void View_walks_the_smallest_manager(void **state)
{
    (void)state;
    vworld v;
    vworld_open(&v, real_plugins, NULL, manifest_with("{\"managers\": 2}"), false);
    ecs_entity e[100];
    assert_int_equal(host_entity_create_many(v.w->entities, e, 100), ECS_OK);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(v.vp->add(v.vp->self, 0, e[i]), ECS_OK);
        if (i % 10 == 0) assert_int_equal(v.vp->add(v.vp->self, 1, e[i]), ECS_OK);
    }
    static const query q = {{"c0", "c1", NULL}, {NULL}};
    ecs_query_desc d = desc_of(&q);
    ecs_view view;
    assert_int_equal(v.h->view_init(v.h, &d, &view), ECS_OK);
    assert_int_equal(view.count, 10);
    ecs_entity got[MAX_IDS];
    assert_int_equal(view_list(&v, &q, got), 10);
    vworld_close(&v);
}

/* A view of managers that all report their bits tests the signature words (no has()
 * call); one with a manager that does not says so falls back to asking has(). */
static void View_tests_signature_bits_only_when_every_manager_reports(void **state)
{
    (void)state;
    vworld v;
    vworld_open(&v, real_plugins, NULL, manifest_with("{\"managers\": 1}"), false);
    static const query real = {{"transform", "mesh", NULL}, {"debug_name", NULL}};
    static const query mixed = {{"transform", "c0", NULL}, {NULL}};
    ecs_query_desc d = desc_of(&real);
    ecs_view view;
    assert_int_equal(v.h->view_init(v.h, &d, &view), ECS_OK);
    assert_true((uintptr_t)view.host[0] & HOST_VIEW_SIG);
    d = desc_of(&mixed);
    assert_int_equal(v.h->view_init(v.h, &d, &view), ECS_OK);
    assert_false((uintptr_t)view.host[0] & HOST_VIEW_SIG); /* c0 does not say it reports */
    vworld_close(&v);

    /* managers that say they report: one manager alone (no column), with, without */
    vworld_open(&v, real_plugins, NULL, manifest_with("{\"managers\": 2, \"signature\": true}"),
                false);
    ecs_entity e[100];
    assert_int_equal(host_entity_create_many(v.w->entities, e, 100), ECS_OK);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(v.vp->add(v.vp->self, 0, e[i]), ECS_OK);
        if (i % 10 == 0) assert_int_equal(v.vp->add(v.vp->self, 1, e[i]), ECS_OK);
    }
    assert_int_equal(host_entity_destroy(v.w->entities, e[0]), ECS_OK); /* dead, not announced */
    static const query alone = {{"c0", NULL}, {NULL}}, both = {{"c0", "c1", NULL}, {NULL}},
                       not_c1 = {{"c0", NULL}, {"c1", NULL}};
    ecs_entity got[MAX_IDS];
    d = desc_of(&alone);
    assert_int_equal(v.h->view_init(v.h, &d, &view), ECS_OK);
    assert_true((uintptr_t)view.host[0] & HOST_VIEW_SIG);
    assert_int_equal(view_list(&v, &alone, got), 99);
    assert_int_equal(view_list(&v, &both, got), 9);
    for (int i = 0; i < 9; i++)
        assert_int_equal(ecs_entity_index(got[i]) % 10, ecs_entity_index(e[0]) % 10);
    assert_int_equal(view_list(&v, &not_c1, got), 90);
    vworld_close(&v);
}

/* A view checks each entity's generation against the host's: on indices reused once (the
 * ids of a second generation), walked in batches (eight entities at a time inside), it
 * gives the live ones that match and none of those destroyed this frame, like view_next.
 * Both walks: the signature columns in index order (the shortest list holds at least one
 * index in HOST_VIEW_DENSE) and the shortest list (c2, on one entity in 40). */
static void View_walks_reused_indices_and_skips_the_destroyed(void **state)
{
    (void)state;
    vworld v;
    vworld_open(&v, real_plugins, NULL, manifest_with("{\"managers\": 3, \"signature\": true}"),
                false);
    enum { N = ECS_MINIMUM_FREE_INDICES + 1000 };
    static ecs_entity e[N];
    assert_int_equal(host_entity_create_many(v.w->entities, e, N), ECS_OK);
    for (int i = 0; i < N; i++) assert_int_equal(host_entity_destroy(v.w->entities, e[i]), ECS_OK);
    host_world_frame(v.w); /* announced: the indices become reusable */
    host_world_frame(v.w);
    assert_int_equal(host_entity_create_many(v.w->entities, e, N), ECS_OK);
    uint32_t reused = 0;
    for (int i = 0; i < N; i++) {
        reused += ecs_entity_generation(e[i]) > 0;
        assert_int_equal(v.vp->add(v.vp->self, 0, e[i]), ECS_OK);
        if (i % 3 == 0) assert_int_equal(v.vp->add(v.vp->self, 1, e[i]), ECS_OK);
        if (i % 40 == 1) assert_int_equal(v.vp->add(v.vp->self, 2, e[i]), ECS_OK);
    }
    assert_true(reused >= 1000);
    for (int i = 0; i < N; i += 7) /* dead, not announced: still in the managers' lists */
        assert_int_equal(host_entity_destroy(v.w->entities, e[i]), ECS_OK);
    static const query both = {{"c0", "c1", NULL}, {NULL}}, not_c1 = {{"c0", NULL}, {"c1", NULL}},
                       sparse = {{"c0", "c2", NULL}, {"c1", NULL}};
    static uint32_t want[MAX_IDS];
    static ecs_entity got[MAX_IDS];
    const query *qs[] = {&both, &not_c1, &sparse};
    for (int k = 0; k < 3; k++) {
        ecs_query_desc d = desc_of(qs[k]);
        ecs_view view;
        assert_int_equal(v.h->view_init(v.h, &d, &view), ECS_OK);
        uintptr_t how = (uintptr_t)view.host[0];
        assert_true(how & HOST_VIEW_SIG);
        assert_int_equal(!!(how & HOST_VIEW_COLS), qs[k] != &sparse);
        uint32_t nw = reference(&v, qs[k], e, N, want);
        assert_true(nw > 20);
        expect_set("view of reused indices", 0, 0, want, nw, got, view_list(&v, qs[k], got));
    }
    vworld_close(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Views_and_collections_match_brute_force_over_random_changes),
        cmocka_unit_test(Collections_and_views_work_with_more_than_64_managers),
        cmocka_unit_test(Collection_is_stable_during_a_frame_and_changes_at_the_next),
        cmocka_unit_test(Destroyed_entity_leaves_collections_without_manager_reports),
        cmocka_unit_test(Systems_run_in_registration_order_higher_weight_first_ties_stable),
        cmocka_unit_test(Collection_keeps_working_when_its_manager_is_unloaded_and_loaded),
        cmocka_unit_test(Systems_are_replaced_in_place_by_a_hot_reload),
        cmocka_unit_test(Bad_registrations_are_refused_naming_the_plugin),
        cmocka_unit_test(Bad_calls_at_run_time_are_refused_naming_the_plugin),
        cmocka_unit_test(View_walks_the_smallest_manager),
        cmocka_unit_test(View_tests_signature_bits_only_when_every_manager_reports),
        cmocka_unit_test(View_walks_reused_indices_and_skips_the_destroyed),
        cmocka_unit_test(Safe_mode_catches_a_crashing_system), /* last: installs the guard */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
