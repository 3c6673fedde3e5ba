/* SPDX-License-Identifier: MIT */
/* ecs_soa.h: header-only helpers for component managers (optional; plain C11, C++ too).
 *
 * Two pieces a manager composes:
 *
 * - ecs_soa: structure-of-arrays storage in ONE allocation from the host allocator.
 *   Field k is an array of `count` elements of size[k] bytes (each array 16-byte
 *   aligned). Instances are dense: 0..count-1. Removal swaps the last instance into the
 *   hole, so every array stays packed; the caller learns which instance moved and fixes
 *   whatever refers to it (its entity map, links between instances).
 * - ecs_entity_map: entity index -> instance, a sparse array of uint32_t (0 means
 *   none, else instance + 1), grown on demand. It does not check generations: keep the
 *   entity of each instance in a field and compare (ecs_soa_lookup does).
 *
 * Invariants (for a manager using both with the entity in field 0): for every instance
 * i < count, map[index(entity[i])] == i + 1; for every other index the map holds 0.
 * Every function reports failure by a return value and changes nothing on failure.
 * [main-thread] like everything a plugin does.
 */
#ifndef ECS_SOA_H
#define ECS_SOA_H

#include <string.h>
#if defined(__linux__)
#include <sys/mman.h> /* madvise (when the compiler mode declares it) */
#endif

#include "ecs_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ECS_SOA_MAX_FIELDS 16
#define ECS_SOA_NONE       UINT32_MAX

typedef struct ecs_soa {
    const ecs_host *host;
    uint32_t count, capacity;
    uint32_t field_count;
    size_t size[ECS_SOA_MAX_FIELDS]; /* bytes of one element of each field */
    void *field[ECS_SOA_MAX_FIELDS]; /* the arrays, inside `buffer` */
    void *buffer;
} ecs_soa;

static inline size_t ecs_soa_round16(size_t n)
{
    return (n + 15u) & ~(size_t)15u;
}

/* Set up an empty store of field_count fields of the given element sizes. Returns
 * ECS_ERR_INVALID_ARGUMENT for 0 or more than ECS_SOA_MAX_FIELDS fields. */
static inline ecs_status ecs_soa_init(ecs_soa *s, const ecs_host *h, uint32_t field_count,
                                      const size_t *sizes)
{
    if (field_count == 0 || field_count > ECS_SOA_MAX_FIELDS) return ECS_ERR_INVALID_ARGUMENT;
    memset(s, 0, sizeof *s);
    s->host = h;
    s->field_count = field_count;
    for (uint32_t k = 0; k < field_count; k++) s->size[k] = sizes[k];
    return ECS_OK;
}

/* Free the buffer; the store is empty afterwards and may be used again. */
static inline void ecs_soa_free(ecs_soa *s)
{
    if (s->buffer) s->host->free(s->host, s->buffer);
    s->buffer = NULL;
    s->count = s->capacity = 0;
    for (uint32_t k = 0; k < s->field_count; k++) s->field[k] = NULL;
}

#define ECS_SOA_DISCARD_ALIGN ((uintptr_t)1 << 16) /* a multiple of any page size in use */
#define ECS_SOA_HUGE_ELEMENT  32u                  /* fields this wide per element or more... */
#define ECS_SOA_HUGE_BYTES    ((size_t)4 << 20)    /* ...whose array is this big: huge pages */

/* madvise(advice) on the whole align-sized spans inside [p, p + n), where the C library
 * declares madvise (Linux, not a strict ISO mode); a no-op elsewhere. Only a hint: if the
 * call fails, nothing changes. */
static inline void ecs_soa_advise(void *p, size_t n, uintptr_t align, int advice)
{
#if defined(__linux__) && defined(MADV_DONTNEED)
    uintptr_t begin = ((uintptr_t)p + align - 1) & ~(align - 1);
    uintptr_t end = ((uintptr_t)p + n) & ~(align - 1);
    if (end > begin) (void)madvise((void *)begin, end - begin, advice);
#else
    (void)p, (void)n, (void)align, (void)advice;
#endif
}

/* Give the memory pages inside [p, p + n) back to the OS: their bytes hold nothing any more
 * and the next write to one gets a fresh page. Only whole 64 KiB-aligned spans go (smaller
 * gaps are not worth the call); elsewhere, and if the call fails, the bytes simply stay. */
static inline void ecs_soa_discard(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_DONTNEED)
    ecs_soa_advise(p, n, ECS_SOA_DISCARD_ALIGN, MADV_DONTNEED);
#else
    (void)p, (void)n;
#endif
}

/* Ask for huge pages on the 2 MiB pages inside [p, p + n): an array written front to back
 * then faults once per 2 MiB instead of once per 4 KiB (on a VM each fault costs more than
 * writing the page). */
