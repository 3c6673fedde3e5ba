/* SPDX-License-Identifier: MIT */
/* signature.c: per-entity bitsets of manager names, one column of bits per name
 * (signature.h).
 *
 * The columns and the flag array are reserved whole at first use with mmap(MAP_NORESERVE):
 * the OS commits their pages as they are touched and gives them zeroed, so adding entities
 * never copies or clears anything. Every function that allocates finds all its memory
 * before it changes anything.
 */
#include "signature.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"

#define INDEX_COUNT  (1u << ECS_ENTITY_INDEX_BITS)
#define COLUMN_BYTES (INDEX_COUNT / 8)

static inline bool column_test(const host_signatures *s, uint32_t b, uint32_t i)
{
    return s->columns[b][i >> 6] >> (i & 63) & 1u;
}

static inline void column_set(host_signatures *s, uint32_t b, uint32_t i)
{
    s->columns[b][i >> 6] |= 1ull << (i & 63);
}

static inline void column_clear(host_signatures *s, uint32_t b, uint32_t i)
{
    s->columns[b][i >> 6] &= ~(1ull << (i & 63));
}

/* Clear every bit of index i: one word per name, written only when it changes (a destroyed
 * entity's words are mostly read, not dirtied). */
static void clear_index(host_signatures *s, uint32_t i)
{
    for (uint32_t b = 0; b < s->name_count; b++)
        if (column_test(s, b, i)) column_clear(s, b, i);
}

/* size bytes of address space, zero-filled on first touch; NULL when it cannot be had. A
 * column is 512 KiB: no huge pages (most names are on few entities). */
static void *reserve(size_t size)
{
    return host_mem_reserve(size, 0);
}

static void release(void *p, size_t size)
{
    host_mem_unreserve(p, size);
}

/* Reserve the flag of every index (once). -1 when the address space ran out. */
static int reserve_indices(host_signatures *s)
{
    if (s->capacity) return 0;
    uint8_t *flag = reserve(INDEX_COUNT);
    if (!flag) return -1;
    s->flag = flag;
    s->capacity = INDEX_COUNT;
    return 0;
}

const char *host_sig_name(const host_signatures *s, uint32_t bit)
{
    return bit < s->name_count ? s->names[bit] : NULL;
}

ecs_status host_sig_bit(host_signatures *s, const char *name, bool create, uint32_t *bit)
{
    for (uint32_t b = 0; b < s->name_count; b++) /* rare: registration, queries */
        if (strcmp(s->names[b], name) == 0) return *bit = b, ECS_OK;
    if (!create) return ECS_ERR_NOT_FOUND;
    if (reserve_indices(s) != 0) return ECS_ERR_NO_MEMORY;
    if (s->name_count == s->name_cap) {
        uint32_t cap = s->name_cap ? s->name_cap * 2 : 16;
        char **v = realloc(s->names, cap * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        s->names = v;
        s->name_cap = cap;
    }
    if (s->name_count == s->column_cap) {
        uint32_t cap = s->column_cap ? s->column_cap * 2 : 16;
        uint64_t **v = realloc(s->columns, cap * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        s->columns = v;
        s->column_cap = cap;
    }
    char *copy = strdup(name);
    uint64_t *column = copy ? reserve(COLUMN_BYTES) : NULL;
    if (!column) {
        free(copy);
        return ECS_ERR_NO_MEMORY;
    }
    *bit = s->name_count;
    s->columns[s->name_count] = column;
    s->names[s->name_count++] = copy;
    return ECS_OK;
}

void host_sig_touch(host_signatures *s, uint32_t i)
{
    if (!s->tracking || i >= s->capacity || s->flag[i]) return; /* not tracked, or queued */
    if (s->queued == s->queue_cap) {
        uint32_t cap = s->queue_cap ? s->queue_cap * 2 : 1024;
        uint32_t *q = realloc(s->queue, cap * sizeof *q);
        if (!q) {
            s->overflow = true; /* the collections rebuild from the bits instead */
            return;
        }
        s->queue = q;
        s->queue_cap = cap;
    }
    s->flag[i] = 1;
    s->queue[s->queued++] = i;
}

void host_sig_clear_queue(host_signatures *s)
{
    for (uint32_t k = 0; k < s->queued; k++) s->flag[s->queue[k]] = 0;
    s->queued = 0;
    s->overflow = false;
}

ecs_status host_sig_add(host_signatures *s, uint32_t bit, ecs_entity e)
{
    uint32_t i = ecs_entity_index(e);
    if (bit >= s->name_count) return ECS_ERR_NO_MEMORY; /* a bit without its column */
    if (column_test(s, bit, i)) return ECS_OK;          /* no change */
    if (i >= s->used) s->used = i + 1;
    column_set(s, bit, i); /* e is alive: the bits of its index are its own */
    host_sig_touch(s, i);
    return ECS_OK;
}

void host_sig_remove(host_signatures *s, uint32_t bit, ecs_entity e)
{
    uint32_t i = ecs_entity_index(e);
    if (bit >= s->name_count || !column_test(s, bit, i)) return;
    ecs_entity holder = host_sig_holder(s, i);
    if (!ecs_entity_is_null(holder) && holder.id != e.id) return; /* a stale id: not its bits */
    column_clear(s, bit, i);
    host_sig_touch(s, i);
}

void host_sig_forget(host_signatures *s, const ecs_entity *list, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++) { /* dead, and their indices not handed out again yet */
        uint32_t i = ecs_entity_index(list[j]);
        if (i >= s->used) continue; /* never given a bit */
        clear_index(s, i);
        host_sig_touch(s, i);
    }
}

void host_sig_clear_bit(host_signatures *s, uint32_t bit)
{
    if (bit >= s->name_count) return;
    uint64_t *column = s->columns[bit];
    for (uint32_t w = 0; w < (s->used + 63) / 64; w++) { /* a word at a time: most are 0 */
        if (!column[w]) continue; /* not written: a page never touched stays uncommitted */
        for (uint64_t word = column[w]; word; word &= word - 1)
            host_sig_touch(s, w * 64 + (uint32_t)__builtin_ctzll(word));
        column[w] = 0;
    }
}

void host_sig_free(host_signatures *s)
{
    for (uint32_t b = 0; b < s->name_count; b++) {
        free(s->names[b]);
        release(s->columns[b], COLUMN_BYTES);
    }
    free(s->columns);
    free(s->names);
    release(s->flag, INDEX_COUNT);
    free(s->queue);
    memset(s, 0, sizeof *s);
}
