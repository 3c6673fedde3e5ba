/* SPDX-License-Identifier: MIT */
/* test_entity.c: cmocka tests of the host's EntityManager (host/world/entity.c): id layout, stale
 * handles, exhaustion, batches, announcements, FIFO reuse distance and a randomized model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "entity.h"

#define INDEX_COUNT  (1u << ECS_ENTITY_INDEX_BITS)
#define MAX_ENTITIES (INDEX_COUNT - 1u) /* index 0 is never handed out */
#define MIN_FREE     ECS_MINIMUM_FREE_INDICES
#define REUSE_BOUND  (256u * MIN_FREE) /* destroys before an id may come back */
#define CHUNK        65536u            /* create_many batch size in the exhaustion tests */
#define SCRATCH_MAX  16

/* ---- Fixture: one manager per test, scratch memory freed also when a test fails ---- */

typedef struct fixture {
    host_entities *em;
    void *mem[SCRATCH_MAX];
    int nmem;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->em = host_entities_new();
    if (!f->em) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < f->nmem; i++) free(f->mem[i]);
    host_entities_free(f->em);
    free(f);
    return 0;
}

static host_entities *em_of(void **state)
{
    return ((fixture *)*state)->em;
}

/* Zeroed memory owned by the fixture. */
static void *scratch(void **state, size_t count, size_t size)
{
    fixture *f = *state;
    assert_true(f->nmem < SCRATCH_MAX);
    void *p = calloc(count, size);
    assert_non_null(p);
    f->mem[f->nmem++] = p;
    return p;
}

/* ---- Helpers ---------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s) /* xorshift64* */
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static uint32_t rng_below(uint64_t *s, uint32_t n) /* uniform in [0, n), n > 0 */
{
    return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

static bool bit_get(const uint8_t *bits, uint32_t i)
{
    return (bits[i >> 3] >> (i & 7u)) & 1u;
}

static void bit_set(uint8_t *bits, uint32_t i)
{
    bits[i >> 3] |= (uint8_t)(1u << (i & 7u));
}

static void bit_clear(uint8_t *bits, uint32_t i)
{
    bits[i >> 3] &= (uint8_t) ~(1u << (i & 7u));
}

/* A freshly created id: top two bits zero, index not 0, alive through both checks. */
static void check_new_id(const host_entities *em, ecs_entity e)
{
    assert_int_equal(e.id >> 30, 0);
    assert_int_not_equal(ecs_entity_index(e), 0);
    assert_true(host_entity_alive(em, e));
    assert_true(ecs_alive_in(host_entities_generations(em), e));
}

static ecs_entity create_one(host_entities *em)
{
    ecs_entity e = {0};
    assert_int_equal(host_entity_create(em, &e), ECS_OK);
    check_new_id(em, e);
    return e;
}

/* Mark e's index in live_bits; fails when another live id already holds that index. */
static void claim_index(uint8_t *live_bits, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    if (bit_get(live_bits, idx)) fail_msg("index %" PRIu32 " handed out twice (id %#x)", idx, e.id);
    bit_set(live_bits, idx);
}

/* ---- Null entity and id layout ---------------------------------------------------- */

/* Skipping n live entities (the inspector's page offset) lands where walking them one by
 * one with host_entities_next_live does, over a random pattern of live and dead. */
static void Entity_skip_live_matches_walking_one_by_one(void **state)
{
    host_entities *em = em_of(state);
    ecs_entity *made = scratch(state, 5000, sizeof *made);
    assert_int_equal(host_entity_create_many(em, made, 5000), ECS_OK);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 5000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (x % 3 == 0) host_entity_destroy(em, made[i]);
    }
    uint32_t live = host_entities_live(em);
    for (uint64_t n = 0; n <= live + 2; n += 1 + n / 7) {
        uint32_t from = 0, k = 0;
        ecs_entity e;
        while (k < n && host_entities_next_live(em, from, &e)) from = ecs_entity_index(e) + 1, k++;
        uint32_t skipped = host_entities_skip_live(em, 0, n);
        /* the next live entity from either place is the same one */
        ecs_entity a = ecs_entity_null(), b = ecs_entity_null();
        bool ha = host_entities_next_live(em, from, &a),
             hb = host_entities_next_live(em, skipped, &b);
        if (ha != hb || a.id != b.id)
            fail_msg("n=%llu: walked to %u, skipped to %u", (unsigned long long)n, from, skipped);
    }
}

static void Entity_null_entity_is_never_alive(void **state)
{
    host_entities *em = em_of(state);
    const uint8_t *gens = host_entities_generations(em);
    ecs_entity zero = {0};
    assert_true(ecs_entity_is_null(zero));
    assert_false(host_entity_alive(em, zero));
    assert_false(host_entity_alive(em, ecs_entity_null()));
    assert_false(ecs_alive_in(gens, zero));
    /* Churn one entity until every generation byte value went by: null stays dead. */
    ecs_entity cur = create_one(em);
    for (uint32_t i = 0; i < 300000; i++) {
        assert_int_equal(host_entity_destroy(em, cur), ECS_OK);
        host_entities_flush(em);
        cur = create_one(em);
        if (host_entity_alive(em, zero) || ecs_alive_in(gens, zero))
            fail_msg("null entity alive after %" PRIu32 " destroys", i + 1);
    }
    assert_true(host_entities_generations(em) == gens); /* the array never moved */
}

static void Entity_ids_have_top_bits_zero_and_index_0_never_handed_out(void **state)
{
    host_entities *em = em_of(state);
    bool gen_seen[256] = {false};
    ecs_entity cur = create_one(em);
    for (uint32_t i = 0; i < 300000; i++) {
        assert_int_equal(host_entity_destroy(em, cur), ECS_OK);
        host_entities_flush(em);
        if (i % 2) {
            assert_int_equal(host_entity_create_many(em, &cur, 1), ECS_OK);
        } else {
            assert_int_equal(host_entity_create(em, &cur), ECS_OK);
        }
        check_new_id(em, cur); /* top bits zero, index != 0 */
        gen_seen[ecs_entity_generation(cur)] = true;
    }
    /* The loop went through every generation, so the check covered generation 255 too. */
    for (int g = 0; g < 256; g++) assert_true(gen_seen[g]);
}

/* ---- Seed scenarios --------------------------------------------------------------- */

