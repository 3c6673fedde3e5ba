/* SPDX-License-Identifier: MIT */
/* test_mesh.c: cmocka tests of the mesh plugin (plugins/mesh): the API "ecs.mesh" through
 * the real mesh.so and transform.so loaded by the real loader (fixture.h); per-entity
 * order under removals; destroyed entities; world bounds against a reference that
 * transforms the 8 corners of each box, for random transforms and hierarchies; JSON
 * save/load through the manager, with the log lines of rejected values; the plugin's
 * life through a fake host (plugins_fake/mini_host.h); and the real ecs-host binary
 * running transform, debug_name, mesh and a test plugin that drives them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"
#include "mesh_api.h"
#include "plugins_fake/mini_host.h"
#include "transform_api.h"

#if !defined(MESH_SO) || !defined(TRANSFORM_SO) || !defined(DEBUG_NAME_SO) ||                      \
    !defined(SCENE_DRIVER_SO) || !defined(ECS_HOST_PATH)
#error "MESH_SO, TRANSFORM_SO, DEBUG_NAME_SO, SCENE_DRIVER_SO and ECS_HOST_PATH must be defined"
#endif

#define TOLERANCE 1e-5f /* world bounds vs the 8-corner reference, relative to 1 + |value| */

/* ---- Fixture: mesh + transform in a host_world ----------------------------------------- */

typedef struct mesh_test {
    fixture f;
    const ecs_mesh_api *mesh;
    const ecs_transform_api *tf;
    const ecs_manager_desc *manager;
} mesh_test;

static const ecs_manager_desc *manager_named(host_world *w, const char *name)
{
    for (size_t i = 0; i < w->manager_count; i++)
        if (strcmp(w->managers[i]->name, name) == 0) return &w->managers[i]->desc;
    return NULL;
}

static int setup(void **state)
{
    mesh_test *t = calloc(1, sizeof *t);
    const char *const paths[] = {MESH_SO, TRANSFORM_SO, NULL};
    *state = t;
    if (!t || fixture_open(&t->f, paths) != 0) return -1;
    t->mesh = fixture_api(&t->f, ECS_MESH_API_NAME);
    t->tf = fixture_api(&t->f, ECS_TRANSFORM_API_NAME);
    t->manager = manager_named(t->f.w, "mesh");
    return t->mesh && t->tf && t->manager ? 0 : -1;
}

static int teardown(void **state)
{
    mesh_test *t = *state;
    if (t) fixture_close(&t->f);
    free(t);
    return 0;
}

static ecs_entity new_entity(mesh_test *t)
{
    ecs_entity e;
    assert_int_equal(host_entity_create(t->f.w->entities, &e), ECS_OK);
    return e;
}

static void destroy(mesh_test *t, ecs_entity e)
{
    assert_int_equal(host_entity_destroy(t->f.w->entities, e), ECS_OK);
}

static ecs_aabb box(float x0, float y0, float z0, float x1, float y1, float z1)
{
    ecs_aabb b = {{x0, y0, z0}, {x1, y1, z1}};
    return b;
}

static ecs_mesh_desc desc_of(const char *mesh, const char *material)
{
    ecs_mesh_desc d = {mesh, material, true, box(-1, -2, -3, 1, 2, 3)};
    return d;
}

static ecs_status add(mesh_test *t, ecs_entity e, const char *mesh, uint32_t *k)
{
    ecs_mesh_desc d = desc_of(mesh, "mat");
    return t->mesh->add(t->mesh->self, e, &d, k);
}

static uint32_t count_of(mesh_test *t, ecs_entity e)
{
    return t->mesh->count_of(t->mesh->self, e);
}

static uint32_t total(mesh_test *t)
{
    return t->mesh->count(t->mesh->self);
}

/* The mesh name of e's mesh k, or "(none)". */
static const char *mesh_name(mesh_test *t, ecs_entity e, uint32_t k)
{
    ecs_mesh_info info;
    return t->mesh->get(t->mesh->self, e, k, &info) == ECS_OK ? info.mesh : "(none)";
}

static void assert_box_equal(ecs_aabb a, ecs_aabb b)
{
    assert_true(memcmp(&a, &b, sizeof a) == 0);
}

/* ---- Capturing the host's log (stderr) around a call ------------------------------------ */

typedef struct capture {
    int saved, fd;
    char path[64];
} capture;

static void capture_begin(capture *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/ecs-mesh-log-XXXXXX");
    c->fd = mkstemp(c->path);
    assert_true(c->fd >= 0);
    fflush(stderr);
    c->saved = dup(STDERR_FILENO);
    dup2(c->fd, STDERR_FILENO);
}

/* Stop capturing; the captured text (malloc'd), also echoed to stderr. */
static char *capture_end(capture *c)
{
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    close(c->fd);
    char *text = harness_read_file(c->path, NULL);
    unlink(c->path);
    assert_non_null(text);
    fputs(text, stderr);
    return text;
}

/* ---- add / get --------------------------------------------------------------------------- */

static void Mesh_add_then_get_returns_each_mesh_in_order(void **state)
{
    mesh_test *t = *state;
    ecs_entity e = new_entity(t), other = new_entity(t);
    ecs_mesh_desc a = {"crate.mesh", "wood", true, box(-1, -1, -1, 1, 1, 1)};
    ecs_mesh_desc b = {"lid.mesh", NULL, false, box(0, 0, 0, 2, 0.5f, 2)};
    ecs_mesh_desc c = {"handle.mesh", "", true, box(1, 1, 1, 1, 1, 1)}; /* a flat box is fine */
    uint32_t k = 99;
    assert_int_equal(t->mesh->add(t->mesh->self, e, &a, &k), ECS_OK);
    assert_int_equal(k, 0);
    assert_int_equal(t->mesh->add(t->mesh->self, other, &a, &k), ECS_OK);
    assert_int_equal(k, 0);
    assert_int_equal(t->mesh->add(t->mesh->self, e, &b, &k), ECS_OK);
    assert_int_equal(k, 1);
    assert_int_equal(t->mesh->add(t->mesh->self, e, &c, NULL), ECS_OK);
    assert_int_equal(count_of(t, e), 3);
    assert_int_equal(count_of(t, other), 1);
    assert_int_equal(total(t), 4);
    assert_int_equal(t->manager->count(t->manager->state), 4);
    ecs_mesh_info info;
    assert_int_equal(t->mesh->get(t->mesh->self, e, 0, &info), ECS_OK);
    assert_string_equal(info.mesh, "crate.mesh");
    assert_string_equal(info.material, "wood");
    assert_true(info.visible);
    assert_box_equal(info.local_bounds, a.local_bounds);
    assert_box_equal(info.world_bounds, a.local_bounds); /* no transform: the identity */
    assert_int_equal(t->mesh->get(t->mesh->self, e, 1, &info), ECS_OK);
    assert_string_equal(info.mesh, "lid.mesh");
    assert_string_equal(info.material, ""); /* none */
    assert_false(info.visible);
    assert_box_equal(info.local_bounds, b.local_bounds);
    assert_int_equal(t->mesh->get(t->mesh->self, e, 2, &info), ECS_OK);
    assert_string_equal(info.mesh, "handle.mesh");
    assert_string_equal(info.material, "");
    assert_int_equal(t->mesh->get(t->mesh->self, e, 3, &info), ECS_ERR_NOT_FOUND);
    assert_int_equal(t->mesh->get(t->mesh->self, e, 0, NULL), ECS_ERR_INVALID_ARGUMENT);
}

