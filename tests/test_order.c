/* SPDX-License-Identifier: MIT */
/* test_order.c: cmocka tests of the plugin load order (host/plugin/order.c): dependencies first,
 * ties by rank then file, missing dependencies, cycles, and a randomized check on DAGs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

#define MAX_NODES 48
#define MAX_DEPS  8

/* ---- Helpers ---------------------------------------------------------------------- */

/* A graph whose nodes own their strings, so tests can build them in loops. */
typedef struct graph {
    host_order_node node[MAX_NODES];
    char name[MAX_NODES][16];
    char file[MAX_NODES][24];
    char dep_text[MAX_NODES][MAX_DEPS][16];
    const char *deps[MAX_NODES][MAX_DEPS + 1];
    size_t n;
    size_t out[MAX_NODES];
    host_order_result result[MAX_NODES];
    size_t count;
} graph;

/* Add a node; deps is a space-separated list of names ("" for none). Returns its index. */
static size_t add(graph *g, const char *name, int rank, const char *file, const char *deps)
{
    assert_true(g->n < MAX_NODES);
    size_t i = g->n++;
    snprintf(g->name[i], sizeof g->name[i], "%s", name);
    snprintf(g->file[i], sizeof g->file[i], "%s", file);
    size_t k = 0;
    for (const char *p = deps; *p;) {
        size_t len = strcspn(p, " ");
        if (len > 0) {
            assert_true(k < MAX_DEPS && len < 16);
            memcpy(g->dep_text[i][k], p, len);
            g->dep_text[i][k][len] = '\0';
            g->deps[i][k] = g->dep_text[i][k];
            k++;
        }
        p += len;
        p += strspn(p, " ");
    }
    g->deps[i][k] = NULL;
    g->node[i].name = g->name[i];
    g->node[i].file = g->file[i];
    g->node[i].rank = rank;
    g->node[i].deps = k ? g->deps[i] : NULL;
    return i;
}

static void sort(graph *g)
{
    /* Poison the outputs: the function must write every result slot. */
    memset(g->out, 0xAB, sizeof g->out);
    memset(g->result, 0xAB, sizeof g->result);
    g->count = host_order_sort(g->node, g->n, g->out, g->result);
    assert_int_not_equal(g->count, (size_t)-1);
    assert_true(g->count <= g->n);
}

/* The load order as a space-separated list of names. */
static const char *order_text(const graph *g)
{
    static char buf[MAX_NODES * 17];
    buf[0] = '\0';
    for (size_t i = 0; i < g->count; i++) {
        if (i) strcat(buf, " ");
        strcat(buf, g->node[g->out[i]].name);
    }
    return buf;
}

static size_t index_of(const graph *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->node[i].name, name) == 0) return i;
    fail_msg("no node named %s", name);
    return 0;
}

static void expect_status(const graph *g, const char *name, host_order_status status,
                          const char *dep)
{
    const host_order_result *r = &g->result[index_of(g, name)];
    if (r->status != status)
        fail_msg("%s: status %d, expected %d (dep %s)", name, (int)r->status, (int)status,
                 r->dep ? r->dep : "NULL");
    if (!dep) {
        if (r->dep) fail_msg("%s: dep %s, expected NULL", name, r->dep);
    } else if (!r->dep || strcmp(r->dep, dep) != 0) {
        fail_msg("%s: dep %s, expected %s", name, r->dep ? r->dep : "NULL", dep);
    }
}

/* Every node in out[] is OK, every OK node is in out[] exactly once. */
static void check_out_matches_status(const graph *g)
{
    int seen[MAX_NODES] = {0};
    for (size_t i = 0; i < g->count; i++) {
        assert_true(g->out[i] < g->n);
        seen[g->out[i]]++;
    }
    for (size_t i = 0; i < g->n; i++) {
        bool ok = g->result[i].status == HOST_ORDER_OK;
        if (seen[i] != (ok ? 1 : 0))
            fail_msg("%s: status %d but in the order %d times", g->node[i].name,
                     (int)g->result[i].status, seen[i]);
    }
}

/* ---- Basic ordering --------------------------------------------------------------- */

static void Order_empty_input_returns_zero(void **state)
{
    (void)state;
    host_order_node nodes[1] = {{"x", NULL, 0, "x.so"}};
    size_t out[1] = {77};
    host_order_result result[1] = {{HOST_ORDER_CYCLE, "x"}};
    assert_int_equal(host_order_sort(nodes, 0, out, result), 0);
    assert_int_equal(out[0], 77); /* nothing written */
}