static void Entity_stale_handle_after_reuse_is_not_alive(void **state)
{
    host_entities *em = em_of(state);
    enum { N = 1100 }; /* more than ECS_MINIMUM_FREE_INDICES, to force reuse */
    ecs_entity old[N];
    for (int i = 0; i < N; i++) old[i] = create_one(em);
    for (int i = 0; i < N; i++) assert_int_equal(host_entity_destroy(em, old[i]), ECS_OK);
    host_entities_flush(em);
    ecs_entity fresh = {0};
    bool reused = false;
    for (int i = 0; i < 4 * N && !reused; i++) {
        fresh = create_one(em);
        reused = ecs_entity_index(fresh) == ecs_entity_index(old[0]);
    }
    assert_true(reused); /* the index did come back */
    assert_false(host_entity_alive(em, old[0]));
    assert_false(ecs_alive_in(host_entities_generations(em), old[0]));
    assert_true(host_entity_alive(em, fresh));
    assert_int_not_equal(ecs_entity_generation(fresh), ecs_entity_generation(old[0]));
    assert_int_equal(ecs_entity_generation(fresh), (ecs_entity_generation(old[0]) + 1) & 0xFFu);
    for (int i = 0; i < N; i++) assert_false(host_entity_alive(em, old[i]));
}

static void Entity_zombie_monster_not_alive_after_new_hero_reuses_index(void **state)
{
    host_entities *em = em_of(state);
    ecs_entity monster = create_one(em);
    ecs_entity others[MIN_FREE];
    for (uint32_t i = 0; i < MIN_FREE; i++) others[i] = create_one(em);
    assert_int_equal(host_entity_destroy(em, monster), ECS_OK);
    for (uint32_t i = 0; i < MIN_FREE; i++)
        assert_int_equal(host_entity_destroy(em, others[i]), ECS_OK);
    host_entities_flush(em); /* MIN_FREE + 1 reusable: the oldest, monster's, comes back */
    ecs_entity new_hero = create_one(em);
    assert_int_equal(ecs_entity_index(new_hero), ecs_entity_index(monster));
    assert_false(host_entity_alive(em, monster));
    assert_true(host_entity_alive(em, new_hero));
    /* The zombie handle cannot kill the hero. */
    assert_int_equal(host_entity_destroy(em, monster), ECS_ERR_STALE_ENTITY);
    assert_true(host_entity_alive(em, new_hero));
    assert_int_equal(host_entities_live(em), 1);
}

static void Entity_double_destroy_is_stale_and_queues_index_once(void **state)
{
    host_entities *em = em_of(state);
    enum { N = 1100 };
    uint8_t *live_bits = scratch(state, INDEX_COUNT / 8, 1);
    ecs_entity *ids = scratch(state, N + 1, sizeof *ids);
    ecs_entity e = create_one(em);
    for (int i = 0; i < N; i++) ids[i] = create_one(em);
    assert_int_equal(host_entity_destroy(em, e), ECS_OK);
    assert_int_equal(host_entity_destroy(em, e), ECS_ERR_STALE_ENTITY);
    assert_int_equal(host_entities_unannounced(em), 1);
    assert_int_equal(host_entities_live(em), N);
    for (int i = 0; i < N; i++) assert_int_equal(host_entity_destroy(em, ids[i]), ECS_OK);
    /* The announcement lists e once. */
    ecs_entity *taken = scratch(state, 2 * N, sizeof *taken);
    uint32_t n = host_entities_take_destroyed(em, taken, 2 * N);
    assert_int_equal(n, N + 1);
    uint32_t times = 0;
    for (uint32_t i = 0; i < n; i++) times += ecs_entity_eq(taken[i], e);
    assert_int_equal(times, 1);
    host_entities_recycle(em);
    /* Reuse every queued index and more: never two live ids with one index. */
    for (int i = 0; i < 4 * N; i++) claim_index(live_bits, create_one(em));
    assert_int_equal(host_entities_live(em), 4 * N);
}

static void Entity_double_destroy_then_flush_never_duplicates_live_index(void **state)
{
    host_entities *em = em_of(state);
    uint8_t *live_bits = scratch(state, INDEX_COUNT / 8, 1);
    enum { N = 3000 };
    ecs_entity *ids = scratch(state, N, sizeof *ids);
    for (int i = 0; i < N; i++) ids[i] = create_one(em);
    for (int i = 0; i < N; i++) { /* every entity destroyed twice, the second refused */
        assert_int_equal(host_entity_destroy(em, ids[i]), ECS_OK);
        assert_int_equal(host_entity_destroy(em, ids[i]), ECS_ERR_STALE_ENTITY);
    }
    assert_int_equal(host_entities_unannounced(em), N);
    host_entities_flush(em);
    for (int i = 0; i < 3 * N; i++) claim_index(live_bits, create_one(em));
    assert_int_equal(host_entities_live(em), 3 * N);
}

static void Entity_destroy_null_or_dead_id_is_stale_noop(void **state)
{
    host_entities *em = em_of(state);
    ecs_entity zero = {0};
    assert_int_equal(host_entity_destroy(em, zero), ECS_ERR_STALE_ENTITY);
    assert_int_equal(host_entity_destroy(em, ecs_entity_null()), ECS_ERR_STALE_ENTITY);
    assert_int_equal(host_entities_live(em), 0);
    assert_int_equal(host_entities_unannounced(em), 0);

    ecs_entity e = create_one(em), dead = create_one(em);
    assert_int_equal(host_entity_destroy(em, dead), ECS_OK);
    uint32_t idx = ecs_entity_index(e), gen = ecs_entity_generation(e);
    ecs_entity bad[] = {
        zero,
        dead,                                          /* destroyed */
        ecs_entity_make(idx, gen + 1),                 /* a generation not reached yet */
        ecs_entity_make(idx, gen + 255),               /* the previous generation */
        {e.id | (1u << 30)},                           /* e with a top bit set */
        {e.id | (1u << 31)},                           /* the other top bit */
        ecs_entity_make(ecs_entity_index(dead), 0xFF), /* dead's index, another generation */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(host_entity_alive(em, bad[i]));
        assert_int_equal(host_entity_destroy(em, bad[i]), ECS_ERR_STALE_ENTITY);
        assert_true(host_entity_alive(em, e));
        assert_int_equal(host_entities_live(em), 1);
        assert_int_equal(host_entities_unannounced(em), 1);
    }
    assert_false(host_entity_alive(em, zero));
}

/* Ids the manager never handed out: index 0 with its reserved generation byte, and an index
 * no entity ever had. Destroying them must change nothing (entity.h: "A dead, stale or null
 * id changes nothing ... so no index is ever queued twice"). */