static inline void ecs_soa_advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    ecs_soa_advise(p, n, (uintptr_t)2 << 20, MADV_HUGEPAGE);
#else
    (void)p, (void)n;
#endif
}

/* Make room for at least `capacity` instances: a new buffer from host->alloc, each field's
 * array copied to its place in it, the old buffer freed. The room after each array is
 * untouched memory (never resident until an array grows into it). A wide field (at least
 * ECS_SOA_HUGE_ELEMENT bytes per element) with an array of at least ECS_SOA_HUGE_BYTES asks
 * for huge pages before it is written: it costs at most one partly used 2 MiB page, where
 * 4 KiB faults would cost more time than the writes. (Growing with realloc instead remapped
 * the pages, but then moved each array up through the room, leaving old copies resident,
 * and huge pages did not survive the remapping.) ECS_ERR_NO_MEMORY leaves the store as it
 * was. */
static inline ecs_status ecs_soa_reserve(ecs_soa *s, uint32_t capacity)
{
    if (capacity <= s->capacity) return ECS_OK;
    size_t total = 0, offset[ECS_SOA_MAX_FIELDS];
    for (uint32_t k = 0; k < s->field_count; k++) {
        if (s->size[k] && (size_t)capacity > SIZE_MAX / 2 / s->size[k]) return ECS_ERR_NO_MEMORY;
        offset[k] = total;
        total += ecs_soa_round16(s->size[k] * capacity);
    }
    char *buf = (char *)s->host->alloc(s->host, total ? total : 16);
    if (!buf) return ECS_ERR_NO_MEMORY;
    for (uint32_t k = 0; k < s->field_count; k++) {
        size_t bytes = s->size[k] * capacity;
        if (s->size[k] >= ECS_SOA_HUGE_ELEMENT && bytes >= ECS_SOA_HUGE_BYTES)
            ecs_soa_advise_huge(buf + offset[k], bytes);
        if (s->count) memcpy(buf + offset[k], s->field[k], s->size[k] * s->count);
        s->field[k] = buf + offset[k];
    }
    if (s->buffer) s->host->free(s->host, s->buffer);
    s->buffer = buf;
    s->capacity = capacity;
    return ECS_OK;
}

/* Give back the memory pages of the room after each array (between its last instance and
 * the next array). ecs_soa_reserve leaves the room untouched, so what such pages hold are
 * the bytes of instances removed since (the arrays shrank): resident until the arrays
 * grow over them again. Each page given back costs a page fault (zero-filled) when an
 * array grows into it: worth it after many removals, not after a few. */
static inline void ecs_soa_give_back_room(ecs_soa *s)
{
    for (uint32_t k = 0; s->buffer && k < s->field_count; k++) {
        size_t used = s->size[k] * s->count, room = ecs_soa_round16(s->size[k] * s->capacity);
        ecs_soa_discard((char *)s->field[k] + used, room - used);
    }
}

/* Room for `more` instances beyond those held (for a manager's reserve callback): the
 * arrays grow once, to the size a scene load will fill. */
static inline ecs_status ecs_soa_reserve_more(ecs_soa *s, uint32_t more)
{
    if (more > UINT32_MAX - s->count) return ECS_ERR_INVALID_ARGUMENT;
    return ecs_soa_reserve(s, s->count + more);
}

/* The capacity a full store of `capacity` instances grows to: four times as many (64 at
 * least, UINT32_MAX at most). The room is address space, not memory: ecs_soa_reserve
 * leaves it untouched, so no page of it is resident until an array grows into it. Every
 * growth copies each array once and faults the pages of the copy; growing fourfold
 * instead of twofold copies and faults a third as much (W6, a million transforms added
 * one by one: 86-90 -> 66-70 ns per entity, bench/README.md). */
static inline uint32_t ecs_soa_next_capacity(uint32_t capacity)
{
    if (capacity < 16) return 64;
    return capacity > UINT32_MAX / 4 ? UINT32_MAX : capacity * 4;
}

/* Room for one more instance: a full store grows to ecs_soa_next_capacity.
 * ECS_ERR_NO_MEMORY leaves the store as it was. */
static inline ecs_status ecs_soa_room_for_one(ecs_soa *s)
{
    if (s->count < s->capacity) return ECS_OK;
    if (s->capacity == UINT32_MAX) return ECS_ERR_NO_MEMORY;
    return ecs_soa_reserve(s, ecs_soa_next_capacity(s->capacity));
}

/* Append one zeroed instance; returns its number, or ECS_SOA_NONE when memory ran out. */
static inline uint32_t ecs_soa_push(ecs_soa *s)
{
    if (ecs_soa_room_for_one(s) != ECS_OK) return ECS_SOA_NONE;
    uint32_t i = s->count++;
    for (uint32_t k = 0; k < s->field_count; k++)
        memset((char *)s->field[k] + s->size[k] * i, 0, s->size[k]);
    return i;
}

