/* SPDX-License-Identifier: MIT */
/* order.h: the load order of plugins: dependencies first, then manifest rank, then file.
 *
 * A pure function over a small array (Kahn's algorithm, picking among the ready nodes the
 * lowest (rank, file) each time), so ties are broken the same way on every run. A node
 * whose dependency is missing, skipped, or in a cycle is skipped with the reason.
 */
#ifndef HOST_ORDER_H
#define HOST_ORDER_H

#include <stddef.h>

typedef struct host_order_node {
    const char *name;
    const char *const *deps; /* NULL-terminated, or NULL */
    int rank;                /* manifest position; larger for plugins not listed */
    const char *file;        /* tie-break */
} host_order_node;

typedef enum host_order_status {
    HOST_ORDER_OK = 0,
    HOST_ORDER_MISSING_DEP, /* `dep` names no node */
    HOST_ORDER_DEP_SKIPPED, /* `dep` was skipped, so this one is too */
    HOST_ORDER_CYCLE        /* this node is on a dependency cycle; `dep` is the next one */
} host_order_status;

typedef struct host_order_result {
    host_order_status status;
    const char *dep; /* the dependency the status is about, NULL when OK */
} host_order_result;

/* Order nodes[0..n): out[] (n slots) receives the indices of the loadable nodes in load
 * order, result[] (n slots) each node's status. Returns how many indices were written.
 * Returns (size_t)-1 when memory ran out (then out and result are undefined). */
size_t host_order_sort(const host_order_node *nodes, size_t n, size_t *out,
                       host_order_result *result);

#endif
