/* SPDX-License-Identifier: MIT */
/* test_registry.c: cmocka tests of the API registry (host/plugin/registry.c): publish and find by
 * version, ownership, in-place rewrite on reload, capacity, withdraw and reuse of storage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* Two plugins: only their addresses matter to the registry. */
static const int owner_a = 1, owner_b = 2;
#define A ((const void *)&owner_a)
#define B ((const void *)&owner_b)

typedef struct api_v1 {
    int (*add)(int, int);
    uint32_t magic;
} api_v1;

static int add_one(int x, int y)
{
    return x + y + 1;
}

static int add_two(int x, int y)
{
    return x + y + 2;
}

static int setup(void **state)
{
    host_registry *reg = calloc(1, sizeof *reg);
    if (!reg) return -1;
    *state = reg;
    return 0;
}

static int teardown(void **state)
{
    host_registry_free(*state);
    free(*state);
    return 0;
}

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i]) return false;
    return true;
}

/* ---- Publish and find ------------------------------------------------------------- */

static void Registry_find_unknown_name_returns_null(void **state)
{
    host_registry *reg = *state;
    size_t size = 123;
    assert_null(host_registry_find(reg, "nothing", 0, &size));
    assert_int_equal(size, 123); /* untouched */
    api_v1 api = {add_one, 7};
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 1, &api, sizeof api), ECS_OK);
    assert_null(host_registry_find(reg, "ecs.mat", 0, NULL));
    assert_null(host_registry_find(reg, "ecs.math2", 0, NULL));
    assert_null(host_registry_find(reg, "", 0, NULL));
    assert_null(host_registry_entry(reg, "nothing"));
}

static void Registry_publish_copies_bytes_and_find_returns_copy(void **state)
{
    host_registry *reg = *state;
    api_v1 api = {add_one, 0xC0FFEE};
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 3, &api, sizeof api), ECS_OK);
    api.magic = 0; /* the registry must hold its own copy */
    size_t size = 0;
    const api_v1 *found = host_registry_find(reg, "ecs.math", 3, &size);
    assert_non_null(found);
    assert_ptr_not_equal(found, &api);
    assert_int_equal(size, sizeof api);
    assert_int_equal(found->magic, 0xC0FFEE);
    assert_int_equal(found->add(2, 3), 6);
    assert_ptr_equal(host_registry_find(reg, "ecs.math", 0, NULL), found); /* size may be NULL */
    assert_int_equal((uintptr_t)found % _Alignof(max_align_t), 0);
}

static void Registry_find_filters_by_min_version(void **state)
{
    host_registry *reg = *state;
    api_v1 api = {add_one, 1};
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 3, &api, sizeof api), ECS_OK);
    assert_non_null(host_registry_find(reg, "ecs.math", 0, NULL));
    assert_non_null(host_registry_find(reg, "ecs.math", 2, NULL));
    assert_non_null(host_registry_find(reg, "ecs.math", 3, NULL));
    assert_null(host_registry_find(reg, "ecs.math", 4, NULL));
    assert_null(host_registry_find(reg, "ecs.math", UINT32_MAX, NULL));
    /* a republish at a higher version satisfies the higher minimum */
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 4, &api, sizeof api), ECS_OK);
    assert_non_null(host_registry_find(reg, "ecs.math", 4, NULL));
}

static void Registry_several_names_found_independently(void **state)
{
    host_registry *reg = *state;
    uint32_t x = 11, y = 22;
    assert_int_equal(host_registry_publish(reg, A, "x", 1, &x, sizeof x), ECS_OK);
    assert_int_equal(host_registry_publish(reg, B, "y", 5, &y, sizeof y), ECS_OK);
    assert_int_equal(*(const uint32_t *)host_registry_find(reg, "x", 1, NULL), 11);
    assert_int_equal(*(const uint32_t *)host_registry_find(reg, "y", 5, NULL), 22);
    assert_null(host_registry_find(reg, "x", 2, NULL));
}

/* ---- Ownership -------------------------------------------------------------------- */

static void Registry_other_owner_same_name_is_exists_and_changes_nothing(void **state)
{
    host_registry *reg = *state;
    api_v1 api = {add_one, 1}, intruder = {add_two, 2};
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 1, &api, sizeof api), ECS_OK);
    const api_v1 *found = host_registry_find(reg, "ecs.math", 0, NULL);
    assert_int_equal(host_registry_publish(reg, B, "ecs.math", 9, &intruder, sizeof intruder),
                     ECS_ERR_EXISTS);
    assert_int_equal(host_registry_publish(reg, B, "ecs.math", 9, &intruder, 4), ECS_ERR_EXISTS);
    size_t size = 0;
    assert_ptr_equal(host_registry_find(reg, "ecs.math", 0, &size), found);
    assert_int_equal(size, sizeof api);
    assert_int_equal(found->magic, 1);
    assert_int_equal(found->add(1, 1), 3);
    assert_null(host_registry_find(reg, "ecs.math", 2, NULL)); /* version still 1 */
    const host_api_entry *e = host_registry_entry(reg, "ecs.math");
    assert_non_null(e);
    assert_ptr_equal(e->owner, A);
    assert_int_equal(e->version, 1);
    assert_int_equal(reg->count, 1);
}