static void Entity_destroy_never_handed_out_id_is_stale_noop(void **state)
{
    host_entities *em = em_of(state);
    uint8_t *live_bits = scratch(state, INDEX_COUNT / 8, 1);
    enum { N = 10 };
    ecs_entity made[N];
    for (int i = 0; i < N; i++) claim_index(live_bits, made[i] = create_one(em));
    assert_false(bit_get(live_bits, 5000));
    const ecs_entity never[] = {
        ecs_entity_make(0, 0xFF),                 /* index 0, whose byte is 0xFF */
        ecs_entity_make(0, 1),                    /* index 0, another generation */
        ecs_entity_make(5000, 0),                 /* an index never handed out */
        ecs_entity_make(ECS_ENTITY_MAX_INDEX, 0), /* the last index */
    };
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        if (host_entity_destroy(em, never[i]) != ECS_ERR_STALE_ENTITY)
            fail_msg("destroy of never handed out id %#x accepted", never[i].id);
        assert_int_equal(host_entities_live(em), N);
        assert_int_equal(host_entities_unannounced(em), 0);
        assert_false(host_entity_alive(em, ecs_entity_null()));
    }
    for (int i = 0; i < N; i++) assert_true(host_entity_alive(em, made[i]));
    for (int i = 0; i < 6000; i++) claim_index(live_bits, create_one(em));
    assert_int_equal(host_entities_live(em), N + 6000);
}

/* A stale id whose index went through the queue 256 times has the generation byte of its
 * index again while that index still waits, dead, in the queue. Destroying it then must be
 * refused: the index is dead and queueing it twice would later hand it out twice. */
static void Entity_destroy_of_wrapped_stale_id_while_index_queued_is_stale(void **state)
{
    host_entities *em = em_of(state);
    const uint8_t *gens = host_entities_generations(em);
    ecs_entity x = create_one(em), cur = x;
    uint64_t destroys = 0, window_at = 0, tried = 0;
    for (;;) {
        assert_true(destroys < 4u * REUSE_BOUND); /* FIFO brings x back after ~262k */
        assert_int_equal(host_entity_destroy(em, cur), ECS_OK);
        destroys++;
        host_entities_flush(em);
        cur = create_one(em);
        if (ecs_entity_eq(cur, x)) break; /* x handed out again: a documented alias */
        if (!ecs_alive_in(gens, x)) continue;
        if (!window_at) window_at = destroys;
        tried++;
        ecs_status s = host_entity_destroy(em, x);
        if (s != ECS_ERR_STALE_ENTITY)
            fail_msg("destroy of stale id %#x whose index is queued returned %d, %" PRIu64
                     " destroys after it died (live now %" PRIu32 ")",
                     x.id, (int)s, destroys - 1, host_entities_live(em));
        assert_int_equal(host_entities_live(em), 1);
        assert_true(host_entity_alive(em, cur));
    }
    /* Destroys counted after x's own. */
    print_message("# stale id reads alive again %" PRIu64 " destroys after it died, handed out"
                  " again after %" PRIu64 "; %" PRIu64 " destroys of it probed\n",
                  window_at - 1, destroys - 1, tried);
    assert_true(window_at > 0); /* the window was reached and probed */
    assert_true(destroys - 1 >= REUSE_BOUND);
}

static void Entity_destroy_many_counts_repeated_id_once(void **state)
{
    host_entities *em = em_of(state);
    ecs_entity a = create_one(em), b = create_one(em), c = create_one(em);
    ecs_entity list[] = {a, a, b, ecs_entity_null(), b};
    uint32_t destroyed = 99;
    assert_int_equal(host_entity_destroy_many(em, list, 5, &destroyed), ECS_ERR_STALE_ENTITY);
    assert_int_equal(destroyed, 2);
    assert_false(host_entity_alive(em, a));
    assert_false(host_entity_alive(em, b));
    assert_true(host_entity_alive(em, c));
    assert_int_equal(host_entities_live(em), 1);
    assert_int_equal(host_entities_unannounced(em), 2);
    /* All live: ECS_OK; NULL count pointer allowed; empty list. */
    assert_int_equal(host_entity_destroy_many(em, &c, 1, NULL), ECS_OK);
    assert_int_equal(host_entity_destroy_many(em, list, 0, &destroyed), ECS_OK);
    assert_int_equal(destroyed, 0);
    assert_int_equal(host_entities_live(em), 0);
    assert_int_equal(host_entities_unannounced(em), 3);
}

/* ---- Exhaustion ------------------------------------------------------------------- */

/* Create MAX_ENTITIES - leave entities (with create_many in chunks and a few single
 * creates), checking each is new, well formed and alive. keep[0..nkeep) gets the first
 * ids. */
static void fill(void **state, uint8_t *live_bits, uint32_t leave, ecs_entity *keep, uint32_t nkeep)
{
    host_entities *em = em_of(state);
    ecs_entity *buf = scratch(state, CHUNK, sizeof *buf);
    uint32_t target = MAX_ENTITIES - leave, made = 0;
    for (; made < 8; made++) { /* a few single creates first */
        ecs_entity e = create_one(em);
        claim_index(live_bits, e);
        if (made < nkeep) keep[made] = e;
    }
    while (made < target - 8) {
        uint32_t n = target - 8 - made < CHUNK ? target - 8 - made : CHUNK;
        assert_int_equal(host_entity_create_many(em, buf, n), ECS_OK);
        for (uint32_t i = 0; i < n; i++, made++) {
            check_new_id(em, buf[i]);
            claim_index(live_bits, buf[i]);
            if (made < nkeep) keep[made] = buf[i];
        }
    }
    for (; made < target; made++) claim_index(live_bits, create_one(em));
    assert_int_equal(host_entities_live(em), target);
    assert_false(bit_get(live_bits, 0));
}

