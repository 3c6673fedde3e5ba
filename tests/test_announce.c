/* SPDX-License-Identifier: MIT */
/* test_announce.c: cmocka tests of the frame loop (host/world/world.c) with fake managers: batch
 * announcement of destroyed entities after the updates, cascades, index reuse, frame info. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#define MAX_MANAGERS 8
#define MAX_EVENTS   256
#define POOL         16384
#define MAX_FRAMES   16

/* ---- Fixture: a world with fake managers that record every call ------------------- */

typedef struct fixture fixture;

typedef enum event_kind { EV_UPDATE, EV_DESTROYED } event_kind;

typedef struct event {
    event_kind kind;
    int manager;
    uint64_t frame; /* w->frame.frame during the call */
    size_t first;   /* EV_DESTROYED: the batch is pool[first .. first + count) */
    uint32_t count;
} event;

typedef struct fake_manager {
    fixture *fx;
    int index;
    /* optional behaviour, called after the call was recorded */
    void (*on_update)(fixture *fx, int index);
    void (*on_destroyed)(fixture *fx, int index, const ecs_entity *ids, uint32_t count);
    /* what it saw of the frame info */
    const ecs_frame_info *frame_ptr;
    ecs_frame_info seen[MAX_FRAMES];
    int nseen;
} fake_manager;

struct fixture {
    host_session *s; /* its session */
    host_world *w;
    host_plugin *owner;
    fake_manager fake[MAX_MANAGERS];
    int nfake;
    event ev[MAX_EVENTS];
    int nev;
    ecs_entity pool[POOL];
    size_t npool;
    int alive_in_callback; /* ids announced while still alive (must stay 0) */
    /* test data */
    ecs_entity e[2048];
    uint32_t ne;
    ecs_entity made[512]; /* entities made inside callbacks */
    uint32_t nmade;
    uint64_t sleep_ns; /* manager 0 sleeps this long in its update */
};

static void record(fixture *fx, event_kind kind, int manager, const ecs_entity *ids, uint32_t count)
{
    assert_true(fx->nev < MAX_EVENTS);
    event *ev = &fx->ev[fx->nev++];
    ev->kind = kind;
    ev->manager = manager;
    ev->frame = fx->w->frame.frame;
    ev->first = fx->npool;
    ev->count = count;
    assert_true(fx->npool + count <= POOL);
    for (uint32_t i = 0; i < count; i++) {
        fx->pool[fx->npool++] = ids[i];
        if (host_entity_alive(fx->w->entities, ids[i])) fx->alive_in_callback++;
    }
}

static void fake_update(void *state, const ecs_frame_info *frame)
{
    fake_manager *m = state;
    record(m->fx, EV_UPDATE, m->index, NULL, 0);
    m->frame_ptr = frame;
    if (m->nseen < MAX_FRAMES) m->seen[m->nseen++] = *frame;
    if (m->on_update) m->on_update(m->fx, m->index);
}

static void fake_destroyed(void *state, const ecs_entity *ids, uint32_t count)
{
    fake_manager *m = state;
    record(m->fx, EV_DESTROYED, m->index, ids, count);
    if (m->on_destroyed) m->on_destroyed(m->fx, m->index, ids, count);
}

/* Append a manager that records updates and/or announcements; returns its fake. */
static fake_manager *add_manager(fixture *fx, const char *name, bool update, bool destroyed)
{
    host_world *w = fx->w;
    assert_true(fx->nfake < MAX_MANAGERS);
    fake_manager *fm = &fx->fake[fx->nfake];
    fm->fx = fx;
    fm->index = fx->nfake++;
    host_manager *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->name = strdup(name);
    assert_non_null(m->name);
    m->desc.struct_size = sizeof m->desc;
    m->desc.name = m->name;
    m->desc.state = fm;
    m->desc.update = update ? fake_update : NULL;
    m->desc.entities_destroyed = destroyed ? fake_destroyed : NULL;
    m->owner = fx->owner;
    if (w->manager_count == w->manager_cap) {
        size_t cap = w->manager_cap ? w->manager_cap * 2 : 4;
        host_manager **v = realloc(w->managers, cap * sizeof *v);
        assert_non_null(v);
        w->managers = v;
        w->manager_cap = cap;
    }
    w->managers[w->manager_count++] = m;
    return fm;
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    fx->s = host_session_new();
    fx->w = fx->s ? fx->s->world : NULL;
    fx->owner = calloc(1, sizeof *fx->owner);
    if (!fx->w || !fx->owner || !(fx->owner->name = strdup("fake_plugin"))) return -1;
    fx->owner->session = fx->s;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    host_world *w = fx->w;
    for (size_t i = 0; i < w->manager_count; i++) {
        free(w->managers[i]->name);
        free(w->managers[i]);
    }
    w->manager_count = 0; /* the world frees the array itself */
    host_session_free(fx->s);
    free(fx->owner->name);
    free(fx->owner);
    free(fx);
    return 0;
}

