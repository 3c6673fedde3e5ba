/* SPDX-License-Identifier: MIT */
/* test_spin.c: the spin plugin (plugins/spin/), an example system over {transform, spin}:
 * it turns entities by rate * dt every frame, children follow in the world, entities
 * without a transform or without a spin are left alone; its JSON loads, saves and reports
 * bad values with their place; the demo scene turns its carousel in the real ecs-host and
 * --save shows it, with spin.rotate first in --stats (weight 10) and marked a system.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debug_name_api.h"
#include "fixture.h"
#include "harness.h"
#include "jobs.h"
#include "mesh_api.h"
#include "scene.h"
#include "spin_api.h"
#include "transform_api.h"

#if !defined(TRANSFORM_SO) || !defined(SPIN_SO) || !defined(MESH_SO) || !defined(DEBUG_NAME_SO) || \
    !defined(SOURCE_ROOT)
#error "the plugin paths and SOURCE_ROOT must be defined by meson"
#endif

typedef struct spin_world {
    fixture f;
    const ecs_transform_api *tf;
    const ecs_spin_api *spin;
    const ecs_debug_name_api *dn;
    const ecs_mesh_api *mesh;
} spin_world;

static void open_world(spin_world *s, bool all)
{
    static const char *const two[] = {TRANSFORM_SO, SPIN_SO, NULL};
    static const char *const four[] = {TRANSFORM_SO, SPIN_SO, MESH_SO, DEBUG_NAME_SO, NULL};
    memset(s, 0, sizeof *s);
    assert_int_equal(fixture_open(&s->f, all ? four : two), 0);
    s->tf = fixture_api(&s->f, ECS_TRANSFORM_API_NAME);
    s->spin = fixture_api(&s->f, ECS_SPIN_API_NAME);
    s->dn = fixture_api(&s->f, ECS_DEBUG_NAME_API_NAME);
    s->mesh = fixture_api(&s->f, ECS_MESH_API_NAME);
    assert_non_null(s->tf);
    assert_non_null(s->spin);
}

/* Run n frames a few milliseconds apart; the sum of their dt. */
static double frames(spin_world *s, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        usleep(2000);
        host_world_frame(s->f.w);
        sum += s->f.w->frame.dt; /* the frame's dt, as the system saw it */
    }
    return sum;
}

static ecs_entity make(spin_world *s, float x, ecs_entity parent)
{
    ecs_entity e;
    assert_int_equal(host_entity_create(s->f.w->entities, &e), ECS_OK);
    ecs_transform_local l = {ecs_vec3_make(x, 0, 0), ecs_quat_identity(), ecs_vec3_make(1, 1, 1)};
    assert_int_equal(s->tf->add(s->tf->self, e, &l, parent), ECS_OK);
    return e;
}

static void Spin_turns_by_rate_times_dt_and_children_follow(void **state)
{
    (void)state;
    spin_world s;
    open_world(&s, false);
    ecs_entity hub = make(&s, 0, ecs_entity_null()), seat = make(&s, 2, hub);
    ecs_entity still = make(&s, 5, ecs_entity_null()), bare;
    assert_int_equal(host_entity_create(s.f.w->entities, &bare), ECS_OK);
    const float rate = 1.25f;
    assert_int_equal(s.spin->set(s.spin->self, hub, ecs_vec3_make(0, rate, 0)), ECS_OK);
    assert_int_equal(s.spin->set(s.spin->self, bare, ecs_vec3_make(1, 0, 0)), ECS_OK);
    frames(&s, 1); /* frame 0 (dt 0) and the collection starts with this frame */
    double t = frames(&s, 20);
    assert_true(t > 0.02);
    ecs_transform_local l;
    assert_int_equal(s.tf->get_local(s.tf->self, hub, &l), ECS_OK);
    double angle = rate * t;
    if (fabs(l.rotation.y - sin(angle / 2)) > 1e-4 || fabs(l.rotation.w - cos(angle / 2)) > 1e-4)
        fail_msg("rotation (%g, %g, %g, %g) after %g s, expected y %g w %g", l.rotation.x,
                 l.rotation.y, l.rotation.z, l.rotation.w, t, sin(angle / 2), cos(angle / 2));
    ecs_mat4 m;
    assert_int_equal(s.tf->get_world(s.tf->self, seat, &m), ECS_OK);
    double x = m.m[12], z = m.m[14];
    if (fabs(x - 2 * cos(angle)) > 1e-3 || fabs(z + 2 * sin(angle)) > 1e-3)
        fail_msg("seat at (%g, %g), expected (%g, %g)", x, z, 2 * cos(angle), -2 * sin(angle));
    assert_int_equal(s.tf->get_local(s.tf->self, still, &l), ECS_OK);
    assert_true(l.rotation.w == 1.0f && l.rotation.y == 0.0f); /* no spin: untouched */
    assert_false(s.tf->has(s.tf->self, bare));                 /* no transform: nothing made */
    assert_int_equal(s.spin->count(s.spin->self), 2);
    assert_int_equal(s.f.w->system_count, 1);
    assert_string_equal(s.f.w->systems[0]->name, "spin.rotate");
    /* a destroyed entity leaves the collection: the system goes on with the others */
    assert_int_equal(host_entity_destroy(s.f.w->entities, hub), ECS_OK);
    frames(&s, 3);
    assert_int_equal(s.spin->count(s.spin->self), 1);
    fixture_close(&s.f);
}

