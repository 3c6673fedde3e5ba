/* SPDX-License-Identifier: MIT */
/* test_mem.c: cmocka tests of per-plugin allocation counting (host/world/mem.c): counts, realloc
 * ownership, refusal of foreign and freed pointers, release_all, alignment, a random model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem.h"

/* Every test leaves no block behind and the live table freed, whatever it did. */
static int teardown(void **state)
{
    (void)state;
    host_mem_shutdown();
    return 0;
}

static void expect_counts(const host_mem_account *a, size_t bytes, size_t blocks)
{
    if (a->bytes != bytes || a->blocks != blocks)
        fail_msg("account holds %zu bytes in %zu blocks, expected %zu in %zu", a->bytes, a->blocks,
                 bytes, blocks);
    assert_true(a->peak_bytes >= a->bytes);
    assert_true((a->list == NULL) == (blocks == 0));
}

/* ---- Counting --------------------------------------------------------------------- */

static void Mem_alloc_counts_bytes_blocks_and_peak(void **state)
{
    (void)state;
    host_mem_account a = {0};
    void *p = host_mem_alloc(&a, 100), *q = host_mem_alloc(&a, 28);
    assert_non_null(p);
    assert_non_null(q);
    assert_ptr_not_equal(p, q);
    memset(p, 0x11, 100); /* the whole size is usable (ASan checks the bounds) */
    memset(q, 0x22, 28);
    expect_counts(&a, 128, 2);
    assert_int_equal(a.peak_bytes, 128);
    assert_int_equal(a.total_allocs, 2);
    assert_int_equal(host_mem_free(p), 0);
    expect_counts(&a, 28, 1);
    assert_int_equal(a.peak_bytes, 128); /* the high-water mark stays */
    void *r = host_mem_alloc(&a, 50);
    expect_counts(&a, 78, 2);
    assert_int_equal(a.peak_bytes, 128);
    void *s = host_mem_alloc(&a, 60);
    expect_counts(&a, 138, 3);
    assert_int_equal(a.peak_bytes, 138);
    assert_int_equal(a.total_allocs, 4);
    assert_int_equal(host_mem_free(q), 0);
    assert_int_equal(host_mem_free(r), 0);
    assert_int_equal(host_mem_free(s), 0);
    expect_counts(&a, 0, 0);
}

static void Mem_alloc_of_zero_or_huge_size_returns_null_and_counts_nothing(void **state)
{
    (void)state;
    host_mem_account a = {0};
    assert_null(host_mem_alloc(&a, 0));
    assert_null(host_mem_alloc(&a, SIZE_MAX));
    assert_null(host_mem_alloc(&a, SIZE_MAX - 8));
    expect_counts(&a, 0, 0);
    assert_int_equal(a.total_allocs, 0);
    assert_int_equal(a.peak_bytes, 0);
}

static void Mem_two_accounts_are_independent(void **state)
{
    (void)state;
    host_mem_account a = {0}, b = {0};
    void *pa = host_mem_alloc(&a, 1000);
    void *pb1 = host_mem_alloc(&b, 10), *pb2 = host_mem_alloc(&b, 20);
    expect_counts(&a, 1000, 1);
    expect_counts(&b, 30, 2);
    assert_int_equal(host_mem_free(pb1), 0);
    expect_counts(&a, 1000, 1);
    expect_counts(&b, 20, 1);
    assert_int_equal(a.peak_bytes, 1000);
    assert_int_equal(b.peak_bytes, 30);
    assert_int_equal(host_mem_free(pa), 0);
    assert_int_equal(host_mem_free(pb2), 0);
    expect_counts(&a, 0, 0);
    expect_counts(&b, 0, 0);
}

/* ---- Realloc ---------------------------------------------------------------------- */