/* ---- Helpers ---------------------------------------------------------------------- */

static void create_entities(fixture *fx, uint32_t n)
{
    assert_true(fx->ne + n <= sizeof fx->e / sizeof fx->e[0]);
    assert_int_equal(host_entity_create_many(fx->w->entities, fx->e + fx->ne, n), ECS_OK);
    fx->ne += n;
}

static void destroy(fixture *fx, ecs_entity e)
{
    assert_int_equal(host_entity_destroy(fx->w->entities, e), ECS_OK);
}

/* The events as text: "U0 U1 D0[3] D1[3]": easy to compare and to read in a failure. */
static const char *events_text(const fixture *fx)
{
    static char buf[MAX_EVENTS * 16];
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < fx->nev; i++) {
        const event *ev = &fx->ev[i];
        if (ev->kind == EV_UPDATE)
            len +=
                (size_t)snprintf(buf + len, sizeof buf - len, "%sU%d", i ? " " : "", ev->manager);
        else
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%sD%d[%u]", i ? " " : "",
                                    ev->manager, ev->count);
    }
    return buf;
}

static void expect_events(const fixture *fx, const char *want)
{
    if (strcmp(events_text(fx), want) != 0)
        fail_msg("calls were '%s', expected '%s'", events_text(fx), want);
}

/* The batch of event i must be ids[0..n) in that order. */
static void expect_batch(const fixture *fx, int i, const ecs_entity *ids, uint32_t n)
{
    const event *ev = &fx->ev[i];
    assert_int_equal(ev->kind, EV_DESTROYED);
    if (ev->count != n) fail_msg("event %d: batch of %u, expected %u", i, ev->count, n);
    for (uint32_t k = 0; k < n; k++)
        if (fx->pool[ev->first + k].id != ids[k].id)
            fail_msg("event %d, id %u: %#x, expected %#x", i, k, fx->pool[ev->first + k].id,
                     ids[k].id);
}

/* How many times manager m heard of id e. */
static int times_heard(const fixture *fx, int m, ecs_entity e)
{
    int n = 0;
    for (int i = 0; i < fx->nev; i++) {
        const event *ev = &fx->ev[i];
        if (ev->kind != EV_DESTROYED || ev->manager != m) continue;
        for (uint32_t k = 0; k < ev->count; k++) n += fx->pool[ev->first + k].id == e.id;
    }
    return n;
}

/* ---- One batch -------------------------------------------------------------------- */

static void destroy_2_5_7_in_frame_0(fixture *fx, int index)
{
    (void)index;
    if (fx->w->frame.frame != 0) return;
    destroy(fx, fx->e[2]);
    destroy(fx, fx->e[5]);
    assert_int_equal(host_entity_destroy(fx->w->entities, fx->e[5]), ECS_ERR_STALE_ENTITY);
    destroy(fx, fx->e[7]);
}