static void Mesh_add_copies_the_names(void **state)
{
    mesh_test *t = *state;
    ecs_entity e = new_entity(t);
    char mesh[32] = "rock.mesh", material[32] = "stone";
    ecs_mesh_desc d = {mesh, material, true, box(0, 0, 0, 1, 1, 1)};
    assert_int_equal(t->mesh->add(t->mesh->self, e, &d, NULL), ECS_OK);
    strcpy(mesh, "XXXX");
    strcpy(material, "YYYY");
    ecs_mesh_info info;
    assert_int_equal(t->mesh->get(t->mesh->self, e, 0, &info), ECS_OK);
    assert_string_equal(info.mesh, "rock.mesh");
    assert_string_equal(info.material, "stone");
}

static void Mesh_add_refuses_bad_arguments(void **state)
{
    mesh_test *t = *state;
    ecs_entity e = new_entity(t), dead = new_entity(t);
    destroy(t, dead);
    assert_int_equal(add(t, e, "keep.mesh", NULL), ECS_OK);
    char too_long[ECS_MESH_NAME_MAX + 1];
    memset(too_long, 'm', ECS_MESH_NAME_MAX);
    too_long[ECS_MESH_NAME_MAX] = '\0';
    ecs_mesh_desc good = desc_of("ok.mesh", "ok");
    struct {
        ecs_mesh_desc d;
        ecs_status want;
    } bad[] = {
        {desc_of(NULL, "m"), ECS_ERR_INVALID_ARGUMENT},
        {desc_of("", "m"), ECS_ERR_BAD_VALUE},
        {desc_of(too_long, "m"), ECS_ERR_BAD_VALUE},
        {desc_of("ok.mesh", too_long), ECS_ERR_BAD_VALUE},
        {desc_of("line\nbreak", "m"), ECS_ERR_BAD_VALUE},
        {desc_of("ok.mesh", "tab\t"), ECS_ERR_BAD_VALUE},
        {desc_of("bad\xff", "m"), ECS_ERR_BAD_VALUE},
        {desc_of("ok.mesh", "c1\xc2\x9b"), ECS_ERR_BAD_VALUE},
        {good, ECS_ERR_BAD_VALUE}, /* bounds, set below */
        {good, ECS_ERR_BAD_VALUE},
        {good, ECS_ERR_BAD_VALUE},
        {good, ECS_ERR_BAD_VALUE},
    };
    size_t n = sizeof bad / sizeof bad[0];
    bad[n - 4].d.local_bounds.min.x = NAN;
    bad[n - 3].d.local_bounds.max.z = INFINITY;
    bad[n - 2].d.local_bounds.min.y = 5; /* above max.y = 2 */
    bad[n - 1].d.local_bounds = box(0, 0, 0, -1e-6f, 0, 0);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 77;
        if (t->mesh->add(t->mesh->self, e, &bad[i].d, &k) != bad[i].want) fail_msg("case %zu", i);
        if (k != 77) fail_msg("case %zu: *k written on error", i);
    }
    assert_int_equal(t->mesh->add(t->mesh->self, e, NULL, NULL), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(t->mesh->add(t->mesh->self, dead, &good, NULL), ECS_ERR_STALE_ENTITY);
    assert_int_equal(t->mesh->add(t->mesh->self, ecs_entity_null(), &good, NULL),
                     ECS_ERR_STALE_ENTITY);
    assert_int_equal(count_of(t, e), 1);
    assert_int_equal(count_of(t, dead), 0);
    assert_int_equal(total(t), 1);
    assert_string_equal(mesh_name(t, e, 0), "keep.mesh");
    char longest[ECS_MESH_NAME_MAX]; /* 255 bytes is the longest accepted */
    memset(longest, 'L', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    assert_int_equal(add(t, e, longest, NULL), ECS_OK);
    assert_string_equal(mesh_name(t, e, 1), longest);
}

/* ---- remove / remove_all / set_visible --------------------------------------------------- */

static void Mesh_remove_middle_keeps_the_order_of_the_others(void **state)
{
    mesh_test *t = *state;
    ecs_entity e = new_entity(t), before = new_entity(t), after = new_entity(t);
    assert_int_equal(add(t, before, "b0", NULL), ECS_OK);
    const char *names[] = {"m0", "m1", "m2", "m3", "m4"};
    for (int i = 0; i < 5; i++) assert_int_equal(add(t, e, names[i], NULL), ECS_OK);
    assert_int_equal(add(t, after, "a0", NULL), ECS_OK); /* the last instance: moves on removal */
    assert_int_equal(t->mesh->remove(t->mesh->self, e, 2), ECS_OK);
    const char *want[] = {"m0", "m1", "m3", "m4"};
    assert_int_equal(count_of(t, e), 4);
    for (uint32_t k = 0; k < 4; k++) assert_string_equal(mesh_name(t, e, k), want[k]);
    assert_int_equal(t->mesh->remove(t->mesh->self, e, 0), ECS_OK); /* the head */
    assert_int_equal(t->mesh->remove(t->mesh->self, e, 2), ECS_OK); /* the tail */
    assert_int_equal(count_of(t, e), 2);
    assert_string_equal(mesh_name(t, e, 0), "m1");
    assert_string_equal(mesh_name(t, e, 1), "m3");
    uint32_t k;
    assert_int_equal(add(t, e, "m5", &k), ECS_OK); /* appended after the new tail */
    assert_int_equal(k, 2);
    assert_string_equal(mesh_name(t, e, 2), "m5");
    assert_string_equal(mesh_name(t, before, 0), "b0");
    assert_string_equal(mesh_name(t, after, 0), "a0");
    assert_int_equal(total(t), 5);
}

static void Mesh_remove_refuses_bad_position_and_dead_entity(void **state)
{
    mesh_test *t = *state;
    ecs_entity e = new_entity(t), bare = new_entity(t), dead = new_entity(t);
    assert_int_equal(add(t, e, "m0", NULL), ECS_OK);
    assert_int_equal(add(t, dead, "d0", NULL), ECS_OK);
    destroy(t, dead);
    assert_int_equal(t->mesh->remove(t->mesh->self, e, 1), ECS_ERR_NOT_FOUND);
    assert_int_equal(t->mesh->remove(t->mesh->self, e, UINT32_MAX), ECS_ERR_NOT_FOUND);
    assert_int_equal(t->mesh->remove(t->mesh->self, bare, 0), ECS_ERR_NOT_FOUND);
    assert_int_equal(t->mesh->remove(t->mesh->self, dead, 0), ECS_ERR_STALE_ENTITY);
    assert_int_equal(t->mesh->remove(t->mesh->self, ecs_entity_null(), 0), ECS_ERR_STALE_ENTITY);
    assert_int_equal(t->mesh->remove_all(t->mesh->self, dead), ECS_ERR_STALE_ENTITY);
    assert_int_equal(count_of(t, e), 1);
    assert_int_equal(count_of(t, dead), 0); /* dead at once, even before the announcement */
    assert_int_equal(total(t), 2);
}

static void Mesh_remove_all_removes_every_mesh_of_one_entity(void **state)
{
    mesh_test *t = *state;
    ecs_entity a = new_entity(t), b = new_entity(t), bare = new_entity(t);
    for (int i = 0; i < 4; i++) { /* interleaved, so the instances of a and b alternate */
        char name[32];
        snprintf(name, sizeof name, "a%d", i);
        assert_int_equal(add(t, a, name, NULL), ECS_OK);
        snprintf(name, sizeof name, "b%d", i);
        assert_int_equal(add(t, b, name, NULL), ECS_OK);
    }
    assert_int_equal(t->mesh->remove_all(t->mesh->self, a), ECS_OK);
    assert_int_equal(count_of(t, a), 0);
    assert_int_equal(count_of(t, b), 4);
    for (uint32_t k = 0; k < 4; k++) {
        char want[8];
        snprintf(want, sizeof want, "b%u", k);
        assert_string_equal(mesh_name(t, b, k), want);
    }
    assert_int_equal(total(t), 4);
    assert_int_equal(t->mesh->remove_all(t->mesh->self, bare), ECS_OK); /* none: fine */
    assert_int_equal(t->mesh->remove_all(t->mesh->self, a), ECS_OK);
    assert_int_equal(add(t, a, "again", NULL), ECS_OK);
    assert_string_equal(mesh_name(t, a, 0), "again");
}

static void Mesh_set_visible_changes_one_mesh(void **state)
{
    mesh_test *t = *state;
    ecs_entity e = new_entity(t), dead = new_entity(t);
    destroy(t, dead);
    for (int i = 0; i < 3; i++) assert_int_equal(add(t, e, "m", NULL), ECS_OK);
    assert_int_equal(t->mesh->set_visible(t->mesh->self, e, 1, false), ECS_OK);
    ecs_mesh_info info;
    for (uint32_t k = 0; k < 3; k++) {
        assert_int_equal(t->mesh->get(t->mesh->self, e, k, &info), ECS_OK);
        assert_int_equal(info.visible, k != 1);
    }
    assert_int_equal(t->mesh->set_visible(t->mesh->self, e, 1, true), ECS_OK);
    assert_int_equal(t->mesh->get(t->mesh->self, e, 1, &info), ECS_OK);
    assert_true(info.visible);
    assert_int_equal(t->mesh->set_visible(t->mesh->self, e, 3, true), ECS_ERR_NOT_FOUND);
    assert_int_equal(t->mesh->set_visible(t->mesh->self, dead, 0, true), ECS_ERR_STALE_ENTITY);
    assert_int_equal(t->mesh->get(t->mesh->self, dead, 0, &info), ECS_ERR_STALE_ENTITY);
}

/* ---- a random model: interleaved entities, swaps across lists --------------------------- */

static uint64_t rng_next(uint64_t *s) /* xorshift64* */
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static float rng_float(uint64_t *s, float lo, float hi) /* uniform in [lo, hi) */
{
    return lo + (hi - lo) * (float)(rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

#define MODEL_N   300
#define MODEL_MAX 12 /* meshes per entity in the model */
#define MODEL_OPS 20000

typedef struct model {
    ecs_entity e[MODEL_N];
    bool alive[MODEL_N];
    int mesh[MODEL_N][MODEL_MAX]; /* name ids in order */
    int count[MODEL_N];
} model;

static void check_model(mesh_test *t, const model *m, uint64_t seed, int op)
{
    uint32_t all = 0;
    char want[16];
    fixture_frames(&t->f, 1); /* destroyed entities keep their meshes until announced */
    for (int i = 0; i < MODEL_N; i++) {
        if (!m->alive[i]) continue;
        all += (uint32_t)m->count[i];
        if (count_of(t, m->e[i]) != (uint32_t)m->count[i])
            fail_msg("seed %" PRIu64 " op %d: entity slot %d: %u meshes, want %d", seed, op, i,
                     count_of(t, m->e[i]), m->count[i]);
        for (int k = 0; k < m->count[i]; k++) {
            snprintf(want, sizeof want, "m%d", m->mesh[i][k]);
            if (strcmp(mesh_name(t, m->e[i], (uint32_t)k), want) != 0)
                fail_msg("seed %" PRIu64 " op %d: slot %d mesh %d is %s, want %s", seed, op, i, k,
                         mesh_name(t, m->e[i], (uint32_t)k), want);
        }
    }
    if (total(t) != all)
        fail_msg("seed %" PRIu64 " op %d: %u meshes in all, want %u", seed, op, total(t), all);
}

/* One random operation on slot i of the model and the plugin. */
static void model_step(mesh_test *t, model *m, uint64_t *rng, int i, int *next_name)
{
    int what = (int)(rng_next(rng) % 20);
    char name[16];
    if (what < 10 && m->count[i] < MODEL_MAX) {
        snprintf(name, sizeof name, "m%d", *next_name);
        uint32_t k;
        assert_int_equal(add(t, m->e[i], name, &k), ECS_OK);
        assert_int_equal(k, (uint32_t)m->count[i]);
        m->mesh[i][m->count[i]++] = (*next_name)++;
    } else if (what < 16 && m->count[i] > 0) {
        int k = (int)(rng_next(rng) % (uint64_t)m->count[i]);
        assert_int_equal(t->mesh->remove(t->mesh->self, m->e[i], (uint32_t)k), ECS_OK);
        memmove(&m->mesh[i][k], &m->mesh[i][k + 1], sizeof(int) * (size_t)(m->count[i] - k - 1));
        m->count[i]--;
    } else if (what == 16) {
        assert_int_equal(t->mesh->remove_all(t->mesh->self, m->e[i]), ECS_OK);
        m->count[i] = 0;
    } else if (what == 17) {
        destroy(t, m->e[i]);
        m->e[i] = new_entity(t); /* the slot gets a fresh entity */
        m->count[i] = 0;
    } else if (what == 18) {
        fixture_frames(&t->f, 1);
    }
}

static void Mesh_random_operations_match_a_model(void **state)
{
    mesh_test *t = *state;
    const uint64_t seed = 0x6d657368ull;
    uint64_t rng = seed;
    int next_name = 0;
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    for (int i = 0; i < MODEL_N; i++) {
        m->e[i] = new_entity(t);
        m->alive[i] = true;
    }
    for (int op = 0; op < MODEL_OPS; op++) {
        model_step(t, m, &rng, (int)(rng_next(&rng) % MODEL_N), &next_name);
        if (op % 2500 == 0) check_model(t, m, seed, op);
    }
    fixture_frames(&t->f, 1);
    check_model(t, m, seed, MODEL_OPS);
    free(m);
}

/* ---- destroyed entities ------------------------------------------------------------------ */

static void Mesh_destroyed_entity_loses_its_meshes_after_one_frame(void **state)
{
    mesh_test *t = *state;
    ecs_entity a = new_entity(t), b = new_entity(t), c = new_entity(t);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(add(t, a, "a", NULL), ECS_OK);
        assert_int_equal(add(t, b, "b", NULL), ECS_OK);
        assert_int_equal(add(t, c, "c", NULL), ECS_OK);
    }
    destroy(t, b);
    assert_int_equal(total(t), 9); /* until the announcement */
    assert_int_equal(count_of(t, b), 0);
    fixture_frames(&t->f, 1);
    assert_int_equal(total(t), 6);
    assert_int_equal(count_of(t, a), 3);
    assert_int_equal(count_of(t, c), 3);
    for (uint32_t k = 0; k < 3; k++) {
        assert_string_equal(mesh_name(t, a, k), "a");
        assert_string_equal(mesh_name(t, c, k), "c");
    }
    destroy(t, a);
    destroy(t, c);
    fixture_frames(&t->f, 1);
    assert_int_equal(total(t), 0);
}

/* ---- world bounds ------------------------------------------------------------------------ */

/* The reference: the box around the 8 corners of b moved by m. */
static ecs_aabb corners_reference(const ecs_mat4 *m, ecs_aabb b)
{
    ecs_aabb r = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
    for (int c = 0; c < 8; c++) {
        ecs_vec3 p = ecs_vec3_make(c & 1 ? b.max.x : b.min.x, c & 2 ? b.max.y : b.min.y,
                                   c & 4 ? b.max.z : b.min.z);
        ecs_vec3 q = ecs_mat4_point(m, p);
        r.min = ecs_vec3_make(fminf(r.min.x, q.x), fminf(r.min.y, q.y), fminf(r.min.z, q.z));
        r.max = ecs_vec3_make(fmaxf(r.max.x, q.x), fmaxf(r.max.y, q.y), fmaxf(r.max.z, q.z));
    }
    return r;
}

static bool near(float a, float b)
{
    return fabsf(a - b) <= TOLERANCE * (1.0f + fabsf(b));
}

static bool box_near(ecs_aabb a, ecs_aabb b)
{
    return near(a.min.x, b.min.x) && near(a.min.y, b.min.y) && near(a.min.z, b.min.z) &&
           near(a.max.x, b.max.x) && near(a.max.y, b.max.y) && near(a.max.z, b.max.z);
}

/* Check the world bounds of every mesh of e against the reference. */
static void check_world_bounds(mesh_test *t, ecs_entity e, uint64_t seed, const char *when)
{
    ecs_mat4 m = ecs_mat4_identity();
    if (t->tf->has(t->tf->self, e)) assert_int_equal(t->tf->get_world(t->tf->self, e, &m), ECS_OK);
    for (uint32_t k = 0, n = count_of(t, e); k < n; k++) {
        ecs_mesh_info info;
        assert_int_equal(t->mesh->get(t->mesh->self, e, k, &info), ECS_OK);
        ecs_aabb want = corners_reference(&m, info.local_bounds);
        if (!box_near(info.world_bounds, want))
            fail_msg("seed %" PRIu64 " (%s): entity %u mesh %u: world [%g %g %g]-[%g %g %g], "
                     "reference [%g %g %g]-[%g %g %g]",
                     seed, when, ecs_entity_index(e), k, info.world_bounds.min.x,
                     info.world_bounds.min.y, info.world_bounds.min.z, info.world_bounds.max.x,
                     info.world_bounds.max.y, info.world_bounds.max.z, want.min.x, want.min.y,
                     want.min.z, want.max.x, want.max.y, want.max.z);
    }
}

static ecs_transform_local random_local(uint64_t *rng)
{
    ecs_transform_local l;
    l.position =
        ecs_vec3_make(rng_float(rng, -10, 10), rng_float(rng, -10, 10), rng_float(rng, -10, 10));
    ecs_quat q = {rng_float(rng, -1, 1), rng_float(rng, -1, 1), rng_float(rng, -1, 1),
                  rng_float(rng, -1, 1)};
    l.rotation = ecs_quat_normalize(q);
    l.scale =
        ecs_vec3_make(rng_float(rng, 0.2f, 2), rng_float(rng, 0.2f, 2), rng_float(rng, 0.2f, 2));
    if (rng_next(rng) % 8 == 0) l.scale.x = -l.scale.x; /* a mirror now and then */
    return l;
}

static ecs_mesh_desc random_mesh(uint64_t *rng)
{
    ecs_mesh_desc d = {"r.mesh", NULL, true, box(0, 0, 0, 0, 0, 0)};
    d.local_bounds.min =
        ecs_vec3_make(rng_float(rng, -5, 5), rng_float(rng, -5, 5), rng_float(rng, -5, 5));
    d.local_bounds.max = ecs_vec3_make(d.local_bounds.min.x + rng_float(rng, 0, 4),
                                       d.local_bounds.min.y + rng_float(rng, 0, 4),
                                       d.local_bounds.min.z + rng_float(rng, 0, 4));
    return d;
}

#define WORLD_N 200

static void Mesh_world_bounds_follow_random_transforms(void **state)
{
    mesh_test *t = *state;
    const uint64_t seed = 0xb0c5ull;
    uint64_t rng = seed;
    ecs_entity e[WORLD_N];
    for (int i = 0; i < WORLD_N; i++) {
        e[i] = new_entity(t);
        if (i % 7 != 3) { /* every seventh has no transform: the identity */
            ecs_entity parent = ecs_entity_null();
            if (i > 0 && rng_next(&rng) % 3 == 0) {
                int p = (int)(rng_next(&rng) % (uint64_t)i);
                if (p % 7 != 3) parent = e[p]; /* a hierarchy, a few levels deep */
            }
            ecs_transform_local l = random_local(&rng);
            assert_int_equal(t->tf->add(t->tf->self, e[i], &l, parent), ECS_OK);
        }
        for (int k = 0, n = 1 + (int)(rng_next(&rng) % 3); k < n; k++) {
            ecs_mesh_desc d = random_mesh(&rng);
            assert_int_equal(t->mesh->add(t->mesh->self, e[i], &d, NULL), ECS_OK);
        }
    }
    fixture_frames(&t->f, 1);
    for (int i = 0; i < WORLD_N; i++) check_world_bounds(t, e[i], seed, "first frame");
    for (int j = 0; j < 60; j++) { /* move some, parents included: their subtrees follow */
        int i = (int)(rng_next(&rng) % WORLD_N);
        ecs_transform_local l = random_local(&rng);
        if (t->tf->has(t->tf->self, e[i]))
            assert_int_equal(t->tf->set_local(t->tf->self, e[i], &l), ECS_OK);
    }
    fixture_frames(&t->f, 1);
    for (int i = 0; i < WORLD_N; i++) check_world_bounds(t, e[i], seed, "after set_local");
}

static void Mesh_world_bounds_use_the_identity_without_a_transform(void **state)
{
    mesh_test *t = *state;
    ecs_entity e = new_entity(t);
    ecs_transform_local l = {{5, 6, 7}, {0, 0, 0, 1}, {2, 2, 2}};
    assert_int_equal(t->tf->add(t->tf->self, e, &l, ecs_entity_null()), ECS_OK);
    assert_int_equal(add(t, e, "m", NULL), ECS_OK); /* local (-1,-2,-3)-(1,2,3) */
    ecs_mesh_info info;
    assert_int_equal(t->mesh->get(t->mesh->self, e, 0, &info), ECS_OK);
    assert_box_equal(info.world_bounds, box(3, 2, 1, 7, 10, 13)); /* right at add already */
    assert_int_equal(t->tf->remove(t->tf->self, e), ECS_OK);
    fixture_frames(&t->f, 1);
    assert_int_equal(t->mesh->get(t->mesh->self, e, 0, &info), ECS_OK);
    assert_box_equal(info.world_bounds, info.local_bounds);
}

/* ---- JSON through the manager ------------------------------------------------------------ */

static void Mesh_json_round_trip(void **state)
{
    mesh_test *t = *state;
    const ecs_manager_desc *m = t->manager;
    ecs_entity a = new_entity(t), b = new_entity(t), bare = new_entity(t);
    ecs_mesh_desc d[3] = {
        {"crate.mesh", "wood", true, box(-0.5f, 0, -0.5f, 0.5f, 1, 0.5f)},
        {"lid \"top\".mesh", NULL, false, box(0.1f, 0.2f, 0.3f, 1e6f, 3.4028235e38f, 7)},
        {"\xe2\x86\x92.mesh", "", true, box(-1e-7f, -2, -3, 1e-7f, 2, 3)},
    };
    for (int i = 0; i < 3; i++)
        assert_int_equal(t->mesh->add(t->mesh->self, a, &d[i], NULL), ECS_OK);
    cJSON *json = NULL;
    assert_int_equal(fixture_save_json(m, a, &json), ECS_OK);
    assert_true(cJSON_IsArray(json));
    assert_int_equal(cJSON_GetArraySize(json), 3);
    char *text = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    fprintf(stderr, "# saved: %s\n", text);
    assert_non_null(strstr(text, "\"min\":[0.1,0.2,0.3]")); /* shortest round-trip digits */
    assert_non_null(strstr(text, "\"visible\":false"));
    assert_int_equal(fixture_load_json(m, b, text), ECS_OK);
    free(text);
    assert_int_equal(count_of(t, b), 3);
    for (uint32_t k = 0; k < 3; k++) {
        ecs_mesh_info x, y;
        assert_int_equal(t->mesh->get(t->mesh->self, a, k, &x), ECS_OK);
        assert_int_equal(t->mesh->get(t->mesh->self, b, k, &y), ECS_OK);
        assert_string_equal(x.mesh, y.mesh);
        assert_string_equal(x.material, y.material);
        assert_int_equal(x.visible, y.visible);
        assert_box_equal(x.local_bounds, y.local_bounds); /* bit for bit */
    }
    json = (cJSON *)1;
    assert_int_equal(fixture_save_json(m, bare, &json), ECS_OK);
    assert_null(json);
    /* loading replaces what the entity had; optional keys take their defaults */
    assert_int_equal(fixture_load_json(m, b,
                                       "[{\"mesh\":\"solo.mesh\",\"bounds\":{\"min\":[0,0,0],"
                                       "\"max\":[1,1,1]}}]"),
                     ECS_OK);
    ecs_mesh_info info;
    assert_int_equal(count_of(t, b), 1);
    assert_int_equal(t->mesh->get(t->mesh->self, b, 0, &info), ECS_OK);
    assert_string_equal(info.mesh, "solo.mesh");
    assert_string_equal(info.material, "");
    assert_true(info.visible);
    assert_int_equal(fixture_load_json(m, b, "[]"), ECS_OK); /* an empty list: no meshes */
    assert_int_equal(count_of(t, b), 0);
    assert_int_equal(total(t), 3);
}

#define BOUNDS "\"bounds\":{\"min\":[0,0,0],\"max\":[1,1,1]}"

static void Mesh_json_rejects_bad_values_naming_the_key(void **state)
{
    mesh_test *t = *state;
    const ecs_manager_desc *m = t->manager;
    static const struct {
        const char *json, *log; /* the scene value, a part of the expected error line */
    } bad[] = {
        {"{\"mesh\":\"a\"}", "expected an array of mesh objects, found an object"},
        {"\"crate.mesh\"", "expected an array of mesh objects, found a string"},
        {"[1]", "expected a mesh object {\"mesh\": ..., \"bounds\": ...}, found a number"},
        {"[{" BOUNDS "}]", "expected \"mesh\": a string of 1-255 bytes of UTF-8 without control "
                           "characters, found nothing"},
        {"[{\"mesh\":5," BOUNDS "}]", "expected a string of 1-255 bytes of UTF-8 "
                                      "without control characters, found a number"},
        {"[{\"mesh\":\"\"," BOUNDS "}]",
         "expected a string of 1-255 bytes of UTF-8 without control "
         "characters, found a string where it is empty"},
        {"[{\"mesh\":\"a\\u0001\"," BOUNDS "}]", "control character"},
        {"[{\"mesh\":\"a\",\"material\":3," BOUNDS "}]", "expected a string of 0-255 bytes"},
        {"[{\"mesh\":\"a\",\"material\":null," BOUNDS "}]", "expected a string of 0-255 bytes"},
        {"[{\"mesh\":\"a\",\"visible\":\"yes\"," BOUNDS "}]",
         "expected true or false, found a string"},
        {"[{\"mesh\":\"a\"}]",
         "expected \"bounds\": an object {\"min\": [x,y,z], \"max\": [x,y,z]}, found nothing"},
        {"[{\"mesh\":\"a\",\"bounds\":[0,0,0]}]",
         "expected an object {\"min\": [x,y,z], \"max\": [x,y,z]}, found an array"},
        {"[{\"mesh\":\"a\",\"bounds\":{\"min\":[0,0],\"max\":[1,1,1]}}]",
         "expected an array of 3 finite numbers, found 2 elements"},
        {"[{\"mesh\":\"a\",\"bounds\":{\"min\":[0,0,0]}}]",
         "expected \"max\": an array of 3 finite numbers, found nothing"},
        {"[{\"mesh\":\"a\",\"bounds\":{\"min\":[0,\"1\",0],\"max\":[1,1,1]}}]",
         "expected a finite number, found a string"},
        {"[{\"mesh\":\"a\",\"bounds\":{\"min\":[0,0,0],\"max\":[1,1,1e39]}}]",
         "expected a finite number (float range), found 1e39"},
        {"[{\"mesh\":\"a\",\"bounds\":{\"min\":[0,2,0],\"max\":[1,1,1]}}]",
         "expected min <= max on every axis, found min 2 above max 1 on axis y"},
        {"[{\"mesh\":\"ok\"," BOUNDS "},{\"mesh\":\"a\",\"bounds\":{\"min\":[0,0,0],"
         "\"max\":[1,1]}}]",
         "expected an array of 3 finite numbers, found 2 elements"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ecs_entity e = new_entity(t);
        assert_int_equal(add(t, e, "before", NULL), ECS_OK);
        capture c;
        capture_begin(&c);
        ecs_status s = fixture_load_json(m, e, bad[i].json);
        char *log = capture_end(&c);
        if (s != ECS_ERR_BAD_VALUE) fail_msg("case %zu (%s): status %d", i, bad[i].json, (int)s);
        if (count_of(t, e) != 0) fail_msg("case %zu: the entity kept meshes", i);
        if (!strstr(log, bad[i].log))
            fail_msg("case %zu: the log lacks '%s':\n%s", i, bad[i].log, log);
        free(log);
    }
    ecs_entity e = new_entity(t), dead = new_entity(t);
    destroy(t, dead);
    assert_int_equal(fixture_load_json(m, dead, "[{\"mesh\":\"a\"," BOUNDS "}]"),
                     ECS_ERR_STALE_ENTITY);
    char long_json[600];
    snprintf(long_json, sizeof long_json, "[{\"mesh\":\"%0256d\"," BOUNDS "}]", 0);
    assert_int_equal(fixture_load_json(m, e, long_json), ECS_ERR_BAD_VALUE);
    assert_int_equal(fixture_load_json(m, e, NULL), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(fixture_save_json(m, e, NULL), ECS_ERR_INVALID_ARGUMENT);
    cJSON *out = (cJSON *)1;
    assert_int_equal(fixture_save_json(m, dead, &out), ECS_ERR_STALE_ENTITY);
    assert_null(out);
    assert_int_equal(total(t), 0);
}

static void Mesh_json_unknown_key_is_ignored_with_a_warning(void **state)
{
    mesh_test *t = *state;
    const ecs_manager_desc *m = t->manager;
    ecs_entity e = new_entity(t);
    capture c;
    capture_begin(&c);
    assert_int_equal(fixture_load_json(m, e, "[{\"mesh\":\"a\",\"visble\":false," BOUNDS "}]"),
                     ECS_OK);
    char *log = capture_end(&c);
    assert_non_null(strstr(log, "unknown key \"visble\" ignored"));
    free(log);
    assert_int_equal(count_of(t, e), 1);
}

static void Mesh_api_self_is_the_manager_state(void **state)
{
    mesh_test *t = *state;
    assert_ptr_equal(t->mesh->self, t->manager->state);
    assert_true(t->mesh->struct_size >= sizeof(ecs_mesh_api));
    assert_non_null(t->manager->update);
    assert_non_null(t->manager->entities_destroyed);
}

/* ---- the plugin's life, through the fake host and a fake transform API ------------------ */

/* A fake transform: a world matrix per entity index, calls counted. */
typedef struct fake_tf {
    ecs_mat4 world[MINI_ENTITIES];
    bool has[MINI_ENTITIES];
    int calls;
    float shift; /* added to x by fake_get_world_shifted */
} fake_tf;

static ecs_status fake_get_world(void *self, ecs_entity e, ecs_mat4 *out)
{
    fake_tf *f = self;
    f->calls++;
    if (!f->has[ecs_entity_index(e)]) return ECS_ERR_NOT_FOUND;
    *out = f->world[ecs_entity_index(e)];
    return ECS_OK;
}

static ecs_status fake_get_world_shifted(void *self, ecs_entity e, ecs_mat4 *out)
{
    ecs_status s = fake_get_world(self, e, out);
    if (s == ECS_OK) out->m[12] += ((fake_tf *)self)->shift;
    return s;
}

static ecs_transform_api fake_api(fake_tf *f)
{
    ecs_transform_api api;
    memset(&api, 0, sizeof api);
    api.struct_size = sizeof api;
    api.self = f;
    api.get_world = fake_get_world;
    return api;
}

static void mini_mesh_setup(mini_host *m, fake_tf *f, ecs_transform_api *api, const char *so,
                            void **state)
{
    mini_init(m);
    *api = fake_api(f);
    mini_provide(m, ECS_TRANSFORM_API_NAME, 1, api, sizeof *api);
    assert_int_equal(mini_open(m, so), 0);
    assert_int_equal(mini_load(m, NULL, state), ECS_OK);
}

static const ecs_mesh_api *mini_mesh_api(mini_host *m)
{
    return mini_find(&m->table, ECS_MESH_API_NAME, 1, NULL);
}

static void Mesh_update_calls_get_world_once_per_entity_through_the_host_copy(void **state)
{
    mini_host *m = calloc(1, sizeof *m);
    fake_tf *f = calloc(1, sizeof *f), *f2 = calloc(1, sizeof *f2);
    ecs_transform_api api;
    void *s = NULL;
    mini_mesh_setup(m, f, &api, MESH_SO, &s);
    const ecs_mesh_api *mesh = mini_mesh_api(m);
    ecs_entity a = mini_entity(m, 1), b = mini_entity(m, 2), c = mini_entity(m, 3);
    f->has[1] = f->has[2] = true;
    f->world[1] =
        ecs_mat4_trs(ecs_vec3_make(10, 0, 0), ecs_quat_identity(), ecs_vec3_make(1, 1, 1));
    f->world[2] =
        ecs_mat4_trs(ecs_vec3_make(0, 20, 0), ecs_quat_identity(), ecs_vec3_make(1, 1, 1));
    ecs_mesh_desc d = {"m", NULL, true, box(0, 0, 0, 1, 1, 1)};
    for (int i = 0; i < 3; i++) assert_int_equal(mesh->add(mesh->self, a, &d, NULL), ECS_OK);
    for (int i = 0; i < 2; i++) assert_int_equal(mesh->add(mesh->self, b, &d, NULL), ECS_OK);
    assert_int_equal(mesh->add(mesh->self, c, &d, NULL), ECS_OK);
    f->calls = 0;
    m->manager.update(m->manager.state, &m->frame);
    assert_int_equal(f->calls, 3); /* one per entity, not one per mesh (6) */
    ecs_mesh_info info;
    assert_int_equal(mesh->get(mesh->self, a, 2, &info), ECS_OK);
    assert_box_equal(info.world_bounds, box(10, 0, 0, 11, 1, 1));
    assert_int_equal(mesh->get(mesh->self, c, 0, &info), ECS_OK);
    assert_box_equal(info.world_bounds, box(0, 0, 0, 1, 1, 1));

    /* transform reloads: the host rewrites its copy of the API in place */
    *f2 = *f;
    f2->shift = 100;
    api.self = f2;
    api.get_world = fake_get_world_shifted;
    m->manager.update(m->manager.state, &m->frame);
    assert_int_equal(mesh->get(mesh->self, b, 1, &info), ECS_OK);
    assert_box_equal(info.world_bounds, box(100, 20, 0, 101, 21, 1));
    assert_int_equal(f2->calls, f->calls + 3);

    /* transform unloaded: the host zeroes the copy; meshes fall back to the identity */
    memset(&api, 0, sizeof api);
    m->manager.update(m->manager.state, &m->frame);
    assert_int_equal(mesh->get(mesh->self, b, 1, &info), ECS_OK);
    assert_box_equal(info.world_bounds, info.local_bounds);
    m->desc->unload(&m->table, s, ECS_UNLOAD_SHUTDOWN);
    assert_int_equal(m->account->bytes, 0);
    mini_close(m);
    free(m);
    free(f);
    free(f2);
}

static void Mesh_load_fails_cleanly_without_the_transform_api(void **state)
{
    mini_host *m = calloc(1, sizeof *m);
    mini_init(m);
    assert_int_equal(mini_open(m, MESH_SO), 0);
    void *s = NULL;
    assert_int_equal(mini_load(m, NULL, &s), ECS_ERR_NOT_FOUND);
    assert_int_equal(m->managers, 0);
    assert_int_equal(m->account->bytes, 0);
    assert_int_equal(m->errors, 1); /* one line saying why */
    const char *const *dep = m->desc->dependencies;
    assert_non_null(dep);
    assert_string_equal(dep[0], "transform");
    assert_null(dep[1]);
    mini_close(m);
    free(m);
}

static void copy_file(const char *src, const char *dst)
{
    assert_int_equal(harness_copy_file(src, dst, 0700), 0);
}

static void Mesh_reload_keep_state_adopts_every_mesh(void **state)
{
    mini_host *v1 = calloc(1, sizeof *v1), *v2 = calloc(1, sizeof *v2);
    fake_tf *f = calloc(1, sizeof *f);
    ecs_transform_api api;
    void *s1 = NULL, *s2 = NULL;
    mini_mesh_setup(v1, f, &api, MESH_SO, &s1);
    assert_int_equal(v1->desc->state_version, 2); /* 2: the owner list (views) */
    const ecs_mesh_api *mesh = mini_mesh_api(v1);
    ecs_entity a = mini_entity(v1, 1), b = mini_entity(v1, 2);
    ecs_mesh_desc d = {"a0", "wood", true, box(0, 0, 0, 1, 1, 1)};
    assert_int_equal(mesh->add(mesh->self, a, &d, NULL), ECS_OK);
    d.mesh = "b0";
    assert_int_equal(mesh->add(mesh->self, b, &d, NULL), ECS_OK);
    d.mesh = "a1";
    assert_int_equal(mesh->add(mesh->self, a, &d, NULL), ECS_OK);
    size_t held = v1->account->bytes;
    v1->desc->unload(&v1->table, s1, ECS_UNLOAD_RELOAD_KEEP_STATE);
    assert_int_equal(v1->account->bytes, held);

    char *dir = harness_make_tmpdir("ecs-mesh-reload");
    assert_non_null(dir);
    char *copy = harness_join(dir, "mesh.so");
    copy_file(MESH_SO, copy);
    mini_successor(v2, v1);
    assert_int_equal(mini_open(v2, copy), 0);
    mini_close(v1); /* the old code is gone */
    assert_int_equal(mini_load(v2, s1, &s2), ECS_OK);
    assert_ptr_equal(s2, s1);
    mesh = mini_mesh_api(v2);
    assert_int_equal(mesh->count(mesh->self), 3);
    assert_int_equal(mesh->count_of(mesh->self, a), 2);
    ecs_mesh_info info;
    assert_int_equal(mesh->get(mesh->self, a, 1, &info), ECS_OK);
    assert_string_equal(info.mesh, "a1");
    assert_string_equal(info.material, "wood");
    f->has[1] = true;
    f->world[1] = ecs_mat4_trs(ecs_vec3_make(0, 0, 5), ecs_quat_identity(), ecs_vec3_make(1, 1, 1));
    v2->manager.update(v2->manager.state, &v2->frame);
    assert_int_equal(mesh->get(mesh->self, a, 0, &info), ECS_OK);
    assert_box_equal(info.world_bounds, box(0, 0, 5, 1, 1, 6));
    mini_kill(v2, b); /* liveness from the new table */
    assert_int_equal(mesh->count_of(mesh->self, b), 0);
    v2->manager.entities_destroyed(v2->manager.state, &b, 1);
    assert_int_equal(mesh->count(mesh->self), 2);
    v2->desc->unload(&v2->table, s2, ECS_UNLOAD_SHUTDOWN);
    assert_int_equal(v2->account->bytes, 0);
    assert_int_equal(v2->account->blocks, 0);
    assert_int_equal(v1->retired_calls, 0);
    assert_int_equal(v2->errors, 0);
    mini_close(v2);
    harness_remove_tree(dir);
    free(copy);
    free(dir);
    free(v1);
    free(v2);
    free(f);
}

static void Mesh_shutdown_frees_everything(void **state)
{
    mini_host *m = calloc(1, sizeof *m);
    fake_tf *f = calloc(1, sizeof *f);
    ecs_transform_api api;
    void *s = NULL;
    mini_mesh_setup(m, f, &api, MESH_SO, &s);
    const ecs_mesh_api *mesh = mini_mesh_api(m);
    ecs_mesh_desc d = {"m", "mat", true, box(0, 0, 0, 1, 1, 1)};
    for (uint32_t i = 1; i < MINI_ENTITIES; i++)
        for (int k = 0; k < 3; k++)
            assert_int_equal(mesh->add(mesh->self, mini_entity(m, i), &d, NULL), ECS_OK);
    for (uint32_t i = 1; i < MINI_ENTITIES; i += 4)
        assert_int_equal(mesh->remove(mesh->self, mini_entity(m, i), 1), ECS_OK);
    m->desc->unload(&m->table, s, ECS_UNLOAD_SHUTDOWN);
    assert_int_equal(m->account->bytes, 0);
    assert_int_equal(m->account->blocks, 0);
    assert_int_equal(m->errors, 0);
    mini_close(m);
    free(m);
    free(f);
}

/* ---- the real ecs-host on transform, debug_name, mesh and scene_driver ------------------ */

typedef struct stats_row {
    char manager[64], plugin[64];
    unsigned components;
} stats_row;

/* Parse the --stats table of out into rows; returns how many. */
static int parse_stats(const char *out, stats_row *rows, int max)
{
    int n = 0;
    const char *line = strstr(out, "manager ");
    while (line && (line = strchr(line, '\n')) && n < max) {
        line++;
        stats_row r;
        if (sscanf(line, "%63s %63s %u", r.manager, r.plugin, &r.components) != 3) break;
        rows[n++] = r;
    }
    return n;
}

static void Mesh_host_runs_the_three_plugins_with_stats(void **state)
{
    char *dir = harness_make_tmpdir("ecs-mesh-host");
    assert_non_null(dir);
    const char *so[] = {TRANSFORM_SO, DEBUG_NAME_SO, MESH_SO, SCENE_DRIVER_SO};
    for (size_t i = 0; i < 4; i++) {
        char *link = harness_join(dir, strrchr(so[i], '/') + 1);
        assert_int_equal(harness_symlink(so[i], link), 0);
        free(link);
    }
    const char *const argv[] = {ECS_HOST_PATH, "--fps",   "0", "--frames",
                                "30",          "--stats", dir, NULL};
    harness_output r;
    assert_int_equal(harness_run(&r, 60, argv), 0);
    fprintf(stderr, "# stdout:\n%s# stderr:\n%s", r.out, r.err);
    harness_remove_tree(dir);
    free(dir);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, "[error]"));
    assert_null(strstr(r.err, "leaked"));
    stats_row rows[8];
    int n = parse_stats(r.out, rows, 8);
    /* dependencies first, then file name: debug_name, transform, mesh, scene_driver */
    static const char *const order[] = {"debug_name", "transform", "mesh", "scene_driver"};
    const unsigned frames = 30, live = 2 * frames + 2, meshes = 4 * frames + 3;
    const unsigned want[] = {live, live, meshes, live};
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++) {
        assert_string_equal(rows[i].manager, order[i]);
        assert_string_equal(rows[i].plugin, order[i]);
        if (rows[i].components != want[i])
            fail_msg("%s: %u components, want %u", order[i], rows[i].components, want[i]);
    }
    assert_non_null(strstr(r.out, "frames: 30"));
    harness_output_free(&r);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(Mesh_add_then_get_returns_each_mesh_in_order),
        T(Mesh_add_copies_the_names),
        T(Mesh_add_refuses_bad_arguments),
        T(Mesh_remove_middle_keeps_the_order_of_the_others),
        T(Mesh_remove_refuses_bad_position_and_dead_entity),
        T(Mesh_remove_all_removes_every_mesh_of_one_entity),
        T(Mesh_set_visible_changes_one_mesh),
        T(Mesh_random_operations_match_a_model),
        T(Mesh_destroyed_entity_loses_its_meshes_after_one_frame),
        T(Mesh_world_bounds_follow_random_transforms),
        T(Mesh_world_bounds_use_the_identity_without_a_transform),
        T(Mesh_json_round_trip),
        T(Mesh_json_rejects_bad_values_naming_the_key),
        T(Mesh_json_unknown_key_is_ignored_with_a_warning),
        T(Mesh_api_self_is_the_manager_state),
        cmocka_unit_test(Mesh_update_calls_get_world_once_per_entity_through_the_host_copy),
        cmocka_unit_test(Mesh_load_fails_cleanly_without_the_transform_api),
        cmocka_unit_test(Mesh_reload_keep_state_adopts_every_mesh),
        cmocka_unit_test(Mesh_shutdown_frees_everything),
        cmocka_unit_test(Mesh_host_runs_the_three_plugins_with_stats),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