static void Mem_realloc_keeps_block_on_owner_account_and_counts_new_size(void **state)
{
    (void)state;
    host_mem_account owner = {0}, caller = {0};
    unsigned char *p = host_mem_alloc(&owner, 64);
    for (int i = 0; i < 64; i++) p[i] = (unsigned char)i;
    int bad = 7;
    unsigned char *q = host_mem_realloc(&caller, p, 5000, &bad); /* grows: likely moves */
    assert_non_null(q);
    assert_int_equal(bad, 0);
    for (int i = 0; i < 64; i++) assert_int_equal(q[i], i); /* contents kept */
    memset(q, 0, 5000);
    expect_counts(&owner, 5000, 1);
    expect_counts(&caller, 0, 0);
    assert_int_equal(owner.peak_bytes, 5000);
    assert_int_equal(owner.total_allocs, 1);
    if (q != p) assert_int_equal(host_mem_free(p), -1); /* the old address is no longer live */
    q = host_mem_realloc(&caller, q, 16, &bad);         /* shrinks */
    assert_non_null(q);
    expect_counts(&owner, 16, 1);
    assert_int_equal(owner.peak_bytes, 5000);
    assert_int_equal(host_mem_free(q), 0);
    expect_counts(&owner, 0, 0);
}

static void Mem_realloc_of_null_is_alloc_on_given_account(void **state)
{
    (void)state;
    host_mem_account a = {0};
    int bad = 7;
    void *p = host_mem_realloc(&a, NULL, 40, &bad);
    assert_non_null(p);
    assert_int_equal(bad, 0);
    expect_counts(&a, 40, 1);
    assert_int_equal(a.total_allocs, 1);
    assert_null(host_mem_realloc(&a, NULL, 0, &bad)); /* like alloc(0) */
    assert_int_equal(bad, 0);
    expect_counts(&a, 40, 1);
    assert_int_equal(host_mem_free(p), 0);
}

static void Mem_realloc_to_zero_frees(void **state)
{
    (void)state;
    host_mem_account a = {0};
    void *p = host_mem_alloc(&a, 40), *keep = host_mem_alloc(&a, 8);
    int bad = 7;
    assert_null(host_mem_realloc(&a, p, 0, &bad));
    assert_int_equal(bad, 0);
    expect_counts(&a, 8, 1);
    assert_int_equal(host_mem_free(p), -1); /* already freed by the realloc */
    assert_int_equal(host_mem_free(keep), 0);
}

static void Mem_realloc_of_huge_size_fails_and_keeps_block(void **state)
{
    (void)state;
    host_mem_account a = {0};
    unsigned char *p = host_mem_alloc(&a, 32);
    memset(p, 0x5A, 32);
    int bad = 7;
    assert_null(host_mem_realloc(&a, p, SIZE_MAX - 4, &bad));
    assert_int_equal(bad, 0); /* a live block, just too big a size */
    expect_counts(&a, 32, 1);
#ifndef __SANITIZE_ADDRESS__ /* ASan aborts on such a request instead of returning NULL */
    assert_null(host_mem_realloc(&a, p, SIZE_MAX / 2, &bad));
    assert_int_equal(bad, 0);
    expect_counts(&a, 32, 1);
    assert_int_equal(a.peak_bytes, 32);
#endif
    for (int i = 0; i < 32; i++) assert_int_equal(p[i], 0x5A);
    assert_int_equal(host_mem_free(p), 0); /* still live */
    expect_counts(&a, 0, 0);
}

/* ---- Refusals --------------------------------------------------------------------- */

static void Mem_free_of_null_is_ok(void **state)
{
    (void)state;
    assert_int_equal(host_mem_free(NULL), 0);
    host_mem_account a = {0};
    void *p = host_mem_alloc(&a, 8); /* with a live table too */
    assert_int_equal(host_mem_free(NULL), 0);
    expect_counts(&a, 8, 1);
    assert_int_equal(host_mem_free(p), 0);
}