static void Entity_full_at_max_entities_until_a_destroyed_index_is_recycled(void **state)
{
    host_entities *em = em_of(state);
    uint8_t *live_bits = scratch(state, INDEX_COUNT / 8, 1);
    enum { KEEP = 16 };
    ecs_entity keep[KEEP];
    fill(state, live_bits, 0, keep, KEEP);
    assert_int_equal(host_entities_live(em), MAX_ENTITIES);

    ecs_entity e = {0xDEADBEEFu}, many[16];
    assert_int_equal(host_entity_create(em, &e), ECS_ERR_FULL);
    assert_true(ecs_entity_is_null(e));
    assert_int_equal(host_entity_create_many(em, many, 1), ECS_ERR_FULL);
    assert_int_equal(host_entities_live(em), MAX_ENTITIES);
    assert_int_equal(host_entity_create_many(em, many, 0), ECS_OK);
    assert_int_equal(host_entities_live(em), MAX_ENTITIES);

    /* A destroyed index is not reusable before it is announced and recycled (or flushed),
     * then comes back from the queue although fewer than ECS_MINIMUM_FREE_INDICES wait: no
     * fresh index is left. */
    assert_int_equal(host_entity_destroy(em, keep[3]), ECS_OK);
    assert_int_equal(host_entity_create(em, &e), ECS_ERR_FULL);
    assert_true(ecs_entity_is_null(e));
    assert_int_equal(host_entity_create_many(em, many, 1), ECS_ERR_FULL);
    assert_int_equal(host_entities_take_destroyed(em, many, 16), 1);
    assert_int_equal(many[0].id, keep[3].id);
    assert_int_equal(host_entity_create(em, &e), ECS_ERR_FULL); /* announced, not recycled */
    assert_int_equal(host_entity_create_many(em, many, 1), ECS_ERR_FULL);
    assert_int_equal(host_entities_live(em), MAX_ENTITIES - 1);
    host_entities_recycle(em);
    e = create_one(em);
    assert_int_equal(ecs_entity_index(e), ecs_entity_index(keep[3]));
    assert_int_equal(ecs_entity_generation(e), (ecs_entity_generation(keep[3]) + 1) & 0xFFu);
    assert_false(host_entity_alive(em, keep[3]));
    assert_int_equal(host_entity_create(em, &keep[3]), ECS_ERR_FULL);
    keep[3] = e;

    /* Ten destroyed: create_many of eleven creates nothing, of ten takes them in order. */
    for (int i = 0; i < 10; i++) assert_int_equal(host_entity_destroy(em, keep[i]), ECS_OK);
    host_entities_flush(em);
    assert_int_equal(host_entity_create_many(em, many, 11), ECS_ERR_FULL);
    assert_int_equal(host_entities_live(em), MAX_ENTITIES - 10);
    assert_int_equal(host_entity_create_many(em, many, 10), ECS_OK);
    for (int i = 0; i < 10; i++) {
        check_new_id(em, many[i]);
        assert_int_equal(ecs_entity_index(many[i]), ecs_entity_index(keep[i]));
        assert_false(host_entity_alive(em, keep[i]));
    }
    assert_int_equal(host_entities_live(em), MAX_ENTITIES);
    assert_int_equal(host_entity_create(em, &e), ECS_ERR_FULL);
    assert_int_equal(host_entity_create_many(em, many, 1), ECS_ERR_FULL);
}

static void Entity_create_many_near_full_takes_queue_then_fresh_then_queue(void **state)
{
    host_entities *em = em_of(state);
    uint8_t *ever = scratch(state, INDEX_COUNT / 8, 1);
    enum { FRESH = 5, DESTROYED = MIN_FREE + 6, N = DESTROYED + FRESH };
    ecs_entity *keep = scratch(state, DESTROYED, sizeof *keep);
    ecs_entity *out = scratch(state, N, sizeof *out);
    fill(state, ever, FRESH, keep, DESTROYED); /* 'ever': every index handed out */
    for (int i = 0; i < DESTROYED; i++) assert_int_equal(host_entity_destroy(em, keep[i]), ECS_OK);
    host_entities_flush(em);
    assert_int_equal(host_entity_create_many(em, out, N + 1), ECS_ERR_FULL);
    assert_int_equal(host_entity_create_many(em, out, N), ECS_OK);
    /* Queue beyond the minimum (6), then the fresh indices, then the queue anyway. */
    for (int i = 0; i < N; i++) {
        check_new_id(em, out[i]);
        uint32_t idx = ecs_entity_index(out[i]);
        if (i < 6) {
            assert_int_equal(idx, ecs_entity_index(keep[i]));
        } else if (i < 6 + FRESH) {
            assert_false(bit_get(ever, idx));
            assert_int_equal(ecs_entity_generation(out[i]), 0);
            bit_set(ever, idx);
        } else {
            assert_int_equal(idx, ecs_entity_index(keep[i - FRESH]));
        }
    }
    for (int i = 0; i < DESTROYED; i++) assert_false(host_entity_alive(em, keep[i]));
    assert_int_equal(host_entities_live(em), MAX_ENTITIES);
    ecs_entity e;
    assert_int_equal(host_entity_create(em, &e), ECS_ERR_FULL);
}

/* ---- create_many ------------------------------------------------------------------ */

static void Entity_create_many_ids_distinct_and_alive(void **state)
{
    host_entities *em = em_of(state);
    uint8_t *live_bits = scratch(state, INDEX_COUNT / 8, 1);
    enum { N = 10000, M = 12000 };
    ecs_entity *a = scratch(state, N, sizeof *a), *b = scratch(state, M, sizeof *b);
    assert_int_equal(host_entity_create_many(em, a, N), ECS_OK);
    for (int i = 0; i < N; i++) {
        check_new_id(em, a[i]);
        claim_index(live_bits, a[i]);
    }
    assert_int_equal(host_entities_live(em), N);
    assert_int_equal(host_entity_create_many(em, b, 0), ECS_OK);
    assert_int_equal(host_entities_live(em), N);

    /* More than the minimum reusable: the queue part comes first, oldest first. */
    for (int i = 0; i < N; i++) {
        assert_int_equal(host_entity_destroy(em, a[i]), ECS_OK);
        bit_clear(live_bits, ecs_entity_index(a[i]));
    }
    host_entities_flush(em);
    assert_int_equal(host_entity_create_many(em, b, M), ECS_OK);
    for (int i = 0; i < M; i++) {
        check_new_id(em, b[i]);
        claim_index(live_bits, b[i]);
        if (i < N - (int)MIN_FREE) {
            assert_int_equal(ecs_entity_index(b[i]), ecs_entity_index(a[i]));
            assert_int_equal(ecs_entity_generation(b[i]),
                             (ecs_entity_generation(a[i]) + 1) & 0xFFu);
        } else {
            assert_int_equal(ecs_entity_generation(b[i]), 0); /* fresh */
        }
    }
    for (int i = 0; i < N; i++) assert_false(host_entity_alive(em, a[i]));
    assert_int_equal(host_entities_live(em), M);
}

