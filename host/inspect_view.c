/* SPDX-License-Identifier: MIT */
/* inspect_view.c: GET /api/view?max=N, what the page's 3D view draws: the world position of
 * the entities that have one ("ecs.position") and the world box of those that fill one
 * ("ecs.bounds"), in a compact binary form (inspect_int.h, docs/inspector.md).
 *
 * A job walks the live entities in index order a slice at a time (a slice of at most 1 ms,
 * at frame boundaries and in the time the loop would sleep) and keeps every stride-th
 * (stride = live entities / max, rounded up: all of them when they fit), so the page draws
 * every entity up to max (200,000 by default, at most 1,000,000) and says "N of M" past it.
 * The answer's ETag is a hash of its bytes: a client that sends it back in If-None-Match
 * gets 304 and no bytes when nothing moved.
 *
 * The answer, little-endian:
 *   "ECSV", u32 version (1), u32 entities (live), u32 points, u32 boxes, u32 stride;
 *   points x {u32 entity id, f32 x, f32 y, f32 z};
 *   boxes x {u32 point (its index above), f32 min x, y, z, f32 max x, y, z}.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_describe.h"
#include "inspect_int.h"

#define VIEW_DEFAULT 200000u
#define VIEW_MAX     1000000u
#define CLOCK_EVERY  256u
#define HEAD_BYTES   24u
#define POINT_BYTES  16u
#define BOX_BYTES    28u

typedef struct view_job {
    inspect_job job;
    uint32_t max, stride, seen; /* seen: live entities walked */
    uint32_t cursor;
    uint32_t live;
    char *points, *boxes; /* the two tables as they grow */
    uint32_t n_points, n_boxes, cap_points, cap_boxes;
    uint64_t hash; /* of the rows so far: the ETag, made as they are (no pass at the end) */
    char etag[24];
} view_job;

/* FNV-1a, 64 bits, over n bytes from p, on from h. */
static uint64_t hash_bytes(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* Room for one more row of `size` bytes in *table (grown by doubling). */
static char *row(char **table, uint32_t n, uint32_t *cap, size_t size)
{
    if (n == *cap) {
        uint32_t more = *cap ? *cap * 2 : 4096;
        char *v = realloc(*table, (size_t)more * size);
        if (!v) return NULL;
        *table = v, *cap = more;
    }
    return *table + (size_t)n * size;
}

static void put_u32(char *at, uint32_t v)
{
    memcpy(at, &v, 4); /* x86-64, ARM: little-endian, as the page reads it */
}

static bool view_step(host_inspector *in, inspect_job *j, uint64_t until)
{
    view_job *v = (view_job *)j;
    host_session *hs = in->hs;
    size_t size = 0;
    const ecs_position_api *pos =
        host_registry_find(&hs->registry, ECS_POSITION_API_NAME, ECS_POSITION_API_VERSION, &size);
    if (pos &&
        (size < offsetof(ecs_position_api, position) + sizeof pos->position || !pos->position))
        pos = NULL;
    const ecs_bounds_api *box =
        host_registry_find(&hs->registry, ECS_BOUNDS_API_NAME, ECS_BOUNDS_API_VERSION, &size);
    if (box && (size < offsetof(ecs_bounds_api, bounds) + sizeof box->bounds || !box->bounds))
        box = NULL;
    const host_api_entry *e =
        pos ? host_registry_entry(&hs->registry, ECS_POSITION_API_NAME) : NULL;
    j->crashed = e ? e->owner : NULL, j->crash_in = "its ecs.position or ecs.bounds API";
    ecs_entity ent;
    for (;;) {
        for (unsigned k = 0; k < CLOCK_EVERY; k++) {
            if (!pos || !host_entities_next_live(hs->world->entities, v->cursor, &ent)) return true;
            v->cursor = ecs_entity_index(ent) + 1;
            if (v->seen++ % v->stride) continue;
            float p[3], lo[3], hi[3];
            if (!pos->position(pos->self, ent, p)) continue;
            char *at = row(&v->points, v->n_points, &v->cap_points, POINT_BYTES);
            if (!at) return true;
            put_u32(at, ent.id);
            memcpy(at + 4, p, 12);
            v->hash = hash_bytes(v->hash, at, POINT_BYTES);
            if (box && box->bounds(box->self, ent, lo, hi) &&
                (at = row(&v->boxes, v->n_boxes, &v->cap_boxes, BOX_BYTES))) {
                put_u32(at, v->n_points);
                memcpy(at + 4, lo, 12);
                memcpy(at + 16, hi, 12);
                v->hash = hash_bytes(v->hash, at, BOX_BYTES);
                v->n_boxes++;
            }
            v->n_points++;
        }
        if (host_now_ns() >= until) return false;
    }
}

/* The answer's bytes, handed to libmicrohttpd (no copy): freed with its response. */
typedef struct view_data {
    char head[HEAD_BYTES];
    char *points, *boxes;
} view_data;

static void view_data_free(void *cls)
{
    view_data *d = cls;
    free(d->points);
    free(d->boxes);
    free(d);
}

static enum MHD_Result view_reply(host_inspector *in, inspect_job *j, struct MHD_Connection *c)
{
    (void)in;
    view_job *v = (view_job *)j;
    view_data *d = malloc(sizeof *d);
    if (!d) return inspect_reply_error(c, 500, "out of memory");
    memcpy(d->head, "ECSV", 4);
    uint32_t head[5] = {1, v->live, v->n_points, v->n_boxes, v->stride};
    for (int k = 0; k < 5; k++) put_u32(d->head + 4 + 4 * k, head[k]);
    snprintf(v->etag, sizeof v->etag, "\"%016llx\"",
             (unsigned long long)hash_bytes(v->hash, d->head, HEAD_BYTES));
    d->points = v->points, d->boxes = v->boxes; /* the response's now */
    v->points = v->boxes = NULL;
    const char *known = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    bool same = known && !strcmp(known, v->etag); /* nothing moved: no bytes */
    struct MHD_IoVec iov[3] = {{d->head, HEAD_BYTES},
                               {d->points, (size_t)v->n_points * POINT_BYTES},
                               {d->boxes, (size_t)v->n_boxes * BOX_BYTES}};
    struct MHD_Response *r = MHD_create_response_from_iovec(iov, same ? 0 : 3, view_data_free, d);
    if (!r) return view_data_free(d), MHD_NO;
    inspect_headers(r, "application/octet-stream");
    MHD_add_response_header(r, "ETag", v->etag);
    enum MHD_Result ok = MHD_queue_response(c, same ? 304 : 200, r);
    MHD_destroy_response(r);
    return ok;
}

static void view_free(inspect_job *j)
{
    view_job *v = (view_job *)j;
    free(v->points);
    free(v->boxes);
    free(v);
}

static const inspect_job_kind view_kind = {"view", view_step, NULL, view_free, view_reply};

enum MHD_Result inspect_view_start(host_inspector *in, struct MHD_Connection *c, request *r)
{
    long max = inspect_query_long(c, "max", VIEW_DEFAULT, VIEW_MAX);
    if (max <= 0) return inspect_reply_error(c, 400, "max: a number from 1 to 1000000");
    view_job *v = calloc(1, sizeof *v);
    if (!v) return inspect_reply_error(c, 500, "out of memory");
    v->job.kind = &view_kind;
    v->max = (uint32_t)max;
    v->live = host_entities_live(in->hs->world->entities);
    v->stride = v->live > v->max ? (v->live + v->max - 1) / v->max : 1;
    v->hash = 1469598103934665603ull;
    return inspect_job_start(in, c, r, &v->job);
}