static void Mem_free_of_foreign_pointers_refused_and_changes_nothing(void **state)
{
    (void)state;
    host_mem_account a = {0};
    assert_int_equal(host_mem_free(&a), -1); /* before any allocation: empty table */
    unsigned char *p = host_mem_alloc(&a, 64);
    memset(p, 0x3C, 64);
    int on_stack = 0;
    void *from_malloc = malloc(64);
    assert_non_null(from_malloc);
    void *foreign[] = {&on_stack, from_malloc, p + 1, p + 16, p + 63, p + 64, p - 16, &a};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        if (host_mem_free(foreign[i]) != -1) fail_msg("pointer %zu was not refused", i);
        int bad = 0;
        assert_null(host_mem_realloc(&a, foreign[i], 128, &bad));
        assert_int_equal(bad, 1);
        bad = 0;
        assert_null(host_mem_realloc(&a, foreign[i], 0, &bad));
        assert_int_equal(bad, 1);
        assert_null(host_mem_realloc(&a, foreign[i], 128, NULL)); /* bad may be NULL */
        expect_counts(&a, 64, 1);
    }
    for (int i = 0; i < 64; i++) assert_int_equal(p[i], 0x3C);
    free(from_malloc); /* still a valid malloc block */
    assert_int_equal(host_mem_free(p), 0);
    expect_counts(&a, 0, 0);
}

static void Mem_double_free_refused(void **state)
{
    (void)state;
    host_mem_account a = {0};
    void *p = host_mem_alloc(&a, 24), *other = host_mem_alloc(&a, 24);
    assert_int_equal(host_mem_free(p), 0);
    assert_int_equal(host_mem_free(p), -1);
    int bad = 0;
    assert_null(host_mem_realloc(&a, p, 48, &bad)); /* use after free refused too */
    assert_int_equal(bad, 1);
    expect_counts(&a, 24, 1);
    assert_int_equal(host_mem_free(other), 0);
    assert_int_equal(host_mem_free(other), -1);
    expect_counts(&a, 0, 0);
}

/* ---- Release and alignment -------------------------------------------------------- */

static void Mem_release_all_frees_everything_and_returns_bytes(void **state)
{
    (void)state;
    host_mem_account a = {0}, b = {0};
    void *pa[100];
    size_t total = 0;
    for (size_t i = 0; i < 100; i++) {
        pa[i] = host_mem_alloc(&a, i + 1);
        total += i + 1;
    }
    void *pb = host_mem_alloc(&b, 77);
    assert_int_equal(host_mem_release_all(&a), total);
    expect_counts(&a, 0, 0);
    assert_null(a.list);
    assert_int_equal(a.peak_bytes, total);
    for (size_t i = 0; i < 100; i++) assert_int_equal(host_mem_free(pa[i]), -1); /* gone */
    expect_counts(&b, 77, 1);                      /* the other account is untouched */
    assert_int_equal(host_mem_release_all(&a), 0); /* nothing left */
    assert_int_equal(host_mem_release_all(&b), 77);
    assert_int_equal(host_mem_free(pb), -1);
}

static void Mem_pointers_are_16_byte_aligned(void **state)
{
    (void)state;
    host_mem_account a = {0};
    for (size_t size = 1; size <= 300; size++) {
        void *p = host_mem_alloc(&a, size);
        if ((uintptr_t)p % 16 != 0) fail_msg("alloc(%zu) = %p is not 16-byte aligned", size, p);
        p = host_mem_realloc(&a, p, size * 3 + 1, NULL);
        if ((uintptr_t)p % 16 != 0) fail_msg("realloc to %zu = %p not aligned", size * 3 + 1, p);
    }
    expect_counts(&a, 300 * 301 / 2 * 3 + 300, 300);
    host_mem_release_all(&a);
}

static void Mem_alloc_after_shutdown_works(void **state)
{
    (void)state;
    host_mem_account a = {0};
    void *p = host_mem_alloc(&a, 10);
    host_mem_release_all(&a);
    host_mem_shutdown();
    host_mem_shutdown(); /* twice is harmless */
    assert_int_equal(host_mem_free(p), -1);
    p = host_mem_alloc(&a, 10);
    assert_non_null(p);
    expect_counts(&a, 10, 1);
    assert_int_equal(host_mem_free(p), 0);
}

/* ---- Randomized model ------------------------------------------------------------- */

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

typedef struct model_block {
    unsigned char *p;
    size_t size;
    int acct;
    unsigned char fill;
} model_block;

