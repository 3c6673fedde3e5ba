/* SPDX-License-Identifier: MIT */
/* bench_queries.h: the API of bench_queries.so (ecs-bench's V1): the handles of the two
 * collections of BENCH.md's V1, kept by the host for that plugin. */
#ifndef BENCH_QUERIES_H
#define BENCH_QUERIES_H

#include "ecs_plugin.h"

#define BENCH_QUERIES_API_NAME "bench.queries"

typedef struct bench_queries_api {
    uint32_t struct_size;
    ecs_collection with_mesh;    /* {transform, mesh} */
    ecs_collection without_name; /* {transform, not debug_name} */
} bench_queries_api;

#endif