static void Entity_create_many_reuses_queue_only_beyond_minimum(void **state)
{
    host_entities *em = em_of(state);
    uint8_t *old_bits = scratch(state, INDEX_COUNT / 8, 1);
    uint8_t *live_bits = scratch(state, INDEX_COUNT / 8, 1);
    enum { N = 1000, M = 2000 };
    ecs_entity *a = scratch(state, N + 25, sizeof *a), *b = scratch(state, M, sizeof *b);
    for (int i = 0; i < N + 25; i++) a[i] = create_one(em);
    for (int i = 0; i < N; i++) {
        assert_int_equal(host_entity_destroy(em, a[i]), ECS_OK);
        bit_set(old_bits, ecs_entity_index(a[i]));
    }
    for (int i = N; i < N + 25; i++) claim_index(live_bits, a[i]);
    host_entities_flush(em);
    /* 1000 reusable (not more than the minimum): every id is fresh. */
    assert_int_equal(host_entity_create_many(em, b, M), ECS_OK);
    for (int i = 0; i < M; i++) {
        check_new_id(em, b[i]);
        claim_index(live_bits, b[i]);
        assert_false(bit_get(old_bits, ecs_entity_index(b[i])));
    }
    /* 25 more: 1025 reusable, one beyond the minimum: the oldest comes first. */
    for (int i = N; i < N + 25; i++) {
        assert_int_equal(host_entity_destroy(em, a[i]), ECS_OK);
        bit_clear(live_bits, ecs_entity_index(a[i]));
    }
    host_entities_flush(em);
    assert_int_equal(host_entity_create_many(em, b, 3), ECS_OK);
    assert_int_equal(ecs_entity_index(b[0]), ecs_entity_index(a[0]));
    for (int i = 0; i < 3; i++) {
        check_new_id(em, b[i]);
        claim_index(live_bits, b[i]);
    }
    assert_false(bit_get(old_bits, ecs_entity_index(b[1])));
    assert_false(bit_get(old_bits, ecs_entity_index(b[2])));
    assert_int_equal(host_entities_live(em), M + 3);
}

/* ---- Announcements: take_destroyed, recycle, flush ---------------------------------- */