static void Announce_batch_after_all_updates_reaches_every_manager_once(void **state)
{
    fixture *fx = *state;
    create_entities(fx, 10);
    add_manager(fx, "m0", true, true)->on_update = destroy_2_5_7_in_frame_0;
    add_manager(fx, "m1", true, true);
    add_manager(fx, "m2", true, false); /* no entities_destroyed: skipped */
    add_manager(fx, "m3", true, true);
    host_world_frame(fx->w);
    expect_events(fx, "U0 U1 U2 U3 D0[3] D1[3] D3[3]");
    const ecs_entity want[] = {fx->e[2], fx->e[5], fx->e[7]}; /* ids as they were alive */
    expect_batch(fx, 4, want, 3);
    expect_batch(fx, 5, want, 3);
    expect_batch(fx, 6, want, 3);
    assert_int_equal(fx->alive_in_callback, 0);
    for (int i = 4; i < 7; i++) assert_int_equal(fx->ev[i].frame, 0); /* the same frame */
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(host_entity_alive(fx->w->entities, fx->e[i]), i != 2 && i != 5 && i != 7);
    /* nothing more to announce: the next frame only updates */
    fx->nev = 0;
    host_world_frame(fx->w);
    expect_events(fx, "U0 U1 U2 U3");
}

static void Announce_entities_destroyed_between_frames_announced_after_next_updates(void **state)
{
    fixture *fx = *state;
    create_entities(fx, 4);
    add_manager(fx, "m0", true, true);
    add_manager(fx, "m1", true, true);
    destroy(fx, fx->e[3]);
    destroy(fx, fx->e[0]);
    host_world_frame(fx->w);
    expect_events(fx, "U0 U1 D0[2] D1[2]");
    const ecs_entity want[] = {fx->e[3], fx->e[0]}; /* oldest first */
    expect_batch(fx, 2, want, 2);
    expect_batch(fx, 3, want, 2);
    assert_int_equal(fx->alive_in_callback, 0);
}

/* ---- Index reuse ------------------------------------------------------------------ */

#define MANY 1100 /* more than ECS_MINIMUM_FREE_INDICES: reusable at once if recycled early */

static void destroy_all_then_create(fixture *fx, int index)
{
    (void)index;
    uint32_t n = fx->w->frame.frame == 0 ? 100 : 50;
    if (fx->w->frame.frame == 0)
        for (uint32_t i = 0; i < MANY; i++) destroy(fx, fx->e[i]);
    assert_true(fx->nmade + n <= sizeof fx->made / sizeof fx->made[0]);
    assert_int_equal(host_entity_create_many(fx->w->entities, fx->made + fx->nmade, n), ECS_OK);
    fx->nmade += n;
}

static void create_while_hearing(fixture *fx, int index, const ecs_entity *ids, uint32_t count)
{
    (void)index;
    (void)ids;
    (void)count;
    for (int i = 0; i < 100; i++)
        assert_int_equal(host_entity_create(fx->w->entities, &fx->made[fx->nmade++]), ECS_OK);
}

static bool index_in_first(const fixture *fx, uint32_t idx, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (ecs_entity_index(fx->e[i]) == idx) return true;
    return false;
}

static void Announce_indices_not_reused_until_after_announcement(void **state)
{
    fixture *fx = *state;
    create_entities(fx, MANY);
    add_manager(fx, "destroyer", true, true)->on_update = destroy_all_then_create;
    add_manager(fx, "creator", true, true)->on_destroyed = create_while_hearing;
    add_manager(fx, "listener", true, true);
    host_world_frame(fx->w);
    expect_events(fx, "U0 U1 U2 D0[1100] D1[1100] D2[1100]");
    assert_int_equal(fx->alive_in_callback, 0);
    expect_batch(fx, 3, fx->e, MANY);
    expect_batch(fx, 5, fx->e, MANY);
    /* made during the update (100) and while hearing the batch (100): all fresh */
    assert_int_equal(fx->nmade, 200);
    for (uint32_t i = 0; i < fx->nmade; i++)
        if (index_in_first(fx, ecs_entity_index(fx->made[i]), MANY))
            fail_msg("entity %u made in frame 0 reuses index %u before the announcement ended", i,
                     ecs_entity_index(fx->made[i]));
    /* next frame: the announced indices are reusable, oldest first, one generation on */
    host_world_frame(fx->w);
    assert_int_equal(fx->nmade, 250);
    for (uint32_t i = 0; i < 50; i++) {
        ecs_entity now = fx->made[200 + i], before = fx->e[i];
        assert_int_equal(ecs_entity_index(now), ecs_entity_index(before));
        assert_int_equal(ecs_entity_generation(now), (ecs_entity_generation(before) + 1) & 0xFF);
        assert_false(host_entity_alive(fx->w->entities, before));
        assert_true(host_entity_alive(fx->w->entities, now));
    }
}

