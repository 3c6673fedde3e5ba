/* SPDX-License-Identifier: MIT */
/* test_debug_name.c: cmocka tests of the debug_name plugin (plugins/debug_name): the API
 * "ecs.debug_name" through the real .so loaded by the real loader (fixture.h), bad
 * arguments, find's choice among entities sharing a name, destroyed entities, JSON
 * save/load through the manager, and the plugin's life (reload keeping the state, no
 * leak at shutdown) through a fake host (plugins_fake/mini_host.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debug_name_api.h"
#include "fixture.h"
#include "plugins_fake/mini_host.h"

#if !defined(DEBUG_NAME_SO) || !defined(DEBUG_NAME_SEQ_SO)
#error "DEBUG_NAME_SO and DEBUG_NAME_SEQ_SO must name the built debug_name.so and its test build"
#endif

/* ---- Fixture: the real plugin in a host_world ---------------------------------------- */

typedef struct dn_test {
    fixture f;
    const ecs_debug_name_api *api;
    const ecs_manager_desc *manager;
} dn_test;

static const ecs_manager_desc *manager_named(host_world *w, const char *name)
{
    for (size_t i = 0; i < w->manager_count; i++)
        if (strcmp(w->managers[i]->name, name) == 0) return &w->managers[i]->desc;
    return NULL;
}

static int setup(void **state)
{
    dn_test *t = calloc(1, sizeof *t);
    const char *const paths[] = {DEBUG_NAME_SO, NULL};
    *state = t;
    if (!t || fixture_open(&t->f, paths) != 0) return -1;
    t->api = fixture_api(&t->f, ECS_DEBUG_NAME_API_NAME);
    t->manager = manager_named(t->f.w, "debug_name");
    return t->api && t->manager ? 0 : -1;
}

/* The same with the build of debug_name that renumbers its sequence often. */
static int setup_seq(void **state)
{
    dn_test *t = calloc(1, sizeof *t);
    const char *const paths[] = {DEBUG_NAME_SEQ_SO, NULL};
    *state = t;
    if (!t || fixture_open(&t->f, paths) != 0) return -1;
    t->api = fixture_api(&t->f, ECS_DEBUG_NAME_API_NAME);
    t->manager = manager_named(t->f.w, "debug_name");
    return t->api && t->manager ? 0 : -1;
}

static int teardown(void **state)
{
    dn_test *t = *state;
    if (t) fixture_close(&t->f);
    free(t);
    return 0;
}

static ecs_entity new_entity(dn_test *t)
{
    ecs_entity e;
    assert_int_equal(host_entity_create(t->f.w->entities, &e), ECS_OK);
    return e;
}

static void destroy(dn_test *t, ecs_entity e)
{
    assert_int_equal(host_entity_destroy(t->f.w->entities, e), ECS_OK);
}

static ecs_status set(dn_test *t, ecs_entity e, const char *name)
{
    return t->api->set(t->api->self, e, name);
}

static const char *get(dn_test *t, ecs_entity e)
{
    return t->api->get(t->api->self, e);
}

static ecs_entity find(dn_test *t, const char *name)
{
    return t->api->find(t->api->self, name);
}

static uint32_t count(dn_test *t)
{
    return t->api->count(t->api->self);
}

#define assert_entity_equal(a, b) assert_int_equal((a).id, (b).id)

/* Load e's name from the JSON text (fixture_load_json) with stderr (the host's log)
 * captured into log[0..size). */
/* stderr into a temporary file while a call runs (capture_start), then into log. */
typedef struct captured {
    char path[32];
    int fd, saved;
} captured;

static void capture_start(captured *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/ecs-dn-log-XXXXXX");
    c->fd = mkstemp(c->path);
    c->saved = dup(STDERR_FILENO);
    assert_true(c->fd >= 0 && c->saved >= 0);
    fflush(stderr);
    dup2(c->fd, STDERR_FILENO);
}

static void capture_end(captured *c, char *log, size_t size)
{
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    ssize_t n = pread(c->fd, log, size - 1, 0);
    log[n > 0 ? n : 0] = '\0';
    close(c->fd);
    unlink(c->path);
    fputs(log, stderr);
}

static ecs_status load_logged(dn_test *t, ecs_entity e, const char *text, char *log, size_t size)
{
    captured c;
    capture_start(&c);
    ecs_status s = fixture_load_json(t->manager, e, text);
    capture_end(&c, log, size);
    return s;
}

/* ---- set / get ------------------------------------------------------------------------- */