/* ---- Reload: rewrite in place ----------------------------------------------------- */

static void Registry_same_owner_republish_rewrites_in_place(void **state)
{
    host_registry *reg = *state;
    api_v1 v1 = {add_one, 1}, v2 = {add_two, 2};
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 1, &v1, sizeof v1), ECS_OK);
    const api_v1 *held = host_registry_find(reg, "ecs.math", 1, NULL); /* another plugin */
    assert_int_equal(held->add(1, 1), 3);
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 2, &v2, sizeof v2), ECS_OK);
    /* the old pointer is the new API: same address, new bytes */
    assert_ptr_equal(host_registry_find(reg, "ecs.math", 2, NULL), held);
    assert_int_equal(held->magic, 2);
    assert_int_equal(held->add(1, 1), 4);
    assert_int_equal(host_registry_entry(reg, "ecs.math")->version, 2);
    assert_int_equal(reg->count, 1);
}

static void Registry_republish_smaller_struct_zeroes_the_tail(void **state)
{
    host_registry *reg = *state;
    unsigned char big[64], small[8];
    memset(big, 0xAA, sizeof big);
    memset(small, 0x55, sizeof small);
    assert_int_equal(host_registry_publish(reg, A, "blob", 1, big, sizeof big), ECS_OK);
    const unsigned char *held = host_registry_find(reg, "blob", 0, NULL);
    assert_int_equal(host_registry_publish(reg, A, "blob", 1, small, sizeof small), ECS_OK);
    size_t size = 0;
    assert_ptr_equal(host_registry_find(reg, "blob", 0, &size), held);
    assert_int_equal(size, sizeof small);
    assert_memory_equal(held, small, sizeof small);
    assert_true(all_zero(held + sizeof small, sizeof big - sizeof small)); /* no stale bytes */
}

static void Registry_republish_larger_within_capacity_stays_in_place(void **state)
{
    host_registry *reg = *state;
    unsigned char small[16], grown[256];
    memset(small, 1, sizeof small);
    memset(grown, 2, sizeof grown);
    assert_int_equal(host_registry_publish(reg, A, "blob", 1, small, sizeof small), ECS_OK);
    const host_api_entry *e = host_registry_entry(reg, "blob");
    assert_true(e->capacity >= sizeof grown); /* at least 256 bytes of room */
    const void *held = host_registry_find(reg, "blob", 0, NULL);
    assert_int_equal(host_registry_publish(reg, A, "blob", 2, grown, sizeof grown), ECS_OK);
    size_t size = 0;
    assert_ptr_equal(host_registry_find(reg, "blob", 0, &size), held);
    assert_int_equal(size, sizeof grown);
    assert_memory_equal(held, grown, sizeof grown);
}

static void Registry_struct_larger_than_capacity_is_bad_value_and_changes_nothing(void **state)
{
    host_registry *reg = *state;
    api_v1 v1 = {add_one, 1};
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 1, &v1, sizeof v1), ECS_OK);
    const host_api_entry *e = host_registry_entry(reg, "ecs.math");
    size_t cap = e->capacity;
    const void *held = host_registry_find(reg, "ecs.math", 0, NULL);
    static unsigned char huge[4096];
    assert_true(cap + 1 <= sizeof huge);
    memset(huge, 0x77, cap + 1);
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 2, huge, cap + 1),
                     ECS_ERR_BAD_VALUE);
    size_t size = 0;
    assert_ptr_equal(host_registry_find(reg, "ecs.math", 1, &size), held);
    assert_int_equal(size, sizeof v1);
    assert_int_equal(e->version, 1);
    assert_int_equal(e->capacity, cap);
    assert_memory_equal(held, &v1, sizeof v1);
    assert_true(all_zero((const char *)held + sizeof v1, cap - sizeof v1));
    /* exactly the capacity fits */
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 3, huge, cap), ECS_OK);
    assert_ptr_equal(host_registry_find(reg, "ecs.math", 3, &size), held);
    assert_int_equal(size, cap);
}

static void Registry_large_first_publish_gets_room_to_grow(void **state)
{
    host_registry *reg = *state;
    enum { SIZE = 1000 };
    static unsigned char buf[4 * SIZE];
    assert_int_equal(host_registry_publish(reg, A, "big", 1, buf, SIZE), ECS_OK);
    const host_api_entry *e = host_registry_entry(reg, "big");
    assert_true(e->capacity >= SIZE);
    const void *held = host_registry_find(reg, "big", 0, NULL);
    assert_int_equal(host_registry_publish(reg, A, "big", 2, buf, e->capacity), ECS_OK);
    assert_int_equal(host_registry_publish(reg, A, "big", 3, buf, e->capacity + 1),
                     ECS_ERR_BAD_VALUE);
    assert_ptr_equal(host_registry_find(reg, "big", 2, NULL), held);
}

/* ---- Withdraw --------------------------------------------------------------------- */

