/* SPDX-License-Identifier: MIT */
/* test_transform.c: cmocka tests of the transform plugin (plugins/transform), loaded from
 * its real .so into an in-process host_world (fixture.c) and driven through its published
 * API and its manager callbacks: argument checks, world = parent world x TRS(local) on a
 * hand-checked hierarchy, immediate subtree updates, batches, reparenting, cycles, cascade
 * destroy, JSON save/load of one component and of whole scenes through the host (parents by
 * scene id, in any order), a state handed over on reload (through a minimal fake host),
 * and random hierarchies checked step by step against a slow recursive reference (the seed
 * is printed on failure; TRANSFORM_SEED=<n> in the environment replays one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "jobs.h"
#include "log.h"
#include "scene.h"
#include "transform_api.h"

#define MAP_INDICES 65536u /* entity indices the tests' instance maps cover */

/* ---- fixture: the real plugin in a fresh world per test ---- */

typedef struct tctx {
    fixture f;
    const ecs_transform_api *tf;
    const ecs_manager_desc *mgr; /* the host's copy of the "transform" manager */
} tctx;

static int setup(void **state)
{
    tctx *c = calloc(1, sizeof *c);
    const char *const paths[] = {TRANSFORM_SO, NULL};
    if (!c || fixture_open(&c->f, paths) != 0) return -1;
    c->tf = fixture_api(&c->f, ECS_TRANSFORM_API_NAME);
    for (size_t i = 0; i < c->f.w->manager_count; i++)
        if (strcmp(c->f.w->managers[i]->name, "transform") == 0)
            c->mgr = &c->f.w->managers[i]->desc;
    if (!c->tf || !c->mgr) return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    tctx *c = *state;
    fixture_close(&c->f);
    free(c);
    return 0;
}

static ecs_entity new_entity(tctx *c)
{
    ecs_entity e;
    assert_int_equal(host_entity_create(c->f.w->entities, &e), ECS_OK);
    return e;
}

/* A dead id: created, destroyed, announced. */
static ecs_entity dead_entity(tctx *c)
{
    ecs_entity e = new_entity(c);
    assert_int_equal(host_entity_destroy(c->f.w->entities, e), ECS_OK);
    fixture_frames(&c->f, 1);
    return e;
}

static ecs_transform_local mk(float px, float py, float pz, float qx, float qy, float qz, float qw,
                              float sx, float sy, float sz)
{
    ecs_transform_local l;
    l.position = ecs_vec3_make(px, py, pz);
    l.rotation.x = qx, l.rotation.y = qy, l.rotation.z = qz, l.rotation.w = qw;
    l.scale = ecs_vec3_make(sx, sy, sz);
    return l;
}

static ecs_transform_local ident(void)
{
    return mk(0, 0, 0, 0, 0, 0, 1, 1, 1, 1);
}

/* An entity with a transform of local l under parent (null: a root). */
static ecs_entity add(tctx *c, ecs_transform_local l, ecs_entity parent)
{
    ecs_entity e = new_entity(c);
    assert_int_equal(c->tf->add(c->tf->self, e, &l, parent), ECS_OK);
    return e;
}

static ecs_mat4 world_of(tctx *c, ecs_entity e)
{
    ecs_mat4 m;
    assert_int_equal(c->tf->get_world(c->tf->self, e, &m), ECS_OK);
    return m;
}

static ecs_transform_local local_of(tctx *c, ecs_entity e)
{
    ecs_transform_local l;
    assert_int_equal(c->tf->get_local(c->tf->self, e, &l), ECS_OK);
    return l;
}

/* max |a - b| over the 16 elements, divided by max(1, max |b|). */
static double mat_err(const ecs_mat4 *a, const ecs_mat4 *b)
{
    double err = 0, scale = 1;
    for (int k = 0; k < 16; k++) {
        err = fmax(err, fabs((double)a->m[k] - b->m[k]));
        scale = fmax(scale, fabs((double)b->m[k]));
    }
    return err / scale;
}

static void assert_mat_near(const ecs_mat4 *a, const ecs_mat4 *b, double tol)
{
    double err = mat_err(a, b);
    if (err > tol) {
        for (int k = 0; k < 16; k++)
            fprintf(stderr, "  m[%2d] %12.6f %12.6f\n", k, a->m[k], b->m[k]);
        fail_msg("matrices differ by %g (tolerance %g)", err, tol);
    }
}

static void assert_vec3_near(ecs_vec3 a, float x, float y, float z, double tol)
{
    if (fabs(a.x - x) > tol || fabs(a.y - y) > tol || fabs(a.z - z) > tol)
        fail_msg("(%g, %g, %g) is not (%g, %g, %g)", a.x, a.y, a.z, x, y, z);
}

/* The slow reference: world from the locals, recursively through the API's parent links. */
static ecs_mat4 ref_world(tctx *c, ecs_entity e)
{
    ecs_transform_local l = local_of(c, e);
    ecs_mat4 trs = ecs_mat4_trs(l.position, l.rotation, l.scale);
    ecs_entity p = c->tf->parent(c->tf->self, e);
    if (ecs_entity_is_null(p)) return trs;
    ecs_mat4 pw = ref_world(c, p);
    return ecs_mat4_mul(&pw, &trs);
}

/* Whether every instance's parent comes before it (the invariant the linear pass relies
 * on); on failure, what is wrong into why. */
static bool parents_first(tctx *c, char *why, size_t size)
{
    const ecs_entity *ents;
    const ecs_mat4 *world;
    uint32_t n = c->tf->instances(c->tf->self, &ents, &world);
    uint32_t *pos = malloc(MAP_INDICES * sizeof *pos);
    bool ok = pos != NULL;
    for (uint32_t i = 0; ok && i < n; i++) {
        ok = ecs_entity_index(ents[i]) < MAP_INDICES;
        if (ok) pos[ecs_entity_index(ents[i])] = i;
    }
    snprintf(why, size, "out of memory or entity index too large");
    for (uint32_t i = 0; ok && i < n; i++) {
        ecs_entity p = c->tf->parent(c->tf->self, ents[i]);
        if (!ecs_entity_is_null(p) && pos[ecs_entity_index(p)] >= i) {
            snprintf(why, size, "instance %u (entity %u) comes before its parent (instance %u)", i,
                     ents[i].id, pos[ecs_entity_index(p)]);
            ok = false;
        }
    }
    free(pos);
    return ok;
}

static void assert_parents_first(tctx *c)
{
    char why[200];
    if (!parents_first(c, why, sizeof why)) fail_msg("%s", why);
}

/* Snapshot of everything observable: instance order, worlds, parents. */
typedef struct snapshot {
    uint32_t n;
    ecs_entity ents[16], parents[16];
    ecs_mat4 world[16];
} snapshot;

static void snap(tctx *c, snapshot *s)
{
    const ecs_entity *e;
    const ecs_mat4 *w;
    memset(s, 0, sizeof *s);
    s->n = c->tf->instances(c->tf->self, &e, &w);
    assert_true(s->n <= 16);
    for (uint32_t i = 0; i < s->n; i++) {
        s->ents[i] = e[i];
        s->world[i] = w[i];
        s->parents[i] = c->tf->parent(c->tf->self, e[i]);
    }
}

/* ---- capture of the host's log (stderr) ---- */

typedef struct capture {
    int saved;
    FILE *tmp;
} capture;

static void capture_begin(capture *cap)
{
    fflush(stderr);
    cap->tmp = tmpfile();
    assert_non_null(cap->tmp);
    cap->saved = dup(2);
    dup2(fileno(cap->tmp), 2);
}

/* What was logged since capture_begin (malloc'd). */
static char *capture_end(capture *cap)
{
    fflush(stderr);
    dup2(cap->saved, 2);
    close(cap->saved);
    long n = ftell(cap->tmp);
    char *s = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    assert_non_null(s);
    rewind(cap->tmp);
    if (n > 0 && fread(s, 1, (size_t)n, cap->tmp) != (size_t)n) s[0] = 0;
    fclose(cap->tmp);
    return s;
}

/* ---- the plugin and its manager ---- */

static void Transform_plugin_registers_manager_and_api(void **state)
{
    tctx *c = *state;
    assert_int_equal(c->tf->struct_size, sizeof(ecs_transform_api));
    assert_non_null(c->tf->self);
    assert_ptr_equal(c->mgr->state, c->tf->self);
    assert_non_null(c->mgr->update);
    assert_non_null(c->mgr->entities_destroyed);
    assert_non_null(c->mgr->count);
    assert_int_equal(c->mgr->count(c->mgr->state), 0);
    ecs_entity a = add(c, ident(), ecs_entity_null());
    add(c, ident(), a);
    assert_int_equal(c->mgr->count(c->mgr->state), 2);
    assert_int_equal(c->tf->count(c->tf->self), 2);
    fixture_frames(&c->f, 3); /* update() with nothing pending changes nothing */
    assert_int_equal(c->tf->count(c->tf->self), 2);
}

/* ---- argument checks ---- */