static void DebugName_set_then_get_returns_the_name(void **state)
{
    dn_test *t = *state;
    ecs_entity a = new_entity(t), b = new_entity(t);
    assert_int_equal(set(t, a, "door"), ECS_OK);
    assert_int_equal(set(t, b, "window"), ECS_OK);
    assert_string_equal(get(t, a), "door");
    assert_string_equal(get(t, b), "window");
    assert_int_equal(count(t), 2);
    assert_int_equal(t->manager->count(t->manager->state), 2);
}

static void DebugName_set_copies_the_name(void **state)
{
    dn_test *t = *state;
    ecs_entity e = new_entity(t);
    char buf[16] = "lamp";
    assert_int_equal(set(t, e, buf), ECS_OK);
    strcpy(buf, "XXXX");
    assert_string_equal(get(t, e), "lamp");
    assert_ptr_not_equal(get(t, e), buf);
    assert_entity_equal(find(t, "lamp"), e);
    assert_true(ecs_entity_is_null(find(t, "XXXX")));
}

static void DebugName_set_replaces_the_name(void **state)
{
    dn_test *t = *state;
    ecs_entity e = new_entity(t);
    assert_int_equal(set(t, e, "old"), ECS_OK);
    assert_int_equal(set(t, e, "new"), ECS_OK);
    assert_string_equal(get(t, e), "new");
    assert_int_equal(count(t), 1);
    assert_true(ecs_entity_is_null(find(t, "old")));
    assert_entity_equal(find(t, "new"), e);
    assert_int_equal(set(t, e, "new"), ECS_OK); /* the same name again */
    assert_int_equal(count(t), 1);
    assert_entity_equal(find(t, "new"), e);
}

static void DebugName_set_refuses_bad_arguments_and_keeps_the_old_name(void **state)
{
    dn_test *t = *state;
    ecs_entity e = new_entity(t), dead = new_entity(t);
    destroy(t, dead);
    assert_int_equal(set(t, e, "keep"), ECS_OK);
    char too_long[ECS_DEBUG_NAME_MAX + 1];
    memset(too_long, 'a', ECS_DEBUG_NAME_MAX);
    too_long[ECS_DEBUG_NAME_MAX] = '\0'; /* 256 bytes: one too many */
    static const struct {
        const char *name;
        ecs_status want;
    } bad[] = {
        {NULL, ECS_ERR_INVALID_ARGUMENT},
        {"", ECS_ERR_BAD_VALUE},
        {"tab\there", ECS_ERR_BAD_VALUE},
        {"new\nline", ECS_ERR_BAD_VALUE},
        {"del\x7f", ECS_ERR_BAD_VALUE},
        {"c1\xc2\x85", ECS_ERR_BAD_VALUE},      /* U+0085 NEXT LINE, a C1 control */
        {"bad\xff", ECS_ERR_BAD_VALUE},         /* not UTF-8 */
        {"over\xc0\xae", ECS_ERR_BAD_VALUE},    /* overlong '.' */
        {"cut\xe2\x82", ECS_ERR_BAD_VALUE},     /* truncated sequence */
        {"sur\xed\xa0\x80", ECS_ERR_BAD_VALUE}, /* a UTF-16 surrogate */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (set(t, e, bad[i].name) != bad[i].want) fail_msg("case %zu", i);
        assert_string_equal(get(t, e), "keep");
    }
    assert_int_equal(set(t, e, too_long), ECS_ERR_BAD_VALUE);
    assert_int_equal(set(t, dead, "ghost"), ECS_ERR_STALE_ENTITY);
    assert_int_equal(set(t, ecs_entity_null(), "null"), ECS_ERR_STALE_ENTITY);
    assert_int_equal(set(t, ecs_entity_make(12345, 1), "never"), ECS_ERR_STALE_ENTITY);
    assert_string_equal(get(t, e), "keep");
    assert_int_equal(count(t), 1);
    assert_true(ecs_entity_is_null(find(t, "ghost")));
}

/* What set() logs says what is wrong with the name; a name over 255 bytes is said to be
 * that first, whatever else is wrong with it; 255 bytes ending in a two-byte character
 * are a name, 256 are not. */
