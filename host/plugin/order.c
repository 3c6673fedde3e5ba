/* SPDX-License-Identifier: MIT */
/* order.c: plugin load order (see order.h). n is the number of plugins in a folder, so
 * the quadratic steps are fine; what matters is that the result is deterministic. */
#include "order.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static long find(const host_order_node *nodes, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(nodes[i].name, name) == 0) return (long)i;
    return -1;
}

#define EACH_DEP(node, d) for (const char *const *d = (node).deps; d && *d; d++)

/* Missing dependencies, then whatever depends on a skipped node, until nothing changes. */
static void mark_unresolvable(const host_order_node *nodes, size_t n, host_order_result *r)
{
    for (size_t i = 0; i < n; i++) {
        EACH_DEP(nodes[i], d)
        {
            if (find(nodes, n, *d) >= 0) continue;
            r[i].status = HOST_ORDER_MISSING_DEP;
            r[i].dep = *d;
            break;
        }
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < n; i++) {
            if (r[i].status != HOST_ORDER_OK) continue;
            EACH_DEP(nodes[i], d)
            {
                if (r[find(nodes, n, *d)].status == HOST_ORDER_OK) continue;
                r[i].status = HOST_ORDER_DEP_SKIPPED;
                r[i].dep = *d;
                changed = true;
                break;
            }
        }
    }
}

static bool before(const host_order_node *a, const host_order_node *b)
{
    if (a->rank != b->rank) return a->rank < b->rank;
    return strcmp(a->file, b->file) < 0;
}

/* Can `from` reach `target` through dependencies among the unplaced nodes? */
static bool reaches(const host_order_node *nodes, size_t n, const bool *open, size_t from,
                    size_t target, bool *seen)
{
    EACH_DEP(nodes[from], d)
    {
        size_t j = (size_t)find(nodes, n, *d);
        if (!open[j] || seen[j]) continue;
        if (j == target) return true;
        seen[j] = true;
        if (reaches(nodes, n, open, j, target, seen)) return true;
    }
    return false;
}

/* Nodes left when no node is ready: those on a cycle, and those depending on one. */
static void mark_cycles(const host_order_node *nodes, size_t n, const bool *open,
                        host_order_result *r, bool *seen)
{
    for (size_t i = 0; i < n; i++) {
        if (!open[i]) continue;
        memset(seen, 0, n * sizeof *seen);
        if (!reaches(nodes, n, open, i, i, seen)) continue;
        r[i].status = HOST_ORDER_CYCLE;
        EACH_DEP(nodes[i], d)
        { /* name a neighbour on the cycle */
            size_t j = (size_t)find(nodes, n, *d);
            memset(seen, 0, n * sizeof *seen);
            if (open[j] && (j == i || reaches(nodes, n, open, j, i, seen))) {
                r[i].dep = *d;
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!open[i] || r[i].status != HOST_ORDER_OK) continue;
        r[i].status = HOST_ORDER_DEP_SKIPPED;
        EACH_DEP(nodes[i], d)
        {
            size_t j = (size_t)find(nodes, n, *d);
            if (open[j]) {
                r[i].dep = *d;
                break;
            }
        }
    }
}

size_t host_order_sort(const host_order_node *nodes, size_t n, size_t *out,
                       host_order_result *result)
{
    bool *open = calloc(n ? n : 1, sizeof *open), *placed = calloc(n ? n : 1, sizeof *placed);
    if (!open || !placed) {
        free(open);
        free(placed);
        return (size_t)-1;
    }
    memset(result, 0, n * sizeof *result);
    mark_unresolvable(nodes, n, result);
    for (size_t i = 0; i < n; i++) open[i] = result[i].status == HOST_ORDER_OK;
    size_t count = 0;
    for (;;) {
        long best = -1;
        for (size_t i = 0; i < n; i++) {
            if (!open[i]) continue;
            bool ready = true;
            EACH_DEP(nodes[i], d) ready = ready && placed[find(nodes, n, *d)];
            if (ready && (best < 0 || before(&nodes[i], &nodes[best]))) best = (long)i;
        }
        if (best < 0) break;
        open[best] = false;
        placed[best] = true;
        out[count++] = (size_t)best;
    }
    mark_cycles(nodes, n, open, result, placed /* reused as scratch */);
    free(open);
    free(placed);
    return count;
}