/* ---- Cascades --------------------------------------------------------------------- */

/* Family: P1 -> {C1, C2}, P2 -> {C3}, C1 -> {G1}, and C3 also lists G1 (two links to the
 * same child, so the hierarchy destroys G1 twice: the second must be refused). U is
 * unrelated. */
enum { P1, P2, C1, C2, C3, G1, U, FAMILY };
static const int parent_of[][2] = {{C1, P1}, {C2, P1}, {C3, P2}, {G1, C1}, {G1, C3}};

static void destroy_parents_in_frame_0(fixture *fx, int index)
{
    (void)index;
    if (fx->w->frame.frame != 0) return;
    destroy(fx, fx->e[P1]);
    destroy(fx, fx->e[P2]);
}

static void destroy_children(fixture *fx, int index, const ecs_entity *ids, uint32_t count)
{
    (void)index;
    for (uint32_t k = 0; k < count; k++)
        for (size_t l = 0; l < sizeof parent_of / sizeof parent_of[0]; l++)
            if (fx->e[parent_of[l][1]].id == ids[k].id)
                host_entity_destroy(fx->w->entities, fx->e[parent_of[l][0]]); /* may be stale */
}

static void Announce_cascade_arrives_as_later_batches_in_same_frame(void **state)
{
    fixture *fx = *state;
    create_entities(fx, FAMILY);
    add_manager(fx, "game", true, true)->on_update = destroy_parents_in_frame_0;
    add_manager(fx, "hierarchy", true, true)->on_destroyed = destroy_children;
    add_manager(fx, "render", true, true);
    host_world_frame(fx->w);
    expect_events(fx, "U0 U1 U2 D0[2] D1[2] D2[2] D0[3] D1[3] D2[3] D0[1] D1[1] D2[1]");
    const ecs_entity round1[] = {fx->e[P1], fx->e[P2]};
    const ecs_entity round2[] = {fx->e[C1], fx->e[C2], fx->e[C3]};
    const ecs_entity round3[] = {fx->e[G1]};
    for (int m = 0; m < 3; m++) {
        expect_batch(fx, 3 + m, round1, 2);
        expect_batch(fx, 6 + m, round2, 3);
        expect_batch(fx, 9 + m, round3, 1);
    }
    for (int i = 0; i < fx->nev; i++) assert_int_equal(fx->ev[i].frame, 0);
    for (int m = 0; m < 3; m++)
        for (int k = 0; k < FAMILY; k++)
            if (times_heard(fx, m, fx->e[k]) != (k == U ? 0 : 1))
                fail_msg("manager %d heard of family member %d %d times", m, k,
                         times_heard(fx, m, fx->e[k]));
    assert_int_equal(fx->alive_in_callback, 0);
    assert_true(host_entity_alive(fx->w->entities, fx->e[U]));
    assert_int_equal(host_entities_unannounced(fx->w->entities), 0);
    fx->nev = 0;
    host_world_frame(fx->w);
    expect_events(fx, "U0 U1 U2");
}

/* ---- Frame information and timings ------------------------------------------------ */

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) continue;
}

static void sleep_in_update(fixture *fx, int index)
{
    (void)index;
    sleep_ns(fx->sleep_ns);
}

static void Frame_numbers_dt_and_time_increase(void **state)
{
    fixture *fx = *state;
    fake_manager *m = add_manager(fx, "clock", true, false);
    enum { FRAMES = 6 };
    for (int f = 0; f < FRAMES; f++) {
        host_world_frame(fx->w);
        sleep_ns(1000000); /* 1 ms between frames */
    }
    assert_int_equal(m->nseen, FRAMES);
    assert_ptr_equal(m->frame_ptr, &fx->w->frame); /* the host's own, stable struct */
    assert_int_equal(fx->w->frame.frame, FRAMES);
    assert_int_equal(m->seen[0].frame, 0);
    assert_true(m->seen[0].dt == 0.0);
    assert_true(m->seen[0].time == 0.0);
    double sum = 0;
    for (int f = 1; f < FRAMES; f++) {
        const ecs_frame_info *cur = &m->seen[f], *prev = &m->seen[f - 1];
        assert_int_equal(cur->frame, (uint64_t)f);
        if (!(cur->dt >= 0.001 && cur->dt < 10.0)) fail_msg("frame %d: dt %g s", f, cur->dt);
        if (!(cur->time > prev->time))
            fail_msg("frame %d: time %g after %g", f, cur->time, prev->time);
        sum += cur->dt;
        if (fabs(cur->time - sum) > 1e-6)
            fail_msg("frame %d: time %g, sum of dt %g", f, cur->time, sum);
    }
}