/* ---- JSON ---- */

typedef struct capture {
    int saved;
    char path[64];
} capture;

static void capture_begin(capture *c)
{
    fflush(stderr);
    snprintf(c->path, sizeof c->path, "/tmp/ecs-spin-log-XXXXXX");
    int fd = mkstemp(c->path);
    assert_true(fd >= 0);
    c->saved = dup(2);
    dup2(fd, 2);
    close(fd);
}

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

/* Write text to a scene file in the fixture's folder; its path in out. */
static void scene_file(spin_world *s, const char *name, const char *text, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", s->f.dir, name);
    assert_int_equal(harness_write_file(out, text, 0644), 0);
}

/* The system's rotations spread over job threads give one thread's locals bit for bit, with
 * an entity of the collection dead by the time the system runs (its slot is dropped). */
static void Spin_system_on_job_threads_equals_one_thread(void **state)
{
    (void)state;
    enum { N = 20000 }; /* several chunks of the system's parallel_for */
    spin_world s;
    open_world(&s, false);
    ecs_entity *ents = malloc(N * sizeof *ents);
    ecs_transform_local *start = malloc(N * sizeof *start), *one = malloc(N * sizeof *one);
    assert_true(ents && start && one);
    for (uint32_t i = 0; i < N; i++) {
        ents[i] = make(&s, (float)i, ecs_entity_null());
        ecs_vec3 rate = ecs_vec3_make(0.001f * (float)(i % 97), 0.5f, -0.002f * (float)(i % 13));
        assert_int_equal(s.spin->set(s.spin->self, ents[i], rate), ECS_OK);
        assert_int_equal(s.tf->get_local(s.tf->self, ents[i], &start[i]), ECS_OK);
    }
    ecs_entity dead = ents[N / 2];
    assert_int_equal(host_entity_destroy(s.f.w->entities, dead), ECS_OK); /* not announced */
    const host_system *sys = s.f.w->systems[0];
    ecs_frame_info frame = {.frame = 1, .dt = 1.0 / 60, .time = 1.0};
    static const uint32_t threads[] = {1, 2, 3, 64};
    for (size_t k = 0; k < 4; k++) {
        for (uint32_t i = 0; i < N; i++)
            if (i != N / 2)
                assert_int_equal(s.tf->set_local(s.tf->self, ents[i], &start[i]), ECS_OK);
        host_jobs *pool = threads[k] > 1 ? host_jobs_start(threads[k]) : NULL;
        s.f.w->jobs = pool;
        sys->desc.run(sys->desc.state, ents, N, &frame);
        s.f.w->jobs = NULL;
        host_jobs_stop(pool);
        for (uint32_t i = 0; i < N; i++) {
            if (i == N / 2) continue;
            ecs_transform_local l;
            assert_int_equal(s.tf->get_local(s.tf->self, ents[i], &l), ECS_OK);
            if (k == 0) {
                one[i] = l;
                assert_memory_not_equal(&l.rotation, &start[i].rotation, sizeof l.rotation);
            } else if (memcmp(&l, &one[i], sizeof l) != 0) {
                fail_msg("%u threads: entity %u turned otherwise than on one thread", threads[k],
                         i);
            }
        }
    }
    free(ents);
    free(start);
    free(one);
    fixture_close(&s.f);
}