static void Transform_add_checks_its_arguments(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_entity e = new_entity(c), dead = dead_entity(c), bare = new_entity(c);
    ecs_transform_local nan_pos = mk(NAN, 0, 0, 0, 0, 0, 1, 1, 1, 1);
    ecs_transform_local inf_scale = mk(0, 0, 0, 0, 0, 0, 1, 1, INFINITY, 1);
    ecs_transform_local nan_rot = mk(0, 0, 0, 0, NAN, 0, 1, 1, 1, 1);
    ecs_transform_local zero_rot = mk(0, 0, 0, 0, 0, 0, 0, 1, 1, 1);
    assert_int_equal(tf->add(tf->self, dead, NULL, ecs_entity_null()), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->add(tf->self, ecs_entity_null(), NULL, ecs_entity_null()),
                     ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->add(NULL, e, NULL, ecs_entity_null()), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf->add(tf->self, e, &nan_pos, ecs_entity_null()), ECS_ERR_BAD_VALUE);
    assert_int_equal(tf->add(tf->self, e, &inf_scale, ecs_entity_null()), ECS_ERR_BAD_VALUE);
    assert_int_equal(tf->add(tf->self, e, &nan_rot, ecs_entity_null()), ECS_ERR_BAD_VALUE);
    assert_int_equal(tf->add(tf->self, e, &zero_rot, ecs_entity_null()), ECS_ERR_BAD_VALUE);
    assert_int_equal(tf->add(tf->self, e, NULL, dead), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->add(tf->self, e, NULL, bare), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->add(tf->self, e, NULL, e),
                     ECS_ERR_NOT_FOUND); /* itself, no transform yet */
    assert_false(tf->has(tf->self, e));
    assert_int_equal(tf->count(tf->self), 0);

    assert_int_equal(tf->add(tf->self, e, NULL, ecs_entity_null()), ECS_OK); /* NULL: identity */
    assert_int_equal(tf->add(tf->self, e, NULL, ecs_entity_null()), ECS_ERR_EXISTS);
    ecs_transform_local l = local_of(c, e), id = ident();
    assert_memory_equal(&l, &id, sizeof l);
    ecs_mat4 w = world_of(c, e), i4 = ecs_mat4_identity();
    assert_mat_near(&w, &i4, 0);
    assert_true(tf->has(tf->self, e));
    assert_false(tf->has(tf->self, bare));
    assert_false(tf->has(tf->self, dead));
    assert_false(tf->has(NULL, e));

    ecs_entity q = add(c, mk(0, 0, 0, 0, 0, 0, 2, 1, 1, 1), e); /* non-unit: normalized */
    l = local_of(c, q);
    assert_float_equal(l.rotation.w, 1.0f, 1e-7);
    ecs_entity r = add(c, mk(0, 0, 0, 0, 3, 0, 4, 1, 1, 1), e);
    l = local_of(c, r);
    assert_float_equal(l.rotation.y, 0.6f, 1e-6);
    assert_float_equal(l.rotation.w, 0.8f, 1e-6);
}

static void Transform_get_and_set_local_check_their_arguments(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_transform_local l = mk(1, 2, 3, 0, 0, 0, 1, 2, 2, 2), out;
    ecs_mat4 m;
    ecs_entity e = add(c, l, ecs_entity_null()), dead = dead_entity(c), bare = new_entity(c);
    assert_int_equal(tf->get_local(tf->self, e, NULL), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf->get_local(NULL, e, &out), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf->get_local(tf->self, dead, &out), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->get_local(tf->self, bare, &out), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->get_world(tf->self, e, NULL), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf->get_world(tf->self, dead, &m), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->get_world(tf->self, bare, &m), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->set_local(tf->self, e, NULL), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf->set_local(tf->self, dead, &l), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->set_local(tf->self, bare, &l), ECS_ERR_NOT_FOUND);
    ecs_transform_local bad[] = {
        mk(INFINITY, 0, 0, 0, 0, 0, 1, 1, 1, 1), mk(0, 0, 0, 0, 0, 0, NAN, 1, 1, 1),
        mk(0, 0, 0, 0, 0, 0, 1, 1, 1, -INFINITY), mk(0, 0, 0, 0, 0, 0, 0, 1, 1, 1)};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        assert_int_equal(tf->set_local(tf->self, e, &bad[k]), ECS_ERR_BAD_VALUE);
    out = local_of(c, e); /* nothing changed */
    assert_memory_equal(&out, &l, sizeof l);
    ecs_transform_local tiny = mk(0, 0, 0, 1e-30f, 0, 0, 0, 1, 1, 1); /* small, not zero */
    assert_int_equal(tf->set_local(tf->self, e, &tiny), ECS_OK);
    assert_float_equal(local_of(c, e).rotation.x, 1.0f, 1e-6);
}

static void Transform_hierarchy_links_of_missing_entities_are_null(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_entity e = add(c, ident(), ecs_entity_null()), dead = dead_entity(c), bare = new_entity(c);
    ecs_entity who[] = {dead, bare, ecs_entity_null(), e};
    for (size_t k = 0; k < 4; k++) {
        assert_true(ecs_entity_is_null(tf->parent(tf->self, who[k])));
        assert_true(ecs_entity_is_null(tf->first_child(tf->self, who[k])));
        assert_true(ecs_entity_is_null(tf->next_sibling(tf->self, who[k])));
        assert_true(ecs_entity_is_null(tf->prev_sibling(tf->self, who[k])));
    }
    assert_true(ecs_entity_is_null(tf->parent(NULL, e)));
    assert_int_equal(tf->count(NULL), 0);
    assert_int_equal(tf->remove(tf->self, dead), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->remove(tf->self, bare), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->set_parent(tf->self, dead, e), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->set_parent(tf->self, bare, e), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->set_parent(tf->self, e, dead), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->set_parent(tf->self, e, bare), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->detach(tf->self, dead), ECS_ERR_STALE_ENTITY);
    assert_int_equal(tf->detach(tf->self, bare), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->detach(tf->self, e), ECS_OK); /* a root already */
    assert_int_equal(tf->set_parent(NULL, e, e), ECS_ERR_INVALID_ARGUMENT);
}

/* ---- world matrices ---- */

#define S45 0.70710678118654752f

/* R: at (1,2,3), 90 degrees about z, scale 2. C under R: at (1,0,0). G under C: at (0,1,0),
 * scale (0.5,1,1). By hand: C's origin is (1,2,3) + Rz90(2 * (1,0,0)) = (1,4,3); G's is
 * C's + 2 * Rz90((0,1,0)) = (1,4,3) + (-2,0,0) = (-1,4,3). */
static void Transform_world_is_parent_world_times_local_trs(void **state)
{
    tctx *c = *state;
    ecs_entity r = add(c, mk(1, 2, 3, 0, 0, S45, S45, 2, 2, 2), ecs_entity_null());
    ecs_entity ch = add(c, mk(1, 0, 0, 0, 0, 0, 1, 1, 1, 1), r);
    ecs_entity g = add(c, mk(0, 1, 0, 0, 0, 0, 1, 0.5f, 1, 1), ch);
    const ecs_mat4 want_r = {{0, 2, 0, 0, -2, 0, 0, 0, 0, 0, 2, 0, 1, 2, 3, 1}};
    const ecs_mat4 want_c = {{0, 2, 0, 0, -2, 0, 0, 0, 0, 0, 2, 0, 1, 4, 3, 1}};
    const ecs_mat4 want_g = {{0, 1, 0, 0, -2, 0, 0, 0, 0, 0, 2, 0, -1, 4, 3, 1}};
    ecs_mat4 w = world_of(c, r);
    assert_mat_near(&w, &want_r, 1e-6);
    w = world_of(c, ch);
    assert_mat_near(&w, &want_c, 1e-6);
    w = world_of(c, g);
    assert_mat_near(&w, &want_g, 1e-6);
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(1, 0, 0)), -1, 5, 3, 1e-5);
    assert_true(ecs_entity_eq(c->tf->parent(c->tf->self, g), ch));
    assert_true(ecs_entity_eq(c->tf->first_child(c->tf->self, r), ch));
    assert_parents_first(c);
}

static void Transform_set_local_updates_the_whole_subtree_at_once(void **state)
{
    tctx *c = *state;
    ecs_entity r = add(c, mk(1, 2, 3, 0, 0, S45, S45, 2, 2, 2), ecs_entity_null());
    ecs_entity ch = add(c, mk(1, 0, 0, 0, 0, 0, 1, 1, 1, 1), r);
    ecs_entity g = add(c, mk(0, 1, 0, 0, 0, 0, 1, 0.5f, 1, 1), ch);
    ecs_entity other = add(c, mk(5, 5, 5, 0, 0, 0, 1, 1, 1, 1), ecs_entity_null());
    ecs_transform_local l = mk(0, 0, 0, 0, 0, 0, 1, 1, 1, 1);
    assert_int_equal(c->tf->set_local(c->tf->self, r, &l), ECS_OK);
    ecs_mat4 w = world_of(c, ch); /* no frame in between */
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(0, 0, 0)), 1, 0, 0, 1e-6);
    w = world_of(c, g);
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(0, 0, 0)), 1, 1, 0, 1e-6);
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(2, 0, 0)), 2, 1, 0, 1e-6);
    w = world_of(c, other);
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(0, 0, 0)), 5, 5, 5, 0);
    l = local_of(c, r);
    assert_float_equal(l.scale.x, 1, 0);
    w = world_of(c, g);
    ecs_mat4 ref = ref_world(c, g);
    assert_mat_near(&w, &ref, 1e-6);
}