static void Entity_take_destroyed_returns_each_destroyed_id_oldest_first(void **state)
{
    host_entities *em = em_of(state);
    enum { N = 3000, FIRST = 2000, LATER = 500, TOTAL = FIRST + LATER };
    uint8_t *dead_bits = scratch(state, INDEX_COUNT / 8, 1);
    ecs_entity *ids = scratch(state, N, sizeof *ids);
    ecs_entity *order = scratch(state, TOTAL, sizeof *order);
    ecs_entity *got = scratch(state, TOTAL + 8, sizeof *got);
    for (int i = 0; i < N; i++) ids[i] = create_one(em);
    uint64_t rng = 0x5EEDu;
    for (int i = N - 1; i > 0; i--) { /* shuffle: destroy order differs from creation */
        uint32_t j = rng_below(&rng, (uint32_t)i + 1);
        ecs_entity t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
    for (int i = 0; i < FIRST; i++) {
        assert_int_equal(host_entity_destroy(em, ids[i]), ECS_OK);
        order[i] = ids[i];
        bit_set(dead_bits, ecs_entity_index(ids[i]));
    }
    assert_int_equal(host_entities_unannounced(em), FIRST);
    uint32_t ngot = 0, calls = 0, n;
    while ((n = host_entities_take_destroyed(em, got + ngot, 7)) > 0) {
        assert_true(n <= 7);
        ngot += n;
        if (++calls == 1) { /* destroyed while hearing of the batch: a later call has them */
            for (int i = FIRST; i < TOTAL; i++) {
                assert_int_equal(host_entity_destroy(em, ids[i]), ECS_OK);
                order[i] = ids[i];
                bit_set(dead_bits, ecs_entity_index(ids[i]));
            }
        }
        assert_true(ngot <= TOTAL);
    }
    assert_int_equal(ngot, TOTAL);
    for (int i = 0; i < TOTAL; i++) {
        assert_int_equal(got[i].id, order[i].id); /* as they were when alive, in order */
        assert_false(host_entity_alive(em, got[i]));
    }
    assert_int_equal(host_entities_unannounced(em), 0);
    assert_int_equal(host_entities_take_destroyed(em, got, TOTAL), 0);

    /* Announced but not recycled: no index comes back. */
    for (int i = 0; i < N; i++) assert_false(bit_get(dead_bits, ecs_entity_index(create_one(em))));
    /* Recycled: the queue beyond the minimum is reused, oldest first. */
    host_entities_recycle(em);
    for (int i = 0; i < TOTAL - (int)MIN_FREE; i++) {
        ecs_entity e = create_one(em);
        assert_int_equal(ecs_entity_index(e), ecs_entity_index(order[i]));
        assert_int_equal(ecs_entity_generation(e), (ecs_entity_generation(order[i]) + 1) & 0xFFu);
    }
    assert_false(bit_get(dead_bits, ecs_entity_index(create_one(em))));
}

static void Entity_recycle_makes_only_announced_indices_reusable(void **state)
{
    host_entities *em = em_of(state);
    enum { N = 3000, D = 2000, TAKE = 1500 };
    uint8_t *dead_bits = scratch(state, INDEX_COUNT / 8, 1);
    ecs_entity *ids = scratch(state, N, sizeof *ids);
    ecs_entity *got = scratch(state, D, sizeof *got);
    for (int i = 0; i < N; i++) ids[i] = create_one(em);
    for (int i = 0; i < D; i++) {
        assert_int_equal(host_entity_destroy(em, ids[i]), ECS_OK);
        bit_set(dead_bits, ecs_entity_index(ids[i]));
    }
    assert_int_equal(host_entities_take_destroyed(em, got, TAKE), TAKE);
    assert_int_equal(host_entities_unannounced(em), D - TAKE);
    host_entities_recycle(em);
    /* TAKE reusable: TAKE - MIN_FREE come back, then fresh ones. */
    for (int i = 0; i < TAKE - (int)MIN_FREE; i++)
        assert_int_equal(ecs_entity_index(create_one(em)), ecs_entity_index(ids[i]));
    for (int i = 0; i < 100; i++)
        assert_false(bit_get(dead_bits, ecs_entity_index(create_one(em))));
    /* A second recycle without a take changes nothing. */
    host_entities_recycle(em);
    assert_false(bit_get(dead_bits, ecs_entity_index(create_one(em))));
    /* The rest taken and recycled: they follow, in order. */
    assert_int_equal(host_entities_take_destroyed(em, got, D), D - TAKE);
    for (int i = 0; i < D - TAKE; i++) assert_int_equal(got[i].id, ids[TAKE + i].id);
    host_entities_recycle(em);
    for (int i = TAKE - (int)MIN_FREE; i < D - (int)MIN_FREE; i++)
        assert_int_equal(ecs_entity_index(create_one(em)), ecs_entity_index(ids[i]));
}

static void Entity_flush_makes_destroyed_reusable_without_announcing(void **state)
{
    host_entities *em = em_of(state);
    enum { N = MIN_FREE + 76 };
    ecs_entity ids[N], got[4];
    for (uint32_t i = 0; i < N; i++) ids[i] = create_one(em);
    for (uint32_t i = 0; i < N; i++) assert_int_equal(host_entity_destroy(em, ids[i]), ECS_OK);
    assert_int_equal(host_entities_take_destroyed(em, got, 4), 4); /* part announced */
    host_entities_flush(em);
    assert_int_equal(host_entities_unannounced(em), 0);
    assert_int_equal(host_entities_take_destroyed(em, got, 4), 0);
    for (uint32_t i = 0; i < N - MIN_FREE; i++)
        assert_int_equal(ecs_entity_index(create_one(em)), ecs_entity_index(ids[i]));
}

/* ---- Reuse distance --------------------------------------------------------------- */

/* For every id handed out, the number of destroys (of any entity) between the moment it was
 * destroyed and the moment the same id value is handed out again. Per index, the destroy
 * count at each generation's death. */
typedef struct reuse_tracker {
    uint32_t *slot_of;      /* INDEX_COUNT: 1 + slot of an index, 0 = not seen */
    uint64_t *destroyed_at; /* [slot * 256 + generation]: destroys so far when it died */
    uint32_t nslots, cap;
    uint64_t destroys, repeats, min_distance, first_repeat;
} reuse_tracker;

static uint64_t *tracker_slot(reuse_tracker *t, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    if (!t->slot_of[idx]) {
        assert_true(t->nslots < t->cap);
        t->slot_of[idx] = ++t->nslots;
    }
    return &t->destroyed_at[(size_t)(t->slot_of[idx] - 1) * 256 + ecs_entity_generation(e)];
}

static void tracker_handed_out(reuse_tracker *t, ecs_entity e)
{
    uint64_t *at = tracker_slot(t, e);
    if (!*at) return; /* this id value was never destroyed: first time out */
    uint64_t distance = t->destroys - *at;
    if (!t->repeats) t->first_repeat = t->destroys;
    if (!t->repeats || distance < t->min_distance) t->min_distance = distance;
    t->repeats++;
}

static void tracker_destroyed(reuse_tracker *t, ecs_entity e)
{
    *tracker_slot(t, e) = ++t->destroys;
}

/* Keep 'working_set' entities alive; each step destroys one (the oldest, or a random one)
 * and creates one, making destroyed indices reusable by flush (or take + recycle every 16
 * steps), until 'want' repeats of an id were seen. */
static void measure_reuse_distance(void **state, uint32_t working_set, bool random_order,
                                   uint64_t want)
{
    host_entities *em = em_of(state);
    reuse_tracker t = {0};
    t.cap = 1u << 14;
    t.slot_of = scratch(state, INDEX_COUNT, sizeof *t.slot_of);
    t.destroyed_at = scratch(state, (size_t)t.cap * 256, sizeof *t.destroyed_at);
    ecs_entity *live = scratch(state, working_set, sizeof *live), got[64];
    for (uint32_t i = 0; i < working_set; i++) tracker_handed_out(&t, live[i] = create_one(em));
    uint64_t rng = 0xC0FFEEu, step = 0;
    uint32_t oldest = 0;
    for (; t.repeats < want && step < 8u * REUSE_BOUND + 4ull * want; step++) {
        uint32_t k = random_order ? rng_below(&rng, working_set) : oldest;
        assert_int_equal(host_entity_destroy(em, live[k]), ECS_OK);
        tracker_destroyed(&t, live[k]);
        if (!random_order) {
            host_entities_flush(em);
        } else if (step % 16 == 15) {
            while (host_entities_take_destroyed(em, got, 64) > 0) continue;
            host_entities_recycle(em);
        }
        tracker_handed_out(&t, live[k] = create_one(em));
        oldest = (oldest + 1) % working_set;
    }
    print_message("# working set %" PRIu32 ", %s destroys: first repeat after %" PRIu64
                  " destroys, %" PRIu64 " repeats, minimum reuse distance %" PRIu64
                  " destroys (bound %u), %" PRIu32 " indices used\n",
                  working_set, random_order ? "random" : "oldest-first", t.first_repeat, t.repeats,
                  t.min_distance, REUSE_BOUND, t.nslots);
    assert_true(t.repeats >= want); /* the first repeat (and more) did happen */
    assert_true(t.min_distance >= REUSE_BOUND);
    assert_int_equal(host_entities_live(em), working_set);
}

static void Entity_reuse_distance_at_least_256k_destroys_working_set_1(void **state)
{
    measure_reuse_distance(state, 1, false, 100000);
}

static void Entity_reuse_distance_at_least_256k_destroys_working_set_2000(void **state)
{
    measure_reuse_distance(state, 2000, false, 100000);
}

static void Entity_reuse_distance_at_least_256k_destroys_random_destroy_order(void **state)
{
    measure_reuse_distance(state, 3000, true, 100000);
}

/* ---- Randomized model test -------------------------------------------------------- */

enum { NEVER = 0, LIVE = 1, DEAD = 2 };
#define MODEL_OPS   10000000u
#define MODEL_SEED  0x9E3779B97F4A7C15ull
#define LIVE_CAP    (1u << 16)
#define SEEN_CAP    4096u
#define SWEEP_EVERY 1000000u

/* The reference: for each index its state and the generation byte the host must hold; the
 * live ids (dense); and the destroyed ids in one ring with the manager's three stages
 * [head, reusable_end) reusable, [reusable_end, announced_end) announced,
 * [announced_end, tail) not yet announced. */
typedef struct model {
    host_entities *em;
    uint8_t *gen, *state;
    uint32_t *pos, *live, *ring, *handed;
    uint32_t nlive, nhanded;
    uint32_t head, reusable_end, announced_end, tail;
    uint32_t seen[SEEN_CAP]; /* ids handed out, for stale destroys and alive checks */
    uint32_t nseen;
    uint64_t rng, seed, op;
    uint64_t creates, destroys, refused, taken, alive_checks, skipped, wraps;
} model;

#define MCHECK(m, cond)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("model test: seed %#" PRIx64 ", operation %" PRIu64 ": %s", (m)->seed,        \
                     (m)->op, #cond);                                                              \
    } while (0)