static void Order_single_node_without_deps_loads(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "solo", 0, "solo.so", "");
    sort(&g);
    assert_string_equal(order_text(&g), "solo");
    expect_status(&g, "solo", HOST_ORDER_OK, NULL);
}

static void Order_dependencies_load_before_dependents(void **state)
{
    (void)state;
    graph g = {0};
    /* listed (and ranked) in the reverse of the order they must load in */
    add(&g, "game", 0, "a.so", "render physics");
    add(&g, "render", 1, "b.so", "transform");
    add(&g, "physics", 2, "c.so", "transform");
    add(&g, "transform", 3, "d.so", "");
    sort(&g);
    assert_int_equal(g.count, 4);
    assert_string_equal(order_text(&g), "transform render physics game");
    for (size_t i = 0; i < g.n; i++) expect_status(&g, g.node[i].name, HOST_ORDER_OK, NULL);
}

static void Order_independent_nodes_sorted_by_rank_then_file(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "e", INT_MAX, "z.so", ""); /* not in the manifest */
    add(&g, "d", INT_MAX, "a.so", "");
    add(&g, "c", 2, "b.so", "");
    add(&g, "b", 1, "y.so", "");
    add(&g, "a", 1, "x.so", "");
    add(&g, "f", -5, "q.so", "");
    sort(&g);
    assert_string_equal(order_text(&g), "f a b c d e");
}

static void Order_file_breaks_tie_when_ranks_equal(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "n1", 7, "sub/b.so", "");
    add(&g, "n2", 7, "a.so", "");
    add(&g, "n3", 7, "sub/a.so", "");
    add(&g, "n4", 7, "b.so", "");
    sort(&g);
    assert_string_equal(order_text(&g), "n2 n4 n3 n1"); /* strcmp order of the files */
}

static void Order_lowest_ready_node_chosen_each_step(void **state)
{
    (void)state;
    graph g = {0};
    /* a (rank 0) waits for z (rank 9); b (rank 1) is ready at once and goes before z. */
    add(&g, "a", 0, "a.so", "z");
    add(&g, "b", 1, "b.so", "");
    add(&g, "z", 9, "z.so", "");
    add(&g, "c", 5, "c.so", "");
    sort(&g);
    assert_string_equal(order_text(&g), "b c z a");
}

static void Order_same_result_whatever_input_order(void **state)
{
    (void)state;
    static const struct {
        const char *name, *file, *deps;
        int rank;
    } spec[] = {
        {"core", "core.so", "", 3},        {"log", "log.so", "", 3},
        {"render", "r.so", "core log", 0}, {"audio", "au.so", "core", 1},
        {"ui", "ui.so", "render", 1},      {"extra", "ex.so", "", INT_MAX},
        {"net", "net.so", "log", 2},       {"game", "g.so", "ui audio net", 0},
    };
    enum { N = sizeof spec / sizeof spec[0] };
    char first[MAX_NODES * 17] = "";
    uint64_t seed = 12345;
    for (int round = 0; round < 200; round++) {
        size_t perm[N];
        for (size_t i = 0; i < N; i++) perm[i] = i;
        for (size_t i = N - 1; i > 0; i--) { /* Fisher-Yates with an LCG */
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t j = (size_t)((seed >> 33) % (i + 1));
            size_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        graph g = {0};
        for (size_t i = 0; i < N; i++)
            add(&g, spec[perm[i]].name, spec[perm[i]].rank, spec[perm[i]].file, spec[perm[i]].deps);
        sort(&g);
        assert_int_equal(g.count, N);
        if (round == 0) {
            strcpy(first, order_text(&g));
            assert_string_equal(first, "core audio log render ui net game extra");
        } else if (strcmp(first, order_text(&g)) != 0) {
            fail_msg("round %d: order '%s' differs from '%s'", round, order_text(&g), first);
        }
    }
}

/* ---- Missing dependencies --------------------------------------------------------- */

static void Order_missing_dependency_named_and_dependents_skipped(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "needs_ghost", 0, "a.so", "base ghost");
    add(&g, "base", 1, "b.so", "");
    add(&g, "child", 2, "c.so", "base needs_ghost");
    add(&g, "grandchild", 3, "d.so", "child");
    add(&g, "free", 4, "e.so", "base");
    sort(&g);
    expect_status(&g, "needs_ghost", HOST_ORDER_MISSING_DEP, "ghost");
    expect_status(&g, "child", HOST_ORDER_DEP_SKIPPED, "needs_ghost");
    expect_status(&g, "grandchild", HOST_ORDER_DEP_SKIPPED, "child");
    expect_status(&g, "base", HOST_ORDER_OK, NULL);
    expect_status(&g, "free", HOST_ORDER_OK, NULL);
    assert_string_equal(order_text(&g), "base free");
    check_out_matches_status(&g);
}

