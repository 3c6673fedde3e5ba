/* SPDX-License-Identifier: MIT */
/* snapshot_core.c: the world core's own part of a snapshot (docs/snapshot-format.md,
 * section "core"): the frame (number, time, dt, the session's seed), the entity manager
 * (entity.c writes its own bytes) and the signatures, one column of bits per manager name.
 *
 * Layout of the core bytes: a header (core_head below), the entity bytes, the signature
 * bytes: u32 name count, u32 words per column, then per name its u32 length, its bytes
 * and its column's words. Columns are matched by name on restore, so a world whose names
 * got other bits (another load order) restores them right. Collections are not stored:
 * they follow from the signatures and are rebuilt at the start of the next frame.
 * Restoring checks every byte before it changes anything: a refused core leaves the world
 * as it was.
 */
#include "snapshot_core.h"

#include <stdlib.h>
#include <string.h>

typedef struct core_head {
    uint64_t frame, seed;
    double time, dt;
    uint64_t entity_bytes, sig_bytes;
} core_head;

/* 64-bit words of a column that hold the bits of indices [0, used). */
static uint32_t column_words(const host_signatures *s)
{
    return (s->used + 63u) / 64u;
}

static size_t sig_size(const host_signatures *s)
{
    size_t n = 2 * sizeof(uint32_t);
    for (uint32_t b = 0; b < s->name_count; b++)
        n += sizeof(uint32_t) + strlen(s->names[b]) + (size_t)column_words(s) * 8u;
    return n;
}

static void sig_write(const host_signatures *s, char *p)
{
    uint32_t head[2] = {s->name_count, column_words(s)};
    memcpy(p, head, sizeof head), p += sizeof head;
    for (uint32_t b = 0; b < s->name_count; b++) {
        uint32_t len = (uint32_t)strlen(s->names[b]);
        memcpy(p, &len, sizeof len), p += sizeof len;
        memcpy(p, s->names[b], len), p += len;
        memcpy(p, s->columns[b], (size_t)head[1] * 8u), p += (size_t)head[1] * 8u;
    }
}

/* Walk the signature bytes in[0..size): true when they hold `count` names of sane length
 * with their columns and nothing more; each name is given a bit (created) when make. */
static bool sig_walk(host_signatures *s, const char *in, size_t size, bool make)
{
    uint32_t head[2];
    if (size < sizeof head) return false;
    memcpy(head, in, sizeof head);
    if (head[1] > (1u << ECS_ENTITY_INDEX_BITS) / 64u) return false;
    size_t at = sizeof head, col = (size_t)head[1] * 8u;
    for (uint32_t k = 0; k < head[0]; k++) {
        uint32_t len, bit;
        char name[256];
        if (size - at < sizeof len) return false;
        memcpy(&len, in + at, sizeof len), at += sizeof len;
        if (len == 0 || len >= sizeof name || size - at < len || size - at - len < col)
            return false;
        memcpy(name, in + at, len), name[len] = 0, at += len;
        if (make) {
            if (host_sig_bit(s, name, true, &bit) != ECS_OK) return false;
            memcpy(s->columns[bit], in + at, col);
        }
        at += col;
    }
    if (make) s->used = head[1] * 64u; /* every bit past it was cleared: the same bytes again */
    return at == size;
}

/* Replace every bit by those of in[0..size) (checked by sig_walk first). */
static bool sig_read(host_signatures *s, const char *in, size_t size)
{
    if (!sig_walk(s, in, size, false)) return false;
    size_t words = (size_t)column_words(s);
    for (uint32_t b = 0; b < s->name_count; b++) memset(s->columns[b], 0, words * 8u);
    host_sig_clear_queue(s);
    s->overflow = true; /* every collection rebuilds from the bits at the next frame */
    return sig_walk(s, in, size, true);
}

size_t host_core_snapshot_size(const host_core_view *c)
{
    return sizeof(core_head) + host_entities_snapshot_size(c->entities) + sig_size(c->sig);
}

void host_core_snapshot_write(const host_core_view *c, void *out)
{
    core_head h = {c->frame->frame,
                   c->seed ? *c->seed : 0,
                   c->frame->time,
                   c->frame->dt,
                   host_entities_snapshot_size(c->entities),
                   sig_size(c->sig)};
    char *p = out;
    memcpy(p, &h, sizeof h), p += sizeof h;
    host_entities_snapshot_write(c->entities, p);
    sig_write(c->sig, p + h.entity_bytes);
}

ecs_status host_core_snapshot_check(const host_core_view *c, const void *in, size_t size)
{
    core_head h;
    const char *p = in;
    if (size < sizeof h) return ECS_ERR_BAD_VALUE;
    memcpy(&h, p, sizeof h);
    if (h.entity_bytes > size - sizeof h || h.sig_bytes != size - sizeof h - h.entity_bytes)
        return ECS_ERR_BAD_VALUE;
    if (!sig_walk(c->sig, p + sizeof h + h.entity_bytes, h.sig_bytes, false))
        return ECS_ERR_BAD_VALUE;
    return host_entities_snapshot_check(p + sizeof h, h.entity_bytes);
}

ecs_status host_core_snapshot_read(host_core_view *c, const void *in, size_t size, bool check)
{
    core_head h;
    const char *p = in;
    ecs_status st = check ? host_core_snapshot_check(c, in, size) : ECS_OK;
    if (st != ECS_OK) return st;
    memcpy(&h, p, sizeof h);
    const char *sig = p + sizeof h + h.entity_bytes;
    st = host_entities_snapshot_read(c->entities, p + sizeof h, h.entity_bytes, check);
    if (st != ECS_OK) return st;
    if (!sig_read(c->sig, sig, h.sig_bytes)) return ECS_ERR_NO_MEMORY; /* a new name's column */
    c->frame->frame = h.frame, c->frame->time = h.time, c->frame->dt = h.dt;
    if (c->seed) *c->seed = h.seed;
    return ECS_OK;
}
