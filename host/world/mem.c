/* SPDX-License-Identifier: MIT */
/* mem.c: counted, checked allocation for plugins (see mem.h).
 *
 * The live set: open addressing with linear probing over payload pointers, deletion by
 * backward shift (no tombstones), load kept under 1/2. Invariant: a pointer is in the set
 * exactly while its block is allocated.
 */
#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

struct host_mem_block {
    host_mem_account *acct;
    size_t size;
    host_mem_block *prev, *next;
}; /* 32 bytes: keeps the payload 16-byte aligned */

_Static_assert(sizeof(host_mem_block) % 16 == 0, "header must keep 16-byte alignment");

static struct {
    void **slot;
    size_t cap, count; /* cap is 0 or a power of two */
} live;

void host_mem_policy(void)
{
#if defined(__GLIBC__) && defined(M_TRIM_THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, (int)HOST_HEAP_KEEP);
#endif
}

static size_t slot_of(void *p, size_t mask)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & mask;
}

static int live_grow(void)
{
    size_t cap = live.cap ? live.cap * 2 : 1024;
    void **slot = calloc(cap, sizeof *slot);
    if (!slot) return -1;
    for (size_t i = 0; i < live.cap; i++) {
        if (!live.slot[i]) continue;
        size_t j = slot_of(live.slot[i], cap - 1);
        while (slot[j]) j = (j + 1) & (cap - 1);
        slot[j] = live.slot[i];
    }
    free(live.slot);
    live.slot = slot;
    live.cap = cap;
    return 0;
}

static int live_add(void *p)
{
    if ((live.count + 1) * 2 > live.cap && live_grow() != 0) return -1;
    size_t j = slot_of(p, live.cap - 1);
    while (live.slot[j]) j = (j + 1) & (live.cap - 1);
    live.slot[j] = p;
    live.count++;
    return 0;
}

/* The slot holding p, or -1 when p is not live. */
static long live_find(const void *p)
{
    if (!live.cap) return -1;
    size_t mask = live.cap - 1;
    for (size_t i = slot_of((void *)p, mask); live.slot[i]; i = (i + 1) & mask)
        if (live.slot[i] == p) return (long)i;
    return -1;
}

/* Remove the pointer in slot i, shifting later entries of its run back. The table is
 * never shrunk here, so an add right after a remove cannot need memory. */
static void live_remove_at(size_t i)
{
    size_t mask = live.cap - 1;
    for (size_t j = (i + 1) & mask; live.slot[j]; j = (j + 1) & mask) {
        size_t home = slot_of(live.slot[j], mask);
        if (((j - home) & mask) >= ((j - i) & mask)) { /* may slot j move back to i? */
            live.slot[i] = live.slot[j];
            i = j;
        }
    }
    live.slot[i] = NULL;
    live.count--;
}

static void link_block(host_mem_account *a, host_mem_block *b)
{
    b->acct = a;
    b->prev = NULL;
    b->next = a->list;
    if (a->list) a->list->prev = b;
    a->list = b;
    a->bytes += b->size;
    a->blocks++;
    if (a->bytes > a->peak_bytes) a->peak_bytes = a->bytes;
}

static void unlink_block(host_mem_block *b)
{
    host_mem_account *a = b->acct;
    if (b->prev)
        b->prev->next = b->next;
    else
        a->list = b->next;
    if (b->next) b->next->prev = b->prev;
    a->bytes -= b->size;
    a->blocks--;
}

void *host_mem_alloc(host_mem_account *acct, size_t size)
{
    if (size == 0 || size > SIZE_MAX - sizeof(host_mem_block)) return NULL;
    host_mem_block *b = malloc(sizeof *b + size);
    if (!b) return NULL;
    if (live_add(b + 1) != 0) {
        free(b);
        return NULL;
    }
    b->size = size;
    link_block(acct, b);
    acct->total_allocs++;
    return b + 1;
}

void *host_mem_realloc(host_mem_account *acct, void *ptr, size_t size, int *bad)
{
    if (bad) *bad = 0;
    if (!ptr) return host_mem_alloc(acct, size);
    long slot = live_find(ptr);
    if (slot < 0) { /* not ours, or freed already */
        if (bad) *bad = 1;
        return NULL;
    }
    if (size == 0) {
        host_mem_free(ptr);
        return NULL;
    }
    if (size > SIZE_MAX - sizeof(host_mem_block)) return NULL;
    host_mem_block *b = (host_mem_block *)ptr - 1;
    host_mem_account *owner = b->acct;
    unlink_block(b);
    host_mem_block *nb = realloc(b, sizeof *nb + size);
    if (!nb) { /* the old block is intact and still live */
        link_block(owner, b);
        return NULL;
    }
    live_remove_at((size_t)slot);
    live_add(nb + 1); /* cannot fail: one was just removed */
    nb->size = size;
    link_block(owner, nb);
    return nb + 1;
}

int host_mem_free(void *ptr)
{
    if (!ptr) return 0;
    long slot = live_find(ptr);
    if (slot < 0) return -1;
    live_remove_at((size_t)slot);
    host_mem_block *b = (host_mem_block *)ptr - 1;
    unlink_block(b);
    free(b);
    return 0;
}

void host_mem_move_all(host_mem_account *to, host_mem_account *from)
{
    while (from->list) {
        host_mem_block *b = from->list;
        unlink_block(b);
        link_block(to, b);
    }
    to->total_allocs += from->total_allocs;
    from->total_allocs = 0;
}

size_t host_mem_release_all(host_mem_account *acct)
{
    size_t freed = acct->bytes;
    while (acct->list) host_mem_free(acct->list + 1);
    return freed;
}

void host_mem_shutdown(void)
{
    free(live.slot);
    live.slot = NULL;
    live.cap = live.count = 0;
}

void *host_mem_reserve(size_t size, int huge)
{
    const size_t align = huge ? (size_t)2 << 20 : 0;
    char *p = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (!huge) return p;
    char *start = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
    size_t page = (size_t)sysconf(_SC_PAGESIZE), end = ((size + page - 1) / page) * page;
    size_t head = (size_t)(start - p), tail = align - head; /* outside the aligned block */
    if (head) munmap(p, head);
    if (tail) munmap(start + end, tail);
    host_mem_advise_huge(start, end);
    return start;
}

void host_mem_unreserve(void *block, size_t size)
{
    if (block) munmap(block, size);
}

void host_mem_advise_huge(void *block, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t begin = ((uintptr_t)block + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)block + size) & ~(huge - 1);
    if (end > begin) madvise((void *)begin, end - begin, MADV_HUGEPAGE); /* only a hint */
#else
    (void)block, (void)size;
#endif
}
