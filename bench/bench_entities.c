/* SPDX-License-Identifier: MIT */
/* bench_entities.c: workload "entities", BENCH.md W1-W4: create, alive, destroy and churn
 * of the host's EntityManager (host/world/entity.c) beside the seed's first EntityManager, a hash
 * set of live ids, measured in the same run.
 *
 * Every repetition starts from a fresh state: a new host_entities and a new hash set.
 * Ours and the baseline alternate inside each repetition so that a noisy neighbour hurts
 * both. Every result is consumed into a per-row checksum and checked (each create
 * succeeded, each alive() said yes, each destroy succeeded): a benchmark whose work the
 * compiler dropped, or that measured a failure path, reports an error instead.
 */
#include "bench.h"
#include "entity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N          1000000u /* entities in W1-W3 */
#define CHURN_LIVE 100000u  /* W4: live entities */
#define CHURN_OPS  5000000u /* W4: destroy + create pairs */

/* ---- Baseline: the seed's first EntityManager, a hash set of live ids ----------------
 *
 * Open addressing over a power-of-two table of uint32_t ids, 0 marking an empty slot (ids
 * start at 1: 0 is the null entity). Linear probing from the slot given by a full-avalanche
 * integer hash (lowbias32), load at most 1/2, deletion by backward shift so there are no
 * tombstones. Invariant: every id sits in the run of occupied slots that starts at its
 * home slot, with no empty slot between its home and itself. create is the seed's: take
 * the next id, skipping ids still alive, and insert it (one probe does both). */

typedef struct idset {
    uint32_t *slot;   /* mask + 1 slots */
    uint32_t mask;    /* capacity - 1; capacity is a power of two */
    uint32_t count;   /* ids in the table */
    uint32_t next_id; /* the seed's _next */
} idset;