static void DebugName_set_says_what_is_wrong_with_a_name(void **state)
{
    dn_test *t = *state;
    ecs_entity e = new_entity(t);
    char long_bad[300], near[ECS_DEBUG_NAME_MAX + 2], over[ECS_DEBUG_NAME_MAX + 3];
    memset(long_bad, 'a', sizeof long_bad - 1);
    long_bad[sizeof long_bad - 1] = '\0';
    long_bad[10] = '\xff';
    memset(near, 'z', ECS_DEBUG_NAME_MAX - 3); /* 253 + 2 = 255 bytes */
    memcpy(near + ECS_DEBUG_NAME_MAX - 3, "\xc3\xa9", 3);
    memset(over, 'z', ECS_DEBUG_NAME_MAX - 1); /* 255 + 2 = 257 bytes */
    memcpy(over + ECS_DEBUG_NAME_MAX - 1, "\xc3\xa9", 3);
    static const struct {
        const char *name, *why;
    } cases[] = {
        {"", "the name is empty"},
        {"tab\there", "the name has a control character"},
        {"c1\xc2\x85", "the name has a control character"},
        {"bad\xff", "the name is not valid UTF-8"},
    };
    char log[512];
    captured c;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] + 2; i++) {
        const char *name = i < 2 ? (i ? over : long_bad) : cases[i - 2].name;
        const char *why = i < 2 ? "the name is longer than 255 bytes" : cases[i - 2].why;
        capture_start(&c);
        ecs_status s = set(t, e, name);
        capture_end(&c, log, sizeof log);
        if (s != ECS_ERR_BAD_VALUE || !strstr(log, why))
            fail_msg("case %zu: status %d, log '%s', expected '%s'", i, (int)s, log, why);
        assert_null(get(t, e));
    }
    near[ECS_DEBUG_NAME_MAX - 1] = '\0';
    assert_int_equal(strlen(near), ECS_DEBUG_NAME_MAX - 1);
    assert_int_equal(set(t, e, near), ECS_OK);
    assert_string_equal(get(t, e), near);
}