static void Transform_set_local_many_recomputes_all_or_nothing(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_entity r = add(c, ident(), ecs_entity_null());
    ecs_entity a = add(c, mk(1, 0, 0, 0, 0, 0, 1, 1, 1, 1), r);
    ecs_entity b = add(c, mk(0, 1, 0, 0, 0, 0, 1, 1, 1, 1), a);
    ecs_entity bare = new_entity(c), dead = dead_entity(c);
    ecs_entity es[3] = {b, r, a};
    ecs_transform_local ls[3] = {mk(0, 0, 1, 0, 0, 0, 1, 1, 1, 1),
                                 mk(10, 0, 0, 0, 0, 0, 1, 2, 2, 2),
                                 mk(1, 0, 0, 0, 0, S45, S45, 1, 1, 1)};
    ecs_mat4 before = world_of(c, b);
    uint32_t bad = 99;

    ls[1].position.y = NAN;
    assert_int_equal(tf->set_local_many(tf->self, es, ls, 3, &bad), ECS_ERR_BAD_VALUE);
    assert_int_equal(bad, 1);
    ls[1].position.y = 0;
    es[2] = dead;
    assert_int_equal(tf->set_local_many(tf->self, es, ls, 3, &bad), ECS_ERR_STALE_ENTITY);
    assert_int_equal(bad, 2);
    es[2] = bare;
    assert_int_equal(tf->set_local_many(tf->self, es, ls, 3, &bad), ECS_ERR_NOT_FOUND);
    assert_int_equal(bad, 2);
    assert_int_equal(tf->set_local_many(tf->self, es, ls, 3, NULL), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->set_local_many(tf->self, NULL, ls, 3, &bad), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf->set_local_many(tf->self, es, NULL, 3, &bad), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf->set_local_many(tf->self, NULL, NULL, 0, &bad), ECS_OK);
    ecs_mat4 after = world_of(c, b); /* every refused call changed nothing */
    assert_memory_equal(&after, &before, sizeof after);
    assert_float_equal(local_of(c, r).position.x, 0, 0);

    es[2] = a;
    assert_int_equal(tf->set_local_many(tf->self, es, ls, 3, &bad), ECS_OK);
    /* r at (10,0,0) scale 2; a at (1,0,0) turned 90 about z; b at (0,0,1) in a */
    after = world_of(c, a);
    assert_vec3_near(ecs_mat4_point(&after, ecs_vec3_make(0, 0, 0)), 12, 0, 0, 1e-5);
    after = world_of(c, b);
    assert_vec3_near(ecs_mat4_point(&after, ecs_vec3_make(0, 0, 0)), 12, 0, 2, 1e-5);
    assert_vec3_near(ecs_mat4_point(&after, ecs_vec3_make(1, 0, 0)), 12, 2, 2, 1e-5);
    ecs_entity all[3] = {r, a, b};
    for (int k = 0; k < 3; k++) {
        ecs_mat4 w = world_of(c, all[k]), ref = ref_world(c, all[k]);
        assert_mat_near(&w, &ref, 1e-6);
    }
}

/* A batch in the dense order of instances() (a run of consecutive instances) takes the
 * fused path: its descendants after the run must follow, and it stays all or nothing. */
static void Transform_set_local_many_in_dense_order_updates_what_follows(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_entity r = add(c, ident(), ecs_entity_null());
    ecs_entity a = add(c, mk(1, 0, 0, 0, 0, 0, 1, 1, 1, 1), r);
    ecs_entity b = add(c, mk(0, 1, 0, 0, 0, 0, 1, 1, 1, 1), a);
    ecs_entity x = add(c, mk(9, 0, 0, 0, 0, 0, 1, 1, 1, 1), ecs_entity_null());
    ecs_entity d = add(c, mk(0, 0, 1, 0, 0, 0, 1, 1, 1, 1), b); /* after the run below */
    const ecs_entity *ents;
    const ecs_mat4 *w;
    assert_int_equal(tf->instances(tf->self, &ents, &w), 5);
    ecs_entity run[2] = {ents[1], ents[2]}; /* a, b */
    assert_true(ecs_entity_eq(run[0], a) && ecs_entity_eq(run[1], b));
    ecs_transform_local ls[5] = {mk(0, 0, 0, 0, 0, S45, S45, 2, 2, 2),
                                 mk(3, 0, 0, 0, S45, 0, S45, 1, 1, 1)};
    ls[1].rotation.w = NAN;
    uint32_t bad = 0;
    snapshot before, after;
    snap(c, &before);
    assert_int_equal(tf->set_local_many(tf->self, run, ls, 2, &bad), ECS_ERR_BAD_VALUE);
    assert_int_equal(bad, 1);
    snap(c, &after);
    assert_memory_equal(&after, &before, sizeof after);
    ls[1].rotation.w = S45;
    assert_int_equal(tf->set_local_many(tf->self, run, ls, 2, &bad), ECS_OK);
    ecs_entity all[] = {r, a, b, x, d};
    for (size_t k = 0; k < 5; k++) {
        ecs_mat4 m = world_of(c, all[k]), ref = ref_world(c, all[k]);
        assert_mat_near(&m, &ref, 1e-6);
    }
    ecs_mat4 m = world_of(c, d); /* d: b's (0,0,1) through b = a * T(3,0,0) Ry90, a = Rz90 * 2 */
    assert_vec3_near(ecs_mat4_point(&m, ecs_vec3_make(0, 0, 0)), 0, 8, 0, 1e-5);

    /* the whole dense array, in order */
    assert_int_equal(tf->instances(tf->self, &ents, &w), 5);
    ecs_entity every[5];
    for (int k = 0; k < 5; k++) every[k] = ents[k], ls[k] = local_of(c, ents[k]);
    ls[0].position.y = 5;
    assert_int_equal(tf->set_local_many(tf->self, every, ls, 5, NULL), ECS_OK);
    for (size_t k = 0; k < 5; k++) {
        m = world_of(c, all[k]);
        ecs_mat4 ref = ref_world(c, all[k]);
        assert_mat_near(&m, &ref, 1e-6);
    }
    m = world_of(c, d);
    assert_vec3_near(ecs_mat4_point(&m, ecs_vec3_make(0, 0, 0)), 0, 13, 0, 1e-5);
}

/* ---- hierarchy ---- */

static void Transform_set_parent_and_detach_relink_and_recompute(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_entity a = add(c, mk(1, 0, 0, 0, 0, 0, 1, 1, 1, 1), ecs_entity_null());
    ecs_entity b = add(c, mk(0, 5, 0, 0, 0, 0, 1, 2, 2, 2), ecs_entity_null());
    ecs_entity x = add(c, mk(0, 0, 1, 0, 0, 0, 1, 1, 1, 1), a);
    ecs_entity y = add(c, mk(1, 0, 0, 0, 0, 0, 1, 1, 1, 1), a);
    ecs_entity z = add(c, mk(2, 0, 0, 0, 0, 0, 1, 1, 1, 1), a);
    /* children of a: a list with z, y, x in some order, linked both ways */
    int n = 0;
    ecs_entity prev = ecs_entity_null();
    for (ecs_entity k = tf->first_child(tf->self, a); !ecs_entity_is_null(k);
         k = tf->next_sibling(tf->self, k), n++) {
        assert_true(ecs_entity_eq(tf->parent(tf->self, k), a));
        assert_true(ecs_entity_eq(tf->prev_sibling(tf->self, k), prev));
        prev = k;
    }
    assert_int_equal(n, 3);

    ecs_transform_local before = local_of(c, y);
    assert_int_equal(tf->set_parent(tf->self, y, b), ECS_OK);
    assert_true(ecs_entity_eq(tf->parent(tf->self, y), b));
    assert_true(ecs_entity_eq(tf->first_child(tf->self, b), y));
    ecs_transform_local after = local_of(c, y);
    assert_memory_equal(&after, &before, sizeof after); /* keeps its local */
    ecs_mat4 w = world_of(c, y);
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(0, 0, 0)), 2, 5, 0, 1e-6);
    n = 0;
    for (ecs_entity k = tf->first_child(tf->self, a); !ecs_entity_is_null(k);
         k = tf->next_sibling(tf->self, k))
        n++, assert_false(ecs_entity_eq(k, y));
    assert_int_equal(n, 2);
    assert_int_equal(tf->set_parent(tf->self, y, b), ECS_OK); /* again: nothing to do */

    assert_int_equal(tf->detach(tf->self, y), ECS_OK);
    assert_true(ecs_entity_is_null(tf->parent(tf->self, y)));
    assert_true(ecs_entity_is_null(tf->first_child(tf->self, b)));
    w = world_of(c, y);
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(0, 0, 0)), 1, 0, 0, 0);
    assert_int_equal(tf->set_parent(tf->self, z, ecs_entity_null()), ECS_OK); /* = detach */
    assert_true(ecs_entity_is_null(tf->parent(tf->self, z)));
    assert_true(ecs_entity_eq(tf->first_child(tf->self, a), x));
    assert_parents_first(c);
}

/* A subtree moved under a parent made after it must be moved behind that parent. */
static void Transform_reparent_under_a_later_parent_keeps_parents_first(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_entity a = add(c, mk(1, 0, 0, 0, 0, 0, 1, 1, 1, 1), ecs_entity_null());
    ecs_entity b = add(c, mk(0, 1, 0, 0, 0, S45, S45, 1, 1, 1), a);
    ecs_entity filler = add(c, ident(), ecs_entity_null());
    ecs_entity c1 = add(c, mk(0, 0, 1, 0, 0, 0, 1, 1, 1, 1), b);
    ecs_entity f2 = add(c, ident(), filler);
    ecs_entity q = add(c, mk(0, 0, 7, 0, 0, 0, 1, 3, 3, 3), ecs_entity_null());
    ecs_entity d = add(c, ident(), c1); /* after q */
    assert_int_equal(tf->set_parent(tf->self, a, q), ECS_OK);
    assert_parents_first(c);
    ecs_entity all[] = {a, b, filler, c1, f2, q, d};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        ecs_mat4 w = world_of(c, all[k]), ref = ref_world(c, all[k]);
        assert_mat_near(&w, &ref, 1e-6);
    }
    assert_true(ecs_entity_eq(tf->parent(tf->self, c1), b));
    assert_true(ecs_entity_eq(tf->parent(tf->self, d), c1));
    assert_true(ecs_entity_eq(tf->first_child(tf->self, filler), f2));
    assert_true(ecs_entity_eq(tf->first_child(tf->self, q), a));
    /* and a middle node moved under a later leaf of another tree */
    assert_int_equal(tf->set_parent(tf->self, b, f2), ECS_OK);
    assert_parents_first(c);
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        ecs_mat4 w = world_of(c, all[k]), ref = ref_world(c, all[k]);
        assert_mat_near(&w, &ref, 1e-6);
    }
}