#define ACCOUNTS 3
#define SLOTS    3000 /* up to this many live blocks: the live table grows several times */

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) fail_msg("seed %#llx op %d: %s", (unsigned long long)seed0, op, #cond);       \
    } while (0)

static size_t random_size(uint64_t *s)
{
    switch (rng_below(s, 8)) {
    case 0:
        return 1 + rng_below(s, 16);
    case 1:
        return 4096 + rng_below(s, 70000);
    default:
        return 1 + rng_below(s, 512);
    }
}

static void check_block(const model_block *m, uint64_t seed0, int op)
{
    CHECK((uintptr_t)m->p % 16 == 0);
    CHECK(m->p[0] == m->fill && m->p[m->size - 1] == m->fill && m->p[m->size / 2] == m->fill);
}

static void Mem_random_operations_agree_with_model(void **state)
{
    (void)state;
    const uint64_t seed0 = 0x3E30C0DE;
    uint64_t s = seed0;
    host_mem_account acct[ACCOUNTS] = {{0}};
    size_t bytes[ACCOUNTS] = {0}, blocks[ACCOUNTS] = {0}, peak[ACCOUNTS] = {0};
    static model_block slot[SLOTS];
    static void *freed[SLOTS]; /* addresses freed (the allocator may reuse them) */
    memset(slot, 0, sizeof slot);
    size_t nfreed = 0;
    int op = 0;
    for (op = 0; op < 200000; op++) {
        /* Fill up for the first half, then drain: the live table grows, then empties. */
        uint32_t grow_bias = op < 100000 ? 6 : 2;
        size_t i = rng_below(&s, SLOTS);
        model_block *m = &slot[i];
        uint32_t what = rng_below(&s, 10);
        int via = (int)rng_below(&s, ACCOUNTS);
        if (!m->p && what < grow_bias) { /* alloc */
            m->size = random_size(&s);
            m->acct = via;
            m->fill = (unsigned char)(1 + rng_below(&s, 255));
            m->p = host_mem_alloc(&acct[via], m->size);
            CHECK(m->p != NULL);
            memset(m->p, m->fill, m->size);
            bytes[via] += m->size;
            blocks[via]++;
        } else if (m->p && what < 5) { /* realloc through any account, keeps its owner */
            check_block(m, seed0, op);
            size_t size = rng_below(&s, 20) == 0 ? 0 : random_size(&s);
            int bad = 7;
            unsigned char *q = host_mem_realloc(&acct[via], m->p, size, &bad);
            CHECK(bad == 0);
            bytes[m->acct] -= m->size;
            if (size == 0) {
                CHECK(q == NULL);
                blocks[m->acct]--;
                freed[nfreed++ % SLOTS] = m->p;
                m->p = NULL;
            } else {
                CHECK(q != NULL);
                size_t keep = size < m->size ? size : m->size;
                CHECK(q[0] == m->fill && q[keep - 1] == m->fill);
                m->p = q;
                m->size = size;
                memset(m->p, m->fill, m->size);
                bytes[m->acct] += size;
            }
        } else if (m->p) { /* free */
            check_block(m, seed0, op);
            CHECK(host_mem_free(m->p) == 0);
            bytes[m->acct] -= m->size;
            blocks[m->acct]--;
            freed[nfreed++ % SLOTS] = m->p;
            m->p = NULL;
        } else if (nfreed) { /* free a pointer freed earlier, unless its address is live again */
            void *p = freed[rng_below(&s, (uint32_t)(nfreed < SLOTS ? nfreed : SLOTS))];
            bool live = false;
            for (size_t k = 0; k < SLOTS && !live; k++) live = slot[k].p == p;
            if (!live) CHECK(host_mem_free(p) == -1);
        }
        for (int a = 0; a < ACCOUNTS; a++) {
            if (bytes[a] > peak[a]) peak[a] = bytes[a];
            CHECK(acct[a].bytes == bytes[a]);
            CHECK(acct[a].blocks == blocks[a]);
            CHECK(acct[a].peak_bytes == peak[a]);
        }
    }
    for (size_t i = 0; i < SLOTS; i++)
        if (slot[i].p) check_block(&slot[i], seed0, op);
    for (int a = 0; a < ACCOUNTS; a++) {
        CHECK(host_mem_release_all(&acct[a]) == bytes[a]);
        CHECK(acct[a].bytes == 0 && acct[a].blocks == 0 && acct[a].list == NULL);
    }
    for (size_t i = 0; i < SLOTS; i++)
        if (slot[i].p) CHECK(host_mem_free(slot[i].p) == -1);
    host_mem_shutdown();
}