static void DebugName_set_accepts_255_bytes_and_utf8(void **state)
{
    dn_test *t = *state;
    ecs_entity a = new_entity(t), b = new_entity(t);
    char longest[ECS_DEBUG_NAME_MAX];
    memset(longest, 'z', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    assert_int_equal(set(t, a, longest), ECS_OK);
    assert_string_equal(get(t, a), longest);
    const char *utf8 = "porte d'entr\xc3\xa9"
                       "e \xe2\x86\x92 \xf0\x9f\x9a\xaa"; /* é → 🚪 */
    assert_int_equal(set(t, b, utf8), ECS_OK);
    assert_string_equal(get(t, b), utf8);
    assert_entity_equal(find(t, utf8), b);
    assert_entity_equal(find(t, longest), a);
}

/* Every length from 1 to 255 bytes (every slot size and its edges), named, half of them
 * cleared and renamed from the freed slots, reads back whole. */
static void DebugName_every_name_length_reads_back(void **state)
{
    dn_test *t = *state;
    ecs_entity e[256];
    char name[256];
    for (int len = 1; len < 256; len++) {
        e[len] = new_entity(t);
        memset(name, 'a' + len % 26, (size_t)len);
        name[len] = '\0';
        assert_int_equal(set(t, e[len], name), ECS_OK);
    }
    for (int len = 1; len < 256; len += 2) {
        assert_int_equal(t->api->clear(t->api->self, e[len]), ECS_OK);
        memset(name, 'A' + len % 26, (size_t)len);
        name[len] = '\0';
        assert_int_equal(set(t, e[len], name), ECS_OK);
    }
    for (int len = 1; len < 256; len++) {
        memset(name, (len % 2 ? 'A' : 'a') + len % 26, (size_t)len);
        name[len] = '\0';
        assert_string_equal(get(t, e[len]), name);
        assert_entity_equal(find(t, name), e[len]);
    }
}

static void DebugName_get_without_name_or_dead_entity_is_null(void **state)
{
    dn_test *t = *state;
    ecs_entity e = new_entity(t), named = new_entity(t);
    assert_null(get(t, e));
    assert_null(get(t, ecs_entity_null()));
    assert_int_equal(set(t, named, "n"), ECS_OK);
    destroy(t, named);
    assert_null(get(t, named)); /* dead at once, even before the announcement */
}

/* ---- clear / find ---------------------------------------------------------------------- */

static void DebugName_clear_removes_and_reports_missing(void **state)
{
    dn_test *t = *state;
    ecs_entity e = new_entity(t), other = new_entity(t), dead = new_entity(t);
    destroy(t, dead);
    assert_int_equal(set(t, e, "a"), ECS_OK);
    assert_int_equal(set(t, other, "b"), ECS_OK);
    assert_int_equal(t->api->clear(t->api->self, e), ECS_OK);
    assert_null(get(t, e));
    assert_int_equal(count(t), 1);
    assert_int_equal(t->api->clear(t->api->self, e), ECS_ERR_NOT_FOUND);
    assert_int_equal(t->api->clear(t->api->self, dead), ECS_ERR_STALE_ENTITY);
    assert_int_equal(t->api->clear(t->api->self, ecs_entity_null()), ECS_ERR_STALE_ENTITY);
    assert_string_equal(get(t, other), "b"); /* moved into the hole, still found */
    assert_entity_equal(find(t, "b"), other);
    assert_int_equal(set(t, e, "a2"), ECS_OK); /* named again after a clear */
    assert_string_equal(get(t, e), "a2");
}

static void DebugName_find_returns_most_recent_holder(void **state)
{
    dn_test *t = *state;
    ecs_entity a = new_entity(t), b = new_entity(t), c = new_entity(t);
    assert_int_equal(set(t, a, "twin"), ECS_OK);
    assert_int_equal(set(t, b, "twin"), ECS_OK);
    assert_int_equal(set(t, c, "twin"), ECS_OK);
    assert_entity_equal(find(t, "twin"), c);
    assert_int_equal(t->api->clear(t->api->self, c), ECS_OK);
    assert_entity_equal(find(t, "twin"), b); /* the most recent one still named so */
    assert_int_equal(set(t, b, "other"), ECS_OK);
    assert_entity_equal(find(t, "twin"), a);
    assert_int_equal(set(t, c, "twin"), ECS_OK);
    assert_entity_equal(find(t, "twin"), c);
    assert_int_equal(set(t, a, "twin"), ECS_OK); /* naming a again makes it the latest */
    assert_entity_equal(find(t, "twin"), a);
}

static void DebugName_find_after_clear_replace_destroy(void **state)
{
    dn_test *t = *state;
    ecs_entity a = new_entity(t), b = new_entity(t);
    assert_int_equal(set(t, a, "x"), ECS_OK);
    assert_int_equal(set(t, b, "x"), ECS_OK);
    destroy(t, b);
    assert_entity_equal(find(t, "x"), a); /* b is dead before the frame announces it */
    fixture_frames(&t->f, 1);
    assert_entity_equal(find(t, "x"), a);
    assert_int_equal(set(t, a, "y"), ECS_OK);
    assert_true(ecs_entity_is_null(find(t, "x")));
    assert_entity_equal(find(t, "y"), a);
    assert_int_equal(t->api->clear(t->api->self, a), ECS_OK);
    assert_true(ecs_entity_is_null(find(t, "y")));
    assert_int_equal(count(t), 0);
}

static void DebugName_find_unknown_or_bad_name_is_null(void **state)
{
    dn_test *t = *state;
    assert_true(ecs_entity_is_null(find(t, "nobody"))); /* before any name: no table yet */
    ecs_entity e = new_entity(t);
    assert_int_equal(set(t, e, "somebody"), ECS_OK);
    assert_true(ecs_entity_is_null(find(t, "nobody")));
    assert_true(ecs_entity_is_null(find(t, NULL)));
    assert_true(ecs_entity_is_null(find(t, "")));
    assert_true(ecs_entity_is_null(find(t, "somebod")));
    assert_true(ecs_entity_is_null(find(t, "somebody ")));
}

/* ---- destroyed entities ---------------------------------------------------------------- */

static void DebugName_destroyed_entity_loses_name_after_one_frame(void **state)
{
    dn_test *t = *state;
    ecs_entity e[5];
    char name[16];
    for (int i = 0; i < 5; i++) {
        e[i] = new_entity(t);
        snprintf(name, sizeof name, "e%d", i);
        assert_int_equal(set(t, e[i], name), ECS_OK);
    }
    destroy(t, e[0]);
    destroy(t, e[3]);
    assert_int_equal(count(t), 5); /* until the announcement */
    fixture_frames(&t->f, 1);
    assert_int_equal(count(t), 3);
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "e%d", i);
        bool gone = i == 0 || i == 3;
        if (gone) {
            assert_null(get(t, e[i]));
            assert_true(ecs_entity_is_null(find(t, name)));
        } else {
            assert_string_equal(get(t, e[i]), name);
            assert_entity_equal(find(t, name), e[i]);
        }
    }
}

/* ---- format ---------------------------------------------------------------------------- */