static void Transform_cycles_are_refused_and_change_nothing(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_entity a = add(c, mk(1, 0, 0, 0, 0, 0, 1, 1, 1, 1), ecs_entity_null());
    ecs_entity b = add(c, mk(0, 1, 0, 0, 0, 0, 1, 1, 1, 1), a);
    ecs_entity d = add(c, mk(0, 0, 1, 0, 0, 0, 1, 1, 1, 1), b);
    add(c, ident(), a);
    snapshot before, after;
    snap(c, &before);
    assert_int_equal(tf->set_parent(tf->self, a, a), ECS_ERR_CYCLE);
    assert_int_equal(tf->set_parent(tf->self, a, b), ECS_ERR_CYCLE);
    assert_int_equal(tf->set_parent(tf->self, a, d), ECS_ERR_CYCLE);
    assert_int_equal(tf->set_parent(tf->self, b, d), ECS_ERR_CYCLE);
    assert_int_equal(tf->set_parent(tf->self, d, d), ECS_ERR_CYCLE);
    snap(c, &after);
    assert_memory_equal(&after, &before, sizeof after);
}

static void Transform_remove_makes_children_roots_keeping_their_world(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    ecs_entity r = add(c, mk(1, 2, 3, 0, 0, S45, S45, 2, 2, 2), ecs_entity_null());
    ecs_entity p = add(c, mk(0, 1, 0, 0.5f, 0.5f, 0.5f, 0.5f, 1.5f, 1.5f, 1.5f), r);
    ecs_entity ch = add(c, mk(1, 0, 0, 0, S45, 0, S45, 1, 1, 1), p);
    ecs_entity g = add(c, mk(0, 0, 2, 0, 0, 0, 1, 1, 2, 3), ch);
    ecs_entity sib = add(c, mk(3, 0, 0, 0, 0, 0, 1, 1, 1, 1), p);
    ecs_mat4 wc = world_of(c, ch), wg = world_of(c, g), ws = world_of(c, sib);
    assert_int_equal(tf->remove(tf->self, p), ECS_OK);
    assert_false(tf->has(tf->self, p));
    assert_true(host_entity_alive(c->f.w->entities, p)); /* the entity lives on */
    assert_int_equal(tf->count(tf->self), 4);
    assert_true(ecs_entity_is_null(tf->parent(tf->self, ch)));
    assert_true(ecs_entity_is_null(tf->parent(tf->self, sib)));
    assert_true(ecs_entity_eq(tf->parent(tf->self, g), ch));
    assert_true(ecs_entity_is_null(tf->first_child(tf->self, r)));
    ecs_mat4 w = world_of(c, ch);
    assert_mat_near(&w, &wc, 1e-5);
    w = world_of(c, g);
    assert_mat_near(&w, &wg, 1e-5);
    w = world_of(c, sib);
    assert_mat_near(&w, &ws, 1e-5);
    w = world_of(c, g);
    ecs_mat4 ref = ref_world(c, g); /* and the world follows from the new locals */
    assert_mat_near(&w, &ref, 1e-6);
    assert_parents_first(c);
    assert_int_equal(tf->remove(tf->self, p), ECS_ERR_NOT_FOUND);
    assert_int_equal(tf->add(tf->self, p, NULL, g), ECS_OK); /* may get one again */
    assert_parents_first(c);
}

static void Transform_destroying_a_parent_destroys_its_descendants(void **state)
{
    tctx *c = *state;
    const ecs_transform_api *tf = c->tf;
    host_entities *em = c->f.w->entities;
    ecs_entity r = add(c, ident(), ecs_entity_null());
    ecs_entity c1 = add(c, ident(), r), c2 = add(c, ident(), r);
    ecs_entity g1 = add(c, ident(), c1), g2 = add(c, ident(), c1);
    ecs_entity gg = add(c, ident(), g2);
    ecs_entity u = add(c, mk(4, 0, 0, 0, 0, 0, 1, 1, 1, 1), ecs_entity_null());
    ecs_entity uc = add(c, ident(), u);
    assert_int_equal(tf->count(tf->self), 8);

    assert_int_equal(host_entity_destroy(em, c1), ECS_OK); /* a middle node first */
    fixture_frames(&c->f, 1);
    assert_false(host_entity_alive(em, g1));
    assert_false(host_entity_alive(em, g2));
    assert_false(host_entity_alive(em, gg));
    assert_int_equal(tf->count(tf->self), 4);
    assert_true(ecs_entity_eq(tf->first_child(tf->self, r), c2));
    assert_true(ecs_entity_is_null(tf->next_sibling(tf->self, c2)));
    assert_parents_first(c);

    assert_int_equal(host_entity_destroy(em, r), ECS_OK);
    fixture_frames(&c->f, 1);
    assert_false(host_entity_alive(em, c2));
    assert_false(tf->has(tf->self, c2));
    assert_int_equal(tf->count(tf->self), 2);
    assert_true(tf->has(tf->self, u));
    assert_true(ecs_entity_eq(tf->parent(tf->self, uc), u));
    ecs_mat4 w = world_of(c, uc);
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(0, 0, 0)), 4, 0, 0, 0);

    /* a parent and its child in the same batch, child listed first, then parent first */
    ecs_entity p2 = add(c, ident(), ecs_entity_null()), k2 = add(c, ident(), p2);
    ecs_entity p3 = add(c, ident(), ecs_entity_null()), k3 = add(c, ident(), p3);
    add(c, ident(), k3);
    assert_int_equal(host_entity_destroy(em, k2), ECS_OK);
    assert_int_equal(host_entity_destroy(em, p2), ECS_OK);
    assert_int_equal(host_entity_destroy(em, p3), ECS_OK);
    assert_int_equal(host_entity_destroy(em, k3), ECS_OK);
    fixture_frames(&c->f, 1);
    assert_int_equal(tf->count(tf->self), 2);
    assert_int_equal(host_entities_live(em), 2); /* u and uc */
    assert_parents_first(c);
}

static void Transform_recompute_all_reproduces_every_world(void **state)
{
    tctx *c = *state;
    ecs_entity r = add(c, mk(1, 2, 3, 0, 0, S45, S45, 2, 1, 2), ecs_entity_null());
    ecs_entity a = add(c, mk(0, 1, 0, 0.5f, 0.5f, 0.5f, 0.5f, 1, 1, 3), r);
    add(c, mk(0, 0, 1, 0, 0, 0, 1, 1, 1, 1), a);
    add(c, mk(5, 0, 0, 0, 0, 0, 1, 1, 1, 1), ecs_entity_null());
    snapshot before, after;
    snap(c, &before);
    assert_int_equal(c->tf->recompute_all(c->tf->self), 4);
    snap(c, &after);
    assert_memory_equal(&after, &before, sizeof after); /* bit for bit */
    assert_int_equal(c->tf->recompute_all(NULL), 0);
}

/* ---- the world pass on the host's job threads ---- */

#define FOREST_TREES 100u
#define FOREST_NODES 1000u /* BENCH.md's trees: 100,000 transforms, past the pass's cut-off */

/* Parent (node number) of node k of a BENCH.md tree; UINT32_MAX for the root. */
static uint32_t forest_parent(uint32_t k)
{
    return k == 0 ? UINT32_MAX : k <= 10 ? 0 : k <= 110 ? 1 + (k - 11) / 10 : 11 + (k - 111) / 10;
}

/* FOREST_TREES trees made tree by tree, or (interleaved) node k of every tree before node
 * k + 1 of any: then most parents lie far before their children, across any cut. */
static void forest(tctx *c, bool interleaved, ecs_entity *ents)
{
    uint32_t seed = 12345;
    for (uint32_t n = 0; n < FOREST_TREES * FOREST_NODES; n++) {
        uint32_t t = interleaved ? n % FOREST_TREES : n / FOREST_NODES,
                 k = interleaved ? n / FOREST_TREES : n % FOREST_NODES;
        float v[10];
        for (int i = 0; i < 10; i++)
            v[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f;
        ecs_transform_local l =
            mk(v[0] * 2 - 1, v[1] * 2 - 1, v[2] * 2 - 1, v[3] - 0.5f, v[4] - 0.5f, v[5] - 0.5f,
               v[6] + 0.5f, 0.9f + 0.2f * v[7], 0.9f + 0.2f * v[8], 0.9f + 0.2f * v[9]);
        uint32_t p = forest_parent(k);
        ents[t * FOREST_NODES + k] =
            add(c, l, p == UINT32_MAX ? ecs_entity_null() : ents[t * FOREST_NODES + p]);
    }
}

/* recompute_all with `threads` job threads (a pool in the world, as --threads): every world
 * matrix into out, in instance order. */
static void pass_with(tctx *c, uint32_t threads, ecs_mat4 *out)
{
    host_jobs *pool = threads > 1 ? host_jobs_start(threads) : NULL;
    c->f.w->jobs = pool;
    const ecs_mat4 *world = NULL;
    assert_int_equal(c->tf->instances(c->tf->self, NULL, &world), FOREST_TREES * FOREST_NODES);
    /* poisoned first (NaN): a matrix read before the pass made it shows in every child */
    memset((void *)(uintptr_t)world, 0xff, FOREST_TREES * FOREST_NODES * sizeof *world);
    assert_int_equal(c->tf->recompute_all(c->tf->self), FOREST_TREES * FOREST_NODES);
    memcpy(out, world, FOREST_TREES * FOREST_NODES * sizeof *out);
    c->f.w->jobs = NULL;
    host_jobs_stop(pool);
}

/* set_local_many of every transform in dense order (the run path: checked and stored on
 * the job threads too), with locals turned a little, on `threads` threads: every world
 * matrix into out. The locals go back after. */
static void run_with(tctx *c, uint32_t threads, ecs_mat4 *out)
{
    const uint32_t n = FOREST_TREES * FOREST_NODES;
    const ecs_entity *dense = NULL;
    const ecs_mat4 *world = NULL;
    assert_int_equal(c->tf->instances(c->tf->self, &dense, &world), n);
    ecs_entity *ents = malloc(n * sizeof *ents);
    ecs_transform_local *old = malloc(n * sizeof *old), *turned = malloc(n * sizeof *turned);
    assert_true(ents && old && turned);
    memcpy(ents, dense, n * sizeof *ents);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(c->tf->get_local(c->tf->self, ents[i], &old[i]), ECS_OK);
        turned[i] = old[i];
        turned[i].position.y += 0.25f;
        turned[i].rotation.w *= 1.5f; /* not unit: the store normalizes it */
    }
    host_jobs *pool = threads > 1 ? host_jobs_start(threads) : NULL;
    c->f.w->jobs = pool;
    memset((void *)(uintptr_t)world, 0xff, n * sizeof *world); /* poisoned first */
    assert_int_equal(c->tf->set_local_many(c->tf->self, ents, turned, n, NULL), ECS_OK);
    memcpy(out, world, n * sizeof *out);
    c->f.w->jobs = NULL;
    host_jobs_stop(pool);
    assert_int_equal(c->tf->set_local_many(c->tf->self, ents, old, n, NULL), ECS_OK);
    free(ents);
    free(old);
    free(turned);
}