static void Order_dependent_listed_before_missing_one_is_skipped_too(void **state)
{
    (void)state;
    graph g = {0};
    /* The dependents come first in the array: the skip must propagate backwards too. */
    add(&g, "c", 0, "c.so", "b");
    add(&g, "b", 1, "b.so", "a");
    add(&g, "a", 2, "a.so", "missing");
    sort(&g);
    expect_status(&g, "a", HOST_ORDER_MISSING_DEP, "missing");
    expect_status(&g, "b", HOST_ORDER_DEP_SKIPPED, "a");
    expect_status(&g, "c", HOST_ORDER_DEP_SKIPPED, "b");
    assert_int_equal(g.count, 0);
}

/* ---- Cycles ----------------------------------------------------------------------- */

static void Order_two_cycle_marked_and_dependents_skipped(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "a", 0, "a.so", "b");
    add(&g, "b", 1, "b.so", "a");
    add(&g, "user", 2, "u.so", "a");
    add(&g, "lone", 3, "l.so", "");
    add(&g, "after", 4, "f.so", "lone");
    sort(&g);
    expect_status(&g, "a", HOST_ORDER_CYCLE, "b");
    expect_status(&g, "b", HOST_ORDER_CYCLE, "a");
    expect_status(&g, "user", HOST_ORDER_DEP_SKIPPED, "a");
    assert_string_equal(order_text(&g), "lone after");
    check_out_matches_status(&g);
}

static void Order_three_cycle_members_name_their_successor(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "z", 9, "z.so", "");
    add(&g, "x", 0, "x.so", "y");
    add(&g, "y", 1, "y.so", "w");
    add(&g, "w", 2, "w.so", "x");
    add(&g, "on_w", 3, "ow.so", "z w");
    add(&g, "on_on_w", 4, "oow.so", "on_w");
    add(&g, "plain", 5, "p.so", "z");
    sort(&g);
    expect_status(&g, "x", HOST_ORDER_CYCLE, "y");
    expect_status(&g, "y", HOST_ORDER_CYCLE, "w");
    expect_status(&g, "w", HOST_ORDER_CYCLE, "x");
    expect_status(&g, "on_w", HOST_ORDER_DEP_SKIPPED, "w");
    expect_status(&g, "on_on_w", HOST_ORDER_DEP_SKIPPED, "on_w");
    assert_string_equal(order_text(&g), "z plain");
    check_out_matches_status(&g);
}

static void Order_cycle_member_names_neighbour_on_cycle_not_other_dep(void **state)
{
    (void)state;
    graph g = {0};
    /* a's first dependency loads fine and b's first one hangs off the cycle: the `dep` of
     * each must still be its neighbour on the cycle. */
    add(&g, "ok", 0, "ok.so", "");
    add(&g, "hang", 1, "h.so", "a");
    add(&g, "a", 2, "a.so", "ok b");
    add(&g, "b", 3, "b.so", "hang a");
    sort(&g);
    /* hang -> a -> b -> hang is also a cycle, so all three are on one */
    expect_status(&g, "a", HOST_ORDER_CYCLE, "b");
    expect_status(&g, "b", HOST_ORDER_CYCLE, "hang");
    expect_status(&g, "hang", HOST_ORDER_CYCLE, "a");
    expect_status(&g, "ok", HOST_ORDER_OK, NULL);
    assert_string_equal(order_text(&g), "ok");
}

static void Order_self_dependency_is_a_cycle(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "narcissus", 0, "n.so", "narcissus");
    add(&g, "echo", 1, "e.so", "narcissus");
    add(&g, "other", 2, "o.so", "");
    sort(&g);
    expect_status(&g, "narcissus", HOST_ORDER_CYCLE, "narcissus");
    expect_status(&g, "echo", HOST_ORDER_DEP_SKIPPED, "narcissus");
    assert_string_equal(order_text(&g), "other");
}