/* Reserved address space: zero on first touch, writable to its last byte; a huge block
 * starts on a 2 MiB boundary. Each size is odd on purpose (not a page multiple). */
static void Mem_reserve_gives_zeroed_blocks_and_huge_ones_start_on_2_MiB(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 4097, ((size_t)8 << 20) + 64};
    for (int huge = 0; huge < 2; huge++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            unsigned char *p = host_mem_reserve(sizes[k], huge);
            assert_non_null(p);
            if (huge) assert_int_equal((uintptr_t)p % ((uintptr_t)2 << 20), 0);
            for (size_t i = 0; i < sizes[k]; i += 4096) assert_int_equal(p[i], 0);
            assert_int_equal(p[sizes[k] - 1], 0);
            p[0] = 1;
            p[sizes[k] - 1] = 2;
            host_mem_unreserve(p, sizes[k]);
        }
    host_mem_unreserve(NULL, 4096); /* nothing */
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GLIBC_HEAP 1 /* malloc is glibc's, not a sanitizer's */
/* Resident memory of this process in KiB (/proc/self/statm), or -1. */
static long resident_kib(void)
{
    long size, resident;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    int got = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    return got == 2 ? resident * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

/* host_mem_policy (set at the start of ecs-host): 96 MiB freed at the top of the heap stay
 * with the process for the next allocations (glibc's own rule gives back anything over at
 * most 64 MiB at once), and taking them again does not grow it. Not built under a
 * sanitizer, whose allocator is not glibc's. */
static void Mem_policy_keeps_freed_heap_memory_for_reuse(void **state)
{
    (void)state;
    enum { BLOCKS = 12288, SIZE = 8192 }; /* 96 MiB in blocks below the mmap threshold */
    static char *block[BLOCKS];
    host_mem_policy();
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < BLOCKS; i++) {
            block[i] = malloc(SIZE);
            assert_non_null(block[i]);
            memset(block[i], round + 1, SIZE);
        }
        long full = resident_kib();
        for (int i = BLOCKS - 1; i >= 0; i--) free(block[i]);
        long freed = resident_kib();
        assert_true(full > 0 && freed > 0);
        if (freed < full - 16 * 1024)
            fail_msg("round %d: %ld KiB resident with the blocks, %ld KiB after freeing them: "
                     "given back",
                     round, full, freed);
    }
}
#endif

#define TEST(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(Mem_alloc_counts_bytes_blocks_and_peak),
        TEST(Mem_alloc_of_zero_or_huge_size_returns_null_and_counts_nothing),
        TEST(Mem_two_accounts_are_independent),
        TEST(Mem_realloc_keeps_block_on_owner_account_and_counts_new_size),
        TEST(Mem_realloc_of_null_is_alloc_on_given_account),
        TEST(Mem_realloc_to_zero_frees),
        TEST(Mem_realloc_of_huge_size_fails_and_keeps_block),
        TEST(Mem_free_of_null_is_ok),
        TEST(Mem_free_of_foreign_pointers_refused_and_changes_nothing),
        TEST(Mem_double_free_refused),
        TEST(Mem_release_all_frees_everything_and_returns_bytes),
        TEST(Mem_pointers_are_16_byte_aligned),
        TEST(Mem_alloc_after_shutdown_works),
        TEST(Mem_random_operations_agree_with_model),
        TEST(Mem_reserve_gives_zeroed_blocks_and_huge_ones_start_on_2_MiB),
#ifdef GLIBC_HEAP
        TEST(Mem_policy_keeps_freed_heap_memory_for_reuse),
#endif
    };
    return cmocka_run_group_tests_name("mem", tests, NULL, NULL);
}