#define MCHECK_EQ(m, a, b)                                                                         \
    do {                                                                                           \
        unsigned long long a_ = (a), b_ = (b);                                                     \
        if (a_ != b_)                                                                              \
            fail_msg("model test: seed %#" PRIx64 ", operation %" PRIu64 ": %s == %llu, "          \
                     "expected %s == %llu",                                                        \
                     (m)->seed, (m)->op, #a, a_, #b, b_);                                          \
    } while (0)

static bool model_alive(const model *m, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    return (e.id >> 30) == 0 && idx != 0 && m->state[idx] == LIVE &&
           m->gen[idx] == ecs_entity_generation(e);
}

/* A handed-out id whose index is dead with the id's generation again: 256 destroys wrapped
 * the byte (see Entity_destroy_of_wrapped_stale_id_while_index_queued_is_stale). */
static bool model_wrapped(const model *m, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    return m->state[idx] == DEAD && m->gen[idx] == ecs_entity_generation(e);
}

static void model_remember(model *m, ecs_entity e)
{
    if (m->nseen < SEEN_CAP) {
        m->seen[m->nseen++] = e.id;
    } else {
        m->seen[rng_below(&m->rng, SEEN_CAP)] = e.id;
    }
}

/* e was just created: check it against the reuse policy and record it. */
static void model_created(model *m, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    uint32_t reusable = m->reusable_end - m->head;
    MCHECK_EQ(m, e.id >> 30, 0);
    MCHECK(m, idx != 0);
    MCHECK(m, m->state[idx] != LIVE); /* never two live ids with one index */
    if (reusable > MIN_FREE || m->nhanded == MAX_ENTITIES) {
        MCHECK(m, reusable > 0); /* FIFO: the oldest reusable index */
        uint32_t oldest = ecs_entity_index((ecs_entity){m->ring[m->head++ & (INDEX_COUNT - 1)]});
        MCHECK_EQ(m, idx, oldest);
    } else {
        MCHECK_EQ(m, m->state[idx], NEVER); /* a fresh index */
        MCHECK_EQ(m, ecs_entity_generation(e), 0);
        m->handed[m->nhanded++] = idx;
    }
    MCHECK_EQ(m, ecs_entity_generation(e), m->gen[idx]);
    MCHECK(m, host_entity_alive(m->em, e));
    m->state[idx] = LIVE;
    m->pos[idx] = m->nlive;
    m->live[m->nlive++] = e.id;
    model_remember(m, e);
    m->creates++;
}

/* Apply a destroy of e to the model; returns the status the manager must give. */
static ecs_status model_destroy(model *m, ecs_entity e)
{
    if (!model_alive(m, e)) {
        m->refused++;
        return ECS_ERR_STALE_ENTITY;
    }
    uint32_t idx = ecs_entity_index(e), p = m->pos[idx];
    m->wraps += ++m->gen[idx] == 0;
    m->state[idx] = DEAD;
    m->live[p] = m->live[--m->nlive];
    m->pos[ecs_entity_index((ecs_entity){m->live[p]})] = p;
    m->ring[m->tail++ & (INDEX_COUNT - 1)] = e.id;
    m->destroys++;
    return ECS_OK;
}

static ecs_entity model_pick_live(model *m)
{
    return (ecs_entity){m->live[rng_below(&m->rng, m->nlive)]};
}

/* A handed-out id (live, dead or stale), never one in the wrapped window. */
static ecs_entity model_pick_seen(model *m)
{
    ecs_entity e = {m->seen[rng_below(&m->rng, m->nseen)]};
    if (model_wrapped(m, e)) {
        m->skipped++;
        return ecs_entity_null();
    }
    return e;
}

static void model_op_create(model *m)
{
    ecs_entity e = {0xFFFFFFFFu};
    uint32_t available = (m->reusable_end - m->head) + (MAX_ENTITIES - m->nhanded);
    ecs_status s = host_entity_create(m->em, &e);
    if (!available) {
        MCHECK_EQ(m, s, ECS_ERR_FULL);
        MCHECK_EQ(m, e.id, 0);
        return;
    }
    MCHECK_EQ(m, s, ECS_OK);
    model_created(m, e);
}

static void model_op_create_many(model *m)
{
    ecs_entity out[16];
    uint32_t n = rng_below(&m->rng, 17);
    MCHECK_EQ(m, host_entity_create_many(m->em, out, n), ECS_OK);
    for (uint32_t i = 0; i < n; i++) model_created(m, out[i]);
}

static void model_op_destroy(model *m, ecs_entity e)
{
    ecs_status want = model_destroy(m, e);
    MCHECK_EQ(m, host_entity_destroy(m->em, e), want);
    MCHECK(m, !host_entity_alive(m->em, e));
}

/* A list of live ids, handed-out ids, nulls and repeats. Ids one generation past a live
 * index's byte are left out: destroying that live id earlier in the list would put them in
 * the wrapped window. */
static void model_op_destroy_many(model *m, bool mostly_live)
{
    ecs_entity list[8];
    uint32_t n = rng_below(&m->rng, 9), want = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = rng_below(&m->rng, 10);
        if (r < (mostly_live ? 7u : 4u) && m->nlive) {
            list[i] = model_pick_live(m);
        } else if (r < 8) {
            list[i] = model_pick_seen(m);
            uint32_t idx = ecs_entity_index(list[i]);
            if (m->state[idx] == LIVE &&
                (uint8_t)(m->gen[idx] + 1u) == ecs_entity_generation(list[i]))
                list[i] = ecs_entity_null();
        } else if (r < 9 || i == 0) {
            list[i] = ecs_entity_null();
        } else {
            list[i] = list[rng_below(&m->rng, i)]; /* a repeat */
        }
    }
    for (uint32_t i = 0; i < n; i++) want += model_destroy(m, list[i]) == ECS_OK;
    uint32_t destroyed = 0xFFFFFFFFu;
    ecs_status s = host_entity_destroy_many(m->em, list, n, &destroyed);
    MCHECK_EQ(m, destroyed, want);
    MCHECK_EQ(m, s, want == n ? ECS_OK : ECS_ERR_STALE_ENTITY);
}

static void model_op_alive(model *m)
{
    ecs_entity e = (rng_below(&m->rng, 2) && m->nlive) ? model_pick_live(m) : model_pick_seen(m);
    bool want = model_alive(m, e);
    MCHECK_EQ(m, host_entity_alive(m->em, e), want);
    MCHECK_EQ(m, ecs_alive_in(host_entities_generations(m->em), e), want);
    MCHECK_EQ(m, ecs_alive_exact_in(host_entities_alive_keys(m->em), e), want);
    m->alive_checks++;
}

static void model_op_take(model *m)
{
    ecs_entity out[2048];
    uint32_t max = 1 + rng_below(&m->rng, 1u << rng_below(&m->rng, 12));
    uint32_t want = m->tail - m->announced_end;
    if (want > max) want = max;
    uint32_t n = host_entities_take_destroyed(m->em, out, max);
    MCHECK_EQ(m, n, want);
    for (uint32_t i = 0; i < n; i++) /* the ids as they were when alive, oldest first */
        MCHECK_EQ(m, out[i].id, m->ring[m->announced_end++ & (INDEX_COUNT - 1)]);
    m->taken += n;
    if (rng_below(&m->rng, 2)) {
        host_entities_recycle(m->em);
        m->reusable_end = m->announced_end;
    }
}

/* Every id of every index handed out: the generation-only inline check says alive exactly
 * at the model's generation byte (for a dead index that is the id it will hand out next);
 * the exact host_entity_alive() and the exact inline check (alive keys) only for the live
 * id. Never handed-out indices hold 0 in both arrays. */