static void check_pass_on_threads(tctx *c, bool interleaved)
{
    const size_t n = FOREST_TREES * FOREST_NODES;
    ecs_entity *ents = malloc(n * sizeof *ents);
    ecs_mat4 *one = malloc(n * sizeof *one), *many = malloc(n * sizeof *many);
    assert_true(ents && one && many);
    forest(c, interleaved, ents);
    pass_with(c, 1, one);
    static const uint32_t threads[] = {2, 3, 64};
    for (size_t k = 0; k < 3; k++) {
        memset(many, 0, n * sizeof *many);
        pass_with(c, threads[k], many);
        if (memcmp(one, many, n * sizeof *one) != 0)
            fail_msg("%s trees, %u threads: world matrices differ from one thread's",
                     interleaved ? "interleaved" : "consecutive", threads[k]);
    }
    run_with(c, 1, one);
    for (size_t k = 0; k < 3; k++) {
        memset(many, 0, n * sizeof *many);
        run_with(c, threads[k], many);
        if (memcmp(one, many, n * sizeof *one) != 0)
            fail_msg("%s trees, set_local_many, %u threads: world matrices differ from one "
                     "thread's",
                     interleaved ? "interleaved" : "consecutive", threads[k]);
    }
    free(ents);
    free(one);
    free(many);
}

/* The world pass on job threads gives one thread's matrices bit for bit (the W6 checksum
 * is over them): trees made one after the other (segments of whole trees), and trees
 * made interleaved (every segment meets parents before it: the pass finishes on one
 * thread from the first such instance). */
static void Transform_world_pass_on_job_threads_equals_one_thread(void **state)
{
    check_pass_on_threads(*state, false);
}

static void Transform_world_pass_on_job_threads_with_interleaved_trees(void **state)
{
    check_pass_on_threads(*state, true);
}

/* Two transforms (a root r and its child): the start of both reserve tests. */
static ecs_entity two_transforms(tctx *c)
{
    ecs_entity r = add(c, mk(1, 2, 3, 0, 0, S45, S45, 2, 1, 2), ecs_entity_null());
    add(c, mk(0, 1, 0, 0.5f, 0.5f, 0.5f, 0.5f, 1, 1, 3), r);
    return r;
}

/* Add transforms 2..n-1 (every other one under r) into the room made for them: the dense
 * arrays, at *ents and *world before, do not move. */
static void fill_room(tctx *c, uint32_t n, ecs_entity r, const ecs_entity *ents,
                      const ecs_mat4 *world)
{
    const ecs_entity *ents2;
    const ecs_mat4 *world2;
    for (uint32_t i = 2; i < n; i++)
        add(c, mk((float)i, 0, 0, 0, 0, 0, 1, 1, 1, 1), i % 2 ? r : ecs_entity_null());
    assert_int_equal(c->tf->instances(c->tf->self, &ents2, &world2), n);
    assert_ptr_equal(ents2, ents); /* no reallocation while filling the room */
    assert_ptr_equal(world2, world);
}

/* reserve(n): adding up to n moves nothing (the dense arrays stay where they are), what is
 * there keeps its values, a count at or below the room changes nothing, and a count beyond
 * the entity limit (or no state) is refused. */
static void Transform_reserve_makes_room_that_adding_then_fills_in_place(void **state)
{
    tctx *c = *state;
    enum { N = 3000 };
    assert_true(c->tf->struct_size >= offsetof(ecs_transform_api, reserve) + sizeof c->tf->reserve);
    ecs_entity r = two_transforms(c);
    snapshot before, after;
    snap(c, &before);
    assert_int_equal(c->tf->reserve(c->tf->self, N), ECS_OK);
    snap(c, &after);
    assert_memory_equal(&after, &before, sizeof after); /* kept bit for bit */
    const ecs_entity *ents, *ents2;
    const ecs_mat4 *world, *world2;
    assert_int_equal(c->tf->instances(c->tf->self, &ents, &world), 2);
    fill_room(c, N, r, ents, world);
    assert_int_equal(c->tf->reserve(c->tf->self, 10), ECS_OK); /* below the count: nothing */
    assert_int_equal(c->tf->reserve(c->tf->self, ECS_ENTITY_INDEX_MASK + 1u),
                     ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(c->tf->reserve(NULL, 10), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(c->tf->instances(c->tf->self, &ents2, &world2), N);
    assert_ptr_equal(world2, world);
    assert_memory_equal(world2, before.world, 2 * sizeof *world2); /* the first two kept */
    static ecs_mat4 copy[N];
    memcpy(copy, world2, sizeof copy);
    assert_int_equal(c->tf->recompute_all(c->tf->self), N); /* every world was right */
    assert_memory_equal(world2, copy, sizeof copy);
}

/* The manager's reserve hint (a scene load's count, before its reads) makes room for that
 * many more than it holds: adding them then moves nothing; a count past what 32 bits hold
 * changes nothing and crashes nothing. */
static void Transform_manager_reserve_hint_makes_room_for_more_than_held(void **state)
{
    tctx *c = *state;
    enum { N = 2500 };
    assert_non_null(c->mgr->reserve);
    ecs_entity r = two_transforms(c);
    c->mgr->reserve(c->mgr->state, N - 2);
    const ecs_entity *ents, *ents2;
    const ecs_mat4 *world, *world2;
    assert_int_equal(c->tf->instances(c->tf->self, &ents, &world), 2);
    fill_room(c, N, r, ents, world);
    c->mgr->reserve(c->mgr->state, UINT32_MAX); /* more than 32 bits hold with those held */
    c->mgr->reserve(c->mgr->state, 0);
    assert_int_equal(c->tf->instances(c->tf->self, &ents2, &world2), N);
    assert_ptr_equal(world2, world);
    assert_int_equal(c->tf->recompute_all(c->tf->self), N);
}

/* ---- random hierarchies against the reference ---- */

#define RMAX 4096 /* model slots (entities ever made by one run) */

typedef struct rmodel {
    tctx *c;
    uint64_t seed, rng;
    int step;
    int n; /* slots used */
    ecs_entity e[RMAX];
    bool has[RMAX];
    int parent[RMAX];                          /* slot, -1 for none */
    int live;                                  /* slots with a transform */
    int max_live, cycles, cascaded, max_depth; /* what the run went through */
} rmodel;

static uint64_t rnext(rmodel *m)
{
    uint64_t x = m->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    m->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static uint32_t rbelow(rmodel *m, uint32_t n)
{
    return (uint32_t)(((rnext(m) >> 32) * n) >> 32);
}

static float rfloat(rmodel *m, float lo, float hi)
{
    return lo + (hi - lo) * ((float)(rnext(m) >> 40) * (1.0f / 16777216.0f));
}

#define RCHECK(m, cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr,                                                                        \
                    "random hierarchy: seed %#" PRIx64 " (TRANSFORM_SEED=%" PRIu64 "), step %d: ", \
                    (m)->seed, (m)->seed, (m)->step);                                              \
            fail_msg(__VA_ARGS__);                                                                 \
        }                                                                                          \
    } while (0)

static ecs_transform_local rlocal(rmodel *m)
{
    ecs_transform_local l;
    l.position = ecs_vec3_make(rfloat(m, -3, 3), rfloat(m, -3, 3), rfloat(m, -3, 3));
    l.rotation.x = rfloat(m, -1, 1), l.rotation.y = rfloat(m, -1, 1);
    l.rotation.z = rfloat(m, -1, 1), l.rotation.w = rfloat(m, -1, 1); /* not unit: normalized */
    if (rbelow(m, 4) == 0) /* sometimes uniform scale, sometimes not */
        l.scale =
            ecs_vec3_make(rfloat(m, 0.5f, 1.5f), rfloat(m, 0.5f, 1.5f), rfloat(m, 0.5f, 1.5f));
    else
        l.scale.x = l.scale.y = l.scale.z = rfloat(m, 0.6f, 1.4f);
    return l;
}

/* A random slot with a transform, or -1. */
static int rpick(rmodel *m)
{
    if (m->live == 0) return -1;
    for (;;) {
        int s = (int)rbelow(m, (uint32_t)m->n);
        if (m->has[s]) return s;
    }
}