/* With --timing-every 1, one sample per manager per frame; by default one per manager on
 * one frame in HOST_TIME_EVERY (frames 0, 8, 16 of 17), the frame itself timed on all. The
 * managers' times are parts of the timed frames. */
static void Frame_timing_one_sample_per_manager_per_timed_frame(void **state)
{
    fixture *fx = *state;
    fx->sleep_ns = 2000000; /* 2 ms */
    add_manager(fx, "slow", true, true)->on_update = sleep_in_update;
    add_manager(fx, "fast1", true, true);
    add_manager(fx, "fast2", true, false);
    host_world *w = fx->w;
    static const struct {
        uint32_t every;
        int frames, timed;
    } runs[] = {{1, 7, 7}, {HOST_TIME_EVERY, 2 * HOST_TIME_EVERY + 1, 3}};
    uint64_t before = 0, frames_before = 0;
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        w->timing.time_every = runs[r].every;
        w->frame.frame = 0; /* frame 0 is a timed one */
        for (int f = 0; f < runs[r].frames; f++) host_world_frame(w);
        uint64_t managers_total = 0, timed = (uint64_t)runs[r].timed;
        for (size_t i = 0; i < w->manager_count; i++) {
            const host_timing *t = &w->managers[i]->timing;
            if (t->count != before + timed)
                fail_msg("every %u: manager %s: %llu samples after %d more frames", runs[r].every,
                         w->managers[i]->name, (unsigned long long)t->count, runs[r].frames);
            managers_total += t->total_ns;
        }
        before += timed;
        frames_before += (uint64_t)runs[r].frames;
        assert_int_equal(w->timing.frame_timing.count, frames_before);
        assert_int_equal(w->timing.timed_frames, before);
        const host_timing *slow = &w->managers[0]->timing;
        assert_true(slow->max_ns >= fx->sleep_ns);
        assert_true(slow->total_ns >= before * fx->sleep_ns);
        assert_true(managers_total <= w->timing.timed_frames_ns); /* parts of the timed frames */
    }
}

static void Frame_untimed_loop_still_updates_in_order_and_announces(void **state)
{
    fixture *fx = *state;
    fx->w->timing.time_managers = false; /* the bare dispatch loop */
    create_entities(fx, 10);
    add_manager(fx, "m0", true, true)->on_update = destroy_2_5_7_in_frame_0;
    add_manager(fx, "listener_only", false, true); /* no update, hears destroys */
    add_manager(fx, "m2", true, false);
    host_world_frame(fx->w);
    host_world_frame(fx->w);
    expect_events(fx, "U0 U2 D0[3] D1[3] U0 U2");
    const ecs_entity want[] = {fx->e[2], fx->e[5], fx->e[7]};
    expect_batch(fx, 3, want, 3);
    assert_int_equal(fx->ev[4].frame, 1);
    assert_int_equal(fx->w->frame.frame, 2);
    for (size_t i = 0; i < fx->w->manager_count; i++)
        assert_int_equal(fx->w->managers[i]->timing.count, 0); /* nothing timed */
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(Announce_batch_after_all_updates_reaches_every_manager_once),
        TEST(Announce_entities_destroyed_between_frames_announced_after_next_updates),
        TEST(Announce_indices_not_reused_until_after_announcement),
        TEST(Announce_cascade_arrives_as_later_batches_in_same_frame),
        TEST(Frame_numbers_dt_and_time_increase),
        TEST(Frame_timing_one_sample_per_manager_per_timed_frame),
        TEST(Frame_untimed_loop_still_updates_in_order_and_announces),
    };
    return cmocka_run_group_tests_name("announce", tests, NULL, NULL);
}