static void Order_two_separate_cycles_both_detected(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "a", 0, "a.so", "b");
    add(&g, "b", 0, "b.so", "a");
    add(&g, "c", 0, "c.so", "d");
    add(&g, "d", 0, "d.so", "c a"); /* on the c-d cycle and depends on the a-b cycle */
    add(&g, "e", 0, "e.so", "");
    sort(&g);
    expect_status(&g, "a", HOST_ORDER_CYCLE, "b");
    expect_status(&g, "b", HOST_ORDER_CYCLE, "a");
    expect_status(&g, "c", HOST_ORDER_CYCLE, "d");
    expect_status(&g, "d", HOST_ORDER_CYCLE, "c");
    assert_string_equal(order_text(&g), "e");
}

static void Order_missing_dep_wins_over_cycle_dependency(void **state)
{
    (void)state;
    graph g = {0};
    add(&g, "a", 0, "a.so", "b");
    add(&g, "b", 0, "b.so", "a");
    add(&g, "m", 0, "m.so", "a nowhere");
    sort(&g);
    expect_status(&g, "m", HOST_ORDER_MISSING_DEP, "nowhere");
    expect_status(&g, "a", HOST_ORDER_CYCLE, "b");
    assert_int_equal(g.count, 0);
}

/* ---- Randomized ------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s) /* xorshift64* */
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static uint32_t rng_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

static bool node_before(const host_order_node *a, const host_order_node *b)
{
    if (a->rank != b->rank) return a->rank < b->rank;
    return strcmp(a->file, b->file) < 0;
}

/* Does a dependency path lead from `from` to `to` (one step at least)? */
static bool path_exists(const graph *g, size_t from, size_t to)
{
    bool seen[MAX_NODES] = {false};
    size_t stack[MAX_NODES * MAX_DEPS + 1], top = 0;
    stack[top++] = from;
    while (top) {
        size_t v = stack[--top];
        for (const char *const *d = g->node[v].deps; d && *d; d++) {
            size_t j = index_of(g, *d);
            if (j == to) return true;
            if (seen[j]) continue;
            seen[j] = true;
            stack[top++] = j;
        }
    }
    return false;
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("seed %llu round %d: %s (order: %s)", (unsigned long long)seed0, round,       \
                     #cond, order_text(g));                                                        \
    } while (0)

/* Check one random graph against an independent model. */
static void check_random_graph(const graph *g, uint64_t seed0, int round)
{
    /* Loadable in the model: every dependency loadable (fixed point). */
    bool loadable[MAX_NODES] = {false};
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < g->n; i++) {
            if (loadable[i]) continue;
            bool all = true;
            for (const char *const *d = g->node[i].deps; d && *d; d++)
                all = all && loadable[index_of(g, *d)];
            if (all) loadable[i] = changed = true;
        }
    }
    size_t expected = 0;
    for (size_t i = 0; i < g->n; i++) expected += loadable[i];
    CHECK(g->count == expected);
    check_out_matches_status(g);

    /* Replay the order: each chosen node is ready and the lowest (rank, file) among the
     * ready ones. */
    bool placed[MAX_NODES] = {false};
    for (size_t k = 0; k < g->count; k++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < g->n; i++) {
            if (placed[i] || !loadable[i]) continue;
            bool ready = true;
            for (const char *const *d = g->node[i].deps; d && *d; d++)
                ready = ready && placed[index_of(g, *d)];
            if (ready && (best == SIZE_MAX || node_before(&g->node[i], &g->node[best]))) best = i;
        }
        size_t v = g->out[k];
        for (const char *const *d = g->node[v].deps; d && *d; d++)
            CHECK(placed[index_of(g, *d)]); /* every dependency already loaded */
        CHECK(v == best);
        placed[v] = true;
    }

    /* The others: on a cycle (dep is a dependency that leads back), or skipped because of
     * a dependency that is not loaded. */
    for (size_t i = 0; i < g->n; i++) {
        const host_order_result *r = &g->result[i];
        if (loadable[i]) {
            CHECK(r->status == HOST_ORDER_OK && r->dep == NULL);
            continue;
        }
        bool is_dep = false;
        for (const char *const *d = g->node[i].deps; d && *d; d++)
            is_dep = is_dep || (r->dep && *d == r->dep);
        CHECK(is_dep); /* `dep` points into the node's own list */
        if (path_exists(g, i, i)) {
            CHECK(r->status == HOST_ORDER_CYCLE);
            CHECK(path_exists(g, index_of(g, r->dep), i) || index_of(g, r->dep) == i);
        } else {
            CHECK(r->status == HOST_ORDER_DEP_SKIPPED);
            CHECK(!loadable[index_of(g, r->dep)]);
        }
    }
}

