/* SPDX-License-Identifier: MIT */
/* test_snapfmt.c: the snapshot container (host/snapfmt.c) and the world core's part of a
 * snapshot (host/world/snapshot_core.c, entity.c), in process: sections come back as
 * written; every truncation, every flipped byte and a future format version are refused
 * with a reason; a restored entity manager hands out the same ids as the original from the
 * same point, and keeps its signatures; inconsistent core bytes are refused with the world
 * unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entity.h"
#include "signature.h"
#include "snapfmt.h"
#include "snapshot_core.h"

/* A container of three sections: "core", "transform" (binary, version 2), "names" (JSON). */
static char *three_sections(size_t *size)
{
    static const char core[] = "core bytes", tf[] = "0123456789abcdef0123", js[] = "{\"a\": 1}";
    host_snap_section s[3] = {
        {HOST_SNAP_CORE, 1, "core", 4, sizeof core, NULL},
        {HOST_SNAP_BINARY, 2, "transform", 9, sizeof tf, NULL},
        {HOST_SNAP_JSON, 0, "names", 5, sizeof js, NULL},
    };
    *size = host_snapfmt_size(s, 3);
    char *buf = malloc(*size);
    void *data[3];
    assert_non_null(buf);
    host_snapfmt_layout(buf, 42, s, 3, data);
    memcpy(data[0], core, sizeof core), memcpy(data[1], tf, sizeof tf);
    memcpy(data[2], js, sizeof js);
    host_snapfmt_seal(buf, *size);
    return buf;
}

static void Snapfmt_sections_come_back_as_written(void **state)
{
    (void)state;
    size_t size;
    char *buf = three_sections(&size), why[200];
    host_snap_file f;
    assert_true(host_snapfmt_open(buf, size, true, &f, why, sizeof why));
    assert_int_equal(f.count, 3);
    assert_int_equal(f.frame, 42);
    host_snap_section s;
    assert_true(host_snapfmt_find(&f, HOST_SNAP_BINARY, "transform", &s));
    assert_int_equal(s.version, 2);
    assert_int_equal(s.size, 21);
    assert_memory_equal(s.data, "0123456789abcdef0123", 21);
    assert_int_equal((uintptr_t)((const char *)s.data - buf) % 64, 0); /* aligned for memcpy */
    assert_true(host_snapfmt_find(&f, HOST_SNAP_JSON, "names", &s));
    assert_string_equal(s.data, "{\"a\": 1}");
    assert_false(host_snapfmt_find(&f, HOST_SNAP_JSON, "transform", &s)); /* kind counts */
    free(buf);
}

static void Snapfmt_every_truncation_and_flipped_byte_is_refused(void **state)
{
    (void)state;
    size_t size;
    char *buf = three_sections(&size), why[200];
    host_snap_file f;
    for (size_t n = 0; n < size; n++)
        if (host_snapfmt_open(buf, n, true, &f, why, sizeof why))
            fail_msg("accepted the container cut to %zu of %zu bytes", n, size);
    for (size_t i = 0; i < size; i++) {
        buf[i] ^= 0x01;
        if (host_snapfmt_open(buf, size, true, &f, why, sizeof why))
            fail_msg("accepted the container with byte %zu changed", i);
        buf[i] ^= 0x01;
    }
    assert_true(host_snapfmt_open(buf, size, true, &f, why, sizeof why));
    memcpy(why, "", 1);
    assert_false(host_snapfmt_open(buf, size - 1, true, &f, why, sizeof why));
    assert_non_null(strstr(why, "truncated"));
    free(buf);
}

static void Snapfmt_future_version_is_refused_naming_it(void **state)
{
    (void)state;
    size_t size;
    char *buf = three_sections(&size), why[200];
    uint32_t v = HOST_SNAPFMT_VERSION + 1;
    memcpy(buf + 8, &v, sizeof v);
    host_snapfmt_seal(buf, size); /* a good checksum: the version alone refuses it */
    host_snap_file f;
    assert_false(host_snapfmt_open(buf, size, true, &f, why, sizeof why));
    assert_non_null(strstr(why, "format version 2 is newer than this ecs-host's 1"));
    free(buf);
}

/* ---- the core ---- */

typedef struct core {
    host_entities *em;
    host_signatures sig;
    ecs_frame_info frame;
    uint64_t seed;
    host_core_view view;
} core;

static void core_init(core *c)
{
    memset(c, 0, sizeof *c);
    c->em = host_entities_new();
    assert_non_null(c->em);
    c->sig.keys = host_entities_alive_keys(c->em);
    c->view = (host_core_view){c->em, &c->sig, &c->frame, &c->seed};
}

static void core_free(core *c)
{
    host_sig_free(&c->sig);
    host_entities_free(c->em);
}