static bool rdescends(const rmodel *m, int s, int anc)
{
    for (int x = s; x >= 0; x = m->parent[x])
        if (x == anc) return true;
    return false;
}

static void rop_add(rmodel *m)
{
    if (m->n == RMAX) return;
    int s = m->n++, p = rbelow(m, 4) == 0 ? -1 : rpick(m);
    m->e[s] = new_entity(m->c);
    ecs_transform_local l = rlocal(m);
    ecs_status st = m->c->tf->add(m->c->tf->self, m->e[s], &l, p < 0 ? ecs_entity_null() : m->e[p]);
    RCHECK(m, st == ECS_OK, "add: %s", ecs_status_text(st));
    m->has[s] = true;
    m->parent[s] = p;
    m->live++;
}

static void rop_set_local(rmodel *m)
{
    int s = rpick(m);
    if (s < 0) return;
    ecs_transform_local l = rlocal(m);
    RCHECK(m, m->c->tf->set_local(m->c->tf->self, m->e[s], &l) == ECS_OK, "set_local");
}

static void rop_set_local_many(rmodel *m)
{
    ecs_entity es[12];
    ecs_transform_local ls[12], before[12];
    uint32_t n = 1 + rbelow(m, 12), bad = 0;
    if (m->live == 0) return;
    for (uint32_t k = 0; k < n; k++) {
        es[k] = m->e[rpick(m)];
        ls[k] = rlocal(m);
        before[k] = local_of(m->c, es[k]);
    }
    bool poison = rbelow(m, 5) == 0;
    uint32_t at = rbelow(m, n);
    if (poison) ls[at].scale.y = INFINITY;
    ecs_status st = m->c->tf->set_local_many(m->c->tf->self, es, ls, n, &bad);
    if (!poison) {
        RCHECK(m, st == ECS_OK, "set_local_many: %s", ecs_status_text(st));
        return;
    }
    RCHECK(m, st == ECS_ERR_BAD_VALUE && bad == at, "set_local_many with a bad entry %u: %s, %u",
           at, ecs_status_text(st), bad);
    for (uint32_t k = 0; k < n; k++) {
        ecs_transform_local now = local_of(m->c, es[k]);
        RCHECK(m, memcmp(&now, &before[k], sizeof now) == 0, "a refused batch changed a local");
    }
}

static void rop_set_parent(rmodel *m)
{
    int s = rpick(m), p = rbelow(m, 6) == 0 ? -1 : rpick(m);
    if (s < 0) return;
    bool cycle = p >= 0 && rdescends(m, p, s);
    ecs_status st =
        m->c->tf->set_parent(m->c->tf->self, m->e[s], p < 0 ? ecs_entity_null() : m->e[p]);
    RCHECK(m, st == (cycle ? ECS_ERR_CYCLE : ECS_OK), "set_parent(%d, %d): %s", s, p,
           ecs_status_text(st));
    m->cycles += cycle;
    if (!cycle) m->parent[s] = p;
}

static void rop_remove(rmodel *m)
{
    int s = rpick(m);
    if (s < 0) return;
    RCHECK(m, m->c->tf->remove(m->c->tf->self, m->e[s]) == ECS_OK, "remove");
    for (int k = 0; k < m->n; k++)
        if (m->has[k] && m->parent[k] == s) m->parent[k] = -1;
    m->has[s] = false;
    m->live--;
}

static void rop_destroy(rmodel *m)
{
    int s = rpick(m);
    if (s < 0) return;
    RCHECK(m, host_entity_destroy(m->c->f.w->entities, m->e[s]) == ECS_OK, "destroy");
    if (rbelow(m, 3) == 0) { /* and an entity without a transform in the same frame */
        ecs_entity bare = new_entity(m->c);
        host_entity_destroy(m->c->f.w->entities, bare);
    }
    fixture_frames(&m->c->f, 1);
    bool gone[RMAX] = {false};
    for (int k = 0; k < m->n; k++)
        if (m->has[k] && rdescends(m, k, s)) gone[k] = true;
    for (int k = 0; k < m->n; k++) {
        if (!gone[k]) continue;
        RCHECK(m, !host_entity_alive(m->c->f.w->entities, m->e[k]), "descendant %d alive", k);
        m->has[k] = false;
        m->live--;
        m->cascaded += k != s;
    }
}

/* Every transform agrees with the model and the reference; links agree both ways. */
static void rcheck(rmodel *m)
{
    const ecs_transform_api *tf = m->c->tf;
    RCHECK(m, (int)tf->count(tf->self) == m->live, "count %u, model %d", tf->count(tf->self),
           m->live);
    if (m->live > m->max_live) m->max_live = m->live;
    for (int s = 0; s < m->n; s++) {
        if (!m->has[s]) {
            RCHECK(m, !tf->has(tf->self, m->e[s]), "slot %d still has a transform", s);
            continue;
        }
        ecs_entity want = m->parent[s] < 0 ? ecs_entity_null() : m->e[m->parent[s]];
        RCHECK(m, ecs_entity_eq(tf->parent(tf->self, m->e[s]), want), "slot %d: wrong parent", s);
        int kids = 0;
        for (int k = 0; k < m->n; k++) kids += m->has[k] && m->parent[k] == s;
        ecs_entity prev = ecs_entity_null();
        for (ecs_entity k = tf->first_child(tf->self, m->e[s]); !ecs_entity_is_null(k);
             k = tf->next_sibling(tf->self, k), kids--) {
            RCHECK(m, ecs_entity_eq(tf->parent(tf->self, k), m->e[s]), "slot %d: a child's parent",
                   s);
            RCHECK(m, ecs_entity_eq(tf->prev_sibling(tf->self, k), prev), "slot %d: prev link", s);
            prev = k;
        }
        RCHECK(m, kids == 0, "slot %d: child list and model differ by %d", s, kids);
        int depth = 0;
        for (int x = m->parent[s]; x >= 0; x = m->parent[x]) depth++;
        if (depth > m->max_depth) m->max_depth = depth;
        ecs_mat4 w, ref = ref_world(m->c, m->e[s]);
        RCHECK(m, tf->get_world(tf->self, m->e[s], &w) == ECS_OK, "slot %d: get_world", s);
        double err = mat_err(&w, &ref);
        RCHECK(m, err <= 1e-5, "slot %d: world differs from the reference by %g", s, err);
    }
    char why[200];
    RCHECK(m, parents_first(m->c, why, sizeof why), "%s", why);
}

static void run_random(tctx *c, uint64_t seed, int steps)
{
    rmodel *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->c = c;
    m->seed = seed;
    m->rng = seed ? seed : 1;
    for (m->step = 0; m->step < steps; m->step++) {
        uint32_t op = rbelow(m, 100);
        int cap = 120 + (int)(m->seed % 200); /* keep the trees a size that changes often */
        if (op < 30)
            m->live < cap ? rop_add(m) : rop_remove(m);
        else if (op < 45)
            rop_set_local(m);
        else if (op < 52)
            rop_set_local_many(m);
        else if (op < 75)
            rop_set_parent(m);
        else if (op < 85)
            rop_remove(m);
        else if (op < 93)
            rop_destroy(m);
        else
            fixture_frames(&c->f, 1);
        if (m->step % 3 == 0 || m->step == steps - 1) rcheck(m);
        if (m->n == RMAX) break; /* out of model slots: enough */
    }
    fprintf(stderr,
            "random hierarchies: seed %#" PRIx64 ": %d steps, up to %d transforms %d deep, "
            "%d cycles refused, %d destroyed by a cascade\n",
            seed, m->step, m->max_live, m->max_depth + 1, m->cycles, m->cascaded);
    free(m);
}

static void Transform_random_hierarchies_match_the_reference(void **state)
{
    tctx *c = *state;
    const char *env = getenv("TRANSFORM_SEED");
    if (env) {
        run_random(c, strtoull(env, NULL, 0), 6000);
        return;
    }
    static const uint64_t seeds[] = {0x1234567u, 0xC0FFEEu, 0xBADC0DEu};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        run_random(c, seeds[k], 4000);
        fixture_close(&c->f); /* a fresh world for the next seed */
        const char *const paths[] = {TRANSFORM_SO, NULL};
        assert_int_equal(fixture_open(&c->f, paths), 0);
        c->tf = fixture_api(&c->f, ECS_TRANSFORM_API_NAME);
        assert_non_null(c->tf);
    }
}

/* ---- scenes: write_component / read_component ---- */

static ecs_status load_json(tctx *c, ecs_entity e, const char *text)
{
    return fixture_load_json(c->mgr, e, text);
}

static void Transform_json_round_trip_is_exact(void **state)
{
    tctx *c = *state;
    ecs_transform_local l =
        mk(0.1f, -1e-7f, 123456.7f, 0.1f, 0.2f, 0.3f, 0.9273618f, 3, 0.3f, 1e-3f);
    ecs_entity a = add(c, l, ecs_entity_null());
    ecs_entity b = add(c, ident(), a);
    l = local_of(c, a); /* as stored (normalized) */
    cJSON *j = NULL;
    assert_int_equal(fixture_save_json(c->mgr, a, &j), ECS_OK);
    assert_non_null(j);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    ecs_entity a2 = new_entity(c);
    assert_int_equal(load_json(c, a2, text), ECS_OK);
    free(text);
    ecs_transform_local l2 = local_of(c, a2);
    assert_memory_equal(&l2, &l, sizeof l); /* bit for bit through text */
    ecs_mat4 w = world_of(c, a), w2 = world_of(c, a2);
    assert_memory_equal(&w2, &w, sizeof w);

    /* the parent goes through the writer's entity(): its scene id (here "ref<index>") */
    assert_int_equal(fixture_save_json(c->mgr, b, &j), ECS_OK);
    char ref[32];
    snprintf(ref, sizeof ref, "ref%u", ecs_entity_index(a));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "parent")), ref);
    assert_non_null(cJSON_GetObjectItem(j, "rotation"));
    cJSON_Delete(j);
    /* none, dead, NULL */
    ecs_entity bare = new_entity(c), dead = dead_entity(c);
    j = (cJSON *)1;
    assert_int_equal(fixture_save_json(c->mgr, bare, &j), ECS_OK);
    assert_null(j);
    assert_int_equal(fixture_save_json(c->mgr, dead, &j), ECS_ERR_STALE_ENTITY);
    assert_int_equal(fixture_save_json(c->mgr, a, NULL), ECS_ERR_INVALID_ARGUMENT);
}

