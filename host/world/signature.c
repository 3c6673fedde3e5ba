/* signature.c: per-entity bitsets of manager names, planes of 64 bits (signature.h).
 *
 * The per-index arrays (owner, flag, each plane) are reserved whole at first use with
 * mmap(MAP_NORESERVE): the OS commits their pages as they are touched and gives them
 * zeroed, so adding entities never copies or clears anything. More names add a plane.
 * Every function that allocates finds all its memory before it changes anything.
 */
#include "signature.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define INDEX_COUNT  (1u << ECS_ENTITY_INDEX_BITS)
#define COLUMN_BYTES (INDEX_COUNT / 8)

static inline void column_set(host_signatures *s, uint32_t b, uint32_t i)
{
    s->columns[b][i >> 6] |= 1ull << (i & 63);
}

static inline void column_clear(host_signatures *s, uint32_t b, uint32_t i)
{
    s->columns[b][i >> 6] &= ~(1ull << (i & 63));
}

/* Clear every bit of index i, in the planes and the columns. */
static void clear_index(host_signatures *s, uint32_t i)
{
    for (uint32_t k = 0; k < s->plane_count; k++) {
        for (uint64_t word = s->planes[k][i]; word; word &= word - 1)
            column_clear(s, k * 64 + (uint32_t)__builtin_ctzll(word), i);
        s->planes[k][i] = 0;
    }
}

/* size bytes of address space, zero-filled on first touch; NULL when it cannot be had.
 * Huge pages are asked for (a hint): a million entities getting their first component
 * touch 12 MB, and 4 KB pages make that 3,000 page faults (about 10 ns per entity). */
static void *reserve(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

static void release(void *p, size_t size)
{
    if (p) munmap(p, size);
}

/* Reserve owner and flag for every index (once). -1 when the address space ran out. */
static int reserve_indices(host_signatures *s)
{
    if (s->capacity) return 0;
    ecs_entity *owner = reserve((size_t)INDEX_COUNT * sizeof *owner);
    uint8_t *flag = reserve(INDEX_COUNT);
    if (!owner || !flag) {
        release(owner, (size_t)INDEX_COUNT * sizeof *owner);
        release(flag, INDEX_COUNT);
        return -1;
    }
    s->owner = owner;
    s->flag = flag;
    s->capacity = INDEX_COUNT;
    return 0;
}

const char *host_sig_name(const host_signatures *s, uint32_t bit)
{
    return bit < s->name_count ? s->names[bit] : NULL;
}

/* A new zeroed plane appended (the indices reserved first); -1 when memory ran out. */
static int add_plane(host_signatures *s)
{
    if (reserve_indices(s) != 0) return -1;
    if (s->plane_count == s->plane_cap) {
        uint32_t cap = s->plane_cap ? s->plane_cap * 2 : 4;
        uint64_t **v = realloc(s->planes, cap * sizeof *v);
        if (!v) return -1;
        s->planes = v;
        s->plane_cap = cap;
    }
    uint64_t *plane = reserve((size_t)INDEX_COUNT * sizeof *plane);
    if (!plane) return -1;
    s->planes[s->plane_count++] = plane;
    return 0;
}

ecs_status host_sig_bit(host_signatures *s, const char *name, bool create, uint32_t *bit)
{
    for (uint32_t b = 0; b < s->name_count; b++) /* rare: registration, queries */
        if (strcmp(s->names[b], name) == 0) return *bit = b, ECS_OK;
    if (!create) return ECS_ERR_NOT_FOUND;
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
    if (!column || (s->name_count / 64 >= s->plane_count && add_plane(s) != 0)) {
        free(copy); /* the 64k+1-th name needs a plane too */
        release(column, COLUMN_BYTES);
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
    uint32_t i = ecs_entity_index(e), k = bit / 64;
    if (k >= s->plane_count) return ECS_ERR_NO_MEMORY; /* a bit without its plane */
    uint64_t mask = 1ull << (bit % 64), *word = &s->planes[k][i];
    if (i >= s->used) s->used = i + 1;
    if (s->owner[i].id != e.id) { /* a new owner: the old one's bits died with it */
        clear_index(s, i);
        s->owner[i] = e;
    } else if (*word & mask) {
        return ECS_OK; /* no change */
    }
    *word |= mask;
    column_set(s, bit, i);
    host_sig_touch(s, i);
    return ECS_OK;
}

void host_sig_remove(host_signatures *s, uint32_t bit, ecs_entity e)
{
    uint32_t i = ecs_entity_index(e), k = bit / 64;
    if (i >= s->capacity || k >= s->plane_count || s->owner[i].id != e.id) return;
    uint64_t mask = 1ull << (bit % 64);
    if (!(s->planes[k][i] & mask)) return;
    s->planes[k][i] &= ~mask;
    column_clear(s, bit, i);
    host_sig_touch(s, i);
}

void host_sig_forget(host_signatures *s, const ecs_entity *list, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++) {
        uint32_t i = ecs_entity_index(list[j]);
        if (i >= s->capacity || s->owner[i].id != list[j].id) continue;
        clear_index(s, i);
        s->owner[i] = ecs_entity_null();
        host_sig_touch(s, i);
    }
}

void host_sig_clear_bit(host_signatures *s, uint32_t bit)
{
    uint32_t k = bit / 64;
    if (k >= s->plane_count) return;
    uint64_t mask = 1ull << (bit % 64), *plane = s->planes[k];
    for (uint32_t i = 0; i < s->used; i++) {
        if (!(plane[i] & mask)) continue;
        plane[i] &= ~mask;
        column_clear(s, bit, i);
        host_sig_touch(s, i);
    }
}

void host_sig_free(host_signatures *s)
{
    for (uint32_t b = 0; b < s->name_count; b++) {
        free(s->names[b]);
        release(s->columns[b], COLUMN_BYTES);
    }
    free(s->columns);
    for (uint32_t k = 0; k < s->plane_count; k++)
        release(s->planes[k], (size_t)INDEX_COUNT * sizeof *s->planes[k]);
    free(s->names);
    free(s->planes);
    release(s->owner, (size_t)INDEX_COUNT * sizeof *s->owner);
    release(s->flag, INDEX_COUNT);
    free(s->queue);
    memset(s, 0, sizeof *s);
}