static void DebugName_format_named_unnamed_truncated(void **state)
{
    dn_test *t = *state;
    ecs_entity named = new_entity(t), bare = new_entity(t);
    assert_int_equal(set(t, named, "door"), ECS_OK);
    char buf[64], want[64];
    snprintf(want, sizeof want, "door#%u.%u", ecs_entity_index(named),
             ecs_entity_generation(named));
    assert_ptr_equal(t->api->format(t->api->self, named, buf, sizeof buf), buf);
    assert_string_equal(buf, want);
    snprintf(want, sizeof want, "#%u.%u", ecs_entity_index(bare), ecs_entity_generation(bare));
    assert_string_equal(t->api->format(t->api->self, bare, buf, sizeof buf), want);
    assert_string_equal(t->api->format(t->api->self, named, buf, 4), "doo");
    buf[0] = 'Q';
    assert_ptr_equal(t->api->format(t->api->self, named, buf, 0), buf);
    assert_int_equal(buf[0], 'Q'); /* size 0: nothing written */
    assert_null(t->api->format(t->api->self, named, NULL, 8));
    assert_string_equal(t->api->format(t->api->self, ecs_entity_null(), buf, sizeof buf), "#0.0");
}

/* ---- a random model: many names, hash table growth, swaps ------------------------------ */

static uint64_t rng_next(uint64_t *s) /* xorshift64* */
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#define MODEL_N   3000
#define MODEL_OPS 20000

/* Model: name id per entity slot (-1 none) and when it was set. */
typedef struct model {
    ecs_entity e[MODEL_N];
    int name[MODEL_N];
    uint64_t when[MODEL_N];
    bool alive[MODEL_N];
} model;

/* The slot find("n<id>") must return per the model, or -1. */
static int model_find(const model *m, int id)
{
    int best = -1;
    for (int i = 0; i < MODEL_N; i++)
        if (m->alive[i] && m->name[i] == id && (best < 0 || m->when[i] > m->when[best])) best = i;
    return best;
}

static void check_model(dn_test *t, const model *m, uint64_t seed, int op)
{
    char name[32];
    uint32_t named = 0;
    fixture_frames(&t->f, 1); /* destroyed entities keep their names until announced */
    for (int i = 0; i < MODEL_N; i++) {
        if (!m->alive[i]) continue;
        const char *got = get(t, m->e[i]);
        if (m->name[i] < 0) {
            if (got) fail_msg("seed %" PRIu64 " op %d: slot %d has name %s", seed, op, i, got);
            continue;
        }
        named++;
        snprintf(name, sizeof name, "n%d", m->name[i]);
        if (!got || strcmp(got, name) != 0)
            fail_msg("seed %" PRIu64 " op %d: slot %d: want %s, got %s", seed, op, i, name,
                     got ? got : "NULL");
    }
    for (int id = 0; id < 200; id++) {
        snprintf(name, sizeof name, "n%d", id);
        int want = model_find(m, id);
        ecs_entity got = find(t, name);
        ecs_entity exp = want < 0 ? ecs_entity_null() : m->e[want];
        if (got.id != exp.id) fail_msg("seed %" PRIu64 " op %d: find(%s) wrong", seed, op, name);
    }
    if (count(t) != named)
        fail_msg("seed %" PRIu64 " op %d: count %u, want %u", seed, op, count(t), named);
}

/* MODEL_OPS random sets (of 200 names), clears, destroys and frames, checked against the
 * model every `every` operations and at the end: with a large `every` the first find()
 * comes after thousands of names, when the name index is first built. */
static void run_model(dn_test *t, uint64_t seed, int every)
{
    uint64_t rng = seed, clock = 0;
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    for (int i = 0; i < MODEL_N; i++) {
        m->e[i] = new_entity(t);
        m->name[i] = -1;
        m->alive[i] = true;
    }
    char name[32];
    for (int op = 0; op < MODEL_OPS; op++) {
        int i = (int)(rng_next(&rng) % MODEL_N), what = (int)(rng_next(&rng) % 10);
        if (!m->alive[i]) continue;
        if (what < 6) { /* set one of 200 names: many shared names */
            int id = (int)(rng_next(&rng) % 200);
            snprintf(name, sizeof name, "n%d", id);
            assert_int_equal(set(t, m->e[i], name), ECS_OK);
            m->name[i] = id;
            m->when[i] = ++clock;
        } else if (what < 8) {
            ecs_status want = m->name[i] < 0 ? ECS_ERR_NOT_FOUND : ECS_OK;
            assert_int_equal(t->api->clear(t->api->self, m->e[i]), want);
            m->name[i] = -1;
        } else if (what == 8) {
            destroy(t, m->e[i]);
            m->alive[i] = false;
        } else {
            fixture_frames(&t->f, 1);
        }
        if (op % every == 0) check_model(t, m, seed, op);
    }
    fixture_frames(&t->f, 1);
    check_model(t, m, seed, MODEL_OPS);
    free(m);
}