static void Transform_json_missing_keys_are_identity(void **state)
{
    tctx *c = *state;
    ecs_entity e = new_entity(c), f = new_entity(c), g = new_entity(c);
    assert_int_equal(load_json(c, e, "{}"), ECS_OK);
    ecs_transform_local l = local_of(c, e), id = ident();
    assert_memory_equal(&l, &id, sizeof l);
    assert_int_equal(load_json(c, f, "{\"position\":[1,2,3],\"parent\":null}"), ECS_OK);
    l = local_of(c, f);
    assert_float_equal(l.position.z, 3, 0);
    assert_float_equal(l.scale.y, 1, 0);
    assert_true(ecs_entity_is_null(c->tf->parent(c->tf->self, f)));
    assert_int_equal(load_json(c, g, "{\"rotation\":[0,0,0,2]}"), ECS_OK); /* normalized */
    assert_float_equal(local_of(c, g).rotation.w, 1, 0);
    /* a second load replaces the transform (the inspector's edit) */
    assert_int_equal(load_json(c, e, "{\"position\":[4,5,6],\"parent\":null}"), ECS_OK);
    assert_float_equal(local_of(c, e).position.x, 4, 0);
    assert_float_equal(local_of(c, e).rotation.w, 1, 0);
    ecs_entity dead = dead_entity(c);
    assert_int_equal(load_json(c, dead, "{}"), ECS_ERR_STALE_ENTITY);
    assert_int_equal(load_json(c, g, NULL), ECS_ERR_INVALID_ARGUMENT);
}

static void Transform_json_bad_values_are_refused_naming_the_key(void **state)
{
    tctx *c = *state;
    static const struct {
        const char *json, *key;
        ecs_status want;
    } cases[] = {
        {"[1,2,3]", "expected an object", ECS_ERR_BAD_VALUE},
        {"{\"position\":\"here\"}", "expected an array of 3 finite numbers, found a string",
         ECS_ERR_BAD_VALUE},
        {"{\"position\":[1,2]}", "expected an array of 3 finite numbers, found 2 elements",
         ECS_ERR_BAD_VALUE},
        {"{\"position\":[1,2,3,4]}", "found 4 elements", ECS_ERR_BAD_VALUE},
        {"{\"position\":[1,\"2\",3]}", "expected a finite number, found a string",
         ECS_ERR_BAD_VALUE},
        {"{\"position\":[1,2,1e39]}", "(float range), found 1e39", ECS_ERR_BAD_VALUE},
        {"{\"scale\":[1,1e400,1]}", "(float range), found 1e400", ECS_ERR_BAD_VALUE},
        {"{\"scale\":{\"x\":1}}", "expected an array of 3 finite numbers, found an object",
         ECS_ERR_BAD_VALUE},
        {"{\"rotation\":[0,0,1]}", "expected an array of 4 finite numbers, found 3 elements",
         ECS_ERR_BAD_VALUE},
        {"{\"rotation\":[0,0,0,0]}", "expected a non-zero quaternion", ECS_ERR_BAD_VALUE},
        {"{\"rotation\":[0,null,0,1]}", "expected a finite number, found null", ECS_ERR_BAD_VALUE},
        {"{\"parent\":5}", "expected a scene id (a string) or null, found a number",
         ECS_ERR_BAD_VALUE},
        /* an id the host cannot resolve fails the reader (fixture_load_json knows none) */
        {"{\"parent\":\"root\"}", "reference to an unknown id 'root'", ECS_ERR_BAD_VALUE},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ecs_entity e = new_entity(c);
        capture cap;
        capture_begin(&cap);
        ecs_status s = load_json(c, e, cases[k].json);
        char *log = capture_end(&cap);
        if (s != cases[k].want || !strstr(log, cases[k].key))
            fail_msg("%s: got %s, log \"%s\"; wanted %s and \"%s\"", cases[k].json,
                     ecs_status_text(s), log, ecs_status_text(cases[k].want), cases[k].key);
        free(log);
        assert_false(c->tf->has(c->tf->self, e)); /* left without a transform */
    }
    assert_int_equal(c->tf->count(c->tf->self), 0);
    ecs_entity e = new_entity(c); /* unknown keys: a warning, not an error */
    capture cap;
    capture_begin(&cap);
    assert_int_equal(load_json(c, e, "{\"colour\":1}"), ECS_OK);
    char *log = capture_end(&cap);
    assert_non_null(strstr(log, "colour"));
    free(log);
}

/* ---- scenes through the host: parents by scene id, in any order ---- */

/* Write text to a new file in a new folder; the path into path. */
static void scene_file(char *path, size_t size, const char *text)
{
    char dir[64] = "/tmp/ecs-tf-scene-XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(path, size, "%s/scene.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void scene_file_remove(const char *path)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s", path);
    unlink(path);
    *strrchr(dir, '/') = 0;
    rmdir(dir);
}

/* The live entity whose local position x is x (a tag for the scene's entities). */
static ecs_entity tagged(tctx *c, float x)
{
    const ecs_entity *e;
    const ecs_mat4 *w;
    uint32_t n = c->tf->instances(c->tf->self, &e, &w);
    for (uint32_t i = 0; i < n; i++)
        if (local_of(c, e[i]).position.x == x) return e[i];
    fail_msg("no transform tagged %g", x);
    return ecs_entity_null();
}

/* Children listed before their parents: the parent gets a placeholder transform that its
 * own component fills in later. "parent" may come before or after the other keys. Saving
 * writes the parents by scene id. */
static void Transform_scene_load_resolves_parents_in_any_order(void **state)
{
    tctx *c = *state;
    char path[256];
    scene_file(path, sizeof path,
               "{\"version\": 1, \"entities\": [\n"
               " {\"id\": \"grandchild\", \"transform\": {\"position\": [3, 0, 0], "
               "\"parent\": \"child\"}},\n"
               " {\"id\": \"child\", \"transform\": {\"parent\": \"root\", \"position\": "
               "[2, 0, 0], \"rotation\": [0, 0, 0.70710678, 0.70710678]}},\n"
               " {\"id\": \"root\", \"transform\": {\"position\": [1, 0, 0], "
               "\"scale\": [2, 2, 2]}},\n"
               " {\"id\": \"plain\", \"transform\": {\"position\": [4, 0, 0], "
               "\"parent\": null}}\n]}\n");
    assert_int_equal(host_scene_load(c->f.s->scene, path), ECS_OK);
    assert_int_equal(c->tf->count(c->tf->self), 4);
    ecs_entity root = tagged(c, 1), child = tagged(c, 2), grand = tagged(c, 3);
    assert_true(ecs_entity_eq(c->tf->parent(c->tf->self, grand), child));
    assert_true(ecs_entity_eq(c->tf->parent(c->tf->self, child), root));
    assert_true(ecs_entity_is_null(c->tf->parent(c->tf->self, root)));
    assert_float_equal(local_of(c, root).scale.y, 2, 0); /* the placeholder was filled in */
    assert_parents_first(c);
    ecs_mat4 w = world_of(c, grand), ref = ref_world(c, grand);
    assert_mat_near(&w, &ref, 1e-6);
    /* root (1,0,0) scale 2; child at 2*(2,0,0) turned 90 about z; grandchild at 2*Rz(3,0,0) */
    assert_vec3_near(ecs_mat4_point(&w, ecs_vec3_make(0, 0, 0)), 5, 6, 0, 1e-5);

    assert_int_equal(host_scene_save(c->f.s->scene, path), ECS_OK);
    cJSON *doc = NULL;
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    assert_non_null(doc = cJSON_Parse(text));
    int parents = 0;
    const cJSON *ents = cJSON_GetObjectItem(doc, "entities"), *x;
    cJSON_ArrayForEach(x, ents)
    {
        const cJSON *t = cJSON_GetObjectItem(x, "transform");
        const cJSON *p = cJSON_GetObjectItem(t, "parent");
        if (p) parents++, assert_true(cJSON_IsString(p));
    }
    assert_int_equal(parents, 2);
    cJSON_Delete(doc);

    /* and the saved file loads again into a second copy of the same hierarchy */
    assert_int_equal(host_scene_load(c->f.s->scene, path), ECS_OK);
    assert_int_equal(c->tf->count(c->tf->self), 8);
    assert_parents_first(c);
    scene_file_remove(path);
}

/* A parent that has no transform in the scene gets an identity one (a root). */
static void Transform_scene_parent_without_transform_gets_identity(void **state)
{
    tctx *c = *state;
    char path[256];
    scene_file(path, sizeof path,
               "{\"version\": 1, \"entities\": [\n"
               " {\"id\": \"kid\", \"transform\": {\"position\": [7, 0, 0], "
               "\"parent\": \"holder\"}},\n"
               " {\"id\": \"holder\"}\n]}\n");
    assert_int_equal(host_scene_load(c->f.s->scene, path), ECS_OK);
    assert_int_equal(c->tf->count(c->tf->self), 2);
    ecs_entity kid = tagged(c, 7), holder = c->tf->parent(c->tf->self, kid);
    assert_false(ecs_entity_is_null(holder));
    ecs_transform_local l = local_of(c, holder), id = ident();
    assert_memory_equal(&l, &id, sizeof l);
    assert_parents_first(c);
    scene_file_remove(path);
}