static void Registry_withdraw_hides_and_zeroes_only_that_owners_apis(void **state)
{
    host_registry *reg = *state;
    api_v1 va = {add_one, 1}, vb = {add_two, 2};
    assert_int_equal(host_registry_publish(reg, A, "a.one", 1, &va, sizeof va), ECS_OK);
    assert_int_equal(host_registry_publish(reg, A, "a.two", 1, &va, sizeof va), ECS_OK);
    assert_int_equal(host_registry_publish(reg, B, "b.one", 1, &vb, sizeof vb), ECS_OK);
    const api_v1 *held = host_registry_find(reg, "a.one", 0, NULL);
    host_registry_withdraw(reg, A);
    assert_null(host_registry_find(reg, "a.one", 0, NULL));
    assert_null(host_registry_find(reg, "a.two", 0, NULL));
    const host_api_entry *e = host_registry_entry(reg, "a.one"); /* still known, withdrawn */
    assert_non_null(e);
    assert_null(e->owner);
    assert_ptr_equal(e->storage, held);
    assert_true(all_zero(held, e->capacity)); /* a held pointer reads zeros, not freed memory */
    const api_v1 *b = host_registry_find(reg, "b.one", 0, NULL);
    assert_non_null(b);
    assert_int_equal(b->magic, 2);
    host_registry_withdraw(reg, A); /* again: nothing left to withdraw */
    assert_non_null(host_registry_find(reg, "b.one", 0, NULL));
}

static void Registry_publish_after_withdraw_reuses_storage_for_any_owner(void **state)
{
    host_registry *reg = *state;
    api_v1 va = {add_one, 1}, vb = {add_two, 2};
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 1, &va, sizeof va), ECS_OK);
    const api_v1 *held = host_registry_find(reg, "ecs.math", 0, NULL);
    host_registry_withdraw(reg, A);
    /* another plugin takes the name over: same storage, the old pointer sees it */
    assert_int_equal(host_registry_publish(reg, B, "ecs.math", 5, &vb, sizeof vb), ECS_OK);
    assert_ptr_equal(host_registry_find(reg, "ecs.math", 5, NULL), held);
    assert_int_equal(held->magic, 2);
    assert_int_equal(held->add(0, 0), 2);
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 1, &va, sizeof va),
                     ECS_ERR_EXISTS); /* B owns it now */
    host_registry_withdraw(reg, B);
    /* the first owner again (a reload after an unload) */
    assert_int_equal(host_registry_publish(reg, A, "ecs.math", 1, &va, sizeof va), ECS_OK);
    assert_ptr_equal(host_registry_find(reg, "ecs.math", 1, NULL), held);
    assert_int_equal(held->magic, 1);
    assert_int_equal(reg->count, 1);
}

static void Registry_pointers_stable_while_many_names_are_added(void **state)
{
    host_registry *reg = *state;
    enum { N = 300 }; /* well past the first growth of the entry table */
    const uint32_t *held[N];
    for (uint32_t i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "api.%u", i);
        uint32_t value = i * 7u;
        assert_int_equal(host_registry_publish(reg, i % 2 ? A : B, name, i, &value, sizeof value),
                         ECS_OK);
        held[i] = host_registry_find(reg, name, i, NULL);
        assert_non_null(held[i]);
    }
    for (uint32_t i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "api.%u", i);
        assert_ptr_equal(host_registry_find(reg, name, i, NULL), held[i]);
        assert_int_equal(*held[i], i * 7u);
    }
    assert_int_equal(reg->count, N);
}

static void Registry_free_leaves_an_empty_reusable_registry(void **state)
{
    host_registry *reg = *state;
    uint32_t v = 1;
    assert_int_equal(host_registry_publish(reg, A, "x", 1, &v, sizeof v), ECS_OK);
    host_registry_free(reg);
    assert_int_equal(reg->count, 0);
    assert_null(reg->entries);
    assert_null(host_registry_find(reg, "x", 0, NULL));
    assert_int_equal(host_registry_publish(reg, B, "x", 1, &v, sizeof v), ECS_OK);
    assert_non_null(host_registry_find(reg, "x", 0, NULL));
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(Registry_find_unknown_name_returns_null),
        TEST(Registry_publish_copies_bytes_and_find_returns_copy),
        TEST(Registry_find_filters_by_min_version),
        TEST(Registry_several_names_found_independently),
        TEST(Registry_other_owner_same_name_is_exists_and_changes_nothing),
        TEST(Registry_same_owner_republish_rewrites_in_place),
        TEST(Registry_republish_smaller_struct_zeroes_the_tail),
        TEST(Registry_republish_larger_within_capacity_stays_in_place),
        TEST(Registry_struct_larger_than_capacity_is_bad_value_and_changes_nothing),
        TEST(Registry_large_first_publish_gets_room_to_grow),
        TEST(Registry_withdraw_hides_and_zeroes_only_that_owners_apis),
        TEST(Registry_publish_after_withdraw_reuses_storage_for_any_owner),
        TEST(Registry_pointers_stable_while_many_names_are_added),
        TEST(Registry_free_leaves_an_empty_reusable_registry),
    };
    return cmocka_run_group_tests_name("registry", tests, NULL, NULL);
}