static inline uint32_t idset_hash(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* An empty set of the given power-of-two capacity. False when out of memory. */
static bool idset_init(idset *s, uint32_t capacity)
{
    s->slot = calloc(capacity, sizeof *s->slot);
    s->mask = capacity - 1;
    s->count = 0;
    s->next_id = 1;
    return s->slot != NULL;
}

static void idset_free(idset *s)
{
    free(s->slot);
    s->slot = NULL;
}

/* Place id, known absent, into its first empty slot; no growth, no count. */
static inline void idset_place(uint32_t *slot, uint32_t mask, uint32_t id)
{
    uint32_t i = idset_hash(id) & mask;
    while (slot[i]) i = (i + 1) & mask;
    slot[i] = id;
}

/* Rehash into capacity slots. False (and the set unchanged) when out of memory. */
static bool idset_rehash(idset *s, uint32_t capacity)
{
    uint32_t *slot = calloc(capacity, sizeof *slot);
    if (!slot) return false;
    for (uint32_t i = 0; i <= s->mask; i++)
        if (s->slot[i]) idset_place(slot, capacity - 1, s->slot[i]);
    free(s->slot);
    s->slot = slot;
    s->mask = capacity - 1;
    return true;
}

/* Make room for n ids in total without growing again. False when out of memory. */
static bool idset_reserve(idset *s, uint32_t n)
{
    uint32_t capacity = s->mask + 1;
    while (capacity / 2 < n) capacity *= 2;
    return capacity == s->mask + 1 || idset_rehash(s, capacity);
}

static inline bool idset_contains(const idset *s, uint32_t id)
{
    for (uint32_t i = idset_hash(id) & s->mask;; i = (i + 1) & s->mask) {
        if (s->slot[i] == id) return true;
        if (s->slot[i] == 0) return false;
    }
}

/* Insert id. 1 when inserted, 0 when already there, -1 when out of memory. */
static inline int idset_insert(idset *s, uint32_t id)
{
    if ((s->count + 1) * 2 > s->mask + 1 && !idset_rehash(s, (s->mask + 1) * 2)) return -1;
    uint32_t i = idset_hash(id) & s->mask;
    for (; s->slot[i]; i = (i + 1) & s->mask)
        if (s->slot[i] == id) return 0;
    s->slot[i] = id;
    s->count++;
    return 1;
}

/* Remove id. False when it was not there. */
static inline bool idset_remove(idset *s, uint32_t id)
{
    uint32_t i = idset_hash(id) & s->mask;
    for (; s->slot[i] != id; i = (i + 1) & s->mask)
        if (s->slot[i] == 0) return false;
    /* backward shift: pull later ids of the run into the hole when their home allows */
    for (uint32_t j = (i + 1) & s->mask; s->slot[j]; j = (j + 1) & s->mask) {
        uint32_t home = idset_hash(s->slot[j]) & s->mask;
        if (((j - home) & s->mask) >= ((j - i) & s->mask)) { /* is the hole on its path? */
            s->slot[i] = s->slot[j];
            i = j;
        }
    }
    s->slot[i] = 0;
    s->count--;
    return true;
}

/* The seed's create: the next id not alive, inserted. 0 when out of memory. */
static inline uint32_t idset_create(idset *s)
{
    for (;;) {
        uint32_t id = s->next_id++;
        if (id == 0) continue; /* wrapped: 0 is the null entity */
        int r = idset_insert(s, id);
        if (r) return r > 0 ? id : 0;
    }
}

/* ---- The workload's data -------------------------------------------------------------- */

enum {
    ROW_W1_ONE,
    ROW_W1_BATCH,
    ROW_W2_ORDER_INLINE, /* the three W2 probes of one order stand in probe order */
    ROW_W2_ORDER_GEN,
    ROW_W2_ORDER_CALL,
    ROW_W2_SHUFFLED_INLINE,
    ROW_W2_SHUFFLED_GEN,
    ROW_W2_SHUFFLED_CALL,
    ROW_W3,
    ROW_W4,
    ROW_COUNT
};

typedef struct entities_bench {
    const bench_config *cfg;
    ecs_entity *ids;      /* ours, N, creation order */
    ecs_entity *shuffled; /* ours, N, shuffled */
    uint32_t *base_ids;   /* baseline, N, creation order */
    uint32_t *base_shuffled;
    uint32_t *victims; /* W4: CHURN_OPS slots in [0, CHURN_LIVE) */
    uint64_t failures; /* creates/destroys that failed, alive() that said no */
    uint64_t checksum[ROW_COUNT];
    double ours[ROW_COUNT][BENCH_MAX_REPS];
    double base[ROW_COUNT][BENCH_MAX_REPS];
} entities_bench;

static double ns_per(uint64_t t0, uint64_t t1, uint32_t count)
{
    return (double)(t1 - t0) / count;
}

/* A fresh manager, or NULL after saying why. */
static host_entities *fresh_entities(void)
{
    host_entities *em = host_entities_new();
    if (!em) fprintf(stderr, "ecs-bench entities: host_entities_new failed\n");
    return em;
}

/* A fresh hash set, optionally filled with n created ids. False after saying why. */
static bool fresh_idset(idset *s, uint32_t *ids, uint32_t n)
{
    if (!idset_init(s, 16)) goto error;
    for (uint32_t i = 0; i < n; i++)
        if ((ids[i] = idset_create(s)) == 0) goto error;
    return true;
error:
    fprintf(stderr, "ecs-bench entities: out of memory (hash set)\n");
    idset_free(s);
    return false;
}

/* ---- W1: create ------------------------------------------------------------------------ */

static bool w1_ours(entities_bench *b, int rep, bool batch)
{
    host_entities *em = fresh_entities();
    if (!em) return false;
    int row = batch ? ROW_W1_BATCH : ROW_W1_ONE;
    uint64_t t0 = bench_now_ns();
    if (batch) {
        b->failures += host_entity_create_many(em, b->ids, N) != ECS_OK;
    } else {
        for (uint32_t i = 0; i < N; i++)
            b->failures += host_entity_create(em, &b->ids[i]) != ECS_OK;
    }
    uint64_t t1 = bench_now_ns();
    b->ours[row][rep] = ns_per(t0, t1, N);
    for (uint32_t i = 0; i < N; i++) b->checksum[row] += b->ids[i].id;
    b->failures += host_entities_live(em) != N;
    host_entities_free(em);
    return true;
}

static bool w1_base(entities_bench *b, int rep, bool batch)
{
    idset s;
    if (!fresh_idset(&s, NULL, 0)) return false;
    int row = batch ? ROW_W1_BATCH : ROW_W1_ONE;
    uint64_t t0 = bench_now_ns();
    if (batch) /* the seed has no batch call: size the table once, then create */
        b->failures += !idset_reserve(&s, N);
    for (uint32_t i = 0; i < N; i++) b->failures += (b->base_ids[i] = idset_create(&s)) == 0;
    uint64_t t1 = bench_now_ns();
    b->base[row][rep] = ns_per(t0, t1, N);
    for (uint32_t i = 0; i < N; i++) b->checksum[row] += b->base_ids[i];
    b->failures += s.count != N;
    idset_free(&s);
    return true;
}

static bool w1_rep(entities_bench *b, int rep)
{
    return w1_ours(b, rep, false) && w1_base(b, rep, false) && w1_ours(b, rep, true) &&
           w1_base(b, rep, true);
}

/* ---- W2: alive ------------------------------------------------------------------------- */

static uint32_t alive_inline(const host_entities *em, const ecs_entity *ids, uint32_t n)
{
    const uint16_t *keys = host_entities_alive_keys(em);
    uint32_t hits = 0;
    for (uint32_t i = 0; i < n; i++) hits += ecs_alive_exact_in(keys, ids[i]);
    return hits;
}

static uint32_t alive_gen(const host_entities *em, const ecs_entity *ids, uint32_t n)
{
    const uint8_t *generations = host_entities_generations(em);
    uint32_t hits = 0;
    for (uint32_t i = 0; i < n; i++) hits += ecs_alive_in(generations, ids[i]);
    return hits;
}

static uint32_t alive_call(const host_entities *em, const ecs_entity *ids, uint32_t n)
{
    uint32_t hits = 0;
    for (uint32_t i = 0; i < n; i++) hits += host_entity_alive(em, ids[i]);
    return hits;
}

static uint32_t alive_base(const idset *s, const uint32_t *ids, uint32_t n)
{
    uint32_t hits = 0;
    for (uint32_t i = 0; i < n; i++) hits += idset_contains(s, ids[i]);
    return hits;
}

typedef enum { PROBE_INLINE, PROBE_GEN, PROBE_CALL, PROBE_BASE } probe;

/* The median over BENCH_PASSES passes of one probe over N ids, in ns per entity. */
static double w2_passes(entities_bench *b, probe p, const host_entities *em, const idset *s,
                        const void *ids, uint64_t *checksum)
{
    double pass[BENCH_PASSES];
    for (int k = 0; k < BENCH_PASSES; k++) {
        uint32_t hits = 0;
        uint64_t t0 = bench_now_ns();
        if (p == PROBE_INLINE)
            hits = alive_inline(em, ids, N);
        else if (p == PROBE_GEN)
            hits = alive_gen(em, ids, N);
        else if (p == PROBE_CALL)
            hits = alive_call(em, ids, N);
        else
            hits = alive_base(s, ids, N);
        uint64_t t1 = bench_now_ns();
        pass[k] = ns_per(t0, t1, N);
        *checksum += hits;
        b->failures += N - hits;
    }
    return bench_stats_of(pass, BENCH_PASSES).median;
}

/* Shuffle both id arrays with one Fisher-Yates permutation from the BENCH.md RNG. */
static void shuffle_ids(entities_bench *b)
{
    memcpy(b->shuffled, b->ids, N * sizeof *b->ids);
    memcpy(b->base_shuffled, b->base_ids, N * sizeof *b->base_ids);
    bench_rng rng = bench_rng_seeded(BENCH_SEED);
    for (uint32_t i = N - 1; i > 0; i--) {
        uint32_t j = bench_rng_below(&rng, i + 1);
        ecs_entity e = b->shuffled[i];
        b->shuffled[i] = b->shuffled[j];
        b->shuffled[j] = e;
        uint32_t id = b->base_shuffled[i];
        b->base_shuffled[i] = b->base_shuffled[j];
        b->base_shuffled[j] = id;
    }
}

static bool w2_rep(entities_bench *b, int rep)
{
    idset s;
    host_entities *em = fresh_entities();
    if (!em) return false;
    if (!fresh_idset(&s, b->base_ids, N)) goto error;
    b->failures += host_entity_create_many(em, b->ids, N) != ECS_OK;
    shuffle_ids(b);

    /* each order: our three probes, then the baseline once (its figure serves all three) */
    const ecs_entity *ours_ids[2] = {b->ids, b->shuffled};
    const uint32_t *base_ids[2] = {b->base_ids, b->base_shuffled};
    const int first_row[2] = {ROW_W2_ORDER_INLINE, ROW_W2_SHUFFLED_INLINE};
    for (int order = 0; order < 2; order++) {
        int r0 = first_row[order];
        for (probe p = PROBE_INLINE; p <= PROBE_CALL; p++)
            b->ours[r0 + (int)p][rep] =
                w2_passes(b, p, em, &s, ours_ids[order], &b->checksum[r0 + (int)p]);
        uint64_t hits = 0;
        double base = w2_passes(b, PROBE_BASE, em, &s, base_ids[order], &hits);
        for (probe p = PROBE_INLINE; p <= PROBE_CALL; p++) {
            b->base[r0 + (int)p][rep] = base;
            b->checksum[r0 + (int)p] += hits;
        }
    }

    idset_free(&s);
    host_entities_free(em);
    return true;
error:
    host_entities_free(em);
    return false;
}

/* ---- W3: destroy ----------------------------------------------------------------------- */

static bool w3_rep(entities_bench *b, int rep)
{
    host_entities *em = fresh_entities();
    if (!em) return false;
    b->failures += host_entity_create_many(em, b->ids, N) != ECS_OK;
    uint64_t t0 = bench_now_ns();
    uint32_t done = 0;
    for (uint32_t i = 0; i < N; i++) done += host_entity_destroy(em, b->ids[i]) == ECS_OK;
    uint64_t t1 = bench_now_ns();
    b->ours[ROW_W3][rep] = ns_per(t0, t1, N);
    b->checksum[ROW_W3] += done;
    b->failures += (N - done) + host_entities_live(em);
    host_entities_free(em);

    idset s;
    if (!fresh_idset(&s, b->base_ids, N)) return false;
    t0 = bench_now_ns();
    done = 0;
    for (uint32_t i = 0; i < N; i++) done += idset_remove(&s, b->base_ids[i]);
    t1 = bench_now_ns();
    b->base[ROW_W3][rep] = ns_per(t0, t1, N);
    b->checksum[ROW_W3] += done;
    b->failures += (N - done) + s.count;
    idset_free(&s);
    return true;
}

/* ---- W4: churn ------------------------------------------------------------------------- */

static bool w4_rep(entities_bench *b, int rep)
{
    host_entities *em = fresh_entities();
    if (!em) return false;
    ecs_entity *live = b->ids;
    const uint32_t *victim = b->victims;
    b->failures += host_entity_create_many(em, live, CHURN_LIVE) != ECS_OK;
    uint32_t failed = 0;
    uint64_t t0 = bench_now_ns();
    for (uint32_t k = 0; k < CHURN_OPS; k++) {
        ecs_entity *slot = &live[victim[k]];
        failed += host_entity_destroy(em, *slot) != ECS_OK;
        host_entities_flush(em); /* the frame boundary: every manager heard, recycle */
        failed += host_entity_create(em, slot) != ECS_OK;
    }
    uint64_t t1 = bench_now_ns();
    b->ours[ROW_W4][rep] = ns_per(t0, t1, CHURN_OPS);
    for (uint32_t i = 0; i < CHURN_LIVE; i++) b->checksum[ROW_W4] += live[i].id;
    b->failures += failed + (host_entities_live(em) != CHURN_LIVE);
    host_entities_free(em);

    idset s;
    uint32_t *base_live = b->base_ids;
    if (!fresh_idset(&s, base_live, CHURN_LIVE)) return false;
    failed = 0;
    t0 = bench_now_ns();
    for (uint32_t k = 0; k < CHURN_OPS; k++) {
        uint32_t *slot = &base_live[victim[k]];
        failed += !idset_remove(&s, *slot);
        failed += (*slot = idset_create(&s)) == 0;
    }
    t1 = bench_now_ns();
    b->base[ROW_W4][rep] = ns_per(t0, t1, CHURN_OPS);
    for (uint32_t i = 0; i < CHURN_LIVE; i++) b->checksum[ROW_W4] += base_live[i];
    b->failures += failed + (s.count != CHURN_LIVE);
    idset_free(&s);
    return true;
}

/* ---- Reporting ------------------------------------------------------------------------- */

static const struct {
    const char *id, *name, *unit;
    int passes;
    const char *note;
} rows[ROW_COUNT] = {
    [ROW_W1_ONE] = {"W1", "create, one by one", "ns/entity", 1, NULL},
    [ROW_W1_BATCH] = {"W1", "create, one batch call", "ns/entity", 1,
                      "baseline has no batch call: one reserve, then create one by one"},
    [ROW_W2_ORDER_INLINE] = {"W2", "alive, creation order, inline exact", "ns/entity", BENCH_PASSES,
                             "inline exact: ecs_alive_exact_in(alive keys, e), what "
                             "ecs_alive() runs; same baseline figures in every W2 row of an order"},
    [ROW_W2_ORDER_GEN] = {"W2", "alive, creation order, generation only", "ns/entity", BENCH_PASSES,
                          "generation only: ecs_alive_in(generations, e), what ecs_alive_gen() "
                          "runs (not exact)"},
    [ROW_W2_ORDER_CALL] = {"W2", "alive, creation order, call", "ns/entity", BENCH_PASSES,
                           "call: host_entity_alive(em, e), exact"},
    [ROW_W2_SHUFFLED_INLINE] = {"W2", "alive, shuffled, inline exact", "ns/entity", BENCH_PASSES,
                                NULL},
    [ROW_W2_SHUFFLED_GEN] = {"W2", "alive, shuffled, generation only", "ns/entity", BENCH_PASSES,
                             NULL},
    [ROW_W2_SHUFFLED_CALL] = {"W2", "alive, shuffled, call", "ns/entity", BENCH_PASSES, NULL},
    [ROW_W3] = {"W3", "destroy, creation order", "ns/entity", 1, NULL},
    [ROW_W4] = {"W4", "churn, destroy random + create", "ns/pair", 1,
                "one pair = destroy a random live one + create one; host_entities_flush after "
                "each destroy (the frame boundary's recycle)"},
};

static void report_rows(entities_bench *b, int first, int last)
{
    for (int r = first; r <= last; r++) {
        bench_row row = {rows[r].id,
                         rows[r].name,
                         rows[r].unit,
                         "hash set",
                         rows[r].passes,
                         bench_stats_of(b->ours[r], (size_t)b->cfg->reps),
                         bench_stats_of(b->base[r], (size_t)b->cfg->reps),
                         b->checksum[r],
                         rows[r].note};
        bench_report(b->cfg, "entities", &row);
    }
}

/* Run rep_fn for every repetition, then report rows first..last. False when a repetition
 * could not run or a result failed its check. */
static bool measure(entities_bench *b, bool (*rep_fn)(entities_bench *, int), int first, int last)
{
    b->failures = 0;
    for (int rep = 0; rep < b->cfg->reps; rep++)
        if (!rep_fn(b, rep)) return false;
    report_rows(b, first, last);
    if (b->failures) {
        fprintf(stderr, "ecs-bench entities: %s: %llu results failed their check\n", rows[first].id,
                (unsigned long long)b->failures);
        return false;
    }
    return true;
}

static int run_entities(const bench_config *cfg)
{
    int status = 1;
    entities_bench *b = calloc(1, sizeof *b);
    if (!b) goto error;
    b->cfg = cfg;
    b->ids = malloc(N * sizeof *b->ids);
    b->shuffled = malloc(N * sizeof *b->shuffled);
    b->base_ids = malloc(N * sizeof *b->base_ids);
    b->base_shuffled = malloc(N * sizeof *b->base_shuffled);
    b->victims = malloc(CHURN_OPS * sizeof *b->victims);
    if (!b->ids || !b->shuffled || !b->base_ids || !b->base_shuffled || !b->victims) goto error;
    /* touch the output arrays now so no page fault lands in a timed loop */
    memset(b->ids, 0, N * sizeof *b->ids);
    memset(b->base_ids, 0, N * sizeof *b->base_ids);
    bench_rng rng = bench_rng_seeded(BENCH_SEED); /* W4's victims, drawn untimed */
    for (uint32_t k = 0; k < CHURN_OPS; k++) b->victims[k] = bench_rng_below(&rng, CHURN_LIVE);

    bench_begin(cfg, "entities",
                "W1-W4, N = 1000000 (W4: 100000 live, 5000000 ops); baseline: hash set of "
                "live ids (seed 000)");
    bool ok = measure(b, w1_rep, ROW_W1_ONE, ROW_W1_BATCH);
    ok = measure(b, w2_rep, ROW_W2_ORDER_INLINE, ROW_W2_SHUFFLED_CALL) && ok;
    ok = measure(b, w3_rep, ROW_W3, ROW_W3) && ok;
    ok = measure(b, w4_rep, ROW_W4, ROW_W4) && ok;
    status = ok ? 0 : 1;
    goto done;
error:
    fprintf(stderr, "ecs-bench entities: out of memory\n");
done:
    if (b) {
        free(b->ids);
        free(b->shuffled);
        free(b->base_ids);
        free(b->base_shuffled);
        free(b->victims);
        free(b);
    }
    return status;
}

const bench_workload bench_entities_workload = {
    "entities",
    "W1-W4: create (one by one, batch), alive (in order, shuffled), destroy, churn",
    run_entities,
};