/* A random graph: a DAG over a hidden topological order, plus `back` back edges. */
static void random_graph(graph *g, uint64_t *s, size_t n, int back)
{
    size_t topo[MAX_NODES];
    for (size_t i = 0; i < n; i++) topo[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng_below(s, (uint32_t)i + 1), t = topo[i];
        topo[i] = topo[j];
        topo[j] = t;
    }
    char deps[MAX_NODES][MAX_DEPS * 16];
    for (size_t i = 0; i < n; i++) deps[i][0] = '\0';
    for (size_t p = 1; p < n; p++) { /* the node at topo position p depends on earlier ones */
        uint32_t k = rng_below(s, 4);
        for (uint32_t e = 0; e < k; e++) {
            size_t q = rng_below(s, (uint32_t)p);
            char name[16];
            snprintf(name, sizeof name, "n%zu ", topo[q]);
            if (!strstr(deps[topo[p]], name)) strcat(deps[topo[p]], name);
        }
    }
    for (int b = 0; b < back; b++) { /* an edge from an early node to a later one */
        size_t p = rng_below(s, (uint32_t)n), q = p + rng_below(s, (uint32_t)(n - p));
        char name[16];
        snprintf(name, sizeof name, "n%zu ", topo[q]);
        if (strlen(deps[topo[p]]) < (MAX_DEPS - 1) * 16 && !strstr(deps[topo[p]], name))
            strcat(deps[topo[p]], name);
    }
    for (size_t i = 0; i < n; i++) {
        char name[32], file[24];
        snprintf(name, sizeof name, "n%zu", i);
        snprintf(file, sizeof file, "f%02u.so", rng_below(s, 40)); /* ties on purpose */
        add(g, name, (int)rng_below(s, 4) - 1, file, deps[i]);
    }
}

static void Order_random_dags_respect_dependencies_and_tie_rule(void **state)
{
    (void)state;
    const uint64_t seed0 = 0x5EED0001;
    uint64_t s = seed0;
    for (int round = 0; round < 3000; round++) {
        graph gg = {0}, *g = &gg;
        random_graph(g, &s, 1 + rng_below(&s, 30), 0);
        sort(g);
        CHECK(g->count == g->n); /* a DAG loads completely */
        check_random_graph(g, seed0, round);
    }
}

static void Order_random_graphs_with_cycles_classified_correctly(void **state)
{
    (void)state;
    const uint64_t seed0 = 0x5EED0002;
    uint64_t s = seed0;
    for (int round = 0; round < 3000; round++) {
        graph gg = {0}, *g = &gg;
        random_graph(g, &s, 1 + rng_below(&s, 30), 1 + (int)rng_below(&s, 3));
        sort(g);
        check_random_graph(g, seed0, round);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Order_empty_input_returns_zero),
        cmocka_unit_test(Order_single_node_without_deps_loads),
        cmocka_unit_test(Order_dependencies_load_before_dependents),
        cmocka_unit_test(Order_independent_nodes_sorted_by_rank_then_file),
        cmocka_unit_test(Order_file_breaks_tie_when_ranks_equal),
        cmocka_unit_test(Order_lowest_ready_node_chosen_each_step),
        cmocka_unit_test(Order_same_result_whatever_input_order),
        cmocka_unit_test(Order_missing_dependency_named_and_dependents_skipped),
        cmocka_unit_test(Order_dependent_listed_before_missing_one_is_skipped_too),
        cmocka_unit_test(Order_two_cycle_marked_and_dependents_skipped),
        cmocka_unit_test(Order_three_cycle_members_name_their_successor),
        cmocka_unit_test(Order_cycle_member_names_neighbour_on_cycle_not_other_dep),
        cmocka_unit_test(Order_self_dependency_is_a_cycle),
        cmocka_unit_test(Order_two_separate_cycles_both_detected),
        cmocka_unit_test(Order_missing_dep_wins_over_cycle_dependency),
        cmocka_unit_test(Order_random_dags_respect_dependencies_and_tie_rule),
        cmocka_unit_test(Order_random_graphs_with_cycles_classified_correctly),
    };
    return cmocka_run_group_tests_name("order", tests, NULL, NULL);
}