static void DebugName_random_operations_match_a_model(void **state)
{
    run_model(*state, 0x5eed0001ull, 2000);
}

/* The index is built by the first find(), here after about 12,000 names were given. */
static void DebugName_find_builds_its_index_late_and_matches_the_model(void **state)
{
    run_model(*state, 0x5eed0002ull, MODEL_OPS + 1);
}

/* The same model on a build whose sequence numbers are renumbered every 4,096 names given
 * (SEQ_LIMIT): find() still takes the most recent holder across the renumberings. */
static void DebugName_sequence_renumbering_keeps_find_order(void **state)
{
    run_model(*state, 0x5eed0003ull, 500);
}

/* ---- JSON through the manager ---------------------------------------------------------- */

static void DebugName_json_round_trip(void **state)
{
    dn_test *t = *state;
    const ecs_manager_desc *m = t->manager;
    ecs_entity a = new_entity(t), b = new_entity(t), bare = new_entity(t);
    const char *name = "crate \xe2\x84\x96"
                       "5 \"quoted\" \\ slash";
    assert_int_equal(set(t, a, name), ECS_OK);
    cJSON *json = NULL;
    assert_int_equal(fixture_save_json(m, a, &json), ECS_OK);
    assert_true(cJSON_IsString(json));
    char *text = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    assert_int_equal(fixture_load_json(m, b, text), ECS_OK); /* through text, as a scene */
    free(text);
    assert_string_equal(get(t, b), name);
    assert_entity_equal(find(t, name), b);
    json = (cJSON *)1;
    assert_int_equal(fixture_save_json(m, bare, &json), ECS_OK);
    assert_null(json);                                                /* no name: nothing to save */
    assert_int_equal(fixture_load_json(m, b, "\"renamed\""), ECS_OK); /* replaces the name */
    assert_string_equal(get(t, b), "renamed");
    assert_int_equal(count(t), 2);
}