static void Spin_json_loads_saves_and_reports_bad_values_with_their_place(void **state)
{
    (void)state;
    spin_world s;
    open_world(&s, false);
    char path[512], saved[512];
    scene_file(&s, "good.json",
               "{\"version\": 1, \"entities\": [{\"id\": \"a\", \"transform\": {}, \"spin\": "
               "{\"rate\": [0.1, -2, 3.5]}}]}\n",
               path, sizeof path);
    assert_int_equal(host_scene_load(s.f.s->scene, path), ECS_OK);
    snprintf(saved, sizeof saved, "%s/saved.json", s.f.dir);
    assert_int_equal(host_scene_save(s.f.s->scene, saved), ECS_OK);
    char *text = harness_read_file(saved, NULL);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *rate = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "entities"), 0), "spin"),
        "rate");
    assert_int_equal(cJSON_GetArraySize(rate), 3);
    assert_true(cJSON_GetArrayItem(rate, 0)->valuedouble == 0.1); /* shortest digits */
    assert_true(cJSON_GetArrayItem(rate, 1)->valuedouble == -2.0);
    assert_true(cJSON_GetArrayItem(rate, 2)->valuedouble == 3.5);
    cJSON_Delete(doc);

    static const char *const bad[][2] = {
        {"\"spin\": 5", "entities[0].spin: expected an object {\"rate\": an array of 3 finite"},
        {"\"spin\": {}", "entities[0].spin: expected \"rate\": an array of 3 finite numbers "
                         "(radians per second), found nothing"},
        {"\"spin\": {\"rate\": [1, 2]}",
         "entities[0].spin.rate: expected an array of 3 finite numbers, found 2 elements"},
        {"\"spin\": {\"rate\": \"fast\"}",
         "entities[0].spin.rate: expected an array of 3 finite numbers, found a string"},
        {"\"spin\": {\"rate\": [1, \"a\", 3]}",
         "entities[0].spin.rate[1]: expected a finite number, found a string"},
        {"\"spin\": {\"rate\": [1, 2, 1e300]}",
         "entities[0].spin.rate[2]: expected a finite number (float range), found 1e300"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc_text[256];
        snprintf(doc_text, sizeof doc_text,
                 "{\"version\": 1, \"entities\": [{\"id\": \"b\", %s}]}\n", bad[i][0]);
        scene_file(&s, "bad.json", doc_text, path, sizeof path);
        capture cap;
        capture_begin(&cap);
        assert_int_equal(host_scene_load(s.f.s->scene, path), ECS_ERR_BAD_VALUE);
        char *log = capture_end(&cap);
        if (!strstr(log, "bad.json:1:") || !strstr(log, bad[i][1]))
            fail_msg("for %s the log has no 'bad.json:1:...%s':\n%s", bad[i][0], bad[i][1], log);
        free(log);
    }
    assert_int_equal(s.spin->count(s.spin->self), 1); /* the failed loads left nothing */
    fixture_close(&s.f);
}

/* ---- the demo ---- */

static void world_position(const spin_world *s, const char *name, double p[3])
{
    ecs_entity e = s->dn->find(s->dn->self, name);
    ecs_mat4 m;
    assert_int_equal(s->tf->get_world(s->tf->self, e, &m), ECS_OK);
    p[0] = m.m[12], p[1] = m.m[13], p[2] = m.m[14];
}

static double distance(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
}