/* Element i of field k. */
static inline void *ecs_soa_at(const ecs_soa *s, uint32_t k, uint32_t i)
{
    return (char *)s->field[k] + s->size[k] * i;
}

/* Exchange instances a and b in every field. */
static inline void ecs_soa_swap(ecs_soa *s, uint32_t a, uint32_t b)
{
    unsigned char tmp[256];
    for (uint32_t k = 0; k < s->field_count; k++) {
        char *pa = (char *)ecs_soa_at(s, k, a), *pb = (char *)ecs_soa_at(s, k, b);
        for (size_t off = 0; off < s->size[k]; off += sizeof tmp) {
            size_t n = s->size[k] - off < sizeof tmp ? s->size[k] - off : sizeof tmp;
            memcpy(tmp, pa + off, n);
            memcpy(pa + off, pb + off, n);
            memcpy(pb + off, tmp, n);
        }
    }
}

/* Remove instance i by moving the last instance into its place. Returns the number of
 * the instance that moved to i (the old last one), or ECS_SOA_NONE when i was the last
 * (nothing moved). */
static inline uint32_t ecs_soa_remove(ecs_soa *s, uint32_t i)
{
    uint32_t last = --s->count;
    if (i == last) return ECS_SOA_NONE;
    for (uint32_t k = 0; k < s->field_count; k++)
        memcpy(ecs_soa_at(s, k, i), ecs_soa_at(s, k, last), s->size[k]);
    return last;
}

/* ---- entity -> instance map ---- */

typedef struct ecs_entity_map {
    const ecs_host *host;
    uint32_t *slot; /* instance + 1, 0 = none */
    uint32_t capacity;
} ecs_entity_map;

static inline void ecs_entity_map_init(ecs_entity_map *m, const ecs_host *h)
{
    m->host = h;
    m->slot = NULL;
    m->capacity = 0;
}

static inline void ecs_entity_map_free(ecs_entity_map *m)
{
    if (m->slot) m->host->free(m->host, m->slot);
    m->slot = NULL;
    m->capacity = 0;
}

/* The instance stored for e's index, or ECS_SOA_NONE. (No generation check.) */
static inline uint32_t ecs_entity_map_get(const ecs_entity_map *m, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    return idx < m->capacity ? m->slot[idx] - 1u : ECS_SOA_NONE;
}

/* Store instance for e's index (ECS_SOA_NONE clears it). ECS_ERR_NO_MEMORY on failure. */
static inline ecs_status ecs_entity_map_set(ecs_entity_map *m, ecs_entity e, uint32_t instance)
{
    uint32_t idx = ecs_entity_index(e);
    if (idx >= m->capacity) {
        if (instance == ECS_SOA_NONE) return ECS_OK;
        uint32_t cap = m->capacity < 1024 ? 1024 : m->capacity;
        while (cap <= idx) cap *= 2;
        uint32_t *slot = (uint32_t *)m->host->realloc(m->host, m->slot, cap * sizeof *slot);
        if (!slot) return ECS_ERR_NO_MEMORY;
        memset(slot + m->capacity, 0, (cap - m->capacity) * sizeof *slot);
        m->slot = slot;
        m->capacity = cap;
    }
    m->slot[idx] = instance + 1u; /* ECS_SOA_NONE + 1 wraps to 0: none */
    return ECS_OK;
}

/* The instance of e in a store whose field `entity_field` holds each instance's entity
 * (generation checked), or ECS_SOA_NONE. */
static inline uint32_t ecs_soa_lookup(const ecs_soa *s, uint32_t entity_field,
                                      const ecs_entity_map *m, ecs_entity e)
{
    uint32_t i = ecs_entity_map_get(m, e);
    if (i >= s->count) return ECS_SOA_NONE;
    const ecs_entity *ents = (const ecs_entity *)s->field[entity_field];
    return ents[i].id == e.id ? i : ECS_SOA_NONE;
}

/* ---- snapshots (ecs_manager_desc.snapshot_*) ----
 *
 * A store as bytes: a header of 32-bit words (count, field_count, then each field's
 * element size), then each field's `count` elements as they lie in memory. What a
 * manager's snapshot_write gives for its arrays, and snapshot_read takes back. */

/* Bytes of s as a snapshot. */
static inline size_t ecs_soa_snapshot_size(const ecs_soa *s)
{
    size_t n = (2u + s->field_count) * sizeof(uint32_t);
    for (uint32_t k = 0; k < s->field_count; k++) n += s->size[k] * s->count;
    return n;
}

/* Write s into out[0..size). Returns the bytes written (ecs_soa_snapshot_size), or 0 when
 * size is too small (nothing written then). */