/* xorshift64*: the seeded churn below (the seed is printed on failure). */
static uint64_t next(uint64_t *x)
{
    *x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1Dull;
}

/* n rounds of: create or destroy a random one (half announced and recycled), bits given. */
static void churn(core *c, ecs_entity *live, uint32_t *count, uint32_t n, uint64_t *rng)
{
    uint32_t bit;
    assert_int_equal(host_sig_bit(&c->sig, "transform", true, &bit), ECS_OK);
    for (uint32_t k = 0; k < n; k++) {
        if (*count < 100 || next(rng) % 3) {
            assert_int_equal(host_entity_create(c->em, &live[*count]), ECS_OK);
            if (next(rng) & 1) assert_int_equal(host_sig_add(&c->sig, bit, live[*count]), ECS_OK);
            ++*count;
        } else {
            uint32_t i = (uint32_t)(next(rng) % *count);
            ecs_entity gone = live[i];
            assert_int_equal(host_entity_destroy(c->em, gone), ECS_OK);
            host_sig_forget(&c->sig, &gone, 1);
            live[i] = live[--*count];
        }
        if (k % 997 == 0) host_entities_flush(c->em);
    }
}

static void Core_restored_world_hands_out_the_same_ids_and_bits(void **state)
{
    (void)state;
    core c;
    core_init(&c);
    uint64_t seed = 0x5eed1234, rng = seed;
    ecs_entity *live = calloc(20000, sizeof *live), a[3000], b[3000];
    uint32_t count = 0;
    churn(&c, live, &count, 15000, &rng);
    c.frame.frame = 77, c.seed = 99;
    size_t size = host_core_snapshot_size(&c.view);
    char *bytes = malloc(size);
    host_core_snapshot_write(&c.view, bytes);
    for (int k = 0; k < 3000; k++) assert_int_equal(host_entity_create(c.em, &a[k]), ECS_OK);
    churn(&c, live, &count, 5000, &rng); /* the world moves on */
    c.frame.frame = 500, c.seed = 1;
    assert_int_equal(host_core_snapshot_read(&c.view, bytes, size, true), ECS_OK);
    assert_int_equal(c.frame.frame, 77);
    assert_int_equal(c.seed, 99);
    for (int k = 0; k < 3000; k++) {
        assert_int_equal(host_entity_create(c.em, &b[k]), ECS_OK);
        if (a[k].id != b[k].id)
            fail_msg("seed %llx: id %d: %u, then %u", (unsigned long long)seed, k, a[k].id,
                     b[k].id);
    }
    uint32_t bit;
    assert_int_equal(host_sig_bit(&c.sig, "transform", false, &bit), ECS_OK);
    assert_true(c.sig.overflow); /* the collections rebuild from the restored bits */
    free(live), free(bytes);
    core_free(&c);
}

static void Core_inconsistent_bytes_are_refused_and_change_nothing(void **state)
{
    (void)state;
    core c;
    core_init(&c);
    uint64_t rng = 7;
    ecs_entity *live = calloc(5000, sizeof *live), e;
    uint32_t count = 0;
    churn(&c, live, &count, 3000, &rng);
    size_t size = host_core_snapshot_size(&c.view);
    char *bytes = malloc(size);
    host_core_snapshot_write(&c.view, bytes);
    uint32_t before = host_entities_live(c.em);
    /* the core header is 48 bytes, then 6 words of the entity part (next_fresh first), the
     * generations, then the alive keys: a key changed disagrees with its generation (live)
     * or with being free */
    uint32_t fresh;
    memcpy(&fresh, bytes + 48, sizeof fresh);
    size_t keys = 48 + 24 + fresh;
    for (size_t at = keys + 2; at < keys + 130; at++) {
        bytes[at] ^= 0x10;
        assert_int_equal(host_core_snapshot_read(&c.view, bytes, size, true), ECS_ERR_BAD_VALUE);
        bytes[at] ^= 0x10;
    }
    assert_int_equal(host_core_snapshot_read(&c.view, bytes, size - 1, true), ECS_ERR_BAD_VALUE);
    assert_int_equal(host_entities_live(c.em), before);
    for (uint32_t i = 0; i < count; i++) assert_true(host_entity_alive(c.em, live[i]));
    assert_int_equal(host_entity_create(c.em, &e), ECS_OK);
    free(live), free(bytes);
    core_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Snapfmt_sections_come_back_as_written),
        cmocka_unit_test(Snapfmt_every_truncation_and_flipped_byte_is_refused),
        cmocka_unit_test(Snapfmt_future_version_is_refused_naming_it),
        cmocka_unit_test(Core_restored_world_hands_out_the_same_ids_and_bits),
        cmocka_unit_test(Core_inconsistent_bytes_are_refused_and_change_nothing),
    };
    return cmocka_run_group_tests_name("snapfmt", tests, NULL, NULL);
}