static void Spin_demo_scene_moves_the_carousel_horses_in_the_world(void **state)
{
    (void)state;
    spin_world s;
    open_world(&s, true);
    assert_int_equal(host_scene_load(s.f.s->scene, SOURCE_ROOT "/examples/demo.json"), ECS_OK);
    double hub[3], before[3], after[3], vane[3], vane_after[3];
    frames(&s, 1);
    world_position(&s, "Carousel hub", hub);
    world_position(&s, "Carousel horse 1", before);
    world_position(&s, "House 2 weathervane", vane);
    ecs_mesh_info info;
    ecs_entity horse = s.dn->find(s.dn->self, "Carousel horse 1");
    assert_int_equal(s.mesh->get(s.mesh->self, horse, 0, &info), ECS_OK);
    ecs_aabb bounds = info.world_bounds;
    frames(&s, 30);
    world_position(&s, "Carousel horse 1", after);
    world_position(&s, "House 2 weathervane", vane_after);
    if (distance(before, after) < 0.01)
        fail_msg("the horse did not move: (%g, %g, %g)", after[0], after[1], after[2]);
    if (fabs(distance(hub, before) - distance(hub, after)) > 1e-3)
        fail_msg("the horse left its circle: %g then %g from the hub", distance(hub, before),
                 distance(hub, after));
    assert_true(distance(vane, vane_after) < 1e-4); /* turns in place */
    assert_int_equal(s.mesh->get(s.mesh->self, horse, 0, &info), ECS_OK);
    assert_true(info.world_bounds.min.x != bounds.min.x || info.world_bounds.min.z != bounds.min.z);
    fixture_close(&s.f);
}

/* The real ecs-host: --stats has spin.rotate first (weight 10), marked a system; --save
 * writes the carousel's turned rotation. */
static void Spin_demo_runs_in_ecs_host_and_save_shows_the_turn(void **state)
{
    (void)state;
    char *dir = harness_make_tmpdir("ecs-spin-host");
    assert_non_null(dir);
    const char *so[] = {TRANSFORM_SO, SPIN_SO, MESH_SO, DEBUG_NAME_SO};
    for (size_t i = 0; i < 4; i++) {
        char *link = harness_join(dir, strrchr(so[i], '/') + 1);
        assert_int_equal(harness_symlink(so[i], link), 0);
        free(link);
    }
    char *out = harness_join(dir, "saved.json");
    const char *const argv[] = {
        ECS_HOST_PATH, "--fps",   "60",      "--frames",
        "20",          "--stats", "--scene", SOURCE_ROOT "/examples/demo.json",
        "--save",      out,       dir,       NULL};
    harness_output r;
    assert_int_equal(harness_run(&r, 60, argv), 0);
    fprintf(stderr, "# stdout:\n%s# stderr:\n%s", r.out, r.err);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, "[error]"));
    const char *row = strstr(r.out, "\nspin.rotate ");
    assert_non_null(row);
    assert_true(row == strchr(r.out, '\n')); /* the first row */
    const char *eol = strchr(row + 1, '\n');
    assert_non_null(eol);
    assert_true(strncmp(eol - 8, "  system", 8) == 0);
    char *text = harness_read_file(out, NULL);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *e, *carousel = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "entities"))
    {
        const cJSON *id = cJSON_GetObjectItem(e, "id");
        if (cJSON_IsString(id) && strcmp(id->valuestring, "carousel") == 0) carousel = e;
    }
    assert_non_null(carousel);
    const cJSON *rot = cJSON_GetObjectItem(cJSON_GetObjectItem(carousel, "transform"), "rotation");
    double y = cJSON_GetArrayItem(rot, 1)->valuedouble; /* 19 steps of ~1/60 s at 0.5 rad/s */
    if (!(y > 0.02 && y < 0.2)) fail_msg("carousel rotation y %g, expected about 0.08", y);
    assert_non_null(cJSON_GetObjectItem(carousel, "spin"));
    cJSON_Delete(doc);
    harness_output_free(&r);
    harness_remove_tree(dir);
    free(out);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Spin_turns_by_rate_times_dt_and_children_follow),
        cmocka_unit_test(Spin_system_on_job_threads_equals_one_thread),
        cmocka_unit_test(Spin_json_loads_saves_and_reports_bad_values_with_their_place),
        cmocka_unit_test(Spin_demo_scene_moves_the_carousel_horses_in_the_world),
        cmocka_unit_test(Spin_demo_runs_in_ecs_host_and_save_shows_the_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