static inline size_t ecs_soa_snapshot_write(const ecs_soa *s, void *out, size_t size)
{
    size_t need = ecs_soa_snapshot_size(s);
    if (size < need) return 0;
    uint32_t head[2 + ECS_SOA_MAX_FIELDS];
    head[0] = s->count, head[1] = s->field_count;
    for (uint32_t k = 0; k < s->field_count; k++) head[2 + k] = (uint32_t)s->size[k];
    char *p = (char *)out;
    memcpy(p, head, (2u + s->field_count) * sizeof(uint32_t));
    p += (2u + s->field_count) * sizeof(uint32_t);
    for (uint32_t k = 0; k < s->field_count; k++) {
        if (s->count) memcpy(p, s->field[k], s->size[k] * s->count);
        p += s->size[k] * s->count;
    }
    return need;
}

/* Replace the instances of s by those of the snapshot in[0..size) (written by
 * ecs_soa_snapshot_write of a store with the same fields). Returns the bytes read, or 0
 * when they do not fit s (other fields or sizes, too short: s unchanged) or memory ran out
 * (s unchanged). */
static inline size_t ecs_soa_snapshot_read(ecs_soa *s, const void *in, size_t size)
{
    uint32_t head[2 + ECS_SOA_MAX_FIELDS];
    const char *p = (const char *)in;
    if (size < 2 * sizeof(uint32_t)) return 0;
    memcpy(head, p, 2 * sizeof(uint32_t));
    if (head[1] != s->field_count || size < (2u + head[1]) * sizeof(uint32_t)) return 0;
    memcpy(head, p, (2u + head[1]) * sizeof(uint32_t));
    size_t need = (2u + head[1]) * sizeof(uint32_t);
    for (uint32_t k = 0; k < s->field_count; k++) {
        if (head[2 + k] != s->size[k]) return 0;
        if (s->size[k] && head[0] > (SIZE_MAX - need) / s->size[k]) return 0;
        need += s->size[k] * head[0];
    }
    if (size < need || ecs_soa_reserve(s, head[0]) != ECS_OK) return 0;
    p += (2u + head[1]) * sizeof(uint32_t);
    for (uint32_t k = 0; k < s->field_count; k++) {
        if (head[0]) memcpy(s->field[k], p, s->size[k] * head[0]);
        p += s->size[k] * head[0];
    }
    s->count = head[0];
    return need;
}

/* Make m map every instance of s (whose field `entity_field` holds its entity) and nothing
 * else: after ecs_soa_snapshot_read. ECS_ERR_NO_MEMORY when the map could not grow (it
 * then maps only some instances: the manager should empty itself). */
static inline ecs_status ecs_entity_map_rebuild(ecs_entity_map *m, const ecs_soa *s,
                                                uint32_t entity_field)
{
    if (m->slot) memset(m->slot, 0, m->capacity * sizeof *m->slot);
    const ecs_entity *ents = (const ecs_entity *)s->field[entity_field];
    for (uint32_t i = 0; i < s->count; i++)
        if (ecs_entity_map_set(m, ents[i], i) != ECS_OK) return ECS_ERR_NO_MEMORY;
    return ECS_OK;
}

/* Where field k's elements start in a snapshot of s written at out (by
 * ecs_soa_snapshot_write): a manager clears the fields that hold pointers there, so that the
 * same world always gives the same bytes. */
static inline void *ecs_soa_snapshot_field(const ecs_soa *s, void *out, uint32_t k)
{
    char *p = (char *)out + (2u + s->field_count) * sizeof(uint32_t);
    for (uint32_t j = 0; j < k && j < s->field_count; j++) p += s->size[j] * s->count;
    return p;
}

/* A manager's snapshot_write for a store s: ECS_OK, or ECS_ERR_INVALID_ARGUMENT when
 * out[0..size) cannot hold it. */
static inline ecs_status ecs_soa_snapshot_put(const ecs_soa *s, void *out, size_t size)
{
    return ecs_soa_snapshot_write(s, out, size) ? ECS_OK : ECS_ERR_INVALID_ARGUMENT;
}

/* A manager's snapshot_read for a store s with its entity map m (entity in field
 * entity_field): the instances of in[0..size), the map rebuilt. ECS_ERR_BAD_VALUE when the
 * bytes do not fit s or memory ran out: s and m then hold no instance. */
static inline ecs_status ecs_soa_snapshot_take(ecs_soa *s, ecs_entity_map *m, uint32_t entity_field,
                                               const void *in, size_t size)
{
    if (ecs_soa_snapshot_read(s, in, size) == size &&
        ecs_entity_map_rebuild(m, s, entity_field) == ECS_OK)
        return ECS_OK;
    s->count = 0;
    (void)ecs_entity_map_rebuild(m, s, entity_field); /* no instance: no slot set */
    return ECS_ERR_BAD_VALUE;
}

#ifdef __cplusplus
}
#endif

#endif /* ECS_SOA_H */