static void DebugName_json_rejects_bad_values(void **state)
{
    dn_test *t = *state;
    const ecs_manager_desc *m = t->manager;
    static const char *const bad[] = {
        "42",
        "true",
        "null",
        "[\"door\"]",
        "{\"name\":\"door\"}",
        "\"\"",
        "\"a\\nb\"",
        "\"\\u0007bell\"",
        "\"\\u0085\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ecs_entity e = new_entity(t);
        assert_int_equal(set(t, e, "before"), ECS_OK);
        char log[512];
        ecs_status s = load_logged(t, e, bad[i], log, sizeof log);
        if (s != ECS_ERR_BAD_VALUE) fail_msg("%s: status %d", bad[i], (int)s);
        if (get(t, e)) fail_msg("%s: the entity kept a name after the error", bad[i]);
        if (!strstr(log, "expected a name of 1-255 bytes of UTF-8 without control characters, "
                         "found "))
            fail_msg("%s: the log does not name the key and what was expected:\n%s", bad[i], log);
    }
    char long_name[ECS_DEBUG_NAME_MAX + 3]; /* a JSON string of 256 bytes */
    memset(long_name, 'q', ECS_DEBUG_NAME_MAX + 2);
    long_name[0] = long_name[ECS_DEBUG_NAME_MAX + 1] = '"';
    long_name[ECS_DEBUG_NAME_MAX + 2] = '\0';
    ecs_entity e = new_entity(t), dead = new_entity(t);
    assert_int_equal(fixture_load_json(m, e, long_name), ECS_ERR_BAD_VALUE);
    destroy(t, dead);
    assert_int_equal(fixture_load_json(m, dead, long_name), ECS_ERR_STALE_ENTITY);
    assert_int_equal(fixture_load_json(m, e, NULL), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(fixture_save_json(m, e, NULL), ECS_ERR_INVALID_ARGUMENT);
    cJSON *out = (cJSON *)1;
    assert_int_equal(fixture_save_json(m, dead, &out), ECS_ERR_STALE_ENTITY);
    assert_null(out);
    assert_int_equal(count(t), 0);
    /* a scene cannot resolve entity references outside a scene load */
    ecs_entity ref;
    const ecs_host *h = &t->f.s->plugins[0]->table;
    assert_int_equal(h->scene_resolve(h, "x", &ref), ECS_ERR_WRONG_TIME);
}

/* A name read from JSON is judged as set() judges it (the reader's check passes printable
 * ASCII over eight bytes at a time, set()'s one at a time): every length from 1 to 24 and
 * from 250 to 258 bytes, with one thing that is not printable ASCII (a C0 control, DEL, a
 * C1 control, a byte that is not UTF-8, a two-byte and a four-byte character) at each
 * place (the long ones: the first 18 and the last 10), or none; the same status, and the
 * same name kept. */
static void DebugName_a_read_name_is_judged_as_set_judges_it(void **state)
{
    dn_test *t = *state;
    static const struct {
        const char *raw, *json; /* as set() takes it, as a JSON string spells it */
    } odd[] = {{"\x01", "\\u0001"},      {"\x7f", "\x7f"},
               {"\xc2\x85", "\\u0085"},  {"\xff", "\xff"},
               {"\xc3\xa9", "\xc3\xa9"}, {"\xf0\x9d\x84\x9e", "\xf0\x9d\x84\x9e"}};
    ecs_entity a = new_entity(t), b = new_entity(t);
    int quiet = open("/dev/null", O_WRONLY), saved = dup(STDERR_FILENO);
    assert_true(quiet >= 0 && saved >= 0);
    fflush(stderr);
    dup2(quiet, STDERR_FILENO); /* thousands of refusals, each logged */
    unsigned cases = 0, refused = 0;
    char wrong[200] = ""; /* the first case judged two ways */
    for (int len = 1; len <= 258; len = len == 24 ? 250 : len + 1) {
        for (int at = -1; at < len; at++) {
            if (len > 24 && at >= 18 && at < len - 10) continue;
            for (size_t k = 0; k < (at < 0 ? 1 : sizeof odd / sizeof odd[0]); k++) {
                char raw[300], json[320];
                size_t r = 0, j = 0;
                json[j++] = '"';
                for (int i = 0; i < len; i++) {
                    const char *rs = i == at ? odd[k].raw : NULL,
                               *js = i == at ? odd[k].json : NULL;
                    if (!rs) {
                        raw[r++] = json[j++] = (char)('a' + (i * 7) % 26);
                        continue;
                    }
                    memcpy(raw + r, rs, strlen(rs));
                    r += strlen(rs);
                    memcpy(json + j, js, strlen(js));
                    j += strlen(js);
                }
                raw[r] = '\0';
                json[j++] = '"';
                json[j] = '\0';
                ecs_status by_set = set(t, a, raw);
                ecs_status by_read = fixture_load_json(t->manager, b, json);
                if (!*wrong &&
                    (by_set != by_read || (by_set == ECS_OK && strcmp(get(t, a), get(t, b)) != 0)))
                    snprintf(wrong, sizeof wrong, "length %d, at %d, case %zu: set() %d, read %d",
                             len, at, k, (int)by_set, (int)by_read);
                cases++;
                refused += by_set != ECS_OK;
            }
        }
    }
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(quiet);
    if (*wrong) fail_msg("%s", wrong);
    if (refused == 0 || refused == cases) fail_msg("%u cases, %u refused", cases, refused);
}

static void DebugName_api_self_is_the_manager_state(void **state)
{
    dn_test *t = *state;
    assert_ptr_equal(t->api->self, t->manager->state);
    assert_true(t->api->struct_size >= sizeof(ecs_debug_name_api));
    assert_null(t->manager->update); /* nothing to do per frame */
    assert_non_null(t->manager->entities_destroyed);
}

/* ---- the plugin's life, through the fake host ------------------------------------------ */

/* Copy the file src to dst (a private copy of the .so, like the host's reload makes). */
static void copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static const ecs_debug_name_api *mini_dn_api(mini_host *m)
{
    return mini_find(&m->table, ECS_DEBUG_NAME_API_NAME, 1, NULL);
}

static void DebugName_reload_keep_state_adopts_every_name(void **state)
{
    mini_host *v1 = calloc(1, sizeof *v1), *v2 = calloc(1, sizeof *v2);
    assert_non_null(v1);
    assert_non_null(v2);
    mini_init(v1);
    assert_int_equal(mini_open(v1, DEBUG_NAME_SO), 0);
    assert_int_equal(v1->desc->state_version, 3); /* layout 3: name handles, a lazy index */
    void *s1 = NULL, *s2 = NULL;
    assert_int_equal(mini_load(v1, NULL, &s1), ECS_OK);
    const ecs_debug_name_api *api = mini_dn_api(v1);
    assert_non_null(api);
    ecs_entity a = mini_entity(v1, 1), b = mini_entity(v1, 2), c = mini_entity(v1, 3);
    assert_int_equal(api->set(api->self, a, "alpha"), ECS_OK);
    assert_int_equal(api->set(api->self, b, "beta"), ECS_OK);
    assert_int_equal(api->set(api->self, c, "alpha"), ECS_OK);
    size_t held = v1->account->bytes;

    v1->desc->unload(&v1->table, s1, ECS_UNLOAD_RELOAD_KEEP_STATE);
    assert_int_equal(v1->account->bytes, held); /* nothing freed */
    char dir[] = "/tmp/ecs-dn-reload-XXXXXX", copy[64];
    assert_non_null(mkdtemp(dir));
    snprintf(copy, sizeof copy, "%s/debug_name.so", dir);
    copy_file(DEBUG_NAME_SO, copy);
    mini_successor(v2, v1);
    assert_int_equal(mini_open(v2, copy), 0);
    mini_close(v1); /* the old code is gone: the state must not point into it */
    assert_int_equal(mini_load(v2, s1, &s2), ECS_OK);
    assert_ptr_equal(s2, s1);
    api = mini_dn_api(v2);
    assert_non_null(api);
    assert_int_equal(api->count(api->self), 3);
    assert_string_equal(api->get(api->self, a), "alpha");
    assert_string_equal(api->get(api->self, b), "beta");
    assert_int_equal(api->find(api->self, "alpha").id, c.id);
    mini_kill(v2, c); /* the new table's generations decide liveness now */
    assert_int_equal(api->find(api->self, "alpha").id, a.id);
    assert_int_equal(api->set(api->self, b, "gamma"), ECS_OK);
    assert_int_equal(v2->managers, 1);
    assert_ptr_equal(v2->manager.state, s2);
    v2->manager.entities_destroyed(v2->manager.state, &c, 1);
    assert_int_equal(api->count(api->self), 2);

    v2->desc->unload(&v2->table, s2, ECS_UNLOAD_SHUTDOWN);
    assert_int_equal(v2->account->bytes, 0);
    assert_int_equal(v2->account->blocks, 0);
    assert_int_equal(v1->retired_calls, 0); /* every call after the reload used the new table */
    assert_int_equal(v2->errors, 0);
    mini_close(v2);
    unlink(copy);
    rmdir(dir);
    free(v1);
    free(v2);
}

static void DebugName_shutdown_frees_everything(void **state)
{
    mini_host *m = calloc(1, sizeof *m);
    assert_non_null(m);
    mini_init(m);
    assert_int_equal(mini_open(m, DEBUG_NAME_SO), 0);
    void *s = NULL;
    assert_int_equal(mini_load(m, NULL, &s), ECS_OK);
    const ecs_debug_name_api *api = mini_dn_api(m);
    char name[32];
    for (uint32_t i = 1; i < MINI_ENTITIES; i++) { /* enough to grow every array */
        snprintf(name, sizeof name, "entity %u", i);
        assert_int_equal(api->set(api->self, mini_entity(m, i), name), ECS_OK);
    }
    for (uint32_t i = 1; i < MINI_ENTITIES; i += 3)
        assert_int_equal(api->clear(api->self, mini_entity(m, i)), ECS_OK);
    assert_true(m->account->bytes > 0);
    m->desc->unload(&m->table, s, ECS_UNLOAD_SHUTDOWN);
    assert_int_equal(m->account->bytes, 0);
    assert_int_equal(m->account->blocks, 0);
    assert_int_equal(m->errors, 0);
    mini_close(m);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(DebugName_set_then_get_returns_the_name, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_set_copies_the_name, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_set_replaces_the_name, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_set_refuses_bad_arguments_and_keeps_the_old_name,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_set_says_what_is_wrong_with_a_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(DebugName_set_accepts_255_bytes_and_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_every_name_length_reads_back, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_get_without_name_or_dead_entity_is_null, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(DebugName_clear_removes_and_reports_missing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(DebugName_find_returns_most_recent_holder, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_find_after_clear_replace_destroy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(DebugName_find_unknown_or_bad_name_is_null, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(DebugName_destroyed_entity_loses_name_after_one_frame,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_format_named_unnamed_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_random_operations_match_a_model, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_find_builds_its_index_late_and_matches_the_model,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_sequence_renumbering_keeps_find_order, setup_seq,
                                        teardown),
        cmocka_unit_test_setup_teardown(DebugName_json_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_json_rejects_bad_values, setup, teardown),
        cmocka_unit_test_setup_teardown(DebugName_a_read_name_is_judged_as_set_judges_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(DebugName_api_self_is_the_manager_state, setup, teardown),
        cmocka_unit_test(DebugName_reload_keep_state_adopts_every_name),
        cmocka_unit_test(DebugName_shutdown_frees_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