/* A parent cycle through scene ids is refused and the whole load undone. */
static void Transform_scene_parent_cycle_fails_the_load(void **state)
{
    tctx *c = *state;
    char path[256];
    scene_file(path, sizeof path,
               "{\"version\": 1, \"entities\": [\n"
               " {\"id\": \"a\", \"transform\": {\"parent\": \"b\"}},\n"
               " {\"id\": \"b\", \"transform\": {\"parent\": \"a\"}}\n]}\n");
    capture cap;
    capture_begin(&cap);
    ecs_status s = host_scene_load(c->f.s->scene, path);
    char *log = capture_end(&cap);
    assert_int_not_equal(s, ECS_OK);
    if (!strstr(log, "cycle")) fail_msg("the log does not say why: %s", log);
    free(log);
    fixture_frames(&c->f, 1); /* the undone entities are announced */
    assert_int_equal(c->tf->count(c->tf->self), 0);
    scene_file_remove(path);
}

/* ---- reload: the state handed over (a minimal fake host) ---- */

static uint8_t fake_generations[1u << ECS_ENTITY_INDEX_BITS];
static uint16_t fake_keys[1u << ECS_ENTITY_INDEX_BITS];
static ecs_frame_info fake_frame;
static long fake_blocks; /* live allocations */

typedef struct fake_host {
    ecs_host h;
    ecs_manager_desc mgr;
    int managers, apis;
    ecs_transform_api api;
} fake_host;

static fake_host *fake_of(const ecs_host *h)
{
    return (fake_host *)(uintptr_t)h;
}
static void *fake_alloc(const ecs_host *h, size_t n)
{
    (void)h;
    void *p = n ? malloc(n) : NULL;
    fake_blocks += p != NULL;
    return p;
}
static void *fake_realloc(const ecs_host *h, void *p, size_t n)
{
    (void)h;
    void *q = realloc(p, n);
    fake_blocks += q && !p;
    return q;
}
static void fake_free(const ecs_host *h, void *p)
{
    (void)h;
    fake_blocks -= p != NULL;
    free(p);
}
static ecs_status fake_register(const ecs_host *h, const ecs_manager_desc *d)
{
    fake_of(h)->mgr = *d;
    fake_of(h)->managers++;
    return ECS_OK;
}
static ecs_status fake_publish(const ecs_host *h, const char *name, uint32_t version,
                               const void *api, size_t size)
{
    assert_int_equal(version, 1);
    if (strcmp(name, ECS_TRANSFORM_API_NAME) != 0) { /* the SDK's: ecs.hierarchy, ecs.position */
        assert_true(!strcmp(name, "ecs.hierarchy") || !strcmp(name, "ecs.position"));
        return ECS_OK;
    }
    assert_int_equal(size, sizeof(ecs_transform_api));
    memcpy(&fake_of(h)->api, api, size);
    fake_of(h)->apis++;
    return ECS_OK;
}
static void fake_logv(const ecs_host *h, ecs_log_level l, const char *fmt, va_list ap)
{
    (void)h, (void)l;
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}
static void fake_log(const ecs_host *h, ecs_log_level l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fake_logv(h, l, fmt, ap);
    va_end(ap);
}

static void fake_scene_error(const ecs_host *h, const cJSON *at, const char *fmt, ...)
{
    va_list ap;
    (void)at;
    va_start(ap, fmt);
    fake_logv(h, ECS_LOG_ERROR, fmt, ap);
    va_end(ap);
}

static void fake_init(fake_host *f)
{
    memset(f, 0, sizeof *f);
    f->h.struct_size = sizeof f->h;
    f->h.abi_major = ECS_ABI_MAJOR;
    f->h.abi_minor = ECS_ABI_MINOR;
    f->h.generations = fake_generations;
    for (uint32_t i = 1; i < (1u << ECS_ENTITY_INDEX_BITS); i++) /* all live at generation 0 */
        fake_keys[i] = 256;
    f->h.alive_keys = fake_keys;
    f->h.frame = &fake_frame;
    f->h.register_manager = fake_register;
    f->h.api_publish = fake_publish;
    f->h.log = fake_log;
    f->h.logv = fake_logv;
    f->h.scene_error = fake_scene_error;
    f->h.alloc = fake_alloc;
    f->h.realloc = fake_realloc;
    f->h.free = fake_free;
    f->h.plugin_name = "transform";
}

static void Transform_reload_keeping_state_adopts_it(void **state)
{
    (void)state;
    void *dl = dlopen(TRANSFORM_SO, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(dl);
    union {
        void *obj;
        ecs_plugin_entry_fn fn;
    } entry; /* dlsym's object pointer as a function pointer, as the loader does */
    entry.obj = dlsym(dl, ECS_PLUGIN_ENTRY_NAME);
    assert_non_null(entry.obj);
    const ecs_plugin_desc *d = entry.fn();
    assert_string_equal(d->name, "transform");
    assert_int_equal(d->state_version, 2); /* layout 2: no dirty or flag bytes */
    assert_null(d->dependencies);
    fake_host *h1 = calloc(1, sizeof *h1), *h2 = calloc(1, sizeof *h2);
    assert_true(h1 && h2);
    fake_init(h1);
    fake_init(h2);
    ecs_load_args args = {sizeof args, NULL};
    void *st = NULL, *st2 = NULL;
    assert_int_equal(d->load(&h1->h, &args, &st), ECS_OK);
    assert_int_equal(h1->managers, 1);
    assert_string_equal(h1->mgr.name, "transform");
    assert_ptr_equal(h1->api.self, st);
    ecs_entity es[300];
    for (uint32_t i = 0; i < 300; i++) { /* grows the storage a few times */
        es[i] = ecs_entity_make(i + 1, 0);
        ecs_transform_local l = mk((float)i, 1, 0, 0, 0, 0, 1, 1, 1, 1);
        assert_int_equal(h1->api.add(st, es[i], &l, i ? es[(i - 1) / 2] : ecs_entity_null()),
                         ECS_OK);
    }
    ecs_mat4 before, after;
    assert_int_equal(h1->api.get_world(st, es[299], &before), ECS_OK);
    long blocks = fake_blocks;

    d->unload(&h1->h, st, ECS_UNLOAD_RELOAD_KEEP_STATE);
    assert_int_equal(fake_blocks, blocks); /* nothing freed */
    args.previous_state = st;
    assert_int_equal(d->load(&h2->h, &args, &st2), ECS_OK);
    assert_ptr_equal(st2, st);
    assert_ptr_equal(h2->mgr.state, st);
    assert_ptr_equal(h2->api.self, st);
    assert_int_equal(h2->mgr.count(st), 300);
    assert_int_equal(h2->api.get_world(st, es[299], &after), ECS_OK);
    assert_memory_equal(&after, &before, sizeof after);
    ecs_entity more = ecs_entity_make(1000, 0);
    assert_int_equal(h2->api.add(st, more, NULL, es[7]), ECS_OK); /* works on */
    assert_int_equal(h2->api.set_parent(st, es[2], more), ECS_OK);

    d->unload(&h2->h, st, ECS_UNLOAD_SHUTDOWN);
    assert_int_equal(fake_blocks, 0);

    args.previous_state = NULL; /* a migration frees everything too */
    assert_int_equal(d->load(&h1->h, &args, &st), ECS_OK);
    assert_int_equal(h1->api.add(st, es[0], NULL, ecs_entity_null()), ECS_OK);
    d->unload(&h1->h, st, ECS_UNLOAD_RELOAD_MIGRATED);
    assert_int_equal(fake_blocks, 0);
    free(h1);
    free(h2);
    dlclose(dl);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    host_log_set_level(ECS_LOG_WARN);
    const struct CMUnitTest tests[] = {
        TEST(Transform_plugin_registers_manager_and_api),
        TEST(Transform_add_checks_its_arguments),
        TEST(Transform_get_and_set_local_check_their_arguments),
        TEST(Transform_hierarchy_links_of_missing_entities_are_null),
        TEST(Transform_world_is_parent_world_times_local_trs),
        TEST(Transform_set_local_updates_the_whole_subtree_at_once),
        TEST(Transform_set_local_many_recomputes_all_or_nothing),
        TEST(Transform_set_local_many_in_dense_order_updates_what_follows),
        TEST(Transform_set_parent_and_detach_relink_and_recompute),
        TEST(Transform_reparent_under_a_later_parent_keeps_parents_first),
        TEST(Transform_cycles_are_refused_and_change_nothing),
        TEST(Transform_remove_makes_children_roots_keeping_their_world),
        TEST(Transform_destroying_a_parent_destroys_its_descendants),
        TEST(Transform_recompute_all_reproduces_every_world),
        TEST(Transform_world_pass_on_job_threads_equals_one_thread),
        TEST(Transform_world_pass_on_job_threads_with_interleaved_trees),
        TEST(Transform_reserve_makes_room_that_adding_then_fills_in_place),
        TEST(Transform_manager_reserve_hint_makes_room_for_more_than_held),
        TEST(Transform_random_hierarchies_match_the_reference),
        TEST(Transform_json_round_trip_is_exact),
        TEST(Transform_json_missing_keys_are_identity),
        TEST(Transform_json_bad_values_are_refused_naming_the_key),
        TEST(Transform_scene_load_resolves_parents_in_any_order),
        TEST(Transform_scene_parent_without_transform_gets_identity),
        TEST(Transform_scene_parent_cycle_fails_the_load),
        cmocka_unit_test(Transform_reload_keeping_state_adopts_it),
    };
    return cmocka_run_group_tests_name("transform", tests, NULL, NULL);
}