static void model_sweep(model *m)
{
    const uint8_t *gens = host_entities_generations(m->em);
    const uint16_t *keys = host_entities_alive_keys(m->em);
    for (uint32_t i = 0; i < m->nhanded; i++) {
        uint32_t idx = m->handed[i];
        MCHECK_EQ(m, gens[idx], m->gen[idx]);
        for (uint32_t g = 0; g < 256; g++) {
            ecs_entity e = ecs_entity_make(idx, g);
            MCHECK_EQ(m, ecs_alive_in(gens, e), g == m->gen[idx]);
            MCHECK_EQ(m, host_entity_alive(m->em, e), m->state[idx] == LIVE && g == m->gen[idx]);
            MCHECK_EQ(m, ecs_alive_exact_in(keys, e), m->state[idx] == LIVE && g == m->gen[idx]);
            if (m->state[idx] == LIVE) MCHECK_EQ(m, model_alive(m, e), g == m->gen[idx]);
        }
    }
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t idx = 1 + rng_below(&m->rng, MAX_ENTITIES);
        if (m->state[idx] == NEVER) MCHECK_EQ(m, gens[idx], 0);
        if (m->state[idx] == NEVER) MCHECK_EQ(m, keys[idx], 0);
    }
    MCHECK(m, !host_entity_alive(m->em, ecs_entity_null()));
}

static void model_step(model *m, uint32_t target)
{
    uint32_t r = rng_below(&m->rng, 100);
    bool grow = m->nlive < target;
    if (r < 30) {
        if (grow) {
            model_op_create(m);
        } else {
            model_op_destroy(m, model_pick_live(m));
        }
    } else if (r < 40) {
        if (grow) {
            model_op_create_many(m);
        } else {
            model_op_destroy_many(m, true);
        }
    } else if (r < 48) {
        model_op_destroy(m, model_pick_seen(m));
    } else if (r < 52) {
        model_op_destroy_many(m, false);
    } else if (r < 85) {
        model_op_alive(m);
    } else if (r < 97) {
        model_op_take(m);
    } else if (r < 99) {
        host_entities_flush(m->em);
        m->announced_end = m->reusable_end = m->tail;
    } else {
        host_entities_recycle(m->em);
        m->reusable_end = m->announced_end;
    }
}

static void Entity_random_operations_agree_with_reference_model(void **state)
{
    model *m = scratch(state, 1, sizeof *m);
    m->em = em_of(state);
    m->gen = scratch(state, INDEX_COUNT, 1);
    m->state = scratch(state, INDEX_COUNT, 1);
    m->pos = scratch(state, INDEX_COUNT, sizeof *m->pos);
    m->ring = scratch(state, INDEX_COUNT, sizeof *m->ring);
    m->handed = scratch(state, INDEX_COUNT, sizeof *m->handed);
    m->live = scratch(state, LIVE_CAP + 16, sizeof *m->live);
    const char *env = getenv("ECS_TEST_SEED");
    m->seed = m->rng = env ? strtoull(env, NULL, 0) : MODEL_SEED;
    if (!m->rng) m->rng = 1;
    const char *ops_env = getenv("ECS_TEST_OPS"); /* a longer soak, when asked */
    uint64_t ops = ops_env ? strtoull(ops_env, NULL, 0) : MODEL_OPS;
    uint32_t target = 0;
    for (m->op = 0; m->op < ops; m->op++) {
        if (m->op % 65536 == 0) { /* a new population target: tiny, medium or large */
            uint32_t kind = rng_below(&m->rng, 4);
            target = rng_below(&m->rng, kind == 0 ? 64 : kind == 3 ? 20000 : 4096);
        }
        if (!m->nseen) {
            model_op_create(m);
        } else {
            model_step(m, target);
        }
        MCHECK_EQ(m, host_entities_live(m->em), m->nlive);
        MCHECK_EQ(m, host_entities_unannounced(m->em), m->tail - m->announced_end);
        MCHECK(m, m->nlive < LIVE_CAP);
        if (m->op % SWEEP_EVERY == SWEEP_EVERY - 1) model_sweep(m);
    }
    model_sweep(m);
    print_message("# model: seed %#" PRIx64 ", %" PRIu64 " operations: %" PRIu64
                  " creates, %" PRIu64 " destroys, %" PRIu64 " refused, %" PRIu64 " taken, %" PRIu64
                  " alive checks, %" PRIu32 " indices used, %" PRIu64 " generation wraps, %" PRIu64
                  " wrapped ids skipped\n",
                  m->seed, m->op, m->creates, m->destroys, m->refused, m->taken, m->alive_checks,
                  m->nhanded, m->wraps, m->skipped);
    MCHECK(m, m->wraps > 0); /* generations did wrap: reuse was exercised to the end */
}

/* ---- Main ------------------------------------------------------------------------- */

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(Entity_skip_live_matches_walking_one_by_one),
        TEST(Entity_null_entity_is_never_alive),
        TEST(Entity_ids_have_top_bits_zero_and_index_0_never_handed_out),
        TEST(Entity_stale_handle_after_reuse_is_not_alive),
        TEST(Entity_zombie_monster_not_alive_after_new_hero_reuses_index),
        TEST(Entity_double_destroy_is_stale_and_queues_index_once),
        TEST(Entity_double_destroy_then_flush_never_duplicates_live_index),
        TEST(Entity_destroy_null_or_dead_id_is_stale_noop),
        TEST(Entity_destroy_never_handed_out_id_is_stale_noop),
        TEST(Entity_destroy_of_wrapped_stale_id_while_index_queued_is_stale),
        TEST(Entity_destroy_many_counts_repeated_id_once),
        TEST(Entity_full_at_max_entities_until_a_destroyed_index_is_recycled),
        TEST(Entity_create_many_near_full_takes_queue_then_fresh_then_queue),
        TEST(Entity_create_many_ids_distinct_and_alive),
        TEST(Entity_create_many_reuses_queue_only_beyond_minimum),
        TEST(Entity_take_destroyed_returns_each_destroyed_id_oldest_first),
        TEST(Entity_recycle_makes_only_announced_indices_reusable),
        TEST(Entity_flush_makes_destroyed_reusable_without_announcing),
        TEST(Entity_reuse_distance_at_least_256k_destroys_working_set_1),
        TEST(Entity_reuse_distance_at_least_256k_destroys_working_set_2000),
        TEST(Entity_reuse_distance_at_least_256k_destroys_random_destroy_order),
        TEST(Entity_random_operations_agree_with_reference_model),
    };
    return cmocka_run_group_tests_name("entity", tests, NULL, NULL);
}
